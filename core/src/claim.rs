//! The vocabulary of a tuning claim: the two arms an experiment compares, the five numbers a
//! claim reads from one audited receipt, and how many repeats a measured effect needs.
//!
//! Both a playbook row (repeats per arm, medians and spread) and a comparison of two receipts
//! (one per arm, an observation) read their numbers through [`Repeat::from_audit`], so a
//! throughput or a percentile means the same thing wherever a claim is made. This sits above
//! the audit and below both of its readers, which therefore never import each other.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::audit::Audit;

/// Fewer repeats than this have no spread: one run cannot show its own variance.
pub const MIN_REPEATS: usize = 2;

/// The two arms of an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// Without the knob.
    Baseline,
    /// With the knob.
    Treatment,
}

impl fmt::Display for Arm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Arm::Baseline => "baseline",
            Arm::Treatment => "treatment",
        })
    }
}

/// The five numbers a repeat contributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Metric {
    /// Output tokens per second over the client's own interval.
    #[serde(rename = "throughput_tok_s")]
    Throughput,
    /// Time to first token, median, ms.
    #[serde(rename = "ttft_p50_ms")]
    TtftP50,
    /// Time to first token, 99th percentile, ms.
    #[serde(rename = "ttft_p99_ms")]
    TtftP99,
    /// Inter-token latency, median, ms.
    #[serde(rename = "itl_p50_ms")]
    ItlP50,
    /// Inter-token latency, 99th percentile, ms.
    #[serde(rename = "itl_p99_ms")]
    ItlP99,
}

impl Metric {
    /// Every metric, in report order.
    pub const ALL: [Metric; 5] = [
        Metric::Throughput,
        Metric::TtftP50,
        Metric::TtftP99,
        Metric::ItlP50,
        Metric::ItlP99,
    ];

    /// The name used in JSON and errors.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput_tok_s",
            Metric::TtftP50 => "ttft_p50_ms",
            Metric::TtftP99 => "ttft_p99_ms",
            Metric::ItlP50 => "itl_p50_ms",
            Metric::ItlP99 => "itl_p99_ms",
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One repeat of one arm: one receipt's numbers. Every field is required.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// Output tokens per second.
    pub throughput_tok_s: f64,
    /// TTFT median, ms.
    pub ttft_p50_ms: f64,
    /// TTFT 99th percentile, ms.
    pub ttft_p99_ms: f64,
    /// ITL median, ms.
    pub itl_p50_ms: f64,
    /// ITL 99th percentile, ms.
    pub itl_p99_ms: f64,
}

/// Why an audit does not give a [`Repeat`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RepeatError {
    /// The audit read no client facts, so there is no throughput.
    #[error("the audit has no client throughput (client facts unread)")]
    NoThroughput,
    /// A latency percentile the row needs is absent from the audit.
    #[error("the audit has no {metric} {percentile}: a row needs TTFT and ITL at p50 and p99")]
    MissingPercentile {
        /// `ttft` or `itl`.
        metric: &'static str,
        /// `p50` or `p99`.
        percentile: &'static str,
    },
}

impl Repeat {
    /// The numbers of one audited receipt. Refuses, by name, an audit that lacks any of them;
    /// whether the receipt qualifies is the row's question, not this one's.
    pub fn from_audit(audit: &Audit) -> Result<Repeat, RepeatError> {
        let throughput = audit
            .client
            .as_ref()
            .and_then(|c| c.output_tokens_per_s)
            .ok_or(RepeatError::NoThroughput)?;
        let percentile = |metric: &'static str, percentile: &'static str| {
            audit
                .latency
                .iter()
                .find(|l| l.metric == metric)
                .and_then(|l| match percentile {
                    "p50" => l.p50_ms,
                    _ => l.p99_ms,
                })
                .ok_or(RepeatError::MissingPercentile { metric, percentile })
        };
        Ok(Repeat {
            throughput_tok_s: throughput,
            ttft_p50_ms: percentile("ttft", "p50")?,
            ttft_p99_ms: percentile("ttft", "p99")?,
            itl_p50_ms: percentile("itl", "p50")?,
            itl_p99_ms: percentile("itl", "p99")?,
        })
    }

    /// The value of `metric`.
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
