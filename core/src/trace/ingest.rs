//! The push parser shared by every format: bytes in, one [`Trace`] out.
//!
//! Input arrives in chunks of any size (the CLI reads a file in megabyte blocks, the browser
//! slices a `File`), so progress can be shown and memory stays bounded by emitted rows, not by
//! the file. Lines are split here; each format's adapter turns one line into a row or a
//! defect; the accounting (monotonicity, caller filters, zero-token checks, examples) is done
//! once, here, for all formats.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use sha2::{Digest, Sha256};

use super::azure::AzureColumns;
use super::burstgpt::BurstgptColumns;
use super::csv_line::Cells;
use super::hex::hex;
use super::mapped::{MappedCsv, MappedJson};
use super::mooncake;
use super::ragpulse::{self, BlockLengths, SegmentIds, SegmentTally};
use super::row::{Defect, Row};
use super::schema::TraceSchema;
use super::shard::{EXCLUDED_LOG_TYPE, EXCLUDED_MODEL, Shard, ShardMeta, ShardRows};
use super::shard_error::ShardError;
use super::{
    DropReason, FilterReason, Format, PrefixBlocks, Requests, RowIssue, SizedBlocks, Trace,
    TraceError, TraceMeta,
};

/// Bounds on what one source may make the parser hold. No `Default`: the caller picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A line longer than this is dropped as malformed without being held whole.
    pub max_line_bytes: usize,
    /// How many example rows to keep per drop reason.
    pub max_examples_per_reason: usize,
}

impl Limits {
    /// The limits the CLI and the web app use: 8 MiB lines, 5 examples per reason.
    pub const STANDARD: Limits = Limits {
        max_line_bytes: 8 << 20,
        max_examples_per_reason: 5,
    };
}

/// Rows the caller asks to leave out. Each exclusion is counted as a [`FilterReason`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallerFilter {
    /// Keep only rows whose `Model` cell equals this (BurstGPT).
    pub model: Option<String>,
    /// Keep only rows whose `Log Type` cell equals this (BurstGPT).
    pub log_type: Option<String>,
    /// Keep only rows at or after this offset (ns) from the first sound row.
    pub start_ns: Option<i64>,
    /// Keep only rows before this offset (ns) from the first sound row.
    pub end_ns: Option<i64>,
    /// Emit at most this many rows; the rest are read and counted as filtered.
    pub max_rows: Option<u64>,
    /// Keep only rows whose mapped filter column NAME equals VALUE (`--where`; a mapped log
    /// only: the mapping's `filters` name the columns).
    pub fields: BTreeMap<String, String>,
}

/// How to read a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestOptions {
    /// Force a format instead of detecting it from the header.
    pub format: Option<Format>,
    /// The caller's filters.
    pub filter: CallerFilter,
    /// Parser bounds.
    pub limits: Limits,
    /// RAGPulse's companion files, read: the token length of every segment id.
    pub block_lengths: Option<std::sync::Arc<BlockLengths>>,
    /// Read the source through this mapping instead of detecting a built-in format (a forced
    /// `format` is then not used: the trace is `Format::Mapped`).
    pub schema: Option<std::sync::Arc<TraceSchema>>,
}

impl Default for IngestOptions {
    /// Detect the format, no filters, standard limits.
    fn default() -> IngestOptions {
        IngestOptions {
            format: None,
            filter: CallerFilter::default(),
            limits: Limits::STANDARD,
            block_lengths: None,
            schema: None,
        }
    }
}

/// What the first non-blank line turned out to be.
enum Detected {
    /// A CSV header: not a row.
    Header,
    /// The first row of a JSONL file: read it as data.
    DataRow,
    /// A JSON-looking line that is not an object: a dropped row; keep looking.
    Skipped(Defect),
}

/// How many broken JSON lines may precede the first object before the file is refused.
const JSON_PRELUDE_MAX: u64 = 100;

const BOM: &[u8] = b"\xEF\xBB\xBF";

#[derive(Clone)]
enum Adapter {
    AwaitingHeader,
    Burstgpt(BurstgptColumns),
    Azure(AzureColumns),
    Mooncake,
    MappedCsv(MappedCsv),
    MappedJson(MappedJson),
    Ragpulse,
}

/// Most rows [`Ingester::reserve_for_source_bytes`] reserves room for (16 bytes a row).
pub const RESERVE_ROWS_MAX: u64 = 1 << 24;

/// Turns pushed bytes into a [`Trace`]. Feed with [`Ingester::push`], end with
/// [`Ingester::finish`].
pub struct Ingester {
    opts: IngestOptions,
    /// `None` when the caller hashes the same bytes itself (see [`Ingester::new_unhashed`]).
    hasher: Option<Sha256>,
    bytes: u64,
    carry: Vec<u8>,
    /// The current line is over the limit: skip bytes until its end.
    skipping_long_line: bool,
    line_no: u64,
    adapter: Adapter,
    /// Lines before the first JSON object that were not objects (see [`JSON_PRELUDE_MAX`]).
    json_prelude: u64,
    columns: Vec<String>,
    layout: String,
    cells: Cells,
    acc: Accumulator,
    /// Set for a [`ShardIngester`]: sound rows are recorded for a later join, not accounted.
    recorder: Option<Box<Recorder>>,
    fatal: Option<TraceError>,
    /// Read plain lines in one pass ([`super::plain_line`]); off only in the test holding
    /// that path to the general one.
    plain_lines: bool,
}

/// A sound row as the accounting sees it: the adapter's values, with the cell filters
/// (`--model`, `--log-type`) already applied, so a row read on another thread carries what
/// they decided.
struct Sound<'a> {
    ts_ns: i64,
    input: u32,
    output: u32,
    excluded: Option<FilterReason>,
    session: Option<&'a [u8]>,
    hash_ids: Option<&'a [u64]>,
    segments: Option<&'a SegmentIds>,
}

/// What a [`ShardIngester`] keeps of its sound rows.
#[derive(Default)]
struct Recorder {
    rows: ShardRows,
    names: HashMap<Box<[u8]>, u32>,
    skips: Vec<(u64, u64)>,
}

#[derive(Default)]
struct Accumulator {
    rows_read: u64,
    blank_lines: u64,
    dropped: BTreeMap<DropReason, u64>,
    filtered: BTreeMap<FilterReason, u64>,
    examples: BTreeMap<DropReason, Vec<RowIssue>>,
    /// Bit `reason as u32` set once `examples` of that reason are full (a cache: examples
    /// only grow, so a set bit stays true). A 30M-row Azure file drops 4M rows out of order,
    /// and each looked its reason's examples up to find them full.
    examples_full: u32,
    arrivals_raw: Vec<i64>,
    input: Vec<u32>,
    output: Vec<u32>,
    session: Option<Vec<u32>>,
    session_ids: HashMap<Box<[u8]>, u32>,
    session_rows: u64,
    prefix: Option<PrefixBlocks>,
    rows_without_prefix: u64,
    last_ts: Option<i64>,
    window_anchor: Option<i64>,
    /// Over every sound row, before the caller's filters: the source's recording grid.
    min_gap_ns: Option<i64>,
    distinct_timestamps: u64,
    notes: Vec<String>,
    segments: Option<SegmentTally>,
    sized: Option<SizedBlocks>,
}

impl Ingester {
    /// A fresh ingester.
    pub fn new(opts: IngestOptions) -> Ingester {
        Ingester {
            opts,
            hasher: Some(Sha256::new()),
            bytes: 0,
            carry: Vec::new(),
            skipping_long_line: false,
            line_no: 0,
            adapter: Adapter::AwaitingHeader,
            json_prelude: 0,
            columns: Vec::new(),
            layout: String::new(),
            cells: Cells::default(),
            acc: Accumulator::default(),
            recorder: None,
            fatal: None,
            plain_lines: true,
        }
    }

    /// An ingester that does not hash: the caller computes the sha256 of exactly the bytes it
    /// pushes (the CLI does it on a second core with [`Sha256Stream`]) and hands it to
    /// [`Ingester::finish_with_sha256`].
    pub fn new_unhashed(opts: IngestOptions) -> Ingester {
        Ingester {
            hasher: None,
            ..Ingester::new(opts)
        }
    }

    /// Reserves the columns for the rows a source of `bytes` bytes likely holds (one per 40
    /// bytes, about a BurstGPT row; at most [`RESERVE_ROWS_MAX`] and the caller's row limit).
    /// A hint: rows beyond it still fit, and a reservation the allocator refuses is skipped,
    /// never an abort; [`Ingester::finish`] gives back what was not used. Growing the columns
    /// row by row copies them ~20 times over on a 5M-row file, ~60 ms of the page's parse in
    /// wasm.
    pub fn reserve_for_source_bytes(&mut self, bytes: u64) {
        let cap = self.opts.filter.max_rows.unwrap_or(u64::MAX);
        let rows = usize::try_from((bytes / 40).min(RESERVE_ROWS_MAX).min(cap)).unwrap_or(0);
        let acc = &mut self.acc;
        let _ = acc
            .arrivals_raw
            .try_reserve(rows.saturating_sub(acc.arrivals_raw.len()));
        let _ = acc.input.try_reserve(rows.saturating_sub(acc.input.len()));
        let _ = acc
            .output
            .try_reserve(rows.saturating_sub(acc.output.len()));
    }

    /// Bytes pushed so far (for progress).
    pub fn bytes_seen(&self) -> u64 {
        self.bytes
    }

    /// Data rows read so far (for progress).
    pub fn rows_read(&self) -> u64 {
        self.acc.rows_read
    }

    /// Feeds the next chunk. After a fatal error every call returns it again.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), TraceError> {
        if let Some(err) = &self.fatal {
            return Err(err.clone());
        }
        if let Some(h) = &mut self.hasher {
            h.update(chunk);
        }
        self.bytes = self.bytes.saturating_add(chunk.len() as u64);
        let mut line_start = 0usize;
        loop {
            if self.carry.is_empty() && !self.skipping_long_line && self.plain_lines {
                line_start = self.read_plain_lines(chunk, line_start);
            }
            let Some(nl) = chunk
                .get(line_start..)
                .and_then(|rest| memchr::memchr(b'\n', rest))
                .map(|i| line_start + i)
            else {
                break;
            };
            let line = chunk.get(line_start..nl).unwrap_or_default();
            line_start = nl + 1;
            if self.skipping_long_line {
                self.skipping_long_line = false;
                self.line_no = self.line_no.saturating_add(1);
                continue;
            }
            if self.carry.is_empty() {
                self.line_no = self.line_no.saturating_add(1);
                if line.len() > self.opts.limits.max_line_bytes {
                    self.drop_long_line();
                } else {
                    self.handle_line(line);
                }
            } else {
                let mut carried = std::mem::take(&mut self.carry);
                carried.extend_from_slice(line);
                self.line_no = self.line_no.saturating_add(1);
                if carried.len() > self.opts.limits.max_line_bytes {
                    self.drop_long_line();
                } else {
                    self.handle_line(&carried);
                }
                carried.clear();
                self.carry = carried;
            }
            if let Some(err) = &self.fatal {
                return Err(err.clone());
            }
        }
        let rest = chunk.get(line_start..).unwrap_or_default();
        if !self.skipping_long_line {
            if self.carry.len() + rest.len() > self.opts.limits.max_line_bytes {
                self.carry.clear();
                self.skipping_long_line = true;
                // Counted when its end arrives (or at finish).
                self.drop_long_line_pending();
            } else {
                self.carry.extend_from_slice(rest);
            }
        }
        Ok(())
    }

    /// Reads the plain lines of a built-in CSV layout from `start` on in one pass each (see
    /// [`super::plain_line`]) and returns where the first line it could not read starts.
    #[inline]
    fn read_plain_lines(&mut self, chunk: &[u8], mut start: usize) -> usize {
        let max = self.opts.limits.max_line_bytes;
        // With nothing kept beside the three columns and no cell to filter on, a row is
        // accounted (or recorded, in a shard) here in a few instructions; any other goes
        // through `accept`. Half the CPU of reading a 30M-row Azure file went to `accept`'s
        // generality.
        let acc = &self.acc;
        let plain = self.opts.schema.is_none()
            && acc.session.is_none()
            && acc.prefix.is_none()
            && acc.segments.is_none()
            && acc.sized.is_none();
        let filter = &self.opts.filter;
        let lean = match &self.recorder {
            None if plain && *filter == CallerFilter::default() => Lean::Account,
            Some(r)
                if plain
                    && r.rows.session.is_none()
                    && r.rows.prefix.is_none()
                    && filter.model.is_none()
                    && filter.log_type.is_none()
                    && filter.fields.is_empty() =>
            {
                Lean::Record
            }
            _ => Lean::No,
        };
        loop {
            let rest = chunk.get(start..).unwrap_or_default();
            // A line over the length limit is left to the general path, which drops it.
            let read = match &self.adapter {
                Adapter::Burstgpt(cols) => cols.read_plain(rest, max),
                Adapter::Azure(cols) => cols.read_plain(rest, max),
                _ => None,
            };
            let Some((row, consumed)) = read else {
                return start;
            };
            start += consumed;
            self.line_no = self.line_no.saturating_add(1);
            self.acc.rows_read += 1;
            let kept = match (lean, self.recorder.as_deref_mut()) {
                (Lean::Account, _) => self.acc.keep_plain(row.ts_ns, row.input, row.output),
                (Lean::Record, Some(recorder)) => {
                    recorder.record_row(row.ts_ns, row.input, row.output, self.line_no);
                    true
                }
                _ => false,
            };
            if !kept {
                self.accept(row);
            }
        }
    }

    /// The arrival gaps of the trace [`Ingester::finish`] would make now, when every line
    /// pushed is read (no unterminated line is waiting for its end): `ArrivalGaps::of` that
    /// trace, computed before it exists, so a caller can overlap it with hashing the source.
    /// `None` while a line is unfinished, or once the source is refused.
    pub fn arrival_gaps(&self) -> Option<super::ArrivalGaps> {
        let finished = self.carry.is_empty() && !self.skipping_long_line && self.fatal.is_none();
        let detected = !matches!(self.adapter, Adapter::AwaitingHeader);
        (finished && detected && self.recorder.is_none())
            .then(|| super::ArrivalGaps::of_raw_arrivals(&self.acc.arrivals_raw))
    }

    /// Ends the input: reads the final unterminated line, rebases arrivals and constructs the
    /// reconciled trace.
    pub fn finish(mut self) -> Result<Trace, TraceError> {
        match self.hasher.take() {
            Some(h) => {
                let digest: [u8; 32] = h.finalize().into();
                self.finish_with_sha256(digest)
            }
            None => Err(TraceError::DigestMissing),
        }
    }

    /// As [`Ingester::finish`], with the sha256 of every pushed byte computed by the caller.
    pub fn finish_with_sha256(mut self, sha256: [u8; 32]) -> Result<Trace, TraceError> {
        self.end_input()?;
        let format = match &self.adapter {
            Adapter::AwaitingHeader if self.acc.rows_read > 0 => {
                return Err(TraceError::OnlyLongLines {
                    lines: self.acc.rows_read,
                    limit: self.opts.limits.max_line_bytes,
                });
            }
            Adapter::AwaitingHeader => return Err(TraceError::Empty),
            Adapter::Burstgpt(_) => Format::Burstgpt,
            Adapter::Azure(cols) => {
                self.acc.notes.extend(cols.notes());
                Format::Azure
            }
            Adapter::Mooncake => Format::Mooncake,
            Adapter::MappedCsv(_) | Adapter::MappedJson(_) => Format::Mapped,
            Adapter::Ragpulse => Format::Ragpulse,
        };
        let mut acc = self.acc;
        // A reservation larger than the rows kept (`reserve_for_source_bytes`) is given back.
        acc.arrivals_raw.shrink_to_fit();
        acc.input.shrink_to_fit();
        acc.output.shrink_to_fit();
        let anchor = acc.arrivals_raw.first().copied();
        // Arrivals are in order, so the last is the farthest from the first: a span past i64
        // nanoseconds (292 years) would rebase by saturating, merging distinct arrivals.
        if let (Some(first), Some(&last)) = (anchor, acc.arrivals_raw.last())
            && last.checked_sub(first).is_none()
        {
            return Err(TraceError::SpanTooLong { first, last });
        }
        // Rebase in place: no second column of arrivals is ever held.
        let mut arrival_ns = acc.arrivals_raw;
        if let Some(a) = anchor {
            for t in &mut arrival_ns {
                *t = t.saturating_sub(a);
            }
        }
        let emitted = arrival_ns.len() as u64;
        let has_sessions = acc.session.is_some();
        let schema = self.opts.schema.as_deref();
        let prefix_block_tokens = match &self.adapter {
            Adapter::Mooncake => Some(mooncake::BLOCK_TOKENS),
            Adapter::MappedJson(m) if m.has_prefix() => schema
                .and_then(|s| s.doc().prefix_blocks.as_ref())
                .map(|p| p.block_tokens),
            _ => None,
        };
        let meta = TraceMeta {
            format,
            layout: self.layout,
            columns: self.columns,
            source_sha256: hex(&sha256),
            bytes: self.bytes,
            compression: None,
            rows_read: acc.rows_read,
            emitted,
            dropped: acc.dropped,
            filtered: acc.filtered,
            drop_examples: acc.examples,
            blank_lines: acc.blank_lines,
            raw_time_unit: match (format, schema) {
                (Format::Burstgpt, _) => "s",
                (Format::Mooncake, _) => "ms",
                (Format::Azure, _) => "datetime",
                (Format::Mapped, Some(s)) => s.doc().arrival.unit.name(),
                (Format::Mapped, None) => "",
                (Format::Ragpulse, _) => "s",
            }
            .to_owned(),
            clock_anchor_ns: anchor,
            prefix_block_tokens,
            session_rows: has_sessions.then_some(acc.session_rows),
            sessions: has_sessions.then_some(acc.session_ids.len() as u64),
            rows_without_prefix: prefix_block_tokens.map(|_| acc.rows_without_prefix),
            timestamp_resolution_ns: acc.min_gap_ns,
            distinct_timestamps: acc.distinct_timestamps,
            notes: acc.notes,
            schema_sha256: schema
                .filter(|_| format == Format::Mapped)
                .map(|s| s.sha256().to_owned()),
            segments: acc
                .segments
                .map(|t| t.report(self.opts.block_lengths.as_deref())),
        };
        let requests = Requests {
            arrival_ns,
            input_tokens: acc.input,
            output_tokens: acc.output,
            session: acc.session,
            prefix: acc.prefix,
            sized: acc.sized,
        };
        Ok(Trace::new(meta, requests)?)
    }

    /// The input is over: counts a long line still being skipped, reads the final
    /// unterminated line, and returns a fatal error if there was one.
    fn end_input(&mut self) -> Result<(), TraceError> {
        if let Some(err) = self.fatal.take() {
            return Err(err);
        }
        if self.skipping_long_line {
            self.line_no = self.line_no.saturating_add(1);
        } else if !self.carry.is_empty() {
            let last = std::mem::take(&mut self.carry);
            self.line_no = self.line_no.saturating_add(1);
            self.handle_line(&last);
        }
        match self.fatal.take() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    fn drop_long_line(&mut self) {
        self.acc.rows_read += 1;
        let limit = self.opts.limits.max_line_bytes;
        self.record_drop(Defect::new(
            DropReason::MalformedRow,
            None,
            format!("line longer than {limit} bytes"),
        ));
    }

    fn drop_long_line_pending(&mut self) {
        // The line number of the pending line is the next one.
        self.line_no = self.line_no.saturating_add(1);
        self.drop_long_line();
        self.line_no = self.line_no.saturating_sub(1);
    }

    fn handle_line(&mut self, line: &[u8]) {
        let mut line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Adapter::AwaitingHeader = self.adapter {
            if line.trim_ascii().is_empty() {
                self.acc.blank_lines += 1;
                return;
            }
            line = line.strip_prefix(BOM).unwrap_or(line);
            match self.detect(line) {
                Ok(Detected::Header) => return,
                Ok(Detected::DataRow) => {}
                Ok(Detected::Skipped(defect)) => {
                    self.acc.rows_read += 1;
                    self.record_drop(defect);
                    return;
                }
                Err(err) => {
                    self.fatal = Some(err);
                    return;
                }
            }
        }
        if line.trim_ascii().is_empty() {
            self.acc.blank_lines += 1;
            return;
        }
        self.acc.rows_read += 1;
        let mut cells = std::mem::take(&mut self.cells);
        let outcome = match &self.adapter {
            Adapter::AwaitingHeader => {
                Err(Defect::new(DropReason::MalformedRow, None, "no header"))
            }
            Adapter::Burstgpt(cols) => cols.read(line, &mut cells),
            Adapter::Azure(cols) => cols.read(line, &mut cells),
            Adapter::Mooncake => mooncake::read(line),
            Adapter::MappedCsv(cols) => cols.read(line, &mut cells),
            Adapter::MappedJson(fields) => fields.read(line),
            Adapter::Ragpulse => match ragpulse::read(line, self.opts.block_lengths.as_deref()) {
                Ok((row, segs)) => {
                    self.accept_segmented(row, &segs);
                    self.cells = cells;
                    return;
                }
                Err(d) => Err(d),
            },
        };
        match outcome {
            Ok(row) => self.accept(row),
            // Only a row that failed is compared with the header: the happy path pays nothing.
            Err(_) if self.is_repeated_header(line) => self.record_drop(Defect::new(
                DropReason::DuplicateHeader,
                None,
                "the header line again",
            )),
            Err(defect) => self.record_drop(defect),
        }
        self.cells = cells;
    }

    /// True when a CSV data line names the header's columns again (after concatenated files),
    /// however it is quoted, padded or BOM-prefixed.
    fn is_repeated_header(&self, line: &[u8]) -> bool {
        if matches!(
            self.adapter,
            Adapter::Mooncake
                | Adapter::MappedJson(_)
                | Adapter::Ragpulse
                | Adapter::AwaitingHeader
        ) {
            return false;
        }
        let line = line.strip_prefix(BOM).unwrap_or(line);
        let mut cells = Cells::default();
        if cells.split(line).is_err() || cells.len() != self.columns.len() {
            return false;
        }
        self.columns
            .iter()
            .enumerate()
            .all(|(i, name)| cells.get(line, i).trim_ascii() == name.as_bytes())
    }

    /// Reads the first non-blank line: a CSV header, or the first object of a JSONL file.
    fn detect(&mut self, line: &[u8]) -> Result<Detected, TraceError> {
        let forced = self.opts.format;
        let looks_json = line.trim_ascii_start().first() == Some(&b'{');
        if let Some(schema) = self.opts.schema.clone() {
            return self.detect_mapped(&schema, line, looks_json);
        }
        if looks_json
            && (forced == Some(Format::Ragpulse)
                || (forced.is_none() && ragpulse::looks_like(line)))
        {
            self.check_filters_apply(Format::Ragpulse)?;
            self.columns = mooncake::field_names(line).unwrap_or_default();
            let known = self.opts.block_lengths.is_some();
            self.layout = if known {
                "RAGPulse JSONL (segmented hash_ids, per-id token lengths from the 5 companion files)"
            } else {
                "RAGPulse JSONL (segmented hash_ids; no companion files: segment lengths unknown)"
            }
            .to_owned();
            self.acc.session = Some(Vec::new());
            self.acc.segments = Some(SegmentTally::default());
            if known {
                self.acc.sized = Some(SizedBlocks {
                    offsets: vec![0],
                    blocks: Vec::new(),
                });
            }
            self.acc.notes.push(if known {
                "hash_ids read as RAGPulse segments with each id's own token length; the trace's prefix blocks are left empty: the blocks are not one size, so no fixed-size prefix identity is claimed".to_owned()
            } else {
                "hash_ids read as RAGPulse segment ids without lengths (the companion files 1_sys_prompt.jsonl … 5_web_search.jsonl were not given): ids recur as reported, their tokens are unknown".to_owned()
            });
            self.adapter = Adapter::Ragpulse;
            return Ok(Detected::DataRow);
        }
        if looks_json && forced.is_none_or(|f| f == Format::Mooncake) {
            let fields = match mooncake::field_names(line) {
                Ok(fields) => fields,
                Err(_) if forced == Some(Format::Mooncake) => Vec::new(),
                Err(err) => return self.broken_first_object(&err),
            };
            let recognised = fields.iter().any(|f| mooncake::KNOWN.contains(&f.as_str()));
            if recognised || forced == Some(Format::Mooncake) {
                self.check_filters_apply(Format::Mooncake)?;
                self.columns = fields;
                self.layout = "Mooncake JSONL (512-token hash_ids blocks)".to_owned();
                self.adapter = Adapter::Mooncake;
                self.acc.prefix = Some(PrefixBlocks {
                    offsets: vec![0],
                    ids: Vec::new(),
                });
                self.acc
                    .notes
                    .push("hash_ids read as 512-token prefix blocks".to_owned());
                return Ok(Detected::DataRow);
            }
            return Err(TraceError::UnrecognisedLayout {
                line: self.line_no,
                seen_kind: "fields",
                seen: fields,
                hint: format!(
                    "; a Mooncake trace has fields {}",
                    mooncake::KNOWN.join(", ")
                ),
            });
        }
        let Ok(text) = std::str::from_utf8(line) else {
            return Err(TraceError::HeaderNotUtf8 { line: self.line_no });
        };
        let mut cells = Cells::default();
        let names: Vec<String> = match cells.split(line) {
            Ok(()) => (0..cells.len())
                .map(|i| String::from_utf8_lossy(cells.get(line, i).trim_ascii()).into_owned())
                .collect(),
            Err(_) => vec![text.to_owned()],
        };
        // One pass with a set: a header of a million columns is linear, not quadratic.
        let mut seen: std::collections::HashSet<&str> =
            std::collections::HashSet::with_capacity(names.len());
        if let Some(name) = names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(TraceError::DuplicateColumn {
                line: self.line_no,
                name: name.clone(),
            });
        }
        let want_burst = forced.is_none_or(|f| f == Format::Burstgpt);
        let want_azure = forced.is_none_or(|f| f == Format::Azure);
        if want_burst && let Some(cols) = BurstgptColumns::from_header(&names) {
            self.check_filters_apply(Format::Burstgpt)?;
            self.layout = cols.layout().to_owned();
            self.acc.notes.extend(cols.notes(&names));
            if cols.has_sessions() {
                self.acc.session = Some(Vec::new());
            }
            self.adapter = Adapter::Burstgpt(cols);
        } else if want_azure && let Some(cols) = AzureColumns::from_header(&names) {
            self.check_filters_apply(Format::Azure)?;
            self.layout =
                "Azure LLM inference (TIMESTAMP,ContextTokens,GeneratedTokens)".to_owned();
            self.adapter = Adapter::Azure(cols);
        } else {
            let hint = match forced {
                Some(Format::Burstgpt) => BurstgptColumns::missing_hint(&names),
                Some(Format::Azure) => AzureColumns::missing_hint(&names),
                Some(Format::Mooncake) => "; a Mooncake trace is JSON lines, one object per line".to_owned(),
                Some(Format::Mapped) => "; a mapped log is read with --schema FILE".to_owned(),
                Some(Format::Ragpulse) => "; a RAGPulse trace is JSON lines, one object per line".to_owned(),
                None => "; known layouts: BurstGPT (Timestamp, Model, Request tokens, Response tokens, Total tokens, Log Type[, Session ID, Elapsed time]), Azure (TIMESTAMP, ContextTokens, GeneratedTokens), Mooncake JSONL (timestamp, input_length, output_length, hash_ids)".to_owned(),
            };
            return Err(TraceError::UnrecognisedLayout {
                line: self.line_no,
                seen_kind: "columns",
                seen: names,
                hint,
            });
        }
        self.columns = names;
        Ok(Detected::Header)
    }

    /// A JSON-looking first line that is not an object. A broken first object is a broken row,
    /// not a different format: counted, and the next line looked at, for a while.
    fn broken_first_object(&mut self, err: &serde_json::Error) -> Result<Detected, TraceError> {
        if self.json_prelude < JSON_PRELUDE_MAX {
            self.json_prelude += 1;
            return Ok(Detected::Skipped(Defect::new(
                DropReason::MalformedRow,
                None,
                format!("not a JSON object: {err}"),
            )));
        }
        Err(TraceError::UnrecognisedLayout {
            line: self.line_no,
            seen_kind: "fields",
            seen: vec![format!(
                "<no JSON object in the first {JSON_PRELUDE_MAX} lines: {err}>"
            )],
            hint: String::new(),
        })
    }

    /// Reads the first non-blank line of a log read through the caller's mapping: a CSV
    /// header whose names hold the mapping's columns, or a JSONL object with its fields.
    fn detect_mapped(
        &mut self,
        schema: &TraceSchema,
        line: &[u8],
        looks_json: bool,
    ) -> Result<Detected, TraceError> {
        let shown = schema
            .doc()
            .name
            .as_deref()
            .map(|n| format!("{n:?}, "))
            .unwrap_or_default();
        let sha = schema.sha256().get(..12).unwrap_or_default();
        let unit = schema.doc().arrival.unit.name();
        if looks_json {
            let fields = match mooncake::field_names(line) {
                Ok(fields) => fields,
                Err(err) => return self.broken_first_object(&err),
            };
            let mapped =
                MappedJson::from_first(schema, &wanted(&self.opts.filter), &fields, self.line_no)?;
            if mapped.has_sessions() {
                self.acc.session = Some(Vec::new());
            }
            if mapped.has_prefix() {
                self.acc.prefix = Some(PrefixBlocks {
                    offsets: vec![0],
                    ids: Vec::new(),
                });
            }
            self.columns = fields;
            self.layout = format!("mapped JSONL ({shown}mapping sha256 {sha}…, arrival in {unit})");
            self.adapter = Adapter::MappedJson(mapped);
            return Ok(Detected::DataRow);
        }
        if std::str::from_utf8(line).is_err() {
            return Err(TraceError::HeaderNotUtf8 { line: self.line_no });
        }
        let mut cells = Cells::default();
        if cells.split(line).is_err() {
            return Err(TraceError::SchemaMismatch {
                line: self.line_no,
                detail: "the header is not a CSV line (an unterminated quote)".to_owned(),
            });
        }
        let names: Vec<String> = (0..cells.len())
            .map(|i| String::from_utf8_lossy(cells.get(line, i).trim_ascii()).into_owned())
            .collect();
        let mut seen: std::collections::HashSet<&str> =
            std::collections::HashSet::with_capacity(names.len());
        if let Some(name) = names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(TraceError::DuplicateColumn {
                line: self.line_no,
                name: name.clone(),
            });
        }
        let mapped =
            MappedCsv::from_header(schema, &wanted(&self.opts.filter), &names, self.line_no)?;
        if mapped.has_sessions() {
            self.acc.session = Some(Vec::new());
        }
        self.columns = names;
        self.layout = format!("mapped CSV ({shown}mapping sha256 {sha}…, arrival in {unit})");
        self.adapter = Adapter::MappedCsv(mapped);
        Ok(Detected::Header)
    }

    /// `--model` and `--log-type` name BurstGPT columns: on any other format they would
    /// silently filter out every row, so they are refused instead.
    fn check_filters_apply(&self, format: Format) -> Result<(), TraceError> {
        let filter = &self.opts.filter;
        if !filter.fields.is_empty() {
            return Err(TraceError::FilterNotApplicable {
                filter: "where",
                format,
            });
        }
        if format == Format::Burstgpt {
            return Ok(());
        }
        let named = if filter.model.is_some() {
            Some("model")
        } else if filter.log_type.is_some() {
            Some("log_type")
        } else {
            None
        };
        match named {
            Some(filter) => Err(TraceError::FilterNotApplicable { filter, format }),
            None => Ok(()),
        }
    }

    /// A row the adapter read: accounted now, or recorded for a join (a shard).
    /// A RAGPulse row and its segments: accounted now (its source is never read in parts).
    fn accept_segmented(&mut self, row: Row<'_>, segments: &SegmentIds) {
        self.account(Sound {
            ts_ns: row.ts_ns,
            input: row.input,
            output: row.output,
            excluded: None,
            session: row.session.as_deref(),
            hash_ids: None,
            segments: Some(segments),
        });
    }

    fn accept(&mut self, row: Row<'_>) {
        let filter = &self.opts.filter;
        let excluded = if row.excluded.is_some() {
            row.excluded
        } else if self.opts.schema.is_some() {
            // A mapped log's adapter decided every filter it has.
            None
        } else if filter
            .model
            .as_ref()
            .is_some_and(|m| row.model.map(<[u8]>::trim_ascii) != Some(m.as_bytes()))
        {
            Some(FilterReason::Model)
        } else if filter
            .log_type
            .as_ref()
            .is_some_and(|t| row.log_type.map(<[u8]>::trim_ascii) != Some(t.as_bytes()))
        {
            Some(FilterReason::LogType)
        } else {
            None
        };
        let sound = Sound {
            ts_ns: row.ts_ns,
            input: row.input,
            output: row.output,
            excluded,
            session: row.session.as_deref(),
            hash_ids: row.hash_ids.as_deref(),
            segments: None,
        };
        match self.recorder.as_deref_mut() {
            Some(recorder) => {
                let cell_filtered = filter.model.is_some()
                    || filter.log_type.is_some()
                    || !filter.fields.is_empty();
                recorder.record(&sound, self.line_no, cell_filtered);
            }
            None => self.account(sound),
        }
    }

    fn account(&mut self, row: Sound<'_>) {
        let acc = &mut self.acc;
        if let Some(last) = acc.last_ts
            && row.ts_ns < last
        {
            let detail = if acc.examples_full(DropReason::NonMonotonicArrival, &self.opts.limits) {
                Cow::Borrowed("")
            } else {
                Cow::Owned(format!(
                    "earlier than the previous row by {} ns",
                    last.saturating_sub(row.ts_ns)
                ))
            };
            let field = time_field(&self.adapter);
            self.record_drop(Defect {
                reason: DropReason::NonMonotonicArrival,
                field,
                detail,
            });
            return;
        }
        match acc.last_ts {
            None => acc.distinct_timestamps = 1,
            Some(prev) if row.ts_ns > prev => {
                acc.distinct_timestamps += 1;
                let gap = row.ts_ns.saturating_sub(prev);
                acc.min_gap_ns = Some(acc.min_gap_ns.map_or(gap, |m| m.min(gap)));
            }
            Some(_) => {}
        }
        acc.last_ts = Some(row.ts_ns);
        let anchor = *acc.window_anchor.get_or_insert(row.ts_ns);
        let filter = &self.opts.filter;
        let offset = row.ts_ns.saturating_sub(anchor);
        let filtered = if row.excluded.is_some() {
            row.excluded
        } else if filter.start_ns.is_some_and(|s| offset < s)
            || filter.end_ns.is_some_and(|e| offset >= e)
        {
            Some(FilterReason::TimeWindow)
        } else if filter
            .max_rows
            .is_some_and(|m| acc.arrivals_raw.len() as u64 >= m)
        {
            Some(FilterReason::MaxRows)
        } else {
            None
        };
        if let Some(reason) = filtered {
            *acc.filtered.entry(reason).or_insert(0) += 1;
            return;
        }
        if row.input == 0 {
            let field = input_field(&self.adapter);
            self.record_drop(Defect {
                reason: DropReason::ZeroInputTokens,
                field,
                detail: Cow::Borrowed("0 prompt tokens"),
            });
            return;
        }
        if row.output == 0 {
            let field = output_field(&self.adapter);
            self.record_drop(Defect {
                reason: DropReason::ZeroOutputTokens,
                field,
                detail: Cow::Borrowed("0 completion tokens"),
            });
            return;
        }
        acc.arrivals_raw.push(row.ts_ns);
        acc.input.push(row.input);
        acc.output.push(row.output);
        if let Some(sessions) = &mut acc.session {
            let idx = match row
                .session
                .map(<[u8]>::trim_ascii)
                .filter(|s| !s.is_empty())
            {
                Some(id) => {
                    acc.session_rows += 1;
                    let next = acc.session_ids.len() as u32;
                    match acc.session_ids.get(id) {
                        Some(&idx) => idx,
                        None => {
                            acc.session_ids.insert(id.into(), next);
                            next
                        }
                    }
                }
                None => Requests::NO_SESSION,
            };
            sessions.push(idx);
        }
        if let (Some(tally), Some(segs)) = (&mut acc.segments, row.segments) {
            tally.add(segs, row.input, self.opts.block_lengths.as_deref());
        }
        if let (Some(sized), Some(segs), Some(lengths)) = (
            &mut acc.sized,
            row.segments,
            self.opts.block_lengths.as_deref(),
        ) {
            ragpulse::push_sized(segs, lengths, &mut sized.blocks);
            sized.offsets.push(sized.blocks.len() as u64);
        }
        if let Some(prefix) = &mut acc.prefix {
            match row.hash_ids {
                Some(ids) if !ids.is_empty() => prefix.ids.extend_from_slice(ids),
                _ => acc.rows_without_prefix += 1,
            }
            prefix.offsets.push(prefix.ids.len() as u64);
        }
    }

    fn record_drop(&mut self, defect: Defect) {
        let acc = &mut self.acc;
        *acc.dropped.entry(defect.reason).or_insert(0) += 1;
        if acc.examples_full(defect.reason, &self.opts.limits) {
            return;
        }
        let examples = acc.examples.entry(defect.reason).or_default();
        if examples.len() < self.opts.limits.max_examples_per_reason {
            examples.push(RowIssue {
                line: self.line_no,
                field: defect.field.map(Cow::into_owned),
                detail: defect.detail.into_owned(),
            });
        }
    }
}

impl Accumulator {
    /// Keeps a row that [`Ingester::account`] would keep with nothing else to do (no caller
    /// filter, nothing kept beside the three columns): a sound row, in order, doing what
    /// `account` does with it and nothing it would not. False, and nothing changed, for any
    /// other row: `account` decides it.
    #[inline]
    fn keep_plain(&mut self, ts_ns: i64, input: u32, output: u32) -> bool {
        if input == 0 || output == 0 || self.last_ts.is_some_and(|last| ts_ns < last) {
            return false;
        }
        match self.last_ts {
            None => self.distinct_timestamps = 1,
            Some(prev) if ts_ns > prev => {
                self.distinct_timestamps += 1;
                let gap = ts_ns.saturating_sub(prev);
                self.min_gap_ns = Some(self.min_gap_ns.map_or(gap, |m| m.min(gap)));
            }
            Some(_) => {}
        }
        self.last_ts = Some(ts_ns);
        self.window_anchor.get_or_insert(ts_ns);
        self.arrivals_raw.push(ts_ns);
        self.input.push(input);
        self.output.push(output);
        true
    }
}

// `Accumulator::examples_full` keeps one bit per reason.
const _: () = assert!(DropReason::ALL.len() <= 32);

/// How [`Ingester::read_plain_lines`] may keep a row without `accept`.
#[derive(Clone, Copy)]
enum Lean {
    /// Account it: [`Accumulator::keep_plain`].
    Account,
    /// Record it for the join: [`Recorder::record_row`].
    Record,
    /// Neither: `accept` it.
    No,
}

impl Recorder {
    /// Keeps one row's columns, read on line `line` (of the shard), for a later join.
    #[inline]
    fn record_row(&mut self, ts_ns: i64, input: u32, output: u32, line: u64) {
        let rows = &mut self.rows;
        let index = rows.arrival_ns.len() as u64;
        let skip = line.saturating_sub(index + 1);
        if skip != self.skips.last().map_or(0, |&(_, s)| s) {
            self.skips.push((index, skip));
        }
        rows.arrival_ns.push(ts_ns);
        rows.input_tokens.push(input);
        rows.output_tokens.push(output);
    }

    /// Keeps one sound row read on line `line` (of the shard) for a later join.
    fn record(&mut self, row: &Sound<'_>, line: u64, cell_filtered: bool) {
        self.record_row(row.ts_ns, row.input, row.output, line);
        let rows = &mut self.rows;
        if cell_filtered {
            rows.excluded.push(match row.excluded {
                Some(FilterReason::Model) => EXCLUDED_MODEL,
                Some(FilterReason::LogType) => EXCLUDED_LOG_TYPE,
                _ => 0,
            });
        }
        if let Some(sessions) = &mut rows.session {
            let idx = match row
                .session
                .map(<[u8]>::trim_ascii)
                .filter(|s| !s.is_empty())
            {
                Some(id) => match self.names.get(id) {
                    Some(&idx) => idx,
                    None => {
                        let idx = rows.session_ends.len() as u32;
                        rows.session_names.extend_from_slice(id);
                        rows.session_ends.push(rows.session_names.len() as u64);
                        self.names.insert(id.into(), idx);
                        idx
                    }
                },
                None => Requests::NO_SESSION,
            };
            sessions.push(idx);
        }
        if let Some(prefix) = &mut rows.prefix {
            if let Some(ids) = row.hash_ids {
                prefix.ids.extend_from_slice(ids);
            }
            prefix.offsets.push(prefix.ids.len() as u64);
        }
    }
}

/// Reads a later part of a source — from a line boundary on — into a [`Shard`] for the
/// ingester of the part before it to [`Ingester::join`]. It is told the layout by the
/// source's head (its first bytes, through the header), so it reads its lines exactly as a
/// single ingester reading the whole source would; only the accounting waits for the join.
pub struct ShardIngester(Ingester);

impl ShardIngester {
    /// A shard reader for a source whose first bytes are `head` (at least through its header,
    /// or its first JSON record), read with `opts` — the options the joining ingester has.
    /// A head that is not a trace fails as [`Ingester`] would fail on it.
    pub fn new(head: &[u8], opts: IngestOptions) -> Result<ShardIngester, TraceError> {
        let mut probe = Ingester::new_unhashed(opts.clone());
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', head) {
            probe.push(head.get(start..=nl).unwrap_or_default())?;
            start = nl + 1;
            if !matches!(probe.adapter, Adapter::AwaitingHeader) {
                break;
            }
        }
        if matches!(probe.adapter, Adapter::AwaitingHeader) {
            return Err(ShardError::NoHeaderInHead.into());
        }
        if let Adapter::Azure(cols) = &probe.adapter {
            cols.set_stamps((0, 0));
        }
        if matches!(probe.adapter, Adapter::Ragpulse) {
            return Err(ShardError::Unsplittable("RAGPulse").into());
        }
        let has_sessions = probe.acc.session.is_some();
        let has_prefix = probe.acc.prefix.is_some();
        let mut shard = Ingester::new_unhashed(opts);
        shard.adapter = probe.adapter;
        shard.columns = probe.columns;
        shard.layout = probe.layout;
        let mut recorder = Recorder::default();
        recorder.rows.session = has_sessions.then(Vec::new);
        recorder.rows.prefix = has_prefix.then(|| PrefixBlocks {
            offsets: vec![0],
            ids: Vec::new(),
        });
        shard.recorder = Some(Box::new(recorder));
        Ok(ShardIngester(shard))
    }

    /// Feeds the next chunk of the part (see [`Ingester::push`]).
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), TraceError> {
        self.0.push(chunk)
    }

    /// As [`Ingester::reserve_for_source_bytes`], for the part's size.
    pub fn reserve_for_source_bytes(&mut self, bytes: u64) {
        let rows = usize::try_from((bytes / 40).min(RESERVE_ROWS_MAX)).unwrap_or(0);
        if let Some(recorder) = self.0.recorder.as_deref_mut() {
            let r = &mut recorder.rows;
            let _ = r.arrival_ns.try_reserve(rows);
            let _ = r.input_tokens.try_reserve(rows);
            let _ = r.output_tokens.try_reserve(rows);
        }
    }

    /// Bytes pushed so far (for progress).
    pub fn bytes_seen(&self) -> u64 {
        self.0.bytes
    }

    /// Ends the part: reads its final unterminated line (the source's last line, when the
    /// part is the source's end) and hands over what was read.
    pub fn finish(self) -> Result<Shard, TraceError> {
        let mut ing = self.0;
        ing.end_input()?;
        let format = adapter_format(&ing.adapter).ok_or(ShardError::NoHeaderInHead)?;
        let azure_stamps = match &ing.adapter {
            Adapter::Azure(cols) => cols.stamps(),
            _ => (0, 0),
        };
        let recorder = *ing.recorder.take().ok_or(ShardError::Misaligned)?;
        let mut rows = recorder.rows;
        rows.arrival_ns.shrink_to_fit();
        rows.input_tokens.shrink_to_fit();
        rows.output_tokens.shrink_to_fit();
        let meta = ShardMeta {
            format,
            columns: ing.columns,
            cell_filter: (ing.opts.filter.model, ing.opts.filter.log_type),
            bytes: ing.bytes,
            lines: ing.line_no,
            rows_read: ing.acc.rows_read,
            blank_lines: ing.acc.blank_lines,
            dropped: ing.acc.dropped,
            examples: ing.acc.examples,
            skips: recorder.skips,
            azure_stamps,
        };
        Ok(Shard::from_parts(meta, rows)?)
    }
}

impl Ingester {
    /// Takes over a [`Shard`]: the part of the source that follows everything pushed so far,
    /// read on another thread. Its rows go through the same accounting, in order, so the
    /// trace is the one this ingester would have made had it been pushed the shard's bytes.
    /// What was pushed must end at a line boundary, and the ingester must not hash (the
    /// caller hashes the whole source and ends with [`Ingester::finish_with_sha256`]).
    pub fn join(&mut self, shard: Shard) -> Result<(), TraceError> {
        if let Some(err) = &self.fatal {
            return Err(err.clone());
        }
        if self.hasher.is_some() {
            return Err(ShardError::Hashed.into());
        }
        if self.recorder.is_some() || !self.carry.is_empty() || self.skipping_long_line {
            return Err(ShardError::Misaligned.into());
        }
        if adapter_format(&self.adapter) != Some(shard.meta.format)
            || self.columns != shard.meta.columns
        {
            return Err(ShardError::Mismatch("layout").into());
        }
        let filter = &self.opts.filter;
        if (&filter.model, &filter.log_type)
            != (&shard.meta.cell_filter.0, &shard.meta.cell_filter.1)
        {
            return Err(ShardError::Mismatch("cell filter").into());
        }
        if self.acc.session.is_some() != shard.rows.session.is_some()
            || self.acc.prefix.is_some() != shard.rows.prefix.is_some()
        {
            return Err(ShardError::Mismatch("layout").into());
        }
        let offset = self.line_no;
        // Every count the join adds is checked before anything moves: a shard's claims that
        // overflow a counter are refused whole, never wrapped or half-joined.
        let meta = &shard.meta;
        let fits = |a: u64, b: u64| a.checked_add(b).is_some();
        let stamps_fit = match &self.adapter {
            Adapter::Azure(cols) => {
                let (with, without) = cols.stamps();
                fits(with, meta.azure_stamps.0) && fits(without, meta.azure_stamps.1)
            }
            _ => true,
        };
        let counts_fit = fits(offset, meta.lines)
            && fits(self.bytes, meta.bytes)
            && fits(self.acc.rows_read, meta.rows_read)
            && fits(self.acc.blank_lines, meta.blank_lines)
            && meta
                .dropped
                .iter()
                .all(|(r, &n)| fits(self.acc.dropped.get(r).copied().unwrap_or(0), n))
            && stamps_fit;
        if !counts_fit {
            return Err(ShardError::Inconsistent("a count overflows when joined").into());
        }
        if shard.rows.session.is_none()
            && shard.rows.prefix.is_none()
            && shard.rows.excluded.is_empty()
            && filter.start_ns.is_none()
            && filter.end_ns.is_none()
            && filter.max_rows.is_none()
        {
            self.replay_plain(&shard, offset);
        } else {
            self.replay(&shard, offset);
        }
        let meta = shard.meta;
        let acc = &mut self.acc;
        acc.rows_read = acc.rows_read.saturating_add(meta.rows_read);
        acc.blank_lines = acc.blank_lines.saturating_add(meta.blank_lines);
        for (reason, count) in meta.dropped {
            let n = acc.dropped.entry(reason).or_insert(0);
            *n = n.saturating_add(count);
        }
        // The examples kept are the first of each reason in the file: this part's, then the
        // replay's, then the shard's own, merged by line.
        let max = self.opts.limits.max_examples_per_reason;
        for (reason, examples) in meta.examples {
            let kept = acc.examples.entry(reason).or_default();
            kept.extend(examples.into_iter().map(|mut e| {
                e.line = e.line.saturating_add(offset);
                e
            }));
            kept.sort_by_key(|e| e.line);
            kept.truncate(max);
        }
        if let Adapter::Azure(cols) = &self.adapter {
            let (with, without) = cols.stamps();
            let (w, wo) = meta.azure_stamps;
            cols.set_stamps((with.saturating_add(w), without.saturating_add(wo)));
        }
        self.line_no = offset.saturating_add(meta.lines);
        self.bytes = self.bytes.saturating_add(meta.bytes);
        Ok(())
    }
}

impl Ingester {
    /// Puts every row of `shard` through [`Ingester::account`], on its own line (the shard's
    /// first line is `offset + 1`).
    fn replay(&mut self, shard: &Shard, offset: u64) {
        let rows = &shard.rows;
        let mut skips = shard.meta.skips.iter().peekable();
        let mut skip = 0;
        for i in 0..rows.arrival_ns.len() {
            while let Some(&&(row, s)) = skips.peek()
                && row as usize <= i
            {
                skip = s;
                skips.next();
            }
            // Inside the shard's lines (`Shard::from_parts`), whose end fits (checked above).
            self.line_no = offset.saturating_add(i as u64 + 1 + skip);
            let excluded = match rows.excluded.get(i) {
                Some(&EXCLUDED_MODEL) => Some(FilterReason::Model),
                Some(&EXCLUDED_LOG_TYPE) => Some(FilterReason::LogType),
                _ => None,
            };
            let session = rows
                .session
                .as_ref()
                .and_then(|s| s.get(i))
                .and_then(|&idx| shard.session_name(idx));
            let hash_ids = rows.prefix.as_ref().and_then(|p| {
                let start = usize::try_from(*p.offsets.get(i)?).ok()?;
                let end = usize::try_from(*p.offsets.get(i + 1)?).ok()?;
                p.ids.get(start..end)
            });
            let (Some(&ts_ns), Some(&input), Some(&output)) = (
                rows.arrival_ns.get(i),
                rows.input_tokens.get(i),
                rows.output_tokens.get(i),
            ) else {
                break;
            };
            self.account(Sound {
                ts_ns,
                input,
                output,
                excluded,
                session,
                hash_ids,
                segments: None,
            });
        }
    }

    /// [`Ingester::replay`] for the common shard — no sessions, prefixes or filters — in a
    /// tight loop: a row in order with tokens both ways only moves the clock and is pushed;
    /// any other goes through [`Ingester::account`] on its own line, as always.
    fn replay_plain(&mut self, shard: &Shard, offset: u64) {
        let rows = &shard.rows;
        let n = rows.arrival_ns.len();
        let acc = &mut self.acc;
        acc.arrivals_raw.reserve(n);
        acc.input.reserve(n);
        acc.output.reserve(n);
        let columns = rows
            .arrival_ns
            .iter()
            .zip(&rows.input_tokens)
            .zip(&rows.output_tokens);
        for (i, ((&ts_ns, &input), &output)) in columns.enumerate() {
            if !self.acc.keep_plain(ts_ns, input, output) {
                self.line_no = offset.saturating_add(shard.line_of(i as u64));
                self.account(Sound {
                    ts_ns,
                    input,
                    output,
                    excluded: None,
                    session: None,
                    hash_ids: None,
                    segments: None,
                });
            }
        }
    }
}

/// The caller's cell filters as a mapped log's adapter applies them: `--trace-model` on the
/// mapping's `model` filter, `--log-type` on `log_type`, each `--where` on its own name.
fn wanted(filter: &CallerFilter) -> Vec<(String, String, FilterReason)> {
    let mut out = Vec::new();
    if let Some(m) = &filter.model {
        out.push(("model".to_owned(), m.clone(), FilterReason::Model));
    }
    if let Some(t) = &filter.log_type {
        out.push(("log_type".to_owned(), t.clone(), FilterReason::LogType));
    }
    for (name, value) in &filter.fields {
        out.push((name.clone(), value.clone(), FilterReason::Field));
    }
    out
}

fn adapter_format(adapter: &Adapter) -> Option<Format> {
    match adapter {
        Adapter::AwaitingHeader => None,
        Adapter::Burstgpt(_) => Some(Format::Burstgpt),
        Adapter::Azure(_) => Some(Format::Azure),
        Adapter::Mooncake => Some(Format::Mooncake),
        Adapter::MappedCsv(_) | Adapter::MappedJson(_) => Some(Format::Mapped),
        Adapter::Ragpulse => Some(Format::Ragpulse),
    }
}

impl Accumulator {
    /// Whether the examples of `reason` are full; remembered once they are.
    fn examples_full(&mut self, reason: DropReason, limits: &Limits) -> bool {
        let bit = 1u32 << (reason as u32);
        if self.examples_full & bit != 0 {
            return true;
        }
        let full = self
            .examples
            .get(&reason)
            .is_some_and(|v| v.len() >= limits.max_examples_per_reason);
        if full {
            self.examples_full |= bit;
        }
        full
    }
}

fn time_field(adapter: &Adapter) -> Option<Cow<'static, str>> {
    match adapter {
        Adapter::Burstgpt(_) => Some(Cow::Borrowed("Timestamp")),
        Adapter::Azure(_) => Some(Cow::Borrowed("TIMESTAMP")),
        Adapter::Mooncake | Adapter::Ragpulse => Some(Cow::Borrowed("timestamp")),
        Adapter::MappedCsv(m) => Some(Cow::Owned(m.names()[0].to_owned())),
        Adapter::MappedJson(m) => Some(Cow::Owned(m.names()[0].to_owned())),
        Adapter::AwaitingHeader => None,
    }
}

fn input_field(adapter: &Adapter) -> Option<Cow<'static, str>> {
    match adapter {
        Adapter::Burstgpt(_) => Some(Cow::Borrowed("Request tokens")),
        Adapter::Azure(_) => Some(Cow::Borrowed("ContextTokens")),
        Adapter::Mooncake | Adapter::Ragpulse => Some(Cow::Borrowed("input_length")),
        Adapter::MappedCsv(m) => Some(Cow::Owned(m.names()[1].to_owned())),
        Adapter::MappedJson(m) => Some(Cow::Owned(m.names()[1].to_owned())),
        Adapter::AwaitingHeader => None,
    }
}

fn output_field(adapter: &Adapter) -> Option<Cow<'static, str>> {
    match adapter {
        Adapter::Burstgpt(_) => Some(Cow::Borrowed("Response tokens")),
        Adapter::Azure(_) => Some(Cow::Borrowed("GeneratedTokens")),
        Adapter::Mooncake | Adapter::Ragpulse => Some(Cow::Borrowed("output_length")),
        Adapter::MappedCsv(m) => Some(Cow::Owned(m.names()[2].to_owned())),
        Adapter::MappedJson(m) => Some(Cow::Owned(m.names()[2].to_owned())),
        Adapter::AwaitingHeader => None,
    }
}

/// A sha256 over a byte stream, for a caller that hashes on another thread.
#[derive(Debug, Clone, Default)]
pub struct Sha256Stream(Sha256);

impl Sha256Stream {
    /// Adds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything added.
    pub fn finalize(self) -> [u8; 32] {
        self.0.finalize().into()
    }

    /// The digest of everything added, as lowercase hex (how every digest is reported).
    pub fn finalize_hex(self) -> String {
        hex(&self.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A cell the one-pass reader must leave to the general path, or read exactly as it does.
    fn odd_cell() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "",
            "0",
            "007",
            "5.",
            ".5",
            " 7",
            "7 ",
            "-1",
            "1e3",
            "1234567890",
            "4294967296",
            "9999999999.999999999",
            "0.0000000001",
            "5\r",
            "\"3\"",
            "\"a,b\"",
            "a\"b",
            "x\r",
            "1,2",
            "2024-05-10 00:00:00.0056561234",
            "2024-02-30 00:00:00",
            " 2024-05-10 00:00:00",
            "1969-12-31 23:59:59",
            "2024-05-10 00:00:61",
            "2024-05-10 00:00:00+24:00",
            "2024-05-10 00:01:00Z",
            "2023-11-16 18:17:03.9799600",
            "2024-05-10 00:00:07+00:00",
        ])
        .prop_map(str::to_owned)
    }

    /// A row of `layout` (`S` seconds, `D` datetime, `C` count, `T` total, `X` text),
    /// sound but for the cells replaced by odd ones, with its line end.
    fn row(layout: &'static str) -> impl Strategy<Value = String> {
        let cells = (
            0u32..5,
            0u32..3000,
            0u32..3000,
            0u32..2,
            prop::collection::vec(prop::option::weighted(0.15, odd_cell()), layout.len()),
            prop::sample::select(vec!["\n", "\r\n", "\r\r\n", "\n\n", ",x\n"]),
            prop::option::weighted(0.1, 1..layout.len()),
        );
        cells.prop_map(move |(t, a, b, off, odd, end, short)| {
            let mut counts = [a, b].into_iter();
            let line: Vec<String> = layout
                .chars()
                .zip(odd)
                .map(|(kind, odd)| {
                    odd.unwrap_or_else(|| match kind {
                        'S' => format!("{t}.{a:03}"),
                        'D' => format!("2024-05-10 00:0{t}:{:02}.{a:06}+00:00", b % 60),
                        'C' => counts.next().unwrap_or(0).to_string(),
                        'T' => (a + b + off).to_string(),
                        _ => ["GPT-4", "ChatGPT", "API log", ""][(a % 4) as usize].to_owned(),
                    })
                })
                .collect();
            line.get(..short.unwrap_or(line.len()))
                .unwrap_or_default()
                .join(",")
                + end
        })
    }

    fn read(
        bytes: &[u8],
        cuts: &[usize],
        opts: &IngestOptions,
        plain: bool,
    ) -> Result<Trace, TraceError> {
        let mut ing = Ingester::new(opts.clone());
        ing.plain_lines = plain;
        let mut last = 0;
        for &c in cuts {
            let c = c.min(bytes.len()).max(last);
            ing.push(bytes.get(last..c).unwrap_or_default())?;
            last = c;
        }
        ing.push(bytes.get(last..).unwrap_or_default())?;
        ing.finish()
    }

    /// A sound Azure row of 53 bytes, over a 50-byte line limit: dropped as malformed, its
    /// stamp never parsed.
    const OVERLONG_AZURE: (&[u8], &[u8]) = (
        b"TIMESTAMP,ContextTokens,GeneratedTokens\n",
        b"2024-05-10 00:00:00.123456+00:00,123456789,987654321\n",
    );

    fn overlong_azure_general() -> (Vec<u8>, IngestOptions, Trace) {
        let bytes = [OVERLONG_AZURE.0, OVERLONG_AZURE.1].concat();
        let mut opts = IngestOptions::default();
        opts.limits.max_line_bytes = 50;
        let general = read(&bytes, &[], &opts, false).unwrap();
        assert_eq!(
            general.meta().dropped.get(&DropReason::MalformedRow),
            Some(&1)
        );
        assert_eq!(
            general.meta().notes,
            ["Azure carries no prefix or session identity"]
        );
        (bytes, opts, general)
    }

    #[test]
    fn a_line_over_the_length_limit_counts_no_parsed_timestamp() {
        let (bytes, opts, general) = overlong_azure_general();
        assert_eq!(read(&bytes, &[], &opts, true).unwrap(), general);
    }

    #[test]
    fn a_shard_with_a_line_over_the_length_limit_joins_as_the_source_read_whole() {
        let (bytes, opts, general) = overlong_azure_general();
        let (header, line) = OVERLONG_AZURE;
        let mut ing = Ingester::new_unhashed(opts.clone());
        ing.push(header).unwrap();
        let mut shard = ShardIngester::new(header, opts).unwrap();
        shard.push(line).unwrap();
        ing.join(shard.finish().unwrap()).unwrap();
        let digest: [u8; 32] = Sha256::digest(&bytes).into();
        assert_eq!(ing.finish_with_sha256(digest).unwrap(), general);
    }

    proptest! {
        #[test]
        fn a_line_read_in_one_pass_is_read_as_the_general_path_reads_it(
            (header, rows) in prop::sample::select(vec![
                ("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n", "SXCCTX"),
                ("Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n", "SXXXCCTX"),
                ("TIMESTAMP,ContextTokens,GeneratedTokens\r\n", "DCC"),
                ("ContextTokens,TIMESTAMP,Extra,GeneratedTokens\n", "CDXC"),
            ]).prop_flat_map(|(header, layout)| (Just(header), prop::collection::vec(row(layout), 0..30))),
            mut cuts in prop::collection::vec(0usize..1500, 0..4),
            model_filter in any::<bool>(),
            max_line in prop::option::of(20usize..70),
        ) {
            let mut bytes = header.as_bytes().to_vec();
            bytes.extend(rows.concat().into_bytes());
            cuts.sort_unstable();
            let mut opts = IngestOptions::default();
            if model_filter {
                opts.filter.model = Some("GPT-4".to_owned());
            }
            if let Some(max) = max_line {
                opts.limits.max_line_bytes = max;
            }
            let general = read(&bytes, &cuts, &opts, false);
            let plain = read(&bytes, &cuts, &opts, true);
            prop_assert_eq!(plain, general);
        }

        #[test]
        fn the_gaps_read_before_finish_are_the_gaps_of_the_trace_it_makes(
            (header, rows) in prop::sample::select(vec![
                ("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n", "SXCCTX"),
                ("TIMESTAMP,ContextTokens,GeneratedTokens\r\n", "DCC"),
            ]).prop_flat_map(|(header, layout)| (Just(header), prop::collection::vec(row(layout), 0..40))),
            window in any::<bool>(),
        ) {
            let mut bytes = header.as_bytes().to_vec();
            bytes.extend(rows.concat().into_bytes());
            let mut opts = IngestOptions::default();
            if window {
                opts.filter.start_ns = Some(1_000_000_000);
            }
            let mut ing = Ingester::new(opts);
            ing.push(&bytes).ok();
            let gaps = ing.arrival_gaps();
            if let Ok(trace) = ing.finish() {
                prop_assert_eq!(gaps, Some(super::super::ArrivalGaps::of(&trace)));
            }
        }
    }
}
