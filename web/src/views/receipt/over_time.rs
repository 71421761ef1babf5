//! The "Throughput and latency over time" card: the audit's time slices (`over_time`, core's
//! `audit::over_time`) drawn as three stacked panels on one time axis — requests/s, output
//! tokens/s, and TTFT and E2E p50/p99 on a log scale — beside a table of every slice's numbers.
//!
//! The table is the audit's JSON verbatim (readable values, the exact one in each `title`).
//! The one thing drawn that the audit does not hold is the engine's own token count: where the
//! receipt's scrapes carry `generation_tokens_total` and the slices are on the scrapes' clock,
//! its rate between consecutive scrapes of each engine URL is drawn as a second line in the
//! tokens/s panel, named as the engine's count (an interval where the counter went down, a
//! restart, is left out rather than drawn negative). Each panel reads back under the pointer:
//! the slice there and every line's value in it, written as the table writes them.

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::audit::{OverTime, Slice};
use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use super::model::{MetricsSeries, ReceiptModel};
use crate::widgets::canvas_figure::FigureCard;
use crate::widgets::number::readable;
use crate::widgets::plot::{
    Area, Font, area, draw_error, frame_of, hue, inked, legend, legend_line, text,
};
use crate::widgets::probe::{Probe, Probes};
use crate::widgets::readout::{Col, int, td, thead};

const FONT: Font = ("sans-serif", 13);
const CAPTION: Font = ("sans-serif", 15);
const FIRST: RGBColor = RGBColor(37, 99, 235);
const SECOND: RGBColor = RGBColor(217, 119, 6);
const THIRD: RGBColor = RGBColor(22, 163, 74);
const FOURTH: RGBColor = RGBColor(124, 58, 237);
const ENGINE: [RGBColor; 3] = [
    RGBColor(200, 30, 30),
    RGBColor(14, 116, 144),
    RGBColor(120, 113, 108),
];

/// A line of one panel: its label, colour and `(from_s, to_s, value)` steps.
type Steps = (String, RGBColor, Vec<(f64, f64, f64)>);
/// A line as its readout reads it: its label and steps.
type Labelled = (String, Vec<(f64, f64, f64)>);

/// The card: the chart and the table of its slices, or why there are none.
#[component]
pub fn OverTimeCard(m: Arc<ReceiptModel>) -> impl IntoView {
    let over = m.audit.over_time.clone();
    let engine = over
        .as_ref()
        .filter(|o| o.on_run_clock)
        .map(|o| engine_rates(&m.metrics, o.start_s, o.end_s))
        .unwrap_or_default();
    let probes = Probes::default();
    let under = probes.clone();
    let side = match &over {
        Some(o) => view! { <SliceTable o=o.clone() engine_lines=engine.len() /> }.into_any(),
        None => view! {
            <p class="hint" id="over-time-none">
                {format!(
                    "No time slices: they need per-request records ({}).",
                    m.latency.source,
                )}
            </p>
        }
        .into_any(),
    };
    view! {
        <FigureCard
            slug="over-time"
            id="receipt-over-time"
            class="card chart receipt-figure"
            title="Throughput and latency over time"
            alt="Requests per second, output tokens per second and TTFT and end-to-end latency percentiles in equal time slices of the run; the slices are in the table beside it."
            width="960"
            height="640"
            draw=move |canvas| paint(canvas, over.as_ref(), &engine, &probes)
            readout=Rc::new(move |x, y| under.read(x, y))
        >
            {side}
        </FigureCard>
    }
}

/// Every slice as a row, each number exactly as the audit's JSON holds it.
#[component]
fn SliceTable(o: OverTime, engine_lines: usize) -> impl IntoView {
    let rows = o
        .slices
        .iter()
        .enumerate()
        .map(|(k, s)| {
            // One cell type for every column: a single instantiation, not a twelve-tuple.
            let cells = [
                Some(s.start_s),
                Some(s.end_s),
                Some(s.started as f64),
                Some(s.completed as f64),
                s.started_per_s,
                s.completed_per_s,
                Some(s.output_tokens),
                s.output_tokens_per_s,
                s.ttft_p50_ms,
                s.ttft_p99_ms,
                s.e2e_p50_ms,
                s.e2e_p99_ms,
            ]
            .into_iter()
            .map(td)
            .collect_view();
            view! { <tr data-slice=k.to_string()>{cells}</tr> }
        })
        .collect_view();
    let engine_note = if o.on_run_clock {
        if engine_lines > 0 {
            "The engine's own generation_tokens_total, as a rate between consecutive scrapes, is the second line of the tokens/s panel."
        } else {
            "No engine scrape with generation_tokens_total falls in the run: only the client's tokens are drawn."
        }
    } else {
        "The engine's counter is not drawn: these send times are on a clock of their own, not the scrapes'."
    };
    view! {
        <p class="hint" id="over-time-method">
            {format!(
                "{} slices of {} completed requests ({}); x: {}. A request counts where it was sent (its TTFT and E2E too) and completes where it ended; its output tokens are spread over first token → end.",
                o.slices.len(),
                int(o.requests),
                o.source,
                o.axis,
            )}
            {(o.unplaced > 0)
                .then(|| format!(" {} requests with a non-finite time are in no slice.", int(o.unplaced)))}
            {(o.without_tokens > 0)
                .then(|| format!(" {} requests carry no token count.", int(o.without_tokens)))}
            " "
            {engine_note}
        </p>
        <div class="scroll tall">
            <table id="over-time-table">
                {thead(
                    &[
                        Col::Num("from, s"),
                        Col::Num("to, s"),
                        Col::Num("started"),
                        Col::Num("completed"),
                        Col::Num("started/s"),
                        Col::Num("completed/s"),
                        Col::Num("output tokens"),
                        Col::Num("tokens/s"),
                        Col::Num("TTFT p50, ms"),
                        Col::Num("TTFT p99, ms"),
                        Col::Num("E2E p50, ms"),
                        Col::Num("E2E p99, ms"),
                    ],
                )}
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// The rate of `generation_tokens_total` between consecutive readable scrapes of each engine
/// URL, as `(from_s, to_s, tokens/s)` steps clipped to `[start_s, end_s]` (one list per URL
/// with any). An interval of no time, or where the counter went down, is left out.
pub fn engine_rates(series: &MetricsSeries, start_s: f64, end_s: f64) -> Vec<Vec<(f64, f64, f64)>> {
    (0..series.urls.len())
        .filter(|&u| series.exporters.get(u).is_none_or(|e| e.is_engine()))
        .map(|u| {
            let points: Vec<(f64, f64)> = series
                .points
                .iter()
                .filter(|p| p.url as usize == u)
                .filter_map(|p| Some((p.t_s?, p.generation_tokens?)))
                .collect();
            points
                .windows(2)
                .filter_map(|w| {
                    let [(t0, g0), (t1, g1)] = w else {
                        return None;
                    };
                    let rate = (g1 - g0) / (t1 - t0);
                    let (from, to) = (t0.max(start_s), t1.min(end_s));
                    (t1 > t0 && g1 >= g0 && rate.is_finite() && to > from)
                        .then_some((from, to, rate))
                })
                .collect::<Vec<_>>()
        })
        .filter(|steps| !steps.is_empty())
        .collect()
}

/// A slice's value as a step over the slice.
fn steps(o: &OverTime, pick: fn(&Slice) -> Option<f64>) -> Vec<(f64, f64, f64)> {
    o.slices
        .iter()
        .filter_map(|s| pick(s).map(|v| (s.start_s, s.end_s, v)))
        .collect()
}

/// A range plotters can draw: widened when empty or a single point.
fn span(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi > lo {
        (lo, hi)
    } else {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
        (lo - pad, hi + pad)
    }
}

/// Draws the three panels and records a probe for each.
fn paint(
    canvas: HtmlCanvasElement,
    over: Option<&OverTime>,
    engine: &[Vec<(f64, f64, f64)>],
    probes: &Probes,
) -> Result<(), String> {
    let root = area(canvas)?;
    probes.set(Vec::new());
    let Some(o) = over else {
        root.draw(&Text::new(
            "no per-request records: no time slices",
            (16, 24),
            text(FONT),
        ))
        .map_err(draw_error)?;
        return root.present().map_err(draw_error);
    };
    let x = span(o.start_s, o.end_s);
    let panels = root.split_evenly((3, 1));
    let [requests, tokens, latency] = panels.as_slice() else {
        return Err("could not split the canvas".to_owned());
    };
    let mut found = Vec::with_capacity(3);
    found.push(panel(
        requests,
        "requests per second",
        x,
        false,
        vec![
            ("started".to_owned(), FIRST, steps(o, |s| s.started_per_s)),
            (
                "completed".to_owned(),
                SECOND,
                steps(o, |s| s.completed_per_s),
            ),
        ],
    )?);
    let mut token_lines = vec![(
        "client: output tokens".to_owned(),
        FIRST,
        steps(o, |s| s.output_tokens_per_s),
    )];
    let several = engine.len() > 1;
    for (k, line) in engine.iter().enumerate() {
        token_lines.push((
            if several {
                format!(
                    "engine's count (generation_tokens_total) · replica {}",
                    k + 1
                )
            } else {
                "engine's count (generation_tokens_total)".to_owned()
            },
            ENGINE[k % ENGINE.len()],
            line.clone(),
        ));
    }
    found.push(panel(
        tokens,
        "output tokens per second",
        x,
        false,
        token_lines,
    )?);
    found.push(panel(
        latency,
        "latency per slice, ms (log scale)",
        x,
        true,
        vec![
            ("TTFT p50".to_owned(), FIRST, steps(o, |s| s.ttft_p50_ms)),
            ("TTFT p99".to_owned(), FOURTH, steps(o, |s| s.ttft_p99_ms)),
            ("E2E p50".to_owned(), THIRD, steps(o, |s| s.e2e_p50_ms)),
            ("E2E p99".to_owned(), SECOND, steps(o, |s| s.e2e_p99_ms)),
        ],
    )?);
    probes.set(found);
    root.present().map_err(draw_error)
}

/// One panel over the run's time axis: each line as steps over its slices with a dot in each
/// slice's middle (a zero-length slice is a dot). On a log panel the y axis is log10 of the
/// values, labelled with the values, and values ≤ 0 are not drawn. The panel's probe reads
/// every line's value (not its logarithm) in the slice under the pointer.
fn panel(
    area: &Area,
    title: &str,
    (x0, x1): (f64, f64),
    log: bool,
    lines: Vec<Steps>,
) -> Result<Probe, String> {
    let unit = if log { " ms" } else { "" };
    let readable_lines: Vec<Labelled> = lines
        .iter()
        .map(|(label, _, pts)| (label.clone(), pts.clone()))
        .collect();
    let y = |v: f64| if log { v.log10() } else { v };
    let lines: Vec<Steps> = lines
        .into_iter()
        .map(|(label, color, pts)| {
            let pts = pts
                .into_iter()
                .filter(|&(_, _, v)| !log || v > 0.0)
                .map(|(a, b, v)| (a, b, y(v)))
                .filter(|&(_, _, v)| v.is_finite())
                .collect();
            (label, color, pts)
        })
        .collect();
    let values = lines.iter().flat_map(|(_, _, pts)| pts.iter().map(|p| p.2));
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let (y0, y1) = if log {
        let (lo, hi) = span(lo, hi);
        (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
    } else {
        (
            0.0,
            if hi.is_finite() && hi > 0.0 {
                hi * 1.1
            } else {
                1.0
            },
        )
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, text(CAPTION))
        .margin(6)
        .x_label_area_size(30)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(draw_error)?;
    let mut mesh = chart.configure_mesh();
    inked(&mut mesh, FONT)
        .x_desc("seconds")
        .x_labels(8)
        .y_labels(5)
        .x_label_formatter(&|v| readable(*v))
        .y_label_formatter(&|v| readable(if log { 10f64.powf(*v) } else { *v }))
        .draw()
        .map_err(draw_error)?;
    let empty = lines.iter().all(|(_, _, pts)| pts.is_empty());
    for (label, color, pts) in lines {
        let color = hue(color);
        let path: Vec<(f64, f64)> = pts.iter().flat_map(|&(a, b, v)| [(a, v), (b, v)]).collect();
        chart
            .draw_series(LineSeries::new(path, color.stroke_width(2)))
            .map_err(draw_error)?
            .label(label)
            .legend(legend_line(color, 18, 3));
        chart
            .draw_series(
                pts.iter()
                    .map(|&(a, b, v)| Circle::new((a / 2.0 + b / 2.0, v), 2, color.filled())),
            )
            .map_err(draw_error)?;
    }
    if empty {
        area.draw(&Text::new(
            "nothing to draw in this run",
            (90, 40),
            text(FONT),
        ))
        .map_err(draw_error)?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight, FONT)?;
    Ok(Probe {
        frame: frame_of(&chart),
        log: false,
        along_y: false,
        read: Box::new(move |t| in_slice(&readable_lines, t, unit)),
    })
}

/// Each line's value in the step holding `t`: `from–to s: label value · …`, the span the
/// first line found there; `None` when no line has a step there.
fn in_slice(lines: &[Labelled], t: f64, unit: &str) -> Option<String> {
    let mut span = None;
    let values: Vec<String> = lines
        .iter()
        .filter_map(|(label, pts)| {
            let &(a, b, v) = pts.iter().find(|&&(a, b, _)| a <= t && t <= b)?;
            span.get_or_insert((a, b));
            Some(format!("{label} {}{unit}", readable(v)))
        })
        .collect();
    span.map(|(a, b)| format!("{}–{} s: {}", readable(a), readable(b), values.join(" · ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    /// A scrape of `url` at `t_s` reading `generated` (every other field absent).
    fn point(url: u32, t_s: f64, generated: f64) -> serde_json::Value {
        serde_json::json!({
            "scrape": 0, "url": url, "phase": "during", "t_s": t_s,
            "generation_tokens": generated,
        })
    }

    #[test]
    fn engine_rate_is_the_counter_s_change_over_time_clipped_to_the_run() {
        let series: MetricsSeries = serde_json::from_value(serde_json::json!({
            "urls": ["a"], "points": [
                point(0, 0.0, 100.0),
                point(0, 2.0, 300.0),
                // A restart: the counter went down; left out.
                point(0, 3.0, 10.0),
                point(0, 5.0, 50.0),
            ], "unread": [], "unread_count": 0, "truncated": false,
        }))
        .unwrap();
        assert_eq!(
            engine_rates(&series, 1.0, 4.0),
            vec![vec![(1.0, 2.0, 100.0), (3.0, 4.0, 20.0)]]
        );
        assert!(engine_rates(&series, 10.0, 20.0).is_empty());
    }

    #[test]
    fn the_readout_names_the_slice_under_the_pointer_and_each_lines_value_in_it() {
        let lines = vec![
            (
                "TTFT p50".to_owned(),
                vec![(0.0, 2.0, 12.5), (2.0, 4.0, 40.0)],
            ),
            ("E2E p99".to_owned(), vec![(2.0, 4.0, 1234.5)]),
        ];
        assert_eq!(
            in_slice(&lines, 3.0, " ms").as_deref(),
            Some("2–4 s: TTFT p50 40 ms · E2E p99 1,234 ms")
        );
        assert_eq!(
            in_slice(&lines, 1.0, " ms").as_deref(),
            Some("0–2 s: TTFT p50 12.5 ms")
        );
        assert_eq!(in_slice(&lines, 9.0, ""), None);
    }
}
