//! The comparison view (being written).

use leptos::prelude::*;

/// Two receipts side by side.
#[component]
pub fn CompareView() -> impl IntoView {
    view! { <section class="compare"><h2>"Compare"</h2></section> }
}
