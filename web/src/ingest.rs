//! Reading a browser `Blob` into core's `Ingester`, a slice at a time.
//!
//! A trace can be hundreds of megabytes. Parsing it in one go would freeze the page, so it is
//! pushed to the `Ingester` in slices and the loop yields to the event loop every few tens of
//! milliseconds, so the progress bar repaints and clicks still register. Files up to 512 MiB are
//! hashed by the browser's native SHA-256 (WebCrypto), several times faster than wasm: in a
//! second worker while this one parses when the page started one ([`ingest_blob_hashed_by`]),
//! else from one `ArrayBuffer` gathered from the slices; larger files (or a context without
//! WebCrypto) are hashed in wasm as they stream. All parsing and accounting is core's; this
//! module only moves bytes.

use std::fmt;
use std::sync::Arc;

use js_sys::{Promise, Uint8Array};
use loadproof_core::trace::{
    BlockLengths, CallerFilter, IngestOptions, Ingester, Limits, SEGMENTS, Trace, TraceError,
    TraceSchema,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Bytes read per slice on the page's thread: large enough that per-slice overhead vanishes,
/// small enough that one slice parses in a few tens of milliseconds.
pub const CHUNK_BYTES: f64 = (8 << 20) as f64;

/// Bytes read per slice in a worker, where no frame waits on a slice: each `Blob` read is a
/// round trip to the browser's process, and 32 MiB slices read the 5M-row file's 232 MB in
/// about half the time 8 MiB ones took.
pub const WORKER_CHUNK_BYTES: f64 = (32 << 20) as f64;

/// The slice size for the thread this runs on.
pub(crate) fn slice_bytes() -> f64 {
    if js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .is_ok()
    {
        WORKER_CHUNK_BYTES
    } else {
        CHUNK_BYTES
    }
}

/// Why a source could not be turned into a trace.
#[derive(Debug)]
pub enum ReadError {
    /// Core refused the bytes (the message names the line and the columns or fields seen).
    Trace(TraceError),
    /// The browser could not read the file.
    Browser(String),
    /// A newer load started; this one stopped early.
    Superseded,
    /// A compressed file the page could not read whole, or cannot read at all (the message
    /// says why and what reads it).
    Compressed(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Trace(err) => write!(f, "{err}"),
            ReadError::Browser(msg) => write!(f, "the browser could not read the file: {msg}"),
            ReadError::Superseded => f.write_str("superseded by a newer load"),
            ReadError::Compressed(msg) => f.write_str(msg),
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
        block_lengths: None,
        schema: None,
    }
}

/// [`options`], reading through `schema` when the user gave a mapping (as the CLI's
/// `--schema FILE` does).
pub fn options_with(schema: Option<Arc<TraceSchema>>) -> IngestOptions {
    IngestOptions {
        schema,
        ..options()
    }
}

/// RAGPulse's companion files as the user gave them with the trace: (name, bytes).
pub type Companions = Arc<[(String, Vec<u8>)]>;

/// The options a trace is read with: through the user's mapping (as the CLI's `--schema`),
/// and with RAGPulse's companion files when they were given with the trace (the CLI finds them
/// beside it): all five, by their published names, or the reading is refused naming what is
/// missing or wrong.
pub fn options_for(
    mapping: Option<&[u8]>,
    companions: &[(String, Vec<u8>)],
) -> Result<IngestOptions, String> {
    let schema = schema_of(mapping)?;
    let missing: Vec<&str> = SEGMENTS
        .iter()
        .map(|s| s.file)
        .filter(|f| !companions.iter().any(|(name, _)| name == f))
        .collect();
    if !companions.is_empty() && !missing.is_empty() {
        return Err(format!(
            "RAGPulse companion files: {} missing (all five give the blocks' token lengths; give the trace alone to read it without lengths)",
            missing.join(", ")
        ));
    }
    let block_lengths = if companions.is_empty() {
        None
    } else {
        let files: Vec<(&str, &[u8])> = companions
            .iter()
            .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
            .collect();
        Some(Arc::new(
            BlockLengths::from_files(&files)
                .map_err(|e| format!("RAGPulse companion files: {e}"))?,
        ))
    };
    Ok(IngestOptions {
        schema,
        block_lengths,
        ..options()
    })
}

/// A mapping's bytes as the worker builds it: the `TraceSchema` is made from the very bytes
/// the user gave, so its sha256 is the one the CLI reports for the same file. A refusal is
/// worded as the CLI's (`not a trace mapping: field ...`).
pub fn schema_of(mapping: Option<&[u8]>) -> Result<Option<Arc<TraceSchema>>, String> {
    mapping
        .map(|bytes| {
            TraceSchema::from_json(bytes)
                .map(Arc::new)
                .map_err(|e| format!("not a trace mapping: {e}"))
        })
        .transpose()
}

/// Ingests bytes already in memory (the synthetic sample).
pub fn ingest_bytes(bytes: &[u8]) -> Result<Trace, TraceError> {
    let mut ingester = Ingester::new(options());
    ingester.push(bytes)?;
    ingester.finish()
}

/// Files up to this size are read into one `ArrayBuffer` so the browser's native SHA-256
/// (WebCrypto, off the main thread) can hash them while wasm parses; larger ones are streamed
/// slice by slice and hashed in wasm.
pub(crate) const WHOLE_FILE_MAX: f64 = (512u64 << 20) as f64;

/// Parse at most this long before yielding, so the progress bar repaints and clicks register.
const YIELD_EVERY_MS: f64 = 40.0;

/// Ingests `blob`. `on_progress(bytes_done, bytes_total)` runs between slices;
/// `is_current()` is checked between slices so a newer load can stop this one.
pub async fn ingest_blob(
    blob: &web_sys::Blob,
    opts: IngestOptions,
    on_progress: impl Fn(f64, f64),
    is_current: impl Fn() -> bool,
) -> Result<Trace, ReadError> {
    ingest_blob_hashed_by(blob, None, opts, on_progress, is_current).await
}

/// As [`ingest_blob`]; when `digest` is given (a promise of `{ digest, bytes }`: the file's
/// SHA-256 and the bytes hashed, computed on another thread), the file is only parsed here.
/// WebCrypto's digest holds the thread that calls it for the whole file (~0.3 s on 232 MB),
/// so hashing on a second thread is what lets two cores overlap the hash with the parse.
pub async fn ingest_blob_hashed_by(
    blob: &web_sys::Blob,
    digest: Option<Promise>,
    opts: IngestOptions,
    on_progress: impl Fn(f64, f64),
    is_current: impl Fn() -> bool,
) -> Result<Trace, ReadError> {
    let total = blob.size();
    mark("read-start");
    on_progress(0.0, total);
    if let Some(digest) = digest {
        let mut ingester = Ingester::new_unhashed(opts);
        ingester.reserve_for_source_bytes(total as u64);
        read_slices(blob, &mut ingester, None, &on_progress, &is_current).await?;
        return finish_hashed_by(ingester, digest).await;
    }
    if total <= WHOLE_FILE_MAX
        && let Some(subtle) = subtle_crypto()
    {
        return ingest_whole(blob, &subtle, opts, on_progress, is_current).await;
    }
    let mut ingester = Ingester::new(opts);
    let mut scratch: Vec<u8> = Vec::new();
    let mut pacer = Pacer::new();
    let mut offset = 0.0;
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
        pacer
            .breathe(offset, total, &on_progress, &is_current)
            .await?;
    }
    on_progress(total, total);
    ingester.finish().map_err(ReadError::Trace)
}

/// The file's SHA-256 as the hash worker answers `digest` with (`{ digest, bytes }`), in hex,
/// refused unless it hashed the `total` bytes the file has.
pub(crate) async fn hashed_by(digest: Promise, total: f64) -> Result<String, ReadError> {
    let answer = JsFuture::from(digest)
        .await
        .map_err(|e| ReadError::Browser(format!("hashing the file: {}", js_text(&e))))?;
    mark("digest-ready");
    let hashed = js_sys::Reflect::get(&answer, &JsValue::from_str("bytes"))
        .ok()
        .and_then(|v| v.as_f64());
    if hashed != Some(total) {
        return Err(ReadError::Browser(format!(
            "the file changed while it was read: {total} bytes read, {} hashed",
            hashed.map_or_else(|| "?".to_owned(), |b| b.to_string())
        )));
    }
    let digest = js_sys::Reflect::get(&answer, &JsValue::from_str("digest"))
        .map_err(|e| ReadError::Browser(js_text(&e)))?;
    Ok(sha256_of(&digest)?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Ends `ingester` with the digest the hash worker answers `digest` with (`{ digest, bytes }`).
pub(crate) async fn finish_hashed_by(
    ingester: Ingester,
    digest: Promise,
) -> Result<Trace, ReadError> {
    let answer = JsFuture::from(digest)
        .await
        .map_err(|e| ReadError::Browser(format!("hashing the file: {}", js_text(&e))))?;
    mark("digest-ready");
    // The hash worker read the file on its own: its bytes must be as many as were parsed,
    // or the file changed between the two reads and the digest is not of what was read.
    let hashed = js_sys::Reflect::get(&answer, &JsValue::from_str("bytes"))
        .ok()
        .and_then(|v| v.as_f64());
    if hashed != Some(ingester.bytes_seen() as f64) {
        return Err(ReadError::Browser(format!(
            "the file changed while it was read: {} bytes parsed, {} hashed",
            ingester.bytes_seen(),
            hashed.map_or_else(|| "?".to_owned(), |b| b.to_string())
        )));
    }
    let digest = js_sys::Reflect::get(&answer, &JsValue::from_str("digest"))
        .map_err(|e| ReadError::Browser(js_text(&e)))?;
    let trace = ingester
        .finish_with_sha256(sha256_of(&digest)?)
        .map_err(ReadError::Trace);
    mark("trace-ready");
    trace
}

/// The file is read slice by slice, [`READ_AHEAD`] slices ahead of the parser, and each slice
/// is also copied into one whole-file buffer that WebCrypto hashes natively once parsing is
/// done (where no second thread hashes it, [`ingest_blob_hashed_by`]). Reading the file once
/// matters here: a second whole-file read in this thread competes with the slices, and
/// hashing alongside the parse on this thread would stall it.
async fn ingest_whole(
    blob: &web_sys::Blob,
    subtle: &web_sys::SubtleCrypto,
    opts: IngestOptions,
    on_progress: impl Fn(f64, f64),
    is_current: impl Fn() -> bool,
) -> Result<Trace, ReadError> {
    let whole = Uint8Array::new_with_length(blob.size() as u32);
    let mut ingester = Ingester::new_unhashed(opts);
    ingester.reserve_for_source_bytes(blob.size() as u64);
    read_slices(blob, &mut ingester, Some(&whole), &on_progress, &is_current).await?;
    let digest = subtle
        .digest_with_str_and_buffer_source("SHA-256", &whole)
        .map_err(|e| ReadError::Browser(js_text(&e)))?;
    let digest = JsFuture::from(digest)
        .await
        .map_err(|e| ReadError::Browser(js_text(&e)))?;
    mark("digest-ready");
    let trace = ingester
        .finish_with_sha256(sha256_of(&digest)?)
        .map_err(ReadError::Trace);
    mark("trace-ready");
    trace
}

/// Pushes every slice of `blob` to `ingester`, [`READ_AHEAD`] slices read ahead of the
/// parser, copying each into `whole` too when given; marks `parsed` at the end.
async fn read_slices(
    blob: &web_sys::Blob,
    ingester: &mut Ingester,
    whole: Option<&Uint8Array>,
    on_progress: &impl Fn(f64, f64),
    is_current: &impl Fn() -> bool,
) -> Result<(), ReadError> {
    let total = blob.size();
    read_range(
        blob,
        0.0,
        total,
        &mut |bytes| ingester.push(bytes),
        whole,
        on_progress,
        is_current,
    )
    .await?;
    on_progress(total, total);
    mark("parsed");
    Ok(())
}

/// Pushes bytes `start..end` of `blob` to `push` slice by slice, [`READ_AHEAD`] slices read
/// ahead, copying each into `whole` (at its offset in the file) too when given.
/// `on_progress(bytes of the range done, file size)` runs as the pacer allows.
pub(crate) async fn read_range(
    blob: &web_sys::Blob,
    start: f64,
    end: f64,
    push: &mut dyn FnMut(&[u8]) -> Result<(), TraceError>,
    whole: Option<&Uint8Array>,
    on_progress: &impl Fn(f64, f64),
    is_current: &impl Fn() -> bool,
) -> Result<(), ReadError> {
    let total = blob.size();
    let mut scratch: Vec<u8> = Vec::new();
    let mut pacer = Pacer::new();
    let mut offset = start;
    let mut slices = Slices::new(blob, start, end, READ_AHEAD);
    while offset < end {
        let Some(view) = slices.next().await? else {
            break;
        };
        if let Some(whole) = whole {
            whole.set(&view, offset as u32);
        }
        scratch.resize(view.length() as usize, 0);
        view.copy_to(&mut scratch);
        push(&scratch).map_err(ReadError::Trace)?;
        offset += f64::from(view.length());
        pacer
            .breathe(offset - start, total, on_progress, is_current)
            .await?;
    }
    Ok(())
}

/// Bytes `start..end` of `blob`, read in one go (a small slice: a head, a line's end).
pub(crate) async fn read_bytes(
    blob: &web_sys::Blob,
    start: f64,
    end: f64,
) -> Result<Vec<u8>, ReadError> {
    let slice = blob
        .slice_with_f64_and_f64(start, end)
        .map_err(|e| ReadError::Browser(js_text(&e)))?;
    let buffer = JsFuture::from(slice.array_buffer())
        .await
        .map_err(|e| ReadError::Browser(js_text(&e)))?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// A WebCrypto digest (an `ArrayBuffer` or a byte array) as 32 bytes.
fn sha256_of(digest: &JsValue) -> Result<[u8; 32], ReadError> {
    let bytes = Uint8Array::new(digest).to_vec();
    <[u8; 32]>::try_from(bytes.as_slice())
        .map_err(|_| ReadError::Browser("SHA-256 digest is not 32 bytes".to_owned()))
}

/// Slices requested ahead of the one being parsed.
const READ_AHEAD: usize = 2;

/// Starts reading the slice at `offset`, or `None` past the end.
/// The slices of a blob's range in order, `depth` of them requested ahead of the one
/// awaited, so the browser reads while the caller parses (or decompresses).
pub(crate) struct Slices<'b> {
    blob: &'b web_sys::Blob,
    requested: f64,
    end: f64,
    chunk: f64,
    depth: usize,
    ahead: std::collections::VecDeque<Promise>,
}

impl<'b> Slices<'b> {
    /// The slices of `blob` from `start` to `end`, [`slice_bytes`] each.
    pub(crate) fn new(blob: &'b web_sys::Blob, start: f64, end: f64, depth: usize) -> Slices<'b> {
        Slices {
            blob,
            requested: start,
            end,
            chunk: slice_bytes(),
            depth: depth.max(1),
            ahead: std::collections::VecDeque::new(),
        }
    }

    /// The next slice's bytes, `None` past the end.
    pub(crate) async fn next(&mut self) -> Result<Option<Uint8Array>, ReadError> {
        while self.ahead.len() < self.depth
            && let Some(p) = read_slice(self.blob, self.requested, self.end, self.chunk)?
        {
            self.ahead.push_back(p);
            self.requested = (self.requested + self.chunk).min(self.end);
        }
        let Some(pending) = self.ahead.pop_front() else {
            return Ok(None);
        };
        let buffer = JsFuture::from(pending)
            .await
            .map_err(|e| ReadError::Browser(js_text(&e)))?;
        Ok(Some(Uint8Array::new(&buffer)))
    }
}

fn read_slice(
    blob: &web_sys::Blob,
    offset: f64,
    total: f64,
    chunk: f64,
) -> Result<Option<Promise>, ReadError> {
    if offset >= total {
        return Ok(None);
    }
    let end = (offset + chunk).min(total);
    let slice = blob
        .slice_with_f64_and_f64(offset, end)
        .map_err(|e| ReadError::Browser(js_text(&e)))?;
    Ok(Some(slice.array_buffer()))
}

/// A `performance.mark` named `loadproof:<stage>`, so a profiler or `web/e2e/perf.mjs` can
/// see where a load's time goes. Marks are cheap and do nothing else.
pub fn mark(stage: &str) {
    if let Some(p) = performance() {
        let _ = p.mark(&format!("loadproof:{stage}"));
    }
}

/// `performance` of the page or of the worker this runs in.
fn performance() -> Option<web_sys::Performance> {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
        .ok()?
        .dyn_into::<web_sys::Performance>()
        .ok()
}

/// WebCrypto's `SubtleCrypto` (of the page or of the worker this runs in), present only in a
/// secure context (https, localhost).
pub(crate) fn subtle_crypto() -> Option<web_sys::SubtleCrypto> {
    let crypto = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("crypto")).ok()?;
    if crypto.is_undefined() || crypto.is_null() {
        return None;
    }
    let subtle = js_sys::Reflect::get(&crypto, &JsValue::from_str("subtle")).ok()?;
    if subtle.is_undefined() || subtle.is_null() {
        return None;
    }
    subtle.dyn_into::<web_sys::SubtleCrypto>().ok()
}

/// Decides when parsing has held the main thread long enough to yield.
pub(crate) struct Pacer {
    performance: Option<web_sys::Performance>,
    last: f64,
}

impl Pacer {
    pub(crate) fn new() -> Pacer {
        let performance = performance();
        let last = performance.as_ref().map_or(0.0, web_sys::Performance::now);
        Pacer { performance, last }
    }

    fn due(&self) -> bool {
        self.performance
            .as_ref()
            .is_none_or(|p| p.now() - self.last >= YIELD_EVERY_MS)
    }

    /// After a slice: when due, report progress, yield, and stop if a newer load began.
    pub(crate) async fn breathe(
        &mut self,
        done: f64,
        total: f64,
        on_progress: &impl Fn(f64, f64),
        is_current: &impl Fn() -> bool,
    ) -> Result<(), ReadError> {
        if self.due() {
            on_progress(done, total);
            self.yield_now().await;
            if !is_current() {
                return Err(ReadError::Superseded);
            }
        }
        Ok(())
    }

    async fn yield_now(&mut self) {
        yield_to_event_loop().await;
        if let Some(p) = &self.performance {
            self.last = p.now();
        }
    }
}

/// Resolves on the next macrotask, so the browser can paint and handle input in between.
/// A `MessageChannel` message is a macrotask without `setTimeout`'s 4 ms nesting clamp.
pub(crate) async fn yield_to_event_loop() {
    let Ok(channel) = web_sys::MessageChannel::new() else {
        return;
    };
    let promise = Promise::new(&mut |resolve, _reject| {
        channel.port1().set_onmessage(Some(&resolve));
        if channel.port2().post_message(&JsValue::UNDEFINED).is_err() {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    });
    let _ = JsFuture::from(promise).await;
    channel.port1().set_onmessage(None);
}

/// The message of a JavaScript exception, or its string form.
pub(crate) fn js_text(value: &JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}
