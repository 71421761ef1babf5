//! What the trace view shows of a trace beyond core's report: the loaded trace itself, the
//! report's drops as table rows, and the series the charts draw, prepared with core's
//! functions.
//!
//! Each chart also shows its numbers as a table, so chart and table must be drawn from one
//! value: the types here. Per-window counts come from `regime::counts_per_window` and token
//! quantiles from `stats::Distribution` (the same linear interpolation as the report). The
//! inter-arrival histogram has no counterpart in core; its binning (log-spaced, for display
//! only) is done here and feeds no report number.

use loadproof_core::regime::{Window, counts_per_window};
use loadproof_core::report::InspectReport;
use loadproof_core::stats::Distribution;
use loadproof_core::trace::{RowIssue, Trace};

/// A parsed source: the trace and the name it is reported under (`File.name`, no
/// directories, as the CLI reports it).
#[derive(Debug)]
pub struct Loaded {
    /// The source name in the report.
    pub source: String,
    /// The reconciled trace.
    pub trace: Trace,
    /// True for the generated sample.
    pub synthetic: bool,
}

/// `(reason, count, examples)` per drop reason, in the report's (sorted) order.
pub fn drop_rows(report: &InspectReport) -> Vec<(String, u64, Vec<RowIssue>)> {
    report
        .meta
        .dropped
        .iter()
        .map(|(reason, &count)| {
            let examples = report
                .meta
                .drop_examples
                .get(reason)
                .cloned()
                .unwrap_or_default();
            (reason.name().to_owned(), count, examples)
        })
        .collect()
}

/// Most bars the requests-over-time chart draws.
pub const MAX_COUNT_BARS: usize = 600;

/// Requests per window over the trace, as `counts_per_window` merges them.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCounts {
    /// Requests in each bar.
    pub counts: Vec<u64>,
    /// Width of one bar in seconds (one window, or several merged).
    pub bar_s: f64,
    /// The window the counts use, seconds.
    pub window_s: f64,
}

impl WindowCounts {
    /// The counts of `trace` over `window`, at most [`MAX_COUNT_BARS`] bars.
    pub fn of(trace: &Trace, window: Window) -> WindowCounts {
        let counts = counts_per_window(&trace.requests().arrival_ns, window, MAX_COUNT_BARS);
        // counts_per_window merges `group` windows per bar; recover the group to label the axis.
        let windows = u64::try_from(trace.span_ns() / window.ns())
            .unwrap_or(0)
            .saturating_add(1);
        let group = windows.div_ceil(MAX_COUNT_BARS as u64).max(1);
        WindowCounts {
            counts,
            bar_s: window.secs() * group as f64,
            window_s: window.secs(),
        }
    }

    /// The largest bar.
    pub fn peak(&self) -> u64 {
        self.counts.iter().copied().max().unwrap_or(0)
    }
}

/// One bin of the inter-arrival histogram: gaps in `[lo_s, hi_s)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GapBin {
    /// Lower edge, seconds.
    pub lo_s: f64,
    /// Upper edge, seconds (the last bin includes it).
    pub hi_s: f64,
    /// Gaps in the bin.
    pub count: u64,
}

/// Gaps between consecutive arrivals, in log-spaced bins.
#[derive(Debug, Clone, PartialEq)]
pub struct GapHistogram {
    /// Gaps of exactly zero (requests recorded at the same instant); a log axis cannot show
    /// them, so they are counted apart.
    pub simultaneous: u64,
    /// Bins over the positive gaps, ascending; empty when every gap is zero.
    pub bins: Vec<GapBin>,
}

impl GapHistogram {
    /// Bins the positive gaps of `trace` into `n_bins` log-spaced bins.
    pub fn of(trace: &Trace, n_bins: usize) -> GapHistogram {
        let arrivals = &trace.requests().arrival_ns;
        let gaps = || {
            arrivals.windows(2).filter_map(|pair| match pair {
                [a, b] => Some(b.saturating_sub(*a)),
                _ => None,
            })
        };
        let simultaneous = gaps().filter(|&g| g == 0).count() as u64;
        let positive = || gaps().filter(|&g| g > 0);
        let (Some(min_ns), Some(max_ns)) = (positive().min(), positive().max()) else {
            return GapHistogram {
                simultaneous,
                bins: Vec::new(),
            };
        };
        let n_bins = n_bins.max(1);
        let lo = (min_ns as f64 / 1e9).ln();
        // A single distinct gap still gets one bin of visible width.
        let hi = (max_ns as f64 / 1e9).ln().max(lo + std::f64::consts::LN_2);
        let step = (hi - lo) / n_bins as f64;
        let mut bins: Vec<GapBin> = (0..n_bins)
            .map(|i| GapBin {
                lo_s: (lo + step * i as f64).exp(),
                hi_s: (lo + step * (i + 1) as f64).exp(),
                count: 0,
            })
            .collect();
        for gap in positive() {
            let position = ((gap as f64 / 1e9).ln() - lo) / step;
            let idx = (position.max(0.0) as usize).min(n_bins - 1);
            if let Some(bin) = bins.get_mut(idx) {
                bin.count += 1;
            }
        }
        GapHistogram { simultaneous, bins }
    }
}

/// Quantiles of one token column: the CDF curve plus a few labelled points for the table.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenCdf {
    /// `(tokens, share of requests at or below)` at evenly spaced shares from 0 to 1.
    pub curve: Vec<(f64, f64)>,
    /// `(q, tokens)` at the quantiles listed in [`TABLE_QUANTILES`].
    pub table: Vec<(f64, f64)>,
}

/// Quantiles the token tables list.
pub const TABLE_QUANTILES: [f64; 8] = [0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0];

impl TokenCdf {
    /// The CDF of `values`, sampled at `points + 1` shares, by core's linear-interpolation
    /// percentile (so its p50 and p95 equal the report's).
    pub fn of(values: &[u32], points: usize) -> TokenCdf {
        let dist = Distribution::of_u32(values);
        let points = points.max(1);
        let curve = (0..=points)
            .filter_map(|i| {
                let q = i as f64 / points as f64;
                dist.quantile(q).map(|v| (v, q))
            })
            .collect();
        let table = TABLE_QUANTILES
            .iter()
            .filter_map(|&q| dist.quantile(q).map(|v| (q, v)))
            .collect();
        TokenCdf { curve, table }
    }
}
