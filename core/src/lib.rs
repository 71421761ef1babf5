//! loadproof's core: everything that can be computed from bytes, with no I/O.
//!
//! The CLI and the browser app both call this crate, so a number shown in the terminal and the
//! same number shown in the page come from one implementation. Nothing here reads files, opens
//! sockets, reads clocks or spawns threads: bytes and values come in, typed values or typed
//! errors come out. Nothing here panics on input: the browser page dies on a panic.
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod audit;
pub mod claim;
pub mod compare;
pub mod decimal;
mod divisor;
pub mod formats;
pub mod plan;
pub mod playbook;
pub mod receipt;
pub mod regime;
pub mod report;
pub mod signing;
pub mod site;
pub mod stats;
pub mod synth;
pub mod trace;

pub use regime::{Regime, Window};
pub use report::InspectReport;
pub use trace::{
    CallerFilter, DropReason, FilterReason, Format, IngestOptions, Ingester, Limits, Trace,
    TraceError, TraceMeta,
};
