//! Drawing the receipt view's charts on `<canvas>` elements with plotters.
//!
//! Each chart is a picture of a [`super::model`] value and nothing else; the view
//! prints the same numbers in a table beside it. Drawing can fail (no 2D context, a canvas
//! detached mid-draw): failures come back as text for the page to show, never as a panic.
//! A log-scaled axis is drawn as a linear axis over log10 of the values, labelled with the
//! values themselves.

use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use super::model::{MetricPoint, MetricSamples, MetricsSeries, Timeline, TimelineRow};
use crate::widgets::number::readable;
use crate::widgets::plot::{self, Area, Chart, Font, area, draw_error, legend, legend_line};

const FONT: Font = ("sans-serif", 13);
const CAPTION: Font = ("sans-serif", 15);
const BAR: RGBColor = RGBColor(37, 99, 235);
const LAG: RGBColor = RGBColor(217, 119, 6);
const WAIT: RGBColor = RGBColor(37, 99, 235);
const DECODE: RGBColor = RGBColor(22, 163, 74);
const FAILED: RGBColor = RGBColor(200, 30, 30);
const SECOND: RGBColor = RGBColor(217, 119, 6);
const THIRD: RGBColor = RGBColor(124, 58, 237);

/// The instants a leg of a request's line runs between.
type Leg = fn(&TimelineRow) -> (Option<f64>, Option<f64>);

/// A message where a chart would be.
fn say(root: &Area, message: &str) -> Result<(), String> {
    plot::say(root, message, (16, 24), FONT)
}

/// A range that plotters can draw: widened when empty or a single point.
fn span(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi > lo {
        let pad = (hi - lo) * 0.02;
        (lo - pad, hi + pad)
    } else {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
        (lo - pad, hi + pad)
    }
}

/// x on the drawn axis: log10 when `log`.
fn axis(x: f64, log: bool) -> f64 {
    if log {
        x.max(f64::MIN_POSITIVE).log10()
    } else {
        x
    }
}

/// A tick label for a value on the drawn axis.
fn tick(v: f64, log: bool) -> String {
    readable(if log { 10f64.powf(v) } else { v })
}

/// One latency metric's panel of a 2×2 grid: `caption` above, x in ms over `x` (log10 of ms
/// when `log`), y from 0 to `y_max`; the vertical grid lines only when `x_mesh`.
fn latency_panel(
    panel: &Area,
    caption: String,
    (x0, x1): (f64, f64),
    y_max: f64,
    log: bool,
    x_mesh: bool,
) -> Result<Chart<'_>, String> {
    let mut chart = ChartBuilder::on(panel)
        .caption(caption, CAPTION)
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(48)
        .build_cartesian_2d(x0..x1, 0f64..y_max)
        .map_err(draw_error)?;
    let mut mesh = chart.configure_mesh();
    if !x_mesh {
        mesh.disable_x_mesh();
    }
    mesh.x_desc("ms")
        .x_labels(5)
        .y_labels(5)
        .label_style(FONT)
        .x_label_formatter(&|v| tick(*v, log))
        .y_label_formatter(&|v| readable(*v))
        .draw()
        .map_err(draw_error)?;
    Ok(chart)
}

/// One histogram per latency metric, in a 2×2 grid.
pub fn draw_histograms(canvas: HtmlCanvasElement, metrics: &[MetricSamples]) -> Result<(), String> {
    let root = area(canvas)?;
    if metrics.is_empty() {
        return say(&root, "no per-request latency samples in this receipt");
    }
    for (panel, m) in root.split_evenly((2, 2)).iter().zip(metrics) {
        let log = m.log_bins;
        let (Some(first), Some(last)) = (m.bins.first(), m.bins.last()) else {
            continue;
        };
        let (x0, x1) = span(axis(first.lo_ms, log), axis(last.hi_ms, log));
        let peak = m.bins.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64;
        let caption = format!(
            "{} ({} samples{})",
            m.metric.to_uppercase(),
            m.count,
            if log { ", log scale" } else { "" }
        );
        let mut chart = latency_panel(panel, caption, (x0, x1), (peak * 1.08).ceil(), log, false)?;
        chart
            .draw_series(m.bins.iter().map(|b| {
                Rectangle::new(
                    [
                        (axis(b.lo_ms, log), 0.0),
                        (axis(b.hi_ms, log), b.count as f64),
                    ],
                    BAR.filled(),
                )
            }))
            .map_err(draw_error)?;
    }
    root.present().map_err(draw_error)
}

/// One empirical CDF per latency metric, in a 2×2 grid.
pub fn draw_cdfs(canvas: HtmlCanvasElement, metrics: &[MetricSamples]) -> Result<(), String> {
    let root = area(canvas)?;
    if metrics.is_empty() {
        return say(&root, "no per-request latency samples in this receipt");
    }
    for (panel, m) in root.split_evenly((2, 2)).iter().zip(metrics) {
        let log = m.log_bins;
        let (x0, x1) = span(axis(m.min_ms, log), axis(m.max_ms, log));
        let caption = format!(
            "{} CDF{}",
            m.metric.to_uppercase(),
            if log { " (log scale)" } else { "" }
        );
        let mut chart = latency_panel(panel, caption, (x0, x1), 1.0, log, true)?;
        // A step curve: flat until the next sample, then up.
        let mut steps = Vec::with_capacity(m.cdf.len() * 2 + 1);
        let mut below = 0.0;
        for &(ms, share) in &m.cdf {
            let x = axis(ms, log);
            steps.push((x, below));
            steps.push((x, share));
            below = share;
        }
        chart
            .draw_series(LineSeries::new(steps, BAR.stroke_width(2)))
            .map_err(draw_error)?;
    }
    root.present().map_err(draw_error)
}

/// Every request as a horizontal line at its index: schedule → send (lag), send → first
/// token, first token → end; failed requests in red with a cross at their end (or send).
pub fn draw_timeline(canvas: HtmlCanvasElement, timeline: &Timeline) -> Result<(), String> {
    let root = area(canvas)?;
    if timeline.rows.is_empty() {
        return say(&root, &timeline.source);
    }
    let times = timeline.rows.iter().flat_map(|r| {
        [r.scheduled_s, r.sent_s, r.first_token_s, r.end_s]
            .into_iter()
            .flatten()
    });
    let (lo, hi) = times.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), t| {
        (a.min(t), b.max(t))
    });
    let (x0, x1) = span(lo.min(0.0), hi);
    // vLLM's arrays keep no schedule: their times count from the first send.
    let scheduled = timeline.rows.iter().any(|r| r.scheduled_s.is_some());
    let last = timeline.rows.iter().map(|r| r.index).max().unwrap_or(0) as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1, -0.5f64..(last + 0.5))
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(if scheduled {
            "seconds since the run's start"
        } else {
            "seconds since the first send"
        })
        .y_desc("request (index in the plan)")
        .label_style(FONT)
        .x_label_formatter(&|v| readable(*v))
        .y_label_formatter(&|v| readable(v.round()))
        .draw()
        .map_err(draw_error)?;
    let width = if timeline.rows.len() > 400 { 1 } else { 2 };
    let segment =
        |a: Option<f64>, b: Option<f64>, y: f64| a.zip(b).map(|(a, b)| vec![(a, y), (b, y)]);
    // A completed request's three legs, each from one instant to the next.
    let legs: [(Leg, RGBColor, &str); 3] = [
        (|r| (r.scheduled_s, r.sent_s), LAG, "schedule → send (lag)"),
        (|r| (r.sent_s, r.first_token_s), WAIT, "send → first token"),
        (|r| (r.first_token_s, r.end_s), DECODE, "first token → end"),
    ];
    for (leg, color, label) in legs {
        chart
            .draw_series(timeline.rows.iter().filter(|r| r.ok()).filter_map(|r| {
                let (from, to) = leg(r);
                segment(from, to, r.index as f64)
                    .map(|p| PathElement::new(p, color.stroke_width(width)))
            }))
            .map_err(draw_error)?
            .label(label)
            .legend(legend_line(color, 18, 3));
    }
    let failed = || timeline.rows.iter().filter(|r| !r.ok());
    chart
        .draw_series(failed().filter_map(|r| {
            segment(r.sent_s.or(r.scheduled_s), r.end_s, r.index as f64)
                .map(|p| PathElement::new(p, FAILED.stroke_width(width)))
        }))
        .map_err(draw_error)?;
    chart
        .draw_series(failed().filter_map(|r| {
            r.end_s
                .or(r.sent_s)
                .or(r.scheduled_s)
                .map(|t| Cross::new((t, r.index as f64), 5, FAILED.stroke_width(2)))
        }))
        .map_err(draw_error)?
        .label("failed")
        .legend(|(x, y)| Cross::new((x + 9, y), 5, FAILED.stroke_width(2)));
    legend(&mut chart, SeriesLabelPosition::UpperLeft, FONT)?;
    root.present().map_err(draw_error)
}

/// A colour per replica or exporter when several are drawn.
const PALETTE: [RGBColor; 6] = [BAR, SECOND, THIRD, DECODE, FAILED, RGBColor(14, 116, 144)];

/// One panel: its title and its lines.
type Panel<'a> = (&'a str, Vec<(String, RGBColor, Vec<(f64, f64)>)>);

/// The `/metrics` series of the engine URLs: requests, KV usage and tokens over the run, one
/// line per replica when a fleet was scraped.
pub fn draw_series(canvas: HtmlCanvasElement, series: &MetricsSeries) -> Result<(), String> {
    let root = area(canvas)?;
    let engines: Vec<usize> = (0..series.urls.len())
        .filter(|&u| series.exporters.get(u).is_none_or(|e| e.is_engine()))
        .collect();
    let points = |u: usize| -> Vec<(f64, &MetricPoint)> {
        series
            .points
            .iter()
            .filter(|p| p.url as usize == u)
            .filter_map(|p| p.t_s.map(|t| (t, p)))
            .collect()
    };
    let by_url: Vec<(usize, Vec<(f64, &MetricPoint)>)> =
        engines.iter().map(|&u| (u, points(u))).collect();
    if by_url.iter().all(|(_, p)| p.is_empty()) {
        return say(&root, "no readable /metrics scrape with a time");
    }
    let fleet = by_url.len() > 1;
    let name = |label: &str, k: usize| {
        if fleet {
            format!("{label} · replica {}", k + 1)
        } else {
            label.to_owned()
        }
    };
    let mut requests = Vec::new();
    let mut kv = Vec::new();
    let mut tokens = Vec::new();
    for (k, (_, pts)) in by_url.iter().enumerate() {
        let line = |pick: &dyn Fn(&MetricPoint) -> Option<f64>| -> Vec<(f64, f64)> {
            pts.iter()
                .filter_map(|(t, p)| pick(p).map(|v| (*t, v)))
                .collect()
        };
        let first_gen = pts.iter().find_map(|(_, p)| p.generation_tokens);
        let first_prompt = pts.iter().find_map(|(_, p)| p.prompt_tokens);
        let color = |own: RGBColor| {
            if fleet {
                PALETTE[k % PALETTE.len()]
            } else {
                own
            }
        };
        requests.push((name("running", k), color(BAR), line(&|p| p.running)));
        if !fleet || pts.iter().any(|(_, p)| p.waiting.is_some_and(|w| w > 0.0)) {
            requests.push((name("waiting", k), color(SECOND), line(&|p| p.waiting)));
        }
        kv.push((name("KV usage", k), color(THIRD), line(&|p| p.kv_usage)));
        tokens.push((
            name("generated", k),
            color(BAR),
            line(&|p| p.generation_tokens.map(|v| v - first_gen.unwrap_or(0.0))),
        ));
        if !fleet {
            tokens.push((
                name("prompt", k),
                color(SECOND),
                line(&|p| p.prompt_tokens.map(|v| v - first_prompt.unwrap_or(0.0))),
            ));
        }
    }
    let times = by_url.iter().flat_map(|(_, p)| p.iter().map(|(t, _)| *t));
    draw_panels(
        &root,
        times,
        vec![
            ("requests", requests),
            ("KV-cache usage", kv),
            (
                if fleet {
                    "generated tokens since the first scrape, per replica"
                } else {
                    "tokens since the first scrape"
                },
                tokens,
            ),
        ],
    )
}

/// The GPU exporters' telemetry over the run: utilisation, memory, power and SM clock, one line
/// per exporter.
pub fn draw_gpu(canvas: HtmlCanvasElement, series: &MetricsSeries) -> Result<(), String> {
    let root = area(canvas)?;
    let exporters: Vec<usize> = (0..series.urls.len())
        .filter(|&u| series.exporters.get(u).is_some_and(|e| !e.is_engine()))
        .collect();
    let several = exporters.len() > 1;
    let mut panels: Vec<Panel<'_>> = vec![
        ("GPU utilisation, % (mean over GPUs)", Vec::new()),
        ("framebuffer used, MiB (all GPUs)", Vec::new()),
        ("power, W (all GPUs)", Vec::new()),
        ("SM clock, MHz (mean over GPUs)", Vec::new()),
    ];
    let picks: [fn(&super::model::GpuPoint) -> Option<f64>; 4] = [
        |g| g.util_pct,
        |g| g.fb_used_mib,
        |g| g.power_w,
        |g| g.sm_clock_mhz,
    ];
    let mut times = Vec::new();
    for (k, &u) in exporters.iter().enumerate() {
        let pts: Vec<(f64, &super::model::GpuPoint)> = series
            .points
            .iter()
            .filter(|p| p.url as usize == u)
            .filter_map(|p| Some((p.t_s?, p.gpu.as_ref()?)))
            .collect();
        times.extend(pts.iter().map(|(t, _)| *t));
        for ((_, lines), pick) in panels.iter_mut().zip(picks) {
            lines.push((
                if several {
                    format!("exporter {}", k + 1)
                } else {
                    "DCGM".to_owned()
                },
                PALETTE[k % PALETTE.len()],
                pts.iter()
                    .filter_map(|(t, g)| pick(g).map(|v| (*t, v)))
                    .collect(),
            ));
        }
    }
    if times.is_empty() {
        return say(&root, "no readable DCGM scrape with a time");
    }
    draw_panels(&root, times.into_iter(), panels)
}

/// Panels stacked over one time axis (seconds since the run's start).
fn draw_panels(
    root: &Area,
    times: impl Iterator<Item = f64>,
    specs: Vec<Panel<'_>>,
) -> Result<(), String> {
    let (lo, hi) = times.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), t| {
        (a.min(t), b.max(t))
    });
    let (x0, x1) = span(lo, hi);
    let panels = root.split_evenly((specs.len(), 1));
    let last_panel = specs.len().saturating_sub(1);
    for (i, (panel, (title, lines))) in panels.iter().zip(specs).enumerate() {
        let bottom = i == last_panel;
        let peak = lines
            .iter()
            .flat_map(|(_, _, pts)| pts.iter().map(|p| p.1))
            .fold(0f64, f64::max);
        let y_max = if peak > 0.0 { peak * 1.1 } else { 1.0 };
        let mut chart = ChartBuilder::on(panel)
            .caption(title, CAPTION)
            .margin(6)
            .x_label_area_size(if bottom { 40 } else { 22 })
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0f64..y_max)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc(if bottom {
                "seconds since the run's start"
            } else {
                ""
            })
            .x_labels(8)
            .y_labels(4)
            .label_style(FONT)
            .x_label_formatter(&|v| readable(*v))
            .y_label_formatter(&|v| readable(*v))
            .draw()
            .map_err(draw_error)?;
        let empty = lines.iter().all(|(_, _, pts)| pts.is_empty());
        for (label, color, pts) in lines {
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                .map_err(draw_error)?
                .label(label)
                .legend(legend_line(color, 18, 3));
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 2, color.filled())))
                .map_err(draw_error)?;
        }
        if empty {
            panel
                .draw(&Text::new("not exported by this server", (90, 40), FONT))
                .map_err(draw_error)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight, FONT)?;
    }
    root.present().map_err(draw_error)
}
