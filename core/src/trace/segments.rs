//! RAGPulse's segment structure as a report states it: how each segment's ids recur across
//! requests. Its own module so `TraceMeta` can carry it without importing the adapter.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How one segment's ids recur over the emitted rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentSharing {
    /// The segment's key.
    pub segment: String,
    /// Rows with at least one id in it.
    pub rows: u64,
    /// Ids over all rows (an id counted once per row it is in).
    pub ids: u64,
    /// Distinct ids.
    pub distinct_ids: u64,
    /// Of `ids`, those seen in an earlier row: what a prefix cache could have reused.
    pub repeated_ids: u64,
    /// Tokens of all its ids (`None` without the companion files).
    pub tokens: Option<u64>,
    /// Tokens of the repeated ids.
    pub repeated_tokens: Option<u64>,
}

/// The segment structure of a RAGPulse trace, over its emitted rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentReport {
    /// One entry per segment, in prompt order.
    pub segments: Vec<SegmentSharing>,
    /// The companion files read, name → sha256 (empty when none were given).
    pub companions: BTreeMap<String, String>,
    /// Per row, `input_length` minus the segments' tokens — what the trace does not describe:
    /// min, median, max (`None` without the companion files).
    pub undescribed_tokens: Option<[u32; 3]>,
}
