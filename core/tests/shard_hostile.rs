//! Hostile shards: a corrupted or malicious worker message (`ShardMeta` JSON + `ShardRows`),
//! and hostile trace bytes read in parts. The rule: core never panics on any input (debug
//! builds check overflow, so an overflow is a panic), and whatever is accepted reconciles.
//!
//! Each test is named after the rule it holds; the ones an adversarial pass first wrote as
//! failing findings (overflows in the join, claims from_parts let through) pass since the
//! fixes in `trace/shard.rs` and `trace/ingest.rs`.

mod common;

use common::{data, ingest_with, line_starts, opts};
use loadproof_core::trace::{PrefixBlocks, Shard, ShardError, ShardIngester, ShardMeta, ShardRows};
use loadproof_core::{CallerFilter, Format, IngestOptions, Ingester, Limits, Trace, TraceError};
use proptest::prelude::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// An unhashed ingester that has read `head`, and the JSON of an empty shard of the same
/// source (the right format, columns and cell filter) with the matching empty rows.
fn first_part(head: &[u8], o: IngestOptions) -> (Ingester, Value, ShardRows) {
    let mut ing = Ingester::new_unhashed(o.clone());
    ing.push(head).unwrap();
    let empty = ShardIngester::new(head, o).unwrap().finish().unwrap();
    let (meta, rows) = empty.into_parts();
    (ing, serde_json::to_value(&meta).unwrap(), rows)
}

/// [`first_part`] of a test data file cut before its line `at` (0 = right after line 1).
fn first_part_of(name: &str, at: usize) -> (Ingester, Value, ShardRows) {
    let bytes = data(name);
    let cut = line_starts(&bytes)[at];
    first_part(&bytes[..cut], opts())
}

fn meta(v: Value) -> ShardMeta {
    serde_json::from_value(v).expect("hostile meta JSON has ShardMeta's shape")
}

/// `n` sound, ordered rows of the shape `template` has (sessions, prefixes).
fn rows_like(template: &ShardRows, arrivals: &[i64], input: u32) -> ShardRows {
    let n = arrivals.len();
    ShardRows {
        arrival_ns: arrivals.to_vec(),
        input_tokens: vec![input; n],
        output_tokens: vec![1; n],
        excluded: Vec::new(),
        session: template.session.as_ref().map(|_| vec![u32::MAX; n]),
        session_names: Vec::new(),
        session_ends: Vec::new(),
        prefix: template.prefix.as_ref().map(|_| PrefixBlocks {
            offsets: vec![0; n + 1],
            ids: Vec::new(),
        }),
    }
}

/// Builds, joins and finishes: `None` if the shard or the join is refused, else the finish.
/// A panic anywhere is the finding.
fn join_finish(
    mut ing: Ingester,
    m: ShardMeta,
    rows: ShardRows,
) -> Option<Result<Trace, TraceError>> {
    let shard = Shard::from_parts(m, rows).ok()?;
    ing.join(shard).ok()?;
    Some(ing.finish_with_sha256([0; 32]))
}

/// What an accepted trace must be, whatever the shards claimed.
fn assert_reconciles(t: &Trace) {
    let m = t.meta();
    let dropped = m.dropped.values().try_fold(0u64, |a, &d| a.checked_add(d));
    let filtered = m.filtered.values().try_fold(0u64, |a, &d| a.checked_add(d));
    let total = dropped
        .and_then(|d| filtered.and_then(|f| d.checked_add(f)))
        .and_then(|df| df.checked_add(m.emitted));
    assert_eq!(total, Some(m.rows_read), "rows_read reconciles");
    let r = t.requests();
    let n = r.arrival_ns.len();
    assert_eq!(m.emitted, n as u64);
    assert_eq!(r.input_tokens.len(), n);
    assert_eq!(r.output_tokens.len(), n);
    if let Some(s) = &r.session {
        assert_eq!(s.len(), n);
    }
    if let Some(p) = &r.prefix {
        assert_eq!(p.offsets.len(), n + 1);
    }
    assert!(r.arrival_ns.first().is_none_or(|&a| a == 0));
    assert!(r.arrival_ns.windows(2).all(|w| w[0] <= w[1]));
}

const MAX: u64 = u64::MAX;

// ---------------------------------------------------------------------------------------------
// Findings: focused tests of one hostile value each (these FAIL until the library is fixed)
// ---------------------------------------------------------------------------------------------

// Join adds the shard's rows_read to the part's unchecked: a shard claiming u64::MAX rows (all
// dropped, on u64::MAX lines — from_parts accepts it) overflows `acc.rows_read +=`.
#[test]
fn a_shard_claiming_u64_max_rows_read_is_refused_not_overflowed() {
    let (mut ing, mut m, rows) = first_part_of("burstgpt/dirty.csv", 2);
    m["lines"] = json!(MAX);
    m["rows_read"] = json!(MAX);
    m["dropped"] = json!({ "malformed_row": MAX });
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    assert!(
        ing.join(shard).is_err(),
        "a join that cannot be counted is refused"
    );
}

// Join adds the shard's blank lines unchecked: u64::MAX blank lines after a part with one
// blank line overflows `acc.blank_lines +=`.
#[test]
fn a_shard_claiming_u64_max_blank_lines_is_refused_not_overflowed() {
    let head = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\n";
    let (mut ing, mut m, rows) = first_part(head, opts());
    m["lines"] = json!(MAX);
    m["blank_lines"] = json!(MAX);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    assert!(ing.join(shard).is_err());
}

// Join shifts each example's line by the part's lines unchecked: an example on line u64::MAX
// of a u64::MAX-line shard overflows `e.line += offset`.
#[test]
fn a_shard_example_on_line_u64_max_is_refused_not_overflowed() {
    let (mut ing, mut m, rows) = first_part_of("burstgpt/dirty.csv", 2);
    m["lines"] = json!(MAX);
    m["rows_read"] = json!(1);
    m["dropped"] = json!({ "non_numeric": 1 });
    m["examples"] = json!({ "non_numeric": [{ "line": MAX, "field": null, "detail": "x" }] });
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    assert!(ing.join(shard).is_err());
}

// Join moves the line counter by the shard's lines unchecked: a u64::MAX-line (empty) shard
// overflows `offset + meta.lines`.
#[test]
fn a_shard_claiming_u64_max_lines_is_refused_not_overflowed() {
    let (mut ing, mut m, rows) = first_part_of("burstgpt/dirty.csv", 2);
    m["lines"] = json!(MAX);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    assert!(ing.join(shard).is_err());
}

// Join adds the shard's byte count unchecked: a shard claiming u64::MAX bytes overflows
// `self.bytes += meta.bytes` (the part before it pushed bytes).
#[test]
fn a_shard_claiming_u64_max_bytes_is_refused_not_overflowed() {
    let (mut ing, mut m, rows) = first_part_of("burstgpt/dirty.csv", 2);
    m["bytes"] = json!(MAX);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    assert!(ing.join(shard).is_err());
}

// from_parts never checks azure_stamps, and join adds them unchecked: u64::MAX zone-less
// stamps after a part that read some overflow `without + wo` in the Azure adapter's counts.
#[test]
fn a_shard_claiming_u64_max_azure_stamps_is_refused_not_overflowed() {
    let (mut ing, mut m, rows) = first_part_of("azure/dirty.csv", 2);
    m["azure_stamps"] = json!([MAX, MAX]);
    // Refused by from_parts (stamps must count the shard's rows) or, failing that, by join.
    if let Ok(shard) = Shard::from_parts(meta(m), rows) {
        assert!(ing.join(shard).is_err());
    }
}

// from_parts checks each skip's own line but then adds `n + last_skip` unchecked: two rows,
// the first with skip u64::MAX - 1 (its line u64::MAX fits), overflow inside from_parts.
#[test]
fn from_parts_refuses_a_line_index_past_u64_max_without_overflowing() {
    let (_ing, mut m, template) = first_part_of("burstgpt/dirty.csv", 2);
    m["lines"] = json!(MAX);
    m["rows_read"] = json!(2);
    m["skips"] = json!([[0, MAX - 1]]);
    let rows = rows_like(&template, &[100_000_000_000, 100_000_000_000], 1);
    assert!(Shard::from_parts(meta(m), rows).is_err());
}

// Replay puts a row on line `offset + i + 1 + skip` unchecked: a row on the shard's line
// u64::MAX (allowed by from_parts) overflows it on the replay path (sessions: BurstGPT v3).
#[test]
fn replaying_a_row_on_line_u64_max_is_refused_not_overflowed() {
    let (mut ing, mut m, template) = first_part_of("burstgpt/v3_dirty.csv", 2);
    m["lines"] = json!(MAX);
    m["rows_read"] = json!(1);
    m["skips"] = json!([[0, MAX - 1]]);
    let rows = rows_like(&template, &[200_000_000_000], 1);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    assert!(ing.join(shard).is_err());
}

// The plain replay places a row it drops at `offset + line_of(i)` unchecked: a zero-token row
// on the shard's line u64::MAX overflows it (BurstGPT v1, no filters).
#[test]
fn replaying_a_dropped_row_on_line_u64_max_is_refused_not_overflowed() {
    let (mut ing, mut m, template) = first_part_of("burstgpt/dirty.csv", 2);
    m["lines"] = json!(MAX);
    m["rows_read"] = json!(1);
    m["skips"] = json!([[0, MAX - 1]]);
    let rows = rows_like(&template, &[200_000_000_000], 0);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    assert!(ing.join(shard).is_err());
}

// The plain replay takes the gap between ordered arrivals as `ts_ns - prev` unchecked; from_parts
// accepts any i64 arrival, so i64::MIN then i64::MAX (after a header-only part) overflows it.
#[test]
fn arrivals_i64_min_then_i64_max_are_refused_not_overflowed_in_plain_replay() {
    let head = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
    let (mut ing, mut m, template) = first_part(head, opts());
    m["lines"] = json!(2);
    m["rows_read"] = json!(2);
    let rows = rows_like(&template, &[i64::MIN, i64::MAX], 1);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    if ing.join(shard).is_ok() {
        let t = ing.finish_with_sha256([0; 32]);
        assert!(t.is_err(), "a trace spanning more than i64 ns is not made");
    }
}

// Same overflow in `account` (the replay path, here BurstGPT v3 with sessions).
#[test]
fn arrivals_i64_min_then_i64_max_are_refused_not_overflowed_in_replay() {
    let head = b"Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
    let (mut ing, mut m, template) = first_part(head, opts());
    m["lines"] = json!(2);
    m["rows_read"] = json!(2);
    let rows = rows_like(&template, &[i64::MIN, i64::MAX], 1);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    if ing.join(shard).is_ok() {
        let t = ing.finish_with_sha256([0; 32]);
        assert!(t.is_err(), "a trace spanning more than i64 ns is not made");
    }
}

// Rebasing saturates: arrivals i64::MIN+1, 0, i64::MAX (each gap fits) are accepted and become
// 0, i64::MAX, i64::MAX — two distinct arrivals silently merged, the span understated.
#[test]
fn arrivals_whose_span_overflows_i64_are_not_silently_saturated() {
    let head = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
    let (mut ing, mut m, template) = first_part(head, opts());
    m["lines"] = json!(3);
    m["rows_read"] = json!(3);
    let rows = rows_like(&template, &[i64::MIN + 1, 0, i64::MAX], 1);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    if ing.join(shard).is_ok()
        && let Ok(t) = ing.finish_with_sha256([0; 32])
    {
        let a = &t.requests().arrival_ns;
        assert!(
            a.windows(2).all(|w| w[0] < w[1]),
            "distinct source arrivals stay distinct: {a:?}"
        );
    }
}

// A shard may list a drop reason with count 0 (and an empty example list); join copies it, so
// the trace's `dropped` holds a reason that never fired (documented: "only reasons that fired
// appear") and the report differs from a whole read of the same rows.
#[test]
fn a_drop_reason_with_zero_count_does_not_enter_the_trace() {
    let (ing, mut m, rows) = first_part_of("burstgpt/dirty.csv", 2);
    m["dropped"] = json!({ "duplicate_key": 0 });
    m["examples"] = json!({ "duplicate_key": [] });
    // Refused (a reader never writes a reason that did not fire), or joined without it.
    let Some(t) = join_finish(ing, meta(m), rows) else {
        return;
    };
    let t = t.unwrap();
    assert_reconciles(&t);
    assert!(
        !t.meta()
            .dropped
            .contains_key(&loadproof_core::trace::DropReason::DuplicateKey),
        "dropped: {:?}",
        t.meta().dropped
    );
}

// from_parts does not hold azure_stamps to the shard's rows (each sound Azure row is exactly one
// stamp): an empty shard claiming 5 stamps is accepted and the trace's note counts 5 timestamps
// that were never parsed.
#[test]
fn azure_stamps_that_do_not_count_the_shards_rows_are_refused() {
    let (_ing, mut m, rows) = first_part_of("azure/dirty.csv", 2);
    m["azure_stamps"] = json!([5, 0]);
    assert!(
        Shard::from_parts(meta(m), rows).is_err(),
        "stamps for rows the shard does not have"
    );
}

// Join may leave the line counter at exactly u64::MAX (offset + lines fits), and the part that
// follows is pushed as usual: `push` then overflows `self.line_no += 1` on its first line.
#[test]
fn pushing_after_a_shard_that_ends_on_line_u64_max_is_refused_not_overflowed() {
    let (mut ing, mut m, rows) = first_part_of("burstgpt/dirty.csv", 2);
    m["lines"] = json!(MAX - 3); // the part before holds 3 lines
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    if ing.join(shard).is_ok() {
        let _ = ing.push(b"30,ChatGPT,100,50,150,Conversation log\n");
        let _ = ing.finish_with_sha256([0; 32]);
    }
}

// Likewise the byte counter: a shard claiming u64::MAX - (bytes before) bytes is joined, and
// the next push overflows `self.bytes += chunk.len()`.
#[test]
fn pushing_after_a_shard_that_ends_on_byte_u64_max_is_refused_not_overflowed() {
    let bytes = data("burstgpt/dirty.csv");
    let cut = line_starts(&bytes)[2];
    let (mut ing, mut m, rows) = first_part(&bytes[..cut], opts());
    m["bytes"] = json!(MAX - cut as u64);
    let shard = Shard::from_parts(meta(m), rows).expect("from_parts accepts it");
    if ing.join(shard).is_ok() {
        let _ = ing.push(b"30,ChatGPT,100,50,150,Conversation log\n");
        let _ = ing.finish_with_sha256([0; 32]);
    }
}

// `ShardRows::excluded` is documented "empty when the caller set no cell filter", yet from_parts
// accepts a shard whose meta says `--model` was applied and whose rows carry no decision: its
// rows then join unfiltered (here a row counted as emitted that the filter never looked at).
#[test]
fn a_cell_filtered_shard_without_its_excluded_column_is_refused() {
    let filtered = IngestOptions {
        filter: CallerFilter {
            model: Some("GPT-4".into()),
            ..CallerFilter::default()
        },
        ..opts()
    };
    let bytes = data("burstgpt/dirty.csv");
    let cut = line_starts(&bytes)[2];
    let (_ing, mut m, template) = first_part(&bytes[..cut], filtered);
    m["lines"] = json!(1);
    m["rows_read"] = json!(1);
    let rows = rows_like(&template, &[200_000_000_000], 1);
    assert!(rows.excluded.is_empty());
    assert!(
        Shard::from_parts(meta(m), rows).is_err(),
        "a filtered shard's rows must say what the filter decided"
    );
}

// ---------------------------------------------------------------------------------------------
// Passing hostile-meta regression tests
// ---------------------------------------------------------------------------------------------

#[test]
fn hostile_parts_that_do_not_hold_together_are_refused() {
    let (_ing, base, template) = first_part_of("burstgpt/v3_dirty.csv", 2);
    let refused = |m: Value, r: ShardRows| {
        matches!(
            Shard::from_parts(meta(m), r),
            Err(ShardError::Inconsistent(_))
        )
    };
    let rows1 = rows_like(&template, &[200_000_000_000], 1);
    let mut one = base.clone();
    one["lines"] = json!(1);
    one["rows_read"] = json!(1);
    assert!(Shard::from_parts(meta(one.clone()), rows1.clone()).is_ok());

    // Dropped counts that overflow when added.
    let mut m = one.clone();
    m["dropped"] = json!({ "malformed_row": MAX, "non_numeric": MAX });
    m["rows_read"] = json!(MAX);
    m["lines"] = json!(MAX);
    assert!(refused(m, rows1.clone()), "dropped overflowing");
    // rows_read + blank_lines overflowing.
    let mut m = one.clone();
    m["blank_lines"] = json!(MAX);
    m["lines"] = json!(MAX);
    assert!(refused(m, rows1.clone()), "rows + blanks overflowing");
    // Skips out of order, on rows past the end, overflowing the line.
    for skips in [
        json!([[0, 2], [0, 3]]),
        json!([[0, 3], [0, 2]]),
        json!([[1, 1]]),
        json!([[0, MAX]]),
        json!([[MAX, 1]]),
    ] {
        let mut m = one.clone();
        m["lines"] = json!(10);
        m["skips"] = skips.clone();
        assert!(refused(m, rows1.clone()), "skips {skips}");
    }
    // Examples outside the shard, or for reasons without (enough) drops.
    for (dropped, examples) in [
        (
            json!({ "non_numeric": 1 }),
            json!({ "non_numeric": [{ "line": 0, "field": null, "detail": "" }] }),
        ),
        (
            json!({ "non_numeric": 1 }),
            json!({ "non_numeric": [{ "line": 3, "field": null, "detail": "" }] }),
        ),
        (json!({}), json!({ "non_numeric": [] })),
        (
            json!({ "non_numeric": 0 }),
            json!({ "non_numeric": [{ "line": 1, "field": null, "detail": "" }] }),
        ),
    ] {
        let mut m = one.clone();
        m["lines"] = json!(2);
        m["rows_read"] = json!(
            1 + dropped
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum::<u64>()
        );
        m["dropped"] = dropped;
        m["examples"] = examples.clone();
        assert!(
            refused(m, ShardRows { ..rows1.clone() }),
            "examples {examples}"
        );
    }
    // Session indexes out of range, names not indexed, ends not monotone or past the names.
    let mut r = rows1.clone();
    r.session = Some(vec![0]);
    assert!(refused(one.clone(), r), "session index without names");
    let mut r = rows1.clone();
    r.session_names = b"ab".to_vec();
    r.session_ends = vec![2, 1];
    r.session = Some(vec![1]);
    assert!(refused(one.clone(), r), "ends not monotone");
    let mut r = rows1.clone();
    r.session_names = b"ab".to_vec();
    r.session_ends = vec![3];
    r.session = Some(vec![0]);
    assert!(refused(one.clone(), r), "ends past the names");
    let mut r = rows1.clone();
    r.session_names = b"ab".to_vec();
    assert!(refused(one.clone(), r), "names without ends");
    let mut r = rows1.clone();
    r.session = Some(vec![u32::MAX - 1]);
    assert!(refused(one.clone(), r), "index near the sentinel");
    let mut r = rows1.clone();
    r.session = Some(vec![]);
    assert!(refused(one.clone(), r), "short session column");
    // Excluded values > 2, or without a cell filter, or of another length.
    let mut r = rows1.clone();
    r.excluded = vec![3];
    assert!(refused(one.clone(), r), "excluded 3");
    let mut r = rows1.clone();
    r.excluded = vec![1];
    assert!(refused(one.clone(), r), "excluded without a filter");
    let mut m = one.clone();
    m["cell_filter"] = json!(["ChatGPT", null]);
    let mut r = rows1.clone();
    r.excluded = vec![1, 0];
    assert!(refused(m, r), "excluded of another length");
    // Columns of different lengths.
    let mut r = rows1.clone();
    r.output_tokens.push(1);
    assert!(refused(one.clone(), r), "long output column");
}

#[test]
fn hostile_prefix_offsets_are_refused() {
    let (_ing, mut m, template) = first_part_of("mooncake/dirty.jsonl", 1);
    m["lines"] = json!(2);
    m["rows_read"] = json!(2);
    let good = rows_like(&template, &[10_000_000_000, 11_000_000_000], 1);
    assert!(Shard::from_parts(meta(m.clone()), good.clone()).is_ok());
    for (offsets, ids) in [
        (vec![0, 2, 1], vec![1]),
        (vec![1, 1, 1], vec![1]),
        (vec![0, 0, MAX], vec![1]),
        (vec![0, 0], vec![]),
        (vec![0, 0, 0, 0], vec![]),
        (vec![0, MAX, 1], vec![7]),
    ] {
        let mut r = good.clone();
        r.prefix = Some(PrefixBlocks {
            offsets: offsets.clone(),
            ids,
        });
        assert!(
            Shard::from_parts(meta(m.clone()), r).is_err(),
            "{offsets:?}"
        );
    }
    let mut r = good.clone();
    r.prefix = None;
    let mut ing = first_part_of("mooncake/dirty.jsonl", 1).0;
    let shard = Shard::from_parts(meta(m), r).unwrap();
    assert_eq!(
        ing.join(shard),
        Err(TraceError::InParts(ShardError::Mismatch("layout"))),
        "a Mooncake shard without prefixes"
    );
}

#[test]
fn a_shard_with_another_format_columns_or_cell_filter_is_refused_by_join() {
    let (mut ing, base, rows) = first_part_of("burstgpt/dirty.csv", 2);
    for (key, v) in [
        ("format", json!("azure")),
        ("format", json!("mooncake")),
        ("columns", json!(["Timestamp"])),
        ("cell_filter", json!(["ChatGPT", null])),
        ("cell_filter", json!([null, "API log"])),
    ] {
        let mut m = base.clone();
        m[key] = v.clone();
        let shard = Shard::from_parts(meta(m), rows.clone()).unwrap();
        assert!(
            matches!(
                ing.join(shard),
                Err(TraceError::InParts(ShardError::Mismatch(_)))
            ),
            "{key} = {v}"
        );
    }
    // A shard with sessions after a layout without them.
    let (_, _, v3rows) = first_part_of("burstgpt/v3_dirty.csv", 2);
    let shard = Shard::from_parts(meta(base), v3rows).unwrap();
    assert!(ing.join(shard).is_err());
}

#[test]
fn a_join_after_an_ingester_without_a_header_is_refused() {
    let (_, m, rows) = first_part_of("burstgpt/dirty.csv", 2);
    let mut ing = Ingester::new_unhashed(opts());
    ing.push(b"\n\n").unwrap();
    let shard = Shard::from_parts(meta(m), rows).unwrap();
    assert!(ing.join(shard).is_err());
}

#[test]
fn large_but_fitting_counts_join_and_reconcile() {
    // Counts just under overflow, with a part before that read nothing but its header.
    let head = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
    let (ing, mut m, template) = first_part(head, opts());
    m["lines"] = json!(MAX - 1);
    m["rows_read"] = json!(MAX / 2);
    m["blank_lines"] = json!(MAX / 4);
    m["dropped"] = json!({ "malformed_row": MAX / 2 - 1 });
    m["bytes"] = json!(MAX / 2);
    let rows = rows_like(&template, &[5_000_000_000], 1);
    let t = join_finish(ing, meta(m), rows).expect("accepted").unwrap();
    assert_reconciles(&t);
    assert_eq!(t.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Proptests over hostile parts
// ---------------------------------------------------------------------------------------------

const FILES: [(&str, usize); 4] = [
    ("burstgpt/v3_dirty.csv", 2),
    ("mooncake/dirty.jsonl", 2),
    ("azure/dirty.csv", 2),
    ("burstgpt/dirty.csv", 4),
];

const REASONS: [&str; 13] = [
    "malformed_row",
    "missing_field",
    "non_numeric",
    "non_finite",
    "negative_value",
    "out_of_range",
    "zero_input_tokens",
    "zero_output_tokens",
    "non_monotonic_arrival",
    "duplicate_header",
    "duplicate_key",
    "inconsistent_total",
    "prefix_blocks_exceed_prompt",
];

/// Everything a hostile worker can put in the two parts.
#[derive(Debug, Clone)]
struct Hostile {
    file: usize,
    cut: usize,
    bytes: u64,
    lines: u64,
    rows_read: u64,
    blank_lines: u64,
    dropped: Vec<(usize, u64)>,
    examples: Vec<(usize, Vec<u64>)>,
    skips: Vec<(u64, u64)>,
    azure_stamps: (u64, u64),
    cell_filter: (Option<String>, Option<String>),
    arrivals: Vec<i64>,
    input: Vec<u32>,
    output: Vec<u32>,
    excluded: Vec<u8>,
    session: Option<Vec<u32>>,
    session_names: Vec<u8>,
    session_ends: Vec<u64>,
    prefix: Option<(Vec<u64>, Vec<u64>)>,
    /// Make the claimed counts agree with the rows (so the join is reached more often).
    fixup: bool,
    /// Join the same shard twice.
    twice: bool,
}

fn count(huge: bool) -> BoxedStrategy<u64> {
    if huge {
        prop_oneof![
            2 => 0u64..20,
            1 => Just(MAX),
            1 => Just(MAX - 1),
            1 => Just(MAX / 2),
            1 => Just(1u64 << 63),
            1 => any::<u64>(),
        ]
        .boxed()
    } else {
        prop_oneof![4 => 0u64..20, 1 => 0u64..100_000].boxed()
    }
}

fn arrival(huge: bool) -> BoxedStrategy<i64> {
    if huge {
        prop_oneof![
            3 => 0i64..200_000_000_000,
            1 => Just(i64::MIN),
            1 => Just(i64::MAX),
            1 => Just(i64::MIN + 1),
            1 => any::<i64>(),
        ]
        .boxed()
    } else {
        prop_oneof![
            4 => 0i64..200_000_000_000,
            1 => -1_000_000_000_000i64..1_000_000_000_000,
        ]
        .boxed()
    }
}

fn hostile(huge: bool) -> impl Strategy<Value = Hostile> {
    let c = move || count(huge);
    let filter = prop_oneof![
        Just(None),
        Just(Some("ChatGPT".to_owned())),
        Just(Some("x".to_owned()))
    ];
    let n_rows = 0usize..6;
    (
        (0usize..FILES.len(), 0usize..3, c(), c(), c(), c()),
        (
            proptest::collection::vec((0usize..REASONS.len(), c()), 0..4),
            proptest::collection::vec(
                (0usize..REASONS.len(), proptest::collection::vec(c(), 0..3)),
                0..3,
            ),
            proptest::collection::vec((c(), c()), 0..4),
            (c(), c()),
            (filter.clone(), filter),
        ),
        n_rows.prop_flat_map(move |n| {
            let len = move || prop_oneof![8 => Just(n), 1 => 0..n + 2];
            (
                len().prop_flat_map(move |l| proptest::collection::vec(arrival(huge), l)),
                len().prop_flat_map(|l| {
                    proptest::collection::vec(prop_oneof![Just(0u32), Just(1), any::<u32>()], l)
                }),
                len().prop_flat_map(|l| {
                    proptest::collection::vec(prop_oneof![Just(0u32), Just(7), any::<u32>()], l)
                }),
                prop_oneof![Just(0), len()].prop_flat_map(|l| proptest::collection::vec(0u8..4, l)),
                proptest::option::of(len().prop_flat_map(|l| {
                    proptest::collection::vec(prop_oneof![Just(u32::MAX), 0u32..4, any::<u32>()], l)
                })),
                proptest::collection::vec(any::<u8>(), 0..6),
                proptest::collection::vec(prop_oneof![0u64..7, any::<u64>()], 0..4),
                proptest::option::of((
                    prop_oneof![
                        3 => Just((0..=n as u64).collect::<Vec<u64>>()),
                        1 => proptest::collection::vec(prop_oneof![0u64..8, any::<u64>()], 0..n + 2)
                    ],
                    proptest::collection::vec(any::<u64>(), 0..8),
                )),
            )
        }),
        prop_oneof![1 => Just(false), 3 => Just(true)],
        any::<bool>(),
    )
        .prop_map(
            |(
                (file, cut, bytes, lines, rows_read, blank_lines),
                (dropped, examples, skips, azure_stamps, cell_filter),
                (arrivals, input, output, excluded, session, session_names, session_ends, prefix),
                fixup,
                twice,
            )| Hostile {
                file,
                cut,
                bytes,
                lines,
                rows_read,
                blank_lines,
                dropped,
                examples,
                skips,
                azure_stamps,
                cell_filter,
                arrivals,
                input,
                output,
                excluded,
                session,
                session_names,
                session_ends,
                prefix,
                fixup,
                twice,
            },
        )
}

impl Hostile {
    /// The first part's ingester and the hostile parts (starting from a real empty shard's meta,
    /// so format and columns match). With `fixup`, the parts are bent until they hold together
    /// (valid skips, session and prefix indexes, counts that add up), keeping their extremes, so
    /// the join and the finish are reached.
    fn build(&self) -> (Ingester, ShardMeta, ShardRows) {
        let (name, at) = FILES[self.file];
        let bytes = data(name);
        let cut = line_starts(&bytes)[at + self.cut];
        // BurstGPT parts are read with `--model ChatGPT` when the hostile filter names it.
        let burst = name.starts_with("burstgpt");
        let o = IngestOptions {
            filter: CallerFilter {
                model: self.cell_filter.0.clone().filter(|_| burst && self.fixup),
                ..CallerFilter::default()
            },
            ..opts()
        };
        let (ing, mut m, template) = first_part(&bytes[..cut], o.clone());
        let mut rows = ShardRows {
            arrival_ns: self.arrivals.clone(),
            input_tokens: self.input.clone(),
            output_tokens: self.output.clone(),
            excluded: self.excluded.clone(),
            session: self.session.clone(),
            session_names: self.session_names.clone(),
            session_ends: self.session_ends.clone(),
            prefix: self
                .prefix
                .clone()
                .map(|(offsets, ids)| PrefixBlocks { offsets, ids }),
        };
        let mut dropped = serde_json::Map::new();
        for &(r, d) in &self.dropped {
            dropped.insert(REASONS[r].to_owned(), json!(d));
        }
        let mut examples: Vec<(usize, Vec<u64>)> = self.examples.clone();
        let mut lines = self.lines;
        let mut rows_read = self.rows_read;
        let mut skips = self.skips.clone();
        let mut cell_filter = self.cell_filter.clone();
        if self.fixup {
            let n = rows.arrival_ns.len();
            rows.input_tokens.resize(n, 1);
            rows.output_tokens.resize(n, 1);
            cell_filter = (o.filter.model.clone(), None);
            if cell_filter.0.is_some() {
                rows.excluded.resize(n, 0);
                rows.excluded.iter_mut().for_each(|e| *e %= 3);
            } else {
                rows.excluded.clear();
            }
            if template.session.is_some() {
                let names = rows.session_names.len() as u64;
                let mut ends: Vec<u64> =
                    rows.session_ends.iter().map(|e| e % (names + 1)).collect();
                ends.sort_unstable();
                match ends.last_mut() {
                    Some(last) => *last = names,
                    None if names > 0 => ends.push(names),
                    None => {}
                }
                let k = ends.len() as u32;
                let mut s = rows.session.take().unwrap_or_default();
                s.resize(n, u32::MAX);
                for idx in &mut s {
                    if *idx != u32::MAX {
                        *idx = if k == 0 { u32::MAX } else { *idx % k };
                    }
                }
                rows.session_ends = ends;
                rows.session = Some(s);
            } else {
                rows.session = None;
                rows.session_ends.clear();
                rows.session_names.clear();
            }
            rows.prefix = template.prefix.as_ref().map(|_| {
                let ids = self.prefix.clone().map(|(_, ids)| ids).unwrap_or_default();
                let total = ids.len() as u64;
                let mut offsets: Vec<u64> = (0..=n as u64).map(|i| (i * 2).min(total)).collect();
                if let Some(last) = offsets.last_mut() {
                    *last = total;
                }
                PrefixBlocks { offsets, ids }
            });
            // Skips: strictly increasing in row and in skip, on rows that exist.
            skips.sort_unstable();
            let mut kept: Vec<(u64, u64)> = Vec::new();
            for (r, sk) in skips {
                let ok = (r as usize) < n && kept.last().is_none_or(|&(pr, ps)| r > pr && sk > ps);
                if ok {
                    kept.push((r, sk));
                }
            }
            skips = kept;
            for (r, ex) in &examples {
                let have = dropped
                    .get(REASONS[*r])
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                dropped.insert(REASONS[*r].to_owned(), json!(have.max(ex.len() as u64)));
            }
            let drops = dropped
                .values()
                .filter_map(Value::as_u64)
                .try_fold(n as u64, u64::checked_add);
            if let Some(d) = drops {
                rows_read = d;
            }
            for (_, ex) in &mut examples {
                ex.iter_mut().for_each(|l| *l = (*l).max(1));
            }
            let max_example = examples
                .iter()
                .flat_map(|(_, l)| l)
                .copied()
                .max()
                .unwrap_or(0);
            let line_of_rows = skips
                .iter()
                .map(|&(r, s)| r.saturating_add(1).saturating_add(s))
                .chain([(n as u64).saturating_add(skips.last().map_or(0, |&(_, s)| s))])
                .max()
                .unwrap_or(0);
            lines = lines
                .max(rows_read.saturating_add(self.blank_lines))
                .max(max_example)
                .max(line_of_rows);
        }
        let mut ex_json = serde_json::Map::new();
        for (r, lines) in &examples {
            let list: Vec<Value> = lines
                .iter()
                .map(|&l| json!({ "line": l, "field": null, "detail": "hostile" }))
                .collect();
            ex_json.insert(REASONS[*r].to_owned(), Value::Array(list));
        }
        m["bytes"] = json!(self.bytes);
        m["lines"] = json!(lines);
        m["rows_read"] = json!(rows_read);
        m["blank_lines"] = json!(self.blank_lines);
        m["dropped"] = Value::Object(dropped);
        m["examples"] = Value::Object(ex_json);
        m["skips"] = json!(skips);
        m["azure_stamps"] = json!([self.azure_stamps.0, self.azure_stamps.1]);
        m["cell_filter"] = json!([cell_filter.0, cell_filter.1]);
        (ing, meta(m), rows)
    }

    /// Builds, joins (once or twice) and finishes; asserts an accepted trace reconciles.
    fn run(&self) {
        let (mut ing, m, rows) = self.build();
        let Ok(shard) = Shard::from_parts(m, rows) else {
            return;
        };
        // Whatever from_parts accepts, its accessors answer.
        let _ = (shard.rows(), shard.bytes());
        let again = shard.clone();
        if ing.join(shard).is_err() {
            return;
        }
        if self.twice && ing.join(again).is_err() {
            return;
        }
        if let Ok(t) = ing.finish_with_sha256([0; 32]) {
            assert_reconciles(&t);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(512) })]

    /// Hostile structure with counts far from overflow: refused or joined, never a panic, and
    /// every trace made reconciles. (Passes.)
    #[test]
    fn hostile_parts_with_small_numbers_never_panic_and_reconcile(h in hostile(false)) {
        h.run();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(512) })]

    /// The same with extreme numbers (u64::MAX counts and lines, i64 extremes for arrivals):
    /// fails, as the focused findings above show, until join's arithmetic is checked.
    #[test]
    fn hostile_parts_with_extreme_numbers_never_panic_and_reconcile(h in hostile(true)) {
        h.run();
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile trace bytes: in parts == whole
// ---------------------------------------------------------------------------------------------

/// Reads `bytes` cut at `cuts` (ascending, duplicates allowed: an empty part). `Ok(None)`: the
/// first part holds no header.
fn read_in_parts(
    bytes: &[u8],
    cuts: &[usize],
    o: IngestOptions,
) -> Result<Option<Trace>, TraceError> {
    let first = cuts.first().copied().unwrap_or(bytes.len());
    let mut ing = Ingester::new_unhashed(o.clone());
    ing.push(&bytes[..first])?;
    let mut bounds: Vec<usize> = cuts.to_vec();
    bounds.push(bytes.len());
    for pair in bounds.windows(2) {
        let mut shard_ing = match ShardIngester::new(&bytes[..first], o.clone()) {
            Ok(s) => s,
            // No header to tell a part the layout, or a layout read in one part (RAGPulse).
            Err(TraceError::InParts(ShardError::NoHeaderInHead | ShardError::Unsplittable(_))) => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let part = &bytes[pair[0]..pair[1]];
        // Pushed byte by byte at the edges and in a lump between.
        let a = part.len().min(2);
        let b = part.len().saturating_sub(1).max(a);
        for byte in &part[..a] {
            shard_ing.push(std::slice::from_ref(byte))?;
        }
        shard_ing.push(&part[a..b])?;
        shard_ing.push(&part[b..])?;
        let (meta, rows) = shard_ing.finish()?.into_parts();
        let json = serde_json::to_string(&meta).unwrap();
        let meta: ShardMeta = serde_json::from_str(&json).unwrap();
        ing.join(Shard::from_parts(meta, rows).expect("a real shard's parts hold together"))?;
    }
    let digest: [u8; 32] = Sha256::digest(bytes).into();
    ing.finish_with_sha256(digest).map(Some)
}

fn parts_equal_whole(bytes: &[u8], cuts: &[usize], o: IngestOptions) -> Result<(), String> {
    let whole = ingest_with(bytes, o.clone());
    match (whole, read_in_parts(bytes, cuts, o)) {
        (_, Ok(None)) => Ok(()),
        (Ok(w), Ok(Some(p))) if w == p => Ok(()),
        (Err(w), Err(p)) if w == p => Ok(()),
        (w, p) => Err(format!(
            "cut at {cuts:?} of {:?}:\nwhole    {w:?}\nin parts {p:?}",
            String::from_utf8_lossy(bytes)
        )),
    }
}

fn assert_every_cut(bytes: &[u8], o: IngestOptions) {
    let mut cuts = line_starts(bytes);
    if bytes.ends_with(b"\n") {
        cuts.push(bytes.len());
    }
    for &cut in &cuts {
        if let Err(e) = parts_equal_whole(bytes, &[cut], o.clone()) {
            panic!("{e}");
        }
        // An empty shard in the middle.
        if let Err(e) = parts_equal_whole(bytes, &[cut, cut], o.clone()) {
            panic!("{e}");
        }
    }
}

const V1: &str = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type";
const V3: &str =
    "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type";
const AZ: &str = "TIMESTAMP,ContextTokens,GeneratedTokens";

#[test]
fn a_bom_and_crlf_head_reads_the_same_in_parts() {
    let bytes = format!(
        "\u{feff}{V1}\r\n\r\n5,ChatGPT,10,2,12,Conversation log\r\n\u{feff}{V1}\r\n6,GPT-4,7,0,7,API log\r\n  \r\n7,ChatGPT,1,1,2,API log"
    );
    assert_every_cut(bytes.as_bytes(), opts());
}

#[test]
fn blank_leading_lines_and_a_header_at_the_cut_read_the_same_in_parts() {
    let bytes = format!("\n \n\r\n{AZ}\n\n\n2023-11-16 18:15:46,3,4\n\n");
    assert_every_cut(bytes.as_bytes(), opts());
}

#[test]
fn shards_of_only_blank_lines_or_repeated_headers_read_the_same_in_parts() {
    let bytes = format!(
        "{V3}\n1,s,0,ChatGPT,1,1,2,API log\n\n\n\n{V3}\n\"Timestamp\",Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n{V3}\n2,s,0,ChatGPT,1,1,2,API log\n"
    );
    assert_every_cut(bytes.as_bytes(), opts());
}

#[test]
fn a_mooncake_head_over_csv_lines_and_a_json_prelude_read_the_same_in_parts() {
    let bytes = format!(
        "not json\n{{broken\n[1,2]\n{{\"timestamp\": 5, \"input_length\": 3, \"output_length\": 2, \"hash_ids\": [1]}}\n{V1}\n5,ChatGPT,10,2,12,Conversation log\n{{\"timestamp\": 6, \"input_length\": 3, \"output_length\": 2, \"session_id\": \"a\"}}\n"
    );
    assert_every_cut(bytes.as_bytes(), opts());
}

#[test]
fn lines_over_the_limit_around_every_cut_read_the_same_in_parts() {
    let long = "9".repeat(50);
    let bytes = format!(
        "{long}\n{V1}\n{long}\n5,ChatGPT,10,2,12,Conversation log\n{long},{long}\r\n6,ChatGPT,10,2,12,Conversation log\n{long}"
    );
    for max_line_bytes in [35, 50, 51, V1.len(), V1.len() + 1, 8 << 20] {
        let o = IngestOptions {
            limits: Limits {
                max_line_bytes,
                max_examples_per_reason: 2,
            },
            ..opts()
        };
        assert_every_cut(bytes.as_bytes(), o);
    }
}

#[test]
fn a_header_only_source_and_an_empty_tail_read_the_same_in_parts() {
    for bytes in [format!("{V1}\n"), format!("{AZ}\r\n"), format!("{V3}\n\n")] {
        assert_every_cut(bytes.as_bytes(), opts());
    }
}

#[test]
fn a_forced_format_reads_the_same_in_parts() {
    let bytes = format!(
        "{{\"timestamp\": 1, \"input_length\": 3, \"output_length\": 2}}\n{AZ}\n2023-11-16 18:15:46,3,4\n{{\"x\": 1}}\n"
    );
    for f in Format::ALL {
        let o = IngestOptions {
            format: Some(f),
            ..opts()
        };
        assert_every_cut(bytes.as_bytes(), o);
    }
}

fn fragment() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"  \t".to_vec()),
        Just(b",".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"{".to_vec()),
        "[0-9]{1,4}".prop_map(String::into_bytes),
        Just(b"5.5,ChatGPT,10,2,12,Conversation log\n".to_vec()),
        Just(b"4,GPT-4,7,0,7,API log\n".to_vec()),
        Just(b"3,ChatGPT,7,1,8,API log\r\n".to_vec()),
        Just(b"9,s-1,0,ChatGPT,5,5,10,Conversation log\n".to_vec()),
        Just(b"8,,0,GPT-4,5,5,10,API log\n".to_vec()),
        Just(b"2023-11-16 18:15:46.6805900,374,44\n".to_vec()),
        Just(b"2024-05-10 00:00:01+00:00,10,5\r\n".to_vec()),
        Just(b"{\"timestamp\": 7000, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1, 2]}\n".to_vec()),
        Just(b"{\"timestamp\": 100, \"input_length\": 6, \"output_length\": 0}\n".to_vec()),
        Just(b"{\"timestamp\": 9000, \"input_length\": 6, \"input_length\": 6, \"output_length\": 1}\n".to_vec()),
        Just(format!("{V1}\n").into_bytes()),
        Just(format!("\u{feff}{V1}\r\n").into_bytes()),
        Just(format!("{V3}\n").into_bytes()),
        Just(format!("{AZ}\n").into_bytes()),
        Just(vec![b'7'; 70]),
        any::<u8>().prop_map(|b| vec![b]),
    ]
}

fn hostile_opts() -> impl Strategy<Value = IngestOptions> {
    let filter = prop_oneof![
        4 => Just(CallerFilter::default()),
        1 => Just(CallerFilter { model: Some("ChatGPT".into()), ..CallerFilter::default() }),
        1 => Just(CallerFilter { log_type: Some("API log".into()), ..CallerFilter::default() }),
        1 => Just(CallerFilter { start_ns: Some(1_000_000_000), end_ns: Some(5_000_000_000_000), ..CallerFilter::default() }),
        1 => Just(CallerFilter { max_rows: Some(2), ..CallerFilter::default() }),
        1 => Just(CallerFilter { max_rows: Some(0), ..CallerFilter::default() }),
    ];
    let format = prop_oneof![4 => Just(None), 1 => proptest::sample::select(Format::ALL.to_vec()).prop_map(Some)];
    (
        format,
        filter,
        prop_oneof![4 => Just(8usize << 20), 4 => 20usize..120, 1 => Just(0usize), 1 => Just(usize::MAX)],
        prop_oneof![4 => 0usize..4, 1 => Just(usize::MAX)],
    )
        .prop_map(|(format, filter, max_line_bytes, max_examples_per_reason)| IngestOptions {
            format,
            filter,
            limits: Limits {
                max_line_bytes,
                max_examples_per_reason,
            },
            block_lengths: None,
            schema: None,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(768) })]

    /// Hostile heads (BOM, CRLF, blank lines, JSON prelude) and bodies (repeated headers of every
    /// layout, other formats' rows, long lines, bare CRs) under every option, cut anywhere (empty
    /// parts and a cut at the very end included): in parts is the whole.
    #[test]
    fn hostile_bytes_read_in_parts_are_the_bytes_read_whole(
        lead in proptest::collection::vec(prop_oneof![Just(b"\n".to_vec()), Just(b" \r\n".to_vec()), Just(b"\xEF\xBB\xBF".to_vec()), Just(b"{x\n".to_vec())], 0..3),
        which in 0usize..5,
        body in proptest::collection::vec(fragment(), 0..60),
        o in hostile_opts(),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..4),
    ) {
        let headers: [&[u8]; 5] = [
            b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n",
            b"Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\r\n",
            b"TIMESTAMP,ContextTokens,GeneratedTokens\n",
            b"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n",
            b"\"Timestamp\", \"Model\",Request tokens,Response tokens,Total tokens,Log Type\n",
        ];
        let mut bytes = lead.concat();
        bytes.extend_from_slice(headers[which]);
        bytes.extend(body.concat());
        let mut starts = line_starts(&bytes);
        if bytes.ends_with(b"\n") {
            starts.push(bytes.len());
        }
        if starts.is_empty() {
            return Ok(());
        }
        let mut cuts: Vec<usize> = picks.iter().map(|p| starts[p.index(starts.len())]).collect();
        cuts.sort_unstable();
        if let Err(e) = parts_equal_whole(&bytes, &cuts, o.clone()) {
            prop_assert!(false, "{} with {:?}", e, o);
        }
    }
}
