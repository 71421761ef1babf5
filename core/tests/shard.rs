//! A source read in parts — the later parts on other threads, as shards — is the source read
//! whole: every number of its trace, drop examples and line numbers included.

mod common;

use common::{data, ingest_with, line_starts, opts, shared};
use loadproof_core::trace::{Shard, ShardError, ShardIngester, ShardMeta, ShardRows};
use loadproof_core::{CallerFilter, IngestOptions, Ingester, Trace, TraceError};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

/// Reads `bytes` cut at `cuts` (byte offsets just after a newline, ascending): the first part
/// by an ingester, every later part by a shard ingester told the first part as the head, each
/// shard sent through its parts (the meta as JSON, as a worker sends it) and joined in order.
/// `Ok(None)`: the first part holds no header, so the source cannot be cut there.
fn read_in_parts(
    bytes: &[u8],
    cuts: &[usize],
    opts: IngestOptions,
) -> Result<Option<Trace>, TraceError> {
    let first = cuts.first().copied().unwrap_or(bytes.len());
    let mut ing = Ingester::new_unhashed(opts.clone());
    ing.push(&bytes[..first])?;
    let mut bounds: Vec<usize> = cuts.to_vec();
    bounds.push(bytes.len());
    for pair in bounds.windows(2) {
        let mut shard_ing = match ShardIngester::new(&bytes[..first], opts.clone()) {
            Ok(s) => s,
            Err(TraceError::InParts(ShardError::NoHeaderInHead)) => return Ok(None),
            Err(e) => return Err(e),
        };
        // Pushed in two pieces, so a shard's own chunking is exercised too.
        let part = &bytes[pair[0]..pair[1]];
        let mid = part.len() / 3;
        shard_ing.push(&part[..mid])?;
        shard_ing.push(&part[mid..])?;
        let (meta, rows) = shard_ing.finish()?.into_parts();
        let json = serde_json::to_string(&meta).unwrap();
        let meta: ShardMeta = serde_json::from_str(&json).unwrap();
        ing.join(Shard::from_parts(meta, rows).unwrap())?;
    }
    let digest: [u8; 32] = Sha256::digest(bytes).into();
    ing.finish_with_sha256(digest).map(Some)
}

fn assert_parts_equal_whole(name: &str, bytes: &[u8], cuts: &[usize], opts: IngestOptions) {
    let whole = ingest_with(bytes, opts.clone());
    match (whole, read_in_parts(bytes, cuts, opts)) {
        (_, Ok(None)) => {}
        (Ok(w), Ok(Some(p))) => assert_eq!(w, p, "{name} cut at {cuts:?}"),
        (Err(w), Err(p)) => assert_eq!(w, p, "{name} cut at {cuts:?}"),
        (w, p) => panic!("{name} cut at {cuts:?}: whole {w:?}, in parts {p:?}"),
    }
}

const DIRTY: [&str; 6] = [
    "burstgpt/dirty.csv",
    "burstgpt/v3_dirty.csv",
    "burstgpt/contradictory_total.csv",
    "mooncake/dirty.jsonl",
    "mooncake/ambiguous.jsonl",
    "azure/dirty.csv",
];

#[test]
fn a_source_read_in_parts_is_the_source_read_whole_at_every_cut() {
    for name in DIRTY {
        let bytes = data(name);
        for cut in line_starts(&bytes) {
            assert_parts_equal_whole(name, &bytes, &[cut], opts());
        }
    }
}

#[test]
fn every_filter_decides_the_same_on_rows_read_in_parts() {
    let filters = [
        CallerFilter {
            model: Some("ChatGPT".into()),
            ..CallerFilter::default()
        },
        CallerFilter {
            log_type: Some("Conversation log".into()),
            ..CallerFilter::default()
        },
        CallerFilter {
            start_ns: Some(2_000_000_000),
            end_ns: Some(40_000_000_000),
            ..CallerFilter::default()
        },
        CallerFilter {
            max_rows: Some(3),
            ..CallerFilter::default()
        },
    ];
    for name in ["burstgpt/dirty.csv", "burstgpt/v3_dirty.csv"] {
        let bytes = data(name);
        let starts = line_starts(&bytes);
        for filter in &filters {
            let o = IngestOptions {
                filter: filter.clone(),
                ..opts()
            };
            for &cut in &starts {
                assert_parts_equal_whole(name, &bytes, &[cut], o.clone());
            }
            // Three parts at once.
            for w in starts.windows(3).step_by(2) {
                assert_parts_equal_whole(name, &bytes, &[w[0], w[2]], o.clone());
            }
        }
    }
}

#[test]
fn the_real_traces_read_in_parts_are_the_traces_read_whole() {
    for name in [
        "traces/burstgpt/BurstGPT_1.first400.csv",
        "traces/burstgpt/BurstGPT_3.first400.csv",
        "traces/mooncake/conversation_trace.jsonl",
        "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
    ] {
        let bytes = shared(name);
        let starts = line_starts(&bytes);
        let at = |f: f64| starts[((starts.len() - 1) as f64 * f) as usize];
        assert_parts_equal_whole(name, &bytes, &[at(0.5)], opts());
        assert_parts_equal_whole(name, &bytes, &[at(0.1), at(0.4), at(0.9)], opts());
    }
}

#[test]
fn a_shard_cannot_be_joined_after_a_part_that_ends_mid_line() {
    let bytes = data("burstgpt/dirty.csv");
    let cut = line_starts(&bytes)[3];
    let mut ing = Ingester::new_unhashed(opts());
    ing.push(&bytes[..cut + 2]).unwrap();
    let mut shard = ShardIngester::new(&bytes[..cut], opts()).unwrap();
    shard.push(&bytes[cut + 2..]).unwrap();
    let err = ing.join(shard.finish().unwrap()).unwrap_err();
    assert_eq!(err, TraceError::InParts(ShardError::Misaligned));
}

#[test]
fn an_ingester_that_hashes_its_own_bytes_cannot_join_a_shard() {
    let bytes = data("burstgpt/dirty.csv");
    let cut = line_starts(&bytes)[3];
    let mut ing = Ingester::new(opts());
    ing.push(&bytes[..cut]).unwrap();
    let mut shard = ShardIngester::new(&bytes[..cut], opts()).unwrap();
    shard.push(&bytes[cut..]).unwrap();
    let err = ing.join(shard.finish().unwrap()).unwrap_err();
    assert_eq!(err, TraceError::InParts(ShardError::Hashed));
}

#[test]
fn a_shard_read_with_other_filters_or_another_layout_is_refused() {
    let bytes = data("burstgpt/dirty.csv");
    let cut = line_starts(&bytes)[3];
    let filtered = IngestOptions {
        filter: CallerFilter {
            model: Some("ChatGPT".into()),
            ..CallerFilter::default()
        },
        ..opts()
    };
    let mut ing = Ingester::new_unhashed(opts());
    ing.push(&bytes[..cut]).unwrap();
    let mut shard = ShardIngester::new(&bytes[..cut], filtered).unwrap();
    shard.push(&bytes[cut..]).unwrap();
    let err = ing.join(shard.finish().unwrap()).unwrap_err();
    assert_eq!(
        err,
        TraceError::InParts(ShardError::Mismatch("cell filter"))
    );

    let azure = data("azure/dirty.csv");
    let azure_cut = line_starts(&azure)[2];
    let mut other = ShardIngester::new(&azure[..azure_cut], opts()).unwrap();
    other.push(&azure[azure_cut..]).unwrap();
    let err = ing.join(other.finish().unwrap()).unwrap_err();
    assert_eq!(err, TraceError::InParts(ShardError::Mismatch("layout")));
}

#[test]
fn a_head_without_its_header_makes_no_shard() {
    let err = ShardIngester::new(b"\n\n  \n", opts()).err();
    assert_eq!(err, Some(TraceError::InParts(ShardError::NoHeaderInHead)));
    let bytes = data("burstgpt/dirty.csv");
    let err = ShardIngester::new(&bytes[..10], opts()).err();
    assert_eq!(err, Some(TraceError::InParts(ShardError::NoHeaderInHead)));
    // A head that is not a trace fails as a whole read of it does.
    let err = ShardIngester::new(b"a,b,c\n1,2,3\n", opts()).err().unwrap();
    assert_eq!(Err(err), ingest_with(b"a,b,c\n1,2,3\n", opts()).map(|_| ()));
}

fn parts_of(name: &str, at: usize) -> (ShardMeta, ShardRows) {
    let bytes = data(name);
    let cut = line_starts(&bytes)[at];
    let mut shard = ShardIngester::new(&bytes[..cut], opts()).unwrap();
    shard.push(&bytes[cut..]).unwrap();
    shard.finish().unwrap().into_parts()
}

#[test]
fn a_shard_whose_parts_do_not_hold_together_cannot_be_constructed() {
    let (meta, rows) = parts_of("burstgpt/v3_dirty.csv", 1);
    assert!(Shard::from_parts(meta.clone(), rows.clone()).is_ok());
    let refused = |meta: ShardMeta, rows: ShardRows| {
        matches!(
            Shard::from_parts(meta, rows),
            Err(ShardError::Inconsistent(_))
        )
    };
    let mut r = rows.clone();
    r.input_tokens.pop();
    assert!(refused(meta.clone(), r), "a short column");
    let mut r = rows.clone();
    r.arrival_ns.push(0);
    r.input_tokens.push(1);
    r.output_tokens.push(1);
    assert!(
        refused(meta.clone(), r),
        "a row more than rows_read accounts for"
    );
    let mut r = rows.clone();
    if let Some(s) = r.session.as_mut() {
        s[0] = r.session_ends.len() as u32;
    }
    assert!(refused(meta.clone(), r), "a session index out of range");
    let mut r = rows.clone();
    r.excluded = vec![3; r.arrival_ns.len()];
    assert!(
        refused(meta.clone(), r),
        "an excluded column without a filter"
    );
    let mut m: ShardMeta = meta.clone();
    let mut json: serde_json::Value = serde_json::to_value(&m).unwrap();
    json["lines"] = serde_json::json!(1);
    m = serde_json::from_value(json).unwrap();
    assert!(
        refused(m, rows.clone()),
        "rows on lines the shard does not have"
    );

    let (meta, rows) = parts_of("mooncake/dirty.jsonl", 1);
    let mut r = rows.clone();
    if let Some(p) = r.prefix.as_mut() {
        p.ids.push(7);
    }
    assert!(refused(meta, r), "prefix offsets that do not index the ids");
}

proptest! {
    #[test]
    fn any_cut_of_any_body_reads_as_the_whole(
        body in proptest::collection::vec(prop_oneof![
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b",".to_vec()),
            Just(b"\"".to_vec()),
            "[0-9]{1,4}".prop_map(String::into_bytes),
            Just(b"5.5,ChatGPT,10,2,12,Conversation log\n".to_vec()),
            Just(b"4,GPT-4,7,0,7,API log\n".to_vec()),
            Just(b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n".to_vec()),
            any::<u8>().prop_map(|b| vec![b]),
        ], 0..80),
        which in 0usize..4,
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..4),
    ) {
        let headers: [&[u8]; 4] = [
            b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n",
            b"Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n",
            b"TIMESTAMP,ContextTokens,GeneratedTokens\n",
            b"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n",
        ];
        let mut bytes = headers[which].to_vec();
        bytes.extend(body.concat());
        let starts = line_starts(&bytes);
        if !starts.is_empty() {
            let mut cuts: Vec<usize> = picks.iter().map(|p| starts[p.index(starts.len())]).collect();
            cuts.sort_unstable();
            cuts.dedup();
            let whole = ingest_with(&bytes, opts());
            match read_in_parts(&bytes, &cuts, opts()) {
                Ok(None) => {}
                Ok(Some(p)) => prop_assert_eq!(whole, Ok(p)),
                Err(e) => prop_assert_eq!(whole, Err(e)),
            }
        }
    }
}

#[test]
fn a_mapped_log_read_in_parts_is_the_log_read_whole() {
    let schema = loadproof_core::trace::TraceSchema::from_json(
        br#"{"schema":"loadproof.trace-schema/v1",
          "arrival":{"field":"TIMESTAMP","unit":"datetime","zone":"UTC"},
          "input_tokens":"ContextTokens","output_tokens":"GeneratedTokens"}"#,
    )
    .unwrap();
    let o = IngestOptions {
        block_lengths: None,
        schema: Some(std::sync::Arc::new(schema)),
        ..opts()
    };
    let bytes = shared("traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
    let starts = line_starts(&bytes);
    for k in [2, 3, 5] {
        let cuts: Vec<usize> = (1..k).map(|i| starts[starts.len() * i / k]).collect();
        assert_parts_equal_whole("azure mapped", &bytes, &cuts, o.clone());
    }
}
