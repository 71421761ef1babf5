//! The trace view: choose or drop a file (or load the synthetic sample), then read what core
//! says about it.
//!
//! The file is parsed once, in a Web Worker (`crate::offload`: progress, Cancel terminates the
//! worker), into a `Trace` held in a signal with its arrival gaps (read by that worker while
//! the page rebuilds the trace and reads its regime); the burstiness window only recomputes
//! the regime, it never rereads the file. The report is
//! also published as `window.loadproofReport` (parsed from `InspectReport::to_json`) so a
//! browser test can compare the page with the CLI byte for byte. Errors from core are shown
//! as text naming the line and the columns seen, never as a blank page. A receipt or a
//! playbook is recognised from its first bytes (`crate::file_kind`) and handed to the view
//! that reads it (`crate::handoff`) rather than refused as a malformed trace.
//!
//! A mapping (`loadproof.trace-schema/v1`, chosen, dropped or built from a log no built-in
//! format recognises: [`mapping`]) makes every later read go through it, in the worker(s), as
//! the CLI's `--schema` does; the file last read is read again through it.

mod charts;
mod draw;
mod mapping;
pub mod model;
mod summary;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::report::InspectReport;
use loadproof_core::synth::{SynthSpec, generate};
use loadproof_core::trace::{
    Codec, Ingester, LogFields, SEGMENTS, TRACE_SCHEMA_MAX_BYTES, Trace, TraceError, log_fields,
};
use loadproof_core::{Regime, Window};
use web_sys::File;

use self::charts::Charts;
use self::mapping::{Draft, Mapping, MappingForm};
use self::model::Loaded;
use self::summary::Summary;
use crate::file_kind::{FileKind, SNIFF_BYTES, zstd_holds_stream};
use crate::handoff::{Handoff, Target};
use crate::ingest::{Companions, ingest_bytes, options};
use crate::offload::{Job, ingest_trace};
use crate::publish::{parsed, publish};
use crate::site::read_blob;
use crate::widgets::drop_zone::DropZone;
use crate::widgets::number::{js, window_from_text};
use crate::widgets::readout::Message;

/// The file name the synthetic sample is reported under.
pub const SAMPLE_NAME: &str = "synthetic-burstgpt.csv";

/// A file being read: its name, bytes read and bytes in all.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    name: String,
    done: f64,
    total: f64,
}

/// Load a trace and show its report, charts and drops.
#[component]
pub fn TraceView() -> impl IntoView {
    let loaded: RwSignal<Option<Arc<Loaded>>> = RwSignal::new(None);
    let error = RwSignal::new(None::<String>);
    let reading = RwSignal::new(None::<Reading>);
    let window_text = RwSignal::new("1".to_owned());
    let window_input = NodeRef::<leptos::html::Input>::new();
    // The window the recording grid warrants, set as if typed (the input shows it too).
    let use_window = Callback::new(move |secs: f64| {
        let text = js(secs);
        if let Some(input) = window_input.get_untracked() {
            input.set_value(&text);
        }
        window_text.set(text);
    });
    // Bumped by every load; a slower, older load sees the change and stops.
    let generation = StoredValue::new(0u64);
    // The mapping every read goes through, if the user gave one; the form that builds one
    // from a log no built-in format reads; the file last read (read again through a mapping).
    let mapping = RwSignal::new(None::<Mapping>);
    let draft = RwSignal::new(None::<Draft>);
    let last_file: StoredValue<Option<File>, LocalStorage> = StoredValue::new_local(None);
    // RAGPulse's companion files, when given with the trace: read with every later load of it.
    let companions: StoredValue<Companions, LocalStorage> =
        StoredValue::new_local(Arc::from(Vec::new()));
    // Whether the file last read is compressed (known from its first bytes when it was chosen).
    let last_compressed: StoredValue<bool, LocalStorage> = StoredValue::new_local(false);

    let typed_window = Memo::new(move |_| window_text.with(|t| window_from_text(t)));
    // An invalid entry keeps the last valid window rather than blanking the report.
    let window = Memo::new(move |prev: Option<&Window>| {
        typed_window
            .get()
            .or(prev.copied())
            .unwrap_or(Window::ONE_SECOND)
    });
    let report = Memo::new(move |_| {
        loaded.get().map(|l| {
            let report = l.report(window.get());
            crate::ingest::mark("report-computed");
            report
        })
    });
    // Syncs outside state: the report for tests and the console.
    Effect::new(move |_| {
        report.with(|r| {
            publish(
                "loadproofReport",
                &parsed(r.as_ref().map(InspectReport::to_json).as_deref()),
            );
        });
        crate::ingest::mark("report-published");
    });

    // The load in progress, if any: a newer load or Cancel terminates it.
    let job: StoredValue<Option<Job>, LocalStorage> = StoredValue::new_local(None);
    let read_trace = move |file: File, compressed: bool| {
        let this_load = generation.get_value() + 1;
        generation.set_value(this_load);
        if let Some(old) = job.get_value() {
            old.cancel();
        }
        let name = file.name();
        if last_file.with_value(|f| f.as_ref() != Some(&file)) {
            draft.set(None);
        }
        last_file.set_value(Some(file.clone()));
        last_compressed.set_value(compressed);
        let through = mapping.with_untracked(|m| m.as_ref().map(|m| m.bytes.clone()));
        let mapped = through.is_some();
        loaded.set(None);
        error.set(None);
        reading.set(Some(Reading {
            name: name.clone(),
            done: 0.0,
            total: file.size(),
        }));
        let is_current = move || generation.get_value() == this_load;
        let progress_name = name.clone();
        let on_progress = move |done, total| {
            if is_current() {
                reading.set(Some(Reading {
                    name: progress_name.clone(),
                    done,
                    total,
                }));
            }
        };
        // Parsed in a worker (the page's thread stays free); same Ingester, same numbers.
        let blob: web_sys::Blob = file.clone().into();
        let given = companions.get_value();
        // The regime for the window in force, read here while the worker reads the gaps.
        let first_regime = Rc::new(RefCell::new(None));
        let on_trace = {
            let first_regime = first_regime.clone();
            move |trace: &Trace| {
                if is_current() {
                    let window = window.get_untracked();
                    let regime = Regime::of(trace, window);
                    crate::ingest::mark("regime-computed");
                    *first_regime.borrow_mut() = Some((window, regime));
                }
            }
        };
        let started = ingest_trace(
            blob,
            compressed,
            through,
            given,
            on_progress,
            on_trace,
            move |result| {
                if !is_current() {
                    return;
                }
                reading.set(None);
                match result {
                    Ok((trace, gaps)) => loaded.set(Some(Arc::new(Loaded {
                        source: name,
                        trace,
                        gaps,
                        regime: first_regime.borrow_mut().take(),
                        synthetic: false,
                    }))),
                    Err(err) => {
                        error.set(Some(format!("{name}: {err}")));
                        // No built-in format reads it: offer to build a mapping from its head.
                        if !mapped {
                            spawn_local(async move {
                                let head = read_head(&file, SNIFF_BYTES).await;
                                if is_current()
                                    && let Some(fields) = unrecognised(&head)
                                {
                                    draft.set(Some(Draft {
                                        source: file.name(),
                                        fields,
                                    }));
                                }
                            });
                        }
                    }
                }
            },
        );
        job.set_value(Some(started));
    };

    // A mapping given: every later read goes through it, and the file last read is read again.
    let use_mapping = move |m: Mapping| {
        mapping.set(Some(m));
        if let Some(file) = last_file.get_value() {
            read_trace(file, last_compressed.get_value());
        }
    };
    let use_mapping_file = move |file: File| {
        spawn_local(async move {
            let name = file.name();
            // One byte over the limit is enough for core to refuse a file too large.
            let bytes = read_head(&file, (TRACE_SCHEMA_MAX_BYTES + 1) as f64).await;
            match Mapping::read(&name, bytes) {
                Ok(m) => {
                    error.set(None);
                    use_mapping(m);
                }
                Err(e) => error.set(Some(e)),
            }
        });
    };
    let clear_mapping = move |_| {
        mapping.set(None);
        if let Some(file) = last_file.get_value() {
            read_trace(file, last_compressed.get_value());
        }
    };

    // A receipt or a playbook is not a trace: it opens in the view that reads it (or, without
    // that view, is named as what it is rather than refused as a malformed trace).
    let handoff = Handoff::from_context();
    let start_file = move |file: File| {
        let this_load = generation.get_value() + 1;
        generation.set_value(this_load);
        spawn_local(async move {
            let head = match file.slice_with_f64_and_f64(0.0, SNIFF_BYTES) {
                Ok(blob) => read_blob(&blob).await.unwrap_or_default(),
                Err(_) => Vec::new(),
            };
            if generation.get_value() != this_load {
                return;
            }
            // A gzip trace is read as a stream of its content; so is a zstd file, unless it
            // holds a record stream (a receipt).
            match Codec::sniff(&head) {
                Some(Codec::Gzip) => return read_trace(file, true),
                Some(Codec::Zstd) if !zstd_holds_stream(&head) => return read_trace(file, true),
                _ => {}
            }
            let target = match FileKind::sniff(&head) {
                FileKind::Receipt => Target::Receipt,
                FileKind::Playbook => Target::Playbook,
                FileKind::Mapping => return use_mapping_file(file),
                FileKind::Other => return read_trace(file, false),
            };
            error.set(None);
            let name = file.name();
            let kind = FileKind::sniff(&head).noun();
            if !handoff.is_some_and(|h| h.give(target, file)) {
                error.set(Some(format!(
                    "{name} is {kind}, not a trace: open it in the {} view.",
                    target.name()
                )));
            }
        });
    };

    // One file: a trace (or a receipt, playbook or mapping), read without companion files.
    let start_one = move |file: File| {
        companions.set_value(Arc::from(Vec::new()));
        start_file(file);
    };
    // Several files: one trace and RAGPulse's companion files, by their published names, as
    // the CLI finds them beside the trace.
    let start_files = Callback::new(move |files: Vec<File>| {
        let (given, others): (Vec<File>, Vec<File>) = files
            .into_iter()
            .partition(|f| SEGMENTS.iter().any(|s| s.file == f.name()));
        let trace = match <[File; 1]>::try_from(others) {
            Ok([trace]) => trace,
            Err(others) => {
                error.set(Some(if others.is_empty() {
                    "These are RAGPulse's companion files: give them together with the trace they describe.".to_owned()
                } else {
                    format!(
                        "{} files that are not RAGPulse companion files were given: read one trace at a time (with its five companion files, if it is RAGPulse).",
                        others.len()
                    )
                }));
                return;
            }
        };
        if given.is_empty() {
            return start_one(trace);
        }
        spawn_local(async move {
            let mut read = Vec::with_capacity(given.len());
            for file in given {
                let blob: web_sys::Blob = file.clone().into();
                match read_blob(&blob).await {
                    Ok(bytes) => read.push((file.name(), bytes)),
                    Err(e) => {
                        error.set(Some(format!("{}: {e}", file.name())));
                        return;
                    }
                }
            }
            companions.set_value(Arc::from(read));
            start_file(trace);
        });
    });

    // Stops the load in progress: the reader sees the generation change at its next slice and
    // stops (within one slice, ~40 ms); nothing it read is shown.
    let cancel = move |_| {
        generation.update_value(|g| *g += 1);
        if let Some(old) = job.get_value() {
            old.cancel();
        }
        reading.set(None);
        error.set(Some(
            "Cancelled: nothing from that file is shown.".to_owned(),
        ));
    };

    let load_sample = move |_| {
        generation.update_value(|g| *g += 1);
        // The sample is read as the BurstGPT trace it is, never through a mapping, nor read
        // again when one is given.
        last_file.set_value(None);
        draft.set(None);
        if let Some(old) = job.get_value() {
            old.cancel();
        }
        reading.set(None);
        error.set(None);
        let bytes = match generate(&SynthSpec::DEFAULT) {
            Ok(bytes) => bytes,
            Err(err) => {
                loaded.set(None);
                error.set(Some(format!("{SAMPLE_NAME}: {err}")));
                return;
            }
        };
        match ingest_bytes(&bytes) {
            Ok(trace) => loaded.set(Some(Arc::new(Loaded::read_here(
                SAMPLE_NAME.to_owned(),
                trace,
                true,
            )))),
            Err(err) => {
                loaded.set(None);
                error.set(Some(format!("{SAMPLE_NAME}: {err}")));
            }
        }
    };

    view! {
        <section class="card load" aria-labelledby="load-heading">
            <h2 id="load-heading">"Trace"</h2>
            <div class="controls">
                <DropZone id="file" data_for=false on_file=start_one on_files=start_files>
                    "Choose a trace file, or drop one here. "
                    <span class="hint">
                        "BurstGPT CSV, Mooncake JSONL, Azure LLM inference CSV or RAGPulse JSONL (with its five companion files for its blocks' lengths); the format is detected from the header."
                    </span>
                </DropZone>
                <div class="side">
                    <p class="sample">
                        <button id="sample" type="button" on:click=load_sample>
                            "Load the synthetic sample"
                        </button>
                        <span class="hint">
                            " Synthetic: 2,000 BurstGPT-layout rows generated in this page (seed 42), not a real trace."
                        </span>
                    </p>
                    <DropZone
                        id="mapping-file"
                        accept=".json,application/json"
                        rechoose=true
                        on_file=use_mapping_file
                    >
                        "Reading your own log? Choose or drop its mapping. "
                        <span class="hint">
                            "A loadproof.trace-schema/v1 JSON file, as the CLI's --schema reads; the trace is then read through it."
                        </span>
                    </DropZone>
                    <p class="window">
                        <label for="window-input">"Burstiness window, seconds "</label>
                        <input
                            type="number"
                            id="window-input"
                            node_ref=window_input
                            min="0.000001"
                            step="any"
                            value="1"
                            on:input=move |ev| window_text.set(event_target_value(&ev))
                        />
                        {move || {
                            typed_window
                                .get()
                                .is_none()
                                .then(|| {
                                    view! {
                                        <span id="window-hint" class="hint" role="status">
                                            " Enter a width of at least 0.000001 s; showing "
                                            {js(window.get().secs())}
                                            " s."
                                        </span>
                                    }
                                })
                        }}
                    </p>
                </div>
            </div>
            {move || {
                reading
                    .get()
                    .map(|r| {
                        let percent = if r.total > 0.0 { 100.0 * r.done / r.total } else { 100.0 };
                        view! {
                            <p class="reading" role="status">
                                <label for="progress">{format!("Reading {} ", r.name)}</label>
                                <progress
                                    id="progress"
                                    max=r.total.to_string()
                                    value=r.done.to_string()
                                ></progress>
                                {format!(" {percent:.0} %")}
                                " "
                                <button id="cancel" type="button" on:click=cancel>
                                    "Cancel"
                                </button>
                            </p>
                        }
                    })
            }}
            {move || {
                mapping
                    .get()
                    .map(|m| {
                        view! {
                            <p id="mapping-status" role="status">
                                "Read through the mapping "
                                <strong>{m.name.clone()}</strong>
                                ", sha256 "
                                <span id="mapping-sha256" class="mono">
                                    {m.schema.sha256().to_owned()}
                                </span>
                                " "
                                <button id="mapping-clear" type="button" on:click=clear_mapping>
                                    "Read without it"
                                </button>
                            </p>
                        }
                    })
            }}
            <Message id="error" class="error" role="alert" text=error />
        </section>
        {move || {
            draft
                .get()
                .map(|d| {
                    view! { <MappingForm draft=d on_read=Callback::new(use_mapping) /> }
                })
        }}
        {move || {
            let synthetic = loaded.with(|l| l.as_ref().is_some_and(|l| l.synthetic));
            report.get().map(|r| view! { <Summary report=r synthetic=synthetic /> })
        }}
        <Show when=move || loaded.with(Option::is_some)>
            <Charts loaded=loaded window=window report=report use_window=use_window />
        </Show>
    }
}

/// The first `bytes` bytes of `file` (all of it when shorter; none when unreadable).
async fn read_head(file: &File, bytes: f64) -> Vec<u8> {
    match file.slice_with_f64_and_f64(0.0, bytes) {
        Ok(blob) => read_blob(&blob).await.unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// The fields a mapping could name in the log starting with `head`, when core finds no
/// built-in layout in it (core's own detection decides, not a reading of its message).
fn unrecognised(head: &[u8]) -> Option<LogFields> {
    match Ingester::new(options()).push(head) {
        Err(TraceError::UnrecognisedLayout { .. }) => log_fields(head),
        _ => None,
    }
}
