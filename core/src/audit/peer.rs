//! A peer load generator's own per-request records as the audit's one request shape
//! ([`RequestRecord`]): AIPerf's `profile_export.jsonl` and GuideLLM's report. Once converted,
//! the ledger, token totals, latency, spans and arrival are computed exactly as for the native
//! client's event log, so four engines are judged by one rule.
//!
//! Times are moved onto the firing machine's monotonic clock (the tools write wall-clock time;
//! the run's own start stamp relates the two), so the client's spans join the engine's scrapes
//! as the native client's do. A record is joined to its planned row by the session id loadproof
//! wrote into the tool's input ([`row_index`]); a fact a tool did not record stays absent and is
//! named, never filled in.

use serde_json::Value;

use crate::formats::{aiperf, guidellm};
use crate::plan::{PeerRow, aiperf_input, guidellm_input, read_peer_rows, row_index};
use crate::receipt::{Disposition, Engine, Execution, Receipt, RequestRecord, Usage, block};

/// A tool's records converted, with what the conversion could not place.
#[derive(Debug, Clone, Default)]
pub struct Converted {
    /// One per record the tool wrote, in its order.
    pub records: Vec<RequestRecord>,
    /// Records that name no planned row, and other placement problems.
    pub problems: Vec<String>,
    /// How the schedule's zero was found (`None`: the records could not be joined to the
    /// schedule, and `unjoined` says why).
    pub zero: Option<String>,
    /// Why send times could not be set against the schedule.
    pub unjoined: Option<String>,
}

/// What the tool's message says, shortened for a ledger entry.
fn short(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or(text)),
        None => text.to_owned(),
    }
}

/// The server's counts, when the record has both.
fn usage(prompt: Option<u64>, completion: Option<u64>) -> Option<Usage> {
    Some(Usage {
        prompt_tokens: prompt?,
        completion_tokens: completion?,
    })
}

/// ms → ns; `as` saturates, and the readers bound every value, so nothing overflows here.
fn ms_to_ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

/// AIPerf's records. `rows` is the plan's schedule, `None` when the receipt does not embed
/// it; `wall_to_mono` is the run's `unix_ns − mono_ns`.
///
/// AIPerf's records carry no scheduled time and its schedule's zero is only in its log. The
/// zero is taken from the records instead: its timing service issues each request's credit at
/// the scheduled time, so the least-late credit (`min(credit_issued_ns − arrival)`) is the
/// zero. That assumes one credit was on time, and any lateness common to every credit is not
/// seen — the source says so. A completed record must have streamed a first token and, with
/// `ignore_eos`, exactly the row's output tokens by the server's count; one that did not is
/// named.
pub fn aiperf(
    records: &[aiperf::Record],
    rows: Option<&[PeerRow]>,
    wall_to_mono: i64,
) -> Converted {
    let mut out = Converted::default();
    let index_of = |r: &aiperf::Record| row_index(&r.conversation_id);
    let row = |i: u64| rows.and_then(|rows| usize::try_from(i).ok().and_then(|i| rows.get(i)));
    let zero = match rows {
        None => {
            out.unjoined = Some("the receipt does not embed the timed_trace".to_owned());
            None
        }
        Some(_) => {
            let zero = records
                .iter()
                .filter_map(|r| {
                    Some(
                        r.credit_issued_ns?
                            .saturating_sub(row(index_of(r)?)?.arrival_ns),
                    )
                })
                .min();
            if zero.is_none() {
                out.unjoined = Some(
                    "no record has both a credit time (metadata.credit_issued_ns) and a planned row"
                        .to_owned(),
                );
            }
            zero
        }
    };
    if zero.is_some() {
        out.zero = Some(
            "AIPerf records no scheduled time: the schedule's zero is its least-late credit, min(credit_issued_ns − planned arrival)"
                .to_owned(),
        );
    }
    let mono = |unix: i64| unix.saturating_sub(wall_to_mono);
    for r in records {
        let Some(index) = index_of(r) else {
            out.problems.push(format!(
                "line {}: conversation_id {:?} names no planned row",
                r.line,
                short(&r.conversation_id)
            ));
            continue;
        };
        if r.phase != "profiling" {
            out.problems.push(format!(
                "line {}: a record of the {:?} phase (only the profiling phase replays the plan)",
                r.line,
                short(&r.phase)
            ));
        }
        let planned = row(index);
        let sent = mono(r.request_start_ns);
        let first = r.ttft_ms.map(|ms| sent.saturating_add(ms_to_ns(ms)));
        let mut chunks_ns = Vec::new();
        if let Some(first) = first {
            chunks_ns.push(first);
            let mut at = first;
            for gap in &r.inter_chunk_ms {
                at = at.saturating_add(ms_to_ns(*gap));
                chunks_ns.push(at);
            }
        }
        let end = match (r.request_end_ns, r.latency_ms) {
            (Some(end), _) => Some(mono(end)),
            (None, Some(ms)) => Some(sent.saturating_add(ms_to_ns(ms))),
            (None, None) => None,
        };
        let chunks = chunks_ns.len() as u64;
        let disposition = match (&r.error, r.cancelled) {
            (_, true) => Disposition::Interrupted { chunks },
            (None, false) => Disposition::Ok,
            (Some(e), false) => match e.code {
                Some(status) => Disposition::Http {
                    status,
                    body: short(&e.message),
                },
                None if chunks > 0 => Disposition::StreamCut { chunks },
                None => Disposition::Transport {
                    error: short(&format!("{}: {}", e.kind, e.message)),
                },
            },
        };
        if disposition == Disposition::Ok {
            completed_checks(
                &mut out.problems,
                &format!("line {}", r.line),
                first.is_some(),
                r.usage_completion_tokens,
                planned.map(|p| p.output),
            );
        }
        let scheduled_ns = match (zero, planned) {
            (Some(zero), Some(p)) => mono(zero.saturating_add(p.arrival_ns)),
            _ => sent,
        };
        out.records.push(RequestRecord {
            index,
            scheduled_ns,
            sent_ns: Some(sent),
            first_token_ns: first,
            chunks_ns,
            end_ns: end,
            prompt_tokens: r
                .input_tokens
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
            max_tokens: planned.map_or(0, |p| p.output),
            usage: usage(r.usage_prompt_tokens, r.usage_completion_tokens),
            disposition,
        });
    }
    out
}

/// A completed request must have streamed a first token and — every peer request carries
/// `ignore_eos` and `max_tokens` = the row's output length — produced exactly that many tokens
/// by the server's count. A record that did not is not a completion of the planned request.
fn completed_checks(
    problems: &mut Vec<String>,
    at: &str,
    first_token: bool,
    completion_tokens: Option<u64>,
    planned_output: Option<u32>,
) {
    if !first_token {
        problems.push(format!("{at}: completed without a first token"));
    }
    if let (Some(got), Some(want)) = (completion_tokens, planned_output)
        && got != u64::from(want)
    {
        problems.push(format!(
            "{at}: completed with {got} output tokens, the row asks for {want} (ignore_eos)"
        ));
    }
}

/// A verified block's bytes, or why it cannot be used (the audit's block reader; named here
/// rather than imported so the client side, which converts records here, is not imported back).
type Blocks<'a> = dyn Fn(&str) -> Result<std::borrow::Cow<'a, [u8]>, String> + 'a;

fn s_to_ns(s: f64) -> i64 {
    (s * 1e9).round() as i64
}

/// GuideLLM's records. GuideLLM keeps no row id, but its main process enqueues requests in
/// row order (`info.timings.queued` strictly increasing) and loadproof's input is in arrival
/// order, so records by `queued` are the rows in order. GuideLLM can lose a record that was in
/// flight when its scheduler stopped (not only the last), so the join walks the rows in order
/// and gives each record the next row its own `relative_timestamp` (to a microsecond: GuideLLM
/// writes float seconds) and `max_tokens` fit; the rows passed over are the lost ones, left
/// without a record (the ledger counts them). A record that fits no later row takes the next
/// one, and every joined record is checked, not assumed: a `relative_timestamp` or
/// `max_tokens` that is missing or differs from its row's is named. The schedule is the plan's, from
/// GuideLLM's own zero (`scheduler_state.start_time`): each record's `targeted_start` must be
/// that zero plus its row's arrival (to a millisecond), and lag is measured against the plan's
/// time, never against a field a record could leave out. It keeps only the first and last token
/// times, so no inter-token gaps exist to report.
pub fn guidellm(
    report: &guidellm::Report,
    rows: Option<&[PeerRow]>,
    wall_to_mono: i64,
) -> Converted {
    let mut out = Converted::default();
    let mut ordered: Vec<&guidellm::Record> = report.records.iter().collect();
    ordered.sort_by(|a, b| a.queued_s.total_cmp(&b.queued_s));
    let first_arrival = rows.and_then(|r| r.first()).map_or(0, |r| r.arrival_ns);
    if let Some(n) = report.processing.filter(|n| *n > 0) {
        out.problems.push(format!(
            "GuideLLM's scheduler ended with {n} request(s) still processing, whose records it did not write"
        ));
    }
    if let Some(n) = report.cancelled.filter(|n| *n > 0) {
        out.problems.push(format!(
            "GuideLLM cancelled {n} request(s) before sending them and recorded none of them"
        ));
    }
    let zero = match (rows, report.start_s) {
        (None, _) => {
            out.unjoined = Some("the receipt does not embed the timed_trace".to_owned());
            None
        }
        (Some(_), None) => {
            out.unjoined = Some(
                "the report has no scheduler_state.start_time (GuideLLM's schedule zero)"
                    .to_owned(),
            );
            None
        }
        (Some(_), Some(start)) => {
            out.zero = Some(
                "the plan's arrivals from GuideLLM's own schedule zero (scheduler_state.start_time); each record's targeted_start checked against it"
                    .to_owned(),
            );
            Some(s_to_ns(start))
        }
    };
    let mono = |ns: i64| ns.saturating_sub(wall_to_mono);
    let fits = |r: &guidellm::Record, row: &PeerRow| {
        let due = row.arrival_ns.saturating_sub(first_arrival);
        r.relative_s
            .is_some_and(|rel| s_to_ns(rel).saturating_sub(due).abs() <= 1_000)
            && r.max_tokens.is_none_or(|m| m == u64::from(row.output))
    };
    let mut next = 0usize;
    for r in ordered {
        let k = rows
            .and_then(|rows| rows.get(next..))
            .and_then(|rest| rest.iter().position(|row| fits(r, row)))
            .map_or(next, |skip| next + skip);
        next = k.saturating_add(1);
        let index = k as u64;
        let at = format!("{} (row {k} by queue order)", r.at);
        let row = rows.and_then(|rows| rows.get(k));
        let planned = row.map(|row| row.arrival_ns.saturating_sub(first_arrival));
        match (row, r.relative_s) {
            (None, _) if rows.is_some() => {
                out.problems
                    .push(format!("{at}: a record beyond the plan's rows"));
            }
            (Some(_), None) => out.problems.push(format!(
                "{at}: no info.settings.relative_timestamp, so it cannot be checked against its row"
            )),
            (Some(_), Some(rel)) => {
                let planned = planned.unwrap_or(0);
                if (s_to_ns(rel).saturating_sub(planned)).abs() > 1_000 {
                    out.problems.push(format!(
                        "{at}: replayed relative timestamp {rel} s, the row is due at {planned} ns"
                    ));
                }
            }
            (None, _) => {}
        }
        let sent = r.sent_s.map(|s| mono(s_to_ns(s)));
        let first = r.first_token_s.map(|s| mono(s_to_ns(s)));
        let scheduled = match (zero, planned) {
            (Some(zero), Some(planned)) => {
                let due = zero.saturating_add(planned);
                match r.targeted_s {
                    Some(t) if (s_to_ns(t).saturating_sub(due)).abs() > 1_000_000 => {
                        out.problems.push(format!(
                            "{at}: targeted_start {t} s is not its row's time on GuideLLM's schedule ({} s)",
                            due as f64 / 1e9
                        ));
                    }
                    Some(_) => {}
                    None => out
                        .problems
                        .push(format!("{at}: no info.timings.targeted_start")),
                }
                Some(mono(due))
            }
            _ => None,
        };
        let chunks = u64::from(first.is_some());
        let disposition = match r.status {
            guidellm::Status::Completed => Disposition::Ok,
            guidellm::Status::Incomplete => Disposition::Interrupted { chunks },
            guidellm::Status::Errored => {
                let text = r.error.clone().unwrap_or_default();
                match guidellm::http_status(&text) {
                    Some(status) => Disposition::Http {
                        status,
                        body: short(&text),
                    },
                    None if sent.is_none() => Disposition::NotSent {
                        reason: short(&text),
                    },
                    None => Disposition::Transport {
                        error: short(&text),
                    },
                }
            }
        };
        // Whatever became of it, a record is checked against the row it was joined to.
        if let Some(row) = row {
            match r.max_tokens {
                None => out.problems.push(format!(
                    "{at}: no max_tokens in its request_args, so it cannot be checked against its row"
                )),
                Some(m) if m != u64::from(row.output) => out.problems.push(format!(
                    "{at}: asked for {m} tokens, the row for {}",
                    row.output
                )),
                Some(_) => {}
            }
        }
        if disposition == Disposition::Ok {
            completed_checks(
                &mut out.problems,
                &at,
                first.is_some(),
                r.output_tokens,
                row.map(|row| row.output),
            );
        }
        out.records.push(RequestRecord {
            index,
            scheduled_ns: scheduled
                .or(sent)
                .unwrap_or_else(|| mono(s_to_ns(r.queued_s))),
            sent_ns: sent,
            first_token_ns: first,
            chunks_ns: first.into_iter().collect(),
            end_ns: r.end_s.map(|s| mono(s_to_ns(s))),
            prompt_tokens: r
                .prompt_tokens
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
            max_tokens: row.map_or(0, |row| row.output),
            usage: usage(r.prompt_tokens, r.output_tokens),
            disposition,
        });
    }
    out
}

/// What a peer tool was given, against the plan: its input must be the plan's schedule
/// translated (rebuilt here from the embedded `timed_trace`, byte for byte), and its
/// configuration must replay that input as the protocol says — on a fixed schedule from the
/// plan's zero, at the protocol's endpoint, model and block size, streaming, `ignore_eos`.
/// Each difference is named; an absent block is named too (what was given cannot be checked).
pub fn inputs_against_plan(receipt: &Receipt, block: &Blocks<'_>) -> Vec<String> {
    match receipt.protocol.engine {
        Engine::Aiperf => aiperf_inputs(receipt, block),
        Engine::Guidellm => guidellm_inputs(receipt, block),
        Engine::Native | Engine::VllmBenchServe => Vec::new(),
    }
}

/// The input block against the plan's schedule translated by `translate`.
fn input_against_plan(
    receipt: &Receipt,
    block: &Blocks<'_>,
    name: &str,
    tool: &str,
    translate: fn(&[PeerRow]) -> Vec<u8>,
) -> Option<String> {
    let given = match block(name) {
        Ok(given) => given,
        Err(why) => {
            return Some(format!(
                "{tool}'s input ({name}) cannot be used ({why}): what it replayed cannot be held to the plan"
            ));
        }
    };
    // No schedule embedded: the arrival facts already say so.
    let trace = block(block::TIMED_TRACE).ok()?;
    let multiplier = receipt.protocol.sec_multiplier.as_deref().unwrap_or("1");
    let rows = match read_peer_rows(&trace, multiplier) {
        Ok(rows) => rows,
        Err(e) => {
            return Some(format!(
                "the embedded timed_trace cannot be translated: {e}"
            ));
        }
    };
    let expected = translate(&rows);
    (expected != *given).then(|| {
        let line = expected
            .split(|b| *b == b'\n')
            .zip(given.split(|b| *b == b'\n'))
            .position(|(a, b)| a != b)
            .map_or_else(|| "its length".to_owned(), |k| format!("line {}", k + 1));
        format!("{tool}'s input is not the plan's schedule translated (first difference: {line})")
    })
}

/// GuideLLM is configured by its argv: replay on the rows' own timestamps, the mooncake
/// format at the protocol's block size, the protocol's endpoint and model, every record kept.
fn guidellm_inputs(receipt: &Receipt, block: &Blocks<'_>) -> Vec<String> {
    let p = &receipt.protocol;
    let Execution::Ran { argv, .. } = &receipt.execution else {
        return Vec::new();
    };
    let mut out: Vec<String> = input_against_plan(
        receipt,
        block,
        block::GUIDELLM_INPUT,
        "GuideLLM",
        guidellm_input,
    )
    .into_iter()
    .collect();
    if argv.is_empty() {
        out.push(
            "GuideLLM's argv is not in the receipt (imported): how it replayed cannot be checked"
                .to_owned(),
        );
        return out;
    }
    // Exactly the argv loadproof builds, in its order: any other flag or key (a second
    // `--data`, `--metrics` sampling, a `--constraint`, a scenario, `extras.body.*` in the
    // backend) can change the requests, the schedule or which records are kept.
    let fields = |value: &str| -> Vec<(String, String)> {
        value
            .split(',')
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => (k.to_owned(), v.to_owned()),
                None => (kv.to_owned(), String::new()),
            })
            .collect()
    };
    let tail: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    let shape = [
        "run",
        "--backend",
        "",
        "--profile",
        "",
        "--data",
        "",
        "--tokenizer",
        "",
        "--output",
        "",
        "--disable-console-interactive",
    ];
    let fits = tail.len() == shape.len()
        && tail
            .iter()
            .zip(shape)
            .all(|(got, want)| want.is_empty() || *got == want);
    if !fits {
        out.push(format!(
            "GuideLLM ran with an argv loadproof never builds ({}): only `run --backend … --profile … --data … --tokenizer … --output … --disable-console-interactive` is checked",
            tail.join(" ")
        ));
        return out;
    }
    let value = |i: usize| tail.get(i).copied().unwrap_or_default();
    let mut expect = |i: usize, want: Vec<(String, String)>, meaning: &str| {
        let got = fields(value(i));
        if got != want {
            out.push(format!(
                "GuideLLM ran with {} {}, not {} ({meaning})",
                value(i - 1),
                value(i),
                want.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
    };
    let kv = |pairs: &[(&str, String)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    };
    let insecure = matches!(
        p.tls.as_ref().map(|t| &t.verify),
        Some(crate::receipt::TlsVerify::Insecure)
    );
    expect(
        2,
        kv(&[
            ("kind", "openai_http".into()),
            ("target", p.base_url.clone().unwrap_or_default()),
            ("model", p.model.clone().unwrap_or_default()),
            ("request_format", "/v1/completions".into()),
            ("verify", if insecure { "false" } else { "true" }.into()),
        ]),
        "the protocol's endpoint and model, certificates checked unless the protocol says insecure",
    );
    expect(
        4,
        kv(&[
            ("kind", "replay".into()),
            ("schedule_turn", "timestamp".into()),
        ]),
        "each request at its row's own time",
    );
    expect(
        6,
        kv(&[
            ("kind", "mooncake".into()),
            ("source.kind", "json_file".into()),
            ("source.path", "input.jsonl".into()),
            (
                "hash_id_block_size",
                p.chunk_size.map(|c| c.to_string()).unwrap_or_default(),
            ),
        ]),
        "the input loadproof wrote, at the protocol's chunk size",
    );
    expect(
        10,
        kv(&[("kind", "json".into()), ("path", "benchmarks.json".into())]),
        "its report, every record kept",
    );
    let tokenizer = fields(value(8));
    let tokenizer_fits = tokenizer.len() == 2
        && tokenizer
            .first()
            .is_some_and(|(k, v)| k == "kind" && v == "huggingface_auto")
        && tokenizer.get(1).is_some_and(|(k, _)| k == "model");
    if !tokenizer_fits {
        out.push(format!(
            "GuideLLM ran with --tokenizer {}, not kind=huggingface_auto,model=…",
            value(8)
        ));
    }
    out
}

fn aiperf_inputs(receipt: &Receipt, block: &Blocks<'_>) -> Vec<String> {
    let p = &receipt.protocol;
    let mut out = Vec::new();
    if !matches!(receipt.execution, Execution::Ran { .. }) {
        return out;
    }
    if let Some(why) =
        input_against_plan(receipt, block, block::AIPERF_INPUT, "AIPerf", aiperf_input)
    {
        out.push(why);
    }
    let config = match block(block::AIPERF_CONFIG) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => v,
            Err(e) => {
                out.push(format!(
                    "AIPerf's configuration ({}) is not the JSON loadproof writes: {e}",
                    block::AIPERF_CONFIG
                ));
                return out;
            }
        },
        Err(why) => {
            out.push(format!(
                "AIPerf's configuration ({}) cannot be used ({why}): how it replayed cannot be checked",
                block::AIPERF_CONFIG
            ));
            return out;
        }
    };
    let at = |path: &str| config.pointer(path).cloned().unwrap_or(Value::Null);
    let mut expect = |path: &str, want: Value, meaning: &str| {
        let got = at(path);
        if got != want {
            out.push(format!(
                "AIPerf's configuration has {path} = {got}, not {want} ({meaning})"
            ));
        }
    };
    expect(
        "/datasets/0/path",
        "input.jsonl".into(),
        "the input loadproof wrote",
    );
    expect(
        "/datasets/0/format",
        "mooncake_trace".into(),
        "the plan's rows with their hash_ids",
    );
    expect(
        "/datasets/0/block_size",
        p.chunk_size.map_or(Value::Null, Value::from),
        "the protocol's chunk size",
    );
    expect(
        "/phases/0/type",
        "fixed_schedule".into(),
        "each request at its planned time",
    );
    expect(
        "/phases/0/auto_offset",
        false.into(),
        "the schedule's zero is the plan's",
    );
    expect(
        "/phases/0/start_offset",
        0.into(),
        "the schedule's zero is the plan's",
    );
    expect(
        "/endpoint/type",
        "completions".into(),
        "the protocol's /v1/completions",
    );
    expect(
        "/endpoint/streaming",
        true.into(),
        "TTFT and ITL need a stream",
    );
    expect(
        "/endpoint/extra/ignore_eos",
        true.into(),
        "output lengths as planned",
    );
    expect(
        "/endpoint/urls",
        Value::Array(p.base_url.iter().map(|u| Value::from(u.as_str())).collect()),
        "the protocol's base URL",
    );
    expect(
        "/models",
        Value::Array(p.model.iter().map(|m| Value::from(m.as_str())).collect()),
        "the protocol's model",
    );
    if config.pointer("/phases/1").is_some() {
        out.push("AIPerf's configuration has more than one phase (a warm-up is work the plan did not ask for)".to_owned());
    }
    // Nothing beyond what loadproof writes: AIPerf merges `endpoint.extra` into every request
    // after the prompt and `max_tokens`, and any other key can change the work.
    let only = |path: &str, allowed: &[&str], out: &mut Vec<String>| {
        if let Some(map) = config.pointer(path).and_then(Value::as_object) {
            for key in map.keys().filter(|k| !allowed.contains(&k.as_str())) {
                out.push(format!(
                    "AIPerf's configuration has {path}/{key}, which loadproof never writes (it can change the requests or the schedule)"
                ));
            }
        }
    };
    only(
        "",
        &[
            "models",
            "endpoint",
            "datasets",
            "phases",
            "artifacts",
            "tokenizer",
            "random_seed",
            "gpu_telemetry",
            "server_metrics",
            "runtime",
        ],
        &mut out,
    );
    only(
        "/endpoint",
        &["urls", "type", "streaming", "extra", "api_key", "headers"],
        &mut out,
    );
    only("/endpoint/extra", &["ignore_eos"], &mut out);
    only("/endpoint/headers", &[LEASE_HEADER], &mut out);
    only(
        "/datasets/0",
        &["name", "type", "path", "format", "block_size"],
        &mut out,
    );
    only(
        "/phases/0",
        &["name", "type", "auto_offset", "start_offset"],
        &mut out,
    );
    if config.pointer("/datasets/1").is_some() {
        out.push("AIPerf's configuration has more than one dataset".to_owned());
    }
    out
}

/// The header the lease token travels in beside an API key (the CLI's `secret::LEASE_HEADER`).
const LEASE_HEADER: &str = "x-loadproof-lease-token";

#[cfg(test)]
mod tests {
    use super::*;

    fn row(arrival_ns: i64) -> PeerRow {
        PeerRow {
            arrival_ns,
            input: 16,
            output: 3,
            hash_ids: vec![0],
        }
    }

    fn record(row: &str, credit: i64, start: i64) -> aiperf::Record {
        aiperf::Record {
            line: 1,
            conversation_id: row.to_owned(),
            phase: "profiling".to_owned(),
            credit_issued_ns: Some(credit),
            request_start_ns: start,
            request_end_ns: Some(start + 30_000_000),
            cancelled: false,
            ttft_ms: Some(10.0),
            latency_ms: Some(30.0),
            inter_chunk_ms: vec![5.0, 5.0],
            input_tokens: Some(16),
            usage_prompt_tokens: Some(16),
            usage_completion_tokens: Some(3),
            error: None,
        }
    }

    #[test]
    fn the_least_late_credit_is_the_schedules_zero_and_lag_is_send_minus_schedule() {
        // Row 0 due at 0, row 1 at 100 ms; the zero is 1_000 s (unix); credits 1 ms and 3 ms
        // late, sends 2 ms after their credits.
        let z = 1_000_000_000_000;
        let records = [
            record("row-000001", z + 103_000_000, z + 105_000_000),
            record("row-000000", z + 1_000_000, z + 3_000_000),
        ];
        let rows = [row(0), row(100_000_000)];
        let c = aiperf(&records, Some(&rows), 0);
        assert_eq!(c.problems, Vec::<String>::new());
        assert!(c.zero.is_some());
        let lag = |r: &RequestRecord| r.sent_ns.unwrap() - r.scheduled_ns;
        // The zero is row 0's credit (the least late), so row 0's send lag is 2 ms and row 1's
        // is 4 ms (its credit was 2 ms later than row 0's).
        assert_eq!(lag(&c.records[1]), 2_000_000);
        assert_eq!(lag(&c.records[0]), 4_000_000);
        assert_eq!(c.records[0].chunks_ns.len(), 3);
        assert_eq!(c.records[0].index, 1);
    }

    fn guidellm_record(
        at: &str,
        queued_s: f64,
        relative_s: f64,
        max_tokens: u64,
    ) -> guidellm::Record {
        guidellm::Record {
            status: guidellm::Status::Completed,
            at: at.to_owned(),
            queued_s,
            targeted_s: Some(1_000.0 + relative_s),
            sent_s: Some(1_000.001 + relative_s),
            first_token_s: Some(1_000.01 + relative_s),
            end_s: Some(1_000.02 + relative_s),
            relative_s: Some(relative_s),
            max_tokens: Some(max_tokens),
            prompt_tokens: Some(16),
            output_tokens: Some(max_tokens),
            error: None,
        }
    }

    #[test]
    fn a_record_guidellm_lost_mid_run_does_not_shift_the_join() {
        // Four rows due together; GuideLLM lost rows 0 and 2 (in flight when its scheduler
        // stopped). The records left are rows 1 and 3, found by their own max_tokens.
        let rows: Vec<PeerRow> = [500, 490, 794, 316]
            .iter()
            .map(|&output| PeerRow { output, ..row(0) })
            .collect();
        let report = guidellm::Report {
            records: vec![
                guidellm_record("successful[0]", 2.0, 0.0, 316),
                guidellm_record("successful[1]", 1.0, 0.0, 490),
            ],
            start_s: Some(1_000.0),
            processing: Some(2),
            cancelled: Some(0),
        };
        let c = guidellm(&report, Some(&rows), 0);
        let joined: Vec<u64> = c.records.iter().map(|r| r.index).collect();
        assert_eq!(joined, vec![1, 3]);
        assert_eq!(
            c.problems,
            vec![
                "GuideLLM's scheduler ended with 2 request(s) still processing, whose records it did not write"
                    .to_owned()
            ]
        );
        // A record that fits no row still takes the next one, and is named.
        let report = guidellm::Report {
            records: vec![guidellm_record("successful[0]", 1.0, 0.0, 7)],
            ..report
        };
        let c = guidellm(&report, Some(&rows), 0);
        assert_eq!(c.records[0].index, 0);
        assert!(
            c.problems
                .iter()
                .any(|p| p.contains("asked for 7 tokens, the row for 500")),
            "{:?}",
            c.problems
        );
    }

    #[test]
    fn a_record_naming_no_planned_row_is_a_problem_not_a_guess() {
        let records = [record("3f2a-uuid", 10, 20)];
        let c = aiperf(&records, Some(&[row(0)]), 0);
        assert!(c.records.is_empty());
        assert_eq!(c.problems.len(), 1);
        let unjoined = aiperf(&[record("row-000000", 10, 20)], None, 0);
        assert_eq!(
            unjoined.records[0].scheduled_ns,
            unjoined.records[0].sent_ns.unwrap()
        );
        assert!(unjoined.unjoined.is_some());
    }
}
