//! What every view's drawing code shares: a canvas as a plotters drawing area, sharp at the
//! screen's pixel density and in the page's colour scheme, a failure as text, a message where
//! a chart would be, and the pieces of a horizontal bar chart (rows counted from the top,
//! their names at the left).
//!
//! The canvas's backing store is its CSS size × `devicePixelRatio` with the context scaled
//! to match, while plotters is told the CSS size ([`Backend`]): so every coordinate and font
//! size in a `draw.rs` is in CSS pixels, text is the size its font says, and lines are
//! sharp at 2×. The charts themselves live beside the view that draws them
//! (`views/*/draw.rs`); only the plumbing they all wrote again is here.

use std::cell::Cell;
use std::fmt::Display;

use plotters::chart::MeshStyle;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::theme::{self, Scheme};

/// A canvas as plotters draws on it: CSS pixels over a backing store at the screen's density.
pub struct Backend {
    inner: CanvasBackend,
    css: (u32, u32),
}

/// A canvas as plotters draws on it.
pub type Area = DrawingArea<Backend, Shift>;

/// A chart on two linear `f64` axes.
pub type Chart<'a> = ChartContext<'a, Backend, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A font plotters accepts: family and size in CSS pixels.
pub type Font = (&'static str, u32);

thread_local! {
    /// The scheme of the drawing under way, set by [`area`] (drawing is synchronous).
    static SCHEME: Cell<Scheme> = const { Cell::new(Scheme::Light) };
}

/// The canvas as a drawing area at the size CSS lays it out (its `data-w`×`data-h` while it
/// is not laid out), backed at the screen's density and painted in the page's background.
pub fn area(canvas: HtmlCanvasElement) -> Result<Area, String> {
    let css = css_size(&canvas);
    let dpr = device_pixel_ratio();
    canvas.set_width(backing(css.0, dpr));
    canvas.set_height(backing(css.1, dpr));
    let context = context_of(&canvas)?;
    // Resizing the canvas reset the context; scale it so one unit is one CSS pixel.
    context
        .set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0)
        .map_err(|_| "the canvas refused its scale".to_owned())?;
    let inner = CanvasBackend::with_canvas_object(canvas)
        .ok_or_else(|| "this browser gives the canvas no 2D context".to_owned())?;
    SCHEME.with(|s| s.set(theme::page_scheme()));
    let root = Backend { inner, css }.into_drawing_area();
    root.fill(&paper()).map_err(draw_error)?;
    Ok(root)
}

/// The canvas's 2D context, for what is drawn faster on it directly than through plotters
/// ([`stroke_segments`]); get it before [`area`] takes the canvas.
pub fn context_of(canvas: &HtmlCanvasElement) -> Result<CanvasRenderingContext2d, String> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into().ok())
        .ok_or_else(|| "this browser gives the canvas no 2D context".to_owned())
}

/// Strokes every segment (backend coordinates: CSS pixels, as plotters maps a chart's values
/// with `backend_coord`) as one path in `color`: thousands of lines in one call, where
/// plotters would set the style and stroke each on its own. Drawn over what is there.
pub fn stroke_segments(
    context: &CanvasRenderingContext2d,
    segments: impl Iterator<Item = (BackendCoord, BackendCoord)>,
    color: RGBColor,
    width: f64,
) {
    let RGBColor(r, g, b) = color;
    context.begin_path();
    for ((x0, y0), (x1, y1)) in segments {
        context.move_to(f64::from(x0), f64::from(y0));
        context.line_to(f64::from(x1), f64::from(y1));
    }
    context.set_stroke_style_str(&format!("rgb({r},{g},{b})"));
    context.set_line_width(width);
    context.stroke();
}

/// Fills a dot of `radius` CSS pixels at every point (backend coordinates, as
/// [`stroke_segments`] takes them) as one path in `color`.
pub fn fill_dots(
    context: &CanvasRenderingContext2d,
    points: impl Iterator<Item = BackendCoord>,
    color: RGBColor,
    radius: f64,
) {
    let RGBColor(r, g, b) = color;
    context.begin_path();
    for (x, y) in points {
        let (x, y) = (f64::from(x), f64::from(y));
        context.move_to(x + radius, y);
        let _ = context.arc(x, y, radius, 0.0, std::f64::consts::TAU);
    }
    context.set_fill_style_str(&format!("rgb({r},{g},{b})"));
    context.fill();
}

/// Backing-store pixels for `css` CSS pixels at `dpr`.
fn backing(css: u32, dpr: f64) -> u32 {
    (f64::from(css) * dpr).round().max(1.0) as u32
}

/// The screen's pixels per CSS pixel (1 where the browser says nothing sensible).
fn device_pixel_ratio() -> f64 {
    web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .filter(|r| r.is_finite() && *r > 0.0)
        .unwrap_or(1.0)
}

/// The canvas's laid-out size in CSS pixels, or its nominal `data-w`×`data-h` when it has none
/// (not in the page yet, or hidden).
fn css_size(canvas: &HtmlCanvasElement) -> (u32, u32) {
    let nominal = |name: &str, or: u32| {
        canvas
            .get_attribute(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(or)
    };
    let (w, h) = (canvas.client_width(), canvas.client_height());
    if w > 0 && h > 0 {
        (w as u32, h as u32)
    } else {
        (nominal("data-w", 600), nominal("data-h", 300))
    }
}

/// The scheme of the drawing under way.
pub fn scheme() -> Scheme {
    SCHEME.with(Cell::get)
}

/// The chart's background.
pub fn paper() -> RGBColor {
    rgb(scheme().paper())
}

/// Text, axes and frames.
pub fn ink() -> RGBColor {
    rgb(scheme().ink())
}

/// A series colour, its lightness turned over in the dark scheme so it reads on dark paper.
pub fn hue(color: RGBColor) -> RGBColor {
    let RGBColor(r, g, b) = color;
    rgb(scheme().series((r, g, b)))
}

fn rgb((r, g, b): (u8, u8, u8)) -> RGBColor {
    RGBColor(r, g, b)
}

/// `font` in the ink colour.
pub fn text(font: Font) -> TextStyle<'static> {
    font.into_font().color(&ink())
}

/// Axes, grid and labels in the scheme's colours, labels in `font`.
pub fn inked<'m, 'a, 'b, X: Ranged, Y: Ranged>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, Backend>,
    font: Font,
) -> &'m mut MeshStyle<'a, 'b, X, Y, Backend> {
    let ink = ink();
    mesh.axis_style(ink)
        .bold_line_style(ink.mix(0.18))
        .light_line_style(ink.mix(0.06))
        .label_style(text(font))
}

/// A drawing error as the page says it.
pub fn draw_error(err: impl Display) -> String {
    format!("could not draw the chart: {err}")
}

/// Writes `message` at `at` where a chart would be, and shows it.
pub fn say(root: &Area, message: &str, at: (i32, i32), font: Font) -> Result<(), String> {
    root.draw(&Text::new(message.to_owned(), at, text(font)))
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

/// Draws the chart's legend at `at`: on a veiled background, framed, in `font`. Only series
/// given a `label` appear, so a series with nothing to draw must not be labelled.
pub fn legend<CT: CoordTranslate>(
    chart: &mut ChartContext<'_, Backend, CT>,
    at: SeriesLabelPosition,
    font: Font,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(at)
        .background_style(ShapeStyle::from(paper().mix(0.9)))
        .border_style(ink())
        .label_font(text(font))
        .draw()
        .map_err(draw_error)
}

/// Text anchored at its left end and centred vertically (labels beside bars).
pub fn left_middle(font: Font) -> TextStyle<'static> {
    text(font).pos(Pos::new(HPos::Left, VPos::Center))
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
    inked(&mut mesh, font);
    mesh.disable_y_mesh()
        .y_labels(0)
        .y_label_formatter(&|_| String::new());
    if let Some(n) = x_ticks {
        mesh.x_labels(n);
    }
    mesh.x_desc(x_desc)
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

/// The plotting rectangle of a chart in CSS pixels of its canvas, and the drawn x range across
/// it: what a pointer's position is read against (see [`super::probe`]).
pub fn frame_of(chart: &Chart<'_>) -> super::probe::Frame {
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let (x, y) = (chart.x_range(), chart.y_range());
    super::probe::Frame {
        left: xs.start,
        right: xs.end,
        top: ys.start,
        bottom: ys.end,
        from: x.start,
        to: x.end,
        y_top: y.end,
        y_bottom: y.start,
    }
}

type Fail = DrawingErrorKind<<CanvasBackend as DrawingBackend>::ErrorType>;

/// Everything goes to the canvas as it is; only the size plotters lays out in is the CSS one.
impl DrawingBackend for Backend {
    type ErrorType = <CanvasBackend as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.css
    }

    fn ensure_prepared(&mut self) -> Result<(), Fail> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), Fail> {
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Fail> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Fail> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Fail> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Fail> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Fail> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Fail> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Fail> {
        self.inner.draw_text(text, style, pos)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), Fail> {
        self.inner.estimate_text_size(text, style)
    }
}
