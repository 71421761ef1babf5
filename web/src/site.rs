//! Reading files in the browser: from the page's own origin (a published site's
//! `playbook.json`, `receipts.json` and the receipts it lists) and from a chosen or dropped
//! file.
//!
//! The URL is relative, so it resolves against the page wherever the site is served; nothing
//! is sent anywhere else. `web_sys`'s `fetch` is used directly (features `Response`, `Window`):
//! one GET does not justify an HTTP crate in the bundle. The receipts index is read with
//! core's `SiteReceipts` (every listed path must stay on the site), for the receipt and compare
//! views alike.

use js_sys::Uint8Array;
use loadproof_core::site::{SITE_RECEIPTS, SiteReceipt, SiteReceipts};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// What a same-origin GET found.
#[derive(Debug)]
pub enum Fetched {
    /// 200: the body.
    Body(Vec<u8>),
    /// Any other status (404 when the site has no such file).
    Status(u16),
}

/// GETs `relative_url` (resolved against the page) and reads the whole body.
pub async fn fetch_bytes(relative_url: &str) -> Result<Fetched, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str(relative_url))
        .await
        .map_err(|e| js_message(&e))?;
    let response: web_sys::Response = response
        .dyn_into()
        .map_err(|_| "fetch did not give a Response".to_owned())?;
    if !response.ok() {
        return Ok(Fetched::Status(response.status()));
    }
    let buffer = response.array_buffer().map_err(|e| js_message(&e))?;
    let buffer = JsFuture::from(buffer).await.map_err(|e| js_message(&e))?;
    Ok(Fetched::Body(Uint8Array::new(&buffer).to_vec()))
}

/// Reads a whole `Blob` (a chosen or dropped file) into memory.
pub async fn read_blob(blob: &web_sys::Blob) -> Result<Vec<u8>, String> {
    let buffer = JsFuture::from(blob.array_buffer())
        .await
        .map_err(|e| js_message(&e))?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// What this site's `receipts.json` says.
#[derive(Debug)]
pub enum SiteIndex {
    /// The receipts it lists, in order.
    Listed(Vec<SiteReceipt>),
    /// Not served (any status but 200): the site bundles none.
    Missing,
    /// Served, but refused by core's reader (`error` says why); `html` when the body is a page
    /// (a development server answers every path with the app's HTML).
    Invalid {
        /// Core's reason.
        error: String,
        /// True when the body starts with `<`.
        html: bool,
    },
    /// The request itself failed.
    Failed(String),
}

/// Fetches and reads this site's `receipts.json`.
pub async fn fetch_site_receipts() -> SiteIndex {
    match fetch_bytes(SITE_RECEIPTS).await {
        Ok(Fetched::Body(bytes)) => match SiteReceipts::from_json(&bytes) {
            Ok(index) => SiteIndex::Listed(index.receipts),
            Err(e) => SiteIndex::Invalid {
                error: e.to_string(),
                html: bytes.trim_ascii_start().starts_with(b"<"),
            },
        },
        Ok(Fetched::Status(_)) => SiteIndex::Missing,
        Err(e) => SiteIndex::Failed(e),
    }
}

/// A `Blob` holding `bytes` (a receipt fetched from the site, to audit like a chosen file).
pub fn blob_of(bytes: &[u8]) -> Result<web_sys::Blob, JsValue> {
    let parts = js_sys::Array::of1(&Uint8Array::from(bytes));
    web_sys::Blob::new_with_u8_array_sequence(&parts)
}

fn js_message(value: &wasm_bindgen::JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}
