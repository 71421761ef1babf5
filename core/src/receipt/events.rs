//! The native client's per-request record: one line of the event log per offered request, so
//! every request has exactly one terminal disposition and every latency can be recomputed.

use serde::{Deserialize, Serialize};

/// Token counts the server reported in the stream's final `usage` chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// `usage.prompt_tokens`.
    pub prompt_tokens: u64,
    /// `usage.completion_tokens`.
    pub completion_tokens: u64,
}

/// How a request ended. Only `Ok` is a success; everything else is counted and named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Disposition {
    /// The stream finished with `[DONE]`.
    Ok,
    /// The server answered with a non-2xx status.
    Http {
        /// The status.
        status: u16,
        /// The start of the body, for the reader.
        body: String,
    },
    /// The connection failed before a response (refused, reset, DNS, …).
    Transport {
        /// What failed.
        error: String,
    },
    /// The stream ended without `[DONE]` after `chunks` chunks.
    StreamCut {
        /// Chunks received before the cut.
        chunks: u64,
    },
    /// The client gave up waiting.
    Timeout {
        /// After this long since the send, ns.
        after_ns: i64,
    },
    /// Never sent: the run was stopped before its scheduled time.
    NotSent {
        /// Why.
        reason: String,
    },
    /// Sent, and still unfinished when the run was stopped (Ctrl-C) and its grace ran out.
    Interrupted {
        /// Chunks received before it was abandoned.
        chunks: u64,
    },
    /// A 2xx stream that was not a clean completion stream: a `data:` message carrying an
    /// `error` object (vLLM reports a failure mid-stream this way, then still sends `[DONE]`),
    /// or one that is not JSON.
    StreamError {
        /// Chunks received before it.
        chunks: u64,
        /// The start of the offending message.
        detail: String,
    },
}

impl Disposition {
    /// The variant's name as written in the event log (`ok`, `http`, `stream_cut`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Disposition::Ok => "ok",
            Disposition::Http { .. } => "http",
            Disposition::Transport { .. } => "transport",
            Disposition::StreamCut { .. } => "stream_cut",
            Disposition::Timeout { .. } => "timeout",
            Disposition::NotSent { .. } => "not_sent",
            Disposition::Interrupted { .. } => "interrupted",
            Disposition::StreamError { .. } => "stream_error",
        }
    }
}

/// One offered request, from schedule to end. Times are monotonic ns since the run's zero.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestRecord {
    /// 0-based line of the `timed_trace` file.
    pub index: u64,
    /// When the plan scheduled it.
    pub scheduled_ns: i64,
    /// When its request was handed to the connection (`None`: never sent).
    pub sent_ns: Option<i64>,
    /// When the first chunk carrying a token arrived.
    pub first_token_ns: Option<i64>,
    /// Arrival of every chunk carrying tokens, in order (the first included).
    pub chunks_ns: Vec<i64>,
    /// When the request ended, however it ended.
    pub end_ns: Option<i64>,
    /// Prompt tokens sent.
    pub prompt_tokens: u32,
    /// `max_tokens` asked for.
    pub max_tokens: u32,
    /// What the server reported, when it did.
    pub usage: Option<Usage>,
    /// How it ended.
    pub disposition: Disposition,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_is_the_serialized_tag() {
        let all = [
            Disposition::Ok,
            Disposition::Http {
                status: 500,
                body: String::new(),
            },
            Disposition::Transport {
                error: String::new(),
            },
            Disposition::StreamCut { chunks: 1 },
            Disposition::Timeout { after_ns: 1 },
            Disposition::NotSent {
                reason: String::new(),
            },
            Disposition::Interrupted { chunks: 1 },
            Disposition::StreamError {
                chunks: 1,
                detail: String::new(),
            },
        ];
        for d in all {
            let json = serde_json::to_value(&d).unwrap();
            assert_eq!(json["kind"], d.kind());
            assert_eq!(serde_json::from_value::<Disposition>(json).unwrap(), d);
        }
    }
}

/// A line of the event log that is not a [`RequestRecord`].
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {json}")]
pub struct EventsError {
    /// 1-based line number.
    pub line: usize,
    /// What JSON said.
    pub json: serde_json::Error,
}

/// Parses the native event log: one [`RequestRecord`] per line, blank lines skipped.
pub fn parse_events(raw: &[u8]) -> Result<Vec<RequestRecord>, EventsError> {
    let mut records = Vec::new();
    for (i, line) in raw.split(|b| *b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        let record: RequestRecord =
            serde_json::from_slice(line).map_err(|json| EventsError { line: i + 1, json })?;
        records.push(record);
    }
    Ok(records)
}
