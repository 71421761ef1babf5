//! The page: a heading, the promise that files stay local, and four views chosen by the URL's
//! hash: trace (`#/`, `#/trace`, the default), receipt (`#/receipt`), comparison
//! (`#/compare`) and playbook (`#/playbook`).
//!
//! `App` holds only the route. Each view owns its signals; every view stays mounted once shown
//! (a hidden one keeps its file and results), and each is first mounted when it is first shown,
//! so a view never fetches a file from the site (`playbook.json`, `receipts.json`) unless it is
//! opened. The navigation is plain
//! links, so Tab, Enter and the browser's back button work as on any page.

use leptos::prelude::*;

use crate::views::compare::CompareView;
use crate::views::playbook::PlaybookView;
use crate::views::receipt::ReceiptView;
use crate::views::trace::TraceView;

/// Which view the URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `#/`, `#/trace`, or any hash not known: the trace view.
    Trace,
    /// `#/receipt`.
    Receipt,
    /// `#/compare`.
    Compare,
    /// `#/playbook`.
    Playbook,
}

impl Route {
    /// The route a `location.hash` names.
    pub fn of_hash(hash: &str) -> Route {
        match hash.trim_start_matches('#').trim_end_matches('/') {
            "/playbook" | "playbook" => Route::Playbook,
            "/receipt" | "receipt" => Route::Receipt,
            "/compare" | "compare" => Route::Compare,
            _ => Route::Trace,
        }
    }
}

fn current_route() -> Route {
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    Route::of_hash(&hash)
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let route = RwSignal::new(current_route());
    // The listener lives as long as the page (the handle is not removed).
    let _ = window_event_listener(leptos::ev::hashchange, move |_| route.set(current_route()));
    // Once shown, a view stays mounted.
    let shown = move |r: Route| {
        Memo::new(move |prev: Option<&bool>| prev.copied().unwrap_or(false) || route.get() == r)
    };
    let receipt_shown = shown(Route::Receipt);
    let compare_shown = shown(Route::Compare);
    let playbook_shown = shown(Route::Playbook);
    let current = move |r: Route| move || (route.get() == r).then_some("page");
    view! {
        <header class="top">
            <h1>"loadproof"</h1>
            <p class="tagline">
                "Inspect an LLM serving trace: what it holds, what could not be used and why, "
                "and the traffic regime it describes. Audit a receipt: every number recomputed from its raw evidence, "
                "every refusal named. Compare two receipts. Read a playbook, and ask which of its rows apply to your traffic."
            </p>
            <p class="privacy" id="privacy">
                "Files never leave this machine: everything is computed in your browser."
            </p>
            <nav class="views" aria-label="Views">
                <a id="nav-trace" href="#/trace" aria-current=current(Route::Trace)>
                    "Trace"
                </a>
                <a id="nav-receipt" href="#/receipt" aria-current=current(Route::Receipt)>
                    "Receipt"
                </a>
                <a id="nav-compare" href="#/compare" aria-current=current(Route::Compare)>
                    "Compare"
                </a>
                <a id="nav-playbook" href="#/playbook" aria-current=current(Route::Playbook)>
                    "Playbook"
                </a>
            </nav>
        </header>
        <main>
            <div class="view" id="view-trace" hidden=move || route.get() != Route::Trace>
                <TraceView />
            </div>
            <div class="view" id="view-receipt" hidden=move || route.get() != Route::Receipt>
                <Show when=move || receipt_shown.get()>
                    <ReceiptView />
                </Show>
            </div>
            <div class="view" id="view-compare" hidden=move || route.get() != Route::Compare>
                <Show when=move || compare_shown.get()>
                    <CompareView />
                </Show>
            </div>
            <div class="view" id="view-playbook" hidden=move || route.get() != Route::Playbook>
                <Show when=move || playbook_shown.get()>
                    <PlaybookView />
                </Show>
            </div>
        </main>
        <footer class="foot">
            "The numbers here come from the same code as "
            <code>"loadproof trace inspect --json"</code>
            ", "
            <code>"loadproof receipt audit --json"</code>
            " and "
            <code>"loadproof playbook match --json"</code>
            ", compiled to WebAssembly."
        </footer>
    }
}
