//! What a knob moved: both arms' repeats, their medians and spreads, and the relative change.
//!
//! A [`MeasuredDelta`] carries every metric a claim needs — output throughput and TTFT and ITL
//! at p50 and p99 — as non-optional fields of every repeat, so a throughput-only row cannot be
//! written down. It keeps the per-repeat numbers themselves, and everything else in it is
//! recomputed from them when it is read: a hand-edited median or change is refused, not
//! believed.
//!
//! Medians, never means: one repeat that hit a cold cache or a noisy neighbour moves a mean by
//! its whole excess and a median not at all. With an even number of repeats the median is the
//! midpoint of the middle two (the textbook definition); the spread (min..max) is reported
//! beside it so a reader sees how far the repeats disagreed.

use serde::{Deserialize, Serialize};

use crate::claim::{Arm, MIN_REPEATS, Metric, Repeat};

/// A metric over the repeats of one arm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    /// The median over repeats.
    pub median: f64,
    /// The smallest repeat.
    pub min: f64,
    /// The largest repeat.
    pub max: f64,
}

/// One arm: its repeats and, per metric, their median and spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArmSummary {
    /// Every repeat, in the order given (the order of the arm's receipts).
    pub runs: Vec<Repeat>,
    /// Output throughput.
    pub throughput_tok_s: Spread,
    /// TTFT median.
    pub ttft_p50_ms: Spread,
    /// TTFT p99.
    pub ttft_p99_ms: Spread,
    /// ITL median.
    pub itl_p50_ms: Spread,
    /// ITL p99.
    pub itl_p99_ms: Spread,
}

impl ArmSummary {
    /// The spread of `metric`.
    pub fn get(&self, metric: Metric) -> Spread {
        match metric {
            Metric::Throughput => self.throughput_tok_s,
            Metric::TtftP50 => self.ttft_p50_ms,
            Metric::TtftP99 => self.ttft_p99_ms,
            Metric::ItlP50 => self.itl_p50_ms,
            Metric::ItlP99 => self.itl_p99_ms,
        }
    }
}

/// The relative change of each median, treatment against baseline: `(t − b) / b`, a fraction
/// (0.10 = +10 %). Positive is better for throughput and worse for every latency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    /// Output throughput.
    pub throughput_tok_s: f64,
    /// TTFT median.
    pub ttft_p50_ms: f64,
    /// TTFT p99.
    pub ttft_p99_ms: f64,
    /// ITL median.
    pub itl_p50_ms: f64,
    /// ITL p99.
    pub itl_p99_ms: f64,
}

impl Change {
    /// The change of `metric`.
    pub fn get(&self, metric: Metric) -> f64 {
        match metric {
            Metric::Throughput => self.throughput_tok_s,
            Metric::TtftP50 => self.ttft_p50_ms,
            Metric::TtftP99 => self.ttft_p99_ms,
            Metric::ItlP50 => self.itl_p50_ms,
            Metric::ItlP99 => self.itl_p99_ms,
        }
    }
}

/// Why repeats do not make a delta.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DeltaError {
    /// The arms have different repeat counts: the A/B interleave broke, and a median over
    /// more runs is not comparable to one over fewer.
    #[error(
        "unequal repeat counts: {baseline} baseline vs {treatment} treatment; each arm needs the same number of repeats"
    )]
    UnequalRepeats {
        /// Baseline repeats.
        baseline: usize,
        /// Treatment repeats.
        treatment: usize,
    },
    /// Fewer than [`MIN_REPEATS`] per arm.
    #[error(
        "{repeats} repeat(s) per arm: at least {MIN_REPEATS} are needed, one run has no spread"
    )]
    TooFewRepeats {
        /// Repeats per arm.
        repeats: usize,
    },
    /// A value that is not a finite positive number: a relative change to it is undefined.
    #[error("{arm} repeat {repeat}: {metric} is {value}; every metric must be a finite number > 0")]
    BadValue {
        /// The arm.
        arm: Arm,
        /// Index of the repeat in the arm (from 0).
        repeat: usize,
        /// The metric.
        metric: Metric,
        /// The value.
        value: f64,
    },
    /// A repeat's p50 is above its own p99.
    #[error("{arm} repeat {repeat}: {metric} p50 {p50} is above p99 {p99}")]
    PercentilesOutOfOrder {
        /// The arm.
        arm: Arm,
        /// Index of the repeat (from 0).
        repeat: usize,
        /// `ttft` or `itl`.
        metric: &'static str,
        /// The median.
        p50: f64,
        /// The 99th percentile.
        p99: f64,
    },
    /// The medians are so far apart that their ratio overflows.
    #[error("the change of {metric} overflows ({treatment} against {baseline})")]
    ChangeOverflows {
        /// The metric.
        metric: Metric,
        /// Baseline median.
        baseline: f64,
        /// Treatment median.
        treatment: f64,
    },
    /// A stored summary that is not what its repeats give (a hand edit).
    #[error("{field} is {stored} in the file but {recomputed} recomputed from the repeats")]
    Inconsistent {
        /// The field, e.g. `treatment.ttft_p99_ms.median`.
        field: String,
        /// What the file says.
        stored: f64,
        /// What the repeats give.
        recomputed: f64,
    },
}

/// Both arms and the change: what a knob moved. Construct with [`MeasuredDelta::from_repeats`];
/// deserializing recomputes everything from the repeats and refuses any disagreement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawDelta")]
pub struct MeasuredDelta {
    repeats: usize,
    baseline: ArmSummary,
    treatment: ArmSummary,
    change: Change,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDelta {
    repeats: usize,
    baseline: ArmSummary,
    treatment: ArmSummary,
    change: Change,
}

impl TryFrom<RawDelta> for MeasuredDelta {
    type Error = DeltaError;

    fn try_from(raw: RawDelta) -> Result<MeasuredDelta, DeltaError> {
        let recomputed = MeasuredDelta::from_repeats(&raw.baseline.runs, &raw.treatment.runs)?;
        let mut pairs: Vec<(String, f64, f64)> = vec![(
            "repeats".to_owned(),
            raw.repeats as f64,
            recomputed.repeats as f64,
        )];
        for (arm, stored, fresh) in [
            (Arm::Baseline, &raw.baseline, &recomputed.baseline),
            (Arm::Treatment, &raw.treatment, &recomputed.treatment),
        ] {
            for m in Metric::ALL {
                let (s, r) = (stored.get(m), fresh.get(m));
                pairs.push((format!("{arm}.{m}.median"), s.median, r.median));
                pairs.push((format!("{arm}.{m}.min"), s.min, r.min));
                pairs.push((format!("{arm}.{m}.max"), s.max, r.max));
            }
        }
        for m in Metric::ALL {
            pairs.push((
                format!("change.{m}"),
                raw.change.get(m),
                recomputed.change.get(m),
            ));
        }
        for (field, stored, fresh) in pairs {
            // Exact: serde_json round-trips f64 exactly here (`float_roundtrip`), so a value
            // that differs in its last bit was not produced by this computation.
            if stored != fresh {
                return Err(DeltaError::Inconsistent {
                    field,
                    stored,
                    recomputed: fresh,
                });
            }
        }
        Ok(recomputed)
    }
}

impl MeasuredDelta {
    /// Builds the delta from per-repeat numbers of each arm: medians over repeats (never
    /// means), min..max spreads, and the relative change of the medians. Refuses unequal
    /// repeat counts, fewer than [`MIN_REPEATS`], and any value a ratio cannot be taken of.
    pub fn from_repeats(
        baseline: &[Repeat],
        treatment: &[Repeat],
    ) -> Result<MeasuredDelta, DeltaError> {
        if baseline.len() != treatment.len() {
            return Err(DeltaError::UnequalRepeats {
                baseline: baseline.len(),
                treatment: treatment.len(),
            });
        }
        if baseline.len() < MIN_REPEATS {
            return Err(DeltaError::TooFewRepeats {
                repeats: baseline.len(),
            });
        }
        let b = summarize(Arm::Baseline, baseline)?;
        let t = summarize(Arm::Treatment, treatment)?;
        let rel = |metric: Metric| {
            let (treatment, baseline) = (t.get(metric).median, b.get(metric).median);
            let change = (treatment - baseline) / baseline;
            if change.is_finite() {
                Ok(change)
            } else {
                Err(DeltaError::ChangeOverflows {
                    metric,
                    baseline,
                    treatment,
                })
            }
        };
        let change = Change {
            throughput_tok_s: rel(Metric::Throughput)?,
            ttft_p50_ms: rel(Metric::TtftP50)?,
            ttft_p99_ms: rel(Metric::TtftP99)?,
            itl_p50_ms: rel(Metric::ItlP50)?,
            itl_p99_ms: rel(Metric::ItlP99)?,
        };
        Ok(MeasuredDelta {
            repeats: baseline.len(),
            baseline: b,
            treatment: t,
            change,
        })
    }

    /// Repeats per arm (equal by construction, ≥ [`MIN_REPEATS`]).
    pub fn repeats(&self) -> usize {
        self.repeats
    }

    /// The baseline arm.
    pub fn baseline(&self) -> &ArmSummary {
        &self.baseline
    }

    /// The treatment arm.
    pub fn treatment(&self) -> &ArmSummary {
        &self.treatment
    }

    /// The relative change of each median.
    pub fn change(&self) -> &Change {
        &self.change
    }
}

fn summarize(arm: Arm, repeats: &[Repeat]) -> Result<ArmSummary, DeltaError> {
    for (i, r) in repeats.iter().enumerate() {
        for m in Metric::ALL {
            let value = r.get(m);
            if !(value.is_finite() && value > 0.0) {
                return Err(DeltaError::BadValue {
                    arm,
                    repeat: i,
                    metric: m,
                    value,
                });
            }
        }
        for (metric, p50, p99) in [
            ("ttft", r.ttft_p50_ms, r.ttft_p99_ms),
            ("itl", r.itl_p50_ms, r.itl_p99_ms),
        ] {
            if p50 > p99 {
                return Err(DeltaError::PercentilesOutOfOrder {
                    arm,
                    repeat: i,
                    metric,
                    p50,
                    p99,
                });
            }
        }
    }
    let spread = |m: Metric| spread(repeats.iter().map(|r| r.get(m)));
    Ok(ArmSummary {
        runs: repeats.to_vec(),
        throughput_tok_s: spread(Metric::Throughput),
        ttft_p50_ms: spread(Metric::TtftP50),
        ttft_p99_ms: spread(Metric::TtftP99),
        itl_p50_ms: spread(Metric::ItlP50),
        itl_p99_ms: spread(Metric::ItlP99),
    })
}

/// Median and range of finite values (the caller checked them); zeros for none.
fn spread(values: impl Iterator<Item = f64>) -> Spread {
    let mut sorted: Vec<f64> = values.collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted.get(n / 2).copied().unwrap_or(0.0)
    } else {
        match (sorted.get((n / 2).wrapping_sub(1)), sorted.get(n / 2)) {
            // Midpoint without overflow: for finite a ≤ b, b − a does not overflow when both
            // are positive, and a + (b − a)/2 stays within [a, b].
            (Some(&a), Some(&b)) => a + (b - a) / 2.0,
            _ => 0.0,
        }
    };
    Spread {
        median,
        min: sorted.first().copied().unwrap_or(0.0),
        max: sorted.last().copied().unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(t: f64) -> Repeat {
        Repeat {
            throughput_tok_s: t,
            ttft_p50_ms: 10.0,
            ttft_p99_ms: 20.0,
            itl_p50_ms: 2.0,
            itl_p99_ms: 4.0,
        }
    }

    #[test]
    fn medians_not_means_over_repeats() {
        let base = [rep(100.0), rep(100.0), rep(1000.0)];
        let treat = [rep(110.0), rep(110.0), rep(110.0)];
        let d = MeasuredDelta::from_repeats(&base, &treat).unwrap();
        assert_eq!(d.baseline().throughput_tok_s.median, 100.0);
        assert_eq!(
            d.baseline().throughput_tok_s,
            Spread {
                median: 100.0,
                min: 100.0,
                max: 1000.0
            }
        );
        // The mean (400) would read the treatment as a 72.5 % loss.
        assert!((d.change().throughput_tok_s - 0.1).abs() < 1e-12);
        // An even count takes the midpoint of the middle two.
        let even = [rep(1.0), rep(3.0), rep(4.0), rep(100.0)];
        let d = MeasuredDelta::from_repeats(&even, &even).unwrap();
        assert_eq!(d.baseline().throughput_tok_s.median, 3.5);
        assert_eq!(d.change().throughput_tok_s, 0.0);
    }

    #[test]
    fn unequal_repeat_counts_are_refused() {
        let e = MeasuredDelta::from_repeats(&[rep(1.0); 3], &[rep(1.0); 2]).unwrap_err();
        assert_eq!(
            e,
            DeltaError::UnequalRepeats {
                baseline: 3,
                treatment: 2
            }
        );
        assert!(e.to_string().contains("3 baseline vs 2 treatment"));
    }

    #[test]
    fn repeats_below_two_do_not_construct() {
        assert_eq!(
            MeasuredDelta::from_repeats(&[rep(1.0)], &[rep(1.0)]).unwrap_err(),
            DeltaError::TooFewRepeats { repeats: 1 }
        );
        assert_eq!(
            MeasuredDelta::from_repeats(&[], &[]).unwrap_err(),
            DeltaError::TooFewRepeats { repeats: 0 }
        );
    }

    #[test]
    fn a_value_a_ratio_cannot_be_taken_of_is_named() {
        let mut bad = rep(1.0);
        bad.itl_p99_ms = f64::NAN;
        let e = MeasuredDelta::from_repeats(&[rep(1.0), bad], &[rep(1.0); 2]).unwrap_err();
        assert!(matches!(
            e,
            DeltaError::BadValue {
                arm: Arm::Baseline,
                repeat: 1,
                metric: Metric::ItlP99,
                ..
            }
        ));
        let mut zero = rep(1.0);
        zero.ttft_p50_ms = 0.0;
        assert!(MeasuredDelta::from_repeats(&[rep(1.0); 2], &[zero, rep(1.0)]).is_err());
        let mut upside_down = rep(1.0);
        upside_down.ttft_p50_ms = 30.0;
        assert!(matches!(
            MeasuredDelta::from_repeats(&[rep(1.0); 2], &[rep(1.0), upside_down]),
            Err(DeltaError::PercentilesOutOfOrder { metric: "ttft", .. })
        ));
    }

    #[test]
    fn a_hand_edited_median_is_refused_on_read() {
        let d = MeasuredDelta::from_repeats(&[rep(100.0), rep(120.0)], &[rep(130.0), rep(150.0)])
            .unwrap();
        let json = serde_json::to_string(&d).unwrap();
        let back: MeasuredDelta = serde_json::from_str(&json).unwrap();
        assert_eq!(back, d);
        let edited = json.replace("\"median\":140.0", "\"median\":160.0");
        assert_ne!(edited, json);
        let e = serde_json::from_str::<MeasuredDelta>(&edited).unwrap_err();
        assert!(
            e.to_string().contains("treatment.throughput_tok_s.median"),
            "{e}"
        );
    }
}
