//! A compressed trace read as a stream: gzip through the browser's own
//! `DecompressionStream('gzip')`, zstd (and what the browser's gzip reader stops on) through
//! the wasm decoders of [`crate::unpack`].
//!
//! The browser's inflate is native code, faster than one compiled to wasm, and adds nothing to
//! the bundle, so a gzip file goes to it first. The file's slices are written into the
//! decompressor by a task of their own while this one reads the decompressed side into core's
//! `Ingester`, which hashes the content (the trace's `source_sha256`, the CLI's). The file as
//! given is hashed too: by the hash worker when the page started one (WebCrypto), else here
//! with core's `Sha256Stream` as the slices go in. A stream cannot be cut at its middle, so a
//! compressed file is never read in halves.
//!
//! Browsers stop after the first gzip member, so a multi-member file (`cat a.gz b.gz`), which
//! the CLI reads whole, makes the browser's reader fail; so do a truncated file and bytes after
//! the last member. Any such failure reads the file again from its start through flate2 in
//! wasm, the CLI's decoder, which reads every member or refuses the file naming where it
//! stopped, as the CLI does. zstd, which browsers do not read, always goes that way. Nothing
//! is read short: a file not decoded to its end is refused whole.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use loadproof_core::trace::{
    Codec, Compression, IngestOptions, Ingester, Sha256Stream, Trace, ZSTD_MAGIC,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{JsFuture, spawn_local};

use crate::ingest::{
    Pacer, ReadError, Slices, ingest_blob_hashed_by, js_text, mark, read_bytes, slice_bytes,
};
use crate::unpack::{Stop, Unpacker};

/// Reads the trace in `blob` whatever it is: a compressed file (known by its first bytes, as
/// the CLI knows it, whatever it is called) as a stream of its content — gzip through
/// [`ingest_gzip`], and through [`ingest_unpacked`] where the browser's reader fails; zstd
/// through [`ingest_unpacked`] — anything else as it is ([`ingest_blob_hashed_by`]).
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
            let native = ingest_gzip(
                blob,
                digest.clone(),
                opts.clone(),
                &on_progress,
                &is_current,
            );
            match native.await {
                // The browser's reader stopped: several members, or a file it cannot read whole.
                // flate2 reads it again from the start and says which.
                Err(ReadError::Compressed(_)) => {
                    mark("gzip-in-wasm");
                    on_progress(0.0, blob.size());
                    ingest_unpacked(blob, Codec::Gzip, digest, opts, &on_progress, &is_current)
                        .await
                }
                done => done,
            }
        }
        Some(Codec::Zstd) => {
            mark("read-start");
            on_progress(0.0, blob.size());
            ingest_unpacked(blob, Codec::Zstd, digest, opts, &on_progress, &is_current).await
        }
        None => ingest_blob_hashed_by(blob, digest, opts, on_progress, is_current).await,
    }
}

/// Reads the gzip file `blob` into a trace of its content through the browser's decompressor.
/// `digest`, when given, is the hash worker's `{ digest, bytes }` of the file as given. Fails
/// with [`ReadError::Compressed`] when the browser cannot read the file to its end (see the
/// module doc: the caller reads it through flate2 then).
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
                    "the browser's gzip reader stopped ({}) after {} of its {total} bytes were given to it and {} bytes came out",
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

/// A `DecompressionStream('gzip')`; without one the caller reads the file through flate2.
fn decompression_stream() -> Result<JsValue, ReadError> {
    let ctor = Reflect::get(&js_sys::global(), &JsValue::from_str("DecompressionStream"))
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .ok_or_else(|| {
            ReadError::Compressed("this browser has no DecompressionStream".to_owned())
        })?;
    Reflect::construct(&ctor, &Array::of1(&JsValue::from_str("gzip")))
        .map_err(|e| ReadError::Browser(js_text(&e)))
}

/// Compressed bytes given to the wasm decoder at a time, between which the reader yields when
/// due: a 32 MiB slice of a zstd file can hold a third of a gigabyte of content.
const FEED_BYTES: usize = 1 << 20;

/// Reads `blob`, compressed with `codec`, through the wasm decoders ([`crate::unpack`]) into a
/// trace of its content: slices read ahead of the decoder as [`crate::ingest::read_range`]
/// reads them, the content pushed to core's `Ingester` (which hashes it) as it comes, the file
/// hashed as given here or by the hash worker (`digest`).
pub(crate) async fn ingest_unpacked(
    blob: &web_sys::Blob,
    codec: Codec,
    digest: Option<Promise>,
    opts: IngestOptions,
    on_progress: &impl Fn(f64, f64),
    is_current: &impl Fn() -> bool,
) -> Result<Trace, ReadError> {
    let total = blob.size();
    let mut unpacker = Unpacker::new(codec);
    let mut ingester = Ingester::new(opts);
    let mut file_sha = digest.is_none().then(Sha256Stream::default);
    let mut pacer = Pacer::new();
    let mut slices = Slices::new(blob, 0.0, total, 2);
    let mut offset = 0.0;
    let mut scratch: Vec<u8> = Vec::new();
    let refused = |stop: Stop<_>| match stop {
        Stop::Taker(e) => ReadError::Trace(e),
        Stop::Refused(r) => ReadError::Compressed(format!(
            "not a whole {codec} file: {} (at compressed byte {} of its {total}; {} bytes decompressed before it); the trace is refused rather than read short",
            r.what, r.at, r.decompressed
        )),
    };
    while let Some(view) = slices.next().await? {
        scratch.resize(view.length() as usize, 0);
        view.copy_to(&mut scratch);
        if let Some(sha) = file_sha.as_mut() {
            sha.update(&scratch);
        }
        for piece in scratch.chunks(FEED_BYTES) {
            unpacker
                .feed(piece, &mut |content| ingester.push(content))
                .map_err(refused)?;
            offset += piece.len() as f64;
            pacer
                .breathe(offset, total, on_progress, is_current)
                .await?;
        }
    }
    unpacker
        .finish(&mut |content| ingester.push(content))
        .map_err(refused)?;
    on_progress(total, total);
    mark("parsed");
    if offset != total {
        return Err(ReadError::Browser(format!(
            "the file changed while it was read: {offset} of {total} bytes read"
        )));
    }
    let file_sha256 = match (digest, file_sha) {
        (Some(digest), _) => crate::ingest::hashed_by(digest, total).await?,
        (None, Some(sha)) => sha.finalize_hex(),
        (None, None) => return Err(ReadError::Browser("the file was not hashed".to_owned())),
    };
    let trace = ingester.finish().map_err(ReadError::Trace)?;
    mark("trace-ready");
    Ok(trace.with_compression(Compression {
        codec,
        file_sha256,
        file_bytes: total as u64,
    }))
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
