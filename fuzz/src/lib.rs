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
//! | 7 | read through a mapping (`--schema`) of BurstGPT's columns, or of Mooncake's fields |
//!
//! `fuzz/seeds/` holds the project's fixtures with such a header in front.

use loadproof_core::decimal::{Decimal, NumberError};
use loadproof_core::trace::{Sha256Stream, ShardError, ShardIngester, TraceSchema};
use loadproof_core::{
    CallerFilter, Format, IngestOptions, Ingester, InspectReport, Limits, Trace, TraceError, Window,
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
            fields: Default::default(),
        },
        limits: if bit(5) {
            Limits {
                max_line_bytes: 48,
                max_examples_per_reason: 1,
            }
        } else {
            Limits::STANDARD
        },
        block_lengths: None,
        schema: bit(7).then(|| std::sync::Arc::new(fuzz_mapping(format))),
    }
}

/// The mapping bit 7 reads through: BurstGPT's columns by name (session and model too), or,
/// when Mooncake is forced, Mooncake's fields with their prefix blocks, or, when Azure is,
/// Azure's stamps through a declared strftime-style layout.
fn fuzz_mapping(format: Option<Format>) -> TraceSchema {
    let json: &[u8] = if format == Some(Format::Mooncake) {
        br#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"timestamp","unit":"ms"},
          "input_tokens":"input_length","output_tokens":"output_length",
          "prefix_blocks":{"field":"hash_ids","block_tokens":512}}"#
    } else if format == Some(Format::Azure) {
        // A declared layout, so the pattern reader sees every seed's stamps.
        br#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"TIMESTAMP","unit":"datetime",
          "format":"%Y-%m-%d %H:%M:%S.%f%z","zone":"UTC"},
          "input_tokens":"ContextTokens","output_tokens":"GeneratedTokens"}"#
    } else {
        br#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"Timestamp","unit":"s"},
          "input_tokens":"Request tokens","output_tokens":"Response tokens",
          "filters":{"model":"Model"}}"#
    };
    match TraceSchema::from_json(json) {
        Ok(s) => s,
        Err(e) => panic!("the fuzz mapping is refused: {e}"),
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

/// `body` in two parts, cut just after the first newline at or after `at`: the first pushed to
/// an ingester, the second read by a shard ingester (told the first part as the head) and
/// joined, as the page's two workers read a large file. `None` where there is no such
/// newline or the first part holds no header.
fn ingest_in_parts(
    opts: &IngestOptions,
    body: &[u8],
    at: usize,
) -> Option<Result<Trace, TraceError>> {
    let cut = at + body.get(at..)?.iter().position(|&b| b == b'\n')? + 1;
    let (first, second) = body.split_at(cut);
    let mut ingester = Ingester::new_unhashed(opts.clone());
    let mut sha = Sha256Stream::default();
    sha.update(body);
    let read = (|| {
        ingester.push(first)?;
        let mut shard = ShardIngester::new(first, opts.clone())?;
        shard.push(second)?;
        ingester.join(shard.finish()?)?;
        ingester.finish_with_sha256(sha.finalize())
    })();
    match read {
        // No header to tell the part the layout, or a layout read in one part (RAGPulse).
        Err(TraceError::InParts(ShardError::NoHeaderInHead | ShardError::Unsplittable(_))) => {
            None
        }
        other => Some(other),
    }
}

/// Ingests `data` (see the module docs for its layout) in three chunks (caller-hashed, as the
/// CLI does), in one (ingester-hashed) and in two parts joined as a shard, and checks:
/// no panic; all give the same result; on `Ok`, every row read is accounted for; the inspect
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
        chunked,
        whole,
        "chunks cut at {lo} and {hi} of {} bytes change the result",
        body.len()
    );
    if let Some(in_parts) = ingest_in_parts(&opts, body, lo) {
        assert_eq!(
            in_parts, whole,
            "read in two parts (cut at the line end after {lo}) differs from read whole"
        );
    }

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
        if let Some(forced) = format.filter(|_| opts.schema.is_none()) {
            assert_eq!(m.format, forced, "a forced format was not the one read");
        }
        if opts.schema.is_some() {
            assert_eq!(m.format, Format::Mapped, "a mapped read was not read as mapped");
            assert!(m.schema_sha256.is_some());
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
    // The same bytes as a plan's blocks.jsonl (the native client's other plan file): read or
    // refused by line, never a panic; what reads indexes its blocks.
    if let Ok(blocks) = loadproof_core::plan::sized_blocks::read(body) {
        assert!(blocks.indexes(blocks.offsets.len() - 1));
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
    assert!(
        fidelity.pass,
        "{:?}",
        fidelity.failures().collect::<Vec<_>>()
    );
}

/// Reads `data` (layout: `[flags, body…]`) as a `vllm bench serve` stdout and as a result JSON.
/// Flag bit 0 puts the summary header line before the body and bit 1 the closing line after
/// it, so the fuzzer starts inside a summary block. Checks: no panic; a summary's lines lie
/// inside the input, and cutting it just before its closing line gives `Truncated`; a result's
/// per-request arrays share one length and its bucket peak recomputes to at most the number of
/// requests; both sweeps, fed the body as raw `f64`/`i64` pairs, stay within the pair count.
pub fn check_vllm_bench(data: &[u8]) {
    use loadproof_core::formats::vllm_bench::{
        SUMMARY_CLOSING, SUMMARY_HEADER, SummaryError, disagreements, exact_peak, parse_result,
        parse_summary, second_bucket_peak,
    };
    let flags = data.first().copied().unwrap_or(0);
    let body = data.get(1..).unwrap_or_default();
    let mut stdout = Vec::with_capacity(body.len() + 110);
    if flags & 1 != 0 {
        stdout.extend_from_slice(SUMMARY_HEADER.as_bytes());
        stdout.push(b'\n');
    }
    stdout.extend_from_slice(body);
    if flags & 2 != 0 {
        stdout.push(b'\n');
        stdout.extend_from_slice(SUMMARY_CLOSING.as_bytes());
        stdout.push(b'\n');
    }

    let summary = parse_summary(&stdout);
    if let Ok(s) = &summary {
        let n_lines = stdout.split(|&b| b == b'\n').count();
        assert!(
            s.header_line < s.closing_line && s.closing_line <= n_lines,
            "{s:?}"
        );
        for o in &s.other {
            assert!(s.header_line < o.line && o.line < s.closing_line, "{o:?}");
        }
        // The byte where the closing line starts: the input cut there is a truncated stdout.
        let closing_start = stdout
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .nth(s.closing_line - 2)
            .map(|(i, _)| i + 1)
            .expect("the closing line follows a newline");
        assert_eq!(
            parse_summary(&stdout[..closing_start]),
            Err(SummaryError::Truncated {
                line: s.header_line
            })
        );
    }

    let result = parse_result(body);
    if let Ok(r) = &result {
        if let Some(d) = &r.detailed {
            let n = d.input_lens.len();
            assert_eq!(d.output_lens.len(), n);
            assert_eq!(d.ttfts_s.len(), n);
            assert_eq!(d.itls_s.len(), n);
            assert_eq!(d.errors.len(), n);
            assert!(d.start_times_s.as_ref().is_none_or(|v| v.len() == n));
            assert!(d.latencies_s.as_ref().is_none_or(|v| v.len() == n));
            if let Some(spans) = d.successful_spans_s() {
                assert!(second_bucket_peak(&spans).is_none_or(|p| p <= spans.len() as u64));
            }
        }
        if let Ok(s) = &summary {
            let _ = disagreements(s, r);
        }
    }

    let word = |chunk: &[u8]| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        bytes
    };
    let pairs: Vec<([u8; 8], [u8; 8])> = body
        .chunks_exact(16)
        .map(|c| (word(&c[..8]), word(&c[8..])))
        .collect();
    let spans_s: Vec<(f64, f64)> = pairs
        .iter()
        .map(|&(a, b)| (f64::from_le_bytes(a), f64::from_le_bytes(b)))
        .collect();
    let spans_ns: Vec<(i64, i64)> = pairs
        .iter()
        .map(|&(a, b)| (i64::from_le_bytes(a), i64::from_le_bytes(b)))
        .collect();
    assert!(second_bucket_peak(&spans_s).is_none_or(|p| p <= pairs.len() as u64));
    assert!(exact_peak(&spans_ns) <= pairs.len() as u64);
}

/// Reads `data` as a `/metrics` scrape body. Checks: no panic; an error names a line of the
/// input; on success, every sample sits in the family `family_of` names for it, at a line of
/// the input, with sorted distinct labels and values that print and read back as themselves;
/// a scrape compared with itself has every counter delta 0 and every histogram delta 0; the
/// canonical render reads back and renders identically; `scan` for some of its sample names
/// keeps exactly `parse`'s families for them.
pub fn check_prometheus(data: &[u8]) {
    use loadproof_core::formats::prometheus::{
        DeltaError, MetricType, Rescan, SampleValue, counter_delta, histogram_delta, parse, scan,
    };
    // A rescan of two bodies (the input split at its middle line, read after the whole input)
    // is a scan of each, value or error.
    let names = ["vllm:num_requests_running", "a", "a_total", "h_bucket"];
    let mut rescan = Rescan::new(&names);
    let half = data
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .nth(data.iter().filter(|b| **b == b'\n').count() / 2)
        .unwrap_or(data.len());
    // The same lines with every digit moved (values change; so do names with digits), and
    // the halves swapped.
    let edited: Vec<u8> = data
        .iter()
        .map(|&b| {
            if b.is_ascii_digit() {
                b'0' + (b - b'0' + 1) % 10
            } else {
                b
            }
        })
        .collect();
    let mut swapped = data.to_vec();
    let half = half.min(swapped.len());
    swapped.rotate_left(half);
    for body in [data, &edited[..], &swapped[..], data] {
        assert_eq!(rescan.scan(body).cloned(), scan(body, &names), "rescan");
    }
    let n_lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    let parsed = match parse(data) {
        Err(e) => {
            assert!(
                (1..=n_lines).contains(&e.line()),
                "error at line {} of {n_lines}: {e}",
                e.line()
            );
            return;
        }
        Ok(parsed) => parsed,
    };
    // The same body read as a DCGM exporter's: every GPU once, every model name non-empty.
    let _ = loadproof_core::formats::dcgm::simulated(&parsed);
    if let Ok(gpus) = loadproof_core::formats::dcgm::read(&parsed) {
        let mut ids: Vec<&str> = gpus.iter().map(|g| g.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), gpus.len(), "a GPU read twice");
        assert!(
            gpus.iter()
                .all(|g| g.model_name.as_deref().is_none_or(|m| !m.trim().is_empty()))
        );
        let _ = loadproof_core::formats::dcgm::model_names(&gpus);
    }
    let mut names: Vec<&str> = Vec::new();
    for family in parsed.families() {
        assert!((1..=n_lines).contains(&family.line));
        for s in &family.samples {
            assert!((1..=n_lines).contains(&s.line), "sample line {}", s.line);
            let owner = parsed.family_of(&s.name).map(|f| f.name.as_str());
            assert_eq!(owner, Some(family.name.as_str()), "{}", s.name);
            assert!(
                s.labels.windows(2).all(|w| w[0].0 < w[1].0),
                "labels unsorted or repeated: {:?}",
                s.labels
            );
            if let SampleValue::Finite(d) = s.value {
                let shown = d.to_string();
                let back = Decimal::parse(shown.as_bytes()).expect("a value prints readably");
                assert!(back.value_eq(d), "{shown}");
            }
            if !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
        match family.kind {
            MetricType::Counter => {
                for name in [family.name.clone(), format!("{}_total", family.name)] {
                    match counter_delta(&parsed, &parsed, &name) {
                        Ok(d) => assert!(d.is_zero(), "{name}: self-delta {d}"),
                        Err(DeltaError::Invalid { .. } | DeltaError::Overflow { .. }) => {}
                        Err(e) => panic!("{name}: self-delta refused: {e}"),
                    }
                }
            }
            MetricType::Histogram => {
                if let Ok(h) = histogram_delta(&parsed, &parsed, &family.name) {
                    assert!(h.count.is_zero() && h.sum.is_zero());
                    assert!(h.buckets.iter().all(|(_, n)| n.is_zero()));
                }
            }
            _ => {}
        }
        let _ = parsed.total(&family.name);
    }
    let _ = parsed.process_start_time();

    let rendered = parsed.render();
    let again = parse(rendered.as_bytes()).expect("the canonical render reads back");
    assert_eq!(again.render(), rendered, "render is not stable");
    assert_eq!(again.families().len(), parsed.families().len());

    for wanted in [names.get(..1), names.get(..3), names.get(names.len() / 2..)] {
        let Some(wanted) = wanted else { continue };
        let part = scan(data, wanted).expect("scan reads what parse reads");
        for family in part.families() {
            assert_eq!(Some(family), parsed.family(&family.name));
        }
        for name in wanted {
            assert_eq!(
                part.family_of(name).map(|f| &f.name),
                parsed.family_of(name).map(|f| &f.name)
            );
        }
    }
}

/// Reads `data` as a receipt and audits it. Checks: no panic; the qualification is exactly
/// "every standing positive and no receipt-level refusal"; a capture needs verified digests
/// and read client facts; a failed digest is always among the refusals.
pub fn check_receipt_audit(data: &[u8]) {
    use loadproof_core::receipt::Receipt;
    let Ok(receipt) = Receipt::from_json(data) else {
        return;
    };
    check_audit(&receipt);
}

/// A receipt in either form — a record stream (zstd or not) or a v1 document — read and audited:
/// a torn, reordered or spliced stream is read or refused, never a panic, and an unsealed one
/// is neither captured nor qualified.
pub fn check_receipt_stream(data: &[u8]) {
    use loadproof_core::receipt::Receipt;
    let Ok(receipt) = Receipt::from_bytes(data) else {
        return;
    };
    let errors = receipt.verify_evidence();
    let a = check_audit(&receipt);
    if !receipt.sealed() {
        assert!(!a.qualified && !a.captured && !a.sealed);
    }
    // Packed bodies rebuilt into the v1 form audit the same, when every one rebuilds (a v1
    // document cannot hold a body that does not: it reads as missing there). Compared as
    // text: a NaN is equal to itself there.
    let unbuilt = errors
        .iter()
        .any(|e| matches!(e, loadproof_core::receipt::EvidenceError::Unbuilt { .. }));
    if !unbuilt {
        let again = loadproof_core::audit::audit(&receipt.unpacked());
        assert_eq!(format!("{again:?}"), format!("{a:?}"));
    }
    // The deferred audit (the page's: bodies hashed by the caller as the scan reads them) is
    // the audit, whether the caller's digests confirm (true ones) or not (every third wrong).
    for lie in [false, true] {
        let policy = loadproof_core::audit::Policy::default();
        let mut digests = std::collections::BTreeMap::new();
        let mut deferred = loadproof_core::audit::Deferred::start(&receipt, &policy);
        let mut n = 0usize;
        while !deferred.done() {
            deferred.step(3, &mut |name, bytes| {
                n += 1;
                let d = if lie && n % 3 == 0 {
                    "0".repeat(64)
                } else {
                    loadproof_core::receipt::sha256_hex(bytes)
                };
                digests.insert(name.to_owned(), d);
            });
        }
        let got = deferred.finish(&digests).audit;
        let want =
            loadproof_core::audit::audit_read_trusting(&receipt, &policy, Some(&digests)).audit;
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
        if !lie {
            assert_eq!(format!("{got:?}"), format!("{a:?}"));
        }
    }
}

fn check_audit(receipt: &loadproof_core::receipt::Receipt) -> loadproof_core::audit::Audit {
    use loadproof_core::audit::{STANDINGS, audit};
    let a = audit(receipt);
    let all_positive = STANDINGS
        .iter()
        .all(|n| a.standings.get(*n).is_some_and(|s| s.positive));
    assert_eq!(a.qualified, a.refusals.is_empty());
    if a.qualified {
        assert!(all_positive && a.digests_ok && a.inconsistencies.is_empty());
    }
    if a.captured {
        assert!(a.digests_ok && a.execution_gate.read);
    }
    if !a.digests_ok {
        assert!(!a.qualified && !a.captured);
    }
    a
}

/// The peer tools' records and the plan's translation into their inputs, on arbitrary bytes:
/// AIPerf's export and GuideLLM's report parse or refuse without panicking, and rows read from a
/// `timed_trace` translate into both inputs whose session ids name the rows back.
pub fn check_peer_records(data: &[u8]) {
    use loadproof_core::formats::{aiperf, guidellm};
    use loadproof_core::plan::{aiperf_input, guidellm_input, read_peer_rows, row_id, row_index};
    if let Ok(records) = aiperf::read_export(data) {
        for r in &records {
            let _ = row_index(&r.conversation_id);
        }
    }
    if let Ok(report) = guidellm::read_report(data) {
        for r in &report.records {
            let _ = r.error.as_deref().map(guidellm::http_status);
        }
    }
    for multiplier in ["1", "0.001", "0.000001", "0.000000001"] {
        if let Ok(rows) = read_peer_rows(data, multiplier) {
            let a = aiperf_input(&rows);
            let g = guidellm_input(&rows);
            assert_eq!(a.iter().filter(|b| **b == b'\n').count(), rows.len());
            assert_eq!(g.iter().filter(|b| **b == b'\n').count(), rows.len());
            for k in 0..rows.len().min(3) {
                assert_eq!(row_index(&row_id(k)), Some(k as u64));
            }
        }
    }
}

/// The signing parsers on arbitrary bytes: a signed envelope, the statements it may carry, a
/// public key line, a file of trusted keys and a secret key file. None may panic; an envelope
/// that reads is one whose signature verifies, and it reads back from its own JSON.
pub fn check_signed(data: &[u8]) {
    use loadproof_core::receipt::stream::SealStatement;
    use loadproof_core::receipt::{LeaseAccount, ScrapeStatement};
    use loadproof_core::signing::{PublicKey, SecretKey, Signed, TrustSet, Unverified};
    if let Ok(signed) = Signed::from_json(data) {
        let again = Signed::from_json(signed.to_json().as_bytes());
        assert_eq!(again.as_ref(), Ok(&signed), "an envelope reads back from its JSON");
        let text = Signed::from_json(signed.to_text_json().as_bytes());
        assert_eq!(text.as_ref(), Ok(&signed), "an envelope reads back from its text form");
        let _ = ScrapeStatement::from_bytes(signed.statement());
        let _ = LeaseAccount::from_bytes(signed.statement());
        let _ = SealStatement::from_bytes(signed.statement());
    }
    // Read unverified, an envelope verifies exactly when it reads verified.
    if let Ok(unverified) = Unverified::from_json(data) {
        let statement = unverified.statement().to_vec();
        let verified = unverified.verify();
        assert_eq!(
            verified.as_ref().ok().map(Signed::statement),
            Signed::from_json(data).as_ref().ok().map(Signed::statement)
        );
        if let Ok(v) = verified {
            assert_eq!(v.statement(), statement.as_slice());
        }
    }
    let _ = ScrapeStatement::from_bytes(data);
    let _ = LeaseAccount::from_bytes(data);
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok((key, comment)) = PublicKey::parse_line(text) {
            let (back, c) = PublicKey::parse_line(&key.to_line(&comment)).expect("own line");
            assert_eq!((back, c), (key, comment));
        }
        if let Ok(set) = TrustSet::parse(text) {
            let again = TrustSet::parse(&set.lines().join("\n")).expect("own lines");
            assert_eq!(again, set);
        }
        if let Ok(secret) = SecretKey::parse(text) {
            let back = SecretKey::parse(&secret.to_text()).expect("own text");
            assert_eq!(back.public(), secret.public());
        }
    }
    // Any bytes signed by a key verify as exactly those bytes.
    let key = SecretKey::from_seed([7; 32]);
    let signed = Signed::sign(&key, data);
    let read = Signed::from_json(signed.to_json().as_bytes()).expect("a fresh signature verifies");
    assert_eq!(read.statement(), data);
}
