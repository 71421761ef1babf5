//! Checks shared by the fuzz targets. Each returns normally or panics (a libFuzzer crash).
//!
//! Ingest input layout: `[flags, a_lo, a_hi, b_lo, b_hi, body…]` (missing header bytes read as
//! 0). `a` and `b` (little-endian `u16`, taken modulo `body.len() + 1`) are the two cut points
//! that split the body into three chunks (some possibly empty); `flags` selects caller filters
//! and small limits so every accounting path is reachable:
//!
//! | bit | effect |
//! | --- | --- |
//! | 0 | `--model GPT-4` |
//! | 1 | `--log-type "API log"` |
//! | 2 | start 1 s after the first sound row |
//! | 3 | end 50 s after the first sound row |
//! | 4 | at most 3 rows |
//! | 5 | lines over 48 bytes dropped, 1 example per reason |
//! | 6 | burstiness over a 1 µs window instead of 1 s |
//!
//! `fuzz/seeds/` holds the project's fixtures with such a header in front.

use loadproof_core::decimal::{Decimal, NumberError};
use loadproof_core::trace::Sha256Stream;
use loadproof_core::{
    CallerFilter, Format, IngestOptions, Ingester, InspectReport, Limits, Trace, TraceError,
    Window,
};

/// Bytes before the body in an ingest input.
pub const HEADER_BYTES: usize = 5;

fn options(format: Option<Format>, flags: u8) -> IngestOptions {
    let bit = |b: u8| flags & (1 << b) != 0;
    IngestOptions {
        format,
        filter: CallerFilter {
            model: bit(0).then(|| "GPT-4".to_owned()),
            log_type: bit(1).then(|| "API log".to_owned()),
            start_ns: bit(2).then_some(1_000_000_000),
            end_ns: bit(3).then_some(50_000_000_000),
            max_rows: bit(4).then_some(3),
        },
        limits: if bit(5) {
            Limits {
                max_line_bytes: 48,
                max_examples_per_reason: 1,
            }
        } else {
            Limits::STANDARD
        },
    }
}

/// The whole input in one push, hashed by the ingester.
fn ingest_whole(opts: &IngestOptions, body: &[u8]) -> Result<Trace, TraceError> {
    let mut ingester = Ingester::new(opts.clone());
    ingester.push(body)?;
    ingester.finish()
}

/// The input in chunks, hashed by the caller as the CLI does ([`Ingester::new_unhashed`]).
fn ingest_chunked(opts: &IngestOptions, chunks: &[&[u8]]) -> Result<Trace, TraceError> {
    let mut ingester = Ingester::new_unhashed(opts.clone());
    let mut sha = Sha256Stream::default();
    for chunk in chunks {
        sha.update(chunk);
        ingester.push(chunk)?;
    }
    ingester.finish_with_sha256(sha.finalize())
}

/// Ingests `data` (see the module docs for its layout) in three chunks (caller-hashed, as the
/// CLI does) and in one (ingester-hashed), and checks:
/// no panic; both give the same result; on `Ok`, every row read is accounted for; the inspect
/// report (regime, percentiles, JSON) builds.
pub fn check_ingest(data: &[u8], format: Option<Format>) {
    let header = |i: usize| data.get(i).copied().unwrap_or(0);
    let flags = header(0);
    let body = data.get(HEADER_BYTES..).unwrap_or_default();
    let cut = |lo: usize, hi: usize| {
        usize::from(u16::from_le_bytes([header(lo), header(hi)])) % (body.len() + 1)
    };
    let (a, b) = (cut(1, 2), cut(3, 4));
    let (lo, hi) = (a.min(b), a.max(b));
    let (first, rest) = body.split_at(lo);
    let (second, third) = rest.split_at(hi - lo);
    let opts = options(format, flags);

    let chunked = ingest_chunked(&opts, &[first, second, third]);
    let whole = ingest_whole(&opts, body);
    assert_eq!(
        chunked, whole,
        "chunks cut at {lo} and {hi} of {} bytes change the result",
        body.len()
    );

    if let Ok(trace) = chunked {
        let m = trace.meta();
        assert_eq!(
            Some(m.rows_read),
            m.emitted
                .checked_add(m.dropped_total())
                .and_then(|s| s.checked_add(m.filtered_total())),
            "rows_read != emitted + dropped_total + filtered_total: {m:?}"
        );
        assert_eq!(m.emitted, trace.len() as u64);
        assert_eq!(m.bytes, body.len() as u64);
        if let Some(forced) = format {
            assert_eq!(m.format, forced, "a forced format was not the one read");
        }
        let window = if flags & (1 << 6) != 0 {
            Window::from_secs(1e-6).unwrap_or(Window::ONE_SECOND)
        } else {
            Window::ONE_SECOND
        };
        let report = InspectReport::new("fuzz", &trace, window);
        assert_eq!(report.meta.rows_read, m.rows_read);
        assert_eq!(report.regime.is_some(), !trace.is_empty());
        if let Some(regime) = &report.regime {
            assert_eq!(regime.requests, m.emitted);
            assert!(regime.span_s >= 0.0);
            if let Some(d) = regime.burstiness {
                assert!(d.is_finite() && d >= 0.0, "burstiness {d}");
            }
            let (i, o) = (regime.input_tokens, regime.output_tokens);
            assert!(i.p50 >= 1.0 && i.p95 >= i.p50, "input percentiles {i:?}");
            assert!(o.p50 >= 1.0 && o.p95 >= o.p50, "output percentiles {o:?}");
        }
        let json = report.to_json();
        assert!(json.starts_with('{'), "report JSON: {json}");
    }
}

/// Parses `data` as a decimal cell and checks its conversions against Rust's own parsers.
pub fn check_decimal(data: &[u8]) {
    let parsed = Decimal::parse(data);
    if let Ok(d) = parsed {
        for scale in [-40, -9, -1, 0, 1, 3, 9, 40] {
            let _ = d.scaled_i64(scale);
        }
        let _ = d.token_count();
        let _ = d.is_negative();
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let s = text.trim_ascii();
    // Whole numbers: exactly what `u32::from_str` says.
    if let Ok(v) = s.parse::<u32>() {
        assert_eq!(
            parsed.and_then(Decimal::token_count),
            Ok(v),
            "token count of {s:?}"
        );
        assert_eq!(
            parsed.and_then(|d| d.scaled_i64(0)),
            Ok(i64::from(v)),
            "{s:?}"
        );
    }
    match (parsed, s.parse::<f64>()) {
        (Ok(d), Ok(f)) => {
            // Nanoseconds agree with the float reading up to its rounding.
            if f.is_finite() && f.abs() < 9.0e9 {
                let ns = d.scaled_i64(9);
                let want = (f * 1e9).round();
                match ns {
                    Ok(ns) => {
                        let tol = 2.0 + want.abs() * 4e-16;
                        assert!(
                            (ns as f64 - want).abs() <= tol,
                            "{s:?}: decimal {ns} ns, f64 {want} ns"
                        );
                    }
                    Err(e) => panic!("{s:?}: decimal refused ({e:?}) a value f64 reads as {f}"),
                }
            }
        }
        (Err(NumberError::NonFinite), Ok(f)) => {
            assert!(!f.is_finite(), "{s:?}: called non-finite, f64 reads {f}");
        }
        _ => {}
    }
}

/// Reads `data` as a `timed_trace` file (layout: `[flags, cut, body…]`): flags pick the
/// multiplier (bits 0–1) and chunk size (bits 2–3); the body is pushed in two pieces cut at
/// `cut`. Checks: no panic; pushing in pieces or whole gives the same result; on success the
/// columns have one row per line.
pub fn check_timed_trace(data: &[u8]) {
    use loadproof_core::plan::TimedTraceReader;
    let flags = data.first().copied().unwrap_or(0);
    let cut = usize::from(data.get(1).copied().unwrap_or(0));
    let body = data.get(2..).unwrap_or_default();
    let multiplier = ["1", "0.001", "0.000001", "1e-9"][usize::from(flags & 3)];
    let chunk = [16, 512, 1, 100_000][usize::from((flags >> 2) & 3)];
    let read = |pieces: &[&[u8]]| {
        let mut r = TimedTraceReader::new(multiplier, chunk).expect("fixed multipliers parse");
        for p in pieces {
            r.push(p);
        }
        r.finish()
    };
    let (a, b) = body.split_at(cut.min(body.len()));
    let pieces = read(&[a, b]);
    assert_eq!(pieces, read(&[body]), "cutting at {cut} changes the read");
    if let Ok(back) = pieces {
        let n = back.lines as usize;
        assert_eq!(back.arrival_ns.len(), n);
        assert_eq!(back.input_tokens.len(), n);
        assert_eq!(back.output_tokens.len(), n);
        assert!(back.short_rows <= back.lines);
        assert!(back.arrival_ns.iter().all(|&t| t >= 0));
        assert_eq!(back.bytes, body.len() as u64);
    }
}

/// Ingests `data` like [`check_ingest`] (Mooncake forced, no filters) and, when a trace comes
/// out, plans it with the chunk size and speed-up the flags pick: a plan that builds must
/// write a file that reads back with every statistic exactly 0.
pub fn check_plan_round_trip(data: &[u8]) {
    use loadproof_core::plan::{Plan, PlanOptions, TimeScale};
    let flags = data.first().copied().unwrap_or(0);
    let body = data.get(1..).unwrap_or_default();
    let Ok(trace) = ingest_whole(&options(Some(Format::Mooncake), 0), body) else {
        return;
    };
    let chunk = [None, Some(16), Some(512), Some(1)][usize::from(flags & 3)];
    let scale = ["1", "2", "0.5", "3"][usize::from((flags >> 2) & 3)];
    let options = PlanOptions {
        chunk_size: chunk,
        time_scale: TimeScale::parse(scale).expect("fixed scales parse"),
        ..PlanOptions::default()
    };
    let Ok(plan) = Plan::new(trace, options) else {
        return;
    };
    let mut file = Vec::new();
    plan.write_timed_trace(&mut file).expect("writing to a Vec");
    let bench = plan.bench_command();
    let mut reader = plan.reader(&bench).expect("the plan's own argv reads");
    reader.push(&file);
    let back = reader.finish().expect("the plan's own file reads");
    let fidelity = plan.verify(&back, &bench);
    assert!(fidelity.pass, "{:?}", fidelity.failures().collect::<Vec<_>>());
}
