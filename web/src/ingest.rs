//! Reading a browser `Blob` into core's `Ingester`, a slice at a time.
//!
//! A trace can be hundreds of megabytes. Reading it whole would hold two copies in memory and
//! freeze the page while it parses, so the file is sliced (`Blob.slice` + `arrayBuffer()`),
//! each slice is pushed to the `Ingester`, and the loop yields to the event loop between
//! slices so the progress bar repaints and clicks still register. All parsing and accounting
//! is core's; this module only moves bytes and reports progress.

use std::fmt;

use js_sys::{Promise, Uint8Array};
use loadproof_core::trace::{CallerFilter, IngestOptions, Ingester, Limits, Trace, TraceError};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Bytes read per slice: large enough that per-slice overhead vanishes, small enough that one
/// slice parses in a few tens of milliseconds.
pub const CHUNK_BYTES: f64 = (4 << 20) as f64;

/// Why a source could not be turned into a trace.
#[derive(Debug)]
pub enum ReadError {
    /// Core refused the bytes (the message names the line and the columns or fields seen).
    Trace(TraceError),
    /// The browser could not read the file.
    Browser(String),
    /// A newer load started; this one stopped early.
    Superseded,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Trace(err) => write!(f, "{err}"),
            ReadError::Browser(msg) => write!(f, "the browser could not read the file: {msg}"),
            ReadError::Superseded => f.write_str("superseded by a newer load"),
        }
    }
}

/// The options the page reads every source with: detect the format, no caller filters,
/// core's standard limits (the same as the CLI's defaults).
pub fn options() -> IngestOptions {
    IngestOptions {
        format: None,
        filter: CallerFilter::default(),
        limits: Limits::STANDARD,
    }
}

/// Ingests bytes already in memory (the synthetic sample).
pub fn ingest_bytes(bytes: &[u8]) -> Result<Trace, TraceError> {
    let mut ingester = Ingester::new(options());
    ingester.push(bytes)?;
    ingester.finish()
}

/// Ingests `blob` slice by slice. `on_progress(bytes_done, bytes_total)` runs after every
/// slice; `is_current()` is checked between slices so a newer load can stop this one.
pub async fn ingest_blob(
    blob: &web_sys::Blob,
    on_progress: impl Fn(f64, f64),
    is_current: impl Fn() -> bool,
) -> Result<Trace, ReadError> {
    let total = blob.size();
    let mut ingester = Ingester::new(options());
    let mut scratch: Vec<u8> = Vec::new();
    let mut offset = 0.0;
    on_progress(offset, total);
    while offset < total {
        let end = (offset + CHUNK_BYTES).min(total);
        let slice = blob
            .slice_with_f64_and_f64(offset, end)
            .map_err(|e| ReadError::Browser(js_text(&e)))?;
        let buffer = JsFuture::from(slice.array_buffer())
            .await
            .map_err(|e| ReadError::Browser(js_text(&e)))?;
        let view = Uint8Array::new(&buffer);
        scratch.resize(view.length() as usize, 0);
        view.copy_to(&mut scratch);
        ingester.push(&scratch).map_err(ReadError::Trace)?;
        offset = end;
        on_progress(offset, total);
        yield_to_event_loop().await;
        if !is_current() {
            return Err(ReadError::Superseded);
        }
    }
    ingester.finish().map_err(ReadError::Trace)
}

/// Resolves on the next macrotask, so the browser can paint and handle input in between.
async fn yield_to_event_loop() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let promise = Promise::new(&mut |resolve, _reject| {
        // If scheduling fails the promise never resolves; resolve at once instead.
        if window
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0)
            .is_err()
        {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// The message of a JavaScript exception, or its string form.
fn js_text(value: &JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}
