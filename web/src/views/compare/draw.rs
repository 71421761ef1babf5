//! The compare view's chart: each metric's relative change as a horizontal bar, coloured by
//! how the change reads ([`super::model::Tone`]); the table beside it holds the same numbers.

use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use super::model::{Bar, Tone};
use crate::widgets::number::{percent_change, readable};
use crate::widgets::plot::{Font, area, bar_axes, draw_error, from_top, hue, ink, row_labels, say};

const BETTER: RGBColor = RGBColor(6, 118, 71);
const WORSE: RGBColor = RGBColor(180, 35, 24);
const NEUTRAL: RGBColor = RGBColor(87, 96, 106);
const CHART_FONT: Font = ("sans-serif", 14);
/// Pixels kept on the left for the metric names.
const NAMES_PX: u32 = 250;

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
