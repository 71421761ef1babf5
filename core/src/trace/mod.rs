//! Traces: what a production log says was asked of a server, and what could not be used.
//!
//! A [`Trace`] is built by an [`Ingester`] from raw bytes. Every row read ends in exactly one
//! place — emitted, dropped with a [`DropReason`], or filtered by the caller with a
//! [`FilterReason`] — and [`Trace::new`] refuses to construct a value whose counts do not
//! reconcile. Arrivals are integer nanoseconds rebased to the first emitted row, so no
//! precision is lost on 100 ns epoch timestamps.

mod azure;
mod burstgpt;
mod compression;
mod csv_line;
mod datetime;
mod datetime_format;
mod draft;
mod hex;
mod ingest;
mod mapped;
mod mooncake;
mod plain_line;
mod ragpulse;
mod recording_grid;
mod row;
mod schema;
mod segments;
mod shard;
mod shard_error;
mod swar;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use compression::{Codec, Compression, GZIP_MAGIC, ZSTD_MAGIC};
pub use draft::{LogFields, LogKind, MAX_NAMES, log_fields};
pub(crate) use hex::hex;
pub use ingest::{CallerFilter, IngestOptions, Ingester, Limits, Sha256Stream, ShardIngester};
pub use ragpulse::{
    BlockLengths, CompanionError, SEGMENTS, Segment, looks_like as looks_like_ragpulse,
    segment_index,
};
pub use recording_grid::{
    ArrivalGaps, GRID_LADDER, GapBin, MAX_GAP_BINS, WINDOW_TICKS, recording_grid,
};
pub use schema::{
    ArrivalField, ArrivalUnit, ISO8601, PrefixBlocksField, SchemaDoc, SchemaError, TRACE_SCHEMA,
    TRACE_SCHEMA_MAX_BYTES, TraceSchema,
};
pub use segments::{SegmentReport, SegmentSharing};
pub use shard::{Shard, ShardMeta, ShardRows};
pub use shard_error::ShardError;

/// A source layout loadproof can read. Detected from the header; `--format` forces one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// BurstGPT CSV, releases 1/2 (6 columns) and 3 (8 columns, `Session ID` and
    /// `Elapsed time` inserted at positions 1–2). Timestamps in seconds.
    Burstgpt,
    /// Mooncake JSONL: `timestamp` (ms), `input_length`, `output_length`, `hash_ids`
    /// (one id per 512-token block).
    Mooncake,
    /// Azure LLM inference CSV, 2023 and 2024: `TIMESTAMP,ContextTokens,GeneratedTokens`.
    Azure,
    /// Any CSV or JSONL log read through a declared mapping (`--schema`): never detected.
    Mapped,
    /// RAGPulse JSONL: `hash_ids` an object of named segments whose ids' token lengths five
    /// companion files give.
    Ragpulse,
}

impl Format {
    /// Every format, in a stable order.
    pub const ALL: [Format; 5] = [
        Format::Burstgpt,
        Format::Mooncake,
        Format::Azure,
        Format::Mapped,
        Format::Ragpulse,
    ];

    /// The stable lowercase name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Format::Burstgpt => "burstgpt",
            Format::Mooncake => "mooncake",
            Format::Azure => "azure",
            Format::Mapped => "mapped",
            Format::Ragpulse => "ragpulse",
        }
    }

    /// Parses [`Format::name`].
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a row that was read could not be used. Each is a defect of the data, never a choice of
/// the caller (those are [`FilterReason`]s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Wrong number of cells, an unterminated quote, invalid JSON, not UTF-8, a bad
    /// `hash_ids` list, or a line over the length limit.
    MalformedRow,
    /// A required field is absent or empty.
    MissingField,
    /// A required field is not a number.
    NonNumeric,
    /// A number that is NaN or infinite.
    NonFinite,
    /// A number below zero where the field cannot be.
    NegativeValue,
    /// A number the field cannot hold (a fractional token count, or too large).
    OutOfRange,
    /// Zero prompt tokens: nothing to send.
    ZeroInputTokens,
    /// Zero completion tokens: BurstGPT marks failed requests this way.
    ZeroOutputTokens,
    /// Earlier than a previously accepted row in a format that promises arrival order.
    NonMonotonicArrival,
    /// A copy of the header line inside the data (concatenated files).
    DuplicateHeader,
    /// A JSON row with one key twice: readers that keep the first and readers that keep the
    /// last would read two different rows.
    DuplicateKey,
    /// A row whose columns contradict each other (BurstGPT: `Total tokens` is not
    /// `Request tokens` + `Response tokens`).
    InconsistentTotal,
    /// More prefix blocks than the row's prompt has tokens (Mooncake `hash_ids`): no block size
    /// fits them, so the ids cannot belong to this prompt.
    PrefixBlocksExceedPrompt,
    /// A block id its companion file does not list (RAGPulse): its length, so the prompt it
    /// belongs to, is unknown.
    UnknownBlockId,
}

impl DropReason {
    /// Every reason, in a stable order.
    pub const ALL: [DropReason; 14] = [
        DropReason::MalformedRow,
        DropReason::MissingField,
        DropReason::NonNumeric,
        DropReason::NonFinite,
        DropReason::NegativeValue,
        DropReason::OutOfRange,
        DropReason::ZeroInputTokens,
        DropReason::ZeroOutputTokens,
        DropReason::NonMonotonicArrival,
        DropReason::DuplicateHeader,
        DropReason::DuplicateKey,
        DropReason::InconsistentTotal,
        DropReason::PrefixBlocksExceedPrompt,
        DropReason::UnknownBlockId,
    ];

    /// The stable snake_case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::MalformedRow => "malformed_row",
            DropReason::MissingField => "missing_field",
            DropReason::NonNumeric => "non_numeric",
            DropReason::NonFinite => "non_finite",
            DropReason::NegativeValue => "negative_value",
            DropReason::OutOfRange => "out_of_range",
            DropReason::ZeroInputTokens => "zero_input_tokens",
            DropReason::ZeroOutputTokens => "zero_output_tokens",
            DropReason::NonMonotonicArrival => "non_monotonic_arrival",
            DropReason::DuplicateHeader => "duplicate_header",
            DropReason::DuplicateKey => "duplicate_key",
            DropReason::InconsistentTotal => "inconsistent_total",
            DropReason::PrefixBlocksExceedPrompt => "prefix_blocks_exceed_prompt",
            DropReason::UnknownBlockId => "unknown_block_id",
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a sound row was left out at the caller's request. Counted apart from defects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterReason {
    /// `--model` did not match the row's model.
    Model,
    /// `--log-type` did not match the row's log type.
    LogType,
    /// Outside the caller's time window.
    TimeWindow,
    /// After the caller's maximum number of emitted rows.
    MaxRows,
    /// A mapped log's filter column (`--where NAME=VALUE`) did not match.
    Field,
}

impl FilterReason {
    /// The stable snake_case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            FilterReason::Model => "model",
            FilterReason::LogType => "log_type",
            FilterReason::TimeWindow => "time_window",
            FilterReason::MaxRows => "max_rows",
            FilterReason::Field => "field",
        }
    }
}

impl fmt::Display for FilterReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One dropped row, kept as an example so a user can find it in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowIssue {
    /// Physical line in the file, from 1.
    pub line: u64,
    /// The column or field at fault, when one is.
    pub field: Option<String>,
    /// What was wrong, in a few words.
    pub detail: String,
}

impl fmt::Display for RowIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "line {}, field {field:?}: {}", self.line, self.detail),
            None => write!(f, "line {}: {}", self.line, self.detail),
        }
    }
}

/// Provenance and accounting of one ingested source. Deserializable so a trace parsed in a
/// browser worker can be rebuilt on the page through [`Trace::new`] (which re-checks it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceMeta {
    /// The format the rows were read as.
    pub format: Format,
    /// Which variant of the format (for example `BurstGPT_3 (8 columns)`).
    pub layout: String,
    /// Header names as seen (CSV) or the fields of the first object (JSONL).
    pub columns: Vec<String>,
    /// sha256 of every byte of the source, lowercase hex.
    pub source_sha256: String,
    /// Size of the source in bytes.
    pub bytes: u64,
    /// The file as given, when it was compressed: `source_sha256` and `bytes` are then its
    /// decompressed content's, so the same rows make the same trace however they arrived.
    /// Absent (not `null`) otherwise, so an uncompressed trace's JSON is what it always was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<Compression>,
    /// Data rows read (header and blank lines are not rows).
    pub rows_read: u64,
    /// Rows that became requests.
    pub emitted: u64,
    /// Defective rows by reason; only reasons that fired appear.
    pub dropped: BTreeMap<DropReason, u64>,
    /// Rows the caller's filters left out, by filter.
    pub filtered: BTreeMap<FilterReason, u64>,
    /// The first few dropped rows of each reason, to find them in the file.
    pub drop_examples: BTreeMap<DropReason, Vec<RowIssue>>,
    /// Blank lines skipped (not rows).
    pub blank_lines: u64,
    /// The unit the source writes timestamps in (`s`, `ms`, `datetime`).
    pub raw_time_unit: String,
    /// The first emitted row's timestamp in the source's clock, as nanoseconds. Every arrival
    /// is relative to it.
    pub clock_anchor_ns: Option<i64>,
    /// Tokens per prefix block when the source carries prefix identity (Mooncake: 512).
    pub prefix_block_tokens: Option<u32>,
    /// Emitted rows with a non-empty session id (`None` when the layout has no session column).
    pub session_rows: Option<u64>,
    /// Distinct session ids among emitted rows.
    pub sessions: Option<u64>,
    /// Emitted rows with no `hash_ids` (prefix-identity formats only).
    pub rows_without_prefix: Option<u64>,
    /// The source's recording grid: the smallest positive gap between consecutive distinct
    /// timestamps of every sound row, before the caller's filters (Mooncake: ~3 s). `None`
    /// when every sound row carries one timestamp.
    pub timestamp_resolution_ns: Option<i64>,
    /// Distinct timestamps among every sound row, before the caller's filters.
    pub distinct_timestamps: u64,
    /// Things a reader should know that are not counts.
    pub notes: Vec<String>,
    /// The sha256 of the mapping the rows were read through (`Format::Mapped` only): with the
    /// source's, what reproduces the trace as read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_sha256: Option<String>,
    /// RAGPulse's segment structure over the emitted rows (`Format::Ragpulse` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<SegmentReport>,
}

impl TraceMeta {
    /// Sum of all drop counts.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.values().sum()
    }

    /// Sum of all filter counts.
    pub fn filtered_total(&self) -> u64 {
        self.filtered.values().sum()
    }
}

/// Prefix identity: per request, the ids of the fixed-size blocks its prompt is made of.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PrefixBlocks {
    /// `offsets[i]..offsets[i+1]` indexes `ids` for request `i`; `len = requests + 1`.
    pub offsets: Vec<u64>,
    /// All block ids, request after request.
    pub ids: Vec<u64>,
}

impl PrefixBlocks {
    /// True when the offsets index the ids for `rows` requests: `rows + 1` offsets, from 0 to
    /// the number of ids, never decreasing.
    pub fn indexes(&self, rows: usize) -> bool {
        self.offsets.len() == rows + 1
            && self.offsets.first() == Some(&0)
            && self.offsets.last() == Some(&(self.ids.len() as u64))
            && self
                .offsets
                .windows(2)
                .all(|w| matches!(w, [a, b] if a <= b))
    }
}

/// One block of a request's prompt at its own token length: RAGPulse names each block by
/// segment and id, and its companion files give every id its length (512, 437, … 4 tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizedBlock {
    /// Index into [`SEGMENTS`].
    pub segment: u8,
    /// The id within its segment.
    pub id: u64,
    /// Its token length.
    pub tokens: u32,
}

/// Every request's blocks at their own lengths, in prompt order, flattened like
/// [`PrefixBlocks`]. Only a source whose blocks are not one size has them (RAGPulse read with
/// its companion files), so a client can rebuild its prompts block for block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SizedBlocks {
    /// `offsets[i]..offsets[i+1]` indexes `blocks` for request `i`; `len = requests + 1`.
    pub offsets: Vec<u64>,
    /// All blocks, request after request.
    pub blocks: Vec<SizedBlock>,
}

impl SizedBlocks {
    /// Request `i`'s blocks (empty when out of range).
    pub fn row(&self, i: usize) -> &[SizedBlock] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.blocks.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }

    /// The tokens request `i`'s blocks hold.
    pub fn row_tokens(&self, i: usize) -> u64 {
        self.row(i).iter().map(|b| u64::from(b.tokens)).sum()
    }

    /// The tokens every block holds, over every request.
    pub fn tokens(&self) -> u64 {
        self.blocks.iter().map(|b| u64::from(b.tokens)).sum()
    }

    /// True when the offsets index the blocks for `rows` requests.
    pub fn indexes(&self, rows: usize) -> bool {
        self.offsets.len() == rows + 1
            && self.offsets.first() == Some(&0)
            && self.offsets.last() == Some(&(self.blocks.len() as u64))
            && self
                .offsets
                .windows(2)
                .all(|w| matches!(w, [a, b] if a <= b))
    }
}

/// The emitted requests, column by column (memory grows with rows, not file size).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Requests {
    /// Arrival of each request in nanoseconds since the first emitted one; non-decreasing.
    pub arrival_ns: Vec<i64>,
    /// Prompt tokens of each request (> 0).
    pub input_tokens: Vec<u32>,
    /// Completion tokens of each request (> 0).
    pub output_tokens: Vec<u32>,
    /// Session index per request (`u32::MAX` = no session), when the layout has sessions.
    pub session: Option<Vec<u32>>,
    /// Prefix blocks, when the format carries prefix identity.
    pub prefix: Option<PrefixBlocks>,
    /// Blocks at their own lengths, when the format names them so (RAGPulse with its
    /// companion files).
    pub sized: Option<SizedBlocks>,
}

impl Requests {
    /// Sentinel session index for a request without a session.
    pub const NO_SESSION: u32 = u32::MAX;

    /// Prompt tokens over every request.
    pub fn input_tokens_total(&self) -> u64 {
        self.input_tokens.iter().map(|&t| u64::from(t)).sum()
    }
}

/// Why a [`Trace`] could not be constructed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// A row went missing unattributed.
    #[error(
        "rows_read={rows_read} != emitted={emitted} + dropped={dropped} + filtered={filtered}: a row went missing unattributed"
    )]
    Unattributed {
        /// Rows read.
        rows_read: u64,
        /// Rows emitted.
        emitted: u64,
        /// Rows dropped.
        dropped: u64,
        /// Rows filtered.
        filtered: u64,
    },
    /// The meta's emitted count disagrees with the requests held.
    #[error("meta says {meta} rows emitted but {held} requests are held")]
    EmittedMismatch {
        /// Count in the meta.
        meta: u64,
        /// Requests actually held.
        held: u64,
    },
    /// The columns do not all have one length, or the arrivals are not rebased and ordered.
    #[error("request columns are inconsistent: {0}")]
    Columns(&'static str),
}

/// A reconciled trace: requests plus the accounting that proves none went missing.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    meta: TraceMeta,
    requests: Requests,
}

impl Trace {
    /// Builds a trace, refusing one whose counts do not reconcile:
    /// `rows_read == emitted + dropped + filtered` and `emitted == requests`.
    pub fn new(meta: TraceMeta, requests: Requests) -> Result<Trace, ReconcileError> {
        let dropped = meta.dropped_total();
        let filtered = meta.filtered_total();
        let accounted = meta
            .emitted
            .checked_add(dropped)
            .and_then(|s| s.checked_add(filtered));
        if accounted != Some(meta.rows_read) {
            return Err(ReconcileError::Unattributed {
                rows_read: meta.rows_read,
                emitted: meta.emitted,
                dropped,
                filtered,
            });
        }
        let held = requests.arrival_ns.len() as u64;
        if meta.emitted != held {
            return Err(ReconcileError::EmittedMismatch {
                meta: meta.emitted,
                held,
            });
        }
        let n = requests.arrival_ns.len();
        if requests.input_tokens.len() != n || requests.output_tokens.len() != n {
            return Err(ReconcileError::Columns("token columns differ in length"));
        }
        if requests.session.as_ref().is_some_and(|s| s.len() != n) {
            return Err(ReconcileError::Columns("session column differs in length"));
        }
        if requests.prefix.as_ref().is_some_and(|p| !p.indexes(n)) {
            return Err(ReconcileError::Columns(
                "prefix offsets do not index the ids",
            ));
        }
        if requests.sized.as_ref().is_some_and(|p| !p.indexes(n)) {
            return Err(ReconcileError::Columns(
                "sized block offsets do not index the blocks",
            ));
        }
        if requests.arrival_ns.first().is_some_and(|&t| t != 0) {
            return Err(ReconcileError::Columns(
                "arrivals are not rebased to the first request",
            ));
        }
        if !requests
            .arrival_ns
            .windows(2)
            .all(|w| matches!(w, [a, b] if a <= b))
        {
            return Err(ReconcileError::Columns("arrivals are not in order"));
        }
        Ok(Trace { meta, requests })
    }

    /// The accounting and the requests, to rebuild a transformed trace through [`Trace::new`].
    pub fn into_parts(self) -> (TraceMeta, Requests) {
        (self.meta, self.requests)
    }

    /// Provenance and counts.
    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    /// The trace read from a compressed file: the same rows, with the file as given named.
    /// The ingester sees only the content, so the caller that decompressed says how.
    pub fn with_compression(mut self, compression: Compression) -> Trace {
        self.meta.compression = Some(compression);
        self
    }

    /// The emitted requests.
    pub fn requests(&self) -> &Requests {
        &self.requests
    }

    /// Number of emitted requests.
    pub fn len(&self) -> usize {
        self.requests.arrival_ns.len()
    }

    /// True when nothing was emitted.
    pub fn is_empty(&self) -> bool {
        self.requests.arrival_ns.is_empty()
    }

    /// Last arrival minus first, in nanoseconds (0 for fewer than two requests).
    pub fn span_ns(&self) -> i64 {
        self.requests.arrival_ns.last().copied().unwrap_or(0)
    }

    /// The prefix block ids of request `idx`, when the source carries prefix identity.
    pub fn prefix_blocks(&self, idx: usize) -> Option<&[u64]> {
        let prefix = self.requests.prefix.as_ref()?;
        let start = usize::try_from(*prefix.offsets.get(idx)?).ok()?;
        let end = usize::try_from(*prefix.offsets.get(idx + 1)?).ok()?;
        prefix.ids.get(start..end)
    }
}

/// A failure that stops ingestion: the source as a whole cannot be read as a trace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// No header or first record at all.
    #[error("empty input: no header line or first record")]
    Empty,
    /// Every line before a header could be found was over the line limit: not an empty file.
    #[error(
        "no header line or first record: the {lines} line(s) read are each longer than {limit} bytes (the line limit), so none can be a header; the file is not a trace in a known layout"
    )]
    OnlyLongLines {
        /// Lines over the limit.
        lines: u64,
        /// The limit, bytes.
        limit: usize,
    },
    /// The header matches no known layout.
    #[error(
        "line {line}: unrecognised layout; {seen_kind} seen: [{}]{hint}",
        shown_names(seen)
    )]
    UnrecognisedLayout {
        /// Line of the header or first record.
        line: u64,
        /// "columns" or "fields".
        seen_kind: &'static str,
        /// What was seen.
        seen: Vec<String>,
        /// Extra guidance, e.g. which required names were missing for a forced format.
        hint: String,
    },
    /// The header is not UTF-8.
    #[error("line {line}: header is not valid UTF-8")]
    HeaderNotUtf8 {
        /// Line of the header.
        line: u64,
    },
    /// The header repeats a column name, so columns cannot be found by name.
    #[error(
        "line {line}: column [{}] appears more than once in the header",
        shown_names(std::slice::from_ref(name))
    )]
    DuplicateColumn {
        /// Line of the header.
        line: u64,
        /// The repeated name.
        name: String,
    },
    /// A caller filter names a column this format does not have.
    #[error("--{filter} applies to BurstGPT traces only; this file is {format}")]
    FilterNotApplicable {
        /// The filter.
        filter: &'static str,
        /// The format the file was read as.
        format: Format,
    },
    /// A caller filter names a filter the mapping does not declare.
    #[error(
        "the mapping declares no filter {name:?} (it declares: [{}]); add it to the mapping's `filters`",
        declared.join(", ")
    )]
    FilterNotInSchema {
        /// The filter asked for.
        name: String,
        /// The filters the mapping declares.
        declared: Vec<String>,
    },
    /// The file does not fit the mapping in a way no row could fix.
    #[error("line {line}: {detail}")]
    SchemaMismatch {
        /// Line of the header or first record.
        line: u64,
        /// What does not fit.
        detail: String,
    },
    /// The emitted arrivals span more nanoseconds than an `i64` holds (~292 years): rebased,
    /// distinct arrivals would merge.
    #[error(
        "the arrivals span from {first} ns to {last} ns, more than 292 years: they cannot be rebased to the first without merging distinct arrivals"
    )]
    SpanTooLong {
        /// The first emitted arrival, ns in the source's clock.
        first: i64,
        /// The last emitted arrival, ns in the source's clock.
        last: i64,
    },
    /// A source read in parts could not be joined (see `ShardIngester`).
    #[error(transparent)]
    InParts(#[from] ShardError),
    /// An unhashed ingester was finished without the caller's digest.
    #[error("the source digest was not supplied (use finish_with_sha256)")]
    DigestMissing,
    /// The counts did not reconcile (a bug in an adapter, reported rather than hidden).
    #[error(transparent)]
    Reconcile(#[from] ReconcileError),
}

/// At most [`SHOWN_NAMES`] names of at most [`SHOWN_NAME_CHARS`] characters each, and how many
/// more there were: an error message stays readable whatever the header holds.
fn shown_names(seen: &[String]) -> String {
    let mut out: Vec<String> = seen
        .iter()
        .take(SHOWN_NAMES)
        .map(|name| {
            if name.chars().count() <= SHOWN_NAME_CHARS {
                name.clone()
            } else {
                let head: String = name.chars().take(SHOWN_NAME_CHARS).collect();
                format!("{head}… ({} bytes)", name.len())
            }
        })
        .collect();
    if seen.len() > SHOWN_NAMES {
        out.push(format!("… and {} more", seen.len() - SHOWN_NAMES));
    }
    out.join(", ")
}

/// Names quoted in a layout error.
const SHOWN_NAMES: usize = 16;
/// Characters quoted of each.
const SHOWN_NAME_CHARS: usize = 48;
