//! A log read through a declared mapping (`--schema`): the rules of the built-in formats hold
//! for a log whose columns the operator names, and the mapping is part of what was read.

mod common;

use std::sync::Arc;

use common::{ingest_with, opts, shared};
use loadproof_core::trace::{SchemaError, TraceSchema};
use loadproof_core::{CallerFilter, DropReason, FilterReason, Format, IngestOptions, TraceError};
use proptest::prelude::*;

fn schema(json: &str) -> Arc<TraceSchema> {
    Arc::new(TraceSchema::from_json(json.as_bytes()).unwrap())
}

fn mapped(json: &str) -> IngestOptions {
    IngestOptions {
        block_lengths: None,
        schema: Some(schema(json)),
        ..opts()
    }
}

const AZURE_AS_MAPPING: &str = r#"{"schema":"loadproof.trace-schema/v1",
  "arrival":{"field":"TIMESTAMP","unit":"datetime","zone":"UTC"},
  "input_tokens":"ContextTokens","output_tokens":"GeneratedTokens"}"#;

const MOONCAKE_AS_MAPPING: &str = r#"{"schema":"loadproof.trace-schema/v1",
  "arrival":{"field":"timestamp","unit":"ms"},
  "input_tokens":"input_length","output_tokens":"output_length",
  "prefix_blocks":{"field":"hash_ids","block_tokens":512}}"#;

#[test]
fn a_builtin_trace_declared_as_a_mapping_reads_the_same_rows() {
    for (file, json) in [
        (
            "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
            AZURE_AS_MAPPING,
        ),
        (
            "traces/mooncake/conversation_trace.jsonl",
            MOONCAKE_AS_MAPPING,
        ),
    ] {
        let bytes = shared(file);
        let builtin = ingest_with(&bytes, opts()).unwrap();
        let through = ingest_with(&bytes, mapped(json)).unwrap();
        assert_eq!(through.requests(), builtin.requests(), "{file}");
        let (a, b) = (builtin.meta(), through.meta());
        assert_eq!(b.format, Format::Mapped);
        assert_eq!(
            (b.rows_read, b.emitted, &b.dropped, b.clock_anchor_ns),
            (a.rows_read, a.emitted, &a.dropped, a.clock_anchor_ns),
            "{file}"
        );
        assert_eq!(b.prefix_block_tokens, a.prefix_block_tokens, "{file}");
        assert_eq!(b.source_sha256, a.source_sha256);
        assert_eq!(
            b.schema_sha256.as_deref(),
            Some(TraceSchema::from_json(json.as_bytes()).unwrap().sha256())
        );
        assert_eq!(a.schema_sha256, None);
    }
}

const GATEWAY: &str = r#"{"schema":"loadproof.trace-schema/v1","name":"gw",
  "arrival":{"field":"at","unit":"datetime","zone":"+02:00"},
  "input_tokens":"prompt","output_tokens":"completion","session":"conv",
  "filters":{"model":"llm","status":"code"}}"#;

const GATEWAY_LOG: &str = "\
at,llm,prompt,completion,conv,code
2026-03-01 12:00:00.000,a,100,10,x,200
2026-03-01T10:00:00.500Z,a,200,20,y,200
2026-03-01 12:00:01,b,300,30,x,500
2026-03-01 12:00:02,a,12.5,30,x,200
2026-03-01 12:00:00.800,a,40,30,x,200
2026-03-01 12:00:03,a,50,0,,200
";

#[test]
fn zone_less_stamps_are_read_in_the_declared_zone_and_offsets_in_their_own() {
    let t = ingest_with(GATEWAY_LOG.as_bytes(), mapped(GATEWAY)).unwrap();
    // 12:00:00 at +02:00 is 10:00:00Z; the next, written in Z, is half a second later.
    assert_eq!(t.requests().arrival_ns[..2], [0, 500_000_000]);
    assert_eq!(t.meta().raw_time_unit, "datetime");
}

#[test]
fn a_mapped_defect_names_the_logs_own_column_and_line() {
    let t = ingest_with(GATEWAY_LOG.as_bytes(), mapped(GATEWAY)).unwrap();
    let m = t.meta();
    let ex = |r: DropReason| m.drop_examples.get(&r).and_then(|v| v.first()).unwrap();
    let frac = ex(DropReason::OutOfRange);
    assert_eq!((frac.line, frac.field.as_deref()), (5, Some("prompt")));
    let late = ex(DropReason::NonMonotonicArrival);
    assert_eq!((late.line, late.field.as_deref()), (6, Some("at")));
    let zero = ex(DropReason::ZeroOutputTokens);
    assert_eq!((zero.line, zero.field.as_deref()), (7, Some("completion")));
    assert_eq!(
        m.rows_read,
        m.emitted + m.dropped_total() + m.filtered_total()
    );
}

#[test]
fn a_mapped_filter_keeps_rows_by_the_declared_column_and_counts_the_rest() {
    let mut o = mapped(GATEWAY);
    o.filter = CallerFilter {
        model: Some("a".into()),
        fields: [("status".to_owned(), "200".to_owned())].into(),
        ..CallerFilter::default()
    };
    let t = ingest_with(GATEWAY_LOG.as_bytes(), o).unwrap();
    let m = t.meta();
    assert_eq!(m.filtered.get(&FilterReason::Model), Some(&1));
    assert_eq!(m.filtered.get(&FilterReason::Field), None);
    assert_eq!(m.emitted, 2);
}

#[test]
fn a_filter_the_mapping_does_not_declare_is_refused() {
    let mut o = mapped(GATEWAY);
    o.filter.fields.insert("region".into(), "eu".into());
    let err = ingest_with(GATEWAY_LOG.as_bytes(), o).unwrap_err();
    assert!(matches!(err, TraceError::FilterNotInSchema { ref name, .. } if name == "region"));
    // --where on a built-in format names no column at all.
    let mut o = opts();
    o.filter.fields.insert("status".into(), "200".into());
    let err = ingest_with(&shared("traces/mooncake/conversation_trace.jsonl"), o).unwrap_err();
    assert!(matches!(
        err,
        TraceError::FilterNotApplicable {
            filter: "where",
            ..
        }
    ));
}

#[test]
fn a_mapping_whose_columns_the_header_lacks_is_refused_naming_them() {
    let err = ingest_with(
        b"at,prompt,completion\n2026-03-01 12:00:00,1,1\n",
        mapped(GATEWAY),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("line 1") && text.contains("conv") && text.contains("llm"),
        "{text}"
    );
}

#[test]
fn json_fields_are_reached_by_key_then_by_dotted_path_and_numbers_may_be_strings() {
    let json = r#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"t","unit":"us"},
      "input_tokens":"usage.in","output_tokens":"a.b"}"#;
    let log = concat!(
        r#"{"t":"1000","usage":{"in":5},"a.b":7}"#,
        "\n",
        r#"{"t":2500,"usage":{"in":"6"},"a.b":"8"}"#,
        "\n",
        r#"{"t":3000,"usage":{"in":true},"a.b":8}"#,
        "\n"
    );
    let t = ingest_with(log.as_bytes(), mapped(json)).unwrap();
    assert_eq!(t.requests().arrival_ns, [0, 1_500_000]);
    assert_eq!(t.requests().input_tokens, [5, 6]);
    let ex = &t.meta().drop_examples[&DropReason::NonNumeric][0];
    assert_eq!((ex.line, ex.field.as_deref()), (3, Some("usage.in")));
}

#[test]
fn prefix_blocks_in_a_csv_cell_are_refused_not_guessed() {
    let json = r#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"t","unit":"s"},
      "input_tokens":"i","output_tokens":"o","prefix_blocks":{"field":"b","block_tokens":16}}"#;
    let err = ingest_with(b"t,i,o,b\n1,2,3,4\n", mapped(json)).unwrap_err();
    assert!(
        matches!(err, TraceError::SchemaMismatch { line: 1, .. }),
        "{err}"
    );
}

#[test]
fn a_mapping_document_is_refused_with_the_field_that_is_wrong() {
    let err = TraceSchema::from_json(
        br#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"t","unit":"ms","zone":"UTC"},"input_tokens":"i","output_tokens":"o"}"#,
    )
    .unwrap_err();
    assert!(matches!(err, SchemaError::Field { ref field, .. } if field == "arrival.zone"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the bytes, a mapped read reconciles or refuses; it never panics.
    #[test]
    fn any_bytes_through_a_mapping_reconcile_or_are_refused(
        head in prop_oneof![Just("at,llm,prompt,completion,conv,code\n"), Just("")],
        body in proptest::collection::vec(any::<u8>(), 0..400),
        lines in proptest::collection::vec("[0-9a-z:,. T{}\"\\-]{0,60}", 0..12),
    ) {
        for o in [mapped(GATEWAY), mapped(MOONCAKE_AS_MAPPING)] {
            let mut bytes = head.as_bytes().to_vec();
            bytes.extend_from_slice(&body);
            for l in &lines {
                bytes.extend_from_slice(l.as_bytes());
                bytes.push(b'\n');
            }
            if let Ok(t) = ingest_with(&bytes, o) {
                let m = t.meta();
                prop_assert_eq!(m.rows_read, m.emitted + m.dropped_total() + m.filtered_total());
            }
        }
    }
}
