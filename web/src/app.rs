//! The page: a heading, the promise that files stay local, and four views chosen by the URL's
//! hash: trace (`#/`, `#/trace`, the default), receipt (`#/receipt`), comparison
//! (`#/compare`) and playbook (`#/playbook`).
//!
//! `App` holds the route and provides the reviewer's audit policy ([`AuditPolicy`]), the one
//! every audit in the page is judged against. Each view owns its other signals; every view stays mounted once shown
//! (a hidden one keeps its file and results), and each is first mounted when it is first shown,
//! while the site's files (`playbook.json`, `receipts.json`, the bundled receipts) are asked for
//! as the page starts ([`crate::site::prefetch`]), so a view opened offline still has them.
//! The hash also names which bundled receipts are on screen ([`crate::route`], [`Here`]). The
//! navigation is plain links, so Tab, Enter and the browser's back button work as on any page.

use leptos::prelude::*;

use crate::handoff::Handoff;
use crate::policy::AuditPolicy;
pub use crate::route::Route;
use crate::route::{Here, current_address};
use crate::views::compare::CompareView;
use crate::views::playbook::PlaybookView;
use crate::views::receipt::ReceiptView;
use crate::views::trace::TraceView;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    // The reviewer's audit policy: one for the whole page (the Receipt and Compare views).
    provide_context(AuditPolicy::load());
    // A receipt or playbook dropped on the wrong view is handed to the one that reads it.
    Handoff::provide();
    let address = RwSignal::new(current_address());
    provide_context(Here::new(address));
    let route = Memo::new(move |_| address.with(|a| a.route));
    // The listener lives as long as the page (the handle is not removed).
    let _ = window_event_listener(leptos::ev::hashchange, move |_| {
        address.set(current_address())
    });
    // Every view's site files now, not when the view is first opened (offline after load).
    crate::site::prefetch();
    crate::site::register_service_worker();
    let links = Route::ALL
        .into_iter()
        .map(|r| {
            view! {
                <a
                    id=format!("nav-{}", r.slug())
                    href=format!("#/{}", r.slug())
                    aria-current=move || (route.get() == r).then_some("page")
                >
                    {r.label()}
                </a>
            }
        })
        .collect_view();
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
                {links}
            </nav>
        </header>
        <main>
            <div class="view" id="view-trace" hidden=move || route.get() != Route::Trace>
                <TraceView />
            </div>
            <Pane of=Route::Receipt current=route>
                <ReceiptView />
            </Pane>
            <Pane of=Route::Compare current=route>
                <CompareView />
            </Pane>
            <Pane of=Route::Playbook current=route>
                <PlaybookView />
            </Pane>
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

/// A view's pane (`#view-<slug>`): hidden unless its route is current, and mounted only once
/// first shown (then kept, with its file and results).
#[component]
fn Pane(of: Route, current: Memo<Route>, children: ChildrenFn) -> impl IntoView {
    let shown =
        Memo::new(move |prev: Option<&bool>| prev.copied().unwrap_or(false) || current.get() == of);
    view! {
        <div class="view" id=format!("view-{}", of.slug()) hidden=move || current.get() != of>
            <Show when=move || shown.get()>{children()}</Show>
        </div>
    }
}
