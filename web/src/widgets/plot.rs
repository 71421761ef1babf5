//! What every view's drawing code shares: a canvas as a plotters drawing area, a failure as
//! text, a message where a chart would be, and the pieces of a horizontal bar chart (rows
//! counted from the top, their names at the left).
//!
//! The charts themselves live beside the view that draws them (`views/*/draw.rs`); only the
//! plumbing they all wrote again is here.

use std::fmt::Display;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

/// A canvas as plotters draws on it.
pub type Area = DrawingArea<CanvasBackend, Shift>;

/// A chart on two linear `f64` axes.
pub type Chart<'a> = ChartContext<'a, CanvasBackend, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A font plotters accepts: family and size in pixels.
pub type Font = (&'static str, u32);

/// The canvas as a drawing area, painted white.
pub fn area(canvas: HtmlCanvasElement) -> Result<Area, String> {
    let backend = CanvasBackend::with_canvas_object(canvas)
        .ok_or_else(|| "this browser gives the canvas no 2D context".to_owned())?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    Ok(root)
}

/// A drawing error as the page says it.
pub fn draw_error(err: impl Display) -> String {
    format!("could not draw the chart: {err}")
}

/// Writes `message` at `at` where a chart would be, and shows it.
pub fn say(root: &Area, message: &str, at: (i32, i32), font: Font) -> Result<(), String> {
    root.draw(&Text::new(message.to_owned(), at, font))
        .map_err(draw_error)?;
    root.present().map_err(draw_error)
}

/// A legend's sample of a line: `length` pixels of `color`, `width` wide.
pub fn legend_line(
    color: RGBColor,
    length: i32,
    width: u32,
) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + length, y)], color.stroke_width(width))
}

/// Draws the chart's legend at `at`: on a lightened background, framed, in `font`.
pub fn legend<CT: CoordTranslate>(
    chart: &mut ChartContext<'_, CanvasBackend, CT>,
    at: SeriesLabelPosition,
    font: Font,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(font)
        .draw()
        .map_err(draw_error)
}

/// Text anchored at its left end and centred vertically (labels beside bars).
pub fn left_middle(font: Font) -> TextStyle<'static> {
    TextStyle::from(font.into_font()).pos(Pos::new(HPos::Left, VPos::Center))
}

/// Where row `k` of `n` starts on a y axis `0..n` read from the top (row 0 is the highest):
/// the row spans `[from_top(n, k), from_top(n, k) + 1)`.
pub fn from_top(n: usize, k: usize) -> f64 {
    n as f64 - 1.0 - k as f64
}

/// The axes of a horizontal bar chart: no y ticks or grid (each row is named by
/// [`row_labels`]), the x axis described by `x_desc` with ticks written by `x_tick` (at most
/// `x_ticks` of them when given, else plotters' default).
pub fn bar_axes(
    chart: &mut Chart<'_>,
    x_desc: &str,
    x_ticks: Option<usize>,
    x_tick: &dyn Fn(&f64) -> String,
    font: Font,
) -> Result<(), String> {
    let mut mesh = chart.configure_mesh();
    mesh.disable_y_mesh()
        .y_labels(0)
        .y_label_formatter(&|_| String::new());
    if let Some(n) = x_ticks {
        mesh.x_labels(n);
    }
    mesh.x_desc(x_desc)
        .label_style(font)
        .x_label_formatter(x_tick)
        .draw()
        .map_err(draw_error)
}

/// Writes each label at the canvas's left edge, level with the middle of its row (rows as
/// [`from_top`] places them).
pub fn row_labels(
    root: &Area,
    chart: &Chart<'_>,
    labels: impl ExactSizeIterator<Item = String>,
    font: Font,
) -> Result<(), String> {
    let n = labels.len();
    let style = left_middle(font);
    for (k, label) in labels.enumerate() {
        let (_, y) = chart.backend_coord(&(0.0, from_top(n, k) + 0.5));
        root.draw(&Text::new(label, (12, y), style.clone()))
            .map_err(draw_error)?;
    }
    Ok(())
}
