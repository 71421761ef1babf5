//! `loadproof fire --engine native` against `loadproof sim`: every offered request ends with
//! exactly one record, faults become named dispositions, the sim's own counters agree with
//! the records, and Ctrl-C, an unreachable endpoint or a client that fell behind still leave
//! a receipt.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use loadproof_core::receipt::{
    Disposition, Engine, Execution, Interruption, Phase, Receipt, RequestRecord, ScrapeOutcome,
};

mod common;

use common::{FAST, Sim, s, stderr};

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

/// `loadproof sim --port 0` with fast model knobs plus `extra`.
fn sim(extra: &[&str]) -> Sim {
    let args: Vec<&str> = FAST.iter().copied().chain(extra.iter().copied()).collect();
    Sim::start(&args)
}

/// Fires `dir/plan` natively at `url` with `extra` flags; the exit code and the receipt.
fn fire(dir: &Path, url: &str, extra: &[&str]) -> (Option<i32>, String, Receipt) {
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
    let out = loadproof(&args);
    let r = Receipt::from_json(&std::fs::read(&receipt).unwrap_or_else(|e| {
        panic!("no receipt ({e}): {}", stderr(&out));
    }))
    .unwrap();
    (out.status.code(), stderr(&out), r)
}

/// The event log, checked: one record per offered request, in index order.
fn records(r: &Receipt) -> Vec<RequestRecord> {
    assert!(r.verify_evidence().is_empty(), "{:?}", r.verify_evidence());
    let Execution::Native {
        events, offered, ..
    } = &r.execution
    else {
        panic!("{:?}", r.execution);
    };
    let log = String::from_utf8(r.block(events).unwrap()).unwrap();
    let records: Vec<RequestRecord> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len() as u64, *offered);
    for (i, rec) in records.iter().enumerate() {
        assert_eq!(rec.index, i as u64, "one record per request, in order");
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
    let child = Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .args([
            "fire",
            s(&dir.join("plan")),
            "--endpoint",
            &sim.url,
            "--engine",
            "native",
            "--out",
            s(&receipt),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r = Receipt::from_json(&std::fs::read(&receipt).unwrap()).unwrap();
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
    let (code, err, r) = fire(&dir, &sim.url, &["--lag-bound-ms", "0"]);
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
    assert_eq!(lag_bound_ns, 0);
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
