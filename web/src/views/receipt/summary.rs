//! The receipt at a glance, right under the verdict: what was measured (model, revision, GPU,
//! engine, and the client that fired), who vouches for it (signed by a key the reviewer trusts,
//! or self-attested), the standings as chips that jump to their reasons, and the headline
//! numbers. A reviewer should see in seconds what a verdict is *of* and why,
//! without scrolling past the evidence.
//!
//! Every number is the audit's own (core computed it; nothing here does), shown readable with
//! the exact value in its `title`. A standing that was not assessed is a chip too: absence is
//! shown, never skipped.

use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::audit::{Attestation, AttestationLevel, Audit};
use loadproof_core::receipt::Axis;

use super::model::{self, ReceiptModel};
use crate::widgets::number::ABSENT;
use crate::widgets::readout::{exact, int, num};

/// An axis of the subject as the page writes it: its value, and who established it.
pub fn axis_text(axis: &Axis) -> String {
    match axis {
        Axis::Known { value, source } => format!("{value} (from {source})"),
        Axis::Unknown { reason } => format!("unknown: {reason}"),
    }
}

/// The axis's value alone: marked when only the caller said so, `?` when unknown.
fn axis_short(axis: &Axis) -> String {
    match axis {
        Axis::Known { value, source } if source == "caller" => format!("{value} (stated)"),
        Axis::Known { value, .. } => value.clone(),
        Axis::Unknown { .. } => "?".to_owned(),
    }
}

/// Who vouches for the receipt, in one line: `signed by key ID (COMMENT), which you trust`, or
/// core's reason it is self-attested. The comment is the reviewer's own (their key line's), not
/// one the receipt carries: a receipt names its signer however the claimant likes.
pub fn attestation_text(att: &Attestation) -> String {
    match (att.level, &att.lease_key) {
        (AttestationLevel::Signed, Some(k)) => match k.trusted_as.as_deref() {
            Some(c) if !c.is_empty() => {
                format!("signed by key {} ({c}), which you trust", k.key_id)
            }
            _ => format!("signed by key {}, which you trust", k.key_id),
        },
        _ => att.reason.clone(),
    }
}

/// What the attestation means for a reader who has not met the word: a claim rests on whose
/// word, and what would change that.
pub fn attestation_meaning(att: &Attestation) -> &'static str {
    match (att.level, att.trusted_keys) {
        (AttestationLevel::Signed, _) => {
            "The lease that isolates the window was signed by its lessor, over the exact bytes this receipt holds, with a key you named: the lessor's word, which the claimant could not have forged."
        }
        (AttestationLevel::SelfAttested, 0) => {
            "Self-attested: the claimant's word. Nothing a key you trust vouches for this receipt, because you trust no key yet: add its lessor's public key under Audit policy, Trusted keys (from the lessor, never from the receipt)."
        }
        (AttestationLevel::SelfAttested, _) => {
            "Self-attested: the claimant's word. Nothing a key you trust vouches for this receipt, so its window and subject are refused."
        }
    }
}

/// The client latency row for `metric` (`ttft`, `e2el`, …), p50 and p99 in ms.
fn percentiles(audit: &Audit, metric: &str) -> (Option<f64>, Option<f64>) {
    audit
        .latency
        .iter()
        .find(|l| l.metric == metric)
        .map_or((None, None), |l| (l.p50_ms, l.p99_ms))
}

/// Scrolls the element with `id` into view (the app routes on the URL's hash, so an in-page
/// anchor would change the view, not the scroll position).
pub fn scroll_to(id: &str) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
    {
        el.scroll_into_view();
    }
}

/// One headline figure: a label, a readable value with the exact one in its title, a unit.
fn figure(
    id: &'static str,
    label: &'static str,
    value: Option<f64>,
    unit: &'static str,
) -> impl IntoView {
    view! {
        <div class="figure">
            <span class="figure-label">{label}</span>
            <span id=id class="figure-value num" title=exact(value)>
                {num(value)}
            </span>
            <span class="figure-unit">{if value.is_some() { unit } else { "" }}</span>
        </div>
    }
}

/// Two percentiles side by side (`p50 / p99`).
fn pair(
    id: &'static str,
    label: &'static str,
    (p50, p99): (Option<f64>, Option<f64>),
) -> impl IntoView {
    let title = format!(
        "p50 {} ms, p99 {} ms",
        exact(p50).unwrap_or_else(|| ABSENT.to_owned()),
        exact(p99).unwrap_or_else(|| ABSENT.to_owned())
    );
    view! {
        <div class="figure">
            <span class="figure-label">{label}</span>
            <span id=id class="figure-value num" title=title>
                {format!("{} / {}", num(p50), num(p99))}
            </span>
            <span class="figure-unit">"ms, p50 / p99"</span>
        </div>
    }
}

/// What was measured, how it stands, and the numbers a reviewer looks for first.
#[component]
pub fn Summary(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let s = &m.subject;
    let p = &m.protocol;
    let client = format!(
        "{}{}",
        p.engine.label(),
        p.client_version
            .as_ref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default()
    );
    let identity = [
        ("Model", axis_short(&s.model), axis_text(&s.model)),
        (
            "Revision",
            axis_short(&s.model_revision),
            axis_text(&s.model_revision),
        ),
        ("GPU", axis_short(&s.gpu_sku), axis_text(&s.gpu_sku)),
        (
            "Engine",
            format!(
                "{} {}",
                axis_short(&s.engine),
                axis_short(&s.engine_version)
            ),
            format!("{}; {}", axis_text(&s.engine), axis_text(&s.engine_version)),
        ),
        ("Fired by", client.clone(), client),
    ]
    .into_iter()
    .map(|(label, short, full)| {
        view! {
            <div class="identity-item">
                <span class="figure-label">{label}</span>
                <span class="identity-value" title=full>
                    {short}
                </span>
            </div>
        }
    })
    .collect_view();
    let (level, attested) = match a.attestation.level {
        AttestationLevel::Signed => ("signed", "signed, by a key you trust"),
        AttestationLevel::SelfAttested => ("self_attested", "self-attested"),
    };
    let attested = view! {
        <div class="identity-item">
            <span class="figure-label">"Attested"</span>
            <span
                id="summary-attestation"
                class="identity-value attestation"
                data-level=level
                title=attestation_text(&a.attestation)
            >
                {attested}
            </span>
        </div>
    };
    let chips = model::standing_names(a)
        .into_iter()
        .map(|name| {
            let standing = a.standings.get(&name);
            let positive = standing.is_some_and(|s| s.positive);
            let (class, mark) = match standing {
                Some(s) if s.positive => ("chip positive", "✓"),
                Some(_) => ("chip refused", "✗"),
                None => ("chip absent", "–"),
            };
            let reason = standing.map_or_else(|| "not assessed".to_owned(), |s| s.reason.clone());
            let target = format!("standing-{name}");
            let id = format!("chip-{name}");
            view! {
                <button
                    type="button"
                    id=id
                    class=class
                    data-positive=positive.to_string()
                    title=reason
                    on:click=move |_| scroll_to(&target)
                >
                    <span aria-hidden="true">{mark}</span>
                    " "
                    {name}
                </button>
            }
        })
        .collect_view();
    let throughput = a.client.as_ref().and_then(|c| c.output_tokens_per_s);
    let lag_p99 = a.arrival.as_ref().and_then(|r| r.lag_p99_ms);
    let failures = a.ledger.as_ref().map(|l| {
        let failed = l.failed.unwrap_or(0);
        match l.offered {
            Some(offered) => format!("{} of {}", int(failed), int(offered)),
            None => int(failed),
        }
    });
    let failed_any = a
        .ledger
        .as_ref()
        .is_some_and(|l| l.failed.unwrap_or(0) > 0 || !l.closed);
    view! {
        <section id="receipt-summary" class="card wide summary" aria-label="The receipt at a glance">
            <div id="summary-identity" class="identity">
                {identity}
                {attested}
            </div>
            <div id="summary-standings" class="chips" aria-label="Standings (each opens its reason)">
                {chips}
            </div>
            <p id="summary-glossary" class="hint">
                "A standing is one condition a claim from this receipt needs (the ledger closed, the client on schedule, the engine's counters agreeing, …); each chip opens its reason. Qualified: every standing holds and nothing refused the receipt. Captured: only that raw evidence exists and verifies."
            </p>
            <div id="summary-figures" class="figures">
                {figure("summary-throughput", "Output throughput", throughput, "tok/s")}
                {pair("summary-ttft", "TTFT", percentiles(a, "ttft"))}
                {pair("summary-e2el", "End to end", percentiles(a, "e2el"))}
                {figure("summary-lag", "Dispatch lag p99", lag_p99, "ms")}
                <div class="figure">
                    <span class="figure-label">"Failed requests"</span>
                    <span id="summary-failed" class="figure-value num" class:bad=failed_any>
                        {failures.unwrap_or_else(|| ABSENT.to_owned())}
                    </span>
                    <span class="figure-unit"></span>
                </div>
            </div>
        </section>
    }
}
