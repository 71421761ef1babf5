//! `loadproof fire`: a receipt is written whatever happens; exit codes keep capture apart from
//! failure. (Runs against `loadproof sim` and real vLLM live in their own tests and tiers.)

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

fn planned(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadproof-fire-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace = shared("traces/burstgpt/BurstGPT_1.first400.csv");
    let out = run(&["plan", s(&trace), "--out", s(&dir), "--max-requests", "5"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// A port nothing listens on: bind, read the port, close.
fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn an_unreachable_endpoint_still_writes_a_receipt_and_exits_1() {
    let dir = planned("unreachable");
    let receipt = dir.join("receipt.json");
    let url = format!("http://127.0.0.1:{}", dead_port());
    let out = run(&[
        "fire",
        s(&dir),
        "--endpoint",
        &url,
        "--engine",
        "vllm",
        "--python",
        "/nonexistent/python",
        "--out",
        s(&receipt),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = loadproof_core::receipt::Receipt::from_json(&std::fs::read(&receipt).unwrap()).unwrap();
    match &r.execution {
        loadproof_core::receipt::Execution::Unreachable { url: u, cause } => {
            assert!(u.ends_with("/v1/models"), "{u}");
            assert!(!cause.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert!(r.verify_evidence().is_empty());
    assert!(
        r.evidence.contains_key("plan.json"),
        "the plan is kept even when nothing fired"
    );
    assert!(r.protocol.key.starts_with("sha256:"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unverified_or_changed_plan_is_refused_with_exit_2() {
    let dir = planned("changed");
    let file = dir.join("timed_trace.jsonl");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(
        "{\"timestamp\": 99, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [999]}\n",
    );
    std::fs::write(&file, text).unwrap();
    let out = run(&[
        "fire",
        s(&dir),
        "--endpoint",
        "http://127.0.0.1:9",
        "--engine",
        "vllm",
        "--out",
        s(&dir.join("r.json")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("plan check"));
    assert!(!dir.join("r.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_caller_statements_are_usage_errors_before_anything_fires() {
    let dir = planned("knob");
    let out = run(&[
        "fire",
        s(&dir),
        "--endpoint",
        "http://127.0.0.1:9",
        "--engine",
        "vllm",
        "--knob",
        "novalue",
        "--out",
        s(&dir.join("r.json")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KEY=VALUE"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_python_without_vllm_is_a_not_started_receipt() {
    let sim = Sim::start(&[]);
    let dir = planned("novllm");
    let receipt = dir.join("receipt.json");
    let out = run(&[
        "fire",
        s(&dir),
        "--endpoint",
        &sim.url,
        "--engine",
        "vllm",
        "--python",
        "python3",
        "--out",
        s(&receipt),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = loadproof_core::receipt::Receipt::from_json(&std::fs::read(&receipt).unwrap()).unwrap();
    match &r.execution {
        loadproof_core::receipt::Execution::NotStarted { cause } => {
            assert!(
                cause.contains("vLLM is not installed") || cause.contains("console script"),
                "{cause}"
            );
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fake interpreter directory: `python` answers the version probe with `version`, and `vllm`
/// runs `script` (sh) in the plan directory — a stand-in client for crash and signal tests.
fn fake_install(name: &str, version: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("loadproof-fake-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, body) in [
        ("python", format!("#!/bin/sh\necho {version}\n")),
        ("vllm", format!("#!/bin/sh\n{script}\n")),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir.join("python")
}

fn fire_with(sim: &Sim, plan: &Path, python: &Path, receipt: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .args([
            "fire",
            s(plan),
            "--endpoint",
            &sim.url,
            "--engine",
            "vllm",
            "--python",
            s(python),
            "--out",
            s(receipt),
            "--scrape-interval-ms",
            "50",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn receipt_of(path: &Path) -> loadproof_core::receipt::Receipt {
    loadproof_core::receipt::Receipt::from_json(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_clean_client_run_keeps_stdout_stderr_and_the_result_json() {
    let sim = Sim::start(&[]);
    let dir = planned("clean");
    let python = fake_install(
        "clean",
        "0.32.0",
        "echo 'Successful requests: 5'; echo 'progress' >&2; mkdir -p results; echo '{\"completed\": 5}' > results/result.json; sleep 0.3",
    );
    let receipt = dir.join("r.json");
    let status = fire_with(&sim, &dir, &python, &receipt).wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let r = receipt_of(&receipt);
    assert!(r.verify_evidence().is_empty());
    assert_eq!(
        r.block("bench/stdout").unwrap(),
        b"Successful requests: 5\n"
    );
    assert_eq!(r.block("bench/stderr").unwrap(), b"progress\n");
    assert_eq!(
        r.block("bench/result.json").unwrap(),
        b"{\"completed\": 5}\n"
    );
    use loadproof_core::receipt::{Execution, Phase};
    let Execution::Ran {
        exit,
        argv,
        interrupted,
        ..
    } = &r.execution
    else {
        panic!("{:?}", r.execution)
    };
    assert_eq!((exit.code, *interrupted), (Some(0), None));
    // The placeholders are filled: the endpoint, and the sim's model from /v1/models.
    let at = argv.iter().position(|a| a == "--base-url").unwrap();
    assert_eq!(argv[at + 1], sim.url);
    assert!(!argv.iter().any(|a| a.starts_with('{')), "{argv:?}");
    assert!(r.subject.simulator, "the sim says it is one");
    let phases: Vec<Phase> = r.scrapes.iter().map(|s| s.phase).collect();
    assert_eq!(phases.first(), Some(&Phase::Before));
    assert_eq!(phases.last(), Some(&Phase::After));
    assert!(phases.contains(&Phase::During), "{phases:?}");
    assert_eq!(r.protocol.client_version.as_deref(), Some("0.32.0"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_crashed_or_signalled_client_is_a_ran_receipt_with_its_exit_status() {
    let sim = Sim::start(&[]);
    for (name, script, code, signal) in [
        (
            "exit3",
            "echo partial; echo 'Traceback: boom' >&2; exit 3",
            Some(3),
            None,
        ),
        ("segv", "kill -SEGV $$", None, Some(11)),
    ] {
        let dir = planned(name);
        let python = fake_install(name, "0.32.0", script);
        let receipt = dir.join("r.json");
        let status = fire_with(&sim, &dir, &python, &receipt).wait().unwrap();
        assert_eq!(status.code(), Some(1), "{name}");
        let r = receipt_of(&receipt);
        use loadproof_core::receipt::{Execution, ResultFile};
        let Execution::Ran { exit, result, .. } = &r.execution else {
            panic!("{:?}", r.execution)
        };
        assert_eq!((exit.code, exit.signal), (code, signal), "{name}");
        assert!(matches!(result, ResultFile::Absent { .. }));
        assert!(r.verify_evidence().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn an_old_vllm_is_not_started_and_named() {
    let sim = Sim::start(&[]);
    let dir = planned("old");
    let python = fake_install("old", "0.22.1", "exit 0");
    let receipt = dir.join("r.json");
    let status = fire_with(&sim, &dir, &python, &receipt).wait().unwrap();
    assert_eq!(status.code(), Some(1));
    match &receipt_of(&receipt).execution {
        loadproof_core::receipt::Execution::NotStarted { cause } => {
            assert!(
                cause.contains("0.22.1 is too old") && cause.contains("0.23.0"),
                "{cause}"
            )
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_stops_the_client_and_still_writes_the_receipt() {
    let sim = Sim::start(&[]);
    let dir = planned("ctrlc");
    let python = fake_install("ctrlc", "0.32.0", "echo started; sleep 30");
    let receipt = dir.join("r.json");
    let mut child = fire_with(&sim, &dir, &python, &receipt);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let r = receipt_of(&receipt);
    use loadproof_core::receipt::{Execution, Interruption};
    let Execution::Ran {
        interrupted,
        stdout,
        ..
    } = &r.execution
    else {
        panic!("{:?}", r.execution)
    };
    assert_eq!(interrupted, &Some(Interruption::Signal));
    assert_eq!(r.block(stdout).unwrap(), b"started\n");
    assert!(
        r.scrapes
            .iter()
            .any(|s| s.phase == loadproof_core::receipt::Phase::After)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
