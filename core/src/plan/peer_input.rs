//! A plan's schedule in the input formats of the peer load generators loadproof wraps:
//! AIPerf's `mooncake_trace` dataset and GuideLLM's replay data.
//!
//! The translation is a pure function of the planned `timed_trace` bytes, so the audit
//! rebuilds it from the receipt's embedded copy and compares it byte for byte with the file the
//! tool was given: a tool fed anything but the plan shows up as a named inconsistency. Every
//! row keeps its arrival exactly (decimal milliseconds to the nanosecond), its token lengths,
//! and its `hash_ids`; each row gets its own session id, `row-NNNNNN`, because both tools
//! merge rows that share one into a multi-turn conversation, and because the tools' records
//! name that id, which is how a record is joined back to the row it replayed.

use serde::Deserialize;

use super::timed_trace::TimeUnit;

/// One planned request, as both peer formats need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerRow {
    /// When it is due, ns after the schedule's zero.
    pub arrival_ns: i64,
    /// Prompt tokens.
    pub input: u32,
    /// Output tokens (`max_tokens`).
    pub output: u32,
    /// The prompt's blocks.
    pub hash_ids: Vec<u64>,
}

/// A `timed_trace` that cannot be translated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerInputError {
    /// The multiplier is not one of the four units a plan writes.
    #[error(
        "--timed-trace-sec-multiplier {0:?} is not s, ms, µs or ns: the schedule cannot be given to another tool exactly"
    )]
    Multiplier(String),
    /// A line that is not a planned row.
    #[error("timed_trace line {line}: {detail}")]
    Line {
        /// 1-based.
        line: u64,
        /// What is wrong.
        detail: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    timestamp: i64,
    input_length: u32,
    output_length: u32,
    hash_ids: Vec<u64>,
}

/// Every row of a `timed_trace` file, with arrivals in ns (the plan's multiplier).
pub fn read_rows(trace: &[u8], multiplier: &str) -> Result<Vec<PeerRow>, PeerInputError> {
    let unit = TimeUnit::from_multiplier(multiplier)
        .ok_or_else(|| PeerInputError::Multiplier(multiplier.to_owned()))?;
    let mut rows = Vec::new();
    // One newline ends the file; an empty line anywhere is an error (vLLM's reader's too).
    let body = trace.strip_suffix(b"\n").unwrap_or(trace);
    if body.is_empty() {
        return Ok(rows);
    }
    for (k, text) in body.split(|b| *b == b'\n').enumerate() {
        let line = k as u64 + 1;
        let parsed: Line = serde_json::from_slice(text).map_err(|e| PeerInputError::Line {
            line,
            detail: e.to_string(),
        })?;
        let arrival_ns = parsed
            .timestamp
            .checked_mul(unit.ns())
            .filter(|t| *t >= 0)
            .ok_or_else(|| PeerInputError::Line {
                line,
                detail: format!("timestamp {} is negative or out of range", parsed.timestamp),
            })?;
        rows.push(PeerRow {
            arrival_ns,
            input: parsed.input_length,
            output: parsed.output_length,
            hash_ids: parsed.hash_ids,
        });
    }
    Ok(rows)
}

/// The session id of row `index` (0-based) in both peer formats.
pub fn row_id(index: usize) -> String {
    format!("row-{index:06}")
}

/// The row a session id names, when it is one [`row_id`] wrote.
pub fn row_index(id: &str) -> Option<u64> {
    let digits = id.strip_prefix("row-")?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index: u64 = digits.parse().ok()?;
    (row_id(usize::try_from(index).ok()?) == id).then_some(index)
}

/// `ns` as decimal milliseconds, exact: `450`, `450.000001`.
pub fn decimal_ms(ns: i64) -> String {
    let (whole, frac) = (ns / 1_000_000, (ns % 1_000_000).abs());
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:06}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// `ns` as decimal seconds, exact: `0`, `1.5`, `0.000000001`.
pub fn decimal_s(ns: i64) -> String {
    let (whole, frac) = (ns / 1_000_000_000, (ns % 1_000_000_000).abs());
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:09}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

fn push_ids(out: &mut String, ids: &[u64]) {
    out.push('[');
    for (k, id) in ids.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(&id.to_string());
    }
    out.push(']');
}

/// The rows as JSONL with the given `timestamp` text: both peer formats are this shape.
fn rows_jsonl(rows: &[PeerRow], timestamp: fn(i64) -> String) -> Vec<u8> {
    let mut out = String::new();
    for (k, r) in rows.iter().enumerate() {
        out.push_str("{\"session_id\":\"");
        out.push_str(&row_id(k));
        out.push_str("\",\"timestamp\":");
        out.push_str(&timestamp(r.arrival_ns));
        out.push_str(&format!(
            ",\"input_length\":{},\"output_length\":{},\"hash_ids\":",
            r.input, r.output
        ));
        push_ids(&mut out, &r.hash_ids);
        out.push_str("}\n");
    }
    out.into_bytes()
}

/// AIPerf's `mooncake_trace` JSONL: `timestamp` in milliseconds from the schedule's zero,
/// `input_length`, `output_length` (its `max_tokens`), `hash_ids` (each one block of the
/// dataset's `block_size` tokens, the last one partial) and a `session_id` per row.
pub fn aiperf_input(rows: &[PeerRow]) -> Vec<u8> {
    rows_jsonl(rows, decimal_ms)
}

/// GuideLLM's `mooncake` trace: the same rows with `timestamp` in seconds from the
/// schedule's zero, and a `session_id` column its `conversation_id_column` names.
pub fn guidellm_input(rows: &[PeerRow]) -> Vec<u8> {
    rows_jsonl(rows, decimal_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_their_arrival_exactly_in_any_unit() {
        let trace = b"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 4, \"hash_ids\": [0, 1]}\n{\"timestamp\": 1500001, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [2]}\n";
        let rows = read_rows(trace, "0.000001").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].arrival_ns, 1_500_001_000);
        assert_eq!(decimal_ms(rows[1].arrival_ns), "1500.001");
        assert_eq!(decimal_ms(1), "0.000001");
        assert_eq!(decimal_ms(450_000_000), "450");
        assert_eq!(decimal_s(1_500_001_000), "1.500001");
        assert_eq!(decimal_s(2_000_000_000), "2");
        assert!(
            String::from_utf8(guidellm_input(&rows))
                .unwrap()
                .ends_with("{\"session_id\":\"row-000001\",\"timestamp\":1.500001,\"input_length\":10,\"output_length\":1,\"hash_ids\":[2]}\n")
        );
        let aiperf = String::from_utf8(aiperf_input(&rows)).unwrap();
        assert_eq!(
            aiperf,
            "{\"session_id\":\"row-000000\",\"timestamp\":0,\"input_length\":600,\"output_length\":4,\"hash_ids\":[0,1]}\n\
             {\"session_id\":\"row-000001\",\"timestamp\":1500.001,\"input_length\":10,\"output_length\":1,\"hash_ids\":[2]}\n"
        );
    }

    #[test]
    fn a_row_that_is_not_planned_is_named_by_line() {
        let bad = b"{\"timestamp\": 0, \"input_length\": 6, \"output_length\": 4, \"hash_ids\": [0]}\n{\"timestamp\": 1.5}\n";
        match read_rows(bad, "0.001") {
            Err(PeerInputError::Line { line: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_rows(b"", "0.37"),
            Err(PeerInputError::Multiplier(_))
        ));
        assert!(read_rows(b"\n\n", "1").is_err());
        assert_eq!(read_rows(b"", "1").unwrap(), []);
    }

    #[test]
    fn session_ids_name_rows_both_ways() {
        assert_eq!(row_id(33), "row-000033");
        assert_eq!(row_index("row-000033"), Some(33));
        assert_eq!(row_index("row-1234567"), Some(1_234_567));
        for bad in [
            "row-33",
            "row-0000033",
            "row-00003a",
            "x-000033",
            "row-+00033",
        ] {
            assert_eq!(row_index(bad), None, "{bad}");
        }
    }
}
