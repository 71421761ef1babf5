//! What the compare view reads from core's `Comparison` beyond printing it: which way each
//! change reads for its metric (the table row's class and the chart bar's colour, one rule for
//! both), the bars the chart draws, the one line on top (a summary of a comparable pair, the
//! first reason of a refused one), and the two arms' latency distributions overlaid.
//!
//! The summary names only what moved and how much; it closes with the seed's rule that one
//! receipt per arm is an observation, never a cause.

use loadproof_core::audit::LatencyFacts;
use loadproof_core::claim::Arm;
use loadproof_core::compare::{Better, Comparison, Rule, metric_label};

use crate::views::receipt::model::{MetricSamples, ReceiptModel};
use crate::widgets::number::{percent_change, readable};

/// How a change reads for its metric: a direction, not a cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// The metric moved the way its `better` names.
    Better,
    /// It moved the other way.
    Worse,
    /// It did not move.
    Same,
    /// The metric has no better direction, or there is no change.
    Neutral,
}

impl Tone {
    /// `change` read against `better`.
    pub fn of(better: Option<Better>, change: Option<f64>) -> Tone {
        match (better, change) {
            (Some(_), Some(0.0)) => Tone::Same,
            (Some(Better::Higher), Some(c)) if c > 0.0 => Tone::Better,
            (Some(Better::Lower), Some(c)) if c < 0.0 => Tone::Better,
            (Some(_), Some(_)) => Tone::Worse,
            _ => Tone::Neutral,
        }
    }

    /// The table row's class.
    pub fn class(self) -> &'static str {
        match self {
            Tone::Better => "better",
            Tone::Worse => "worse",
            Tone::Same => "same",
            Tone::Neutral => "neutral",
        }
    }
}

/// One bar of the chart: a metric's relative change and how it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The metric's name as a reader sees it ([`metric_label`]).
    pub metric: String,
    /// `(treatment − baseline) / baseline`, a fraction.
    pub relative: f64,
    /// How the change reads.
    pub tone: Tone,
}

/// The metrics that have a relative change, in the comparison's order.
pub fn bars(c: &Comparison) -> Vec<Bar> {
    c.metrics
        .iter()
        .filter_map(|m| {
            m.relative_change.map(|r| Bar {
                metric: metric_label(&m.metric)
                    .map_or_else(|| m.metric.clone(), |l| l.0.to_owned()),
                relative: r,
                tone: Tone::of(m.better, Some(r)),
            })
        })
        .collect()
}

/// The metrics the summary line names, in its order: what a reviewer looks at first.
/// Failures are named only when they moved.
const HEADLINE: [&str; 5] = [
    "throughput_tok_s",
    "ttft_p50_ms",
    "ttft_p99_ms",
    "e2el_p99_ms",
    "failed_requests",
];

/// How the summary closes: the numbers are what was seen, not what the knob did.
pub const OBSERVATION: &str = "one receipt each: an observation, not a measured effect";

/// The one line above a comparable pair's numbers: "Treatment vs baseline: Output throughput
/// -3.1%, TTFT p99 +12.0%, … — one receipt each: …". A metric without a relative change (a
/// baseline of 0) reads as its two values.
pub fn summary(c: &Comparison) -> String {
    let moved: Vec<String> = HEADLINE
        .iter()
        .filter_map(|key| {
            let m = c.metric(key)?;
            let (name, _) = metric_label(key)?;
            let name = if key.starts_with("throughput") || key.starts_with("failed") {
                name.to_lowercase()
            } else {
                name.to_owned()
            };
            match (m.relative_change, m.baseline, m.treatment) {
                (_, Some(b), Some(t)) if *key == "failed_requests" && b == t => None,
                (Some(r), _, _) => Some(format!("{name} {}", percent_change(r))),
                (None, Some(b), Some(t)) => {
                    Some(format!("{name} {} → {}", readable(b), readable(t)))
                }
                _ => None,
            }
        })
        .collect();
    if moved.is_empty() {
        format!("Treatment vs baseline: no headline metric was read on both sides — {OBSERVATION}.")
    } else {
        format!(
            "Treatment vs baseline: {} — {OBSERVATION}.",
            moved.join(", ")
        )
    }
}

/// The one sentence a refused pair opens with: its first reason, short (every reason, in
/// full, is folded below it). `None` when the pair is comparable.
pub fn refusal(c: &Comparison) -> Option<String> {
    let first = c.reasons.first()?;
    let arm = first
        .arm
        .map_or_else(|| "one".to_owned(), |a| a.to_string());
    let side = match first.arm {
        Some(Arm::Treatment) => &c.treatment,
        _ => &c.baseline,
    };
    let named = |fields: Vec<&str>| {
        let shown = fields
            .iter()
            .take(3)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if fields.len() > 3 {
            format!("{shown}, …")
        } else {
            shown
        }
    };
    let why = match first.rule {
        Rule::NotOneProtocol => format!(
            "the two receipts ran different work ({} protocol field(s) differ: {})",
            c.protocol_differences.len(),
            named(
                c.protocol_differences
                    .iter()
                    .map(|d| d.field.as_str())
                    .collect()
            )
        ),
        Rule::NotOneSubject => format!(
            "the two receipts measured different subjects ({} differ or are unknown)",
            named(
                c.subject_differences
                    .iter()
                    .map(|d| d.field.as_str())
                    .collect()
            )
        ),
        Rule::Unqualified => format!(
            "the {arm} receipt is not qualified ({} refusal(s))",
            side.refusals.len()
        ),
        Rule::DigestFailure => format!("the {arm} receipt's evidence fails verification"),
        Rule::SameFile => "both sides are the same file: one observation, not two".to_owned(),
    };
    let more = match c.reasons.len() {
        1 => String::new(),
        2 => "; 1 more reason below".to_owned(),
        n => format!("; {} more reasons below", n - 1),
    };
    Some(format!("Not comparable: {why}{more}."))
}

/// The latency metrics drawn as overlaid CDFs: time to first token and end to end, the two a
/// reviewer reads a tail of.
pub const OVERLAID: [(&str, &str); 2] = [("ttft", "TTFT"), ("e2el", "E2E latency")];

/// The quantiles beside an overlay, as the audit names them.
pub const QUANTILES: [&str; 5] = ["mean", "p50", "p90", "p99", "max"];

/// One side of an overlay: the audit's summary of a metric and the model's CDF points.
#[derive(Debug, Clone, Copy, Default)]
pub struct ArmLatency<'a> {
    /// The audit's distribution (`receipt audit --json`'s `latency[]`).
    pub facts: Option<&'a LatencyFacts>,
    /// The samples' CDF, when the receipt holds per-request samples.
    pub samples: Option<&'a MetricSamples>,
}

impl ArmLatency<'_> {
    /// `metric` of one side's model: its audit's facts and its samples' CDF.
    pub fn of<'a>(model: &'a ReceiptModel, metric: &str) -> ArmLatency<'a> {
        ArmLatency {
            facts: model.audit.latency.iter().find(|l| l.metric == metric),
            samples: model.latency.metrics.iter().find(|s| s.metric == metric),
        }
    }
}

/// One metric's two distributions: the curves to draw and the quantiles to print.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlay {
    /// The audit's metric name (`ttft`, `e2el`).
    pub metric: &'static str,
    /// What the heading says.
    pub title: &'static str,
    /// Points `(ms, share at or below)` of each arm's CDF (empty: no samples).
    pub baseline: Vec<(f64, f64)>,
    /// The treatment's.
    pub treatment: Vec<(f64, f64)>,
    /// True when the x axis is logarithmic: the two arms together span over 100×.
    pub log: bool,
    /// Samples per arm (the audit's count).
    pub counts: [Option<u64>; 2],
    /// Each quantile of [`QUANTILES`], baseline then treatment, in ms.
    pub rows: Vec<(&'static str, [Option<f64>; 2])>,
}

impl Overlay {
    /// The overlay of `metric` from the two arms.
    pub fn of(
        (metric, title): (&'static str, &'static str),
        b: ArmLatency<'_>,
        t: ArmLatency<'_>,
    ) -> Overlay {
        let curve = |a: &ArmLatency<'_>| a.samples.map(|s| s.cdf.clone()).unwrap_or_default();
        let (lo, hi) = [b.samples, t.samples]
            .into_iter()
            .flatten()
            .fold((f64::INFINITY, 0f64), |(lo, hi), s| {
                (lo.min(s.min_ms), hi.max(s.max_ms))
            });
        let quantile = |a: &ArmLatency<'_>, q: &str| {
            a.facts.and_then(|f| match q {
                "mean" => f.mean_ms,
                "p50" => f.p50_ms,
                "p90" => f.p90_ms,
                "p99" => f.p99_ms,
                _ => f.max_ms,
            })
        };
        Overlay {
            metric,
            title,
            baseline: curve(&b),
            treatment: curve(&t),
            log: lo > 0.0 && hi / lo > 100.0,
            counts: [b.facts.and_then(|f| f.count), t.facts.and_then(|f| f.count)],
            rows: QUANTILES
                .iter()
                .map(|q| (*q, [quantile(&b, q), quantile(&t, q)]))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use loadproof_core::compare::Better;

    use super::Tone;

    #[test]
    fn a_change_reads_by_the_metrics_better_direction() {
        assert_eq!(Tone::of(Some(Better::Higher), Some(2.0)), Tone::Better);
        assert_eq!(Tone::of(Some(Better::Higher), Some(-2.0)), Tone::Worse);
        assert_eq!(Tone::of(Some(Better::Lower), Some(-2.0)), Tone::Better);
        assert_eq!(Tone::of(Some(Better::Lower), Some(2.0)), Tone::Worse);
        assert_eq!(Tone::of(Some(Better::Lower), Some(-0.0)), Tone::Same);
        assert_eq!(Tone::of(None, Some(2.0)), Tone::Neutral);
        assert_eq!(Tone::of(Some(Better::Higher), None), Tone::Neutral);
        assert_eq!(Tone::Same.class(), "same");
    }

    use std::collections::BTreeMap;

    use loadproof_core::audit::LatencyFacts;
    use loadproof_core::claim::Arm;
    use loadproof_core::compare::{Comparison, MetricChange, Reason, Rule, SideSummary};

    use super::{ArmLatency, OVERLAID, Overlay, refusal, summary};
    use crate::views::receipt::model::MetricSamples;

    fn side(refusals: usize) -> SideSummary {
        SideSummary {
            source: "r".to_owned(),
            file_sha256: "ab".to_owned(),
            protocol_key: "k".to_owned(),
            qualified: refusals == 0,
            refusals: vec!["arrival: late".to_owned(); refusals],
            captured: true,
            digests_ok: true,
            failing_blocks: Vec::new(),
            simulator: true,
            knobs: BTreeMap::new(),
        }
    }

    fn change(metric: &str, b: f64, t: f64) -> MetricChange {
        MetricChange {
            metric: metric.to_owned(),
            unit: "ms".to_owned(),
            better: None,
            baseline: Some(b),
            treatment: Some(t),
            change: Some(t - b),
            relative_change: (b != 0.0).then(|| (t - b) / b),
            note: None,
        }
    }

    fn comparison(metrics: Vec<MetricChange>, reasons: Vec<Reason>) -> Comparison {
        Comparison {
            schema: String::new(),
            comparable: reasons.is_empty(),
            reasons,
            baseline: side(0),
            treatment: side(2),
            same_protocol: true,
            protocol_differences: Vec::new(),
            same_subject: true,
            subject_differences: Vec::new(),
            knobs_changed: Vec::new(),
            knobs_held: BTreeMap::new(),
            metrics,
            repeats_per_arm: 1,
            min_repeats: 2,
            observation_only: true,
            caveat: String::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_summary_names_the_headline_changes_and_claims_no_effect() {
        let c = comparison(
            vec![
                change("throughput_tok_s", 100.0, 96.9),
                change("ttft_p99_ms", 50.0, 56.0),
                change("failed_requests", 0.0, 0.0),
                change("e2el_p99_ms", 0.0, 4.0),
            ],
            Vec::new(),
        );
        assert_eq!(
            summary(&c),
            "Treatment vs baseline: output throughput -3.1%, TTFT p99 +12.0%, E2E latency p99 0 → 4 — one receipt each: an observation, not a measured effect."
        );
    }

    #[test]
    fn a_refusal_is_its_first_reason_in_one_sentence() {
        let reason = |rule, arm| Reason {
            rule,
            arm,
            message: "long".to_owned(),
        };
        let c = comparison(
            Vec::new(),
            vec![
                reason(Rule::Unqualified, Some(Arm::Treatment)),
                reason(Rule::SameFile, None),
            ],
        );
        assert_eq!(
            refusal(&c).as_deref(),
            Some(
                "Not comparable: the treatment receipt is not qualified (2 refusal(s)); 1 more reason below."
            )
        );
        assert_eq!(refusal(&comparison(Vec::new(), Vec::new())), None);
    }

    #[test]
    fn an_overlay_is_logarithmic_when_the_two_arms_span_over_100x() {
        let samples = |min_ms: f64, max_ms: f64| MetricSamples {
            metric: "ttft".to_owned(),
            count: 2,
            min_ms,
            max_ms,
            log_bins: false,
            bins: Vec::new(),
            cdf: vec![(min_ms, 0.5), (max_ms, 1.0)],
        };
        let facts = LatencyFacts {
            metric: "ttft".to_owned(),
            count: Some(2),
            mean_ms: Some(3.0),
            p50_ms: Some(2.0),
            p90_ms: Some(4.0),
            p99_ms: Some(4.5),
            max_ms: Some(5.0),
            source: String::new(),
        };
        let (b, t) = (samples(1.0, 50.0), samples(2.0, 150.0));
        let arm = |s| ArmLatency {
            facts: Some(&facts),
            samples: Some(s),
        };
        let o = Overlay::of(OVERLAID[0], arm(&b), arm(&t));
        assert!(o.log);
        assert_eq!(o.treatment, [(2.0, 0.5), (150.0, 1.0)]);
        assert_eq!(o.rows[1], ("p50", [Some(2.0), Some(2.0)]));
        assert_eq!(o.counts, [Some(2), Some(2)]);
        let linear = Overlay::of(OVERLAID[1], arm(&b), ArmLatency::default());
        assert!(!linear.log && linear.treatment.is_empty());
        assert_eq!(linear.rows[4], ("max", [Some(5.0), None]));
    }
}
