//! GuideLLM's report (`guidellm run --output kind=json`, `benchmarks.json`): per benchmark,
//! every request it recorded under `requests.{successful,errored,incomplete}`, each with its
//! scheduler's timings in absolute Unix seconds (`info.timings`: `queued`, `targeted_start` —
//! the schedule —, `request_start` — the send —, the first and last token, `request_end`) and
//! its token counts.
//!
//! Read as GuideLLM 0.8 writes it: one benchmark (a replay profile runs one), unknown fields
//! ignored, a used field of the wrong type refused by benchmark, group, index and field.
//! GuideLLM keeps no per-token times and no row id; the audit says so rather than filling in.

use serde_json::Value;

/// How a recorded request ended, by the group GuideLLM filed it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `successful`.
    Completed,
    /// `errored`.
    Errored,
    /// `incomplete`: still in flight when the run stopped.
    Incomplete,
}

/// One request as GuideLLM recorded it. Times are Unix seconds as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Its group.
    pub status: Status,
    /// Where it is: `successful[3]`.
    pub at: String,
    /// `info.timings.queued`: when the main process enqueued it (strictly in row order).
    pub queued_s: f64,
    /// `info.timings.targeted_start`: the schedule.
    pub targeted_s: Option<f64>,
    /// `info.timings.request_start`: the send (the request headers' write).
    pub sent_s: Option<f64>,
    /// `info.timings.first_token_iteration`.
    pub first_token_s: Option<f64>,
    /// `info.timings.request_end`.
    pub end_s: Option<f64>,
    /// `info.settings.relative_timestamp`: the row's time from the trace's first, seconds.
    pub relative_s: Option<f64>,
    /// `max_tokens` of the request body it sent.
    pub max_tokens: Option<u64>,
    /// `prompt_tokens` (the server's usage by default).
    pub prompt_tokens: Option<u64>,
    /// `output_tokens`.
    pub output_tokens: Option<u64>,
    /// `info.error`, for an errored request.
    pub error: Option<String>,
}

/// The one benchmark of a replay report.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Every record, successful, errored and incomplete, in the file's order per group.
    pub records: Vec<Record>,
    /// `scheduler_state.start_time`: the schedule's zero, Unix seconds.
    pub start_s: Option<f64>,
    /// `scheduler_state.processing_requests` at the end (a record lost to GuideLLM's shutdown
    /// race leaves this above 0).
    pub processing: Option<u64>,
    /// `scheduler_state.cancelled_requests`: requests cancelled before they were sent, which
    /// GuideLLM does not record.
    pub cancelled: Option<u64>,
}

/// A report that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("benchmarks.json {at}: {detail}")]
pub struct ReportError {
    /// Where.
    pub at: String,
    /// What is wrong.
    pub detail: String,
}

fn err(at: impl Into<String>, detail: impl Into<String>) -> ReportError {
    ReportError {
        at: at.into(),
        detail: detail.into(),
    }
}

/// Seconds a report may carry: a Unix time or a relative one, 0 to 1e11 (year 5138), so the
/// audit's ns arithmetic stays in range.
const MAX_S: f64 = 1e11;

fn seconds(v: Option<&Value>, at: &str) -> Result<Option<f64>, ReportError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|x| x.is_finite() && (0.0..=MAX_S).contains(x))
            .map(Some)
            .ok_or_else(|| err(at, format!("{n} is not a time in s (0 to 1e11)"))),
        Some(other) => Err(err(at, format!("{other} is not a number"))),
    }
}

fn count(v: Option<&Value>, at: &str) -> Result<Option<u64>, ReportError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(c), _) => Ok(Some(c)),
            (None, Some(x)) if x >= 0.0 && x.fract() == 0.0 && x < 9.0e15 => Ok(Some(x as u64)),
            _ => Err(err(at, format!("{n} is not a count"))),
        },
        Some(other) => Err(err(at, format!("{other} is not a count"))),
    }
}

fn record(v: &Value, status: Status, at: String) -> Result<Record, ReportError> {
    let info = v.get("info").unwrap_or(&Value::Null);
    let timing = |name: &str| {
        seconds(
            info.get("timings").and_then(|t| t.get(name)),
            &format!("{at}.info.timings.{name}"),
        )
    };
    let queued_s = timing("queued")?.ok_or_else(|| {
        err(
            format!("{at}.info.timings.queued"),
            "missing: a record that cannot be placed in row order",
        )
    })?;
    // The body it sent, kept as a JSON string.
    let max_tokens = match v.get("request_args") {
        Some(Value::String(text)) => serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|a| a.get("body")?.get("max_tokens")?.as_u64()),
        _ => None,
    };
    Ok(Record {
        status,
        queued_s,
        targeted_s: timing("targeted_start")?,
        sent_s: timing("request_start")?,
        first_token_s: timing("first_token_iteration")?,
        end_s: timing("request_end")?,
        relative_s: seconds(
            info.get("settings")
                .and_then(|s| s.get("relative_timestamp")),
            &format!("{at}.info.settings.relative_timestamp"),
        )?,
        max_tokens,
        prompt_tokens: count(v.get("prompt_tokens"), &format!("{at}.prompt_tokens"))?,
        output_tokens: count(v.get("output_tokens"), &format!("{at}.output_tokens"))?,
        error: match info.get("error") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        },
        at,
    })
}

/// The one benchmark of a GuideLLM report.
pub fn read_report(bytes: &[u8]) -> Result<Report, ReportError> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| err("(document)", e.to_string()))?;
    let benchmarks = doc
        .get("benchmarks")
        .and_then(Value::as_array)
        .ok_or_else(|| err("benchmarks", "missing or not a list"))?;
    let bench = match benchmarks.as_slice() {
        [one] => one,
        other => {
            return Err(err(
                "benchmarks",
                format!("{} benchmarks; a replay runs exactly one", other.len()),
            ));
        }
    };
    let requests = bench
        .get("requests")
        .ok_or_else(|| err("benchmarks[0].requests", "missing"))?;
    let mut records = Vec::new();
    for (group, status) in [
        ("successful", Status::Completed),
        ("errored", Status::Errored),
        ("incomplete", Status::Incomplete),
    ] {
        match requests.get(group) {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) => {
                for (k, v) in list.iter().enumerate() {
                    records.push(record(v, status, format!("{group}[{k}]"))?);
                }
            }
            Some(other) => {
                return Err(err(
                    format!("benchmarks[0].requests.{group}"),
                    format!("{} is not a list", other),
                ));
            }
        }
    }
    let state = bench.get("scheduler_state").unwrap_or(&Value::Null);
    Ok(Report {
        records,
        start_s: seconds(state.get("start_time"), "scheduler_state.start_time")?,
        processing: count(
            state.get("processing_requests"),
            "scheduler_state.processing_requests",
        )?,
        cancelled: count(
            state.get("cancelled_requests"),
            "scheduler_state.cancelled_requests",
        )?,
    })
}

/// The HTTP status in GuideLLM's error text (httpx: `Server error '500 Internal Server Error'`).
pub fn http_status(error: &str) -> Option<u16> {
    let at = error.find(" error '")? + " error '".len();
    let digits = error.get(at..at + 3)?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"{"benchmarks":[{"scheduler_state":{"start_time":1796187760.8014479,"processing_requests":0,"cancelled_requests":0},
      "requests":{"successful":[{"request_args":"{\"body\":{\"max_tokens\":173,\"ignore_eos\":true}}","info":{"status":"completed","error":null,
        "settings":{"relative_timestamp":0.0},"timings":{"targeted_start":1796187760.8014479,"queued":1796187759.8105507,"request_start":1796187761.7509744,
        "first_token_iteration":1796187781.6926012,"request_end":1796187786.4312527}},"prompt_tokens":2954,"output_tokens":173}],
       "errored":[{"request_args":"{\"body\":{\"max_tokens\":4}}","info":{"status":"errored","error":"HTTPStatusError(\"Server error '500 Internal Server Error' for url\")",
        "settings":{"relative_timestamp":0.005},"timings":{"targeted_start":1796187760.8064479,"queued":1796187759.8105600,"request_start":1796187761.76}},
        "prompt_tokens":16,"output_tokens":null}],"incomplete":[]}}]}"#;

    #[test]
    fn every_group_is_read_with_its_timings() {
        let r = read_report(REPORT.as_bytes()).unwrap();
        assert_eq!(r.records.len(), 2);
        assert_eq!(r.processing, Some(0));
        let ok = &r.records[0];
        assert_eq!(ok.status, Status::Completed);
        assert_eq!(ok.max_tokens, Some(173));
        assert_eq!(
            (ok.prompt_tokens, ok.output_tokens),
            (Some(2954), Some(173))
        );
        let failed = &r.records[1];
        assert_eq!(failed.status, Status::Errored);
        assert_eq!(failed.error.as_deref().and_then(http_status), Some(500));
        assert_eq!(failed.at, "errored[0]");
    }

    #[test]
    fn a_report_that_cannot_be_placed_is_refused_where_it_fails() {
        let two = r#"{"benchmarks":[{},{}]}"#;
        assert!(
            read_report(two.as_bytes())
                .unwrap_err()
                .detail
                .contains("2 benchmarks")
        );
        let no_queue = REPORT.replace("\"queued\":1796187759.8105507,", "");
        let e = read_report(no_queue.as_bytes()).unwrap_err();
        assert_eq!(e.at, "successful[0].info.timings.queued");
        let typed = REPORT.replace("\"prompt_tokens\":2954", "\"prompt_tokens\":\"2954\"");
        assert_eq!(
            read_report(typed.as_bytes()).unwrap_err().at,
            "successful[0].prompt_tokens"
        );
        assert_eq!(http_status("ConnectError('refused')"), None);
    }
}
