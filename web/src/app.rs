//! The page: a heading, the promise that files stay local, and two views chosen by the URL's
//! hash: the trace view (`#/`, `#/trace`, the default) and the playbook view (`#/playbook`).
//!
//! `App` holds only the route. Each view owns its signals; both stay mounted once shown (the
//! hidden one keeps its file and results), and the playbook view is first mounted when it is
//! first shown, so the trace view never fetches a `playbook.json`. The navigation is plain
//! links, so Tab, Enter and the browser's back button work as on any page.

use leptos::prelude::*;

use crate::components::playbook::PlaybookView;
use crate::components::trace::TraceView;

/// Which view the URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `#/`, `#/trace`, or any hash not known: the trace view.
    Trace,
    /// `#/playbook`.
    Playbook,
}

impl Route {
    /// The route a `location.hash` names.
    pub fn of_hash(hash: &str) -> Route {
        match hash.trim_start_matches('#').trim_end_matches('/') {
            "/playbook" | "playbook" => Route::Playbook,
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
    let playbook_shown = Memo::new(move |prev: Option<&bool>| {
        prev.copied().unwrap_or(false) || route.get() == Route::Playbook
    });
    let current = move |r: Route| move || (route.get() == r).then_some("page");
    view! {
        <header class="top">
            <h1>"loadproof"</h1>
            <p class="tagline">
                "Inspect an LLM serving trace: what it holds, what could not be used and why, "
                "and the traffic regime it describes. Read a playbook, and ask which of its rows apply to your traffic."
            </p>
            <p class="privacy" id="privacy">
                "Files never leave this machine: everything is computed in your browser."
            </p>
            <nav class="views" aria-label="Views">
                <a id="nav-trace" href="#/trace" aria-current=current(Route::Trace)>
                    "Trace"
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
            <div class="view" id="view-playbook" hidden=move || route.get() != Route::Playbook>
                <Show when=move || playbook_shown.get()>
                    <PlaybookView />
                </Show>
            </div>
        </main>
        <footer class="foot">
            "The numbers here come from the same code as "
            <code>"loadproof trace inspect --json"</code>
            " and "
            <code>"loadproof playbook match --json"</code>
            ", compiled to WebAssembly."
        </footer>
    }
}
