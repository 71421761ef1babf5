//! A chart on a `<canvas>`: the one place a view's drawing meets Leptos.
//!
//! A canvas is state outside Leptos, so drawing is an `Effect`: it runs once the canvas is in
//! the page and again whenever a signal the drawing reads changes. A drawing can fail (no 2D
//! context, a canvas detached mid-draw); the failure goes to a `problem` signal that
//! [`DrawProblem`] shows as text, never a panic. Every view's chart is a [`CanvasFigure`];
//! the trace and receipt views put theirs in a [`FigureCard`] (a heading, the chart and the
//! table of its numbers, which is what screen readers and tests read).

use leptos::html;
use leptos::prelude::*;
use web_sys::HtmlCanvasElement;

/// A canvas that `draw` paints, and paints again when a signal it reads changes; a failure
/// (or `None` once a drawing succeeds) is put in `problem`.
#[component]
pub fn CanvasFigure(
    /// The canvas's id.
    #[prop(into)]
    id: String,
    /// Width in pixels (CSS may scale it).
    #[prop(into)]
    width: String,
    /// Height in pixels.
    #[prop(into)]
    height: String,
    /// The canvas's text alternative.
    alt: &'static str,
    /// Where a drawing failure goes (shown by [`DrawProblem`] wherever the view puts it).
    problem: RwSignal<Option<String>>,
    /// Paints the canvas; tracked, so the signals it reads redraw it.
    draw: impl Fn(HtmlCanvasElement) -> Result<(), String> + 'static,
) -> impl IntoView {
    let canvas = NodeRef::<html::Canvas>::new();
    Effect::new(move |_| {
        if let Some(element) = canvas.get() {
            problem.set(draw(element).err());
        }
    });
    view! {
        <canvas
            id=id
            node_ref=canvas
            width=width
            height=height
            role="img"
            aria-label=alt
        ></canvas>
    }
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
/// beside it, and any drawing failure below. Ids are `<slug>-heading` and `<slug>-chart`.
#[component]
pub fn FigureCard(
    /// Prefix of the element ids.
    slug: &'static str,
    /// The heading.
    title: &'static str,
    /// The canvas's text alternative.
    alt: &'static str,
    /// Canvas width in pixels.
    #[prop(into)]
    width: String,
    /// Canvas height in pixels.
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
    /// The table of the chart's numbers.
    children: Children,
) -> impl IntoView {
    let problem = RwSignal::new(None::<String>);
    let heading = format!("{slug}-heading");
    let labelled_by = heading.clone();
    view! {
        <section id=id class=class aria-labelledby=labelled_by>
            <h2 id=heading>{title}</h2>
            <div class="figure">
                <CanvasFigure
                    id=format!("{slug}-chart")
                    width=width
                    height=height
                    alt=alt
                    problem=problem
                    draw=draw
                />
                <div class="numbers">{children()}</div>
            </div>
            <DrawProblem problem=problem role="status" />
        </section>
    }
}
