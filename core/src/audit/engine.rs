//! What the engine's own counters say, from the receipt's `/metrics` scrapes only.
//!
//! Deltas are taken between the last readable before-scrape and the first readable
//! after-scrape of one URL, and only when every readable scrape of that URL in between comes
//! from one server incarnation (`process_start_time_seconds` when exported, and no counter
//! ever decreasing). A missing or failed after-scrape leaves the deltas unread: it is never
//! replaced by the last sample. Occupancy comes from the during-run series; two boundary
//! scrapes are "boundary only", not a series.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::decimal::Decimal;
use crate::formats::dcgm;
use crate::formats::prometheus::{self, Exposition};
use crate::receipt::{Exporter, Phase, Receipt, ScrapeOutcome};

/// vLLM's counter of generated tokens (also the simulator's).
pub const GENERATION_TOKENS: &str = "vllm:generation_tokens_total";
/// vLLM's counter of prompt tokens.
pub const PROMPT_TOKENS: &str = "vllm:prompt_tokens_total";
/// Requests in the running batch.
pub const RUNNING: &str = "vllm:num_requests_running";
/// Requests waiting for admission.
pub const WAITING: &str = "vllm:num_requests_waiting";
/// KV cache usage, 0–1 (`gpu_cache_usage_perc` before vLLM renamed it).
pub const KV_USAGE: [&str; 2] = ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"];
/// Preemptions.
pub const PREEMPTIONS: &str = "vllm:num_preemptions_total";

/// What a during-run scrape is read for.
const SERIES: [&str; 8] = [
    "process_start_time_seconds",
    GENERATION_TOKENS,
    PROMPT_TOKENS,
    PREEMPTIONS,
    RUNNING,
    WAITING,
    KV_USAGE[0],
    KV_USAGE[1],
];

/// The families besides [`SERIES`] that state what a server is (read in every scrape).
const SUBJECT_FAMILIES: [&str; 2] = ["loadproof_sim_info", "loadproof_gate_info"];

/// Engine counter deltas over the scrape envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineFacts {
    /// `vllm:generation_tokens_total` after − before, summed over URLs.
    pub generation_tokens_delta: Option<u64>,
    /// `vllm:prompt_tokens_total` after − before.
    pub prompt_tokens_delta: Option<u64>,
    /// Every readable scrape of every URL came from one incarnation per URL.
    pub continuous: bool,
    /// The incarnations seen (`url: process_start_time_seconds`).
    pub incarnations: Vec<String>,
    /// What was read, or why the deltas are unread.
    pub reason: String,
    /// The engine's own latency histograms over the envelope (first URL): observations beside
    /// the client's distributions, never a cause of them.
    #[serde(default)]
    pub histograms: Vec<HistogramFacts>,
    /// Each engine URL on its own (one per replica of a fleet), in the order first scraped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaFacts>,
}

/// One engine URL (a replica of a fleet) on its own: its share of the deltas, its incarnation
/// and its occupancy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplicaFacts {
    /// The `/metrics` URL.
    pub url: String,
    /// Its `vllm:generation_tokens_total` delta.
    pub generation_tokens_delta: Option<u64>,
    /// Its `vllm:prompt_tokens_total` delta.
    pub prompt_tokens_delta: Option<u64>,
    /// One incarnation and both boundary scrapes readable.
    pub continuous: bool,
    /// The incarnation, or why its deltas are unread.
    pub reason: String,
    /// Readable during-run samples.
    pub samples: u64,
    /// Largest `num_requests_running` seen.
    pub max_running: Option<f64>,
    /// Largest `num_requests_waiting` seen.
    pub max_waiting: Option<f64>,
    /// Largest KV cache usage seen (0–1).
    pub max_kv_usage: Option<f64>,
}

/// The GPU exporters' telemetry over the run: what the GPUs did, as DCGM saw it (an
/// observation beside the engine's counters, never a cause of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuFacts {
    /// One per exporter URL.
    pub exporters: Vec<GpuExporterFacts>,
}

/// One DCGM exporter over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuExporterFacts {
    /// The exporter's `/metrics` URL.
    pub url: String,
    /// The distinct `modelName`s its GPUs report.
    pub model_names: Vec<String>,
    /// GPUs it reports.
    pub gpus: u64,
    /// Readable scrapes / unreadable ones.
    pub readable: u64,
    /// Scrapes that failed or did not read as DCGM.
    pub unread: u64,
    /// During-run samples (one per scrape, GPUs averaged).
    pub samples: u64,
    /// Mean of the during-run utilisation samples, % (GPUs averaged per sample).
    pub mean_util_pct: Option<f64>,
    /// Largest utilisation of any GPU in any during-run sample, %.
    pub max_util_pct: Option<f64>,
    /// Largest framebuffer memory used by any GPU, MiB.
    pub max_fb_used_mib: Option<f64>,
    /// Largest power draw of any GPU, W.
    pub max_power_w: Option<f64>,
    /// Lowest and highest SM clock of any GPU, MHz.
    pub sm_clock_mhz: Option<(f64, f64)>,
    /// Why a scrape was unread, the first one.
    pub reason: String,
    /// The exporter says it is simulated (loadproof sim's, or anything labelled so).
    #[serde(default)]
    pub simulated: bool,
    /// Why its word on the GPU cannot establish the subject's `gpu_sku` (`None`: it can): it
    /// did not cover the run (a readable before-, during- and after-scrape), its GPUs did
    /// nothing while the run's requests were in flight, a GPU names no model, or it is
    /// simulated. An exporter anyone can point at is evidence only when it saw this run's work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_evidence: Option<String>,
}

/// One URL's readback as a source of subject axes: what it says, and whether it may speak for
/// the subject (the endpoint's own origin, or a replica whose counters moved in the run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadbackSource {
    /// The `/metrics` URL.
    pub url: String,
    /// What it says.
    pub readback: Readback,
    /// It served work in this run (generation or prompt tokens counted between the boundary
    /// scrapes).
    pub served: bool,
    /// A later scrape said something else than the first: which, and what.
    pub changed: Option<String>,
}

/// One engine latency histogram's growth between the boundary scrapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistogramFacts {
    /// The family (`vllm:time_to_first_token_seconds`, …).
    pub family: String,
    /// Observations added.
    pub count: u64,
    /// Mean of the added observations, ms.
    pub mean_ms: Option<f64>,
    /// Upper bound (`le`) of the bucket holding the median, ms (`None`: the `+Inf` bucket).
    pub p50_le_ms: Option<f64>,
    /// Upper bound of the bucket holding the 99th percentile, ms.
    pub p99_le_ms: Option<f64>,
}

/// The engine latency histograms the audit reports.
pub const LATENCY_HISTOGRAMS: [&str; 3] = [
    "vllm:time_to_first_token_seconds",
    "vllm:inter_token_latency_seconds",
    "vllm:e2e_request_latency_seconds",
];

fn histogram_facts(before: &Exposition, after: &Exposition) -> Vec<HistogramFacts> {
    LATENCY_HISTOGRAMS
        .iter()
        .filter_map(|family| {
            let d = prometheus::histogram_delta(before, after, family).ok()?;
            let count = d.count.whole_u64().ok()?;
            let le_of = |q: f64| -> Option<f64> {
                let rank = (q * count as f64).ceil().max(1.0);
                d.buckets
                    .iter()
                    .find(|(_, c)| c.to_f64() >= rank)
                    .and_then(|(le, _)| (*le).finite())
                    .map(|le| le.to_f64() * 1e3)
            };
            Some(HistogramFacts {
                family: (*family).to_owned(),
                count,
                mean_ms: (count > 0).then(|| d.sum.to_f64() / count as f64 * 1e3),
                p50_le_ms: if count > 0 { le_of(0.5) } else { None },
                p99_le_ms: if count > 0 { le_of(0.99) } else { None },
            })
        })
        .collect()
}

/// The occupancy series over the run's interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OccupancyFacts {
    /// Readable during-run samples.
    pub samples: u64,
    /// During-run scrapes that failed or could not be read.
    pub unread: u64,
    /// True when only before/after scrapes exist.
    pub boundary_only: bool,
    /// Largest gap between run start, samples and run end, ms.
    pub max_gap_ms: Option<f64>,
    /// Largest `num_requests_running` seen.
    pub max_running: Option<f64>,
    /// Largest `num_requests_waiting` seen.
    pub max_waiting: Option<f64>,
    /// During-run samples with `num_requests_waiting` > 0.
    #[serde(default)]
    pub waiting_samples: u64,
    /// The longest run of consecutive samples (one URL, in order) with waiting > 0. One
    /// sample alone cannot tell admission between scheduler steps from a queue; a queue seen
    /// in two scrapes in a row outlived a whole scrape interval.
    #[serde(default)]
    pub waiting_longest_run: u64,
    /// The longest such run when every unread during-run scrape is taken to have shown a queue
    /// too (only when that makes it longer; 0 otherwise). What a scrape that was not read
    /// showed is unknown: a queue seen beside it may have outlived it, a scrape dropped or
    /// failed on purpose must not break a queue in two, and unread scrapes in a row may have
    /// held a whole queue between them (every scrape that saw it turned into a timeout).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waiting_run_with_unread: u64,
    /// Largest KV cache usage seen (0–1).
    pub max_kv_usage: Option<f64>,
    /// Preemptions over the envelope.
    pub preemptions_delta: Option<u64>,
    /// The first sample where the engine held more requests than this client had in flight.
    pub engine_over_client: Option<String>,
    /// One line on what the series shows.
    pub reason: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The longest run of one URL's during-run scrapes, in order, that saw requests waiting or
/// were not read: the run a queue may have had when each unread scrape showed one too. A run
/// of unread scrapes alone counts as well: a queue seen in two scrapes in a row, both turned
/// into timeouts, leaves no scrape that saw it (the adversarial review's finding). `unread_at`
/// holds, for each unread scrape, how many of `reads` came before it and its phase. An unread
/// scrape the receipt labels before or after the run but records between two during-run
/// reads is read as during-run: a failure has no body to place it by, so its label is only
/// the claimant's, and relabelling the queue's timeouts must not hide them.
fn waiting_run_with_unread(reads: &[Read], unread_at: &[(usize, Phase)]) -> u64 {
    let during_at: Vec<usize> = reads
        .iter()
        .enumerate()
        .filter(|(_, r)| r.phase == Phase::During)
        .map(|(k, _)| k)
        .collect();
    let within = |at: usize| {
        during_at.first().is_some_and(|&first| first < at)
            && during_at.last().is_some_and(|&last| last >= at)
    };
    let unread_at: Vec<usize> = unread_at
        .iter()
        .filter(|(at, phase)| *phase == Phase::During || within(*at))
        .map(|(at, _)| *at)
        .collect();
    // The URL's during-run scrapes in order: `None` unread, else whether it saw a queue.
    let mut order: Vec<Option<bool>> = Vec::with_capacity(reads.len() + unread_at.len());
    let mut unread = unread_at.iter().peekable();
    for (k, r) in reads.iter().enumerate() {
        while unread.next_if(|&&at| at <= k).is_some() {
            order.push(None);
        }
        if r.phase == Phase::During {
            order.push(Some(r.values.waiting.is_some_and(|w| w > 0.0)));
        }
    }
    order.extend(unread.map(|_| None));
    let (mut longest, mut run) = (0u64, 0u64);
    for waiting in order {
        if waiting == Some(false) {
            run = 0;
            continue;
        }
        run += 1;
        longest = longest.max(run);
    }
    longest
}

/// The whole parse of a URL's next scrape, if [`facts`] can need it: only the last readable
/// before-scrape and the first readable after-scrape are read whole (the deltas), so a newer
/// before-scrape drops the older one's parse and a later after-scrape keeps none. A stream can
/// mark thousands of near-identical scrapes "after", each a few bytes in the file: keeping every
/// parse grew an audit by 224 MB for 3,000 of them (the adversarial pass's finding).
fn keep_whole(reads: &mut [Read], phase: Phase, metrics: Option<Exposition>) -> Option<Exposition> {
    match phase {
        Phase::During => None,
        // Searching back stops at the URL's latest scrape of the phase (the only before-scrape
        // that can still hold a parse), so a run of any length costs linear time in all.
        Phase::Before => {
            if let Some(r) = reads.iter_mut().rev().find(|r| r.phase == Phase::Before) {
                r.metrics = None;
            }
            metrics
        }
        Phase::After => {
            if reads.iter().rev().any(|r| r.phase == Phase::After) {
                None
            } else {
                metrics
            }
        }
    }
}

/// A scrape read and parsed, with when it was taken.
struct Read {
    phase: Phase,
    requested_ns: Option<i64>,
    completed_ns: Option<i64>,
    values: ScrapeValues,
    /// The whole parse, kept only for boundary scrapes (per-series deltas need it): a
    /// 10-minute series holds thousands of scrapes, and the audit reads six numbers of each.
    metrics: Option<Exposition>,
}

/// The numbers the audit reads from every scrape (and the page plots).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScrapeValues {
    /// `process_start_time_seconds`.
    pub start: Option<Decimal>,
    /// [`GENERATION_TOKENS`], summed over series.
    pub generation: Option<Decimal>,
    /// [`PROMPT_TOKENS`].
    pub prompt: Option<Decimal>,
    /// [`PREEMPTIONS`].
    pub preemptions: Option<Decimal>,
    /// [`RUNNING`].
    pub running: Option<f64>,
    /// [`WAITING`].
    pub waiting: Option<f64>,
    /// [`KV_USAGE`] (the first name present).
    pub kv: Option<f64>,
    /// The lessor's gauge: the lease ids it says hold (value 1); `None` when the scrape has no
    /// such family (no lessor answered it), or no lessor family was asked for.
    pub leases: Option<Vec<String>>,
    /// A GPU exporter's GPUs (empty for an engine's scrape).
    pub gpus: Vec<dcgm::Gpu>,
}

/// What one engine URL says it is: subject axes by name and settings by name (value, family).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readback {
    /// `engine`, `model`, `engine_version`, `model_revision`, `gpu_sku` as the body states them.
    pub axes: BTreeMap<String, String>,
    /// Engine settings from `*config_info` families: name → (value, family).
    pub settings: BTreeMap<String, (String, String)>,
    /// How a gate in front of it checks its upstream's certificate (`loadproof_gate_info`'s
    /// `upstream_tls`), when it says.
    pub upstream_tls: Option<String>,
}

impl Readback {
    fn of(m: &Exposition) -> Readback {
        let mut r = Readback::default();
        readback_from(m, &mut r.axes, &mut r.settings);
        r.upstream_tls = m
            .samples("loadproof_gate_info")
            .find_map(|s| s.label("upstream_tls"))
            .map(str::to_owned);
        r
    }
}

/// One GPU exporter scrape: its GPUs, or why it is unread.
#[derive(Debug, Clone, PartialEq)]
pub struct DcgmRead {
    /// Before, during or after.
    pub phase: Phase,
    /// When it was requested (monotonic ns).
    pub requested_ns: Option<i64>,
    /// The GPUs it reports.
    pub gpus: Result<Vec<dcgm::Gpu>, String>,
    /// The body says it is simulated ([`dcgm::simulated`]).
    pub simulated: bool,
}

impl ScrapeValues {
    fn of(m: &Exposition, lessor_family: Option<&str>) -> ScrapeValues {
        let total = |name: &str| m.total(name).ok().flatten();
        ScrapeValues {
            start: m.process_start_time().ok().flatten(),
            generation: total(GENERATION_TOKENS),
            prompt: total(PROMPT_TOKENS),
            preemptions: total(PREEMPTIONS),
            running: gauge(m, &[RUNNING]),
            waiting: gauge(m, &[WAITING]),
            kv: gauge(m, &KV_USAGE),
            leases: lessor_family.and_then(|name| m.family(name)).map(|f| {
                f.samples
                    .iter()
                    .filter(|s| s.value.finite().is_some_and(|v| v.to_f64() == 1.0))
                    .filter_map(|s| s.label("lease_id"))
                    .map(str::to_owned)
                    .collect()
            }),
            gpus: Vec::new(),
        }
    }
}

/// What one scrape said, or why it said nothing readable: the numbers the audit read, in
/// scrape order, for a reader that plots them without parsing a scrape again.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrapeReading {
    /// Index of the scrape in the receipt.
    pub scrape: usize,
    /// Its numbers, or why it is unread (failed, not HTTP 200, a block that does not verify,
    /// a body that does not parse).
    pub read: Result<ScrapeValues, String>,
}

/// Everything the engine side yields.
#[derive(Debug, Clone)]
pub struct EngineSide {
    /// Counter deltas.
    pub engine: EngineFacts,
    /// The series.
    pub occupancy: OccupancyFacts,
    /// What each engine URL says it is, in URL order.
    pub sources: Vec<ReadbackSource>,
    /// What the lessor said in every readable scrape about which lease held.
    pub leases: Vec<LeaseReading>,
    /// The GPU exporters, when any was scraped.
    pub gpu: Option<GpuFacts>,
}

/// One readable scrape's lessor gauge (the family the lease names in its `readback`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseReading {
    /// Index of the scrape in the receipt.
    pub scrape: usize,
    /// The URL scraped.
    pub url: String,
    /// Before, during or after.
    pub phase: Phase,
    /// The lease ids active; `None` when the scrape has no lessor family.
    pub active: Option<Vec<String>>,
}

/// Every scrape read once, in order: the engine facts, the readback and the page's series
/// all come from this one pass. A record stream's packed bodies are rebuilt and checked here,
/// one at a time ([`Receipt::walk_scrapes`]'s walk), never all held at once.
pub struct Scanned<'r> {
    by_url: BTreeMap<&'r str, (Vec<Read>, Vec<String>)>,
    /// Where each engine URL's unread scrapes fell among its reads: the number of reads
    /// before each one, and the phase the receipt gives it.
    unread_at: BTreeMap<&'r str, Vec<(usize, Phase)>>,
    /// What each engine URL says it is, from its first whole parse.
    readback: BTreeMap<&'r str, Readback>,
    /// The first scrape of a URL that said something else, described.
    changed: BTreeMap<&'r str, String>,
    /// Engine URLs in the order first scraped (the order the firing side listed them).
    order: Vec<&'r str>,
    /// Each GPU exporter's readings, in scrape order.
    dcgm: BTreeMap<&'r str, Vec<DcgmRead>>,
    leases: Vec<LeaseReading>,
    /// Every scrape's numbers, in order.
    pub series: Vec<ScrapeReading>,
    /// Packed bodies that did not verify: name → why (inline blocks are checked before).
    pub failures: BTreeMap<String, String>,
}

/// How a scan checks each packed scrape body against the digest its record names.
#[derive(Debug, Clone, Copy)]
pub enum BodyCheck<'r> {
    /// Core hashes each body as it rebuilds it.
    Hash,
    /// The caller's own sha256 of the bodies, by name ([`crate::receipt::Packed::walk_trusting`]).
    Known(&'r BTreeMap<String, String>),
    /// Not during the scan: each rebuilt body goes to the step's sink, for the caller to hash
    /// while the scan goes on; what the scan read stands only once every digest is confirmed
    /// (`audit::Deferred`).
    Deferred,
}

/// Reads every scrape once, in order, a few at a time ([`Scanner::step`]), so a caller can
/// do other work between steps (the page awaits the digests it is computing). `block` gives an
/// inline block's verified bytes; `lessor_family` is the gauge in which the lease's lessor
/// reports it, read from every scrape.
pub struct Scanner<'r> {
    receipt: &'r Receipt,
    lessor_family: Option<String>,
    walk: crate::receipt::Walk<'r>,
    deferred: bool,
    rescans: BTreeMap<&'r str, prometheus::Rescan>,
    /// The next scrape to read.
    next: usize,
    out: Scanned<'r>,
    /// Under [`BodyCheck::Deferred`]: every body that rebuilt, and its length.
    rebuilt: Vec<(String, u64)>,
}

impl<'r> Scanner<'r> {
    /// A scan of `receipt`'s scrapes, none read yet.
    pub fn new(
        receipt: &'r Receipt,
        lessor_family: Option<String>,
        check: BodyCheck<'r>,
    ) -> Scanner<'r> {
        let walk = match check {
            BodyCheck::Known(d) => receipt.packed.walk_trusting(d),
            BodyCheck::Hash | BodyCheck::Deferred => receipt.packed.walk(),
        };
        Scanner {
            receipt,
            lessor_family,
            walk,
            deferred: matches!(check, BodyCheck::Deferred),
            rescans: BTreeMap::new(),
            next: 0,
            out: Scanned {
                by_url: BTreeMap::new(),
                unread_at: BTreeMap::new(),
                readback: BTreeMap::new(),
                changed: BTreeMap::new(),
                order: Vec::new(),
                dcgm: BTreeMap::new(),
                leases: Vec::new(),
                series: Vec::with_capacity(receipt.scrapes.len()),
                failures: BTreeMap::new(),
            },
            rebuilt: Vec::new(),
        }
    }

    /// True once every scrape is read.
    pub fn done(&self) -> bool {
        self.next >= self.receipt.scrapes.len()
    }

    /// The next body of the walk: checked, or (deferred) handed to `sink` as rebuilt.
    fn walked<'w>(
        walk: &'w mut crate::receipt::Walk<'r>,
        deferred: bool,
        rebuilt: &mut Vec<(String, u64)>,
        sink: &mut dyn FnMut(&str, &[u8]),
    ) -> Option<crate::receipt::Walked<'w>> {
        if !deferred {
            return walk.next();
        }
        let w = walk.next_deferred()?;
        if let Some(bytes) = w.bytes {
            sink(w.name, bytes);
            rebuilt.push((w.name.to_owned(), bytes.len() as u64));
        }
        Some(w)
    }

    /// Reads up to `count` more scrapes; every packed body rebuilt on the way is handed to
    /// `sink` under [`BodyCheck::Deferred`] (and to nobody otherwise).
    pub fn step(
        &mut self,
        block: &super::client::BlockReader<'_>,
        count: usize,
        sink: &mut dyn FnMut(&str, &[u8]),
    ) {
        let receipt = self.receipt;
        let lessor_family = self.lessor_family.clone();
        let lessor_family = lessor_family.as_deref();
        let mut names: Vec<&str> = SERIES.to_vec();
        names.extend(SUBJECT_FAMILIES);
        names.extend(lessor_family);
        let end = self.next.saturating_add(count).min(receipt.scrapes.len());
        for (i, s) in receipt.scrapes.iter().enumerate().take(end).skip(self.next) {
            // The body is borrowed from the walk's buffers (never copied); the reading below
            // touches only the scan's other fields.
            let bytes = Self::body(
                receipt,
                &mut self.walk,
                self.deferred,
                &mut self.rebuilt,
                &mut self.out.failures,
                i,
                s,
                block,
                sink,
            );
            let read = if s.exporter == Exporter::Dcgm {
                let mut simulated = false;
                let gpus = bytes.and_then(|bytes| {
                    prometheus::parse(&bytes)
                        .map_err(|e| format!("scrape {i} ({:?}): {e}", s.phase))
                        .and_then(|m| {
                            simulated = dcgm::simulated(&m);
                            dcgm::read(&m).map_err(|e| format!("scrape {i} ({:?}): {e}", s.phase))
                        })
                });
                self.out
                    .dcgm
                    .entry(s.url.as_str())
                    .or_default()
                    .push(DcgmRead {
                        phase: s.phase,
                        requested_ns: s.requested.map(|t| t.mono_ns),
                        gpus: gpus.clone(),
                        simulated,
                    });
                gpus.map(|gpus| ScrapeValues {
                    gpus,
                    ..ScrapeValues::default()
                })
            } else {
                Self::engine_read(
                    &mut self.out,
                    &mut self.rescans,
                    i,
                    s,
                    bytes,
                    lessor_family,
                    &names,
                )
            };
            self.out.series.push(ScrapeReading { scrape: i, read });
        }
        self.next = end;
    }

    /// Scrape `i`'s body, rebuilt and checked (every packed body is walked, read or not), or
    /// why it is unread (failed, not HTTP 200, a block that does not verify).
    #[allow(clippy::too_many_arguments)]
    fn body<'w, 'b: 'w>(
        receipt: &'r Receipt,
        walk: &'w mut crate::receipt::Walk<'r>,
        deferred: bool,
        rebuilt: &mut Vec<(String, u64)>,
        failures: &mut BTreeMap<String, String>,
        i: usize,
        s: &'r crate::receipt::Scrape,
        block: &super::client::BlockReader<'b>,
        sink: &mut dyn FnMut(&str, &[u8]),
    ) -> Result<std::borrow::Cow<'w, [u8]>, String> {
        let (status, body) = match &s.outcome {
            ScrapeOutcome::Failed { error } => {
                return Err(format!("scrape {i} ({:?}) failed: {error}", s.phase));
            }
            ScrapeOutcome::Response { status, body } => (status, body),
        };
        // A packed body comes from the walk, which yields them in the order written: the
        // scrapes' order.
        let packed = receipt.packed.contains(body) && !receipt.evidence.contains_key(body);
        let walked = if packed {
            Self::walked(walk, deferred, rebuilt, sink)
        } else {
            None
        };
        if let Some(e) = walked.as_ref().and_then(|w| w.error.as_ref()) {
            failures.insert(e.block().to_owned(), e.to_string());
        }
        if let Some(code) = status.filter(|&c| c != 200) {
            return Err(format!("scrape {i} ({:?}) answered HTTP {code}", s.phase));
        }
        let bytes: Result<std::borrow::Cow<'w, [u8]>, String> = if !packed {
            block(body)
        } else {
            match walked.filter(|w| w.name == body) {
                Some(w) => w
                    .verified()
                    .map(std::borrow::Cow::Borrowed)
                    .map_err(|e| e.to_string()),
                // Out of step (a receipt built by hand): read it alone.
                None => receipt
                    .block(body)
                    .map(std::borrow::Cow::Owned)
                    .map_err(|e| {
                        let why = e.to_string();
                        failures.insert(body.clone(), why.clone());
                        why
                    }),
            }
        };
        bytes.map_err(|why| format!("scrape {i} ({:?}): {why}", s.phase))
    }

    /// An engine URL's scrape read: its numbers, the URL's readback from its first whole
    /// parse, and the lessor's gauge.
    fn engine_read(
        out: &mut Scanned<'r>,
        rescans: &mut BTreeMap<&'r str, prometheus::Rescan>,
        i: usize,
        s: &'r crate::receipt::Scrape,
        bytes: Result<std::borrow::Cow<'_, [u8]>, String>,
        lessor_family: Option<&str>,
        names: &[&str],
    ) -> Result<ScrapeValues, String> {
        let url = s.url.as_str();
        if !out.by_url.contains_key(url) {
            out.order.push(url);
        }
        let entry = out.by_url.entry(url).or_default();
        let read = bytes.and_then(|bytes| {
            // A during-run scrape is read for a few numbers once the URL's readback is taken:
            // every line is still checked, only those families are kept, and only the lines that
            // changed since the URL's last scrape are read again (`Rescan`).
            // Every scrape's word on the subject is checked against the URL's first: a server
            // that says one thing before the run and another during it speaks for nothing.
            let phase = s.phase;
            let parsed = if s.phase == Phase::During && out.readback.contains_key(url) {
                rescans
                    .entry(url)
                    .or_insert_with(|| prometheus::Rescan::new(names))
                    .scan(&bytes)
                    .map(|m| {
                        if let Some(why) = changed_since(out.readback.get(url), m, i, phase) {
                            out.changed.entry(url).or_insert(why);
                        }
                        (ScrapeValues::of(m, lessor_family), None)
                    })
            } else {
                prometheus::parse(&bytes).map(|m| {
                    if let Some(why) = changed_since(out.readback.get(url), &m, i, phase) {
                        out.changed.entry(url).or_insert(why);
                    }
                    if !out.readback.contains_key(url) {
                        out.readback.insert(url, Readback::of(&m));
                    }
                    (ScrapeValues::of(&m, lessor_family), Some(m))
                })
            };
            let (values, metrics) = parsed.map_err(|e| {
                let body = match &s.outcome {
                    ScrapeOutcome::Response { body, .. } => body.as_str(),
                    ScrapeOutcome::Failed { .. } => "",
                };
                format!("scrape {i} ({:?}) {body}: {e}", s.phase)
            })?;
            out.leases.push(LeaseReading {
                scrape: i,
                url: s.url.clone(),
                phase: s.phase,
                active: values.leases.clone(),
            });
            let metrics = keep_whole(&mut entry.0, s.phase, metrics);
            entry.0.push(Read {
                phase: s.phase,
                requested_ns: s.requested.map(|t| t.mono_ns),
                completed_ns: s.completed_mono_ns,
                values: values.clone(),
                metrics,
            });
            Ok(values)
        });
        if let Err(why) = &read {
            entry.1.push(why.clone());
            let at = entry.0.len();
            out.unread_at.entry(url).or_default().push((at, s.phase));
        }
        read
    }

    /// The scan, once every scrape is read (reading any left), and the bodies rebuilt under
    /// [`BodyCheck::Deferred`] with their lengths. Bodies no scrape names (a stream cannot hold
    /// one, a hand-built receipt might) are still walked and checked.
    pub fn finish(
        mut self,
        block: &super::client::BlockReader<'_>,
        sink: &mut dyn FnMut(&str, &[u8]),
    ) -> (Scanned<'r>, Vec<(String, u64)>) {
        self.step(block, usize::MAX, sink);
        while let Some(w) = Self::walked(&mut self.walk, self.deferred, &mut self.rebuilt, sink) {
            if let Some(e) = &w.error {
                self.out.failures.insert(w.name.to_owned(), e.to_string());
            }
        }
        (self.out, self.rebuilt)
    }
}

/// Reads every scrape once ([`Scanner`], all at once). `digests` the caller's own sha256 of
/// packed bodies, if it hashed them.
pub fn scan<'r>(
    receipt: &'r Receipt,
    block: &super::client::BlockReader<'_>,
    lessor_family: Option<&str>,
    digests: Option<&'r BTreeMap<String, String>>,
) -> Scanned<'r> {
    let check = digests.map_or(BodyCheck::Hash, BodyCheck::Known);
    Scanner::new(receipt, lessor_family.map(str::to_owned), check)
        .finish(block, &mut |_, _| {})
        .0
}

/// The engine facts from the scan. `run_mono_ns` is the run's interval; `spans_ns` this
/// client's requests in flight (native only) for the engine-vs-client population join.
pub fn facts(
    scanned: Scanned<'_>,
    receipt: &Receipt,
    run_mono_ns: Option<(i64, i64)>,
    spans_ns: &[(i64, i64)],
) -> EngineSide {
    let Scanned {
        by_url,
        unread_at,
        mut readback,
        mut changed,
        order,
        dcgm,
        leases,
        ..
    } = scanned;
    let mut gen_total: Option<u64> = Some(0);
    let mut prompt_total: Option<u64> = Some(0);
    let mut continuous = !by_url.is_empty();
    let mut incarnations = Vec::new();
    let mut reasons = Vec::new();
    let mut preempt_total: Option<u64> = Some(0);
    let mut histograms = Vec::new();
    let mut replicas = Vec::new();
    for (url, (reads, failures)) in &by_url {
        let replica = replica(url, reads, failures);
        if !replica.continuous {
            reasons.push(format!("{url}: {}", replica.reason));
            continuous = false;
            gen_total = None;
            prompt_total = None;
            preempt_total = None;
            replicas.push(replica.facts);
            continue;
        }
        incarnations.push(format!("{url}: {}", replica.reason));
        let (Some(before), Some(after)) = (replica.before, replica.after) else {
            continue;
        };
        let delta = |name: &str| -> Result<u64, String> {
            let d = prometheus::counter_delta(before, after, name)
                .map_err(|e| format!("{name}: {e}"))?;
            prometheus::whole_tokens(d).map_err(|e| format!("{name}: refused: {e}"))
        };
        let mut facts = replica.facts;
        match delta(GENERATION_TOKENS) {
            Ok(d) => {
                facts.generation_tokens_delta = Some(d);
                gen_total = gen_total.and_then(|t| t.checked_add(d));
            }
            Err(why) => {
                reasons.push(format!("{url}: {why}"));
                gen_total = None;
            }
        }
        match delta(PROMPT_TOKENS) {
            Ok(d) => {
                facts.prompt_tokens_delta = Some(d);
                prompt_total = prompt_total.and_then(|t| t.checked_add(d));
            }
            Err(why) => {
                reasons.push(format!("{url}: {why}"));
                prompt_total = None;
            }
        }
        if histograms.is_empty() {
            histograms = histogram_facts(before, after);
        }
        preempt_total = match delta(PREEMPTIONS) {
            Ok(d) => preempt_total.and_then(|t| t.checked_add(d)),
            Err(_) => None,
        };
        replicas.push(facts);
    }
    // One process scraped under two URLs (`localhost` and `127.0.0.1`, say) would have its
    // counters summed twice. Two replicas do not share a start time and every boundary count.
    let mut started: Vec<(&str, Vec<Option<Decimal>>)> = Vec::new();
    for (url, (reads, _)) in &by_url {
        let Some(start) = reads.iter().find_map(|r| r.values.start) else {
            continue;
        };
        let boundary = |phase: Phase| reads.iter().find(|r| r.phase == phase);
        let key: Vec<Option<Decimal>> = [boundary(Phase::Before), boundary(Phase::After)]
            .into_iter()
            .flat_map(|r| {
                [
                    r.and_then(|r| r.values.generation),
                    r.and_then(|r| r.values.prompt),
                ]
            })
            .chain([Some(start)])
            .collect();
        let same = |a: &[Option<Decimal>], b: &[Option<Decimal>]| {
            a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| match (x, y) {
                    (Some(x), Some(y)) => x.cmp_value(*y) == std::cmp::Ordering::Equal,
                    (None, None) => true,
                    _ => false,
                })
        };
        if let Some((other, _)) = started.iter().find(|(_, k)| same(k, &key)) {
            reasons.push(format!(
                "{other} and {url} report one process (process_start_time_seconds {start} and the same counts before and after): one server scraped under two URLs would count its work twice, so the deltas are unread"
            ));
            continuous = false;
            gen_total = None;
            prompt_total = None;
            preempt_total = None;
        }
        started.push((url, key));
    }
    if by_url.is_empty() {
        reasons.push("no /metrics scrapes in the receipt".to_owned());
        gen_total = None;
        prompt_total = None;
        preempt_total = None;
    }
    // In the order the firing side listed them: replica 1 is the first `--metrics-url`.
    replicas.sort_by_key(|r| order.iter().position(|u| *u == r.url));
    let sources = replicas
        .iter()
        .map(|r| ReadbackSource {
            url: r.url.clone(),
            readback: readback.remove(r.url.as_str()).unwrap_or_default(),
            served: r.generation_tokens_delta.is_some_and(|d| d > 0)
                || r.prompt_tokens_delta.is_some_and(|d| d > 0),
            changed: changed.remove(r.url.as_str()),
        })
        .collect();
    let engine = EngineFacts {
        generation_tokens_delta: gen_total,
        prompt_tokens_delta: prompt_total,
        continuous,
        reason: if reasons.is_empty() {
            format!(
                "deltas between the last before-scrape and the first after-scrape of {} URL(s), one incarnation each",
                by_url.len()
            )
        } else {
            reasons.join("; ")
        },
        incarnations,
        histograms,
        // One URL is the engine itself: its numbers are the totals above.
        replicas: if replicas.len() > 1 {
            replicas
        } else {
            Vec::new()
        },
    };

    let occupancy = occupancy(
        &by_url,
        &unread_at,
        run_mono_ns,
        spans_ns,
        preempt_total,
        receipt.protocol.max_concurrency,
    );
    EngineSide {
        engine,
        occupancy,
        sources,
        leases,
        gpu: gpu_facts(&dcgm),
    }
}

/// One engine URL read on its own: its facts (deltas left for the caller), and its boundary
/// parses when it is continuous.
struct Replica<'a> {
    facts: ReplicaFacts,
    continuous: bool,
    reason: String,
    before: Option<&'a Exposition>,
    after: Option<&'a Exposition>,
}

fn replica<'a>(url: &str, reads: &'a [Read], failures: &[String]) -> Replica<'a> {
    let before = reads
        .iter()
        .rfind(|r| r.phase == Phase::Before)
        .and_then(|r| r.metrics.as_ref());
    let after = reads
        .iter()
        .find(|r| r.phase == Phase::After)
        .and_then(|r| r.metrics.as_ref());
    let (continuous, reason) = match (before, after) {
        (Some(_), Some(_)) => match incarnation(reads) {
            Ok(desc) => (true, desc),
            Err(why) => (false, why),
        },
        _ => {
            let missing = if before.is_none() { "before" } else { "after" };
            (
                false,
                format!(
                    "no readable {missing}-scrape ({}); deltas unread — a missing scrape is never replaced by a sample",
                    if failures.is_empty() {
                        "none taken".to_owned()
                    } else {
                        failures.join("; ")
                    }
                ),
            )
        }
    };
    let during: Vec<&Read> = reads.iter().filter(|r| r.phase == Phase::During).collect();
    let max = |f: fn(&ScrapeValues) -> Option<f64>| {
        during.iter().fold(None, |m, r| max_f(m, f(&r.values)))
    };
    Replica {
        facts: ReplicaFacts {
            url: url.to_owned(),
            generation_tokens_delta: None,
            prompt_tokens_delta: None,
            continuous,
            reason: reason.clone(),
            samples: during.len() as u64,
            max_running: max(|v| v.running),
            max_waiting: max(|v| v.waiting),
            max_kv_usage: max(|v| v.kv),
        },
        continuous,
        reason,
        before,
        after,
    }
}

/// Each GPU exporter over the run.
fn gpu_facts(dcgm: &BTreeMap<&str, Vec<DcgmRead>>) -> Option<GpuFacts> {
    if dcgm.is_empty() {
        return None;
    }
    let exporters = dcgm
        .iter()
        .map(|(url, reads)| {
            let mut names: Vec<String> = Vec::new();
            let mut gpus = 0u64;
            let (mut readable, mut unread) = (0u64, 0u64);
            let mut reason = String::new();
            let (mut samples, mut util_sum, mut util_n) = (0u64, 0.0f64, 0u64);
            let mut max_util = None;
            let mut max_fb = None;
            let mut max_power = None;
                        let mut clocks: Option<(f64, f64)> = None;
            let mut simulated = false;
            let mut all_named = true;
                        let (mut before, mut during, mut after) = (false, false, false);
            for r in reads {
                simulated |= r.simulated;
                let list = match &r.gpus {
                    Ok(list) => list,
                    Err(why) => {
                        unread += 1;
                        if reason.is_empty() {
                            reason.clone_from(why);
                        }
                        continue;
                    }
                };
                                readable += 1;
                all_named &= dcgm::every_gpu_named(list);
                                match r.phase {
                    Phase::Before => before = true,
                    Phase::During => during = true,
                    Phase::After => after = true,
                }
                gpus = gpus.max(list.len() as u64);
                names.extend(dcgm::model_names(list));
                for g in list {
                    max_fb = max_f(max_fb, g.fb_used_mib);
                    max_power = max_f(max_power, g.power_w);
                    if let Some(c) = g.sm_clock_mhz {
                        clocks = Some(clocks.map_or((c, c), |(lo, hi)| (lo.min(c), hi.max(c))));
                    }
                }
                if r.phase == Phase::During {
                    samples += 1;
                    let utils: Vec<f64> = list.iter().filter_map(|g| g.util_pct).collect();
                    if !utils.is_empty() {
                        util_sum += utils.iter().sum::<f64>() / utils.len() as f64;
                        util_n += 1;
                    }
                    for u in utils {
                        max_util = max_f(max_util, Some(u));
                    }
                }
            }
                        names.sort();
            names.dedup();
            let not_evidence = if simulated {
                Some("it says it is simulated (no GPU is measured)".to_owned())
                        } else if !(before && during && after) {
                Some("it was not read before, during and after the run".to_owned())
            } else if !max_util.is_some_and(|u: f64| u > 0.0) {
                Some("its GPUs were idle in every scrape during the run: it saw none of this run's work".to_owned())
            } else if !all_named {
                Some("a GPU it reports names no model (modelName)".to_owned())
            } else {
                None
            };
            GpuExporterFacts {
                url: (*url).to_owned(),
                model_names: names,
                gpus,
                readable,
                unread,
                samples,
                mean_util_pct: (util_n > 0).then(|| util_sum / util_n as f64),
                max_util_pct: max_util,
                max_fb_used_mib: max_fb,
                max_power_w: max_power,
                sm_clock_mhz: clocks,
                                reason: if reason.is_empty() {
                    format!("{readable} readable scrapes")
                } else {
                    reason
                },
                simulated,
                not_evidence,
            }
        })
        .collect();
    Some(GpuFacts { exporters })
}

/// How scrape `i` differs from what its URL first said it is, if it does.
fn changed_since(
    first: Option<&Readback>,
    m: &Exposition,
    i: usize,
    phase: Phase,
) -> Option<String> {
    let first = first?;
    let now = Readback::of(m).axes;
    if first.axes == now {
        return None;
    }
    let moved: Vec<String> = first
        .axes
        .iter()
        .filter(|(k, v)| now.get(*k) != Some(*v))
        .map(|(k, v)| {
            format!(
                "{k} {v:?} then {:?}",
                now.get(k).map_or("nothing", String::as_str)
            )
        })
        .chain(
            now.iter()
                .filter(|(k, _)| !first.axes.contains_key(*k))
                .map(|(k, v)| format!("{k} nothing then {v:?}")),
        )
        .collect();
    Some(format!(
        "its scrape {i} ({phase:?}) changed what it says it is ({})",
        moved.join(", ")
    ))
}

/// One incarnation across a URL's readable scrapes, described; or why not.
fn incarnation(reads: &[Read]) -> Result<String, String> {
    let starts: Vec<Decimal> = reads.iter().filter_map(|r| r.values.start).collect();
    // Two spellings of one number are one incarnation: compare values, not text.
    if let Some(first) = starts.first()
        && let Some(other) = starts
            .iter()
            .find(|v| v.cmp_value(*first) != std::cmp::Ordering::Equal)
    {
        return Err(format!(
            "the server restarted during the run (process_start_time_seconds {first} then {other}): deltas across incarnations are refused"
        ));
    }
    // Counter reset detection between consecutive scrapes, whether or not start times exist
    // (per series between the boundary scrapes: `counter_delta` does that when it takes the
    // delta).
    for pair in reads.windows(2) {
        let [a, b] = pair else { continue };
        for (name, x, y) in [
            (GENERATION_TOKENS, a.values.generation, b.values.generation),
            (PROMPT_TOKENS, a.values.prompt, b.values.prompt),
        ] {
            if let (Some(x), Some(y)) = (x, y)
                && y.cmp_value(x) == std::cmp::Ordering::Less
            {
                return Err(format!(
                    "counter reset between consecutive scrapes ({name} {x} then {y}): deltas across incarnations are refused"
                ));
            }
        }
    }
    Ok(match starts.first() {
        Some(v) if starts.len() == reads.len() => {
            format!("one incarnation (process_start_time_seconds {v})")
        }
        _ => "process_start_time_seconds not in every scrape; no counter decreased across the scrapes"
            .to_owned(),
    })
}

fn readback_from(
    m: &Exposition,
    out: &mut BTreeMap<String, String>,
    settings: &mut BTreeMap<String, (String, String)>,
) {
    for family in m.families() {
        if family.name.starts_with("vllm:") {
            // vLLM's exporter (or a simulator of it, which says so below and overrides this).
            out.entry("engine".to_owned())
                .or_insert_with(|| "vllm".to_owned());
        }
        for s in &family.samples {
            for (k, v) in &s.labels {
                if k == "model_name" && family.name.starts_with("vllm:") {
                    out.entry("model".to_owned()).or_insert_with(|| v.clone());
                }
            }
            if s.name == "loadproof_gate_info" {
                // What the gateway's operator (the lessor, not the claimant) states about the
                // upstream; a simulator's own info wins.
                for (k, v) in &s.labels {
                    let axis = match k.as_str() {
                        "model_revision" => "model_revision",
                        "gpu_sku" => "gpu_sku",
                        _ => continue,
                    };
                    out.entry(axis.to_owned()).or_insert_with(|| v.clone());
                }
            }
            if family.name.ends_with("config_info") {
                // Engine settings by name (`vllm:cache_config_info`,
                // `loadproof_sim_config_info`): what a stated knob is read back from.
                for (k, v) in &s.labels {
                    settings
                        .entry(k.clone())
                        .or_insert_with(|| (v.clone(), family.name.clone()));
                }
            }
            if s.name == "loadproof_sim_info" {
                out.insert("engine".to_owned(), "loadproof sim".to_owned());
                for (k, v) in &s.labels {
                    match k.as_str() {
                        "version" => out.insert("engine_version".to_owned(), v.clone()),
                        "revision" => out.insert("model_revision".to_owned(), v.clone()),
                        "gpu_sku" => out.insert("gpu_sku".to_owned(), v.clone()),
                        _ => None,
                    };
                }
            }
        }
    }
}

fn gauge(m: &Exposition, names: &[&str]) -> Option<f64> {
    names
        .iter()
        .find_map(|n| m.total(n).ok().flatten())
        .map(|d| d.to_f64())
}

/// The client's requests in flight during an interval, counted by binary search: an hour's
/// run joins ~15,000 scrapes with ~60,000 requests.
struct InFlight<'s> {
    spans: &'s [(i64, i64)],
    starts: Vec<i64>,
    ends: Vec<i64>,
    /// Every span starts no later than it ends (what makes the two sorted lists enough).
    ordered: bool,
}

impl<'s> InFlight<'s> {
    fn new(spans: &'s [(i64, i64)]) -> InFlight<'s> {
        let mut starts: Vec<i64> = spans.iter().map(|s| s.0).collect();
        let mut ends: Vec<i64> = spans.iter().map(|s| s.1).collect();
        starts.sort_unstable();
        ends.sort_unstable();
        InFlight {
            spans,
            starts,
            ends,
            ordered: spans.iter().all(|(s, e)| s <= e),
        }
    }

    /// Spans with `start < done` and `end > req`.
    fn count(&self, req: i64, done: i64) -> usize {
        if self.ordered && req < done {
            // A span that ended by `req` started before `done`; so those that started before
            // `done`, less those that ended by `req`.
            let started = self.starts.partition_point(|&s| s < done);
            let ended = self.ends.partition_point(|&e| e <= req);
            return started.saturating_sub(ended);
        }
        self.spans
            .iter()
            .filter(|(s, e)| *s < done && *e > req)
            .count()
    }
}

fn occupancy(
    by_url: &BTreeMap<&str, (Vec<Read>, Vec<String>)>,
    unread_at: &BTreeMap<&str, Vec<(usize, Phase)>>,
    run: Option<(i64, i64)>,
    spans_ns: &[(i64, i64)],
    preemptions_delta: Option<u64>,
    cap: Option<u64>,
) -> OccupancyFacts {
    let mut facts = OccupancyFacts {
        samples: 0,
        unread: 0,
        boundary_only: false,
        max_gap_ms: None,
        max_running: None,
        max_waiting: None,
        waiting_samples: 0,
        waiting_longest_run: 0,
        waiting_run_with_unread: 0,
        max_kv_usage: None,
        preemptions_delta,
        engine_over_client: None,
        reason: String::new(),
    };
    let single_url = by_url.len() == 1;
    let mut max_gap: Option<i64> = None;
    let mut reasons = Vec::new();
    let in_flight = InFlight::new(spans_ns);
    for (url, (reads, failures)) in by_url {
        facts.unread += failures.iter().filter(|f| f.contains("(During)")).count() as u64;
        let during: Vec<&Read> = reads.iter().filter(|r| r.phase == Phase::During).collect();
        facts.samples += during.len() as u64;
        if during.is_empty() {
            continue;
        }
        let Some((start, end)) = run else {
            reasons.push(format!(
                "{url}: the run's interval is not on the receipt's clock"
            ));
            continue;
        };
        let mut points: Vec<i64> = during.iter().filter_map(|r| r.requested_ns).collect();
        if points.len() < during.len() {
            reasons.push(format!("{url}: during-run scrapes carry no times"));
            continue;
        }
        points.retain(|t| *t >= start && *t <= end);
        points.push(start);
        points.push(end);
        points.sort_unstable();
        let gap = points.windows(2).filter_map(|w| match w {
            [a, b] => Some(b - a),
            _ => None,
        });
        max_gap = max_gap.max(gap.max());
        let unread_here = unread_at.get(url).map_or(&[][..], Vec::as_slice);
        let worst = waiting_run_with_unread(reads, unread_here);
        facts.waiting_run_with_unread = facts.waiting_run_with_unread.max(worst);
        let mut run_waiting = 0u64;
        for r in &during {
            let (running, waiting, kv) = (r.values.running, r.values.waiting, r.values.kv);
            if waiting.is_some_and(|w| w > 0.0) {
                facts.waiting_samples += 1;
                run_waiting += 1;
                facts.waiting_longest_run = facts.waiting_longest_run.max(run_waiting);
            } else {
                run_waiting = 0;
            }
            facts.max_running = max_f(facts.max_running, running);
            facts.max_waiting = max_f(facts.max_waiting, waiting);
            facts.max_kv_usage = max_f(facts.max_kv_usage, kv);
            if single_url
                && !spans_ns.is_empty()
                && facts.engine_over_client.is_none()
                && let (Some(req), Some(done), Some(run_n), Some(wait_n)) =
                    (r.requested_ns, r.completed_ns, running, waiting)
            {
                // Upper bound on this client's requests in flight while the scrape was taken.
                let client = in_flight.count(req, done);
                let engine = run_n + wait_n;
                if engine > client as f64 {
                    facts.engine_over_client = Some(format!(
                        "at {:.3} s the engine held {engine} requests (running + waiting) while this client had at most {client} in flight",
                        (req - start) as f64 / 1e9
                    ));
                }
            }
        }
    }
    facts.max_gap_ms = max_gap.map(|g| g as f64 / 1e6);
    if facts.waiting_run_with_unread <= facts.waiting_longest_run {
        facts.waiting_run_with_unread = 0;
    }
    facts.boundary_only = facts.samples == 0
        && by_url.values().any(|(reads, _)| {
            reads.iter().any(|r| r.phase == Phase::Before)
                && reads.iter().any(|r| r.phase == Phase::After)
        });
    facts.reason = if !reasons.is_empty() {
        reasons.join("; ")
    } else if facts.samples == 0 {
        if facts.boundary_only {
            "boundary only: before and after scrapes, no series over the interval".to_owned()
        } else {
            "unsampled: no readable scrape during the run".to_owned()
        }
    } else {
        let cap = cap
            .filter(|c| *c > 0)
            .map_or(String::new(), |c| format!(", cap {c}"));
        format!(
            "{} samples over the run, largest gap {:.0} ms{cap}",
            facts.samples,
            facts.max_gap_ms.unwrap_or(f64::NAN)
        )
    };
    facts
}

fn max_f(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The adversarial pass's finding: 3,000 scrapes marked "after" (a few bytes each in the
    /// file) kept 3,000 whole parses to the end of the audit, 224 MB. Only the parses `facts`
    /// reads are kept: the last before-scrape's and the first after-scrape's.
    #[test]
    fn only_the_last_before_and_the_first_after_scrape_are_kept_whole() {
        let m = prometheus::parse(b"vllm:num_requests_running 1\n").unwrap();
        let mut reads: Vec<Read> = Vec::new();
        for phase in [Phase::Before; 50]
            .into_iter()
            .chain([Phase::During; 50])
            .chain([Phase::After; 3000])
        {
            let metrics = keep_whole(&mut reads, phase, Some(m.clone()));
            reads.push(Read {
                phase,
                requested_ns: None,
                completed_ns: None,
                values: ScrapeValues::of(&m, None),
                metrics,
            });
        }
        let whole: Vec<usize> = (0..reads.len())
            .filter(|&i| reads[i].metrics.is_some())
            .collect();
        assert_eq!(whole, [49, 100]);
    }

    proptest! {
        #[test]
        fn requests_in_flight_by_binary_search_are_the_linear_count(
            spans in proptest::collection::vec((0i64..100, 0i64..100), 0..40),
            req in 0i64..100,
            done in 0i64..100,
        ) {
            let linear = spans.iter().filter(|(s, e)| *s < done && *e > req).count();
            prop_assert_eq!(InFlight::new(&spans).count(req, done), linear);
            let ordered: Vec<(i64, i64)> = spans.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
            let linear = ordered.iter().filter(|(s, e)| *s < done && *e > req).count();
            prop_assert_eq!(InFlight::new(&ordered).count(req, done), linear);
        }
    }
}
