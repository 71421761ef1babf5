//! `loadproof fire --engine native` against `loadproof sim`: every offered request ends with
//! exactly one record, faults become named dispositions, the sim's own counters agree with
//! the records, and Ctrl-C, an unreachable endpoint or a client that fell behind still leave
//! a receipt. A run may hold the sim's lease: its token goes with every request, strangers are
//! refused, and the receipt keeps the lease raw, the binary's digest and the sim's own subject.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use loadproof_core::receipt::{
    Axis, Disposition, Engine, Execution, Interruption, Lease, Phase, Receipt, RequestRecord,
    ScrapeOutcome, block,
};

mod common;

use common::{FAST, Sim, hex_sha256, s, stderr};

fn loadproof(args: &[&str]) -> Output {
    common::run(args)
}

/// One row of a Mooncake trace.
struct Row {
    ms: u64,
    input: u32,
    output: u32,
    ids: Vec<u64>,
}

/// `rows` rows `gap_ms` apart; every third row shares its first block with the row before.
fn rows(n: u64, gap_ms: u64) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            ms: i * gap_ms,
            input: 5 + (i % 7) as u32 * 70,
            output: 2 + (i % 5) as u32,
            ids: if i % 3 == 2 { vec![i - 1] } else { vec![i] },
        })
        .collect()
}

/// A temporary directory holding a verified plan of `rows`.
fn planned(name: &str, rows: &[Row]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadproof-native-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.jsonl");
    let text: String = rows
        .iter()
        .map(|r| {
            format!(
                "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": {:?}}}\n",
                r.ms, r.input, r.output, r.ids
            )
        })
        .collect();
    std::fs::write(&trace, text).unwrap();
    let out = loadproof(&["plan", s(&trace), "--out", s(&dir.join("plan"))]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

/// A sim held for one test at a time: every native fire first hashes the (debug, ~100 MB)
/// executable for its implementation digest, a core-second of work that would otherwise land
/// on another test's dispatcher and push its lag over the bound.
struct Serial {
    sim: Sim,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl std::ops::Deref for Serial {
    type Target = Sim;
    fn deref(&self) -> &Sim {
        &self.sim
    }
}

static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `loadproof sim --port 0` with fast model knobs plus `extra`, for this test alone.
fn sim(extra: &[&str]) -> Serial {
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let args: Vec<&str> = FAST.iter().copied().chain(extra.iter().copied()).collect();
    Serial {
        sim: Sim::start(&args),
        _turn: turn,
    }
}

/// Fires `dir/plan` natively at `url` with `extra` flags; the exit code and the receipt.
fn fire(dir: &Path, url: &str, extra: &[&str]) -> (Option<i32>, String, Receipt) {
    fire_env(dir, url, extra, &[])
}

/// [`fire`] with environment variables set for the run.
fn fire_env(
    dir: &Path,
    url: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, String, Receipt) {
    let receipt = dir.join("receipt.json");
    let _ = std::fs::remove_file(&receipt);
    let plan = dir.join("plan");
    let mut args = vec![
        "fire",
        s(&plan),
        "--endpoint",
        url,
        "--engine",
        "native",
        "--scrape-interval-ms",
        "100",
        "--out",
        s(&receipt),
    ];
    args.extend_from_slice(extra);
    let out = common::run_env(&args, env);
    let r = Receipt::from_bytes(&std::fs::read(&receipt).unwrap_or_else(|e| {
        panic!("no receipt ({e}): {}", stderr(&out));
    }))
    .unwrap();
    (out.status.code(), stderr(&out), r)
}

/// Starts `loadproof fire PLAN --endpoint URL --engine native` plus `extra`, writing `receipt`
/// (stdout dropped, stderr piped), without waiting for it.
fn spawn_fire(plan: &Path, url: &str, receipt: &Path, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .args(["fire", s(plan), "--endpoint", url, "--engine", "native"])
        .args(extra)
        .args(["--out", s(receipt)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (up to 20 s) until `sim` has seen the run's first prompt tokens.
fn wait_until_firing(sim: &Sim) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while sim_sample(sim, "vllm:prompt_tokens_total") == 0.0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The event log, checked: one record per offered request; returned in index order.
fn records(r: &Receipt) -> Vec<RequestRecord> {
    assert!(r.verify_evidence().is_empty(), "{:?}", r.verify_evidence());
    let Execution::Native {
        events, offered, ..
    } = &r.execution
    else {
        panic!("{:?}", r.execution);
    };
    let log = String::from_utf8(r.block(events).unwrap()).unwrap();
    // The log is in the order requests ended (it is appended as they end).
    let mut records: Vec<RequestRecord> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    records.sort_by_key(|r| r.index);
    assert_eq!(records.len() as u64, *offered);
    for (i, rec) in records.iter().enumerate() {
        assert_eq!(rec.index, i as u64, "one record per request");
    }
    records
}

fn count(records: &[RequestRecord], kind: &str) -> usize {
    records
        .iter()
        .filter(|r| r.disposition.kind() == kind)
        .count()
}

/// Σ of `metric`'s samples in the receipt's first (before) and last (after) scrape.
fn counter_delta(r: &Receipt, metric: &str) -> f64 {
    let body = |phase: Phase, last: bool| {
        let mut it = r.scrapes.iter().filter(|s| s.phase == phase);
        let scrape = if last { it.next_back() } else { it.next() }.unwrap();
        let ScrapeOutcome::Response { body, .. } = &scrape.outcome else {
            panic!("{:?}", scrape.outcome);
        };
        let text = String::from_utf8(r.block(body).unwrap()).unwrap();
        text.lines()
            .filter(|l| {
                l.strip_prefix(metric)
                    .is_some_and(|rest| rest.starts_with(['{', ' ']))
            })
            .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
            .sum::<f64>()
    };
    body(Phase::After, true) - body(Phase::Before, false)
}

fn chunks_total(records: &[RequestRecord]) -> f64 {
    records.iter().map(|r| r.chunks_ns.len() as f64).sum()
}

#[test]
fn a_clean_run_records_every_request_ok_and_the_sims_counters_agree() {
    let sim = sim(&[]);
    let rows = rows(30, 10);
    let dir = planned("clean", &rows);
    let (code, err, r) = fire(&dir, &sim.url, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("30 ok, 0 failed"), "{err}");
    assert!(err.contains("lag      dispatch"), "{err}");
    let recs = records(&r);
    for (rec, row) in recs.iter().zip(&rows) {
        assert_eq!(rec.disposition, Disposition::Ok, "{rec:?}");
        assert_eq!(rec.prompt_tokens, row.input);
        assert_eq!(rec.max_tokens, row.output);
        let usage = rec.usage.unwrap();
        assert_eq!(usage.prompt_tokens, u64::from(row.input));
        assert_eq!(usage.completion_tokens, u64::from(row.output));
        assert_eq!(
            rec.chunks_ns.len(),
            row.output as usize,
            "one chunk per token"
        );
        let sent = rec.sent_ns.unwrap();
        assert!(sent >= rec.scheduled_ns, "never early");
        assert_eq!(rec.first_token_ns, rec.chunks_ns.first().copied());
        assert!(rec.chunks_ns.windows(2).all(|w| w[0] <= w[1]));
        assert!(rec.end_ns.unwrap() >= *rec.chunks_ns.last().unwrap());
    }
    // The schedule is the plan's: 10 ms apart from the run's zero.
    let Execution::Native {
        started,
        ended,
        interrupted,
        lag_bound_ns,
        ..
    } = &r.execution
    else {
        unreachable!()
    };
    assert_eq!(*interrupted, None);
    assert_eq!(*lag_bound_ns, 10_000_000);
    assert!(ended.mono_ns > started.mono_ns);
    for (rec, row) in recs.iter().zip(&rows) {
        assert_eq!(
            rec.scheduled_ns,
            started.mono_ns + row.ms as i64 * 1_000_000
        );
    }
    let input: u32 = rows.iter().map(|r| r.input).sum();
    let output: u32 = rows.iter().map(|r| r.output).sum();
    assert_eq!(
        counter_delta(&r, "vllm:prompt_tokens_total"),
        f64::from(input)
    );
    assert_eq!(
        counter_delta(&r, "vllm:generation_tokens_total"),
        f64::from(output)
    );
    assert_eq!(counter_delta(&r, "vllm:request_success_total"), 30.0);
    assert!(r.scrapes.iter().any(|s| s.phase == Phase::During));

    let p = &r.protocol;
    assert_eq!(p.engine, Engine::Native);
    assert_eq!(
        p.client_version.as_deref(),
        Some(concat!("loadproof ", env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(p.python_hash_seed, None);
    assert_eq!(p.tokenizer, None);
    assert!(p.sampling.is_empty());
    assert_eq!(p.requests, Some(30));
    assert!(
        p.argv.iter().any(|a| a == "vocab=ids 0..32000"),
        "{:?}",
        p.argv
    );
    assert!(p.argv.iter().any(|a| a == "ignore_eos=true"));
    assert_eq!(p.key, p.canonical_key());
    assert!(r.subject.simulator);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fires 12 requests at a sim with `fault`; checks the counts add up and returns the records.
fn faulted(name: &str, fault: &str, extra: &[&str]) -> (Receipt, Vec<RequestRecord>) {
    let sim = sim(&["--fault", fault]);
    let rows = rows(12, 5);
    let dir = planned(name, &rows);
    let (code, err, r) = fire(&dir, &sim.url, extra);
    assert_eq!(
        code,
        Some(0),
        "failed requests are evidence, not a failed capture: {err}"
    );
    let recs = records(&r);
    assert!(
        recs.iter()
            .all(|r| r.sent_ns.is_some() && r.end_ns.is_some())
    );
    assert_eq!(
        counter_delta(&r, "vllm:generation_tokens_total"),
        chunks_total(&recs),
        "the sim counts the tokens it streamed; the client counted each"
    );
    let _ = std::fs::remove_dir_all(&dir);
    (r, recs)
}

#[test]
fn http_500s_are_recorded_with_status_and_body() {
    let (r, recs) = faulted("http500", "http500:3", &[]);
    assert_eq!(count(&recs, "http"), 4);
    assert_eq!(count(&recs, "ok"), 8);
    for rec in &recs {
        if let Disposition::Http { status, body } = &rec.disposition {
            assert_eq!(*status, 500);
            assert!(body.contains("error"), "{body}");
            assert!(rec.chunks_ns.is_empty());
        }
    }
    assert_eq!(counter_delta(&r, "vllm:request_success_total"), 8.0);
}

#[test]
fn a_cut_stream_is_a_stream_cut_with_its_chunks() {
    let (_, recs) = faulted("cut", "cut:4", &[]);
    assert_eq!(count(&recs, "stream_cut"), 3);
    assert_eq!(count(&recs, "ok"), 9);
    for rec in &recs {
        if let Disposition::StreamCut { chunks } = rec.disposition {
            assert_eq!(chunks, u64::from(rec.max_tokens / 2));
            assert_eq!(rec.chunks_ns.len() as u64, chunks);
            assert_eq!(rec.usage, None);
        }
    }
}

#[test]
fn a_refused_connection_is_a_transport_error() {
    let (_, recs) = faulted("refuse", "refuse:5", &[]);
    assert_eq!(count(&recs, "transport"), 2);
    assert_eq!(count(&recs, "ok"), 10);
    for rec in &recs {
        if let Disposition::Transport { error } = &rec.disposition {
            assert!(!error.is_empty());
        }
    }
}

#[test]
fn a_stalled_stream_times_out_after_request_timeout() {
    let (_, recs) = faulted("stall", "stall:6", &["--request-timeout", "0.5"]);
    assert_eq!(count(&recs, "timeout"), 2);
    assert_eq!(count(&recs, "ok"), 10);
    for rec in &recs {
        if let Disposition::Timeout { after_ns } = rec.disposition {
            assert!(
                (500_000_000..1_500_000_000).contains(&after_ns),
                "{after_ns}"
            );
            assert_eq!(
                rec.chunks_ns.len(),
                1,
                "the stall comes after the first token"
            );
        }
    }
}

#[test]
fn an_unreachable_endpoint_is_a_native_receipt_and_exit_1() {
    let dir = planned("unreachable", &rows(3, 10));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, err, r) = fire(&dir, &format!("http://127.0.0.1:{port}"), &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(matches!(r.execution, Execution::Unreachable { .. }));
    assert_eq!(r.protocol.engine, Engine::Native);
    assert!(r.verify_evidence().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_stops_dispatching_and_still_writes_every_record() {
    let sim = sim(&[]);
    let dir = planned("ctrlc", &rows(200, 20)); // 4 s of schedule
    let receipt = dir.join("receipt.json");
    let child = spawn_fire(&dir.join("plan"), &sim.url, &receipt, &[]);
    // Interrupt 0.8 s into the schedule (the client hashes its executable first).
    wait_until_firing(&sim);
    std::thread::sleep(std::time::Duration::from_millis(800));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r = Receipt::from_bytes(&std::fs::read(&receipt).unwrap()).unwrap();
    let Execution::Native { interrupted, .. } = &r.execution else {
        panic!("{:?}", r.execution);
    };
    assert_eq!(*interrupted, Some(Interruption::Signal));
    let recs = records(&r);
    assert_eq!(recs.len(), 200);
    let (ok, not_sent) = (count(&recs, "ok"), count(&recs, "not_sent"));
    assert!(ok >= 20 && not_sent >= 50, "ok {ok}, not sent {not_sent}");
    assert_eq!(ok + not_sent + count(&recs, "interrupted"), 200);
    // Sent requests come first: the schedule stopped at one point.
    let first_unsent = recs.iter().position(|r| r.sent_ns.is_none()).unwrap();
    assert!(recs[first_unsent..].iter().all(|r| matches!(
        &r.disposition,
        Disposition::NotSent { reason } if reason.contains("Ctrl-C")
    )));
    assert!(r.notes.iter().any(|n| n.contains("interrupted")));
    assert!(r.scrapes.iter().any(|s| s.phase == Phase::After));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_client_that_falls_behind_its_bound_is_marked_invalid() {
    let sim = sim(&[]);
    let dir = planned("behind", &rows(5, 10));
    // A bound of 1 ns: no client keeps it, so the run is invalid by its own bound.
    let (code, err, r) = fire(&dir, &sim.url, &["--lag-bound-ms", "0.000001"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("INVALID: the client fell behind"), "{err}");
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("the client fell behind"))
    );
    let Execution::Native { lag_bound_ns, .. } = r.execution else {
        unreachable!()
    };
    assert_eq!(lag_bound_ns, 1);
    assert_eq!(
        count(&records(&r), "ok"),
        5,
        "the requests themselves succeeded"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tokenizer_sets_the_vocabulary_and_is_named_in_the_protocol() {
    let sim = sim(&[]);
    let dir = planned("tokenizer", &rows(4, 10));
    let tok = dir.join("tokenizer.json");
    std::fs::write(
        &tok,
        r#"{"version": "1.0", "truncation": null, "padding": null,
            "added_tokens": [{"id": 0, "content": "<s>", "single_word": false, "lstrip": false,
                              "rstrip": false, "normalized": false, "special": true}],
            "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
            "model": {"type": "WordLevel", "vocab": {"<s>": 0, "a": 1, "b": 2}, "unk_token": "a"}}"#,
    )
    .unwrap();
    let (code, err, r) = fire(&dir, &sim.url, &["--tokenizer", s(&tok)]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(r.protocol.tokenizer.as_deref(), Some(s(&tok)));
    let vocab = r.protocol.argv.last().unwrap();
    assert!(
        vocab.starts_with("vocab=tokenizer.json sha256:")
            && vocab.ends_with("(2 ids, 1 special excluded)"),
        "{vocab}"
    );
    assert_eq!(count(&records(&r), "ok"), 4);

    // A tokenizer that is not there is bad input: exit 2, nothing written.
    let out = loadproof(&[
        "fire",
        s(&dir.join("plan")),
        "--endpoint",
        &sim.url,
        "--engine",
        "native",
        "--tokenizer",
        "no/such/tokenizer",
        "--out",
        s(&dir.join("r2.json")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("fetches nothing"), "{}", stderr(&out));
    assert!(!dir.join("r2.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// One HTTP/1.1 exchange with `Connection: close` (whole-body responses only); status and body.
fn http(addr: &str, method: &str, path: &str, body: &str) -> (u16, Vec<u8>) {
    let (status, _, body) = http_head(addr, method, path, body);
    (status, body)
}

/// [`http`] with the response head (status line and headers) as text.
fn http_head(addr: &str, method: &str, path: &str, body: &str) -> (u16, String, Vec<u8>) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head, raw[split + 4..].to_vec())
}

/// A header's value in a response head.
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Σ of `name`'s samples in the sim's /metrics now.
fn sim_sample(sim: &Sim, name: &str) -> f64 {
    let (status, body) = http(&sim.addr, "GET", "/metrics", "");
    assert_eq!(status, 200);
    let text = String::from_utf8(body).unwrap();
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|r| r.starts_with([' ', '{']))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

/// A completion request as a stranger would send it: no token.
fn foreign_completion() -> String {
    serde_json::json!({"model": "sim", "prompt": [1, 2, 3], "max_tokens": 2, "stream": true})
        .to_string()
}

#[test]
fn an_acquired_lease_is_kept_raw_its_token_sent_and_strangers_are_refused_during_the_run() {
    let sim = sim(&["--model-revision", "rev-abc", "--gpu-sku", "sku-x"]);
    let dir = planned("acquire", &rows(40, 25)); // 1 s of schedule
    let plan = dir.join("plan");
    let receipt = dir.join("receipt.json");
    let child = spawn_fire(
        &plan,
        &sim.url,
        &receipt,
        &["--acquire-lease", "60", "--scrape-interval-ms", "100"],
    );
    // Once the run holds its lease and is firing (its before-scrape taken), a stranger's
    // request is refused, and counted.
    wait_until_firing(&sim);
    assert_eq!(sim_sample(&sim, "loadproof_sim_lease_active"), 1.0);
    let (status, body) = http(&sim.addr, "POST", "/v1/completions", &foreign_completion());
    assert_eq!(status, 423, "{}", String::from_utf8_lossy(&body));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = Receipt::from_bytes(&std::fs::read(&receipt).unwrap()).unwrap();
    // issue 20: the run released its lease: the endpoint is open and leasable again at once.
    assert_eq!(sim_sample(&sim, "loadproof_sim_lease_active"), 0.0);
    let (status, _) = http(&sim.addr, "POST", "/v1/completions", &foreign_completion());
    assert_eq!(status, 200, "the released token guards nothing");
    let (status, body) = http(
        &sim.addr,
        "POST",
        "/loadproof/lease",
        r#"{"holder": "next", "seconds": 5}"#,
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));

    // Every request of the run carried the token: all ok.
    let recs = records(&r);
    assert_eq!(count(&recs, "ok"), 40);
    assert_eq!(counter_delta(&r, "vllm:request_success_total"), 40.0);
    // The stranger shows in the receipt's own scrapes.
    assert_eq!(counter_delta(&r, "loadproof_sim_lease_refused_total"), 1.0);

    // The lease block: the lessor's bytes, bound to this route and subject, covering the run.
    assert_eq!(r.lease.as_deref(), Some(block::LEASE));
    let lease = Lease::from_json(&r.block(block::LEASE).unwrap()).unwrap();
    assert_eq!(lease.holder, format!("loadproof fire {}", s(&plan)));
    assert_eq!(lease.route, sim.url);
    assert_eq!(lease.subject["model"], "sim");
    assert_eq!(lease.subject["model_revision"], "rev-abc");
    assert_eq!(lease.subject["gpu_sku"], "sku-x");
    let Execution::Native { started, ended, .. } = &r.execution else {
        unreachable!()
    };
    assert!(lease.from_unix_ns <= started.unix_ns && ended.unix_ns <= lease.until_unix_ns);
    // The first scrape already sees the lease.
    let ScrapeOutcome::Response { body, .. } = &r.scrapes[0].outcome else {
        panic!("{:?}", r.scrapes[0])
    };
    let first = String::from_utf8(r.block(body).unwrap()).unwrap();
    assert!(
        first.contains(&format!(
            "\nloadproof_sim_lease_active{{lease_id=\"{}\"}} 1.0\n",
            lease.id
        )),
        "{first}"
    );

    // The receipt names the token's digest only, and the lease was released at the end.
    assert_eq!(lease.token, None);
    assert!(lease.token_sha256.is_some());
    assert!(
        r.notes.iter().any(|n| n.contains("released")),
        "{:?}",
        r.notes
    );

    // The implementation is bound to this very executable.
    let imp = r.implementation.as_ref().unwrap();
    assert_eq!(imp.name, "loadproof native");
    assert_eq!(imp.version.as_deref(), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!(imp.unbound, None);
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_loadproof")).unwrap();
    assert_eq!(imp.source.as_deref(), Some(s(&exe)));
    assert_eq!(
        imp.source_sha256.as_deref(),
        Some(hex_sha256(&std::fs::read(&exe).unwrap()).as_str())
    );

    // The subject's axes come from the sim's own statement.
    let from_metrics = |value: &str| Axis::Known {
        value: value.to_owned(),
        source: "/metrics (loadproof_sim_info)".to_owned(),
    };
    assert_eq!(r.subject.engine, from_metrics("loadproof sim"));
    assert_eq!(
        r.subject.engine_version,
        from_metrics(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(r.subject.model_revision, from_metrics("rev-abc"));
    assert_eq!(r.subject.gpu_sku, from_metrics("sku-x"));
    assert!(r.verify_evidence().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lease_file_is_kept_byte_for_byte_and_without_it_the_leased_sim_refuses_every_request() {
    let sim = sim(&[]);
    let dir = planned("leasefile", &rows(6, 10));
    let (status, head, raw) = http_head(
        &sim.addr,
        "POST",
        "/loadproof/lease",
        r#"{"holder": "operator gateway", "seconds": 60}"#,
    );
    assert_eq!(status, 200);
    let token = header(&head, "x-loadproof-lease-token").unwrap().to_owned();
    let file = dir.join("lease.json");
    std::fs::write(&file, &raw).unwrap();

    // The token is never a flag value: without the variable it names, the lease is refused,
    // and a variable holding another token is refused too.
    let refused = |extra: &[&str], env: &[(&str, &str)]| {
        let plan = dir.join("plan");
        let out_path = dir.join("refused.json");
        let mut args = vec![
            "fire",
            s(&plan),
            "--endpoint",
            &sim.url,
            "--engine",
            "native",
            "--lease",
            s(&file),
            "--out",
            s(&out_path),
        ];
        args.extend_from_slice(extra);
        common::run_env(&args, env)
    };
    let out = refused(&[], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("needs a bearer token"),
        "{}",
        stderr(&out)
    );
    let wrong = refused(
        &["--lease-token-env", "LEASE_TOKEN"],
        &[("LEASE_TOKEN", "0000")],
    );
    assert!(
        stderr(&wrong).contains("not the one the lease names"),
        "{}",
        stderr(&wrong)
    );

    // Without the lease, every request is refused: the exclusion is real.
    let (code, err, r) = fire(&dir, &sim.url, &[]);
    assert_eq!(code, Some(0), "{err}");
    let recs = records(&r);
    assert!(
        recs.iter()
            .all(|rec| matches!(rec.disposition, Disposition::Http { status: 423, .. })),
        "{recs:?}"
    );
    assert_eq!(r.lease, None);

    // With it, every request passes; the caller's statement that disagrees with the sim is
    // kept, and the disagreement noted.
    let (code, err, r) = fire_env(
        &dir,
        &sim.url,
        &[
            "--lease",
            s(&file),
            "--lease-token-env",
            "LEASE_TOKEN",
            "--gpu-sku",
            "NVIDIA H100 80GB HBM3",
        ],
        &[("LEASE_TOKEN", &token)],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !r.to_json().contains(&token),
        "the token is nowhere in the receipt"
    );
    assert_eq!(count(&records(&r), "ok"), 6);
    assert_eq!(r.block(block::LEASE).unwrap(), raw, "the bytes as read");
    assert_eq!(r.lease.as_deref(), Some(block::LEASE));
    assert_eq!(
        r.subject.gpu_sku,
        Axis::Known {
            value: "NVIDIA H100 80GB HBM3".to_owned(),
            source: "caller".to_owned(),
        }
    );
    assert!(
        r.notes.iter().any(|n| n.contains("--gpu-sku")
            && n.contains("none (simulator)")
            && n.contains("caller's value is kept")),
        "{:?}",
        r.notes
    );
    assert_eq!(counter_delta(&r, "loadproof_sim_lease_refused_total"), 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_refused_or_malformed_lease_is_bad_input_and_nothing_is_written() {
    let sim = sim(&[]);
    let dir = planned("badlease", &rows(3, 10));
    let plan = dir.join("plan");
    let receipt = dir.join("r.json");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "fire",
            s(&plan),
            "--endpoint",
            &sim.url,
            "--engine",
            "native",
            "--out",
            s(&receipt),
        ];
        args.extend_from_slice(extra);
        let out = loadproof(&args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(!receipt.exists());
        stderr(&out)
    };

    let not_a_lease = dir.join("not-a-lease.json");
    std::fs::write(&not_a_lease, "{\"schema\": \"loadproof.lease/v1\"}").unwrap();
    let err = run(&["--lease", s(&not_a_lease)]);
    assert!(
        err.contains(s(&not_a_lease)) && err.contains("not a loadproof lease"),
        "{err}"
    );

    let err = run(&["--lease", s(&not_a_lease), "--acquire-lease", "5"]);
    assert!(err.contains("cannot be used with"), "{err}");

    // Someone else holds the endpoint: the lessor's 409 and its body.
    let (status, _) = http(
        &sim.addr,
        "POST",
        "/loadproof/lease",
        r#"{"holder": "someone else", "seconds": 60}"#,
    );
    assert_eq!(status, 200);
    let err = run(&["--acquire-lease", "5"]);
    assert!(
        err.contains("HTTP 409") && err.contains("someone else") && err.contains("until_unix_ns"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fire_killed_mid_run_leaves_a_receipt_read_up_to_its_last_record() {
    let sim = sim(&[]);
    let dir = planned("kill9", &rows(300, 20)); // 6 s of schedule
    let receipt = dir.join("receipt.lpr");
    let mut child = spawn_fire(
        &dir.join("plan"),
        &sim.url,
        &receipt,
        &["--scrape-interval-ms", "100"],
    );
    wait_until_firing(&sim);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child.kill().unwrap(); // SIGKILL: no handler runs, nothing is sealed
    child.wait().unwrap();
    let r = Receipt::from_bytes(&std::fs::read(&receipt).unwrap()).unwrap();
    assert!(!r.sealed());
    // Every block it holds verifies: nothing torn was read as whole.
    assert!(r.verify_evidence().is_empty(), "{:?}", r.verify_evidence());
    let log = r.block(block::EVENTS).unwrap();
    let ended = loadproof_core::receipt::parse_events(&log).unwrap();
    assert!(
        !ended.is_empty() && ended.len() < 300,
        "{} records",
        ended.len()
    );
    assert!(r.scrapes.len() >= 5, "{} scrapes", r.scrapes.len());
    assert!(r.scrapes.iter().all(|s| s.phase != Phase::After));
    // The audit reads it as far as it got, says so, and qualifies nothing.
    let a = common::audit_json(&receipt);
    assert_eq!(a["sealed"], false);
    assert!(
        a["unsealed"]["last_seq"].as_u64().unwrap() > 5,
        "{}",
        a["unsealed"]
    );
    assert_eq!(
        a["ledger"]["completed"].as_u64().unwrap() as usize,
        ended.len()
    );
    assert_eq!(
        a["ledger"]["unterminated"].as_u64().unwrap() as usize,
        300 - ended.len()
    );
    assert_eq!(a["qualified"], false);
    assert!(
        a["refusals"][0].as_str().unwrap().starts_with("unsealed:"),
        "{}",
        a["refusals"]
    );
    for (cmd, code) in [("qualify", 1), ("capture-check", 1), ("verify", 0)] {
        let out = loadproof(&["receipt", cmd, s(&receipt)]);
        assert_eq!(out.status.code(), Some(code), "{cmd}: {}", stderr(&out));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_ragpulse_plan_is_fired_block_for_block_at_the_blocks_own_lengths() {
    let sim = sim(&[]);
    let (dir, doc, blocks) = ragpulse_planned("ragpulse");
    let plan = dir.join("plan");
    let (code, err, r) = fire(&dir, &sim.url, &[]);
    assert_eq!(code, Some(0), "{err}");
    // The receipt holds the blocks the prompts were built from, and says how they were built.
    assert_eq!(r.evidence[block::SIZED_BLOCKS].sha256, hex_sha256(&blocks));
    let named = format!(
        "prompt_tokens=loadproof-sized-blocks/v1 blocks=sha256:{}",
        hex_sha256(&blocks)
    );
    assert!(r.protocol.argv.contains(&named), "{:?}", r.protocol.argv);
    assert!(
        r.notes.iter().any(|n| n.contains("built block for block")),
        "{:?}",
        r.notes
    );
    let audit = common::audit_json(&dir.join("receipt.json"));
    assert_eq!(audit["inconsistencies"], serde_json::json!([]), "{audit}");
    assert_eq!(audit["standings"]["counter_agreement"]["positive"], true);
    // Every prompt is its planned length: blocks plus the tokens no block describes.
    let input = doc["timed_trace"]["input_tokens_total"].as_f64().unwrap();
    assert_eq!(counter_delta(&r, "vllm:prompt_tokens_total"), input);
    let recs = records(&r);
    assert_eq!(recs.len(), 12);
    assert!(recs.iter().all(|rec| rec.disposition == Disposition::Ok));

    // A blocks file edited after planning is refused before anything is fired.
    let text = String::from_utf8(blocks).unwrap();
    std::fs::write(
        plan.join("blocks.jsonl"),
        text.replacen(",437]", ",436]", 1),
    )
    .unwrap();
    let (code, err) = fire_refused(&plan, &sim.url, &dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("blocks.jsonl") && err.contains("plan check"),
        "{err}"
    );
    // plan.json stripped of its blocks file fires nothing (the sharing would silently not be
    // replayed): a RAGPulse source read with its companion files always has one.
    std::fs::write(plan.join("blocks.jsonl"), &text).unwrap();
    let mut stripped = doc.clone();
    stripped.as_object_mut().unwrap().remove("sized_blocks");
    std::fs::write(plan.join("plan.json"), stripped.to_string()).unwrap();
    let (code, err) = fire_refused(&plan, &sim.url, &dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("names no blocks file"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A plan directory's files are fired only as regular files inside it: a blocks file or
/// timed trace that is a symbolic link (to the same bytes, even) is refused by name before
/// anything is fired, and so is a FIFO (reading one would never end).
#[test]
fn a_plan_file_that_is_a_symbolic_link_or_not_a_regular_file_is_refused_by_name() {
    let sim = sim(&[]);
    let (dir, doc, blocks) = ragpulse_planned("symlinked");
    let plan = dir.join("plan");
    let outside = dir.join("blocks-elsewhere.jsonl");
    std::fs::write(&outside, &blocks).unwrap();
    std::fs::remove_file(plan.join("blocks.jsonl")).unwrap();
    std::os::unix::fs::symlink(&outside, plan.join("blocks.jsonl")).unwrap();
    let (code, err) = fire_refused(&plan, &sim.url, &dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("blocks.jsonl") && err.contains("symbolic link"),
        "{err}"
    );
    std::fs::remove_file(plan.join("blocks.jsonl")).unwrap();
    std::fs::write(plan.join("blocks.jsonl"), &blocks).unwrap();
    let trace = plan.join(doc["timed_trace"]["file"].as_str().unwrap());
    std::fs::remove_file(&trace).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&trace)
        .status()
        .unwrap();
    assert!(made.success());
    let (code, err) = fire_refused(&plan, &sim.url, &dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A temporary directory holding a verified plan of RAGPulse's first 12 rows at ×1000; its
/// plan.json and blocks.jsonl.
fn ragpulse_planned(label: &str) -> (PathBuf, serde_json::Value, Vec<u8>) {
    let dir = std::env::temp_dir().join(format!("loadproof-native-{}-{label}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = common::shared("traces/ragpulse/0_trace.first400.jsonl");
    let plan = dir.join("plan");
    let out = loadproof(&[
        "plan",
        s(&trace),
        "--out",
        s(&plan),
        "--max-requests",
        "12",
        "--time-scale",
        "1000",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let blocks = std::fs::read(plan.join("blocks.jsonl")).unwrap();
    assert_eq!(doc["sized_blocks"]["sha256"], hex_sha256(&blocks));
    assert_eq!(doc["sized_blocks"]["lines"], 12);
    (dir, doc, blocks)
}

/// `fire PLAN --engine native` expected to refuse: its exit code and stderr.
fn fire_refused(plan: &Path, url: &str, dir: &Path) -> (Option<i32>, String) {
    let receipt = dir.join("refused.json");
    let out = loadproof(&[
        "fire",
        s(plan),
        "--endpoint",
        url,
        "--engine",
        "native",
        "--out",
        s(&receipt),
    ]);
    (out.status.code(), stderr(&out))
}

/// A native RAGPulse receipt fired at the sim, as editable JSON (`receipt upgrade --form
/// json`), and the directory it sits in.
fn ragpulse_receipt_json(label: &str) -> (PathBuf, serde_json::Value) {
    let sim = sim(&[]);
    let (dir, _, _) = ragpulse_planned(label);
    let (code, err, _) = fire(&dir, &sim.url, &[]);
    assert_eq!(code, Some(0), "{err}");
    let json = dir.join("receipt.v1.json");
    let out = loadproof(&[
        "receipt",
        "upgrade",
        s(&dir.join("receipt.json")),
        "--form",
        "json",
        "--out",
        s(&json),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (dir, v)
}

/// Replaces evidence block `name` with `content`, its digest recomputed (as a forger would).
fn forge_block(v: &mut serde_json::Value, name: &str, content: &str) {
    let e = &mut v["evidence"][name];
    e["content"] = content.into();
    e["sha256"] = hex_sha256(content.as_bytes()).into();
    e["bytes"] = content.len().into();
}

/// One of the audit's inconsistencies says `needle`.
fn assert_named(found: &[String], needle: &str) {
    assert!(
        found.iter().any(|i| i.contains(needle)),
        "{needle:?} not in {found:?}"
    );
}

/// The audit's inconsistencies for receipt JSON `v`, written beside `dir`.
fn inconsistencies_of(dir: &Path, v: &serde_json::Value) -> Vec<String> {
    let path = dir.join("forged.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let audit = common::audit_json(&path);
    audit["inconsistencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_native_receipt_with_its_blocks_file_deleted_is_named() {
    let (dir, mut v) = ragpulse_receipt_json("forge-deleted-blocks");
    v["evidence"]
        .as_object_mut()
        .unwrap()
        .remove(block::SIZED_BLOCKS);
    let found = inconsistencies_of(&dir, &v);
    assert_named(
        &found,
        "the receipt does not embed (plan/blocks.jsonl is absent)",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_receipt_with_its_plan_deleted_is_named_not_left_unchecked() {
    let (dir, mut v) = ragpulse_receipt_json("forge-deleted-plan");
    v["evidence"].as_object_mut().unwrap().remove(block::PLAN);
    let found = inconsistencies_of(&dir, &v);
    assert_named(&found, "the receipt's plan.json is absent");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_embedded_blocks_file_that_says_other_than_its_plan_is_named() {
    let (dir, mut v) = ragpulse_receipt_json("forge-contradicting-blocks");
    // The forger swaps in one empty line and points plan.json at it, digests recomputed: the
    // file's content must still answer to what plan.json says of it.
    let forged = "{\"blocks\":[]}\n";
    forge_block(&mut v, block::SIZED_BLOCKS, forged);
    let mut plan: serde_json::Value =
        serde_json::from_str(v["evidence"][block::PLAN]["content"].as_str().unwrap()).unwrap();
    plan["sized_blocks"]["sha256"] = hex_sha256(forged.as_bytes()).into();
    forge_block(&mut v, block::PLAN, &plan.to_string());
    let found = inconsistencies_of(&dir, &v);
    assert_named(&found, "plan/blocks.jsonl has 1 lines; plan.json says 12");
    assert_named(&found, "plan/blocks.jsonl holds 0 blocks of 0 tokens");
    // Blocks longer than their prompt, by the embedded schedule.
    let mut lines: Vec<String> =
        String::from_utf8(std::fs::read(dir.join("plan/blocks.jsonl")).unwrap())
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
    lines[0] = "{\"blocks\":[[\"sys_prompt\",1,4000000000]]}".to_owned();
    let forged = lines.join("\n") + "\n";
    forge_block(&mut v, block::SIZED_BLOCKS, &forged);
    plan["sized_blocks"]["sha256"] = hex_sha256(forged.as_bytes()).into();
    forge_block(&mut v, block::PLAN, &plan.to_string());
    let found = inconsistencies_of(&dir, &v);
    assert_named(&found, "line 1: its blocks hold more tokens than the");
    let _ = std::fs::remove_dir_all(&dir);
}
