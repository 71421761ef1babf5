//! `loadproof receipt compare` end to end: receipts the debug binary fires at `loadproof sim`
//! (one sim on one fixed port, restarted between fires so every receipt names the same
//! endpoint; `--max-num-seqs 64` for the baseline and `2` for the treatment, stated with
//! `--knob`), compared by their exit codes, their JSON and their text.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use loadproof_core::compare::Comparison;
use loadproof_core::receipt::sha256_hex;

mod common;

use common::{PortSim, free_port, run as loadproof, s, stderr, stdout, turn};

/// A Mooncake trace of `n` rows planned with the default window: the plan directory.
fn planned(dir: &Path, name: &str, n: u64, gap_ms: u64, shift: u64) -> PathBuf {
    common::planned_mooncake(dir, name, n, gap_ms, shift, &[]).1
}

/// Fires `plan` at a fresh sim on `port` with `max_num_seqs`, stating it as a knob, under a
/// lease, until the receipt qualifies: the receipt's path.
fn fire(port: u16, plan: &Path, out: PathBuf, max_num_seqs: &str) -> PathBuf {
    let endpoint = format!("http://127.0.0.1:{port}");
    let knob = format!("max_num_seqs={max_num_seqs}");
    common::until_qualified(&out, || {
        let _sim = PortSim::start(port, max_num_seqs);
        common::fire_native(
            plan,
            &endpoint,
            &out,
            &["--knob", &knob, "--acquire-lease", "60"],
        );
    });
    out
}

/// Everything fired once and shared by the tests.
struct Fired {
    dir: PathBuf,
    baseline: PathBuf,
    treatment: PathBuf,
    other_plan: PathBuf,
}

fn fired() -> &'static Fired {
    static FIRED: OnceLock<Fired> = OnceLock::new();
    FIRED.get_or_init(|| {
        let dir = common::fresh_dir("compare");
        let plan = planned(&dir, "a", 12, 30, 0);
        let other = planned(&dir, "b", 12, 35, 2);
        let port = free_port();
        let r = |name: &str| dir.join(format!("{name}.receipt.json"));
        Fired {
            baseline: fire(port, &plan, r("baseline"), "64"),
            treatment: fire(port, &plan, r("treatment"), "2"),
            other_plan: fire(port, &other, r("other"), "2"),
            dir,
        }
    })
}

fn compare(args: &[&str]) -> Output {
    let mut all = vec!["receipt", "compare"];
    all.extend_from_slice(args);
    loadproof(&all)
}

fn json(out: &Output) -> (Comparison, serde_json::Value) {
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

#[test]
fn two_fires_of_one_plan_differing_in_max_num_seqs_are_comparable_exit_0() {
    let _turn = turn();
    let f = fired();
    let out = compare(&[s(&f.baseline), s(&f.treatment), "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let (c, v) = json(&out);
    assert_eq!(v["schema"], "loadproof.compare/v1");
    assert!(c.comparable && c.reasons.is_empty());
    assert!(c.same_protocol && c.same_subject);
    assert!(c.baseline.qualified && c.treatment.qualified);
    assert_eq!(c.baseline.source, s(&f.baseline));
    assert_eq!(
        c.baseline.file_sha256,
        sha256_hex(&std::fs::read(&f.baseline).unwrap())
    );
    assert_eq!(
        c.treatment.file_sha256,
        sha256_hex(&std::fs::read(&f.treatment).unwrap())
    );
    assert_eq!(v["knobs_changed"][0]["knob"], "max_num_seqs");
    assert_eq!(v["knobs_changed"][0]["baseline"], "64");
    assert_eq!(v["knobs_changed"][0]["treatment"], "2");
    assert_eq!(v["observation_only"], true);
    assert_eq!(v["repeats_per_arm"], 1);
    assert_eq!(v["min_repeats"], 2);
    assert!(
        v["caveat"]
            .as_str()
            .unwrap()
            .contains("observation, not a measured effect")
    );
    // Every number is the audits' own: the CLI's `receipt audit --json` for each side.
    let audit = |p: &Path| -> serde_json::Value {
        let out = loadproof(&["receipt", "audit", s(p), "--json"]);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (ab, at) = (audit(&f.baseline), audit(&f.treatment));
    let tput = c.metric("throughput_tok_s").unwrap();
    assert_eq!(tput.baseline, ab["client"]["output_tokens_per_s"].as_f64());
    assert_eq!(tput.treatment, at["client"]["output_tokens_per_s"].as_f64());
    let (b, t) = (tput.baseline.unwrap(), tput.treatment.unwrap());
    assert_eq!(tput.change, Some(t - b));
    assert_eq!(tput.relative_change, Some((t - b) / b));
    let completed = c.metric("completed_requests").unwrap();
    assert_eq!(
        (completed.baseline, completed.treatment),
        (Some(12.0), Some(12.0))
    );
    let gen_delta = c.metric("engine_generation_tokens_delta").unwrap();
    assert_eq!(
        gen_delta.treatment,
        at["engine"]["generation_tokens_delta"].as_f64()
    );
    let ttft = ab["latency"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["metric"] == "ttft")
        .unwrap();
    assert_eq!(
        c.metric("ttft_p99_ms").unwrap().baseline,
        ttft["p99_ms"].as_f64()
    );
}

#[test]
fn the_text_report_shows_both_sides_the_named_metrics_the_caveat_and_the_verdict() {
    let _turn = turn();
    let f = fired();
    let out = compare(&[s(&f.baseline), s(&f.treatment)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for part in [
        "baseline ",
        "treatment",
        "QUALIFIED, of loadproof sim, a simulator",
        "protocol   one protocol (sha256:",
        "subject    one subject apart from knobs",
        "knobs      changed: max_num_seqs 64 → 2",
        "Output throughput (tok/s)",
        "TTFT p99 (ms)",
        "Requests completed (requests)",
        "caveat     One receipt per arm is an observation, not a measured effect",
        "COMPARABLE: one protocol",
    ] {
        assert!(text.contains(part), "{part:?} missing from:\n{text}");
    }
    // The table names metrics; the keys are the JSON's.
    for key in loadproof_core::compare::metric_names() {
        assert!(!text.contains(key), "raw key {key} in:\n{text}");
    }
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn receipts_of_two_plans_are_not_comparable_exit_1_naming_every_differing_field() {
    let _turn = turn();
    let f = fired();
    let out = compare(&[s(&f.baseline), s(&f.other_plan), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (c, _) = json(&out);
    assert!(!c.comparable && !c.same_protocol);
    let fields: Vec<&str> = c
        .protocol_differences
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    for field in ["plan_sha256", "timed_trace_sha256", "trace_sha256"] {
        assert!(fields.contains(&field), "{field}: {fields:?}");
    }
    assert!(!fields.contains(&"base_url"), "one endpoint: {fields:?}");
    assert_eq!(c.reasons.len(), 1, "{:?}", c.reasons);
    let text = stdout(&compare(&[s(&f.baseline), s(&f.other_plan)]));
    assert!(text.contains("NOT ONE PROTOCOL"), "{text}");
    assert!(text.contains("NOT COMPARABLE: 1 reason(s)"), "{text}");
    assert!(
        text.contains("not_one_protocol: the receipts ran different work"),
        "{text}"
    );
    assert!(text.contains("plan_sha256 \""), "{text}");
}

#[test]
fn a_tampered_treatment_is_not_comparable_naming_the_failing_block() {
    let _turn = turn();
    let f = fired();
    let mut v: serde_json::Value = serde_json::to_value(
        loadproof_core::receipt::Receipt::from_bytes(&std::fs::read(&f.treatment).unwrap())
            .unwrap(),
    )
    .unwrap();
    let mut chars: Vec<char> = v["evidence"]["native/events.jsonl"]["content"]
        .as_str()
        .unwrap()
        .chars()
        .collect();
    let i = chars.len() / 2;
    chars[i] = if chars[i] == '1' { '2' } else { '1' };
    v["evidence"]["native/events.jsonl"]["content"] = chars.into_iter().collect::<String>().into();
    let tampered = f.dir.join("tampered.receipt.json");
    std::fs::write(&tampered, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let out = compare(&[s(&f.baseline), s(&tampered), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (c, v) = json(&out);
    assert_eq!(c.treatment.failing_blocks, ["native/events.jsonl"]);
    assert_eq!(v["reasons"][0]["rule"], "digest_failure");
    assert_eq!(v["reasons"][0]["arm"], "treatment");
    assert_eq!(v["reasons"][1]["rule"], "unqualified");
    assert!(c.metric("throughput_tok_s").unwrap().treatment.is_none());
}

#[test]
fn an_unreadable_file_or_a_non_receipt_exits_2_naming_the_file() {
    let _turn = turn();
    let f = fired();
    let missing = f.dir.join("missing.json");
    let out = compare(&[s(&f.baseline), s(&missing)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(s(&missing)), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let junk = f.dir.join("not-a-receipt.json");
    std::fs::write(&junk, "{\"schema\": \"something else\"}").unwrap();
    let out = compare(&[s(&junk), s(&f.treatment), "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not-a-receipt.json"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
    let out = compare(&[s(&f.baseline)]);
    assert_eq!(out.status.code(), Some(2), "usage");
}
