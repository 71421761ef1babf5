//! Exact decimal parsing of numeric cells.
//!
//! Trace timestamps are kept as integer nanoseconds so that rebasing Azure's 100 ns epoch
//! stamps or BurstGPT's `19440110.0` never drifts the way `f64` seconds would. Token counts
//! are integers; `12.0` is accepted (it is exactly an integer), `1.5` is not.

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
    }
}
