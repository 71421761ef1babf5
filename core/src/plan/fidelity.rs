//! Read-back fidelity: does the file vLLM will read say what the trace says?
//!
//! Compared against the bytes on disk, re-parsed, never against an in-memory copy. Each check
//! has a statistic that is exactly 0 when the two agree; a plan passes only when every one is
//! 0. Distances are stated, not thresholds: a replay that is "close" is a different workload.
//!
//! - `request_count`, `rate_rps`, `burstiness`: relative difference `|a − b| / |a|`
//!   (0 when both are 0 or both undefined, 1 when only one is defined).
//! - `arrival_ks`, `input_len_ks`, `output_len_ks`: the two-sample Kolmogorov–Smirnov distance,
//!   computed exactly in integers ([`crate::stats::ks_distance_sorted`]).
//! - `rows_identical`: share of rows whose timestamp, lengths or ids differ from the plan, in
//!   file order — the KS distances cannot see two rows trading places.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::timed_trace::ReadBack;
use crate::regime::Window;
use crate::stats::{Distribution, dispersion_index, ks_distance_sorted};
use crate::trace::Trace;

/// One side-by-side comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Stable name.
    pub name: String,
    /// The value on the source (planned trace) side, when one number says it.
    pub source: Value,
    /// The value read back from the file.
    pub replay: Value,
    /// 0 when the two agree.
    pub statistic: f64,
    /// `statistic == 0`.
    pub pass: bool,
    /// What the statistic is, or what differed.
    pub detail: String,
}

impl Check {
    /// A check that passes exactly when `statistic == 0`.
    pub fn new(
        name: &str,
        source: Value,
        replay: Value,
        statistic: f64,
        detail: impl Into<String>,
    ) -> Check {
        Check {
            name: name.to_owned(),
            source,
            replay,
            statistic,
            pass: statistic == 0.0,
            detail: detail.into(),
        }
    }

    /// A yes/no agreement: statistic = number of disagreements.
    pub fn agreement(name: &str, problems: &[String], ok: &str) -> Check {
        let detail = if problems.is_empty() {
            ok.to_owned()
        } else {
            problems.join("; ")
        };
        Check::new(
            name,
            Value::Null,
            Value::Null,
            problems.len() as f64,
            detail,
        )
    }
}

/// The verdict: every check, and whether all passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fidelity {
    /// True only when every check's statistic is exactly 0.
    pub pass: bool,
    /// The checks, in a stable order.
    pub checks: Vec<Check>,
}

impl Fidelity {
    /// Collects checks into a verdict.
    pub fn of(checks: Vec<Check>) -> Fidelity {
        Fidelity {
            pass: checks.iter().all(|c| c.pass),
            checks,
        }
    }

    /// The failing checks.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.pass)
    }
}

/// Relative difference `|a − b| / |a|`; 0 when equal (including both undefined).
fn rel(a: Option<f64>, b: Option<f64>) -> f64 {
    match (a, b) {
        (None, None) => 0.0,
        (Some(a), Some(b)) if a == b => 0.0,
        (Some(a), Some(b)) if a != 0.0 => (a - b).abs() / a.abs(),
        _ => 1.0,
    }
}

fn num(v: Option<f64>) -> Value {
    v.and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// requests / (last − first arrival) of ascending arrivals; `None` for a zero span.
fn rate(sorted: &[i64]) -> Option<f64> {
    let span = sorted.last()?.checked_sub(*sorted.first()?)?;
    (span > 0).then(|| sorted.len() as f64 / (span as f64 / 1e9))
}

/// The statistics comparing `planned` (the trace the plan was made from, sliced and scaled)
/// with what was read back from the file, burstiness over `window`.
pub fn compare(planned: &Trace, back: &ReadBack, window: Window) -> Vec<Check> {
    let req = planned.requests();
    let (n_src, n_rep) = (planned.len() as f64, back.lines as f64);
    // A faithful file is already ascending from 0: borrow it. Anything else is sorted and
    // rebased in a copy, as the regime counts windows from the first arrival.
    let arrivals: Cow<'_, [i64]> = if back.arrival_ns.is_sorted() {
        Cow::Borrowed(&back.arrival_ns)
    } else {
        let mut sorted = back.arrival_ns.clone();
        sorted.sort_unstable();
        Cow::Owned(sorted)
    };
    let first = arrivals.first().copied().unwrap_or(0);
    let rebased: Cow<'_, [i64]> = if first == 0 {
        Cow::Borrowed(&arrivals)
    } else {
        Cow::Owned(arrivals.iter().map(|t| t - first).collect())
    };
    let d_src = dispersion_index(&req.arrival_ns, window.ns());
    let d_rep = dispersion_index(&rebased, window.ns());
    let (r_src, r_rep) = (rate(&req.arrival_ns), rate(&arrivals));
    let dist = Distribution::of_u32;
    let ks_in = dist(&req.input_tokens).ks_distance(&dist(&back.input_tokens));
    let ks_out = dist(&req.output_tokens).ks_distance(&dist(&back.output_tokens));
    let rows_detail = match &back.first_difference {
        None => "every row equals the plan, in order".to_owned(),
        Some(d) => format!(
            "{} rows differ; first at line {}, field {}: planned {}, file {}",
            back.rows_differing, d.line, d.field, d.planned, d.file
        ),
    };
    vec![
        Check::new(
            "request_count",
            Value::from(planned.len() as u64),
            Value::from(back.lines),
            rel(Some(n_src), Some(n_rep)),
            "relative difference of the number of requests",
        ),
        Check::new(
            "arrival_ks",
            Value::Null,
            Value::Null,
            ks_distance_sorted(&req.arrival_ns, &arrivals),
            "KS distance of arrival times (ns from the first request)",
        ),
        Check::new(
            "input_len_ks",
            Value::Null,
            Value::Null,
            ks_in,
            "KS distance of input lengths",
        ),
        Check::new(
            "output_len_ks",
            Value::Null,
            Value::Null,
            ks_out,
            "KS distance of output lengths",
        ),
        Check::new(
            "rate_rps",
            num(r_src),
            num(r_rep),
            rel(r_src, r_rep),
            "relative difference of requests / span",
        ),
        Check::new(
            "burstiness",
            num(d_src),
            num(d_rep),
            rel(d_src, d_rep),
            format!(
                "relative difference of D, the index of dispersion at {} s windows",
                window.secs()
            ),
        ),
        Check::new(
            "rows_identical",
            Value::from(planned.len() as u64),
            Value::from(back.lines.saturating_sub(back.rows_differing)),
            back.rows_differing as f64 / n_src.max(1.0),
            rows_detail,
        ),
    ]
}
