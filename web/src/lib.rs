//! loadproof in the browser: the same `loadproof_core` as the CLI, compiled to WebAssembly.
//!
//! The page reads a trace file in slices, pushes them through core's `Ingester`, and shows
//! core's `InspectReport` — so a number in the page and the same number printed by
//! `loadproof trace inspect --json` come from one implementation. Nothing is uploaded. This
//! crate holds only browser glue (reading blobs, drawing on canvases, formatting text); any
//! statistic it shows is computed by `loadproof_core`.

pub mod app;
pub mod components;
pub mod ingest;
pub mod number;
pub mod offload;
pub mod panic_report;
pub mod plots;
pub mod receipt_model;
pub mod receipt_plots;
pub mod series;
pub mod site;

pub use app::App;
