//! The `loadproof` binary end to end: output shapes, exit codes, and error messages.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_loadproof"))
}

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

fn shared(rel: &str) -> PathBuf {
    std::env::var_os("LOADPROOF_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo("../shared"))
        .join(rel)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn inspect_json_holds_the_documented_keys() {
    let f = shared("traces/burstgpt/BurstGPT_1.first400.csv");
    let out = run(&["trace", "inspect", f.to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    for key in [
        "rows_read",
        "emitted",
        "dropped",
        "filtered",
        "source_sha256",
        "format",
        "regime",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let r = &v["regime"];
    for key in [
        "rate_rps",
        "burstiness",
        "window_s",
        "timestamp_resolution_s",
    ] {
        assert!(r.get(key).is_some(), "missing regime.{key}");
    }
    assert_eq!(v["rows_read"], 400);
    assert_eq!(v["emitted"], 383);
    assert_eq!(v["dropped"]["zero_input_tokens"], 17);
    assert_eq!(v["format"], "burstgpt");
    assert_eq!(r["input_tokens"]["p50"], 353.0);
    assert_eq!(r["input_tokens"]["p95"], 1638.8);
    assert_eq!(r["window_s"], 1.0);
    assert_eq!(
        v["source_sha256"],
        "7865fda5dac50938a84dfccb06c405e2f5202969ecfbd671c8399de00f4335f0"
    );
}

#[test]
fn stdout_is_machine_clean_json_only() {
    let f = shared("traces/mooncake/conversation_trace.jsonl");
    let out = run(&[
        "trace",
        "inspect",
        f.to_str().unwrap(),
        "--json",
        "--window",
        "3",
    ]);
    assert!(out.status.success());
    let v = json(&out);
    assert_eq!(v["regime"]["window_s"], 3.0);
    assert!(v["regime"]["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn bad_input_exits_2_naming_file_line_and_columns_never_101() {
    let dir = std::env::temp_dir().join(format!("loadproof-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.csv");
    std::fs::write(&f, "a,b,c\n1,2,3\n").unwrap();
    let out = run(&["trace", "inspect", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.csv") && err.contains("line 1") && err.contains("[a, b, c]"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = run(&[
        "trace",
        "inspect",
        dir.join("missing.csv").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.csv"));

    let f2 = dir.join("binary.bin");
    std::fs::write(&f2, [0xffu8, 0xfe, 0, 1, 2, b'\n', 0x80]).unwrap();
    let out = run(&["trace", "inspect", f2.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));

    let out = run(&["trace", "inspect", f.to_str().unwrap(), "--window", "nan"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn dropped_rows_are_reported_with_line_and_field_in_text_output() {
    let f = repo("core/tests/data/burstgpt/dirty.csv");
    let out = run(&["trace", "inspect", f.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("16 read = 4 emitted + 12 dropped + 0 filtered"),
        "{text}"
    );
    assert!(
        text.contains("line 6, field \"Request tokens\": not a number: \"abc\""),
        "{text}"
    );
}

#[test]
fn filters_reconcile_and_are_reported_apart() {
    let f = shared("traces/burstgpt/BurstGPT_1.first400.csv");
    let out = run(&[
        "trace",
        "inspect",
        f.to_str().unwrap(),
        "--json",
        "--model",
        "GPT-4",
    ]);
    let v = json(&out);
    let (read, emitted) = (
        v["rows_read"].as_u64().unwrap(),
        v["emitted"].as_u64().unwrap(),
    );
    let (dropped, filtered) = (
        v["dropped_total"].as_u64().unwrap(),
        v["filtered_total"].as_u64().unwrap(),
    );
    assert_eq!(read, emitted + dropped + filtered);
    // The predecessor's reference: GPT-4 → 77 emitted, 320 filtered, 3 zero-input.
    assert_eq!((emitted, filtered, dropped), (77, 320, 3));
}

#[test]
fn synth_is_deterministic_and_inspectable() {
    let dir = std::env::temp_dir().join(format!("loadproof-synth-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.csv"), dir.join("b.csv"));
    assert!(
        run(&["trace", "synth", "--out", a.to_str().unwrap()])
            .status
            .success()
    );
    assert!(
        run(&["trace", "synth", "--out", b.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let v = json(&run(&["trace", "inspect", a.to_str().unwrap(), "--json"]));
    assert_eq!(v["rows_read"], 2000);
    assert!(v["dropped"]["zero_input_tokens"].as_u64().unwrap() > 0);
}
