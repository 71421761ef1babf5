//! The compare view's charts: each metric's relative change as a horizontal bar, coloured by
//! how the change reads ([`super::model::Tone`]), and the two arms' latency CDFs overlaid
//! (a log x axis, drawn as a linear axis over log10 of the values and labelled with the values,
//! when they span over 100×). The tables beside them hold the same numbers.

use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use super::model::{Bar, Overlay, Tone};
use crate::widgets::number::{percent_change, readable};
use crate::widgets::plot::{
    Font, area, bar_axes, draw_error, frame_of, from_top, hue, ink, inked, legend, legend_line,
    row_labels, say,
};
use crate::widgets::probe::{Probe, Probes};

const BETTER: RGBColor = RGBColor(6, 118, 71);
const WORSE: RGBColor = RGBColor(180, 35, 24);
const NEUTRAL: RGBColor = RGBColor(87, 96, 106);
const CHART_FONT: Font = ("sans-serif", 14);
/// The baseline's curve: blue, solid and thin.
const BASELINE: RGBColor = RGBColor(37, 99, 235);
/// The treatment's curve: orange and thicker, so the two read apart without colour too.
const TREATMENT: RGBColor = RGBColor(217, 119, 6);
/// Pixels kept on the left for the metric names.
const NAMES_PX: u32 = 230;

/// Horizontal bars of relative change in percent (the first metric at the top), coloured by
/// whether the direction reads as better for that metric.
pub fn draw_changes(canvas: HtmlCanvasElement, bars: &[Bar]) -> Result<(), String> {
    let root = area(canvas)?;
    if bars.is_empty() {
        return say(
            &root,
            "no metric has a relative change (a side unread, or a baseline of 0)",
            (12, 30),
            CHART_FONT,
        );
    }
    let n = bars.len();
    let top = bars
        .iter()
        .map(|b| (b.relative * 100.0).abs())
        .fold(0.0f64, f64::max);
    let x_max = if top > 0.0 { top * 1.25 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(NAMES_PX)
        .build_cartesian_2d(-x_max..x_max, 0f64..n as f64)
        .map_err(draw_error)?;
    bar_axes(
        &mut chart,
        "relative change, % (treatment vs baseline)",
        Some(5),
        &|v| format!("{}%", readable(*v)),
        CHART_FONT,
    )?;
    chart
        .draw_series(bars.iter().enumerate().map(|(k, b)| {
            let color = match b.tone {
                Tone::Better => BETTER,
                Tone::Worse => WORSE,
                Tone::Same | Tone::Neutral => NEUTRAL,
            };
            let color = hue(color);
            let y = from_top(n, k);
            Rectangle::new(
                [(0.0, y + 0.2), (b.relative * 100.0, y + 0.8)],
                color.filled(),
            )
        }))
        .map_err(draw_error)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 0.0), (0.0, n as f64)],
            ink().stroke_width(1),
        )))
        .map_err(draw_error)?;
    let labels = bars
        .iter()
        .map(|b| format!("{}  {}", b.metric, percent_change(b.relative)));
    row_labels(&root, &chart, labels, CHART_FONT)?;
    root.present().map_err(draw_error)
}

/// x on the drawn axis: log10 of the value when `log`.
fn axis(ms: f64, log: bool) -> f64 {
    if log {
        ms.max(f64::MIN_POSITIVE).log10()
    } else {
        ms
    }
}

/// An empirical CDF as a step curve on the drawn axis: flat until the next point, then up.
fn steps(cdf: &[(f64, f64)], log: bool) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(cdf.len() * 2);
    let mut below = 0.0;
    for &(ms, share) in cdf {
        let x = axis(ms, log);
        out.push((x, below));
        out.push((x, share));
        below = share;
    }
    out
}

/// Both arms' CDFs of one latency metric on one chart, with a legend naming each arm. The
/// readout gives each arm's share at or below the pointer's latency (the CDF's step there).
pub fn draw_overlay(canvas: HtmlCanvasElement, o: &Overlay, probes: &Probes) -> Result<(), String> {
    let root = area(canvas)?;
    probes.set(Vec::new());
    let all = o.baseline.iter().chain(&o.treatment).map(|p| p.0);
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !(lo.is_finite() && hi.is_finite()) {
        return say(
            &root,
            "no per-request samples on either side (an aggregate-only receipt)",
            (12, 30),
            CHART_FONT,
        );
    }
    let (x0, x1) = (axis(lo, o.log), axis(hi, o.log));
    // One point (every sample equal) still gets a visible axis around it.
    let pad = if x1 > x0 {
        (x1 - x0) * 0.03
    } else {
        x0.abs().max(1.0) * 0.05
    };
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(52)
        .build_cartesian_2d((x0 - pad)..(x1 + pad), 0f64..1.02)
        .map_err(draw_error)?;
    let log = o.log;
    let mut mesh = chart.configure_mesh();
    inked(&mut mesh, CHART_FONT)
        .x_labels(6)
        .y_labels(6)
        .x_desc(if log { "ms (log scale)" } else { "ms" })
        .y_desc("share of requests at or below")
        .x_label_formatter(&|v| readable(if log { 10f64.powf(*v) } else { *v }))
        .y_label_formatter(&|v| format!("{}%", readable(*v * 100.0)))
        .draw()
        .map_err(draw_error)?;
    for (name, cdf, color, width) in [
        ("baseline", &o.baseline, BASELINE, 2),
        ("treatment", &o.treatment, TREATMENT, 3),
    ] {
        let color = hue(color);
        let label = if cdf.is_empty() {
            format!("{name} (no samples)")
        } else {
            name.to_owned()
        };
        chart
            .draw_series(LineSeries::new(steps(cdf, log), color.stroke_width(width)))
            .map_err(draw_error)?
            .label(label)
            .legend(legend_line(color, 24, width));
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight, CHART_FONT)?;
    let arms = [
        ("baseline", o.baseline.clone()),
        ("treatment", o.treatment.clone()),
    ];
    probes.set(vec![Probe {
        frame: frame_of(&chart),
        log,
        along_y: false,
        read: Box::new(move |ms| {
            let shares: Vec<String> = arms
                .iter()
                .filter(|(_, cdf)| !cdf.is_empty())
                .map(|(name, cdf)| format!("{name} {}", readable(share_at(cdf, ms))))
                .collect();
            (!shares.is_empty())
                .then(|| format!("{} ms: {} at or below", readable(ms), shares.join(" · ")))
        }),
    }]);
    root.present().map_err(draw_error)
}

/// The share of a CDF's samples at or below `ms`: the last point at or before it (0 before
/// the first).
fn share_at(cdf: &[(f64, f64)], ms: f64) -> f64 {
    cdf.iter()
        .take_while(|(at, _)| *at <= ms)
        .last()
        .map_or(0.0, |(_, share)| *share)
}
