//! `loadproof sim` end to end: a real process on a free port, raw HTTP/1.1 over
//! `std::net::TcpStream` (no client library between the test and the bytes on the wire).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{Sim, shared};

/// Raw HTTP/1.1 to a running simulator.
trait Wire {
    fn connect(&self) -> TcpStream;
    fn raw(&self, method: &str, path: &str, body: &str) -> Vec<u8>;
    fn request(&self, method: &str, path: &str, body: &str) -> Reply;
    fn complete(&self, body: &Value) -> Reply;
    fn metrics(&self) -> String;
}

impl Wire for Sim {
    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream
    }

    /// Sends one request with `Connection: close` and returns everything read until EOF.
    fn raw(&self, method: &str, path: &str, body: &str) -> Vec<u8> {
        let mut stream = self.connect();
        send(&mut stream, method, path, body);
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out);
        out
    }

    fn request(&self, method: &str, path: &str, body: &str) -> Reply {
        Reply::parse(&self.raw(method, path, body))
    }

    fn complete(&self, body: &Value) -> Reply {
        self.request("POST", "/v1/completions", &body.to_string())
    }

    fn metrics(&self) -> String {
        let reply = self.request("GET", "/metrics", "");
        assert_eq!(reply.status, 200);
        String::from_utf8(reply.body).unwrap()
    }
}

fn send(stream: &mut TcpStream, method: &str, path: &str, body: &str) {
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes()).unwrap();
}

/// A parsed HTTP/1.1 response; `complete` is false when a chunked body never terminated.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    complete: bool,
}

impl Reply {
    fn parse(raw: &[u8]) -> Reply {
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
        let head = std::str::from_utf8(&raw[..split]).unwrap();
        let rest = &raw[split + 4..];
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (k, v) = l.split_once(':').unwrap();
                (k.trim().to_ascii_lowercase(), v.trim().to_string())
            })
            .collect();
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v == "chunked");
        let (body, complete) = if chunked {
            dechunk(rest)
        } else {
            (rest.to_vec(), true)
        };
        Reply {
            status,
            headers,
            body,
            complete,
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// The SSE `data:` payloads, in order.
    fn events(&self) -> Vec<String> {
        sse_events(&self.body)
    }
}

/// Decodes a chunked body; the flag says whether the terminating zero chunk arrived.
fn dechunk(mut raw: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(eol) = raw.windows(2).position(|w| w == b"\r\n") else {
            return (body, false);
        };
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..eol]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return (body, true);
        }
        let start = eol + 2;
        if raw.len() < start + size + 2 {
            body.extend_from_slice(&raw[start.min(raw.len())..raw.len().min(start + size)]);
            return (body, false);
        }
        body.extend_from_slice(&raw[start..start + size]);
        raw = &raw[start + size + 2..];
    }
}

fn sse_events(body: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(body).unwrap();
    assert!(
        text.is_empty() || text.ends_with("\n\n"),
        "events end with a blank line: {text:?}"
    );
    text.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| {
            e.strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not a data event: {e:?}"))
                .to_string()
        })
        .collect()
}

fn stream_body(prompt_len: usize, max_tokens: u64) -> Value {
    // The shape `vllm bench serve --backend openai` sends for a timed_trace request.
    serde_json::json!({
        "model": "sim",
        "prompt": (0..prompt_len as u64).collect::<Vec<_>>(),
        "repetition_penalty": 1.0,
        "max_tokens": max_tokens,
        "logprobs": null,
        "stream": true,
        "stream_options": {"include_usage": true},
        "ignore_eos": true,
    })
}

/// The value of the one sample whose line starts with `prefix` (name and labels).
fn sample(metrics: &str, prefix: &str) -> f64 {
    let hits: Vec<&str> = metrics
        .lines()
        .filter(|l| {
            l.starts_with(prefix) && matches!(l.as_bytes().get(prefix.len()), Some(b' ' | b'{'))
        })
        .collect();
    assert_eq!(hits.len(), 1, "{prefix}: {hits:?}");
    hits[0].rsplit(' ').next().unwrap().parse().unwrap()
}

const L: &str = "{engine=\"0\",model_name=\"sim\"}";

fn counter(metrics: &str, name: &str) -> f64 {
    sample(metrics, &format!("{name}{L}"))
}

fn success(metrics: &str, reason: &str) -> f64 {
    sample(
        metrics,
        &format!(
            "vllm:request_success_total{{engine=\"0\",finished_reason=\"{reason}\",model_name=\"sim\"}}"
        ),
    )
}

/// Checks the token chunks of a stream: one per token, vLLM-shaped, the last one "length".
fn check_token_chunks(events: &[String], n_tokens: usize) {
    for (i, e) in events.iter().take(n_tokens).enumerate() {
        let v: Value = serde_json::from_str(e).unwrap();
        assert!(v["id"].as_str().unwrap().starts_with("cmpl-"), "{v}");
        assert_eq!(v["object"], "text_completion");
        assert!(v["created"].as_u64().unwrap() > 1_700_000_000);
        assert_eq!(v["model"], "sim");
        let choices = v["choices"].as_array().unwrap();
        assert_eq!(choices.len(), 1, "{v}");
        let c = &choices[0];
        assert_eq!(c["index"], 0);
        assert!(!c["text"].as_str().unwrap().is_empty());
        assert!(c["logprobs"].is_null() && c["stop_reason"].is_null(), "{v}");
        let expected = if i + 1 == n_tokens {
            Value::from("length")
        } else {
            Value::Null
        };
        assert_eq!(c["finish_reason"], expected, "chunk {i}: {v}");
    }
}

#[test]
fn prints_loopback_address_and_stops_cleanly_on_sigterm() {
    let mut sim = Sim::start(&[]);
    assert!(sim.addr.starts_with("127.0.0.1:"), "{}", sim.addr);
    let port: u16 = sim.addr.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0);
    let status = Command::new("kill")
        .args(["-TERM", &sim.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = sim.wait();
    assert_eq!(exit.code(), Some(0));
}

#[test]
fn stream_sends_one_chunk_per_token_then_usage_then_done() {
    let sim = Sim::start(&[]);
    let reply = sim.complete(&stream_body(7, 5));
    assert_eq!(reply.status, 200);
    assert!(reply.complete, "the chunked body terminates");
    assert_eq!(
        reply.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    let events = reply.events();
    assert_eq!(events.len(), 5 + 2, "{events:#?}");
    check_token_chunks(&events, 5);
    let usage: Value = serde_json::from_str(&events[5]).unwrap();
    assert_eq!(usage["choices"], serde_json::json!([]));
    assert_eq!(
        usage["usage"],
        serde_json::json!({"prompt_tokens": 7, "total_tokens": 12, "completion_tokens": 5})
    );
    assert_eq!(events[6], "[DONE]");
}

#[test]
fn stream_without_include_usage_has_no_usage_chunk() {
    let sim = Sim::start(&[]);
    let body = serde_json::json!({"prompt": "eight by", "max_tokens": 3, "stream": true});
    let events = sim.complete(&body).events();
    assert_eq!(events.len(), 3 + 1, "{events:#?}");
    check_token_chunks(&events, 3);
    assert_eq!(events[3], "[DONE]");
}

#[test]
fn x_request_id_becomes_the_completion_id() {
    let sim = Sim::start(&[]);
    let mut stream = sim.connect();
    let body = stream_body(2, 1).to_string();
    let req = format!(
        "POST /v1/completions HTTP/1.1\r\nHost: sim\r\nx-request-id: bench-abc-7\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let events = Reply::parse(&raw).events();
    let first: Value = serde_json::from_str(&events[0]).unwrap();
    assert_eq!(first["id"], "cmpl-bench-abc-7");
}

#[test]
fn non_streaming_returns_one_json_with_usage() {
    let sim = Sim::start(&[]);
    // A text prompt counts ⌈bytes / 4⌉ tokens: 9 bytes → 3.
    let body = serde_json::json!({"model": "sim", "prompt": "123456789", "max_tokens": 4});
    let reply = sim.complete(&body);
    assert_eq!(reply.status, 200);
    let v = reply.json();
    assert_eq!(v["object"], "text_completion");
    assert_eq!(v["choices"][0]["finish_reason"], "length");
    assert_eq!(
        v["usage"],
        serde_json::json!({"prompt_tokens": 3, "total_tokens": 7, "completion_tokens": 4})
    );
}

#[test]
fn counters_equal_the_tokens_streamed_and_histograms_count_completions() {
    let sim = Sim::start(&[]);
    let shapes = [(1usize, 1u64), (10, 3), (100, 17), (3, 40), (512, 2)];
    let mut prompt_total = 0u64;
    let mut streamed_total = 0u64;
    let mut gaps = 0u64;
    // Concurrently, so the batching really batches.
    let replies: Vec<Reply> = std::thread::scope(|s| {
        let handles: Vec<_> = shapes
            .iter()
            .map(|&(p, m)| {
                let sim = &sim;
                s.spawn(move || sim.complete(&stream_body(p, m)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (reply, &(p, m)) in replies.iter().zip(&shapes) {
        let events = reply.events();
        let tokens = events
            .iter()
            .filter(|e| {
                *e != "[DONE]"
                    && !serde_json::from_str::<Value>(e).unwrap()["choices"]
                        .as_array()
                        .unwrap()
                        .is_empty()
            })
            .count() as u64;
        assert_eq!(tokens, m);
        let usage: Value = serde_json::from_str(&events[events.len() - 2]).unwrap();
        assert_eq!(usage["usage"]["prompt_tokens"], p as u64);
        assert_eq!(usage["usage"]["completion_tokens"], m);
        prompt_total += p as u64;
        streamed_total += tokens;
        gaps += m - 1;
    }
    let metrics = sim.metrics();
    let n = shapes.len() as f64;
    assert_eq!(
        counter(&metrics, "vllm:prompt_tokens_total"),
        prompt_total as f64
    );
    assert_eq!(
        counter(&metrics, "vllm:generation_tokens_total"),
        streamed_total as f64
    );
    assert_eq!(success(&metrics, "length"), n);
    assert_eq!(success(&metrics, "abort"), 0.0);
    assert_eq!(counter(&metrics, "vllm:num_preemptions_total"), 0.0);
    for h in [
        "vllm:time_to_first_token_seconds",
        "vllm:e2e_request_latency_seconds",
        "vllm:request_queue_time_seconds",
    ] {
        assert_eq!(counter(&metrics, &format!("{h}_count")), n, "{h}");
        let inf = format!("{h}_bucket{{engine=\"0\",le=\"+Inf\",model_name=\"sim\"}}");
        assert_eq!(sample(&metrics, &inf), n, "{h}");
    }
    assert_eq!(
        counter(&metrics, "vllm:inter_token_latency_seconds_count"),
        gaps as f64
    );
    assert_eq!(counter(&metrics, "vllm:num_requests_running"), 0.0);
    assert_eq!(counter(&metrics, "vllm:num_requests_waiting"), 0.0);
    assert_eq!(counter(&metrics, "vllm:kv_cache_usage_perc"), 0.0);
    assert!(metrics.contains(&format!(
        "loadproof_sim_info{{gpu_sku=\"none (simulator)\",revision=\"none (simulator)\",version=\"{}\"}} 1.0\n",
        env!("CARGO_PKG_VERSION")
    )));
    assert_eq!(sample(&metrics, "loadproof_sim_lease_active"), 0.0);
    assert_eq!(sample(&metrics, "loadproof_sim_lease_refused_total"), 0.0);
    let start = sample(&metrics, "process_start_time_seconds");
    assert!(start > 1.7e9 && start.fract() != 0.0, "{start}");
}

#[test]
fn metric_help_type_and_buckets_match_the_real_vllm_scrape() {
    let real =
        std::fs::read_to_string(shared("vllm/real-runs/vllm-cpu/metrics_after.txt")).unwrap();
    let sim = Sim::start(&["--model", "tiny-llama"]);
    let ours = sim.metrics();
    let mut checked = 0;
    for line in ours.lines() {
        // loadproof's own families (info, lease) are not vLLM's.
        if line.contains("loadproof_") {
            continue;
        }
        if line.starts_with('#') {
            // Every HELP and TYPE line is the real one, verbatim.
            assert!(
                real.lines().any(|r| r == line),
                "not in the real scrape: {line}"
            );
        } else {
            // Every series (name and label set, value aside) exists in the real scrape.
            let series = line.rsplit_once(' ').unwrap().0;
            assert!(
                real.lines()
                    .any(|r| r.rsplit_once(' ').map(|x| x.0) == Some(series)),
                "series not in the real scrape: {series}"
            );
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
    // And every bucket of the four histograms the real scrape has, we have.
    for h in [
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:inter_token_latency_seconds_bucket",
        "vllm:e2e_request_latency_seconds_bucket",
        "vllm:request_queue_time_seconds_bucket",
    ] {
        let series = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| l.starts_with(h))
                .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
                .collect()
        };
        assert_eq!(series(&ours), series(&real), "{h}");
    }
}

#[test]
fn health_and_models() {
    let sim = Sim::start(&["--model", "my-model"]);
    let health = sim.request("GET", "/health", "");
    assert_eq!(health.status, 200);
    assert!(health.body.is_empty());
    let models = sim.request("GET", "/v1/models", "");
    assert_eq!(models.status, 200);
    let v = models.json();
    assert_eq!(v["object"], "list");
    assert_eq!(v["data"][0]["id"], "my-model");
    assert_eq!(v["data"][0]["object"], "model");
    assert_eq!(sim.request("GET", "/nope", "").status, 404);
    assert_eq!(sim.request("GET", "/v1/completions", "").status, 405);
}

#[test]
fn unknown_model_is_404_and_garbage_is_400_with_openai_errors() {
    let sim = Sim::start(&[]);
    let reply =
        sim.complete(&serde_json::json!({"model": "gpt-9", "prompt": [1], "max_tokens": 1}));
    assert_eq!(reply.status, 404);
    let v = reply.json();
    assert_eq!(v["error"]["type"], "NotFoundError");
    assert_eq!(v["error"]["code"], 404);
    assert!(v["error"]["message"].as_str().unwrap().contains("gpt-9"));
    for garbage in [
        "{not json",
        "[1,2]",
        r#"{"prompt":[]}"#,
        r#"{"prompt":[1],"max_tokens":0}"#,
        r#"{"prompt":[1],"max_tokens":"many"}"#,
        r#"{"max_tokens":3}"#,
    ] {
        let reply = sim.request("POST", "/v1/completions", garbage);
        assert_eq!(reply.status, 400, "{garbage}");
        let v = reply.json();
        assert_eq!(v["error"]["type"], "BadRequestError", "{garbage}");
        assert_eq!(v["error"]["code"], 400, "{garbage}");
    }
    // Refused requests never reach the engine.
    let metrics = sim.metrics();
    assert_eq!(counter(&metrics, "vllm:prompt_tokens_total"), 0.0);
}

#[test]
fn fault_refuse_closes_without_a_response() {
    let sim = Sim::start(&["--fault", "refuse:2"]);
    let first = sim.complete(&stream_body(4, 2));
    assert_eq!(first.status, 200);
    let raw = sim.raw("POST", "/v1/completions", &stream_body(4, 2).to_string());
    assert!(raw.is_empty(), "{:?}", String::from_utf8_lossy(&raw));
    let third = sim.complete(&stream_body(4, 2));
    assert_eq!(third.status, 200);
    let metrics = sim.metrics();
    assert_eq!(success(&metrics, "length"), 2.0);
    assert_eq!(counter(&metrics, "vllm:prompt_tokens_total"), 8.0);
}

#[test]
fn fault_http500_answers_500_and_is_not_a_success() {
    let sim = Sim::start(&["--fault", "http500"]);
    let reply = sim.complete(&stream_body(4, 2));
    assert_eq!(reply.status, 500);
    assert_eq!(reply.json()["error"]["code"], 500);
    let metrics = sim.metrics();
    assert_eq!(success(&metrics, "length"), 0.0);
    assert_eq!(counter(&metrics, "vllm:generation_tokens_total"), 0.0);
}

#[test]
fn fault_cut_stops_abruptly_after_half_the_tokens() {
    let sim = Sim::start(&["--fault", "cut"]);
    let reply = sim.complete(&stream_body(6, 9));
    assert_eq!(reply.status, 200);
    assert!(!reply.complete, "the chunked body must not terminate");
    let events = reply.events();
    assert_eq!(
        events.len(),
        4,
        "half of 9 tokens, rounded down: {events:#?}"
    );
    for e in &events {
        let v: Value = serde_json::from_str(e).unwrap();
        assert!(v["choices"][0]["finish_reason"].is_null(), "{v}");
    }
    let metrics = sim.metrics();
    assert_eq!(counter(&metrics, "vllm:generation_tokens_total"), 4.0);
    assert_eq!(counter(&metrics, "vllm:prompt_tokens_total"), 6.0);
    assert_eq!(success(&metrics, "length"), 0.0);
    assert_eq!(success(&metrics, "abort"), 0.0);
    assert_eq!(
        counter(&metrics, "vllm:e2e_request_latency_seconds_count"),
        0.0
    );
}

#[test]
fn fault_stall_sends_one_token_then_holds_the_connection_open() {
    let sim = Sim::start(&["--fault", "stall"]);
    let mut stream = sim.connect();
    send(
        &mut stream,
        "POST",
        "/v1/completions",
        &stream_body(3, 5).to_string(),
    );
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    // Read until the first token's event is in, then until a read times out.
    let timed_out = loop {
        match stream.read(&mut buf) {
            Ok(0) => break false,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                break true;
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert!(timed_out, "the connection stays open (no EOF)");
    let reply = Reply::parse(&raw);
    assert_eq!(reply.status, 200);
    assert!(!reply.complete);
    assert_eq!(reply.events().len(), 1, "exactly the first token");
    // Still silent a little later, still open.
    std::thread::sleep(Duration::from_millis(300));
    match stream.read(&mut buf) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
        other => panic!("expected silence, got {other:?}"),
    }
    drop(stream);
    let metrics = sim.metrics();
    assert_eq!(counter(&metrics, "vllm:generation_tokens_total"), 1.0);
    assert_eq!(success(&metrics, "length"), 0.0);
}

#[test]
fn bad_fault_spec_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .args(["sim", "--port", "0", "--fault", "explode"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown kind"));
}

#[test]
fn max_num_seqs_queues_and_steps_follow_the_decode_model() {
    // One slot, 50 ms steps: two concurrent 5-token requests run one after the other.
    let sim = Sim::start(&[
        "--max-num-seqs",
        "1",
        "--decode-step-ms",
        "50",
        "--decode-ms-per-seq",
        "0",
    ]);
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        let a = s.spawn(|| sim.complete(&stream_body(5, 5)));
        let b = s.spawn(|| sim.complete(&stream_body(5, 5)));
        assert_eq!(a.join().unwrap().events().len(), 7);
        assert_eq!(b.join().unwrap().events().len(), 7);
    });
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    let metrics = sim.metrics();
    // Inter-token gaps are whole steps of virtual time: exactly 50 ms each.
    let itl_count = counter(&metrics, "vllm:inter_token_latency_seconds_count");
    let itl_sum = counter(&metrics, "vllm:inter_token_latency_seconds_sum");
    assert_eq!(itl_count, 8.0);
    assert!((itl_sum - 0.4).abs() < 1e-9, "{itl_sum}");
    // The second request waited for (most of) the first one's five steps.
    let queued = counter(&metrics, "vllm:request_queue_time_seconds_sum");
    assert!(queued >= 0.1, "{queued}");
}

#[test]
fn kv_capacity_refuses_oversized_requests_and_queues_the_rest() {
    let sim = Sim::start(&["--kv-capacity-tokens", "20", "--decode-step-ms", "50"]);
    let too_big = sim.complete(&stream_body(16, 5));
    assert_eq!(too_big.status, 400);
    assert!(
        too_big.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("maximum context length is 20 tokens")
    );
    // 10 + 5 tokens each: only one fits at a time.
    std::thread::scope(|s| {
        let a = s.spawn(|| sim.complete(&stream_body(10, 5)));
        let b = s.spawn(|| sim.complete(&stream_body(10, 5)));
        assert_eq!(a.join().unwrap().status, 200);
        assert_eq!(b.join().unwrap().status, 200);
    });
    let metrics = sim.metrics();
    assert!(counter(&metrics, "vllm:request_queue_time_seconds_sum") >= 0.1);
    assert_eq!(success(&metrics, "length"), 2.0);
}

/// One request with extra header lines (`"Name: value"`), `Connection: close`.
fn request_with(sim: &Sim, method: &str, path: &str, body: &str, headers: &[&str]) -> Reply {
    let mut stream = sim.connect();
    let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n{extra}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    Reply::parse(&out)
}

fn lease_request(holder: &str, seconds: f64) -> String {
    serde_json::json!({"holder": holder, "seconds": seconds}).to_string()
}

#[test]
fn a_lease_binds_route_and_subject_and_keeps_untokened_completions_out_with_423() {
    let sim = Sim::start(&["--model-revision", "rev-1", "--gpu-sku", "sku 9"]);
    let reply = sim.request("POST", "/loadproof/lease", &lease_request("ops", 60.0));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let lease = loadproof_core::receipt::Lease::from_json(&reply.body).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(lease.issuer, format!("loadproof sim {version}"));
    assert_eq!(lease.holder, "ops");
    // `Host: sim` names no port of this sim: the route is the sim's own address, never a
    // route another server answers at.
    assert_eq!(lease.route, format!("http://{}", sim.addr));
    let subject: Vec<(&str, &str)> = lease
        .subject
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        subject,
        [
            ("engine", "loadproof sim"),
            ("engine_version", version),
            ("gpu_sku", "sku 9"),
            ("model", "sim"),
            ("model_revision", "rev-1"),
        ]
    );
    assert_eq!(lease.until_unix_ns - lease.from_unix_ns, 60_000_000_000);
    assert!(lease.exclusion.contains("423") && lease.exclusion.contains("Bearer"));
    // The token travels in a header; the document names only its sha256 (a receipt keeps it).
    assert_eq!(lease.token, None);
    let token = reply.header("x-loadproof-lease-token").unwrap().to_owned();
    assert!(token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        lease.token_sha256.as_deref(),
        Some(loadproof_core::receipt::sha256_hex(token.as_bytes()).as_str())
    );
    assert!(!String::from_utf8_lossy(&reply.body).contains(&token));

    let metrics = sim.metrics();
    assert_eq!(sample(&metrics, "loadproof_sim_lease_active"), 1.0);
    assert_eq!(
        lease.readback.as_deref(),
        Some("loadproof_sim_lease_active")
    );
    assert!(metrics.contains(&format!(
        "loadproof_sim_lease_active{{lease_id=\"{}\"}} 1.0\n",
        lease.id
    )));
    let body = stream_body(4, 3).to_string();
    let untokened = sim.complete(&stream_body(4, 3));
    assert_eq!(untokened.status, 423);
    assert_eq!(untokened.json()["error"]["type"], "Locked");
    assert!(
        untokened.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"ops\"")
    );
    let wrong = request_with(
        &sim,
        "POST",
        "/v1/completions",
        &body,
        &["Authorization: Bearer 0000"],
    );
    assert_eq!(wrong.status, 423);
    let bearer = format!("Authorization: Bearer {token}");
    let tokened = request_with(&sim, "POST", "/v1/completions", &body, &[&bearer]);
    assert_eq!(tokened.status, 200);
    check_token_chunks(&tokened.events(), 3);
    // Everything but completions stays open.
    assert_eq!(sim.request("GET", "/health", "").status, 200);
    assert_eq!(sim.request("GET", "/v1/models", "").status, 200);
    let metrics = sim.metrics();
    assert_eq!(sample(&metrics, "loadproof_sim_lease_refused_total"), 2.0);
    assert_eq!(
        success(&metrics, "length"),
        1.0,
        "refused requests never ran"
    );
    assert_eq!(counter(&metrics, "vllm:prompt_tokens_total"), 4.0);
    assert!(metrics.contains(&format!(
        "loadproof_sim_info{{gpu_sku=\"sku 9\",revision=\"rev-1\",version=\"{version}\"}} 1.0\n"
    )));
}

#[test]
fn a_second_lease_while_one_holds_is_409_and_an_expired_one_opens_the_endpoint() {
    let sim = Sim::start(&[]);
    let first = sim.request("POST", "/loadproof/lease", &lease_request("first", 0.5));
    assert_eq!(first.status, 200);
    let first_token = first.header("x-loadproof-lease-token").unwrap().to_owned();
    let first = loadproof_core::receipt::Lease::from_json(&first.body).unwrap();
    let second = sim.request("POST", "/loadproof/lease", &lease_request("second", 10.0));
    assert_eq!(second.status, 409);
    let err = &second.json()["error"];
    assert_eq!(err["holder"], "first");
    assert_eq!(err["until_unix_ns"], first.until_unix_ns);
    assert!(err["message"].as_str().unwrap().contains("\"first\""));
    assert_eq!(sim.complete(&stream_body(2, 2)).status, 423);

    // Past its until, the lease no longer holds: completions pass and a new lease is granted.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(sample(&sim.metrics(), "loadproof_sim_lease_active"), 0.0);
    assert_eq!(sim.complete(&stream_body(2, 2)).status, 200);
    let third = sim.request("POST", "/loadproof/lease", &lease_request("third", 10.0));
    assert_eq!(third.status, 200);
    assert_ne!(
        third.header("x-loadproof-lease-token"),
        Some(first_token.as_str())
    );
    let third = loadproof_core::receipt::Lease::from_json(&third.body).unwrap();
    assert_ne!(third.token_sha256, first.token_sha256);
    assert_eq!(
        sample(&sim.metrics(), "loadproof_sim_lease_refused_total"),
        1.0
    );

    // Malformed requests are 400; the lessor only takes POST.
    for body in ["{}", r#"{"holder": "x", "seconds": -1}"#, "not json"] {
        assert_eq!(
            sim.request("POST", "/loadproof/lease", body).status,
            400,
            "{body}"
        );
    }
    assert_eq!(sim.request("GET", "/loadproof/lease", "").status, 405);
}
