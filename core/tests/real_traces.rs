//! The real published traces in `../shared/traces/` inspect with the numbers their
//! `SOURCES.md` table gives, and the regime agrees with an independent computation.

mod common;

use common::{ingest, shared};
use loadproof_core::{DropReason, Format, Regime, Trace, Window};

struct Expected {
    path: &'static str,
    format: Format,
    rows_read: u64,
    emitted: u64,
    span_s: f64,
    rate: f64,
    d1: f64,
    d3: f64,
    input: (f64, f64),
    output: (f64, f64),
}

/// `../shared/traces/SOURCES.md`, "Reference statistics" (rounded there to the digits shown).
const TABLE: [Expected; 4] = [
    Expected {
        path: "traces/burstgpt/BurstGPT_1.first400.csv",
        format: Format::Burstgpt,
        rows_read: 400,
        emitted: 383,
        span_s: 37_269.0,
        rate: 0.010277,
        d1: 1.01061,
        d3: 1.06317,
        input: (353.0, 1638.8),
        output: (238.0, 841.7),
    },
    Expected {
        path: "traces/burstgpt/BurstGPT_3.first400.csv",
        format: Format::Burstgpt,
        rows_read: 400,
        emitted: 399,
        span_s: 41_453.0,
        rate: 0.009625,
        d1: 1.01042,
        d3: 1.06636,
        input: (309.0, 1497.2),
        output: (101.0, 553.5),
    },
    Expected {
        path: "traces/mooncake/conversation_trace.jsonl",
        format: Format::Mooncake,
        rows_read: 12_031,
        emitted: 12_031,
        span_s: 3_536.999,
        rate: 3.40147,
        d1: 7.89410,
        d3: 5.78803,
        input: (6909.0, 39550.5),
        output: (350.0, 698.0),
    },
    Expected {
        path: "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
        format: Format::Azure,
        rows_read: 19_366,
        emitted: 19_366,
        span_s: 3_501.722,
        rate: 5.53042,
        d1: 1.38564,
        d3: 1.97658,
        input: (1020.0, 4083.0),
        output: (129.0, 451.0),
    },
];

fn close(actual: f64, expected: f64, digits_rel: f64) -> bool {
    (actual - expected).abs() <= expected.abs() * digits_rel + 1e-9
}

#[test]
fn real_traces_match_the_sources_table() {
    for e in &TABLE {
        let t = ingest(&shared(e.path)).unwrap();
        let m = t.meta();
        assert_eq!(m.format, e.format, "{}", e.path);
        assert_eq!(
            (m.rows_read, m.emitted),
            (e.rows_read, e.emitted),
            "{}",
            e.path
        );
        let r1 = Regime::of(&t, Window::ONE_SECOND).unwrap();
        let r3 = Regime::of(&t, Window::from_secs(3.0).unwrap()).unwrap();
        assert!(
            close(r1.span_s, e.span_s, 1e-6),
            "{} span {}",
            e.path,
            r1.span_s
        );
        assert!(
            close(r1.rate_rps.unwrap(), e.rate, 5e-5),
            "{} rate {:?}",
            e.path,
            r1.rate_rps
        );
        assert!(
            close(r1.burstiness.unwrap(), e.d1, 1e-5),
            "{} D1 {:?}",
            e.path,
            r1.burstiness
        );
        assert!(
            close(r3.burstiness.unwrap(), e.d3, 1e-5),
            "{} D3 {:?}",
            e.path,
            r3.burstiness
        );
        assert!(
            close(r1.input_tokens.p50, e.input.0, 1e-9)
                && close(r1.input_tokens.p95, e.input.1, 1e-9),
            "{} input {:?}",
            e.path,
            r1.input_tokens
        );
        assert!(
            close(r1.output_tokens.p50, e.output.0, 1e-9)
                && close(r1.output_tokens.p95, e.output.1, 1e-9),
            "{} output {:?}",
            e.path,
            r1.output_tokens
        );
    }
}

#[test]
fn real_trace_digests_match_the_manifest() {
    let manifest = include_str!("../../fixtures/MANIFEST.sha256");
    for line in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (sha, rel) = line.split_once("  ").unwrap();
        let rel = rel.trim_start_matches("../shared/");
        // The manifest also pins the vLLM captures; the ingester's digest is checked on traces.
        if !rel.starts_with("traces/") {
            continue;
        }
        let t = ingest(&shared(rel)).unwrap();
        assert_eq!(t.meta().source_sha256, sha, "{rel}");
    }
}

#[test]
fn burstgpt_failures_are_the_zero_token_rows() {
    let t = ingest(&shared("traces/burstgpt/BurstGPT_1.first400.csv")).unwrap();
    // All 17 failures in this prefix are 0/0/0: the zero-input check fires first.
    assert_eq!(
        t.meta().dropped.get(&DropReason::ZeroInputTokens),
        Some(&17)
    );
    let t3 = ingest(&shared("traces/burstgpt/BurstGPT_3.first400.csv")).unwrap();
    // Session ID is populated on exactly the Conversation log rows; API rows are kept.
    let sessions = t3.meta().session_rows.unwrap();
    assert!(sessions > 0 && sessions < t3.meta().emitted);
}

#[test]
fn mooncake_recording_grid_is_detected_and_a_finer_window_warned() {
    let t = ingest(&shared("traces/mooncake/conversation_trace.jsonl")).unwrap();
    let r = Regime::of(&t, Window::ONE_SECOND).unwrap();
    let res = r.timestamp_resolution_s.unwrap();
    assert!((2.9..3.1).contains(&res), "{res}");
    assert_eq!(r.distinct_timestamps, 1180);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("finer than the source's timestamp resolution"))
    );
    let r3 = Regime::of(&t, Window::from_secs(3.0).unwrap()).unwrap();
    assert!(
        r3.warnings.iter().all(|w| !w.contains("finer")),
        "{:?}",
        r3.warnings
    );
    // Every row's blocks tile its prompt at 512 tokens.
    for i in 0..t.len() {
        let blocks = t.prefix_blocks(i).unwrap().len() as u64;
        assert_eq!(
            blocks,
            u64::from(t.requests().input_tokens[i]).div_ceil(512)
        );
    }
}

/// A deliberately different implementation: f64 seconds, an explicit array of window counts,
/// a two-pass variance, percentiles by sorting f64s.
fn independent(t: &Trace, w: f64) -> (f64, f64, f64, f64) {
    let secs: Vec<f64> = t
        .requests()
        .arrival_ns
        .iter()
        .map(|&n| n as f64 / 1e9)
        .collect();
    let span = secs.last().copied().unwrap() - secs[0];
    let n_windows = (span / w).floor() as usize + 1;
    let mut counts = vec![0f64; n_windows];
    for s in &secs {
        counts[((s - secs[0]) / w).floor() as usize] += 1.0;
    }
    let mean = counts.iter().sum::<f64>() / n_windows as f64;
    let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n_windows as f64;
    let mut input: Vec<f64> = t
        .requests()
        .input_tokens
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    input.sort_by(f64::total_cmp);
    let q = |v: &[f64], p: f64| {
        let h = (v.len() - 1) as f64 * p;
        let lo = h.floor() as usize;
        let hi = (lo + 1).min(v.len() - 1);
        v[lo] + (v[hi] - v[lo]) * (h - lo as f64)
    };
    (
        secs.len() as f64 / span,
        var / mean,
        q(&input, 0.5),
        q(&input, 0.95),
    )
}

#[test]
fn regime_matches_an_independent_computation() {
    for e in &TABLE {
        let t = ingest(&shared(e.path)).unwrap();
        for w in [0.5, 1.0, 3.0, 10.0, 60.0] {
            let r = Regime::of(&t, Window::from_secs(w).unwrap()).unwrap();
            let (rate, d, p50, p95) = independent(&t, w);
            assert!(close(r.rate_rps.unwrap(), rate, 1e-12), "{} rate", e.path);
            assert!(
                close(r.burstiness.unwrap(), d, 1e-9),
                "{} D@{w}: {:?} vs {d}",
                e.path,
                r.burstiness
            );
            assert!(
                close(r.input_tokens.p50, p50, 1e-12) && close(r.input_tokens.p95, p95, 1e-12),
                "{} pct",
                e.path
            );
        }
    }
}
