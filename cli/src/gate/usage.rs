//! Counting the tokens of a response the gateway relays under a lease, from the usage object
//! the upstream itself returns, as the bytes pass: the lessor's account states the tokens it
//! forwarded, and only the upstream's own count of them is not a guess.
//!
//! vLLM puts usage in one place per response: a streamed one (`vllm bench serve` and
//! loadproof's own client both ask `stream_options.include_usage`) ends with a chunk whose
//! `choices` is empty and whose `usage` is the request's (with `continuous_usage_stats`, every
//! chunk carries the running count: the last one seen wins either way); a whole JSON body ends
//! with its `usage`. So the tap reads SSE lines only where they name a usage object, and of a
//! JSON body keeps only its last bytes: nothing is held back from the client, and no response is
//! buffered whole. A response is counted once it is whole (its `data: [DONE]`, or the end of
//! its body), before those last bytes are passed on, so a holder that read the end and released
//! the lease finds it in the account. A response without usage (not asked for, an error, a
//! compressed body, a line too long to read, a stream cut) is not counted, and the account says
//! how many admitted requests were not.

use std::sync::Arc;

use hyper::StatusCode;
use hyper::header::{CONTENT_ENCODING, CONTENT_TYPE, HeaderMap};

use crate::sim::lease::Tally;

/// Longest SSE line read (a usage chunk is ~300 bytes; a token chunk with many logprobs can be
/// long, and is skipped whole, never read).
const MAX_LINE_BYTES: usize = 256 << 10;

/// How much of the end of a JSON body is kept to find its `usage` in.
const TAIL_BYTES: usize = 16 << 10;

/// One relayed response's tap.
#[derive(Debug)]
pub struct Tap {
    tally: Arc<Tally>,
    sse: bool,
    /// SSE: the line not yet ended; JSON: the body's last bytes.
    carry: Vec<u8>,
    /// The SSE line being carried outgrew [`MAX_LINE_BYTES`]: skipped to its end.
    skipping: bool,
    /// The last usage read: (prompt, completion).
    usage: Option<(u64, u64)>,
    /// Counted, or given up on: nothing more is read.
    finished: bool,
}

impl Tap {
    /// A tap for a response with this status and these headers, counted into `tally`; none
    /// when it cannot carry a usage the gateway can read (not a success, or compressed).
    pub fn new(status: StatusCode, headers: &HeaderMap, tally: Arc<Tally>) -> Option<Tap> {
        let encoded = headers
            .get(CONTENT_ENCODING)
            .is_some_and(|e| !e.as_bytes().eq_ignore_ascii_case(b"identity"));
        if !status.is_success() || encoded {
            return None;
        }
        let sse = headers
            .get(CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
        Some(Tap {
            tally,
            sse,
            carry: Vec::new(),
            skipping: false,
            usage: None,
            finished: false,
        })
    }

    /// The next bytes of the body, before they are passed on.
    pub fn data(&mut self, bytes: &[u8]) {
        if self.finished {
            return;
        }
        if !self.sse {
            let keep = TAIL_BYTES.saturating_sub(bytes.len());
            if self.carry.len() > keep {
                self.carry.drain(..self.carry.len() - keep);
            }
            let from = bytes.len().saturating_sub(TAIL_BYTES);
            self.carry
                .extend_from_slice(bytes.get(from..).unwrap_or_default());
            return;
        }
        let mut rest = bytes;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            let (head, tail) = rest.split_at(i);
            rest = tail.get(1..).unwrap_or_default();
            if self.skipping {
                self.skipping = false;
                self.carry.clear();
            } else if self.carry.is_empty() {
                self.line(head);
            } else {
                let mut line = std::mem::take(&mut self.carry);
                line.extend_from_slice(head);
                self.line(&line);
                line.clear();
                self.carry = line;
            }
            if self.finished {
                return;
            }
        }
        if !self.skipping {
            if self.carry.len() + rest.len() > MAX_LINE_BYTES {
                self.skipping = true;
                self.carry.clear();
            } else {
                self.carry.extend_from_slice(rest);
            }
        }
    }

    /// The body ended whole: counted when a usage was read.
    pub fn end(&mut self) {
        if self.finished {
            return;
        }
        if !self.sse {
            self.usage = last_usage(&self.carry);
        }
        self.finish();
    }

    /// The body failed: the response is not whole, and not counted.
    pub fn abandon(&mut self) {
        self.finished = true;
        self.carry = Vec::new();
    }

    fn finish(&mut self) {
        self.finished = true;
        self.carry = Vec::new();
        if let Some((prompt, completion)) = self.usage {
            self.tally.count(prompt, completion);
        }
    }

    /// One SSE line (without its `\n`).
    fn line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        let data = data.trim_ascii();
        if data == b"[DONE]" {
            self.finish();
        } else if usage_object_at(data).is_some()
            && let Some(usage) = read_usage(data)
        {
            self.usage = Some(usage);
        }
    }
}

/// Where `"usage"` is followed by an object (not `null`) in `json`.
fn usage_object_at(json: &[u8]) -> Option<usize> {
    memchr::memmem::rfind_iter(json, b"\"usage\"").find(|&at| {
        json.get(at + 7..)
            .map(|after| after.trim_ascii_start())
            .and_then(|after| after.strip_prefix(b":"))
            .is_some_and(|after| after.trim_ascii_start().starts_with(b"{"))
    })
}

/// The top-level `usage` of one SSE chunk.
fn read_usage(json: &[u8]) -> Option<(u64, u64)> {
    let doc: serde_json::Value = serde_json::from_slice(json).ok()?;
    counts(doc.get("usage")?)
}

/// The last `usage` object in the end of a JSON body (the top-level one: vLLM writes it last,
/// and a `"usage"` inside a string is escaped).
fn last_usage(tail: &[u8]) -> Option<(u64, u64)> {
    let at = usage_object_at(tail)?;
    let object = memchr::memchr(b'{', tail.get(at..)?)? + at;
    let mut values =
        serde_json::Deserializer::from_slice(tail.get(object..)?).into_iter::<serde_json::Value>();
    counts(&values.next()?.ok()?)
}

/// `prompt_tokens` and `completion_tokens`, both whole numbers no larger than a token count
/// can be ([`MAX_TOKENS`]). The sums are kept in `u64`s that wrap silently: a usage beyond any
/// real count (a hostile or broken upstream's `18446744073709551615`) would turn the lessor's
/// signed sums into a small, plausible lie, so it is not read, and the response is uncounted.
fn counts(usage: &serde_json::Value) -> Option<(u64, u64)> {
    let count = |name: &str| usage.get(name)?.as_u64().filter(|n| *n <= MAX_TOKENS);
    Some((count("prompt_tokens")?, count("completion_tokens")?))
}

/// The most tokens one response's usage may state (far above any context length): sums of
/// these cannot wrap a `u64` in any lease.
const MAX_TOKENS: u64 = u32::MAX as u64;

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn tap(content_type: &'static str) -> (Tap, Arc<Tally>) {
        let tally = Arc::new(Tally::default());
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        let tap = Tap::new(StatusCode::OK, &headers, Arc::clone(&tally)).unwrap();
        (tap, tally)
    }

    const STREAM: &str = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"text\":\" usage\"}],\"usage\":null}\n\n\
data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"text\":\"\\\"usage\\\": {\"}]}\n\n\
data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":10,\"completion_tokens\":3}}\n\n\
data: [DONE]\n\n";

    #[test]
    fn a_streamed_usage_chunk_is_counted_at_done_in_any_split() {
        for split in 1..STREAM.len() {
            let (mut t, tally) = tap("text/event-stream; charset=utf-8");
            let (a, b) = STREAM.as_bytes().split_at(split);
            t.data(a);
            t.data(b);
            t.end();
            assert_eq!(tally.counts(), (1, 7, 3), "split at {split}");
        }
    }

    #[test]
    fn a_stream_without_usage_or_cut_is_not_counted() {
        let (mut t, tally) = tap("text/event-stream");
        t.data(b"data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n");
        t.end();
        assert_eq!(tally.counts(), (0, 0, 0));
        let (mut t, tally) = tap("text/event-stream");
        t.data(&STREAM.as_bytes()[..STREAM.len() - 16]);
        t.abandon();
        assert_eq!(tally.counts(), (0, 0, 0));
    }

    /// Adversarial review: the tally adds with wrapping atomics, so two usages of 2^63 tokens
    /// summed to 0 in the lessor's signed account. A count no response can have is not read.
    #[test]
    fn a_usage_beyond_any_token_count_is_not_counted() {
        let (mut t, tally) = tap("text/event-stream");
        t.data(b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9223372036854775808,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n");
        t.end();
        let (mut t2, _) = tap("application/json");
        t2.tally = Arc::clone(&tally);
        t2.data(b"{\"usage\":{\"prompt_tokens\":9223372036854775808,\"completion_tokens\":1}}");
        t2.end();
        assert_eq!(tally.counts(), (0, 0, 0));
    }

    #[test]
    fn a_whole_json_body_is_counted_from_its_last_bytes() {
        let (mut t, tally) = tap("application/json");
        let text = "x".repeat(3 * TAIL_BYTES);
        let body = format!(
            "{{\"id\":\"c\",\"choices\":[{{\"text\":\"{text}\\\"usage\\\":{{\"}}],\"usage\":{{\"prompt_tokens\":11,\"total_tokens\":16,\"completion_tokens\":5,\"prompt_tokens_details\":null}},\"kv_transfer_params\":null}}"
        );
        for chunk in body.as_bytes().chunks(1000) {
            t.data(chunk);
        }
        t.end();
        assert_eq!(tally.counts(), (1, 11, 5));
        // An error answer, or a compressed one, is not tapped.
        let mut headers = HeaderMap::new();
        assert!(Tap::new(StatusCode::BAD_REQUEST, &headers, Arc::clone(&tally)).is_none());
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        assert!(Tap::new(StatusCode::OK, &headers, tally).is_none());
    }
}
