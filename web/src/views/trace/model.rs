//! What the trace view shows of a trace beyond core's report: the loaded trace itself, the
//! report's drops as table rows, and the series the charts draw, prepared with core's
//! functions.
//!
//! Each chart also shows its numbers as a table, so chart and table must be drawn from one
//! value: the types here. Per-window counts come from `regime::counts_per_window` and token
//! quantiles from `stats::Distribution` (the same linear interpolation as the report). The
//! inter-arrival chart draws the report's own `arrival_gaps` (core's recording grid); only
//! its labels are made here.

use loadproof_core::regime::{Regime, RegimeError, Window, counts_per_window};
use loadproof_core::report::InspectReport;
use loadproof_core::stats::Distribution;
use loadproof_core::trace::{ArrivalGaps, RowIssue, Trace};

use crate::widgets::number::readable;

/// A parsed source: the trace and the name it is reported under (`File.name`, no
/// directories, as the CLI reports it), with the part of its report no window changes.
#[derive(Debug)]
pub struct Loaded {
    /// The source name in the report.
    pub source: String,
    /// The reconciled trace.
    pub trace: Trace,
    /// `ArrivalGaps::of(&trace)`: read once per load (in the parsing worker where there is
    /// one) and kept, since the gaps do not depend on the window: a new window reads only the
    /// regime again.
    pub gaps: ArrivalGaps,
    /// `Regime::of(&trace, window)` for the window in force when the trace was rebuilt, read
    /// on the page while the worker read the gaps; used while that window stands.
    pub regime: Option<(Window, Result<Regime, RegimeError>)>,
    /// True for the generated sample.
    pub synthetic: bool,
}

impl Loaded {
    /// A trace read on the page's thread (the sample, or no worker): its gaps read here.
    pub fn read_here(source: String, trace: Trace, synthetic: bool) -> Loaded {
        let gaps = ArrivalGaps::of(&trace);
        Loaded {
            source,
            trace,
            gaps,
            regime: None,
            synthetic,
        }
    }

    /// Core's report over `window`, the same as `InspectReport::new`: the kept gaps and the
    /// regime read for `window` (the one read at load when it was for `window`).
    pub fn report(&self, window: Window) -> InspectReport {
        let regime = match &self.regime {
            Some((read_for, regime)) if *read_for == window => regime.clone(),
            _ => Regime::of(&self.trace, window),
        };
        InspectReport::from_parts(&self.source, &self.trace, regime, self.gaps.clone())
    }
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

/// What each bin of the inter-arrival chart is called: `3 s` when a bin holds one multiple
/// of the grid, `30–60 s` when it holds several, `≥ 690 s` for the open-ended last.
pub fn gap_bin_labels(gaps: &ArrivalGaps) -> Vec<String> {
    let one_tick = gaps.grid_s.unwrap_or(1e-9) == gaps.bin_width_s;
    gaps.bins
        .iter()
        .map(|bin| {
            let from = readable(bin.from_s);
            match bin.to_s {
                None => format!("≥ {from} s"),
                // Positive gaps rounded onto the tick before: distinct timestamps, one tick.
                Some(_) if one_tick && bin.from_s == 0.0 => "0 s (same tick)".to_owned(),
                Some(_) if one_tick => format!("{from} s"),
                Some(to) => format!("{from}–{} s", readable(to)),
            }
        })
        .collect()
}

/// The recording grid as a reader says it: `3 s`, `1 ms`, `1 µs`.
pub fn grid_words(grid_s: f64) -> String {
    let (value, unit) = if grid_s >= 1.0 {
        (grid_s, "s")
    } else if grid_s >= 1e-3 {
        (grid_s * 1e3, "ms")
    } else if grid_s >= 1e-6 {
        (grid_s * 1e6, "µs")
    } else {
        (grid_s * 1e9, "ns")
    };
    format!("{} {unit}", readable(value))
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

#[cfg(test)]
mod tests {
    use loadproof_core::trace::{ArrivalGaps, GapBin};

    use super::{gap_bin_labels, grid_words};

    fn gaps(grid_s: Option<f64>, bin_width_s: f64, bins: &[(f64, Option<f64>)]) -> ArrivalGaps {
        ArrivalGaps {
            grid_s,
            gaps: 10,
            zero_gaps: 1,
            bin_width_s,
            bins: bins
                .iter()
                .map(|&(from_s, to_s)| GapBin {
                    from_s,
                    to_s,
                    gaps: 1,
                })
                .collect(),
            suggested_window_s: None,
        }
    }

    #[test]
    fn a_bin_of_one_tick_is_named_by_the_tick() {
        let one = gaps(Some(3.0), 3.0, &[(3.0, Some(6.0)), (6.0, Some(9.0))]);
        assert_eq!(gap_bin_labels(&one), ["3 s", "6 s"]);
        let wide = gaps(Some(3.0), 30.0, &[(0.0, Some(30.0)), (1350.0, None)]);
        assert_eq!(gap_bin_labels(&wide), ["0–30 s", "≥ 1,350 s"]);
    }

    #[test]
    fn grids_read_in_their_unit() {
        assert_eq!(grid_words(3.0), "3 s");
        assert_eq!(grid_words(0.001), "1 ms");
        assert_eq!(grid_words(1e-6), "1 µs");
        assert_eq!(grid_words(1e-7), "100 ns");
    }
}
