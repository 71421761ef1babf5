//! Handing a reviewer's page to someone else: a file saved from text the page holds (the
//! audit's JSON, byte for byte what the CLI writes) and the browser's print dialog (the print
//! stylesheet, `css/print.css`, lays the page out as a report). Nothing is sent anywhere: the
//! file is a `blob:` URL of this page.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

/// Saves `text` as a download named `file_name`.
pub fn save_text(file_name: &str, text: &str, mime: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| JsValue::from_str("no document"))?;
    let anchor: web_sys::HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    anchor.set_href(&url);
    anchor.set_download(file_name);
    anchor.click();
    web_sys::Url::revoke_object_url(&url)
}

/// The download's name for `source`'s audit: `baseline.json` → `baseline.audit.json`.
pub fn audit_file_name(source: &str) -> String {
    let stem = source
        .strip_suffix(".json")
        .or_else(|| source.strip_suffix(".lpr"))
        .unwrap_or(source);
    format!("{stem}.audit.json")
}

/// A "Print report" button: the browser's print dialog, with the print stylesheet applied.
#[component]
pub fn PrintButton(
    /// The button's id.
    id: &'static str,
) -> impl IntoView {
    let print = move |_| {
        if let Some(w) = web_sys::window() {
            let _ = w.print();
        }
    };
    view! {
        <button type="button" id=id on:click=print>
            "Print report"
        </button>
    }
}

#[cfg(test)]
mod tests {
    use super::audit_file_name;

    #[test]
    fn the_audit_is_saved_under_its_receipts_name() {
        assert_eq!(audit_file_name("baseline.json"), "baseline.audit.json");
        assert_eq!(audit_file_name("run.lpr"), "run.audit.json");
        assert_eq!(audit_file_name("receipt"), "receipt.audit.json");
    }
}
