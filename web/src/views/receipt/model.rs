//! What the page shows of one receipt, computed in one place (the offload worker or, as a
//! fallback, the page's own thread) and sent to the views as one serializable value.
//!
//! Every number here comes from `loadproof_core`: the audit is core's `audit_with()` verbatim
//! against the reviewer's policy (the same JSON as `loadproof receipt audit --json [--policy
//! FILE]`); everything else only re-arranges the
//! receipt's own evidence for plotting and reading (the event log into timeline rows, the
//! latency samples into histogram bins and CDF points, the `/metrics` scrapes into a series,
//! each block's bytes into a preview). Evidence is read only from blocks the audit verified:
//! a block whose digest fails is shown as failed, with its error and no preview, and nothing
//! is drawn from it.
//!
//! The model crosses a Web Worker boundary as JSON, so it is kept compact: the timeline is
//! capped at [`TIMELINE_CAP`] requests, the series at [`SERIES_CAP`] scrapes, previews at
//! [`PREVIEW_BYTES`], and latency samples travel as bins and curve points, never as every
//! sample. Every cap that cuts something says so (`truncated`). No `f64` in the model is NaN
//! or infinite (those would not survive JSON): anything undefined is `None`.

use std::collections::BTreeMap;

// The sample names the series reads from each scrape are the engine audit's own.
use loadproof_core::audit::{
    Audit, Policy, STANDINGS, ScrapeReading, bench_samples, native_samples, peer_request_records,
};
use loadproof_core::compare::Side;
use loadproof_core::formats::vllm_bench as bench_output;
use loadproof_core::receipt::{
    Disposition, Encoding, Engine, Execution, Exporter, Implementation, Lease, Phase, Protocol,
    Provenance, Receipt, RequestRecord, ResultFile, Subject,
};
use serde::{Deserialize, Serialize};

/// Bytes of a block's preview at most.
pub const PREVIEW_BYTES: usize = 64 * 1024;
/// Bytes of all previews together at most (a long run holds thousands of scrapes): blocks
/// other than scrapes are previewed first, then scrapes in order while the budget lasts.
pub const PREVIEW_TOTAL_BYTES: usize = 1024 * 1024;
/// Requests in the timeline at most (the first ones by index).
pub const TIMELINE_CAP: usize = 20_000;
/// Scrapes in the `/metrics` series at most (the first ones).
pub const SERIES_CAP: usize = 20_000;
/// Bins of each latency histogram.
pub const HIST_BINS: usize = 30;
/// Points on each latency CDF at most.
pub const CDF_POINTS: usize = 200;
/// The latency metrics, in the audit's order.
pub const METRICS: [&str; 4] = loadproof_core::audit::LATENCY_METRICS;

/// The audit alone, sent ahead of the model: the page shows the verdict (and every refusal)
/// while the rest of the report is still being built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The file's name.
    pub source: String,
    /// The sha256 of the file's bytes (a published site checks it against its index first).
    pub file_sha256: String,
    /// The audit, as `loadproof receipt audit --json` prints it.
    pub audit: Audit,
}

/// One receipt, audited, ready to show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceiptModel {
    /// The file's name as chosen or fetched (no directories).
    pub source: String,
    /// Bytes in the file.
    pub file_bytes: u64,
    /// sha256 of the whole file, lowercase hex.
    pub file_sha256: String,
    /// The file's form: `v1 JSON document`, or the record stream's reading.
    pub form: String,
    /// What was asked of the server.
    pub protocol: Protocol,
    /// What was measured.
    pub subject: Subject,
    /// Core's audit, as `receipt audit --json` prints it.
    pub audit: Audit,
    /// Who made the receipt and how.
    pub provenance: Provenance,
    /// What happened, as the receipt records it (block names, exit status, stamps).
    pub execution: Execution,
    /// The receipt's notes (labelled as notes, never facts).
    pub notes: Vec<String>,
    /// The client implementation, bound or not.
    pub implementation: Option<Implementation>,
    /// The lease the run held, as read from its (verified) block.
    pub lease: LeaseView,
    /// Every evidence block: its verification (from the audit) and a preview.
    pub blocks: Vec<BlockInfo>,
    /// One row per request, when per-request records exist.
    pub timeline: Timeline,
    /// The latency samples behind the audit's distributions, binned for plotting.
    pub latency: LatencySamples,
    /// The `/metrics` scrapes as a series over the run.
    pub metrics: MetricsSeries,
}

impl ReceiptModel {
    /// The receipt as core's comparison reads one side of it.
    pub fn side(&self) -> Side<'_> {
        Side {
            source: &self.source,
            file_sha256: &self.file_sha256,
            protocol: &self.protocol,
            subject: &self.subject,
            audit: &self.audit,
        }
    }
}

/// One evidence block as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockInfo {
    /// The block's name (`native/events.jsonl`, `metrics/3`, …).
    pub name: String,
    /// Bytes the receipt records for it.
    pub bytes: u64,
    /// The digest the receipt records (`None`: the block is missing).
    pub sha256: Option<String>,
    /// True when the audit verified it.
    pub ok: bool,
    /// Why it failed, as the audit says.
    pub error: Option<String>,
    /// How the receipt encodes it (`None`: missing).
    pub encoding: Option<Encoding>,
    /// The start of the decoded bytes as text (`None` for a failed block).
    pub preview: Option<String>,
    /// True when the preview is not the whole block.
    pub truncated: bool,
    /// True when the bytes are not UTF-8 (the preview replaces invalid bytes).
    pub binary: bool,
    /// True when a verified block has no preview because [`PREVIEW_TOTAL_BYTES`] ran out.
    pub preview_omitted: bool,
    /// True for a scrape body a record stream holds as a delta of the one before.
    #[serde(default)]
    pub packed: bool,
}

/// The lease block, read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseView {
    /// The evidence block the receipt names (`None`: no lease).
    pub block: Option<String>,
    /// The lease as the lessor wrote it, without a bearer token an older lease still holds
    /// (the page never shows or keeps one).
    pub lease: Option<Lease>,
    /// Why the lease cannot be shown, when there is a block but no lease.
    pub problem: Option<String>,
}

/// Per-request rows, seconds since the run's start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Where the rows come from, or why there are none.
    pub source: String,
    /// Requests in the evidence (rows may be fewer: see `truncated`).
    pub total: u64,
    /// Rows, by request index.
    pub rows: Vec<TimelineRow>,
    /// True when only the first [`TIMELINE_CAP`] requests are here.
    pub truncated: bool,
}

/// One request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineRow {
    /// 0-based line of the `timed_trace`.
    pub index: u64,
    /// When the plan scheduled it (`None`: the evidence has no schedule).
    pub scheduled_s: Option<f64>,
    /// When it was sent.
    pub sent_s: Option<f64>,
    /// When its first token arrived.
    pub first_token_s: Option<f64>,
    /// When it ended, however it ended.
    pub end_s: Option<f64>,
    /// `ok`, `http`, `transport`, … (the event log's kind), or `error` for vLLM's errors.
    pub disposition: String,
    /// What went wrong, for a failed request.
    pub detail: Option<String>,
}

impl TimelineRow {
    /// True when the request completed.
    pub fn ok(&self) -> bool {
        self.disposition == "ok"
    }
}

/// The samples behind the audit's latency distributions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySamples {
    /// Where the samples come from, or why there are none (an aggregate-only receipt).
    pub source: String,
    /// One entry per metric with samples, in [`METRICS`] order.
    pub metrics: Vec<MetricSamples>,
}

/// One metric's samples, binned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSamples {
    /// `ttft`, `tpot`, `itl` or `e2el`.
    pub metric: String,
    /// Samples (equal to the audit's count: checked when built).
    pub count: u64,
    /// Smallest, ms.
    pub min_ms: f64,
    /// Largest, ms.
    pub max_ms: f64,
    /// True when the bins are equal on a log scale (samples spanning over 100×).
    pub log_bins: bool,
    /// Histogram bins, in order.
    pub bins: Vec<Bin>,
    /// Points `(ms, share of samples at or below)` of the empirical CDF.
    pub cdf: Vec<(f64, f64)>,
}

/// One histogram bin: `[lo_ms, hi_ms)` (the last one closed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    /// Lower edge, ms.
    pub lo_ms: f64,
    /// Upper edge, ms.
    pub hi_ms: f64,
    /// Samples in it.
    pub count: u64,
}

/// The `/metrics` scrapes over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricsSeries {
    /// The URLs scraped, in order of first appearance (`MetricPoint::url` indexes this).
    pub urls: Vec<String>,
    /// What each URL exports (engine replica or DCGM exporter), parallel to `urls`.
    #[serde(default)]
    pub exporters: Vec<Exporter>,
    /// One point per readable scrape, in the receipt's order.
    pub points: Vec<MetricPoint>,
    /// Scrapes that could not be read, and why (at most 20 listed).
    pub unread: Vec<String>,
    /// How many scrapes could not be read.
    pub unread_count: u64,
    /// True when only the first [`SERIES_CAP`] scrapes are here.
    pub truncated: bool,
}

/// What one scrape says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricPoint {
    /// Position in the receipt's scrape list.
    pub scrape: u64,
    /// Index into [`MetricsSeries::urls`].
    pub url: u32,
    /// Before, during or after.
    pub phase: Phase,
    /// When it was requested, seconds since the run's start (`None`: no time recorded).
    pub t_s: Option<f64>,
    /// `vllm:num_requests_running`.
    pub running: Option<f64>,
    /// `vllm:num_requests_waiting`.
    pub waiting: Option<f64>,
    /// KV cache usage, 0–1.
    pub kv_usage: Option<f64>,
    /// `vllm:generation_tokens_total`, summed over series.
    pub generation_tokens: Option<f64>,
    /// `vllm:prompt_tokens_total`, summed over series.
    pub prompt_tokens: Option<f64>,
    /// `vllm:num_preemptions_total`.
    pub preemptions: Option<f64>,
    /// A DCGM exporter's GPUs, summarised: mean utilisation %, framebuffer used (sum, MiB),
    /// power (sum, W), mean SM clock (MHz). `None` for an engine's scrape.
    #[serde(default)]
    pub gpu: Option<GpuPoint>,
}

/// One DCGM scrape's GPUs in four numbers (every GPU's own numbers are in the scrape body).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuPoint {
    /// Mean `DCGM_FI_DEV_GPU_UTIL` over the GPUs, %.
    pub util_pct: Option<f64>,
    /// Sum of `DCGM_FI_DEV_FB_USED`, MiB.
    pub fb_used_mib: Option<f64>,
    /// Sum of `DCGM_FI_DEV_POWER_USAGE`, W.
    pub power_w: Option<f64>,
    /// Mean `DCGM_FI_DEV_SM_CLOCK`, MHz.
    pub sm_clock_mhz: Option<f64>,
}

impl GpuPoint {
    fn of(gpus: &[loadproof_core::formats::dcgm::Gpu]) -> GpuPoint {
        let values = |f: fn(&loadproof_core::formats::dcgm::Gpu) -> Option<f64>| -> Vec<f64> {
            gpus.iter()
                .filter_map(f)
                .filter(|v| v.is_finite())
                .collect()
        };
        let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let sum = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>());
        GpuPoint {
            util_pct: mean(values(|g| g.util_pct)),
            fb_used_mib: sum(values(|g| g.fb_used_mib)),
            power_w: sum(values(|g| g.power_w)),
            sm_clock_mhz: mean(values(|g| g.sm_clock_mhz)),
        }
    }
}

/// Stages a build reports, in order, so the page can show a progress bar.
pub const STAGES: [&str; 4] = ["parse", "digests", "audit", "series"];

/// How the file holds the receipt, in one line.
fn form(receipt: &Receipt) -> String {
    match &receipt.stream {
        None => "v1 JSON document".to_owned(),
        Some(s) => format!(
            "record stream, {}: {} records, {} bytes decompressed{}",
            if s.sealed {
                "sealed"
            } else {
                "UNSEALED (its writer stopped)"
            },
            s.records,
            s.stream_bytes,
            s.torn_tail.as_ref().map_or(String::new(), |t| format!(
                "; {} torn bytes at the end",
                t.bytes
            ))
        ),
    }
}

/// Builds the model from a receipt file's bytes, audited against `policy`. `on_stage(i)` is
/// called as stage `STAGES[i]` begins. Never panics on any input: bad bytes are an `Err` naming
/// what is wrong.
pub fn build(
    source: &str,
    bytes: &[u8],
    policy: &Policy,
    on_stage: &mut dyn FnMut(usize),
) -> Result<ReceiptModel, String> {
    on_stage(0);
    let receipt = read(source, bytes)?;
    // The audit verifies every digest first, then recomputes.
    on_stage(1);
    on_stage(2);
    let audited = loadproof_core::audit::audit_read(&receipt, policy);
    Ok(build_from(
        source,
        bytes,
        &receipt,
        audited,
        None,
        on_stage,
        &mut |_| {},
    ))
}

/// The receipt in `bytes`, in either form.
pub fn read(source: &str, bytes: &[u8]) -> Result<Receipt, String> {
    Receipt::from_bytes(bytes).map_err(|e| format!("{source}: {e}"))
}

/// [`build`] of a receipt already read and audited, taking the sha256 of its packed scrape
/// bodies from `digests` when the page hashed them itself (WebCrypto: see `crate::digests`).
/// `on_verdict` is handed the audit first, before anything else is built (the page shows it
/// ahead of the report).
pub fn build_from(
    source: &str,
    bytes: &[u8],
    receipt: &Receipt,
    audited: loadproof_core::audit::Audited,
    digests: Option<&BTreeMap<String, String>>,
    on_stage: &mut dyn FnMut(usize),
    on_verdict: &mut dyn FnMut(&Verdict),
) -> ReceiptModel {
    let verdict = Verdict {
        source: source.to_owned(),
        file_sha256: loadproof_core::receipt::sha256_hex(bytes),
        audit: audited.audit,
    };
    on_verdict(&verdict);
    let Verdict {
        file_sha256, audit, ..
    } = verdict;
    on_stage(3);
    let verified = Verified::of(receipt, &audit);
    let run_zero = run_zero_ns(receipt);
    let per_request = per_request(receipt, &audit, &verified);
    ReceiptModel {
        source: source.to_owned(),
        file_bytes: bytes.len() as u64,
        file_sha256,
        form: form(receipt),
        protocol: receipt.protocol.clone(),
        subject: receipt.subject.clone(),
        provenance: receipt.provenance.clone(),
        execution: receipt.execution.clone(),
        notes: receipt.notes.clone(),
        implementation: receipt.implementation.clone(),
        lease: lease_view(receipt, &verified),
        blocks: blocks(receipt, &audit, digests),
        timeline: timeline(&per_request, run_zero),
        latency: latency_samples(&per_request, &audit),
        metrics: metrics_series(receipt, &audited.series, run_zero),
        audit,
    }
}

/// Every standing's name: core's eight in core's order, then any other the audit names.
pub fn standing_names(audit: &Audit) -> Vec<String> {
    let mut names: Vec<String> = STANDINGS.iter().map(|s| (*s).to_owned()).collect();
    names.extend(
        audit
            .standings
            .keys()
            .filter(|k| !STANDINGS.contains(&k.as_str()))
            .cloned(),
    );
    names
}

/// Blocks the audit verified (the only ones anything is read from).
struct Verified<'r> {
    receipt: &'r Receipt,
    ok: BTreeMap<&'r str, bool>,
}

impl<'r> Verified<'r> {
    fn of(receipt: &'r Receipt, audit: &Audit) -> Verified<'r> {
        let mut ok = BTreeMap::new();
        let good: BTreeMap<&str, bool> = audit
            .digests
            .iter()
            .map(|d| (d.block.as_str(), d.ok))
            .collect();
        for (name, _, _) in receipt.block_names() {
            ok.insert(name, good.get(name).copied().unwrap_or(false));
        }
        Verified { receipt, ok }
    }

    /// The decoded bytes of a verified block, or why it cannot be read.
    fn block(&self, name: &str) -> Result<std::borrow::Cow<'r, [u8]>, String> {
        if !self.ok.get(name).copied().unwrap_or(false) {
            return Err(format!(
                "evidence block {name:?} is missing or fails verification"
            ));
        }
        match self.receipt.evidence.get(name) {
            Some(e) => e.decoded(name).map_err(|e| e.to_string()),
            // A packed scrape body: rebuilt (and checked again) on its own.
            None if self.receipt.packed.contains(name) => self
                .receipt
                .block(name)
                .map(std::borrow::Cow::Owned)
                .map_err(|e| e.to_string()),
            None => Err(format!("evidence block {name:?} is missing")),
        }
    }
}

/// The run's zero on the firing machine's monotonic clock: the execution's start, else the
/// first scrape's request.
fn run_zero_ns(receipt: &Receipt) -> Option<i64> {
    match &receipt.execution {
        Execution::Native { started, .. } => Some(started.mono_ns),
        Execution::Ran {
            started: Some(s), ..
        } => Some(s.mono_ns),
        _ => receipt
            .scrapes
            .iter()
            .find_map(|s| s.requested.map(|t| t.mono_ns)),
    }
}

fn secs(ns: i64, zero: i64) -> f64 {
    ns.saturating_sub(zero) as f64 / 1e9
}

/// `Some(x)` when `x` is finite.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn lease_view(receipt: &Receipt, verified: &Verified<'_>) -> LeaseView {
    let Some(name) = &receipt.lease else {
        return LeaseView {
            block: None,
            lease: None,
            problem: None,
        };
    };
    match verified
        .block(name)
        .and_then(|b| Lease::from_json(&b).map_err(|e| e.to_string()))
    {
        Ok(l) => LeaseView {
            block: Some(name.clone()),
            lease: Some(Lease { token: None, ..l }),
            problem: None,
        },
        Err(why) => LeaseView {
            block: Some(name.clone()),
            lease: None,
            problem: Some(why),
        },
    }
}

/// Every block in the audit's digest list (which includes missing ones), in that order.
fn blocks(
    receipt: &Receipt,
    audit: &Audit,
    digests: Option<&BTreeMap<String, String>>,
) -> Vec<BlockInfo> {
    let mut out: Vec<BlockInfo> = audit
        .digests
        .iter()
        .map(|d| {
            let evidence = receipt.evidence.get(&d.block);
            BlockInfo {
                name: d.block.clone(),
                bytes: d.bytes,
                sha256: evidence
                    .map(|e| e.sha256.clone())
                    .or_else(|| receipt.packed.get(&d.block).map(|b| b.sha256.clone())),
                ok: d.ok,
                error: d.error.clone(),
                encoding: evidence.map(|e| e.encoding),
                preview: None,
                truncated: false,
                binary: false,
                preview_omitted: false,
                packed: evidence.is_none() && receipt.packed.contains(&d.block),
            }
        })
        .collect();
    let mut budget = PREVIEW_TOTAL_BYTES;
    let is_scrape = |b: &BlockInfo| {
        b.name
            .starts_with(loadproof_core::receipt::block::METRICS_PREFIX)
    };
    for scrapes in [false, true] {
        for info in out.iter_mut().filter(|b| b.ok && is_scrape(b) == scrapes) {
            let Some(e) = receipt.evidence.get(&info.name) else {
                continue;
            };
            if budget == 0 {
                info.preview_omitted = true;
                continue;
            }
            let cap = PREVIEW_BYTES.min(budget);
            match e.encoding {
                Encoding::Utf8 => {
                    let cut = floor_char_boundary(&e.content, cap);
                    info.preview = e.content.get(..cut).map(str::to_owned);
                    info.truncated = cut < e.content.len();
                    budget = budget.saturating_sub(cut.max(1));
                }
                Encoding::Base64 => match e.decoded(&info.name) {
                    Ok(raw) => {
                        let head = raw.get(..cap.min(raw.len())).unwrap_or(&[]);
                        info.binary = std::str::from_utf8(&raw).is_err();
                        info.preview = Some(String::from_utf8_lossy(head).into_owned());
                        info.truncated = head.len() < raw.len();
                        budget = budget.saturating_sub(head.len().max(1));
                    }
                    Err(err) => info.error = Some(err.to_string()),
                },
            }
        }
    }
    // Packed scrape bodies (a record stream) are rebuilt in the order written, only as far as
    // the budget goes: the first scrapes of the run are the ones previewed.
    let index: BTreeMap<String, usize> = out
        .iter()
        .enumerate()
        .filter(|(_, b)| b.ok && receipt.packed.contains(&b.name))
        .map(|(i, b)| (b.name.clone(), i))
        .collect();
    let mut previewed: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut walk = match digests {
        Some(d) => receipt.packed.walk_trusting(d),
        None => receipt.packed.walk(),
    };
    let mut room = budget;
    while room > 0
        && let Some(w) = walk.next()
    {
        if let (Some(&i), Ok(raw)) = (index.get(w.name), w.verified()) {
            let head = raw
                .get(..PREVIEW_BYTES.min(room).min(raw.len()))
                .unwrap_or(&[]);
            room = room.saturating_sub(head.len().max(1));
            previewed.push((i, raw.to_vec()));
        }
    }
    let mut done = vec![false; out.len()];
    for (i, raw) in previewed {
        if let Some(info) = out.get_mut(i) {
            preview_raw(info, &raw, &mut budget);
        }
        if let Some(d) = done.get_mut(i) {
            *d = true;
        }
    }
    for &i in index.values() {
        if let (Some(info), Some(false)) = (out.get_mut(i), done.get(i)) {
            info.preview_omitted = true;
        }
    }
    out
}

/// A preview of a block's raw bytes within `budget` (shown as text, lossily when not UTF-8).
fn preview_raw(info: &mut BlockInfo, raw: &[u8], budget: &mut usize) {
    if *budget == 0 {
        info.preview_omitted = true;
        return;
    }
    let cap = PREVIEW_BYTES.min(*budget);
    let text = std::str::from_utf8(raw).ok();
    info.encoding = Some(if text.is_some() {
        Encoding::Utf8
    } else {
        Encoding::Base64
    });
    let cut = match text {
        Some(t) => floor_char_boundary(t, cap),
        None => cap.min(raw.len()),
    };
    let head = raw.get(..cut).unwrap_or(&[]);
    info.binary = text.is_none();
    info.preview = Some(String::from_utf8_lossy(head).into_owned());
    info.truncated = head.len() < raw.len();
    *budget = budget.saturating_sub(head.len().max(1));
}

/// The largest index `<= at` that is a char boundary of `s`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The per-request evidence of the run, parsed once.
enum PerRequest {
    /// The native event log.
    Native(Vec<RequestRecord>),
    /// vLLM's `--save-detailed` arrays (read only when the audit read the client's output).
    Bench(bench_output::Detailed),
    /// None, and why.
    Absent(String),
}

fn per_request(receipt: &Receipt, audit: &Audit, verified: &Verified<'_>) -> PerRequest {
    match &receipt.execution {
        Execution::Native { events, .. } => match verified.block(events).and_then(|raw| {
            loadproof_core::receipt::parse_events(&raw).map_err(|e| format!("{events}: {e}"))
        }) {
            Ok(records) => PerRequest::Native(records),
            Err(why) => PerRequest::Absent(format!("the event log cannot be used: {why}")),
        },
        Execution::Ran { .. }
            if matches!(receipt.protocol.engine, Engine::Aiperf | Engine::Guidellm) =>
        {
            if !audit.execution_gate.read {
                return PerRequest::Absent(format!(
                    "client facts are unread ({})",
                    audit.execution_gate.reason
                ));
            }
            match peer_request_records(receipt, &|name| verified.block(name)) {
                Some(Ok(records)) => PerRequest::Native(records),
                Some(Err(why)) => PerRequest::Absent(why),
                None => PerRequest::Absent("no per-request records".to_owned()),
            }
        }
        Execution::Ran { result, .. } => {
            if !audit.execution_gate.read {
                return PerRequest::Absent(format!(
                    "client facts are unread ({})",
                    audit.execution_gate.reason
                ));
            }
            let ResultFile::Kept { block } = result else {
                return PerRequest::Absent(
                    "only the stdout summary exists (no result JSON): aggregates, no per-request samples"
                        .to_owned(),
                );
            };
            match verified.block(block).and_then(|raw| {
                bench_output::parse_result(&raw).map_err(|e| format!("{block}: {e}"))
            }) {
                Ok(r) => match r.detailed {
                    Some(d) => PerRequest::Bench(d),
                    None => PerRequest::Absent(
                        "the result JSON has no per-request arrays (--save-detailed): only aggregates exist"
                            .to_owned(),
                    ),
                },
                Err(why) => PerRequest::Absent(why),
            }
        }
        Execution::NotStarted { .. } => PerRequest::Absent("the client never started".to_owned()),
        Execution::Unreachable { .. } => {
            PerRequest::Absent("the endpoint was unreachable".to_owned())
        }
    }
}

fn disposition_detail(d: &Disposition) -> Option<String> {
    let clip = |s: &str| {
        let cut = floor_char_boundary(s, 200);
        match s.get(..cut) {
            Some(head) if cut < s.len() => format!("{head}…"),
            _ => s.to_owned(),
        }
    };
    match d {
        Disposition::Ok => None,
        Disposition::Http { status, body } => Some(if body.trim().is_empty() {
            format!("HTTP {status}")
        } else {
            format!("HTTP {status}: {}", clip(body.trim()))
        }),
        Disposition::Transport { error } => Some(format!("transport: {}", clip(error))),
        Disposition::StreamCut { chunks } => {
            Some(format!("stream cut without [DONE] after {chunks} chunks"))
        }
        Disposition::Timeout { after_ns } => Some(format!(
            "timed out {} s after the send",
            *after_ns as f64 / 1e9
        )),
        Disposition::NotSent { reason } => Some(format!("never sent: {}", clip(reason))),
        Disposition::Interrupted { chunks } => {
            Some(format!("interrupted (run stopped) after {chunks} chunks"))
        }
        Disposition::StreamError { chunks, detail } => Some(format!(
            "stream error after {chunks} chunks: {}",
            clip(detail)
        )),
    }
}

fn timeline(per_request: &PerRequest, run_zero: Option<i64>) -> Timeline {
    let none = |source: String| Timeline {
        source,
        total: 0,
        rows: Vec::new(),
        truncated: false,
    };
    if let PerRequest::Native(records) = per_request {
        let mut records: Vec<&RequestRecord> = records.iter().collect();
        records.sort_by_key(|r| r.index);
        let zero = run_zero.unwrap_or(0);
        let total = records.len() as u64;
        let rows: Vec<TimelineRow> = records
            .iter()
            .take(TIMELINE_CAP)
            .map(|r| TimelineRow {
                index: r.index,
                scheduled_s: Some(secs(r.scheduled_ns, zero)),
                sent_s: r.sent_ns.map(|t| secs(t, zero)),
                first_token_s: r.first_token_ns.map(|t| secs(t, zero)),
                end_s: r.end_ns.map(|t| secs(t, zero)),
                disposition: r.disposition.kind().to_owned(),
                detail: disposition_detail(&r.disposition),
            })
            .collect();
        return Timeline {
            source: "per-request records (the native event log, or the peer tool's own records as the audit converts them): scheduled, sent, first token and end of every recorded request, seconds since the run's start".to_owned(),
            total,
            truncated: rows.len() < records.len(),
            rows,
        };
    }
    match per_request {
        PerRequest::Native(_) => none("no timeline".to_owned()),
        PerRequest::Absent(why) => none(format!("no timeline: {why}")),
        PerRequest::Bench(d) => {
            let Some(starts) = &d.start_times_s else {
                return none(
                    "no timeline: the result JSON has no start_times (vLLM ≥ 0.15 with --save-detailed keeps them)"
                        .to_owned(),
                );
            };
            // vLLM keeps only perf_counter times: offsets from its first send.
            let first = starts
                .iter()
                .copied()
                .filter(|s| s.is_finite())
                .fold(f64::INFINITY, f64::min);
            let total = starts.len() as u64;
            let rows: Vec<TimelineRow> = starts
                .iter()
                .enumerate()
                .take(TIMELINE_CAP)
                .map(|(i, s)| {
                    let sent = finite(s - first);
                    let error = d.errors.get(i).map(String::as_str).unwrap_or("");
                    let ttft = d.ttfts_s.get(i).copied().filter(|t| *t > 0.0);
                    let latency = d
                        .latencies_s
                        .as_ref()
                        .and_then(|l| l.get(i).copied())
                        .filter(|l| *l > 0.0);
                    TimelineRow {
                        index: i as u64,
                        scheduled_s: None,
                        sent_s: sent,
                        first_token_s: sent.zip(ttft).and_then(|(a, b)| finite(a + b)),
                        end_s: sent.zip(latency).and_then(|(a, b)| finite(a + b)),
                        disposition: if error.is_empty() { "ok" } else { "error" }.to_owned(),
                        detail: (!error.is_empty()).then(|| {
                            let cut = floor_char_boundary(error, 200);
                            error.get(..cut).unwrap_or("").to_owned()
                        }),
                    }
                })
                .collect();
            Timeline {
                source: "per-request arrays of the result JSON: sent (start_times), first token (+ ttft), end (+ latency), seconds since the first send; no schedule is kept".to_owned(),
                total,
                truncated: rows.len() < starts.len(),
                rows,
            }
        }
    }
}

fn latency_samples(per_request: &PerRequest, audit: &Audit) -> LatencySamples {
    let none = |source: String| LatencySamples {
        source,
        metrics: Vec::new(),
    };
    if !audit.execution_gate.read {
        return none(format!(
            "no samples: client facts are unread ({})",
            audit.execution_gate.reason
        ));
    }
    let (raw, source) = match per_request {
        PerRequest::Native(records) => (
            native_samples(records.iter().filter(|r| r.disposition == Disposition::Ok)),
            "native event log (completed requests)",
        ),
        PerRequest::Bench(d) => (
            bench_samples(d),
            "per-request arrays of the result JSON (completed requests)",
        ),
        PerRequest::Absent(why) => return none(format!("no samples: {why}")),
    };
    let mut metrics = Vec::new();
    let mut disagree = Vec::new();
    for (metric, mut values) in METRICS.iter().zip(raw) {
        values.retain(|v| v.is_finite());
        values.sort_by(f64::total_cmp);
        // The samples must be the audit's: same count, same largest value.
        let facts = audit.latency.iter().find(|l| l.metric == *metric);
        let agrees = facts.is_some_and(|f| {
            f.count == Some(values.len() as u64) && f.max_ms == values.last().copied()
        });
        if !agrees {
            disagree.push(format!(
                "{metric} ({} samples here, {} in the audit)",
                values.len(),
                facts
                    .and_then(|f| f.count)
                    .map_or("none".to_owned(), |c| c.to_string())
            ));
            continue;
        }
        if let Some(m) = binned(metric, &values) {
            metrics.push(m);
        }
    }
    let mut source = source.to_owned();
    if !disagree.is_empty() {
        source.push_str(&format!(
            "; not drawn, because the page's samples differ from the audit's: {}",
            disagree.join(", ")
        ));
    }
    LatencySamples { source, metrics }
}

/// Histogram bins and CDF points of sorted, finite values.
fn binned(metric: &str, sorted: &[f64]) -> Option<MetricSamples> {
    let (&min, &max) = (sorted.first()?, sorted.last()?);
    let n = sorted.len();
    let log_bins = min > 0.0 && max / min > 100.0;
    let (lo, hi) = if log_bins {
        (min.ln(), max.ln())
    } else {
        (min, max)
    };
    let width = (hi - lo) / HIST_BINS as f64;
    let edge = |k: usize| -> f64 {
        let x = lo + width * k as f64;
        if log_bins { x.exp() } else { x }
    };
    let bins = if width > 0.0 && width.is_finite() {
        let mut counts = vec![0u64; HIST_BINS];
        for v in sorted {
            let x = if log_bins { v.ln() } else { *v };
            let k = (((x - lo) / width).floor().max(0.0) as usize).min(HIST_BINS - 1);
            if let Some(c) = counts.get_mut(k) {
                *c += 1;
            }
        }
        counts
            .into_iter()
            .enumerate()
            .map(|(k, count)| Bin {
                lo_ms: if k == 0 { min } else { edge(k) },
                hi_ms: if k + 1 == HIST_BINS { max } else { edge(k + 1) },
                count,
            })
            .collect()
    } else {
        vec![Bin {
            lo_ms: min,
            hi_ms: max,
            count: n as u64,
        }]
    };
    // The CDF at up to CDF_POINTS sample ranks (all of them when fewer), each at the last
    // rank of its value so ties read as "at or below".
    let mut cdf = Vec::new();
    let steps = CDF_POINTS.min(n);
    for k in 0..steps {
        let rank = if steps <= 1 {
            n - 1
        } else {
            ((k as f64 * (n - 1) as f64) / (steps - 1) as f64).round() as usize
        };
        let Some(&v) = sorted.get(rank) else { continue };
        let last = sorted.partition_point(|x| *x <= v);
        let share = last as f64 / n as f64;
        if cdf.last() != Some(&(v, share)) {
            cdf.push((v, share));
        }
    }
    Some(MetricSamples {
        metric: metric.to_owned(),
        count: n as u64,
        min_ms: min,
        max_ms: max,
        log_bins,
        bins,
        cdf,
    })
}

fn metrics_series(
    receipt: &Receipt,
    readings: &[ScrapeReading],
    run_zero: Option<i64>,
) -> MetricsSeries {
    let mut series = MetricsSeries {
        urls: Vec::new(),
        exporters: Vec::new(),
        points: Vec::new(),
        unread: Vec::new(),
        unread_count: 0,
        truncated: false,
    };
    // The audit read every scrape once; the plot takes its numbers, never parses again.
    for reading in readings {
        let Some(s) = receipt.scrapes.get(reading.scrape) else {
            continue;
        };
        if series.points.len() >= SERIES_CAP {
            series.truncated = true;
            break;
        }
        let url = match series.urls.iter().position(|u| *u == s.url) {
            Some(p) => p,
            None => {
                series.urls.push(s.url.clone());
                series.exporters.push(s.exporter);
                series.urls.len() - 1
            }
        };
        let values = match &reading.read {
            Ok(v) => v,
            Err(why) => {
                series.unread_count += 1;
                if series.unread.len() < 20 {
                    series.unread.push(why.clone());
                }
                continue;
            }
        };
        let decimal =
            |d: Option<loadproof_core::decimal::Decimal>| d.and_then(|d| finite(d.to_f64()));
        series.points.push(MetricPoint {
            scrape: reading.scrape as u64,
            url: u32::try_from(url).unwrap_or(u32::MAX),
            phase: s.phase,
            t_s: s
                .requested
                .zip(run_zero)
                .map(|(t, zero)| secs(t.mono_ns, zero)),
            running: values.running.and_then(finite),
            waiting: values.waiting.and_then(finite),
            kv_usage: values.kv.and_then(finite),
            generation_tokens: decimal(values.generation),
            prompt_tokens: decimal(values.prompt),
            preemptions: decimal(values.preemptions),
            gpu: (s.exporter == Exporter::Dcgm).then(|| GpuPoint::of(&values.gpus)),
        });
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;

    const NATIVE: &[u8] = include_bytes!("../../../../core/tests/data/receipt/native_sim.json");

    fn model(bytes: &[u8]) -> ReceiptModel {
        let mut stages = Vec::new();
        let m = build("r.json", bytes, &Policy::default(), &mut |i| stages.push(i)).unwrap();
        assert_eq!(stages, [0, 1, 2, 3]);
        m
    }

    #[test]
    fn a_native_receipt_has_every_view() {
        let m = model(NATIVE);
        assert!(m.audit.digests_ok);
        assert_eq!(m.blocks.len(), m.audit.digests.len());
        assert!(m.blocks.iter().all(|b| b.ok && b.preview.is_some()));
        assert_eq!(m.timeline.total, 3);
        assert_eq!(m.timeline.rows.len(), 3);
        assert!(m.timeline.rows.iter().all(TimelineRow::ok));
        let first = &m.timeline.rows[0];
        assert!(first.scheduled_s <= first.sent_s && first.sent_s <= first.first_token_s);
        assert!(first.first_token_s <= first.end_s);
        for facts in &m.audit.latency {
            let samples = m
                .latency
                .metrics
                .iter()
                .find(|s| s.metric == facts.metric)
                .unwrap();
            assert_eq!(Some(samples.count), facts.count);
            assert_eq!(
                samples.bins.iter().map(|b| b.count).sum::<u64>(),
                samples.count
            );
            assert_eq!(samples.cdf.last().map(|p| p.1), Some(1.0));
            assert_eq!(Some(samples.max_ms), facts.max_ms);
        }
        assert_eq!(m.metrics.points.len(), 3);
        assert_eq!(m.metrics.urls.len(), 1);
        assert!(
            m.metrics
                .points
                .iter()
                .all(|p| p.generation_tokens.is_some())
        );
        assert!(m.lease.lease.is_some());
        // Crosses the worker boundary as JSON and comes back equal.
        let json = serde_json::to_string(&m).unwrap();
        let back: ReceiptModel = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn the_audit_is_judged_against_the_policy_given() {
        let strict = Policy {
            max_send_lag_ms: 0.000001,
            ..Policy::default()
        };
        let m = build("r.json", NATIVE, &strict, &mut |_| {}).unwrap();
        assert_eq!(m.audit.policy, strict);
        assert!(!m.audit.standings["arrival"].positive);
        assert!(!m.audit.qualified);
        assert!(model(NATIVE).audit.standings["arrival"].positive);
    }

    #[test]
    fn a_tampered_block_is_named_and_not_read() {
        let text = std::str::from_utf8(NATIVE).unwrap();
        // Change one digit of the first record's scheduled time inside the event log.
        let at = text.find("{\\\"index\\\":0,\\\"scheduled_ns\\\":").unwrap();
        let mut bytes = text.as_bytes().to_vec();
        let digit = at + "{\\\"index\\\":0,\\\"scheduled_ns\\\":".len();
        bytes[digit] = if bytes[digit] == b'8' { b'7' } else { b'8' };
        let m = model(&bytes);
        assert!(!m.audit.digests_ok);
        let bad: Vec<&BlockInfo> = m.blocks.iter().filter(|b| !b.ok).collect();
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].name, "native/events.jsonl");
        assert!(bad[0].preview.is_none());
        assert!(
            bad[0]
                .error
                .as_deref()
                .unwrap()
                .contains("native/events.jsonl")
        );
        assert!(m.timeline.rows.is_empty());
        assert!(m.latency.metrics.is_empty());
        assert!(!m.audit.qualified);
    }

    #[test]
    fn bad_bytes_are_an_error_naming_the_file() {
        for bytes in [
            &b"not json"[..],
            b"{}",
            b"{\"schema\":\"x\"}",
            b"",
            &[0xff, 0xfe],
        ] {
            let err = build("bad.json", bytes, &Policy::default(), &mut |_| {}).unwrap_err();
            assert!(err.starts_with("bad.json: "), "{err}");
        }
    }

    #[test]
    fn previews_stop_at_the_total_budget_scrapes_last() {
        let mut receipt = Receipt::from_json(NATIVE).unwrap();
        let big = vec![b'x'; PREVIEW_BYTES + 10];
        for i in 0..(PREVIEW_TOTAL_BYTES / PREVIEW_BYTES + 5) {
            receipt.evidence.insert(
                format!("metrics/extra{i:03}"),
                loadproof_core::receipt::Evidence::of(&big),
            );
        }
        let m = model(receipt.to_json().as_bytes());
        assert!(m.audit.digests_ok);
        let kept: usize = m
            .blocks
            .iter()
            .filter_map(|b| b.preview.as_ref())
            .map(String::len)
            .sum();
        assert!(kept <= PREVIEW_TOTAL_BYTES, "{kept}");
        assert!(m.blocks.iter().any(|b| b.preview_omitted));
        for b in m.blocks.iter().filter(|b| !b.name.starts_with("metrics/")) {
            assert!(b.preview.is_some() && !b.preview_omitted, "{}", b.name);
        }
        assert!(
            m.blocks
                .iter()
                .filter(|b| b.preview.is_some())
                .all(|b| b.truncated == (b.bytes as usize > b.preview.as_ref().unwrap().len()))
        );
    }

    #[test]
    fn binning_handles_ties_and_spans() {
        let one = binned("ttft", &[5.0]).unwrap();
        assert_eq!(one.bins.len(), 1);
        assert_eq!(one.cdf, [(5.0, 1.0)]);
        let ties = binned("ttft", &[1.0, 1.0, 2.0]).unwrap();
        assert_eq!(ties.cdf, [(1.0, 2.0 / 3.0), (2.0, 1.0)]);
        let wide: Vec<f64> = (1..=1000).map(f64::from).collect();
        let w = binned("itl", &wide).unwrap();
        assert!(w.log_bins);
        assert_eq!(w.bins.len(), HIST_BINS);
        assert_eq!(w.bins.iter().map(|b| b.count).sum::<u64>(), 1000);
        assert!(w.cdf.len() <= CDF_POINTS);
        assert!(binned("x", &[]).is_none());
    }
}
