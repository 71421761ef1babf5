//! `loadproof fire`: a receipt is written whatever happens; exit codes keep capture apart from
//! failure. (Runs against `loadproof sim` and real vLLM live in their own tests and tiers.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shared(rel: &str) -> PathBuf {
    std::env::var_os("LOADPROOF_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
        .join(rel)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .args(args)
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

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

/// `loadproof sim --port 0`, killed on drop; its address read from the first stderr line.
struct Sim {
    child: std::process::Child,
    url: String,
}

impl Sim {
    fn start() -> Sim {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_loadproof"))
            .args(["sim", "--port", "0"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("loadproof sim listening on ")
            .and_then(|r| r.strip_suffix(" (simulator, not vLLM)"))
            .unwrap_or_else(|| panic!("{line:?}"))
            .to_owned();
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut sink);
        });
        Sim { child, url }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_python_without_vllm_is_a_not_started_receipt() {
    let sim = Sim::start();
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
