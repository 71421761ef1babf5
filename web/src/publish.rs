//! The values the page publishes on `window` for browser tests and the console:
//! `loadproofReport` (trace view), `loadproofAudit` and `loadproofAuditSource` (receipt view),
//! `loadproofComparison` (compare view), `loadproofMatch` (playbook view) and
//! `loadproofWorkerTiming` (the audit worker's timings).
//!
//! Each is the JSON the matching CLI command prints, parsed by the browser's own `JSON.parse`,
//! so a test can deep-compare the page with the CLI; `null` when the view shows nothing.

use serde::Serialize;
use wasm_bindgen::JsValue;

/// Sets `window[name]` to `value` (nothing where there is no `window`, as in the worker).
pub fn publish(name: &str, value: &JsValue) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str(name), value);
}

/// JSON text as the browser parses it, or `null` (none, or not JSON).
pub fn parsed(json: Option<&str>) -> JsValue {
    json.and_then(|text| js_sys::JSON::parse(text).ok())
        .unwrap_or(JsValue::NULL)
}

/// `value` as its serde JSON, parsed by the browser, or `null`.
pub fn json_value<T: Serialize>(value: Option<&T>) -> JsValue {
    parsed(value.and_then(|v| serde_json::to_string(v).ok()).as_deref())
}
