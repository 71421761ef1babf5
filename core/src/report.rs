//! The inspect report: one JSON shape for `loadproof trace inspect --json` and the web page,
//! so a number in the terminal and the same number in the browser come from one place.

use serde::Serialize;

use crate::regime::{Regime, RegimeError, Window};
use crate::trace::{ArrivalGaps, Trace, TraceMeta};

/// Schema identity of [`InspectReport`].
pub const INSPECT_SCHEMA: &str = "loadproof.trace.inspect/v1";

/// What a trace is and what was dropped and why: the trace's accounting ([`TraceMeta`],
/// flattened into the same object) plus its regime.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectReport {
    /// [`INSPECT_SCHEMA`].
    pub schema: &'static str,
    /// Name of the source (file name), as the caller gave it.
    pub source: String,
    /// Provenance and counts, as the ingester recorded them.
    #[serde(flatten)]
    pub meta: TraceMeta,
    /// Σ dropped.
    pub dropped_total: u64,
    /// Σ filtered.
    pub filtered_total: u64,
    /// The regime; `None` with `regime_error` when nothing was emitted.
    pub regime: Option<Regime>,
    /// Why the regime is absent.
    pub regime_error: Option<String>,
    /// The gaps between arrivals on the source's recording grid (last, so the fields before
    /// it read as they always have).
    pub arrival_gaps: ArrivalGaps,
}

impl InspectReport {
    /// Builds the report for `trace`, read from `source`, with burstiness over `window`.
    pub fn new(source: &str, trace: &Trace, window: Window) -> InspectReport {
        InspectReport::with_gaps(source, trace, window, || ArrivalGaps::of(trace))
    }

    /// As [`InspectReport::new`], with the arrival gaps `ArrivalGaps::of(trace)` handed over
    /// by `gaps`, called after the regime is read: the two passes over the arrivals are
    /// independent, so a caller with threads (the CLI) computes the gaps on another core
    /// meanwhile and `gaps` joins it (the two were a tenth of reading 30M rows, one after the
    /// other on one core). Gaps of another trace make a report of nothing: hand this trace's.
    pub fn with_gaps(
        source: &str,
        trace: &Trace,
        window: Window,
        gaps: impl FnOnce() -> ArrivalGaps,
    ) -> InspectReport {
        let regime = Regime::of(trace, window);
        InspectReport::from_parts(source, trace, regime, gaps())
    }

    /// The report of `trace` from its two passes done apart: `regime` is `Regime::of(trace,
    /// window)` and `gaps` is `ArrivalGaps::of(trace)`. The page reads them at different
    /// times, on different threads (the gaps in the worker that parsed the trace, the regime
    /// on the page meanwhile), and keeps the gaps while the window changes, since they do not
    /// depend on it. Parts of another trace make a report of nothing: hand this trace's.
    pub fn from_parts(
        source: &str,
        trace: &Trace,
        regime: Result<Regime, RegimeError>,
        gaps: ArrivalGaps,
    ) -> InspectReport {
        let meta = trace.meta();
        let (regime, regime_error) = match regime {
            Ok(r) => (Some(r), None),
            Err(e @ RegimeError::EmptyTrace) => (None, Some(e.to_string())),
        };
        InspectReport {
            schema: INSPECT_SCHEMA,
            source: source.to_owned(),
            meta: meta.clone(),
            dropped_total: meta.dropped_total(),
            filtered_total: meta.filtered_total(),
            regime,
            regime_error,
            arrival_gaps: gaps,
        }
    }

    /// Pretty JSON, deterministic (maps are ordered).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}
