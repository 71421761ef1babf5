//! What the client saw, recomputed from the execution's raw evidence only.
//!
//! The execution gate comes first: a bench process's facts are read from its stdout (and the
//! result JSON it wrote) only when it exited 0 on its own; a nonzero exit, a signal, an
//! interruption, a client that never started and an unreachable endpoint are all *unread*,
//! whatever text they left behind. stderr is never read. The native client's facts come from
//! its per-request event log, one record per offered request.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::over_time::{self, Completed, OverTime};
use super::peer;
use super::policy::Policy;
use crate::formats::vllm_bench::{self, BenchResult, Detailed, Summary};
use crate::formats::{aiperf, guidellm};
use crate::receipt::{
    Disposition, Engine, Execution, Receipt, RequestRecord, ResultFile, Stamp, parse_events,
};
use crate::stats::percentile_sorted_f64 as percentile;

/// Whether client facts were read, and why (not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    /// True when client facts were read.
    pub read: bool,
    /// What was read, or why nothing was.
    pub reason: String,
}

/// The operation ledger: every offered request and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerFacts {
    /// Requests offered (the plan's count).
    pub offered: Option<u64>,
    /// Requests that completed.
    pub completed: u64,
    /// Requests that failed (any other terminal disposition); `None` when the client did not
    /// say.
    pub failed: Option<u64>,
    /// Failed requests that had already streamed tokens (a broken stream, not a refusal).
    pub failed_after_tokens: Option<u64>,
    /// True when only totals exist (vLLM's summary), not one disposition per request.
    pub aggregate: bool,
    /// Every offered request has exactly one terminal disposition (or, for an aggregate
    /// ledger, completed + failed = offered).
    pub closed: bool,
    /// Terminal dispositions by kind (per-request ledgers only).
    pub dispositions: BTreeMap<String, u64>,
    /// Where the ledger comes from.
    pub source: String,
    /// In an unsealed receipt: offered requests with no terminal record (in flight, or not yet
    /// sent, when the writer stopped) — counted as neither completed nor failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unterminated: Option<u64>,
}

/// Client token totals and the client's own service interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientFacts {
    /// Output tokens of completed requests.
    pub output_tokens: u64,
    /// Input tokens of completed requests.
    pub input_tokens: u64,
    /// The benchmark's own interval, seconds (never the scrape envelope).
    pub duration_s: f64,
    /// `output_tokens / duration_s`; `None` when the interval is empty (never NaN, never 0).
    pub output_tokens_per_s: Option<f64>,
    /// Which interval: the bench's `duration`, or first send → last terminal event.
    pub interval: String,
}

/// One latency distribution as observed by the client, milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyFacts {
    /// `ttft`, `tpot`, `itl` or `e2el`.
    pub metric: String,
    /// Values in the distribution (`None`: only the printed summary exists).
    pub count: Option<u64>,
    /// Mean.
    pub mean_ms: Option<f64>,
    /// Median.
    pub p50_ms: Option<f64>,
    /// 90th percentile.
    pub p90_ms: Option<f64>,
    /// 99th percentile.
    pub p99_ms: Option<f64>,
    /// Largest.
    pub max_ms: Option<f64>,
    /// Where the numbers come from.
    pub source: String,
}

/// The client's ITL tail, observed; its cause is not established by anything a receipt holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItlTail {
    /// Median ITL.
    pub p50_ms: f64,
    /// P99 ITL.
    pub p99_ms: f64,
    /// p99 / p50; `None` when the median is 0 (no ratio, never NaN).
    pub ratio: Option<f64>,
    /// Always `unestablished` here.
    pub cause: String,
    /// Why no cause is assigned.
    pub why: String,
}

/// Peaks of the client's own requests — never engine concurrency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Concurrency {
    /// vLLM's "Peak concurrent requests": successful requests per whole-second bucket, each
    /// counted in every second it touches. An upper bound on the client's own concurrency.
    pub successful_client_second_bucket_peak: Option<u64>,
    /// The exact maximum of this client's requests in flight (per-request spans).
    pub exact_client_peak: Option<u64>,
    /// The cap the protocol declared (`None`: uncapped or unstated).
    pub declared_cap: Option<u64>,
    /// What these numbers are not.
    pub note: String,
}

/// Arrival as observed from per-request send times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrivalFacts {
    /// True only when per-request send times were retained.
    pub observed: bool,
    /// Where they come from, or why arrival is only declared.
    pub source: String,
    /// Requests sent.
    pub sent: u64,
    /// Offered requests without a recorded send time (not sent, or a record the tool lost).
    pub not_sent: u64,
    /// Send lag behind the schedule (sent − scheduled), ms: median, p99, max.
    pub lag_p50_ms: Option<f64>,
    /// P99 lag.
    pub lag_p99_ms: Option<f64>,
    /// Largest lag.
    pub lag_max_ms: Option<f64>,
    /// Requests sent before their scheduled time.
    pub early: u64,
    /// The bound the standing judges the lag against: the reviewer's policy, ms.
    pub bound_ms: Option<f64>,
    /// The bound the receipt itself states (the native client's `--lag-bound-ms`): the
    /// claimant's intent, reported beside the policy's and never used.
    #[serde(default)]
    pub claimed_bound_ms: Option<f64>,
}

/// Everything read from the client side of one receipt.
#[derive(Debug, Clone, Default)]
pub struct ClientSide {
    /// The execution gate.
    pub gate: Option<Gate>,
    /// The ledger, when read.
    pub ledger: Option<LedgerFacts>,
    /// Token totals and rate, when read.
    pub client: Option<ClientFacts>,
    /// Latency distributions.
    pub latency: Vec<LatencyFacts>,
    /// The ITL tail, when an ITL distribution exists.
    pub itl_tail: Option<ItlTail>,
    /// Client peaks.
    pub concurrency: Option<Concurrency>,
    /// Arrival.
    pub arrival: Option<ArrivalFacts>,
    /// Throughput and latency in time slices (per-request populations only).
    pub over_time: Option<OverTime>,
    /// This client's requests in flight as `[sent, end)` monotonic ns (native only).
    pub spans_ns: Vec<(i64, i64)>,
    /// The run on the firing machine's monotonic clock.
    pub run_mono_ns: Option<(i64, i64)>,
    /// The run on the firing machine's wall clock.
    pub run_unix_ns: Option<(i64, i64)>,
    /// Evidence that contradicts other evidence in the same receipt.
    pub inconsistencies: Vec<String>,
}

/// A verified block's bytes (borrowed from the receipt when they are text), or why the block
/// cannot be used: its digest failed or it is missing.
pub type BlockReader<'a> = dyn Fn(&str) -> Result<std::borrow::Cow<'a, [u8]>, String> + 'a;

/// Reads the client side. `block` returns a verified block or why it cannot be used.
pub fn read(receipt: &Receipt, block: &BlockReader<'_>, policy: &Policy) -> ClientSide {
    let cap = receipt.protocol.max_concurrency.filter(|c| *c > 0);
    match &receipt.execution {
        Execution::NotStarted { cause } => unread(format!(
            "the client never started ({cause}): no client facts exist"
        )),
        Execution::Unreachable { url, cause } => unread(format!(
            "the endpoint {url} was unreachable ({cause}): any retained text is unread"
        )),
        Execution::Ran {
            exit,
            stdout,
            result,
            started,
            ended,
            interrupted,
            ..
        } => {
            let mut side = ClientSide {
                run_mono_ns: started.zip(*ended).map(|(a, b)| (a.mono_ns, b.mono_ns)),
                run_unix_ns: started.zip(*ended).map(|(a, b)| (a.unix_ns, b.unix_ns)),
                ..ClientSide::default()
            };
            let tool = receipt.protocol.engine;
            let what = match tool {
                Engine::Aiperf | Engine::Guidellm => "its own records are",
                Engine::VllmBenchServe | Engine::Native => "stdout is",
            };
            if let Some(why) = interrupted {
                side.gate = Some(closed(format!(
                    "{} was interrupted ({why:?}): its output is unread",
                    process(tool)
                )));
                return side;
            }
            if exit.code != Some(0) || exit.signal.is_some() {
                side.gate = Some(closed(format!(
                    "{} ended with {}: {what} unread, however successful it looks (stderr is never read)",
                    process(tool),
                    match (exit.code, exit.signal) {
                        (Some(c), _) => format!("exit code {c}"),
                        (None, Some(s)) => format!("signal {s}"),
                        (None, None) => "no exit status".to_owned(),
                    }
                )));
                return side;
            }
            match tool {
                Engine::Aiperf | Engine::Guidellm => {
                    read_peer(tool, receipt, result, *started, cap, block, side, policy)
                }
                Engine::VllmBenchServe | Engine::Native => {
                    read_bench(receipt, stdout, result, cap, block, side, policy)
                }
            }
        }
        Execution::Native {
            events,
            offered,
            started,
            ended,
            interrupted,
            lag_bound_ns,
        } => {
            let side = ClientSide {
                run_mono_ns: Some((started.mono_ns, ended.mono_ns)),
                run_unix_ns: Some((started.unix_ns, ended.unix_ns)),
                ..ClientSide::default()
            };
            read_native(
                receipt,
                events,
                *offered,
                interrupted.is_some(),
                *lag_bound_ns,
                cap,
                block,
                side,
                policy,
            )
        }
    }
}

/// The schedule of the embedded `timed_trace` (arrival ns from the benchmark's start, read as
/// vLLM reads it, with the protocol's multiplier); `None` when the receipt does not embed it.
fn schedule(
    receipt: &Receipt,
    block: &BlockReader<'_>,
    inconsistencies: &mut Vec<String>,
) -> Option<Result<Vec<i64>, String>> {
    let name = crate::receipt::block::TIMED_TRACE;
    let sha256 = receipt.recorded_sha256(name)?;
    if receipt.protocol.timed_trace_sha256.as_deref() != Some(sha256) {
        inconsistencies.push(format!(
            "{name} (sha256 {sha256}) is not the timed_trace the protocol names ({})",
            receipt
                .protocol
                .timed_trace_sha256
                .as_deref()
                .unwrap_or("unstated")
        ));
        return Some(Err(format!("{name} is not the protocol's file")));
    }
    let raw = match block(name) {
        Ok(raw) => raw,
        Err(why) => return Some(Err(why)),
    };
    let multiplier = receipt.protocol.sec_multiplier.as_deref().unwrap_or("1");
    let chunk = receipt.protocol.chunk_size.unwrap_or(512);
    Some(
        crate::plan::TimedTraceReader::new(multiplier, chunk)
            .map_err(|e| e.to_string())
            .and_then(|mut reader| {
                reader.push(&raw);
                reader.finish().map_err(|e| e.to_string())
            })
            .map(|back| back.arrival_ns)
            .map_err(|e| format!("{name}: {e}")),
    )
}

/// A peer tool's own records as request records, exactly as the audit converts them (the page
/// draws its figures from these). `None` for the engines that are not peer tools.
pub fn peer_request_records(
    receipt: &Receipt,
    block: &BlockReader<'_>,
) -> Option<Result<Vec<RequestRecord>, String>> {
    let Execution::Ran {
        result, started, ..
    } = &receipt.execution
    else {
        return None;
    };
    let engine = receipt.protocol.engine;
    if !matches!(engine, Engine::Aiperf | Engine::Guidellm) {
        return None;
    }
    let name = match result {
        ResultFile::Kept { block } => block,
        ResultFile::Absent { reason } => {
            return Some(Err(format!("{} left no records: {reason}", engine.label())));
        }
    };
    let raw = match block(name) {
        Ok(raw) => raw,
        Err(why) => return Some(Err(why)),
    };
    let wall_to_mono = started.map_or(0, |s| s.unix_ns.saturating_sub(s.mono_ns));
    let rows = peer_rows(receipt, block);
    Some(convert_peer(engine, name, &raw, rows.as_deref(), wall_to_mono).map(|c| c.records))
}

/// The embedded schedule's rows (arrivals, lengths), when it is the protocol's file.
fn peer_rows(receipt: &Receipt, block: &BlockReader<'_>) -> Option<Vec<crate::plan::PeerRow>> {
    let name = crate::receipt::block::TIMED_TRACE;
    if receipt.recorded_sha256(name)? != receipt.protocol.timed_trace_sha256.as_deref()? {
        return None;
    }
    let trace = block(name).ok()?;
    crate::plan::read_peer_rows(
        &trace,
        receipt.protocol.sec_multiplier.as_deref().unwrap_or("1"),
    )
    .ok()
}

/// "the bench process" / "AIPerf's process", for the gate's reasons.
fn process(tool: Engine) -> String {
    match tool {
        Engine::VllmBenchServe | Engine::Native => "the bench process".to_owned(),
        other => format!("{}'s process", other.label()),
    }
}

/// A peer tool's own records, parsed and converted: the one path the audit and the page share.
fn convert_peer(
    tool: Engine,
    name: &str,
    raw: &[u8],
    rows: Option<&[crate::plan::PeerRow]>,
    wall_to_mono: i64,
) -> Result<peer::Converted, String> {
    match tool {
        Engine::Guidellm => guidellm::read_report(raw)
            .map(|report| peer::guidellm(&report, rows, wall_to_mono))
            .map_err(|e| format!("{name}: {e}")),
        _ => aiperf::read_export(raw)
            .map(|records| peer::aiperf(&records, rows, wall_to_mono))
            .map_err(|e| format!("{name}: {e}")),
    }
}

/// A peer tool's records (AIPerf's per-request export, GuideLLM's report), read only for a run
/// that exited 0 on its own (the gate above), converted to request records and judged like the
/// native client's.
#[allow(clippy::too_many_arguments)]
fn read_peer(
    tool: Engine,
    receipt: &Receipt,
    result: &ResultFile,
    started: Option<Stamp>,
    cap: Option<u64>,
    block: &BlockReader<'_>,
    mut side: ClientSide,
    policy: &Policy,
) -> ClientSide {
    let (what, source, ledger) = match tool {
        Engine::Guidellm => (
            "GuideLLM's report",
            "GuideLLM report",
            "its successful, errored and incomplete requests, placed in row order by queue time",
        ),
        _ => (
            "AIPerf's per-request export",
            "AIPerf export",
            "a record per request it sent, an error object for a failure",
        ),
    };
    let name = match result {
        ResultFile::Kept { block } => block,
        ResultFile::Absent { reason } => {
            side.gate = Some(closed(format!(
                "{} exited 0 but {what} was not kept ({reason}): no client facts",
                tool.label()
            )));
            return side;
        }
    };
    let Some(offered) = receipt.protocol.requests else {
        side.gate = Some(closed(format!(
            "the protocol does not state how many requests were offered: {}'s records cannot be held to a plan",
            tool.label()
        )));
        return side;
    };
    // The schedule must be the protocol's file (checked, and named, here) for a join.
    let rows = match schedule(receipt, block, &mut side.inconsistencies) {
        Some(Ok(_)) => peer_rows(receipt, block),
        _ => None,
    };
    let wall_to_mono = started.map_or(0, |s| s.unix_ns.saturating_sub(s.mono_ns));
    let converted = match block(name)
        .and_then(|raw| convert_peer(tool, name, &raw, rows.as_deref(), wall_to_mono))
    {
        Ok(c) => c,
        Err(why) => {
            side.gate = Some(closed(format!("{what} cannot be used: {why}")));
            return side;
        }
    };
    side.gate = Some(Gate {
        read: true,
        reason: format!("exit 0: {what} read ({name})"),
    });
    let schedule_zero = match (converted.zero, converted.unjoined) {
        (Some(zero), _) => Zero::Joined(zero),
        (None, why) => Zero::Unjoined(why.unwrap_or_else(|| "no schedule".to_owned())),
    };
    let population = Population {
        records: converted.records,
        offered,
        source,
        ledger_source: format!(
            "{what} ({name}): {ledger}; an offered request without a record is failed"
        ),
        schedule_zero,
        claimed_bound_ns: None,
        problems: converted.problems,
    };
    let mut side = read_population(receipt, population, cap, block, side, policy);
    if tool == Engine::Guidellm {
        for l in side.latency.iter_mut().filter(|l| l.metric == "itl") {
            l.source = "GuideLLM keeps only each request's first and last token times: no inter-token gaps were recorded".to_owned();
        }
    }
    side
}

fn closed(reason: String) -> Gate {
    Gate {
        read: false,
        reason,
    }
}

fn unread(reason: String) -> ClientSide {
    ClientSide {
        gate: Some(closed(reason)),
        ..ClientSide::default()
    }
}

const ITL_WHY: &str = "client-side gaps between streamed messages can come from the engine's scheduling, this run's own requests, prefill/decode interaction, message coalescing, the client's event loop or network, or foreign work; nothing in a receipt attributes them";

const PEAK_NOTE: &str = "peaks of this client's own requests, not engine concurrency: a whole-second bucket peak can exceed the client's cap with no foreign work at all; foreign work is read from engine counters only";

fn read_bench(
    receipt: &Receipt,
    stdout: &str,
    result: &ResultFile,
    cap: Option<u64>,
    block: &BlockReader<'_>,
    mut side: ClientSide,
    policy: &Policy,
) -> ClientSide {
    let raw = match block(stdout) {
        Ok(raw) => raw,
        Err(why) => {
            side.gate = Some(closed(format!("stdout cannot be used: {why}")));
            return side;
        }
    };
    let summary = match vllm_bench::parse_summary(&raw) {
        Ok(s) => s,
        Err(e) => {
            side.gate = Some(closed(format!(
                "stdout of an exit-0 run has no usable summary: {e}"
            )));
            return side;
        }
    };
    let result = match result {
        ResultFile::Kept { block: name } => match block(name) {
            Ok(bytes) => match vllm_bench::parse_result(&bytes) {
                Ok(r) => Some(r),
                Err(e) => {
                    side.gate = Some(closed(format!("{name}: {e}")));
                    return side;
                }
            },
            Err(why) => {
                side.gate = Some(closed(format!("the result JSON cannot be used: {why}")));
                return side;
            }
        },
        ResultFile::Absent { .. } => None,
    };
    if let Some(r) = &result {
        let mismatches = vllm_bench::disagreements(&summary, r);
        if !mismatches.is_empty() {
            let list: Vec<String> = mismatches
                .iter()
                .map(|d| format!("{} (stdout {}, result {})", d.field, d.stdout, d.result))
                .collect();
            side.inconsistencies.push(format!(
                "stdout and the result JSON are not one run's: {}",
                list.join("; ")
            ));
            side.gate = Some(closed(
                "stdout and the result JSON disagree: client facts from mixed runs are refused"
                    .to_owned(),
            ));
            return side;
        }
    }
    side.gate = Some(Gate {
        read: true,
        reason: match &result {
            Some(r) if r.detailed.is_some() => {
                "exit 0: stdout summary and the result JSON's per-request arrays read".to_owned()
            }
            Some(_) => {
                "exit 0: stdout summary and the result JSON read (no per-request arrays)".to_owned()
            }
            None => "exit 0: stdout summary read (no result JSON)".to_owned(),
        },
    });
    // Offered: the protocol's count; for an import that did not state it, the bench's own
    // `num_prompts` (the CLI value: a timed_trace run never oversamples).
    let (offered, offered_from) = match (
        receipt.protocol.requests,
        result.as_ref().and_then(|r| r.num_prompts),
    ) {
        (Some(n), _) => (Some(n), ""),
        (None, Some(n)) => (Some(n), "; offered from the result JSON's num_prompts"),
        (None, None) => (None, ""),
    };
    let mut ledger = bench_ledger(&summary, result.as_ref(), offered);
    ledger.source.push_str(offered_from);
    side.ledger = Some(ledger);
    let output_tokens = summary
        .total_generated_tokens
        .or_else(|| result.as_ref().and_then(|r| r.total_output_tokens));
    let (duration, interval) = match &result {
        Some(r) => (r.duration_s, "the bench's own duration (result JSON)"),
        None => (
            summary.duration_s,
            "the bench's own duration (stdout, 2 decimals)",
        ),
    };
    let duration_s = duration.to_f64();
    if let Some(out) = output_tokens {
        side.client = Some(ClientFacts {
            output_tokens: out,
            input_tokens: summary.total_input_tokens,
            duration_s,
            output_tokens_per_s: rate(out, duration_s),
            interval: interval.to_owned(),
        });
    }
    side.latency = bench_latency(&summary, result.as_ref());
    side.itl_tail = itl_tail(&side.latency);
    let detailed = result.as_ref().and_then(|r| r.detailed.as_ref());
    let recomputed_peak = detailed.and_then(|d| {
        let starts = d.start_times_s.as_ref()?;
        let spans: Vec<(f64, f64)> = d
            .errors
            .iter()
            .enumerate()
            .filter(|(_, e)| e.is_empty())
            .filter_map(|(i, _)| {
                let start = *starts.get(i)?;
                let latency = match &d.latencies_s {
                    Some(l) => *l.get(i)?,
                    None => d.ttfts_s.get(i)? + d.itls_s.get(i)?.iter().sum::<f64>(),
                };
                Some((start, latency))
            })
            .collect();
        vllm_bench::second_bucket_peak(&spans)
    });
    let printed_peak = summary
        .successful_client_second_bucket_peak
        .and_then(|d| d.whole_u64().ok());
    if let (Some(p), Some(r)) = (printed_peak, recomputed_peak)
        && p != r
    {
        side.inconsistencies.push(format!(
            "stdout prints a bucket peak of {p}, the per-request spans give {r}"
        ));
    }
    side.concurrency = Some(Concurrency {
        successful_client_second_bucket_peak: recomputed_peak.or(printed_peak),
        exact_client_peak: None,
        declared_cap: cap,
        note: PEAK_NOTE.to_owned(),
    });
    side.over_time = detailed.and_then(bench_over_time);
    let planned = schedule(receipt, block, &mut side.inconsistencies);
    side.arrival = Some(match detailed.and_then(|d| d.start_times_s.as_ref()) {
        Some(starts) => match planned {
            Some(Ok(arrivals)) if arrivals.len() == starts.len() => {
                joined_arrival(starts, &arrivals, policy)
            }
            Some(Ok(arrivals)) => {
                side.inconsistencies.push(format!(
                    "the result JSON has {} send times, the embedded timed_trace {} rows",
                    starts.len(),
                    arrivals.len()
                ));
                unjoined(starts.len(), "the embedded schedule has another length")
            }
            Some(Err(why)) => unjoined(starts.len(), &why),
            None => unjoined(starts.len(), "the receipt does not embed the timed_trace"),
        },
        None => ArrivalFacts {
            observed: false,
            source: format!(
                "declared only ({}): no per-request send times were retained",
                receipt
                    .protocol
                    .arrival
                    .as_deref()
                    .unwrap_or("arrival not stated")
            ),
            sent: 0,
            not_sent: 0,
            lag_p50_ms: None,
            lag_p99_ms: None,
            lag_max_ms: None,
            early: 0,
            bound_ms: None,
            claimed_bound_ms: None,
        },
    });
    side
}

fn unjoined(sent: usize, why: &str) -> ArrivalFacts {
    ArrivalFacts {
        observed: true,
        source: format!(
            "start_times (per-request send times) from --save-detailed; not joined: {why}"
        ),
        sent: sent as u64,
        not_sent: 0,
        lag_p50_ms: None,
        lag_p99_ms: None,
        lag_max_ms: None,
        early: 0,
        bound_ms: None,
        claimed_bound_ms: None,
    }
}

/// vLLM keeps only `perf_counter` send times: lag is measured relative to the first send
/// (`(start_i − start_0) − (arrival_i − arrival_0)`), which cannot see a late first request.
fn joined_arrival(starts: &[f64], arrivals: &[i64], policy: &Policy) -> ArrivalFacts {
    let (Some(s0), Some(a0)) = (starts.first(), arrivals.first()) else {
        return unjoined(0, "no requests");
    };
    let mut lags: Vec<f64> = starts
        .iter()
        .zip(arrivals)
        .map(|(s, a)| (s - s0) * 1e3 - (a - a0) as f64 / 1e6)
        .collect();
    let bound_ms = policy.max_send_lag_ms;
    let early = lags.iter().filter(|l| **l < -bound_ms).count() as u64;
    lags.sort_by(f64::total_cmp);
    ArrivalFacts {
        observed: true,
        source: "start_times joined to the embedded timed_trace (lag relative to the first send: vLLM keeps only perf_counter times)".to_owned(),
        sent: starts.len() as u64,
        not_sent: 0,
        lag_p50_ms: percentile(&lags, 50.0),
        lag_p99_ms: percentile(&lags, 99.0),
        lag_max_ms: lags.last().copied(),
        early,
        bound_ms: Some(bound_ms),
        claimed_bound_ms: None,
    }
}

fn bench_ledger(
    summary: &Summary,
    result: Option<&BenchResult>,
    offered: Option<u64>,
) -> LedgerFacts {
    if let Some(d) = result.and_then(|r| r.detailed.as_ref()) {
        let mut dispositions = BTreeMap::new();
        let (mut completed, mut failed, mut after_tokens) = (0u64, 0u64, 0u64);
        for (i, e) in d.errors.iter().enumerate() {
            if e.is_empty() {
                completed += 1;
                *dispositions.entry("ok".to_owned()).or_insert(0) += 1;
            } else {
                failed += 1;
                *dispositions.entry("error".to_owned()).or_insert(0) += 1;
                let streamed = d.output_lens.get(i).is_some_and(|n| *n > 0)
                    || d.itls_s.get(i).is_some_and(|v| !v.is_empty())
                    || d.ttfts_s.get(i).is_some_and(|t| *t > 0.0);
                if streamed {
                    after_tokens += 1;
                }
            }
        }
        let total = completed + failed;
        return LedgerFacts {
            offered,
            completed,
            failed: Some(failed),
            failed_after_tokens: Some(after_tokens),
            aggregate: false,
            closed: offered == Some(total)
                && completed == summary.successful
                && summary.failed.is_none_or(|f| f == failed),
            dispositions,
            source: "per-request errors array of the result JSON (--save-detailed)".to_owned(),
            unterminated: None,
        };
    }
    let failed = summary.failed;
    LedgerFacts {
        offered,
        completed: summary.successful,
        failed,
        failed_after_tokens: None,
        aggregate: true,
        closed: match (offered, failed) {
            (Some(o), Some(f)) => summary.successful.checked_add(f) == Some(o),
            _ => false,
        },
        dispositions: BTreeMap::new(),
        unterminated: None,
        source:
            "aggregate: the stdout summary's Successful/Failed counts (no per-request population)"
                .to_owned(),
    }
}

fn bench_latency(summary: &Summary, result: Option<&BenchResult>) -> Vec<LatencyFacts> {
    if let Some(d) = result.and_then(|r| r.detailed.as_ref()) {
        let [ttft, tpot, itl, e2el] = bench_samples(d);
        let source = "per-request arrays of the result JSON";
        return vec![
            distribution("ttft", ttft, source),
            distribution("tpot", tpot, source),
            distribution("itl", itl, source),
            distribution("e2el", e2el, source),
        ];
    }
    summary
        .latency
        .iter()
        .map(|l| {
            let p = |name: &str| {
                l.percentiles
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.to_f64())
            };
            LatencyFacts {
                metric: l.metric.to_ascii_lowercase(),
                count: None,
                mean_ms: l.mean_ms.map(|d| d.to_f64()),
                p50_ms: l.median_ms.map(|d| d.to_f64()).or_else(|| p("50")),
                p90_ms: p("90"),
                p99_ms: p("99"),
                max_ms: None,
                source: "stdout summary as printed (2 decimals); no per-request population"
                    .to_owned(),
            }
        })
        .collect()
}

/// The latency samples of completed native requests, ms, in [`LATENCY_METRICS`] order: TTFT
/// (first token − send), TPOT ((end − first token) / (completion tokens − 1), for two or
/// more tokens), every ITL (gap between consecutive chunks), E2EL (end − send). The audit's
/// distributions are made of these, and the page's histograms draw these.
pub fn native_samples<'r>(ok: impl IntoIterator<Item = &'r RequestRecord>) -> [Vec<f64>; 4] {
    let (mut ttft, mut tpot, mut itl, mut e2el) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in ok {
        let (Some(sent), Some(end)) = (r.sent_ns, r.end_ns) else {
            continue;
        };
        if let Some(first) = r.first_token_ns {
            ttft.push(first.saturating_sub(sent) as f64 / 1e6);
            if let Some(u) = r.usage
                && u.completion_tokens > 1
            {
                tpot.push(
                    end.saturating_sub(first) as f64 / 1e6 / (u.completion_tokens - 1) as f64,
                );
            }
        }
        itl.extend(r.chunks_ns.windows(2).filter_map(|w| match w {
            [a, b] => Some(b.saturating_sub(*a) as f64 / 1e6),
            _ => None,
        }));
        e2el.push(end.saturating_sub(sent) as f64 / 1e6);
    }
    [ttft, tpot, itl, e2el]
}

/// The same from `vllm bench serve`'s per-request arrays (requests with an empty error only),
/// seconds → ms. E2EL is `latencies` when present, else TTFT + the sum of the ITLs.
pub fn bench_samples(d: &Detailed) -> [Vec<f64>; 4] {
    let ok: Vec<usize> = (0..d.errors.len())
        .filter(|i| d.errors.get(*i).is_some_and(|e| e.is_empty()))
        .collect();
    let ms = |s: f64| s * 1e3;
    let latency = |i: usize| -> Option<f64> {
        match &d.latencies_s {
            Some(l) => l.get(i).copied(),
            None => Some(d.ttfts_s.get(i)? + d.itls_s.get(i)?.iter().sum::<f64>()),
        }
    };
    let ttft = ok
        .iter()
        .filter_map(|i| d.ttfts_s.get(*i))
        .map(|s| ms(*s))
        .collect();
    let itl = ok
        .iter()
        .filter_map(|i| d.itls_s.get(*i))
        .flatten()
        .map(|s| ms(*s))
        .collect();
    let e2el = ok.iter().filter_map(|i| latency(*i)).map(ms).collect();
    let tpot = ok
        .iter()
        .filter_map(|i| {
            let n = *d.output_lens.get(*i)?;
            if n < 2 {
                return None;
            }
            Some(ms((latency(*i)? - d.ttfts_s.get(*i)?) / (n - 1) as f64))
        })
        .collect();
    [ttft, tpot, itl, e2el]
}

/// The slices of `vllm bench serve`'s successful requests, from its per-request arrays (none
/// without `start_times`). Its send times are `perf_counter` readings with no stated relation
/// to the run's stamps, so they count from the first send.
fn bench_over_time(d: &Detailed) -> Option<OverTime> {
    let starts = d.start_times_s.as_ref()?;
    let ok = (0..d.errors.len()).filter(|i| d.errors.get(*i).is_some_and(|e| e.is_empty()));
    let rows: Vec<(f64, Option<f64>, f64, Option<u64>)> = ok
        .filter_map(|i| {
            let latency = match &d.latencies_s {
                Some(l) => *l.get(i)?,
                None => d.ttfts_s.get(i)? + d.itls_s.get(i)?.iter().sum::<f64>(),
            };
            Some((
                *starts.get(i)?,
                d.ttfts_s.get(i).map(|s| s * 1e3),
                latency * 1e3,
                d.output_lens.get(i).copied(),
            ))
        })
        .collect();
    let zero = rows
        .iter()
        .map(|r| r.0)
        .filter(|s| s.is_finite())
        .min_by(f64::total_cmp)?;
    let requests: Vec<Completed> = rows
        .into_iter()
        .map(|(sent, ttft_ms, e2e_ms, output_tokens)| Completed {
            sent_s: sent - zero,
            ttft_ms,
            e2e_ms,
            output_tokens,
        })
        .collect();
    over_time::slices(
        &requests,
        "per-request arrays of the result JSON (successful requests)",
        "seconds since the first send (vLLM's perf_counter send times are on no clock the run's stamps name)",
        false,
    )
}

/// The slices of a per-request population's completed requests, on the run's clock when the
/// run's start is stamped (seconds since it, the scrapes' axis), else from the first send.
fn population_over_time(
    ok: &[&RequestRecord],
    run_start_mono_ns: Option<i64>,
    source: &str,
) -> Option<OverTime> {
    let first_send = ok.iter().filter_map(|r| r.sent_ns).min()?;
    let zero = run_start_mono_ns.unwrap_or(first_send);
    let requests: Vec<Completed> = ok
        .iter()
        .filter_map(|r| {
            let (sent, end) = (r.sent_ns?, r.end_ns?);
            Some(Completed {
                sent_s: sent.saturating_sub(zero) as f64 / 1e9,
                ttft_ms: r
                    .first_token_ns
                    .map(|first| first.saturating_sub(sent) as f64 / 1e6),
                e2e_ms: end.saturating_sub(sent) as f64 / 1e6,
                output_tokens: r.usage.map(|u| u.completion_tokens),
            })
        })
        .collect();
    let axis = if run_start_mono_ns.is_some() {
        "seconds since the run's start (the firing machine's monotonic clock, as the scrapes' times)"
    } else {
        "seconds since the first send (the run's start is not stamped)"
    };
    over_time::slices(
        &requests,
        &format!("{source} (completed requests)"),
        axis,
        run_start_mono_ns.is_some(),
    )
}

/// The order of [`native_samples`] and [`bench_samples`]: the audit's latency metrics.
pub const LATENCY_METRICS: [&str; 4] = ["ttft", "tpot", "itl", "e2el"];

fn distribution(metric: &str, mut values: Vec<f64>, source: &str) -> LatencyFacts {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    let n = values.len();
    LatencyFacts {
        metric: metric.to_owned(),
        count: Some(n as u64),
        mean_ms: (n > 0).then(|| values.iter().sum::<f64>() / n as f64),
        p50_ms: percentile(&values, 50.0),
        p90_ms: percentile(&values, 90.0),
        p99_ms: percentile(&values, 99.0),
        max_ms: values.last().copied(),
        source: source.to_owned(),
    }
}

fn itl_tail(latency: &[LatencyFacts]) -> Option<ItlTail> {
    let itl = latency.iter().find(|l| l.metric == "itl")?;
    let (p50, p99) = (itl.p50_ms?, itl.p99_ms?);
    Some(ItlTail {
        p50_ms: p50,
        p99_ms: p99,
        ratio: (p50 > 0.0).then(|| p99 / p50),
        cause: "unestablished".to_owned(),
        why: ITL_WHY.to_owned(),
    })
}

fn rate(tokens: u64, seconds: f64) -> Option<f64> {
    (seconds > 0.0).then(|| tokens as f64 / seconds)
}

#[allow(clippy::too_many_arguments)]
fn read_native(
    receipt: &Receipt,
    events: &str,
    offered: u64,
    interrupted: bool,
    lag_bound_ns: i64,
    cap: Option<u64>,
    block: &BlockReader<'_>,
    mut side: ClientSide,
    policy: &Policy,
) -> ClientSide {
    let records = match block(events)
        .and_then(|raw| parse_events(&raw).map_err(|e| format!("{events}: {e}")))
    {
        Ok(r) => r,
        Err(why) => {
            side.gate = Some(closed(format!("the event log cannot be used: {why}")));
            return side;
        }
    };
    side.gate = Some(Gate {
        read: true,
        reason: if interrupted {
            "native event log read (the run was interrupted: unfinished requests are named in the ledger)"
                .to_owned()
        } else {
            "native event log read: one record per offered request".to_owned()
        },
    });
    let population = Population {
        records,
        offered,
        source: "native event log",
        ledger_source: "native event log: one terminal disposition per offered request".to_owned(),
        schedule_zero: Zero::Kept,
        claimed_bound_ns: Some(lag_bound_ns),
        problems: Vec::new(),
    };
    read_population(receipt, population, cap, block, side, policy)
}

/// How a population's `scheduled_ns` relate to the plan's schedule.
enum Zero {
    /// The client kept its own schedule (native): every `scheduled_ns` must be the run's zero
    /// plus the plan's arrival, which is checked.
    Kept,
    /// The schedule was joined here from the plan, with the zero the records imply (said how).
    Joined(String),
    /// No schedule to join (`scheduled_ns` = `sent_ns`): arrival is not observed, and why.
    Unjoined(String),
}

/// One request per record, from any client that keeps per-request records: the ledger,
/// token totals, latency, spans and arrival are all computed from these, the same way for
/// every engine.
struct Population {
    records: Vec<RequestRecord>,
    offered: u64,
    /// Where the records come from, for every fact's `source`.
    source: &'static str,
    ledger_source: String,
    schedule_zero: Zero,
    claimed_bound_ns: Option<i64>,
    /// Records that could not be joined to a planned request, named.
    problems: Vec<String>,
}

fn read_population(
    receipt: &Receipt,
    population: Population,
    cap: Option<u64>,
    block: &BlockReader<'_>,
    mut side: ClientSide,
    policy: &Policy,
) -> ClientSide {
    let Population {
        records,
        offered,
        source,
        ledger_source,
        schedule_zero,
        claimed_bound_ns,
        problems: mut unjoinable,
    } = population;
    // Ledger: exactly one record per offered index.
    let mut seen = std::collections::HashSet::with_capacity(records.len());
    let mut problems = std::mem::take(&mut unjoinable);
    for r in &records {
        if r.index >= offered {
            problems.push(format!(
                "a record for request {} beyond the {offered} offered",
                r.index
            ));
        } else if !seen.insert(r.index) {
            problems.push(format!("request {} has two records", r.index));
        }
    }
    let missing = offered.saturating_sub(seen.len() as u64);
    // In an unsealed receipt a request without a record had not ended when the writer
    // stopped: the ledger counts it as unterminated (never closed), not as a contradiction.
    if missing > 0 && receipt.sealed() {
        problems.push(format!("{missing} offered requests have no record"));
    }
    let mut dispositions: BTreeMap<String, u64> = BTreeMap::new();
    let (mut completed, mut failed, mut after_tokens) = (0u64, 0u64, 0u64);
    for r in &records {
        *dispositions
            .entry(r.disposition.kind().to_owned())
            .or_insert(0) += 1;
        if r.disposition == Disposition::Ok {
            completed += 1;
        } else {
            failed += 1;
            if r.first_token_ns.is_some() || !r.chunks_ns.is_empty() {
                after_tokens += 1;
            }
        }
    }
    for p in problems.iter().take(3) {
        side.inconsistencies.push(format!("{source}: {p}"));
    }
    let sealed = receipt.sealed();
    side.ledger = Some(LedgerFacts {
        offered: Some(offered),
        completed,
        failed: Some(if sealed { failed + missing } else { failed }),
        unterminated: (!sealed).then_some(missing),
        failed_after_tokens: Some(after_tokens),
        aggregate: false,
        closed: problems.is_empty() && missing == 0,
        dispositions,
        source: ledger_source,
    });
    // From here on only records joined to an offered request, the first per request: a record
    // beyond the plan or a second one is named above and feeds no number below (a record
    // without a row has no schedule, so its lag would be a made-up 0, and it would hide a
    // request that has no record of its own).
    let records: Vec<RequestRecord> = {
        let mut joined = std::collections::HashSet::with_capacity(records.len());
        records
            .into_iter()
            .filter(|r| r.index < offered && joined.insert(r.index))
            .collect()
    };

    // Client totals over completed requests; the interval is first send → last terminal event.
    let ok: Vec<&RequestRecord> = records
        .iter()
        .filter(|r| r.disposition == Disposition::Ok)
        .collect();
    let without_usage: Vec<u64> = ok
        .iter()
        .filter(|r| r.usage.is_none())
        .map(|r| r.index)
        .collect();
    let first_send = records.iter().filter_map(|r| r.sent_ns).min();
    let last_end = records
        .iter()
        .filter(|r| r.sent_ns.is_some())
        .filter_map(|r| r.end_ns)
        .max();
    if without_usage.is_empty()
        && let (Some(a), Some(b)) = (first_send, last_end)
    {
        let output: u64 = ok
            .iter()
            .filter_map(|r| r.usage)
            .map(|u| u.completion_tokens)
            .fold(0, u64::saturating_add);
        let input: u64 = ok
            .iter()
            .filter_map(|r| r.usage)
            .map(|u| u.prompt_tokens)
            .fold(0, u64::saturating_add);
        let duration_s = (b - a) as f64 / 1e9;
        side.client = Some(ClientFacts {
            output_tokens: output,
            input_tokens: input,
            duration_s,
            output_tokens_per_s: rate(output, duration_s),
            interval: format!("first send → last terminal event ({source})"),
        });
    } else if !without_usage.is_empty() {
        side.inconsistencies.push(format!(
            "{} completed requests carry no usage (first: request {}): client token totals are unread",
            without_usage.len(),
            without_usage.first().copied().unwrap_or(0)
        ));
    }

    // Latency of completed requests.
    let [ttft, tpot, itl, e2el] = native_samples(ok.iter().copied());
    side.latency = vec![
        distribution("ttft", ttft, source),
        distribution("tpot", tpot, source),
        distribution("itl", itl, source),
        distribution("e2el", e2el, source),
    ];
    side.itl_tail = itl_tail(&side.latency);
    side.over_time = population_over_time(&ok, side.run_mono_ns.map(|(a, _)| a), source);

    // Concurrency: this client's spans only.
    side.spans_ns = records
        .iter()
        .filter_map(|r| Some((r.sent_ns?, r.end_ns?)))
        .collect();
    let ok_spans: Vec<(f64, f64)> = ok
        .iter()
        .filter_map(|r| {
            Some((
                r.sent_ns? as f64 / 1e9,
                (r.end_ns? - r.sent_ns?) as f64 / 1e9,
            ))
        })
        .collect();
    side.concurrency = Some(Concurrency {
        successful_client_second_bucket_peak: vllm_bench::second_bucket_peak(&ok_spans),
        exact_client_peak: Some(vllm_bench::exact_peak(&side.spans_ns)),
        declared_cap: cap,
        note: PEAK_NOTE.to_owned(),
    });

    // The schedule the client kept must be the plan's.
    if matches!(schedule_zero, Zero::Kept)
        && let Some(Ok(arrivals)) = schedule(receipt, block, &mut side.inconsistencies)
    {
        let zero = side.run_mono_ns.map_or(0, |(a, _)| a);
        let off: Vec<u64> = records
            .iter()
            .filter(|r| {
                usize::try_from(r.index)
                    .ok()
                    .and_then(|i| arrivals.get(i))
                    .is_none_or(|a| r.scheduled_ns - zero != *a)
            })
            .map(|r| r.index)
            .collect();
        if let Some(first) = off.first() {
            side.inconsistencies.push(format!(
                "{} requests were scheduled off the embedded timed_trace (first: request {first})",
                off.len()
            ));
        }
    }

    // Arrival: observed send times against the schedule.
    let sent = records.iter().filter(|r| r.sent_ns.is_some()).count() as u64;
    let arrival_source = match &schedule_zero {
        Zero::Kept => {
            format!("per-request send times of the {source}, against the plan's schedule")
        }
        Zero::Joined(zero) => format!(
            "per-request send times of the {source}, joined to the embedded timed_trace ({zero})"
        ),
        Zero::Unjoined(why) => {
            side.arrival = Some(ArrivalFacts {
                source: format!("per-request send times of the {source}; not joined: {why}"),
                not_sent: offered.saturating_sub(sent),
                ..unjoined(sent as usize, why)
            });
            return side;
        }
    };
    let mut lags: Vec<f64> = Vec::new();
    let mut early = 0u64;
    for r in &records {
        if let Some(sent) = r.sent_ns {
            let lag = sent.saturating_sub(r.scheduled_ns);
            if lag < 0 {
                early += 1;
            }
            lags.push(lag as f64 / 1e6);
        }
    }
    lags.sort_by(f64::total_cmp);
    side.arrival = Some(ArrivalFacts {
        observed: true,
        source: arrival_source,
        sent: lags.len() as u64,
        not_sent: offered.saturating_sub(lags.len() as u64),
        lag_p50_ms: percentile(&lags, 50.0),
        lag_p99_ms: percentile(&lags, 99.0),
        lag_max_ms: lags.last().copied(),
        early,
        bound_ms: Some(policy.max_send_lag_ms),
        claimed_bound_ms: claimed_bound_ns.map(|ns| ns as f64 / 1e6),
    });
    side
}
