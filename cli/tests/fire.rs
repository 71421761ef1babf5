//! `loadproof fire`: a receipt is written whatever happens; exit codes keep capture apart from
//! failure; a lease's token reaches `vllm bench serve` as `OPENAI_API_KEY` and nothing else;
//! the client's `serve.py` binds the implementation (fired or imported). (Runs against
//! `loadproof sim` and real vLLM live in their own tests and tiers.)

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// `loadproof fire PLAN --endpoint URL --engine vllm` plus `extra`, writing `receipt`.
fn fire_vllm(plan: &Path, url: &str, extra: &[&str], receipt: &Path) -> Output {
    let mut args = vec!["fire", s(plan), "--endpoint", url, "--engine", "vllm"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", s(receipt)]);
    run(&args)
}

#[test]
fn an_unreachable_endpoint_still_writes_a_receipt_and_exits_1() {
    let dir = planned("unreachable");
    let receipt = dir.join("receipt.json");
    let url = format!("http://127.0.0.1:{}", dead_port());
    let out = fire_vllm(&dir, &url, &["--python", "/nonexistent/python"], &receipt);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r =
        loadproof_core::receipt::Receipt::from_bytes(&std::fs::read(&receipt).unwrap()).unwrap();
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
    let out = fire_vllm(&dir, "http://127.0.0.1:9", &[], &dir.join("r.json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("plan check"));
    assert!(!dir.join("r.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_caller_statements_are_usage_errors_before_anything_fires() {
    let dir = planned("knob");
    let out = fire_vllm(
        &dir,
        "http://127.0.0.1:9",
        &["--knob", "novalue"],
        &dir.join("r.json"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KEY=VALUE"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_python_without_vllm_is_a_not_started_receipt() {
    let sim = Sim::start(&[]);
    let dir = planned("novllm");
    let receipt = dir.join("receipt.json");
    let out = fire_vllm(&dir, &sim.url, &["--python", "python3"], &receipt);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r =
        loadproof_core::receipt::Receipt::from_bytes(&std::fs::read(&receipt).unwrap()).unwrap();
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
    loadproof_core::receipt::Receipt::from_bytes(&std::fs::read(path).unwrap()).unwrap()
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
    // This interpreter does not say where serve.py is: the implementation is named, unbound.
    let imp = r.implementation.as_ref().unwrap();
    assert_eq!(
        (
            imp.name.as_str(),
            imp.version.as_deref(),
            imp.source_sha256.as_deref()
        ),
        ("vllm bench serve", Some("0.32.0"), None)
    );
    assert!(
        imp.unbound.as_deref().unwrap().contains("serve.py"),
        "{imp:?}"
    );
    assert_eq!(r.lease, None);
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

/// `fire --engine vllm` of a fake client that prints `started` and sleeps `seconds`, 1.5 s in:
/// the sim, the plan directory, the receipt's path and the running fire.
fn firing_a_client_that_sleeps(
    name: &str,
    seconds: u32,
) -> (Sim, PathBuf, PathBuf, std::process::Child) {
    let sim = Sim::start(&[]);
    let dir = planned(name);
    let python = fake_install(name, "0.32.0", &format!("echo started; sleep {seconds}"));
    let receipt = dir.join("r.receipt");
    let child = fire_with(&sim, &dir, &python, &receipt);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    (sim, dir, receipt, child)
}

#[test]
fn ctrl_c_stops_the_client_and_still_writes_the_receipt() {
    let (_sim, dir, receipt, child) = firing_a_client_that_sleeps("ctrlc", 30);
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait_with_output().unwrap().status;
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

/// A fake install whose interpreter also says where its `vllm/benchmarks/serve.py` is (a file
/// beside it), as the real probe prints `Distribution.locate_file`; returns the interpreter.
fn fake_install_with_source(name: &str, script: &str) -> (PathBuf, PathBuf) {
    let python = fake_install(name, "0.32.0", script);
    let dir = python.parent().unwrap().to_path_buf();
    let serve = dir.join("site-packages/vllm/benchmarks/serve.py");
    std::fs::create_dir_all(serve.parent().unwrap()).unwrap();
    std::fs::write(&serve, "# the bench client, as installed\n").unwrap();
    std::fs::write(
        &python,
        format!("#!/bin/sh\necho 0.32.0\necho {}\n", s(&serve)),
    )
    .unwrap();
    (python, serve)
}

#[test]
fn a_lease_token_reaches_vllm_bench_serve_as_openai_api_key_and_its_source_is_bound() {
    let sim = Sim::start(&[]);
    let dir = planned("leased-vllm");
    // The stand-in client prints the sha256 of the key it was given, never the key.
    let (python, serve) = fake_install_with_source(
        "leased",
        "printf %s \"$OPENAI_API_KEY\" | sha256sum | cut -d' ' -f1; echo 'Successful requests: 5'",
    );
    let receipt = dir.join("r.json");
    let out = fire_vllm(
        &dir,
        &sim.url,
        &["--python", s(&python), "--acquire-lease", "30"],
        &receipt,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = receipt_of(&receipt);
    assert!(r.verify_evidence().is_empty());
    use loadproof_core::receipt::{Execution, Lease, block};
    let lease = Lease::from_json(&r.block(block::LEASE).unwrap()).unwrap();
    // The receipt keeps the token's digest, never the token: the client got the token itself.
    assert_eq!(lease.token, None);
    let stdout = String::from_utf8(r.block("bench/stdout").unwrap()).unwrap();
    assert_eq!(stdout.lines().next(), lease.token_sha256.as_deref());
    let Execution::Ran { env, .. } = &r.execution else {
        panic!("{:?}", r.execution)
    };
    assert!(!env.contains_key("OPENAI_API_KEY"), "{env:?}");
    assert!(r.notes.iter().any(|n| n.contains("OPENAI_API_KEY")));
    assert!(
        r.notes.iter().any(|n| n.contains("released")),
        "{:?}",
        r.notes
    );
    // The run's own protocol and capture agree with its evidence (the argv ran is the
    // protocol's, the console script resolved in argv[0]).
    let a = loadproof_core::audit::audit(&r);
    assert!(a.inconsistencies.is_empty(), "{:?}", a.inconsistencies);

    let imp = r.implementation.as_ref().unwrap();
    assert_eq!(imp.name, "vllm bench serve");
    assert_eq!(imp.version.as_deref(), Some("0.32.0"));
    assert_eq!(imp.source.as_deref(), Some(s(&serve)));
    assert_eq!(
        imp.source_sha256.as_deref(),
        Some(hex_sha256(&std::fs::read(&serve).unwrap()).as_str())
    );
    assert_eq!(imp.unbound, None);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(python.parent().unwrap());
}

#[test]
fn receipt_import_binds_the_client_source_only_when_given() {
    let dir = std::env::temp_dir().join(format!("loadproof-fire-{}-import", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (out_file, err_file, serve) =
        (dir.join("stdout"), dir.join("stderr"), dir.join("serve.py"));
    std::fs::write(&out_file, "Successful requests: 5\n").unwrap();
    std::fs::write(&err_file, "").unwrap();
    std::fs::write(&serve, "# serve.py\n").unwrap();
    let import = |extra: &[&str]| {
        let receipt = dir.join("r.json");
        let mut args = vec![
            "receipt",
            "import",
            "--stdout",
            s(&out_file),
            "--stderr",
            s(&err_file),
            "--exit-code",
            "0",
            "--client-version",
            "0.32.0",
            "--out",
            s(&receipt),
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        receipt_of(&receipt).implementation.unwrap()
    };
    let bound = import(&["--client-source", s(&serve)]);
    assert_eq!(bound.name, "vllm bench serve");
    assert_eq!(bound.version.as_deref(), Some("0.32.0"));
    assert_eq!(bound.source.as_deref(), Some(s(&serve)));
    assert_eq!(bound.source_sha256, Some(hex_sha256(b"# serve.py\n")));
    let unbound = import(&[]);
    assert_eq!(unbound.source_sha256, None);
    assert!(
        unbound
            .unbound
            .as_deref()
            .unwrap()
            .contains("pass --client-source"),
        "{unbound:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fire_killed_while_vllm_runs_leaves_an_unsealed_receipt_of_its_scrapes() {
    let (_sim, dir, receipt, mut child) = firing_a_client_that_sleeps("kill9", 4);
    child.kill().unwrap(); // SIGKILL: nothing is sealed
    child.wait().unwrap();
    let r = receipt_of(&receipt);
    assert!(!r.sealed());
    assert!(r.verify_evidence().is_empty(), "{:?}", r.verify_evidence());
    assert!(r.scrapes.len() >= 5, "{} scrapes", r.scrapes.len());
    use loadproof_core::receipt::Execution;
    let Execution::Ran { exit, .. } = &r.execution else {
        panic!("{:?}", r.execution)
    };
    // The writer never saw the client end: no exit status is claimed for it.
    assert_eq!((exit.code, exit.signal), (None, None));
    let a = audit_json(&receipt);
    assert_eq!(a["sealed"], false);
    assert_eq!(a["qualified"], false);
    assert_eq!(a["captured"], false);
    let _ = std::fs::remove_dir_all(&dir);
}
