//! The playbook view's answer: every row's verdict for the live traffic (core's match report,
//! in playbook order), and the chosen row's per-axis distances drawn against their tolerances
//! beside the table of the same numbers.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::playbook::{MatchPolicy, Reason, RegimeAxes, RegimeAxis, knobs_line};

use super::draw::draw_distances;
use super::model::{AxisLine, Book, Matched, RowDistance, default_row, row_distances};
use crate::widgets::canvas_figure::{CanvasFigure, DrawProblem, Readout};
use crate::widgets::number::{fixed, js};
use crate::widgets::probe::Probes;
use crate::widgets::readout::{Col, num_span, thead};

/// Every row's verdict, in playbook order, and the chosen row's per-axis distances.
#[component]
pub fn MatchTable(
    outcome: Matched,
    book: RwSignal<Option<Arc<Book>>>,
    chosen: RwSignal<Option<usize>>,
) -> impl IntoView {
    let Matched {
        report: outcome,
        described,
    } = outcome;
    let q = &outcome.query;
    let n_rows = book.with(|b| b.as_ref().map_or(0, |b| b.playbook.rows().len()));
    let distances = book.with(|b| {
        b.as_ref()
            .map(|b| row_distances(&outcome, b.playbook.rows()))
            .unwrap_or_default()
    });
    // The chart shows the row chosen, else the default one.
    let default_row = default_row(&outcome, &distances);
    let distances = Arc::new(distances);
    let shown = {
        let distances = Arc::clone(&distances);
        Memo::new(move |_| {
            chosen
                .get()
                .filter(|i| distances.contains_key(i))
                .or(default_row)
        })
    };
    let chart_button = {
        let distances = Arc::clone(&distances);
        move |index: usize, id: String| {
            if distances.contains_key(&index) {
                view! {
                    <button
                        type="button"
                        class="show-distances"
                        data-row-id=id
                        aria-controls="distance-panel"
                        aria-pressed=move || (shown.get() == Some(index)).to_string()
                        on:click=move |_| chosen.set(Some(index))
                    >
                        "Per-axis chart"
                    </button>
                }
                .into_any()
            } else {
                view! { <span class="hint">"— (windows differ)"</span> }.into_any()
            }
        }
    };
    let mut lines: BTreeMap<usize, AnyView> = BTreeMap::new();
    for s in &outcome.selected {
        let limiting = if s.exact {
            "exact regime match".to_owned()
        } else {
            s.distance
                .limiting
                .map_or("exact regime match".to_owned(), |a| a.to_string())
        };
        lines.insert(
            s.row.index,
            view! {
                <tr data-row-id=s.row.id.clone() data-verdict="applies">
                    <td class="mono">{s.row.id.clone()}</td>
                    <td class="good">"APPLIES"</td>
                    <td class="num" title=js(s.distance.linf) data-value=js(s.distance.linf)>
                        {fixed(s.distance.linf, 3)}
                    </td>
                    <td>{limiting}</td>
                    <td>
                        {if s.delta_is_floor {
                            "delta_is_floor: a lower bound (prefix-dependent knob on synthesized prefixes)"
                        } else {
                            "no"
                        }}
                    </td>
                    <td class="reason">"—"</td>
                    <td>{chart_button(s.row.index, s.row.id.clone())}</td>
                </tr>
            }
            .into_any(),
        );
    }
    for r in &outcome.rejected {
        let (linf, limiting) = match &r.reason {
            Reason::OutsideTolerance { distances, .. } | Reason::Uncalibrated { distances, .. } => {
                (
                    view! {
                        <td class="num" title=js(distances.linf) data-value=js(distances.linf)>
                            {fixed(distances.linf, 3)}
                        </td>
                    }
                    .into_any(),
                    distances
                        .limiting
                        .map_or_else(|| "—".to_owned(), |a| a.to_string()),
                )
            }
            _ => (
                view! { <td class="num">"—"</td> }.into_any(),
                "—".to_owned(),
            ),
        };
        lines.insert(
            r.row.index,
            view! {
                <tr data-row-id=r.row.id.clone() data-verdict="rejected">
                    <td class="mono">{r.row.id.clone()}</td>
                    <td class="bad">"does not apply"</td>
                    {linf}
                    <td>{limiting}</td>
                    <td>"—"</td>
                    <td class="reason">{r.reason.to_string()}</td>
                    <td>{chart_button(r.row.index, r.row.id.clone())}</td>
                </tr>
            }
            .into_any(),
        );
    }
    let regime = q.regime;
    let policy = outcome.policy.clone();
    let query_regime = q.regime;
    view! {
        <p id="match-query" class="mono">
            {format!(
                "query: {}@{}, {}, {}@{}, {}, concurrency {}, {}",
                q.identity.model,
                q.identity.model_revision,
                q.identity.gpu_sku,
                q.identity.engine,
                q.identity.engine_version,
                q.identity.source_kind,
                q.identity.concurrency,
                knobs_line(&q.identity.knobs),
            )}
            <br />
            <span id="match-regime">
                {format!("regime of {described}: ")}
                {RegimeAxis::ALL
                    .iter()
                    .map(|a| {
                        view! {
                            <span class="axis" data-axis=a.name()>
                                {format!("{a} ")}
                                {num_span(regime.get(*a))}
                                ", "
                            </span>
                        }
                    })
                    .collect_view()}
                <span class="axis" data-axis="window_s">"window " {num_span(regime.window_s)} " s"</span>
            </span>
        </p>
        <p id="match-summary">
            {format!("{} of {n_rows} row(s) apply", outcome.selected.len())}
        </p>
        <div class="scroll">
            <table id="match-results">
                {thead(&[Col::Text("Row"), Col::Text("Verdict"), Col::Num("Distance (L∞)"), Col::Text("Limiting axis"), Col::Text("Floor"), Col::Text("Why not"), Col::Text("Distances")])}
                <tbody>{lines.into_values().collect_view()}</tbody>
            </table>
        </div>
        {move || {
            shown
                .get()
                .and_then(|i| distances.get(&i).cloned())
                .map(|d| {
                    view! { <DistancePanel row=d policy=policy.clone() query=query_regime /> }
                })
        }}
    }
}

/// The chosen row's distance per axis: a bar chart against the tolerances, and the same
/// numbers in a table (the chart's text alternative).
#[component]
fn DistancePanel(row: RowDistance, policy: MatchPolicy, query: RegimeAxes) -> impl IntoView {
    let lines = AxisLine::of(&row, &policy);
    let problem = RwSignal::new(None::<String>);
    let drawn = lines.clone();
    let probes = Probes::default();
    let under = probes.clone();
    let linf = row.distance.linf;
    let limiting = row
        .distance
        .limiting
        .map_or_else(|| "none: every axis is at 0".to_owned(), |a| a.to_string());
    let rate_note = if policy.rate_is_axis {
        ""
    } else {
        " Rate is not an axis under this policy, so it has no bar."
    };
    let source_note = if row.from_matcher {
        "The matcher's own distances for this row (the numbers in window.loadproofMatch)."
    } else {
        "For reference only: the matcher refused this row before comparing regimes (see “Why not”), so these distances decide nothing; core computed them the same way."
    };
    let height = (70 + 46 * lines.len()).to_string();
    let window = query.window_s;
    view! {
        <div
            id="distance-panel"
            class="distance-panel"
            data-row-id=row.id.clone()
            data-source=if row.from_matcher { "matcher" } else { "reference" }
        >
            <h3 id="distance-heading">{format!("Per-axis distance: {}", row.id)}</h3>
            <p class="hint">
                "Each bar is |log2(row / query)| on one axis (burstiness: |log2((1+row)/(1+query))|, at the "
                {num_span(window)}
                " s window); the row is as far as its worst axis (L∞), the limiting axis, drawn in orange. "
                "A black tick marks an axis's calibrated tolerance; none is calibrated yet, so any nonzero bar leaves the row uncalibrated."
                {rate_note}
                " "
                {source_note}
            </p>
            <p id="distance-linf">
                "L∞ "
                <strong title=js(linf) data-value=js(linf)>{fixed(linf, 3)}</strong>
                ", limiting axis "
                <strong id="distance-limiting">{limiting}</strong>
            </p>
            <div class="figure">
                <div>
                    <CanvasFigure
                        id="distance-chart"
                        width="640"
                        height=height
                        alt="Bar chart of the distance per regime axis, limiting axis highlighted; the numbers are in the table beside it."
                        problem=problem
                        draw=move |canvas| draw_distances(canvas, &drawn, &probes)
                        readout=Some(Rc::new(move |x, y| under.read(x, y)) as Readout)
                    />
                    <DrawProblem problem=problem role="alert" />
                </div>
                <div class="numbers">
                    <table id="distance-table">
                        <caption>{format!("Distance per axis, row {} vs the query", row.id)}</caption>
                        {thead(&[Col::Text("Axis"), Col::Num("Row"), Col::Num("Query"), Col::Num("|log2| distance"), Col::Num("Tolerance"), Col::Text("Standing")])}
                        <tbody>
                            {lines
                                .into_iter()
                                .map(|l| {
                                    let status = l.status();
                                    let tolerance = match &l.tolerance {
                                        Some((t, cite)) => {
                                            view! { <td class="num" title=cite.clone()>{fixed(*t, 3)}</td> }.into_any()
                                        }
                                        None => view! { <td class="num">"none"</td> }.into_any(),
                                    };
                                    view! {
                                        <tr
                                            data-axis=l.axis.name()
                                            data-limiting=l.limiting.to_string()
                                            class:limiting=l.limiting
                                        >
                                            <th scope="row">{l.axis.name()}</th>
                                            <td class="num">{num_span(l.row)}</td>
                                            <td class="num">{num_span(l.query)}</td>
                                            <td class="num distance" title=js(l.distance) data-value=js(l.distance)>
                                                {fixed(l.distance, 3)}
                                            </td>
                                            {tolerance}
                                            <td>
                                                {if l.limiting { format!("limiting (L∞); {status}") } else { status.to_owned() }}
                                            </td>
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                </div>
            </div>
        </div>
    }
}
