//! The sha256 of a record stream's scrape bodies, computed by the browser's WebCrypto as the
//! audit reads them.
//!
//! An audit hashes every scrape body it rebuilds: ~130 MB for a ten-minute run of vLLM's
//! 50 KB scrapes. sha256 in wasm has no hardware help; `SubtleCrypto.digest` is the browser's
//! native code. So the page runs core's deferred audit ([`loadproof_core::audit::Deferred`]) a
//! batch of scrapes at a time: each body the scan rebuilds is handed to WebCrypto as it is
//! read — one pass over the bodies, not one to hash and one to read — and the digests are
//! awaited between batches (at most two batches of promises outstanding) and given to core,
//! which returns the audit only if every digest confirms the bytes it read (and audits again,
//! trusting only those digests, otherwise). These are the page's own hashes of bytes core
//! rebuilt: nothing here comes from the file, and a digest WebCrypto did not give is simply
//! hashed by core. (Chromium hashes inside the `digest` call, not on a thread of its own: the
//! batches bound memory, they buy no parallelism.)

use std::collections::BTreeMap;

use js_sys::{Promise, Uint8Array};
use loadproof_core::audit::{Audited, Deferred, Policy};
use loadproof_core::receipt::Receipt;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Scrapes read per batch between awaits of their digests.
const BATCH: usize = 128;

/// The audit of `receipt` with its packed bodies hashed by WebCrypto, and those digests (by
/// name, for the model's previews); `None` without WebCrypto (an insecure context) or when
/// nothing is packed.
pub async fn audit(
    receipt: &Receipt,
    policy: &Policy,
) -> Option<(Audited, BTreeMap<String, String>)> {
    if receipt.packed.is_empty() {
        return None;
    }
    let subtle = crate::ingest::subtle_crypto()?;
    let mut out = BTreeMap::new();
    let mut deferred = Deferred::start(receipt, policy);
    let mut scratch = Uint8Array::new_with_length(1 << 16);
    let mut hashing: Vec<(String, Promise)> = Vec::new();
    let mut hashed: Vec<(String, Promise)> = Vec::new();
    while !deferred.done() {
        deferred.step(BATCH, &mut |name, bytes| {
            // One scratch buffer for every body: `digest` copies the bytes before it returns
            // (WebCrypto: "get a copy of the bytes held by the buffer source"), so the next
            // body may overwrite them. A buffer per body cost more than the hashing.
            let Ok(len) = u32::try_from(bytes.len()) else {
                return; // not in a 4 GiB wasm memory; core hashes it
            };
            if len > scratch.length() {
                scratch =
                    Uint8Array::new_with_length(len.checked_next_power_of_two().unwrap_or(len));
            }
            let view = scratch.subarray(0, len);
            view.copy_from(bytes);
            let promise = subtle.digest_with_str_and_buffer_source("SHA-256", &view);
            if let Ok(promise) = promise {
                hashing.push((name.to_owned(), promise));
            }
        });
        // The batch before was hashed while this one was read.
        settle(&mut hashed, &mut out).await;
        std::mem::swap(&mut hashed, &mut hashing);
    }
    settle(&mut hashed, &mut out).await;
    let audited = deferred.finish(&out);
    Some((audited, out))
}

async fn settle(pending: &mut Vec<(String, Promise)>, out: &mut BTreeMap<String, String>) {
    for (name, promise) in pending.drain(..) {
        let Ok(buffer) = JsFuture::from(promise).await else {
            continue;
        };
        if let Some(hex) = hex(&buffer) {
            out.insert(name, hex);
        }
    }
}

fn hex(buffer: &JsValue) -> Option<String> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let buffer = buffer.dyn_ref::<js_sys::ArrayBuffer>()?;
    let bytes = Uint8Array::new(buffer).to_vec();
    if bytes.len() != 32 {
        return None;
    }
    let mut hex = String::with_capacity(64);
    for b in bytes {
        hex.push(char::from(DIGITS[usize::from(b >> 4)]));
        hex.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    Some(hex)
}
