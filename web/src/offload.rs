//! Heavy work off the page's thread: a trace's parse and a receipt's audit run in a Web
//! Worker, with progress and a cancel that really stops them (the worker is terminated, not
//! asked).
//!
//! The worker runs the page's own wasm module — no second bundle. The page's `main` mounts the
//! app only where there is a `window`; in a worker it does nothing, and the worker calls the
//! exported [`worker_audit_receipt`] or [`worker_ingest_trace`]. While the page loads,
//! [`prepare`] reads the wasm-bindgen glue Trunk preloaded (one same-origin GET, usually from
//! the cache) into a `blob:` URL; each worker imports the glue from there and instantiates the
//! page's already compiled `WebAssembly.Module`, sent with every job. So a worker starts with
//! the network gone — after a Cancel terminated the last one, say — and under any path a site
//! is published at. Where a worker cannot start (no module workers, no preload links)
//! the job runs on the page's thread instead, with the same callbacks — same numbers, and the
//! trace reader still yields between slices.
//!
//! A parsed trace comes back as its `TraceMeta` (JSON) and its columns (typed arrays,
//! transferred, not copied), and is rebuilt with `Trace::new`, which re-checks that its counts
//! reconcile: the page holds a trace only if core would have built it. Its arrival gaps
//! (`ArrivalGaps`, JSON) follow in a second answer, read by the worker while the page rebuilds
//! the trace and reads its regime.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{BigInt64Array, BigUint64Array, Uint32Array};
use leptos::task::spawn_local;
use loadproof_core::audit::Policy;
use loadproof_core::trace::{ArrivalGaps, PrefixBlocks, Requests, Trace, TraceMeta};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::ingest::ReadError;
use crate::views::receipt::model::{self as receipt_model, ReceiptModel, STAGES, Verdict};

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
    /// A trace job's helpers: the hash worker (it closes itself when done) and the worker
    /// reading the second half (back to the pool when done).
    helpers: Rc<RefCell<Vec<web_sys::Worker>>>,
}

impl Job {
    fn new() -> Job {
        Job {
            cancelled: Rc::new(Cell::new(false)),
            worker: Rc::new(RefCell::new(None)),
            helpers: Rc::new(RefCell::new(Vec::new())),
        }
    }

    /// Stops the job (terminating its workers); its callbacks never run again.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        if let Some(worker) = self.worker.borrow_mut().take() {
            worker.terminate();
        }
        for helper in self.helpers.borrow_mut().drain(..) {
            helper.terminate();
        }
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.get()
    }

    /// True while the job runs in a Web Worker (false: on the page's thread, or finished).
    pub fn off_thread(&self) -> bool {
        self.worker.borrow().is_some()
    }
}

// ---------------------------------------------------------------------------------------------
// Receipts

/// Audits the receipt in `blob` (reported under `source`) against `policy`, off the page's
/// thread (the policy travels to the worker as its JSON).
pub fn audit_receipt(
    source: String,
    policy: &Policy,
    blob: web_sys::Blob,
    on_progress: impl Fn(Progress) + 'static,
    on_verdict: impl Fn(Verdict) + 'static,
    on_done: impl FnOnce(Result<ReceiptModel, String>) + 'static,
) -> Job {
    let job = Job::new();
    let on_progress: Rc<dyn Fn(Progress)> = Rc::new(on_progress);
    let progress = on_progress.clone();
    let on_verdict: Rc<dyn Fn(Verdict)> = Rc::new(on_verdict);
    let verdict = on_verdict.clone();
    let name = source.clone();
    let policy_json = policy.to_json();
    let started = start(
        &job,
        "receipt",
        &source,
        &[("policy", JsValue::from_str(&policy_json))],
        &blob,
        move |data| {
            if let Some(stage) = field(data, "stage").and_then(|v| v.as_f64()) {
                progress(if stage < 0.0 {
                    Progress::read()
                } else {
                    Progress::stage(stage as usize)
                });
            }
            // The verdict ahead of the model; one that does not decode is simply not shown
            // early (the model says everything again).
            if let Some(json) = field(data, "verdict").and_then(|v| v.as_string())
                && let Ok(v) = serde_json::from_str::<Verdict>(&json)
            {
                verdict(v);
            }
        },
        move |result: Result<JsValue, String>| {
            crate::ingest::mark("model-received");
            result.and_then(|data| {
                publish_timing(&data);
                field(&data, "ok")
                    .and_then(|v| v.dyn_into::<js_sys::Array>().ok())
                    .ok_or_else(|| format!("{name}: the worker's answer held no receipt"))
            })
        },
    );
    match started {
        Ok(done) => {
            let cancelled = job.cancelled.clone();
            let name = source.clone();
            done.set(Box::new(move |parts: Result<js_sys::Array, String>| {
                spawn_local(async move {
                    let model = match parts {
                        Ok(parts) => decode_model(&name, &parts).await,
                        Err(e) => Err(e),
                    };
                    crate::ingest::mark("model-decoded");
                    if !cancelled.get() {
                        on_done(model);
                    }
                });
            }));
        }
        Err(()) => {
            let cancelled = job.cancelled.clone();
            let policy = policy.clone();
            spawn_local(async move {
                on_progress(Progress::read());
                let bytes = match crate::site::read_blob(&blob).await {
                    Ok(b) => b,
                    Err(e) => {
                        if !cancelled.get() {
                            on_done(Err(format!(
                                "{source}: the browser could not read the file: {e}"
                            )));
                        }
                        return;
                    }
                };
                if cancelled.get() {
                    return;
                }
                let result = build_hashing(
                    &source,
                    &bytes,
                    &policy,
                    &mut |i| on_progress(Progress::stage(i)),
                    &mut |v| on_verdict(v.clone()),
                )
                .await;
                if !cancelled.get() {
                    on_done(result);
                }
            });
        }
    }
    job
}

/// Runs in the worker: the receipt's model as JSON in five parts ([`model_parts`]), audited
/// against `policy` (its JSON, read by core's `Policy::from_json`). `on_stage(i)` is called
/// as stage `STAGES[i]` begins. An `Err` names the file and what is wrong.
#[wasm_bindgen]
pub async fn worker_audit_receipt(
    source: String,
    policy: String,
    bytes: Vec<u8>,
    on_stage: js_sys::Function,
    on_verdict: js_sys::Function,
) -> Result<js_sys::Array, JsValue> {
    let policy = Policy::from_json(policy.as_bytes())
        .map_err(|e| JsValue::from_str(&format!("the audit policy: {e}")))?;
    let model = build_hashing(
        &source,
        &bytes,
        &policy,
        &mut |i| {
            let _ = on_stage.call1(&JsValue::NULL, &JsValue::from_f64(i as f64));
        },
        &mut |verdict| {
            if let Ok(json) = serde_json::to_string(verdict) {
                let _ = on_verdict.call1(&JsValue::NULL, &JsValue::from_str(&json));
            }
        },
    )
    .await
    .map_err(|e| JsValue::from_str(&e))?;
    let parts = model_parts(model).map_err(|e| JsValue::from_str(&format!("{source}: {e}")))?;
    Ok(parts.iter().map(|p| JsValue::from_str(p)).collect())
}

/// The model as JSON in five parts: the model without its four long parts (the evidence
/// blocks, the timeline, the latency samples, the `/metrics` series), then each of those.
/// The page decodes them a task apiece ([`decode_model`]): decoding a ten-minute vLLM
/// receipt's model in one go held a frame for ~70 ms.
fn model_parts(mut model: ReceiptModel) -> Result<[String; 5], serde_json::Error> {
    let blocks = serde_json::to_string(&std::mem::take(&mut model.blocks))?;
    let timeline = serde_json::to_string(&std::mem::take(&mut model.timeline))?;
    let latency = serde_json::to_string(&std::mem::take(&mut model.latency))?;
    let metrics = serde_json::to_string(&std::mem::take(&mut model.metrics))?;
    Ok([
        serde_json::to_string(&model)?,
        blocks,
        timeline,
        latency,
        metrics,
    ])
}

/// Rebuilds the model from [`model_parts`], yielding to the event loop between parts.
async fn decode_model(name: &str, parts: &js_sys::Array) -> Result<ReceiptModel, String> {
    let part = |i: u32| {
        parts
            .get(i)
            .as_string()
            .ok_or_else(|| format!("{name}: the worker's answer lacks part {i} of the receipt"))
    };
    let bad = |e: serde_json::Error| format!("{name}: the worker's answer did not decode: {e}");
    let mut model: ReceiptModel = serde_json::from_str(&part(0)?).map_err(bad)?;
    crate::ingest::mark("decoded-0");
    crate::ingest::yield_to_event_loop().await;
    model.blocks = serde_json::from_str(&part(1)?).map_err(bad)?;
    crate::ingest::mark("decoded-1");
    crate::ingest::yield_to_event_loop().await;
    model.timeline = serde_json::from_str(&part(2)?).map_err(bad)?;
    crate::ingest::mark("decoded-2");
    crate::ingest::yield_to_event_loop().await;
    model.latency = serde_json::from_str(&part(3)?).map_err(bad)?;
    crate::ingest::mark("decoded-3");
    crate::ingest::yield_to_event_loop().await;
    model.metrics = serde_json::from_str(&part(4)?).map_err(bad)?;
    Ok(model)
}

/// [`receipt_model::build`] with the scrape bodies hashed by WebCrypto while the audit reads
/// them, where the browser offers it ([`crate::digests`]); the same model either way.
/// `on_verdict` is handed the audit as soon as it is done, before the model is built.
async fn build_hashing(
    source: &str,
    bytes: &[u8],
    policy: &Policy,
    on_stage: &mut dyn FnMut(usize),
    on_verdict: &mut dyn FnMut(&Verdict),
) -> Result<ReceiptModel, String> {
    on_stage(0);
    let receipt = receipt_model::read(source, bytes)?;
    // Stage 1 (digests) and 2 (audit) are one pass here.
    on_stage(1);
    on_stage(2);
    let (audited, digests) = match crate::digests::audit(&receipt, policy).await {
        Some((audited, digests)) => (audited, Some(digests)),
        None => (loadproof_core::audit::audit_read(&receipt, policy), None),
    };
    Ok(receipt_model::build_from(
        source,
        bytes,
        &receipt,
        audited,
        digests.as_ref(),
        on_stage,
        on_verdict,
    ))
}

/// Publishes the worker's own timings as `window.loadproofWorkerTiming` (`read_ms`: the
/// file into the worker; `build_ms`: parse, digests, audit and series in wasm; `stage_ms`:
/// `[stage, ms into the build]` as each stage began), so
/// `web/e2e/perf_receipt.mjs` can report where a load's time goes.
fn publish_timing(data: &JsValue) {
    let timing = js_sys::Object::new();
    for key in ["read_ms", "build_ms", "stage_ms"] {
        if let Some(v) = field(data, key) {
            let _ = js_sys::Reflect::set(&timing, &JsValue::from_str(key), &v);
        }
    }
    crate::publish::publish("loadproofWorkerTiming", &timing);
}

// ---------------------------------------------------------------------------------------------
// Traces

/// Parses the trace in `blob` off the page's thread, through `mapping` (the exact bytes of a
/// `loadproof.trace-schema/v1` document) when given. `on_progress(bytes_done, bytes_total)`.
/// Errors are core's (line, field, columns seen) or the browser's, as [`ReadError`] shows them.
///
/// The mapping travels as its bytes and each worker builds the `TraceSchema` from them, so the
/// sha256 the report carries is of the bytes the user gave, as the CLI's `--schema` hashes.
///
/// Where the page has WebCrypto, a second, script-only worker hashes the file while the first
/// parses it, and hands the digest over on a `MessageChannel` of their own: on two cores the
/// hash then costs no time (it held the parsing thread ~0.3 s on 5M rows).
///
/// `on_trace` is handed the trace a task after it is rebuilt, while the worker still reads its
/// gaps (the view reads the regime then; not called if the gaps came first); `on_done` gets it
/// with `ArrivalGaps::of` it, read in the worker, or here where the job ran on the page's
/// thread.
///
/// `compressed`: the file's first bytes name a codec. It is then read as a stream, never in
/// halves (a stream cannot be cut at its middle); the hash worker's digest is the file's as
/// given, and the content is hashed as it is parsed.
pub fn ingest_trace(
    blob: web_sys::Blob,
    compressed: bool,
    mapping: Option<std::sync::Arc<[u8]>>,
    companions: crate::ingest::Companions,
    on_progress: impl Fn(f64, f64) + 'static,
    on_trace: impl FnOnce(&Trace) + 'static,
    on_done: impl FnOnce(Result<(Trace, ArrivalGaps), String>) + 'static,
) -> Job {
    let job = Job::new();
    let on_progress: Rc<dyn Fn(f64, f64)> = Rc::new(on_progress);
    let on_trace: OnTrace = Rc::new(RefCell::new(Some(Box::new(on_trace))));
    // The trace rebuilt from the worker's first answer, and the worker's marks with it, held
    // until its gaps come in the second.
    let rebuilt: Rc<RefCell<Option<Result<Trace, String>>>> = Rc::new(RefCell::new(None));
    let first_marks: Rc<RefCell<Option<JsValue>>> = Rc::new(RefCell::new(None));
    let total = blob.size();
    // Bytes done by the first worker and by the second-half worker, shown as one bar.
    let done_by = Rc::new(Cell::new((0.0, 0.0)));
    let mut fields: Vec<(&str, JsValue)> = Vec::new();
    let mapping_js = mapping
        .as_deref()
        .map(|bytes| JsValue::from(js_sys::Uint8Array::from(bytes)));
    if let Some(m) = &mapping_js {
        fields.push(("mapping", m.clone()));
    }
    let companions_js = companions_to_js(&companions);
    fields.push(("companions", companions_js.clone()));
    if let Some(port) = start_hasher(&job, &blob) {
        fields.push(("port", port.into()));
        if !compressed && total >= crate::halves::HALVES_MIN_BYTES && halves_wanted() {
            let mid = crate::halves::midpoint(total);
            let (progress, done_by) = (on_progress.clone(), done_by.clone());
            let second = move |done: f64| {
                let (first, _) = done_by.get();
                done_by.set((first, done));
                progress(first + done, total);
            };
            let inputs = (mapping_js.as_ref(), &companions_js);
            if let Some(port) = start_second_half(&job, &blob, mid, inputs, second) {
                fields.push(("halfPort", port.into()));
                fields.push(("mid", JsValue::from_f64(mid)));
            }
        }
    }
    let progress = on_progress.clone();
    let (trace_slot, gaps_slot) = (rebuilt.clone(), rebuilt);
    let (marks_slot, more_marks) = (first_marks.clone(), first_marks);
    let regime_reader = on_trace.clone();
    let started = start(
        &job,
        "trace",
        "",
        &fields,
        &blob,
        move |data| {
            // The first answer, a step of the job: the trace's columns. Rebuilt now, and
            // handed to `on_trace` a task later (the browser paints in between: the two in one
            // task held a frame for both) while the worker reads the gaps. Should the gaps come
            // first, `on_trace` is not called and the view reads the regime with the report.
            if field(data, "trace").is_some() {
                crate::ingest::mark("trace-received");
                if let Some(marks) = field(data, "marks") {
                    crate::publish::publish("loadproofWorkerMarks", &marks);
                    *marks_slot.borrow_mut() = Some(marks);
                }
                let trace = trace_from_parts(data);
                crate::ingest::mark("trace-rebuilt");
                *trace_slot.borrow_mut() = Some(trace);
                let (slot, reader) = (trace_slot.clone(), regime_reader.clone());
                spawn_local(async move {
                    crate::ingest::yield_to_event_loop().await;
                    if let Some(Ok(trace)) = slot.borrow().as_ref()
                        && let Some(read_regime) = reader.borrow_mut().take()
                    {
                        read_regime(trace);
                    }
                });
                return;
            }
            if let (Some(done), Some(total)) = (
                field(data, "done").and_then(|v| v.as_f64()),
                field(data, "total").and_then(|v| v.as_f64()),
            ) {
                let (_, second) = done_by.get();
                done_by.set((done, second));
                progress((done + second).min(total), total);
            }
        },
        move |result: Result<JsValue, String>| {
            crate::ingest::mark("gaps-received");
            let data = result?;
            let trace = gaps_slot
                .borrow_mut()
                .take()
                .unwrap_or_else(|| Err("the worker's answer held no trace".to_owned()))?;
            if let (Some(first), Some(more)) = (
                more_marks.borrow_mut().take(),
                field(&data, "marks").and_then(|m| m.dyn_into::<js_sys::Array>().ok()),
            ) && let Ok(first) = first.dyn_into::<js_sys::Array>()
            {
                crate::publish::publish("loadproofWorkerMarks", &first.concat(&more));
            }
            // Gaps that do not decode (they always should: the same bundle wrote them) are
            // read again here rather than failing the load: the same numbers either way.
            let gaps = field(&data, "gaps")
                .and_then(|g| g.as_string())
                .and_then(|json| serde_json::from_str::<ArrivalGaps>(&json).ok())
                .unwrap_or_else(|| ArrivalGaps::of(&trace));
            Ok((trace, gaps))
        },
    );
    match started {
        Ok(done) => done.set(Box::new(on_done)),
        Err(()) => {
            // No parsing worker after all: the page's thread hashes as it parses, so a hash
            // worker already started is not needed.
            for helper in job.helpers.borrow_mut().drain(..) {
                helper.terminate();
            }
            let cancelled = job.cancelled.clone();
            spawn_local(async move {
                let live = cancelled.clone();
                let result = match crate::ingest::options_for(mapping.as_deref(), &companions) {
                    Ok(opts) => {
                        crate::gunzip::ingest_any(
                            &blob,
                            None,
                            opts,
                            move |d, t| on_progress(d, t),
                            move || !live.get(),
                        )
                        .await
                    }
                    Err(e) => Err(ReadError::Browser(e)),
                };
                if cancelled.get() {
                    return;
                }
                match result {
                    Ok(trace) => {
                        if let Some(read_regime) = on_trace.borrow_mut().take() {
                            read_regime(&trace);
                        }
                        let gaps = ArrivalGaps::of(&trace);
                        on_done(Ok((trace, gaps)));
                    }
                    Err(ReadError::Superseded) => {}
                    Err(err) => on_done(Err(err.to_string())),
                }
            });
        }
    }
    job
}

/// Runs in the worker: reads and parses the trace (progress as `on_progress(done, total)`),
/// and answers `{ meta, arrival, input, output, session?, offsets?, ids? }` — the meta as
/// JSON, the columns as typed arrays the worker script transfers — keeping the trace for
/// [`worker_trace_gaps`], which the script calls once the columns are posted.
///
/// `digest`, when not `undefined`: a promise of `{ digest, bytes }` from the hash worker (the
/// file's SHA-256 and how many bytes it hashed); without it the file is hashed here.
///
/// `shard`, when not `undefined` (with `digest`): a promise of the second half's rows from the
/// worker reading `mid..` ([`worker_read_second_half`]); this worker then parses the first
/// half and joins them ([`crate::halves`]).
///
/// `mapping`: the bytes of the user's mapping, read through as the CLI's `--schema` reads;
/// `companions`: RAGPulse's companion files given with the trace ([`companions_to_js`]).
#[wasm_bindgen]
pub async fn worker_ingest_trace(
    blob: web_sys::Blob,
    on_progress: js_sys::Function,
    digest: JsValue,
    shard: JsValue,
    mid: f64,
    mapping: Option<Vec<u8>>,
    companions: JsValue,
) -> Result<JsValue, JsValue> {
    let opts = crate::ingest::options_for(mapping.as_deref(), &companions_from_js(&companions))
        .map_err(|e| JsValue::from_str(&e))?;
    let digest = digest.dyn_into::<js_sys::Promise>().ok();
    let shard = shard.dyn_into::<js_sys::Promise>().ok();
    let progress = |done: f64, total: f64| {
        let _ = on_progress.call2(
            &JsValue::NULL,
            &JsValue::from_f64(done),
            &JsValue::from_f64(total),
        );
    };
    let trace = match (digest, shard) {
        (Some(digest), Some(shard)) => {
            crate::halves::read_first_half(&blob, mid, shard, digest, opts, progress).await
        }
        (digest, _) => crate::gunzip::ingest_any(&blob, digest, opts, progress, || true).await,
    }
    .map_err(|e| JsValue::from_str(&e.to_string()))?;
    let meta =
        serde_json::to_string(trace.meta()).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let requests = trace.requests();
    let out = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| {
        let _ = js_sys::Reflect::set(&out, &JsValue::from_str(k), v);
    };
    set("meta", &JsValue::from_str(&meta));
    set(
        "arrival",
        &BigInt64Array::from(requests.arrival_ns.as_slice()),
    );
    set(
        "input",
        &Uint32Array::from(requests.input_tokens.as_slice()),
    );
    set(
        "output",
        &Uint32Array::from(requests.output_tokens.as_slice()),
    );
    if let Some(session) = &requests.session {
        set("session", &Uint32Array::from(session.as_slice()));
    }
    if let Some(prefix) = &requests.prefix {
        set("offsets", &BigUint64Array::from(prefix.offsets.as_slice()));
        set("ids", &BigUint64Array::from(prefix.ids.as_slice()));
    }
    // The columns above are copies; the trace stays here for `worker_trace_gaps`.
    PARSED.with(|p| *p.borrow_mut() = Some(trace));
    Ok(out.into())
}

thread_local! {
    /// The trace this worker last parsed, until [`worker_trace_gaps`] reads its gaps.
    static PARSED: RefCell<Option<Trace>> = const { RefCell::new(None) };
}

/// Runs in the worker once the trace's columns are posted: `ArrivalGaps::of` the trace
/// [`worker_ingest_trace`] parsed, as JSON, and the trace dropped. The gaps do not depend on
/// the window and were 2/3 of the report's time on the page's thread (~0.1 s of 5M rows);
/// here they overlap the page's rebuilding the trace and reading its regime.
#[wasm_bindgen]
pub fn worker_trace_gaps() -> Result<String, JsValue> {
    let trace = PARSED
        .with(|p| p.borrow_mut().take())
        .ok_or_else(|| JsValue::from_str("the worker holds no trace to read the gaps of"))?;
    let gaps = ArrivalGaps::of(&trace);
    crate::ingest::mark("gaps-computed");
    serde_json::to_string(&gaps).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Runs in the second-half worker: the rows of the file from the line end after `mid` on, as
/// [`crate::halves::shard_to_message`] writes them (progress as `on_progress(done, total)`).
#[wasm_bindgen]
pub async fn worker_read_second_half(
    blob: web_sys::Blob,
    mid: f64,
    on_progress: js_sys::Function,
    mapping: Option<Vec<u8>>,
    companions: JsValue,
) -> Result<JsValue, JsValue> {
    let opts = crate::ingest::options_for(mapping.as_deref(), &companions_from_js(&companions))
        .map_err(|e| JsValue::from_str(&e))?;
    let shard = crate::halves::read_second_half(&blob, mid, opts, |done, total| {
        let _ = on_progress.call2(
            &JsValue::NULL,
            &JsValue::from_f64(done),
            &JsValue::from_f64(total),
        );
    })
    .await
    .map_err(|e| JsValue::from_str(&e.to_string()))?;
    crate::halves::shard_to_message(shard).map_err(|e| JsValue::from_str(&e))
}

/// The companion files as they cross to a worker: an array of `{ name, bytes }`.
fn companions_to_js(companions: &[(String, Vec<u8>)]) -> JsValue {
    let out = js_sys::Array::new();
    for (name, bytes) in companions {
        let entry = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&entry, &"name".into(), &JsValue::from_str(name));
        let _ = js_sys::Reflect::set(
            &entry,
            &"bytes".into(),
            &js_sys::Uint8Array::from(bytes.as_slice()),
        );
        out.push(&entry);
    }
    out.into()
}

/// [`companions_to_js`] read back in the worker; anything else is no companions.
fn companions_from_js(value: &JsValue) -> Vec<(String, Vec<u8>)> {
    let Some(list) = value.dyn_ref::<js_sys::Array>() else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|entry| {
            let name = field(&entry, "name")?.as_string()?;
            let bytes = field(&entry, "bytes")?
                .dyn_into::<js_sys::Uint8Array>()
                .ok()?;
            Some((name, bytes.to_vec()))
        })
        .collect()
}

/// Starts a worker reading the second half of `blob` from `mid` (see [`crate::halves`]) and
/// returns the port on which the first worker receives `{ shard }` or `{ err }`, relayed by
/// the page so that a worker that dies still answers. `inputs`: the mapping's bytes (a
/// `Uint8Array`) and the companion files, the same the first worker reads through.
/// `on_progress(bytes done)`.
fn start_second_half(
    job: &Job,
    blob: &web_sys::Blob,
    mid: f64,
    inputs: (Option<&JsValue>, &JsValue),
    on_progress: impl Fn(f64) + 'static,
) -> Option<web_sys::MessagePort> {
    let (mapping, companions) = inputs;
    let worker = take_worker()?;
    let channel = web_sys::MessageChannel::new().ok()?;
    let to_first = channel.port1();
    let handler: Rc<RefCell<Option<Handler>>> = Rc::new(RefCell::new(None));
    let error_handler: Rc<RefCell<Option<ErrorHandler>>> = Rc::new(RefCell::new(None));
    // Ends the relay once: the answer (or an error) to the first worker, the worker back to
    // the pool when healthy, the handlers dropped from a later task.
    let finish = {
        let (worker, helpers) = (worker.clone(), job.helpers.clone());
        let (handler, error_handler) = (handler.clone(), error_handler.clone());
        let to_first = to_first.clone();
        Rc::new(RefCell::new(Some(move |answer: JsValue, healthy: bool| {
            if let Some(marks) = field(&answer, "marks") {
                crate::publish::publish("loadproofHalfMarks", &marks);
            }
            let transfer = js_sys::Array::new();
            if let Some(shard) = field(&answer, "shard") {
                for key in HALF_COLUMNS {
                    if let Some(buffer) = field(&shard, key).and_then(|c| field(&c, "buffer")) {
                        transfer.push(&buffer);
                    }
                }
            }
            let _ = to_first.post_message_with_transferable(&answer, &transfer);
            worker.set_onmessage(None);
            worker.set_onerror(None);
            let mut helpers = helpers.borrow_mut();
            // Cancelled meanwhile: the job already terminated it.
            if helpers.iter().any(|w| w == &worker) {
                helpers.retain(|w| w != &worker);
                if healthy {
                    give_back(worker);
                } else {
                    worker.terminate();
                }
            }
            spawn_local(async move {
                drop(handler.borrow_mut().take());
                drop(error_handler.borrow_mut().take());
            });
        })))
    };
    let on_message = {
        let finish = finish.clone();
        Handler::new(move |event: web_sys::MessageEvent| {
            let data = event.data();
            if field(&data, "progress").is_some() {
                if let Some(done) = field(&data, "done").and_then(|v| v.as_f64()) {
                    on_progress(done);
                }
                return;
            }
            if let Some(finish) = finish.borrow_mut().take() {
                finish(data, true);
            }
        })
    };
    let on_error = {
        let finish = finish.clone();
        ErrorHandler::new(move |_event: web_sys::Event| {
            let answer = js_sys::Object::new();
            let _ = js_sys::Reflect::set(
                &answer,
                &JsValue::from_str("err"),
                &JsValue::from_str("the second-half worker failed"),
            );
            if let Some(finish) = finish.borrow_mut().take() {
                finish(answer.into(), false);
            }
        })
    };
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    *handler.borrow_mut() = Some(on_message);
    *error_handler.borrow_mut() = Some(on_error);
    let message = js_sys::Object::new();
    for (key, value) in [
        ("kind", JsValue::from_str("half")),
        ("blob", blob.into()),
        ("mid", JsValue::from_f64(mid)),
        ("module", wasm_bindgen::module()),
        ("mapping", mapping.cloned().unwrap_or(JsValue::UNDEFINED)),
        ("companions", companions.clone()),
    ] {
        let _ = js_sys::Reflect::set(&message, &JsValue::from_str(key), &value);
    }
    if worker.post_message(&message).is_err() {
        worker.set_onmessage(None);
        worker.set_onerror(None);
        worker.terminate();
        return None;
    }
    job.helpers.borrow_mut().push(worker);
    Some(channel.port2())
}

/// The typed-array columns of a second half's answer (their buffers are transferred).
const HALF_COLUMNS: [&str; 9] = [
    "arrival", "input", "output", "excluded", "session", "names", "ends", "offsets", "ids",
];

/// Cores from which a large trace is read in halves: each half's parse, the hash worker and
/// the page share them. On this project's 2-core machine the halves and one worker were even
/// within its noise (one worker / two: 0.95–1.11× over alternated runs on 5M rows,
/// `web/e2e/perf.mjs --one-worker`); with more cores each half has one of its own.
const HALVES_MIN_CORES: f64 = 2.0;

/// Whether a large trace is read in halves: with [`HALVES_MIN_CORES`] cores, or as the page
/// was told (`window.loadproofHalves = true` or `false`: the browser tests read in halves on
/// any machine, and `web/e2e/perf.mjs` times one worker against two).
fn halves_wanted() -> bool {
    let told = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("loadproofHalves"))
        .ok()
        .and_then(|v| v.as_bool());
    told.unwrap_or_else(|| cores() >= HALVES_MIN_CORES)
}

/// Logical cores the browser reports (1 where it does not say).
fn cores() -> f64 {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("navigator"))
        .ok()
        .and_then(|n| js_sys::Reflect::get(&n, &JsValue::from_str("hardwareConcurrency")).ok())
        .and_then(|c| c.as_f64())
        .unwrap_or(1.0)
}

/// Runs in a worker as it starts: optimized code for the hot paths ([`crate::warm`]).
#[wasm_bindgen]
pub fn worker_warm_up() {
    crate::warm::warm_up();
}

/// Rebuilds a trace from the worker's answer through `Trace::new` (counts re-checked).
fn trace_from_parts(data: &JsValue) -> Result<Trace, String> {
    let part = |k: &str| field(data, "trace").and_then(|t| field(&t, k));
    let meta = part("meta")
        .and_then(|v| v.as_string())
        .ok_or("the worker's answer held no trace")?;
    let meta: TraceMeta = serde_json::from_str(&meta)
        .map_err(|e| format!("the worker's trace did not decode: {e}"))?;
    let typed = |k: &str| part(k).filter(|v| !v.is_undefined() && !v.is_null());
    let arrival = typed("arrival")
        .and_then(|v| v.dyn_into::<BigInt64Array>().ok())
        .ok_or("the worker's trace has no arrival column")?;
    let input = typed("input")
        .and_then(|v| v.dyn_into::<Uint32Array>().ok())
        .ok_or("the worker's trace has no input column")?;
    let output = typed("output")
        .and_then(|v| v.dyn_into::<Uint32Array>().ok())
        .ok_or("the worker's trace has no output column")?;
    let session = typed("session")
        .and_then(|v| v.dyn_into::<Uint32Array>().ok())
        .map(|a| a.to_vec());
    let prefix = match (
        typed("offsets").and_then(|v| v.dyn_into::<BigUint64Array>().ok()),
        typed("ids").and_then(|v| v.dyn_into::<BigUint64Array>().ok()),
    ) {
        (Some(offsets), Some(ids)) => Some(PrefixBlocks {
            offsets: offsets.to_vec(),
            ids: ids.to_vec(),
        }),
        _ => None,
    };
    let requests = Requests {
        arrival_ns: arrival.to_vec(),
        input_tokens: input.to_vec(),
        output_tokens: output.to_vec(),
        session,
        prefix,
        // Blocks at their own lengths come only with RAGPulse's companion files, which the
        // page does not take: a plan's input, not the Trace view's.
        sized: None,
    };
    Trace::new(meta, requests).map_err(|e| format!("the worker's trace does not reconcile: {e}"))
}

/// Starts the hash worker on `blob` (see [`ingest_trace`]) and returns the port on which the
/// parsing worker receives `{ digest }` or `{ err }`; `None` where no parsing worker would
/// start, the page has no WebCrypto or the file is over 512 MiB (the parser then hashes the
/// file itself). The page relays the answer, so a hash worker that fails to start still ends
/// the job with an error.
fn start_hasher(job: &Job, blob: &web_sys::Blob) -> Option<web_sys::MessagePort> {
    if WORKER_BROKEN.with(Cell::get) || GLUE.with(|g| g.borrow().is_none()) {
        return None;
    }
    // WebCrypto hashes one buffer of the whole file: past this size the parser streams it
    // through wasm's sha256 instead, as before, rather than ask the browser for gigabytes.
    if blob.size() > crate::ingest::WHOLE_FILE_MAX {
        return None;
    }
    crate::ingest::subtle_crypto()?;
    let url = HASH_SCRIPT.with(|s| s.borrow().clone()).or_else(|| {
        let url = blob_url(HASH_WORKER)?;
        HASH_SCRIPT.with(|s| *s.borrow_mut() = Some(url.clone()));
        Some(url)
    })?;
    let channel = web_sys::MessageChannel::new().ok()?;
    let hasher = web_sys::Worker::new(&url).ok()?;
    let to_parser = channel.port1();
    let relay = to_parser.clone();
    let on_message = Closure::once_into_js(move |event: web_sys::MessageEvent| {
        let _ = relay.post_message(&event.data());
    });
    let on_error = Closure::once_into_js(move |_event: web_sys::Event| {
        let answer = js_sys::Object::new();
        let _ = js_sys::Reflect::set(
            &answer,
            &JsValue::from_str("err"),
            &JsValue::from_str("the hash worker could not start"),
        );
        let _ = to_parser.post_message(&answer);
    });
    hasher.set_onmessage(Some(on_message.unchecked_ref()));
    hasher.set_onerror(Some(on_error.unchecked_ref()));
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &JsValue::from_str("blob"), blob);
    if hasher.post_message(&message).is_err() {
        hasher.terminate();
        return None;
    }
    job.helpers.borrow_mut().push(hasher);
    Some(channel.port2())
}

/// The hash worker: the whole file's SHA-256 by WebCrypto, on a thread of its own.
const HASH_WORKER: &str = r#"self.onmessage = async (event) => {
  try {
    const buffer = await event.data.blob.arrayBuffer();
    const digest = await crypto.subtle.digest('SHA-256', buffer);
    self.postMessage({ digest, bytes: buffer.byteLength }, [digest]);
  } catch (err) {
    self.postMessage({ err: String(err && err.message ? err.message : err) });
  }
  self.close();
};
"#;

// ---------------------------------------------------------------------------------------------
// The worker pool and one job's plumbing

type Handler = Closure<dyn FnMut(web_sys::MessageEvent)>;
type ErrorHandler = Closure<dyn FnMut(web_sys::Event)>;
type Finish<T> = Box<dyn FnOnce(Result<T, String>)>;
/// [`ingest_trace`]'s `on_trace`, taken by whichever path rebuilds the trace first.
type OnTrace = Rc<RefCell<Option<Box<dyn FnOnce(&Trace)>>>>;

/// Where a started job's caller puts its completion callback.
struct DoneSlot<T>(Rc<RefCell<Option<Finish<T>>>>);

impl<T> DoneSlot<T> {
    fn set(&self, done: Finish<T>) {
        *self.0.borrow_mut() = Some(done);
    }
}

/// The value of `key` on a JS object.
fn field(data: &JsValue, key: &str) -> Option<JsValue> {
    js_sys::Reflect::get(data, &JsValue::from_str(key))
        .ok()
        .filter(|v| !v.is_undefined())
}

/// Starts job `kind` on `blob` in a worker (`fields`: more of the job's message, as the
/// receipt audit's `policy`). Messages with `progress` (how far it is, or a part of the answer
/// ahead of the rest: a receipt's verdict, a trace's columns) go to `on_progress`; the final
/// `{ ok… }` or `{ err }` is decoded by `decode` and handed to the callback the caller puts in
/// the returned slot. `Err(())`: no worker here, run it on the page's thread.
fn start<T: 'static>(
    job: &Job,
    kind: &str,
    source: &str,
    fields: &[(&str, JsValue)],
    blob: &web_sys::Blob,
    on_progress: impl Fn(&JsValue) + 'static,
    decode: impl FnOnce(Result<JsValue, String>) -> Result<T, String> + 'static,
) -> Result<DoneSlot<T>, ()> {
    JOB_STARTED.with(|j| j.set(true));
    let worker = take_worker().ok_or(())?;
    let done: Rc<RefCell<Option<Finish<T>>>> = Rc::new(RefCell::new(None));
    // The handlers own themselves through these cells; they are dropped after the job ends,
    // from a later task (a closure must not be dropped while it runs).
    let handler: Rc<RefCell<Option<Handler>>> = Rc::new(RefCell::new(None));
    let error_handler: Rc<RefCell<Option<ErrorHandler>>> = Rc::new(RefCell::new(None));
    let mut decode = Some(decode);

    // Ends the job once: detaches the handlers, returns a healthy worker to the pool, reports.
    let finish = {
        let cancelled = job.cancelled.clone();
        let slot = job.worker.clone();
        let helpers = job.helpers.clone();
        let done = done.clone();
        let handler = handler.clone();
        let error_handler = error_handler.clone();
        Rc::new(RefCell::new(
            move |result: Result<JsValue, String>, healthy: bool| {
                if let Some(worker) = slot.borrow_mut().take() {
                    worker.set_onmessage(None);
                    worker.set_onerror(None);
                    if healthy {
                        give_back(worker);
                    } else {
                        worker.terminate();
                    }
                }
                // Helpers still running (the parse failed first) are not needed.
                for helper in helpers.borrow_mut().drain(..) {
                    helper.terminate();
                }
                let callback = done.borrow_mut().take();
                if let (Some(callback), Some(decode)) = (callback, decode.take())
                    && !cancelled.get()
                {
                    callback(decode(result));
                }
                let handler = handler.clone();
                let error_handler = error_handler.clone();
                spawn_local(async move {
                    drop(handler.borrow_mut().take());
                    drop(error_handler.borrow_mut().take());
                });
            },
        ))
    };

    let cancelled = job.cancelled.clone();
    let on_message = {
        let finish = finish.clone();
        Handler::new(move |event: web_sys::MessageEvent| {
            if cancelled.get() {
                return;
            }
            let data = event.data();
            if field(&data, "progress").is_some() {
                on_progress(&data);
                return;
            }
            let result = match field(&data, "err") {
                Some(err) => Err(err
                    .as_string()
                    .unwrap_or_else(|| "the worker failed without a message".to_owned())),
                None => Ok(data),
            };
            (finish.borrow_mut())(result, true);
        })
    };
    // A worker whose script or wasm failed to load reports through `onerror`: later jobs run
    // on the page's thread, and this one says so rather than waiting forever.
    let on_error = {
        let finish = finish.clone();
        let source = source.to_owned();
        ErrorHandler::new(move |_event: web_sys::Event| {
            WORKER_BROKEN.with(|b| b.set(true));
            let name = if source.is_empty() {
                "the file"
            } else {
                source.as_str()
            };
            (finish.borrow_mut())(
                Err(format!(
                    "{name}: the background worker could not start; load the file again to read it on the page's thread"
                )),
                false,
            );
        })
    };
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    *handler.borrow_mut() = Some(on_message);
    *error_handler.borrow_mut() = Some(on_error);

    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(
        &message,
        &JsValue::from_str("kind"),
        &JsValue::from_str(kind),
    );
    let _ = js_sys::Reflect::set(
        &message,
        &JsValue::from_str("name"),
        &JsValue::from_str(source),
    );
    let _ = js_sys::Reflect::set(&message, &JsValue::from_str("blob"), blob);
    for (key, value) in fields {
        let _ = js_sys::Reflect::set(&message, &JsValue::from_str(key), value);
    }
    // The compiled module the page runs: the worker instantiates it without fetching anything.
    let _ = js_sys::Reflect::set(
        &message,
        &JsValue::from_str("module"),
        &wasm_bindgen::module(),
    );
    *job.worker.borrow_mut() = Some(worker.clone());
    // Ports (the hash worker's channel) are transferred, not cloned.
    let transfer = js_sys::Array::new();
    for (_, value) in fields {
        if value.has_type::<web_sys::MessagePort>() {
            transfer.push(value);
        }
    }
    if worker
        .post_message_with_transfer(&message, &transfer)
        .is_err()
    {
        // Could not hand the file over: detach, and let the caller run it here.
        WORKER_BROKEN.with(|b| b.set(true));
        (finish.borrow_mut())(Err(String::new()), false);
        return Err(());
    }
    Ok(DoneSlot(done))
}

thread_local! {
    /// Idle workers, ready for the next job (a worker's wasm is instantiated once).
    static IDLE: RefCell<Vec<web_sys::Worker>> = const { RefCell::new(Vec::new()) };
    /// The page's wasm-bindgen glue as a `blob:` URL ([`prepare`]).
    static GLUE: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The worker's script URL (`blob:`), made once.
    static SCRIPT: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The hash worker's script URL (`blob:`), made once.
    static HASH_SCRIPT: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Set when a worker failed to start: later jobs run on the page's thread.
    static WORKER_BROKEN: Cell<bool> = const { Cell::new(false) };
    /// Set by the first job: the warm-up is then not started ([`schedule_tier_up`]).
    static JOB_STARTED: Cell<bool> = const { Cell::new(false) };
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
    new_worker()
}

/// A new worker running the page's worker script; `None` before the glue is ready.
fn new_worker() -> Option<web_sys::Worker> {
    let glue = GLUE.with(|g| g.borrow().clone())?;
    let url = SCRIPT.with(|s| s.borrow().clone()).or_else(|| {
        let url = worker_script_url(&glue)?;
        SCRIPT.with(|s| *s.borrow_mut() = Some(url.clone()));
        Some(url)
    })?;
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    options.set_name("loadproof");
    web_sys::Worker::new_with_options(&url, &options).ok()
}

/// The worker's script as a `blob:` URL importing the glue from `glue` (a `blob:` URL too).
fn worker_script_url(glue: &str) -> Option<String> {
    let columns = serde_json::to_string(&HALF_COLUMNS).ok()?;
    let script = format!(
        r#"import init, {{ worker_audit_receipt, worker_ingest_trace, worker_read_second_half, worker_trace_gaps, worker_warm_up }} from {glue:?};
let ready = null;
self.onmessage = async (event) => {{
  const {{ kind, name, blob, module, policy, port, halfPort, mid, mapping, companions }} = event.data;
  try {{
    // The hash worker's answer, on the port the page gave both: {{ digest }} or {{ err }}.
    const digest = port ? new Promise((resolve, reject) => {{
      port.onmessage = (m) => {{ port.close(); if (m.data.digest) resolve(m.data); else reject(m.data.err); }};
    }}) : undefined;
    // Awaited by the parser once it is done; a failure before then is not unhandled.
    if (digest) digest.catch(() => {{}});
    // The second half's rows, from the worker reading it, relayed by the page: {{ shard }} or {{ err }}.
    const shard = halfPort ? new Promise((resolve, reject) => {{
      halfPort.onmessage = (m) => {{ halfPort.close(); if (m.data.shard) resolve(m.data.shard); else reject(m.data.err); }};
    }}) : undefined;
    if (shard) shard.catch(() => {{}});
    if (ready === null) ready = init({{ module_or_path: module }}).catch((e) => {{ ready = null; throw e; }});
    await ready;
    if (kind === 'warm') {{ if (event.data.tierUp) {{ worker_warm_up(); self.postMessage({{ warmed: true }}); }} return; }}
    if (kind === 'half') {{
      const shard = await worker_read_second_half(blob, mid, (done, total) => self.postMessage({{ progress: true, done, total }}), mapping, companions);
      const transfer = {columns}.filter((k) => shard[k]).map((k) => shard[k].buffer);
      const marks = performance.getEntriesByType('mark').filter((m) => m.name.startsWith('loadproof:'))
        .map((m) => [m.name.slice(10), performance.timeOrigin + m.startTime]);
      performance.clearMarks();
      self.postMessage({{ shard, marks }}, transfer);
      return;
    }}
    if (kind === 'trace') {{
      const trace = await worker_ingest_trace(blob, (done, total) => self.postMessage({{ progress: true, done, total }}), digest, shard, mid ?? 0, mapping, companions);
      const transfer = ['arrival', 'input', 'output', 'session', 'offsets', 'ids']
        .filter((k) => trace[k]).map((k) => trace[k].buffer);
      // The worker's own marks, on the page's clock (absolute ms), for web/e2e/perf.mjs.
      const marks = performance.getEntriesByType('mark').filter((m) => m.name.startsWith('loadproof:'))
        .map((m) => [m.name.slice(10), performance.timeOrigin + m.startTime]);
      performance.clearMarks();
      // The columns first, as a step of the job: the page rebuilds the trace and reads its
      // regime while this worker reads the arrival gaps, the rest of the report.
      self.postMessage({{ progress: true, trace, marks }}, transfer);
      const gaps = worker_trace_gaps();
      const more = performance.getEntriesByType('mark').filter((m) => m.name.startsWith('loadproof:'))
        .map((m) => [m.name.slice(10), performance.timeOrigin + m.startTime]);
      performance.clearMarks();
      self.postMessage({{ gaps, marks: more }});
      return;
    }}
    self.postMessage({{ progress: true, stage: -1 }});
    const t0 = performance.now();
    const bytes = new Uint8Array(await blob.arrayBuffer());
    const t1 = performance.now();
    const stages = [];
    const json = await worker_audit_receipt(name, policy, bytes, (i) => {{
      stages.push([i, Math.round(performance.now() - t1)]);
      self.postMessage({{ progress: true, stage: i }});
    }}, (verdict) => {{
      stages.push(['verdict', Math.round(performance.now() - t1)]);
      self.postMessage({{ progress: true, verdict }});
    }});
    const t2 = performance.now();
    self.postMessage({{ ok: json, read_ms: t1 - t0, build_ms: t2 - t1, stage_ms: stages }});
  }} catch (err) {{
    self.postMessage({{ err: String(err && err.message ? err.message : err) }});
  }}
}};
"#
    );
    blob_url(&script)
}

/// `text` as a `blob:` URL of a JavaScript module.
fn blob_url(text: &str) -> Option<String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).ok()?;
    web_sys::Url::create_object_url_with_blob(&blob).ok()
}

/// Reads the page's wasm-bindgen glue (named by Trunk's `modulepreload` link) into a `blob:`
/// URL for workers to import. Called once as the page starts; until it is done, or where it
/// fails, jobs run on the page's thread.
pub fn prepare() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    // A single-file page opened from disk has an opaque origin, where Chromium starts no
    // module worker from a `blob:` URL: its jobs run on the page's thread from the start,
    // rather than failing once first.
    if crate::site::is_single_file() {
        return;
    }
    let Some(href) = preload_href(&document, "link[rel=modulepreload][href$='.js']") else {
        return;
    };
    spawn_local(async move {
        let Ok(crate::site::Fetched::Body(bytes)) = crate::site::fetch_bytes(&href).await else {
            return;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return;
        };
        if let Some(url) = blob_url(&text) {
            GLUE.with(|g| *g.borrow_mut() = Some(url));
            warm_workers();
        }
    });
}

/// Starts two idle workers and has them instantiate the module now, so the first file dropped
/// does not wait for them (~0.1 s of the 5M-row load); a large trace uses both, one per half.
fn warm_workers() {
    let workers: Vec<web_sys::Worker> = (0..2).filter_map(|_| take_worker()).collect();
    for worker in workers {
        if worker.post_message(&warm_message(false)).is_ok() {
            give_back(worker);
        } else {
            worker.terminate();
        }
    }
    schedule_tier_up();
}

/// `{ kind: 'warm', tierUp, module }`.
fn warm_message(tier_up: bool) -> js_sys::Object {
    let message = js_sys::Object::new();
    for (key, value) in [
        ("kind", JsValue::from_str("warm")),
        ("tierUp", JsValue::from_bool(tier_up)),
        ("module", wasm_bindgen::module()),
    ] {
        let _ = js_sys::Reflect::set(&message, &JsValue::from_str(key), &value);
    }
    message
}

/// How long after the page is ready the hot paths are warmed up, if no job has started.
const TIER_UP_AFTER_MS: i32 = 1_000;

/// A second after the page is ready, unless a job has started by then, a worker of its own
/// runs the hot paths until they are optimized ([`crate::warm`]) and is terminated: the
/// optimized code stays with the module the page and its workers share, and no job ever waits
/// behind the warm-up or shares a core with it at its start (done at once, it delayed a large
/// receipt's verdict by 0.3–0.6 s on 2 cores).
fn schedule_tier_up() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let run = Closure::once_into_js(move || {
        if JOB_STARTED.with(Cell::get) {
            return;
        }
        let Some(worker) = new_worker() else {
            return;
        };
        let done = worker.clone();
        let on_done = Closure::once_into_js(move |_event: JsValue| done.terminate());
        worker.set_onmessage(Some(on_done.unchecked_ref()));
        if worker.post_message(&warm_message(true)).is_err() {
            worker.terminate();
        }
    });
    let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
        run.unchecked_ref(),
        TIER_UP_AFTER_MS,
    );
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
