//! Reading files in the browser: from the page's own site (a published site's
//! `playbook.json`, `receipts.json` and the receipts it lists) and from a chosen or dropped
//! file.
//!
//! The URL is relative, so it resolves against the page wherever the site is served; nothing
//! is sent anywhere else. `web_sys`'s `fetch` is used directly (features `Response`, `Window`):
//! one GET does not justify an HTTP crate in the bundle. The receipts index is read with
//! core's `SiteReceipts` (every listed path must stay on the site), for the receipt and compare
//! views alike.
//!
//! Offline first: [`prefetch`] asks for the site's files as the page starts (the playbook, the
//! index and every receipt it lists), not when their view is first opened, so a reviewer who
//! loses the network after loading still has every view. Each file is asked for once: the
//! answer is kept as a promise every later [`fetch_bytes`] of that path awaits. In a
//! single-file page (`publish --single-file`) the files are in the page itself (core's
//! `site::single_file`), and nothing is fetched at all.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use js_sys::Uint8Array;
use loadproof_core::site::single_file::{SITE_FILES_ID, read_files_json};
use loadproof_core::site::{
    SITE_PLAYBOOK, SITE_RECEIPTS, SITE_WORKER, SiteReceipt, SiteReceipts, is_site_path,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{JsFuture, future_to_promise};

thread_local! {
    /// Each site path asked for, and the promise of its answer (an `ArrayBuffer`, or the
    /// HTTP status as a number).
    static ASKED: RefCell<HashMap<String, js_sys::Promise>> = RefCell::new(HashMap::new());
    /// The files a single-file page holds, read once (`None`: a served site).
    static EMBEDDED: Option<BTreeMap<String, Vec<u8>>> = read_embedded();
}

/// The files inlined in this page, when it is a single-file site.
fn read_embedded() -> Option<BTreeMap<String, Vec<u8>>> {
    let element = web_sys::window()?
        .document()?
        .get_element_by_id(SITE_FILES_ID)?;
    read_files_json(&element.text_content()?).ok()
}

/// True when this page carries its site's files inside itself (`publish --single-file`).
pub fn is_single_file() -> bool {
    EMBEDDED.with(Option::is_some)
}

/// Asks for the site's files now: the playbook, the receipts index and every receipt it
/// lists, so each view has them even if the network goes away before it is opened.
pub fn prefetch() {
    if is_single_file() {
        return;
    }
    let _ = ask(SITE_PLAYBOOK);
    leptos::task::spawn_local(async {
        if let SiteIndex::Listed(list) = fetch_site_receipts().await {
            for entry in list {
                let _ = ask(&entry.path);
            }
        }
    });
}

/// Registers the site's service worker (core's `SITE_WORKER`, which `publish` writes), so the
/// site reloads offline — only on a published site (one that serves its `playbook.json`)
/// served over http(s): a plain build has no worker to register, and a page opened from disk
/// cannot have one.
pub fn register_service_worker() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let protocol = window.location().protocol().unwrap_or_default();
    if is_single_file() || !(protocol == "http:" || protocol == "https:") {
        return;
    }
    leptos::task::spawn_local(async move {
        if !matches!(fetch_bytes(SITE_PLAYBOOK).await, Ok(Fetched::Body(_))) {
            return;
        }
        // Read through `Reflect`: two web-sys features for one call are not worth the bundle.
        let Ok(container) = js_sys::Reflect::get(&window, &JsValue::from_str("navigator"))
            .and_then(|n| js_sys::Reflect::get(&n, &JsValue::from_str("serviceWorker")))
        else {
            return;
        };
        if container.is_undefined() {
            return;
        }
        let Ok(register) = js_sys::Reflect::get(&container, &JsValue::from_str("register"))
            .and_then(|f| f.dyn_into::<js_sys::Function>())
        else {
            return;
        };
        if let Ok(promise) = register.call1(&container, &JsValue::from_str(SITE_WORKER))
            && let Ok(promise) = promise.dyn_into::<js_sys::Promise>()
        {
            // A refusal (a private window, a worker the server does not serve) leaves the
            // page as it is: online only.
            let _ = JsFuture::from(promise).await;
        }
    });
}

/// The one request for a site path, made on first ask.
fn ask(relative_url: &str) -> Option<js_sys::Promise> {
    if let Some(p) = ASKED.with(|a| a.borrow().get(relative_url).cloned()) {
        return Some(p);
    }
    let window = web_sys::window()?;
    // A site path's segments are file names: `#`, `?` or `%` in one is part of the name.
    let url = if is_site_path(relative_url) {
        relative_url
            .split('/')
            .map(|part| String::from(js_sys::encode_uri_component(part)))
            .collect::<Vec<_>>()
            .join("/")
    } else {
        relative_url.to_owned()
    };
    let request = window.fetch_with_str(&url);
    let promise = future_to_promise(async move {
        let response: web_sys::Response = JsFuture::from(request).await?.dyn_into()?;
        if !response.ok() {
            return Ok(JsValue::from(response.status()));
        }
        JsFuture::from(response.array_buffer()?).await
    });
    ASKED.with(|a| {
        a.borrow_mut()
            .insert(relative_url.to_owned(), promise.clone())
    });
    Some(promise)
}

/// What a same-origin GET found.
#[derive(Debug)]
pub enum Fetched {
    /// 200: the body.
    Body(Vec<u8>),
    /// Any other status (404 when the site has no such file).
    Status(u16),
}

/// The bytes of a site path: from the page itself in a single-file site, else one GET
/// (shared with [`prefetch`]'s) resolved against the page. A path the single file does not
/// hold is a 404, as a served site would answer.
pub async fn fetch_bytes(relative_url: &str) -> Result<Fetched, String> {
    if let Some(found) = EMBEDDED.with(|e| {
        e.as_ref()
            .map(|files| files.get(relative_url.trim_start_matches("./")).cloned())
    }) {
        return Ok(found.map_or(Fetched::Status(404), Fetched::Body));
    }
    let promise = ask(relative_url).ok_or("no window")?;
    let answer = JsFuture::from(promise).await;
    // A failed request is forgotten, so the next ask tries again.
    if answer.is_err() {
        ASKED.with(|a| a.borrow_mut().remove(relative_url));
    }
    let answer = answer.map_err(|e| js_message(&e))?;
    if let Some(status) = answer.as_f64() {
        return Ok(Fetched::Status(status as u16));
    }
    Ok(Fetched::Body(Uint8Array::new(&answer).to_vec()))
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
