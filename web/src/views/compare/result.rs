//! The comparison itself, as the compare view lays it out: the verdict and its reasons, the
//! protocol and subject differences, the knobs changed, every metric's table row and the chart
//! of relative changes.
//!
//! Everything shown is core's `Comparison` (the JSON `loadproof receipt compare --json`
//! prints); [`super::model`] says only which way each change reads.

use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::compare::{Comparison, Difference, MetricChange};

use super::draw::draw_changes;
use super::model::{Tone, bars};
use crate::widgets::canvas_figure::{CanvasFigure, DrawProblem};
use crate::widgets::number::{ABSENT, js, percent_change, readable, signed};
use crate::widgets::readout::{Col, thead};

/// The verdict, the differences, the table and the chart.
#[component]
pub fn ComparisonView(c: Arc<Comparison>) -> impl IntoView {
    let verdict = if c.comparable {
        "Comparable: one protocol, one subject apart from knobs, both qualified".to_owned()
    } else {
        format!("Not comparable: {} reason(s)", c.reasons.len())
    };
    let reasons = c.reasons.clone();
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
                <p class="verdict">
                    <strong>{verdict}</strong>
                </p>
                {(!reasons.is_empty())
                    .then(|| {
                        view! {
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
                        width="600"
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

/// A cell: readable text, the exact value in `data-value` (`""` when absent).
fn cell(v: Option<f64>, text: fn(f64) -> String, note: Option<String>) -> impl IntoView {
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

#[component]
fn MetricRow(m: MetricChange) -> impl IntoView {
    let note = m.note.clone();
    // A break opportunity after each underscore, so a narrow screen wraps names at words.
    let parts: Vec<String> = m.metric.split_inclusive('_').map(str::to_owned).collect();
    let unit = format!(" ({})", m.unit);
    view! {
        <tr data-metric=m.metric.clone() class=Tone::of(m.better, m.change).class()>
            <th scope="row">
                {parts.into_iter().map(|p| view! { {p}<wbr /> }).collect_view()}
                <span class="unit">{unit}</span>
            </th>
            {cell(m.baseline, readable, None)}
            {cell(m.treatment, readable, None)}
            {cell(m.change, |v| signed(v, readable(v)), note.clone())}
            {cell(m.relative_change, percent_change, note.clone())}
        </tr>
    }
}
