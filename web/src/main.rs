//! Entry point of the browser bundle that Trunk builds from the root `index.html`.
//!
//! It only installs the panic hook, so a bug shows up in the console with a message instead
//! of a silent dead page, and mounts [`loadproof_web::App`]. Everything else lives in the
//! library target so that browser tests can mount the same components.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(loadproof_web::App);
}
