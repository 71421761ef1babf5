//! A chart on a `<canvas>`: the one place a view's drawing meets Leptos.
//!
//! A canvas is state outside Leptos, so drawing is an `Effect`: it runs once the canvas is in
//! the page and again whenever a signal the drawing reads changes, when the window's size
//! changes the canvas's laid-out size (its backing store follows it, see [`super::plot`]), and
//! when the page's colour scheme changes. A drawing can fail (no 2D context, a canvas detached
//! mid-draw); the failure goes to a `problem` signal that [`DrawProblem`] shows as text, never a
//! panic. Every view's chart is a [`CanvasFigure`]; the trace and receipt views put theirs in a
//! [`FigureCard`] (a heading, the chart and the table of its numbers, which is what screen
//! readers and tests read). A chart given a [`Readout`] shows the value under the pointer in a
//! small element beside it (`#<slug>-readout`).

use std::rc::Rc;

use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::HtmlCanvasElement;

/// What a chart says is under the pointer at `(x, y)` CSS pixels from its canvas's top left.
pub type Readout = Rc<dyn Fn(f64, f64) -> Option<String>>;

thread_local! {
    /// Bumped when the page's colour scheme changes, so every chart redraws in the new one.
    static SCHEME_CHANGES: ArcRwSignal<u32> = scheme_changes();
}

/// A signal bumped on every change of `prefers-color-scheme` and around printing (one listener
/// each for the page; an `Arc` signal, so no view's owner disposes of it).
fn scheme_changes() -> ArcRwSignal<u32> {
    let changes = ArcRwSignal::new(0u32);
    let bump = changes.clone();
    let query = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten());
    if let Some(query) = query {
        let on_change = Closure::<dyn Fn()>::new(move || bump.update(|n| *n += 1));
        query.set_onchange(Some(on_change.as_ref().unchecked_ref()));
        // The listener lives as long as the page.
        on_change.forget();
    }
    // Printing draws on white paper (see `theme::set_printing`), and the screen's scheme after.
    if let Some(window) = web_sys::window() {
        for (event, printing) in [("beforeprint", true), ("afterprint", false)] {
            let bump = changes.clone();
            let on_print = Closure::<dyn Fn()>::new(move || {
                super::theme::set_printing(printing);
                bump.update(|n| *n += 1);
            });
            let _ =
                window.add_event_listener_with_callback(event, on_print.as_ref().unchecked_ref());
            on_print.forget();
        }
    }
    changes
}

/// True when the canvas's backing store no longer matches its laid-out size.
fn stale(canvas: &HtmlCanvasElement) -> bool {
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    let want = (f64::from(canvas.client_width()) * dpr).round();
    canvas.client_width() > 0 && (f64::from(canvas.width()) - want).abs() >= 1.0
}

/// A canvas that `draw` paints, and paints again when a signal it reads changes; a failure
/// (or `None` once a drawing succeeds) is put in `problem`.
#[component]
pub fn CanvasFigure(
    /// The canvas's id.
    #[prop(into)]
    id: String,
    /// Nominal width in CSS pixels: the canvas keeps this aspect, at the width CSS gives it.
    #[prop(into)]
    width: String,
    /// Nominal height in CSS pixels.
    #[prop(into)]
    height: String,
    /// The canvas's text alternative.
    alt: &'static str,
    /// Where a drawing failure goes (shown by [`DrawProblem`] wherever the view puts it).
    problem: RwSignal<Option<String>>,
    /// Paints the canvas; tracked, so the signals it reads redraw it.
    draw: impl Fn(HtmlCanvasElement) -> Result<(), String> + 'static,
    /// The value under the pointer, shown in `#<id without -chart>-readout`.
    #[prop(optional_no_strip)]
    readout: Option<Readout>,
) -> impl IntoView {
    canvas_figure(id, width, height, alt, problem, Box::new(draw), readout)
}

/// A drawing, boxed: the figure's markup below is built once for every chart, not once per
/// drawing closure's type (which cost the bundle tens of kilobytes).
type Draw = Box<dyn Fn(HtmlCanvasElement) -> Result<(), String>>;

/// [`CanvasFigure`]'s body.
fn canvas_figure(
    id: String,
    width: String,
    height: String,
    alt: &'static str,
    problem: RwSignal<Option<String>>,
    draw: Draw,
    readout: Option<Readout>,
) -> AnyView {
    let canvas = NodeRef::<html::Canvas>::new();
    let resized = RwSignal::new(0u32);
    let resize = window_event_listener(ev::resize, move |_| {
        if canvas.get_untracked().is_some_and(|c| stale(&c)) {
            resized.update(|n| *n += 1);
        }
    });
    on_cleanup(move || resize.remove());
    let scheme = SCHEME_CHANGES.with(ArcRwSignal::clone);
    // The first drawing waits for the next animation frame: building a card and painting its
    // chart in one frame held a ten-minute receipt's page for 60–80 ms (the receipt view
    // builds its cards a frame apart, and a chart's card two).
    let ready = RwSignal::new(false);
    request_animation_frame(move || {
        ready.try_set(true);
    });
    Effect::new(move |_| {
        resized.track();
        scheme.track();
        if !ready.get() {
            return;
        }
        if let Some(element) = canvas.get() {
            let id = element.id();
            crate::ingest::mark(&format!("draw-start-{id}"));
            problem.set(draw(element).err());
            crate::ingest::mark(&format!("draw-end-{id}"));
        }
    });
    let min_h = height.parse::<u32>().map_or(200, |h| h.min(260));
    let style = format!("aspect-ratio:{width}/{height};min-height:{min_h}px");
    // The readout's text and where it goes: beside the pointer, on its left in the canvas's
    // right half so it never runs off the card.
    let under = RwSignal::new(None::<(String, String)>);
    let readout_id = format!("{}-readout", id.strip_suffix("-chart").unwrap_or(&id));
    let hover = readout.clone();
    let on_move = move |e: ev::PointerEvent| {
        if let Some(read) = &hover {
            let (x, y) = (e.offset_x(), e.offset_y());
            let width = canvas.get_untracked().map_or(0, |c| c.client_width());
            let place = if x > width / 2 {
                format!("right:{}px;top:{}px", width - x + 14, y + 14)
            } else {
                format!("left:{}px;top:{}px", x + 14, y + 14)
            };
            under.set(read(f64::from(x), f64::from(y)).map(|t| (t, place)));
        }
    };
    let label = readout.is_some().then(|| {
        view! {
            <div
                id=readout_id
                class="readout"
                role="status"
                hidden=move || under.with(Option::is_none)
                style=move || under.with(|u| u.as_ref().map(|u| u.1.clone()).unwrap_or_default())
            >
                {move || under.with(|u| u.as_ref().map(|u| u.0.clone()).unwrap_or_default())}
            </div>
        }
    });
    view! {
        <div class="canvas-wrap">
            <canvas
                id=id
                node_ref=canvas
                width=width.clone()
                height=height.clone()
                data-w=width
                data-h=height
                style=style
                role="img"
                aria-label=alt
                on:pointermove=on_move
                on:pointerleave=move |_| under.set(None)
            ></canvas>
            {label}
        </div>
    }
    .into_any()
}

/// A drawing failure, as text (`<p class="error">`, with `role` when given).
#[component]
pub fn DrawProblem(
    /// The failure, if any.
    problem: RwSignal<Option<String>>,
    /// The paragraph's ARIA role.
    #[prop(optional)]
    role: Option<&'static str>,
) -> impl IntoView {
    move || {
        problem.get().map(|msg| {
            view! {
                <p class="error" role=role>
                    {msg}
                </p>
            }
        })
    }
}

/// One chart in a card: a heading, the chart with the table of its numbers (`children`)
/// beside it, and any drawing failure below. Ids are `<slug>-heading`, `<slug>-chart` and,
/// with a `readout`, `<slug>-readout`.
#[component]
pub fn FigureCard(
    /// Prefix of the element ids.
    slug: &'static str,
    /// The heading.
    title: &'static str,
    /// The canvas's text alternative.
    alt: &'static str,
    /// Canvas width in CSS pixels (its aspect is kept at the width CSS gives it).
    #[prop(into)]
    width: String,
    /// Canvas height in CSS pixels.
    #[prop(into)]
    height: String,
    /// The section's id, when it has one.
    #[prop(optional, into)]
    id: Option<String>,
    /// The section's classes.
    #[prop(default = "card chart")]
    class: &'static str,
    /// Paints the canvas (see [`CanvasFigure`]).
    draw: impl Fn(HtmlCanvasElement) -> Result<(), String> + 'static,
    /// The value under the pointer (see [`CanvasFigure`]).
    #[prop(optional)]
    readout: Option<Readout>,
    /// The table of the chart's numbers.
    children: Children,
) -> impl IntoView {
    figure_card(
        slug,
        title,
        alt,
        (width, height),
        (id, class),
        Box::new(draw),
        readout,
        children(),
    )
}

/// [`FigureCard`]'s body, built once for every card (see [`Draw`]).
#[allow(clippy::too_many_arguments)]
fn figure_card(
    slug: &'static str,
    title: &'static str,
    alt: &'static str,
    (width, height): (String, String),
    (id, class): (Option<String>, &'static str),
    draw: Draw,
    readout: Option<Readout>,
    numbers: AnyView,
) -> AnyView {
    let problem = RwSignal::new(None::<String>);
    let heading = format!("{slug}-heading");
    let labelled_by = heading.clone();
    view! {
        <section id=id class=class aria-labelledby=labelled_by>
            <h2 id=heading>{title}</h2>
            <div class="figure">
                {canvas_figure(format!("{slug}-chart"), width, height, alt, problem, draw, readout)}
                <div class="numbers">{numbers}</div>
            </div>
            <DrawProblem problem=problem role="status" />
        </section>
    }
    .into_any()
}
