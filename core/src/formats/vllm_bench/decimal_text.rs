//! Decimals as text: written out with the digits they were spelled with (`11.00`), compared by
//! value (`11.00` = `11`), read as whole counts.
//!
//! What both the summary reader (count rows) and the agreement check (printed floats) need, so
//! that neither depends on the other for it.

use crate::decimal::Decimal;

/// The decimal written out in full (`11.00`, `4.78794695900001`), keeping the digits it was
/// spelled with; `None` beyond the 38 decimal places [`Decimal::as_fraction`] covers.
pub(super) fn decimal_text(d: Decimal) -> Option<String> {
    let (sign, magnitude) = if d.is_negative() {
        ("-", d.checked_mul(Decimal::parse(b"-1").ok()?)?)
    } else {
        ("", d)
    };
    let (numerator, denominator) = magnitude.as_fraction()?;
    let places = denominator.checked_ilog10()? as usize;
    let whole = numerator.checked_div(denominator)?;
    let fraction = numerator.checked_rem(denominator)?;
    Some(if places == 0 {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction:0places$}")
    })
}

/// The double a decimal names (exact for one that came from [`python_repr`]).
///
/// [`python_repr`]: super::result::python_repr
pub(super) fn to_f64(d: Decimal) -> Option<f64> {
    decimal_text(d)?.parse().ok()
}

/// Equal in value: `11.00` and `11`.
pub(super) fn same_value(a: Decimal, b: Decimal) -> bool {
    fn canonical(text: String) -> String {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text
        }
    }
    match (decimal_text(a), decimal_text(b)) {
        (Some(x), Some(y)) => canonical(x) == canonical(y),
        _ => a == b,
    }
}

/// A whole number ≥ 0 that fits in `u64`.
pub(super) fn whole(d: Decimal) -> Option<u64> {
    let (numerator, denominator) = d.as_fraction()?;
    if numerator.checked_rem(denominator)? != 0 {
        return None;
    }
    u64::try_from(numerator.checked_div(denominator)?).ok()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn decimals_print_with_the_digits_they_were_spelled_with() {
        for text in [
            "11.00",
            "4.79",
            "0",
            "2279",
            "-0.5",
            "0.0000001",
            "4.78794695900001",
        ] {
            assert_eq!(decimal_text(d(text)).as_deref(), Some(text));
        }
        assert_eq!(decimal_text(d("1e3")).as_deref(), Some("1000"));
        assert!(same_value(d("11.00"), d("11")));
        assert!(!same_value(d("11.01"), d("11")));
        assert_eq!(whole(d("20.0")), Some(20));
        assert_eq!(whole(d("20.5")), None);
        assert_eq!(whole(d("-1")), None);
    }
}
