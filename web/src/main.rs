//! Entry point of the browser bundle that Trunk builds from the root `index.html`.
//!
//! It installs the panic hook (a report on the page and in the console, never a silent dead
//! page) and mounts [`loadproof_web::App`] — only where there is a `window`: the same module
//! also runs in the audit worker (`loadproof_web::offload`), where there is no page to mount.
//! Everything else lives in the library target so that browser tests can mount the same
//! components.

fn main() {
    loadproof_web::panic_report::install();
    if web_sys::window().is_some() {
        leptos::mount::mount_to_body(loadproof_web::App);
        loadproof_web::offload::prepare();
    }
}
