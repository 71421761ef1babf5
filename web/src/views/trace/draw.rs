//! Drawing the trace view's charts on `<canvas>` elements with plotters.
//!
//! The charts are pictures of [`super::model`] values and nothing else: every number they
//! show is also in the table printed beside them, which is what screen readers and tests read.
//! Drawing can fail (no 2D context, a canvas detached mid-draw); failures come back as text
//! for the page to show, never as a panic.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use loadproof_core::trace::ArrivalGaps;

use super::model::{TokenCdf, WindowCounts, gap_bin_labels, grid_words};
use crate::widgets::number::{js, readable};
use crate::widgets::plot::{
    Area, Backend, Font, area, draw_error, frame_of, hue, inked, legend, legend_line, say, text,
};
use crate::widgets::probe::{Frame, Probe, Probes};

const BAR: RGBColor = RGBColor(37, 99, 235);
/// Same-timestamp arrivals: not a gap the recorder measured, so not the gaps' colour.
const SAME: RGBColor = RGBColor(100, 116, 139);
const INPUT: RGBColor = RGBColor(37, 99, 235);
const OUTPUT: RGBColor = RGBColor(217, 119, 6);
const AXIS_FONT: Font = ("sans-serif", 14);

/// The margins and label areas every chart shares.
fn frame<'a, 'b>(root: &'a Area) -> ChartBuilder<'a, 'b, Backend> {
    let mut builder = ChartBuilder::on(root);
    builder
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64);
    builder
}

/// Draws the axes as every chart here does: described, ticks written by [`tick`], and the
/// vertical grid lines only when `x_mesh`.
fn axes<X, Y>(
    chart: &mut ChartContext<'_, Backend, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
    x_mesh: bool,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut mesh = chart.configure_mesh();
    if !x_mesh {
        mesh.disable_x_mesh();
    }
    inked(&mut mesh, AXIS_FONT)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(draw_error)
}

/// Requests per window over time, one bar per (possibly merged) window.
///
/// The readout names the bar under the pointer as the "Every bar" table does.
pub fn draw_counts(
    canvas: HtmlCanvasElement,
    series: &WindowCounts,
    probes: &Probes,
) -> Result<(), String> {
    let root = area(canvas)?;
    let bar_s = series.bar_s;
    let x_max = (series.counts.len() as f64 * bar_s).max(bar_s);
    let y_max = (series.peak().max(1) as f64 * 1.08).ceil();
    let mut chart = frame(&root)
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)
        .map_err(draw_error)?;
    axes(
        &mut chart,
        "seconds since the first request",
        &format!("requests per {} s", js(bar_s)),
        false,
    )?;
    chart
        .draw_series(series.counts.iter().enumerate().map(|(idx, &count)| {
            let x0 = idx as f64 * bar_s;
            Rectangle::new([(x0, 0.0), (x0 + bar_s, count as f64)], hue(BAR).filled())
        }))
        .map_err(draw_error)?;
    let counts = series.counts.clone();
    probes.set(vec![Probe {
        frame: frame_of(&chart),
        log: false,
        along_y: false,
        read: Box::new(move |t| {
            let bar = (t / bar_s).floor();
            let count = counts.get(usize::try_from(bar as i64).ok()?)?;
            Some(format!(
                "{} s: {} requests",
                readable(bar * bar_s),
                readable(*count as f64)
            ))
        }),
    }]);
    root.present().map_err(draw_error)
}

/// The inter-arrival chart: one bar of same-timestamp arrivals, then one per bin of positive
/// gaps on the recording grid, each named under it (every other name when crowded).
///
/// The readout names the bar under the pointer as the gaps table does.
pub fn draw_gaps(
    canvas: HtmlCanvasElement,
    gaps: &ArrivalGaps,
    probes: &Probes,
) -> Result<(), String> {
    let root = area(canvas)?;
    probes.set(Vec::new());
    if gaps.gaps == 0 {
        return say(
            &root,
            "one request: no gaps between arrivals",
            (20, 40),
            AXIS_FONT,
        );
    }
    let labels: Vec<String> = std::iter::once("same".to_owned())
        .chain(
            gap_bin_labels(gaps)
                .into_iter()
                .map(|l| l.trim_end_matches(" s").to_owned()),
        )
        .collect();
    let counts: Vec<u64> = std::iter::once(gaps.zero_gaps)
        .chain(gaps.bins.iter().map(|b| b.gaps))
        .collect();
    let slots = counts.len();
    let peak = counts.iter().copied().max().unwrap_or(0).max(1);
    let mut chart = frame(&root)
        .build_cartesian_2d(
            -0.5f64..slots as f64 - 0.5,
            0f64..(peak as f64 * 1.15).ceil(),
        )
        .map_err(draw_error)?;
    let x_desc = match gaps.grid_s {
        Some(g) => format!(
            "gap to the previous request, s (on the {} grid)",
            grid_words(g)
        ),
        None => "gap to the previous request, s (no recording grid)".to_owned(),
    };
    let name = |v: &f64| {
        let slot = v.round();
        if (v - slot).abs() > 1e-9 || slot < 0.0 {
            return String::new();
        }
        labels.get(slot as usize).cloned().unwrap_or_default()
    };
    let mut mesh = chart.configure_mesh();
    inked(&mut mesh, AXIS_FONT)
        .disable_x_mesh()
        .x_labels(slots.min(12))
        .x_desc(x_desc)
        .y_desc("gaps")
        .x_label_formatter(&name)
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(draw_error)?;
    chart
        .draw_series(counts.iter().enumerate().map(|(slot, &count)| {
            let x = slot as f64;
            let color = hue(if slot == 0 { SAME } else { BAR });
            Rectangle::new([(x - 0.4, 0.0), (x + 0.4, count as f64)], color.filled())
        }))
        .map_err(draw_error)?;
    let named: Vec<(String, u64)> = std::iter::once("same timestamp".to_owned())
        .chain(gap_bin_labels(gaps))
        .zip(counts.iter().copied())
        .collect();
    probes.set(vec![Probe {
        frame: frame_of(&chart),
        log: false,
        along_y: false,
        read: Box::new(move |x| {
            let (label, count) = named.get(usize::try_from(x.round() as i64).ok()?)?;
            Some(format!("{label}: {} gaps", readable(*count as f64)))
        }),
    }]);
    // The same-timestamp bar says what it is, whatever its height.
    let (x, y) = chart.backend_coord(&(-0.4, gaps.zero_gaps as f64));
    root.draw(&Text::new(
        format!("same timestamp: {}", readable(gaps.zero_gaps as f64)),
        (x, (y - 20).max(4)),
        text(AXIS_FONT),
    ))
    .map_err(draw_error)?;
    root.present().map_err(draw_error)
}

/// Input and output token CDFs on a log token axis. The readout gives each curve's point
/// nearest the pointer's token count.
pub fn draw_cdfs(
    canvas: HtmlCanvasElement,
    input: &TokenCdf,
    output: &TokenCdf,
    probes: &Probes,
) -> Result<(), String> {
    let root = area(canvas)?;
    let max_tokens = input
        .curve
        .iter()
        .chain(&output.curve)
        .map(|&(tokens, _)| tokens)
        .fold(1.0f64, f64::max);
    let mut chart = frame(&root)
        .build_cartesian_2d((1f64..max_tokens.max(2.0)).log_scale(), 0f64..1f64)
        .map_err(draw_error)?;
    axes(
        &mut chart,
        "tokens (log scale)",
        "share of requests at or below",
        true,
    )?;
    for (cdf, color, label) in [(input, INPUT, "input"), (output, OUTPUT, "output")] {
        let color = hue(color);
        chart
            .draw_series(LineSeries::new(
                cdf.curve.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(draw_error)?
            .label(label)
            .legend(legend_line(color, 20, 2));
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight, AXIS_FONT)?;
    // The axis is log10 of tokens from 1 (plotters' log scale): the frame says so.
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let curves = [
        ("input", input.curve.clone()),
        ("output", output.curve.clone()),
    ];
    probes.set(vec![Probe {
        frame: Frame {
            left: xs.start,
            right: xs.end,
            top: ys.start,
            bottom: ys.end,
            from: 0.0,
            to: max_tokens.max(2.0).log10(),
            y_top: 1.0,
            y_bottom: 0.0,
        },
        log: true,
        along_y: false,
        read: Box::new(move |v| {
            let at = |curve: &[(f64, f64)]| {
                curve
                    .iter()
                    .min_by(|a, b| {
                        let d = |p: &(f64, f64)| (p.0.max(1.0).log10() - v.log10()).abs();
                        d(a).total_cmp(&d(b))
                    })
                    .map(|(tokens, share)| {
                        format!("{} tokens: {}", readable(*tokens), readable(*share))
                    })
            };
            let shown: Vec<String> = curves
                .iter()
                .filter_map(|(name, curve)| Some(format!("{name} {}", at(curve)?)))
                .collect();
            (!shown.is_empty()).then(|| format!("{} at or below", shown.join(" · ")))
        }),
    }]);
    root.present().map_err(draw_error)
}

/// An axis tick to six significant digits, without float noise or trailing zeros.
fn tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return js(v);
    }
    let decimals = (5.0 - v.abs().log10().floor()).clamp(0.0, 12.0) as usize;
    let fixed = format!("{v:.decimals$}");
    if fixed.contains('.') {
        fixed.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        fixed
    }
}
