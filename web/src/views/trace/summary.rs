//! The trace view's report: what the file holds (core's accounting of every row), the
//! traffic regime it describes, and the rows that could not be used and why.
//!
//! Every value is core's `InspectReport`, written as JavaScript writes numbers
//! ([`crate::widgets::number::js`]) so the page's text equals `loadproof trace inspect --json`.

use leptos::prelude::*;
use loadproof_core::report::InspectReport;

use super::model::drop_rows;
use crate::widgets::number::{ABSENT, js, js_opt};
use crate::widgets::readout::{Col, list, thead};

/// Accounting, drops and regime of one report.
#[component]
pub fn Summary(report: InspectReport, synthetic: bool) -> impl IntoView {
    let drops = drop_rows(&report);
    let regime = report.regime.clone();
    let regime_error = report.regime_error.clone();
    let optional = |v: Option<u64>| v.map_or_else(|| ABSENT.to_owned(), |v| v.to_string());
    view! {
        <section class="card facts" aria-labelledby="facts-heading">
            <h2 id="facts-heading">"What the file holds"</h2>
            {synthetic
                .then(|| {
                    view! {
                        <p id="synthetic-note" class="synthetic">
                            "Synthetic sample, generated in this page by loadproof's seeded generator: not real traffic."
                        </p>
                    }
                })}
            <dl>
                <dt>"Source"</dt>
                <dd id="source">{report.source.clone()}</dd>
                <dt>"Format"</dt>
                <dd id="format">{report.meta.format.name()}</dd>
                <dt>"Layout"</dt>
                <dd id="layout">{report.meta.layout.clone()}</dd>
                <dt>"Columns"</dt>
                <dd id="columns">{report.meta.columns.join(", ")}</dd>
                <dt>"Size, bytes"</dt>
                <dd id="bytes">{report.meta.bytes.to_string()}</dd>
                <dt>"sha256"</dt>
                <dd id="sha256" class="mono">{report.meta.source_sha256.clone()}</dd>
                <dt>"Rows read"</dt>
                <dd id="rows-read">{report.meta.rows_read.to_string()}</dd>
                <dt>"Emitted as requests"</dt>
                <dd id="emitted">{report.meta.emitted.to_string()}</dd>
                <dt>"Dropped (defects)"</dt>
                <dd id="dropped-total">{report.dropped_total.to_string()}</dd>
                <dt>"Filtered (by choice)"</dt>
                <dd id="filtered-total">{report.filtered_total.to_string()}</dd>
                <dt>"Blank lines"</dt>
                <dd id="blank-lines">{report.meta.blank_lines.to_string()}</dd>
                <dt>"Timestamp unit"</dt>
                <dd id="time-unit">{report.meta.raw_time_unit.clone()}</dd>
                <dt>"Rows with a session"</dt>
                <dd id="session-rows">{optional(report.meta.session_rows)}</dd>
                <dt>"Sessions"</dt>
                <dd id="sessions">{optional(report.meta.sessions)}</dd>
                <dt>"Prefix block, tokens"</dt>
                <dd id="prefix-block">{optional(report.meta.prefix_block_tokens.map(u64::from))}</dd>
            </dl>
            <h3>"Notes"</h3>
            {list("notes", report.meta.notes.clone())}
        </section>
        <section class="card regime" aria-labelledby="regime-heading">
            <h2 id="regime-heading">"Regime"</h2>
            {match regime {
                None => {
                    view! {
                        <p id="regime-error" class="error">
                            {regime_error.unwrap_or_default()}
                        </p>
                    }
                        .into_any()
                }
                Some(g) => {
                    view! {
                        <dl>
                            <dt>"Requests"</dt>
                            <dd id="requests">{g.requests.to_string()}</dd>
                            <dt>"Span, s"</dt>
                            <dd id="span">{js(g.span_s)}</dd>
                            <dt>"Rate, requests/s"</dt>
                            <dd id="rate">{js_opt(g.rate_rps)}</dd>
                            <dt>
                                <abbr title="index of dispersion of per-window counts: 1 Poisson, below 1 paced, above 1 bursty">
                                    "Burstiness"
                                </abbr>
                            </dt>
                            <dd id="burstiness">{js_opt(g.burstiness)}</dd>
                            <dt>"Window, s"</dt>
                            <dd id="window">{js(g.window_s)}</dd>
                            <dt>"Windows"</dt>
                            <dd id="windows">{g.windows.to_string()}</dd>
                            <dt>"Timestamp resolution, s"</dt>
                            <dd id="resolution">{js_opt(g.timestamp_resolution_s)}</dd>
                            <dt>"Distinct timestamps"</dt>
                            <dd id="distinct-timestamps">{g.distinct_timestamps.to_string()}</dd>
                            <dt>"Input tokens p50"</dt>
                            <dd id="in-p50">{js(g.input_tokens.p50)}</dd>
                            <dt>"Input tokens p95"</dt>
                            <dd id="in-p95">{js(g.input_tokens.p95)}</dd>
                            <dt>"Output tokens p50"</dt>
                            <dd id="out-p50">{js(g.output_tokens.p50)}</dd>
                            <dt>"Output tokens p95"</dt>
                            <dd id="out-p95">{js(g.output_tokens.p95)}</dd>
                            <dt>"Input/output token ratio"</dt>
                            <dd id="io-ratio">{js(g.io_ratio)}</dd>
                            <dt>"Session share"</dt>
                            <dd id="session-share">{js_opt(g.session_share)}</dd>
                        </dl>
                        <h3>"Warnings"</h3>
                        {list("warnings", g.warnings)}
                    }
                        .into_any()
                }
            }}
        </section>
        <section class="card drops" aria-labelledby="drops-heading">
            <h2 id="drops-heading">"Rows that could not be used"</h2>
            <div class="scroll">
                <table id="drops">
                    <caption>
                        "One row per drop reason, with the first rows of each (line from 1)."
                    </caption>
                    {thead(&[Col::Text("reason"), Col::Num("rows"), Col::Text("examples")])}
                    <tbody>
                        {if drops.is_empty() {
                            view! {
                                <tr>
                                    <td colspan="3" class="hint">
                                        "No row was dropped."
                                    </td>
                                </tr>
                            }
                                .into_any()
                        } else {
                            drops
                                .into_iter()
                                .map(|(reason, count, examples)| {
                                    view! {
                                        <tr>
                                            <th scope="row">{reason}</th>
                                            <td class="num">{count.to_string()}</td>
                                            <td>
                                                <ul class="examples">
                                                    {examples
                                                        .into_iter()
                                                        .map(|e| view! { <li>{e.to_string()}</li> })
                                                        .collect_view()}
                                                </ul>
                                            </td>
                                        </tr>
                                    }
                                })
                                .collect_view()
                                .into_any()
                        }}
                    </tbody>
                </table>
            </div>
        </section>
    }
}
