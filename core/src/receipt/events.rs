//! The native client's per-request record: one line of the event log per offered request, so
//! every request has exactly one terminal disposition and every latency can be recomputed.

use serde::{Deserialize, Serialize};

/// Token counts the server reported in the stream's final `usage` chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// `usage.prompt_tokens`.
    pub prompt_tokens: u64,
    /// `usage.completion_tokens`.
    pub completion_tokens: u64,
}

/// How a request ended. Only `Ok` is a success; everything else is counted and named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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
}

/// One offered request, from schedule to end. Times are monotonic ns since the run's zero.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
