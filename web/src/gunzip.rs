//! A gzip trace read through the browser's own `DecompressionStream('gzip')`, as a stream.
//!
//! The browser's inflate is native code, faster than one compiled to wasm, and adds nothing to
//! the bundle. The file's slices are written into the decompressor by a task of their own
//! while this one reads the decompressed side into core's `Ingester`, which hashes the content
//! (the trace's `source_sha256`, the CLI's). The file as given is hashed too: by the hash
//! worker when the page started one (WebCrypto), else here with core's `Sha256Stream` as the
//! slices go in. A stream cannot be cut at its middle, so a compressed file is never read in
//! halves.
//!
//! A file the decompressor does not read to its end is refused whole, as the CLI refuses it.
//! Browsers also refuse bytes after the first gzip member, so a multi-member file (`cat a.gz
//! b.gz`), which the CLI reads whole, is refused here with a message naming the CLI command.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use loadproof_core::trace::{
    Codec, Compression, IngestOptions, Ingester, Sha256Stream, Trace, ZSTD_MAGIC,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{JsFuture, spawn_local};

use crate::ingest::{
    Pacer, ReadError, ZSTD_REFUSED, ingest_blob_hashed_by, js_text, mark, read_bytes, slice_bytes,
};

/// Reads the trace in `blob` whatever it is: a gzip file (known by its first bytes, as the
/// CLI knows it, whatever it is called) through [`ingest_gzip`], a zstd file refused naming
/// what reads it, anything else as it is ([`ingest_blob_hashed_by`]).
pub async fn ingest_any(
    blob: &web_sys::Blob,
    digest: Option<Promise>,
    opts: IngestOptions,
    on_progress: impl Fn(f64, f64),
    is_current: impl Fn() -> bool,
) -> Result<Trace, ReadError> {
    let head = read_bytes(blob, 0.0, blob.size().min(ZSTD_MAGIC.len() as f64)).await?;
    match Codec::sniff(&head) {
        Some(Codec::Gzip) => {
            mark("read-start");
            on_progress(0.0, blob.size());
            ingest_gzip(blob, digest, opts, &on_progress, &is_current).await
        }
        Some(Codec::Zstd) => Err(ReadError::Compressed(ZSTD_REFUSED.to_owned())),
        None => ingest_blob_hashed_by(blob, digest, opts, on_progress, is_current).await,
    }
}

/// Reads the gzip file `blob` into a trace of its content. `digest`, when given, is the hash
/// worker's `{ digest, bytes }` of the file as given.
pub(crate) async fn ingest_gzip(
    blob: &web_sys::Blob,
    digest: Option<Promise>,
    opts: IngestOptions,
    on_progress: &impl Fn(f64, f64),
    is_current: &impl Fn() -> bool,
) -> Result<Trace, ReadError> {
    let total = blob.size();
    let stream = decompression_stream()?;
    let field = |v: &JsValue, k: &str| Reflect::get(v, &JsValue::from_str(k));
    let browser = |e: JsValue| ReadError::Browser(js_text(&e));
    let writable = field(&stream, "writable").map_err(browser)?;
    let readable = field(&stream, "readable").map_err(browser)?;
    let writer = call(&writable, "getWriter", &[]).map_err(browser)?;
    let reader = call(&readable, "getReader", &[]).map_err(browser)?;

    let fed = Rc::new(Cell::new(0.0));
    let file_sha = Rc::new(RefCell::new(digest.is_none().then(Sha256Stream::default)));
    spawn_local(feed(
        blob.clone(),
        writer,
        Rc::clone(&fed),
        Rc::clone(&file_sha),
    ));

    let mut ingester = Ingester::new(opts);
    let mut scratch: Vec<u8> = Vec::new();
    let mut pacer = Pacer::new();
    loop {
        let read = call(&reader, "read", &[]).and_then(|p| p.dyn_into::<Promise>());
        let chunk = match read {
            Ok(p) => JsFuture::from(p).await,
            Err(e) => Err(e),
        };
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                return Err(ReadError::Compressed(format!(
                    "not a whole gzip file: the browser's gzip reader stopped ({}) after {} of its {total} bytes were given to it and {} bytes came out; the trace is refused rather than read short (a file of several gzip members, `cat a.gz b.gz`, is refused by browsers: `loadproof trace inspect FILE` reads it)",
                    js_text(&e),
                    fed.get(),
                    ingester.bytes_seen()
                )));
            }
        };
        if field(&chunk, "done").ok().and_then(|d| d.as_bool()) == Some(true) {
            break;
        }
        let Ok(view) = field(&chunk, "value").and_then(|v| v.dyn_into::<Uint8Array>()) else {
            cancel(&reader);
            return Err(ReadError::Browser(
                "the gzip reader gave no bytes".to_owned(),
            ));
        };
        scratch.resize(view.length() as usize, 0);
        view.copy_to(&mut scratch);
        if let Err(e) = ingester.push(&scratch) {
            cancel(&reader);
            return Err(ReadError::Trace(e));
        }
        if let Err(e) = pacer
            .breathe(fed.get(), total, on_progress, is_current)
            .await
        {
            cancel(&reader);
            return Err(e);
        }
    }
    on_progress(total, total);
    mark("parsed");
    let file_sha256 = match digest {
        Some(digest) => crate::ingest::hashed_by(digest, total).await?,
        None => file_sha
            .borrow_mut()
            .take()
            .map(Sha256Stream::finalize_hex)
            .ok_or_else(|| ReadError::Browser("the file was not hashed".to_owned()))?,
    };
    if fed.get() != total {
        return Err(ReadError::Browser(format!(
            "the file changed while it was read: {} of {total} bytes given to the decompressor",
            fed.get()
        )));
    }
    let trace = ingester.finish().map_err(ReadError::Trace)?;
    mark("trace-ready");
    Ok(trace.with_compression(Compression {
        codec: Codec::Gzip,
        file_sha256,
        file_bytes: total as u64,
    }))
}

/// A `DecompressionStream('gzip')`, or why the page cannot read gzip.
fn decompression_stream() -> Result<JsValue, ReadError> {
    let ctor = Reflect::get(&js_sys::global(), &JsValue::from_str("DecompressionStream"))
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .ok_or_else(|| {
            ReadError::Compressed(
                "this browser has no DecompressionStream, which the page reads gzip through: `loadproof trace inspect FILE` reads it, or open it decompressed (`gzip -dk FILE`)"
                    .to_owned(),
            )
        })?;
    Reflect::construct(&ctor, &Array::of1(&JsValue::from_str("gzip")))
        .map_err(|e| ReadError::Browser(js_text(&e)))
}

/// Writes `blob`'s slices into the decompressor, hashing them when `file_sha` holds a hasher,
/// then closes it. A slice the browser cannot read aborts the stream, so the reading side
/// stops with that error rather than waiting.
async fn feed(
    blob: web_sys::Blob,
    writer: JsValue,
    fed: Rc<Cell<f64>>,
    file_sha: Rc<RefCell<Option<Sha256Stream>>>,
) {
    let total = blob.size();
    let chunk = slice_bytes();
    let mut offset = 0.0;
    while offset < total {
        let end = (offset + chunk).min(total);
        let bytes = match blob.slice_with_f64_and_f64(offset, end) {
            Ok(slice) => JsFuture::from(slice.array_buffer()).await,
            Err(e) => Err(e),
        };
        let view = match bytes {
            Ok(buffer) => Uint8Array::new(&buffer),
            Err(e) => {
                let _ = call(&writer, "abort", &[e]);
                return;
            }
        };
        if let Some(sha) = file_sha.borrow_mut().as_mut() {
            sha.update(&view.to_vec());
        }
        // Given to the decompressor (not yet necessarily read out of it): what a refusal names.
        fed.set(end);
        let wrote =
            match call(&writer, "write", &[view.into()]).and_then(|p| p.dyn_into::<Promise>()) {
                Ok(p) => JsFuture::from(p).await,
                Err(e) => Err(e),
            };
        // The stream errored (the reader reports the decoder's error) or was cancelled.
        if wrote.is_err() {
            return;
        }
        offset = end;
    }
    if let Ok(p) = call(&writer, "close", &[]).and_then(|p| p.dyn_into::<Promise>()) {
        let _ = JsFuture::from(p).await;
    }
}

/// Calls `target.method(args…)`.
fn call(target: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f = Reflect::get(target, &JsValue::from_str(method))?.dyn_into::<Function>()?;
    f.apply(target, &args.iter().collect::<Array>())
}

/// Stops the decompressor: the feeding task's next write fails and it ends.
fn cancel(reader: &JsValue) {
    let _ = call(reader, "cancel", &[]);
}
