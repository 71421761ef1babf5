//! The inspect report: one JSON shape for `loadproof trace inspect --json` and the web page,
//! so a number in the terminal and the same number in the browser come from one place.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::regime::{Regime, RegimeError, Window};
use crate::trace::{DropReason, FilterReason, RowIssue, Trace};

/// Schema identity of [`InspectReport`].
pub const INSPECT_SCHEMA: &str = "loadproof.trace.inspect/v1";

/// What a trace is and what was dropped and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectReport {
    /// [`INSPECT_SCHEMA`].
    pub schema: &'static str,
    /// Name of the source (file name), as the caller gave it.
    pub source: String,
    /// Format read.
    pub format: String,
    /// Layout variant.
    pub layout: String,
    /// Columns or fields seen.
    pub columns: Vec<String>,
    /// sha256 of the source bytes.
    pub source_sha256: String,
    /// Source size in bytes.
    pub bytes: u64,
    /// Data rows read.
    pub rows_read: u64,
    /// Rows emitted as requests.
    pub emitted: u64,
    /// Defects by reason.
    pub dropped: BTreeMap<DropReason, u64>,
    /// Σ dropped.
    pub dropped_total: u64,
    /// Caller filters by reason.
    pub filtered: BTreeMap<FilterReason, u64>,
    /// Σ filtered.
    pub filtered_total: u64,
    /// First few rows of each drop reason, with line and field.
    pub drop_examples: BTreeMap<DropReason, Vec<RowIssue>>,
    /// Blank lines skipped (not rows).
    pub blank_lines: u64,
    /// Unit of the source's timestamps.
    pub raw_time_unit: String,
    /// Tokens per prefix block when the source has prefix identity.
    pub prefix_block_tokens: Option<u32>,
    /// Emitted rows with a session id.
    pub session_rows: Option<u64>,
    /// Distinct sessions.
    pub sessions: Option<u64>,
    /// The regime; `None` with `regime_error` when nothing was emitted.
    pub regime: Option<Regime>,
    /// Why the regime is absent.
    pub regime_error: Option<String>,
    /// Notes from the adapter.
    pub notes: Vec<String>,
}

impl InspectReport {
    /// Builds the report for `trace`, read from `source`, with burstiness over `window`.
    pub fn new(source: &str, trace: &Trace, window: Window) -> InspectReport {
        let meta = trace.meta();
        let (regime, regime_error) = match Regime::of(trace, window) {
            Ok(r) => (Some(r), None),
            Err(e @ RegimeError::EmptyTrace) => (None, Some(e.to_string())),
        };
        InspectReport {
            schema: INSPECT_SCHEMA,
            source: source.to_owned(),
            format: meta.format.name().to_owned(),
            layout: meta.layout.clone(),
            columns: meta.columns.clone(),
            source_sha256: meta.source_sha256.clone(),
            bytes: meta.bytes,
            rows_read: meta.rows_read,
            emitted: meta.emitted,
            dropped: meta.dropped.clone(),
            dropped_total: meta.dropped_total(),
            filtered: meta.filtered.clone(),
            filtered_total: meta.filtered_total(),
            drop_examples: meta.drop_examples.clone(),
            blank_lines: meta.blank_lines,
            raw_time_unit: meta.raw_time_unit.clone(),
            prefix_block_tokens: meta.prefix_block_tokens,
            session_rows: meta.session_rows,
            sessions: meta.sessions,
            regime,
            regime_error,
            notes: meta.notes.clone(),
        }
    }

    /// Pretty JSON, deterministic (maps are ordered).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}
