//! A sample's value: an exact decimal, or one of the three float words.
//!
//! Its own part because the reader, the bucket checks (an `le` label is a value) and the deltas
//! all read values, and must agree on what `+Inf`, `nan` or `1.0` is.

use std::cmp::Ordering;
use std::fmt;

use crate::decimal::{Decimal, NumberError};

/// A sample's value. Prometheus values are floats, so `NaN` and the infinities are legal
/// (a `+Inf` bucket bound, a gauge with nothing to report); everything finite is kept as the
/// exact decimal that was written. The derived `==` compares spellings (`1.0` ≠ `1`) and
/// calls `NaN` equal to `NaN`; compare values with [`SampleValue::cmp_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleValue {
    /// A finite number, exact.
    Finite(Decimal),
    /// `+Inf`.
    PosInf,
    /// `-Inf`.
    NegInf,
    /// `NaN`.
    NaN,
}

impl SampleValue {
    /// The finite value, if it is one.
    pub fn finite(self) -> Option<Decimal> {
        match self {
            SampleValue::Finite(d) => Some(d),
            _ => None,
        }
    }

    /// Orders values as numbers (`-Inf` < finite < `+Inf`, `1.0` = `1`); `None` when either
    /// is `NaN`, which has no place in an order.
    pub fn cmp_value(self, other: SampleValue) -> Option<Ordering> {
        use SampleValue::*;
        let rank = |v: SampleValue| match v {
            NegInf => Some(0u8),
            Finite(_) => Some(1),
            PosInf => Some(2),
            NaN => None,
        };
        match (self, other) {
            (Finite(a), Finite(b)) => Some(a.cmp_value(b)),
            _ => Some(rank(self)?.cmp(&rank(other)?)),
        }
    }

    /// Reads a value token: a decimal, or `NaN`/`Inf`/`+Inf`/`-Inf`/`Infinity` in any case,
    /// as Go's `ParseFloat` (Prometheus's own reader) accepts them.
    pub(super) fn parse(token: &[u8]) -> Result<SampleValue, NumberError> {
        match Decimal::parse(token) {
            Ok(d) => Ok(SampleValue::Finite(d)),
            Err(NumberError::NonFinite) => {
                let (negative, body) = match token.split_first() {
                    Some((b'-', rest)) => (true, rest),
                    Some((b'+', rest)) => (false, rest),
                    _ => (false, token),
                };
                Ok(if body.eq_ignore_ascii_case(b"nan") {
                    SampleValue::NaN
                } else if negative {
                    SampleValue::NegInf
                } else {
                    SampleValue::PosInf
                })
            }
            Err(e) => Err(e),
        }
    }
}

/// Written the way the format writes them: `NaN`, `+Inf`, `-Inf`, or the exact decimal.
impl fmt::Display for SampleValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleValue::Finite(d) => d.fmt(f),
            SampleValue::PosInf => f.write_str("+Inf"),
            SampleValue::NegInf => f.write_str("-Inf"),
            SampleValue::NaN => f.write_str("NaN"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn inf_and_nan_values_are_kept() {
        let e = p("a +Inf\nb -Inf\nc NaN\nd nan\ne Inf\n");
        let values: Vec<SampleValue> = e
            .families()
            .iter()
            .map(|f| f.samples.first().unwrap().value)
            .collect();
        use SampleValue::*;
        assert_eq!(values, [PosInf, NegInf, NaN, NaN, PosInf]);
        assert_eq!(
            e.total("a").unwrap_err().to_string(),
            "a is +Inf, not a finite number"
        );
        assert_eq!(NaN.cmp_value(NaN), None);
        assert_eq!(
            NegInf.cmp_value(Finite(dec("-1e300"))),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn simulator_spellings_parse() {
        // `cli/src/sim/metrics.rs` writes prometheus_client's floatToGoString, `2.e+06` included.
        let e = p(concat!(
            "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n",
            "# TYPE process_start_time_seconds gauge\n",
            "process_start_time_seconds 1.5e+09\n",
            "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n",
            "# TYPE vllm:generation_tokens_total counter\n",
            "vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 2.e+06\n",
            "# TYPE loadproof_sim_info gauge\n",
            "loadproof_sim_info{version=\"0.1.0\"} 1.0\n",
        ));
        assert_eq!(
            e.process_start_time().unwrap().unwrap().to_string(),
            "1500000000"
        );
        assert_eq!(
            e.total("vllm:generation_tokens_total")
                .unwrap()
                .unwrap()
                .to_string(),
            "2000000"
        );
    }
}
