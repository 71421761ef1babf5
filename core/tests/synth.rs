//! Synthetic traces: the regime a spec targets is the regime `inspect` finds in the bytes,
//! within a stated sampling tolerance; the bytes are a function of the spec and the version.

mod common;

use common::ingest;
use loadproof_core::stats::Percentiles;
use loadproof_core::synth::{
    Layout, SidecarCheck, Stop, SynthError, SynthRecord, SynthSpec, Synthesizer, check_sidecar,
    generate, least_burstiness, realised_prefix_share,
};
use loadproof_core::{DropReason, Ingester, Regime, Trace, TraceError};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

/// Standard errors a realised value may sit from its target.
///
/// Each realised statistic is an estimate from a finite sample, so it sits a random distance
/// from the target; the tolerance is `Z` standard errors of that estimate for the row count
/// used, computed below from the count law's moments (delta method):
/// - **rate**: `rows / span`; the span needed for N requests varies with the total count's
///   variance D·N, so the relative SE is `√(D/N)`, plus `2/W` for the partly filled windows at
///   both ends of a W-window trace.
/// - **burstiness**: D̂ = s²/x̄ over W windows has relative variance
///   `(μ₄/σ⁴ − 1 + σ²/μ² − 2μ₃/(σ²μ)) / W` for a count law with mean μ, central moments σ²,
///   μ₃, μ₄ (for Poisson this is 2/W, the classic dispersion test).
/// - **token p50/p95**: a sample quantile's SE is `√(q(1−q)/N) / f(x_q)`; for a log-normal
///   that is `1.2533·σ/√N` relative at the median and `2.114·σ/√N` at p95. One more token of
///   slack absorbs the rounding to whole tokens.
/// - **shares**: binomial, `√(p(1−p)/N)`.
///
/// With Z = 4 a correct generator misses a single check about once in 16,000. Measured over
/// 200 seeds at rate 2, D = 16, the spread of D̂ was 14 % wider than this first-order SE
/// (0.040 vs 0.035 relative at 40,000 rows; 7 % at 200,000), still leaving 3.5 measured
/// standard deviations. The seeds are fixed, so a failure means the generator changed.
const Z: f64 = 4.0;

/// Standard normal quantile at 0.95 (fits σ from p50 and p95).
const Z95: f64 = 1.644_853_626_951_472_2;

struct Case {
    layout: Layout,
    rate: f64,
    d: f64,
    window_ms: u64,
    stop: Stop,
    input: (f64, f64),
    output: (f64, f64),
    failure_share: f64,
    prefix_share: f64,
}

impl Case {
    fn spec(&self, seed: u64) -> SynthSpec {
        SynthSpec {
            layout: self.layout,
            stop: self.stop,
            seed,
            rate_rps: self.rate,
            burstiness: self.d,
            window_ms: self.window_ms,
            input_tokens: Percentiles {
                p50: self.input.0,
                p95: self.input.1,
            },
            output_tokens: Percentiles {
                p50: self.output.0,
                p95: self.output.1,
            },
            failure_share: self.failure_share,
            prefix_share: self.prefix_share,
        }
    }
}

/// Central moments (μ, σ², μ₃, μ₄) of the count law the generator uses for mean `m`, D `d`.
fn count_moments(m: f64, d: f64) -> (f64, f64, f64, f64) {
    let poisson = (m, m, 3.0 * m * m + m);
    if d >= 1.0 {
        if d == 1.0 {
            return (m, poisson.0, poisson.1, poisson.2);
        }
        // Negative binomial with mean m, variance D·m: shape r = m/(D−1).
        let var = d * m;
        let mu3 = m * d * (2.0 * d - 1.0);
        let excess_kurtosis = 6.0 * (d - 1.0) / m + 1.0 / (m * d);
        return (m, var, mu3, var * var * (3.0 + excess_kurtosis));
    }
    // Paced: Poisson with weight q, else floor(m) + Bernoulli(f); both have mean m.
    let f = m - m.floor();
    let least = least_burstiness(m);
    let q = (d - least) / (1.0 - least);
    let r2 = f * (1.0 - f);
    let r3 = r2 * (1.0 - 2.0 * f);
    let r4 = r2 * (1.0 - 3.0 * f + 3.0 * f * f);
    (
        m,
        q * poisson.0 + (1.0 - q) * r2,
        q * poisson.1 + (1.0 - q) * r3,
        q * poisson.2 + (1.0 - q) * r4,
    )
}

/// Relative standard error of D̂ over `windows` windows.
fn burstiness_relative_se(m: f64, d: f64, windows: f64) -> f64 {
    let (mu, var, mu3, mu4) = count_moments(m, d);
    let rel_var = mu4 / (var * var) - 1.0 + var / (mu * mu) - 2.0 * mu3 / (var * mu);
    (rel_var.max(0.0) / windows).sqrt()
}

fn within(what: &str, realised: f64, target: f64, tolerance: f64) {
    assert!(
        (realised - target).abs() <= tolerance,
        "{what}: realised {realised}, target {target} ± {tolerance}"
    );
}

fn token_check(what: &str, realised: Percentiles, target: (f64, f64), n: f64) {
    let sigma = (target.1 / target.0).ln() / Z95;
    let tol50 = Z * 1.2533 * sigma / n.sqrt() * target.0 + 1.0;
    let tol95 = Z * 2.114 * sigma / n.sqrt() * target.1 + 1.0;
    within(&format!("{what} p50"), realised.p50, target.0, tol50);
    within(&format!("{what} p95"), realised.p95, target.1, tol95);
}

/// Ingests without hashing: the regime does not depend on the digest, and sha256 in a debug
/// build costs more than everything else here.
fn ingest_unhashed(bytes: &[u8]) -> Result<Trace, TraceError> {
    let mut ingester = Ingester::new_unhashed(common::opts());
    ingester.push(bytes)?;
    ingester.finish_with_sha256([0; 32])
}

fn read(spec: &SynthSpec) -> (Trace, Regime) {
    let bytes = generate(spec).unwrap();
    let trace = ingest_unhashed(&bytes).unwrap();
    let regime = Regime::of(&trace, spec.window()).unwrap();
    (trace, regime)
}

#[test]
fn a_synthetic_trace_realises_its_target_regime_within_tolerance() {
    let burstgpt = |rate, d, rows| Case {
        layout: Layout::Burstgpt,
        rate,
        d,
        window_ms: 1_000,
        stop: Stop::Rows(rows),
        input: (350.0, 1_640.0),
        output: (240.0, 840.0),
        failure_share: 0.03,
        prefix_share: 0.0,
    };
    let mooncake = |rate, d, rows, prefix_share| Case {
        layout: Layout::Mooncake,
        rate,
        d,
        window_ms: 1_000,
        stop: Stop::Rows(rows),
        input: (1_000.0, 5_000.0),
        output: (350.0, 698.0),
        failure_share: 0.0,
        prefix_share,
    };
    let cases = [
        burstgpt(2.0, 1.0, 40_000),
        burstgpt(2.0, 4.0, 60_000),
        burstgpt(2.0, 16.0, 120_000),
        burstgpt(20.0, 16.0, 200_000),
        burstgpt(2.0, 0.5, 40_000),
        mooncake(20.0, 1.0, 30_000, 0.0),
        mooncake(20.0, 4.0, 60_000, 0.3),
        mooncake(20.0, 0.25, 30_000, 0.8),
        // A 5 s window, a duration stop, short prompts with a wide tail.
        Case {
            window_ms: 5_000,
            stop: Stop::DurationMs(8_000_000),
            input: (40.0, 900.0),
            output: (12.0, 30.0),
            ..burstgpt(5.0, 3.0, 0)
        },
    ];
    for (idx, case) in cases.iter().enumerate() {
        let spec = case.spec(1_000 + idx as u64);
        let (trace, regime) = read(&spec);
        let m = spec.mean_per_window();
        let n = trace.len() as f64;
        let windows = n / m;
        let label = format!(
            "{} rate {} D {} w {} ms",
            case.layout.name(),
            case.rate,
            case.d,
            case.window_ms
        );

        let rate_tol = case.rate * (Z * (case.d / n).sqrt() + 2.0 / windows);
        within(
            &format!("{label}: rate"),
            regime.rate_rps.unwrap(),
            case.rate,
            rate_tol,
        );
        let d_tol = case.d * Z * burstiness_relative_se(m, case.d, windows);
        within(
            &format!("{label}: D"),
            regime.burstiness.unwrap(),
            case.d,
            d_tol,
        );
        token_check(
            &format!("{label}: input"),
            regime.input_tokens,
            case.input,
            n,
        );
        token_check(
            &format!("{label}: output"),
            regime.output_tokens,
            case.output,
            n,
        );

        let meta = trace.meta();
        let rows = meta.rows_read as f64;
        let failures = meta.dropped.get(&DropReason::ZeroInputTokens).copied();
        assert_eq!(meta.dropped_total(), failures.unwrap_or(0), "{label}");
        let s = case.failure_share;
        within(
            &format!("{label}: failure share"),
            failures.unwrap_or(0) as f64 / rows,
            s,
            Z * (s * (1.0 - s) * case.d.max(1.0) / rows).sqrt() + 1.0 / rows,
        );
        if case.layout == Layout::Mooncake {
            let p = case.prefix_share;
            within(
                &format!("{label}: prefix share"),
                realised_prefix_share(&trace).unwrap(),
                p,
                Z * (p * (1.0 - p) / n).sqrt() + 1.0 / n,
            );
        }
        if let Stop::DurationMs(ms) = case.stop {
            assert!(regime.span_s < ms as f64 / 1e3, "{label}");
        }
    }
}

#[test]
fn paced_burstiness_is_exact_when_the_mean_per_window_is_whole() {
    // D = 0 at 2 requests per 1 s window: every window holds exactly two requests.
    let spec = SynthSpec {
        burstiness: 0.0,
        failure_share: 0.0,
        stop: Stop::Rows(2_000),
        ..SynthSpec::DEFAULT
    };
    let (_, regime) = read(&spec);
    assert_eq!(regime.burstiness, Some(0.0));
    assert_eq!(regime.windows, 1_000);
}

#[test]
fn burstiness_below_the_reachable_least_is_refused_with_the_least() {
    let spec = SynthSpec {
        rate_rps: 2.5,
        burstiness: 0.05,
        ..SynthSpec::DEFAULT
    };
    let err = Synthesizer::new(&spec).unwrap_err();
    assert!(matches!(
        err,
        SynthError::UnreachableBurstiness { least, .. } if (least - 0.1).abs() < 1e-12
    ));
    assert!(err.to_string().contains("least D there is 0.1"), "{err}");
}

#[test]
fn parameters_outside_their_ranges_are_refused_naming_the_parameter() {
    let bad = [
        (
            SynthSpec {
                rate_rps: 0.0,
                ..SynthSpec::DEFAULT
            },
            "rate",
        ),
        (
            SynthSpec {
                window_ms: 0,
                ..SynthSpec::DEFAULT
            },
            "window",
        ),
        (
            SynthSpec {
                burstiness: f64::NAN,
                ..SynthSpec::DEFAULT
            },
            "burstiness",
        ),
        (
            SynthSpec {
                input_tokens: Percentiles {
                    p50: 500.0,
                    p95: 100.0,
                },
                ..SynthSpec::DEFAULT
            },
            "input tokens",
        ),
        (
            SynthSpec {
                prefix_share: 0.5,
                ..SynthSpec::DEFAULT
            },
            "prefix share",
        ),
        (
            SynthSpec {
                layout: Layout::Mooncake,
                ..SynthSpec::DEFAULT
            },
            "failure share",
        ),
        (
            SynthSpec {
                stop: Stop::Rows(0),
                ..SynthSpec::DEFAULT
            },
            "stop",
        ),
        (
            SynthSpec {
                rate_rps: 1e-6,
                stop: Stop::Rows(1_000_000),
                ..SynthSpec::DEFAULT
            },
            "rows",
        ),
    ];
    for (spec, parameter) in bad {
        let err = Synthesizer::new(&spec).unwrap_err();
        assert!(err.to_string().starts_with(parameter), "{parameter}: {err}");
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes() {
    let mooncake = SynthSpec {
        layout: Layout::Mooncake,
        failure_share: 0.0,
        prefix_share: 0.4,
        ..SynthSpec::DEFAULT
    };
    for spec in [SynthSpec::DEFAULT, mooncake] {
        let a = generate(&spec).unwrap();
        assert_eq!(a, generate(&spec).unwrap());
        let other = SynthSpec { seed: 43, ..spec };
        assert_ne!(a, generate(&other).unwrap());
    }
}

#[test]
fn token_targets_do_not_move_arrivals() {
    let a = generate(&SynthSpec::DEFAULT).unwrap();
    let b = generate(&SynthSpec {
        input_tokens: Percentiles {
            p50: 10.0,
            p95: 20.0,
        },
        ..SynthSpec::DEFAULT
    })
    .unwrap();
    let stamps = |bytes: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(|l| l.split(',').next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(stamps(&a), stamps(&b));
    assert_ne!(a, b);
}

#[test]
fn the_default_trace_is_pinned_to_the_generator_version() {
    // Changing what a spec generates is a new generator version: bump GENERATOR_VERSION
    // (recorded in every sidecar) and this digest together.
    let bytes = generate(&SynthSpec::DEFAULT).unwrap();
    let digest = format!("{:x}", Sha256::digest(&bytes));
    assert_eq!(
        (loadproof_core::synth::GENERATOR_VERSION, digest.as_str()),
        (
            3,
            "2375ff6306a5cdb410666801a461de00cebe4e8948910bff4d82f6dc8d1bbb52"
        )
    );
}

#[test]
fn the_sidecar_record_carries_spec_target_realised_and_a_verifiable_sha256() {
    let spec = SynthSpec::DEFAULT;
    let bytes = generate(&spec).unwrap();
    let trace = ingest(&bytes).unwrap();
    let sha = trace.meta().source_sha256.clone();
    let record = SynthRecord::new(
        &spec,
        "t.csv",
        "loadproof trace synth --out t.csv",
        &sha,
        bytes.len() as u64,
        Ok(&trace),
    );
    let json: serde_json::Value = serde_json::from_str(&record.to_json()).unwrap();
    assert_eq!(json["schema"], "loadproof.trace.synth/v1");
    assert_eq!(json["synthetic"], true);
    assert_eq!(json["spec"]["seed"], 42);
    assert_eq!(json["spec"]["rows"], 2_000);
    assert_eq!(json["spec"]["count_law"], "gamma_poisson");
    assert_eq!(json["target"]["rate_rps"], 2.0);
    assert_eq!(json["realised"]["rows_read"], 2_000);
    let realised = Regime::of(&trace, spec.window()).unwrap();
    assert_eq!(
        json["realised"]["regime"]["burstiness"],
        realised.burstiness.unwrap()
    );
    let check = check_sidecar(&record.to_json(), "t.csv.synth.json", &sha);
    assert!(matches!(check, SidecarCheck::Verified(_)), "{check:?}");
}

#[derive(Debug, Clone)]
struct SaneSpec {
    spec: SynthSpec,
}

fn sane_spec() -> impl Strategy<Value = SaneSpec> {
    (
        (any::<bool>(), any::<u64>(), 0.1f64..50.0, 0.0f64..30.0),
        (100u64..5_000, any::<bool>(), 1u64..3_000, 1u64..300_000),
        (1.0f64..5_000.0, 1.0f64..20.0, 1.0f64..2_000.0, 1.0f64..20.0),
        0.0f64..0.5,
    )
        .prop_map(
            |(
                (mooncake, seed, rate, d),
                (window_ms, by_rows, rows, duration_ms),
                (in50, in_ratio, out50, out_ratio),
                share,
            )| {
                let layout = if mooncake {
                    Layout::Mooncake
                } else {
                    Layout::Burstgpt
                };
                SaneSpec {
                    spec: SynthSpec {
                        layout,
                        stop: if by_rows {
                            Stop::Rows(rows)
                        } else {
                            Stop::DurationMs(duration_ms)
                        },
                        seed,
                        rate_rps: rate,
                        burstiness: d,
                        window_ms,
                        input_tokens: Percentiles {
                            p50: in50.round(),
                            p95: (in50 * in_ratio).round().max(in50.round()),
                        },
                        output_tokens: Percentiles {
                            p50: out50.round(),
                            p95: (out50 * out_ratio).round().max(out50.round()),
                        },
                        failure_share: if mooncake { 0.0 } else { share },
                        prefix_share: if mooncake { share * 2.0 } else { 0.0 },
                    },
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn any_sane_spec_writes_a_file_the_ingester_reads_whole(sane in sane_spec()) {
        let spec = sane.spec;
        let mut synth = match Synthesizer::new(&spec) {
            Ok(s) => s,
            Err(SynthError::UnreachableBurstiness { least, .. }) => {
                prop_assert!(spec.burstiness < least);
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(format!("{spec:?}: {e}"))),
        };
        let mut bytes = Vec::new();
        while synth.next_chunk(&mut bytes, 1 << 16) {}
        let stats = synth.stats();
        prop_assert_eq!(stats.bytes, bytes.len() as u64);
        let trace = match ingest_unhashed(&bytes) {
            Ok(t) => t,
            // A Mooncake file with no rows at all has nothing to detect a layout from.
            Err(_) if stats.rows == 0 && spec.layout == Layout::Mooncake => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("{spec:?}: {e}"))),
        };
        let meta = trace.meta();
        prop_assert_eq!(meta.rows_read, stats.rows);
        prop_assert_eq!(meta.emitted, stats.requests);
        prop_assert_eq!(meta.rows_read, meta.emitted + meta.dropped_total() + meta.filtered_total());
        // The only drops are the deliberate failure rows.
        prop_assert_eq!(meta.dropped_total(), stats.failure_rows);
        prop_assert_eq!(
            meta.dropped.get(&DropReason::ZeroInputTokens).copied().unwrap_or(0),
            stats.failure_rows
        );
        if let Stop::Rows(rows) = spec.stop {
            prop_assert_eq!(stats.rows, rows);
        }
        if let (Stop::DurationMs(ms), Some(&last)) = (spec.stop, trace.requests().arrival_ns.last()) {
            prop_assert!(last < (ms as i64) * 1_000_000);
        }
    }
}

/// issue 20: `synth --input-p50 4294967295` was refused as a bad p95.
#[test]
fn a_median_beyond_the_largest_p95_is_blamed_on_the_median() {
    let spec = SynthSpec {
        input_tokens: Percentiles {
            p50: 4_294_967_295.0,
            p95: 5_000.0,
        },
        ..SynthSpec::DEFAULT
    };
    let e = Synthesizer::new(&spec).err().unwrap().to_string();
    assert!(e.contains("p50 must be at most 262144"), "{e}");
    assert!(!e.contains("p95 must be"), "{e}");
}
