//! Deterministic synthetic traces, for the bundled default and for benchmarks.
//!
//! The generator is a seeded SplitMix64 stream: the same seed gives the same bytes on every
//! platform, so a synthetic trace is a fixture that never has to be committed. Output is in
//! BurstGPT_1's published CSV layout and is labelled synthetic wherever it is used.

/// SplitMix64: tiny, fast, and identical everywhere.
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

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Exponential with mean `mean`.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }

    /// Log-normal token count with median `median` and log-sd `sigma`, at least 1.
    pub fn lognormal_tokens(&mut self, median: f64, sigma: f64) -> u32 {
        // Box–Muller.
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let v = (median * (sigma * z).exp()).round();
        v.clamp(1.0, 131_072.0) as u32
    }
}

/// Parameters of a synthetic BurstGPT-layout trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthSpec {
    /// Rows to write (including the deliberate failure rows).
    pub rows: u64,
    /// Seed of the stream.
    pub seed: u64,
    /// Mean arrival rate over time, requests per second (before failure rows are dropped).
    pub rate_rps: f64,
    /// Share of rows written as BurstGPT failures (0 response tokens).
    pub failure_share: f64,
}

impl SynthSpec {
    /// The bundled default: 2,000 rows at 2 req/s with 3 % failures, seed 42.
    pub const DEFAULT: SynthSpec = SynthSpec {
        rows: 2_000,
        seed: 42,
        rate_rps: 2.0,
        failure_share: 0.03,
    };
}

/// Writes a synthetic trace in BurstGPT_1's layout into `out` (appending). Arrivals are a
/// Poisson process modulated by a five-minute burst cycle, so burstiness is above 1 at windows
/// of a few seconds and up, as in real traces.
pub fn burstgpt_csv(spec: SynthSpec, out: &mut Vec<u8>) {
    use std::io::Write;
    let mut rng = SplitMix64::new(spec.seed);
    let _ = writeln!(
        out,
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type"
    );
    let mut t_ms: u64 = 0;
    let base_gap_ms = 1000.0 / spec.rate_rps.max(1e-6);
    for i in 0..spec.rows {
        // Every fifth minute is bursty, 4× denser than the quiet ones: quiet minutes run at
        // 5/8 of the mean rate and bursty ones at 5/2, so the time-average is the mean rate.
        let minute = t_ms / 60_000;
        let gap = if minute % 5 == 4 {
            base_gap_ms * 0.4
        } else {
            base_gap_ms * 1.6
        };
        t_ms += rng.exp(gap).round() as u64;
        let gpt4 = rng.next_f64() < 0.2;
        let model = if gpt4 { "GPT-4" } else { "ChatGPT" };
        let log_type = if rng.next_f64() < 0.9 {
            "Conversation log"
        } else {
            "API log"
        };
        let (input, output) = if rng.next_f64() < spec.failure_share {
            (0, 0)
        } else {
            (
                rng.lognormal_tokens(380.0, 1.1),
                rng.lognormal_tokens(220.0, 0.9),
            )
        };
        let _ = i;
        let secs = t_ms / 1000;
        let _ = writeln!(
            out,
            "{secs},{model},{input},{output},{},{log_type}",
            u64::from(input) + u64::from(output)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        burstgpt_csv(SynthSpec::DEFAULT, &mut a);
        burstgpt_csv(SynthSpec::DEFAULT, &mut b);
        assert_eq!(a, b);
        assert_eq!(a.iter().filter(|&&c| c == b'\n').count(), 2_001);
    }
}
