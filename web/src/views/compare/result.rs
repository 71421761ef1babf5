//! The comparison itself, as the compare view lays it out: the verdict in one line (a
//! summary of what moved, or the first reason it is refused, every reason folded below), the
//! protocol and subject differences, the knobs changed, every metric's table row beside the
//! chart of relative changes, and the two arms' TTFT and E2E latency CDFs overlaid beside
//! their quantiles.
//!
//! Everything shown is core's `Comparison` (the JSON `loadproof receipt compare --json`
//! prints) and each side's audit (`receipt audit --json`'s `latency`); [`super::model`] says
//! which way each change reads and words the summary. Metrics are named by
//! `compare::metric_label`, the key kept in the row's `data-metric` and `title`.

use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::compare::{Comparison, Difference, MetricChange, metric_label};

use super::draw::{draw_changes, draw_overlay};
use super::model::{ArmLatency, OVERLAID, Overlay, Tone, bars, refusal, summary};
use crate::views::receipt::model::ReceiptModel;
use crate::widgets::canvas_figure::{CanvasFigure, DrawProblem, Readout};
use crate::widgets::number::{ABSENT, column_decimals, count, fixed, js, percent_change, signed};
use crate::widgets::probe::Probes;
use crate::widgets::readout::{Col, thead};

/// The verdict, the differences, the table and the charts.
#[component]
pub fn ComparisonView(
    /// Core's comparison of the two sides.
    c: Arc<Comparison>,
    /// The baseline's model (its audit's latency and the samples' CDFs).
    baseline: Arc<ReceiptModel>,
    /// The treatment's.
    treatment: Arc<ReceiptModel>,
) -> impl IntoView {
    let verdict = if c.comparable {
        "Comparable: one protocol, one subject apart from knobs, both qualified.".to_owned()
    } else {
        refusal(&c).unwrap_or_default()
    };
    let line = c.comparable.then(|| summary(&c));
    let reasons = c.reasons.clone();
    let n_reasons = reasons.len();
    let overlays: Vec<Overlay> = OVERLAID
        .into_iter()
        .map(|m| {
            Overlay::of(
                m,
                ArmLatency::of(&baseline, m.0),
                ArmLatency::of(&treatment, m.0),
            )
        })
        .collect();
    let charted = bars(&c);
    let canvas_height = (64 + 24 * charted.len().max(1)).to_string();
    let chart_problem = RwSignal::new(None::<String>);
    let to_draw = charted.clone();
    let protocol = if c.same_protocol {
        view! {
            <p id="compare-protocol" data-same="true">
                "One protocol: " <code class="wrap">{c.baseline.protocol_key.clone()}</code>
            </p>
        }
        .into_any()
    } else {
        view! {
            <div id="compare-protocol" data-same="false">
                <p class="bad">
                    {format!("Not one protocol: {} field(s) differ", c.protocol_differences.len())}
                </p>
                <DifferenceTable rows=c.protocol_differences.clone() label="Protocol field" />
            </div>
        }
        .into_any()
    };
    let subject = if c.same_subject {
        view! { <p id="compare-subject" data-same="true">"One subject apart from knobs."</p> }
            .into_any()
    } else {
        view! {
            <div id="compare-subject" data-same="false">
                <p class="bad">
                    {format!("Not one subject: {} axis/axes differ or are unknown", c.subject_differences.len())}
                </p>
                <DifferenceTable rows=c.subject_differences.clone() label="Subject axis" />
            </div>
        }
            .into_any()
    };
    let knobs = if c.knobs_changed.is_empty() {
        let text = if c.same_protocol && c.same_subject {
            "No knob differs: an A/A pair."
        } else {
            "No knob differs."
        };
        view! { <li>{text}</li> }.into_any()
    } else {
        c.knobs_changed
            .iter()
            .map(|k| view! { <li data-knob=k.knob.clone()>{format!("Changed: {k}")}</li> })
            .collect_view()
            .into_any()
    };
    view! {
        <section class="card wide compare-result" aria-labelledby="compare-result-heading">
            <h2 id="compare-result-heading">"Baseline vs treatment"</h2>
            <div
                id="compare-verdict"
                class="banner"
                class:qualified=c.comparable
                class:unqualified=!c.comparable
                data-comparable=c.comparable.to_string()
                role="status"
            >
                <p class="verdict" id="compare-verdict-line">
                    <strong>{verdict}</strong>
                </p>
                {line.map(|l| view! { <p id="compare-summary">{l}</p> })}
                {(!reasons.is_empty())
                    .then(|| {
                        view! {
                            <details id="compare-reasons-fold">
                                <summary>
                                    {if n_reasons == 1 {
                                        "The reason in full".to_owned()
                                    } else {
                                        format!("All {n_reasons} reasons in full")
                                    }}
                                </summary>
                            <ul id="compare-reasons">
                                {reasons
                                    .into_iter()
                                    .map(|r| {
                                        view! {
                                            <li data-rule=r.rule.to_string()>
                                                <code>{r.rule.to_string()}</code>
                                                ": "
                                                {r.message}
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                            </details>
                        }
                    })}
            </div>
            <p id="compare-caveat" class="caveat">
                <strong>"An observation, not a measured effect. "</strong>
                {c.caveat.clone()}
            </p>
            <div class="compare-differences">
                <div>
                    <h3>"Protocol"</h3>
                    {protocol}
                </div>
                <div>
                    <h3>"Subject"</h3>
                    {subject}
                    <ul id="compare-knobs">{knobs}</ul>
                </div>
            </div>
            <div class="compare-figure">
                <div class="numbers">
                    <p class="hint" id="compare-table-note">
                        "Δ = treatment − baseline; Δ% = Δ / baseline (absent when the baseline is 0 or a side is unread). "
                        "Green reads as better and red as worse for that metric — a direction, not a cause."
                    </p>
                    <div class="scroll">
                    <table id="compare-table" aria-describedby="compare-table-note">
                        <caption>"Every metric, baseline vs treatment"</caption>
                        {thead(&[Col::Text("Metric"), Col::Num("Baseline"), Col::Num("Treatment"), Col::Num("Δ"), Col::Num("Δ%")])}
                        <tbody>
                            {c.metrics.iter().map(|m| view! { <MetricRow m=m.clone() /> }).collect_view()}
                        </tbody>
                    </table>
                    </div>
                </div>
                <figure class="compare-chart">
                    <CanvasFigure
                        id="compare-chart"
                        width="540"
                        height=canvas_height
                        alt="Bar chart of each metric's relative change, treatment against baseline; the numbers are in the table beside it."
                        problem=chart_problem
                        draw=move |canvas| draw_changes(canvas, &to_draw)
                    />
                    <figcaption class="hint">
                        {format!(
                            "Relative change of the {} metric(s) with a nonzero, readable baseline on both sides; the table is the text alternative.",
                            charted.len()
                        )}
                    </figcaption>
                    <DrawProblem problem=chart_problem />
                </figure>
            </div>
            <h3 id="compare-latency-heading">"Latency distributions, baseline and treatment overlaid"</h3>
            <p class="hint">
                "Each curve is the share of a side's requests answered within x ms (its audit's own samples); "
                "the table beside it is the audit's quantiles, exact on hover. A log axis where the two sides span over 100×."
            </p>
            {overlays.into_iter().map(|o| view! { <OverlayFigure o=o /> }).collect_view()}
            <ul id="compare-notes" class="hint">
                {c.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}
            </ul>
        </section>
    }
}

#[component]
fn DifferenceTable(rows: Vec<Difference>, label: &'static str) -> impl IntoView {
    view! {
        <div class="scroll">
            <table class="differences">
                {thead(&[Col::Text(label), Col::Text("Baseline"), Col::Text("Treatment")])}
                <tbody>
                    {rows
                        .into_iter()
                        .map(|d| {
                            let field = d.field.clone();
                            view! {
                                <tr data-field=field>
                                    <th scope="row">{d.field}</th>
                                    <td class="wrap">{d.baseline}</td>
                                    <td class="wrap">{d.treatment}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// One latency metric: both CDFs on one canvas, the quantiles of both audits beside it.
#[component]
fn OverlayFigure(o: Overlay) -> impl IntoView {
    let problem = RwSignal::new(None::<String>);
    let probes = Probes::default();
    let readout: Readout = {
        let probes = probes.clone();
        std::rc::Rc::new(move |x, y| probes.read(x, y))
    };
    let metric = o.metric;
    // One precision for the whole table: every value is in ms.
    let decimals = column_decimals(o.rows.iter().flat_map(|(_, v)| v.iter().flatten().copied()));
    let ms = move |v: f64| fixed(v, decimals);
    let counts = o.counts;
    let rows = o.rows.clone();
    let title = o.title;
    let log = o.log.to_string();
    let alt = match metric {
        "ttft" => {
            "Overlaid CDFs of time to first token, baseline and treatment; the quantiles are in the table beside it."
        }
        _ => {
            "Overlaid CDFs of end-to-end latency, baseline and treatment; the quantiles are in the table beside it."
        }
    };
    view! {
        <div class="compare-overlay" data-metric=metric data-log=log>
            <figure class="compare-overlay-chart">
                <CanvasFigure
                    id=format!("compare-cdf-{metric}")
                    width="640"
                    height="340"
                    alt=alt
                    problem=problem
                    draw=move |canvas| draw_overlay(canvas, &o, &probes)
                    readout=Some(readout)
                />
                <figcaption class="hint">{format!("{title}: baseline (blue, thin) and treatment (orange, thick)")}</figcaption>
                <DrawProblem problem=problem />
            </figure>
            <div class="numbers">
                <table id=format!("compare-quantiles-{metric}") class="quantiles">
                    <caption>{format!("{title}, ms")}</caption>
                    {thead(&[Col::Text("Quantile"), Col::Num("Baseline"), Col::Num("Treatment")])}
                    <tbody>
                        <tr data-quantile="count">
                            <th scope="row">"samples"</th>
                            {counts
                                .into_iter()
                                .map(|n| cell(n.map(|n| n as f64), |v| count(v as usize), None))
                                .collect_view()}
                        </tr>
                        {rows
                            .into_iter()
                            .map(|(q, [b, t])| {
                                view! {
                                    <tr data-quantile=q>
                                        <th scope="row">{q}</th>
                                        {cell(b, ms, None)}
                                        {cell(t, ms, None)}
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        </div>
    }
}

/// A cell: readable text, the exact value in `data-value` and `title` (`""` when absent, the
/// title then saying why when `note` does).
fn cell(v: Option<f64>, text: impl Fn(f64) -> String, note: Option<String>) -> impl IntoView {
    let exact = v.map_or_else(String::new, js);
    let shown = v.map_or_else(|| ABSENT.to_owned(), text);
    let title = match (v, note) {
        (Some(v), _) => js(v),
        (None, Some(n)) => n,
        (None, None) => String::new(),
    };
    view! {
        <td class="num" data-value=exact title=title>
            {shown}
        </td>
    }
}

/// One metric: its name and unit, both sides and the change at one precision (they are one
/// quantity, read against each other), the relative change in percent.
#[component]
fn MetricRow(m: MetricChange) -> impl IntoView {
    let note = m.note.clone();
    let (name, unit) = metric_label(&m.metric).unwrap_or((m.metric.as_str(), m.unit.as_str()));
    let (name, unit) = (name.to_owned(), format!(" ({unit})"));
    let decimals = column_decimals([m.baseline, m.treatment].into_iter().flatten());
    let text = move |v: f64| fixed(v, decimals);
    let key = format!("{} in receipt compare --json", m.metric);
    view! {
        <tr data-metric=m.metric.clone() class=Tone::of(m.better, m.change).class()>
            <th scope="row" title=key>
                {name}
                <span class="unit">{unit}</span>
            </th>
            {cell(m.baseline, text, None)}
            {cell(m.treatment, text, None)}
            {cell(m.change, move |v| signed(v, text(v)), note.clone())}
            {cell(m.relative_change, percent_change, note.clone())}
        </tr>
    }
}
