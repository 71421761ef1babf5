//! The report's table of contents, kept in view while the reviewer scrolls: one button per
//! card, in reading order. A ten-minute receipt makes a long page; the answer to "why" is one
//! click away from anywhere in it.

use std::sync::Arc;

use leptos::prelude::*;

use super::model::ReceiptModel;
use super::summary::scroll_to;

/// The cards, in the order the report lays them out: (label, the card's id).
const CARDS: [(&str, &str); 17] = [
    ("Verdict", "receipt-banner"),
    ("Standings", "receipt-standings"),
    ("Refusals", "receipt-refusals"),
    ("Digests", "receipt-digests"),
    ("Execution", "receipt-gate"),
    ("Ledger", "receipt-ledger"),
    ("Client", "receipt-client"),
    ("Latency", "receipt-latency"),
    ("Distributions", "receipt-histograms"),
    ("Over time", "receipt-over-time"),
    ("Timeline", "receipt-timeline"),
    ("/metrics", "receipt-metrics"),
    ("GPU", "receipt-gpu"),
    ("Engine", "receipt-engine"),
    ("Agreement", "receipt-foreign"),
    ("Subject", "receipt-subject"),
    ("Evidence", "receipt-evidence"),
];

/// Buttons to every card the report has (the GPU card only with DCGM telemetry).
#[component]
pub fn Contents(m: Arc<ReceiptModel>) -> impl IntoView {
    let has_gpu = m.audit.gpu.is_some();
    let items = CARDS
        .iter()
        .filter(|(_, id)| has_gpu || *id != "receipt-gpu")
        .map(|&(label, id)| {
            view! {
                <li>
                    <button type="button" class="toc-link" data-target=id on:click=move |_| scroll_to(id)>
                        {label}
                    </button>
                </li>
            }
        })
        .collect_view();
    view! {
        <nav id="receipt-toc" class="wide toc" aria-label="Report contents">
            <ul>{items}</ul>
        </nav>
    }
}
