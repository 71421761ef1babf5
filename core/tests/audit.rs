//! The receipt audit, one test per rule of the seed's reviews, on receipts built here and on the
//! real vLLM captures in `../shared/vllm/real-runs/`.

use std::collections::BTreeMap;

use loadproof_core::audit::{AttestationLevel, Audit, Policy, STANDINGS, audit, audit_with};
use loadproof_core::receipt::{
    Axis, Disposition, Engine, Evidence, Execution, ExitStatus, LEASE_ACCOUNT_SCHEMA,
    LEASE_ACCOUNT_SCHEMA_V1, LEASE_SCHEMA, Lease, LeaseAccount, Phase, Protocol, Provenance,
    RECEIPT_SCHEMA, Receipt, RequestRecord, ResultFile, Scrape, ScrapeChain, ScrapeOutcome,
    ScrapeStatement, Stamp, Subject, Usage, block, signed_block_of,
};
use loadproof_core::signing::{SecretKey, Signed};

const URL: &str = "http://127.0.0.1:8000";
const T0_UNIX: i64 = 1_800_000_000_000_000_000;
const MS: i64 = 1_000_000;

mod common;

/// A file of one real capture folder.
fn shared(path: &str) -> Vec<u8> {
    common::shared(&format!("vllm/real-runs/{path}"))
}

fn stamp(mono_ns: i64) -> Stamp {
    Stamp {
        mono_ns,
        unix_ns: T0_UNIX + mono_ns,
    }
}

fn protocol(engine: Engine, requests: u64, cap: Option<u64>) -> Protocol {
    Protocol {
        engine,
        client_version: Some("0.1.0".into()),
        backend: Some("openai".into()),
        endpoint: Some("/v1/completions".into()),
        base_url: Some(URL.into()),
        model: Some("tiny-llama".into()),
        tokenizer: None,
        trace_sha256: Some("a".into()),
        timed_trace_sha256: Some("b".into()),
        plan_sha256: None,
        requests: Some(requests),
        chunk_size: Some(16),
        sec_multiplier: Some("0.001".into()),
        arrival: Some("self_timed".into()),
        ignore_eos: Some(true),
        max_concurrency: Some(cap.unwrap_or(0)),
        python_hash_seed: None,
        sampling: BTreeMap::new(),
        argv: vec!["loadproof".into()],
        tls: None,
        key: String::new(),
    }
    .sealed()
}

fn known(v: &str) -> Axis {
    Axis::Known {
        value: v.into(),
        source: "caller".into(),
    }
}

fn full_subject() -> Subject {
    Subject {
        model: known("tiny-llama"),
        model_revision: known("rev-1"),
        gpu_sku: known("none"),
        engine: known("vllm"),
        engine_version: known("0.32.0"),
        knobs: BTreeMap::new(),
        simulator: false,
    }
}

/// A vLLM-shaped exposition with the counters and gauges the audit reads.
fn metrics(
    generation: &str,
    prompt: &str,
    running: u64,
    waiting: u64,
    preempt: u64,
    start: &str,
) -> String {
    format!(
        "# HELP process_start_time_seconds Start time.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {start}\n\
# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{engine=\"0\",model_name=\"tiny-llama\"}} {running}.0\n\
# HELP vllm:num_requests_waiting Waiting.\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{engine=\"0\",model_name=\"tiny-llama\"}} {waiting}.0\n\
# HELP vllm:kv_cache_usage_perc KV.\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{{engine=\"0\",model_name=\"tiny-llama\"}} 0.25\n\
# HELP vllm:num_preemptions_total Preemptions.\n# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{{engine=\"0\",model_name=\"tiny-llama\"}} {preempt}.0\n\
# HELP vllm:prompt_tokens_total Prompt.\n# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{{engine=\"0\",model_name=\"tiny-llama\"}} {prompt}\n\
# HELP vllm:generation_tokens_total Generation.\n# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{engine=\"0\",model_name=\"tiny-llama\"}} {generation}\n{GATE_LINES}"
    )
}

/// What a `loadproof gate` in front of the server appends: its operator's statement of the
/// revision and GPU, and the lease that holds (`lease-1`, the one [`lease`] builds).
const GATE_LINES: &str = "# TYPE loadproof_gate_info gauge\nloadproof_gate_info{gpu_sku=\"none\",model_revision=\"rev-1\",upstream=\"http://127.0.0.1:9\",version=\"0.1.0\"} 1\n# TYPE loadproof_gate_lease_active gauge\nloadproof_gate_lease_active{lease_id=\"lease-1\"} 1\n";

/// `GET /version` as vLLM answers it: the engine version the audit reads back.
const VERSION_BODY: &str = r#"{"version":"0.32.0"}"#;

/// A request that completed: sent at `sent_ms`, ended at `end_ms`, `out` tokens in `out` chunks.
fn ok(index: u64, sent_ms: i64, end_ms: i64, prompt: u64, out: u64) -> RequestRecord {
    let (sent, end) = (sent_ms * MS, end_ms * MS);
    let step = (end - sent) / (out as i64 + 1);
    let chunks: Vec<i64> = (1..=out as i64).map(|k| sent + k * step).collect();
    RequestRecord {
        index,
        scheduled_ns: sent,
        sent_ns: Some(sent),
        first_token_ns: chunks.first().copied(),
        chunks_ns: chunks,
        end_ns: Some(end),
        prompt_tokens: prompt as u32,
        max_tokens: out as u32,
        usage: Some(Usage {
            prompt_tokens: prompt,
            completion_tokens: out,
        }),
        disposition: Disposition::Ok,
    }
}

struct Native {
    records: Vec<RequestRecord>,
    offered: u64,
    cap: Option<u64>,
    /// (phase, at ms, body)
    scrapes: Vec<(Phase, i64, Option<String>)>,
    lease: Option<Lease>,
    /// The seed of the key the lessor signs the lease with (none: unsigned).
    lessor_key: Option<u8>,
    /// The seed of the key the lessor signs each scrape body's statement with, and the lease
    /// the statements name (none: unsigned).
    scrape_key: Option<(u8, &'static str)>,
    /// The seed of the key the lessor signs its account with, the lease it names and the
    /// requests it admitted (none: no account).
    account: Option<(u8, &'static str, u64)>,
    /// The tokens the account states: prompt, completion, uncounted requests (none: a v1
    /// account, as lessors wrote before they counted tokens).
    account_tokens: Option<(u64, u64, u64)>,
    subject: Subject,
    end_ms: i64,
}

impl Native {
    /// Four requests of 10 prompt / 5 output tokens over 1.5 s, scraped every 250 ms, agreeing
    /// counters, a full subject and a lease: the positive path.
    fn positive() -> Native {
        let records = vec![
            ok(0, 50, 800, 10, 5),
            ok(1, 60, 790, 10, 5),
            ok(2, 810, 1400, 10, 5),
            ok(3, 820, 1390, 10, 5),
        ];
        let mut scrapes = vec![(
            Phase::Before,
            0,
            Some(metrics("100.0", "1000.0", 0, 0, 0, "1.79594033677e+09")),
        )];
        for t in (250..1500).step_by(250) {
            scrapes.push((
                Phase::During,
                t,
                Some(metrics("100.0", "1000.0", 2, 0, 0, "1.79594033677e+09")),
            ));
        }
        scrapes.push((
            Phase::After,
            1500,
            Some(metrics("120.0", "1040.0", 0, 0, 0, "1.79594033677e+09")),
        ));
        Native {
            records,
            offered: 4,
            cap: None,
            scrapes,
            // As a gate binds it: the subject it read back from the upstream at grant time.
            lease: Some(lease(
                &[
                    ("model", "tiny-llama"),
                    ("engine", "vllm"),
                    ("engine_version", "0.32.0"),
                ],
                URL,
            )),
            lessor_key: None,
            scrape_key: None,
            account: None,
            account_tokens: None,
            subject: full_subject(),
            end_ms: 1500,
        }
    }

    fn receipt(&self) -> Receipt {
        let mut evidence = BTreeMap::new();
        let log: String = self
            .records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        evidence.insert(block::EVENTS.to_owned(), Evidence::of(log.as_bytes()));
        let mut scrapes = Vec::new();
        let mut served = 0;
        let mut chain = ScrapeChain::default();
        for (i, (phase, at, body)) in self.scrapes.iter().enumerate() {
            let outcome = match body {
                Some(b) => {
                    let name = format!("metrics/{i}");
                    evidence.insert(name.clone(), Evidence::of(b.as_bytes()));
                    if let Some((seed, lease_id)) = self.scrape_key {
                        // Every body went to the lease's holder: the lessor's numbers run
                        // with the bodies served.
                        let statement = ScrapeStatement::of(
                            "/metrics",
                            b.as_bytes(),
                            Some(lease_id.to_owned()),
                            T0_UNIX + at * MS,
                            Some(served),
                        );
                        served += 1;
                        let signed =
                            Signed::sign(&SecretKey::from_seed([seed; 32]), &statement.to_bytes());
                        chain.push(&statement.to_bytes(), &signed.signature_bytes());
                        evidence.insert(
                            signed_block_of(&name),
                            Evidence::of(signed.to_json().as_bytes()),
                        );
                    }
                    ScrapeOutcome::Response {
                        status: Some(200),
                        body: name,
                    }
                }
                None => ScrapeOutcome::Failed {
                    error: "connection refused".into(),
                },
            };
            scrapes.push(Scrape {
                url: format!("{URL}/metrics"),
                phase: *phase,
                requested: Some(stamp(at * MS)),
                completed_mono_ns: Some(at * MS + MS),
                outcome,
                exporter: Default::default(),
            });
        }
        let lease = self.lease.as_ref().map(|l| {
            let bytes = serde_json::to_string(l).unwrap();
            evidence.insert(block::LEASE.to_owned(), Evidence::of(bytes.as_bytes()));
            if let Some(seed) = self.lessor_key {
                let signed = Signed::sign(&SecretKey::from_seed([seed; 32]), bytes.as_bytes());
                evidence.insert(
                    block::LEASE_SIGNED.to_owned(),
                    Evidence::of(signed.to_json().as_bytes()),
                );
            }
            if let Some((seed, lease_id, requests)) = self.account {
                let tokens = self.account_tokens;
                let account = LeaseAccount {
                    schema: if tokens.is_some() {
                        LEASE_ACCOUNT_SCHEMA
                    } else {
                        LEASE_ACCOUNT_SCHEMA_V1
                    }
                    .into(),
                    lease_id: lease_id.into(),
                    from_unix_ns: l.from_unix_ns,
                    closed_unix_ns: T0_UNIX + self.end_ms * MS,
                    requests,
                    prompt_tokens: tokens.map(|t| t.0),
                    completion_tokens: tokens.map(|t| t.1),
                    uncounted_requests: tokens.map(|t| t.2),
                    scrapes: tokens.map(|_| served),
                    scrape_chain: tokens.map(|_| chain.hex()),
                };
                let signed = Signed::sign(&SecretKey::from_seed([seed; 32]), &account.to_bytes());
                evidence.insert(
                    block::LEASE_ACCOUNT_SIGNED.to_owned(),
                    Evidence::of(signed.to_json().as_bytes()),
                );
            }
            block::LEASE.to_owned()
        });
        evidence.insert(
            block::VERSION.to_owned(),
            Evidence::of(VERSION_BODY.as_bytes()),
        );
        Receipt {
            schema: RECEIPT_SCHEMA.into(),
            protocol: protocol(Engine::Native, self.offered, self.cap),
            subject: self.subject.clone(),
            provenance: provenance(),
            execution: Execution::Native {
                events: block::EVENTS.into(),
                offered: self.offered,
                started: stamp(0),
                ended: stamp(self.end_ms * MS),
                interrupted: None,
                lag_bound_ns: 5 * MS,
            },
            scrapes,
            evidence,
            notes: vec![],
            lease,
            implementation: Some(loadproof_core::receipt::Implementation {
                name: "loadproof native".into(),
                version: Some("0.1.0".into()),
                source: Some("/bin/loadproof".into()),
                source_sha256: Some("ab".repeat(32)),
                unbound: None,
            }),
            derived: None,
            stream: None,
            packed: Default::default(),
        }
        .with_capture()
    }

    fn audit(&self) -> Audit {
        audit(&self.receipt())
    }

    /// [`Native::positive`] with its lease and every scrape body signed by the key of `seed`.
    /// Signed by the lessor with key `seed`: its lease, its numbered scrape statements and
    /// its account of the lease (4 requests admitted, 40 + 20 tokens counted: the client's).
    fn signed(seed: u8) -> Native {
        let mut n = Native::positive();
        n.lessor_key = Some(seed);
        n.scrape_key = Some((seed, "lease-1"));
        n.account = Some((seed, "lease-1", 4));
        n.account_tokens = Some((40, 20, 0));
        n
    }
}

fn lease(subject: &[(&str, &str)], route: &str) -> Lease {
    Lease {
        schema: LEASE_SCHEMA.into(),
        id: "lease-1".into(),
        issuer: "test lessor".into(),
        holder: "test".into(),
        route: route.into(),
        subject: subject
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
        from_unix_ns: T0_UNIX - 1,
        until_unix_ns: T0_UNIX + 10_000 * MS,
        exclusion: "requests without the token are refused with 423".into(),
        token: None,
        token_sha256: None,
        readback: Some("loadproof_gate_lease_active".into()),
    }
}

fn provenance() -> Provenance {
    Provenance {
        source: "fire".into(),
        generator: "test".into(),
        command: vec![],
        caller: BTreeMap::new(),
        written_unix_ns: 0,
    }
}

/// Asserts one of `a`'s inconsistencies contains `part`.
#[track_caller]
fn assert_names(a: &Audit, part: &str) {
    assert!(
        a.inconsistencies.iter().any(|i| i.contains(part)),
        "no inconsistency names {part:?}: {:?}",
        a.inconsistencies
    );
}

fn standing(a: &Audit, name: &str) -> (bool, String) {
    let s = &a.standings[name];
    (s.positive, s.reason.clone())
}

#[test]
fn the_positive_path_is_reachable() {
    let a = Native::positive().audit();
    assert!(a.qualified, "{:#?}", a.refusals);
    assert!(a.captured);
    for name in STANDINGS {
        assert!(
            a.standings[name].positive,
            "{name}: {}",
            a.standings[name].reason
        );
    }
    let c = a.client.as_ref().unwrap();
    assert_eq!((c.output_tokens, c.input_tokens), (20, 40));
    assert_eq!(a.engine.generation_tokens_delta, Some(20));
    assert_eq!(a.foreign_work.surplus_tokens, Some(0));
    // the client's own interval: first send (50 ms) → last end (1400 ms)
    assert!((c.duration_s - 1.35).abs() < 1e-9);
}

#[test]
fn over_time_slices_the_latency_population_on_the_scrapes_clock() {
    let a = Native::positive().audit();
    let o = a.over_time.as_ref().expect("a native population is sliced");
    let e2el = a.latency.iter().find(|l| l.metric == "e2el").unwrap();
    assert_eq!(Some(o.requests), e2el.count);
    assert!(o.on_run_clock, "{}", o.axis);
    assert!(o.slices.len() <= loadproof_core::audit::MAX_SLICES);
    assert_eq!(o.slices.iter().map(|s| s.started).sum::<u64>(), o.requests);
    let tokens: f64 = o.slices.iter().map(|s| s.output_tokens).sum();
    let client = a.client.as_ref().unwrap();
    assert!((tokens - client.output_tokens as f64).abs() < 1e-9);
    // The whole JSON round-trips (nothing NaN, nothing lost).
    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(serde_json::from_str::<Audit>(&json).unwrap(), a);
}

#[test]
fn over_time_of_vllm_bench_counts_from_the_first_send() {
    let a = audit(&vllm_cpu(0));
    let o = a
        .over_time
        .as_ref()
        .expect("the result JSON keeps start_times");
    assert!(!o.on_run_clock);
    assert_eq!(o.start_s, 0.0);
    assert_eq!(o.requests, 20);
    assert_eq!(o.slices.len(), 20);
    let tokens: f64 = o.slices.iter().map(|s| s.output_tokens).sum();
    assert!((tokens - 330.0).abs() < 1e-9, "{tokens}");
}

#[test]
fn the_verdict_is_one_line_naming_the_qualification() {
    let mut a = Native::positive().audit();
    assert!(a.qualified && !a.simulator);
    assert_eq!(
        a.verdict(),
        "QUALIFIED: every standing is positive, self-attested"
    );
    a.simulator = true;
    assert_eq!(
        a.verdict(),
        "QUALIFIED (of loadproof sim, a simulator): every standing is positive, self-attested"
    );
    a.qualified = false;
    a.refusals = vec!["one".to_owned(), "two".to_owned()];
    assert_eq!(a.verdict(), "UNQUALIFIED: 2 refusals");
}

#[test]
fn cap_2_peak_4_foreign_0_the_bucket_peak_is_not_engine_concurrency() {
    let mut n = Native::positive();
    n.cap = Some(2);
    let a = n.audit();
    let c = a.concurrency.as_ref().unwrap();
    assert_eq!(c.successful_client_second_bucket_peak, Some(4));
    assert_eq!(c.exact_client_peak, Some(2));
    assert_eq!(a.foreign_work.surplus_tokens, Some(0));
    assert!(!a.foreign_work.contradiction);
    assert!(a.qualified, "{:#?}", a.refusals);
}

#[test]
fn the_itl_tail_is_observed_with_cause_unestablished() {
    let mut n = Native::positive();
    let r = &mut n.records[0];
    r.chunks_ns = vec![60 * MS, 61 * MS, 62 * MS, 63 * MS, 700 * MS];
    let a = n.audit();
    let tail = a.itl_tail.unwrap();
    assert_eq!(tail.cause, "unestablished");
    assert!(tail.ratio.is_some_and(|r| r > 2.0));
    assert!(
        !serde_json::to_string(&a.standings)
            .unwrap()
            .contains("contention")
    );
}

fn vllm_cpu(exit: i32) -> Receipt {
    capture("vllm-cpu", exit)
}

/// A receipt of one real capture folder, as `receipt import` builds it.
fn capture(dir: &str, exit: i32) -> Receipt {
    let mut evidence = BTreeMap::new();
    evidence.insert(
        block::STDOUT.into(),
        Evidence::of(&shared(&format!("{dir}/bench_stdout.txt"))),
    );
    evidence.insert(
        block::STDERR.into(),
        Evidence::of(&shared(&format!("{dir}/bench_stderr.txt"))),
    );
    evidence.insert(
        block::RESULT.into(),
        Evidence::of(&shared(&format!("{dir}/result.json"))),
    );
    let metrics = dir != "stub-client";
    if metrics {
        evidence.insert(
            "metrics/0".into(),
            Evidence::of(&shared(&format!("{dir}/metrics_before.txt"))),
        );
        evidence.insert(
            "metrics/1".into(),
            Evidence::of(&shared(&format!("{dir}/metrics_after.txt"))),
        );
    }
    let scrape = |phase, body: &str| Scrape {
        url: format!("{URL}/metrics"),
        phase,
        requested: None,
        completed_mono_ns: None,
        outcome: ScrapeOutcome::Response {
            status: None,
            body: body.into(),
        },
        exporter: Default::default(),
    };
    let mut p = protocol(Engine::VllmBenchServe, 20, None);
    p.max_concurrency = None;
    Receipt {
        schema: RECEIPT_SCHEMA.into(),
        protocol: p.sealed(),
        subject: full_subject(),
        provenance: provenance(),
        execution: Execution::Ran {
            program: "vllm".into(),
            argv: vec![],
            env: BTreeMap::new(),
            exit: ExitStatus {
                code: Some(exit),
                signal: None,
            },
            stdout: block::STDOUT.into(),
            stderr: block::STDERR.into(),
            result: ResultFile::Kept {
                block: block::RESULT.into(),
            },
            started: None,
            ended: None,
            interrupted: None,
        },
        scrapes: if metrics {
            vec![
                scrape(Phase::Before, "metrics/0"),
                scrape(Phase::After, "metrics/1"),
            ]
        } else {
            vec![]
        },
        evidence,
        notes: vec![],
        lease: None,
        implementation: None,
        derived: None,
        stream: None,
        packed: Default::default(),
    }
}

/// A bench process that exited 0 with stdout and stderr kept but no result JSON.
fn ran_without_result(reason: &str) -> Execution {
    Execution::Ran {
        program: "vllm".into(),
        argv: vec![],
        env: BTreeMap::new(),
        exit: ExitStatus {
            code: Some(0),
            signal: None,
        },
        stdout: block::STDOUT.into(),
        stderr: block::STDERR.into(),
        result: ResultFile::Absent {
            reason: reason.into(),
        },
        started: None,
        ended: None,
        interrupted: None,
    }
}

#[test]
fn the_real_vllm_cpu_capture_audits_to_its_true_numbers() {
    let a = audit(&vllm_cpu(0));
    assert!(a.digests_ok && a.captured, "{:?}", a.execution_gate);
    let l = a.ledger.as_ref().unwrap();
    assert_eq!((l.offered, l.completed, l.failed), (Some(20), 20, Some(0)));
    assert!(!l.aggregate, "the result JSON has per-request arrays");
    let c = a.client.as_ref().unwrap();
    assert_eq!((c.output_tokens, c.input_tokens), (330, 2279));
    assert!((c.duration_s - 4.78794695900001).abs() < 1e-12);
    assert_eq!(a.engine.generation_tokens_delta, Some(338));
    assert_eq!(a.engine.prompt_tokens_delta, Some(2283));
    assert!(a.engine.continuous, "{}", a.engine.reason);
    assert_eq!(a.foreign_work.surplus_tokens, Some(8));
    assert_eq!(a.foreign_work.prompt_surplus_tokens, Some(4));
    let (pos, reason) = standing(&a, "counter_agreement");
    assert!(!pos && reason.contains("8"), "{reason}");
    assert_eq!(
        a.concurrency
            .as_ref()
            .unwrap()
            .successful_client_second_bucket_peak,
        Some(11)
    );
    assert!(!a.qualified);
    // an import: no series, no lease, no send-time join, no implementation digest
    for name in ["window", "occupancy", "implementation", "arrival"] {
        assert!(!a.standings[name].positive, "{name}");
    }
    assert!(standing(&a, "occupancy").1.contains("boundary only"));
}

#[test]
fn the_other_real_captures_audit_to_their_true_numbers() {
    // prefix run: the counters moved by exactly this run (its before-scrape is the previous
    // run's after-scrape, same incarnation)
    let a = audit(&capture("vllm-cpu-prefix", 0));
    let c = a.client.as_ref().unwrap();
    assert_eq!((c.output_tokens, c.input_tokens), (304, 9651));
    assert_eq!(a.engine.generation_tokens_delta, Some(304));
    assert_eq!(a.engine.prompt_tokens_delta, Some(9651));
    assert_eq!(a.foreign_work.surplus_tokens, Some(0));
    assert!(a.standings["counter_agreement"].positive);
    assert_eq!(
        a.concurrency
            .as_ref()
            .unwrap()
            .successful_client_second_bucket_peak,
        Some(8)
    );
    // the stub-client run: no scrapes, so no engine facts and no agreement — unread, not zero
    let a = audit(&capture("stub-client", 0));
    let l = a.ledger.as_ref().unwrap();
    assert_eq!((l.completed, l.failed), (20, Some(0)));
    assert_eq!(a.client.as_ref().unwrap().output_tokens, 330);
    assert_eq!(a.engine.generation_tokens_delta, None);
    assert_eq!(a.foreign_work.surplus_tokens, None);
    assert!(!a.foreign_work.contradiction);
    assert!(!a.standings["counter_agreement"].positive);
}

#[test]
fn exit_nonzero_with_success_looking_stdout_yields_no_client_facts() {
    let a = audit(&vllm_cpu(1));
    assert!(!a.execution_gate.read);
    assert!(a.execution_gate.reason.contains("exit code 1"));
    assert!(a.ledger.is_none() && a.client.is_none() && a.latency.is_empty());
    assert!(!a.captured && !a.qualified);
}

#[test]
fn unreachable_with_retained_text_yields_no_client_facts() {
    let mut r = vllm_cpu(0);
    r.execution = Execution::Unreachable {
        url: URL.into(),
        cause: "connection refused".into(),
    };
    let a = audit(&r);
    assert!(!a.execution_gate.read);
    assert!(a.ledger.is_none() && a.client.is_none());
    assert!(!a.captured);
}

#[test]
fn stderr_containing_a_summary_is_not_parsed() {
    let mut r = vllm_cpu(0);
    let summary = shared("vllm-cpu/bench_stdout.txt");
    r.evidence
        .insert(block::STDERR.into(), Evidence::of(&summary));
    r.evidence.insert(
        block::STDOUT.into(),
        Evidence::of(b"Starting main benchmark run...\n"),
    );
    r.execution = ran_without_result("none");
    let a = audit(&r);
    assert!(!a.execution_gate.read, "{:?}", a.execution_gate);
    assert!(a.client.is_none());
}

#[test]
fn mixing_run_a_stdout_with_run_b_result_is_refused() {
    let mut r = vllm_cpu(0);
    r.evidence.insert(
        block::RESULT.into(),
        Evidence::of(&shared("vllm-cpu-prefix/result.json")),
    );
    let a = audit(&r);
    assert!(!a.execution_gate.read);
    assert!(a.client.is_none());
    assert_names(&a, "not one run's");
}

#[test]
fn mixing_run_a_stdout_with_run_b_metrics_is_refused() {
    let mut r = vllm_cpu(0);
    r.evidence.insert(
        "metrics/0".into(),
        Evidence::of(&shared("vllm-cpu-prefix/metrics_before.txt")),
    );
    r.evidence.insert(
        "metrics/1".into(),
        Evidence::of(&shared("vllm-cpu-prefix/metrics_after.txt")),
    );
    let a = audit(&r);
    assert!(a.digests_ok);
    let (pos, reason) = standing(&a, "counter_agreement");
    assert!(!pos, "{reason}");
    assert!(!a.qualified);
}

#[test]
fn truncated_stdout_fails_replay() {
    let mut r = vllm_cpu(0);
    let full = shared("vllm-cpu/bench_stdout.txt");
    let cut = &full[..full.len() - 80];
    r.evidence.insert(block::STDOUT.into(), Evidence::of(cut));
    let a = audit(&r);
    assert!(!a.execution_gate.read);
    assert!(
        a.execution_gate.reason.to_lowercase().contains("trunc"),
        "{}",
        a.execution_gate.reason
    );
}

#[test]
fn an_unread_after_scrape_is_not_a_sample() {
    let mut n = Native::positive();
    n.scrapes.last_mut().unwrap().2 = None;
    let a = n.audit();
    assert_eq!(a.engine.generation_tokens_delta, None);
    assert!(
        a.engine.reason.contains("after-scrape"),
        "{}",
        a.engine.reason
    );
    assert!(!a.standings["counter_agreement"].positive);
    assert!(!a.standings["continuity"].positive);
    assert!(!a.qualified);
}

#[test]
fn two_boundary_scrapes_are_boundary_only() {
    let mut n = Native::positive();
    n.scrapes.retain(|s| s.0 != Phase::During);
    let a = n.audit();
    assert!(a.occupancy.boundary_only);
    let (pos, reason) = standing(&a, "occupancy");
    assert!(!pos && reason.contains("boundary only"), "{reason}");
}

#[test]
fn a_counter_reset_across_a_restart_is_refused() {
    let mut n = Native::positive();
    let last = n.scrapes.len() - 1;
    n.scrapes[last].2 = Some(metrics("20.0", "40.0", 0, 0, 0, "1.79594099e+09"));
    let a = n.audit();
    assert!(!a.engine.continuous);
    assert_eq!(a.engine.generation_tokens_delta, None);
    assert!(a.engine.reason.contains("restart"), "{}", a.engine.reason);
    // without process_start_time_seconds: reset detection on the counters themselves
    let mut n = Native::positive();
    for s in &mut n.scrapes {
        if let Some(b) = &mut s.2 {
            *b = b.lines().skip(3).collect::<Vec<_>>().join("\n") + "\n";
        }
    }
    n.scrapes[last].2 = Some(
        metrics("20.0", "40.0", 0, 0, 0, "1")
            .lines()
            .skip(3)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    );
    let a = n.audit();
    assert!(!a.engine.continuous, "{}", a.engine.reason);
    assert!(!a.standings["continuity"].positive);
}

#[test]
fn a_fraction_of_a_token_is_refused_as_precision_loss() {
    let mut n = Native::positive();
    let last = n.scrapes.len() - 1;
    n.scrapes[last].2 = Some(metrics("120.0005", "1040.0", 0, 0, 0, "1.79594033677e+09"));
    let a = n.audit();
    assert_eq!(a.engine.generation_tokens_delta, None);
    assert!(a.engine.reason.contains("refused"), "{}", a.engine.reason);
    // the same number spelled with a trailing zero is exact
    n.scrapes[last].2 = Some(metrics("120.000", "1040.0", 0, 0, 0, "1.79594033677e+09"));
    assert_eq!(n.audit().engine.generation_tokens_delta, Some(20));
}

#[test]
fn client_above_engine_is_a_contradiction_never_zero_foreign_work() {
    let mut n = Native::positive();
    let last = n.scrapes.len() - 1;
    n.scrapes[last].2 = Some(metrics("110.0", "1040.0", 0, 0, 0, "1.79594033677e+09"));
    let a = n.audit();
    assert!(a.foreign_work.contradiction);
    assert_eq!(a.foreign_work.surplus_tokens, None);
    assert!(!a.standings["counter_agreement"].positive);
}

#[test]
fn a_closed_ledger_of_3_completed_and_1_failed_before_tokens_of_4_is_unqualified() {
    let mut n = Native::positive();
    let r = &mut n.records[3];
    r.disposition = Disposition::Http {
        status: 500,
        body: "boom".into(),
    };
    r.first_token_ns = None;
    r.chunks_ns.clear();
    r.usage = None;
    let last = n.scrapes.len() - 1;
    n.scrapes[last].2 = Some(metrics("115.0", "1030.0", 0, 0, 0, "1.79594033677e+09"));
    let a = n.audit();
    let l = a.ledger.as_ref().unwrap();
    assert!(l.closed);
    assert_eq!(
        (l.completed, l.failed, l.failed_after_tokens),
        (3, Some(1), Some(0))
    );
    assert!(!a.standings["ledger"].positive);
    assert!(!a.qualified);
}

#[test]
fn a_generic_lease_or_one_for_another_subject_or_route_does_not_isolate() {
    let mut n = Native::positive();
    n.lease = None;
    assert!(
        standing(&n.audit(), "window")
            .1
            .contains("isolation not established")
    );
    n.lease = Some(lease(&[], URL));
    assert!(standing(&n.audit(), "window").1.contains("generic"));
    n.lease = Some(lease(&[("model", "other-model")], URL));
    assert!(standing(&n.audit(), "window").1.contains("another subject"));
    n.lease = Some(lease(&[("model", "tiny-llama")], "http://10.0.0.9:8000"));
    assert!(standing(&n.audit(), "window").1.contains("protects"));
    let mut short = lease(&[("model", "tiny-llama")], URL);
    short.until_unix_ns = T0_UNIX + 100 * MS;
    n.lease = Some(short);
    assert!(standing(&n.audit(), "window").1.contains("does not cover"));
}

#[test]
fn protocol_keys_differ_when_any_work_changing_field_differs() {
    let p = protocol(Engine::Native, 4, None);
    let mut value = serde_json::to_value(&p).unwrap();
    let fields: Vec<String> = value
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "key")
        .cloned()
        .collect();
    assert!(fields.len() >= 19);
    for f in fields {
        let original = value[&f].clone();
        value[&f] = match &original {
            _ if f == "engine" => serde_json::json!("vllm_bench_serve"),
            serde_json::Value::String(s) => serde_json::json!(format!("{s}x")),
            serde_json::Value::Number(n) => serde_json::json!(n.as_u64().unwrap_or(0) + 1),
            serde_json::Value::Bool(b) => serde_json::json!(!b),
            serde_json::Value::Null => serde_json::json!("1"),
            serde_json::Value::Array(_) => serde_json::json!(["other"]),
            serde_json::Value::Object(_) => serde_json::json!({"temperature": "0"}),
        };
        let changed: Protocol =
            serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_ne!(changed.canonical_key(), p.key, "{f} is not in the key");
        value[&f] = original;
    }
}

#[test]
fn a_byte_flipped_in_any_evidence_block_fails_naming_it() {
    for receipt in [Native::positive().receipt(), vllm_cpu(0)] {
        let names: Vec<String> = receipt.evidence.keys().cloned().collect();
        for name in names {
            let mut r = receipt.clone();
            let e = r.evidence.get_mut(&name).unwrap();
            let mut chars: Vec<char> = e.content.chars().collect();
            let i = chars.len() / 2;
            chars[i] = if chars[i] == '1' { '2' } else { '1' };
            e.content = chars.into_iter().collect();
            let a = audit(&r);
            assert!(!a.digests_ok, "{name}");
            let bad: Vec<&str> = a
                .digests
                .iter()
                .filter(|d| !d.ok)
                .map(|d| d.block.as_str())
                .collect();
            assert_eq!(bad, [name.as_str()]);
            assert!(!a.qualified);
            assert!(
                a.refusals.iter().any(|r| r.contains(&format!("{name:?}"))),
                "{:?}",
                a.refusals
            );
        }
    }
}

#[test]
fn send_all_or_a_rate_is_a_declaration_not_an_observation() {
    let a = audit(&{
        let mut r = vllm_cpu(0);
        r.evidence.insert(
            block::RESULT.into(),
            Evidence::of(&shared("vllm-0.28.0-mooncake40/result.json")),
        );
        r.execution = ran_without_result("not kept");
        r
    });
    let arrival = a.arrival.as_ref().unwrap();
    assert!(!arrival.observed);
    let (pos, reason) = standing(&a, "arrival");
    assert!(!pos && reason.contains("declared"), "{reason}");
    assert!(a.ledger.as_ref().unwrap().aggregate);
}

#[test]
fn occupancy_above_the_cap_waiting_or_preempting_refuses() {
    let at = |running, waiting, preempt| {
        let mut n = Native::positive();
        n.cap = Some(2);
        for s in &mut n.scrapes {
            if s.0 == Phase::During {
                s.2 = Some(metrics(
                    "100.0",
                    "1000.0",
                    running,
                    waiting,
                    0,
                    "1.79594033677e+09",
                ));
            }
        }
        let last = n.scrapes.len() - 1;
        n.scrapes[last].2 = Some(metrics(
            "120.0",
            "1040.0",
            0,
            0,
            preempt,
            "1.79594033677e+09",
        ));
        standing(&n.audit(), "occupancy")
    };
    assert!(at(2, 0, 0).0);
    let (pos, reason) = at(3, 0, 0);
    assert!(!pos, "{reason}");
    let (pos, reason) = at(1, 1, 0);
    assert!(!pos && reason.contains("waited"), "{reason}");
    let (pos, reason) = at(2, 0, 1);
    assert!(!pos && reason.contains("preemption"), "{reason}");
}

#[test]
fn waiting_in_one_isolated_scrape_is_an_observation_and_a_queue_across_two_refuses() {
    // Which during-run scrapes report one request waiting.
    let with_waiting = |waiting_at: &[usize]| {
        let mut n = Native::positive();
        let mut i = 0;
        for s in &mut n.scrapes {
            if s.0 == Phase::During {
                let waiting = u64::from(waiting_at.contains(&i));
                s.2 = Some(metrics(
                    "100.0",
                    "1000.0",
                    1,
                    waiting,
                    0,
                    "1.79594033677e+09",
                ));
                i += 1;
            }
        }
        assert!(
            i >= 3,
            "the fixture needs three during-run scrapes, has {i}"
        );
        n.audit()
    };
    let a = with_waiting(&[0]);
    assert_eq!(a.occupancy.waiting_samples, 1);
    assert_eq!(a.occupancy.waiting_longest_run, 1);
    let (pos, reason) = standing(&a, "occupancy");
    assert!(pos && reason.contains("isolated"), "{reason}");
    let a = with_waiting(&[0, 2]);
    assert_eq!(a.occupancy.waiting_longest_run, 1);
    assert!(standing(&a, "occupancy").0);
    let a = with_waiting(&[0, 1]);
    assert_eq!(a.occupancy.waiting_longest_run, 2);
    let (pos, reason) = standing(&a, "occupancy");
    assert!(!pos && reason.contains("2 consecutive scrapes"), "{reason}");
}

#[test]
fn a_derived_number_that_differs_from_the_evidence_marks_the_receipt_inconsistent() {
    let n = Native::positive();
    let mut r = n.receipt();
    let honest = audit(&r).derived();
    r.derived = Some(honest.clone());
    assert!(audit(&r).qualified);
    let mut lie = honest;
    lie["client"]["output_tokens"] = serde_json::json!(21);
    r.derived = Some(lie);
    let a = audit(&r);
    assert!(!a.qualified);
    assert_names(&a, "derived.client.output_tokens");
}

#[test]
fn an_edited_protocol_is_inconsistent() {
    let mut r = Native::positive().receipt();
    r.protocol.requests = Some(5);
    let a = audit(&r);
    assert!(a.inconsistencies.iter().any(|i| i.contains("protocol key")));
    assert!(!a.qualified);
}

#[test]
fn the_project_fixture_receipt_fired_at_the_sim_qualifies() {
    let r = Receipt::from_json(include_bytes!("data/receipt/native_sim.json")).unwrap();
    let a = audit(&r);
    assert!(a.qualified, "{:#?}", a.refusals);
    assert!(a.simulator);
    assert_eq!(a.ledger.as_ref().unwrap().completed, 3);
    // fire wrote its audit's numbers as `derived`: they are what the audit recomputes
    assert_eq!(r.derived.as_ref(), Some(&a.derived()));
}

#[test]
fn a_vllm_format_run_with_one_failure_before_tokens_is_captured_but_unqualified() {
    let mut r = vllm_cpu(0);
    r.evidence.insert(
        block::STDOUT.into(),
        Evidence::of(include_bytes!("data/bench/stdout.txt")),
    );
    r.evidence.insert(
        block::RESULT.into(),
        Evidence::of(include_bytes!("data/bench/result.json")),
    );
    r.protocol.requests = Some(4);
    r.protocol = r.protocol.clone().sealed();
    let a = audit(&r);
    assert!(a.captured, "{:?}", a.execution_gate);
    let l = a.ledger.as_ref().unwrap();
    assert!(l.closed && !l.aggregate);
    assert_eq!(
        (l.completed, l.failed, l.failed_after_tokens),
        (3, Some(1), Some(0))
    );
    let (pos, reason) = standing(&a, "ledger");
    assert!(!pos && reason.contains("1 of 4 failed"), "{reason}");
}

#[test]
fn vllm_send_times_are_joined_to_the_embedded_schedule() {
    let mut r = vllm_cpu(0);
    let trace = shared("vllm-cpu/trace.jsonl");
    let e = Evidence::of(&trace);
    r.protocol.timed_trace_sha256 = Some(e.sha256.clone());
    r.protocol = r.protocol.clone().sealed();
    r.evidence.insert(block::TIMED_TRACE.into(), e);
    let a = audit(&r);
    let arrival = a.arrival.as_ref().unwrap();
    assert!(
        arrival
            .source
            .contains("joined to the embedded timed_trace"),
        "{}",
        arrival.source
    );
    assert_eq!(arrival.sent, 20);
    let max = arrival.lag_max_ms.unwrap();
    assert!(max < 10.0, "{max}");
    assert!(
        a.standings["arrival"].positive,
        "{}",
        a.standings["arrival"].reason
    );
    // a schedule that is not the protocol's file is an inconsistency, not a join
    let mut r2 = r.clone();
    r2.evidence.insert(
        block::TIMED_TRACE.into(),
        Evidence::of(b"{\"timestamp\": 0}\n"),
    );
    let a = audit(&r2);
    assert_names(&a, "is not the timed_trace");
    assert!(!a.standings["arrival"].positive);
}

#[test]
fn a_native_schedule_off_the_embedded_plan_is_inconsistent() {
    let n = Native::positive();
    let mut r = n.receipt();
    let plan = |ts: [i64; 4]| -> Vec<u8> {
        ts.iter()
            .map(|t| format!("{{\"timestamp\": {t}, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [0]}}\n"))
            .collect::<String>()
            .into_bytes()
    };
    let embed = |r: &mut Receipt, bytes: Vec<u8>| {
        let e = Evidence::of(&bytes);
        r.protocol.timed_trace_sha256 = Some(e.sha256.clone());
        r.protocol = r.protocol.clone().sealed();
        r.evidence.insert(block::TIMED_TRACE.into(), e);
        *r = r.clone().with_capture();
    };
    embed(&mut r, plan([50, 60, 810, 820]));
    let a = audit(&r);
    assert!(a.inconsistencies.is_empty(), "{:?}", a.inconsistencies);
    assert!(a.qualified, "{:?}", a.refusals);
    embed(&mut r, plan([50, 60, 810, 900]));
    let a = audit(&r);
    assert_names(
        &a,
        "scheduled off the embedded timed_trace (first: request 3)",
    );
    assert!(!a.qualified);
}

#[test]
fn engine_latency_histograms_are_observations_from_histogram_families() {
    let a = audit(&vllm_cpu(0));
    let h: Vec<&str> = a
        .engine
        .histograms
        .iter()
        .map(|h| h.family.as_str())
        .collect();
    assert!(h.contains(&"vllm:inter_token_latency_seconds"), "{h:?}");
    let itl = a
        .engine
        .histograms
        .iter()
        .find(|h| h.family == "vllm:inter_token_latency_seconds")
        .unwrap();
    // vLLM counts one ITL observation per generated token after the first, for all requests
    // in the envelope (the run's 310 plus the earlier curl request's 7).
    assert_eq!(itl.count, 317);
    assert!(itl.p99_le_ms.is_some());
}

/// issue 20: `subject.knobs` could be edited after the fact, and `playbook row` then recorded a
/// measured effect for a knob never set. A knob the server's own `*config_info` names is read
/// back (and an edit is a contradiction); one it does not name is listed as a statement.
#[test]
fn a_knob_is_read_back_from_the_server_or_reported_as_the_claimants_statement() {
    let fixture = || Receipt::from_json(include_bytes!("data/receipt/native_sim.json")).unwrap();
    let mut r = fixture();
    r.subject.knobs.insert("max_num_seqs".into(), "256".into());
    let a = audit(&r);
    assert!(a.qualified, "{:?}", a.refusals);
    assert_eq!(a.knobs[0].status, "read_back");
    assert_eq!(
        a.knobs[0].source.as_deref(),
        Some("loadproof_sim_config_info")
    );

    let mut edited = fixture();
    edited
        .subject
        .knobs
        .insert("max_num_seqs".into(), "2".into());
    let a = audit(&edited);
    assert!(!a.qualified);
    let (pos, reason) = standing(&a, "subject");
    assert!(
        !pos && reason.contains("knob max_num_seqs: stated \"2\""),
        "{reason}"
    );

    let mut stated = fixture();
    stated
        .subject
        .knobs
        .insert("enable_magic".into(), "true".into());
    let a = audit(&stated);
    assert!(a.qualified, "a stated knob is a statement, not a refusal");
    assert!(
        a.statements
            .iter()
            .any(|s| s.field == "subject.knobs.enable_magic" && s.value == "true")
    );
}

/// issue 20: a lease block copied from a leased run into an unleased one qualified it.
#[test]
fn a_lease_the_lessors_own_readback_does_not_show_isolates_nothing() {
    let mut r = Receipt::from_json(include_bytes!("data/receipt/native_sim.json")).unwrap();
    let lease_block = r.block(block::LEASE).unwrap();
    let mut lease = Lease::from_json(&lease_block).unwrap();
    // Another run's lease (another id), as if spliced in with its digest recomputed.
    lease.id = "sim-lease-7-1".into();
    r.evidence.insert(
        block::LEASE.into(),
        Evidence::of(serde_json::to_string(&lease).unwrap().as_bytes()),
    );
    let a = audit(&r);
    let (pos, reason) = standing(&a, "window");
    assert!(!pos, "{reason}");
    assert!(
        reason.contains("not lease sim-lease-7-1: the lease did not hold across this run"),
        "{reason}"
    );
    // A lease naming no readback gauge cannot be checked at all.
    lease.id = Lease::from_json(&lease_block).unwrap().id;
    lease.readback = None;
    r.evidence.insert(
        block::LEASE.into(),
        Evidence::of(serde_json::to_string(&lease).unwrap().as_bytes()),
    );
    let (pos, reason) = standing(&audit(&r), "window");
    assert!(
        !pos && reason.contains("names no readback gauge"),
        "{reason}"
    );
}

/// issue 20: `execution.lag_bound_ns` was in no digest: raising it qualified a run that failed
/// arrival. The bound is the reviewer's policy; an edited capture field is named.
#[test]
fn thresholds_are_the_reviewers_and_a_raised_bound_changes_nothing() {
    use loadproof_core::audit::{Policy, audit_with};
    let r = Receipt::from_json(include_bytes!("data/receipt/native_sim.json")).unwrap();
    let strict = Policy {
        max_send_lag_ms: 0.000_001,
        ..Policy::default()
    };
    let a = audit_with(&r, &strict);
    let (pos, reason) = standing(&a, "arrival");
    assert!(
        !pos && reason.contains("the policy's bound 0.000 ms"),
        "{reason}"
    );
    // The claimant raises its own bound: the audit still uses the reviewer's, and names the edit.
    let mut raised = r.clone();
    if let Execution::Native { lag_bound_ns, .. } = &mut raised.execution {
        *lag_bound_ns = i64::MAX;
    }
    let a = audit_with(&raised, &strict);
    assert!(!standing(&a, "arrival").0);
    assert_names(&a, "execution.lag_bound_ns is 10000000 in the block");
    assert_eq!(
        a.arrival.unwrap().claimed_bound_ms,
        Some(i64::MAX as f64 / 1e6)
    );
}

/// Adversarial pass, findings 1 and 2: a lessor's gauge or a server's self-description read
/// from another URL (a decoy `--metrics-url`, a gate in front of another server) made a lease
/// "isolate" and a subject "established". Only the endpoint's own scrapes speak for it.
#[test]
fn only_the_endpoints_own_scrapes_speak_for_its_lease_and_subject() {
    let mut r = Receipt::from_json(include_bytes!("data/receipt/native_sim.json")).unwrap();
    let endpoint = r.protocol.base_url.clone().unwrap();
    // Every scrape moved to another server's URL (bodies and digests unchanged).
    for s in &mut r.scrapes {
        s.url = "http://127.0.0.1:1/metrics".into();
    }
    let r = r.with_capture();
    let a = audit(&r);
    assert!(!a.qualified);
    let (pos, window) = standing(&a, "window");
    assert!(
        !pos && window.contains(&format!("no readable scrape of its route {endpoint}")),
        "{window}"
    );
    // The URL the scrapes now name counted exactly this run's work: a replica of a fleet, it
    // speaks for the subject by name (an idle URL cannot: see the test below).
    let (_, subject) = standing(&a, "subject");
    assert!(
        subject.contains("/metrics at http://127.0.0.1:1/metrics"),
        "{subject}"
    );
}

/// Adds a before- and an after-scrape of `url` whose body is `body` (the same both times: a
/// URL that served nothing during the run).
fn with_idle_url(mut r: Receipt, url: &str, body: &str) -> Receipt {
    for (i, phase) in [(0, Phase::Before), (1, Phase::After)] {
        let name = format!("metrics/idle-{i}");
        r.evidence
            .insert(name.clone(), Evidence::of(body.as_bytes()));
        r.scrapes.push(Scrape {
            url: url.to_owned(),
            phase,
            requested: Some(stamp(i * 1500 * MS)),
            completed_mono_ns: Some(i * 1500 * MS + MS),
            outcome: ScrapeOutcome::Response {
                status: Some(200),
                body: name,
            },
            exporter: Default::default(),
        });
    }
    r.with_capture()
}

/// One subject everywhere: a URL that served none of this run's work cannot establish an axis
/// the endpoint does not state, and any source that says another value than another — a
/// replica, a GPU exporter, the lease — refuses the subject naming both.
#[test]
fn an_idle_url_cannot_establish_the_subject_and_every_source_must_agree() {
    const DECOY: &str = "http://10.9.9.9:1/metrics";
    let idle = metrics("5.0", "5.0", 0, 0, 0, "1.0e+09");
    // The endpoint states no GPU; an idle decoy states the one the claimant wants.
    let mut n = Native::positive();
    for (_, _, body) in &mut n.scrapes {
        if let Some(b) = body {
            *b = b.replace("gpu_sku=\"none\",", "");
        }
    }
    n.subject.gpu_sku = known("NVIDIA H100 80GB HBM3");
    let r = with_idle_url(
        n.receipt(),
        DECOY,
        &idle.replace("gpu_sku=\"none\"", "gpu_sku=\"NVIDIA H100 80GB HBM3\""),
    );
    let (pos, why) = standing(&audit(&r), "subject");
    assert!(!pos, "{why}");
    assert!(
        why.contains("established by nothing the server answered: gpu_sku"),
        "{why}"
    );

    // A decoy that disagrees with the endpoint is named beside it, idle or not.
    let r = with_idle_url(
        Native::positive().receipt(),
        DECOY,
        &idle.replace("gpu_sku=\"none\"", "gpu_sku=\"H100\""),
    );
    let (pos, why) = standing(&audit(&r), "subject");
    assert!(!pos, "{why}");
    assert!(
        why.contains(&format!("/metrics at {URL}/metrics says \"none\""))
            && why.contains(&format!("/metrics at {DECOY} says \"H100\"")),
        "{why}"
    );

    // The lease binds another engine than the one the server reads back.
    let mut n = Native::positive();
    n.lease = Some(lease(
        &[("model", "tiny-llama"), ("engine", "loadproof sim")],
        URL,
    ));
    let (pos, why) = standing(&n.audit(), "subject");
    assert!(!pos, "{why}");
    assert!(
        why.contains("the lease (test lessor) says \"loadproof sim\"") && why.contains("\"vllm\""),
        "{why}"
    );
}

/// The issue's case: a lease stating `gpu_sku=none (simulator)` beside scrapes that read back a
/// real vLLM (`simulator: false`) qualified. A simulator's value beside a real engine refuses.
#[test]
fn a_simulators_value_beside_a_real_engine_refuses_the_subject() {
    let mut n = Native::positive();
    for (_, _, body) in &mut n.scrapes {
        if let Some(b) = body {
            *b = b.replace("gpu_sku=\"none\"", "gpu_sku=\"none (simulator)\"");
        }
    }
    n.subject.gpu_sku = known("none (simulator)");
    n.lease = Some(lease(
        &[
            ("model", "tiny-llama"),
            ("engine", "vllm"),
            ("gpu_sku", "none (simulator)"),
        ],
        URL,
    ));
    let a = n.audit();
    assert!(!a.qualified);
    let (pos, why) = standing(&a, "subject");
    assert!(!pos, "{why}");
    assert!(
        why.contains("a simulator's value") && why.contains("reads back engine \"vllm\""),
        "{why}"
    );
}

/// Adversarial pass, finding 3: protocol fields were neither compared with the evidence nor
/// listed as statements; with the key recomputed, an edit kept the receipt qualified.
#[test]
fn the_protocol_is_held_to_the_plan_the_execution_and_the_servers_model_name() {
    let fixture = || Receipt::from_json(include_bytes!("data/receipt/native_sim.json")).unwrap();
    let edited = |edit: &dyn Fn(&mut Receipt)| {
        let mut r = fixture();
        edit(&mut r);
        r.protocol = r.protocol.clone().sealed();
        // A forger who also rewrites the capture block: the evidence still disagrees.
        audit(&r.with_capture())
    };
    for (what, edit, named) in [
        (
            "trace",
            &(|r: &mut Receipt| r.protocol.trace_sha256 = Some("00".repeat(32)))
                as &dyn Fn(&mut Receipt),
            "is not the source of the plan fired",
        ),
        (
            "requests",
            &|r: &mut Receipt| r.protocol.requests = Some(6000),
            "protocol.requests 6000 is not the",
        ),
        (
            "engine",
            &|r: &mut Receipt| r.protocol.engine = Engine::VllmBenchServe,
            "protocol.engine is vllm_bench_serve but the execution is the native client's",
        ),
        (
            "model",
            &|r: &mut Receipt| r.protocol.model = Some("Qwen/Qwen3-0.6B".into()),
            "is not the model the server's own /metrics name",
        ),
    ] {
        let a = edited(edit);
        assert!(!a.qualified, "{what}");
        assert!(
            a.inconsistencies.iter().any(|i| i.contains(named)),
            "{what}: {:?}",
            a.inconsistencies
        );
    }
}

/// Adversarial pass, finding 8: unknown fields (`"claim": {"gpu": "B200"}`) were accepted
/// silently; a receipt is a closed schema.
#[test]
fn a_receipt_with_a_field_the_schema_does_not_name_is_refused() {
    let text = String::from_utf8(include_bytes!("data/receipt/native_sim.json").to_vec()).unwrap();
    for (from, to) in [
        (
            "\"schema\": \"loadproof.receipt/v1\",",
            "\"schema\": \"loadproof.receipt/v1\",\n  \"claim\": {\"gpu\": \"B200\"},",
        ),
        ("\"subject\": {", "\"subject\": {\"gpu_note\": \"B200\","),
        ("\"protocol\": {", "\"protocol\": {\"tensor_parallel\": 8,"),
    ] {
        let forged = text.replacen(from, to, 1);
        assert_ne!(forged, text);
        let e = Receipt::from_json(forged.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field"), "{to}: {e}");
    }
}

/// The DCGM exporter fixture, written from its documented default counters (no GPU here).
const DCGM_H100X2: &str = include_str!("../../fixtures/dcgm/h100x2.documented.prom");

/// Adds a before-, a during- and an after-scrape of a DCGM exporter at `url` serving `body`.
fn with_dcgm(mut r: Receipt, url: &str, body: &str) -> Receipt {
    for (i, (phase, at)) in [
        (Phase::Before, 0),
        (Phase::During, 700),
        (Phase::After, 1500),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("metrics/dcgm-{i}");
        r.evidence
            .insert(name.clone(), Evidence::of(body.as_bytes()));
        r.scrapes.push(Scrape {
            url: url.to_owned(),
            phase,
            requested: Some(stamp(at * MS)),
            completed_mono_ns: Some(at * MS + MS),
            outcome: ScrapeOutcome::Response {
                status: Some(200),
                body: name,
            },
            exporter: loadproof_core::receipt::Exporter::Dcgm,
        });
    }
    r.with_capture()
}

/// GPU telemetry as evidence: DCGM's `modelName` establishes `gpu_sku` (nothing else here
/// states it), its fields become the audit's GPU facts, and the engine's deltas are untouched
/// by an exporter that counts no tokens.
#[test]
fn a_dcgm_exporters_model_name_establishes_the_gpu_and_its_telemetry_is_read() {
    let mut n = Native::positive();
    for (_, _, body) in &mut n.scrapes {
        if let Some(b) = body {
            *b = b.replace("gpu_sku=\"none\",", "");
        }
    }
    n.subject.gpu_sku = known("NVIDIA H100 80GB HBM3");
    let without = n.audit();
    let (pos, _) = standing(&without, "subject");
    assert!(!pos, "no source states the GPU without the exporter");

    let r = with_dcgm(n.receipt(), "http://10.0.0.7:9400/metrics", DCGM_H100X2);
    let a = audit(&r);
    let (pos, why) = standing(&a, "subject");
    assert!(pos, "{why}");
    assert!(
        why.contains("DCGM at http://10.0.0.7:9400/metrics"),
        "{why}"
    );
    assert!(a.qualified, "{:?}", a.refusals);
    assert_eq!(a.engine.generation_tokens_delta, Some(20));
    let gpu = a.gpu.as_ref().unwrap();
    let e = &gpu.exporters[0];
    assert_eq!(e.model_names, ["NVIDIA H100 80GB HBM3"]);
    assert_eq!(e.gpus, 2);
    assert_eq!(e.samples, 1);
    assert_eq!(e.max_util_pct, Some(97.0));
    assert_eq!(e.mean_util_pct, Some(50.5));
    assert_eq!(e.max_fb_used_mib, Some(73200.0));
    assert_eq!(e.max_power_w, Some(612.437));
    assert_eq!(e.sm_clock_mhz, Some((1755.0, 1980.0)));

    // An exporter naming another GPU than the receipt: refused, both sources named.
    let r = with_dcgm(
        Native::positive().receipt(),
        "http://10.0.0.7:9400/metrics",
        DCGM_H100X2,
    );
    let (pos, why) = standing(&audit(&r), "subject");
    assert!(!pos);
    assert!(
        why.contains("DCGM at http://10.0.0.7:9400/metrics says \"NVIDIA H100 80GB HBM3\""),
        "{why}"
    );

    // A URL declared a DCGM exporter that serves no DCGM field is unread, by name.
    let r = with_dcgm(n.receipt(), "http://10.0.0.7:9400/metrics", "up 1\n");
    let a = audit(&r);
    let e = &a.gpu.as_ref().unwrap().exporters[0];
    assert_eq!(e.unread, 3);
    assert!(
        e.reason.contains("not an NVIDIA DCGM exporter"),
        "{}",
        e.reason
    );
}

/// The positive receipt with no source stating the GPU, the receipt stating an H100.
fn stating_an_h100() -> Native {
    let mut n = Native::positive();
    for (_, _, body) in &mut n.scrapes {
        if let Some(b) = body {
            *b = b.replace("gpu_sku=\"none\",", "");
        }
    }
    n.subject.gpu_sku = known("NVIDIA H100 80GB HBM3");
    n
}

/// Adversarial pass, finding 1: loadproof sim's own simulated exporter, attached to a real
/// vLLM's receipt, established an H100 and the receipt qualified.
#[test]
fn a_subject_simulated_dcgm_never_establishes_a_real_gpu() {
    let simulated = DCGM_H100X2
        .lines()
        .map(
            |l| match l.strip_prefix("# HELP ").and_then(|r| r.split_once(' ')) {
                Some((name, help)) => format!("# HELP {name} SIMULATED by loadproof sim: {help}"),
                None => l.to_owned(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert!(simulated.contains("# HELP DCGM_FI_DEV_GPU_UTIL SIMULATED by loadproof sim"));
    let r = with_dcgm(
        stating_an_h100().receipt(),
        "http://127.0.0.1:9/dcgm/metrics",
        &simulated,
    );
    let a = audit(&r);
    assert!(!a.qualified);
    let (pos, why) = standing(&a, "subject");
    assert!(!pos);
    assert!(
        why.contains("is a simulated GPU exporter") && why.contains("engine \"vllm\""),
        "{why}"
    );
    assert!(a.gpu.unwrap().exporters[0].simulated);
}

/// Adversarial pass, finding 1: an exporter anyone can point at — idle through the run, or read
/// once before it — established the GPU.
#[test]
fn a_subject_idle_dcgm_cannot_establish_gpu_sku() {
    let idle = DCGM_H100X2
        .lines()
        .map(|l| match l.strip_prefix("DCGM_FI_DEV_GPU_UTIL{") {
            Some(rest) => format!(
                "DCGM_FI_DEV_GPU_UTIL{{{}}} 0",
                rest.rsplit_once("} ").unwrap().0
            ),
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let r = with_dcgm(
        stating_an_h100().receipt(),
        "http://203.0.113.9:9400/metrics",
        &idle,
    );
    let a = audit(&r);
    let (pos, why) = standing(&a, "subject");
    assert!(!pos, "{why}");
    assert!(
        why.contains("established by nothing the server answered: gpu_sku"),
        "{why}"
    );
    let e = &a.gpu.as_ref().unwrap().exporters[0];
    assert!(e.not_evidence.as_deref().unwrap().contains("idle"), "{e:?}");

    // Read only before the run.
    let mut r = with_dcgm(
        stating_an_h100().receipt(),
        "http://203.0.113.9:9400/metrics",
        DCGM_H100X2,
    );
    r.scrapes.retain(|s| {
        s.exporter != loadproof_core::receipt::Exporter::Dcgm || s.phase == Phase::Before
    });
    let a = audit(&r.with_capture());
    let (pos, _) = standing(&a, "subject");
    assert!(!pos);
    let e = &a.gpu.as_ref().unwrap().exporters[0];
    assert!(
        e.not_evidence
            .as_deref()
            .unwrap()
            .contains("before, during and after"),
        "{e:?}"
    );

    // A GPU that names no model leaves the exporter's word incomplete.
    let unnamed = DCGM_H100X2.replace(
        "gpu=\"1\",UUID=\"GPU-9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b\",pci_bus_id=\"00000000:43:00.0\",device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\"",
        "gpu=\"1\",UUID=\"GPU-9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b\",pci_bus_id=\"00000000:43:00.0\",device=\"nvidia1\",modelName=\"\"",
    );
    let a = audit(&with_dcgm(
        stating_an_h100().receipt(),
        "http://10.0.0.7:9400/metrics",
        &unnamed,
    ));
    let (pos, _) = standing(&a, "subject");
    assert!(!pos);
    let e = &a.gpu.as_ref().unwrap().exporters[0];
    assert!(
        e.not_evidence
            .as_deref()
            .unwrap()
            .contains("names no model"),
        "{e:?}"
    );
}

/// Adversarial pass, finding 5: only each URL's first scrape was read for the subject; later
/// scrapes naming another GPU and revision went unnoticed.
#[test]
fn a_subject_a_url_that_changes_its_subject_mid_run_refuses() {
    let mut n = Native::positive();
    for (i, (_, _, body)) in n.scrapes.iter_mut().enumerate() {
        if let Some(b) = body
            && i > 0
        {
            *b = b.replace("gpu_sku=\"none\"", "gpu_sku=\"B200\"");
        }
    }
    let (pos, why) = standing(&n.audit(), "subject");
    assert!(!pos);
    assert!(
        why.contains("changed what it says it is (gpu_sku \"none\" then \"B200\")"),
        "{why}"
    );
}

/// Adversarial pass, finding 6: `protocol.tls` edited away from an `--insecure` run, or absent
/// beside an https:// URL, went unnoticed.
#[test]
fn a_protocol_tls_contradicting_command_or_scheme_is_inconsistent() {
    let mut r = Native::positive().receipt();
    r.protocol.base_url = Some("https://127.0.0.1:8000".into());
    r.protocol = r.protocol.clone().sealed();
    let a = audit(&r);
    assert_names(&a, "used https:// but protocol.tls is absent");
    let mut r = Native::positive().receipt();
    r.provenance.command.push("--insecure".into());
    r.protocol.tls = Some(loadproof_core::receipt::Tls {
        verify: loadproof_core::receipt::TlsVerify::System,
        ca_sha256: None,
    });
    r.protocol = r.protocol.clone().sealed();
    let a = audit(&r);
    assert_names(
        &a,
        "asked for --insecure but protocol.tls does not record it",
    );
    assert!(!a.qualified);
    assert!(a.statements.iter().any(|s| s.field == "protocol.tls"));
}

/// Adversarial pass, finding 7: a `/v1/models` list without the receipt's model said nothing.
#[test]
fn a_subject_models_list_without_the_model_conflicts() {
    let mut r = Native::positive().receipt();
    r.evidence.insert(
        block::MODELS.to_owned(),
        Evidence::of(br#"{"object":"list","data":[{"id":"other-model"}]}"#),
    );
    let (pos, why) = standing(&audit(&r.with_capture()), "subject");
    assert!(!pos);
    assert!(
        why.contains("GET /v1/models lists only [\"other-model\"]"),
        "{why}"
    );
}

/// Adversarial pass, finding 8: one replica scraped under two spellings of its URL was summed
/// twice (engine counted double what the client sent).
#[test]
fn a_counter_two_spellings_of_one_replica_are_not_summed() {
    let mut r = Native::positive().receipt();
    let twins: Vec<Scrape> = r
        .scrapes
        .iter()
        .map(|s| Scrape {
            url: "http://localhost:8000/metrics".into(),
            ..s.clone()
        })
        .collect();
    r.scrapes.extend(twins);
    let a = audit(&r.with_capture());
    assert_eq!(a.engine.generation_tokens_delta, None);
    assert!(
        a.engine.reason.contains("report one process"),
        "{}",
        a.engine.reason
    );
    assert!(!a.qualified);
}

/// The reviewer's policy trusting the keys of these seeds.
fn trusting(seeds: &[u8]) -> Policy {
    Policy {
        trusted_keys: seeds
            .iter()
            .map(|&s| SecretKey::from_seed([s; 32]).public().to_line("the lessor"))
            .collect(),
        ..Policy::default()
    }
}

/// issue 19: without a trusted key nothing is signed, and the verdict says so.
#[test]
fn an_unsigned_receipt_is_self_attested_never_silently_equal_to_signed() {
    let a = Native::positive().audit();
    assert!(a.qualified);
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
    assert!(a.verdict().ends_with("self-attested"), "{}", a.verdict());
    // A reviewer who trusts a key refuses the window and the subject of an unsigned receipt.
    let a = audit_with(&Native::positive().receipt(), &trusting(&[9]));
    assert!(!a.qualified);
    for name in ["window", "subject"] {
        let (pos, reason) = standing(&a, name);
        assert!(
            !pos && reason.contains("not signed by its lessor"),
            "{reason}"
        );
    }
}

/// issue 19: the lessor's signature over the exact lease, by a key the reviewer trusts.
#[test]
fn a_lease_signed_by_a_trusted_key_makes_the_attestation_signed() {
    let n = Native::signed(9);
    let a = audit_with(&n.receipt(), &trusting(&[9]));
    assert!(a.qualified, "{:?}", a.refusals);
    assert_eq!(a.attestation.level, AttestationLevel::Signed);
    assert_eq!(
        a.attestation
            .lease_key
            .as_ref()
            .unwrap()
            .trusted_as
            .as_deref(),
        Some("the lessor")
    );
    assert!(
        a.verdict().ends_with("signed by a key you trust"),
        "{}",
        a.verdict()
    );
    // The same receipt to a reviewer who trusts nothing: self-attested, window as before.
    let a = audit(&n.receipt());
    assert!(a.qualified);
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
    assert!(a.attestation.lease_key.as_ref().is_some_and(|k| !k.trusted));
}

/// issue 19: a signature from a key the reviewer does not trust (the claimant's own) counts
/// for nothing.
#[test]
fn a_signature_from_an_untrusted_key_is_self_attested() {
    let mut n = Native::positive();
    n.lessor_key = Some(1);
    let a = audit_with(&n.receipt(), &trusting(&[9]));
    assert!(!a.qualified);
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
    let (pos, reason) = standing(&a, "window");
    assert!(
        !pos && reason.contains("not among the 1 key(s) you trust"),
        "{reason}"
    );
}

/// issue 19: a signed lease whose window was edited afterwards (digest recomputed) is a
/// tampered receipt, refused by name.
#[test]
fn a_signed_lease_with_its_window_edited_is_refused_by_name() {
    let n = Native::signed(9);
    let mut r = n.receipt();
    let mut lease = Lease::from_json(&r.block(block::LEASE).unwrap()).unwrap();
    lease.until_unix_ns += 3_600_000_000_000;
    r.evidence.insert(
        block::LEASE.into(),
        Evidence::of(serde_json::to_string(&lease).unwrap().as_bytes()),
    );
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(!a.qualified);
    assert!(
        a.refusals
            .iter()
            .any(|r| r.contains("over other bytes than the receipt's lease")),
        "{:?}",
        a.refusals
    );
    // The signature itself edited: it does not verify.
    let mut r = n.receipt();
    let envelope = String::from_utf8(r.block(block::LEASE_SIGNED).unwrap().to_vec()).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&envelope).unwrap();
    let mut sig = v["signature"].as_str().unwrap().to_owned();
    sig.replace_range(
        0..4,
        if sig.starts_with("AAAA") {
            "BBBB"
        } else {
            "AAAA"
        },
    );
    v["signature"] = sig.into();
    r.evidence.insert(
        block::LEASE_SIGNED.into(),
        Evidence::of(v.to_string().as_bytes()),
    );
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(!a.qualified);
    assert!(
        a.refusals.iter().any(|r| r.contains("does not verify")),
        "{:?}",
        a.refusals
    );
}

/// issue 19: a signed lease alone does not make the scrapes the lessor's: the bodies the window,
/// subject and counters are read from must carry its statements too.
#[test]
fn a_signed_lease_over_unsigned_scrapes_is_self_attested() {
    let mut n = Native::positive();
    n.lessor_key = Some(9);
    let a = audit_with(&n.receipt(), &trusting(&[9]));
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
    assert_eq!(a.attestation.scrapes.lessor_scrapes, 7);
    assert_eq!(a.attestation.scrapes.by_trusted_key, 0);
    let (pos, reason) = standing(&a, "window");
    assert!(!pos && reason.contains("7 of the 7 scrapes"), "{reason}");
}

/// issue 19: a scrape body swapped for another, its digest recomputed, no longer matches the
/// digest the lessor signed.
#[test]
fn a_scrape_body_swapped_with_its_digest_recomputed_is_refused_by_name() {
    let n = Native::signed(9);
    let mut r = n.receipt();
    let body = String::from_utf8(r.block("metrics/2").unwrap().to_vec()).unwrap();
    let edited = body.replace("tiny-llama", "big-llama");
    assert_ne!(body, edited);
    r.evidence
        .insert("metrics/2".into(), Evidence::of(edited.as_bytes()));
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(!a.qualified);
    assert!(
        a.refusals
            .iter()
            .any(|r| r.contains("signed/metrics/2") && r.contains("the body was swapped")),
        "{:?}",
        a.refusals
    );
}

/// issue 19: statements the lessor signed under another lease, spliced in, name that lease.
#[test]
fn a_scrape_statement_replayed_from_another_lease_is_refused_by_name() {
    let mut n = Native::positive();
    n.lessor_key = Some(9);
    n.scrape_key = Some((9, "lease-0"));
    let a = audit_with(&n.receipt(), &trusting(&[9]));
    assert!(!a.qualified);
    assert!(
        a.refusals
            .iter()
            .any(|r| r.contains("made under lease lease-0") && r.contains("replayed")),
        "{:?}",
        a.refusals
    );
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
}

/// issue 19: the lessor's signed count of requests admitted under the lease is one more
/// account beside the engine's counters: it corroborates the client's ledger, or refuses
/// counter agreement by name.
#[test]
fn the_lessors_account_of_the_lease_is_held_to_the_clients_ledger() {
    let mut n = Native::positive();
    n.account = Some((9, "lease-1", 4));
    let a = audit_with(&n.receipt(), &Policy::default());
    let account = a.attestation.lease_account.as_ref().unwrap();
    assert!(account.agrees, "{}", account.reason);
    assert!(a.qualified, "{:?}", a.refusals);
    // Fewer admitted than the client says completed: the client counted requests the lessor
    // never let through.
    n.account = Some((9, "lease-1", 2));
    let a = audit(&n.receipt());
    let (pos, reason) = standing(&a, "counter_agreement");
    assert!(
        !pos && reason.contains("admitted 2 requests") && reason.contains("4 completed"),
        "{reason}"
    );
    // More admitted than offered: someone else used the lease's token.
    n.account = Some((9, "lease-1", 9));
    let (pos, reason) = standing(&audit(&n.receipt()), "counter_agreement");
    assert!(
        !pos && reason.contains("someone else used its token"),
        "{reason}"
    );
    // An account of another lease, spliced in.
    n.account = Some((9, "lease-0", 4));
    let a = audit(&n.receipt());
    assert!(
        a.refusals
            .iter()
            .any(|r| r.contains("account is of lease lease-0")),
        "{:?}",
        a.refusals
    );
}

/// issue 19: the lessor's account states the tokens it counted in what it forwarded under the
/// lease; held to the client's ledger, a side that claims tokens the other never saw is named.
#[test]
fn the_lessors_token_account_is_held_to_the_clients_ledger() {
    let mut n = Native::positive();
    n.account = Some((9, "lease-1", 4));
    // The client completed 4 requests of 10 prompt / 5 output tokens: 40 / 20.
    n.account_tokens = Some((40, 20, 0));
    let a = audit_with(&n.receipt(), &Policy::default());
    let account = a.attestation.lease_account.as_ref().unwrap();
    assert!(account.agrees, "{}", account.reason);
    assert_eq!(
        (
            account.prompt_tokens,
            account.completion_tokens,
            account.uncounted_requests
        ),
        (Some(40), Some(20), Some(0))
    );
    assert!(
        account
            .reason
            .contains("the lessor counted 40 prompt / 20 completion tokens"),
        "{}",
        account.reason
    );
    assert!(a.qualified, "{:?}", a.refusals);
    // The client claims output the lessor never forwarded (it counted every response).
    n.account_tokens = Some((40, 15, 0));
    let (pos, reason) = standing(&audit(&n.receipt()), "counter_agreement");
    assert!(
        !pos && reason.contains("15 completion tokens")
            && reason.contains("20 output tokens")
            && reason.contains("never forwarded"),
        "{reason}"
    );
    // The same shortfall with a response whose usage the lessor did not see: a lower bound,
    // not a contradiction.
    n.account_tokens = Some((30, 15, 1));
    let a = audit(&n.receipt());
    let account = a.attestation.lease_account.as_ref().unwrap();
    assert!(
        account.agrees && account.reason.contains("a lower bound"),
        "{}",
        account.reason
    );
    // More prompt tokens than the client's closed, failure-free ledger: work under the token
    // the client does not account for.
    n.account_tokens = Some((90, 20, 0));
    let (pos, reason) = standing(&audit(&n.receipt()), "counter_agreement");
    assert!(
        !pos && reason.contains("90 prompt") && reason.contains("does not account for"),
        "{reason}"
    );
    // A v1 account (requests only) still audits, and says it counts no tokens.
    n.account_tokens = None;
    let a = audit(&n.receipt());
    let account = a.attestation.lease_account.as_ref().unwrap();
    assert!(
        account.agrees && account.prompt_tokens.is_none(),
        "{}",
        account.reason
    );
    assert!(a.qualified, "{:?}", a.refusals);
}

/// A signed positive receipt (lessor key 9 over the lease and every scrape body).
fn signed_positive() -> Native {
    Native::signed(9)
}

/// The receipt with `body` re-digested in block `name` and its capture block rewritten (what a
/// claimant editing the file does).
fn with_block(mut r: Receipt, name: &str, body: &[u8]) -> Receipt {
    r.evidence.insert(name.into(), Evidence::of(body));
    r.with_capture()
}

/// issue 19 (adversarial review): the counters' deltas run from the before- to the
/// after-scrape, so a boundary scrape of the route is read as much as a during-run one. An
/// after-scrape whose counters were raised (to agree with a client log inflated by the same
/// tokens) and whose statement was dropped must not read signed.
#[test]
fn a_boundary_scrape_without_its_lessors_statement_is_self_attested() {
    let n = signed_positive();
    let last = n.scrapes.len() - 1;
    let after = format!("metrics/{last}");
    let mut r = n.receipt();
    let body = String::from_utf8(r.block(&after).unwrap().to_vec()).unwrap();
    let forged = body.replace(
        "generation_tokens_total{engine=\"0\",model_name=\"tiny-llama\"} 120.0",
        "generation_tokens_total{engine=\"0\",model_name=\"tiny-llama\"} 1120.0",
    );
    assert_ne!(body, forged);
    r.evidence.remove(&signed_block_of(&after));
    let r = with_block(r, &after, forged.as_bytes());
    let a = audit_with(&r, &trusting(&[9]));
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
    let (pos, reason) = standing(&a, "window");
    assert!(
        !pos && reason.contains("1 of the 7 scrapes of its route"),
        "{reason}"
    );
    // The same for the before-scrape, its statement simply dropped.
    let mut r = n.receipt();
    r.evidence.remove(&signed_block_of("metrics/0"));
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
}

/// issue 19 (adversarial review): an engine URL outside the lease's route is a replica whose
/// counters are summed with the route's: unsigned, it lets the claimant add any work (an
/// inflated client log and a made-up replica that "served" the difference) while the
/// receipt reads signed.
#[test]
fn an_unsigned_engine_scrape_of_another_url_is_self_attested() {
    let n = signed_positive();
    let mut r = n.receipt();
    let other = "http://127.0.0.1:9001/metrics";
    for (i, (phase, at, generation)) in
        [(Phase::Before, 0, "5000.0"), (Phase::After, 1500, "6000.0")]
            .into_iter()
            .enumerate()
    {
        let name = format!("metrics/replica-{i}");
        let body = metrics(generation, "7000.0", 0, 0, 0, "1.7959e+09");
        r.evidence
            .insert(name.clone(), Evidence::of(body.as_bytes()));
        r.scrapes.push(Scrape {
            url: other.into(),
            phase,
            requested: Some(stamp(at * MS + 2 * MS)),
            completed_mono_ns: Some(at * MS + 3 * MS),
            outcome: ScrapeOutcome::Response {
                status: Some(200),
                body: name,
            },
            exporter: Default::default(),
        });
    }
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert_eq!(a.engine.generation_tokens_delta, Some(1020));
    assert_eq!(a.attestation.scrapes.other_engine_scrapes, 2);
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
    assert!(
        a.attestation.reason.contains("outside its route"),
        "{}",
        a.attestation.reason
    );
}

/// issue 19 (adversarial review): a DCGM exporter is not the lessor's `/metrics` even at the
/// lessor's origin (the sim serves its simulated one at `/dcgm/metrics`, unsigned): it neither
/// counts as an unsigned scrape of the route nor makes a signed receipt self-attested.
#[test]
fn a_dcgm_exporter_at_the_lessors_origin_is_not_a_scrape_of_its_route() {
    let mut r = signed_positive().receipt();
    let body = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",modelName=\"none\",Hostname=\"h\"} 5\n";
    for (i, phase) in [Phase::Before, Phase::During, Phase::After]
        .into_iter()
        .enumerate()
    {
        let name = format!("metrics/dcgm-{i}");
        r.evidence
            .insert(name.clone(), Evidence::of(body.as_bytes()));
        r.scrapes.push(Scrape {
            url: format!("{URL}/dcgm/metrics"),
            phase,
            requested: Some(stamp(i as i64 * 700 * MS)),
            completed_mono_ns: Some(i as i64 * 700 * MS + MS),
            outcome: ScrapeOutcome::Response {
                status: Some(200),
                body: name,
            },
            exporter: loadproof_core::receipt::Exporter::Dcgm,
        });
    }
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert_eq!(a.attestation.scrapes.lessor_scrapes, 7);
    assert_eq!(
        a.attestation.level,
        AttestationLevel::Signed,
        "{}",
        a.attestation.reason
    );
}

/// issue 19 (adversarial review): one statement is one serving. Bodies that repeat (an idle
/// engine serves the same bytes twice) share a digest, so a statement copied to a second
/// scrape, or scrapes put in another order, still name their body's digest; the lessor's
/// clock in them must advance scrape by scrape.
#[test]
fn a_scrape_statement_reused_for_another_scrape_is_refused_by_name() {
    let mut r = signed_positive().receipt();
    assert_eq!(r.block("metrics/2").unwrap(), r.block("metrics/3").unwrap());
    let copied = r.block(&signed_block_of("metrics/2")).unwrap().to_vec();
    r.evidence
        .insert(signed_block_of("metrics/3"), Evidence::of(&copied));
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(!a.qualified);
    assert!(
        a.refusals
            .iter()
            .any(|r| r.contains("signed/metrics/3") && r.contains("reused")),
        "{:?}",
        a.refusals
    );
    // Two scrapes swapped (their records, bodies and statements with them).
    let mut r = signed_positive().receipt();
    r.scrapes.swap(2, 4);
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        a.refusals.iter().any(|r| r.contains("reordered")),
        "{:?}",
        a.refusals
    );
}

/// issue 19 (adversarial review): the scrape statements are the lease's lessor's: a statement
/// by another key the reviewer also trusts (another gate's) does not vouch for this lease's
/// bodies.
#[test]
fn scrape_statements_by_another_key_than_the_leases_do_not_make_it_signed() {
    let mut n = signed_positive();
    n.scrape_key = Some((8, "lease-1"));
    // No account: one by the lease's signer chaining these bytes would be its word on them.
    n.account = None;
    let a = audit_with(&n.receipt(), &trusting(&[9, 8]));
    assert_eq!(a.attestation.level, AttestationLevel::SelfAttested);
    assert_eq!(a.attestation.scrapes.signed, 7);
    assert_eq!(a.attestation.scrapes.by_trusted_key, 0);
}

/// issue 19 (adversarial review): a queue seen in two consecutive scrapes refuses occupancy;
/// dropping the second (a 500 ms gap, inside the policy's 1 s) would leave an isolated sample
/// and a signed, qualified receipt. The lessor numbers the bodies it serves to the lease's
/// holder (`seq` in each scrape statement) and its account states how many it served, so a
/// drop from the middle is a gap in the numbering and one from the end falls short of the
/// account: each refused by name.
#[test]
fn a_signed_scrape_dropped_from_the_run_is_refused_by_name() {
    let mut n = signed_positive();
    for i in [2, 3] {
        n.scrapes[i].2 = Some(metrics("100.0", "1000.0", 1, 1, 0, "1.79594033677e+09"));
    }
    let whole = audit_with(&n.receipt(), &trusting(&[9]));
    assert!(!whole.qualified);
    assert!(
        whole.inconsistencies.is_empty(),
        "{:?}",
        whole.inconsistencies
    );
    assert_eq!(whole.attestation.scrapes.numbered, 7);
    let mut r = n.receipt();
    r.scrapes.remove(3);
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(!a.qualified, "a queue hidden by dropping a signed scrape");
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("no signed scrape numbered 3") && i.contains("lease-1")),
        "{:?}",
        a.inconsistencies
    );
    // The last one dropped leaves no gap, but falls short of the lessor's account.
    let mut n = signed_positive();
    n.account = Some((9, "lease-1", 4));
    n.account_tokens = Some((40, 20, 0));
    let a = audit_with(&n.receipt(), &trusting(&[9]));
    assert!(a.qualified, "{:?}", a.refusals);
    assert_eq!(
        a.attestation.lease_account.as_ref().and_then(|a| a.scrapes),
        Some(7)
    );
    let mut r = n.receipt();
    r.scrapes.pop();
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("account says it served 7 /metrics bodies")
                && i.contains("numbered 6")),
        "{:?}",
        a.inconsistencies
    );
    assert!(!a.qualified);
}

/// The quick start's signed receipt, with the lessor's account of its lease (4 requests,
/// 40 + 20 tokens) chaining every numbered statement.
fn signed_with_account() -> Native {
    let mut n = signed_positive();
    n.account = Some((9, "lease-1", 4));
    n.account_tokens = Some((40, 20, 0));
    n
}

/// issue 19 (scale): the lessor's account chains every scrape statement it numbered, so its
/// one signature, checked, vouches for all of them: a ten-minute run's thousands of
/// statements cost one verification, not one each (0.6 ms apiece in the page). A statement
/// edited after it was signed breaks the chain, and is then verified on its own and refused
/// by name; a statement kept as text (what fire writes) is the same bytes.
#[test]
fn one_signature_on_the_lessors_account_vouches_for_every_statement_it_chains() {
    let n = signed_with_account();
    let a = audit_with(&n.receipt(), &trusting(&[9]));
    assert!(a.qualified, "{:?}", a.refusals);
    assert_eq!(a.attestation.level, AttestationLevel::Signed);
    let account = a.attestation.lease_account.as_ref().unwrap();
    assert!(account.vouches_for_scrapes);
    assert_eq!(account.scrape_chain.as_ref().map(String::len), Some(64));
    assert_eq!(
        a.attestation.scrapes.by_trusted_key,
        a.attestation.scrapes.lessor_scrapes
    );

    // Kept as text: the same statement, the same audit.
    let mut r = n.receipt();
    let names: Vec<String> = r
        .evidence
        .keys()
        .filter(|k| k.starts_with("signed/metrics/"))
        .cloned()
        .collect();
    for name in &names {
        let signed = Signed::from_json(&r.block(name).unwrap()).unwrap();
        r.evidence
            .insert(name.clone(), Evidence::of(signed.to_text_json().as_bytes()));
    }
    let text = audit_with(&r.with_capture(), &trusting(&[9]));
    assert_eq!(text.attestation, a.attestation);
    assert!(text.qualified);

    // One statement's clock edited, the envelope's signature left as it was: the chain no
    // longer holds, so every statement is checked on its own, and that one is refused.
    let name = &names[2];
    let r = n.receipt();
    let envelope: serde_json::Value = serde_json::from_slice(&r.block(name).unwrap()).unwrap();
    let statement = base64_decode(envelope["statement"].as_str().unwrap());
    let mut st: serde_json::Value = serde_json::from_slice(&statement).unwrap();
    st["served_unix_ns"] = (st["served_unix_ns"].as_i64().unwrap() + 1).into();
    let mut edited = envelope.clone();
    edited["statement"] = base64_encode(st.to_string().as_bytes()).into();
    let a = audit_with(
        &with_block(r, name, edited.to_string().as_bytes()),
        &trusting(&[9]),
    );
    assert!(
        !a.attestation
            .lease_account
            .as_ref()
            .unwrap()
            .vouches_for_scrapes
    );
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains(name.as_str()) && i.contains("does not verify")),
        "{:?}",
        a.inconsistencies
    );
    assert!(!a.qualified);
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// issue 19: a body the lessor numbered whose answer never reached the client — the scrape
/// is in the receipt, failed — is unkept, not dropped: no inconsistency, but what it showed is
/// unknown, so a queue seen beside it refuses occupancy as if it had shown one too (turning
/// the incriminating scrape into a timeout hides nothing). Beside no queue it costs nothing
/// but its note.
#[test]
fn a_signed_scrape_that_failed_in_the_receipt_is_unkept_and_what_it_showed_is_unknown() {
    let timed_out = || ScrapeOutcome::Failed {
        error: "timed out after 2 s".into(),
    };
    let mut n = signed_positive();
    for i in [2, 3] {
        n.scrapes[i].2 = Some(metrics("100.0", "1000.0", 1, 1, 0, "1.79594033677e+09"));
    }
    let mut r = n.receipt();
    r.scrapes[3].outcome = timed_out();
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(a.inconsistencies.is_empty(), "{:?}", a.inconsistencies);
    assert_eq!(a.attestation.scrapes.failed, 1);
    assert_eq!(a.attestation.scrapes.unkept, 1);
    let (pos, reason) = standing(&a, "occupancy");
    assert!(!pos && reason.contains("not read"), "{reason}");
    assert!(!a.qualified);

    // Beside no queue it is still a body nobody saw: no tampering, signed, but occupancy is
    // unknown (it could have shown the engine above the cap, or foreign requests).
    let mut r = signed_positive().receipt();
    r.scrapes[3].outcome = timed_out();
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(a.inconsistencies.is_empty(), "{:?}", a.inconsistencies);
    assert_eq!(a.attestation.level, AttestationLevel::Signed);
    assert!(
        a.attestation.reason.contains("never reached the client"),
        "{}",
        a.attestation.reason
    );
    let (pos, reason) = standing(&a, "occupancy");
    assert!(
        !pos && reason.contains("never reached the client"),
        "{reason}"
    );
    // Without a lessor's numbers nothing says a body was served: a failed scrape beside no
    // queue is a failed scrape.
    let mut r = Native::positive().receipt();
    r.scrapes[3].outcome = timed_out();
    assert!(audit_with(&r.with_capture(), &Policy::default()).qualified);
}

/// issue 19 (adversarial review): the subject is read from every source, signed or not. When
/// the lease does not bind `gpu_sku` (a gate started without `--gpu-sku` states none), an
/// unsigned DCGM exporter's body alone would establish it: the claimant edits its `modelName`
/// and the receipt still reads signed with the subject positive. Given trusted keys and a
/// signed receipt, an axis that only unsigned sources establish does not stand, and the reason
/// names the axis and its unsigned source.
#[test]
fn a_subject_axis_only_an_unsigned_source_establishes_does_not_stand_when_signed() {
    let mut n = signed_positive();
    n.subject.gpu_sku = known("NVIDIA H100 80GB HBM3");
    let gate_lines = GATE_LINES.replace("gpu_sku=\"none\",", "");
    for s in n.scrapes.iter_mut() {
        if let Some(b) = &mut s.2 {
            *b = b.replace(GATE_LINES, &gate_lines);
        }
    }
    // An unsigned DCGM exporter scraped before, during and after the run.
    let with_dcgm = |mut r: Receipt| {
        let body = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"h\"} 5\n";
        for (i, phase) in [Phase::Before, Phase::During, Phase::After]
            .into_iter()
            .enumerate()
        {
            let name = format!("metrics/dcgm-{i}");
            r.evidence
                .insert(name.clone(), Evidence::of(body.as_bytes()));
            r.scrapes.push(Scrape {
                url: "http://127.0.0.1:9400/metrics".into(),
                phase,
                requested: Some(stamp(i as i64 * 700 * MS)),
                completed_mono_ns: Some(i as i64 * 700 * MS + MS),
                outcome: ScrapeOutcome::Response {
                    status: Some(200),
                    body: name,
                },
                exporter: loadproof_core::receipt::Exporter::Dcgm,
            });
        }
        r.with_capture()
    };
    let r = with_dcgm(n.receipt());
    let a = audit_with(&r, &trusting(&[9]));
    assert_eq!(a.attestation.level, AttestationLevel::Signed);
    let (pos, reason) = standing(&a, "subject");
    assert!(!pos, "gpu_sku from an unsigned DCGM body stands: {reason}");
    assert!(
        reason.contains("gpu_sku=NVIDIA H100 80GB HBM3")
            && reason
                .contains("its only source is unsigned: DCGM at http://127.0.0.1:9400/metrics"),
        "{reason}"
    );
    // The same receipt to a reviewer who trusts no key: self-attested, read as before.
    let (pos, reason) = standing(&audit(&r), "subject");
    assert!(pos, "{reason}");
    // A lessor that binds the GPU in its lease vouches for it: the DCGM body corroborates.
    let mut n = signed_positive();
    n.subject.gpu_sku = known("NVIDIA H100 80GB HBM3");
    n.lease = Some(lease(
        &[
            ("model", "tiny-llama"),
            ("engine", "vllm"),
            ("engine_version", "0.32.0"),
            ("gpu_sku", "NVIDIA H100 80GB HBM3"),
        ],
        URL,
    ));
    for s in n.scrapes.iter_mut() {
        if let Some(b) = &mut s.2 {
            *b = b.replace(GATE_LINES, &gate_lines);
        }
    }
    let r = with_dcgm(n.receipt());
    let a = audit_with(&r, &trusting(&[9]));
    assert_eq!(a.attestation.level, AttestationLevel::Signed);
    let (pos, reason) = standing(&a, "subject");
    assert!(pos, "{reason}");
    // vLLM's /metrics names no version: `GET /version` alone (unsigned) does not stand for it
    // unless the lease binds it, as a gate's does.
    let mut n = signed_positive();
    n.lease = Some(lease(&[("model", "tiny-llama"), ("engine", "vllm")], URL));
    let (pos, reason) = standing(&audit_with(&n.receipt(), &trusting(&[9])), "subject");
    assert!(
        !pos && reason
            .contains("engine_version=0.32.0 (its only source is unsigned: GET /version)"),
        "{reason}"
    );
}

/// A queue in scrapes 2 and 3 of [`signed_positive`] (waiting 1 in each): two consecutive
/// scrapes that saw one, which refuses occupancy when both are kept.
fn signed_with_queue() -> Native {
    let mut n = signed_positive();
    for i in [2, 3] {
        n.scrapes[i].2 = Some(metrics("100.0", "1000.0", 1, 1, 0, "1.79594033677e+09"));
    }
    n
}

/// issue 19 (adversarial review): the lessor numbers the bodies it serves to the holder at its
/// route, and only its own statements carry its numbers. A number kept on anything else — a
/// statement the claimant signed with its own key and hung on a DCGM scrape, or the lessor's
/// real statement of the dropped body kept beside a scrape relabelled as a GPU exporter's (not
/// read as the route's, so its queue is never seen) — must not fill the gap the drop left.
#[test]
fn the_lessors_numbers_are_read_only_from_its_statements_of_its_routes_scrapes() {
    let n = signed_with_queue();
    let dcgm_scrape = |body: String, at: i64| Scrape {
        url: format!("{URL}/dcgm/metrics"),
        phase: Phase::During,
        requested: Some(stamp(at * MS)),
        completed_mono_ns: Some(at * MS + MS),
        outcome: ScrapeOutcome::Response {
            status: Some(200),
            body,
        },
        exporter: loadproof_core::receipt::Exporter::Dcgm,
    };
    // (1) Number 3 forged under the claimant's own key, on a made-up DCGM scrape.
    let mut r = n.receipt();
    r.scrapes.remove(3);
    let body = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",modelName=\"none\",Hostname=\"h\"} 5\n";
    r.evidence
        .insert("metrics/dcgm-x".into(), Evidence::of(body.as_bytes()));
    let statement = ScrapeStatement::of(
        "/metrics",
        body.as_bytes(),
        Some("lease-1".into()),
        T0_UNIX + 760 * MS,
        Some(3),
    );
    let forged = Signed::sign(&SecretKey::from_seed([7; 32]), &statement.to_bytes());
    r.evidence.insert(
        signed_block_of("metrics/dcgm-x"),
        Evidence::of(forged.to_json().as_bytes()),
    );
    r.scrapes.push(dcgm_scrape("metrics/dcgm-x".into(), 760));
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        !a.qualified,
        "a queue hidden behind a number the claimant signed: {:?}",
        a.attestation
    );
    assert_names(&a, "no signed scrape numbered 3");
    // (2) The lessor's own statement of body 3, its scrape relabelled as a GPU exporter's.
    let mut r = n.receipt();
    r.scrapes[3].url = format!("{URL}/dcgm/metrics");
    r.scrapes[3].exporter = loadproof_core::receipt::Exporter::Dcgm;
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        !a.qualified,
        "a queue hidden by relabelling its signed scrape: {:?}",
        a.attestation
    );
}

/// Re-signs every scrape statement of `r` (key `seed`) with no number: what the lessor states of
/// the bodies it serves to anyone but the lease's holder while the lease holds.
fn unnumbered(mut r: Receipt, seed: u8) -> Receipt {
    let names: Vec<String> = r
        .scrapes
        .iter()
        .filter_map(|s| match &s.outcome {
            ScrapeOutcome::Response { body, .. } => Some(body.clone()),
            _ => None,
        })
        .collect();
    for name in names {
        let signed_name = signed_block_of(&name);
        let Ok(bytes) = r.block(&signed_name).map(|b| b.to_vec()) else {
            continue;
        };
        let held = Signed::from_json(&bytes).unwrap();
        let mut statement = ScrapeStatement::from_bytes(held.statement()).unwrap();
        statement.seq = None;
        let signed = Signed::sign(&SecretKey::from_seed([seed; 32]), &statement.to_bytes());
        r.evidence
            .insert(signed_name, Evidence::of(signed.to_json().as_bytes()));
    }
    r.with_capture()
}

/// issue 19 (adversarial review): the numbering holds only if the run's scrapes are the
/// holder's. The claimant controls the firing client: scraping without the lease's token (or
/// from a second scraper, many times a second) gets bodies the lessor signs under the lease but
/// numbers for no one, and the claimant keeps those that show no queue. A v2 statement of a
/// route's scrape naming this lease without a number was served to someone other than the
/// holder: it is not the run's scrape, and the receipt must not read signed and qualified.
#[test]
fn a_route_scrape_the_lessor_served_to_someone_other_than_the_holder_is_not_the_runs() {
    let n = signed_with_queue();
    // Every scrape unnumbered (the client never presented the token), the queue's second
    // scrape left out (a 500 ms gap, inside the policy's 1 s).
    let mut r = unnumbered(n.receipt(), 9);
    r.scrapes.remove(3);
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        !(a.qualified && a.attestation.level == AttestationLevel::Signed),
        "a queue dropped from scrapes the lessor numbered for no one: {}",
        a.attestation.reason
    );
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("signed/metrics/0") && i.contains("other than the lease's holder")),
        "{:?}",
        a.inconsistencies
    );
}

/// issue 19 (adversarial review): a missing number is unkept only where a failed scrape of the
/// route could have been served it: between the kept scrapes numbered either side of it. A
/// failed scrape the claimant adds before the run (or after it) does not explain a body
/// dropped from the middle of the run.
#[test]
fn a_missing_number_is_unkept_only_beside_a_failed_scrape_where_it_was_served() {
    let n = signed_with_queue();
    let mut r = n.receipt();
    r.scrapes.remove(3);
    let mut failed = r.scrapes[0].clone();
    failed.outcome = ScrapeOutcome::Failed {
        error: "timed out after 2 s".into(),
    };
    failed.requested = Some(stamp(-5 * MS));
    failed.completed_mono_ns = Some(-4 * MS);
    r.scrapes.insert(0, failed);
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        !a.qualified,
        "a queue dropped mid-run, excused by a failed before-scrape: {:?}",
        a.attestation
    );
    assert_names(&a, "no signed scrape numbered 3");
    // The same failure where the body was served stays unkept, as before.
    let mut r = n.receipt();
    r.scrapes[3].outcome = ScrapeOutcome::Failed {
        error: "timed out after 2 s".into(),
    };
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(a.inconsistencies.is_empty(), "{:?}", a.inconsistencies);
    assert_eq!(a.attestation.scrapes.unkept, 1);
}

/// issue 19 (adversarial review): an unread during-run scrape beside a queue is taken to have
/// shown one, but a queue seen in two consecutive scrapes, both turned into timeouts, leaves
/// no seen queue for them to be beside: two unread scrapes in a row may have held a queue as
/// long as the policy refuses, and must be read so.
#[test]
fn consecutive_unread_during_run_scrapes_may_have_held_a_queue() {
    let mut r = signed_with_queue().receipt();
    for i in [2, 3] {
        r.scrapes[i].outcome = ScrapeOutcome::Failed {
            error: "timed out after 2 s".into(),
        };
    }
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(a.inconsistencies.is_empty(), "{:?}", a.inconsistencies);
    assert_eq!(a.attestation.scrapes.unkept, 2);
    let (pos, reason) = standing(&a, "occupancy");
    assert!(!pos, "a queue hidden by two timeouts: {reason}");
    assert!(reason.contains("not read"), "{reason}");
    // One unread scrape beside none that saw a queue is no queue run, though the body the
    // lessor served for it leaves occupancy unknown on other counts.
    let mut r = signed_positive().receipt();
    r.scrapes[3].outcome = ScrapeOutcome::Failed {
        error: "timed out after 2 s".into(),
    };
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    let (_, reason) = standing(&a, "occupancy");
    assert!(!reason.contains("not read"), "{reason}");
}

/// issue 19 (adversarial review): the lessor serves its `/metrics` at its route only, so a
/// statement by the lease's signer naming this lease, kept beside an engine scrape of another
/// URL, is a route body moved there. Unnumbered (a second scraper without the token took it),
/// it read as a signed replica whose counters are summed with the route's: a client log
/// inflated by two requests, and a "replica" made of two route bodies taken at the grant and
/// mid-run, agreed to the token and read signed and qualified.
#[test]
fn a_body_the_lessor_served_at_its_route_kept_as_another_urls_scrape_is_refused_by_name() {
    let mut n = signed_positive();
    n.records.push(ok(4, 900, 1300, 10, 5));
    n.records.push(ok(5, 910, 1310, 10, 5));
    n.offered = 6;
    let mut r = n.receipt();
    let other = "http://127.0.0.1:9001/metrics";
    for (i, (phase, at, generation, prompt)) in [
        (Phase::Before, 1, "100.0", "1000.0"),
        (Phase::After, 1501, "110.0", "1020.0"),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("metrics/replica-{i}");
        let body = metrics(generation, prompt, 0, 0, 0, "1.79594033677e+09");
        r.evidence
            .insert(name.clone(), Evidence::of(body.as_bytes()));
        let statement = ScrapeStatement::of(
            "/metrics",
            body.as_bytes(),
            Some("lease-1".into()),
            T0_UNIX + at * MS,
            None,
        );
        let signed = Signed::sign(&SecretKey::from_seed([9; 32]), &statement.to_bytes());
        r.evidence.insert(
            signed_block_of(&name),
            Evidence::of(signed.to_json().as_bytes()),
        );
        r.scrapes.push(Scrape {
            url: other.into(),
            phase,
            requested: Some(stamp(at * MS)),
            completed_mono_ns: Some(at * MS + MS),
            outcome: ScrapeOutcome::Response {
                status: Some(200),
                body: name,
            },
            exporter: Default::default(),
        });
    }
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        !(a.qualified && a.attestation.level == AttestationLevel::Signed),
        "a replica made of the route's bodies: {:?} {:?}",
        a.engine.generation_tokens_delta,
        a.attestation
    );
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("signed/metrics/replica-0") && i.contains("outside its route")),
        "{:?}",
        a.inconsistencies
    );
}

/// issue 19 (adversarial review): a failed scrape stands for the number of the body the
/// lessor served where it sits in the receipt, and what that body showed is unknown whatever
/// phase the receipt gives it: two queued scrapes turned into failures labelled before- or
/// after-scrapes, in the middle of the run, must not escape the unread during-run rule.
#[test]
fn a_failed_scrape_among_the_runs_scrapes_is_unread_whatever_its_phase() {
    for phase in [Phase::Before, Phase::After] {
        let mut r = signed_with_queue().receipt();
        for i in [2, 3] {
            r.scrapes[i].outcome = ScrapeOutcome::Failed {
                error: "timed out after 2 s".into(),
            };
            r.scrapes[i].phase = phase;
        }
        let a = audit_with(&r.with_capture(), &trusting(&[9]));
        assert!(
            !a.qualified,
            "a queue hidden by two failures labelled {phase:?}: {:?} {:?}",
            standing(&a, "occupancy"),
            a.refusals
        );
    }
}

/// issue 19 (adversarial review, held): the lease's route is an origin, but the engine's facts
/// are read per URL, so the queue's two timeouts moved to two made-up URLs at the route's
/// origin (one each) stand as unkept while no URL shows two unread in a row. It holds because
/// each such URL has no readable before- or after-scrape: continuity and the counters refuse.
#[test]
fn failed_scrapes_moved_to_made_up_urls_at_the_routes_origin_hide_no_queue() {
    for phase in [Phase::During, Phase::Before] {
        let mut r = signed_with_queue().receipt();
        for (i, path) in [(2, "/metrics?a"), (3, "/metrics?b")] {
            r.scrapes[i].outcome = ScrapeOutcome::Failed {
                error: "timed out after 2 s".into(),
            };
            r.scrapes[i].url = format!("{URL}{path}");
            r.scrapes[i].phase = phase;
        }
        let a = audit_with(&r.with_capture(), &trusting(&[9]));
        assert!(
            !a.qualified,
            "a queue hidden by failures at made-up URLs ({phase:?}): {:?} {:?}",
            a.attestation, a.refusals
        );
    }
}

/// issue 19 (adversarial review): the claimant writes the client's log and the scrapes' times;
/// only the lessor's clock in its statements is not theirs. A run replayed at half speed and
/// written as if twice as fast (every time in the receipt halved, the lessor's statements kept)
/// claims twice the throughput; the lessor served the same scrapes twice as far apart. The
/// intervals between a URL's signed scrapes on the lessor's clock must fit the receipt's.
#[test]
fn the_receipts_scrape_times_are_held_to_the_lessors_clock() {
    let honest = signed_positive();
    let mut fast = signed_positive();
    for r in fast.records.iter_mut() {
        r.scheduled_ns /= 2;
        r.chunks_ns.iter_mut().for_each(|t| *t /= 2);
        r.sent_ns = r.sent_ns.map(|t| t / 2);
        r.first_token_ns = r.first_token_ns.map(|t| t / 2);
        r.end_ns = r.end_ns.map(|t| t / 2);
    }
    for s in fast.scrapes.iter_mut() {
        s.1 /= 2;
    }
    fast.end_ms /= 2;
    let signed_by_lessor = honest.receipt();
    let mut r = fast.receipt();
    let names: Vec<String> = r
        .evidence
        .keys()
        .filter(|k| k.starts_with("signed/metrics/"))
        .cloned()
        .collect();
    for name in names {
        let e = signed_by_lessor.evidence.get(&name).unwrap().clone();
        r.evidence.insert(name, e);
    }
    let a = audit_with(&r.clone().with_capture(), &trusting(&[9]));
    assert!(
        !a.qualified,
        "a run written twice as fast as the lessor served it: {:?}",
        a.attestation
    );
    assert_names(&a, "lessor's clock");
    // The same with every completion time left out (nothing bounds the interval then).
    for s in r.scrapes.iter_mut() {
        s.completed_mono_ns = None;
    }
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert_names(&a, "lessor's clock");
    // The honest receipt still qualifies.
    let a = audit_with(&signed_by_lessor, &trusting(&[9]));
    assert!(a.qualified, "{:?}", a.refusals);
}

/// issue 19 (adversarial review): what an unkept body showed is unknown, and not only for the
/// queue rule: a single scrape that showed the engine running above the declared cap (or more
/// requests than the client had in flight: foreign work), turned into a timeout, would leave a
/// signed receipt that qualifies. An unkept body leaves occupancy refused, by name.
#[test]
fn an_unkept_body_leaves_every_occupancy_check_it_could_have_failed_unknown() {
    let mut n = signed_positive();
    n.cap = Some(2);
    n.scrapes[3].2 = Some(metrics("100.0", "1000.0", 3, 0, 0, "1.79594033677e+09"));
    let a = audit_with(&n.receipt(), &trusting(&[9]));
    let (pos, _) = standing(&a, "occupancy");
    assert!(!pos, "the cap exceeded in scrape 3 refuses");
    let mut r = n.receipt();
    r.scrapes[3].outcome = ScrapeOutcome::Failed {
        error: "timed out after 2 s".into(),
    };
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert_eq!(a.attestation.scrapes.unkept, 1);
    assert!(
        !a.qualified,
        "the scrape that showed the cap exceeded, turned into a timeout, hid it"
    );
}

/// issue 19 (adversarial review): the lessor's account was the claimant's to keep or drop. An
/// account that contradicts the client (more requests admitted under the token than the client
/// offered) refuses `counter_agreement`; left out, the receipt of a lessor that numbers its
/// scrapes (and so answers every release with an account) is self-attested; replaced by one
/// the claimant signed, it is an inconsistency named by its block.
#[test]
fn a_signed_receipt_without_its_lessors_account_is_not_read_as_one_that_agrees() {
    let mut n = signed_positive();
    n.account = Some((9, "lease-1", 9));
    n.account_tokens = Some((40, 20, 0));
    let a = audit_with(&n.receipt(), &trusting(&[9]));
    assert!(!a.qualified, "the account contradicts the client");
    let mut r = n.receipt();
    r.evidence.remove(block::LEASE_ACCOUNT_SIGNED);
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        !(a.qualified && a.attestation.level == AttestationLevel::Signed),
        "the contradicting account dropped: {}",
        a.attestation.reason
    );
    assert!(
        a.attestation.reason.contains(
            "the account of the lease (window/lease.account.signed.json) is not in the receipt"
        ),
        "{}",
        a.attestation.reason
    );
    let mut n = signed_positive();
    n.account = Some((7, "lease-1", 4));
    let a = audit_with(&n.receipt(), &trusting(&[9, 7]));
    assert_names(&a, "not by the lease's signer");
    assert!(!a.qualified);
}

/// The receipt of [`signed_with_account`] with the envelope of block `name` replaced by what
/// `rewrite` makes of its statement's bytes (the bytes the lessor signed, and chained).
fn with_envelope(n: &Native, name: &str, rewrite: impl Fn(&[u8]) -> String) -> Receipt {
    let r = n.receipt();
    let statement = Signed::from_json(&r.block(name).unwrap())
        .unwrap()
        .statement()
        .to_vec();
    with_block(r, name, rewrite(&statement).as_bytes())
}

/// issue 19 (adversarial review, chain vouching): the account's one signature stands for the
/// bytes of every statement it chains, not for what an envelope says of them. A statement of
/// the lessor re-signed under another key (the claimant's) is that key's word, not the
/// lessor's, whether or not the account vouches for the rest: checked one by one it leaves the
/// number unkept by the lessor's key (a drop), and vouched for it must read the same.
#[test]
fn a_statement_the_account_chains_is_read_under_the_key_its_envelope_names() {
    let n = signed_with_account();
    let name = "signed/metrics/2";
    let claimants = SecretKey::from_seed([7; 32]);
    let r = with_envelope(&n, name, |s| Signed::sign(&claimants, s).to_json());
    let a = audit_with(&r, &trusting(&[9]));
    assert!(
        !(a.qualified && a.attestation.level == AttestationLevel::Signed),
        "a statement under key 7 read as the lessor's: {}",
        a.attestation.reason
    );
    assert!(
        !a.attestation
            .lease_account
            .as_ref()
            .unwrap()
            .vouches_for_scrapes
    );
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("no signed scrape numbered 2")),
        "{:?}",
        a.inconsistencies
    );
}

/// issue 19 (adversarial review, chain vouching): an envelope whose signature no longer
/// verifies is a tampered receipt, refused by name when statements are checked one by one;
/// the account vouching for the statement's bytes must not make the same receipt read clean.
/// Settled by the lessor chaining each statement's signature with its bytes: an envelope with
/// another signature breaks the chain, and is checked on its own.
#[test]
fn a_statement_whose_signature_does_not_verify_is_refused_though_the_account_chains_it() {
    let n = signed_with_account();
    let name = "signed/metrics/2";
    let r = with_envelope(&n, name, |s| {
        let good = Signed::sign(&SecretKey::from_seed([9; 32]), s).to_json();
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        let other = Signed::sign(&SecretKey::from_seed([9; 32]), b"something else").to_json();
        let o: serde_json::Value = serde_json::from_str(&other).unwrap();
        v["signature"] = o["signature"].clone();
        v.to_string()
    });
    let a = audit_with(&r, &trusting(&[9]));
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains(name) && i.contains("does not verify")),
        "{:?}",
        a.inconsistencies
    );
    assert!(!a.qualified);
}

/// `r` with the lessor's account re-signed (key 9) over a chain head that fits nothing: every
/// statement is then checked on its own.
fn per_statement(r: &Receipt) -> Receipt {
    let signed = Signed::from_json(&r.block(block::LEASE_ACCOUNT_SIGNED).unwrap()).unwrap();
    let mut account = LeaseAccount::from_bytes(signed.statement()).unwrap();
    account.scrape_chain = Some("00".repeat(32));
    let resigned = Signed::sign(&SecretKey::from_seed([9; 32]), &account.to_bytes());
    with_block(
        r.clone(),
        block::LEASE_ACCOUNT_SIGNED,
        resigned.to_json().as_bytes(),
    )
}

/// The audit as JSON, without what only says which path read the statements.
fn read_alike(a: &Audit) -> serde_json::Value {
    let mut v = serde_json::to_value(a).unwrap();
    if let Some(account) = v["attestation"]["lease_account"].as_object_mut() {
        account.remove("vouches_for_scrapes");
        account.remove("scrape_chain");
    }
    v
}

/// issue 19 (adversarial review, chain vouching): the account's chain is a shortcut, never a
/// second reading: every receipt tampered in a way the chain could hide (a statement kept twice,
/// moved to another URL or exporter, shared with another scrape, dropped, reordered, its body
/// or block swapped, text beside base64) audits exactly as it does with every statement
/// checked on its own.
#[test]
fn vouching_for_the_statements_reads_every_receipt_as_checking_each_one_does() {
    let n = signed_with_account();
    let base = n.receipt();
    let route_scrape = |r: &Receipt, i: usize| r.scrapes[i].clone();
    let mut cases: Vec<(&str, Receipt)> = vec![("untouched", base.clone())];
    // A duplicate of scrape 2 appended.
    {
        let mut r = base.clone();
        let mut s = route_scrape(&r, 2);
        s.requested = Some(stamp(1450 * MS));
        s.completed_mono_ns = Some(1451 * MS);
        r.scrapes.insert(6, s);
        cases.push(("duplicate", r.with_capture()));
    }
    // Scrape 3 moved to a non-route URL.
    {
        let mut r = base.clone();
        r.scrapes[3].url = "http://10.0.0.2:8000/metrics".into();
        cases.push(("moved url", r.with_capture()));
    }
    // Scrape 3 as a DCGM exporter.
    {
        let mut r = base.clone();
        r.scrapes[3].exporter = loadproof_core::receipt::Exporter::Dcgm;
        cases.push(("dcgm", r.with_capture()));
    }
    // Scrape 3 failed.
    {
        let mut r = base.clone();
        r.scrapes[3].outcome = ScrapeOutcome::Failed { error: "t".into() };
        cases.push(("failed", r.with_capture()));
    }
    // Scrapes 2 and 3 swapped in order.
    {
        let mut r = base.clone();
        r.scrapes.swap(2, 3);
        cases.push(("swapped", r.with_capture()));
    }
    // A non-route scrape sharing scrape 2's body, recorded before it.
    {
        let mut r = base.clone();
        let mut s = route_scrape(&r, 2);
        s.url = "http://10.0.0.2:8000/metrics".into();
        r.scrapes.insert(1, s);
        cases.push(("shared body elsewhere first", r.with_capture()));
    }
    // A DCGM scrape sharing scrape 2's body, recorded before it.
    {
        let mut r = base.clone();
        let mut s = route_scrape(&r, 2);
        s.exporter = loadproof_core::receipt::Exporter::Dcgm;
        r.scrapes.insert(1, s);
        cases.push(("shared body dcgm first", r.with_capture()));
    }
    // Two route scrapes sharing scrape 2's body.
    {
        let mut r = base.clone();
        let s = route_scrape(&r, 2);
        r.scrapes.insert(3, s);
        cases.push(("shared body on route", r.with_capture()));
    }
    // Scrape 3's signed block removed.
    {
        let mut r = base.clone();
        r.evidence.remove("signed/metrics/3");
        cases.push(("no statement", r.with_capture()));
    }
    // Mixed text and base64.
    {
        let mut r = base.clone();
        for i in [1, 3, 5] {
            let name = format!("signed/metrics/{i}");
            let s = Signed::from_json(&r.block(&name).unwrap()).unwrap();
            r.evidence
                .insert(name, Evidence::of(s.to_text_json().as_bytes()));
        }
        cases.push(("mixed", r.with_capture()));
    }
    // Scrape 3 dropped.
    {
        let mut r = base.clone();
        r.scrapes.remove(3);
        cases.push(("dropped", r.with_capture()));
    }
    // The body of 2 and 3 swapped (the statements stay).
    {
        let mut r = base.clone();
        let b2 = r.block("metrics/2").unwrap().to_vec();
        let b3 = r.block("metrics/3").unwrap().to_vec();
        r.evidence.insert("metrics/2".into(), Evidence::of(&b3));
        r.evidence.insert("metrics/3".into(), Evidence::of(&b2));
        cases.push(("bodies swapped", r.with_capture()));
    }
    // Statement blocks of 2 and 3 swapped.
    {
        let mut r = base.clone();
        let b2 = r.block("signed/metrics/2").unwrap().to_vec();
        let b3 = r.block("signed/metrics/3").unwrap().to_vec();
        r.evidence
            .insert("signed/metrics/2".into(), Evidence::of(&b3));
        r.evidence
            .insert("signed/metrics/3".into(), Evidence::of(&b2));
        cases.push(("statements swapped", r.with_capture()));
    }
    // Statement 4 re-signed by the claimant's key.
    {
        let mut r = base.clone();
        let name = "signed/metrics/4";
        let s = Signed::from_json(&r.block(name).unwrap()).unwrap();
        let resigned = Signed::sign(&SecretKey::from_seed([7; 32]), s.statement());
        r.evidence.insert(
            name.into(),
            Evidence::of(resigned.to_text_json().as_bytes()),
        );
        cases.push(("re-signed", r.with_capture()));
    }
    // Phase relabelled.
    {
        let mut r = base.clone();
        r.scrapes[3].phase = Phase::After;
        cases.push(("phase", r.with_capture()));
    }
    let mut differ = Vec::new();
    for (what, r) in &cases {
        let v = audit_with(r, &trusting(&[9]));
        let p = audit_with(&per_statement(r), &trusting(&[9]));
        if read_alike(&v) != read_alike(&p) {
            differ.push(*what);
        }
    }
    assert!(differ.is_empty(), "{differ:?}");
}

/// issue 19 (adversarial review): the lease's route is an origin, but the engine's counters
/// are summed per URL. Two of the lessor's own numbered route bodies taken mid-run (counters
/// rising between them), kept as the before- and after-scrape of a second URL at the route's
/// origin (`/metrics?b`), made a "replica" that twin detection does not catch (its boundary
/// counts are not the route's) and whose delta, summed with the route's, agreed with a client
/// log inflated by half: with one response whose usage the lessor did not see (the client can
/// choose that), its token sums are only a lower bound, and the receipt read signed and
/// qualified at 30 completion tokens where the engine generated 20. The lessor serves one
/// sequence of bodies to the holder, so its statements naming the lease sit beside the scrapes
/// of one URL.
#[test]
fn a_body_the_lessor_served_at_its_route_kept_under_a_second_url_of_its_origin_is_refused_by_name()
{
    let mut n = signed_with_account();
    n.account_tokens = Some((30, 15, 1));
    n.records = vec![
        ok(0, 50, 800, 15, 8),
        ok(1, 60, 790, 15, 7),
        ok(2, 810, 1400, 15, 8),
        ok(3, 820, 1390, 15, 7),
    ];
    let start = "1.79594033677e+09";
    for (i, (generation, prompt)) in [
        ("100.0", "1000.0"),
        ("100.0", "1000.0"),
        ("100.0", "1000.0"),
        ("110.0", "1020.0"),
        ("110.0", "1020.0"),
    ]
    .into_iter()
    .enumerate()
    {
        n.scrapes[i + 1].2 = Some(metrics(generation, prompt, 2, 0, 0, start));
    }
    let mut r = n.receipt();
    for (i, phase) in [(2, Phase::Before), (4, Phase::After)] {
        r.scrapes[i].url = format!("{URL}/metrics?b");
        r.scrapes[i].phase = phase;
    }
    let a = audit_with(&r.with_capture(), &trusting(&[9]));
    assert!(
        !(a.qualified && a.attestation.level == AttestationLevel::Signed),
        "a replica made of two route bodies at the route's origin: {:?} generation tokens",
        a.engine.generation_tokens_delta
    );
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("signed/metrics/2") && i.contains("second URL")),
        "{:?}",
        a.inconsistencies
    );
}
