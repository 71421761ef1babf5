//! The three charts of a trace, each beside a table of the numbers it draws.
//!
//! A canvas is a picture, invisible to screen readers and to tests, so every chart has a
//! text alternative: a short table that is always shown, and the full data behind a
//! `<details>`. Chart and table are rendered from the same [`super::model`] value. Each chart
//! is a [`FigureCard`] drawn from a `Memo`, so changing the window redraws only the chart that
//! depends on it.

use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::Window;
use loadproof_core::report::InspectReport;
use loadproof_core::trace::ArrivalGaps;

use super::draw::{draw_cdfs, draw_counts, draw_gaps};
use super::model::{Loaded, TokenCdf, WindowCounts, gap_bin_labels, grid_words};
use crate::widgets::canvas_figure::{FigureCard, Readout};
use crate::widgets::number::{js, readable};
use crate::widgets::probe::Probes;
use crate::widgets::readout::{Col, td, thead};
/// Points on each token CDF curve.
const CDF_POINTS: usize = 200;
/// Canvas size in pixels; CSS scales it to the column.
const CANVAS_W: &str = "640";
const CANVAS_H: &str = "320";

/// Requests over time, inter-arrival gaps and token CDFs of the loaded trace.
#[component]
pub fn Charts(
    /// The parsed trace.
    loaded: RwSignal<Option<Arc<Loaded>>>,
    /// The burstiness window, which the per-window counts follow.
    window: Memo<Window>,
    /// Core's report of the trace, whose `arrival_gaps` the inter-arrival chart draws.
    report: Memo<Option<InspectReport>>,
    /// Sets the burstiness window, seconds (the grid's suggested window).
    use_window: Callback<f64>,
) -> impl IntoView {
    let counts = Memo::new(move |_| {
        loaded.with(|l| l.as_ref().map(|l| WindowCounts::of(&l.trace, window.get())))
    });
    // Unchanged by the window, so a new window does not redraw this chart.
    let gaps = Memo::new(move |_| report.with(|r| r.as_ref().map(|r| r.arrival_gaps.clone())));
    let cdfs = Memo::new(move |_| {
        loaded.with(|l| {
            l.as_ref().map(|l| {
                let req = l.trace.requests();
                (
                    TokenCdf::of(&req.input_tokens, CDF_POINTS),
                    TokenCdf::of(&req.output_tokens, CDF_POINTS),
                )
            })
        })
    });

    let (count_probes, gap_probes, cdf_probes) =
        (Probes::default(), Probes::default(), Probes::default());
    let readout = |p: &Probes| -> Readout {
        let p = p.clone();
        std::rc::Rc::new(move |x, y| p.read(x, y))
    };
    let (count_readout, gap_readout, cdf_readout) = (
        readout(&count_probes),
        readout(&gap_probes),
        readout(&cdf_probes),
    );
    view! {
        <FigureCard
            slug="counts"
            title="Requests per window over time"
            alt="Bar chart of requests per window over time; the numbers are in the table beside it."
            width=CANVAS_W
            height=CANVAS_H
            draw=move |canvas| {
                counts.get().map_or(Ok(()), |series| draw_counts(canvas, &series, &count_probes))
            }
            readout=count_readout
        >
            {move || counts.get().map(|c| view! { <CountsTable counts=c /> })}
        </FigureCard>
        <FigureCard
            slug="gaps"
            title="Inter-arrival gaps"
            alt="Bar chart of gaps between consecutive requests: same-timestamp arrivals first, then the gaps on the recording grid; the numbers are in the table beside it."
            width=CANVAS_W
            height=CANVAS_H
            draw=move |canvas| gaps.get().map_or(Ok(()), |g| draw_gaps(canvas, &g, &gap_probes))
            readout=gap_readout
        >
            {move || {
                gaps.get().map(|g| view! { <GapsTable gaps=g window=window use_window=use_window /> })
            }}
        </FigureCard>
        <FigureCard
            slug="cdf"
            title="Token distributions"
            alt="Cumulative distributions of input and output tokens per request; the quantiles are in the table beside it."
            width=CANVAS_W
            height=CANVAS_H
            draw=move |canvas| {
                cdfs.get()
                    .map_or(Ok(()), |(input, output)| draw_cdfs(canvas, &input, &output, &cdf_probes))
            }
            readout=cdf_readout
        >
            {move || {
                cdfs.get()
                    .map(|(input, output)| view! { <CdfTable input=input output=output /> })
            }}
        </FigureCard>
    }
}

#[component]
fn CountsTable(counts: WindowCounts) -> impl IntoView {
    let rows = counts
        .counts
        .iter()
        .enumerate()
        .map(|(idx, &count)| {
            view! {
                <tr>
                    {td(Some(idx as f64 * counts.bar_s))}
                    {td(Some(count as f64))}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table id="counts-table">
            <caption>"What the bars show"</caption>
            <tbody>
                <tr>
                    <th scope="row">"Window, s"</th>
                    {td(Some(counts.window_s))}
                </tr>
                <tr>
                    <th scope="row">"Bar width, s"</th>
                    {td(Some(counts.bar_s))}
                </tr>
                <tr>
                    <th scope="row">"Bars"</th>
                    {td(Some(counts.counts.len() as f64))}
                </tr>
                <tr>
                    <th scope="row">"Highest bar, requests"</th>
                    {td(Some(counts.peak() as f64))}
                </tr>
            </tbody>
        </table>
        <details>
            <summary>"Every bar"</summary>
            <div class="scroll tall">
                <table>
                    {thead(&[Col::Num("starts at, s"), Col::Num("requests")])}
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </details>
    }
}

#[component]
fn GapsTable(gaps: ArrivalGaps, window: Memo<Window>, use_window: Callback<f64>) -> impl IntoView {
    let labels = gap_bin_labels(&gaps);
    let rows = gaps
        .bins
        .iter()
        .zip(labels)
        .map(|(bin, label)| {
            view! {
                <tr>
                    <th scope="row">{label}</th>
                    {td(Some(bin.gaps as f64))}
                </tr>
            }
        })
        .collect_view();
    let caption = match gaps.grid_s {
        Some(g) => format!(
            "Gaps between consecutive requests, rounded to the {} grid",
            grid_words(g)
        ),
        None => "Gaps between consecutive requests".to_owned(),
    };
    view! {
        <GridLine gaps=gaps.clone() window=window use_window=use_window />
        <div class="scroll tall">
            <table id="gaps-table">
                <caption>{caption}</caption>
                {thead(&[Col::Text("gap"), Col::Num("gaps")])}
                <tbody>
                    <tr id="gaps-zero">
                        <th scope="row">"same timestamp"</th>
                        {td(Some(gaps.zero_gaps as f64))}
                    </tr>
                    {rows}
                </tbody>
            </table>
        </div>
    }
}

/// What the recording grid means for the regime: the resolution, how many arrivals share a
/// timestamp, and the window the grid warrants, with a button that sets it.
#[component]
fn GridLine(gaps: ArrivalGaps, window: Memo<Window>, use_window: Callback<f64>) -> impl IntoView {
    let shared = format!(
        "{} of {} gaps are 0 (same timestamp).",
        readable(gaps.zero_gaps as f64),
        readable(gaps.gaps as f64)
    );
    let Some(grid) = gaps.grid_s else {
        return view! {
            <p id="gap-grid" class="hint" data-grid="none">
                "No recording grid: the timestamps sit on no common tick coarser than 1 ns. "
                {shared}
            </p>
        }
        .into_any();
    };
    let words = grid_words(grid);
    let advice = match gaps.suggested_window_s {
        Some(w) => {
            let in_use = move || window.get().secs() == w;
            view! {
                " A burstiness window under "
                <span id="suggested-window" data-value=js(w)>{format!("{} s", readable(w))}</span>
                " (ten ticks) measures the recorder's rounding more than the traffic. "
                <button
                    id="use-window"
                    type="button"
                    disabled=in_use
                    on:click=move |_| use_window.run(w)
                >
                    {move || if in_use() { format!("Using a {} s window", readable(w)) } else { format!("Use a {} s window", readable(w)) }}
                </button>
            }
            .into_any()
        }
        None => view! { " The 1 s window spans at least ten ticks." }.into_any(),
    };
    view! {
        <p id="gap-grid" class="hint" data-grid=js(grid)>
            "Recorded on a "
            <strong title=js(grid)>{words}</strong>
            " grid: "
            {shared}
            {advice}
        </p>
    }
    .into_any()
}

#[component]
fn CdfTable(input: TokenCdf, output: TokenCdf) -> impl IntoView {
    let rows = input
        .table
        .iter()
        .zip(&output.table)
        .map(|(&(q, tokens_in), &(_, tokens_out))| {
            view! {
                <tr>
                    <th scope="row">{quantile_label(q)}</th>
                    {td(Some(tokens_in))}
                    {td(Some(tokens_out))}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table id="cdf-table">
            <caption>"Tokens per request at each quantile (linear interpolation)"</caption>
            {thead(&[Col::Text("quantile"), Col::Num("input"), Col::Num("output")])}
            <tbody>{rows}</tbody>
        </table>
    }
}

/// `min`, `p50`, `max` and so on.
fn quantile_label(q: f64) -> String {
    if q <= 0.0 {
        "min".to_owned()
    } else if q >= 1.0 {
        "max".to_owned()
    } else {
        format!("p{}", js(q * 100.0))
    }
}
