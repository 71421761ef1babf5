//! Reading a `/v1/completions` server-sent-event stream as vLLM's client reads it: messages
//! end at a blank line, `:` lines are comments, `data: ` is stripped, `data: [DONE]` ends the
//! stream. A message whose `choices` list is not empty carries tokens (vLLM's TTFT and ITL are
//! taken at such messages, even when the text is empty: a held-back partial character is
//! still a token); the `choices: []` message with `usage` gives the server's token counts.

use loadproof_core::receipt::Usage;
use serde::Deserialize;
use serde::de::IgnoredAny;

/// What the stream has said so far.
#[derive(Debug, Default)]
pub struct Progress {
    /// Arrival of every token-bearing message.
    pub chunks_ns: Vec<i64>,
    /// From the usage message.
    pub usage: Option<Usage>,
    /// When `[DONE]` arrived.
    pub done_ns: Option<i64>,
    /// The first error message, or a message that is not JSON.
    pub error: Option<String>,
}

/// An SSE decoder; feed it the body's bytes as they arrive.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<IgnoredAny>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

/// Bytes of a bad message kept in the record.
const EXCERPT: usize = 300;

/// The start of `bytes` as text.
pub fn excerpt(bytes: &[u8]) -> String {
    let cut = bytes.get(..EXCERPT).unwrap_or(bytes);
    let mut text = String::from_utf8_lossy(cut).into_owned();
    if cut.len() < bytes.len() {
        text.push('…');
    }
    text
}

impl Decoder {
    /// Feeds bytes that arrived at `now_ns`.
    pub fn push(&mut self, bytes: &[u8], now_ns: i64, progress: &mut Progress) {
        if memchr::memchr(b'\r', bytes).is_some() {
            self.buf
                .extend(bytes.iter().copied().filter(|b| *b != b'\r'));
        } else {
            self.buf.extend_from_slice(bytes);
        }
        let mut start = 0;
        while let Some(end) = self
            .buf
            .get(start..)
            .and_then(|rest| memchr::memmem::find(rest, b"\n\n"))
        {
            if let Some(message) = self.buf.get(start..start + end) {
                read_message(message, now_ns, progress);
            }
            start += end + 2;
        }
        self.buf.drain(..start);
    }
}

fn read_message(message: &[u8], now_ns: i64, p: &mut Progress) {
    for line in message.split(|b| *b == b'\n') {
        let Some(data) = line.strip_prefix(b"data:") else {
            continue; // comments (`:`), `event:`, `id:`, `retry:`
        };
        let data = data.trim_ascii();
        if data == b"[DONE]" {
            p.done_ns.get_or_insert(now_ns);
            continue;
        }
        match serde_json::from_slice::<Chunk>(data) {
            Ok(chunk) => {
                if chunk.error.is_some() && p.error.is_none() {
                    p.error = Some(excerpt(data));
                }
                if chunk.choices.is_some_and(|c| !c.is_empty()) {
                    p.chunks_ns.push(now_ns);
                }
                if let Some(WireUsage {
                    prompt_tokens: Some(prompt_tokens),
                    completion_tokens: Some(completion_tokens),
                }) = chunk.usage
                {
                    p.usage = Some(Usage {
                        prompt_tokens,
                        completion_tokens,
                    });
                }
            }
            Err(e) => {
                if p.error.is_none() {
                    p.error = Some(format!("not JSON ({e}): {}", excerpt(data)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"text\":\" a\"}]}\n\n\
                          : keep-alive\n\n\
                          data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"text\":\"\"}]}\n\n\
                          data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":9,\"completion_tokens\":2}}\n\n\
                          data: [DONE]\n\n";

    #[test]
    fn any_split_of_the_bytes_reads_the_same() {
        for cut in 0..STREAM.len() {
            let (a, b) = STREAM.as_bytes().split_at(cut);
            let mut d = Decoder::default();
            let mut p = Progress::default();
            d.push(a, 1, &mut p);
            d.push(b, 2, &mut p);
            assert_eq!(p.chunks_ns.len(), 2, "cut {cut}");
            assert_eq!(
                p.usage,
                Some(Usage {
                    prompt_tokens: 7,
                    completion_tokens: 2
                })
            );
            assert!(p.done_ns.is_some());
            assert_eq!(p.error, None);
        }
    }

    #[test]
    fn crlf_framing_is_read_too() {
        let mut d = Decoder::default();
        let mut p = Progress::default();
        d.push(STREAM.replace('\n', "\r\n").as_bytes(), 5, &mut p);
        assert_eq!(p.chunks_ns, [5, 5]);
        assert_eq!(p.done_ns, Some(5));
    }

    #[test]
    fn an_error_message_or_non_json_is_kept() {
        let mut d = Decoder::default();
        let mut p = Progress::default();
        d.push(
            b"data: {\"error\":{\"message\":\"boom\"}}\n\ndata: [DONE]\n\n",
            1,
            &mut p,
        );
        assert!(p.error.as_deref().unwrap().contains("boom"));
        let mut p = Progress::default();
        d.push(b"data: nope\n\n", 1, &mut p);
        assert!(p.error.as_deref().unwrap().starts_with("not JSON"));
        assert!(p.done_ns.is_none());
    }
}
