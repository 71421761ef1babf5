//! Replay plans: a reconciled trace turned into exactly what vLLM will replay, and the proof,
//! before anything is fired, that the file says what the trace says.
//!
//! A [`Plan`] holds the trace as it will be fired (sliced by the caller's filters at ingestion,
//! sped up by [`TimeScale`]), the [`BlockPlan`] choosing every request's `hash_ids`, and the
//! time unit of the file. It writes the `timed_trace` JSONL, builds the [`BenchCommand`], and
//! [`Plan::verify`]s a [`ReadBack`] of the written bytes. [`PlanDoc`] is `plan.json`: what was
//! planned, from what, and the verdict — every number in it recomputable by
//! [`check_document`] from the source and the file.

mod bench_command;
mod blocks;
mod fidelity;
mod peer_input;
pub mod sized_blocks;
mod timed_trace;

use std::collections::BTreeMap;
use std::fmt;
use std::io;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use bench_command::{
    BASE_URL_PLACEHOLDER, BenchCommand, BenchTarget, MIN_VLLM, MODEL_PLACEHOLDER, PYTHON_HASH_SEED,
    RESULT_DIR, RESULT_FILE, TOKENIZER_PLACEHOLDER,
};
pub use blocks::{
    BlockError, BlockPlan, ChunkOrigin, MAX_LINE_BYTES, RowBlocks, SYNTHESIZED_CHUNK,
};
pub use fidelity::{Check, Fidelity, compare};
pub use peer_input::{
    PeerInputError, PeerRow, aiperf_input, decimal_ms, decimal_s, guidellm_input,
    read_rows as read_peer_rows, row_id, row_index,
};
pub use timed_trace::{
    MultiplierError, ReadBack, RowDifference, TimeUnit, TimedTraceError, TimedTraceReader,
    write_line,
};

use crate::decimal::Decimal;
use crate::regime::{Regime, RegimeError, Window};
use crate::trace::{
    CallerFilter, Compression, DropReason, FilterReason, Format, ReconcileError, Trace,
};

/// Schema identity of [`PlanDoc`].
pub const PLAN_SCHEMA: &str = "loadproof.plan/v1";
/// The plan document's file name inside a plan directory.
pub const PLAN_FILE: &str = "plan.json";
/// The `timed_trace` file's name inside a plan directory.
pub const TIMED_TRACE_FILE: &str = "timed_trace.jsonl";

/// A speed-up applied to arrivals: `2` replays twice as fast. Kept as the caller's decimal
/// text and applied as an exact fraction, so the same plan is rebuilt bit for bit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TimeScale {
    text: String,
    num: u128,
    den: u128,
}

impl TimeScale {
    /// No speed-up.
    pub fn one() -> TimeScale {
        TimeScale {
            text: "1".to_owned(),
            num: 1,
            den: 1,
        }
    }

    /// Parses a positive decimal (`2`, `0.5`, `1e3`).
    pub fn parse(text: &str) -> Result<TimeScale, PlanError> {
        let bad = || PlanError::TimeScale(text.to_owned());
        let d = Decimal::parse(text.as_bytes()).map_err(|_| bad())?;
        let (num, den) = d.as_fraction().ok_or_else(bad)?;
        if num == 0 {
            return Err(bad());
        }
        Ok(TimeScale {
            text: text.trim().to_owned(),
            num,
            den,
        })
    }

    /// True for 1.
    pub fn is_one(&self) -> bool {
        self.num == self.den
    }

    /// `ns / scale`, rounded half up; `None` on overflow.
    pub fn apply(&self, ns: i64) -> Option<i64> {
        let ns = u128::try_from(ns).ok()?;
        let scaled = ns.checked_mul(self.den)?.checked_add(self.num / 2)? / self.num;
        i64::try_from(scaled).ok()
    }

    /// The factor as an `f64`, for messages.
    pub fn factor(&self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl TryFrom<String> for TimeScale {
    type Error = PlanError;
    fn try_from(text: String) -> Result<TimeScale, PlanError> {
        TimeScale::parse(&text)
    }
}

impl From<TimeScale> for String {
    fn from(t: TimeScale) -> String {
        t.text
    }
}

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// Nothing to replay.
    #[error("the trace has no requests left to replay (after drops and the caller's slice)")]
    Empty,
    /// The speed-up is not a positive number, or overflows the arrivals.
    #[error("--time-scale {0:?} must be a positive number that keeps arrivals within range")]
    TimeScale(String),
    /// The chunk size or ids cannot be planned.
    #[error(transparent)]
    Blocks(#[from] BlockError),
    /// Rebuilding the scaled trace failed (a bug, reported rather than hidden).
    #[error(transparent)]
    Reconcile(#[from] ReconcileError),
}

impl From<RegimeError> for PlanError {
    fn from(e: RegimeError) -> PlanError {
        match e {
            RegimeError::EmptyTrace => PlanError::Empty,
        }
    }
}

/// The caller's choices for a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// `--chunk-size`; `None` takes the source's block size, or [`SYNTHESIZED_CHUNK`].
    pub chunk_size: Option<u32>,
    /// `--time-scale`.
    pub time_scale: TimeScale,
    /// The burstiness window of the regime and of the fidelity check.
    pub window: Window,
    /// What the bench command is aimed at.
    pub target: BenchTarget,
    /// The slice the caller applied at ingestion (recorded; already applied to the trace).
    pub filter: CallerFilter,
}

impl Default for PlanOptions {
    fn default() -> PlanOptions {
        PlanOptions {
            chunk_size: None,
            time_scale: TimeScale::one(),
            window: Window::ONE_SECOND,
            target: BenchTarget::default(),
            filter: CallerFilter::default(),
        }
    }
}

/// A trace ready to be written as vLLM's `timed_trace`.
#[derive(Debug, Clone)]
pub struct Plan {
    trace: Trace,
    blocks: BlockPlan,
    unit: TimeUnit,
    options: PlanOptions,
    regime: Regime,
    source_regime: Option<Regime>,
    notes: Vec<String>,
}

impl Plan {
    /// Plans `trace`: speeds it up, chooses the ids and the time unit. Refuses an empty trace
    /// and a chunk size that does not tile every prompt.
    pub fn new(trace: Trace, options: PlanOptions) -> Result<Plan, PlanError> {
        if trace.is_empty() {
            return Err(PlanError::Empty);
        }
        let scale = &options.time_scale;
        let (trace, source_regime) = if scale.is_one() {
            (trace, None)
        } else {
            let source_regime = Regime::of(&trace, options.window)?;
            let (mut meta, mut req) = trace.into_parts();
            let bad = || PlanError::TimeScale(scale.to_string());
            for t in &mut req.arrival_ns {
                *t = scale.apply(*t).ok_or_else(bad)?;
            }
            // The recording grid, sped up; a grid that rounds to nothing is no grid at all.
            meta.timestamp_resolution_ns = match meta.timestamp_resolution_ns {
                Some(r) => Some(scale.apply(r).ok_or_else(bad)?).filter(|&r| r > 0),
                None => None,
            };
            (Trace::new(meta, req)?, Some(source_regime))
        };
        let regime = Regime::of(&trace, options.window)?;
        let blocks = BlockPlan::new(&trace, options.chunk_size)?;
        let unit = TimeUnit::coarsest_exact(&trace.requests().arrival_ns);
        let notes = notes(&trace, &blocks, unit, &options);
        let mut plan = Plan {
            trace,
            blocks,
            unit,
            options,
            regime,
            source_regime,
            notes,
        };
        plan.notes.push(format!(
            "prompt tokens are this plan's own: PYTHONHASHSEED {} (and the native client's salt) is derived from the source, the slice and the chunk size, so no other plan's blocks are these tokens and a warm prefix cache shares nothing between plans; repeats of this plan on one server do share them (reset the cache between repeats, or compare knowingly)",
            plan.hash_seed()
        ));
        Ok(plan)
    }

    /// The trace as it will be fired (sliced and sped up).
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The ids of every request.
    pub fn blocks(&self) -> &BlockPlan {
        &self.blocks
    }

    /// The unit the file's timestamps are written in.
    pub fn unit(&self) -> TimeUnit {
        self.unit
    }

    /// The regime of the trace as fired.
    pub fn regime(&self) -> &Regime {
        &self.regime
    }

    /// Things a reader of the plan should know.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Writes the `timed_trace` JSONL into `out`, in buffered pieces of about 1 MiB.
    pub fn write_timed_trace(&self, out: &mut impl io::Write) -> io::Result<()> {
        let req = self.trace.requests();
        let unit_ns = self.unit.ns();
        let mut buf = Vec::with_capacity(1 << 20);
        let rows = req
            .arrival_ns
            .iter()
            .zip(&req.input_tokens)
            .zip(&req.output_tokens)
            .zip(self.blocks.rows(&self.trace));
        for (((&t, &input), &output), blocks) in rows {
            write_line(&mut buf, t / unit_ns, input, output, blocks.ids());
            if buf.len() >= 1 << 20 {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        out.write_all(&buf)
    }

    /// The `vllm bench serve` command for this plan's file, its `PYTHONHASHSEED` this plan's
    /// own ([`Plan::hash_seed`]).
    pub fn bench_command(&self) -> BenchCommand {
        BenchCommand::new(
            TIMED_TRACE_FILE,
            self.trace.len() as u64,
            self.unit,
            self.blocks.chunk,
            &self.options.target,
        )
        .with_hash_seed(self.hash_seed())
    }

    /// The seed of every prompt token this plan's clients draw: vLLM's client seeds hash id
    /// `h`'s block from Python's `hash(f"{h}:{size}")`, so under one fixed seed id `h` is the
    /// same tokens in every plan, and a plan's fresh ids (from 0) would hit another plan's
    /// blocks in a warm prefix cache — sharing the trace never recorded. Derived from what
    /// makes the plan (the source's sha256, the slice, the chunk size), it is fixed for the
    /// plan (its repeats and `plan check` draw the same tokens) and differs between plans.
    pub fn hash_seed(&self) -> u32 {
        let identity = format!(
            "{}\n{}\n{}",
            self.trace.meta().source_sha256,
            serde_json::to_string(&self.slice()).unwrap_or_default(),
            self.blocks.chunk
        );
        let digest = Sha256::digest(identity.as_bytes());
        let mut first = [0u8; 4];
        first.copy_from_slice(digest.get(..4).unwrap_or(&[0; 4]));
        u32::from_be_bytes(first)
    }

    /// The caller's slice and speed-up, as plan.json states them.
    fn slice(&self) -> Slice {
        let filter = &self.options.filter;
        Slice {
            model: filter.model.clone(),
            log_type: filter.log_type.clone(),
            start_ns: filter.start_ns,
            end_ns: filter.end_ns,
            max_requests: filter.max_rows,
            time_scale: self.options.time_scale.clone(),
            fields: filter.fields.clone(),
        }
    }

    /// A reader for the written file, interpreting it as `bench` tells vLLM to (its multiplier
    /// and chunk size) and comparing every row with this plan.
    pub fn reader<'p>(
        &'p self,
        bench: &BenchCommand,
    ) -> Result<TimedTraceReader<'p>, MultiplierError> {
        // A chunk vLLM cannot parse leaves nothing covered: every row reads as short.
        let chunk = bench.chunk_size().unwrap_or(0);
        Ok(TimedTraceReader::new(bench.sec_multiplier(), chunk)?
            .expecting(&self.trace, self.blocks.rows(&self.trace)))
    }

    /// Every fidelity check of a read-back file against this plan and `bench`.
    pub fn verify(&self, back: &ReadBack, bench: &BenchCommand) -> Fidelity {
        let mut checks = compare(&self.trace, back, self.options.window);
        let chunk = bench
            .value("--timed-trace-chunk-hash-size")
            .unwrap_or("16 (vLLM's default)");
        checks.push(Check::new(
            "tiling",
            serde_json::Value::from(back.lines),
            serde_json::Value::from(back.lines - back.short_rows.min(back.lines)),
            back.short_rows as f64,
            match back.first_short_line {
                None => format!("every prompt is covered: len(hash_ids) × {chunk} ≥ input_length"),
                Some(line) => format!(
                    "{} rows have len(hash_ids) × {chunk} < input_length (first: line {line}): vLLM would send shorter prompts",
                    back.short_rows
                ),
            },
        ));
        let problems =
            bench.disagreements(TIMED_TRACE_FILE, back.lines, self.blocks.chunk, self.unit);
        checks.push(Check::agreement(
            "argv_agrees",
            &problems,
            "--num-prompts equals the lines written; chunk size, multiplier, path and flags match the file",
        ));
        Fidelity::of(checks)
    }

    /// `plan.json` for this plan, its file as read back, and the verdict.
    pub fn document(
        &self,
        source_path: &str,
        back: &ReadBack,
        bench: BenchCommand,
        fidelity: Fidelity,
    ) -> PlanDoc {
        let meta = self.trace.meta();
        let req = self.trace.requests();
        let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum();
        PlanDoc {
            schema: PLAN_SCHEMA.to_owned(),
            generator: concat!("loadproof ", env!("CARGO_PKG_VERSION")).to_owned(),
            verified: fidelity.pass,
            source: SourceSummary {
                path: source_path.to_owned(),
                sha256: meta.source_sha256.clone(),
                compression: meta.compression.clone(),
                format: meta.format,
                layout: meta.layout.clone(),
                bytes: meta.bytes,
                rows_read: meta.rows_read,
                emitted: meta.emitted,
                dropped: meta.dropped.clone(),
                filtered: meta.filtered.clone(),
                blank_lines: meta.blank_lines,
                prefix_block_tokens: meta.prefix_block_tokens,
                rows_without_prefix: meta.rows_without_prefix,
                session_rows: meta.session_rows,
                sessions: meta.sessions,
                schema_sha256: meta.schema_sha256.clone(),
                companions: meta
                    .segments
                    .as_ref()
                    .map(|s| s.companions.clone())
                    .unwrap_or_default(),
            },
            slice: self.slice(),
            window_s: self.options.window.secs(),
            regime: self.regime.clone(),
            source_regime: self.source_regime.clone(),
            timed_trace: TimedTraceFile {
                file: TIMED_TRACE_FILE.to_owned(),
                sha256: back.sha256.clone(),
                bytes: back.bytes,
                lines: back.lines,
                timestamp_unit: self.unit,
                sec_multiplier: self.unit.multiplier().to_owned(),
                chunk_size: self.blocks.chunk,
                chunk_size_origin: self.blocks.origin,
                prefix_synthesized: self.blocks.prefix_synthesized(),
                synthesized_rows: self.blocks.synthesized_rows,
                synthesized_ids: self.blocks.synthesized_ids,
                synthesized_from: self.blocks.synthesized_from,
                source_ids: self.blocks.source_ids,
                input_tokens_total: sum(&req.input_tokens),
                output_tokens_total: sum(&req.output_tokens),
                span_s: self.trace.span_ns() as f64 / 1e9,
            },
            bench,
            fidelity,
            notes: self.notes.clone(),
            sized_blocks: None,
        }
    }
}

fn notes(trace: &Trace, blocks: &BlockPlan, unit: TimeUnit, options: &PlanOptions) -> Vec<String> {
    let meta = trace.meta();
    let n = trace.len();
    let mut notes = vec![
        format!(
            "timestamps are written as whole {unit:?} from the first request, so --timed-trace-sec-multiplier is {}",
            unit.multiplier()
        )
        .to_lowercase(),
        format!(
            "vLLM ≥ {MIN_VLLM} reads timed_trace, but sends prompts as token ids (exact lengths) only from the release with vLLM PR #45423 (merged 2026-08-13; verified here on 0.32.0); older releases send decoded text the server re-tokenizes, so server-side prompt lengths drift"
        ),
    ];
    if let (Some(_), Some(sized)) = (&meta.segments, &trace.requests().sized) {
        let described = sized.tokens();
        let input = trace.requests().input_tokens_total();
        notes.push(format!(
            "prefix blocks SYNTHESIZED in {TIMED_TRACE_FILE}, although the source records its prefix structure: RAGPulse names each request's blocks by segment (sys_prompt, passages, history, web_search, user_input) and each id has its own token length (512, 437, … 4 tokens), given by the companion files. vLLM's timed_trace gives every hash id one chunk size ({} tokens here), so it cannot rebuild those blocks: through it (vllm bench serve, AIPerf, GuideLLM) every request gets fresh ids ({} of them), prompt lengths hold, and the source's sharing is NOT replayed — prefix-cache reuse understated, never overstated. {} holds every request's blocks at their own lengths ({} blocks, {described} tokens): loadproof's native client (--engine native) builds each prompt from it block for block, so the recorded sharing IS replayed for the {described} described tokens; the {} tokens the trace does not describe are appended to each prompt as tokens of its own, shared with nothing",
            blocks.chunk,
            blocks.synthesized_ids,
            sized_blocks::SIZED_BLOCKS_FILE,
            sized.blocks.len(),
            input.saturating_sub(described)
        ));
    } else if let Some(seg) = &meta.segments {
        let known = seg.undescribed_tokens.is_some();
        notes.push(format!(
            "prefix blocks SYNTHESIZED although the source records its prefix structure: RAGPulse names each request's blocks by segment (sys_prompt, passages, history, web_search, user_input), {}. vLLM's timed_trace gives every hash id one chunk size ({} tokens here), so it cannot rebuild those blocks, and this plan does not pretend to: every request gets fresh ids ({} of them), prompt lengths hold, and the source's sharing (see `trace inspect`'s segments) is NOT replayed — prefix-cache reuse is understated, never overstated. With the companion files beside the trace, the plan also writes each request's blocks at their own lengths for loadproof's native client",
            if known {
                "and each id has its own token length (512, 437, … 4 tokens), given by the companion files"
            } else {
                "but without the companion files beside the trace the ids' token lengths are unknown"
            },
            blocks.chunk,
            blocks.synthesized_ids
        ));
    } else if meta.prefix_block_tokens.is_none() {
        notes.push(format!(
            "prefix blocks SYNTHESIZED: the source has no prefix identity, so every request gets fresh ids ({} ids of {} tokens). Prompt lengths hold; no prefix sharing is implied, so prefix-cache reuse is understated, never overstated, and a prefix-dependent result measured on this replay is a floor",
            blocks.synthesized_ids, blocks.chunk
        ));
    } else if blocks.synthesized_rows > 0 {
        notes.push(format!(
            "{} of {n} requests carry no hash_ids in the source; they get fresh ids from {} up, above every real id, so they share no prefix with anything (prefix sharing understated for them)",
            blocks.synthesized_rows,
            blocks.synthesized_from.unwrap_or(0)
        ));
    }
    if let Some(b) = blocks.source_block_tokens
        && b != blocks.chunk
    {
        notes.push(format!(
            "chunk size {} differs from the source's {b}-token blocks: prompts keep their lengths, but each id now stands for {} tokens, so shared prefixes are not the source's lengths",
            blocks.chunk, blocks.chunk
        ));
    }
    if let (Some(rows), Some(sessions)) = (meta.session_rows, meta.sessions)
        && rows > 0
    {
        notes.push(format!(
            "the source has session identity ({rows} rows in {sessions} sessions) but timed_trace has no session field: sessions are not replayed"
        ));
    }
    let filtered = meta.filtered_total();
    if filtered > 0 {
        notes.push(format!(
            "{filtered} rows were left out by the caller's slice (counted as filtered, not as defects)"
        ));
    }
    if !options.time_scale.is_one() {
        let w = options.window.secs();
        notes.push(format!(
            "arrivals sped up ×{}: the rate is ×{} the source's, and burstiness at a {w} s window here is the source's at {} s",
            options.time_scale,
            options.time_scale,
            w * options.time_scale.factor()
        ));
    }
    notes
}

/// The source a plan was made from, with its accounting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceSummary {
    /// The path as given to `plan`.
    pub path: String,
    /// sha256 of the source's content (decompressed, when the file was compressed).
    pub sha256: String,
    /// The file as given, when it was compressed (see `TraceMeta::compression`); absent
    /// otherwise, so the plan of an uncompressed file reads as it always did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<Compression>,
    /// Format read as.
    pub format: Format,
    /// Layout within the format.
    pub layout: String,
    /// Bytes in the source.
    pub bytes: u64,
    /// Rows read.
    pub rows_read: u64,
    /// Rows emitted (= requests planned).
    pub emitted: u64,
    /// Rows dropped, by reason.
    pub dropped: BTreeMap<DropReason, u64>,
    /// Rows left out by the caller's slice, by filter.
    pub filtered: BTreeMap<FilterReason, u64>,
    /// Blank lines (not rows).
    pub blank_lines: u64,
    /// The source's block size, when it has prefix identity.
    pub prefix_block_tokens: Option<u32>,
    /// Emitted rows without `hash_ids`.
    pub rows_without_prefix: Option<u64>,
    /// Emitted rows with a session id.
    pub session_rows: Option<u64>,
    /// Distinct sessions.
    pub sessions: Option<u64>,
    /// The sha256 of the mapping the source was read through (a mapped log only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_sha256: Option<String>,
    /// The companion files the source was read with, name → sha256 (RAGPulse only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub companions: BTreeMap<String, String>,
}

/// The caller's slice and speed-up, enough to rebuild the planned trace from the source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    /// `--model`.
    pub model: Option<String>,
    /// `--log-type`.
    pub log_type: Option<String>,
    /// `--start`, ns from the first sound row.
    pub start_ns: Option<i64>,
    /// `--start` + `--duration`, ns from the first sound row.
    pub end_ns: Option<i64>,
    /// `--max-requests`.
    pub max_requests: Option<u64>,
    /// `--time-scale`.
    pub time_scale: TimeScale,
    /// `--where NAME=VALUE` on a mapped log's filter columns.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

impl Slice {
    /// The ingestion filter this slice applies.
    pub fn filter(&self) -> CallerFilter {
        CallerFilter {
            model: self.model.clone(),
            log_type: self.log_type.clone(),
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            max_rows: self.max_requests,
            fields: self.fields.clone(),
        }
    }
}

/// What was written for vLLM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedTraceFile {
    /// File name inside the plan directory.
    pub file: String,
    /// sha256 of the file as read back from disk.
    pub sha256: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Lines (= requests = `--num-prompts`).
    pub lines: u64,
    /// Unit of `timestamp`.
    pub timestamp_unit: TimeUnit,
    /// The matching `--timed-trace-sec-multiplier`.
    pub sec_multiplier: String,
    /// `--timed-trace-chunk-hash-size`.
    pub chunk_size: u32,
    /// Where the chunk size came from.
    pub chunk_size_origin: ChunkOrigin,
    /// True when any request's ids are synthesized (prefix sharing understated).
    pub prefix_synthesized: bool,
    /// Requests with synthesized ids.
    pub synthesized_rows: u64,
    /// Synthesized ids in total.
    pub synthesized_ids: u64,
    /// The first synthesized id (above every real id).
    pub synthesized_from: Option<u64>,
    /// Real ids carried from the source.
    pub source_ids: u64,
    /// Σ input_length.
    pub input_tokens_total: u64,
    /// Σ output_length.
    pub output_tokens_total: u64,
    /// Last arrival − first, seconds.
    pub span_s: f64,
}

/// `plan.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanDoc {
    /// [`PLAN_SCHEMA`].
    pub schema: String,
    /// The program and version that wrote it.
    pub generator: String,
    /// True only when the read-back check passed.
    pub verified: bool,
    /// The source and its accounting.
    pub source: SourceSummary,
    /// The caller's slice and speed-up.
    pub slice: Slice,
    /// Burstiness window of `regime` and of the fidelity check, seconds.
    pub window_s: f64,
    /// The regime of the trace as fired.
    pub regime: Regime,
    /// The regime before the speed-up, when there is one.
    pub source_regime: Option<Regime>,
    /// The file for vLLM.
    pub timed_trace: TimedTraceFile,
    /// How to run it.
    pub bench: BenchCommand,
    /// The read-back verdict.
    pub fidelity: Fidelity,
    /// Things a reader should know.
    pub notes: Vec<String>,
    /// The prompts as blocks at their own lengths, for a client that builds them (RAGPulse
    /// read with its companion files); absent for every other source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sized_blocks: Option<sized_blocks::SizedBlocksFile>,
}

impl PlanDoc {
    /// The options that rebuild this plan from its source.
    pub fn options(&self) -> Option<PlanOptions> {
        let bench = &self.bench;
        let filled = |flag: &str, placeholder: &str| {
            bench
                .value(flag)
                .filter(|v| *v != placeholder)
                .map(str::to_owned)
        };
        Some(PlanOptions {
            chunk_size: (self.timed_trace.chunk_size_origin == ChunkOrigin::Caller)
                .then_some(self.timed_trace.chunk_size),
            time_scale: self.slice.time_scale.clone(),
            window: Window::from_secs(self.window_s)?,
            target: BenchTarget {
                model: filled("--model", MODEL_PLACEHOLDER),
                tokenizer: filled("--tokenizer", TOKENIZER_PLACEHOLDER),
                base_url: filled("--base-url", BASE_URL_PLACEHOLDER),
            },
            filter: self.slice.filter(),
        })
    }

    /// Pretty JSON, deterministic.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// Every way `found` differs from the command the plan builds, as sentences. vLLM's parser
/// accepts `_` for `-`, unique prefixes of long flags and `--config` files, so an edited argv
/// is compared whole, not flag by flag.
fn command_differences(found: &BenchCommand, planned: &BenchCommand) -> Vec<String> {
    let mut out = Vec::new();
    let (f, p) = (&found.argv, &planned.argv);
    if let Some(k) = (0..f.len().max(p.len())).find(|&k| f.get(k) != p.get(k)) {
        let show =
            |v: Option<&String>| v.map_or_else(|| "nothing".to_owned(), |a| format!("{a:?}"));
        out.push(format!(
            "argv differs at position {k}: plan.json has {}, the plan builds {} ({} vs {} arguments)",
            show(f.get(k)),
            show(p.get(k)),
            f.len(),
            p.len()
        ));
    }
    if found.env != planned.env {
        out.push(format!(
            "env is {:?}, the plan pins {:?}",
            found.env, planned.env
        ));
    }
    if found.placeholders != planned.placeholders {
        out.push(format!(
            "placeholders are {:?}, the argv leaves {:?}",
            found.placeholders, planned.placeholders
        ));
    }
    out
}

/// Re-checks a plan directory: `doc` as found on disk, `rebuilt` = the plan rebuilt from the
/// re-read source with `doc`'s options, `back` = the file as read now with `doc`'s argv.
/// Adds to [`Plan::verify`] the checks that the source and file are the ones `doc` names and
/// that every number `doc` states is the recomputed one.
pub fn check_document(
    doc: &PlanDoc,
    rebuilt: &Plan,
    back: &ReadBack,
    sized: Option<&[u8]>,
) -> Fidelity {
    let mut checks = rebuilt.verify(back, &doc.bench).checks;
    checks.extend(sized_blocks::check(rebuilt.trace(), sized));
    let source_sha = &rebuilt.trace().meta().source_sha256;
    checks.push(Check::agreement(
        "source_sha256",
        &(doc.source.sha256 != *source_sha)
            .then(|| {
                format!(
                    "the source now hashes to {source_sha}, plan.json names {}",
                    doc.source.sha256
                )
            })
            .into_iter()
            .collect::<Vec<_>>(),
        "the source is the file the plan was made from",
    ));
    checks.push(Check::agreement(
        "file_sha256",
        &(doc.timed_trace.sha256 != back.sha256)
            .then(|| {
                format!(
                    "{} now hashes to {}, plan.json recorded {}",
                    doc.timed_trace.file, back.sha256, doc.timed_trace.sha256
                )
            })
            .into_iter()
            .collect::<Vec<_>>(),
        "the file is byte for byte the one planned",
    ));
    checks.push(Check::agreement(
        "argv_is_planned",
        &command_differences(&doc.bench, &rebuilt.bench_command()),
        "argv and env are exactly the planned command (only --model, --tokenizer, --base-url are the caller's)",
    ));
    let recomputed = rebuilt.document(
        &doc.source.path,
        back,
        doc.bench.clone(),
        doc.fidelity.clone(),
    );
    let mut stale = Vec::new();
    if doc.schema != PLAN_SCHEMA {
        stale.push(format!(
            "schema is {:?}, expected {PLAN_SCHEMA:?}",
            doc.schema
        ));
    }
    // The plan is of the content: the same rows checked from the file compressed otherwise
    // (or not at all) are the same source, so how the file was compressed is not compared.
    let content = |s: &SourceSummary| SourceSummary {
        compression: None,
        ..s.clone()
    };
    for (what, same) in [
        (
            "source accounting",
            content(&doc.source) == content(&recomputed.source),
        ),
        (
            "regime",
            doc.regime == recomputed.regime && doc.source_regime == recomputed.source_regime,
        ),
        (
            "timed_trace summary",
            doc.timed_trace == recomputed.timed_trace,
        ),
        (
            "sized_blocks summary",
            doc.sized_blocks
                == sized.and_then(|bytes| sized_blocks::summary(rebuilt.trace(), bytes)),
        ),
    ] {
        if !same {
            stale.push(format!("plan.json's {what} differs from the recomputation"));
        }
    }
    if !doc.verified {
        stale.push("plan.json says verified: false".to_owned());
    }
    checks.push(Check::agreement(
        "plan_json_agrees",
        &stale,
        "every number plan.json states equals its recomputation",
    ));
    Fidelity::of(checks)
}
