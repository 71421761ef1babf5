//! The trace view's report: what the file holds (core's accounting of every row), the
//! traffic regime it describes, and the rows that could not be used and why.
//!
//! Every value is core's `InspectReport`, shown readable (four significant digits, grouped:
//! [`crate::widgets::number::readable`]) with the exact value, as `loadproof trace inspect
//! --json` writes it, in the element's `title`.

use leptos::prelude::*;
use loadproof_core::report::InspectReport;

use super::model::drop_rows;
use crate::widgets::readout::{Col, dd, list, td, thead};

/// Accounting, drops and regime of one report.
#[component]
pub fn Summary(report: InspectReport, synthetic: bool) -> impl IntoView {
    let drops = drop_rows(&report);
    let regime = report.regime.clone();
    let regime_error = report.regime_error.clone();
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
                {dd("bytes", Some(report.meta.bytes as f64))}
                <dt>"sha256"</dt>
                <dd id="sha256" class="mono">{report.meta.source_sha256.clone()}</dd>
                // A compressed file: the digest above is its content's (what a plan names),
                // this one the file's as given (what finds the file).
                {report.meta.compression.clone().map(|c| view! {
                    <dt>"File as given"</dt>
                    <dd id="file-codec">{c.codec.name()}</dd>
                    <dt>"File size, bytes"</dt>
                    {dd("file-bytes", Some(c.file_bytes as f64))}
                    <dt>"File sha256"</dt>
                    <dd id="file-sha256" class="mono">{c.file_sha256}</dd>
                })}
                {report
                    .meta
                    .schema_sha256
                    .clone()
                    .map(|sha| {
                        view! {
                            <dt>"Mapping sha256"</dt>
                            <dd id="schema-sha256" class="mono">{sha}</dd>
                        }
                    })}
                <dt>"Rows read"</dt>
                {dd("rows-read", Some(report.meta.rows_read as f64))}
                <dt>"Emitted as requests"</dt>
                {dd("emitted", Some(report.meta.emitted as f64))}
                <dt>"Dropped (defects)"</dt>
                {dd("dropped-total", Some(report.dropped_total as f64))}
                <dt>"Filtered (by choice)"</dt>
                {dd("filtered-total", Some(report.filtered_total as f64))}
                <dt>"Blank lines"</dt>
                {dd("blank-lines", Some(report.meta.blank_lines as f64))}
                <dt>"Timestamp unit"</dt>
                <dd id="time-unit">{report.meta.raw_time_unit.clone()}</dd>
                <dt>"Rows with a session"</dt>
                {dd("session-rows", report.meta.session_rows.map(|v| v as f64))}
                <dt>"Sessions"</dt>
                {dd("sessions", report.meta.sessions.map(|v| v as f64))}
                <dt>"Prefix block, tokens"</dt>
                {dd("prefix-block", report.meta.prefix_block_tokens.map(f64::from))}
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
                            {dd("requests", Some(g.requests as f64))}
                            <dt>"Span, s"</dt>
                            {dd("span", Some(g.span_s))}
                            <dt>"Rate, requests/s"</dt>
                            {dd("rate", g.rate_rps)}
                            <dt>
                                <abbr title="index of dispersion of per-window counts: 1 Poisson, below 1 paced, above 1 bursty">
                                    "Burstiness"
                                </abbr>
                            </dt>
                            {dd("burstiness", g.burstiness)}
                            <dt>"Window, s"</dt>
                            {dd("window", Some(g.window_s))}
                            <dt>"Windows"</dt>
                            {dd("windows", Some(g.windows as f64))}
                            <dt>"Timestamp resolution, s"</dt>
                            {dd("resolution", g.timestamp_resolution_s)}
                            <dt>"Distinct timestamps"</dt>
                            {dd("distinct-timestamps", Some(g.distinct_timestamps as f64))}
                            <dt>"Input tokens p50"</dt>
                            {dd("in-p50", Some(g.input_tokens.p50))}
                            <dt>"Input tokens p95"</dt>
                            {dd("in-p95", Some(g.input_tokens.p95))}
                            <dt>"Output tokens p50"</dt>
                            {dd("out-p50", Some(g.output_tokens.p50))}
                            <dt>"Output tokens p95"</dt>
                            {dd("out-p95", Some(g.output_tokens.p95))}
                            <dt>"Input/output token ratio"</dt>
                            {dd("io-ratio", Some(g.io_ratio))}
                            <dt>"Session share"</dt>
                            {dd("session-share", g.session_share)}
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
                                            {td(Some(count as f64))}
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
