//! How many requests fall in one window: the count law that gives a synthetic trace its
//! target burstiness.
//!
//! The regime's burstiness is D = variance / mean of per-window counts (see
//! [`crate::regime`]). Windows are drawn independently from a law with mean `m = rate · w` and
//! variance `D · m`:
//!
//! - **D = 1**: Poisson(m).
//! - **D > 1**: gamma–Poisson (negative binomial): λ ~ Gamma(shape m/(D−1), scale D−1), then
//!   Poisson(λ). Mean m, variance m + m(D−1) = D·m.
//! - **D < 1** (paced): a mixture. With probability q, Poisson(m); otherwise the least
//!   variable count with mean m, `floor(m) + Bernoulli(frac(m))`, whose variance is
//!   `f(1−f)` with `f = frac(m)`. Both parts have mean m, so the variance is
//!   `q·m + (1−q)·f(1−f)` and `q = (D − D_min)/(1 − D_min)` hits D exactly, for any
//!   `D ≥ D_min = f(1−f)/m`. Below `D_min` no count law with mean m exists; it is 0 when m is
//!   whole (perfectly paced windows), and `1 − m` when m < 1.

use super::SynthError;
use super::rng::SplitMix64;

/// The least burstiness any count law with `mean_per_window` requests per window can have:
/// `f(1−f)/m` with `f = frac(m)`.
pub fn least_burstiness(mean_per_window: f64) -> f64 {
    let frac = mean_per_window - mean_per_window.floor();
    if mean_per_window > 0.0 {
        frac * (1.0 - frac) / mean_per_window
    } else {
        1.0
    }
}

/// The law of one window's count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum CountLaw {
    /// Poisson(mean): D = 1.
    Poisson {
        /// Requests per window.
        mean: f64,
    },
    /// Gamma–Poisson: D > 1.
    NegativeBinomial {
        /// Gamma shape `m / (D − 1)`.
        shape: f64,
        /// Gamma scale `D − 1`.
        scale: f64,
    },
    /// Poisson with probability `poisson_weight`, else `floor(mean) + Bernoulli(frac)`: D < 1.
    Paced {
        /// Requests per window.
        mean: f64,
        /// Weight q of the Poisson part.
        poisson_weight: f64,
    },
}

impl CountLaw {
    /// The law with `mean` requests per window and index of dispersion `burstiness`.
    pub(crate) fn new(mean: f64, burstiness: f64) -> Result<CountLaw, SynthError> {
        if burstiness == 1.0 {
            return Ok(CountLaw::Poisson { mean });
        }
        if burstiness > 1.0 {
            return Ok(CountLaw::NegativeBinomial {
                shape: mean / (burstiness - 1.0),
                scale: burstiness - 1.0,
            });
        }
        let least = least_burstiness(mean);
        if burstiness < least {
            return Err(SynthError::UnreachableBurstiness {
                burstiness,
                mean_per_window: mean,
                least,
            });
        }
        Ok(CountLaw::Paced {
            mean,
            poisson_weight: (burstiness - least) / (1.0 - least),
        })
    }

    /// A stable name for the sidecar.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            CountLaw::Poisson { .. } => "poisson",
            CountLaw::NegativeBinomial { .. } => "gamma_poisson",
            CountLaw::Paced { .. } => "paced_poisson_mixture",
        }
    }

    /// One window's count.
    pub(crate) fn sample(&self, rng: &mut SplitMix64) -> u64 {
        match *self {
            CountLaw::Poisson { mean } => rng.poisson(mean),
            CountLaw::NegativeBinomial { shape, scale } => {
                let intensity = rng.gamma(shape) * scale;
                rng.poisson(intensity)
            }
            CountLaw::Paced {
                mean,
                poisson_weight,
            } => {
                if rng.next_f64() < poisson_weight {
                    rng.poisson(mean)
                } else {
                    let whole = mean.floor();
                    let up = rng.next_f64() < mean - whole;
                    whole as u64 + u64::from(up)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Per-window counts: mean m and variance D·m within Z = 5 standard errors over 200,000
    //! windows (the standard error of a sample variance is √((μ₄ − σ⁴)/n); μ₄ is bounded here
    //! by the worst case of the laws tested, the gamma–Poisson at D = 16).
    use super::*;

    #[test]
    fn window_counts_have_mean_m_and_variance_d_times_m() {
        const N: usize = 200_000;
        let mut rng = SplitMix64::new(11);
        for (mean, d) in [
            (2.0, 1.0),
            (2.0, 4.0),
            (2.0, 16.0),
            (20.0, 4.0),
            (2.0, 0.5),
            (2.0, 0.0),
            (2.5, 0.3),
            (0.4, 0.7),
        ] {
            let law = CountLaw::new(mean, d).unwrap();
            let xs: Vec<f64> = (0..N).map(|_| law.sample(&mut rng) as f64).collect();
            let n = N as f64;
            let m = xs.iter().sum::<f64>() / n;
            let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
            let mu4 = xs.iter().map(|x| (x - m).powi(4)).sum::<f64>() / n;
            let se_mean = (d * mean / n).sqrt().max(1e-9);
            let se_var = ((mu4 - v * v).max(0.0) / n).sqrt().max(1e-9);
            assert!(
                (m - mean).abs() <= 5.0 * se_mean,
                "m={mean} D={d}: mean {m} ± {se_mean}"
            );
            assert!(
                (v - d * mean).abs() <= 5.0 * se_var,
                "m={mean} D={d}: variance {v}, want {} ± {se_var}",
                d * mean
            );
        }
    }

    #[test]
    fn burstiness_below_the_least_for_the_mean_is_refused() {
        assert_eq!(least_burstiness(2.0), 0.0);
        assert!((least_burstiness(2.5) - 0.1).abs() < 1e-12);
        assert!((least_burstiness(0.4) - 0.6).abs() < 1e-12);
        assert!(matches!(
            CountLaw::new(2.5, 0.05),
            Err(SynthError::UnreachableBurstiness { .. })
        ));
        assert!(CountLaw::new(2.5, 0.1).is_ok());
    }
}
