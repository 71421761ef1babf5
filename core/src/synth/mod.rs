//! Synthetic traces with a target regime: for the quick start, for scale benchmarks and for
//! tests. Never a stand-in for a recorded trace; everything that writes one labels it.
//!
//! A [`SynthSpec`] names the regime the emitted requests should show — rate, burstiness D at
//! a window, input and output token p50/p95 — plus the layout, where to stop and the seed.
//! The [`Synthesizer`] streams the file in chunks, so a 30-million-row trace never sits in
//! memory. Definitions are those of [`crate::regime`]: the target is what `trace inspect`
//! reports for the file.
//!
//! How the target is met:
//! - **Arrivals.** Window by window (`[k·w, (k+1)·w)`), a count is drawn from a law with mean
//!   `rate · w` and variance `D · rate · w` — Poisson for D = 1, gamma–Poisson for D > 1, a
//!   Poisson/paced mixture for D < 1, reachable down to [`least_burstiness`] — and the
//!   window's arrivals are placed uniformly on its whole milliseconds, then sorted. The first
//!   request sits exactly at the start of its window, so the windows `inspect` counts from the
//!   first arrival are the generator's own. Timestamps are whole milliseconds in both layouts
//!   (BurstGPT: seconds with three decimals), so a window of whole milliseconds is realised
//!   exactly. D is targeted at that one window; at other windows it is whatever this process
//!   gives (windows are independent, so D at k·w is the same D, and finer windows tend to 1).
//! - **Failures** (BurstGPT only): failure rows (0 request and 0 response tokens, as the
//!   published BurstGPT marks them; `inspect` drops them) are an independent Poisson stream
//!   with mean `rate · w · s/(1−s)` per window for a failure share `s`, laid over the requests.
//!   The requests alone carry the target regime.
//! - **Tokens**: log-normal, median = p50 and `σ = ln(p95/p50) / 1.6449` (the normal's 95th
//!   percentile), rounded to whole tokens and clamped to `1..=`[`MAX_TOKENS`].
//! - **Prefix sharing** (Mooncake only): a request reuses, with probability `prefix_share`,
//!   the leading `min(B_parent, B)` hash-id blocks of one of the [`PREFIX_POOL`] most recent
//!   requests (B = ⌈input/512⌉); every other block gets a fresh id, so ids are otherwise
//!   unique and a shared id always means a shared prefix.
//!
//! Each of arrivals, tokens, row attributes and prefix choices draws from its own SplitMix64
//! stream derived from the seed, so changing the token targets does not move an arrival.

mod counts;
mod generator;
mod record;
mod rng;

use serde::Serialize;

pub use counts::least_burstiness;
pub use generator::{SynthStats, Synthesizer, generate};
pub use record::{
    RealisedRecord, SYNTH_SCHEMA, SidecarCheck, SpecRecord, SynthRecord, TargetRecord,
    check_sidecar, realised_prefix_share,
};
pub use rng::SplitMix64;

use crate::regime::Window;
use crate::stats::Percentiles;

/// The generator's version: bumped whenever the bytes a given spec produces change.
pub const GENERATOR_VERSION: u32 = 3;

/// Token counts are clamped to this (a 2-million-token prompt is beyond any served model).
pub const MAX_TOKENS: u32 = 1 << 21;

/// A p95 target above this is refused: the clamp at [`MAX_TOKENS`] would bend it.
pub const MAX_TOKEN_P95: f64 = 262_144.0;

/// How many recent requests a prefix-sharing request may take its prefix from.
pub const PREFIX_POOL: usize = 1024;

/// At most this many windows (expected, for a row-bounded spec): bounds the time a spec with
/// a tiny rate can take.
pub const MAX_WINDOWS: u64 = 100_000_000;

/// At most this many requests per window on average: bounds one window's memory.
pub const MAX_MEAN_PER_WINDOW: f64 = 100_000.0;

/// The longest trace, in milliseconds (about 31.7 years).
pub const MAX_SPAN_MS: u64 = 1_000_000_000_000;

/// The longest window, in milliseconds (one day).
pub const MAX_WINDOW_MS: u64 = 86_400_000;

/// The file layout to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// BurstGPT_1's CSV: `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`,
    /// timestamps in seconds with three decimals (the published files have whole seconds).
    Burstgpt,
    /// Mooncake JSONL: `timestamp` (whole ms), `input_length`, `output_length`, `hash_ids`.
    Mooncake,
}

impl Layout {
    /// The stable lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Burstgpt => "burstgpt",
            Layout::Mooncake => "mooncake",
        }
    }
}

/// Where the trace ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// After this many rows, failure rows included.
    Rows(u64),
    /// Before this many milliseconds of trace time: arrivals in `[0, ms)`.
    DurationMs(u64),
}

/// What to generate: the target regime of the emitted requests, the layout, the stop and the
/// seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthSpec {
    /// The file layout.
    pub layout: Layout,
    /// Where to stop.
    pub stop: Stop,
    /// Seed of every stream.
    pub seed: u64,
    /// Target rate of the requests (failure rows excluded), requests per second.
    pub rate_rps: f64,
    /// Target index of dispersion of per-window request counts at [`SynthSpec::window_ms`].
    pub burstiness: f64,
    /// The window the burstiness is targeted at, whole milliseconds.
    pub window_ms: u64,
    /// Target p50/p95 of prompt tokens.
    pub input_tokens: Percentiles,
    /// Target p50/p95 of completion tokens.
    pub output_tokens: Percentiles,
    /// Share of rows written as BurstGPT failures (BurstGPT only; 0 for Mooncake).
    pub failure_share: f64,
    /// Share of requests that reuse an earlier request's leading blocks (Mooncake only).
    pub prefix_share: f64,
}

impl SynthSpec {
    /// The bundled default: 2,000 BurstGPT_1-layout rows at 2 req/s, D = 2 at 1 s, token
    /// percentiles near the published BurstGPT_1 prefix, 3 % failures, seed 42.
    pub const DEFAULT: SynthSpec = SynthSpec {
        layout: Layout::Burstgpt,
        stop: Stop::Rows(2_000),
        seed: 42,
        rate_rps: 2.0,
        burstiness: 2.0,
        window_ms: 1_000,
        input_tokens: Percentiles {
            p50: 350.0,
            p95: 1_640.0,
        },
        output_tokens: Percentiles {
            p50: 240.0,
            p95: 840.0,
        },
        failure_share: 0.03,
        prefix_share: 0.0,
    };

    /// The burstiness window as a [`Window`], for computing the realised regime.
    pub fn window(&self) -> Window {
        Window::from_secs(self.window_ms as f64 / 1e3).unwrap_or(Window::ONE_SECOND)
    }

    /// Target requests per window (`rate · w`).
    pub fn mean_per_window(&self) -> f64 {
        self.rate_rps * self.window_ms as f64 / 1e3
    }
}

/// Why a spec cannot be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SynthError {
    /// A parameter is out of its range.
    #[error("{parameter}: {detail}")]
    Invalid {
        /// The parameter, as the CLI spells its flag.
        parameter: &'static str,
        /// What is wrong, with the value given.
        detail: String,
    },
    /// D below what any count law with this mean per window can reach.
    #[error(
        "burstiness: D = {burstiness} is not reachable at {mean_per_window} requests per window; the least D there is {least} (f·(1−f)/m for m requests per window, f = frac(m)); raise the rate or the window, or ask for D ≥ {least}"
    )]
    UnreachableBurstiness {
        /// The D asked for.
        burstiness: f64,
        /// `rate · w`.
        mean_per_window: f64,
        /// [`least_burstiness`] at that mean.
        least: f64,
    },
}
