//! Statistics with their methods stated: percentiles by linear interpolation (numpy's
//! default, Hyndman–Fan type 7) and the index of dispersion of per-window counts.

use serde::{Deserialize, Serialize};

/// p50 and p95 of a column.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

impl Percentiles {
    /// p50 and p95 of `values` (any order); zeros for an empty column.
    pub fn of_u32(values: &[u32]) -> Percentiles {
        Distribution::of_u32(values).percentiles()
    }
}

/// Token counts beyond this make a counting table larger than sorting costs.
const COUNTING_MAX: u32 = 1 << 22;

/// A column of counts as its distinct values with how often each occurs: any quantile of the
/// column in O(log distinct) without holding a sorted copy. Built by counting when the values
/// are small (token counts always are), otherwise by sorting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Distribution {
    /// Distinct values, ascending.
    values: Vec<u32>,
    /// `cumulative[i]` = how many entries are ≤ `values[i]`.
    cumulative: Vec<u64>,
}

impl Distribution {
    /// The distribution of `column` (any order).
    pub fn of_u32(column: &[u32]) -> Distribution {
        let max = column.iter().copied().max().unwrap_or(0);
        let mut pairs: Vec<(u32, u64)> = Vec::new();
        // Count when the table is no larger than a few times the column itself.
        let table_fits = u64::from(max) <= 4 * column.len() as u64 + 65_536;
        if max <= COUNTING_MAX && table_fits {
            let mut counts = vec![0u64; max as usize + 1];
            for &v in column {
                if let Some(c) = counts.get_mut(v as usize) {
                    *c += 1;
                }
            }
            pairs.extend(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(v, &c)| (v as u32, c)),
            );
        } else {
            let mut sorted = column.to_vec();
            sorted.sort_unstable();
            for v in sorted {
                match pairs.last_mut() {
                    Some((last, c)) if *last == v => *c += 1,
                    _ => pairs.push((v, 1)),
                }
            }
        }
        let mut total = 0u64;
        let (values, cumulative) = pairs
            .into_iter()
            .map(|(v, c)| {
                total += c;
                (v, total)
            })
            .unzip();
        Distribution { values, cumulative }
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }

    /// True when the column was empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `rank`-th smallest entry (from 0).
    pub fn order_statistic(&self, rank: u64) -> Option<u32> {
        let idx = self.cumulative.partition_point(|&c| c <= rank);
        self.values.get(idx).copied()
    }

    /// Quantile `q ∈ [0, 1]` by linear interpolation, exactly as [`percentile_linear`] on the
    /// sorted column.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.len();
        if n == 0 || !(0.0..=1.0).contains(&q) {
            return None;
        }
        let h = (n - 1) as f64 * q;
        let lo = h.floor() as u64;
        let frac = h - lo as f64;
        let a = self.order_statistic(lo)?;
        let b = self.order_statistic((lo + 1).min(n - 1))?;
        Some(lerp(f64::from(a), f64::from(b), frac))
    }

    /// p50 and p95; zeros when empty.
    pub fn percentiles(&self) -> Percentiles {
        Percentiles {
            p50: self.quantile(0.50).unwrap_or(0.0),
            p95: self.quantile(0.95).unwrap_or(0.0),
        }
    }

    /// Distinct values with the share of entries at or below each: the empirical CDF's steps.
    pub fn cdf_steps(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        let n = self.len().max(1) as f64;
        self.values
            .iter()
            .zip(&self.cumulative)
            .map(move |(&v, &c)| (v, c as f64 / n))
    }
}

/// numpy's `_lerp`: from below for t < 0.5, from above otherwise, so 841.7 stays 841.7.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// Percentile `percent ∈ [0, 100]` of ascending finite `sorted` milliseconds (or any unit):
/// the order statistics at rank `percent/100 · (n − 1)`, joined linearly as `a + (b − a)·t`.
/// The audit's latency distributions and the over-time slices share this one rule, so a
/// slice holding every request reports the whole run's numbers. `None` when empty.
pub fn percentile_sorted_f64(sorted: &[f64], percent: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let rank = percent / 100.0 * last as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let (a, b) = (*sorted.get(lo)?, *sorted.get(hi)?);
    let (t, diff) = (rank - lo as f64, b - a);
    // Two values of opposite sign near f64's limits differ by more than f64 holds: weigh them
    // instead of overflowing (never reached by real latencies, whose bits are unchanged).
    Some(if diff.is_finite() {
        a + diff * t
    } else {
        a * (1.0 - t) + b * t
    })
}

/// Quantile `q ∈ [0, 1]` of ascending `sorted` by linear interpolation between the order
/// statistics at `h = (n − 1)·q`.
pub fn percentile_linear(sorted: &[u32], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let a = f64::from(*sorted.get(lo)?);
    let b = f64::from(*sorted.get(lo + 1).unwrap_or(sorted.get(lo)?));
    // numpy's `_lerp`: from below for t < 0.5, from above otherwise, so 841.7 stays 841.7.
    let diff = b - a;
    Some(if frac >= 0.5 {
        b - diff * (1.0 - frac)
    } else {
        a + diff * frac
    })
}

/// Index of dispersion of the counts in windows `[k·w, (k+1)·w)`, `k = 0..=floor(last/w)`,
/// over ascending non-negative `arrivals`, empty windows included: population variance / mean.
///
/// Computed exactly in integers (`Σc²` and `n`) and divided once, so it does not depend on
/// summation order: D = (W·Σc² − n²) / (W·n) for W windows.
pub fn dispersion_index(arrivals: &[i64], window_ns: i64) -> Option<f64> {
    if window_ns <= 0 {
        return None;
    }
    // Defined for rebased arrivals (first ≥ 0); anything else has no windows to count.
    if *arrivals.first()? < 0 {
        return None;
    }
    let last = *arrivals.last()?;
    let windows = u128::try_from((last / window_ns).checked_add(1)?).ok()?;
    let n = arrivals.len() as u128;
    let mut sum_sq: u128 = 0;
    let mut current: Option<i64> = None;
    let mut run: u64 = 0;
    // A window's count squared in u64 where it fits (always, below 2^32 arrivals): a u128
    // product is a library call in wasm32.
    let square = |c: u64| {
        c.checked_mul(c)
            .map_or_else(|| u128::from(c) * u128::from(c), u128::from)
    };
    // Arrivals are sorted, so most share the window before them: a division only when one
    // leaves it (30M divisions were a third of the regime's time).
    let mut bounds: Option<(i64, i64)> = None;
    for &t in arrivals {
        let k = match bounds {
            Some((start, end)) if t >= start && t < end => current.unwrap_or(t / window_ns),
            _ => {
                let k = t / window_ns;
                // `[k·w, (k+1)·w)` is exactly the non-negative `t` with this quotient.
                bounds = (t >= 0)
                    .then(|| k.checked_mul(window_ns))
                    .flatten()
                    .and_then(|s| Some((s, s.checked_add(window_ns)?)));
                k
            }
        };
        if current == Some(k) {
            run += 1;
        } else {
            sum_sq += square(run);
            current = Some(k);
            run = 1;
        }
    }
    sum_sq += square(run);
    let numerator = windows.checked_mul(sum_sq)?.checked_sub(n * n)?;
    let denominator = windows.checked_mul(n)?;
    Some(numerator as f64 / denominator as f64)
}

/// Two-sample Kolmogorov–Smirnov distance `sup_x |F_a(x) − F_b(x)|` between two empirical
/// distributions, each given as ascending steps `(distinct value, entries ≤ value)` over
/// `n_a` and `n_b` entries. Computed exactly as `max |c_a·n_b − c_b·n_a| / (n_a·n_b)` in
/// integers, so "exactly 0" means the two empirical distributions are equal (for samples of
/// one size: the same multiset), not "close".
/// Both empty: 0; one empty: 1.
fn ks_of_steps<T: Ord + Copy>(
    mut a: impl Iterator<Item = (T, u64)>,
    n_a: u64,
    mut b: impl Iterator<Item = (T, u64)>,
    n_b: u64,
) -> f64 {
    match (n_a, n_b) {
        (0, 0) => return 0.0,
        (0, _) | (_, 0) => return 1.0,
        _ => {}
    }
    let (na, nb) = (u128::from(n_a), u128::from(n_b));
    let (mut ca, mut cb) = (0u128, 0u128);
    let mut max = 0u128;
    let (mut next_a, mut next_b) = (a.next(), b.next());
    loop {
        match (next_a, next_b) {
            (None, None) => break,
            (Some((va, ka)), Some((vb, kb))) if va == vb => {
                (ca, cb) = (u128::from(ka), u128::from(kb));
                (next_a, next_b) = (a.next(), b.next());
            }
            (Some((va, ka)), Some((vb, _))) if va < vb => {
                ca = u128::from(ka);
                next_a = a.next();
            }
            (Some((_, ka)), None) => {
                ca = u128::from(ka);
                next_a = a.next();
            }
            (_, Some((_, kb))) => {
                cb = u128::from(kb);
                next_b = b.next();
            }
        }
        max = max.max((ca * nb).abs_diff(cb * na));
    }
    max as f64 / (na * nb) as f64
}

/// Ascending steps `(value, entries ≤ value)` of an ascending slice.
fn sorted_steps<T: PartialEq + Copy>(sorted: &[T]) -> impl Iterator<Item = (T, u64)> + '_ {
    sorted.chunk_by(|x, y| x == y).scan(0u64, |seen, run| {
        *seen += run.len() as u64;
        run.first().map(|&v| (v, *seen))
    })
}

/// Two-sample Kolmogorov–Smirnov distance of two ascending samples (see [`Distribution::ks_distance`]).
pub fn ks_distance_sorted(a: &[i64], b: &[i64]) -> f64 {
    ks_of_steps(
        sorted_steps(a),
        a.len() as u64,
        sorted_steps(b),
        b.len() as u64,
    )
}

impl Distribution {
    /// Two-sample Kolmogorov–Smirnov distance `sup_x |F_self(x) − F_other(x)|`, exact: 0
    /// exactly when the two empirical distributions are equal — for columns of one length,
    /// when they hold the same values the same number of times (`[5]` and `[5, 5]` are 0
    /// apart: compare counts separately). Both empty: 0; one empty: 1.
    pub fn ks_distance(&self, other: &Distribution) -> f64 {
        let steps = |d: &Distribution| {
            d.values
                .iter()
                .copied()
                .zip(d.cumulative.iter().copied())
                .collect::<Vec<_>>()
        };
        ks_of_steps(
            steps(self).into_iter(),
            self.len(),
            steps(other).into_iter(),
            other.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_like_numpy() {
        // numpy.percentile([1, 2, 3, 4], [50, 95]) == [2.5, 3.85]
        let p = Percentiles::of_u32(&[4, 1, 3, 2]);
        assert_eq!(p.p50, 2.5);
        assert!((p.p95 - 3.85).abs() < 1e-12);
        assert_eq!(Percentiles::of_u32(&[7]).p95, 7.0);
    }

    /// The dispersion as it was computed before windows were remembered: one division per
    /// arrival.
    fn dispersion_dividing_every_arrival(arrivals: &[i64], window_ns: i64) -> Option<f64> {
        if window_ns <= 0 || *arrivals.first()? < 0 {
            return None;
        }
        let windows = u128::try_from((*arrivals.last()? / window_ns).checked_add(1)?).ok()?;
        let n = arrivals.len() as u128;
        let (mut sum_sq, mut current, mut run) = (0u128, None, 0u128);
        for &t in arrivals {
            let k = t / window_ns;
            if current == Some(k) {
                run += 1;
            } else {
                sum_sq += run * run;
                current = Some(k);
                run = 1;
            }
        }
        sum_sq += run * run;
        let numerator = windows.checked_mul(sum_sq)?.checked_sub(n * n)?;
        Some(numerator as f64 / windows.checked_mul(n)? as f64)
    }

    proptest::proptest! {
        #[test]
        fn a_remembered_window_counts_as_dividing_every_arrival(
            mut v in proptest::collection::vec(proptest::prop_oneof![0i64..50_000, proptest::num::i64::ANY], 1..300),
            w in proptest::prop_oneof![1i64..2_000, proptest::num::i64::ANY],
            sorted: bool,
        ) {
            if sorted {
                v.sort_unstable();
            }
            proptest::prop_assert_eq!(dispersion_index(&v, w), dispersion_dividing_every_arrival(&v, w));
        }

        #[test]
        fn distribution_quantiles_equal_sorting(v in proptest::collection::vec(proptest::prop_oneof![0u32..1000, (COUNTING_MAX - 5)..], 1..200), q in 0.0f64..=1.0) {
            let mut sorted = v.clone();
            sorted.sort_unstable();
            proptest::prop_assert_eq!(Distribution::of_u32(&v).quantile(q), percentile_linear(&sorted, q));
        }

    }

    #[test]
    fn dispersion_counts_empty_windows() {
        // windows [0,1): 2, [1,2): 0, [2,3): 1 → mean 1, var 2/3.
        let d = dispersion_index(&[0, 500_000_000, 2_000_000_000], 1_000_000_000).unwrap();
        assert!((d - 2.0 / 3.0).abs() < 1e-12);
        // Perfectly paced: one per window → D = 0.
        let paced: Vec<i64> = (0..10).map(|i| i * 1_000_000_000).collect();
        assert_eq!(dispersion_index(&paced, 1_000_000_000), Some(0.0));
    }

    #[test]
    fn ks_matches_the_textbook_examples() {
        // [1,2,3] vs [2,3,4] → 1/3; [1,2,3,4] vs [1,2] → 1/2.
        assert!((ks_distance_sorted(&[1, 2, 3], &[2, 3, 4]) - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(ks_distance_sorted(&[1, 2, 3, 4], &[1, 2]), 0.5);
        assert_eq!(ks_distance_sorted(&[5, 5, 7], &[5, 5, 7]), 0.0);
        assert_eq!(ks_distance_sorted(&[], &[]), 0.0);
        assert_eq!(ks_distance_sorted(&[1], &[]), 1.0);
        let d = |v: &[u32]| Distribution::of_u32(v);
        assert!((d(&[3, 1, 2]).ks_distance(&d(&[4, 2, 3])) - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(d(&[9, 1, 9]).ks_distance(&d(&[1, 9, 9])), 0.0);
    }

    proptest::proptest! {
        #[test]
        fn ks_is_zero_exactly_for_equal_samples_of_one_size(
            a in proptest::collection::vec(0u32..20, 0..40),
            b in proptest::collection::vec(0u32..20, 0..40),
        ) {
            let (mut sa, mut sb) = (a.clone(), b.clone());
            sa.sort_unstable();
            sb.sort_unstable();
            let ks = Distribution::of_u32(&a).ks_distance(&Distribution::of_u32(&b));
            if sa.len() == sb.len() {
                proptest::prop_assert_eq!(ks == 0.0, sa == sb);
            }
            let wide = |v: &[u32]| v.iter().map(|&x| i64::from(x)).collect::<Vec<_>>();
            proptest::prop_assert_eq!(ks, ks_distance_sorted(&wide(&sa), &wide(&sb)));
            proptest::prop_assert!((0.0..=1.0).contains(&ks));
        }
    }
}
