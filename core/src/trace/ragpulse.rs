//! RAGPulse JSONL (a university RAG Q&A service's trace): `timestamp` a *string* of whole
//! seconds, `input_length`, `output_length`, `session_id`, and `hash_ids` an object of named
//! segments — `sys_prompt`, `passages_ids`, `history`, `web_search`, `user_input` — each a
//! list of ids whose token lengths are given by five companion files published beside it.
//!
//! The segments are what RAG serving lives on: one system prompt for everyone, passages shared
//! across questions, a session's history shared along it. Their blocks are not one size (512,
//! 437, … 4 tokens), and `input_length` is their sum plus a few tokens the trace does not
//! describe (a chat template's, presumably). So the ingester reports how each segment's ids
//! recur and how many tokens they leave undescribed, and claims no fixed-size prefix identity:
//! the trace's `PrefixBlocks` stay empty, and the plan says why.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::burstgpt::timestamp_ns;
use super::hex::hex;
use super::row::{Defect, Row};
use super::segments::{SegmentReport, SegmentSharing};
use super::{DropReason, SizedBlock};

/// One segment of a RAGPulse prompt: its key in `hash_ids`, the companion file that gives
/// its ids' lengths, and that file's id field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// The key in a row's `hash_ids`.
    pub key: &'static str,
    /// The companion file's published name.
    pub file: &'static str,
    /// The companion file's id field.
    pub id_field: &'static str,
}

/// The segments, in the order a prompt is assembled from them (the order the trace lists them).
pub const SEGMENTS: [Segment; 5] = [
    Segment {
        key: "sys_prompt",
        file: "1_sys_prompt.jsonl",
        id_field: "sys_prompt_id",
    },
    Segment {
        key: "passages_ids",
        file: "2_passages.jsonl",
        id_field: "passage_id",
    },
    Segment {
        key: "history",
        file: "3_history.jsonl",
        id_field: "history_id",
    },
    Segment {
        key: "web_search",
        file: "5_web_search.jsonl",
        id_field: "web_search_id",
    },
    Segment {
        key: "user_input",
        file: "4_user_input.jsonl",
        id_field: "user_input_id",
    },
];

/// True when a first JSON object is RAGPulse's: its `hash_ids` is an object of segments
/// (Mooncake's is a list).
pub fn looks_like(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Map<String, Value>>(line)
        .is_ok_and(|m| matches!(m.get("hash_ids"), Some(Value::Object(_))))
}

/// The token length of every id, per segment, read from the companion files.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockLengths {
    lengths: [HashMap<u64, u32>; 5],
    sha256: BTreeMap<String, String>,
}

/// Why a companion file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompanionError {
    /// A file the caller gave is not one of the five.
    #[error(
        "{name}: not a RAGPulse companion file (expected {})",
        expected_names()
    )]
    UnknownFile {
        /// The name given.
        name: String,
    },
    /// A line is not `{"<segment>_id": N, "token_length": L}`.
    #[error("{file}: line {line}: {detail}")]
    Line {
        /// The companion file.
        file: &'static str,
        /// The line.
        line: u64,
        /// What is wrong.
        detail: String,
    },
    /// One id given twice with different lengths.
    #[error("{file}: line {line}: id {id} given again, with length {second} (first {first})")]
    Conflict {
        /// The companion file.
        file: &'static str,
        /// The line of the second.
        line: u64,
        /// The id.
        id: u64,
        /// The first length.
        first: u32,
        /// The second length.
        second: u32,
    },
}

fn expected_names() -> String {
    SEGMENTS.map(|s| s.file).join(", ")
}

impl BlockLengths {
    /// Reads the companion files given as `(published name, bytes)`; every one of the five
    /// must be there (a missing one would leave a segment's lengths unknown).
    pub fn from_files(files: &[(&str, &[u8])]) -> Result<BlockLengths, CompanionError> {
        let mut out = BlockLengths::default();
        for (name, bytes) in files {
            let unknown = || CompanionError::UnknownFile {
                name: (*name).to_owned(),
            };
            let i = SEGMENTS
                .iter()
                .position(|s| s.file == *name)
                .ok_or_else(unknown)?;
            let (Some(seg), Some(map)) = (SEGMENTS.get(i).copied(), out.lengths.get_mut(i)) else {
                return Err(unknown());
            };
            for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
                let line_no = n as u64 + 1;
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.trim_ascii().is_empty() {
                    continue;
                }
                let bad = |detail: String| CompanionError::Line {
                    file: seg.file,
                    line: line_no,
                    detail,
                };
                let obj: serde_json::Map<String, Value> = serde_json::from_slice(line)
                    .map_err(|e| bad(format!("not a JSON object: {e}")))?;
                let id = obj
                    .get(seg.id_field)
                    .and_then(Value::as_u64)
                    .ok_or_else(|| bad(format!("no non-negative integer `{}`", seg.id_field)))?;
                let len = obj
                    .get("token_length")
                    .and_then(Value::as_u64)
                    .and_then(|l| u32::try_from(l).ok())
                    .ok_or_else(|| bad("no 32-bit non-negative integer `token_length`".into()))?;
                if let Some(&first) = map.get(&id)
                    && first != len
                {
                    return Err(CompanionError::Conflict {
                        file: seg.file,
                        line: line_no,
                        id,
                        first,
                        second: len,
                    });
                }
                map.insert(id, len);
            }
            out.sha256
                .insert(seg.file.to_owned(), hex(Sha256::digest(bytes).as_slice()));
        }
        let missing: Vec<&str> = SEGMENTS
            .iter()
            .filter(|s| !out.sha256.contains_key(s.file))
            .map(|s| s.file)
            .collect();
        if let Some(first) = missing.first() {
            return Err(CompanionError::UnknownFile {
                name: format!(
                    "{first} (missing; all five are needed: {})",
                    missing.join(", ")
                ),
            });
        }
        Ok(out)
    }

    /// The companion files' sha256s by name.
    pub fn sha256s(&self) -> &BTreeMap<String, String> {
        &self.sha256
    }
}

/// A row's segments: ids per segment, in [`SEGMENTS`] order.
pub(crate) type SegmentIds = [Vec<u64>; 5];

/// Reads one line. With `lengths`, an id its companion file does not list drops the row, and
/// so do segments longer than the prompt.
pub(crate) fn read(
    line: &[u8],
    lengths: Option<&BlockLengths>,
) -> Result<(Row<'static>, Box<SegmentIds>), Defect> {
    let (map, duplicate) = super::mooncake::object(line)?;
    if let Some(key) = duplicate {
        return Err(super::mooncake::duplicate_key(&key, None));
    }
    let ts_text = match map.get("timestamp") {
        None | Some(Value::Null) => {
            return Err(Defect::new(
                DropReason::MissingField,
                Some("timestamp"),
                "absent",
            ));
        }
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => {
            return Err(Defect::new(
                DropReason::NonNumeric,
                Some("timestamp"),
                "not a string or number of seconds",
            ));
        }
    };
    let ts_ns = timestamp_ns(ts_text.trim().as_bytes(), "timestamp", 9)?;
    let input = super::mooncake::tokens(&map, "input_length")?;
    let output = super::mooncake::tokens(&map, "output_length")?;
    let mut segments: Box<SegmentIds> = Box::default();
    match map.get("hash_ids") {
        None | Some(Value::Null) => {}
        Some(Value::Object(obj)) => {
            for (key, v) in obj {
                let slot = SEGMENTS
                    .iter()
                    .position(|s| s.key == key)
                    .and_then(|i| segments.get_mut(i));
                let Some(slot) = slot else {
                    let shown: String = key.chars().take(40).collect();
                    return Err(Defect::new(
                        DropReason::MalformedRow,
                        Some("hash_ids"),
                        format!("unknown segment {shown:?}"),
                    ));
                };
                if let Some(ids) = super::mooncake::ids(Some(v), "hash_ids")? {
                    *slot = ids;
                }
            }
        }
        Some(_) => {
            return Err(Defect::new(
                DropReason::MalformedRow,
                Some("hash_ids"),
                "hash_ids must be an object of segments",
            ));
        }
    }
    if let Some(lengths) = lengths {
        let mut sum: u64 = 0;
        for ((ids, seg), known) in segments.iter().zip(&SEGMENTS).zip(&lengths.lengths) {
            for id in ids {
                let Some(&len) = known.get(id) else {
                    return Err(Defect::new(
                        DropReason::UnknownBlockId,
                        Some("hash_ids"),
                        format!("{} id {id} is not in {}", seg.key, seg.file),
                    ));
                };
                sum += u64::from(len);
            }
        }
        if input > 0 && sum > u64::from(input) {
            return Err(Defect::new(
                DropReason::PrefixBlocksExceedPrompt,
                Some("hash_ids"),
                format!("the segments hold {sum} tokens, more than the {input}-token prompt"),
            ));
        }
    }
    let session = match map.get("session_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            Some(std::borrow::Cow::Owned(s.clone().into_bytes()))
        }
        _ => None,
    };
    Ok((
        Row {
            session,
            ..Row::of_counts(ts_ns, input, output)
        },
        segments,
    ))
}

/// Appends a row's blocks at their own lengths, in prompt order (segment by segment, ids in
/// the order listed). [`read`] has already dropped a row naming an id without a length.
pub(crate) fn push_sized(segs: &SegmentIds, lengths: &BlockLengths, out: &mut Vec<SizedBlock>) {
    for (segment, (ids, known)) in segs.iter().zip(&lengths.lengths).enumerate() {
        for &id in ids {
            if let Some(&tokens) = known.get(&id) {
                out.push(SizedBlock {
                    segment: segment as u8,
                    id,
                    tokens,
                });
            }
        }
    }
}

/// The segment named `key` (its index in [`SEGMENTS`]).
pub fn segment_index(key: &str) -> Option<u8> {
    SEGMENTS.iter().position(|s| s.key == key).map(|i| i as u8)
}

/// One segment's counts so far.
#[derive(Debug, Default)]
struct SegmentCount {
    seen: HashSet<u64>,
    rows: u64,
    ids: u64,
    repeated: u64,
    tokens: u64,
    repeated_tokens: u64,
}

/// Accumulates a [`SegmentReport`] row by row.
#[derive(Debug, Default)]
pub(crate) struct SegmentTally {
    counts: [SegmentCount; 5],
    undescribed: Vec<u32>,
}

impl SegmentTally {
    /// Counts one emitted row.
    pub(crate) fn add(&mut self, segs: &SegmentIds, input: u32, lengths: Option<&BlockLengths>) {
        let mut described: u64 = 0;
        let known: [Option<&HashMap<u64, u32>>; 5] =
            std::array::from_fn(|i| lengths.and_then(|l| l.lengths.get(i)));
        for ((ids, count), known) in segs.iter().zip(&mut self.counts).zip(known) {
            if !ids.is_empty() {
                count.rows += 1;
            }
            // A row's own repeats of an id count as one: sharing is across requests.
            let mut here = HashSet::new();
            for &id in ids {
                let len = known.and_then(|k| k.get(&id)).copied().map_or(0, u64::from);
                described += len;
                if !here.insert(id) {
                    continue;
                }
                count.ids += 1;
                count.tokens += len;
                if !count.seen.insert(id) {
                    count.repeated += 1;
                    count.repeated_tokens += len;
                }
            }
        }
        if lengths.is_some() {
            let rest = u64::from(input).saturating_sub(described);
            self.undescribed
                .push(u32::try_from(rest).unwrap_or(u32::MAX));
        }
    }

    pub(crate) fn report(mut self, lengths: Option<&BlockLengths>) -> SegmentReport {
        let known = lengths.is_some();
        self.undescribed.sort_unstable();
        let u = &self.undescribed;
        let undescribed_tokens = match (u.first(), u.get(u.len() / 2), u.last()) {
            (Some(&a), Some(&m), Some(&z)) if known => Some([a, m, z]),
            _ => None,
        };
        SegmentReport {
            segments: self
                .counts
                .iter()
                .zip(&SEGMENTS)
                .map(|(c, seg)| SegmentSharing {
                    segment: seg.key.to_owned(),
                    rows: c.rows,
                    ids: c.ids,
                    distinct_ids: c.seen.len() as u64,
                    repeated_ids: c.repeated,
                    tokens: known.then_some(c.tokens),
                    repeated_tokens: known.then_some(c.repeated_tokens),
                })
                .collect(),
            companions: lengths.map(|l| l.sha256.clone()).unwrap_or_default(),
            undescribed_tokens,
        }
    }
}
