//! The file input every view loads from: choose a file, or drop one on the zone around it.
//!
//! One component so that the four views' inputs behave alike (the zone highlights while a
//! file is dragged over it; the first file chosen or dropped is handed on) and keep the ids,
//! classes and `data-for` the browser tests find them by). The trace view's takes several
//! files at once: a RAGPulse trace with its companion files.

use leptos::prelude::*;
use web_sys::{File, FileList, HtmlInputElement};

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
    /// When given, the input takes several files and this is called with every one chosen or
    /// dropped (instead of `on_file` with the first).
    #[prop(optional)]
    on_files: Option<Callback<Vec<File>>>,
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
                if let Some(files) = ev.data_transfer().and_then(|dt| dt.files()) {
                    hand_on(&files, on_file, on_files);
                }
            }
        >
            <label for=label_for>{children()}</label>
            <input
                type="file"
                id=id
                accept=accept
                multiple=on_files.is_some()
                on:change=move |ev| {
                    let input: HtmlInputElement = event_target(&ev);
                    if let Some(files) = input.files() {
                        hand_on(&files, on_file, on_files);
                    }
                    if rechoose {
                        input.set_value("");
                    }
                }
            />
        </div>
    }
}

/// Every file to `on_files` when given, else the first to `on_file`; nothing for none.
fn hand_on(files: &FileList, on_file: impl Fn(File), on_files: Option<Callback<Vec<File>>>) {
    match on_files {
        Some(all) => {
            let list: Vec<File> = (0..files.length()).filter_map(|i| files.get(i)).collect();
            if !list.is_empty() {
                all.run(list);
            }
        }
        None => {
            if let Some(file) = files.get(0) {
                on_file(file);
            }
        }
    }
}
