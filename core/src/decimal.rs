//! Exact decimal parsing of numeric cells.
//!
//! Trace timestamps are kept as integer nanoseconds so that rebasing Azure's 100 ns epoch
//! stamps or BurstGPT's `19440110.0` never drifts the way `f64` seconds would. Token counts
//! are integers; `12.0` is accepted (it is exactly an integer), `1.5` is not.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

/// Why a cell is not a usable number. Maps one-to-one onto a [`crate::DropReason`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberError {
    /// Not a number at all (`abc`, `1.2.3`, `0x10`).
    NotNumeric,
    /// `nan`, `inf`, `infinity` in any case.
    NonFinite,
    /// Below zero where the field cannot be.
    Negative,
    /// A number, but not one the field can hold (too large, or a fraction of a token).
    OutOfRange,
}

/// A parsed decimal `(-1)^negative × mantissa × 10^exponent`, exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    negative: bool,
    mantissa: u128,
    exponent: i32,
}

/// Powers of ten that fit in a `u128`: `POW10[k] = 10^k`, `k ≤ 38`.
#[allow(clippy::indexing_slicing)] // evaluated at compile time: an out-of-bounds index fails the build
const POW10: [u128; 39] = {
    let mut table = [1u128; 39];
    let mut k = 1;
    while k < 39 {
        table[k] = table[k - 1] * 10;
        k += 1;
    }
    table
};

/// Digits beyond this many significant ones cannot be represented exactly in a `u128`.
const MAX_SIGNIFICANT_DIGITS: u32 = 36;

impl Decimal {
    /// Parses `[+-]digits[.digits][(e|E)[+-]digits]`, surrounding ASCII whitespace allowed.
    pub fn parse(cell: &[u8]) -> Result<Decimal, NumberError> {
        let s = cell.trim_ascii();
        if let Some(fast) = Decimal::parse_plain(s) {
            return Ok(fast);
        }
        if is_non_finite_word(s) {
            return Err(NumberError::NonFinite);
        }
        let (negative, rest) = match s.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, s),
        };
        let mut mantissa: u128 = 0;
        let mut exponent: i32 = 0;
        let mut n_digits = 0u32;
        let mut significant = 0u32;
        let mut seen_dot = false;
        let mut idx = 0usize;
        for &b in rest {
            match b {
                b'0'..=b'9' => {
                    n_digits += 1;
                    if mantissa == 0 && b == b'0' {
                        // Leading zeros carry no significance.
                        if seen_dot {
                            exponent = exponent.saturating_sub(1);
                        }
                    } else {
                        significant += 1;
                        if significant > MAX_SIGNIFICANT_DIGITS {
                            return Err(NumberError::OutOfRange);
                        }
                        mantissa = mantissa * 10 + u128::from(b - b'0');
                        if seen_dot {
                            exponent = exponent.saturating_sub(1);
                        }
                    }
                }
                b'.' if !seen_dot => seen_dot = true,
                b'e' | b'E' => break,
                _ => return Err(NumberError::NotNumeric),
            }
            idx += 1;
        }
        if n_digits == 0 {
            return Err(NumberError::NotNumeric);
        }
        let tail = rest.get(idx..).unwrap_or_default();
        if let Some(exp_digits) = tail.get(1..) {
            let (exp_neg, exp_digits) = match exp_digits.split_first() {
                Some((b'-', r)) => (true, r),
                Some((b'+', r)) => (false, r),
                _ => (false, exp_digits),
            };
            if exp_digits.is_empty() || exp_digits.len() > 6 {
                return Err(NumberError::NotNumeric);
            }
            let mut e: i32 = 0;
            for &b in exp_digits {
                if !b.is_ascii_digit() {
                    return Err(NumberError::NotNumeric);
                }
                e = e * 10 + i32::from(b - b'0');
            }
            exponent = exponent.saturating_add(if exp_neg { -e } else { e });
        }
        Ok(Decimal {
            negative: negative && mantissa != 0,
            mantissa,
            exponent,
        })
    }

    /// Fast path for the shape nearly every trace cell has: `digits[.digits]`, at most 18
    /// digits, no sign or exponent. `None` sends the cell to the general parser.
    #[inline]
    fn parse_plain(s: &[u8]) -> Option<Decimal> {
        if s.is_empty() || s.len() > 19 {
            return None;
        }
        let mut mantissa: u64 = 0;
        let mut frac_digits: i32 = 0;
        let mut seen_dot = false;
        for &b in s {
            if b.is_ascii_digit() {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                if seen_dot {
                    frac_digits += 1;
                }
            } else if b == b'.' && !seen_dot {
                seen_dot = true;
            } else {
                return None;
            }
        }
        if seen_dot && (s.len() == 1) {
            return None;
        }
        Some(Decimal {
            negative: false,
            mantissa: u128::from(mantissa),
            exponent: -frac_digits,
        })
    }

    /// The value scaled by `10^scale` as an integer, rounding half away from zero below the
    /// last kept digit. Used for timestamps: seconds with `scale = 9` give nanoseconds.
    pub fn scaled_i64(self, scale: i32) -> Result<i64, NumberError> {
        let e = self.exponent.saturating_add(scale);
        if self.mantissa == 0 {
            return Ok(0);
        }
        let magnitude: u128 = if e >= 0 {
            let pow = POW10.get(e as usize).ok_or(NumberError::OutOfRange)?;
            self.mantissa
                .checked_mul(*pow)
                .ok_or(NumberError::OutOfRange)?
        } else {
            match POW10.get(e.unsigned_abs() as usize) {
                None => 0,
                Some(&div) => {
                    let q = self.mantissa / div;
                    let r = self.mantissa % div;
                    if r.saturating_mul(2) >= div { q + 1 } else { q }
                }
            }
        };
        let magnitude = i64::try_from(magnitude).map_err(|_| NumberError::OutOfRange)?;
        Ok(if self.negative { -magnitude } else { magnitude })
    }

    /// The value as a non-negative integer token count that fits in `u32`.
    pub fn token_count(self) -> Result<u32, NumberError> {
        if self.negative {
            return Err(NumberError::Negative);
        }
        if self.mantissa == 0 {
            return Ok(0);
        }
        let value = if self.exponent >= 0 {
            let mut m = self.mantissa;
            for _ in 0..self.exponent {
                m = m.checked_mul(10).ok_or(NumberError::OutOfRange)?;
            }
            m
        } else {
            let div = 10u128
                .checked_pow(self.exponent.unsigned_abs())
                .ok_or(NumberError::OutOfRange)?;
            if !self.mantissa.is_multiple_of(div) {
                return Err(NumberError::OutOfRange);
            }
            self.mantissa / div
        };
        u32::try_from(value).map_err(|_| NumberError::OutOfRange)
    }

    /// True for a value below zero.
    pub fn is_negative(self) -> bool {
        self.negative
    }

    /// The exact product, or `None` when the digits no longer fit. Used to apply vLLM's
    /// `--timed-trace-sec-multiplier` to a timestamp without a detour through `f64`.
    pub fn checked_mul(self, other: Decimal) -> Option<Decimal> {
        Some(Decimal {
            negative: self.negative != other.negative,
            mantissa: self.mantissa.checked_mul(other.mantissa)?,
            exponent: self.exponent.checked_add(other.exponent)?,
        })
    }

    /// A non-negative value as an exact fraction `(numerator, denominator)`; `None` for a
    /// negative value or one whose digits do not fit.
    pub fn as_fraction(self) -> Option<(u128, u128)> {
        if self.negative {
            return None;
        }
        let pow = POW10.get(self.exponent.unsigned_abs() as usize).copied()?;
        if self.exponent >= 0 {
            Some((self.mantissa.checked_mul(pow)?, 1))
        } else {
            Some((self.mantissa, pow))
        }
    }

    /// An exact non-negative integer.
    pub fn from_u64(v: u64) -> Decimal {
        Decimal {
            negative: false,
            mantissa: u128::from(v),
            exponent: 0,
        }
    }

    /// True for zero (of either sign).
    pub fn is_zero(self) -> bool {
        self.mantissa == 0
    }

    /// Zero.
    pub const ZERO: Decimal = Decimal {
        negative: false,
        mantissa: 0,
        exponent: 0,
    };

    /// The exact sum, or `None` when the digits no longer fit in 128 bits. Counter deltas and
    /// totals are summed here so that `2283.0 + 0.5` is `2283.5`, never a float's neighbour.
    /// The result keeps the finer of the two exponents (`1.50 + 1` is `2.50`): compare results
    /// with [`Decimal::cmp_value`], not `==`.
    pub fn checked_add(self, other: Decimal) -> Option<Decimal> {
        if other.mantissa == 0 {
            return Some(self.without_negative_zero());
        }
        if self.mantissa == 0 {
            return Some(other);
        }
        let (a, b, exponent) = match Decimal::aligned(self, other) {
            Some(aligned) => aligned,
            // A scale that overflows may fit once trailing zeros are folded into the exponent.
            None => Decimal::aligned(self.trimmed(), other.trimmed())?,
        };
        let (negative, mantissa) = if self.negative == other.negative {
            (self.negative, a.checked_add(b)?)
        } else if a >= b {
            (self.negative, a - b)
        } else {
            (other.negative, b - a)
        };
        Some(Decimal {
            negative: negative && mantissa != 0,
            mantissa,
            exponent,
        })
    }

    /// The exact difference `self − other`, or `None` when the digits no longer fit.
    pub fn checked_sub(self, other: Decimal) -> Option<Decimal> {
        self.checked_add(Decimal {
            negative: !other.negative,
            ..other
        })
    }

    /// Compares values, not spellings: `1.50` and `1.5` are `Equal`, so are `0` and `-0`.
    /// The derived `==` compares the representation and would call them different.
    pub fn cmp_value(self, other: Decimal) -> Ordering {
        let sign = |d: Decimal| match (d.mantissa == 0, d.negative) {
            (true, _) => 0i8,
            (false, true) => -1,
            (false, false) => 1,
        };
        let (sa, sb) = (sign(self), sign(other));
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let magnitude = Decimal::cmp_magnitude(self, other);
        if sa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// True when both are the same number, however spelled (`1512.0` and `1512`).
    pub fn value_eq(self, other: Decimal) -> bool {
        self.cmp_value(other) == Ordering::Equal
    }

    /// True when the value is an integer (`12.0` is, `12.5` is not).
    pub fn is_whole(self) -> bool {
        if self.mantissa == 0 || self.exponent >= 0 {
            return true;
        }
        match POW10.get(self.exponent.unsigned_abs() as usize) {
            Some(&div) => self.mantissa.is_multiple_of(div),
            // 10^39 exceeds every u128, so no nonzero mantissa is a multiple of it.
            None => false,
        }
    }

    /// The value as an exact whole `u64`: `1512.0` is 1512; a fraction (`1512.0005`) or a
    /// value beyond `u64` is `OutOfRange`, a value below zero is `Negative`. Token counts in
    /// `/metrics` are written as floats; this is where a fraction of a token gets refused.
    pub fn whole_u64(self) -> Result<u64, NumberError> {
        if self.mantissa == 0 {
            return Ok(0);
        }
        if self.negative {
            return Err(NumberError::Negative);
        }
        let value = if self.exponent >= 0 {
            let pow = POW10
                .get(self.exponent as usize)
                .ok_or(NumberError::OutOfRange)?;
            self.mantissa
                .checked_mul(*pow)
                .ok_or(NumberError::OutOfRange)?
        } else {
            if !self.is_whole() {
                return Err(NumberError::OutOfRange);
            }
            let div = POW10
                .get(self.exponent.unsigned_abs() as usize)
                .ok_or(NumberError::OutOfRange)?;
            self.mantissa / div
        };
        u64::try_from(value).map_err(|_| NumberError::OutOfRange)
    }

    /// The nearest `f64`, for display and plotting only: every check stays on the exact value.
    /// Beyond `f64`'s range this is `±inf` (or `±0` below it).
    pub fn to_f64(self) -> f64 {
        let sign = if self.negative { "-" } else { "" };
        // Rust's float parser rounds correctly, so the only error is the final rounding.
        format!("{sign}{}e{}", self.mantissa, self.exponent)
            .parse::<f64>()
            .unwrap_or(f64::NAN)
    }

    /// The power of ten of the leading digit (`1795940336.77` → 9, `0.05` → −2); `None` for
    /// zero. Lets a caller bound a value's magnitude without converting it.
    pub fn adjusted_exponent(self) -> Option<i64> {
        let digits = self.mantissa.checked_ilog10()?;
        Some(i64::from(self.exponent) + i64::from(digits))
    }

    /// `self` with `negative` cleared on zero, so that zero has one representation of sign.
    fn without_negative_zero(self) -> Decimal {
        Decimal {
            negative: self.negative && self.mantissa != 0,
            ..self
        }
    }

    /// The same value with the mantissa's trailing zeros moved into the exponent.
    fn trimmed(self) -> Decimal {
        let mut d = self.without_negative_zero();
        if d.mantissa == 0 {
            return Decimal::ZERO;
        }
        while d.mantissa.is_multiple_of(10) {
            let Some(exponent) = d.exponent.checked_add(1) else {
                break;
            };
            d.mantissa /= 10;
            d.exponent = exponent;
        }
        d
    }

    /// Both mantissas scaled to the smaller exponent: `(a, b, exponent)` with
    /// `a × 10^exponent = |x|` and `b × 10^exponent = |y|`; `None` when a scaled one overflows.
    fn aligned(x: Decimal, y: Decimal) -> Option<(u128, u128, i32)> {
        let exponent = x.exponent.min(y.exponent);
        let scale = |d: Decimal| -> Option<u128> {
            let diff = i64::from(d.exponent) - i64::from(exponent);
            if diff == 0 || d.mantissa == 0 {
                return Some(d.mantissa);
            }
            let pow = POW10.get(usize::try_from(diff).ok()?)?;
            d.mantissa.checked_mul(*pow)
        };
        Some((scale(x)?, scale(y)?, exponent))
    }

    /// Compares `|a|` and `|b|`, both nonzero.
    fn cmp_magnitude(a: Decimal, b: Decimal) -> Ordering {
        let (Some(top_a), Some(top_b)) = (a.adjusted_exponent(), b.adjusted_exponent()) else {
            return a.mantissa.cmp(&b.mantissa);
        };
        if top_a != top_b {
            return top_a.cmp(&top_b);
        }
        // Same leading power of ten: the exponents differ by at most 38 (the digit counts
        // differ by that much), so one mantissa scales to the other's exponent, or overflows
        // (and then it is the larger).
        let diff = i64::from(a.exponent) - i64::from(b.exponent);
        let scaled = |m: u128, by: i64| {
            usize::try_from(by)
                .ok()
                .and_then(|k| POW10.get(k))
                .and_then(|pow| m.checked_mul(*pow))
        };
        match diff.cmp(&0) {
            Ordering::Equal => a.mantissa.cmp(&b.mantissa),
            Ordering::Greater => match scaled(a.mantissa, diff) {
                Some(sa) => sa.cmp(&b.mantissa),
                None => Ordering::Greater,
            },
            Ordering::Less => match scaled(b.mantissa, -diff) {
                Some(sb) => a.mantissa.cmp(&sb),
                None => Ordering::Less,
            },
        }
    }
}

/// Digits printed before [`Decimal`]'s `Display` switches to an exponent: beyond this many
/// integer digits or leading fractional zeros, `1e300` reads better than 301 characters (and
/// [`Decimal::parse`] keeps at most 36 significant digits).
const DISPLAY_MAX_INTEGER_DIGITS: i64 = 36;
const DISPLAY_MAX_FRACTION_DIGITS: i64 = 400;

/// The exact value, canonically: no exponent, no trailing zeros after the point, no point on
/// an integer (`1.79594033677e+09` → `1795940336.77`, `2283.0` → `2283`, `-0` → `0`). Values
/// that would need more than 36 integer digits, or more than 400 digits after the point, are
/// written `<digits>e<exponent>` (`1e300`) instead. A value [`Decimal::parse`] produced reads
/// back to the same value (up to exponents of six digits, the most `parse` reads); sums and
/// products with over 36 significant digits print, but do not read back.
impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.trimmed();
        if d.mantissa == 0 {
            return f.write_str("0");
        }
        if d.negative {
            f.write_char('-')?;
        }
        let mut buf = itoa::Buffer::new();
        let digits = buf.format(d.mantissa);
        let n_digits = digits.len() as i64;
        let exponent = i64::from(d.exponent);
        let zeros = |f: &mut fmt::Formatter<'_>, n: i64| -> fmt::Result {
            for _ in 0..n {
                f.write_char('0')?;
            }
            Ok(())
        };
        if exponent == 0 || (exponent > 0 && n_digits + exponent <= DISPLAY_MAX_INTEGER_DIGITS) {
            f.write_str(digits)?;
            zeros(f, exponent)
        } else if exponent < 0 && -exponent <= DISPLAY_MAX_FRACTION_DIGITS {
            let fraction_digits = -exponent;
            if n_digits > fraction_digits {
                let split = usize::try_from(n_digits - fraction_digits).unwrap_or(0);
                let (int_part, frac_part) = digits.split_at_checked(split).unwrap_or((digits, ""));
                write!(f, "{int_part}.{frac_part}")
            } else {
                f.write_str("0.")?;
                zeros(f, fraction_digits - n_digits)?;
                f.write_str(digits)
            }
        } else {
            write!(f, "{digits}e{exponent}")
        }
    }
}

fn is_non_finite_word(s: &[u8]) -> bool {
    let body = match s.split_first() {
        Some((b'-' | b'+', rest)) => rest,
        _ => s,
    };
    body.eq_ignore_ascii_case(b"nan")
        || body.eq_ignore_ascii_case(b"inf")
        || body.eq_ignore_ascii_case(b"infinity")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(s: &str) -> Result<i64, NumberError> {
        Decimal::parse(s.as_bytes()).and_then(|d| d.scaled_i64(9))
    }
    fn tokens(s: &str) -> Result<u32, NumberError> {
        Decimal::parse(s.as_bytes()).and_then(Decimal::token_count)
    }

    #[test]
    fn seconds_parse_to_exact_nanoseconds() {
        assert_eq!(ns("19440110.0"), Ok(19_440_110_000_000_000));
        assert_eq!(ns("5"), Ok(5_000_000_000));
        assert_eq!(ns("0.0000001"), Ok(100));
        assert_eq!(ns("1e3"), Ok(1_000_000_000_000));
        assert_eq!(ns("1.5E-3"), Ok(1_500_000));
        assert_eq!(ns("-2"), Ok(-2_000_000_000));
        assert_eq!(ns("0000.5"), Ok(500_000_000));
    }

    #[test]
    fn non_finite_words_are_named_apart_from_garbage() {
        for w in ["nan", "NaN", "inf", "-Infinity", "+INF"] {
            assert_eq!(ns(w), Err(NumberError::NonFinite), "{w}");
        }
        for w in ["", "abc", "1.2.3", "0x10", "1e", "--1", "1 2", "."] {
            assert_eq!(ns(w), Err(NumberError::NotNumeric), "{w:?}");
        }
    }

    #[test]
    fn token_counts_are_whole_non_negative_u32() {
        assert_eq!(tokens("472"), Ok(472));
        assert_eq!(tokens("12.0"), Ok(12));
        assert_eq!(tokens(" 7 "), Ok(7));
        assert_eq!(tokens("1.5"), Err(NumberError::OutOfRange));
        assert_eq!(tokens("-5"), Err(NumberError::Negative));
        assert_eq!(tokens("-0"), Ok(0));
        assert_eq!(tokens("4294967296"), Err(NumberError::OutOfRange));
        assert_eq!(tokens("1e400000"), Err(NumberError::OutOfRange));
        assert_eq!(tokens("1e4000000"), Err(NumberError::NotNumeric));
        assert_eq!(
            tokens("99999999999999999999999999999999999999999"),
            Err(NumberError::OutOfRange)
        );
    }

    #[test]
    fn products_and_fractions_are_exact() {
        let d = |s: &str| Decimal::parse(s.as_bytes()).unwrap();
        assert_eq!(
            d("12345").checked_mul(d("0.001")).unwrap().scaled_i64(9),
            Ok(12_345_000_000)
        );
        assert_eq!(
            d("0.000001").checked_mul(d("7")).unwrap().scaled_i64(9),
            Ok(7_000)
        );
        assert_eq!(d("2.5").as_fraction(), Some((25, 10)));
        assert_eq!(d("3e2").as_fraction(), Some((300, 1)));
        assert_eq!(d("-1").as_fraction(), None);
        assert!(d("0.000").is_zero());
    }

    fn d(s: &str) -> Decimal {
        Decimal::parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn sums_and_differences_are_exact_across_exponents() {
        let sum = d("2283.0").checked_add(d("0.5")).unwrap();
        assert_eq!(sum.to_string(), "2283.5");
        assert_eq!(
            d("1512.0").checked_sub(d("1000.0")).unwrap().to_string(),
            "512"
        );
        assert_eq!(d("1").checked_sub(d("1.5")).unwrap().to_string(), "-0.5");
        assert!(d("-1.25").checked_add(d("1.25")).unwrap().is_zero());
        assert!(!d("-1.25").checked_add(d("1.25")).unwrap().is_negative());
        assert_eq!(
            d("1.79594033677e+09")
                .checked_sub(d("1795940336"))
                .unwrap()
                .to_string(),
            "0.77"
        );
        // Zero never forces an alignment, however far its exponent.
        assert_eq!(
            d("0e999999")
                .checked_add(d("1e-999999"))
                .unwrap()
                .to_string(),
            "1e-999999"
        );
        // Trailing zeros fold into the exponent before giving up.
        let one = Decimal {
            negative: false,
            mantissa: 10u128.pow(38),
            exponent: -38,
        };
        assert_eq!(one.checked_add(d("5")).unwrap().to_string(), "6");
        assert_eq!(
            d("1e30").checked_add(d("1e-10")),
            None,
            "41 digits do not fit"
        );
        assert_eq!(d("1e38").checked_add(d("1e-38")), None);
        let max = Decimal {
            negative: false,
            mantissa: u128::MAX,
            exponent: 0,
        };
        assert_eq!(max.checked_add(d("1")), None);
        assert_eq!(
            max.checked_sub(d("1")).unwrap().to_string(),
            "340282366920938463463374607431768211454"
        );
    }

    #[test]
    fn values_compare_by_value_not_spelling() {
        assert_eq!(d("1.50").cmp_value(d("1.5")), Ordering::Equal);
        assert!(d("1512.0").value_eq(d("1512")));
        assert_ne!(d("1512.0"), d("1512"), "the derived == compares spelling");
        assert!(d("-0").value_eq(d("0.000")));
        assert_eq!(d("-1").cmp_value(d("0")), Ordering::Less);
        assert_eq!(d("-1").cmp_value(d("-2")), Ordering::Greater);
        assert_eq!(d("1e3").cmp_value(d("999.999")), Ordering::Greater);
        assert_eq!(d("0.001").cmp_value(d("1e-3")), Ordering::Equal);
        assert_eq!(d("9e-40").cmp_value(d("1e-39")), Ordering::Less);
        assert_eq!(d("11e-40").cmp_value(d("1e-39")), Ordering::Greater);
        let max = Decimal {
            negative: false,
            mantissa: u128::MAX,
            exponent: -38,
        };
        assert_eq!(max.cmp_value(d("3.4")), Ordering::Greater);
        assert_eq!(d("3.5").cmp_value(max), Ordering::Greater);
    }

    #[test]
    fn whole_u64_refuses_fractions_negatives_and_overflow() {
        assert_eq!(d("1512.0").whole_u64(), Ok(1512));
        assert_eq!(d("2.e+06").whole_u64(), Ok(2_000_000));
        assert_eq!(d("1512.0005").whole_u64(), Err(NumberError::OutOfRange));
        assert_eq!(d("-3").whole_u64(), Err(NumberError::Negative));
        assert_eq!(d("-0.0").whole_u64(), Ok(0));
        assert_eq!(d("18446744073709551615").whole_u64(), Ok(u64::MAX));
        assert_eq!(
            d("18446744073709551616").whole_u64(),
            Err(NumberError::OutOfRange)
        );
        assert_eq!(d("1e39").whole_u64(), Err(NumberError::OutOfRange));
        assert_eq!(d("5e-50").whole_u64(), Err(NumberError::OutOfRange));
        assert!(d("12.000").is_whole());
        assert!(!d("12.001").is_whole());
        assert!(d("1e5").is_whole());
    }

    #[test]
    fn display_is_exact_and_canonical() {
        for (input, shown) in [
            ("1.79594033677e+09", "1795940336.77"),
            ("2283.0", "2283"),
            ("0.6495661079997035", "0.6495661079997035"),
            ("4.2e-05", "0.000042"),
            ("2.e+06", "2000000"),
            ("-0", "0"),
            ("-12.500", "-12.5"),
            ("1e35", "100000000000000000000000000000000000"),
            ("1e36", "1e36"),
            ("1.7976931348623157e308", "17976931348623157e292"),
            ("5e-324", &format!("0.{}5", "0".repeat(323))),
            ("1e-401", "1e-401"),
        ] {
            let value = d(input);
            assert_eq!(value.to_string(), shown, "{input}");
            assert!(d(shown).value_eq(value), "{shown} reads back");
        }
    }

    #[test]
    fn to_f64_and_adjusted_exponent_are_for_display() {
        assert_eq!(d("1.79594033677e+09").to_f64(), 1795940336.77);
        assert_eq!(d("-0.1").to_f64(), -0.1);
        assert_eq!(d("1e400").to_f64(), f64::INFINITY);
        assert_eq!(d("1795940336.77").adjusted_exponent(), Some(9));
        assert_eq!(d("0.05").adjusted_exponent(), Some(-2));
        assert_eq!(d("0").adjusted_exponent(), None);
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            if let Ok(d) = Decimal::parse(&bytes) {
                let _ = d.scaled_i64(9);
                let _ = d.token_count();
            }
        }

        #[test]
        fn integers_round_trip(v in 0u32..) {
            proptest::prop_assert_eq!(tokens(&v.to_string()), Ok(v));
        }

        #[test]
        fn arithmetic_agrees_with_integers(
            a in -3_000_000_000i64..3_000_000_000,
            b in -3_000_000_000i64..3_000_000_000,
            sa in 0u32..10,
            sb in 0u32..10,
        ) {
            // a / 10^sa and b / 10^sb, compared and combined at the common scale 10^-9.
            let da = Decimal::parse(format!("{a}e-{sa}").as_bytes()).unwrap();
            let db = Decimal::parse(format!("{b}e-{sb}").as_bytes()).unwrap();
            let wide = |v: i64, s: u32| i128::from(v) * 10i128.pow(9 - s);
            let (wa, wb) = (wide(a, sa), wide(b, sb));
            let at_scale = |d: Decimal| d.scaled_i64(9).unwrap();
            proptest::prop_assert_eq!(da.cmp_value(db), wa.cmp(&wb));
            proptest::prop_assert_eq!(i128::from(at_scale(da.checked_add(db).unwrap())), wa + wb);
            proptest::prop_assert_eq!(i128::from(at_scale(da.checked_sub(db).unwrap())), wa - wb);
            let shown = da.to_string();
            proptest::prop_assert!(Decimal::parse(shown.as_bytes()).unwrap().value_eq(da), "{}", shown);
            proptest::prop_assert_eq!(da.to_f64(), (a as f64) / 10f64.powi(sa as i32));
        }
    }
}
