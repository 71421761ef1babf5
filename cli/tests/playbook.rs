//! `loadproof playbook row|match|examples` end to end: a measured row built from receipts the
//! debug binary fires at `loadproof sim` (one sim on one fixed port, restarted between fires so
//! every receipt names the same endpoint and each fire gets its own lease), matched against its
//! own regime; every refusal of `row` by its exit code and reason; the examples regenerated
//! byte for byte and never selected.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use loadproof_core::plan::PlanDoc;
use loadproof_core::playbook::{
    Evidence, MatchPolicy, Playbook, Query, Reason, RegimeAxes, SIM_ENGINE, match_rows,
};
use loadproof_core::receipt::sha256_hex;

mod common;

use common::{s, shared, stderr};

/// One test at a time, fires or not: a native fire hashes the debug executable and anything
/// else running beside it (ingesting the real traces, synthesizing) pushes the dispatch lag over
/// its bound; the fixed port admits one sim.
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn loadproof(args: &[&str]) -> Output {
    common::run(args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A port that was free a moment ago (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `loadproof sim` on `port` with a fast model and `max_num_seqs`, killed on drop.
struct PortSim {
    child: Child,
}

impl PortSim {
    fn start(port: u16, max_num_seqs: &str) -> PortSim {
        let port = port.to_string();
        // The previous sim's socket may linger a moment after it was killed.
        for _ in 0..50 {
            let mut child = Command::new(env!("CARGO_BIN_EXE_loadproof"))
                .args(["sim", "--port", &port, "--max-num-seqs", max_num_seqs])
                .args([
                    "--prefill-tokens-per-s",
                    "100000000",
                    "--decode-step-ms",
                    "1",
                    "--decode-ms-per-seq",
                    "0",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut err = BufReader::new(child.stderr.take().unwrap());
            let mut line = String::new();
            err.read_line(&mut line).unwrap();
            if line.starts_with("loadproof sim listening on ") {
                std::thread::spawn(move || {
                    let mut sink = String::new();
                    let _ = err.read_to_string(&mut sink);
                });
                return PortSim { child };
            }
            let _ = child.kill();
            let _ = child.wait();
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("loadproof sim could not listen on port {port}");
    }
}

impl Drop for PortSim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Mooncake trace of `n` rows `gap_ms` apart (lengths varied by `shift`), planned with a
/// 0.1 s burstiness window: (trace file, plan directory).
fn planned(dir: &Path, name: &str, n: u64, gap_ms: u64, shift: u64) -> (PathBuf, PathBuf) {
    let trace = dir.join(format!("{name}.jsonl"));
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{i}]}}\n",
                i * gap_ms,
                20 + (i + shift) % 5 * 30,
                3 + (i + shift) % 4
            )
        })
        .collect();
    std::fs::write(&trace, text).unwrap();
    let plan = dir.join(format!("{name}-plan"));
    let out = loadproof(&["plan", s(&trace), "--out", s(&plan), "--window", "0.1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (trace, plan)
}

/// Everything fired once and shared by the tests.
struct Fired {
    dir: PathBuf,
    trace: PathBuf,
    plan: PathBuf,
    baseline: [PathBuf; 2],
    treatment: [PathBuf; 2],
    unleased: PathBuf,
    other_plan: PathBuf,
}

/// Fires `plan` at a fresh sim on `port` (`max_num_seqs`), stating `knob`, under a lease
/// unless `lease` is false; the receipt's path.
fn fire(
    port: u16,
    plan: &Path,
    out: PathBuf,
    max_num_seqs: &str,
    knob: &str,
    lease: bool,
) -> PathBuf {
    let _sim = PortSim::start(port, max_num_seqs);
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut args = vec![
        "fire",
        s(plan),
        "--endpoint",
        endpoint.as_str(),
        "--engine",
        "native",
        "--scrape-interval-ms",
        "100",
        "--lag-bound-ms",
        "50",
        "--knob",
        knob,
        "--out",
        s(&out),
    ];
    if lease {
        args.extend_from_slice(&["--acquire-lease", "60"]);
    }
    let result = loadproof(&args);
    assert_eq!(result.status.code(), Some(0), "{}", stderr(&result));
    out
}

fn fired() -> &'static Fired {
    static FIRED: OnceLock<Fired> = OnceLock::new();
    FIRED.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("loadproof-playbook-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (trace, plan) = planned(&dir, "a", 12, 30, 0);
        let (_, other) = planned(&dir, "b", 12, 35, 2);
        let port = free_port();
        let r = |name: &str| dir.join(format!("{name}.receipt.json"));
        let base = "max_num_seqs=64";
        let treat = "max_num_seqs=2";
        Fired {
            baseline: [
                fire(port, &plan, r("b1"), "64", base, true),
                fire(port, &plan, r("b2"), "64", base, true),
            ],
            treatment: [
                fire(port, &plan, r("t1"), "2", treat, true),
                fire(port, &plan, r("t2"), "2", treat, true),
            ],
            unleased: fire(port, &plan, r("unleased"), "64", base, false),
            other_plan: fire(port, &other, r("other"), "64", base, true),
            dir,
            trace,
            plan,
        }
    })
}

/// A fresh playbook path (not yet written) for one test.
fn playbook_path(name: &str) -> PathBuf {
    let p = fired().dir.join(format!("{name}.playbook.json"));
    let _ = std::fs::remove_file(&p);
    p
}

fn row(playbook: &Path, id: &str, baseline: &[&Path], treatment: &[&Path], knob: &str) -> Output {
    let mut args = vec!["playbook", "row", "--baseline"];
    args.extend(baseline.iter().map(|p| s(p)));
    args.push("--treatment");
    args.extend(treatment.iter().map(|p| s(p)));
    args.extend_from_slice(&[
        "--knob",
        knob,
        "--id",
        id,
        "--playbook",
        s(playbook),
        "--window",
        "0.1",
    ]);
    loadproof(&args)
}

/// The sim's identity, as the query states it.
const SIM_QUERY: [&str; 10] = [
    "--model",
    "sim",
    "--model-revision",
    "none (simulator)",
    "--gpu-sku",
    "none (simulator)",
    "--engine",
    SIM_ENGINE,
    "--engine-version",
    env!("CARGO_PKG_VERSION"),
];

fn matching(playbook: &Path, live: &[&str], extra: &[&str]) -> Output {
    let mut args = vec!["playbook", "match", s(playbook)];
    args.extend_from_slice(live);
    args.extend_from_slice(&SIM_QUERY);
    args.extend_from_slice(extra);
    loadproof(&args)
}

/// The measured row of the two fired arms, in a fresh playbook.
fn measured_playbook(name: &str) -> PathBuf {
    let f = fired();
    let p = playbook_path(name);
    let out = row(
        &p,
        "sim-max-num-seqs-2",
        &[&f.baseline[0], &f.baseline[1]],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    p
}

fn plan_doc(plan: &Path) -> PlanDoc {
    serde_json::from_slice(&std::fs::read(plan.join("plan.json")).unwrap()).unwrap()
}

#[test]
fn a_row_built_from_fired_receipts_is_measured_and_names_them() {
    let _turn = turn();
    let f = fired();
    let p = playbook_path("measured");
    let out = row(
        &p,
        "sim-max-num-seqs-2",
        &[&f.baseline[0], &f.baseline[1]],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("row \"sim-max-num-seqs-2\" appended"),
        "{text}"
    );
    for m in [
        "throughput_tok_s",
        "ttft_p50_ms",
        "ttft_p99_ms",
        "itl_p50_ms",
        "itl_p99_ms",
    ] {
        assert!(text.contains(m), "{m}: {text}");
    }
    assert!(
        text.contains("knob under test: baseline max_num_seqs=64, treatment max_num_seqs=2"),
        "{text}"
    );
    assert!(
        !text.contains("delta_is_floor"),
        "not a prefix knob: {text}"
    );

    let book = Playbook::from_json(&std::fs::read(&p).unwrap()).unwrap();
    let [r] = book.rows() else {
        panic!("{:?}", book.rows());
    };
    assert_eq!(r.evidence(), Evidence::Measured);
    assert!(r.is_selectable());
    let id = r.identity();
    assert_eq!(id.engine, SIM_ENGINE);
    assert_eq!(id.model, "sim");
    assert_eq!(
        id.knobs,
        [("max_num_seqs".to_owned(), "2".to_owned())].into()
    );
    assert_eq!(id.concurrency.to_string(), "uncapped");
    assert_eq!(
        id.source_kind.to_string(),
        "recorded traffic, prefixes recorded"
    );
    let digest = |p: &Path| sha256_hex(&std::fs::read(p).unwrap());
    let prov = r.provenance();
    assert_eq!(
        prov.baseline_receipts,
        [digest(&f.baseline[0]), digest(&f.baseline[1])]
    );
    assert_eq!(
        prov.treatment_receipts,
        [digest(&f.treatment[0]), digest(&f.treatment[1])]
    );
    assert!(prov.verified_unix_ns.is_some());
    let doc = plan_doc(&f.plan);
    assert_eq!(prov.trace_sha256, doc.source.sha256);
    // The regime of the schedule the receipts fired is the plan's regime of the trace as fired.
    assert_eq!(*r.regime(), RegimeAxes::of(&doc.regime).unwrap());
    assert_eq!(r.delta().repeats(), 2);

    // A second row under the same id is refused before any receipt is read.
    let again = row(
        &p,
        "sim-max-num-seqs-2",
        &[&f.baseline[0], &f.baseline[1]],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs=2",
    );
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("already has id"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn a_query_identical_to_the_row_selects_it_at_distance_0() {
    let _turn = turn();
    let f = fired();
    let p = measured_playbook("exact");
    let plan_json = f.plan.join("plan.json");
    let knob = ["--knob", "max_num_seqs=2"];
    // The plan's own regime (the trace as fired).
    let out = matching(&p, &["--regime", s(&plan_json)], &knob);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(text.contains("1 of 1 row(s) apply"), "{text}");
    assert!(
        text.contains("sim-max-num-seqs-2  distance 0.000 (exact regime match)"),
        "{text}"
    );
    // The same source trace, ingested as live traffic.
    let out = matching(
        &p,
        &["--trace", s(&f.trace), "--window", "0.1"],
        &[&knob[..], &["--json"]].concat(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["schema"], "loadproof.playbook.match/v1");
    assert_eq!(report["selected"][0]["row"]["id"], "sim-max-num-seqs-2");
    assert_eq!(report["selected"][0]["exact"], true);
    assert_eq!(report["selected"][0]["distance"]["linf"], 0.0);
    assert_eq!(report["selected"][0]["delta_is_floor"], false);
    assert_eq!(report["rejected"], serde_json::json!([]));
    // A trace at another window is another quantity: not comparable, refused by name.
    let out = matching(&p, &["--trace", s(&f.trace), "--window", "0.2"], &knob);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("burstiness window"),
        "{}",
        stdout(&out)
    );
    // `trace inspect --json` output for the same trace.
    let inspect = loadproof(&["trace", "inspect", s(&f.trace), "--window", "0.1", "--json"]);
    assert_eq!(inspect.status.code(), Some(0));
    let inspect_json = f.dir.join("inspect.json");
    std::fs::write(&inspect_json, &inspect.stdout).unwrap();
    let out = matching(&p, &["--regime", s(&inspect_json)], &knob);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("distance 0.000 (exact regime match)"));
    // A bare regime says nothing about prefixes: the caller must.
    let bare = f.dir.join("bare-regime.json");
    let regime = serde_json::to_string(&plan_doc(&f.plan).regime).unwrap();
    std::fs::write(&bare, regime).unwrap();
    let out = matching(&p, &["--regime", s(&bare)], &knob);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--prefixes"), "{}", stderr(&out));
    let out = matching(
        &p,
        &["--regime", s(&bare)],
        &[&knob[..], &["--prefixes", "recorded"]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_query_with_another_knob_value_is_rejected_by_the_knobs_gate() {
    let _turn = turn();
    let f = fired();
    let p = measured_playbook("other-knob");
    let plan_json = f.plan.join("plan.json");
    let out = matching(
        &p,
        &["--regime", s(&plan_json)],
        &["--knob", "max_num_seqs=64"],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("0 of 1 row(s) apply"), "{text}");
    assert!(
        text.contains(
            "sim-max-num-seqs-2  gate knobs: row has max_num_seqs=2, query has max_num_seqs=64"
        ),
        "{text}"
    );
    // Another engine version is another gate, named too.
    let mut args = vec!["playbook", "match", s(&p), "--regime", s(&plan_json)];
    let mut query = SIM_QUERY;
    query[9] = "0.0.0";
    args.extend_from_slice(&query);
    args.extend_from_slice(&["--knob", "max_num_seqs=2", "--json"]);
    let out = loadproof(&args);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["rejected"][0]["reason"]["gate"],
        "engine_and_version"
    );
}

#[test]
fn an_unleased_baseline_receipt_is_refused_naming_the_window_standing() {
    let _turn = turn();
    let f = fired();
    let p = playbook_path("unleased");
    let out = row(
        &p,
        "r",
        &[&f.unleased, &f.baseline[1]],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("baseline receipt 0")
            && err.contains("is not qualified: standing window failed"),
        "{err}"
    );
    assert!(err.contains(s(&f.unleased)), "{err}");
    assert!(!p.exists(), "nothing is written on a refusal");
}

#[test]
fn receipts_of_two_plans_are_not_one_experiment() {
    let _turn = turn();
    let f = fired();
    let p = playbook_path("two-plans");
    let out = row(
        &p,
        "r",
        &[&f.baseline[0], &f.other_plan],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("the arms are not one experiment: baseline receipt 1 ran another protocol"),
        "{err}"
    );
    for field in ["plan_sha256", "timed_trace_sha256", "trace_sha256"] {
        assert!(err.contains(field), "{field}: {err}");
    }
    assert!(err.contains(s(&f.other_plan)), "{err}");
    assert!(!p.exists());
}

#[test]
fn one_repeat_per_arm_and_unequal_arms_are_refused() {
    let _turn = turn();
    let f = fired();
    let p = playbook_path("repeats");
    let out = row(
        &p,
        "r",
        &[&f.baseline[0]],
        &[&f.treatment[0]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 receipt(s) per arm: at least 2 repeats are needed"),
        "{}",
        stderr(&out)
    );
    let out = row(
        &p,
        "r",
        &[&f.baseline[0], &f.baseline[1]],
        &[&f.treatment[0]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("unequal arms: 2 baseline vs 1 treatment"),
        "{}",
        stderr(&out)
    );
    assert!(!p.exists());
}

#[test]
fn the_stated_knob_must_be_the_treatments_and_not_the_baselines() {
    let _turn = turn();
    let f = fired();
    let p = playbook_path("knob");
    // The arms swapped: the "treatment" states 64, the stated knob is 2.
    let out = row(
        &p,
        "r",
        &[&f.treatment[0], &f.treatment[1]],
        &[&f.baseline[0], &f.baseline[1]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "treatment receipt 0: knob max_num_seqs is \"64\", but the stated treatment is max_num_seqs=2"
        ),
        "{}",
        stderr(&out)
    );
    // The same receipts in both arms.
    let out = row(
        &p,
        "r",
        &[&f.treatment[0], &f.treatment[1]],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("baseline receipt 0: knob max_num_seqs=2 is the stated treatment itself"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unreadable_receipts_and_playbooks_exit_2() {
    let _turn = turn();
    let f = fired();
    let p = playbook_path("unreadable");
    let missing = f.dir.join("missing.json");
    let out = row(
        &p,
        "r",
        &[&missing, &f.baseline[1]],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.json"), "{}", stderr(&out));
    let not_receipt = f.dir.join("not-a-receipt.json");
    std::fs::write(&not_receipt, "{\"schema\": 1}").unwrap();
    let out = row(
        &p,
        "r",
        &[&not_receipt, &f.baseline[1]],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs=2",
    );
    assert_eq!(out.status.code(), Some(2));
    let out = row(
        &p,
        "r",
        &[&f.baseline[0], &f.baseline[1]],
        &[&f.treatment[0], &f.treatment[1]],
        "max_num_seqs",
    );
    assert_eq!(out.status.code(), Some(2), "a knob that is not KEY=VALUE");
    std::fs::write(&p, "{\"schema\": \"loadproof.playbook/v2\", \"rows\": []}").unwrap();
    let out = matching(&p, &["--regime", s(&f.plan.join("plan.json"))], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("loadproof.playbook/v2"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_synthesized_trace_and_its_plan_query_as_synthetic_traffic() {
    let _turn = turn();
    let dir = std::env::temp_dir().join(format!("loadproof-playbook-synth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("synth.jsonl");
    let out = loadproof(&[
        "trace",
        "synth",
        "--out",
        s(&trace),
        "--layout",
        "mooncake",
        "--rows",
        "60",
        "--rate",
        "20",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan = dir.join("plan");
    let out = loadproof(&["plan", s(&trace), "--out", s(&plan)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let examples = examples_fixture();
    let traffic = |live: &[&str], extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["playbook", "match", s(&examples)];
        args.extend_from_slice(live);
        args.extend_from_slice(&SIM_QUERY);
        args.extend_from_slice(extra);
        args.push("--json");
        let out = loadproof(&args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["query"]["identity"]["source_kind"]["traffic"].clone()
    };
    // The plan carries the sidecar's verified note; the trace has its sidecar beside it.
    assert_eq!(
        traffic(&["--regime", s(&plan.join("plan.json"))], &[]),
        "synthetic"
    );
    assert_eq!(traffic(&["--trace", s(&trace)], &[]), "synthetic");
    // The caller's word wins.
    assert_eq!(
        traffic(&["--trace", s(&trace)], &["--traffic", "recorded"]),
        "recorded"
    );
}

// ---------------------------------------------------------------------------------------------
// Examples

fn examples_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/playbook/examples.json")
}

#[test]
fn the_examples_regenerate_byte_identically() {
    let _turn = turn();
    let dir = std::env::temp_dir().join(format!("loadproof-examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_path = dir.join("examples.json");
    let out = loadproof(&[
        "playbook",
        "examples",
        "--out",
        s(&out_path),
        "--shared",
        s(&shared("")),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fresh = std::fs::read(&out_path).unwrap();
    let committed = std::fs::read(examples_fixture()).unwrap();
    assert!(
        fresh == committed,
        "fixtures/playbook/examples.json is not what `loadproof playbook examples` writes; regenerate it"
    );
}

#[test]
fn no_example_is_selected_even_by_a_perfectly_matching_query() {
    let _turn = turn();
    let book = Playbook::from_json(&std::fs::read(examples_fixture()).unwrap()).unwrap();
    assert!(book.rows().len() >= 6);
    assert_eq!(book.selectable().count(), 0);
    for row in book.rows() {
        assert_eq!(row.evidence(), Evidence::Illustrative, "{}", row.id());
        assert!(
            row.notes()
                .first()
                .is_some_and(|n| n.starts_with("ILLUSTRATIVE")),
            "{}: {:?}",
            row.id(),
            row.notes()
        );
        let query = Query {
            identity: row.identity().clone(),
            regime: *row.regime(),
        };
        let report =
            match_rows(std::slice::from_ref(row), &query, &MatchPolicy::default()).unwrap();
        assert!(report.selected.is_empty(), "{}", row.id());
        assert_eq!(
            report.rejected[0].reason,
            Reason::Illustrative,
            "{}",
            row.id()
        );
    }
    // Through the CLI: the example's own identity and the real trace it was computed from.
    let row = &book.rows()[0];
    let id = row.identity();
    let out = loadproof(&[
        "playbook",
        "match",
        s(&examples_fixture()),
        "--trace",
        s(&shared("traces/burstgpt/BurstGPT_1.first400.csv")),
        "--model",
        &id.model,
        "--model-revision",
        &id.model_revision,
        "--gpu-sku",
        &id.gpu_sku,
        "--engine",
        &id.engine,
        "--engine-version",
        &id.engine_version,
        "--knob",
        "enable_prefix_caching=true",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("0 of {} row(s) apply", book.rows().len())),
        "{text}"
    );
    assert_eq!(
        text.matches("  illustrative: an example with invented numbers")
            .count(),
        book.rows().len(),
        "{text}"
    );
}

#[test]
fn the_examples_refuse_without_the_real_traces() {
    let _turn = turn();
    let dir = std::env::temp_dir().join(format!("loadproof-examples-none-{}", std::process::id()));
    let out = loadproof(&[
        "playbook",
        "examples",
        "--out",
        s(&dir.join("examples.json")),
        "--shared",
        s(&dir.join("no-such-shared")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("LOADPROOF_SHARED"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("examples.json").exists());
}
