//! The receipt view's charts, each beside the tables of the numbers it draws: latency
//! histograms and CDFs, the per-request timeline, and the `/metrics` series.
//!
//! Every chart is a [`FigureCard`] painted by [`super::draw`] from the [`ReceiptModel`]; the
//! tables are its text alternative (what screen readers and browser tests read). The latency
//! charts share one log/linear choice (`#latency-log`, log unless unticked); the histograms,
//! CDFs and `/metrics` series have a readout of the value under the pointer, written as the
//! tables write it.

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::audit::{Audit, LatencyFacts};
use loadproof_core::receipt::Phase;

use super::draw as plots;
use super::model::{
    MetricPoint, MetricSamples, MetricsSeries, ReceiptModel, Timeline, TimelineRow,
};
use super::rates::{Rate, token_rates};
use crate::widgets::canvas_figure::{FigureCard, Readout};
use crate::widgets::probe::Probes;
use crate::widgets::readout::{Col, exact, int, int_opt, list, num, td, thead};

/// Timeline rows written out as a table at most (the chart draws them all).
const TABLE_ROWS: usize = 500;
/// The classes of a chart's card in this view.
const FIGURE_CLASS: &str = "card chart receipt-figure";
/// A chart's canvas size unless it says otherwise, pixels.
const FIGURE_W: &str = "960";
const FIGURE_H: &str = "420";

/// A chart's readout of what its latest drawing's `probes` say under the pointer.
fn readout_of(probes: &Probes) -> Readout {
    let probes = probes.clone();
    Rc::new(move |x, y| probes.read(x, y))
}

/// Histograms and CDFs of the latency samples.
#[component]
pub fn LatencyCharts(m: Arc<ReceiptModel>) -> impl IntoView {
    let for_hist = m.clone();
    let for_cdf = m.clone();
    let log = RwSignal::new(true);
    let (hist_probes, cdf_probes) = (Probes::default(), Probes::default());
    let (hist_readout, cdf_readout) = (readout_of(&hist_probes), readout_of(&cdf_probes));
    let scale = view! {
        <label class="scale-toggle">
            <input
                type="checkbox"
                id="latency-log"
                prop:checked=move || log.get()
                on:change=move |e| log.set(event_target_checked(&e))
            />
            " log ms axis (both latency charts)"
        </label>
    };
    let hist_tables = m
        .latency
        .metrics
        .iter()
        .map(|s| view! { <HistTable s=s.clone() /> })
        .collect_view();
    let cdf_tables = view! { <CdfTable metrics=m.latency.metrics.clone() audit=m.audit.clone() /> };
    let empty = m.latency.metrics.is_empty();
    let why = m.latency.source.clone();
    let why2 = why.clone();
    let hist_side = if empty {
        view! { <p class="hint">{why}</p> }.into_any()
    } else {
        view! { {scale} {hist_tables} }.into_any()
    };
    let cdf_side = if empty {
        view! { <p class="hint">{why2}</p> }.into_any()
    } else {
        cdf_tables.into_any()
    };
    view! {
        <FigureCard
            slug="histograms"
            id="receipt-histograms"
            class=FIGURE_CLASS
            title="Latency histograms"
            alt="Histograms of TTFT, TPOT, ITL and end-to-end latency; the bins are in the tables beside it."
            width="760"
            height="480"
            draw=move |canvas| {
                plots::draw_histograms(canvas, &for_hist.latency.metrics, log.get(), &hist_probes)
            }
            readout=hist_readout
        >
            {hist_side}
        </FigureCard>
        <FigureCard
            slug="cdfs"
            id="receipt-cdfs"
            class=FIGURE_CLASS
            title="Latency CDFs"
            alt="Cumulative distributions of TTFT, TPOT, ITL and end-to-end latency; the quantiles are in the tables beside it."
            width="760"
            height="480"
            draw=move |canvas| {
                plots::draw_cdfs(canvas, &for_cdf.latency.metrics, log.get(), &cdf_probes)
            }
            readout=cdf_readout
        >
            {cdf_side}
        </FigureCard>
    }
}

#[component]
fn HistTable(s: MetricSamples) -> impl IntoView {
    let rows = s
        .bins
        .iter()
        .map(|b| {
            view! {
                <tr>
                    {td(Some(b.lo_ms))}
                    {td(Some(b.hi_ms))}
                    <td class="num">{int(b.count)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <details id=format!("hist-{}", s.metric)>
            <summary>
                {format!(
                    "{}{}",
                    plots::described(&s),
                    if s.log_bins { ", log-spaced bins" } else { "" },
                )}
            </summary>
            <div class="scroll tall">
                <table>
                    {thead(&[Col::Num("from, ms"), Col::Num("to, ms"), Col::Num("samples")])}
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </details>
    }
}

/// The audit's quantiles of every metric drawn, then each curve's points.
#[component]
fn CdfTable(metrics: Vec<MetricSamples>, audit: Audit) -> impl IntoView {
    let facts: Vec<Option<LatencyFacts>> = metrics
        .iter()
        .map(|s| audit.latency.iter().find(|l| l.metric == s.metric).cloned())
        .collect();
    let row = |label: &'static str, pick: fn(&LatencyFacts) -> Option<f64>| {
        let cells = facts
            .iter()
            .map(|f| td(f.as_ref().and_then(pick)))
            .collect_view();
        view! {
            <tr>
                <th scope="row">{label}</th>
                {cells}
            </tr>
        }
    };
    let heads = metrics
        .iter()
        .map(|s| view! { <th scope="col" class="num">{s.metric.to_uppercase()}</th> })
        .collect_view();
    let mins = metrics.iter().map(|s| td(Some(s.min_ms))).collect_view();
    let points = metrics
        .iter()
        .map(|s| {
            let rows = s
                .cdf
                .iter()
                .map(|(ms, share)| {
                    view! {
                        <tr>
                            {td(Some(*ms))}
                            {td(Some(*share))}
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <details id=format!("cdf-{}", s.metric)>
                    <summary>
                        {format!("{}: {} curve points", s.metric.to_uppercase(), s.cdf.len())}
                    </summary>
                    <div class="scroll tall">
                        <table>
                            {thead(&[Col::Num("ms"), Col::Num("share at or below")])}
                            <tbody>{rows}</tbody>
                        </table>
                    </div>
                </details>
            }
        })
        .collect_view();
    view! {
        <table id="cdf-quantiles">
            <caption>"Milliseconds: the audit's quantiles (linear interpolation)"</caption>
            <thead>
                <tr>
                    <th scope="col">"quantile"</th>
                    {heads}
                </tr>
            </thead>
            <tbody>
                <tr>
                    <th scope="row">"min"</th>
                    {mins}
                </tr>
                {row("p50", |f| f.p50_ms)}
                {row("p90", |f| f.p90_ms)}
                {row("p99", |f| f.p99_ms)}
                {row("max", |f| f.max_ms)}
            </tbody>
        </table>
        {points}
    }
}

/// One row of the timeline table.
fn timeline_row(r: &TimelineRow) -> impl IntoView + use<> {
    let ms = |s: Option<f64>| s.map(|s| s * 1e3);
    view! {
        <tr data-index=r.index.to_string() data-disposition=r.disposition.clone() class:bad=!r.ok()>
            <th scope="row" class="num">{r.index.to_string()}</th>
            {td(ms(r.scheduled_s))}
            {td(ms(r.sent_s))}
            {td(ms(r.first_token_s))}
            {td(ms(r.end_s))}
            <td>{r.disposition.clone()}</td>
            <td class="error-cell">{r.detail.clone().unwrap_or_default()}</td>
        </tr>
    }
}

/// One row of the failed-requests table.
fn failure_row(r: &TimelineRow) -> impl IntoView {
    view! {
        <tr data-index=r.index.to_string() data-disposition=r.disposition.clone()>
            <th scope="row" class="num">{r.index.to_string()}</th>
            <td>{r.disposition.clone()}</td>
            <td class="error-cell">{r.detail.clone().unwrap_or_default()}</td>
        </tr>
    }
}

fn timeline_head() -> impl IntoView {
    view! {
        {thead(&[Col::Num("request"), Col::Num("scheduled, ms"), Col::Num("sent, ms"), Col::Num("first token, ms"), Col::Num("end, ms"), Col::Text("disposition"), Col::Text("what went wrong")])}
    }
}

/// The per-request timeline.
#[component]
pub fn TimelineChart(m: Arc<ReceiptModel>) -> impl IntoView {
    let for_draw = m.clone();
    let probes = Probes::default();
    let readout = readout_of(&probes);
    let t: &Timeline = &m.timeline;
    let failed: Vec<&TimelineRow> = t.rows.iter().filter(|r| !r.ok()).collect();
    let shown_failed = failed
        .iter()
        .take(TABLE_ROWS)
        .map(|r| failure_row(r))
        .collect_view();
    // Put in the page when first opened, like the other long tables.
    let opened = RwSignal::new(t.rows.len() <= 8);
    let for_rows = m.clone();
    let every = move || {
        opened.get().then(|| {
            for_rows
                .timeline
                .rows
                .iter()
                .take(TABLE_ROWS)
                .map(timeline_row)
                .collect_view()
        })
    };
    let open_at_start = t.rows.len() <= 8;
    let rows_note = if t.rows.len() > TABLE_ROWS {
        format!(
            "The first {TABLE_ROWS} of {} requests (the chart draws them all; the event log is in the raw evidence).",
            t.rows.len()
        )
    } else {
        format!("All {} requests.", t.rows.len())
    };
    let side = view! {
            <table id="timeline-summary" class="compact">
                <caption>{t.source.clone()}</caption>
                <tbody>
                    <tr>
                        <th scope="row">"Requests in the evidence"</th>
                        <td class="num">{int(t.total)}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Drawn"</th>
                        <td class="num">{int(t.rows.len() as u64)}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Failed (drawn in red)"</th>
                        <td id="timeline-failed" class="num" class:bad=!failed.is_empty()>
                            {int(failed.len() as u64)}
                        </td>
                    </tr>
                </tbody>
            </table>
            {t
                .truncated
                .then(|| {
                    view! {
                        <p id="timeline-truncated" class="hint">
                            {format!(
                                "Only the first {} of {} requests are drawn.",
                                t.rows.len(),
                                t.total,
                            )}
                        </p>
                    }
                })}
            {(!failed.is_empty())
                .then(|| {
                    view! {
                        <div class="scroll tall">
                            <table id="timeline-failures">
                                <caption>"Failed requests"</caption>
                                {thead(&[Col::Num("request"), Col::Text("disposition"), Col::Text("what went wrong")])}
                                <tbody>{shown_failed}</tbody>
                            </table>
                        </div>
                    }
                })}
            {(!t.rows.is_empty())
                .then(|| {
                    view! {
                        <details
                            id="timeline-every"
                            open=open_at_start
                            on:toggle=move |_| opened.set(true)
                        >
                            <summary>"Every request"</summary>
                            <p class="hint">{rows_note}</p>
                            <div class="scroll tall">
                                <table id="timeline-table">{timeline_head()} <tbody>{every}</tbody></table>
                            </div>
                        </details>
                    }
                })}
    }
    .into_any();
    view! {
        <FigureCard
            slug="timeline"
            id="receipt-timeline"
            class=FIGURE_CLASS
            title="Requests over time"
            alt="Each request as a line at its index: scheduled to sent, sent to first token, first token to end; failed requests in red with a cross. The numbers are in the tables beside it."
            width=FIGURE_W
            height=FIGURE_H
            draw=move |canvas| plots::draw_timeline(canvas, &for_draw.timeline, &probes)
            readout=readout
        >
            {side}
        </FigureCard>
    }
}

/// A counter's rate cell: readable, the exact value in its title, a reset named.
fn rate_td(r: Option<Rate>) -> impl IntoView {
    let reset = r.is_some_and(|r| r.reset);
    view! {
        <td class="num" class:bad=reset title=exact(r.map(|r| r.per_s)) data-reset=reset.then_some("true")>
            {num(r.map(|r| r.per_s))}
            {reset.then_some(" (reset)")}
        </td>
    }
}

/// One scrape of the `/metrics` table: the gauges and counters as scraped, then the counters'
/// rates since the previous scrape of the same URL (what the chart draws).
fn metrics_row(
    p: &MetricPoint,
    generated: Option<Rate>,
    prompt: Option<Rate>,
) -> impl IntoView + use<> {
    view! {
        <tr data-scrape=p.scrape.to_string() data-url=p.url.to_string()>
            <th scope="row" class="num">{p.scrape.to_string()}</th>
            <td>
                {match p.phase {
                    Phase::Before => "before",
                    Phase::During => "during",
                    Phase::After => "after",
                }}
            </td>
            {td(p.t_s)}
            {td(p.running)}
            {td(p.waiting)}
            {td(p.kv_usage)}
            {td(p.generation_tokens)}
            {td(p.prompt_tokens)}
            {rate_td(generated)}
            {rate_td(prompt)}
        </tr>
    }
}

/// The `/metrics` series.
#[component]
pub fn SeriesChart(m: Arc<ReceiptModel>) -> impl IntoView {
    let for_draw = m.clone();
    let s: &MetricsSeries = &m.metrics;
    let o = &m.audit.occupancy;
    let policy = &m.audit.policy;
    let (generated, prompt, resets) = token_rates(s);
    // Up to 2,000 rows: put in the page when the table is first opened (building them with
    // the report took ~160 ms of one frame on a ten-minute vLLM receipt).
    let opened = RwSignal::new(s.points.len() <= 8);
    let for_rows = m.clone();
    let rows = move || {
        opened.get().then(|| {
            for_rows
                .metrics
                .points
                .iter()
                .zip(generated.iter().zip(&prompt))
                .take(2_000)
                .map(|(p, (g, pr))| metrics_row(p, *g, *pr))
                .collect_view()
        })
    };
    let probes = Probes::default();
    let readout = readout_of(&probes);
    let unread = s.unread.clone();
    let replicas = m.audit.engine.replicas.clone();
    let side = view! {
            <table id="metrics-summary" class="compact">
                <caption>"The audit's occupancy reading"</caption>
                <tbody>
                    <tr>
                        <th scope="row">"Samples during the run"</th>
                        <td class="num">{int(o.samples)}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Unread during the run"</th>
                        <td class="num">{int(o.unread)}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Largest gap, ms"</th>
                        {td(o.max_gap_ms)}
                    </tr>
                    <tr id="occupancy-gap-bound">
                        <th scope="row">"Gap allowed by the policy, ms"</th>
                        {td(Some(policy.max_scrape_gap_ms))}
                    </tr>
                    <tr>
                        <th scope="row">"Max running"</th>
                        {td(o.max_running)}
                    </tr>
                    <tr>
                        <th scope="row">"Max waiting"</th>
                        {td(o.max_waiting)}
                    </tr>
                    <tr id="occupancy-waiting-run">
                        <th scope="row">"Longest run of scrapes with a queue"</th>
                        <td class="num">{int(o.waiting_longest_run)}</td>
                    </tr>
                    <tr id="occupancy-waiting-bound">
                        <th scope="row">"A run this long refuses (policy)"</th>
                        <td class="num">{policy.max_waiting_scrapes.to_string()}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Max KV usage"</th>
                        {td(o.max_kv_usage)}
                    </tr>
                    <tr>
                        <th scope="row">"Preemptions"</th>
                        <td class="num">{int_opt(o.preemptions_delta)}</td>
                    </tr>
                </tbody>
            </table>
            <p class="hint">{o.reason.clone()}</p>
            {o
                .engine_over_client
                .clone()
                .map(|w| view! { <p class="bad">"Engine held more than this client: " {w}</p> })}
            {(!replicas.is_empty())
                .then(|| {
                    view! {
                        <table id="replicas-table" class="compact">
                            <caption>
                                {format!(
                                    "{} replicas, each on its own (the chart draws one line per replica)",
                                    replicas.len(),
                                )}
                            </caption>
                            {thead(&[Col::Text("replica"), Col::Num("generation Δ"), Col::Num("prompt Δ"), Col::Num("samples"), Col::Num("max running"), Col::Num("max waiting"), Col::Text("incarnation")])}
                            <tbody>
                                {replicas
                                    .iter()
                                    .enumerate()
                                    .map(|(k, r)| {
                                        view! {
                                            <tr data-url=r.url.clone() class=if r.continuous { "" } else { "bad" }>
                                                <th scope="row">{format!("{} · {}", k + 1, r.url)}</th>
                                                <td class="num">{int_opt(r.generation_tokens_delta)}</td>
                                                <td class="num">{int_opt(r.prompt_tokens_delta)}</td>
                                                <td class="num">{int(r.samples)}</td>
                                                {td(r.max_running)}
                                                {td(r.max_waiting)}
                                                <td>{r.reason.clone()}</td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                })}
            {(s.unread_count > 0)
                .then(|| {
                    view! {
                        <h3>{format!("{} scrapes could not be read", s.unread_count)}</h3>
                        {list("metrics-unread", unread)}
                    }
                })}
            <p id="metrics-rates-note" class="hint">
                {format!(
                    "Token counters are drawn as rates: growth per second since the previous scrape of the same URL (the tok/s columns).{}",
                    match resets {
                        0 => String::new(),
                        n => format!(" {n} interval(s) follow a counter reset: counted from 0, marked reset."),
                    },
                )}
            </p>
            <details
                id="metrics-every"
                open=s.points.len() <= 8
                on:toggle=move |_| opened.set(true)
            >
                <summary>{format!("Every readable scrape ({})", s.points.len())}</summary>
                <div class="scroll tall">
                    <table id="metrics-table">
                        {thead(&[Col::Num("scrape"), Col::Text("phase"), Col::Num("t, s"), Col::Num("running"), Col::Num("waiting"), Col::Num("KV usage"), Col::Num("generation tokens"), Col::Num("prompt tokens"), Col::Num("generated tok/s"), Col::Num("prompt tok/s")])}
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </details>
    }
    .into_any();
    view! {
        <FigureCard
            slug="metrics"
            id="receipt-metrics"
            class=FIGURE_CLASS
            title="/metrics over the run"
            alt="Requests running and waiting, KV-cache usage, and generated and prompt tokens per second between scrapes, over the run; the numbers are in the tables beside it."
            width=FIGURE_W
            height="560"
            draw=move |canvas| plots::draw_series(canvas, &for_draw.metrics, &probes)
            readout=readout
        >
            {side}
        </FigureCard>
    }
}

/// The GPU exporters' telemetry (DCGM), when any was scraped.
#[component]
pub fn GpuChart(m: Arc<ReceiptModel>) -> impl IntoView {
    let Some(gpu) = m.audit.gpu.clone() else {
        return ().into_any();
    };
    let for_draw = m.clone();
    let probes = Probes::default();
    let readout = readout_of(&probes);
    let one = |v: Option<f64>| td(v);
    let rows = gpu
        .exporters
        .iter()
        .enumerate()
        .map(|(k, e)| {
            view! {
                <tr data-url=e.url.clone()>
                    <th scope="row">{format!("{} · {}", k + 1, e.url)}</th>
                    <td>{e.model_names.join(", ")}</td>
                    <td class="num">{int(e.gpus)}</td>
                    <td class="num">{int(e.samples)}</td>
                    {one(e.mean_util_pct)}
                    {one(e.max_util_pct)}
                    {one(e.max_fb_used_mib)}
                    {one(e.max_power_w)}
                                        <td>
                        {format!(
                            "{}{}{}",
                            e.reason,
                            if e.simulated { "; SIMULATED (no GPU measured)" } else { "" },
                            e
                                .not_evidence
                                .as_ref()
                                .map_or(String::new(), |w| format!("; not evidence of the GPU: {w}")),
                        )}
                    </td>
                </tr>
            }
        })
        .collect_view();
    let side = view! {
        <div class="scroll">
        <table id="gpu-table" class="compact">
            <caption>"Each DCGM exporter over the run (telemetry beside the engine's counters, never a cause of them)"</caption>
            {thead(&[Col::Text("exporter"), Col::Text("GPU model (modelName)"), Col::Num("GPUs"), Col::Num("samples"), Col::Num("mean util, %"), Col::Num("max util, %"), Col::Num("max memory used, MiB"), Col::Num("max power, W"), Col::Text("read")])}
                        <tbody>{rows}</tbody>
        </table>
        </div>
    }
    .into_any();
    view! {
        <FigureCard
            slug="gpu"
            id="receipt-gpu"
            class=FIGURE_CLASS
            title="GPU telemetry (DCGM) over the run"
            alt="GPU utilisation, framebuffer memory used, power and SM clock from each DCGM exporter over the run; the numbers are in the table beside it."
            width=FIGURE_W
            height="560"
            draw=move |canvas| plots::draw_gpu(canvas, &for_draw.metrics, &probes)
            readout=readout
        >
            {side}
        </FigureCard>
    }
    .into_any()
}
