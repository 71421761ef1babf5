//! AIPerf's per-request export, `profile_export.jsonl`: one JSON object per request it
//! recorded, `metadata` (absolute wall-clock ns: the credit its timing service issued at the
//! scheduled time, the send, the response head, the end) and `metrics` (durations in ms from
//! the send, token counts), and an `error` object for a failed request.
//!
//! Read as written by AIPerf 0.13: fields loadproof does not use are ignored (the export grows
//! between releases); a field it does use that has the wrong type refuses the line, by line and
//! field. Nothing is inferred here — a missing metric stays `None`, and the audit says so.

use serde::Deserialize;
use serde_json::Value;

/// One request as AIPerf recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// 1-based line in the export.
    pub line: u64,
    /// `metadata.conversation_id`: the input row's `session_id`.
    pub conversation_id: String,
    /// `metadata.benchmark_phase` (`profiling`, `warmup`).
    pub phase: String,
    /// `metadata.credit_issued_ns`: when the timing service released it.
    pub credit_issued_ns: Option<i64>,
    /// `metadata.request_start_ns`: just before the HTTP send.
    pub request_start_ns: i64,
    /// `metadata.request_end_ns`: the last byte (the send time for a failure).
    pub request_end_ns: Option<i64>,
    /// `metadata.was_cancelled`.
    pub cancelled: bool,
    /// `metrics.time_to_first_token`, ms.
    pub ttft_ms: Option<f64>,
    /// `metrics.request_latency`, ms.
    pub latency_ms: Option<f64>,
    /// `metrics.inter_chunk_latency`, ms: the gaps between streamed chunks.
    pub inter_chunk_ms: Vec<f64>,
    /// `metrics.input_sequence_length` (or `error_isl`): prompt tokens by AIPerf's tokenizer.
    pub input_tokens: Option<u64>,
    /// `metrics.usage_prompt_tokens`: the server's count.
    pub usage_prompt_tokens: Option<u64>,
    /// `metrics.usage_completion_tokens`: the server's count.
    pub usage_completion_tokens: Option<u64>,
    /// The `error` object, when the request failed.
    pub error: Option<RecordError>,
}

/// How AIPerf says a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    /// The HTTP status, when there was one.
    pub code: Option<u16>,
    /// `type` (`Internal Server Error`, `ClientConnectorError`, …).
    pub kind: String,
    /// `message`.
    pub message: String,
}

/// A line of the export that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("profile_export.jsonl line {line}{}: {detail}", field.map(|f| format!(", field {f}")).unwrap_or_default())]
pub struct ExportError {
    /// 1-based.
    pub line: u64,
    /// The field, when one is at fault.
    pub field: Option<&'static str>,
    /// What is wrong.
    pub detail: String,
}

#[derive(Deserialize)]
struct Raw {
    metadata: Value,
    #[serde(default)]
    metrics: Value,
    #[serde(default)]
    error: Value,
}

/// Wall-clock ns a record may carry: after 1970 and before 2262 (i64 ns), with room for the
/// audit's arithmetic (sums of times and durations) to stay in range.
const MAX_NS: i64 = 1 << 62;
/// A duration in ms a record may carry (about 31 years).
const MAX_MS: f64 = 1e12;

fn int(v: &Value, line: u64, field: &'static str) -> Result<Option<i64>, ExportError> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_i64()
            .filter(|t| (0..=MAX_NS).contains(t))
            .map(Some)
            .ok_or_else(|| ExportError {
                line,
                field: Some(field),
                detail: format!("{n} is not a time in ns (0 to 2^62)"),
            }),
        other => Err(ExportError {
            line,
            field: Some(field),
            detail: format!("{other} is not a number"),
        }),
    }
}

/// A metric's `value` (`{"value": …, "unit": …}`), when present.
fn metric<'a>(metrics: &'a Value, name: &str) -> &'a Value {
    metrics
        .get(name)
        .and_then(|m| m.get("value"))
        .unwrap_or(&Value::Null)
}

fn float(v: &Value, line: u64, field: &'static str) -> Result<Option<f64>, ExportError> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_f64()
            .filter(|x| x.is_finite() && (0.0..=MAX_MS).contains(x))
            .map(Some)
            .ok_or_else(|| ExportError {
                line,
                field: Some(field),
                detail: format!("{n} is not a duration in ms (0 to 1e12)"),
            }),
        other => Err(ExportError {
            line,
            field: Some(field),
            detail: format!("{other} is not a number"),
        }),
    }
}

fn count(v: &Value, line: u64, field: &'static str) -> Result<Option<u64>, ExportError> {
    match v {
        Value::Null => Ok(None),
        // Token counts are written as integers, sometimes as `12.0`.
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(c), _) => Ok(Some(c)),
            (None, Some(x)) if x >= 0.0 && x.fract() == 0.0 && x < 9.0e15 => Ok(Some(x as u64)),
            _ => Err(ExportError {
                line,
                field: Some(field),
                detail: format!("{n} is not a token count"),
            }),
        },
        other => Err(ExportError {
            line,
            field: Some(field),
            detail: format!("{other} is not a token count"),
        }),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn record(raw: Raw, line: u64) -> Result<Record, ExportError> {
    let m = &raw.metadata;
    let field = |name: &str| m.get(name).unwrap_or(&Value::Null);
    let request_start_ns = int(field("request_start_ns"), line, "metadata.request_start_ns")?
        .ok_or(ExportError {
            line,
            field: Some("metadata.request_start_ns"),
            detail: "missing: a record without its send time".to_owned(),
        })?;
    let metrics = &raw.metrics;
    let inter_chunk_ms = match metric(metrics, "inter_chunk_latency") {
        Value::Null => Vec::new(),
        Value::Array(gaps) => gaps
            .iter()
            .map(|g| {
                float(g, line, "metrics.inter_chunk_latency")?.ok_or(ExportError {
                    line,
                    field: Some("metrics.inter_chunk_latency"),
                    detail: "a null gap".to_owned(),
                })
            })
            .collect::<Result<_, _>>()?,
        // One gap is sometimes written as a bare number.
        single => vec![float(single, line, "metrics.inter_chunk_latency")?.unwrap_or_default()],
    };
    let error = match &raw.error {
        Value::Null => None,
        Value::Object(e) => Some(RecordError {
            code: e
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok()),
            kind: e.get("type").map(text).unwrap_or_default(),
            message: e.get("message").map(text).unwrap_or_default(),
        }),
        other => {
            return Err(ExportError {
                line,
                field: Some("error"),
                detail: format!("{other} is not an error object"),
            });
        }
    };
    let input_tokens = match count(
        metric(metrics, "input_sequence_length"),
        line,
        "metrics.input_sequence_length",
    )? {
        Some(n) => Some(n),
        None => count(metric(metrics, "error_isl"), line, "metrics.error_isl")?,
    };
    Ok(Record {
        line,
        conversation_id: text(field("conversation_id")),
        phase: text(field("benchmark_phase")),
        credit_issued_ns: int(field("credit_issued_ns"), line, "metadata.credit_issued_ns")?,
        request_start_ns,
        request_end_ns: int(field("request_end_ns"), line, "metadata.request_end_ns")?,
        cancelled: field("was_cancelled").as_bool().unwrap_or(false),
        ttft_ms: float(
            metric(metrics, "time_to_first_token"),
            line,
            "metrics.time_to_first_token",
        )?,
        latency_ms: float(
            metric(metrics, "request_latency"),
            line,
            "metrics.request_latency",
        )?,
        inter_chunk_ms,
        input_tokens,
        usage_prompt_tokens: count(
            metric(metrics, "usage_prompt_tokens"),
            line,
            "metrics.usage_prompt_tokens",
        )?,
        usage_completion_tokens: count(
            metric(metrics, "usage_completion_tokens"),
            line,
            "metrics.usage_completion_tokens",
        )?,
        error,
    })
}

/// Every record of a `profile_export.jsonl`, in file order. Blank lines are skipped (the file
/// ends with a newline); any other unreadable line refuses the export.
pub fn read_export(bytes: &[u8]) -> Result<Vec<Record>, ExportError> {
    let mut out = Vec::new();
    for (k, text) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = k as u64 + 1;
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let raw: Raw = serde_json::from_slice(text).map_err(|e| ExportError {
            line,
            field: None,
            detail: e.to_string(),
        })?;
        if !raw.metadata.is_object() {
            return Err(ExportError {
                line,
                field: Some("metadata"),
                detail: "not an object".to_owned(),
            });
        }
        out.push(record(raw, line)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"metadata":{"session_num":0,"conversation_id":"row-000000","credit_issued_ns":1796187422225897913,"request_start_ns":1796187422228122864,"request_ack_ns":1796187422233328223,"request_end_ns":1796187422243605934,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"time_to_first_token":{"value":9.041247,"unit":"ms"},"request_latency":{"value":15.48307,"unit":"ms"},"inter_chunk_latency":{"value":[1.5458749999999999,1.186489,3.709459],"unit":"ms"},"input_sequence_length":{"value":16,"unit":"tokens"},"usage_prompt_tokens":{"value":12,"unit":"tokens"},"usage_completion_tokens":{"value":4,"unit":"tokens"}}}"#;
    const FAILED: &str = r#"{"metadata":{"conversation_id":"row-000009","credit_issued_ns":1796187460110057579,"request_start_ns":1796187460111079943,"request_end_ns":1796187460111079943,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"error_isl":{"value":16,"unit":"tokens"}},"error":{"code":500,"type":"Internal Server Error","message":"injected fault"}}"#;

    #[test]
    fn records_are_read_with_every_time_exact() {
        let records = read_export(format!("{OK}\n{FAILED}\n").as_bytes()).unwrap();
        assert_eq!(records.len(), 2);
        let ok = &records[0];
        assert_eq!(ok.request_start_ns, 1_796_187_422_228_122_864);
        assert_eq!(ok.credit_issued_ns, Some(1_796_187_422_225_897_913));
        assert_eq!(ok.inter_chunk_ms.len(), 3);
        assert_eq!(
            (
                ok.input_tokens,
                ok.usage_prompt_tokens,
                ok.usage_completion_tokens
            ),
            (Some(16), Some(12), Some(4))
        );
        assert_eq!(ok.error, None);
        let failed = &records[1];
        assert_eq!(failed.input_tokens, Some(16));
        assert_eq!(failed.error.as_ref().and_then(|e| e.code), Some(500));
        assert_eq!(failed.ttft_ms, None);
    }

    #[test]
    fn a_line_without_a_send_time_is_refused_by_line_and_field() {
        let bad = r#"{"metadata":{"conversation_id":"row-000001"},"metrics":{}}"#;
        let err = read_export(format!("{OK}\n{bad}\n").as_bytes()).unwrap_err();
        assert_eq!(
            (err.line, err.field),
            (2, Some("metadata.request_start_ns"))
        );
        let typed = OK.replace("\"value\":16,", "\"value\":\"16\",");
        let err = read_export(typed.as_bytes()).unwrap_err();
        assert_eq!(err.field, Some("metrics.input_sequence_length"));
        assert!(read_export(b"not json\n").is_err());
    }
}
