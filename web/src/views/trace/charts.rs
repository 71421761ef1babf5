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

use super::draw::{draw_cdfs, draw_counts, draw_gaps};
use super::model::{GapHistogram, Loaded, TokenCdf, WindowCounts};
use crate::widgets::canvas_figure::FigureCard;
use crate::widgets::number::js;
use crate::widgets::readout::{Col, thead};

/// Bins of the inter-arrival histogram.
const GAP_BINS: usize = 24;
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
) -> impl IntoView {
    let counts = Memo::new(move |_| {
        loaded.with(|l| l.as_ref().map(|l| WindowCounts::of(&l.trace, window.get())))
    });
    let gaps = Memo::new(move |_| {
        loaded.with(|l| l.as_ref().map(|l| GapHistogram::of(&l.trace, GAP_BINS)))
    });
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

    view! {
        <FigureCard
            slug="counts"
            title="Requests per window over time"
            alt="Bar chart of requests per window over time; the numbers are in the table beside it."
            width=CANVAS_W
            height=CANVAS_H
            draw=move |canvas| counts.get().map_or(Ok(()), |series| draw_counts(canvas, &series))
        >
            {move || counts.get().map(|c| view! { <CountsTable counts=c /> })}
        </FigureCard>
        <FigureCard
            slug="gaps"
            title="Inter-arrival gaps"
            alt="Histogram of gaps between consecutive requests on a log scale; the numbers are in the table beside it."
            width=CANVAS_W
            height=CANVAS_H
            draw=move |canvas| gaps.get().map_or(Ok(()), |hist| draw_gaps(canvas, &hist))
        >
            {move || gaps.get().map(|h| view! { <GapsTable hist=h /> })}
        </FigureCard>
        <FigureCard
            slug="cdf"
            title="Token distributions"
            alt="Cumulative distributions of input and output tokens per request; the quantiles are in the table beside it."
            width=CANVAS_W
            height=CANVAS_H
            draw=move |canvas| {
                cdfs.get().map_or(Ok(()), |(input, output)| draw_cdfs(canvas, &input, &output))
            }
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
                    <td class="num">{js(idx as f64 * counts.bar_s)}</td>
                    <td class="num">{count.to_string()}</td>
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
                    <td class="num">{js(counts.window_s)}</td>
                </tr>
                <tr>
                    <th scope="row">"Bar width, s"</th>
                    <td class="num">{js(counts.bar_s)}</td>
                </tr>
                <tr>
                    <th scope="row">"Bars"</th>
                    <td class="num">{counts.counts.len().to_string()}</td>
                </tr>
                <tr>
                    <th scope="row">"Highest bar, requests"</th>
                    <td class="num">{counts.peak().to_string()}</td>
                </tr>
            </tbody>
        </table>
        <details>
            <summary>"Every bar"</summary>
            <div class="scroll tall">
                <table>
                    {thead(&[Col::Text("starts at, s"), Col::Text("requests")])}
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </details>
    }
}

#[component]
fn GapsTable(hist: GapHistogram) -> impl IntoView {
    let rows = hist
        .bins
        .iter()
        .map(|bin| {
            view! {
                <tr>
                    <td class="num">{short(bin.lo_s)}</td>
                    <td class="num">{short(bin.hi_s)}</td>
                    <td class="num">{bin.count.to_string()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="scroll tall">
            <table id="gaps-table">
                <caption>"Gaps between consecutive requests"</caption>
                {thead(&[Col::Text("from, s"), Col::Text("to, s"), Col::Text("gaps")])}
                <tbody>
                    <tr>
                        <td colspan="2">"0 (same timestamp)"</td>
                        <td class="num">{hist.simultaneous.to_string()}</td>
                    </tr>
                    {rows}
                </tbody>
            </table>
        </div>
    }
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
                    <td class="num">{js(tokens_in)}</td>
                    <td class="num">{js(tokens_out)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table id="cdf-table">
            <caption>"Tokens per request at each quantile (linear interpolation)"</caption>
            {thead(&[Col::Text("quantile"), Col::Text("input"), Col::Text("output")])}
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

/// A bin edge to four significant digits: edges are display choices, not measurements.
fn short(x: f64) -> String {
    let digits = 3 - x.abs().log10().floor().clamp(-12.0, 3.0) as i32;
    format!("{:.*}", digits.max(0) as usize, x)
}
