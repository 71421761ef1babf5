//! Random numbers for synthetic traces: a SplitMix64 stream and the few distributions the
//! generator draws from (uniform, normal, gamma, Poisson), written here rather than taken from
//! an RNG crate, so that a seed's stream is fixed by this crate's version alone.
//!
//! Integer and uniform draws are bit-identical on every platform. The normal, gamma and
//! Poisson draws go through `ln`, `exp`, `sin`/`cos` and `powf`, which the platform's maths
//! library rounds; a last-bit difference there could in principle move one token count or one
//! rejection step, so the promise is "same seed, same version, same platform, same bytes".

use std::f64::consts::TAU;

/// SplitMix64 (Steele, Lea & Flood 2014): tiny, fast, and identical everywhere.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, on the 2⁻⁵³ grid.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `(0, 1]`: safe to take the logarithm of.
    fn next_f64_open0(&mut self) -> f64 {
        1.0 - self.next_f64()
    }

    /// Uniform integer in `[0, n)` by the multiply-high method (bias below `n / 2⁶⁴`); 0 when
    /// `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Two independent standard normal draws (Box–Muller).
    pub fn normal_pair(&mut self) -> (f64, f64) {
        let radius = (-2.0 * self.next_f64_open0().ln()).sqrt();
        let (sin, cos) = (TAU * self.next_f64()).sin_cos();
        (radius * cos, radius * sin)
    }

    /// Gamma with `shape` and unit scale: Marsaglia & Tsang (2000) for shape ≥ 1, and for
    /// shape < 1 their boost `Gamma(a) = Gamma(a + 1) · U^(1/a)`. A shape that is not finite
    /// and positive gives 0.
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if !(shape.is_finite() && shape > 0.0) {
            return 0.0;
        }
        if shape < 1.0 {
            let boosted = self.gamma_at_least_one(shape + 1.0);
            return boosted * self.next_f64_open0().powf(1.0 / shape);
        }
        self.gamma_at_least_one(shape)
    }

    fn gamma_at_least_one(&mut self, shape: f64) -> f64 {
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let (x, _) = self.normal_pair();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.next_f64_open0();
            let x2 = x * x;
            // The squeeze accepts ~98 % of draws without a logarithm.
            if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }

    /// Poisson with mean `mean`: inversion by sequential search below 10, Hörmann's
    /// transformed rejection with squeeze (PTRS, 1993) from 10 up. A mean that is not finite
    /// and positive gives 0.
    pub fn poisson(&mut self, mean: f64) -> u64 {
        if !(mean.is_finite() && mean > 0.0) {
            0
        } else if mean < 10.0 {
            self.poisson_inversion(mean)
        } else {
            self.poisson_ptrs(mean)
        }
    }

    fn poisson_inversion(&mut self, mean: f64) -> u64 {
        let u = self.next_f64();
        let mut k = 0u64;
        let mut p = (-mean).exp();
        let mut cdf = p;
        // The cap only guards against rounding leaving the summed cdf a hair below u ≈ 1: by
        // k = 200 a mean below 10 has no mass left that an f64 can hold.
        while u >= cdf && k < 200 {
            k += 1;
            p *= mean / k as f64;
            cdf += p;
        }
        k
    }

    fn poisson_ptrs(&mut self, mean: f64) -> u64 {
        let sqrt_mean = mean.sqrt();
        let ln_mean = mean.ln();
        let b = 0.931 + 2.53 * sqrt_mean;
        let a = -0.059 + 0.02483 * b;
        let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
        let v_r = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let u = self.next_f64() - 0.5;
            let v = self.next_f64();
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + mean + 0.43).floor();
            if us >= 0.07 && v <= v_r {
                return k as u64;
            }
            if k < 0.0 || (us < 0.013 && v > us) {
                continue;
            }
            let lhs = (v * inv_alpha / (a / (us * us) + b)).ln();
            if lhs <= -mean + k * ln_mean - ln_factorial(k) {
                return k as u64;
            }
        }
    }
}

/// `ln k!` for a whole `k ≥ 0`: summed exactly below 16, Stirling's series for `ln Γ(k + 1)`
/// from there (error below 1e-15 relative).
pub(crate) fn ln_factorial(k: f64) -> f64 {
    if k < 16.0 {
        let mut sum = 0.0;
        let mut i = 2.0;
        while i <= k {
            sum += f64::ln(i);
            i += 1.0;
        }
        return sum;
    }
    let x = k + 1.0;
    let x2 = x * x;
    let series = (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - 1.0 / (1680.0 * x2)) / x2) / x2) / x;
    (x - 0.5) * x.ln() - x + 0.5 * TAU.ln() + series
}

#[cfg(test)]
mod tests {
    //! Each sampler's moments over many draws, within `Z` standard errors of the sample moment
    //! (mean: σ/√n; variance: √((μ₄ − σ⁴)/n)), plus the Poisson pmf bin by bin. With Z = 5 a
    //! correct sampler fails one check in ~1.7 million; the seeds are fixed, so a failure is
    //! a change in the sampler, never flakiness.
    use super::*;

    const Z: f64 = 5.0;
    const DRAWS: usize = 100_000;

    fn moments(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        (mean, var)
    }

    /// Checks sample mean and variance against `mean`, `var` and the fourth central moment.
    fn check(name: &str, xs: &[f64], mean: f64, var: f64, mu4: f64) {
        let n = xs.len() as f64;
        let (m, v) = moments(xs);
        let se_mean = (var / n).sqrt();
        let se_var = ((mu4 - var * var) / n).sqrt();
        assert!(
            (m - mean).abs() <= Z * se_mean,
            "{name}: mean {m}, want {mean} ± {}",
            Z * se_mean
        );
        assert!(
            (v - var).abs() <= Z * se_var,
            "{name}: variance {v}, want {var} ± {}",
            Z * se_var
        );
    }

    #[test]
    fn splitmix64_matches_the_published_stream() {
        // Reference values of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn below_stays_in_range_and_is_uniform() {
        let mut rng = SplitMix64::new(1);
        let mut counts = [0u64; 7];
        for _ in 0..70_000 {
            let k = rng.below(7) as usize;
            counts[k] += 1;
        }
        // Binomial(70000, 1/7): sd ≈ 92.6.
        for c in counts {
            assert!((c as f64 - 10_000.0).abs() < Z * 92.6, "{counts:?}");
        }
        assert_eq!(rng.below(0), 0);
    }

    #[test]
    fn normal_pairs_are_standard_and_uncorrelated() {
        let mut rng = SplitMix64::new(2);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..DRAWS / 2 {
            let (x, y) = rng.normal_pair();
            a.push(x);
            b.push(y);
        }
        check("normal cos", &a, 0.0, 1.0, 3.0);
        check("normal sin", &b, 0.0, 1.0, 3.0);
        let cov = a.iter().zip(&b).map(|(x, y)| x * y).sum::<f64>() / a.len() as f64;
        assert!(cov.abs() <= Z / (a.len() as f64).sqrt(), "cov {cov}");
    }

    #[test]
    fn gamma_draws_have_mean_and_variance_equal_to_the_shape() {
        let mut rng = SplitMix64::new(3);
        for shape in [0.05, 0.5, 1.0, 2.5, 30.0] {
            let xs: Vec<f64> = (0..DRAWS).map(|_| rng.gamma(shape)).collect();
            assert!(xs.iter().all(|&x| x >= 0.0 && x.is_finite()));
            // Gamma(a, 1): mean a, variance a, fourth central moment 3a² + 6a.
            let mu4 = 3.0 * shape * shape + 6.0 * shape;
            check(&format!("gamma({shape})"), &xs, shape, shape, mu4);
        }
        assert_eq!(rng.gamma(0.0), 0.0);
        assert_eq!(rng.gamma(f64::NAN), 0.0);
    }

    #[test]
    fn poisson_draws_have_mean_and_variance_equal_to_the_mean() {
        let mut rng = SplitMix64::new(4);
        for mean in [0.3, 2.0, 9.5, 10.0, 37.5, 1_000.0, 1.0e6] {
            let xs: Vec<f64> = (0..DRAWS).map(|_| rng.poisson(mean) as f64).collect();
            // Poisson(λ): variance λ, fourth central moment 3λ² + λ.
            check(
                &format!("poisson({mean})"),
                &xs,
                mean,
                mean,
                3.0 * mean * mean + mean,
            );
        }
        assert_eq!(rng.poisson(0.0), 0);
        assert_eq!(rng.poisson(-1.0), 0);
        assert_eq!(rng.poisson(f64::INFINITY), 0);
    }

    #[test]
    fn poisson_draws_follow_the_pmf_on_both_sides_of_the_method_switch() {
        let mut rng = SplitMix64::new(5);
        for mean in [9.9_f64, 12.0, 40.0] {
            let mut counts = vec![0u64; 200];
            for _ in 0..DRAWS {
                let k = rng.poisson(mean) as usize;
                if let Some(c) = counts.get_mut(k) {
                    *c += 1;
                }
            }
            for (k, &c) in counts.iter().enumerate() {
                let p = (-mean + k as f64 * mean.ln() - ln_factorial(k as f64)).exp();
                let expected = p * DRAWS as f64;
                let sd = (expected * (1.0 - p)).sqrt();
                assert!(
                    (c as f64 - expected).abs() <= Z * sd + 1.0,
                    "poisson({mean}) at {k}: {c} draws, want {expected:.1} ± {:.1}",
                    Z * sd
                );
            }
        }
    }

    #[test]
    fn ln_factorial_matches_the_exact_sum() {
        let mut exact = 0.0_f64;
        for k in 0..400u32 {
            if k >= 2 {
                exact += f64::from(k).ln();
            }
            let got = ln_factorial(f64::from(k));
            assert!(
                (got - exact).abs() <= 1e-12 * exact.max(1.0),
                "ln {k}! = {got}, want {exact}"
            );
        }
    }
}
