//! The playbook view's chart: one row's distance to the query on each regime axis, as
//! horizontal bars, the limiting axis highlighted and each calibrated tolerance ticked; the
//! table beside it holds the same numbers. The bar under the pointer reads back as the table's
//! row does.

use plotters::prelude::*;
use web_sys::HtmlCanvasElement;

use super::model::AxisLine;
use crate::widgets::number::{fixed, readable};
use crate::widgets::plot::{
    Font, area, bar_axes, draw_error, frame_of, from_top, hue, ink, left_middle, row_labels,
};
use crate::widgets::probe::{Probe, Probes};

const BAR: RGBColor = RGBColor(37, 99, 235);
const LIMITING: RGBColor = RGBColor(217, 119, 6);
const CHART_FONT: Font = ("sans-serif", 14);

/// Horizontal bars, one per axis (the first at the top), the limiting one highlighted, a
/// tick at each calibrated tolerance, each bar labelled with its distance; records a probe
/// that reads the bar under the pointer.
pub fn draw_distances(
    canvas: HtmlCanvasElement,
    lines: &[AxisLine],
    probes: &Probes,
) -> Result<(), String> {
    let root = area(canvas)?;
    probes.set(Vec::new());
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
    let bars = lines.to_vec();
    probes.set(vec![Probe {
        frame: frame_of(&chart),
        log: false,
        along_y: true,
        read: Box::new(move |y| bar_at(&bars, y)),
    }]);
    root.present().map_err(draw_error)
}

/// The axis drawn at `y` (bar `k` spans `from_top(n, k)` to one above it): its name, the row's
/// and the query's values, the distance and where it stands against its tolerance.
fn bar_at(lines: &[AxisLine], y: f64) -> Option<String> {
    let n = lines.len();
    let from_bottom = y.floor();
    if !(0.0..n as f64).contains(&from_bottom) {
        return None;
    }
    let l = lines.get(n - 1 - from_bottom as usize)?;
    let tolerance = l
        .tolerance
        .as_ref()
        .map_or_else(|| "none".to_owned(), |(t, _)| fixed(*t, 3));
    Some(format!(
        "{}: row {} · query {} · distance {}{} · tolerance {tolerance}: {}",
        l.axis.name(),
        readable(l.row),
        readable(l.query),
        fixed(l.distance, 3),
        if l.limiting { " (limiting)" } else { "" },
        l.status(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadproof_core::playbook::RegimeAxis;

    fn line(axis: RegimeAxis, distance: f64, limiting: bool) -> AxisLine {
        AxisLine {
            axis,
            row: 2.0,
            query: 1.0,
            distance,
            tolerance: None,
            limiting,
        }
    }

    #[test]
    fn the_readout_reads_the_bar_under_the_pointer_first_at_the_top() {
        let lines = [
            line(RegimeAxis::Rate, 1.0, true),
            line(RegimeAxis::Burstiness, 0.25, false),
        ];
        // Two bars: the first spans y 1..2 (the top), the second 0..1.
        let top = bar_at(&lines, 1.5).unwrap();
        assert!(
            top.starts_with("rate_rps: row 2 · query 1 · distance 1.000 (limiting)"),
            "{top}"
        );
        let bottom = bar_at(&lines, 0.5).unwrap();
        assert!(bottom.starts_with("burstiness:"), "{bottom}");
        assert!(bottom.ends_with("tolerance none: uncalibrated"), "{bottom}");
        assert_eq!(bar_at(&lines, 2.0), None);
        assert_eq!(bar_at(&lines, -0.1), None);
        assert_eq!(bar_at(&lines, f64::NAN), None);
    }
}
