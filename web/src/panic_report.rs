//! A panic shows a report on the page instead of freezing it.
//!
//! `core` is built never to panic on any input, but a bug in the page's own glue still can;
//! in wasm a panic aborts the module, and every button after it silently does nothing. The hook
//! keeps the console message (`console_error_panic_hook`) and also puts a report in the page:
//! what failed and where, that the page must be reloaded, and that the file stayed local.

use std::panic::PanicHookInfo;

/// Installs the hook (once per module instance; in a worker only the console part applies).
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show(info);
    }));
}

fn show(info: &PanicHookInfo<'_>) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(body) = document.body() else {
        return;
    };
    let Ok(report) = document.create_element("div") else {
        return;
    };
    report.set_id("panic-report");
    let _ = report.set_attribute("role", "alert");
    let _ = report.set_attribute("class", "panic-report");
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned());
    let location = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    report.set_text_content(Some(&format!(
        "loadproof hit a bug and stopped: {message}{location}. The page no longer responds: reload it. \
         Your file stayed on this machine; please report this message with a description of the file."
    )));
    let _ = body.prepend_with_node_1(&report);
}
