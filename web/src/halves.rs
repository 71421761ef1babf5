//! A large trace read in two halves on two workers, joined into the one trace a single reader
//! makes of the file.
//!
//! Parsing is what a large trace's load spends its time on, and it runs on one core while the
//! other only hashes (~0.3 s of 1.4 s on 5M rows). So the file is cut at its midpoint's line
//! end: the first worker parses the first half with an `Ingester`, a second worker parses the
//! second half with a `ShardIngester` (told the layout by the file's head) and hands its rows
//! over; the first joins them — core replays them through the same accounting, in file order —
//! and finishes with the hash worker's digest. Core's tests hold every cut of real and random
//! files to the whole file's trace; here only bytes move.
//!
//! Both workers find the cut by one rule, without talking: just after the first newline at or
//! after byte `mid - 1`. The shard must then be exactly the bytes after the first half's end;
//! one that is not (the file changed), or that never comes (its worker failed), is not used:
//! the first worker reads the second half itself, so the answer never depends on the helper.

use js_sys::{BigInt64Array, BigUint64Array, Promise, Uint8Array, Uint32Array};
use loadproof_core::trace::{
    IngestOptions, Ingester, PrefixBlocks, Shard, ShardIngester, ShardMeta, ShardRows, Trace,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::ingest::{ReadError, finish_hashed_by, js_text, mark, read_bytes, read_range};

/// Files from this size are read in halves: below it a second worker's start costs more than
/// it saves.
pub const HALVES_MIN_BYTES: f64 = (8u64 << 20) as f64;

/// The most of the file's start the second worker reads to learn its layout.
const HEAD_MAX_BYTES: f64 = (1u64 << 20) as f64;

/// How much is read at a time looking for the line end after the midpoint.
const LINE_END_PROBE: f64 = (64u64 << 10) as f64;

/// Where the halves meet is found from here: the byte before the file's middle.
pub fn midpoint(total: f64) -> f64 {
    (total / 2.0).floor().max(1.0)
}

/// The first worker: parses `0..cut` of `blob` (the cut found from `mid`), joins the second
/// half's rows when `shard` answers with them (else reads that half itself), and finishes
/// with the hash worker's `digest`.
pub async fn read_first_half(
    blob: &web_sys::Blob,
    mid: f64,
    shard: Promise,
    digest: Promise,
    opts: IngestOptions,
    on_progress: impl Fn(f64, f64),
) -> Result<Trace, ReadError> {
    let total = blob.size();
    mark("read-start");
    on_progress(0.0, total);
    let mut ingester = Ingester::new_unhashed(opts);
    ingester.reserve_for_source_bytes(total as u64);
    let mut last = None;
    let always = || true;
    read_range(
        blob,
        0.0,
        mid.min(total),
        &mut |bytes| {
            last = bytes.last().copied();
            ingester.push(bytes)
        },
        None,
        &on_progress,
        &always,
    )
    .await?;
    let mut cut = mid.min(total);
    if last != Some(b'\n') {
        // Finish the line the midpoint falls in.
        while cut < total {
            let end = (cut + LINE_END_PROBE).min(total);
            let bytes = read_bytes(blob, cut, end).await?;
            match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    ingester
                        .push(bytes.get(..=i).unwrap_or_default())
                        .map_err(ReadError::Trace)?;
                    cut += (i + 1) as f64;
                    break;
                }
                None => {
                    ingester.push(&bytes).map_err(ReadError::Trace)?;
                    cut = end;
                }
            }
        }
    }
    mark("first-half-parsed");
    let answer = JsFuture::from(shard).await;
    mark("shard-received");
    let joined = match answer
        .map_err(|e| js_text(&e))
        .and_then(|d| shard_from_message(&d))
    {
        Ok(shard) if shard.bytes() as f64 == total - cut => {
            ingester.join(shard).map_err(ReadError::Trace)?;
            mark("shard-joined");
            true
        }
        _ => false,
    };
    if !joined {
        mark("shard-not-used");
        let progress = |done: f64, total: f64| on_progress(cut + done, total);
        read_range(
            blob,
            cut,
            total,
            &mut |bytes| ingester.push(bytes),
            None,
            &progress,
            &always,
        )
        .await?;
    }
    on_progress(total, total);
    mark("parsed");
    finish_hashed_by(ingester, digest).await
}

/// The second worker: the rows of `cut..` of `blob`, read after learning the layout from the
/// file's head. Errors (a head that is not a trace, say) leave the first worker to read this
/// half itself, and to report the error if there is one.
pub async fn read_second_half(
    blob: &web_sys::Blob,
    mid: f64,
    opts: IngestOptions,
    on_progress: impl Fn(f64, f64),
) -> Result<Shard, ReadError> {
    let total = blob.size();
    mark("second-half-start");
    let head = read_bytes(blob, 0.0, mid.min(HEAD_MAX_BYTES).min(total)).await?;
    let mut shard = ShardIngester::new(&head, opts).map_err(ReadError::Trace)?;
    let mut at = (mid - 1.0).max(0.0);
    let cut = loop {
        if at >= total {
            break total;
        }
        let end = (at + LINE_END_PROBE).min(total);
        let bytes = read_bytes(blob, at, end).await?;
        if let Some(i) = bytes.iter().position(|&b| b == b'\n') {
            break at + (i + 1) as f64;
        }
        at = end;
    };
    shard.reserve_for_source_bytes((total - cut) as u64);
    read_range(
        blob,
        cut,
        total,
        &mut |bytes| shard.push(bytes),
        None,
        &on_progress,
        &|| true,
    )
    .await?;
    let shard = shard.finish().map_err(ReadError::Trace);
    mark("second-half-parsed");
    shard
}

/// A shard as the message the second worker posts: the meta as JSON, every column a typed
/// array (the worker's script transfers their buffers: nothing is copied).
pub fn shard_to_message(shard: Shard) -> Result<JsValue, String> {
    let (meta, rows) = shard.into_parts();
    let out = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| {
        let _ = js_sys::Reflect::set(&out, &JsValue::from_str(k), v);
    };
    let meta = serde_json::to_string(&meta).map_err(|e| e.to_string())?;
    set("meta", &JsValue::from_str(&meta));
    set("arrival", &BigInt64Array::from(rows.arrival_ns.as_slice()));
    set("input", &Uint32Array::from(rows.input_tokens.as_slice()));
    set("output", &Uint32Array::from(rows.output_tokens.as_slice()));
    set("excluded", &Uint8Array::from(rows.excluded.as_slice()));
    if let Some(session) = &rows.session {
        set("session", &Uint32Array::from(session.as_slice()));
    }
    set("names", &Uint8Array::from(rows.session_names.as_slice()));
    set("ends", &BigUint64Array::from(rows.session_ends.as_slice()));
    if let Some(prefix) = &rows.prefix {
        set("offsets", &BigUint64Array::from(prefix.offsets.as_slice()));
        set("ids", &BigUint64Array::from(prefix.ids.as_slice()));
    }
    Ok(out.into())
}

/// Rebuilds a shard from [`shard_to_message`]'s message through `Shard::from_parts`, which
/// refuses parts that do not hold together.
fn shard_from_message(data: &JsValue) -> Result<Shard, String> {
    let get = |k: &str| {
        js_sys::Reflect::get(data, &JsValue::from_str(k))
            .ok()
            .filter(|v| !v.is_undefined() && !v.is_null())
    };
    let missing = |k: &str| format!("the second half's answer has no {k}");
    let meta = get("meta")
        .and_then(|v| v.as_string())
        .ok_or_else(|| missing("meta"))?;
    let meta: ShardMeta = serde_json::from_str(&meta).map_err(|e| e.to_string())?;
    let u32s = |k: &str| get(k).and_then(|v| v.dyn_into::<Uint32Array>().ok());
    let u64s = |k: &str| get(k).and_then(|v| v.dyn_into::<BigUint64Array>().ok());
    let bytes = |k: &str| get(k).and_then(|v| v.dyn_into::<Uint8Array>().ok());
    let arrival = get("arrival")
        .and_then(|v| v.dyn_into::<BigInt64Array>().ok())
        .ok_or_else(|| missing("arrival"))?;
    let prefix = match (u64s("offsets"), u64s("ids")) {
        (Some(offsets), Some(ids)) => Some(PrefixBlocks {
            offsets: offsets.to_vec(),
            ids: ids.to_vec(),
        }),
        _ => None,
    };
    let rows = ShardRows {
        arrival_ns: arrival.to_vec(),
        input_tokens: u32s("input").ok_or_else(|| missing("input"))?.to_vec(),
        output_tokens: u32s("output").ok_or_else(|| missing("output"))?.to_vec(),
        excluded: bytes("excluded").map(|a| a.to_vec()).unwrap_or_default(),
        session: u32s("session").map(|a| a.to_vec()),
        session_names: bytes("names").map(|a| a.to_vec()).unwrap_or_default(),
        session_ends: u64s("ends").map(|a| a.to_vec()).unwrap_or_default(),
        prefix,
    };
    Shard::from_parts(meta, rows).map_err(|e| e.to_string())
}
