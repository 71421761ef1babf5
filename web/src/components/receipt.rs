//! The receipt view (being written).

use leptos::prelude::*;

/// Load a receipt and show its audit.
#[component]
pub fn ReceiptView() -> impl IntoView {
    view! { <section class="receipt"><h2>"Receipt"</h2></section> }
}
