//! What the compare view reads from core's `Comparison` beyond printing it: which way each
//! change reads for its metric (the table row's class and the chart bar's colour, one rule for
//! both), and the bars the chart draws.

use loadproof_core::compare::{Better, Comparison};

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
    /// The metric's name.
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
                metric: m.metric.clone(),
                relative: r,
                tone: Tone::of(m.better, Some(r)),
            })
        })
        .collect()
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
}
