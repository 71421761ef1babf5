//! The `--save-result` JSON, read exactly: [`parse_result`].
//!
//! Counts must be JSON integers, every float is read as the decimal Python wrote, and the
//! per-request arrays of `--save-detailed` must align by index.

use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

use super::summary::is_percentile;
use crate::decimal::Decimal;

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
    ///
    /// [`second_bucket_peak`]: super::second_bucket_peak
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
    ///
    /// [`second_bucket_peak`]: super::second_bucket_peak
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
pub(super) fn python_repr(x: f64) -> String {
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::test_support::*;
    use super::*;

    const V028_RESULT: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-0.28.0-mooncake40/result.json");
    const OLD_RESULT: &[u8] = include_bytes!(
        "../../../../../shared/vllm/result_json_OLD_benchmark_serving_2025-05-30.json"
    );

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

    proptest! {
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
    }
}
