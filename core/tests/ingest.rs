//! Ingestion rules, each pinned by a test named after it.

mod common;

use std::collections::BTreeMap;

use common::{data, forced, ingest, ingest_with, opts};
use loadproof_core::trace::{PrefixBlocks, ReconcileError, Requests};
use loadproof_core::{
    CallerFilter, DropReason, FilterReason, Format, IngestOptions, Ingester, Limits, Trace,
    TraceError,
};
use proptest::prelude::*;

fn drops(trace: &Trace) -> BTreeMap<&'static str, u64> {
    trace
        .meta()
        .dropped
        .iter()
        .map(|(r, n)| (r.name(), *n))
        .collect()
}

fn reconciles(trace: &Trace) {
    let m = trace.meta();
    assert_eq!(
        m.rows_read,
        m.emitted + m.dropped_total() + m.filtered_total()
    );
}

#[test]
fn a_trace_whose_counts_do_not_reconcile_cannot_be_constructed() {
    let good = ingest(&data("burstgpt/dirty.csv")).unwrap();
    let mut meta = good.meta().clone();
    meta.rows_read += 1;
    let err = Trace::new(meta, good.requests().clone()).unwrap_err();
    assert!(matches!(err, ReconcileError::Unattributed { .. }));
    assert!(err.to_string().contains("unattributed"));

    let mut meta = good.meta().clone();
    meta.emitted -= 1;
    meta.rows_read -= 1;
    let err = Trace::new(meta, good.requests().clone()).unwrap_err();
    assert!(matches!(
        err,
        ReconcileError::EmittedMismatch { meta: 3, held: 4 }
    ));
}

#[test]
fn a_trace_sent_across_a_worker_boundary_is_rebuilt_only_through_its_checks() {
    // The browser parses in a worker and sends the meta as JSON and the columns as arrays;
    // the page rebuilds with Trace::new. Every drop count, example and note survives.
    for name in ["burstgpt/dirty.csv", "mooncake/dirty.jsonl"] {
        let good = ingest(&data(name)).unwrap();
        let json = serde_json::to_string(good.meta()).unwrap();
        let meta: loadproof_core::trace::TraceMeta = serde_json::from_str(&json).unwrap();
        assert_eq!(&meta, good.meta(), "{name}");
        let rebuilt = Trace::new(meta.clone(), good.requests().clone()).unwrap();
        assert_eq!(rebuilt, good, "{name}");
        // A meta altered in transit does not reconcile, so no trace is built from it.
        let mut bent = meta;
        bent.rows_read += 1;
        assert!(Trace::new(bent, good.requests().clone()).is_err(), "{name}");
    }
}

#[test]
fn a_trace_with_unordered_or_unrebased_arrivals_cannot_be_constructed() {
    let good = ingest(&data("burstgpt/dirty.csv")).unwrap();
    let mut req = good.requests().clone();
    req.arrival_ns.swap(1, 2);
    assert!(Trace::new(good.meta().clone(), req).is_err());
    let mut req = good.requests().clone();
    for t in &mut req.arrival_ns {
        *t += 1;
    }
    assert!(Trace::new(good.meta().clone(), req).is_err());
    let mut req = good.requests().clone();
    req.prefix = Some(PrefixBlocks {
        offsets: vec![0],
        ids: vec![],
    });
    assert!(Trace::new(good.meta().clone(), req).is_err());
    assert_eq!(Requests::NO_SESSION, u32::MAX);
}

#[test]
fn every_drop_reason_fires_on_the_dirty_csv_with_exact_counts() {
    let t = ingest(&data("burstgpt/dirty.csv")).unwrap();
    reconciles(&t);
    let m = t.meta();
    assert_eq!((m.rows_read, m.emitted, m.blank_lines), (16, 4, 1));
    let expected: BTreeMap<&str, u64> = [
        ("malformed_row", 2),
        ("missing_field", 2),
        ("non_numeric", 1),
        ("non_finite", 1),
        ("negative_value", 1),
        ("out_of_range", 1),
        ("zero_input_tokens", 1),
        ("zero_output_tokens", 1),
        ("non_monotonic_arrival", 1),
        ("duplicate_header", 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(drops(&t), expected);
    // Every reason the enum names fires at least once across the dirty fixtures.
    let others = [
        ingest(&data("mooncake/dirty.jsonl")).unwrap(),
        ingest(&data("mooncake/ambiguous.jsonl")).unwrap(),
        ingest(&data("burstgpt/contradictory_total.csv")).unwrap(),
        unknown_block_id(),
    ];
    for reason in DropReason::ALL {
        assert!(
            m.dropped.contains_key(&reason)
                || others
                    .iter()
                    .any(|t| t.meta().dropped.contains_key(&reason)),
            "{reason} never fired"
        );
    }
}

/// issue 20: a BurstGPT row whose `Total tokens` contradicted its other two counts was kept.
#[test]
fn a_burstgpt_row_whose_total_contradicts_its_counts_is_dropped_as_inconsistent_total() {
    let t = ingest(&data("burstgpt/contradictory_total.csv")).unwrap();
    reconciles(&t);
    assert_eq!(drops(&t), BTreeMap::from([("inconsistent_total", 1)]));
    let e = &t.meta().drop_examples[&DropReason::InconsistentTotal][0];
    assert_eq!((e.line, e.field.as_deref()), (3, Some("Total tokens")));
    assert!(
        e.detail
            .contains("999 is not Request tokens 100 + Response tokens 50"),
        "{}",
        e.detail
    );
}

/// issue 20: a Mooncake row with a key twice used the last value; a row of 100,000 `hash_ids`
/// for 10 tokens was planned.
#[test]
fn ambiguous_json_rows_and_impossible_prefix_blocks_are_named_drops() {
    let t = ingest(&data("mooncake/ambiguous.jsonl")).unwrap();
    reconciles(&t);
    assert_eq!(
        drops(&t),
        BTreeMap::from([("duplicate_key", 1), ("prefix_blocks_exceed_prompt", 1)])
    );
    let ex = &t.meta().drop_examples;
    let dup = &ex[&DropReason::DuplicateKey][0];
    assert_eq!((dup.line, dup.field.as_deref()), (2, Some("input_length")));
    let blocks = &ex[&DropReason::PrefixBlocksExceedPrompt][0];
    assert_eq!(blocks.line, 3);
    assert!(
        blocks
            .detail
            .contains("11 prefix blocks for a 10-token prompt"),
        "{}",
        blocks.detail
    );
    assert_eq!(t.meta().emitted, 2);
    // The case as reported: 100,000 ids for 10 tokens.
    let ids: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
    let line = format!(
        r#"{{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [{}]}}"#,
        ids.join(", ")
    );
    let t = ingest(
        format!(
            "{line}\n{}\n",
            r#"{"timestamp": 1, "input_length": 10, "output_length": 5, "hash_ids": [1]}"#
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(
        drops(&t),
        BTreeMap::from([("prefix_blocks_exceed_prompt", 1)])
    );
}

#[test]
fn every_row_issue_names_its_line_and_field() {
    let t = ingest(&data("burstgpt/dirty.csv")).unwrap();
    let ex = &t.meta().drop_examples;
    let first = |r: DropReason| ex.get(&r).and_then(|v| v.first()).unwrap().clone();
    assert_eq!(first(DropReason::NonNumeric).line, 6);
    assert_eq!(
        first(DropReason::NonNumeric).field.as_deref(),
        Some("Request tokens")
    );
    assert_eq!(
        first(DropReason::MissingField).to_string(),
        "line 7, field \"Request tokens\": empty"
    );
    assert_eq!(first(DropReason::NonMonotonicArrival).line, 9);
    assert_eq!(first(DropReason::DuplicateHeader).line, 12);
    assert_eq!(first(DropReason::MalformedRow).line, 8);
}

#[test]
fn every_drop_reason_that_jsonl_can_express_fires_on_the_dirty_jsonl() {
    let t = ingest(&data("mooncake/dirty.jsonl")).unwrap();
    reconciles(&t);
    let m = t.meta();
    assert_eq!(m.format, Format::Mooncake);
    assert_eq!((m.rows_read, m.emitted, m.blank_lines), (12, 3, 1));
    let expected: BTreeMap<&str, u64> = [
        ("malformed_row", 2),
        ("missing_field", 1),
        ("non_numeric", 1),
        ("negative_value", 1),
        ("out_of_range", 1),
        ("zero_input_tokens", 1),
        ("zero_output_tokens", 1),
        ("non_monotonic_arrival", 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(drops(&t), expected);
    assert_eq!(m.rows_without_prefix, Some(1));
    assert_eq!(t.prefix_blocks(0), Some(&[1u64, 2][..]));
    assert_eq!(t.prefix_blocks(1), Some(&[][..]));
    assert_eq!(t.prefix_blocks(2), Some(&[1u64][..]));
    assert_eq!(t.requests().arrival_ns, [0, 6_000_000_000, 6_000_000_000]);
}

#[test]
fn azure_crlf_without_final_newline_and_both_timestamp_shapes_read() {
    let t = ingest(&data("azure/dirty.csv")).unwrap();
    reconciles(&t);
    let m = t.meta();
    assert_eq!(m.format, Format::Azure);
    assert_eq!((m.rows_read, m.emitted), (7, 4));
    let expected: BTreeMap<&str, u64> = [
        ("non_numeric", 1),
        ("zero_input_tokens", 1),
        ("non_monotonic_arrival", 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(drops(&t), expected);
    let a = &t.requests().arrival_ns;
    // 18:15:51 − 18:15:46.6805900 = 4.3194100 s exactly, in integer nanoseconds.
    assert_eq!(a[1], 4_319_410_000);
    // The last row (no trailing newline) is read: 1.001163 s after the previous one... minus.
    assert_eq!(a[3] - a[2], 998_837_000);
}

#[test]
fn azure_epoch_timestamps_rebase_without_float_drift() {
    let mut csv = b"TIMESTAMP,ContextTokens,GeneratedTokens\r\n".to_vec();
    for i in 0..1000u64 {
        let frac = i; // the 7th fractional digit: 100 ns steps
        csv.extend_from_slice(format!("2023-11-16 18:15:46.{frac:07},10,5\r\n").as_bytes());
    }
    let t = ingest(&csv).unwrap();
    let expected: Vec<i64> = (0..1000).map(|i| i * 100).collect();
    assert_eq!(t.requests().arrival_ns, expected);
}

#[test]
fn an_empty_session_id_is_none_never_a_drop() {
    let t = ingest(&data("burstgpt/v3_dirty.csv")).unwrap();
    reconciles(&t);
    let m = t.meta();
    assert!(m.layout.starts_with("BurstGPT_3"));
    assert_eq!((m.rows_read, m.emitted), (7, 4));
    assert_eq!(m.session_rows, Some(3));
    assert_eq!(m.sessions, Some(2));
    let sessions = t.requests().session.as_ref().unwrap();
    assert_eq!(sessions[1], Requests::NO_SESSION);
    // "zzz" in Elapsed time is not read, so it is not a defect.
    assert!(!m.dropped.contains_key(&DropReason::NonNumeric));
}

#[test]
fn burstgpt_columns_are_found_by_name_not_position() {
    let shuffled = b"Log Type,Response tokens,Model,Timestamp,Total tokens,Request tokens\nAPI log,20,GPT-4,7,70,50\nAPI log,30,GPT-4,9,70,40\n";
    let t = ingest(shuffled).unwrap();
    assert_eq!(t.requests().input_tokens, [50, 40]);
    assert_eq!(t.requests().output_tokens, [20, 30]);
    assert_eq!(t.requests().arrival_ns, [0, 2_000_000_000]);
}

#[test]
fn arrivals_rebase_to_the_first_emitted_row_not_a_dropped_one() {
    // The first row is a failure (0/0): the clock starts at the first *emitted* row.
    let csv = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n100,ChatGPT,0,0,0,API log\n160,ChatGPT,5,5,10,API log\n161,ChatGPT,5,5,10,API log\n";
    let t = ingest(csv).unwrap();
    assert_eq!(t.requests().arrival_ns, [0, 1_000_000_000]);
    assert_eq!(t.meta().clock_anchor_ns, Some(160_000_000_000));
}

#[test]
fn caller_filters_are_counted_apart_from_defects() {
    let mut o = opts();
    o.filter.model = Some("GPT-4".to_owned());
    let t = ingest_with(&data("burstgpt/dirty.csv"), o).unwrap();
    reconciles(&t);
    let m = t.meta();
    assert_eq!(m.emitted, 2);
    assert_eq!(m.filtered.get(&FilterReason::Model), Some(&4));
    assert_eq!(m.dropped_total(), 10);

    let mut o = opts();
    o.filter.max_rows = Some(2);
    let t = ingest_with(&data("burstgpt/dirty.csv"), o).unwrap();
    reconciles(&t);
    assert_eq!(t.meta().emitted, 2);
    assert_eq!(t.meta().filtered.get(&FilterReason::MaxRows), Some(&2));

    let mut o = opts();
    o.filter.start_ns = Some(11_000_000_000);
    o.filter.end_ns = Some(13_000_000_001);
    let t = ingest_with(&data("burstgpt/dirty.csv"), o).unwrap();
    reconciles(&t);
    assert_eq!(t.meta().emitted, 2); // rows at 21 and 23
}

#[test]
fn an_unrecognised_layout_is_an_error_listing_what_it_saw() {
    let err = ingest(b"a,b,c\n1,2,3\n").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("line 1") && msg.contains("[a, b, c]"), "{msg}");
    let err = ingest(b"{\"ts\": 1, \"len\": 2}\n").unwrap_err();
    assert!(err.to_string().contains("fields seen: [len, ts]"), "{err}");
    assert_eq!(ingest(b"").unwrap_err(), TraceError::Empty);
    assert_eq!(ingest(b"\n\n  \n").unwrap_err(), TraceError::Empty);
}

#[test]
fn a_forced_format_names_the_columns_it_is_missing() {
    let azure = b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n";
    let err = ingest_with(azure, forced(Format::Burstgpt))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing column(s) Timestamp, Model"), "{err}");
    assert!(ingest_with(azure, forced(Format::Azure)).is_ok());
}

#[test]
fn a_repeated_header_column_is_refused() {
    let err = ingest(b"Timestamp,Timestamp\n").unwrap_err();
    assert!(matches!(err, TraceError::DuplicateColumn { .. }), "{err}");
}

#[test]
fn a_utf8_bom_before_the_header_is_not_a_layout_error() {
    let csv = b"\xEF\xBB\xBFTimestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n";
    assert_eq!(ingest(csv).unwrap().len(), 1);
}

#[test]
fn a_line_over_the_limit_is_dropped_as_malformed_not_held() {
    let mut csv = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,ChatGPT,5,5,10,API log\n".to_vec();
    csv.extend(std::iter::repeat_n(b'x', 5000));
    csv.extend_from_slice(b"\n2,ChatGPT,5,5,10,API log\n");
    let o = IngestOptions {
        limits: Limits {
            max_line_bytes: 1000,
            max_examples_per_reason: 5,
        },
        ..opts()
    };
    for chunk in [7usize, 999, 1 << 20] {
        let mut ing = Ingester::new(o.clone());
        for c in csv.chunks(chunk) {
            ing.push(c).unwrap();
        }
        let t = ing.finish().unwrap();
        reconciles(&t);
        assert_eq!(
            (t.meta().rows_read, t.meta().emitted),
            (3, 2),
            "chunk {chunk}"
        );
        let ex = &t.meta().drop_examples[&DropReason::MalformedRow][0];
        assert_eq!(ex.line, 3, "chunk {chunk}");
    }
}

fn ingest_chunked(bytes: &[u8], cuts: &[usize]) -> Result<Trace, TraceError> {
    let mut ing = Ingester::new(opts());
    let mut last = 0;
    for &c in cuts {
        let c = c.min(bytes.len()).max(last);
        ing.push(&bytes[last..c])?;
        last = c;
    }
    ing.push(&bytes[last..])?;
    ing.finish()
}

proptest! {
    #[test]
    fn chunk_boundaries_never_change_the_trace(mut cuts in proptest::collection::vec(0usize..700, 0..12)) {
        cuts.sort_unstable();
        for fixture in ["burstgpt/dirty.csv", "mooncake/dirty.jsonl", "azure/dirty.csv", "burstgpt/v3_dirty.csv"] {
            let bytes = data(fixture);
            let whole = ingest(&bytes).unwrap();
            let chunked = ingest_chunked(&bytes, &cuts).unwrap();
            prop_assert_eq!(whole, chunked);
        }
    }

    #[test]
    fn ingest_never_panics_and_always_reconciles(body in proptest::collection::vec(any::<u8>(), 0..400), which in 0usize..4) {
        let headers: [&[u8]; 4] = [
            b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n",
            b"Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n",
            b"TIMESTAMP,ContextTokens,GeneratedTokens\n",
            b"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n",
        ];
        let mut bytes = headers[which].to_vec();
        bytes.extend_from_slice(&body);
        if let Ok(t) = ingest(&bytes) {
            let m = t.meta();
            prop_assert_eq!(m.rows_read, m.emitted + m.dropped_total() + m.filtered_total());
        }
    }

    #[test]
    fn structured_rows_reconcile(rows in proptest::collection::vec((0u32..100, "[0-9a-z.\\-]{0,4}", "[0-9\\-]{0,3}", 0u32..3), 0..60)) {
        let mut csv = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n".to_vec();
        for (ts, a, b, m) in &rows {
            csv.extend_from_slice(format!("{ts},M{m},{a},{b},0,API log\n").as_bytes());
        }
        let mut o = opts();
        o.filter = CallerFilter { model: Some("M1".into()), ..CallerFilter::default() };
        let t = ingest_with(&csv, o).unwrap();
        let m = t.meta();
        prop_assert_eq!(m.rows_read, rows.len() as u64);
        prop_assert_eq!(m.rows_read, m.emitted + m.dropped_total() + m.filtered_total());
        prop_assert!(t.requests().arrival_ns.windows(2).all(|w| w[0] <= w[1]));
    }
}

#[test]
fn a_bom_before_the_first_jsonl_object_is_not_a_row_defect() {
    let t = ingest(b"\xEF\xBB\xBF{\"timestamp\":0,\"input_length\":5,\"output_length\":3}\n{\"timestamp\":3000,\"input_length\":5,\"output_length\":3}\n").unwrap();
    assert_eq!((t.meta().rows_read, t.meta().emitted), (2, 2));
}

#[test]
fn a_broken_first_jsonl_line_is_a_dropped_row_not_another_format() {
    let body = b"{\"timestamp\": 0, \"input_len\n{\"timestamp\":0,\"input_length\":5,\"hash_ids\":[1]}\n{\"timestamp\":3000,\"input_length\":5,\"output_length\":3}\n";
    let t = ingest(body).unwrap();
    reconciles(&t);
    assert_eq!(t.meta().format, Format::Mooncake);
    assert_eq!((t.meta().rows_read, t.meta().emitted), (3, 1));
    assert_eq!(t.meta().dropped.get(&DropReason::MalformedRow), Some(&1));
    assert_eq!(t.meta().dropped.get(&DropReason::MissingField), Some(&1));
    assert_eq!(t.meta().drop_examples[&DropReason::MalformedRow][0].line, 1);
}

#[test]
fn a_repeated_header_is_a_duplicate_however_it_is_dressed() {
    let header = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type";
    let row = "5,ChatGPT,10,5,15,API log";
    for repeat in [
        format!("\u{feff}{header}"),
        "\"Timestamp\",\"Model\",\"Request tokens\",\"Response tokens\",\"Total tokens\",\"Log Type\"".to_owned(),
        " Timestamp , Model,Request tokens,Response tokens,Total tokens,Log Type".to_owned(),
    ] {
        let text = format!("\u{feff}{header}\n{row}\n{repeat}\n{row}\n");
        let t = ingest(text.as_bytes()).unwrap();
        reconciles(&t);
        assert_eq!(t.meta().dropped.get(&DropReason::DuplicateHeader), Some(&1), "{repeat:?}");
        assert_eq!(t.meta().emitted, 2);
    }
}

#[test]
fn model_and_log_type_filters_on_a_format_without_those_columns_are_refused() {
    let azure = b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n";
    let mut o = opts();
    o.filter.model = Some("GPT-4".to_owned());
    let err = ingest_with(azure, o.clone()).unwrap_err();
    assert!(
        matches!(
            err,
            TraceError::FilterNotApplicable {
                filter: "model",
                format: Format::Azure
            }
        ),
        "{err}"
    );
    let err = ingest_with(&data("mooncake/dirty.jsonl"), o).unwrap_err();
    assert!(
        err.to_string().contains("--model applies to BurstGPT"),
        "{err}"
    );
}

#[test]
fn epoch_scale_fractional_milliseconds_stay_exact() {
    let t = ingest(b"{\"timestamp\": 1700000000000.123, \"input_length\": 5, \"output_length\": 3}\n{\"timestamp\": 1700000000000.124, \"input_length\": 5, \"output_length\": 3}\n").unwrap();
    assert_eq!(t.requests().arrival_ns, [0, 1_000]);
    assert_eq!(t.meta().clock_anchor_ns, Some(1_700_000_000_000_123_000));
    assert_eq!(t.meta().timestamp_resolution_ns, Some(1_000));
}

#[test]
fn timestamp_resolution_is_the_sources_grid_not_the_filtered_rows() {
    let csv = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n10,GPT-4,5,5,10,API log\n11,ChatGPT,5,5,10,API log\n13,GPT-4,5,5,10,API log\n";
    let mut o = opts();
    o.filter.model = Some("GPT-4".to_owned());
    let t = ingest_with(csv, o).unwrap();
    assert_eq!(t.requests().arrival_ns, [0, 3_000_000_000]);
    assert_eq!(t.meta().timestamp_resolution_ns, Some(1_000_000_000));
    assert_eq!(t.meta().distinct_timestamps, 3);
    let r = loadproof_core::Regime::of(&t, loadproof_core::Window::ONE_SECOND).unwrap();
    assert!(
        r.warnings.iter().all(|w| !w.contains("finer")),
        "{:?}",
        r.warnings
    );
}

/// issue 20: a header of 10⁶ columns never finished (the repeated-column check was quadratic),
/// and the error listed every column.
#[test]
fn a_header_of_a_million_columns_is_read_in_one_pass_and_named_briefly() {
    let header: Vec<String> = (0..1_000_000).map(|i| format!("c{i}")).collect();
    let text = format!("{}\n1,2\n", header.join(","));
    let e = ingest(text.as_bytes()).unwrap_err().to_string();
    assert!(
        e.contains("… and 999984 more"),
        "{}",
        &e[..200.min(e.len())]
    );
    assert!(e.len() < 2_000, "{} bytes", e.len());
    let mut dup = header.clone();
    dup.push("c7".to_owned());
    let e = ingest(format!("{}\n", dup.join(",")).as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("column [c7] appears more than once"), "{e}");
}

/// issue 20: a file whose first line was 50 MB of zeros was called "empty input"; a deeply
/// nested first line gave a 200 KB message.
#[test]
fn a_file_of_overlong_lines_is_named_as_such_and_messages_stay_short() {
    let zeros = [vec![b'0'; 9 << 20], b"\n".to_vec()].concat();
    let e = ingest(&zeros).unwrap_err().to_string();
    assert!(
        e.contains("the 1 line(s) read are each longer than 8388608 bytes"),
        "{e}"
    );
    assert!(!e.contains("empty input"));
    let nested = format!("{}\n", "[".repeat(200_000));
    let e = ingest(nested.as_bytes()).unwrap_err().to_string();
    assert!(e.len() < 2_000, "{} bytes: {}", e.len(), &e[..200]);
}

#[test]
fn a_reservation_from_the_file_size_changes_no_number_and_is_given_back() {
    let bytes = data("burstgpt/dirty.csv");
    let plain = ingest(&bytes).unwrap();
    // Reserved as for a 1 GB file: the same trace, and no spare room kept in it.
    let mut ingester = Ingester::new(opts());
    ingester.reserve_for_source_bytes(1 << 30);
    ingester.push(&bytes).unwrap();
    let reserved = ingester.finish().unwrap();
    assert_eq!(reserved.meta(), plain.meta());
    assert_eq!(reserved.requests(), plain.requests());
    let arrivals = &reserved.requests().arrival_ns;
    assert_eq!(arrivals.capacity(), arrivals.len());
    // An absurd size is a hint the allocator may refuse: never an abort.
    let mut ingester = Ingester::new(opts());
    ingester.reserve_for_source_bytes(u64::MAX);
    ingester.push(&bytes).unwrap();
    assert_eq!(ingester.finish().unwrap().requests(), plain.requests());
}

/// A RAGPulse row naming an id its companion file does not list (each file lists only id 1).
fn unknown_block_id() -> Trace {
    use loadproof_core::trace::{BlockLengths, SEGMENTS};
    let files: Vec<(&str, Vec<u8>)> = SEGMENTS
        .iter()
        .map(|s| {
            (
                s.file,
                format!("{{\"{}\": 1, \"token_length\": 3}}\n", s.id_field).into_bytes(),
            )
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    let opts = IngestOptions {
        block_lengths: Some(std::sync::Arc::new(
            BlockLengths::from_files(&refs).unwrap(),
        )),
        ..opts()
    };
    let row = r#"{"timestamp": "1", "input_length": 9, "output_length": 1, "hash_ids": {"sys_prompt": [1], "user_input": [2]}}"#;
    ingest_with(row.as_bytes(), opts).unwrap()
}
