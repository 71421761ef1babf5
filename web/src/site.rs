//! Reading a file from the page's own origin (a published site's `playbook.json`).
//!
//! The URL is relative, so it resolves against the page wherever the site is served; nothing
//! is sent anywhere else. `web_sys`'s `fetch` is used directly (features `Response`, `Window`):
//! one GET does not justify an HTTP crate in the bundle.

use js_sys::Uint8Array;
use wasm_bindgen::JsCast;
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

fn js_message(value: &wasm_bindgen::JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}
