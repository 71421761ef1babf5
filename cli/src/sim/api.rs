//! The OpenAI wire shapes `loadproof sim` reads and writes: the `/v1/completions` request
//! body (as `vllm bench serve` and the native client send it), the streamed chunks, the
//! usage chunk, the non-streaming response, `/v1/models` and OpenAI-style errors. The JSON
//! mirrors vLLM 0.32's (`vllm/entrypoints/openai/completion/protocol.py`): field names and
//! order, `logprobs`/`stop_reason` as `null`, usage as `prompt_tokens, total_tokens,
//! completion_tokens`, errors as `{"error": {"message", "type", "param", "code"}}`.

use std::fmt::Write as _;

use serde_json::Value;

/// Tokens generated when a request gives no `max_tokens` (the OpenAI completions default).
pub const DEFAULT_MAX_TOKENS: u64 = 16;

/// The text of generated token `i` (from 0): a fixed cycle of short words.
pub fn token_text(i: u64) -> &'static str {
    const WORDS: [&str; 16] = [
        " lorem", " ipsum", " dolor", " sit", " amet", " sim", " token", " stream", " load",
        " proof", " alpha", " beta", " gamma", " delta", " echo", " fox",
    ];
    WORDS[(i % 16) as usize]
}

/// A validated completion request: what the engine needs and how to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    /// Prompt length in tokens: the list's length for token ids, ⌈bytes / 4⌉ (≥ 1) for text.
    pub prompt_tokens: u64,
    /// Tokens to generate (always exactly this many, as with `ignore_eos`).
    pub max_tokens: u64,
    /// Stream server-sent events.
    pub stream: bool,
    /// Send a usage chunk before `[DONE]` (`stream_options.include_usage`).
    pub include_usage: bool,
}

/// Why a request is refused: an HTTP status and an OpenAI-style error body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// 400, 404, 413, 423 (a lease holds) or 500.
    pub status: u16,
    /// `BadRequestError`, `NotFoundError`, …
    pub err_type: &'static str,
    /// The offending field, if one.
    pub param: Option<&'static str>,
    /// Human-readable.
    pub message: String,
}

impl ApiError {
    fn bad(param: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status: 400,
            err_type: "BadRequestError",
            param: Some(param),
            message: message.into(),
        }
    }

    /// The JSON body: `{"error": {"message", "type", "param", "code"}}`.
    pub fn body(&self) -> String {
        serde_json::json!({
            "error": {
                "message": self.message,
                "type": self.err_type,
                "param": self.param,
                "code": self.status,
            }
        })
        .to_string()
    }
}

/// Parses and validates a `/v1/completions` body for the served `model` and a KV capacity.
///
/// Accepted: `model` (absent, empty or the served name; another name is 404), `prompt` (a
/// string, a list of token ids, or a one-element list of either), `max_tokens` (≥ 1, default
/// 16), `stream`, `stream_options.include_usage` (only with `stream`), `n` (1 only); every
/// other field (`ignore_eos`, `temperature`, `repetition_penalty`, `logprobs`, …) is ignored.
pub fn parse_completion(
    body: &[u8],
    served_model: &str,
    kv_capacity_tokens: u64,
) -> Result<CompletionRequest, ApiError> {
    let doc: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad("body", format!("the body is not valid JSON: {e}")))?;
    let Some(obj) = doc.as_object() else {
        return Err(ApiError::bad("body", "the body must be a JSON object"));
    };

    let prompt_tokens = match obj.get("prompt") {
        None | Some(Value::Null) => return Err(ApiError::bad("prompt", "prompt is required")),
        Some(p) => prompt_len(p)?,
    };
    let max_tokens = match obj.get("max_tokens") {
        None | Some(Value::Null) => DEFAULT_MAX_TOKENS,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n,
            _ => {
                return Err(ApiError::bad(
                    "max_tokens",
                    format!("max_tokens must be a whole number of at least 1, got {v}"),
                ));
            }
        },
    };
    let stream = match obj.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(ApiError::bad(
                "stream",
                format!("stream must be a boolean, got {v}"),
            ));
        }
    };
    let include_usage = match obj.get("stream_options") {
        None | Some(Value::Null) => false,
        Some(Value::Object(o)) => {
            if !stream {
                return Err(ApiError::bad(
                    "stream_options",
                    "Stream options can only be defined when `stream=True`.",
                ));
            }
            match o.get("include_usage") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(v) => {
                    return Err(ApiError::bad(
                        "stream_options",
                        format!("stream_options.include_usage must be a boolean, got {v}"),
                    ));
                }
            }
        }
        Some(v) => {
            return Err(ApiError::bad(
                "stream_options",
                format!("stream_options must be an object, got {v}"),
            ));
        }
    };
    match obj.get("n") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_u64() == Some(1) => {}
        Some(v) => {
            return Err(ApiError::bad(
                "n",
                format!("the simulator serves n = 1 only, got {v}"),
            ));
        }
    }
    match obj.get("model") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if m.is_empty() || m == served_model => {}
        Some(Value::String(m)) => {
            return Err(ApiError {
                status: 404,
                err_type: "NotFoundError",
                param: Some("model"),
                message: format!("The model `{m}` does not exist."),
            });
        }
        Some(v) => {
            return Err(ApiError::bad(
                "model",
                format!("model must be a string, got {v}"),
            ));
        }
    }

    let total = prompt_tokens.saturating_add(max_tokens);
    if total > kv_capacity_tokens {
        return Err(ApiError::bad(
            "max_tokens",
            format!(
                "This model's maximum context length is {kv_capacity_tokens} tokens. However, you \
                 requested {total} tokens ({prompt_tokens} in the prompt, {max_tokens} in the \
                 completion). Please reduce the length of the prompt or completion."
            ),
        ));
    }
    Ok(CompletionRequest {
        prompt_tokens,
        max_tokens,
        stream,
        include_usage,
    })
}

fn prompt_len(prompt: &Value) -> Result<u64, ApiError> {
    let len = match prompt {
        Value::String(s) => text_tokens(s),
        Value::Array(items) => match items.as_slice() {
            [] => return Err(ApiError::bad("prompt", "the prompt is empty")),
            [Value::String(s)] => text_tokens(s),
            [Value::Array(ids)] => token_ids_len(ids)?,
            ids if ids.iter().all(Value::is_number) => token_ids_len(ids)?,
            _ => {
                return Err(ApiError::bad(
                    "prompt",
                    "prompt must be a string, a list of token ids, or a one-element list of \
                     either (the simulator serves one prompt per request)",
                ));
            }
        },
        v => {
            return Err(ApiError::bad(
                "prompt",
                format!("prompt must be a string or a list of token ids, got {v}"),
            ));
        }
    };
    if len == 0 {
        return Err(ApiError::bad("prompt", "the prompt is empty"));
    }
    Ok(len)
}

/// ⌈bytes / 4⌉, at least 1: the simulator has no tokenizer.
fn text_tokens(s: &str) -> u64 {
    (s.len() as u64).div_ceil(4).max(1)
}

fn token_ids_len(ids: &[Value]) -> Result<u64, ApiError> {
    if let Some(bad) = ids
        .iter()
        .find(|v| v.as_u64().is_none_or(|id| id > u64::from(u32::MAX)))
    {
        return Err(ApiError::bad(
            "prompt",
            format!("token ids must be whole numbers from 0 to 4294967295, got {bad}"),
        ));
    }
    Ok(ids.len() as u64)
}

/// The parts of a response shared by its chunks: `"id":…,"object":…,"created":…,"model":…`.
pub fn response_head(id: &str, created: u64, model: &str) -> String {
    format!(
        "\"id\":{},\"object\":\"text_completion\",\"created\":{created},\"model\":{}",
        Value::from(id),
        Value::from(model)
    )
}

/// Appends one SSE chunk carrying token `i` (from 0); `last` sets `finish_reason: "length"`.
pub fn push_token_chunk(out: &mut String, head: &str, i: u64, last: bool) {
    let finish = if last { "\"length\"" } else { "null" };
    let _ = write!(
        out,
        "data: {{{head},\"choices\":[{{\"index\":0,\"text\":\"{}\",\"logprobs\":null,\
         \"finish_reason\":{finish},\"stop_reason\":null}}]}}\n\n",
        token_text(i)
    );
}

/// Appends the usage chunk (`choices: []`).
pub fn push_usage_chunk(out: &mut String, head: &str, prompt_tokens: u64, completion_tokens: u64) {
    let _ = write!(
        out,
        "data: {{{head},\"choices\":[],\"usage\":{}}}\n\n",
        usage(prompt_tokens, completion_tokens)
    );
}

/// The closing `data: [DONE]`.
pub const DONE: &str = "data: [DONE]\n\n";

fn usage(prompt_tokens: u64, completion_tokens: u64) -> String {
    format!(
        "{{\"prompt_tokens\":{prompt_tokens},\"total_tokens\":{},\"completion_tokens\":{completion_tokens}}}",
        prompt_tokens + completion_tokens
    )
}

/// The non-streaming response for `completion_tokens` generated tokens.
pub fn full_response(head: &str, prompt_tokens: u64, completion_tokens: u64) -> String {
    let mut text = String::new();
    for i in 0..completion_tokens {
        text.push_str(token_text(i));
    }
    format!(
        "{{{head},\"choices\":[{{\"index\":0,\"text\":{},\"logprobs\":null,\
         \"finish_reason\":\"length\",\"stop_reason\":null}}],\"usage\":{}}}",
        Value::from(text),
        usage(prompt_tokens, completion_tokens)
    )
}

/// `GET /v1/models`: the served model, labelled as the simulator's.
pub fn models_response(model: &str, created: u64, max_model_len: u64) -> String {
    serde_json::json!({
        "object": "list",
        "data": [{
            "id": model,
            "object": "model",
            "created": created,
            "owned_by": "loadproof-sim",
            "root": model,
            "parent": null,
            "max_model_len": max_model_len,
            "permission": [],
        }]
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<CompletionRequest, ApiError> {
        parse_completion(body.as_bytes(), "sim", 1000)
    }

    #[test]
    fn bench_client_body_is_accepted() {
        let r = parse(
            r#"{"model":"sim","prompt":[1,2,3],"repetition_penalty":1.0,"max_tokens":5,
                "logprobs":null,"stream":true,"stream_options":{"include_usage":true},
                "ignore_eos":true}"#,
        )
        .unwrap();
        assert_eq!(
            r,
            CompletionRequest {
                prompt_tokens: 3,
                max_tokens: 5,
                stream: true,
                include_usage: true
            }
        );
    }

    #[test]
    fn text_prompt_counts_bytes_over_four_rounded_up() {
        assert_eq!(parse(r#"{"prompt":"abcde"}"#).unwrap().prompt_tokens, 2);
        assert_eq!(parse(r#"{"prompt":"a"}"#).unwrap().prompt_tokens, 1);
        assert_eq!(
            parse(r#"{"prompt":["abcdefgh"]}"#).unwrap().prompt_tokens,
            2
        );
        assert_eq!(
            parse(r#"{"prompt":[[7,8]]}"#).unwrap().max_tokens,
            DEFAULT_MAX_TOKENS
        );
    }

    #[test]
    fn refusals_name_status_and_param() {
        let e = parse(r#"{"model":"gpt","prompt":"x"}"#).unwrap_err();
        assert_eq!((e.status, e.param), (404, Some("model")));
        for body in [
            "garbage",
            "[]",
            r#"{"prompt":[]}"#,
            r#"{"prompt":"x","max_tokens":0}"#,
            r#"{"prompt":[1,-2]}"#,
            r#"{"prompt":["a","b"]}"#,
            r#"{"prompt":"x","stream_options":{"include_usage":true}}"#,
            r#"{"prompt":"x","max_tokens":1000}"#,
        ] {
            assert_eq!(parse(body).unwrap_err().status, 400, "{body}");
        }
    }

    #[test]
    fn chunks_are_vllm_shaped_json() {
        let head = response_head("cmpl-a\"b", 7, "sim");
        let mut out = String::new();
        push_token_chunk(&mut out, &head, 0, true);
        push_usage_chunk(&mut out, &head, 3, 1);
        let docs: Vec<Value> = out
            .split("\n\n")
            .filter(|s| !s.is_empty())
            .map(|s| serde_json::from_str(s.strip_prefix("data: ").unwrap()).unwrap())
            .collect();
        assert_eq!(docs[0]["id"], "cmpl-a\"b");
        assert_eq!(docs[0]["choices"][0]["finish_reason"], "length");
        assert_eq!(docs[1]["usage"]["total_tokens"], 4);
        let full: Value = serde_json::from_str(&full_response(&head, 3, 2)).unwrap();
        assert_eq!(full["choices"][0]["text"], " lorem ipsum");
    }
}
