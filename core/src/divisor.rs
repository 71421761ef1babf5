//! One divisor, many divisions: the passes over every arrival (the recording grid, the gaps
//! binned on it) divide tens of millions of timestamps by one number.
//!
//! A 64-bit hardware division costs tens of cycles; dividing by a multiply with a reciprocal
//! computed once (`strength_reduce`) costs a few, and gives the same quotient for every input.
//! That was half of a 30M-row report on one core. In wasm32 the 128-bit multiply it needs is
//! a library call, so there the division stays the machine's.

/// A non-zero `u64` divisor, ready for many divisions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Divisor {
    #[cfg(target_pointer_width = "64")]
    reduced: strength_reduce::StrengthReducedU64,
    #[cfg(not(target_pointer_width = "64"))]
    d: u64,
}

impl Divisor {
    /// `d`, or `None` for zero.
    pub(crate) fn new(d: u64) -> Option<Divisor> {
        if d == 0 {
            return None;
        }
        Some(Divisor {
            #[cfg(target_pointer_width = "64")]
            reduced: strength_reduce::StrengthReducedU64::new(d),
            #[cfg(not(target_pointer_width = "64"))]
            d,
        })
    }

    /// `⌊n / d⌋` and `n mod d`.
    #[inline]
    pub(crate) fn div_rem(self, n: u64) -> (u64, u64) {
        #[cfg(target_pointer_width = "64")]
        return strength_reduce::StrengthReducedU64::div_rem(n, self.reduced);
        #[cfg(not(target_pointer_width = "64"))]
        return (n / self.d, n % self.d);
    }

    /// `⌊n / d⌋`.
    #[inline]
    pub(crate) fn div(self, n: u64) -> u64 {
        self.div_rem(n).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn a_reduced_division_is_the_machine_s(n: u64, d in 1u64..) {
            let divisor = Divisor::new(d).unwrap();
            proptest::prop_assert_eq!(divisor.div_rem(n), (n / d, n % d));
        }
    }

    #[test]
    fn edge_divisors_divide_exactly() {
        assert!(Divisor::new(0).is_none());
        for d in [
            1,
            2,
            3,
            1000,
            1_000_000_007,
            u64::MAX / 2,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let divisor = Divisor::new(d).unwrap();
            for n in [0, 1, d - 1, d, d.wrapping_add(1), u64::MAX - 1, u64::MAX] {
                assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
