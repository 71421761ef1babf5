//! When may a row be applied to live traffic: the part of the playbook that gets argued about,
//! so it lives apart from the field list.
//!
//! A query is judged against every row on its own (no row hides behind a nearer one):
//! 1. an illustrative row is never selected; an invalidated one neither;
//! 2. exact gates, in [`GateName::ALL`] order, each a named [`MatchPolicy`] field so that
//!    loosening one shows in a diff; knobs compare set *and* values;
//! 3. burstiness windows must be equal: D at 1 s and D at 3 s are different quantities;
//! 4. per-axis distance `|log2(a/b)|` — scale-free, symmetric, 0 at equality — with burstiness
//!    as `|log2((1+a)/(1+b))|` so a perfectly paced trace (D = 0) stays comparable; combined
//!    by L∞ (the worst axis), because a mean lets one axis 8× off hide among five identical
//!    ones (0.5 as a mean, 3.0 as L∞). Rate is an axis only when the policy says so.
//! 5. distance 0 applies the row; an axis over its calibrated tolerance rejects it; any other
//!    nonzero axis without a calibrated tolerance answers `uncalibrated`, naming the farthest
//!    such axis. No tolerance ships: each needs a calibration citation to exist at all.
//!
//! Calibrating an axis (the way out of `uncalibrated`): pick pairs of regimes that differ
//! mostly on that axis, measure one knob's delta under each with ≥ 2 repeats, find the
//! distance at which the delta's sign or size stops holding within its repeat spread, and cite
//! that experiment in [`AxisTolerance::new`].

use std::fmt;

use serde::{Deserialize, Serialize};

use super::axes::{AxesError, RegimeAxes, RegimeAxis};
use super::identity::{Identity, knobs_line};
use super::row::{Evidence, Row};

/// Schema identity of [`MatchReport`] (the `playbook match --json` interface).
pub const MATCH_SCHEMA: &str = "loadproof.playbook.match/v1";

/// Why a tolerance does not construct.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToleranceError {
    /// No citation: a number nobody measured would quietly become a production constant.
    #[error(
        "a tolerance needs a calibration citation (the experiment that measured it); none given"
    )]
    NoCalibration,
    /// Not a finite number ≥ 0.
    #[error("max_distance {value}: must be a finite number >= 0")]
    BadMaxDistance {
        /// The value.
        value: f64,
    },
}

/// How far a row's regime may be from the query on one axis, and the experiment that says so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawTolerance")]
pub struct AxisTolerance {
    max_distance: f64,
    calibration: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTolerance {
    max_distance: f64,
    calibration: String,
}

impl TryFrom<RawTolerance> for AxisTolerance {
    type Error = ToleranceError;

    fn try_from(r: RawTolerance) -> Result<AxisTolerance, ToleranceError> {
        AxisTolerance::new(r.max_distance, r.calibration)
    }
}

impl AxisTolerance {
    /// A tolerance of `max_distance` (in the axis's log2 units) calibrated by `calibration`
    /// (a non-empty citation of the experiment that measured it).
    pub fn new(
        max_distance: f64,
        calibration: impl Into<String>,
    ) -> Result<AxisTolerance, ToleranceError> {
        let calibration = calibration.into();
        if calibration.trim().is_empty() {
            return Err(ToleranceError::NoCalibration);
        }
        if !(max_distance.is_finite() && max_distance >= 0.0) {
            return Err(ToleranceError::BadMaxDistance {
                value: max_distance,
            });
        }
        Ok(AxisTolerance {
            max_distance,
            calibration,
        })
    }

    /// The largest distance on this axis at which a row still applies.
    pub fn max_distance(&self) -> f64 {
        self.max_distance
    }

    /// The citation.
    pub fn calibration(&self) -> &str {
        &self.calibration
    }
}

/// One optional tolerance per axis; `None` is uncalibrated. Named fields rather than a map so
/// a new tolerance shows as its own line in a diff.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tolerances {
    /// Rate (used only when [`MatchPolicy::rate_is_axis`]).
    pub rate_rps: Option<AxisTolerance>,
    /// Burstiness.
    pub burstiness: Option<AxisTolerance>,
    /// Input p50.
    pub input_p50: Option<AxisTolerance>,
    /// Input p95.
    pub input_p95: Option<AxisTolerance>,
    /// Output p50.
    pub output_p50: Option<AxisTolerance>,
    /// Output p95.
    pub output_p95: Option<AxisTolerance>,
}

impl Tolerances {
    /// The tolerance of `axis`.
    pub fn get(&self, axis: RegimeAxis) -> Option<&AxisTolerance> {
        match axis {
            RegimeAxis::Rate => self.rate_rps.as_ref(),
            RegimeAxis::Burstiness => self.burstiness.as_ref(),
            RegimeAxis::InputP50 => self.input_p50.as_ref(),
            RegimeAxis::InputP95 => self.input_p95.as_ref(),
            RegimeAxis::OutputP50 => self.output_p50.as_ref(),
            RegimeAxis::OutputP95 => self.output_p95.as_ref(),
        }
    }
}

/// What the matcher requires. Each exact gate is its own field (`true` = compared exactly);
/// the default compares every gate, leaves rate out of the distance and calibrates nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchPolicy {
    /// Model and its revision.
    pub model_and_revision: bool,
    /// GPU SKU.
    pub gpu_sku: bool,
    /// Engine and its version.
    pub engine_and_version: bool,
    /// Traffic origin and prefix identity.
    pub source_kind: bool,
    /// The client's concurrency cap.
    pub concurrency: bool,
    /// Knob names and values.
    pub knobs: bool,
    /// Whether rate is a distance axis. Off by default: two regimes identical but for an 8×
    /// rate read 0.0 apart without it and 3.0 with it; whether a knob's effect transfers across
    /// load is exactly what calibration has to establish, so the default neither assumes it
    /// does nor that it does not — it leaves rate out and says so.
    pub rate_is_axis: bool,
    /// Per-axis calibrated tolerances.
    pub tolerances: Tolerances,
}

impl Default for MatchPolicy {
    fn default() -> MatchPolicy {
        MatchPolicy {
            model_and_revision: true,
            gpu_sku: true,
            engine_and_version: true,
            source_kind: true,
            concurrency: true,
            knobs: true,
            rate_is_axis: false,
            tolerances: Tolerances::default(),
        }
    }
}

impl MatchPolicy {
    /// The axes this policy measures distance on, in tie-breaking order.
    pub fn axes(&self) -> Vec<RegimeAxis> {
        RegimeAxis::ALL
            .into_iter()
            .filter(|a| self.rate_is_axis || *a != RegimeAxis::Rate)
            .collect()
    }

    fn gate_on(&self, gate: GateName) -> bool {
        match gate {
            GateName::ModelAndRevision => self.model_and_revision,
            GateName::GpuSku => self.gpu_sku,
            GateName::EngineAndVersion => self.engine_and_version,
            GateName::SourceKind => self.source_kind,
            GateName::Concurrency => self.concurrency,
            GateName::Knobs => self.knobs,
        }
    }
}

/// The exact gates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateName {
    /// Model and revision.
    ModelAndRevision,
    /// GPU SKU.
    GpuSku,
    /// Engine and version.
    EngineAndVersion,
    /// Source kind.
    SourceKind,
    /// Concurrency.
    Concurrency,
    /// Knob set and values.
    Knobs,
}

impl GateName {
    /// Every gate, in the order they are checked.
    pub const ALL: [GateName; 6] = [
        GateName::ModelAndRevision,
        GateName::GpuSku,
        GateName::EngineAndVersion,
        GateName::SourceKind,
        GateName::Concurrency,
        GateName::Knobs,
    ];

    /// The field name in [`MatchPolicy`].
    pub fn name(self) -> &'static str {
        match self {
            GateName::ModelAndRevision => "model_and_revision",
            GateName::GpuSku => "gpu_sku",
            GateName::EngineAndVersion => "engine_and_version",
            GateName::SourceKind => "source_kind",
            GateName::Concurrency => "concurrency",
            GateName::Knobs => "knobs",
        }
    }

    /// The gated value of `identity`, as one comparable string.
    fn value(self, identity: &Identity) -> String {
        match self {
            GateName::ModelAndRevision => {
                format!("{} @ {}", identity.model, identity.model_revision)
            }
            GateName::GpuSku => identity.gpu_sku.clone(),
            GateName::EngineAndVersion => {
                format!("{} {}", identity.engine, identity.engine_version)
            }
            GateName::SourceKind => identity.source_kind.to_string(),
            GateName::Concurrency => identity.concurrency.to_string(),
            GateName::Knobs => knobs_line(&identity.knobs),
        }
    }

    /// Whether `row` and `query` agree on this gate, compared on the typed values (the
    /// strings are for reading).
    fn agrees(self, row: &Identity, query: &Identity) -> bool {
        match self {
            GateName::ModelAndRevision => {
                row.model == query.model && row.model_revision == query.model_revision
            }
            GateName::GpuSku => row.gpu_sku == query.gpu_sku,
            GateName::EngineAndVersion => {
                row.engine == query.engine && row.engine_version == query.engine_version
            }
            GateName::SourceKind => row.source_kind == query.source_kind,
            GateName::Concurrency => row.concurrency == query.concurrency,
            GateName::Knobs => row.knobs == query.knobs,
        }
    }
}

impl fmt::Display for GateName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is asked: the live traffic's regime and the identity to gate on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    /// The serving stack and knob setting the caller wants a row for.
    pub identity: Identity,
    /// The live traffic's regime.
    pub regime: RegimeAxes,
}

/// One axis's contribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AxisDistance {
    /// The axis.
    pub axis: RegimeAxis,
    /// The row's value.
    pub row: f64,
    /// The query's value.
    pub query: f64,
    /// The distance on this axis.
    pub distance: f64,
}

/// The distance between two regimes over a policy's axes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distance {
    /// Per axis, in tie-breaking order.
    pub axes: Vec<AxisDistance>,
    /// The largest per-axis distance (L∞).
    pub linf: f64,
    /// The first axis attaining it; `None` when every axis is 0.
    pub limiting: Option<RegimeAxis>,
}

/// Why two regimes have no distance.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DistanceError {
    /// Burstiness at different windows.
    #[error(
        "burstiness windows differ ({a_s} s vs {b_s} s): D at one window says nothing about D at another"
    )]
    WindowMismatch {
        /// The first regime's window, s.
        a_s: f64,
        /// The second's.
        b_s: f64,
    },
    /// One of the regimes is not usable.
    #[error("{0}")]
    Axes(#[from] AxesError),
}

/// `|log2(a/b)|` for positive finite `a`, `b`: scale-free, symmetric, 0 at equality.
pub fn log2_distance(a: f64, b: f64) -> f64 {
    if a == b {
        return 0.0;
    }
    // The ratio first, so an exact power of two reads exactly (8× is 3.0, not 2.9999…); the
    // difference of logs only when the ratio itself overflows or underflows.
    let ratio = a / b;
    if ratio.is_normal() {
        ratio.log2().abs()
    } else {
        (a.log2() - b.log2()).abs()
    }
}

/// `|log2((1+a)/(1+b))|`: burstiness D is 0 for a perfectly paced trace, and a bare ratio
/// would make that trace incomparable to everything, including another paced one.
pub fn burstiness_distance(a: f64, b: f64) -> f64 {
    log2_distance(1.0 + a, 1.0 + b)
}

/// The distance from regime `a` to regime `b`: per axis, then L∞, naming the limiting axis.
/// Rate counts only when `rate_is_axis`.
pub fn distance(
    a: &RegimeAxes,
    b: &RegimeAxes,
    rate_is_axis: bool,
) -> Result<Distance, DistanceError> {
    a.validate()?;
    b.validate()?;
    if a.window_s != b.window_s {
        return Err(DistanceError::WindowMismatch {
            a_s: a.window_s,
            b_s: b.window_s,
        });
    }
    let mut axes = Vec::new();
    let mut linf = 0.0f64;
    let mut limiting = None;
    for axis in RegimeAxis::ALL {
        if axis == RegimeAxis::Rate && !rate_is_axis {
            continue;
        }
        let (x, y) = (a.get(axis), b.get(axis));
        let d = if axis == RegimeAxis::Burstiness {
            burstiness_distance(x, y)
        } else {
            log2_distance(x, y)
        };
        if d > linf {
            linf = d;
            limiting = Some(axis);
        }
        axes.push(AxisDistance {
            axis,
            row: x,
            query: y,
            distance: d,
        });
    }
    Ok(Distance {
        axes,
        linf,
        limiting,
    })
}

/// A row by position and id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowRef {
    /// Index in the playbook (from 0).
    pub index: usize,
    /// The row's id.
    pub id: String,
}

/// Why a row was not selected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// A worked example: never selectable.
    Illustrative,
    /// Invalidated, with its reason.
    Invalidated {
        /// The invalidation's reason.
        reason: String,
    },
    /// An exact gate failed.
    Gate {
        /// Which.
        gate: GateName,
        /// The row's value.
        row: String,
        /// The query's value.
        query: String,
    },
    /// Burstiness at another window.
    WindowMismatch {
        /// The row's window, s.
        row_window_s: f64,
        /// The query's window, s.
        query_window_s: f64,
    },
    /// An axis farther than its calibrated tolerance (the farthest such axis).
    OutsideTolerance {
        /// The axis.
        axis: RegimeAxis,
        /// Its distance.
        distance: f64,
        /// The tolerance.
        max_distance: f64,
        /// The tolerance's citation.
        calibration: String,
        /// Every axis.
        distances: Distance,
    },
    /// A nonzero distance on an axis nobody calibrated: no row applies until one is.
    Uncalibrated {
        /// The farthest uncalibrated axis.
        axis: RegimeAxis,
        /// Its distance.
        distance: f64,
        /// Every axis.
        distances: Distance,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Illustrative => {
                f.write_str("illustrative: an example with invented numbers, never selectable")
            }
            Reason::Invalidated { reason } => write!(f, "invalidated: {reason}"),
            Reason::Gate { gate, row, query } => {
                write!(f, "gate {gate}: row has {row}, query has {query}")
            }
            Reason::WindowMismatch {
                row_window_s,
                query_window_s,
            } => write!(
                f,
                "burstiness window: row {row_window_s} s, query {query_window_s} s (not comparable)"
            ),
            Reason::OutsideTolerance {
                axis,
                distance,
                max_distance,
                calibration,
                ..
            } => write!(
                f,
                "outside tolerance on {axis}: {distance:.3} > {max_distance} ({calibration})"
            ),
            Reason::Uncalibrated {
                axis,
                distance,
                distances,
            } => write!(
                f,
                "uncalibrated: {distance:.3} away on {axis} (L∞ {:.3}), and no calibrated tolerance says how far is close enough",
                distances.linf
            ),
        }
    }
}

/// A row that applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selected {
    /// Which row.
    pub row: RowRef,
    /// True when every axis is at distance 0.
    pub exact: bool,
    /// The distance.
    pub distance: Distance,
    /// The row's delta is a lower bound ([`super::delta_is_floor`]).
    pub delta_is_floor: bool,
}

/// A row that does not apply, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejected {
    /// Which row.
    pub row: RowRef,
    /// The first reason in the order of the module doc.
    pub reason: Reason,
}

/// The answer to a query: every row is in exactly one of the two lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchReport {
    /// [`MATCH_SCHEMA`].
    pub schema: String,
    /// The policy applied.
    pub policy: MatchPolicy,
    /// The query.
    pub query: Query,
    /// Rows that apply, nearest first (ties by index).
    pub selected: Vec<Selected>,
    /// Rows that do not, in playbook order.
    pub rejected: Vec<Rejected>,
}

/// Judges every row against `query` under `policy`. Refuses only a query whose regime is not
/// usable; every row gets an answer.
pub fn match_rows(
    rows: &[Row],
    query: &Query,
    policy: &MatchPolicy,
) -> Result<MatchReport, AxesError> {
    query.regime.validate()?;
    let mut selected = Vec::new();
    let mut rejected = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let r = RowRef {
            index,
            id: row.id().to_owned(),
        };
        match judge(row, query, policy) {
            Ok(distance) => selected.push(Selected {
                row: r,
                exact: distance.linf == 0.0,
                distance,
                delta_is_floor: row.delta_is_floor(),
            }),
            Err(reason) => rejected.push(Rejected { row: r, reason }),
        }
    }
    selected.sort_by(|a, b| {
        a.distance
            .linf
            .total_cmp(&b.distance.linf)
            .then(a.row.index.cmp(&b.row.index))
    });
    Ok(MatchReport {
        schema: MATCH_SCHEMA.to_owned(),
        policy: policy.clone(),
        query: query.clone(),
        selected,
        rejected,
    })
}

fn judge(row: &Row, query: &Query, policy: &MatchPolicy) -> Result<Distance, Reason> {
    if row.evidence() == Evidence::Illustrative {
        return Err(Reason::Illustrative);
    }
    if let Some(inv) = row.invalidation() {
        return Err(Reason::Invalidated {
            reason: inv.reason.clone(),
        });
    }
    for gate in GateName::ALL {
        if policy.gate_on(gate) && !gate.agrees(row.identity(), &query.identity) {
            return Err(Reason::Gate {
                gate,
                row: gate.value(row.identity()),
                query: gate.value(&query.identity),
            });
        }
    }
    let window_mismatch = Reason::WindowMismatch {
        row_window_s: row.regime().window_s,
        query_window_s: query.regime.window_s,
    };
    // Both regimes were validated (the row at construction, the query by `match_rows`), so the
    // window is the only way `distance` can refuse.
    let Ok(distances) = distance(row.regime(), &query.regime, policy.rate_is_axis) else {
        return Err(window_mismatch);
    };
    // A calibrated "too far" is a definite no, so it is reported before an uncalibrated
    // "unknown".
    let farthest = |pick: &dyn Fn(&AxisDistance) -> bool| {
        distances
            .axes
            .iter()
            .filter(|a| pick(a))
            .fold(None::<&AxisDistance>, |best, a| match best {
                Some(b) if b.distance >= a.distance => Some(b),
                _ => Some(a),
            })
            .copied()
    };
    let over = |a: &AxisDistance| {
        policy
            .tolerances
            .get(a.axis)
            .is_some_and(|t| a.distance > t.max_distance())
    };
    if let Some(a) = farthest(&over)
        && let Some(t) = policy.tolerances.get(a.axis)
    {
        return Err(Reason::OutsideTolerance {
            axis: a.axis,
            distance: a.distance,
            max_distance: t.max_distance(),
            calibration: t.calibration().to_owned(),
            distances,
        });
    }
    let uncalibrated =
        |a: &AxisDistance| a.distance > 0.0 && policy.tolerances.get(a.axis).is_none();
    if let Some(a) = farthest(&uncalibrated) {
        return Err(Reason::Uncalibrated {
            axis: a.axis,
            distance: a.distance,
            distances,
        });
    }
    Ok(distances)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Concurrency, Invalidation, Prefixes, RowSpec};
    use super::*;

    fn query() -> Query {
        Query {
            identity: identity(),
            regime: axes(),
        }
    }

    fn row_at(id: &str, regime: RegimeAxes) -> Row {
        measured(RowSpec {
            id: id.into(),
            regime,
            ..spec()
        })
    }

    #[test]
    fn log2_distance_is_scale_free_and_symmetric() {
        assert_eq!(log2_distance(1024.0, 2048.0), 1.0);
        assert_eq!(log2_distance(2048.0, 1024.0), 1.0);
        assert_eq!(log2_distance(3.0, 3.0), 0.0);
        assert!((log2_distance(1024.0, 1536.0) - 0.5849625007211562).abs() < 1e-15);
    }

    #[test]
    fn one_axis_8x_off_reads_3_0_by_l_infinity() {
        let mut far = axes();
        far.input_p95 *= 8.0;
        let d = distance(&axes(), &far, false).unwrap();
        assert_eq!(d.linf, 3.0);
        assert_eq!(d.limiting, Some(RegimeAxis::InputP95));
        let mean = d.axes.iter().map(|a| a.distance).sum::<f64>() / d.axes.len() as f64;
        assert_eq!(mean, 0.6, "five axes: the mean would read 3/5");
    }

    #[test]
    fn burstiness_zero_stays_comparable() {
        let mut paced = axes();
        paced.burstiness = 0.0;
        let mut poisson = axes();
        poisson.burstiness = 1.0;
        assert_eq!(distance(&paced, &paced, false).unwrap().linf, 0.0);
        let d = distance(&paced, &poisson, false).unwrap();
        assert_eq!(d.linf, 1.0);
        assert_eq!(d.limiting, Some(RegimeAxis::Burstiness));
    }

    #[test]
    fn rate_is_an_axis_only_when_the_policy_says_so() {
        let mut slow = axes();
        slow.rate_rps /= 8.0;
        assert_eq!(distance(&axes(), &slow, false).unwrap().linf, 0.0);
        let d = distance(&axes(), &slow, true).unwrap();
        assert_eq!((d.linf, d.limiting), (3.0, Some(RegimeAxis::Rate)));
        let rows = [row_at("r", axes())];
        let q = Query {
            regime: slow,
            ..query()
        };
        let default = match_rows(&rows, &q, &MatchPolicy::default()).unwrap();
        assert_eq!(default.selected.len(), 1);
        let with_rate = MatchPolicy {
            rate_is_axis: true,
            ..MatchPolicy::default()
        };
        let r = match_rows(&rows, &q, &with_rate).unwrap();
        assert!(matches!(
            r.rejected.first().map(|r| &r.reason),
            Some(Reason::Uncalibrated {
                axis: RegimeAxis::Rate,
                ..
            })
        ));
    }

    #[test]
    fn a_tolerance_without_calibration_does_not_construct() {
        assert_eq!(
            AxisTolerance::new(1.0, "").unwrap_err(),
            ToleranceError::NoCalibration
        );
        assert_eq!(
            AxisTolerance::new(1.0, "  ").unwrap_err(),
            ToleranceError::NoCalibration
        );
        assert!(matches!(
            AxisTolerance::new(f64::NAN, "prereg E4").unwrap_err(),
            ToleranceError::BadMaxDistance { .. }
        ));
        assert!(AxisTolerance::new(1.0, "prereg E4: sign flip at 1.4").is_ok());
        let e =
            serde_json::from_str::<AxisTolerance>(r#"{"max_distance": 1.0, "calibration": ""}"#)
                .unwrap_err();
        assert!(e.to_string().contains("calibration citation"), "{e}");
        assert!(serde_json::from_str::<AxisTolerance>(r#"{"max_distance": 1.0}"#).is_err());
    }

    #[test]
    fn without_calibration_only_an_exact_regime_applies() {
        let mut near = axes();
        near.output_p50 = 260.0;
        let rows = [row_at("exact", axes()), row_at("near", near)];
        let r = match_rows(&rows, &query(), &MatchPolicy::default()).unwrap();
        assert_eq!(r.selected.len(), 1);
        assert_eq!(r.selected[0].row.id, "exact");
        assert!(r.selected[0].exact);
        let Reason::Uncalibrated { axis, distance, .. } = &r.rejected[0].reason else {
            panic!("{:?}", r.rejected);
        };
        assert_eq!(*axis, RegimeAxis::OutputP50);
        assert!((distance - (260.0f64 / 240.0).log2()).abs() < 1e-15);
    }

    #[test]
    fn a_calibrated_tolerance_applies_a_near_row_and_rejects_a_far_one() {
        let mut near = axes();
        near.output_p50 = 260.0;
        let mut far = axes();
        far.output_p50 = 60.0;
        let mut two = axes();
        two.output_p50 = 260.0;
        two.input_p50 = 400.0;
        let rows = [row_at("near", near), row_at("far", far), row_at("two", two)];
        let policy = MatchPolicy {
            tolerances: Tolerances {
                output_p50: Some(AxisTolerance::new(0.5, "test: invented").unwrap()),
                ..Tolerances::default()
            },
            ..MatchPolicy::default()
        };
        let r = match_rows(&rows, &query(), &policy).unwrap();
        assert_eq!(r.selected.len(), 1);
        assert_eq!(r.selected[0].row.id, "near");
        assert!(!r.selected[0].exact);
        assert!(matches!(
            &r.rejected[0].reason,
            Reason::OutsideTolerance { axis: RegimeAxis::OutputP50, distance, max_distance, .. }
                if *distance == 2.0 && *max_distance == 0.5
        ));
        // Output p50 is within its tolerance; input p50 has none.
        assert!(matches!(
            &r.rejected[1].reason,
            Reason::Uncalibrated {
                axis: RegimeAxis::InputP50,
                ..
            }
        ));
    }

    #[test]
    fn knob_values_not_just_names_gate_a_match() {
        let rows = [row_at("on", axes())];
        let mut q = query();
        q.identity
            .knobs
            .insert("enable_prefix_caching".into(), "false".into());
        let r = match_rows(&rows, &q, &MatchPolicy::default()).unwrap();
        assert!(r.selected.is_empty());
        assert_eq!(
            r.rejected[0].reason,
            Reason::Gate {
                gate: GateName::Knobs,
                row: "enable_prefix_caching=true".into(),
                query: "enable_prefix_caching=false".into(),
            }
        );
    }

    #[test]
    fn every_gate_is_a_policy_field_and_names_both_values() {
        let rows = [row_at("r", axes())];
        type Edit = fn(&mut Identity);
        let cases: [(GateName, Edit); 6] = [
            (GateName::ModelAndRevision, |i| {
                i.model_revision = "other".into()
            }),
            (GateName::GpuSku, |i| i.gpu_sku = "NVIDIA A100".into()),
            (GateName::EngineAndVersion, |i| {
                i.engine_version = "0.12.0".into()
            }),
            (GateName::SourceKind, |i| {
                i.source_kind.prefixes = Prefixes::Synthesized
            }),
            (GateName::Concurrency, |i| {
                i.concurrency = Concurrency::Max(64)
            }),
            (GateName::Knobs, |i| {
                i.knobs.insert("max_num_seqs".into(), "64".into());
            }),
        ];
        for (gate, change) in cases {
            let mut q = query();
            change(&mut q.identity);
            let r = match_rows(&rows, &q, &MatchPolicy::default()).unwrap();
            let Reason::Gate {
                gate: g,
                row,
                query,
            } = &r.rejected[0].reason
            else {
                panic!("{gate}: {:?}", r.rejected);
            };
            assert_eq!(*g, gate);
            assert_ne!(row, query, "{gate}");
            let mut loosened = MatchPolicy::default();
            match gate {
                GateName::ModelAndRevision => loosened.model_and_revision = false,
                GateName::GpuSku => loosened.gpu_sku = false,
                GateName::EngineAndVersion => loosened.engine_and_version = false,
                GateName::SourceKind => loosened.source_kind = false,
                GateName::Concurrency => loosened.concurrency = false,
                GateName::Knobs => loosened.knobs = false,
            }
            let r = match_rows(&rows, &q, &loosened).unwrap();
            assert_eq!(r.selected.len(), 1, "{gate} loosened");
        }
    }

    #[test]
    fn every_rejected_row_has_its_reason() {
        let mut other_window = axes();
        other_window.window_s = 3.0;
        let mut far = axes();
        far.input_p95 *= 8.0;
        let mut gpu = spec();
        gpu.id = "gpu".into();
        gpu.identity.gpu_sku = "NVIDIA A100".into();
        let rows = [
            row_at("exact", axes()),
            illustrative("example"),
            row_at("retired", axes())
                .invalidate(Invalidation {
                    reason: "engine upgrade".into(),
                    at_unix_ns: 1,
                    by: None,
                })
                .unwrap(),
            measured(gpu),
            row_at("window", other_window),
            row_at("far", far),
        ];
        let r = match_rows(&rows, &query(), &MatchPolicy::default()).unwrap();
        assert_eq!(r.selected.len() + r.rejected.len(), rows.len());
        let reasons: Vec<(&str, &Reason)> = r
            .rejected
            .iter()
            .map(|x| (x.row.id.as_str(), &x.reason))
            .collect();
        assert!(matches!(reasons[0], ("example", Reason::Illustrative)));
        assert!(
            matches!(reasons[1], ("retired", Reason::Invalidated { reason }) if reason == "engine upgrade")
        );
        assert!(matches!(
            reasons[2],
            (
                "gpu",
                Reason::Gate {
                    gate: GateName::GpuSku,
                    ..
                }
            )
        ));
        assert!(matches!(
            reasons[3],
            ("window", Reason::WindowMismatch { .. })
        ));
        assert!(matches!(
            reasons[4],
            ("far", Reason::Uncalibrated { axis: RegimeAxis::InputP95, distance, .. }) if *distance == 3.0
        ));
        for x in &r.rejected {
            assert!(!x.reason.to_string().is_empty());
        }
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["schema"], MATCH_SCHEMA);
        assert_eq!(json["rejected"][2]["reason"]["kind"], "gate");
        assert_eq!(json["rejected"][2]["reason"]["gate"], "gpu_sku");
    }

    #[test]
    fn illustrative_rows_are_never_selected() {
        let rows = [illustrative("ex1")];
        let everything_open = MatchPolicy {
            model_and_revision: false,
            gpu_sku: false,
            engine_and_version: false,
            source_kind: false,
            concurrency: false,
            knobs: false,
            ..MatchPolicy::default()
        };
        let r = match_rows(&rows, &query(), &everything_open).unwrap();
        assert!(r.selected.is_empty());
        assert_eq!(r.rejected[0].reason, Reason::Illustrative);
    }
}
