//! The workload regime: the few numbers that say what kind of traffic a trace is.
//!
//! Definitions (written once; the docs quote them):
//! - `rate_rps` = emitted requests / span, span = last arrival − first arrival.
//! - `burstiness` = index of dispersion D = population variance / mean of per-window request
//!   counts, windows `[k·w, (k+1)·w)` from the first arrival, `k = 0..=floor(span/w)`, empty
//!   windows counted. D = 1 for Poisson arrivals, < 1 paced, > 1 bursty.
//! - token p50/p95: linear interpolation between order statistics (numpy's default, type 7),
//!   unrounded.
//! - `io_ratio` = Σ input tokens / Σ output tokens.
//! - `session_share` = emitted rows with a session id / emitted rows.
//! - `timestamp_resolution_s` = the smallest positive gap between consecutive distinct
//!   timestamps of every sound row of the source, before the caller's filters: the finest
//!   spacing the source actually records (Mooncake's ~3 s grid shows up here).

use serde::{Deserialize, Serialize};

use crate::stats::{Percentiles, dispersion_index};
use crate::trace::{Requests, Trace};

/// A window width for burstiness, in nanoseconds (> 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    ns: i64,
}

impl Window {
    /// One second: the default, pinned so regimes are comparable.
    pub const ONE_SECOND: Window = Window { ns: 1_000_000_000 };

    /// A window of `secs` seconds; `None` unless finite and at least 1 µs.
    pub fn from_secs(secs: f64) -> Option<Window> {
        let ns = (secs * 1e9).round();
        (secs.is_finite() && (1_000.0..9.2e18).contains(&ns)).then_some(Window { ns: ns as i64 })
    }

    /// Width in nanoseconds.
    pub fn ns(self) -> i64 {
        self.ns
    }

    /// Width in seconds.
    pub fn secs(self) -> f64 {
        self.ns as f64 / 1e9
    }
}

/// Windows beyond this many would mean a window far finer than any trace is recorded at.
pub const MAX_WINDOWS: i64 = 1 << 34;

/// The regime of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regime {
    /// Emitted requests.
    pub requests: u64,
    /// Last arrival − first arrival, seconds.
    pub span_s: f64,
    /// requests / span; `None` when the span is 0.
    pub rate_rps: Option<f64>,
    /// Index of dispersion of per-window counts; `None` when fewer than two windows.
    pub burstiness: Option<f64>,
    /// The window the burstiness was computed over, seconds.
    pub window_s: f64,
    /// Number of windows (`floor(span/w) + 1`).
    pub windows: u64,
    /// The source's recording grid, seconds: the smallest positive gap between consecutive
    /// distinct timestamps of every sound row, before the caller's filters; `None` if all
    /// share one timestamp.
    pub timestamp_resolution_s: Option<f64>,
    /// Distinct timestamps among every sound row, before the caller's filters.
    pub distinct_timestamps: u64,
    /// Prompt token percentiles.
    pub input_tokens: Percentiles,
    /// Completion token percentiles.
    pub output_tokens: Percentiles,
    /// Σ input / Σ output.
    pub io_ratio: f64,
    /// Share of emitted rows with a session id; `None` when the layout has no sessions.
    pub session_share: Option<f64>,
    /// Warnings about how far these numbers can be read.
    pub warnings: Vec<String>,
}

/// Why a regime cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegimeError {
    /// No request was emitted.
    #[error("cannot compute a regime for a trace with no emitted requests")]
    EmptyTrace,
}

impl Regime {
    /// Computes the regime of `trace` with burstiness over `window`. Takes a [`Trace`], not
    /// bare columns, because only a constructed trace guarantees rebased, ordered arrivals.
    pub fn of(trace: &Trace, window: Window) -> Result<Regime, RegimeError> {
        let req = trace.requests();
        let meta = trace.meta();
        let resolution_ns = meta.timestamp_resolution_ns;
        let distinct = meta.distinct_timestamps;
        let arrivals = &req.arrival_ns;
        let n = arrivals.len() as u64;
        if n == 0 {
            return Err(RegimeError::EmptyTrace);
        }
        let span_ns = arrivals.last().copied().unwrap_or(0);
        let span_s = span_ns as f64 / 1e9;
        let mut warnings = Vec::new();
        let rate_rps = (span_ns > 0).then(|| n as f64 / span_s);
        if rate_rps.is_none() {
            warnings.push("all requests arrive at one instant: rate is undefined".to_owned());
        }
        let windows = span_ns / window.ns() + 1;
        let burstiness = if windows > MAX_WINDOWS {
            warnings.push(format!(
                "window {} s gives more than {MAX_WINDOWS} windows over the span: burstiness not computed",
                window.secs()
            ));
            None
        } else if windows < 2 {
            warnings.push(format!(
                "span {span_s} s fits in one {} s window: burstiness is undefined",
                window.secs()
            ));
            None
        } else {
            dispersion_index(arrivals, window.ns())
        };
        let timestamp_resolution_s = resolution_ns.map(|r| r as f64 / 1e9);
        if let Some(r) = resolution_ns
            && window.ns() < r
        {
            warnings.push(format!(
                "window {} s is finer than the source's timestamp resolution {} s: burstiness at this window reflects the recording grid, not the traffic",
                window.secs(),
                r as f64 / 1e9
            ));
        }
        let input_tokens = Percentiles::of_u32(&req.input_tokens);
        let output_tokens = Percentiles::of_u32(&req.output_tokens);
        let sum_in: u64 = req.input_tokens.iter().map(|&v| u64::from(v)).sum();
        let sum_out: u64 = req.output_tokens.iter().map(|&v| u64::from(v)).sum();
        let io_ratio = if sum_out == 0 {
            0.0
        } else {
            sum_in as f64 / sum_out as f64
        };
        let session_share = req.session.as_ref().map(|s| {
            let with = s.iter().filter(|&&idx| idx != Requests::NO_SESSION).count();
            with as f64 / n as f64
        });
        Ok(Regime {
            requests: n,
            span_s,
            rate_rps,
            burstiness,
            window_s: window.secs(),
            windows: windows as u64,
            timestamp_resolution_s,
            distinct_timestamps: distinct,
            input_tokens,
            output_tokens,
            io_ratio,
            session_share,
            warnings,
        })
    }
}

/// Requests per window over the whole span (the counts the burstiness is computed from),
/// merged into at most `max_bins` equal groups for plotting.
pub fn counts_per_window(arrivals: &[i64], window: Window, max_bins: usize) -> Vec<u64> {
    let span = arrivals.last().copied().unwrap_or(0);
    let windows = (span / window.ns() + 1).clamp(1, MAX_WINDOWS) as u64;
    let max_bins = max_bins.max(1) as u64;
    let group = windows.div_ceil(max_bins).max(1);
    let bins = windows.div_ceil(group) as usize;
    let mut counts = vec![0u64; bins];
    for &t in arrivals {
        let idx = ((t / window.ns()) as u64 / group) as usize;
        if let Some(c) = counts.get_mut(idx) {
            *c += 1;
        }
    }
    counts
}
