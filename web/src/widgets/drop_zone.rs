//! The file input every view loads from: choose a file, or drop one on the zone around it.
//!
//! One component so that the four views' inputs behave alike (the zone highlights while a
//! file is dragged over it; the first file chosen or dropped is handed on) and keep the ids,
//! classes and `data-for` the browser tests find them by.

use leptos::prelude::*;
use web_sys::{File, HtmlInputElement};

/// A file input inside a drop zone (`div.dropzone`, `.dragging` while a file is over it).
#[component]
pub fn DropZone(
    /// The input's id (the label's `for`).
    #[prop(into)]
    id: String,
    /// The input's `accept`, when it limits the files offered.
    #[prop(optional)]
    accept: Option<&'static str>,
    /// Whether the zone names its input in `data-for` (the trace view's never has).
    #[prop(default = true)]
    data_for: bool,
    /// Whether the input is emptied after a choice, so that choosing the same file again is a
    /// new load.
    #[prop(optional)]
    rechoose: bool,
    /// Called with the file chosen or dropped.
    on_file: impl Fn(File) + Copy + 'static,
    /// The label's content.
    children: Children,
) -> impl IntoView {
    let dragging = RwSignal::new(false);
    let label_for = id.clone();
    let zone_for = data_for.then(|| id.clone());
    view! {
        <div
            class="dropzone"
            class:dragging=move || dragging.get()
            data-for=zone_for
            on:dragover=move |ev| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=move |ev| {
                ev.prevent_default();
                dragging.set(false);
                if let Some(file) = ev
                    .data_transfer()
                    .and_then(|dt| dt.files())
                    .and_then(|files| files.get(0))
                {
                    on_file(file);
                }
            }
        >
            <label for=label_for>{children()}</label>
            <input
                type="file"
                id=id
                accept=accept
                on:change=move |ev| {
                    let input: HtmlInputElement = event_target(&ev);
                    if let Some(file) = input.files().and_then(|files| files.get(0)) {
                        on_file(file);
                    }
                    if rechoose {
                        input.set_value("");
                    }
                }
            />
        </div>
    }
}
