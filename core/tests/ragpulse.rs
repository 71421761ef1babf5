//! RAGPulse: segmented `hash_ids` whose blocks have their own token lengths, given by five
//! companion files. Read, its sharing reported, and no fixed-size prefix identity claimed.

mod common;

use std::sync::Arc;

use common::{ingest_with, opts, shared};
use loadproof_core::trace::{BlockLengths, CompanionError, SEGMENTS, ShardError, ShardIngester};
use loadproof_core::{DropReason, Format, IngestOptions, TraceError};
use proptest::prelude::*;

const TRACE: &str = "traces/ragpulse/0_trace.first400.jsonl";

fn companions() -> Vec<(&'static str, Vec<u8>)> {
    SEGMENTS
        .iter()
        .map(|s| (s.file, shared(&format!("traces/ragpulse/{}", s.file))))
        .collect()
}

fn lengths() -> Arc<BlockLengths> {
    static READ: std::sync::OnceLock<Arc<BlockLengths>> = std::sync::OnceLock::new();
    READ.get_or_init(|| {
        let files = companions();
        let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
        Arc::new(BlockLengths::from_files(&refs).unwrap())
    })
    .clone()
}

fn with_lengths() -> IngestOptions {
    IngestOptions {
        block_lengths: Some(lengths()),
        ..opts()
    }
}

#[test]
fn a_ragpulse_trace_is_read_not_dropped_as_non_numeric() {
    let t = ingest_with(&shared(TRACE), with_lengths()).unwrap();
    let m = t.meta();
    assert_eq!(m.format, Format::Ragpulse);
    assert_eq!((m.rows_read, m.emitted, m.dropped_total()), (400, 400, 0));
    assert_eq!(m.sessions, Some(227));
    // No fixed-size prefix identity is claimed for blocks of many sizes.
    assert_eq!(m.prefix_block_tokens, None);
    assert!(t.requests().prefix.is_none());
    let seg = m.segments.as_ref().unwrap();
    // SOURCES.md: input_length = the segments' sum + 6 to 12 tokens (median 9).
    assert_eq!(seg.undescribed_tokens, Some([6, 9, 12]));
    assert_eq!(seg.companions.len(), 5);
    let sys = &seg.segments[0];
    assert_eq!((sys.segment.as_str(), sys.rows), ("sys_prompt", 400));
    assert!(sys.repeated_ids > 0 && sys.repeated_tokens.unwrap() > 0);
}

#[test]
fn without_its_companion_files_ids_recur_but_their_tokens_are_unknown() {
    let t = ingest_with(&shared(TRACE), opts()).unwrap();
    let seg = t.meta().segments.as_ref().unwrap();
    assert_eq!(seg.undescribed_tokens, None);
    assert!(seg.companions.is_empty());
    assert!(seg.segments.iter().all(|s| s.tokens.is_none()));
    let with = ingest_with(&shared(TRACE), with_lengths()).unwrap();
    let with = with.meta().segments.as_ref().unwrap();
    for (a, b) in seg.segments.iter().zip(&with.segments) {
        assert_eq!(
            (a.ids, a.distinct_ids, a.repeated_ids),
            (b.ids, b.distinct_ids, b.repeated_ids)
        );
    }
}

fn row(ts: &str, input: u32, sys: &[u64], user: &[u64]) -> String {
    format!(
        r#"{{"timestamp": "{ts}", "input_length": {input}, "output_length": 5, "hash_ids": {{"sys_prompt": {sys:?}, "passages_ids": [], "history": [], "web_search": [], "user_input": {user:?}}}, "session_id": "s"}}"#
    )
}

#[test]
fn an_id_its_companion_file_does_not_list_drops_the_row_by_name() {
    let text = [
        row("1", 600, &[8302], &[20632]),
        row("2", 600, &[8302], &[99_999_999]),
    ]
    .join("\n");
    let t = ingest_with(text.as_bytes(), with_lengths()).unwrap();
    let m = t.meta();
    assert_eq!(m.emitted, 1);
    let ex = &m.drop_examples[&DropReason::UnknownBlockId][0];
    assert_eq!(ex.line, 2);
    assert!(ex.detail.contains("99999999") && ex.detail.contains("4_user_input.jsonl"));
}

#[test]
fn segments_longer_than_the_prompt_drop_the_row() {
    // 8302 is 512 tokens: a 100-token prompt cannot hold it.
    let text = row("1", 100, &[8302], &[]);
    let t = ingest_with(text.as_bytes(), with_lengths()).unwrap();
    assert_eq!(
        t.meta().dropped.get(&DropReason::PrefixBlocksExceedPrompt),
        Some(&1)
    );
}

#[test]
fn an_id_counts_as_shared_once_it_recurs_in_another_request_not_within_one() {
    let text = [
        row("1", 2000, &[8302, 8302], &[20632]),
        row("2", 2000, &[8302], &[20633]),
    ]
    .join("\n");
    let t = ingest_with(text.as_bytes(), with_lengths()).unwrap();
    let sys = &t.meta().segments.as_ref().unwrap().segments[0];
    assert_eq!((sys.ids, sys.distinct_ids, sys.repeated_ids), (2, 1, 1));
    assert_eq!(sys.repeated_tokens, Some(512));
}

#[test]
fn a_companion_file_missing_or_contradicting_itself_is_refused() {
    let files = companions();
    let four: Vec<(&str, &[u8])> = files[..4].iter().map(|(n, b)| (*n, b.as_slice())).collect();
    let err = BlockLengths::from_files(&four).unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
    let mut refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    let twice = b"{\"sys_prompt_id\": 1, \"token_length\": 5}\n{\"sys_prompt_id\": 1, \"token_length\": 6}\n";
    refs[0] = ("1_sys_prompt.jsonl", twice);
    assert!(matches!(
        BlockLengths::from_files(&refs),
        Err(CompanionError::Conflict { line: 2, id: 1, .. })
    ));
    refs[0] = (
        "1_sys_prompt.jsonl",
        b"{\"sys_prompt_id\": -1, \"token_length\": 5}\n",
    );
    assert!(matches!(
        BlockLengths::from_files(&refs),
        Err(CompanionError::Line { line: 1, .. })
    ));
}

#[test]
fn a_ragpulse_source_is_read_in_one_part() {
    let bytes = shared(TRACE);
    let err = ShardIngester::new(&bytes[..4096], with_lengths())
        .err()
        .unwrap();
    assert_eq!(
        err,
        TraceError::InParts(ShardError::Unsplittable("RAGPulse"))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any lines after a RAGPulse first row reconcile or are refused, never panic.
    #[test]
    fn any_lines_after_a_ragpulse_row_reconcile(
        lines in proptest::collection::vec(r#"[0-9a-z_:,. {}\[\]"\-]{0,80}"#, 0..12),
    ) {
        let mut text = row("1", 2000, &[8302], &[20632]);
        for l in &lines {
            text.push('\n');
            text.push_str(l);
        }
        for o in [opts(), with_lengths()] {
            if let Ok(t) = ingest_with(text.as_bytes(), o) {
                let m = t.meta();
                prop_assert_eq!(m.rows_read, m.emitted + m.dropped_total() + m.filtered_total());
            }
        }
    }
}

#[test]
fn every_row_of_the_dirty_fixture_is_emitted_or_dropped_by_name() {
    let t = ingest_with(&common::data("ragpulse/dirty.jsonl"), opts()).unwrap();
    let m = t.meta();
    let names: Vec<(&str, u64)> = m.dropped.iter().map(|(r, n)| (r.name(), *n)).collect();
    assert_eq!(
        names,
        [
            ("malformed_row", 4),
            ("non_numeric", 1),
            ("zero_output_tokens", 1),
            ("non_monotonic_arrival", 1),
            ("duplicate_key", 1),
        ]
    );
    assert_eq!((m.rows_read, m.emitted), (12, 4));
    let seg = m.segments.as_ref().unwrap();
    // sys_prompt ids 1 and 2 recur in the second request, 1 in the third.
    assert_eq!(seg.segments[0].repeated_ids, 3);
}

/// The source's blocks of every emitted row, as (segment key, id, tokens).
fn blocks_of(t: &loadproof_core::Trace, i: usize) -> Vec<(&'static str, u64, u32)> {
    let sized = t.requests().sized.as_ref().unwrap();
    sized
        .row(i)
        .iter()
        .map(|b| (SEGMENTS[usize::from(b.segment)].key, b.id, b.tokens))
        .collect()
}

#[test]
fn with_its_companion_files_every_row_keeps_its_blocks_at_their_own_lengths() {
    let t = ingest_with(&shared(TRACE), with_lengths()).unwrap();
    let sized = t.requests().sized.as_ref().unwrap();
    assert!(sized.indexes(400));
    // Line 1 as published: three system-prompt blocks (512, 512, 437), six passages, one
    // history and one user-input block, in the order the trace lists its segments.
    let first = blocks_of(&t, 0);
    assert_eq!(
        &first[..3],
        &[
            ("sys_prompt", 8302, 512),
            ("sys_prompt", 14332, 512),
            ("sys_prompt", 15199, 437)
        ]
    );
    assert_eq!(first.last(), Some(&("user_input", 26923, 7)));
    // Every row's blocks plus its undescribed 6–12 tokens are its input_length.
    for (i, &input) in t.requests().input_tokens.iter().enumerate() {
        let described: u32 = sized.row(i).iter().map(|b| b.tokens).sum();
        assert!(
            (6..=12).contains(&(input - described)),
            "row {i}: {input} vs {described}"
        );
    }
    // Without the companion files no lengths are known, so no blocks are kept.
    let bare = ingest_with(&shared(TRACE), opts()).unwrap();
    assert!(bare.requests().sized.is_none());
}

#[test]
fn a_ragpulse_plan_writes_its_blocks_and_proves_them_against_the_source() {
    use loadproof_core::plan::{Plan, PlanOptions, sized_blocks};
    let t = ingest_with(&shared(TRACE), with_lengths()).unwrap();
    let plan = Plan::new(t, PlanOptions::default()).unwrap();
    let mut file = Vec::new();
    sized_blocks::write(plan.trace(), &mut file).unwrap();
    let check = sized_blocks::check(plan.trace(), Some(&file)).unwrap();
    assert!(check.pass, "{}", check.detail);
    let summary = sized_blocks::summary(plan.trace(), &file).unwrap();
    assert_eq!((summary.lines, summary.blocks), (400, 4086));
    assert!(
        summary.distinct_blocks < summary.blocks,
        "the trace's sharing survives"
    );
    let input: u64 = plan
        .trace()
        .requests()
        .input_tokens
        .iter()
        .map(|&t| u64::from(t))
        .sum();
    assert_eq!(summary.block_tokens + summary.undescribed_tokens, input);
    // The plan says which engine replays the sharing and which cannot.
    let note = plan
        .notes()
        .iter()
        .find(|n| n.contains("blocks.jsonl"))
        .unwrap();
    assert!(
        note.contains("NOT replayed") && note.contains("IS replayed"),
        "{note}"
    );
}

#[test]
fn a_blocks_file_that_is_not_the_sources_fails_the_plan_by_name() {
    use loadproof_core::plan::{Plan, PlanOptions, sized_blocks};
    let t = ingest_with(&shared(TRACE), with_lengths()).unwrap();
    let plan = Plan::new(t, PlanOptions::default()).unwrap();
    let mut file = Vec::new();
    sized_blocks::write(plan.trace(), &mut file).unwrap();
    let text = String::from_utf8(file).unwrap();
    // One block's length edited (437 → 512): the sharing would be replayed at the wrong size.
    let edited = text.replacen(
        "[\"sys_prompt\",15199,437]",
        "[\"sys_prompt\",15199,512]",
        1,
    );
    let check = sized_blocks::check(plan.trace(), Some(edited.as_bytes())).unwrap();
    assert!(
        !check.pass && check.detail.contains("line 1"),
        "{}",
        check.detail
    );
    // A line dropped.
    let short: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let check = sized_blocks::check(plan.trace(), Some(short.as_bytes())).unwrap();
    assert!(
        !check.pass && check.detail.contains("399 lines"),
        "{}",
        check.detail
    );
    // An unknown segment, and no file at all.
    let alien = text.replacen("\"user_input\"", "\"secret\"", 1);
    let check = sized_blocks::check(plan.trace(), Some(alien.as_bytes())).unwrap();
    assert!(
        !check.pass && check.detail.contains("unknown segment"),
        "{}",
        check.detail
    );
    let check = sized_blocks::check(plan.trace(), None).unwrap();
    assert!(
        !check.pass && check.detail.contains("names no blocks.jsonl"),
        "{}",
        check.detail
    );
    // Bytes other than the canonical ones: a blank line between lines, an unknown field.
    let blank = text.replacen('\n', "\n\n", 1);
    let check = sized_blocks::check(plan.trace(), Some(blank.as_bytes())).unwrap();
    assert!(
        !check.pass && check.detail.contains("blank line"),
        "{}",
        check.detail
    );
    let extra = text.replacen("{\"blocks\"", "{\"x\":1,\"blocks\"", 1);
    let check = sized_blocks::check(plan.trace(), Some(extra.as_bytes())).unwrap();
    assert!(
        !check.pass && check.detail.contains("unknown field"),
        "{}",
        check.detail
    );
    // Valid JSON escapes read as the key they spell.
    let escaped = text.replacen("\"user_input\"", "\"user\\u005finput\"", 1);
    let check = sized_blocks::check(plan.trace(), Some(escaped.as_bytes())).unwrap();
    assert!(check.pass, "{}", check.detail);
}

proptest! {
    #[test]
    fn a_blocks_file_of_any_bytes_is_refused_or_read_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = loadproof_core::plan::sized_blocks::read(&bytes);
    }
}
