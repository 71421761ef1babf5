//! [`disagreements`]: whether a stdout summary and a result JSON come from one run.
//!
//! Counts are compared exactly; floats by printing the JSON double as vLLM prints it (Python's
//! `{:.2f}`, which Rust's `{:.2}` matches) and comparing the decimals by value.

use super::decimal_text::{decimal_text, same_value, to_f64};
use super::result::{BenchResult, RequestRate};
use super::summary::Summary;
use crate::decimal::Decimal;

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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{parse_result, parse_summary};
    use super::*;

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
}
