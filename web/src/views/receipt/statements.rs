//! What the receipt says that its evidence does not establish.
//!
//! [`Statements`] (`#statements`) lays out core's `Audit::statements` (field, value, why) and
//! `Audit::knobs` (each stated knob: read back from the server's own `*config_info` gauge,
//! only stated, or contradicted by it), verbatim. Nothing here judges anything.

use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::audit::KnobFacts;

use super::model::ReceiptModel;
use crate::widgets::number::ABSENT;
use crate::widgets::readout::{Col, thead};

/// A knob's status in words, and its class.
fn knob_status(k: &KnobFacts) -> (String, &'static str) {
    let source = k.source.as_deref().unwrap_or("the server");
    match k.status.as_str() {
        "read_back" => (format!("read back from {source}"), "good"),
        "contradicted" => (
            format!(
                "contradicted: {source} says {}",
                k.read_back.as_deref().unwrap_or(ABSENT)
            ),
            "bad",
        ),
        "stated" => (
            "stated only: no *config_info gauge of the server names it".to_owned(),
            "hint",
        ),
        other => (other.to_owned(), "hint"),
    }
}

/// The claimant's statements and the knobs.
#[component]
pub fn Statements(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let statements = if a.statements.is_empty() {
        view! {
            <tr>
                <td colspan="3" class="hint">
                    "none"
                </td>
            </tr>
        }
        .into_any()
    } else {
        a.statements
            .iter()
            .map(|s| {
                view! {
                    <tr data-field=s.field.clone()>
                        <th scope="row" class="mono">
                            {s.field.clone()}
                        </th>
                        <td class="value">{s.value.clone()}</td>
                        <td class="why">{s.why.clone()}</td>
                    </tr>
                }
            })
            .collect_view()
            .into_any()
    };
    let knobs = if a.knobs.is_empty() {
        view! { <p id="knobs-none" class="hint">"The receipt states no knob."</p> }.into_any()
    } else {
        let rows = a
            .knobs
            .iter()
            .map(|k| {
                let (status, class) = knob_status(k);
                view! {
                    <tr data-knob=k.name.clone() data-status=k.status.clone() class:bad=(class == "bad")>
                        <th scope="row" class="mono">
                            {k.name.clone()}
                        </th>
                        <td data-label="stated">{k.stated.clone()}</td>
                        <td data-label="the server says">
                            {k.read_back.clone().unwrap_or_else(|| ABSENT.to_owned())}
                        </td>
                        <td class=class>{status}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <div class="scroll">
                <table id="knobs-table">
                    <caption>
                        "Each knob the receipt states, against the server's own settings gauge"
                    </caption>
                    {thead(&[Col::Text("knob"), Col::Text("stated"), Col::Text("the server says"), Col::Text("status")])}
                    <tbody>{rows}</tbody>
                </table>
            </div>
        }
        .into_any()
    };
    view! {
        <section id="statements" class="card wide" aria-labelledby="statements-heading">
            <h2 id="statements-heading">"The claimant's statements"</h2>
            <p class="hint">
                "What the receipt says that its evidence does not establish. These are the claimant's statements: "
                "shown for context, never used to make a standing positive."
            </p>
            <div class="scroll">
                <table id="statements-table">
                    <caption>
                        {format!("{} statement(s), as the audit lists them", a.statements.len())}
                    </caption>
                    {thead(&[Col::Text("field"), Col::Text("says"), Col::Text("why it is only a statement")])}
                    <tbody>{statements}</tbody>
                </table>
            </div>
            <h3 id="knobs-heading">"Knobs: read back, stated, or contradicted"</h3>
            {knobs}
        </section>
    }
}
