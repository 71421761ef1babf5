//! The page: a heading, the promise that files stay local, and the trace view.
//!
//! `App` is the root the binary mounts. It holds no state of its own; the trace view owns its
//! signals, so a later view (replay plans, receipts) can sit beside it without sharing them.

use leptos::prelude::*;

use crate::components::trace::TraceView;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <header class="top">
            <h1>"loadproof"</h1>
            <p class="tagline">
                "Inspect an LLM serving trace: what it holds, what could not be used and why, "
                "and the traffic regime it describes."
            </p>
            <p class="privacy" id="privacy">
                "Files never leave this machine: everything is computed in your browser."
            </p>
        </header>
        <main>
            <TraceView />
        </main>
        <footer class="foot">
            "The numbers here come from the same code as "
            <code>"loadproof trace inspect --json"</code>
            ", compiled to WebAssembly."
        </footer>
    }
}
