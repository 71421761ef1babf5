//! Drawing the receipt view's charts on `<canvas>` elements with plotters.
//!
//! Each chart is a picture of a [`super::model`] value and nothing else; the view
//! prints the same numbers in a table beside it. Drawing can fail (no 2D context, a canvas
//! detached mid-draw): failures come back as text for the page to show, never as a panic.
//! A log-scaled axis is drawn as a linear axis over log10 of the values, labelled with the
//! values themselves. Latency is drawn on a log axis unless the reviewer asks for linear (the
//! tail of a distribution is where a reviewer looks, and a linear axis squeezes it into one
//! bar); a metric with a sample of 0 ms is drawn linear and says so. Degenerate data is drawn
//! as what it is: samples of one value as a visible bar with the value in the caption, a
//! metric without samples as a panel saying so, and a series with nothing to draw gets no
//! legend entry. Each chart records where it drew its panels ([`Probes`]) for its readout.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use web_sys::HtmlCanvasElement;

use super::model::{METRICS, MetricPoint, MetricSamples, MetricsSeries, Timeline, TimelineRow};
use super::rates::token_rates;
use crate::widgets::number::readable;
use crate::widgets::plot::{
    self, Area, Chart, Font, area, draw_error, frame_of, hue, inked, legend, legend_line, text,
};
use crate::widgets::probe::{Probe, Probes};
use crate::widgets::readout::int;

const FONT: Font = ("sans-serif", 13);
const CAPTION: Font = ("sans-serif", 14);
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

/// The share of a latency panel's drawn x width a bar takes at least, so a bin of one value
/// (every sample equal) is a visible bar rather than nothing.
const MIN_BAR: f64 = 0.04;

/// True when a metric's x axis is drawn as log10 of ms: asked for, and every sample positive.
pub fn log_axis(m: &MetricSamples, wanted: bool) -> bool {
    wanted && m.min_ms > 0.0
}

/// A bar over `[lo, hi]` on the drawn axis, widened about its middle to at least
/// [`MIN_BAR`] of `axis_width`.
fn bar_extent(lo: f64, hi: f64, axis_width: f64) -> (f64, f64) {
    let least = axis_width * MIN_BAR;
    if hi - lo >= least {
        (lo, hi)
    } else {
        let mid = (lo + hi) / 2.0;
        (mid - least / 2.0, mid + least / 2.0)
    }
}

/// `n samples`, or `1 sample`.
fn samples(n: u64) -> String {
    if n == 1 {
        "1 sample".to_owned()
    } else {
        format!("{} samples", int(n))
    }
}

/// What a histogram's caption and table say of a metric's samples: their count and span, or
/// that they are all one value.
pub fn described(m: &MetricSamples) -> String {
    let name = m.metric.to_uppercase();
    if m.min_ms == m.max_ms {
        let all = if m.count == 1 { "" } else { "all " };
        format!(
            "{name}: {all}{} at {} ms",
            samples(m.count),
            readable(m.min_ms)
        )
    } else {
        format!(
            "{name}: {}, {}–{} ms",
            samples(m.count),
            readable(m.min_ms),
            readable(m.max_ms)
        )
    }
}

/// The scale a panel's caption names.
fn scale_note(m: &MetricSamples, log: bool, wanted: bool) -> &'static str {
    match (log, wanted && !log && m.min_ms <= 0.0) {
        (true, _) => " · log scale",
        (false, true) => " · linear (a sample is 0 ms)",
        (false, false) => "",
    }
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
        .caption(caption, text(CAPTION))
        .margin(8)
        .x_label_area_size(38)
        .y_label_area_size(52)
        .build_cartesian_2d(x0..x1, 0f64..y_max)
        .map_err(draw_error)?;
    let mut mesh = chart.configure_mesh();
    if !x_mesh {
        mesh.disable_x_mesh();
    }
    inked(&mut mesh, FONT)
        .x_desc(if log { "ms (log scale)" } else { "ms" })
        .x_labels(5)
        .y_labels(5)
        .x_label_formatter(&|v| tick(*v, log))
        .y_label_formatter(&|v| readable(*v))
        .draw()
        .map_err(draw_error)?;
    Ok(chart)
}

/// The four latency panels in [`METRICS`] order, each with its metric's samples when it has
/// any; a metric without samples gets a panel that says so.
fn panels<'a>(
    root: &Area,
    metrics: &'a [MetricSamples],
) -> Vec<(Area, &'static str, Option<&'a MetricSamples>)> {
    root.split_evenly((2, 2))
        .into_iter()
        .zip(METRICS)
        .map(|(panel, name)| (panel, name, metrics.iter().find(|m| m.metric == name)))
        .collect()
}

/// Writes that a metric has no samples in the middle of its panel.
fn no_samples(panel: &Area, name: &str) -> Result<(), String> {
    let (w, h) = panel.dim_in_pixel();
    let style = text(CAPTION).pos(Pos::new(HPos::Center, VPos::Center));
    panel
        .draw(&Text::new(
            format!("{}: no samples", name.to_uppercase()),
            (w as i32 / 2, h as i32 / 2),
            style,
        ))
        .map_err(draw_error)
}

/// One histogram per latency metric, in a 2×2 grid, on a log ms axis when `log` is asked for
/// (and the samples allow it); records a probe per panel.
pub fn draw_histograms(
    canvas: HtmlCanvasElement,
    metrics: &[MetricSamples],
    wanted: bool,
    probes: &Probes,
) -> Result<(), String> {
    let root = area(canvas)?;
    probes.set(Vec::new());
    if metrics.is_empty() {
        return say(&root, "no per-request latency samples in this receipt");
    }
    let mut found = Vec::new();
    for (panel, name, m) in panels(&root, metrics) {
        let Some(m) = m else {
            no_samples(&panel, name)?;
            continue;
        };
        let log = log_axis(m, wanted);
        let (Some(first), Some(last)) = (m.bins.first(), m.bins.last()) else {
            no_samples(&panel, name)?;
            continue;
        };
        let (x0, x1) = span(axis(first.lo_ms, log), axis(last.hi_ms, log));
        let peak = m.bins.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64;
        let caption = format!("{}{}", described(m), scale_note(m, log, wanted));
        let mut chart = latency_panel(&panel, caption, (x0, x1), (peak * 1.08).ceil(), log, false)?;
        let value = move |x: f64| if log { 10f64.powf(x) } else { x };
        let bars: Vec<((f64, f64), String)> = m
            .bins
            .iter()
            .map(|b| {
                let drawn = bar_extent(axis(b.lo_ms, log), axis(b.hi_ms, log), x1 - x0);
                let what = if b.lo_ms == b.hi_ms {
                    format!("{} ms", readable(b.lo_ms))
                } else {
                    format!("{}–{} ms", readable(b.lo_ms), readable(b.hi_ms))
                };
                (
                    drawn,
                    format!("{} {what}: {}", name.to_uppercase(), samples(b.count)),
                )
            })
            .collect();
        let color = hue(BAR);
        chart
            .draw_series(m.bins.iter().zip(&bars).map(|(b, ((a, z), _))| {
                Rectangle::new([(*a, 0.0), (*z, b.count as f64)], color.filled())
            }))
            .map_err(draw_error)?;
        let spans: Vec<((f64, f64), String)> = bars
            .into_iter()
            .map(|((a, z), t)| ((value(a), value(z)), t))
            .collect();
        found.push(Probe {
            frame: frame_of(&chart),
            log,
            along_y: false,
            read: Box::new(move |v| {
                spans
                    .iter()
                    .find(|((a, z), _)| (*a..=*z).contains(&v))
                    .map(|(_, t)| t.clone())
            }),
        });
    }
    probes.set(found);
    root.present().map_err(draw_error)
}

/// One empirical CDF per latency metric, in a 2×2 grid, on a log ms axis when `log` is asked
/// for (and the samples allow it); records a probe per panel.
pub fn draw_cdfs(
    canvas: HtmlCanvasElement,
    metrics: &[MetricSamples],
    wanted: bool,
    probes: &Probes,
) -> Result<(), String> {
    let root = area(canvas)?;
    probes.set(Vec::new());
    if metrics.is_empty() {
        return say(&root, "no per-request latency samples in this receipt");
    }
    let mut found = Vec::new();
    for (panel, name, m) in panels(&root, metrics) {
        let Some(m) = m.filter(|m| !m.cdf.is_empty()) else {
            no_samples(&panel, name)?;
            continue;
        };
        let log = log_axis(m, wanted);
        let (x0, x1) = span(axis(m.min_ms, log), axis(m.max_ms, log));
        let caption = format!("{} CDF{}", name.to_uppercase(), scale_note(m, log, wanted));
        let mut chart = latency_panel(&panel, caption, (x0, x1), 1.0, log, true)?;
        chart
            .draw_series(LineSeries::new(
                steps(&m.cdf, log, (x0, x1)),
                hue(BAR).stroke_width(2),
            ))
            .map_err(draw_error)?;
        let curve = m.cdf.clone();
        let metric = name.to_uppercase();
        found.push(Probe {
            frame: frame_of(&chart),
            log,
            along_y: false,
            read: Box::new(move |v| {
                nearest(&curve, |p| (axis(p.0, log) - axis(v, log)).abs()).map(|(ms, share)| {
                    format!(
                        "{metric} {} ms: {} at or below",
                        readable(*ms),
                        readable(*share)
                    )
                })
            }),
        });
    }
    probes.set(found);
    root.present().map_err(draw_error)
}

/// A CDF as a step curve across the whole axis: 0 from the left edge, up at each point, flat
/// after it, 1 to the right edge.
fn steps(cdf: &[(f64, f64)], log: bool, (x0, x1): (f64, f64)) -> Vec<(f64, f64)> {
    let mut steps = Vec::with_capacity(cdf.len() * 2 + 2);
    steps.push((x0, 0.0));
    let mut below = 0.0;
    for &(ms, share) in cdf {
        let x = axis(ms, log);
        steps.push((x, below));
        steps.push((x, share));
        below = share;
    }
    steps.push((x1, below));
    steps
}

/// The item of `items` with the least `distance` (the first of equals).
fn nearest<T>(items: &[T], distance: impl Fn(&T) -> f64) -> Option<&T> {
    items
        .iter()
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
}

/// Every request as a horizontal line at its index: schedule → send (lag), send → first
/// token, first token → end; failed requests in red with a cross at their end (or send).
pub fn draw_timeline(
    canvas: HtmlCanvasElement,
    timeline: &Timeline,
    probes: &Probes,
) -> Result<(), String> {
    let context = plot::context_of(&canvas)?;
    let root = area(canvas)?;
    probes.set(Vec::new());
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
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, -0.5f64..(last + 0.5))
        .map_err(draw_error)?;
    let mut mesh = chart.configure_mesh();
    inked(&mut mesh, FONT)
        .disable_y_mesh()
        .x_desc(if scheduled {
            "seconds since the run's start"
        } else {
            "seconds since the first send"
        })
        .y_desc("request (index in the plan)")
        .x_label_formatter(&|v| readable(*v))
        // Only whole, non-negative ticks name a request (the axis starts half a row below 0).
        .y_label_formatter(&|v| {
            if *v >= 0.0 && (v - v.round()).abs() < 1e-9 {
                readable(v.round())
            } else {
                String::new()
            }
        })
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
    let mut labelled = false;
    for (leg, color, label) in legs {
        let color = hue(color);
        let segments: Vec<((f64, f64), (f64, f64))> = timeline
            .rows
            .iter()
            .filter(|r| r.ok())
            .filter_map(|r| {
                let (from, to) = leg(r);
                let y = r.index as f64;
                Some(((from?, y), (to?, y)))
            })
            .collect();
        // A leg no request has (vLLM's arrays keep no schedule) gets no legend entry.
        if segments.is_empty() {
            continue;
        }
        // Ten thousand requests are thirty thousand segments: one canvas path per leg, not
        // one plotters element each (45 ms of one frame on a ten-minute receipt).
        plot::stroke_segments(
            &context,
            segments
                .iter()
                .map(|&(a, b)| (chart.backend_coord(&a), chart.backend_coord(&b))),
            color,
            f64::from(width),
        );
        chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
            .map_err(draw_error)?
            .label(label)
            .legend(legend_line(color, 18, 3));
        labelled = true;
    }
    let failed_color = hue(FAILED);
    let failed: Vec<&TimelineRow> = timeline.rows.iter().filter(|r| !r.ok()).collect();
    if !failed.is_empty() {
        chart
            .draw_series(failed.iter().filter_map(|r| {
                segment(r.sent_s.or(r.scheduled_s), r.end_s, r.index as f64)
                    .map(|p| PathElement::new(p, failed_color.stroke_width(width)))
            }))
            .map_err(draw_error)?;
        chart
            .draw_series(failed.iter().filter_map(|r| {
                r.end_s
                    .or(r.sent_s)
                    .or(r.scheduled_s)
                    .map(|t| Cross::new((t, r.index as f64), 5, failed_color.stroke_width(2)))
            }))
            .map_err(draw_error)?
            .label("failed")
            .legend(move |(x, y)| Cross::new((x + 9, y), 5, failed_color.stroke_width(2)));
        labelled = true;
    }
    if labelled {
        legend(&mut chart, SeriesLabelPosition::UpperLeft, FONT)?;
    }
    // The request on the row under the pointer, its instants as the table beside it writes
    // them.
    let rows: Vec<TimelineRow> = timeline.rows.clone();
    probes.set(vec![Probe {
        frame: frame_of(&chart),
        log: false,
        along_y: true,
        read: Box::new(move |y| request_at(&rows, y)),
    }]);
    root.present().map_err(draw_error)
}

/// The readout of the request drawn at row `y`: its index, its instants in ms, and how it
/// ended.
fn request_at(rows: &[TimelineRow], y: f64) -> Option<String> {
    let index = y.round();
    if !(0.0..=u64::MAX as f64).contains(&index) {
        return None;
    }
    let r = rows.iter().find(|r| r.index == index as u64)?;
    let ms = |s: Option<f64>| s.map_or_else(|| "—".to_owned(), |s| readable(s * 1e3));
    Some(format!(
        "request {}: scheduled {} · sent {} · first token {} · end {} ms · {}",
        r.index,
        ms(r.scheduled_s),
        ms(r.sent_s),
        ms(r.first_token_s),
        ms(r.end_s),
        r.disposition
    ))
}

/// A colour per replica or exporter when several are drawn.
const PALETTE: [RGBColor; 6] = [BAR, SECOND, THIRD, DECODE, FAILED, RGBColor(14, 116, 144)];

/// One panel: its title and its lines.
type Panel = (String, Vec<(String, RGBColor, Vec<(f64, f64)>)>);

/// The `/metrics` series of the engine URLs: requests and KV usage (gauges, as scraped) and
/// tokens per second between scrapes (counters, as [`super::rates::counter_rates`] derives them), one line
/// per replica when a fleet was scraped; records a probe per panel.
pub fn draw_series(
    canvas: HtmlCanvasElement,
    series: &MetricsSeries,
    probes: &Probes,
) -> Result<(), String> {
    let context = plot::context_of(&canvas)?;
    let root = area(canvas)?;
    probes.set(Vec::new());
    let engines: Vec<usize> = (0..series.urls.len())
        .filter(|&u| series.exporters.get(u).is_none_or(|e| e.is_engine()))
        .collect();
    let timed = |u: usize| {
        series
            .points
            .iter()
            .any(|p| p.url as usize == u && p.t_s.is_some())
    };
    if !engines.iter().any(|&u| timed(u)) {
        return say(&root, "no readable /metrics scrape with a time");
    }
    let (generated, prompt, resets) = token_rates(series);
    let fleet = engines.len() > 1;
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
    for (k, &u) in engines.iter().enumerate() {
        let of_url = || {
            series
                .points
                .iter()
                .enumerate()
                .filter(move |(_, p)| p.url as usize == u)
        };
        let line = |pick: &dyn Fn(&MetricPoint) -> Option<f64>| -> Vec<(f64, f64)> {
            of_url()
                .filter_map(|(_, p)| Some((p.t_s?, pick(p)?)))
                .collect()
        };
        let rate_line = |rates: &[Option<super::rates::Rate>]| -> Vec<(f64, f64)> {
            of_url()
                .filter_map(|(i, _)| rates.get(i).copied().flatten())
                .map(|r| (r.t_s, r.per_s))
                .collect()
        };
        let color = |own: RGBColor| {
            if fleet {
                PALETTE[k % PALETTE.len()]
            } else {
                own
            }
        };
        requests.push((name("running", k), color(BAR), line(&|p| p.running)));
        if !fleet || of_url().any(|(_, p)| p.waiting.is_some_and(|w| w > 0.0)) {
            requests.push((name("waiting", k), color(SECOND), line(&|p| p.waiting)));
        }
        kv.push((name("KV usage", k), color(THIRD), line(&|p| p.kv_usage)));
        tokens.push((name("generated", k), color(BAR), rate_line(&generated)));
        if !fleet {
            tokens.push((name("prompt", k), color(SECOND), rate_line(&prompt)));
        }
    }
    let reset_note = match resets {
        0 => String::new(),
        1 => " · 1 counter reset (counted from 0)".to_owned(),
        n => format!(" · {n} counter resets (counted from 0)"),
    };
    let tokens_title = format!(
        "{} per second between scrapes{reset_note}",
        if fleet {
            "generated tokens, per replica,"
        } else {
            "tokens"
        }
    );
    let times = engines.iter().flat_map(|&u| {
        series
            .points
            .iter()
            .filter(move |p| p.url as usize == u)
            .filter_map(|p| p.t_s)
    });
    let found = draw_panels(
        &root,
        &context,
        times,
        vec![
            ("requests (gauges)".to_owned(), requests),
            ("KV-cache usage (gauge)".to_owned(), kv),
            (tokens_title, tokens),
        ],
    )?;
    probes.set(found);
    root.present().map_err(draw_error)
}

/// The GPU exporters' telemetry over the run: utilisation, memory, power and SM clock, one line
/// per exporter.
pub fn draw_gpu(
    canvas: HtmlCanvasElement,
    series: &MetricsSeries,
    probes: &Probes,
) -> Result<(), String> {
    let context = plot::context_of(&canvas)?;
    let root = area(canvas)?;
    probes.set(Vec::new());
    let exporters: Vec<usize> = (0..series.urls.len())
        .filter(|&u| series.exporters.get(u).is_some_and(|e| !e.is_engine()))
        .collect();
    let several = exporters.len() > 1;
    let mut panels: Vec<Panel> = [
        "GPU utilisation, % (mean over GPUs)",
        "framebuffer used, MiB (all GPUs)",
        "power, W (all GPUs)",
        "SM clock, MHz (mean over GPUs)",
    ]
    .map(|title| (title.to_owned(), Vec::new()))
    .into();
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
    probes.set(draw_panels(&root, &context, times.into_iter(), panels)?);
    root.present().map_err(draw_error)
}

/// Panels stacked over one time axis (seconds since the run's start); a probe per panel
/// reads each line's scrape nearest the pointer's time.
fn draw_panels(
    root: &Area,
    context: &web_sys::CanvasRenderingContext2d,
    times: impl Iterator<Item = f64>,
    specs: Vec<Panel>,
) -> Result<Vec<Probe>, String> {
    let (lo, hi) = times.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), t| {
        (a.min(t), b.max(t))
    });
    let (x0, x1) = span(lo, hi);
    let panels = root.split_evenly((specs.len(), 1));
    let last_panel = specs.len().saturating_sub(1);
    let mut found = Vec::new();
    for (i, (panel, (title, lines))) in panels.iter().zip(specs).enumerate() {
        let bottom = i == last_panel;
        let peak = lines
            .iter()
            .flat_map(|(_, _, pts)| pts.iter().map(|p| p.1))
            .fold(0f64, f64::max);
        let y_max = if peak > 0.0 { peak * 1.1 } else { 1.0 };
        let mut chart = ChartBuilder::on(panel)
            .caption(title, text(CAPTION))
            .margin(6)
            .x_label_area_size(if bottom { 40 } else { 24 })
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0f64..y_max)
            .map_err(draw_error)?;
        let mut mesh = chart.configure_mesh();
        inked(&mut mesh, FONT)
            .x_desc(if bottom {
                "seconds since the run's start"
            } else {
                ""
            })
            .x_labels(8)
            .y_labels(4)
            .x_label_formatter(&|v| readable(*v))
            .y_label_formatter(&|v| readable(*v))
            .draw()
            .map_err(draw_error)?;
        // A line with no point (not exported) is not drawn, so it gets no legend entry.
        let drawn: Vec<(String, Vec<(f64, f64)>)> = lines
            .into_iter()
            .filter(|(_, _, pts)| !pts.is_empty())
            .map(|(label, color, pts)| {
                let color = hue(color);
                let series = chart
                    .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                    .map_err(draw_error)?;
                series
                    .label(label.clone())
                    .legend(legend_line(color, 18, 3));
                // A dot per scrape, all in one canvas path (thousands of plotters circles,
                // each filled on its own, held a ten-minute receipt's frame ~30 ms).
                plot::fill_dots(
                    context,
                    pts.iter().map(|p| chart.backend_coord(p)),
                    color,
                    2.0,
                );
                Ok((label, pts))
            })
            .collect::<Result<_, String>>()?;
        if drawn.is_empty() {
            panel
                .draw(&Text::new(
                    "not exported by this server",
                    (90, 40),
                    text(FONT),
                ))
                .map_err(draw_error)?;
        } else {
            legend(&mut chart, SeriesLabelPosition::UpperRight, FONT)?;
        }
        found.push(Probe {
            frame: frame_of(&chart),
            log: false,
            along_y: false,
            read: Box::new(move |t| at_time(&drawn, t)),
        });
    }
    Ok(found)
}

/// Each line's point nearest `t`: `label value`, after the first one's time.
fn at_time(lines: &[(String, Vec<(f64, f64)>)], t: f64) -> Option<String> {
    let mut at = None;
    let values: Vec<String> = lines
        .iter()
        .filter_map(|(label, pts)| {
            let (pt, v) = nearest(pts, |p| (p.0 - t).abs())?;
            at.get_or_insert(*pt);
            Some(format!("{label} {}", readable(*v)))
        })
        .collect();
    at.map(|pt| format!("{} s: {}", readable(pt), values.join(" · ")))
}

#[cfg(test)]
mod tests {
    use super::super::model::Bin;
    use super::*;

    fn samples_of(metric: &str, values: &[f64]) -> MetricSamples {
        let (min, max) = (values[0], values[values.len() - 1]);
        MetricSamples {
            metric: metric.to_owned(),
            count: values.len() as u64,
            min_ms: min,
            max_ms: max,
            log_bins: false,
            bins: vec![Bin {
                lo_ms: min,
                hi_ms: max,
                count: values.len() as u64,
            }],
            cdf: vec![(max, 1.0)],
        }
    }

    #[test]
    fn a_bin_of_one_value_is_drawn_as_a_visible_bar_about_it() {
        let (x0, x1) = span(12.0, 12.0);
        assert!(x1 > x0);
        let (a, z) = bar_extent(12.0, 12.0, x1 - x0);
        assert!(a < 12.0 && z > 12.0);
        assert!((z - a - (x1 - x0) * MIN_BAR).abs() < 1e-12);
        // A wide bin keeps its edges.
        assert_eq!(bar_extent(1.0, 5.0, 10.0), (1.0, 5.0));
    }

    #[test]
    fn span_widens_a_point_and_a_zero_and_survives_non_finite_ends() {
        assert_eq!(span(0.0, 0.0), (-1.0, 1.0));
        let (a, z) = span(1.0, 1.0);
        assert!(a < 1.0 && z > 1.0);
        assert_eq!(span(f64::NAN, 3.0), (0.0, 1.0));
        let (a, z) = span(0.0, 10.0);
        assert!(a < 0.0 && z > 10.0);
    }

    #[test]
    fn constant_samples_say_they_are_one_value() {
        assert_eq!(
            described(&samples_of("ttft", &[5.0])),
            "TTFT: 1 sample at 5 ms"
        );
        assert_eq!(
            described(&samples_of("e2el", &[7.5, 7.5, 7.5])),
            "E2EL: all 3 samples at 7.5 ms"
        );
        assert_eq!(
            described(&samples_of("itl", &[1.0, 1234.6])),
            "ITL: 2 samples, 1–1,235 ms"
        );
    }

    #[test]
    fn latency_is_log_unless_linear_is_asked_or_a_sample_is_zero() {
        let positive = samples_of("ttft", &[1.0, 2.0]);
        assert!(log_axis(&positive, true));
        assert!(!log_axis(&positive, false));
        let zero = samples_of("itl", &[0.0, 2.0]);
        assert!(!log_axis(&zero, true));
        assert_eq!(
            scale_note(&zero, false, true),
            " · linear (a sample is 0 ms)"
        );
    }

    #[test]
    fn a_cdf_steps_from_zero_at_the_left_edge_to_one_at_the_right() {
        let s = steps(&[(1.0, 0.5), (2.0, 1.0)], false, (0.0, 3.0));
        assert_eq!(
            s,
            [
                (0.0, 0.0),
                (1.0, 0.0),
                (1.0, 0.5),
                (2.0, 0.5),
                (2.0, 1.0),
                (3.0, 1.0)
            ]
        );
        // One value: a vertical step, still drawn.
        assert_eq!(steps(&[(4.0, 1.0)], false, (3.0, 5.0)).len(), 4);
    }

    #[test]
    fn the_series_readout_names_each_line_at_the_nearest_scrape() {
        let lines = vec![
            ("running".to_owned(), vec![(0.0, 1.0), (1.0, 3.0)]),
            ("waiting".to_owned(), vec![(0.0, 0.0), (1.0, 2.0)]),
        ];
        assert_eq!(
            at_time(&lines, 0.8).as_deref(),
            Some("1 s: running 3 · waiting 2")
        );
        assert_eq!(at_time(&[], 0.8), None);
    }
}
