//! The sha256 of a record stream's scrape bodies, computed by the browser's WebCrypto.
//!
//! An audit hashes every scrape body as it rebuilds it: ~130 MB for a ten-minute run of vLLM's
//! 50 KB scrapes. sha256 in wasm has no hardware help; `SubtleCrypto.digest` does, several
//! times faster. So the page rebuilds the bodies once (core's walk, unchecked), hands each to
//! WebCrypto — a few dozen at a time, so memory stays bounded — and gives core the digests it
//! computed ([`loadproof_core::receipt::Packed::walk_trusting`]). These are the page's own
//! hashes of bytes core rebuilt: nothing here comes from the file, and a digest WebCrypto did
//! not give is simply hashed by core.

use std::collections::BTreeMap;

use js_sys::{Promise, Uint8Array};
use loadproof_core::receipt::Receipt;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// How many digests are in flight at once.
const IN_FLIGHT: usize = 512;

/// The sha256 (lowercase hex) of every packed body that rebuilds, by name; `None` without
/// WebCrypto (an insecure context) or when nothing is packed.
pub async fn packed_bodies(receipt: &Receipt) -> Option<BTreeMap<String, String>> {
    if receipt.packed.is_empty() {
        return None;
    }
    let subtle = crate::ingest::subtle_crypto()?;
    let mut out = BTreeMap::new();
    let mut pending: Vec<(String, Promise)> = Vec::with_capacity(IN_FLIGHT);
    let mut walk = receipt.packed.walk();
    while let Some((name, bytes)) = walk.next_unchecked() {
        let Some(bytes) = bytes else { continue };
        let view = Uint8Array::from(bytes);
        if let Ok(promise) = subtle.digest_with_str_and_buffer_source("SHA-256", &view) {
            pending.push((name.to_owned(), promise));
        }
        if pending.len() >= IN_FLIGHT {
            settle(&mut pending, &mut out).await;
        }
    }
    settle(&mut pending, &mut out).await;
    Some(out)
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
    let buffer = buffer.dyn_ref::<js_sys::ArrayBuffer>()?;
    let bytes = Uint8Array::new(buffer).to_vec();
    if bytes.len() != 32 {
        return None;
    }
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
