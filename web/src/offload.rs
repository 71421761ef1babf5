//! Heavy work off the page's thread: a receipt's audit runs in a Web Worker, with progress and
//! a cancel that really stops it (the worker is terminated, not asked).
//!
//! The worker runs the page's own wasm module — no second bundle. The page's `main` mounts the
//! app only where there is a `window`; in a worker it does nothing, and the worker calls the
//! exported [`worker_audit_receipt`]. The worker's script is made at run time as a `blob:` URL
//! that imports the glue and wasm URLs the page itself loaded (read from Trunk's preload links),
//! so it works under any path a site is published at and makes no request the page did not.
//! Where a worker cannot start (no module workers, no preload links) the job runs on the page's
//! thread instead, with the same callbacks — slower to paint, same numbers.
//!
//! The API is one call per job: [`audit_receipt`] takes the file (a `Blob`) and two
//! callbacks and returns a [`Job`]; after [`Job::cancel`] neither callback runs again.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::receipt_model::{self, ReceiptModel, STAGES};

/// How far a job is: `fraction` in 0..=1 and the stage's name.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// 0..=1.
    pub fraction: f64,
    /// What is being done (`read`, then [`STAGES`]).
    pub stage: String,
}

impl Progress {
    fn read() -> Progress {
        Progress {
            fraction: 0.0,
            stage: "read".to_owned(),
        }
    }

    /// Stage `i` of [`STAGES`] has begun (reading the file counts as one more stage first).
    fn stage(i: usize) -> Progress {
        Progress {
            fraction: (i + 1) as f64 / (STAGES.len() + 1) as f64,
            stage: STAGES.get(i).copied().unwrap_or("").to_owned(),
        }
    }
}

/// A running job.
#[derive(Debug, Clone)]
pub struct Job {
    cancelled: Rc<Cell<bool>>,
    worker: Rc<RefCell<Option<web_sys::Worker>>>,
}

impl Job {
    /// Stops the job (terminating its worker); its callbacks never run again.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        if let Some(worker) = self.worker.borrow_mut().take() {
            worker.terminate();
        }
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.get()
    }

    /// True when the job runs in a Web Worker (false: on the page's thread).
    pub fn off_thread(&self) -> bool {
        self.worker.borrow().is_some()
    }
}

/// Audits the receipt in `blob` (reported under `source`) off the page's thread.
pub fn audit_receipt(
    source: String,
    blob: web_sys::Blob,
    on_progress: impl Fn(Progress) + 'static,
    on_done: impl FnOnce(Result<ReceiptModel, String>) + 'static,
) -> Job {
    let job = Job {
        cancelled: Rc::new(Cell::new(false)),
        worker: Rc::new(RefCell::new(None)),
    };
    match take_worker() {
        Some(worker) => run_in_worker(&job, worker, source, blob, on_progress, on_done),
        None => run_here(&job, source, blob, on_progress, on_done),
    }
    job
}

fn run_here(
    job: &Job,
    source: String,
    blob: web_sys::Blob,
    on_progress: impl Fn(Progress) + 'static,
    on_done: impl FnOnce(Result<ReceiptModel, String>) + 'static,
) {
    let cancelled = job.cancelled.clone();
    spawn_local(async move {
        on_progress(Progress::read());
        let bytes = match crate::site::read_blob(&blob).await {
            Ok(b) => b,
            Err(e) => {
                if !cancelled.get() {
                    on_done(Err(unreadable(&source, &e)));
                }
                return;
            }
        };
        if cancelled.get() {
            return;
        }
        let result =
            receipt_model::build(&source, &bytes, &mut |i| on_progress(Progress::stage(i)));
        if !cancelled.get() {
            on_done(result);
        }
    });
}

fn unreadable(source: &str, e: &str) -> String {
    format!("{source}: the browser could not read the file: {e}")
}

type Handler = Closure<dyn FnMut(web_sys::MessageEvent)>;
type Done = Box<dyn FnOnce(Result<ReceiptModel, String>)>;
type ErrorHandler = Closure<dyn FnMut(web_sys::Event)>;

fn run_in_worker(
    job: &Job,
    worker: web_sys::Worker,
    source: String,
    blob: web_sys::Blob,
    on_progress: impl Fn(Progress) + 'static,
    on_done: impl FnOnce(Result<ReceiptModel, String>) + 'static,
) {
    let on_progress: Rc<dyn Fn(Progress)> = Rc::new(on_progress);
    let on_done: Rc<RefCell<Option<Done>>> = Rc::new(RefCell::new(Some(Box::new(on_done))));
    // The handlers own themselves through this cell; they are dropped after the job ends, from
    // a later task (a closure must not be dropped while it runs).
    let handlers: Rc<RefCell<Vec<Handler>>> = Rc::new(RefCell::new(Vec::new()));
    let error_handler: Rc<RefCell<Option<ErrorHandler>>> = Rc::new(RefCell::new(None));

    // Ends the job once: detaches the handlers, returns a healthy worker to the pool, reports.
    let finish = {
        let cancelled = job.cancelled.clone();
        let slot = job.worker.clone();
        let on_done = on_done.clone();
        let handlers = handlers.clone();
        let error_handler = error_handler.clone();
        Rc::new(move |result: Result<ReceiptModel, String>, healthy: bool| {
            if let Some(worker) = slot.borrow_mut().take() {
                worker.set_onmessage(None);
                worker.set_onerror(None);
                if healthy {
                    give_back(worker);
                } else {
                    worker.terminate();
                }
            }
            let done = on_done.borrow_mut().take();
            if let Some(done) = done
                && !cancelled.get()
            {
                done(result);
            }
            let handlers = handlers.clone();
            let error_handler = error_handler.clone();
            spawn_local(async move {
                handlers.borrow_mut().clear();
                drop(error_handler.borrow_mut().take());
            });
        })
    };

    let name = source.clone();
    let progress = on_progress.clone();
    let on_message_finish = finish.clone();
    let cancelled = job.cancelled.clone();
    let handler: Handler = Closure::new(move |event: web_sys::MessageEvent| {
        if cancelled.get() {
            return;
        }
        let data = event.data();
        let field = |k: &str| js_sys::Reflect::get(&data, &JsValue::from_str(k)).ok();
        if let Some(stage) = field("stage").and_then(|v| v.as_f64()) {
            progress(if stage < 0.0 {
                Progress::read()
            } else {
                Progress::stage(stage as usize)
            });
            return;
        }
        let result = if let Some(json) = field("ok").and_then(|v| v.as_string()) {
            publish_timing(&data);
            serde_json::from_str::<ReceiptModel>(&json)
                .map_err(|e| format!("{name}: the worker's answer did not decode: {e}"))
        } else {
            Err(field("err")
                .and_then(|v| v.as_string())
                .unwrap_or_else(|| format!("{name}: the worker failed without a message")))
        };
        on_message_finish(result, true);
    });
    // A worker whose script or wasm failed to load reports through `onerror`: later jobs run
    // on the page's thread, and this one says so rather than waiting forever.
    let on_error = {
        let source = source.clone();
        let finish = finish.clone();
        ErrorHandler::new(move |_event: web_sys::Event| {
            WORKER_BROKEN.with(|b| b.set(true));
            finish(
                Err(format!(
                    "{source}: the background worker could not start; load the file again to audit it on the page's thread"
                )),
                false,
            );
        })
    };
    worker.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    handlers.borrow_mut().push(handler);
    *error_handler.borrow_mut() = Some(on_error);

    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(
        &message,
        &JsValue::from_str("name"),
        &JsValue::from_str(&source),
    );
    let _ = js_sys::Reflect::set(&message, &JsValue::from_str("blob"), &blob);
    *job.worker.borrow_mut() = Some(worker.clone());
    if worker.post_message(&message).is_err() {
        // Could not hand the file over: run here, with the same callbacks.
        WORKER_BROKEN.with(|b| b.set(true));
        let done = on_done.borrow_mut().take();
        // on_done is taken: this only detaches and terminates the worker.
        finish(Err(String::new()), false);
        if let Some(done) = done {
            let progress = on_progress.clone();
            run_here(job, source, blob, move |p| progress(p), done);
        }
    }
}

/// Publishes the worker's own timings as `window.loadproofWorkerTiming` (`read_ms`: the
/// file into the worker; `build_ms`: parse, digests, audit and series in wasm), so
/// `web/e2e/perf_receipt.mjs` can report where a load's time goes.
fn publish_timing(data: &JsValue) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let timing = js_sys::Object::new();
    for key in ["read_ms", "build_ms"] {
        if let Ok(v) = js_sys::Reflect::get(data, &JsValue::from_str(key)) {
            let _ = js_sys::Reflect::set(&timing, &JsValue::from_str(key), &v);
        }
    }
    let _ = js_sys::Reflect::set(
        &window,
        &JsValue::from_str("loadproofWorkerTiming"),
        &timing,
    );
}

thread_local! {
    /// Idle workers, ready for the next job (a worker's wasm is instantiated once).
    static IDLE: RefCell<Vec<web_sys::Worker>> = const { RefCell::new(Vec::new()) };
    /// The worker's script URL (`blob:`), made once.
    static SCRIPT: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Set when a worker failed to start: later jobs run on the page's thread.
    static WORKER_BROKEN: Cell<bool> = const { Cell::new(false) };
}

fn give_back(worker: web_sys::Worker) {
    IDLE.with(|idle| idle.borrow_mut().push(worker));
}

/// An idle worker, or a new one; `None` where workers cannot run this page's module.
fn take_worker() -> Option<web_sys::Worker> {
    if WORKER_BROKEN.with(Cell::get) {
        return None;
    }
    if let Some(w) = IDLE.with(|idle| idle.borrow_mut().pop()) {
        return Some(w);
    }
    let url = SCRIPT.with(|s| s.borrow().clone()).or_else(|| {
        let url = worker_script_url()?;
        SCRIPT.with(|s| *s.borrow_mut() = Some(url.clone()));
        Some(url)
    })?;
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    options.set_name("loadproof-audit");
    web_sys::Worker::new_with_options(&url, &options).ok()
}

/// The worker's script as a `blob:` URL importing the page's own glue and wasm.
fn worker_script_url() -> Option<String> {
    let document = web_sys::window()?.document()?;
    let glue = preload_href(&document, "link[rel=modulepreload][href$='.js']")?;
    let wasm = preload_href(&document, "link[rel=preload][href$='.wasm']")?;
    let script = format!(
        r#"import init, {{ worker_audit_receipt }} from {glue:?};
const ready = init({{ module_or_path: {wasm:?} }});
self.onmessage = async (event) => {{
  const {{ name, blob }} = event.data;
  try {{
    await ready;
    self.postMessage({{ stage: -1 }});
    const t0 = performance.now();
    const bytes = new Uint8Array(await blob.arrayBuffer());
    const t1 = performance.now();
    const json = worker_audit_receipt(name, bytes, (i) => self.postMessage({{ stage: i }}));
    const t2 = performance.now();
    self.postMessage({{ ok: json, read_ms: t1 - t0, build_ms: t2 - t1 }});
  }} catch (err) {{
    self.postMessage({{ err: String(err && err.message ? err.message : err) }});
  }}
}};
"#
    );
    let parts = js_sys::Array::of1(&JsValue::from_str(&script));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).ok()?;
    web_sys::Url::create_object_url_with_blob(&blob).ok()
}

/// The absolute URL of the first `<link>` matching `selector` (Trunk's preload links).
fn preload_href(document: &web_sys::Document, selector: &str) -> Option<String> {
    let link = document.query_selector(selector).ok()??;
    let href = link.get_attribute("href")?;
    let base = document.base_uri().ok()??;
    web_sys::Url::new_with_base(&href, &base)
        .ok()
        .map(|u| u.href())
}

/// Runs in the worker: the receipt's model as JSON. `on_stage(i)` is called as stage
/// `STAGES[i]` begins. An `Err` names the file and what is wrong.
#[wasm_bindgen]
pub fn worker_audit_receipt(
    source: &str,
    bytes: &[u8],
    on_stage: &js_sys::Function,
) -> Result<String, JsValue> {
    let model = receipt_model::build(source, bytes, &mut |i| {
        let _ = on_stage.call1(&JsValue::NULL, &JsValue::from_f64(i as f64));
    })
    .map_err(|e| JsValue::from_str(&e))?;
    serde_json::to_string(&model).map_err(|e| JsValue::from_str(&format!("{source}: {e}")))
}
