//! Statistics with their methods stated: percentiles by linear interpolation (numpy's
//! default, Hyndman–Fan type 7) and the index of dispersion of per-window counts.

use serde::Serialize;

/// p50 and p95 of a column.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

impl Percentiles {
    /// p50 and p95 of `values` (any order); zeros for an empty column.
    pub fn of_u32(values: &[u32]) -> Percentiles {
        let mut scratch = values.to_vec();
        Percentiles {
            p50: percentile_unsorted(&mut scratch, 0.50).unwrap_or(0.0),
            p95: percentile_unsorted(&mut scratch, 0.95).unwrap_or(0.0),
        }
    }
}

/// As [`percentile_linear`], on values in any order, by selection in O(n) instead of a sort.
/// Reorders `values`.
pub fn percentile_unsorted(values: &mut [u32], q: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (values.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let (_, &mut a, above) = values.select_nth_unstable(lo);
    let b = above.iter().copied().min().unwrap_or(a);
    Some(lerp(f64::from(a), f64::from(b), frac))
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
    let last = *arrivals.last()?;
    let windows = u128::try_from(last / window_ns + 1).ok()?;
    let n = arrivals.len() as u128;
    let mut sum_sq: u128 = 0;
    let mut current: Option<i64> = None;
    let mut run: u128 = 0;
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
    let denominator = windows.checked_mul(n)?;
    Some(numerator as f64 / denominator as f64)
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

    proptest::proptest! {
        #[test]
        fn selection_equals_sorting(mut v in proptest::collection::vec(0u32..1000, 1..200), q in 0.0f64..=1.0) {
            let mut sorted = v.clone();
            sorted.sort_unstable();
            proptest::prop_assert_eq!(percentile_unsorted(&mut v, q), percentile_linear(&sorted, q));
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
}
