//! The playbook view's chart: one row's distance to the query on each regime axis, as
//! horizontal bars, the limiting axis highlighted and each calibrated tolerance ticked; the
//! table beside it holds the same numbers.

use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use super::model::AxisLine;
use crate::widgets::number::{fixed, readable};
use crate::widgets::plot::{
    Font, area, bar_axes, draw_error, from_top, hue, ink, left_middle, row_labels,
};

const BAR: RGBColor = RGBColor(37, 99, 235);
const LIMITING: RGBColor = RGBColor(217, 119, 6);
const CHART_FONT: Font = ("sans-serif", 14);

/// Horizontal bars, one per axis (the first at the top), the limiting one highlighted, a
/// tick at each calibrated tolerance, each bar labelled with its distance.
pub fn draw_distances(canvas: HtmlCanvasElement, lines: &[AxisLine]) -> Result<(), String> {
    let root = area(canvas)?;
    let n = lines.len();
    let top = lines
        .iter()
        .map(|l| l.distance.max(l.tolerance.as_ref().map_or(0.0, |t| t.0)))
        .fold(0.0f64, f64::max);
    let x_max = if top > 0.0 { top * 1.2 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(104)
        .build_cartesian_2d(0f64..x_max, 0f64..(n as f64).max(1.0))
        .map_err(draw_error)?;
    bar_axes(
        &mut chart,
        "|log2| distance, row vs query",
        None,
        &|v| readable(*v),
        CHART_FONT,
    )?;
    chart
        .draw_series(lines.iter().enumerate().map(|(k, l)| {
            let color = hue(if l.limiting { LIMITING } else { BAR });
            let y = from_top(n, k);
            Rectangle::new([(0.0, y + 0.2), (l.distance, y + 0.8)], color.filled())
        }))
        .map_err(draw_error)?;
    chart
        .draw_series(lines.iter().enumerate().filter_map(|(k, l)| {
            l.tolerance.as_ref().map(|(t, _)| {
                let y = from_top(n, k);
                PathElement::new(vec![(*t, y + 0.05), (*t, y + 0.95)], ink().stroke_width(3))
            })
        }))
        .map_err(draw_error)?;
    let value_style = left_middle(CHART_FONT);
    chart
        .draw_series(lines.iter().enumerate().map(|(k, l)| {
            let label = if l.limiting {
                format!("{} (limiting)", fixed(l.distance, 3))
            } else {
                fixed(l.distance, 3)
            };
            Text::new(
                label,
                (l.distance, from_top(n, k) + 0.5),
                value_style.clone(),
            )
        }))
        .map_err(draw_error)?;
    let names = lines.iter().map(|l| l.axis.name().to_owned());
    row_labels(&root, &chart, names, CHART_FONT)?;
    root.present().map_err(draw_error)
}
