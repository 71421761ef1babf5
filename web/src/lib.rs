//! loadproof in the browser: the same `loadproof_core` as the CLI, compiled to WebAssembly.
//!
//! The page reads a trace file in slices, pushes them through core's `Ingester`, and shows
//! core's `InspectReport` — so a number in the page and the same number printed by
//! `loadproof trace inspect --json` come from one implementation; likewise core's audit,
//! comparison and playbook matcher for receipts and playbooks. Nothing is uploaded. This crate
//! holds only browser glue (reading blobs, drawing on canvases, formatting text); any statistic
//! it shows is computed by `loadproof_core`.
//!
//! Layout: [`app`] routes between the four [`views`] (one folder each: the view, its model,
//! its drawing); [`widgets`] holds what the views share; [`policy`] is the reviewer's audit
//! policy every audit in the page is judged against; [`ingest`], [`gunzip`], [`unpack`], [`halves`],
//! [`offload`], [`site`], [`publish`] and [`panic_report`] are the browser glue under them.

pub mod app;
pub mod digests;
pub mod file_kind;
pub mod gunzip;
pub mod halves;
pub mod handoff;
pub mod ingest;
pub mod offload;
pub mod panic_report;
pub mod policy;
pub mod publish;
pub mod route;
pub mod site;
pub mod unpack;
pub mod views;
pub mod warm;
pub mod widgets;

pub use app::App;
