//! `loadproof plan` and `loadproof plan check` end to end: files written, exit codes, refusals.

mod common;

use common::*;

use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadproof-plan-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The names of the checks `plan check --json` reports failed.
fn failed_checks(check: &std::process::Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["pass"] == false)
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const REAL: [&str; 4] = [
    "traces/burstgpt/BurstGPT_1.first400.csv",
    "traces/burstgpt/BurstGPT_3.first400.csv",
    "traces/mooncake/conversation_trace.jsonl",
    "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
];

#[test]
fn every_real_trace_plans_verified_and_rechecks_clean() {
    for (i, rel) in REAL.iter().enumerate() {
        let dir = tmp(&format!("real{i}"));
        let out = run(&["plan", s(&shared(rel)), "--out", s(&dir), "--json"]);
        assert_eq!(out.status.code(), Some(0), "{rel}: {}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["schema"], "loadproof.plan/v1");
        assert_eq!(doc["verified"], true, "{rel}");
        for c in doc["fidelity"]["checks"].as_array().unwrap() {
            assert_eq!(c["statistic"], 0.0, "{rel}: {c}");
        }
        let file = std::fs::read(dir.join("timed_trace.jsonl")).unwrap();
        assert_eq!(doc["timed_trace"]["sha256"], sha256_hex(&file));
        let lines = file.iter().filter(|&&b| b == b'\n').count();
        assert_eq!(doc["timed_trace"]["lines"], lines);
        let argv: Vec<&str> = doc["bench"]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let at = argv.iter().position(|a| *a == "--num-prompts").unwrap();
        assert_eq!(argv[at + 1], lines.to_string());
        // The plan's own seed: a whole number Python takes (0 to 4294967295).
        let seed = doc["bench"]["env"]["PYTHONHASHSEED"].as_str().unwrap();
        assert!(seed.parse::<u32>().is_ok(), "{seed}");
        // On disk, plan.json is the same document.
        let on_disk: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("plan.json")).unwrap()).unwrap();
        assert_eq!(on_disk, doc);

        let check = run(&["plan", "check", s(&dir)]);
        assert_eq!(check.status.code(), Some(0), "{rel}: {}", stderr(&check));
        assert!(String::from_utf8_lossy(&check.stdout).contains("PASS"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_mooncake_trace_plans_to_its_own_bytes() {
    // Mooncake's file already is vLLM's format with ms stamps from 0 and 512-token blocks:
    // the plan rewrites it byte for byte, which is the strongest read-back there is.
    let src = shared(REAL[2]);
    let dir = tmp("own-bytes");
    let out = run(&["plan", s(&src), "--out", s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(dir.join("timed_trace.jsonl")).unwrap(),
        std::fs::read(&src).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mooncake_at_chunk_16_exits_2_naming_the_first_row_and_factor() {
    let dir = tmp("chunk16");
    let out = run(&[
        "plan",
        s(&shared(REAL[2])),
        "--out",
        s(&dir),
        "--chunk-size",
        "16",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for needle in [
        "conversation_trace.jsonl",
        "request 0",
        "14 blocks × 16 tokens = 224 < input_length 6758",
        "30.17× short",
        "the worst 32.00×",
        "--chunk-size 512",
    ] {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    assert!(!dir.exists(), "nothing is written for a refused plan");
}

#[test]
fn a_plan_directory_edited_after_planning_fails_check_with_exit_1() {
    let dir = tmp("edited");
    let out = run(&["plan", s(&shared(REAL[0])), "--out", s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // The file: two lines trade places.
    let path = dir.join("timed_trace.jsonl");
    let original = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = original.lines().collect();
    lines.swap(3, 4);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let check = run(&["plan", "check", s(&dir), "--json"]);
    assert_eq!(check.status.code(), Some(1));
    let failed = failed_checks(&check);
    assert_eq!(
        failed,
        ["rows_identical", "file_sha256", "plan_json_agrees"]
    );
    std::fs::write(&path, &original).unwrap();

    // plan.json: vLLM's default --num-prompts.
    let plan_path = dir.join("plan.json");
    let text = std::fs::read_to_string(&plan_path).unwrap();
    let edited = text.replacen(
        "\"--num-prompts\",\n      \"383\"",
        "\"--num-prompts\",\n      \"1000\"",
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(&plan_path, edited).unwrap();
    let check = run(&["plan", "check", s(&dir)]);
    assert_eq!(check.status.code(), Some(1));
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.contains("--num-prompts is \"1000\", the file needs \"383\""),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plan_check_names_a_missing_source_and_exits_2() {
    let dir = tmp("nosource");
    let copy = dir.with_extension("csv");
    std::fs::copy(shared(REAL[1]), &copy).unwrap();
    let out = run(&["plan", s(&copy), "--out", s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_file(&copy).unwrap();
    let check = run(&["plan", "check", s(&dir)]);
    assert_eq!(check.status.code(), Some(2));
    assert!(
        stderr(&check).contains("pass --trace FILE"),
        "{}",
        stderr(&check)
    );
    // --trace points at the same bytes elsewhere: the check passes again.
    let check = run(&["plan", "check", s(&dir), "--trace", s(&shared(REAL[1]))]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn slicing_and_speed_up_are_recorded_in_plan_json() {
    let dir = tmp("slice");
    let out = run(&[
        "plan",
        s(&shared(REAL[3])),
        "--out",
        s(&dir),
        "--start",
        "60",
        "--duration",
        "120",
        "--max-requests",
        "100",
        "--time-scale",
        "4",
        "--model",
        "tiny-llama",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["slice"]["start_ns"], 60_000_000_000i64);
    assert_eq!(v["slice"]["end_ns"], 180_000_000_000i64);
    assert_eq!(v["slice"]["max_requests"], 100);
    assert_eq!(v["slice"]["time_scale"], "4");
    assert_eq!(v["timed_trace"]["lines"], 100);
    assert!(v["source"]["filtered"]["time_window"].as_u64().unwrap() > 0);
    assert_eq!(
        v["bench"]["placeholders"],
        serde_json::json!(["--base-url"])
    );
    let check = run(&["plan", "check", s(&dir)]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plan_directory_missing_its_file_fails_check_with_exit_1() {
    let dir = tmp("nofile");
    let out = run(&["plan", s(&shared(REAL[0])), "--out", s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_file(dir.join("timed_trace.jsonl")).unwrap();
    let check = run(&["plan", "check", s(&dir)]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(text.contains("* file_readable:"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_ragpulse_plans_blocks_file_edited_after_planning_fails_check_by_name() {
    let dir = tmp("ragpulse-blocks");
    let trace = shared("traces/ragpulse/0_trace.first400.jsonl");
    let out = run(&["plan", s(&trace), "--out", s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("blocks    blocks.jsonl  400 lines, 4086 blocks"),
        "{text}"
    );
    let check = run(&["plan", "check", s(&dir)]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    let path = dir.join("blocks.jsonl");
    let original = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, original.replacen(",437]", ",436]", 1)).unwrap();
    let check = run(&["plan", "check", s(&dir), "--json"]);
    assert_eq!(check.status.code(), Some(1));
    let failed = failed_checks(&check);
    assert_eq!(failed, ["sized_blocks", "plan_json_agrees"]);
    // Gone: named, not skipped.
    std::fs::remove_file(&path).unwrap();
    let check = run(&["plan", "check", s(&dir)]);
    assert_eq!(check.status.code(), Some(1));
    assert!(
        stdout(&check).contains("blocks.jsonl"),
        "{}",
        stdout(&check)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
