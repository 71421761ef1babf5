//! vLLM `bench serve` output: the stdout summary and the `--save-result` JSON.
//!
//! The receipt audit recomputes client facts from what `vllm bench serve` wrote, so both outputs
//! are read exactly: every stdout value as the decimal vLLM printed ([`Decimal`]), every JSON
//! float as the decimal Python wrote, counts as integers. Client facts come from stdout only;
//! stderr carries progress bars and logs and is never parsed, so nothing here takes it.
//!
//! [`disagreements`] refuses a receipt whose stdout and result JSON come from different runs:
//! vLLM prints each JSON float with Python's `{:.2f}`, which rounds the binary double half to
//! even. Rust's `{:.2}` does the same (checked against CPython on 200,000 values, exact binary
//! ties included), so the comparison reprints the JSON value and compares decimals.
//!
//! `Peak concurrent requests` / `max_concurrent_requests` is vLLM's whole-second bucket count
//! of successful requests ([`second_bucket_peak`]), not the number of requests the engine had in
//! flight ([`exact_peak`]); the field names say so.

use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

use crate::decimal::{Decimal, NumberError};

/// The line that opens the summary block (`" Serving Benchmark Result "` centred in 50 `=`).
pub const SUMMARY_HEADER: &str = "============ Serving Benchmark Result ============";

/// The line that closes the summary block: 50 `=`.
pub const SUMMARY_CLOSING: &str = "==================================================";

/// The summary block of one `vllm bench serve` stdout, every value as printed.
///
/// Rows vLLM prints only under some flags (a tokenizer, `--max-concurrency`, a finite
/// `--request-rate`, `--goodput`) or only in some versions are `Option`s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// 1-based line of [`SUMMARY_HEADER`], so a finding can point into the evidence.
    pub header_line: usize,
    /// 1-based line of [`SUMMARY_CLOSING`].
    pub closing_line: usize,
    /// `Successful requests:`.
    pub successful: u64,
    /// `Failed requests:`; older versions do not print it.
    pub failed: Option<u64>,
    /// `Maximum request concurrency:`, printed only with `--max-concurrency`.
    pub max_concurrency: Option<u64>,
    /// `Request rate configured (RPS):`, printed only for a finite `--request-rate`.
    pub request_rate: Option<Decimal>,
    /// `Benchmark duration (s):`.
    pub duration_s: Decimal,
    /// `Total input tokens:`.
    pub total_input_tokens: u64,
    /// `Total generated tokens:`, printed only when a tokenizer is loaded.
    pub total_generated_tokens: Option<u64>,
    /// `Request throughput (req/s):`.
    pub request_throughput: Option<Decimal>,
    /// `Request goodput (req/s):`, printed only with `--goodput`.
    pub request_goodput: Option<Decimal>,
    /// `Output token throughput (tok/s):`.
    pub output_throughput: Option<Decimal>,
    /// `Peak output token throughput (tok/s):`: the most token events in one whole-second
    /// bucket, not a sustained rate.
    pub peak_output_throughput: Option<Decimal>,
    /// `Peak concurrent requests:`. Every successful request counts in every whole second it
    /// touches (both ends inclusive, seconds counted from the earliest successful start), so this
    /// over-counts what was in flight at any instant: it is not engine concurrency. See
    /// [`second_bucket_peak`] and [`exact_peak`].
    pub successful_client_second_bucket_peak: Option<Decimal>,
    /// `Total token throughput (tok/s):` (older versions: `Total Token throughput`).
    pub total_token_throughput: Option<Decimal>,
    /// The latency sections (`Mean TTFT (ms):` …) in the order printed.
    pub latency: Vec<LatencySummary>,
    /// Rows this reader does not know (speculative decoding, probes, newer versions' lines),
    /// kept verbatim rather than failing: a new vLLM line must not break replay.
    pub other: Vec<OtherLine>,
}

/// One latency metric's printed statistics (`std` is saved in the JSON, never printed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencySummary {
    /// As printed: `TTFT`, `TPOT`, `ITL`, `E2EL`. Lowercased, it names the JSON keys.
    pub metric: String,
    /// `Mean {metric} (ms):`.
    pub mean_ms: Option<Decimal>,
    /// `Median {metric} (ms):`.
    pub median_ms: Option<Decimal>,
    /// `P{p} {metric} (ms):` in the order printed; `p` as printed (`"99"`, `"99.9"`), which is
    /// also how the JSON key spells it (`p99.9_itl_ms`).
    pub percentiles: Vec<(String, Decimal)>,
}

/// A summary row with a label this reader does not interpret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherLine {
    /// The section title above it (`Speculative Decoding`), or `""` before any section.
    pub section: String,
    /// The label with its colon, padding removed (`Acceptance rate (%):`). A line without a
    /// `label:` shape is kept whole here.
    pub label: String,
    /// The raw value, padding removed; `""` for a sub-heading such as
    /// `Per-position acceptance (%):`.
    pub value: String,
    /// 1-based line in stdout.
    pub line: usize,
}

/// Why a stdout has no usable summary. Every row error names the 1-based line, the label and
/// the raw value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SummaryError {
    /// The run printed no summary: it failed before the end, or this is not `bench serve`.
    #[error("no `{SUMMARY_HEADER}` line in stdout")]
    NoSummary,
    /// The summary opened but never closed: the capture was cut, and a cut capture cannot
    /// prove a replay.
    #[error(
        "line {line}: the summary opened here has no closing line of 50 `=`: stdout is truncated"
    )]
    Truncated {
        /// The header's line.
        line: usize,
    },
    /// Two summaries: stdout of two runs, and no way to tell which one the receipt means.
    #[error("line {second}: a second summary block (the first opens at line {first})")]
    TwoSummaries {
        /// The first header's line.
        first: usize,
        /// The second header's line.
        second: usize,
    },
    /// A summary line that is not UTF-8 (vLLM prints only ASCII there).
    #[error("line {line}: not UTF-8")]
    NotUtf8 {
        /// The line.
        line: usize,
    },
    /// A known row whose value is not a decimal.
    #[error("line {line}: `{label}` has value {value:?}, not a decimal ({reason:?})")]
    NotANumber {
        /// The line.
        line: usize,
        /// The row's label.
        label: String,
        /// The raw value.
        value: String,
        /// What the decimal parser said.
        reason: NumberError,
    },
    /// A count row (requests, tokens, concurrency) whose value is not a whole number ≥ 0.
    #[error("line {line}: `{label}` has value {value:?}, not a whole number")]
    NotWhole {
        /// The line.
        line: usize,
        /// The row's label.
        label: String,
        /// The raw value.
        value: String,
    },
    /// A known row printed twice in one summary: two values, no way to pick.
    #[error("line {line}: `{label}` again, with value {value:?} (first at line {first})")]
    Duplicate {
        /// The second occurrence's line.
        line: usize,
        /// The row's label.
        label: String,
        /// The second occurrence's raw value.
        value: String,
        /// The first occurrence's line.
        first: usize,
    },
    /// A row every version prints is missing.
    #[error("line {header_line}: the summary has no `{label}` row")]
    Missing {
        /// The header's line.
        header_line: usize,
        /// The missing row's label.
        label: &'static str,
    },
}

/// Reads the summary block of a `vllm bench serve` stdout (the caller has checked exit 0).
///
/// Lines may end in `\n` or `\r\n`; trailing padding is ignored. Values are parsed with
/// [`Decimal::parse`]; count rows must be whole numbers.
pub fn parse_summary(stdout: &[u8]) -> Result<Summary, SummaryError> {
    let lines: Vec<&[u8]> = stdout
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    let mut headers = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_ascii_end() == SUMMARY_HEADER.as_bytes())
        .map(|(idx, _)| idx + 1);
    let header_line = headers.next().ok_or(SummaryError::NoSummary)?;
    if let Some(second) = headers.next() {
        return Err(SummaryError::TwoSummaries {
            first: header_line,
            second,
        });
    }
    // `header_line` is the 0-based index of the first line after the header.
    let closing_line = lines
        .iter()
        .enumerate()
        .skip(header_line)
        .find(|(_, l)| l.trim_ascii_end() == SUMMARY_CLOSING.as_bytes())
        .map(|(idx, _)| idx + 1)
        .ok_or(SummaryError::Truncated { line: header_line })?;

    let mut rows = RowReader::new(header_line);
    for (idx, raw) in lines
        .iter()
        .enumerate()
        .take(closing_line - 1)
        .skip(header_line)
    {
        let line = idx + 1;
        let text = std::str::from_utf8(raw).map_err(|_| SummaryError::NotUtf8 { line })?;
        rows.read(line, text)?;
    }
    rows.finish(closing_line)
}

/// `request_rate` in the result JSON: a number, or the string `"inf"` when unlimited (also in
/// self-timed trace replays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestRate {
    /// `"inf"`.
    Infinite,
    /// A finite `--request-rate`.
    PerSecond(Decimal),
}

/// The `--save-result` JSON of one run.
///
/// Floats are [`Decimal`]s: serde_json reads a float to the nearest double, and the decimal is
/// that double's shortest round-trip spelling with Python's tie rule, which is exactly the text
/// the file holds when Python's `json.dump` wrote it (it writes `repr(float)`). Integer keys
/// must be JSON integers: `"completed": 20.5` or `20.0` is an error, as Python never writes one.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchResult {
    /// Number of top-level keys (34 for a v0.23.0-era default run, 53 with `--save-detailed`
    /// and more percentiles in 0.33.0).
    pub keys: usize,
    /// `completed`: successful requests.
    pub completed: u64,
    /// `failed`; absent from the old `benchmark_serving.py` schema.
    pub failed: Option<u64>,
    /// `num_prompts`: the CLI value, not the number sent.
    pub num_prompts: Option<u64>,
    /// `duration`.
    pub duration_s: Decimal,
    /// `total_input_tokens`: over successful requests.
    pub total_input_tokens: u64,
    /// `total_output_tokens`.
    pub total_output_tokens: Option<u64>,
    /// `max_concurrency` (`--max-concurrency`; `null` when unset).
    pub max_concurrency: Option<u64>,
    /// `request_rate`.
    pub request_rate: Option<RequestRate>,
    /// `request_throughput`.
    pub request_throughput: Option<Decimal>,
    /// `request_goodput` (`null` unless `--goodput`).
    pub request_goodput: Option<Decimal>,
    /// `output_throughput`.
    pub output_throughput: Option<Decimal>,
    /// `total_token_throughput`.
    pub total_token_throughput: Option<Decimal>,
    /// `max_output_tokens_per_s`: the most token events in one whole-second bucket.
    pub max_output_tokens_per_s: Option<Decimal>,
    /// `max_concurrent_requests`: vLLM's whole-second bucket peak of successful requests
    /// ([`second_bucket_peak`]), named apart from its JSON key so that nobody reads it as
    /// engine concurrency.
    pub successful_client_second_bucket_peak: Option<u64>,
    /// Every latency statistic: `mean_`/`median_`/`std_`/`p{p}_` + metric + `_ms`
    /// (`mean_ttft_ms`, `p99.9_itl_ms`).
    pub stats: BTreeMap<String, Decimal>,
    /// The per-request arrays, present with `--save-detailed`.
    pub detailed: Option<Detailed>,
}

/// The per-request arrays (`--save-detailed`), aligned by index in send order, failed requests
/// included; every array has the same length.
#[derive(Debug, Clone, PartialEq)]
pub struct Detailed {
    /// `input_lens`: the server's `usage.prompt_tokens` when it reported one.
    pub input_lens: Vec<u64>,
    /// `output_lens`: 0 for a failed request.
    pub output_lens: Vec<u64>,
    /// `ttfts`, seconds: 0.0 for a failed request.
    pub ttfts_s: Vec<f64>,
    /// `itls`, seconds: gaps between streamed chunks (not tokens); `[]` for a failed request.
    pub itls_s: Vec<Vec<f64>>,
    /// `start_times`, seconds on the client's `perf_counter` (only differences mean anything).
    pub start_times_s: Option<Vec<f64>>,
    /// `latencies`, seconds (not written by every version).
    pub latencies_s: Option<Vec<f64>>,
    /// `errors`: `""` for a successful request.
    pub errors: Vec<String>,
}

impl Detailed {
    /// `(start, latency)` of every request whose error is empty, which is how vLLM's
    /// successful requests look in the file: the input [`second_bucket_peak`] needs to
    /// recompute `max_concurrent_requests`. `None` without `start_times` and `latencies`.
    pub fn successful_spans_s(&self) -> Option<Vec<(f64, f64)>> {
        let starts = self.start_times_s.as_ref()?;
        let latencies = self.latencies_s.as_ref()?;
        Some(
            starts
                .iter()
                .zip(latencies)
                .zip(&self.errors)
                .filter(|(_, error)| error.is_empty())
                .map(|((&start, &latency), _)| (start, latency))
                .collect(),
        )
    }
}

/// Why a result JSON cannot be read. Every error names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResultError {
    /// Not one JSON value (`--append-result` files hold several, one per line).
    #[error("line {line}, col {column}: not JSON: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// JSON, but not an object.
    #[error("the result is {found}, not a JSON object")]
    NotAnObject {
        /// The value, shortened.
        found: String,
    },
    /// A key every result has is missing.
    #[error("`{key}` is missing")]
    Missing {
        /// The key.
        key: &'static str,
    },
    /// A key holds the wrong kind of value.
    #[error("`{key}` is {found}, expected {expected}")]
    WrongType {
        /// The key.
        key: String,
        /// What the key must hold.
        expected: &'static str,
        /// The value, shortened.
        found: String,
    },
    /// One element of a per-request array holds the wrong kind of value.
    #[error("`{key}`[{index}] is {found}, expected {expected}")]
    WrongElement {
        /// The array's key.
        key: &'static str,
        /// 0-based index in the array.
        index: usize,
        /// What the element must be.
        expected: &'static str,
        /// The element, shortened.
        found: String,
    },
    /// Two per-request arrays of different lengths cannot be aligned by request.
    #[error("`{key}` has {len} entries but `{reference}` has {reference_len}")]
    LengthMismatch {
        /// The array that disagrees.
        key: &'static str,
        /// Its length.
        len: usize,
        /// The array it was compared with.
        reference: &'static str,
        /// That array's length.
        reference_len: usize,
    },
}

/// Reads a `--save-result` JSON file (one object; `\n` or `\r\n`).
pub fn parse_result(json: &[u8]) -> Result<BenchResult, ResultError> {
    let value: Value = serde_json::from_slice(json).map_err(|e| ResultError::Json {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Value::Object(map) = value else {
        return Err(ResultError::NotAnObject {
            found: shown(&value),
        });
    };
    let mut stats = BTreeMap::new();
    for (key, value) in &map {
        if is_latency_stat_key(key) {
            stats.insert(key.clone(), exact_decimal(key, value)?);
        }
    }
    Ok(BenchResult {
        keys: map.len(),
        completed: required(&map, "completed", json_count)?,
        failed: optional(&map, "failed", json_count)?,
        num_prompts: optional(&map, "num_prompts", json_count)?,
        duration_s: required(&map, "duration", exact_decimal)?,
        total_input_tokens: required(&map, "total_input_tokens", json_count)?,
        total_output_tokens: optional(&map, "total_output_tokens", json_count)?,
        max_concurrency: optional(&map, "max_concurrency", json_count)?,
        request_rate: optional(&map, "request_rate", request_rate)?,
        request_throughput: optional(&map, "request_throughput", exact_decimal)?,
        request_goodput: optional(&map, "request_goodput", exact_decimal)?,
        output_throughput: optional(&map, "output_throughput", exact_decimal)?,
        total_token_throughput: optional(&map, "total_token_throughput", exact_decimal)?,
        max_output_tokens_per_s: optional(&map, "max_output_tokens_per_s", exact_decimal)?,
        successful_client_second_bucket_peak: optional(
            &map,
            "max_concurrent_requests",
            json_count,
        )?,
        stats,
        detailed: detailed(&map)?,
    })
}

/// One value on which a run's stdout and its result JSON disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The result JSON key (`completed`, `duration`, `p99_itl_ms`).
    pub field: String,
    /// The value stdout printed.
    pub stdout: String,
    /// The JSON value as vLLM would have printed it (`{:.2f}` for floats), or `absent`.
    pub result: String,
}

/// Where a stdout summary and a result JSON, claimed to be one run's, disagree: counts exactly,
/// floats as vLLM prints them (the JSON double through Python's `{:.2f}`). Used to refuse a
/// receipt that mixes run A's stdout with run B's result. A row stdout printed must be in the
/// JSON; a row stdout lacks (older versions, no tokenizer) is not compared.
pub fn disagreements(summary: &Summary, result: &BenchResult) -> Vec<Disagreement> {
    let mut out = Vec::new();
    let mut count = |field: &str, stdout: Option<u64>, result: Option<u64>| {
        if let Some(printed) = stdout
            && result != Some(printed)
        {
            out.push(Disagreement {
                field: field.to_owned(),
                stdout: printed.to_string(),
                result: result.map_or_else(|| "absent".to_owned(), |v| v.to_string()),
            });
        }
    };
    count(
        "completed",
        Some(summary.successful),
        Some(result.completed),
    );
    count("failed", summary.failed, result.failed);
    count(
        "max_concurrency",
        summary.max_concurrency,
        result.max_concurrency,
    );
    count(
        "total_input_tokens",
        Some(summary.total_input_tokens),
        Some(result.total_input_tokens),
    );
    count(
        "total_output_tokens",
        summary.total_generated_tokens,
        result.total_output_tokens,
    );

    let rate = match result.request_rate {
        Some(RequestRate::PerSecond(r)) => PrintedFloat::Json(Some(r)),
        Some(RequestRate::Infinite) => PrintedFloat::Text("inf"),
        None => PrintedFloat::Json(None),
    };
    let peak = result
        .successful_client_second_bucket_peak
        .map(Decimal::from_u64);
    let floats = [
        ("request_rate", summary.request_rate, rate),
        (
            "duration",
            Some(summary.duration_s),
            PrintedFloat::Json(Some(result.duration_s)),
        ),
        (
            "request_throughput",
            summary.request_throughput,
            PrintedFloat::Json(result.request_throughput),
        ),
        (
            "request_goodput",
            summary.request_goodput,
            PrintedFloat::Json(result.request_goodput),
        ),
        (
            "output_throughput",
            summary.output_throughput,
            PrintedFloat::Json(result.output_throughput),
        ),
        (
            "max_output_tokens_per_s",
            summary.peak_output_throughput,
            PrintedFloat::Json(result.max_output_tokens_per_s),
        ),
        (
            "max_concurrent_requests",
            summary.successful_client_second_bucket_peak,
            PrintedFloat::Json(peak),
        ),
        (
            "total_token_throughput",
            summary.total_token_throughput,
            PrintedFloat::Json(result.total_token_throughput),
        ),
    ];
    for (field, printed, json) in floats {
        compare_float(&mut out, field, printed, json);
    }
    for metric in &summary.latency {
        let m = metric.metric.to_ascii_lowercase();
        let mut rows: Vec<(String, Decimal)> = Vec::new();
        if let Some(mean) = metric.mean_ms {
            rows.push((format!("mean_{m}_ms"), mean));
        }
        if let Some(median) = metric.median_ms {
            rows.push((format!("median_{m}_ms"), median));
        }
        for (p, value) in &metric.percentiles {
            rows.push((format!("p{p}_{m}_ms"), *value));
        }
        for (key, printed) in rows {
            let json = PrintedFloat::Json(result.stats.get(&key).copied());
            compare_float(&mut out, &key, Some(printed), json);
        }
    }
    out
}

/// vLLM's `max_concurrent_requests` recomputed from the `(start, latency)` seconds of the
/// successful requests, as v0.23.0–0.33.0 compute it: seconds are counted from the earliest
/// start, and a request counts in every whole second from `int(start - origin)` to
/// `int(start + latency - origin)`, both inclusive. `None` for no requests or a non-finite
/// value (vLLM itself would have raised).
pub fn second_bucket_peak(spans_s: &[(f64, f64)]) -> Option<u64> {
    if spans_s
        .iter()
        .any(|&(start, latency)| !(start + latency).is_finite() || !start.is_finite())
    {
        return None;
    }
    let origin = spans_s.iter().map(|&(start, _)| start).reduce(f64::min)?;
    let mut events = Vec::with_capacity(spans_s.len().saturating_mul(2));
    for &(start, latency) in spans_s {
        // `as` truncates toward zero like Python's `int()`; the sums are Python's, in order.
        let first = (start - origin) as i64;
        let last = ((start + latency) - origin) as i64;
        if last >= first {
            events.push((first, 1i64));
            events.push((last.saturating_add(1), -1i64));
        }
    }
    Some(sweep(events))
}

/// The exact peak number of requests in flight: a sweep over half-open `[start_ns, end_ns)`
/// intervals in integer nanoseconds, a departure before an arrival at the same instant (a
/// request that ends as another starts never overlaps it). Empty intervals count nowhere.
pub fn exact_peak(spans_ns: &[(i64, i64)]) -> u64 {
    let mut events = Vec::with_capacity(spans_ns.len().saturating_mul(2));
    for &(start, end) in spans_ns {
        if end > start {
            events.push((start, 1i64));
            events.push((end, -1i64));
        }
    }
    sweep(events)
}

/// The largest running sum of `(instant, ±1)` events, `-1` first at equal instants.
fn sweep(mut events: Vec<(i64, i64)>) -> u64 {
    events.sort_unstable();
    let mut current: i64 = 0;
    let mut peak: i64 = 0;
    for (_, delta) in events {
        current = current.saturating_add(delta);
        peak = peak.max(current);
    }
    u64::try_from(peak).unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// Stdout rows

/// Statistic of a latency row.
enum Stat<'a> {
    Mean,
    Median,
    Percentile(&'a str),
}

/// `Mean TTFT (ms):` → (`Mean`, `TTFT`). A metric with a space (`probe E2EL`) is not one of
/// the latency sections.
fn latency_label(label: &str) -> Option<(Stat<'_>, &str)> {
    let body = label.strip_suffix(" (ms):")?;
    let (word, metric) = body.split_once(' ')?;
    if metric.is_empty() || metric.contains(char::is_whitespace) {
        return None;
    }
    let stat = match word {
        "Mean" => Stat::Mean,
        "Median" => Stat::Median,
        _ => Stat::Percentile(word.strip_prefix('P').filter(|p| is_percentile(p))?),
    };
    Some((stat, metric))
}

/// `99`, `99.9`: how vLLM spells a percentile (`int(p)` when whole, else `str(p)`).
fn is_percentile(p: &str) -> bool {
    p.starts_with(|c: char| c.is_ascii_digit())
        && p.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && p.bytes().filter(|&b| b == b'.').count() <= 1
        && !p.ends_with('.')
}

/// Splits `label:   value   ` at the first colon followed by a space or the end.
fn split_row(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    for (idx, &b) in bytes.iter().enumerate() {
        if b == b':'
            && matches!(bytes.get(idx + 1), None | Some(b' ' | b'\t'))
            && let Some((label, value)) = text.split_at_checked(idx + 1)
        {
            return (label.trim(), value.trim());
        }
    }
    (text.trim(), "")
}

/// Accumulates the rows of one summary block.
struct RowReader {
    header_line: usize,
    section: String,
    /// First line of each known row, to refuse a second.
    seen: BTreeMap<String, usize>,
    successful: Option<u64>,
    failed: Option<u64>,
    max_concurrency: Option<u64>,
    request_rate: Option<Decimal>,
    duration_s: Option<Decimal>,
    total_input_tokens: Option<u64>,
    total_generated_tokens: Option<u64>,
    request_throughput: Option<Decimal>,
    request_goodput: Option<Decimal>,
    output_throughput: Option<Decimal>,
    peak_output_throughput: Option<Decimal>,
    bucket_peak: Option<Decimal>,
    total_token_throughput: Option<Decimal>,
    latency: Vec<LatencySummary>,
    other: Vec<OtherLine>,
}

impl RowReader {
    fn new(header_line: usize) -> RowReader {
        RowReader {
            header_line,
            section: String::new(),
            seen: BTreeMap::new(),
            successful: None,
            failed: None,
            max_concurrency: None,
            request_rate: None,
            duration_s: None,
            total_input_tokens: None,
            total_generated_tokens: None,
            request_throughput: None,
            request_goodput: None,
            output_throughput: None,
            peak_output_throughput: None,
            bucket_peak: None,
            total_token_throughput: None,
            latency: Vec::new(),
            other: Vec::new(),
        }
    }

    fn read(&mut self, line: usize, text: &str) -> Result<(), SummaryError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(());
        }
        // Section titles are centred in `-` (or `=` for a nested result block).
        for fill in ['-', '='] {
            if trimmed.starts_with(fill) && trimmed.ends_with(fill) {
                self.section = trimmed.trim_matches(fill).trim().to_owned();
                return Ok(());
            }
        }
        let (label, value) = split_row(text);
        let row = Row { line, label, value };
        match label {
            "Successful requests:" => self.successful = Some(self.count(&row)?),
            "Failed requests:" => self.failed = Some(self.count(&row)?),
            "Maximum request concurrency:" => self.max_concurrency = Some(self.count(&row)?),
            "Total input tokens:" => self.total_input_tokens = Some(self.count(&row)?),
            "Total generated tokens:" => self.total_generated_tokens = Some(self.count(&row)?),
            "Request rate configured (RPS):" => self.request_rate = Some(self.decimal(&row)?),
            "Benchmark duration (s):" => self.duration_s = Some(self.decimal(&row)?),
            "Request throughput (req/s):" => self.request_throughput = Some(self.decimal(&row)?),
            "Request goodput (req/s):" => self.request_goodput = Some(self.decimal(&row)?),
            "Output token throughput (tok/s):" => {
                self.output_throughput = Some(self.decimal(&row)?);
            }
            "Peak output token throughput (tok/s):" => {
                self.peak_output_throughput = Some(self.decimal(&row)?);
            }
            "Peak concurrent requests:" => self.bucket_peak = Some(self.decimal(&row)?),
            "Total token throughput (tok/s):" | "Total Token throughput (tok/s):" => {
                self.total_token_throughput = Some(self.decimal(&row)?);
            }
            _ => match latency_label(label) {
                Some((stat, metric)) => {
                    let value = self.decimal(&row)?;
                    let idx = match self.latency.iter().position(|l| l.metric == metric) {
                        Some(idx) => idx,
                        None => {
                            self.latency.push(LatencySummary {
                                metric: metric.to_owned(),
                                mean_ms: None,
                                median_ms: None,
                                percentiles: Vec::new(),
                            });
                            self.latency.len() - 1
                        }
                    };
                    if let Some(summary) = self.latency.get_mut(idx) {
                        match stat {
                            Stat::Mean => summary.mean_ms = Some(value),
                            Stat::Median => summary.median_ms = Some(value),
                            Stat::Percentile(p) => summary.percentiles.push((p.to_owned(), value)),
                        }
                    }
                }
                None => self.other.push(OtherLine {
                    section: self.section.clone(),
                    label: label.to_owned(),
                    value: value.to_owned(),
                    line,
                }),
            },
        }
        Ok(())
    }

    /// A known row's value as a decimal; refuses a second occurrence of the label.
    fn decimal(&mut self, row: &Row<'_>) -> Result<Decimal, SummaryError> {
        // Older versions spell one row `Total Token throughput`: both at once is a duplicate.
        let key = row.label.to_ascii_lowercase();
        if let Some(&first) = self.seen.get(&key) {
            return Err(SummaryError::Duplicate {
                line: row.line,
                label: row.label.to_owned(),
                value: row.value.to_owned(),
                first,
            });
        }
        self.seen.insert(key, row.line);
        Decimal::parse(row.value.as_bytes()).map_err(|reason| SummaryError::NotANumber {
            line: row.line,
            label: row.label.to_owned(),
            value: row.value.to_owned(),
            reason,
        })
    }

    /// A count row: a decimal that is a whole number ≥ 0 (`20`, also `20.0`).
    fn count(&mut self, row: &Row<'_>) -> Result<u64, SummaryError> {
        let d = self.decimal(row)?;
        whole(d).ok_or_else(|| SummaryError::NotWhole {
            line: row.line,
            label: row.label.to_owned(),
            value: row.value.to_owned(),
        })
    }

    fn finish(self, closing_line: usize) -> Result<Summary, SummaryError> {
        let header_line = self.header_line;
        let missing = |label| SummaryError::Missing { header_line, label };
        Ok(Summary {
            header_line,
            closing_line,
            successful: self
                .successful
                .ok_or_else(|| missing("Successful requests:"))?,
            failed: self.failed,
            max_concurrency: self.max_concurrency,
            request_rate: self.request_rate,
            duration_s: self
                .duration_s
                .ok_or_else(|| missing("Benchmark duration (s):"))?,
            total_input_tokens: self
                .total_input_tokens
                .ok_or_else(|| missing("Total input tokens:"))?,
            total_generated_tokens: self.total_generated_tokens,
            request_throughput: self.request_throughput,
            request_goodput: self.request_goodput,
            output_throughput: self.output_throughput,
            peak_output_throughput: self.peak_output_throughput,
            successful_client_second_bucket_peak: self.bucket_peak,
            total_token_throughput: self.total_token_throughput,
            latency: self.latency,
            other: self.other,
        })
    }
}

/// One `label: value` row.
struct Row<'a> {
    line: usize,
    label: &'a str,
    value: &'a str,
}

// ---------------------------------------------------------------------------------------------
// Result JSON values

const DETAIL_KEYS: [&str; 5] = ["input_lens", "output_lens", "ttfts", "itls", "errors"];

/// Per-request arrays that are not in [`Detailed`] but must align with it when present.
const OTHER_PER_REQUEST_KEYS: [&str; 2] = ["generated_texts", "queue_times"];

fn required<T>(
    map: &Map<String, Value>,
    key: &'static str,
    read: impl Fn(&str, &Value) -> Result<T, ResultError>,
) -> Result<T, ResultError> {
    match map.get(key) {
        None | Some(Value::Null) => Err(ResultError::Missing { key }),
        Some(value) => read(key, value),
    }
}

/// An absent key and `null` are both `None` (`max_concurrency` is `null` when unset).
fn optional<T>(
    map: &Map<String, Value>,
    key: &'static str,
    read: impl Fn(&str, &Value) -> Result<T, ResultError>,
) -> Result<Option<T>, ResultError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read(key, value).map(Some),
    }
}

fn wrong(key: &str, expected: &'static str, value: &Value) -> ResultError {
    ResultError::WrongType {
        key: key.to_owned(),
        expected,
        found: shown(value),
    }
}

/// A JSON integer ≥ 0; `20.0` is a float and refused.
fn json_count(key: &str, value: &Value) -> Result<u64, ResultError> {
    value
        .as_u64()
        .ok_or_else(|| wrong(key, "a whole number ≥ 0", value))
}

fn exact_decimal(key: &str, value: &Value) -> Result<Decimal, ResultError> {
    match value {
        Value::Number(n) => number_decimal(n).ok_or_else(|| wrong(key, "a number", value)),
        _ => Err(wrong(key, "a number", value)),
    }
}

fn request_rate(key: &str, value: &Value) -> Result<RequestRate, ResultError> {
    match value {
        Value::String(s) if s == "inf" => Ok(RequestRate::Infinite),
        _ => exact_decimal(key, value)
            .map(RequestRate::PerSecond)
            .map_err(|_| wrong(key, "a number or \"inf\"", value)),
    }
}

/// The decimal a JSON number spells: integers exactly; floats as Python's `repr` of the double
/// serde_json read (see [`python_repr`]).
fn number_decimal(n: &Number) -> Option<Decimal> {
    if let Some(u) = n.as_u64() {
        return Some(Decimal::from_u64(u));
    }
    if let Some(i) = n.as_i64() {
        return Decimal::parse(i.to_string().as_bytes()).ok();
    }
    Decimal::parse(python_repr(n.as_f64()?).as_bytes()).ok()
}

/// Python's `repr(x)` digits, in exponent form: the shortest decimal that reads back as `x`,
/// and of those the nearest, ties to the even digit. Rust's shortest (`{:e}`) has the same
/// length but breaks exact ties upward (`-637637799964508.25` → `…508.3`, Python `…508.2`), so
/// the nearest decimal of that length (`{:.N$e}`, ties to even) is preferred when it reads back.
/// Checked against CPython on 300,000 doubles, every power of two included.
fn python_repr(x: f64) -> String {
    let shortest = format!("{x:e}");
    let n_digits = shortest
        .split('e')
        .next()
        .map_or(0, |m| m.bytes().filter(u8::is_ascii_digit).count());
    let nearest = format!("{:.*e}", n_digits.saturating_sub(1), x);
    if nearest.parse::<f64>().ok().map(f64::to_bits) == Some(x.to_bits()) {
        nearest
    } else {
        shortest
    }
}

/// `mean_ttft_ms`, `median_itl_ms`, `std_tpot_ms`, `p99.9_e2el_ms` — not `probe_p99_e2el_ms`.
fn is_latency_stat_key(key: &str) -> bool {
    let Some((stat, metric)) = key.strip_suffix("_ms").and_then(|k| k.split_once('_')) else {
        return false;
    };
    !metric.is_empty()
        && (matches!(stat, "mean" | "median" | "std")
            || stat.strip_prefix('p').is_some_and(is_percentile))
}

fn array<'a>(key: &'static str, value: &'a Value) -> Result<&'a Vec<Value>, ResultError> {
    value
        .as_array()
        .ok_or_else(|| wrong(key, "an array", value))
}

fn elements<T>(
    key: &'static str,
    value: &Value,
    expected: &'static str,
    read: impl Fn(&Value) -> Option<T>,
) -> Result<Vec<T>, ResultError> {
    array(key, value)?
        .iter()
        .enumerate()
        .map(|(index, v)| {
            read(v).ok_or_else(|| ResultError::WrongElement {
                key,
                index,
                expected,
                found: shown(v),
            })
        })
        .collect()
}

fn float_elements(key: &'static str, value: &Value) -> Result<Vec<f64>, ResultError> {
    elements(key, value, "a number", Value::as_f64)
}

fn detailed(map: &Map<String, Value>) -> Result<Option<Detailed>, ResultError> {
    if !DETAIL_KEYS.iter().any(|k| map.contains_key(*k)) {
        return Ok(None);
    }
    let get = |key: &'static str| map.get(key).ok_or(ResultError::Missing { key });
    let input_lens = elements(
        "input_lens",
        get("input_lens")?,
        "a whole number ≥ 0",
        |v| v.as_u64(),
    )?;
    let output_lens = elements(
        "output_lens",
        get("output_lens")?,
        "a whole number ≥ 0",
        |v| v.as_u64(),
    )?;
    let ttfts_s = float_elements("ttfts", get("ttfts")?)?;
    let itls_s = elements("itls", get("itls")?, "an array of numbers", |v| {
        v.as_array()?.iter().map(Value::as_f64).collect()
    })?;
    let errors = elements("errors", get("errors")?, "a string", |v| {
        v.as_str().map(str::to_owned)
    })?;
    let start_times_s = optional(map, "start_times", |_, v| float_elements("start_times", v))?;
    let latencies_s = optional(map, "latencies", |_, v| float_elements("latencies", v))?;

    let reference_len = input_lens.len();
    let mut lengths = vec![
        ("output_lens", output_lens.len()),
        ("ttfts", ttfts_s.len()),
        ("itls", itls_s.len()),
        ("errors", errors.len()),
    ];
    if let Some(starts) = &start_times_s {
        lengths.push(("start_times", starts.len()));
    }
    if let Some(latencies) = &latencies_s {
        lengths.push(("latencies", latencies.len()));
    }
    for key in OTHER_PER_REQUEST_KEYS {
        if let Some(value) = map.get(key) {
            lengths.push((key, array(key, value)?.len()));
        }
    }
    if let Some(&(key, len)) = lengths.iter().find(|(_, len)| *len != reference_len) {
        return Err(ResultError::LengthMismatch {
            key,
            len,
            reference: "input_lens",
            reference_len,
        });
    }
    Ok(Some(Detailed {
        input_lens,
        output_lens,
        ttfts_s,
        itls_s,
        start_times_s,
        latencies_s,
        errors,
    }))
}

/// A JSON value for an error message, cut to 40 characters.
fn shown(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    if text.chars().count() > 40 {
        let mut cut: String = text.chars().take(40).collect();
        cut.push('…');
        cut
    } else {
        text
    }
}

// ---------------------------------------------------------------------------------------------
// Decimals as text

/// What a JSON value looks like once vLLM prints it.
enum PrintedFloat {
    /// A JSON number (or its absence), printed with `{:.2f}`.
    Json(Option<Decimal>),
    /// A value vLLM would not print as a number (`"inf"`).
    Text(&'static str),
}

fn compare_float(
    out: &mut Vec<Disagreement>,
    field: &str,
    printed: Option<Decimal>,
    json: PrintedFloat,
) {
    let Some(printed) = printed else {
        return;
    };
    let result = match json {
        PrintedFloat::Json(Some(d)) => to_f64(d).map(|f| format!("{f:.2}")),
        PrintedFloat::Json(None) => None,
        PrintedFloat::Text(text) => Some(text.to_owned()),
    };
    let agrees = result
        .as_deref()
        .and_then(|r| Decimal::parse(r.as_bytes()).ok())
        .is_some_and(|r| same_value(r, printed));
    if !agrees {
        out.push(Disagreement {
            field: field.to_owned(),
            stdout: decimal_text(printed).unwrap_or_else(|| format!("{printed:?}")),
            result: result.unwrap_or_else(|| "absent".to_owned()),
        });
    }
}

/// The decimal written out in full (`11.00`, `4.78794695900001`), keeping the digits it was
/// spelled with; `None` beyond the 38 decimal places [`Decimal::as_fraction`] covers.
fn decimal_text(d: Decimal) -> Option<String> {
    let (sign, magnitude) = if d.is_negative() {
        ("-", d.checked_mul(Decimal::parse(b"-1").ok()?)?)
    } else {
        ("", d)
    };
    let (numerator, denominator) = magnitude.as_fraction()?;
    let places = denominator.checked_ilog10()? as usize;
    let whole = numerator.checked_div(denominator)?;
    let fraction = numerator.checked_rem(denominator)?;
    Some(if places == 0 {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction:0places$}")
    })
}

/// The double a decimal names (exact for one that came from [`python_repr`]).
fn to_f64(d: Decimal) -> Option<f64> {
    decimal_text(d)?.parse().ok()
}

/// Equal in value: `11.00` and `11`.
fn same_value(a: Decimal, b: Decimal) -> bool {
    fn canonical(text: String) -> String {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text
        }
    }
    match (decimal_text(a), decimal_text(b)) {
        (Some(x), Some(y)) => canonical(x) == canonical(y),
        _ => a == b,
    }
}

/// A whole number ≥ 0 that fits in `u64`.
fn whole(d: Decimal) -> Option<u64> {
    let (numerator, denominator) = d.as_fraction()?;
    if numerator.checked_rem(denominator)? != 0 {
        return None;
    }
    u64::try_from(numerator.checked_div(denominator)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const RUNS: &str = "../../../../../shared/vllm/real-runs";
    const CPU_STDOUT: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu/bench_stdout.txt");
    const CPU_RESULT: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu/result.json");
    const PREFIX_STDOUT: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu-prefix/bench_stdout.txt");
    const PREFIX_RESULT: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu-prefix/result.json");
    const STUB_STDOUT: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/stub-client/bench_stdout.txt");
    const STUB_RESULT: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/stub-client/result.json");
    const V028_RESULT: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-0.28.0-mooncake40/result.json");
    const V023_STDOUT: &[u8] =
        include_bytes!("../../../../../shared/vllm/stdout_vllm0.23.0_vllm-ascend_run_excerpt.txt");
    const OLD_RESULT: &[u8] =
        include_bytes!("../../../../../shared/vllm/result_json_OLD_benchmark_serving_2025-05-30.json");

    /// The three real runs with both outputs, by folder under [`RUNS`].
    const REAL: [(&str, &[u8], &[u8]); 3] = [
        ("vllm-cpu", CPU_STDOUT, CPU_RESULT),
        ("vllm-cpu-prefix", PREFIX_STDOUT, PREFIX_RESULT),
        ("stub-client", STUB_STDOUT, STUB_RESULT),
    ];

    fn d(text: &str) -> Decimal {
        Decimal::parse(text.as_bytes()).unwrap()
    }

    fn wrap(rows: &str) -> String {
        format!("Namespace(...)\n{SUMMARY_HEADER}\n{rows}{SUMMARY_CLOSING}\n")
    }

    #[test]
    fn vllm_cpu_stdout_reads_as_printed() {
        let s = parse_summary(CPU_STDOUT).unwrap();
        assert_eq!((s.header_line, s.closing_line), (9, 40));
        assert_eq!(s.successful, 20);
        assert_eq!(s.failed, Some(0));
        assert_eq!(s.max_concurrency, None);
        assert_eq!(s.request_rate, None);
        assert_eq!(s.duration_s, d("4.79"));
        assert_eq!(s.total_input_tokens, 2279);
        assert_eq!(s.total_generated_tokens, Some(330));
        assert_eq!(s.request_throughput, Some(d("4.18")));
        assert_eq!(s.peak_output_throughput, Some(d("191.00")));
        assert_eq!(s.successful_client_second_bucket_peak, Some(d("11.00")));
        assert_eq!(s.total_token_throughput, Some(d("544.91")));
        let metrics: Vec<&str> = s.latency.iter().map(|l| l.metric.as_str()).collect();
        assert_eq!(metrics, ["TTFT", "TPOT", "ITL", "E2EL"]);
        let itl = s.latency.iter().find(|l| l.metric == "ITL").unwrap();
        assert_eq!(itl.mean_ms, Some(d("2.05")));
        assert_eq!(itl.median_ms, Some(d("1.61")));
        assert_eq!(
            itl.percentiles,
            [("50".to_owned(), d("1.61")), ("99".to_owned(), d("7.80"))]
        );
        assert_eq!(s.other, []);
    }

    #[test]
    fn vllm_cpu_result_reads_exactly() {
        let r = parse_result(CPU_RESULT).unwrap();
        assert_eq!(r.keys, 51);
        assert_eq!(r.completed, 20);
        assert_eq!(r.failed, Some(0));
        assert_eq!(r.num_prompts, Some(20));
        assert_eq!(r.duration_s, d("4.78794695900001"));
        assert_eq!(r.total_input_tokens, 2279);
        assert_eq!(r.total_output_tokens, Some(330));
        assert_eq!(r.max_concurrency, None);
        assert_eq!(r.request_rate, Some(RequestRate::Infinite));
        assert_eq!(r.request_goodput, None);
        assert_eq!(r.max_output_tokens_per_s, Some(d("191")));
        assert_eq!(r.successful_client_second_bucket_peak, Some(11));
        assert_eq!(r.stats.get("p99_itl_ms"), Some(&d("7.800247820039204")));
        assert_eq!(r.stats.get("std_e2el_ms"), Some(&d("23.73463977821803")));
        assert_eq!(r.stats.len(), 20);
        let detailed = r.detailed.unwrap();
        assert_eq!(detailed.input_lens.len(), 20);
        assert_eq!(detailed.input_lens.iter().sum::<u64>(), 2279);
        assert_eq!(detailed.output_lens.iter().sum::<u64>(), 330);
        assert_eq!(detailed.ttfts_s.len(), 20);
        assert_eq!(detailed.itls_s.len(), 20);
        // One gap per chunk after the first: each request streamed one chunk per token.
        for (itls, &out) in detailed.itls_s.iter().zip(&detailed.output_lens) {
            assert_eq!(itls.len() as u64 + 1, out);
        }
        assert_eq!(detailed.start_times_s.as_ref().map(Vec::len), Some(20));
        assert_eq!(detailed.latencies_s.as_ref().map(Vec::len), Some(20));
        assert!(detailed.errors.iter().all(String::is_empty));
    }

    #[test]
    fn second_bucket_peak_recomputes_max_concurrent_requests() {
        for (folder, _, result) in REAL {
            let r = parse_result(result).unwrap();
            let spans = r.detailed.unwrap().successful_spans_s().unwrap();
            assert_eq!(
                second_bucket_peak(&spans),
                r.successful_client_second_bucket_peak,
                "{RUNS}/{folder}"
            );
        }
    }

    #[test]
    fn real_bucket_peaks_overstate_what_was_in_flight() {
        // 20 requests over ~4.8 s: vLLM reports 11, 8 and 11; at most 3, 2 and 3 overlapped.
        for ((folder, _, result), want) in REAL.into_iter().zip([(11, 3), (8, 2), (11, 3)]) {
            let spans = parse_result(result)
                .unwrap()
                .detailed
                .unwrap()
                .successful_spans_s()
                .unwrap();
            let ns = |s: f64| (s * 1e9).round() as i64;
            let spans_ns: Vec<(i64, i64)> = spans
                .iter()
                .map(|&(start, latency)| (ns(start), ns(start + latency)))
                .collect();
            assert_eq!(
                (second_bucket_peak(&spans), exact_peak(&spans_ns)),
                (Some(want.0), want.1),
                "{RUNS}/{folder}"
            );
        }
    }

    #[test]
    fn stdout_and_result_of_one_run_agree() {
        for (folder, stdout, result) in REAL {
            let s = parse_summary(stdout).unwrap();
            let r = parse_result(result).unwrap();
            assert_eq!(disagreements(&s, &r), [], "{RUNS}/{folder}");
        }
    }

    #[test]
    fn mixing_run_a_stdout_with_run_b_result_is_refused() {
        let s = parse_summary(CPU_STDOUT).unwrap();
        let r = parse_result(PREFIX_RESULT).unwrap();
        let found = disagreements(&s, &r);
        assert!(found.contains(&Disagreement {
            field: "total_input_tokens".to_owned(),
            stdout: "2279".to_owned(),
            result: "9651".to_owned(),
        }));
        assert!(found.contains(&Disagreement {
            field: "duration".to_owned(),
            stdout: "4.79".to_owned(),
            result: "4.81".to_owned(),
        }));
        assert!(found.contains(&Disagreement {
            field: "max_concurrent_requests".to_owned(),
            stdout: "11.00".to_owned(),
            result: "8.00".to_owned(),
        }));
        // Same prompt count and no failures in both runs: those rows cannot tell them apart.
        assert!(
            !found
                .iter()
                .any(|f| f.field == "completed" || f.field == "failed")
        );
    }

    #[test]
    fn a_stdout_row_the_result_lacks_is_a_disagreement() {
        let s = parse_summary(CPU_STDOUT).unwrap();
        let mut r = parse_result(CPU_RESULT).unwrap();
        r.stats.remove("p99_itl_ms");
        r.max_concurrency = Some(4);
        assert_eq!(
            disagreements(&s, &r),
            [Disagreement {
                field: "p99_itl_ms".to_owned(),
                stdout: "7.80".to_owned(),
                result: "absent".to_owned(),
            }]
        );
        // A `--max-concurrency` the stdout did not print is not compared (older tables omit it).
    }

    #[test]
    fn truncated_stdout_fails_replay() {
        let text = std::str::from_utf8(CPU_STDOUT).unwrap();
        let closing = text.rfind(SUMMARY_CLOSING).unwrap();
        let mid_row = text.find("P99 E2EL (ms):").unwrap() + 20;
        for cut in [
            closing,
            closing + 25,
            mid_row,
            text.find(SUMMARY_HEADER).unwrap() + 60,
        ] {
            assert_eq!(
                parse_summary(&CPU_STDOUT[..cut]),
                Err(SummaryError::Truncated { line: 9 }),
                "cut at byte {cut}"
            );
        }
        // The closing line without its newline is whole.
        assert!(parse_summary(&CPU_STDOUT[..closing + 50]).is_ok());
    }

    #[test]
    fn the_bucket_peak_is_not_engine_concurrency() {
        // --max-concurrency 2, no foreign traffic: A and B run 0.05–0.80 s, C and D 0.81–1.40 s.
        let spans_s = [(0.05, 0.75), (0.05, 0.75), (0.81, 0.59), (0.81, 0.59)];
        let spans_ns = [
            (50_000_000, 800_000_000),
            (50_000_000, 800_000_000),
            (810_000_000, 1_400_000_000),
            (810_000_000, 1_400_000_000),
        ];
        assert_eq!(second_bucket_peak(&spans_s), Some(4));
        assert_eq!(exact_peak(&spans_ns), 2);
    }

    #[test]
    fn exact_peak_lets_a_departure_precede_an_arrival() {
        assert_eq!(exact_peak(&[(0, 10), (10, 20), (20, 30)]), 1);
        assert_eq!(exact_peak(&[(0, 11), (10, 20)]), 2);
        assert_eq!(exact_peak(&[(5, 5), (7, 3)]), 0);
        assert_eq!(exact_peak(&[]), 0);
    }

    #[test]
    fn second_bucket_peak_counts_both_end_seconds() {
        // One request from 0.9 s to 2.1 s touches seconds 0, 1 and 2; one at 2.5 s shares 2.
        assert_eq!(second_bucket_peak(&[(0.9, 1.2), (2.5, 0.1)]), Some(2));
        assert_eq!(second_bucket_peak(&[(0.0, 0.999), (1.0, 0.5)]), Some(1));
        assert_eq!(second_bucket_peak(&[]), None);
        assert_eq!(second_bucket_peak(&[(0.0, f64::NAN)]), None);
        // A negative latency touches no second, as `range(start, end + 1)` is empty.
        assert_eq!(second_bucket_peak(&[(5.0, -2.0)]), Some(0));
    }

    #[test]
    fn vllm_0_28_result_with_crlf_and_34_keys_parses() {
        assert!(V028_RESULT.windows(2).any(|w| w == b"\r\n"));
        let r = parse_result(V028_RESULT).unwrap();
        assert_eq!(r.keys, 34);
        assert_eq!(r.completed, 40);
        assert_eq!(r.total_input_tokens, 506_280);
        assert_eq!(r.total_output_tokens, Some(40));
        assert_eq!(r.successful_client_second_bucket_peak, Some(16));
        assert_eq!(r.stats.get("p99_ttft_ms"), Some(&d("1040.9596590099")));
        assert_eq!(r.stats.get("mean_tpot_ms"), Some(&d("0")));
        assert_eq!(r.stats.len(), 12);
        assert_eq!(r.detailed, None);
    }

    #[test]
    fn stub_client_result_with_53_keys_parses() {
        let r = parse_result(STUB_RESULT).unwrap();
        assert_eq!(r.keys, 53);
        assert_eq!(r.duration_s, d("4.845354723000014"));
        assert_eq!(r.detailed.unwrap().errors.len(), 20);
    }

    #[test]
    fn old_schema_result_without_failed_parses() {
        let r = parse_result(OLD_RESULT).unwrap();
        assert_eq!(r.keys, 36);
        assert_eq!((r.completed, r.failed), (900, None));
        assert_eq!(r.successful_client_second_bucket_peak, None);
        assert_eq!(r.stats.get("p99_itl_ms"), Some(&d("66.37176537940839")));
    }

    #[test]
    fn v0_23_stdout_keeps_spec_decode_rows_in_other() {
        let s = parse_summary(V023_STDOUT).unwrap();
        assert_eq!(s.successful, 1000);
        assert_eq!(s.max_concurrency, Some(32));
        assert_eq!(s.request_rate, Some(d("5.00")));
        assert_eq!(s.successful_client_second_bucket_peak, Some(d("35.00")));
        assert_eq!(s.latency.len(), 3);
        let other: Vec<(&str, &str, &str)> = s
            .other
            .iter()
            .map(|o| (o.section.as_str(), o.label.as_str(), o.value.as_str()))
            .collect();
        assert_eq!(other.len(), 13);
        assert_eq!(
            other.first(),
            Some(&("Speculative Decoding", "Acceptance rate (%):", "44.33"))
        );
        assert!(other.contains(&("Speculative Decoding", "Per-position acceptance (%):", "")));
        assert!(other.contains(&("Speculative Decoding", "Position 6:", "18.53")));
    }

    #[test]
    fn older_stdout_with_capital_t_and_no_failed_row_reads() {
        let rows = [
            format!("{:<40} {:<10}", "Successful requests:", 32),
            format!("{:<40} {:<10.2}", "Benchmark duration (s):", 150.87),
            format!("{:<40} {:<10}", "Total input tokens:", 65536),
            format!("{:<40} {:<10.2}", "Total Token throughput (tok/s):", 868.8),
            format!("{:-^50}", "Accuracy"),
            format!("{:<40} {:<10.2}", "Accuracy Rate (%):", 91.5),
        ];
        let s = parse_summary(wrap(&(rows.join("\n") + "\n")).as_bytes()).unwrap();
        assert_eq!(s.failed, None);
        assert_eq!(s.total_token_throughput, Some(d("868.80")));
        assert_eq!(s.other.len(), 1);
        assert_eq!(
            s.other.first().map(|o| o.section.as_str()),
            Some("Accuracy")
        );
    }

    #[test]
    fn stdout_without_header_is_no_summary() {
        assert_eq!(parse_summary(b""), Err(SummaryError::NoSummary));
        let cut = std::str::from_utf8(CPU_STDOUT)
            .unwrap()
            .find(SUMMARY_HEADER)
            .unwrap();
        assert_eq!(
            parse_summary(&CPU_STDOUT[..cut]),
            Err(SummaryError::NoSummary)
        );
    }

    #[test]
    fn two_summary_blocks_are_refused() {
        let mut both = CPU_STDOUT.to_vec();
        both.extend_from_slice(PREFIX_STDOUT);
        assert_eq!(
            parse_summary(&both),
            Err(SummaryError::TwoSummaries {
                first: 9,
                second: 40 + 9
            })
        );
    }

    #[test]
    fn count_rows_must_be_whole() {
        let stdout = wrap("Successful requests:                     20.5      \n");
        let err = parse_summary(stdout.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            SummaryError::NotWhole {
                line: 3,
                label: "Successful requests:".to_owned(),
                value: "20.5".to_owned()
            }
        );
        assert_eq!(
            err.to_string(),
            "line 3: `Successful requests:` has value \"20.5\", not a whole number"
        );
    }

    #[test]
    fn errors_name_line_label_and_raw_value() {
        let text = std::str::from_utf8(CPU_STDOUT).unwrap();
        let bad = text.replacen("4.79      ", "4,79      ", 1);
        assert_eq!(
            parse_summary(bad.as_bytes()).unwrap_err().to_string(),
            "line 12: `Benchmark duration (s):` has value \"4,79\", not a decimal (NotNumeric)"
        );
        let no_duration = text.replacen("Benchmark duration (s):", "Benchmark time (s):", 1);
        assert_eq!(
            parse_summary(no_duration.as_bytes()),
            Err(SummaryError::Missing {
                header_line: 9,
                label: "Benchmark duration (s):"
            })
        );
    }

    #[test]
    fn a_known_row_twice_is_refused() {
        let text = std::str::from_utf8(CPU_STDOUT).unwrap();
        let twice = text.replacen(
            "Total token throughput (tok/s):          544.91    \n",
            "Total token throughput (tok/s):          544.91    \n\
             Total Token throughput (tok/s):          544.92    \n",
            1,
        );
        assert_eq!(
            parse_summary(twice.as_bytes()),
            Err(SummaryError::Duplicate {
                line: 20,
                label: "Total Token throughput (tok/s):".to_owned(),
                value: "544.92".to_owned(),
                first: 19
            })
        );
        let p99 = "P99 ITL (ms):                            7.80      \n";
        let twice = text.replacen(p99, &format!("{p99}{p99}"), 1);
        assert!(matches!(
            parse_summary(twice.as_bytes()),
            Err(SummaryError::Duplicate {
                line: 35,
                first: 34,
                ..
            })
        ));
    }

    fn cpu_json() -> Map<String, Value> {
        match serde_json::from_slice(CPU_RESULT).unwrap() {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    fn reparse(map: Map<String, Value>) -> Result<BenchResult, ResultError> {
        parse_result(&serde_json::to_vec(&Value::Object(map)).unwrap())
    }

    #[test]
    fn result_counts_must_be_json_integers() {
        for bad in [
            serde_json::json!(20.5),
            serde_json::json!(20.0),
            serde_json::json!(-1),
        ] {
            let mut map = cpu_json();
            map.insert("completed".to_owned(), bad.clone());
            assert_eq!(
                reparse(map),
                Err(ResultError::WrongType {
                    key: "completed".to_owned(),
                    expected: "a whole number ≥ 0",
                    found: bad.to_string()
                })
            );
        }
        let mut map = cpu_json();
        map.remove("completed");
        assert_eq!(reparse(map), Err(ResultError::Missing { key: "completed" }));
    }

    #[test]
    fn detailed_arrays_must_share_one_length() {
        let mut map = cpu_json();
        if let Some(Value::Array(ttfts)) = map.get_mut("ttfts") {
            ttfts.pop();
        }
        let err = reparse(map).unwrap_err();
        assert_eq!(
            err,
            ResultError::LengthMismatch {
                key: "ttfts",
                len: 19,
                reference: "input_lens",
                reference_len: 20
            }
        );
        assert_eq!(
            err.to_string(),
            "`ttfts` has 19 entries but `input_lens` has 20"
        );

        let mut map = cpu_json();
        map.remove("errors");
        assert_eq!(reparse(map), Err(ResultError::Missing { key: "errors" }));

        let mut map = cpu_json();
        if let Some(Value::Array(lens)) = map.get_mut("output_lens") {
            lens[3] = serde_json::json!(6.5);
        }
        assert_eq!(
            reparse(map),
            Err(ResultError::WrongElement {
                key: "output_lens",
                index: 3,
                expected: "a whole number ≥ 0",
                found: "6.5".to_owned()
            })
        );
    }

    #[test]
    fn appended_results_and_non_objects_are_refused() {
        let mut two = CPU_RESULT.to_vec();
        two.push(b'\n');
        two.extend_from_slice(PREFIX_RESULT);
        assert!(matches!(
            parse_result(&two),
            Err(ResultError::Json { line: 2, .. })
        ));
        assert_eq!(
            parse_result(b"[1, 2]"),
            Err(ResultError::NotAnObject {
                found: "[1,2]".to_owned()
            })
        );
    }

    #[test]
    fn json_floats_read_as_python_wrote_them() {
        // An exact binary tie: Rust's shortest spells it …508.3, Python's repr …508.2.
        let tie = -(637_637_799_964_508.0 + 0.25);
        assert_eq!(python_repr(tie), "-6.376377999645082e14");
        assert_eq!(format!("{tie:e}"), "-6.376377999645083e14");
        let r = parse_result(
            b"{\"completed\": 1, \"duration\": 637637799964508.25, \
                               \"total_input_tokens\": 1, \"mean_x_ms\": 1e-7}",
        )
        .unwrap();
        assert_eq!(r.duration_s, d("637637799964508.2"));
        assert_eq!(r.stats.get("mean_x_ms"), Some(&d("0.0000001")));
    }

    #[test]
    fn two_decimals_round_the_double_half_to_even_like_python() {
        // CPython: '{:.2f}'.format(x) for each x.
        for (x, python) in [
            (0.125, "0.12"),
            (0.375, "0.38"),
            (2.675, "2.67"),
            (1.005, "1.00"),
            (4.78794695900001, "4.79"),
            (7.800247820039204, "7.80"),
            (-0.0, "-0.00"),
        ] {
            assert_eq!(format!("{x:.2}"), python, "{x}");
        }
    }

    #[test]
    fn decimals_print_with_the_digits_they_were_spelled_with() {
        for text in [
            "11.00",
            "4.79",
            "0",
            "2279",
            "-0.5",
            "0.0000001",
            "4.78794695900001",
        ] {
            assert_eq!(decimal_text(d(text)).as_deref(), Some(text));
        }
        assert_eq!(decimal_text(d("1e3")).as_deref(), Some("1000"));
        assert!(same_value(d("11.00"), d("11")));
        assert!(!same_value(d("11.01"), d("11")));
        assert_eq!(whole(d("20.0")), Some(20));
        assert_eq!(whole(d("20.5")), None);
        assert_eq!(whole(d("-1")), None);
    }

    /// One generated run's printed values.
    #[derive(Debug, Clone)]
    struct Printed {
        successful: u64,
        failed: Option<u64>,
        max_concurrency: Option<u64>,
        request_rate: Option<f64>,
        duration_s: f64,
        total_input_tokens: u64,
        total_generated_tokens: Option<u64>,
        throughputs: [Option<f64>; 5],
        capital_t: bool,
        latency: Vec<PrintedLatency>,
        spec_decode: Option<(f64, u64)>,
    }

    /// `(metric index, mean, median, [(percentile index, value)])`.
    type PrintedLatency = (usize, f64, f64, Vec<(usize, f64)>);

    const METRICS: [(&str, &str); 4] = [
        ("TTFT", "Time to First Token"),
        ("TPOT", "Time per Output Token (excl. 1st token)"),
        ("ITL", "Inter-token Latency"),
        ("E2EL", "End-to-end Latency"),
    ];
    const PERCENTILES: [&str; 5] = ["25", "50", "90", "99", "99.9"];

    fn printed() -> impl Strategy<Value = Printed> {
        let float = || 0.0f64..1e9;
        let count = || 0u64..10_000_000_000;
        let latency = proptest::sample::subsequence(vec![0usize, 1, 2, 3], 0..=4).prop_flat_map(
            move |metrics| {
                let n = metrics.len();
                (
                    Just(metrics),
                    proptest::collection::vec(
                        (
                            0.0f64..1e6,
                            0.0f64..1e6,
                            proptest::sample::subsequence(vec![0usize, 1, 2, 3, 4], 0..=5),
                            proptest::collection::vec(0.0f64..1e6, 5),
                        ),
                        n,
                    ),
                )
                    .prop_map(|(metrics, stats)| {
                        metrics
                            .into_iter()
                            .zip(stats)
                            .map(|(m, (mean, median, ps, values))| {
                                let ps = ps.into_iter().zip(values).collect();
                                (m, mean, median, ps)
                            })
                            .collect::<Vec<_>>()
                    })
            },
        );
        (
            (
                count(),
                proptest::option::of(count()),
                proptest::option::of(1u64..100_000),
            ),
            (proptest::option::of(0.01f64..1e4), float(), count()),
            proptest::option::of(count()),
            proptest::array::uniform5(proptest::option::of(float())),
            any::<bool>(),
            latency,
            proptest::option::of((0.0f64..100.0, count())),
        )
            .prop_map(
                |(
                    (successful, failed, max_concurrency),
                    (request_rate, duration_s, total_input_tokens),
                    total_generated_tokens,
                    throughputs,
                    capital_t,
                    latency,
                    spec_decode,
                )| Printed {
                    successful,
                    failed,
                    max_concurrency,
                    request_rate,
                    duration_s,
                    total_input_tokens,
                    total_generated_tokens,
                    throughputs,
                    capital_t,
                    latency,
                    spec_decode,
                },
            )
    }

    /// Prints `p` the way vLLM does: `{:<40} {:<10}` for counts, `{:<40} {:<10.2f}` for floats.
    fn render(p: &Printed) -> String {
        let mut out = String::from("Starting main benchmark run...\n");
        out.push_str(&format!("{:=^50}\n", " Serving Benchmark Result "));
        let int = |out: &mut String, label: &str, v: u64| {
            out.push_str(&format!("{label:<40} {v:<10}\n"));
        };
        let float = |out: &mut String, label: &str, v: f64| {
            out.push_str(&format!("{label:<40} {v:<10.2}\n"));
        };
        int(&mut out, "Successful requests:", p.successful);
        if let Some(v) = p.failed {
            int(&mut out, "Failed requests:", v);
        }
        if let Some(v) = p.max_concurrency {
            int(&mut out, "Maximum request concurrency:", v);
        }
        if let Some(v) = p.request_rate {
            float(&mut out, "Request rate configured (RPS):", v);
        }
        float(&mut out, "Benchmark duration (s):", p.duration_s);
        int(&mut out, "Total input tokens:", p.total_input_tokens);
        if let Some(v) = p.total_generated_tokens {
            int(&mut out, "Total generated tokens:", v);
        }
        let total = if p.capital_t {
            "Total Token throughput (tok/s):"
        } else {
            "Total token throughput (tok/s):"
        };
        let labels = [
            "Request throughput (req/s):",
            "Output token throughput (tok/s):",
            "Peak output token throughput (tok/s):",
            "Peak concurrent requests:",
            total,
        ];
        for (label, v) in labels.iter().zip(p.throughputs) {
            if let Some(v) = v {
                float(&mut out, label, v);
            }
        }
        for (m, mean, median, ps) in &p.latency {
            let (metric, header) = METRICS[*m];
            out.push_str(&format!("{header:-^50}\n"));
            float(&mut out, &format!("Mean {metric} (ms):"), *mean);
            float(&mut out, &format!("Median {metric} (ms):"), *median);
            for (pi, v) in ps {
                float(
                    &mut out,
                    &format!("P{} {metric} (ms):", PERCENTILES[*pi]),
                    *v,
                );
            }
        }
        if let Some((rate, drafts)) = p.spec_decode {
            out.push_str(&format!("{:-^50}\n", "Speculative Decoding"));
            float(&mut out, "Acceptance rate (%):", rate);
            int(&mut out, "Drafts:", drafts);
        }
        out.push_str(&"=".repeat(50));
        out.push('\n');
        out
    }

    fn two_places(v: f64) -> Decimal {
        d(&format!("{v:.2}"))
    }

    proptest! {
        #[test]
        fn parse_summary_never_panics(
            head in any::<bool>(),
            body in proptest::collection::vec(any::<u8>(), 0..400),
            tail in any::<bool>(),
        ) {
            let mut input = Vec::new();
            if head {
                input.extend_from_slice(SUMMARY_HEADER.as_bytes());
                input.push(b'\n');
            }
            input.extend_from_slice(&body);
            if tail {
                input.extend_from_slice(b"\n==================================================\n");
            }
            if let Ok(s) = parse_summary(&input) {
                prop_assert!(s.header_line < s.closing_line);
                prop_assert!(s.other.iter().all(|o| (s.header_line..s.closing_line).contains(&o.line)));
            }
        }

        #[test]
        fn parse_summary_survives_edits_of_a_real_stdout(
            at in 0usize..1900,
            bytes in proptest::collection::vec(any::<u8>(), 0..8),
        ) {
            let mut input = CPU_STDOUT.to_vec();
            let at = at.min(input.len());
            input.splice(at..at, bytes);
            let _ = parse_summary(&input);
        }

        #[test]
        fn parse_result_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse_result(&bytes);
        }

        #[test]
        fn parse_result_survives_edits_of_a_real_result(
            at in 0usize..13_241,
            len in 0usize..6,
            bytes in proptest::collection::vec(any::<u8>(), 0..6),
        ) {
            let mut input = CPU_RESULT.to_vec();
            let at = at.min(input.len());
            let end = (at + len).min(input.len());
            input.splice(at..end, bytes);
            if let Ok(r) = parse_result(&input)
                && let Some(detailed) = &r.detailed
            {
                prop_assert_eq!(detailed.output_lens.len(), detailed.input_lens.len());
                prop_assert_eq!(detailed.errors.len(), detailed.input_lens.len());
            }
        }

        #[test]
        fn a_rendered_summary_parses_back(p in printed()) {
            let s = parse_summary(render(&p).as_bytes()).unwrap();
            prop_assert_eq!((s.header_line, s.successful), (2, p.successful));
            prop_assert_eq!(s.failed, p.failed);
            prop_assert_eq!(s.max_concurrency, p.max_concurrency);
            prop_assert_eq!(s.request_rate, p.request_rate.map(two_places));
            prop_assert_eq!(s.duration_s, two_places(p.duration_s));
            prop_assert_eq!(s.total_input_tokens, p.total_input_tokens);
            prop_assert_eq!(s.total_generated_tokens, p.total_generated_tokens);
            let [rt, ot, pot, peak, tt] = p.throughputs.map(|v| v.map(two_places));
            prop_assert_eq!(s.request_throughput, rt);
            prop_assert_eq!(s.output_throughput, ot);
            prop_assert_eq!(s.peak_output_throughput, pot);
            prop_assert_eq!(s.successful_client_second_bucket_peak, peak);
            prop_assert_eq!(s.total_token_throughput, tt);
            prop_assert_eq!(s.latency.len(), p.latency.len());
            for (got, (m, mean, median, ps)) in s.latency.iter().zip(&p.latency) {
                prop_assert_eq!(got.metric.as_str(), METRICS[*m].0);
                prop_assert_eq!(got.mean_ms, Some(two_places(*mean)));
                prop_assert_eq!(got.median_ms, Some(two_places(*median)));
                let want: Vec<(String, Decimal)> = ps
                    .iter()
                    .map(|(pi, v)| (PERCENTILES[*pi].to_owned(), two_places(*v)))
                    .collect();
                prop_assert_eq!(&got.percentiles, &want);
            }
            prop_assert_eq!(s.other.len(), if p.spec_decode.is_some() { 2 } else { 0 });
        }

        #[test]
        fn exact_peak_never_exceeds_the_bucket_peak(
            spans in proptest::collection::vec((0i64..400, 0i64..80), 1..40),
        ) {
            // Eighths of a second: exact in f64 and in nanoseconds.
            let spans_s: Vec<(f64, f64)> =
                spans.iter().map(|&(s, l)| (s as f64 / 8.0, l as f64 / 8.0)).collect();
            let spans_ns: Vec<(i64, i64)> = spans
                .iter()
                .map(|&(s, l)| (s * 125_000_000, (s + l) * 125_000_000))
                .collect();
            let bucket = second_bucket_peak(&spans_s).unwrap();
            prop_assert!(exact_peak(&spans_ns) <= bucket);
            prop_assert!(bucket <= spans.len() as u64);
        }
    }
}
