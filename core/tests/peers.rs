//! The peer engines' receipts (AIPerf, GuideLLM) through the audit: the execution gate, the
//! input held to the plan, and their records judged by the native client's rules.

use std::collections::BTreeMap;

use loadproof_core::audit::audit;
use loadproof_core::plan::{aiperf_input, guidellm_input, read_peer_rows};
use loadproof_core::receipt::{
    Axis, Engine, Evidence, Execution, ExitStatus, Protocol, Provenance, RECEIPT_SCHEMA, Receipt,
    ResultFile, Stamp, Subject, block,
};

const URL: &str = "http://127.0.0.1:8000";
const T0: i64 = 1_796_000_000_000_000_000;
/// Three planned rows, 100 ms apart, in ms.
const TRACE: &str = "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 4, \"hash_ids\": [0, 1]}\n\
{\"timestamp\": 100, \"input_length\": 20, \"output_length\": 3, \"hash_ids\": [2]}\n\
{\"timestamp\": 200, \"input_length\": 40, \"output_length\": 2, \"hash_ids\": [3]}\n";

fn protocol(engine: Engine) -> Protocol {
    Protocol {
        engine,
        client_version: Some("0.13.0".into()),
        backend: Some("openai".into()),
        endpoint: Some("/v1/completions".into()),
        base_url: Some(URL.into()),
        model: Some("tiny-llama".into()),
        tokenizer: None,
        trace_sha256: None,
        timed_trace_sha256: Some(loadproof_core::receipt::sha256_hex(TRACE.as_bytes())),
        plan_sha256: None,
        requests: Some(3),
        chunk_size: Some(512),
        sec_multiplier: Some("0.001".into()),
        arrival: Some("fixed_schedule".into()),
        ignore_eos: Some(true),
        max_concurrency: Some(0),
        python_hash_seed: None,
        sampling: BTreeMap::new(),
        argv: vec![],
        tls: None,
        key: String::new(),
    }
    .sealed()
}

fn aiperf_record(row: usize, late_ms: i64, error: bool) -> String {
    let credit = T0 + row as i64 * 100_000_000;
    let start = credit + late_ms * 1_000_000;
    if error {
        return format!(
            r#"{{"metadata":{{"conversation_id":"row-{row:06}","benchmark_phase":"profiling","credit_issued_ns":{credit},"request_start_ns":{start},"request_end_ns":{start}}},"metrics":{{"error_isl":{{"value":20}}}},"error":{{"code":500,"type":"Internal Server Error","message":"boom"}}}}"#
        );
    }
    format!(
        r#"{{"metadata":{{"conversation_id":"row-{row:06}","benchmark_phase":"profiling","credit_issued_ns":{credit},"request_start_ns":{start},"request_end_ns":{}}},"metrics":{{"time_to_first_token":{{"value":5.0}},"request_latency":{{"value":20.0}},"inter_chunk_latency":{{"value":[5.0,5.0]}},"input_sequence_length":{{"value":20}},"usage_prompt_tokens":{{"value":20}},"usage_completion_tokens":{{"value":{}}}}}}}"#,
        start + 20_000_000,
        [4, 3, 2].get(row).copied().unwrap_or(1)
    )
}

fn aiperf_config() -> String {
    serde_json::json!({
        "models": ["tiny-llama"],
        "endpoint": {"urls": [URL], "type": "completions", "streaming": true, "extra": {"ignore_eos": true}},
        "datasets": [{"name": "main", "type": "file", "path": "input.jsonl", "format": "mooncake_trace", "block_size": 512}],
        "phases": [{"name": "profiling", "type": "fixed_schedule", "auto_offset": false, "start_offset": 0}],
    })
    .to_string()
}

fn receipt(engine: Engine, exit: i32, result: (&str, String), extra: &[(&str, String)]) -> Receipt {
    let mut evidence = BTreeMap::new();
    evidence.insert(block::STDOUT.to_owned(), Evidence::of(b""));
    evidence.insert(block::STDERR.to_owned(), Evidence::of(b""));
    evidence.insert(
        block::TIMED_TRACE.to_owned(),
        Evidence::of(TRACE.as_bytes()),
    );
    evidence.insert(result.0.to_owned(), Evidence::of(result.1.as_bytes()));
    for (name, bytes) in extra {
        evidence.insert((*name).to_owned(), Evidence::of(bytes.as_bytes()));
    }
    Receipt {
        schema: RECEIPT_SCHEMA.into(),
        protocol: protocol(engine),
        subject: Subject {
            model: known("tiny-llama"),
            model_revision: known("rev-1"),
            gpu_sku: known("none"),
            engine: known("vllm"),
            engine_version: known("0.32.0"),
            knobs: BTreeMap::new(),
            simulator: false,
        },
        provenance: Provenance {
            source: "fire".into(),
            generator: "test".into(),
            command: vec![],
            caller: BTreeMap::new(),
            written_unix_ns: T0,
        },
        execution: Execution::Ran {
            program: engine.label().to_ascii_lowercase(),
            argv: vec![],
            env: BTreeMap::new(),
            exit: ExitStatus {
                code: Some(exit),
                signal: None,
            },
            stdout: block::STDOUT.into(),
            stderr: block::STDERR.into(),
            result: ResultFile::Kept {
                block: result.0.to_owned(),
            },
            started: Some(Stamp {
                mono_ns: 0,
                unix_ns: T0,
            }),
            ended: Some(Stamp {
                mono_ns: 500_000_000,
                unix_ns: T0 + 500_000_000,
            }),
            interrupted: None,
        },
        scrapes: vec![],
        evidence,
        notes: vec![],
        lease: None,
        implementation: None,
        derived: None,
        stream: None,
        packed: Default::default(),
    }
}

fn known(v: &str) -> Axis {
    Axis::Known {
        value: v.into(),
        source: "caller".into(),
    }
}

fn rows() -> Vec<loadproof_core::plan::PeerRow> {
    read_peer_rows(TRACE.as_bytes(), "0.001").unwrap()
}

fn aiperf(exit: i32, records: &[String], input: Vec<u8>) -> Receipt {
    receipt(
        Engine::Aiperf,
        exit,
        (block::AIPERF_EXPORT, records.join("\n") + "\n"),
        &[
            (block::AIPERF_INPUT, String::from_utf8(input).unwrap()),
            (block::AIPERF_CONFIG, aiperf_config()),
        ],
    )
    .with_capture()
}

fn three_ok() -> Vec<String> {
    (0..3).map(|r| aiperf_record(r, 2, false)).collect()
}

#[test]
fn a_peer_tools_records_are_read_only_when_it_exited_0_on_its_own() {
    let read = audit(&aiperf(0, &three_ok(), aiperf_input(&rows())));
    assert!(read.execution_gate.read, "{:?}", read.execution_gate);
    let ledger = read.ledger.as_ref().unwrap();
    assert_eq!((ledger.completed, ledger.closed), (3, true));
    assert_eq!(read.inconsistencies, Vec::<String>::new());
    // AIPerf's zero is its least-late credit: every send here is 2 ms after its credit.
    let arrival = read.arrival.as_ref().unwrap();
    assert!(
        (arrival.lag_max_ms.unwrap() - 2.0).abs() < 1e-6,
        "{arrival:?}"
    );

    let failed = audit(&aiperf(1, &three_ok(), aiperf_input(&rows())));
    assert!(!failed.execution_gate.read);
    assert!(
        failed
            .execution_gate
            .reason
            .contains("AIPerf's process ended with exit code 1"),
        "{}",
        failed.execution_gate.reason
    );
    assert!(failed.ledger.is_none());
}

#[test]
fn a_peer_tool_fed_anything_but_the_plan_is_inconsistent() {
    let mut edited = rows();
    edited[1].arrival_ns += 1_000_000;
    let a = audit(&aiperf(0, &three_ok(), aiperf_input(&edited)));
    assert!(
        a.inconsistencies.iter().any(|i| i.contains(
            "AIPerf's input is not the plan's schedule translated (first difference: line 2)"
        )),
        "{:?}",
        a.inconsistencies
    );
    assert!(!a.qualified);
}

#[test]
fn an_offered_request_without_a_record_is_failed_and_a_failure_is_named_by_status() {
    let records = [aiperf_record(0, 2, false), aiperf_record(1, 2, true)];
    let a = audit(&aiperf(0, &records, aiperf_input(&rows())));
    let ledger = a.ledger.as_ref().unwrap();
    assert_eq!(ledger.completed, 1);
    assert_eq!(ledger.failed, Some(2), "one 500, one without a record");
    assert_eq!(ledger.dispositions.get("http"), Some(&1));
    assert!(!ledger.closed);
    assert!(!a.standings["ledger"].positive);
}

#[test]
fn a_record_naming_no_planned_row_is_an_inconsistency_not_a_request() {
    let mut records = three_ok();
    records[2] = records[2].replace("row-000002", "row-000009");
    let a = audit(&aiperf(0, &records, aiperf_input(&rows())));
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("row-000009") || i.contains("beyond the 3 offered")),
        "{:?}",
        a.inconsistencies
    );
    assert!(!a.ledger.as_ref().unwrap().closed);
}

fn guidellm_record(row: usize, max_tokens: u32, late_ms: f64) -> String {
    let t0 = T0 as f64 / 1e9;
    let target = t0 + row as f64 * 0.1;
    let start = target + late_ms / 1e3;
    format!(
        r#"{{"request_args":"{{\"body\":{{\"max_tokens\":{max_tokens}}}}}","info":{{"status":"completed","settings":{{"relative_timestamp":{rel}}},"timings":{{"queued":{queued},"targeted_start":{target},"request_start":{start},"first_token_iteration":{first},"request_end":{end}}}}},"prompt_tokens":20,"output_tokens":{max_tokens}}}"#,
        rel = row as f64 * 0.1,
        queued = t0 - 1.0 + row as f64 * 0.001,
        first = start + 0.005,
        end = start + 0.02,
    )
}

fn guidellm(records: &[String]) -> Receipt {
    let report = format!(
        r#"{{"benchmarks":[{{"scheduler_state":{{"start_time":{},"processing_requests":0,"cancelled_requests":0}},"requests":{{"successful":[{}],"errored":[],"incomplete":[]}}}}]}}"#,
        T0 as f64 / 1e9,
        records.join(",")
    );
    let input = String::from_utf8(guidellm_input(&rows())).unwrap();
    let mut r = receipt(
        Engine::Guidellm,
        0,
        (block::GUIDELLM_REPORT, report),
        &[(block::GUIDELLM_INPUT, input)],
    );
    if let Execution::Ran { argv, .. } = &mut r.execution {
        *argv = [
            "guidellm",
            "run",
            "--backend",
            &format!("kind=openai_http,target={URL},model=tiny-llama,request_format=/v1/completions,verify=true"),
            "--profile",
            "kind=replay,schedule_turn=timestamp",
            "--data",
            "kind=mooncake,source.kind=json_file,source.path=input.jsonl,hash_id_block_size=512",
            "--tokenizer",
            "kind=huggingface_auto,model=/models/tiny-llama",
            "--output",
            "kind=json,path=benchmarks.json",
            "--disable-console-interactive",
        ]
        .map(String::from)
        .to_vec();
    }
    r.with_capture()
}

#[test]
fn guidellm_records_are_placed_by_queue_order_and_checked_against_their_rows() {
    let ok = [
        guidellm_record(0, 4, 1.0),
        guidellm_record(1, 3, 1.0),
        guidellm_record(2, 2, 1.0),
    ];
    let a = audit(&guidellm(&ok));
    assert!(a.execution_gate.read, "{:?}", a.execution_gate);
    assert_eq!(a.inconsistencies, Vec::<String>::new());
    assert_eq!(a.ledger.as_ref().unwrap().completed, 3);
    let lag = a.arrival.as_ref().unwrap().lag_max_ms.unwrap();
    assert!((lag - 1.0).abs() < 0.01, "{lag}");
    let itl = a.latency.iter().find(|l| l.metric == "itl").unwrap();
    assert_eq!(itl.count, Some(0));
    assert!(itl.source.contains("first and last token"));

    // Rows 1 and 2 swapped in queue order: each is checked against the row it lands on.
    let mut swapped = ok.clone();
    swapped[1] = guidellm_record(1, 2, 1.0);
    let a = audit(&guidellm(&swapped));
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("asked for 2 tokens, the row for 3")),
        "{:?}",
        a.inconsistencies
    );
    assert!(!a.qualified);
}

#[test]
fn a_guidellm_run_with_sampling_or_a_constraint_is_inconsistent() {
    let ok = [
        guidellm_record(0, 4, 1.0),
        guidellm_record(1, 3, 1.0),
        guidellm_record(2, 2, 1.0),
    ];
    let mut r = guidellm(&ok);
    if let Execution::Ran { argv, .. } = &mut r.execution {
        argv.extend(["--metrics".into(), "kind=generative,sample_size=2".into()]);
    }
    let a = audit(&r.with_capture());
    assert!(
        a.inconsistencies.iter().any(|i| i.contains("--metrics")),
        "{:?}",
        a.inconsistencies
    );
}

// --- from the adversarial pass ------------------------------------------------------------

fn aiperf_with_config(config: serde_json::Value, records: &[String]) -> Receipt {
    receipt(
        Engine::Aiperf,
        0,
        (block::AIPERF_EXPORT, records.join("\n") + "\n"),
        &[
            (
                block::AIPERF_INPUT,
                String::from_utf8(aiperf_input(&rows())).unwrap(),
            ),
            (block::AIPERF_CONFIG, config.to_string()),
        ],
    )
    .with_capture()
}

#[test]
fn aiperf_config_endpoint_extra_overrides_prompt_and_max_tokens_is_inconsistent() {
    let mut config: serde_json::Value = serde_json::from_str(&aiperf_config()).unwrap();
    config["endpoint"]["extra"]["max_tokens"] = 1.into();
    config["endpoint"]["extra"]["prompt"] = "hi".into();
    config["phases"][0]["request_count"] = 1.into();
    // What such a run records: one output token per request, against rows asking 4, 3 and 2.
    let records: Vec<String> = three_ok()
        .iter()
        .map(|r| {
            r.replace(
                r#""usage_completion_tokens":{"value":4}"#,
                r#""usage_completion_tokens":{"value":1}"#,
            )
        })
        .collect();
    let a = audit(&aiperf_with_config(config, &records));
    for needle in [
        "/endpoint/extra/max_tokens",
        "/endpoint/extra/prompt",
        "/phases/0/request_count",
        "completed with 1 output tokens, the row asks for 4",
    ] {
        assert!(
            a.inconsistencies.iter().any(|i| i.contains(needle)),
            "{needle}: {:?}",
            a.inconsistencies
        );
    }
    assert!(!a.qualified);
}

#[test]
fn a_completed_peer_record_without_tokens_is_named() {
    let mut records = three_ok();
    records[1] = aiperf_record(1, 2, true).replace(
        r#","error":{"code":500,"type":"Internal Server Error","message":"boom"}"#,
        "",
    );
    let a = audit(&aiperf(0, &records, aiperf_input(&rows())));
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("completed without a first token")),
        "{:?}",
        a.inconsistencies
    );
    assert!(!a.qualified);
}

#[test]
fn peer_record_arithmetic_overflow_is_refused_not_a_panic() {
    let ok = three_ok();
    for (from, to) in [
        (
            "\"credit_issued_ns\":",
            "\"credit_issued_ns\":-9223372036854775808,\"x\":",
        ),
        (
            "\"request_start_ns\":",
            "\"request_start_ns\":-9223372036854775808,\"x\":",
        ),
        (
            "\"time_to_first_token\":{\"value\":5.0}",
            "\"time_to_first_token\":{\"value\":1e300}",
        ),
        (
            "\"inter_chunk_latency\":{\"value\":[5.0,5.0]}",
            "\"inter_chunk_latency\":{\"value\":[1e300,1e300]}",
        ),
    ] {
        let mut records = ok.clone();
        records[0] = records[0].replacen(from, to, 1);
        let a = audit(&aiperf(0, &records, aiperf_input(&rows())));
        assert!(!a.execution_gate.read, "{to}: {:?}", a.execution_gate);
    }
    let g = [
        guidellm_record(0, 4, 1.0)
            .replace("\"relative_timestamp\":0", "\"relative_timestamp\":-1e300"),
        guidellm_record(1, 3, 1.0),
        guidellm_record(2, 2, 1.0),
    ];
    let a = audit(&guidellm(&g));
    assert!(!a.execution_gate.read, "{:?}", a.execution_gate);
    // A hostile start stamp in the execution does not overflow the conversion either.
    let mut r = aiperf(0, &ok, aiperf_input(&rows()));
    if let Execution::Ran { started, .. } = &mut r.execution {
        *started = Some(Stamp {
            mono_ns: i64::MAX,
            unix_ns: i64::MIN,
        });
    }
    let _ = audit(&r.with_capture());
}

#[test]
fn guidellm_missing_targeted_start_is_named_and_lag_is_against_the_plan() {
    // Row 1 sent 300 ms late, its targeted_start removed: its lag is still measured against
    // the plan's time from GuideLLM's zero, and the missing field is named.
    let records = [
        guidellm_record(0, 4, 1.0),
        {
            let r = guidellm_record(1, 3, 300.0);
            let at = r.find("\"targeted_start\":").unwrap();
            let end = at + r[at..].find(',').unwrap() + 1;
            format!("{}{}", &r[..at], &r[end..])
        },
        guidellm_record(2, 2, 1.0),
    ];
    let a = audit(&guidellm(&records));
    let lag = a.arrival.as_ref().unwrap().lag_max_ms.unwrap();
    assert!((lag - 300.0).abs() < 0.01, "{lag}");
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("no info.timings.targeted_start")),
        "{:?}",
        a.inconsistencies
    );
}

#[test]
fn guidellm_argv_with_any_flag_loadproof_never_builds_is_inconsistent() {
    let ok = [
        guidellm_record(0, 4, 1.0),
        guidellm_record(1, 3, 1.0),
        guidellm_record(2, 2, 1.0),
    ];
    type Edit<'a> = &'a dyn Fn(&mut Vec<String>);
    let edits: [Edit<'_>; 4] = [
        &|argv| argv.push("--constraint=kind=max_duration,seconds=1".into()),
        &|argv| argv.extend(["-c".into(), "scenario.yaml".into()]),
        &|argv| argv[3].push_str(",extras.body.ignore_eos=false"),
        &|argv| argv[3] = argv[3].replace("verify=true", "verify=false"),
    ];
    for edit in edits {
        let mut r = guidellm(&ok);
        if let Execution::Ran { argv, .. } = &mut r.execution {
            edit(argv);
        }
        let a = audit(&r.with_capture());
        assert!(
            a.inconsistencies
                .iter()
                .any(|i| i.starts_with("GuideLLM ran with")),
            "{:?}",
            a.inconsistencies
        );
    }
}

#[test]
fn guidellm_record_without_relative_timestamp_or_max_tokens_cannot_be_joined_silently() {
    let stripped = guidellm_record(1, 3, 1.0)
        .replace("\"settings\":{\"relative_timestamp\":0.1},", "")
        .replace(r#""request_args":"{\"body\":{\"max_tokens\":3}}","#, "");
    let a = audit(&guidellm(&[
        guidellm_record(0, 4, 1.0),
        stripped,
        guidellm_record(2, 2, 1.0),
    ]));
    for needle in ["no info.settings.relative_timestamp", "no max_tokens"] {
        assert!(
            a.inconsistencies.iter().any(|i| i.contains(needle)),
            "{needle}: {:?}",
            a.inconsistencies
        );
    }
}

/// A GuideLLM receipt whose report files `successful` and `errored` records as given.
fn guidellm_groups(successful: &[String], errored: &[String], processing: u64) -> Receipt {
    let mut r = guidellm(&[]);
    let report = format!(
        r#"{{"benchmarks":[{{"scheduler_state":{{"start_time":{},"processing_requests":{processing},"cancelled_requests":0}},"requests":{{"successful":[{}],"errored":[{}],"incomplete":[]}}}}]}}"#,
        T0 as f64 / 1e9,
        successful.join(","),
        errored.join(",")
    );
    r.evidence.insert(
        block::GUIDELLM_REPORT.to_owned(),
        loadproof_core::receipt::Evidence::of(report.as_bytes()),
    );
    r.with_capture()
}

// From the adversarial pass on the order-preserving join (each was a positive standing or an
// unnamed attribution, or a panic).

#[test]
fn an_offered_row_without_a_record_has_no_recorded_send_even_when_a_record_lands_beyond_the_rows() {
    // Row 0's record is queued last: rows 1 and 2 take theirs, row 0's fits no later row and
    // lands beyond the plan. It was sent 90 ms late; it must neither vanish with a lag of 0 nor
    // stand in for row 0.
    let t0 = T0 as f64 / 1e9;
    let late0 = guidellm_record(0, 4, 90.0).replace(
        &format!("\"queued\":{}", t0 - 1.0),
        &format!("\"queued\":{}", t0 - 0.5),
    );
    let a = audit(&guidellm(&[
        guidellm_record(1, 3, 1.0),
        guidellm_record(2, 2, 1.0),
        late0,
    ]));
    assert!(!a.qualified);
    assert!(!a.standings["ledger"].positive);
    let arrival = &a.standings["arrival"];
    assert!(!arrival.positive, "{arrival:?}");
    assert!(
        arrival
            .reason
            .contains("1 offered requests have no recorded send time"),
        "{arrival:?}"
    );
    // A second record of row 2 does not fill row 0's place either.
    let a = audit(&guidellm(&[
        guidellm_record(1, 3, 1.0),
        guidellm_record(2, 2, 1.0),
        guidellm_record(2, 2, 1.0),
    ]));
    assert!(
        !a.standings["arrival"].positive,
        "{:?}",
        a.standings["arrival"]
    );
}

#[test]
fn a_failed_guidellm_record_is_checked_against_its_rows_max_tokens() {
    let bad = guidellm_record(1, 99, 1.0).replace(
        "\"status\":\"completed\"",
        "\"status\":\"errored\",\"error\":\"ReadError('x')\"",
    );
    let a = audit(&guidellm_groups(
        &[guidellm_record(0, 4, 1.0), guidellm_record(2, 2, 1.0)],
        &[bad],
        0,
    ));
    assert!(
        a.inconsistencies
            .iter()
            .any(|i| i.contains("asked for 99 tokens, the row for 3")),
        "{:?}",
        a.inconsistencies
    );
}

#[test]
fn client_token_totals_do_not_overflow_on_a_hostile_count() {
    for field in ["\"output_tokens\":3", "\"prompt_tokens\":20"] {
        let name = field.split(':').next().unwrap_or_default();
        let huge = guidellm_record(1, 3, 1.0).replace(field, &format!("{name}:{}", u64::MAX));
        let a = audit(&guidellm(&[
            guidellm_record(0, 4, 1.0),
            huge,
            guidellm_record(2, 2, 1.0),
        ]));
        assert!(!a.qualified, "{field}");
    }
}

#[test]
fn hostile_numbers_in_a_guidellm_report_never_panic_nor_qualify_unnamed() {
    for (from, to) in [
        ("\"relative_timestamp\":0.1", "\"relative_timestamp\":1e11"),
        ("\"relative_timestamp\":0.1", "\"relative_timestamp\":-0.0"),
        (
            "\"relative_timestamp\":0.1",
            "\"relative_timestamp\":5e-324",
        ),
        (
            "\\\"max_tokens\\\":3",
            "\\\"max_tokens\\\":18446744073709551615",
        ),
        ("\\\"max_tokens\\\":3", "\\\"max_tokens\\\":-3"),
        ("\\\"max_tokens\\\":3", "\\\"max_tokens\\\":\\\"3\\\""),
        ("\"request_start\":", "\"request_start\":0,\"x\":"),
        ("\"queued\":", "\"queued\":1e11,\"x\":"),
        ("\"targeted_start\":", "\"targeted_start\":1e11,\"x\":"),
    ] {
        let r = guidellm_record(1, 3, 1.0);
        assert!(r.contains(from), "{from} not in {r}");
        let r = r.replacen(from, to, 1);
        let a = audit(&guidellm(&[
            guidellm_record(0, 4, 1.0),
            r,
            guidellm_record(2, 2, 1.0),
        ]));
        assert!(!a.qualified || a.inconsistencies.is_empty(), "{to}");
    }
}
