//! Helpers shared by the CLI's integration tests: run the binary, find `../shared`, start
//! `loadproof sim` on a free port, plan a Mooncake trace, fire it natively, audit a receipt.
#![allow(dead_code)] // each test file uses a subset

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Runs `loadproof` with `args` to completion.
pub fn run(args: &[&str]) -> Output {
    run_env(args, &[])
}

/// [`run`] with extra environment variables (a secret a flag must not carry).
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// A path inside the read-only `../shared` beside the repository (or `$LOADPROOF_SHARED`).
pub fn shared(rel: &str) -> PathBuf {
    std::env::var_os("LOADPROOF_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
        .join(rel)
}

/// A path as `&str` (test paths are UTF-8).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The fast model knobs that keep the sim from being the bottleneck (the last two: a batch
/// large enough for any test).
pub const FAST: [&str; 8] = [
    "--prefill-tokens-per-s",
    "100000000",
    "--decode-step-ms",
    "1",
    "--decode-ms-per-seq",
    "0",
    "--max-num-seqs",
    "4096",
];

/// `loadproof sim --port 0` (plus `extra`), killed on drop; its address read from the first
/// stderr line, the rest of stderr drained so the child never blocks.
pub struct Sim {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

/// Spawns `loadproof ARGS` (stdin and stdout null), reads the first line of its stderr and
/// drains the rest on a thread so the child never blocks: the child and that line.
pub fn spawn_first_line(args: &[&str]) -> (Child, String) {
    spawn_first_line_env(args, &[])
}

/// [`spawn_first_line`] with extra environment variables (a secret a flag must not carry).
pub fn spawn_first_line_env(args: &[&str], env: &[(&str, &str)]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    std::thread::spawn(move || {
        let mut sink = String::new();
        let _ = stderr.read_to_string(&mut sink);
    });
    (child, line)
}

/// Spawns a `loadproof` server whose first stderr line is `{prefix}URL{suffix}`: the child and
/// the URL.
pub fn spawn_server(args: &[&str], prefix: &str, suffix: &str) -> (Child, String) {
    spawn_server_env(args, &[], prefix, suffix)
}

/// [`spawn_server`] with extra environment variables.
pub fn spawn_server_env(
    args: &[&str],
    env: &[(&str, &str)],
    prefix: &str,
    suffix: &str,
) -> (Child, String) {
    let (child, line) = spawn_first_line_env(args, env);
    let url = line
        .trim()
        .strip_prefix(prefix)
        .and_then(|r| r.strip_suffix(suffix))
        .unwrap_or_else(|| panic!("unexpected first stderr line {line:?}"))
        .to_owned();
    (child, url)
}

impl Sim {
    pub fn start(extra: &[&str]) -> Sim {
        Sim::start_env(extra, &[])
    }

    /// [`Sim::start`] with extra environment variables (`--api-key-env`'s key).
    pub fn start_env(extra: &[&str], env: &[(&str, &str)]) -> Sim {
        let args: Vec<&str> = ["sim", "--port", "0"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let (child, url) = spawn_server_env(
            &args,
            env,
            "loadproof sim listening on ",
            " (simulator, not vLLM)",
        );
        let addr = url
            .split_once("://")
            .map_or(url.as_str(), |(_, a)| a)
            .to_owned();
        Sim { child, url, addr }
    }

    /// The process id (to signal it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to end (after a signal sent by the test).
    pub fn wait(&mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One test at a time in a test binary that fires: a native fire hashes the debug executable,
/// and anything running beside it pushes the dispatch lag over its bound; a fixed port admits
/// one sim.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes this binary's turn (a panicked test does not poison it for the others).
pub fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A port that was free a moment ago (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `loadproof sim` on a fixed `port` with a fast model and `max_num_seqs`, killed on drop: the
/// arms of one experiment share the URL, so the sim is restarted on the same port between them.
pub struct PortSim {
    child: Child,
}

impl PortSim {
    pub fn start(port: u16, max_num_seqs: &str) -> PortSim {
        let port = port.to_string();
        // The previous sim's socket may linger a moment after it was killed.
        for _ in 0..50 {
            // FAST's model knobs, with this sim's own --max-num-seqs.
            let args: Vec<&str> = ["sim", "--port", &port, "--max-num-seqs", max_num_seqs]
                .into_iter()
                .chain(FAST[..6].iter().copied())
                .collect();
            let (mut child, line) = spawn_first_line(&args);
            if line.starts_with("loadproof sim listening on ") {
                return PortSim { child };
            }
            let _ = child.kill();
            let _ = child.wait();
            std::thread::sleep(std::time::Duration::from_millis(100));
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

/// A fresh, empty directory `loadproof-{label}-PID` under the temporary directory.
pub fn fresh_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadproof-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A Mooncake trace of `n` rows `gap_ms` apart (lengths varied by `shift`), written to `trace`
/// and planned into `plan` with `loadproof plan` plus `plan_args`, which must pass.
fn plan_mooncake(trace: &Path, plan: &Path, n: u64, gap_ms: u64, shift: u64, plan_args: &[&str]) {
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
    std::fs::write(trace, text).unwrap();
    let mut args = vec!["plan", s(trace), "--out", s(plan)];
    args.extend_from_slice(plan_args);
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A Mooncake trace of `n` rows `gap_ms` apart (lengths varied by `shift`), written to `dir` and
/// planned with `loadproof plan` plus `plan_args`: (trace file, plan directory).
pub fn planned_mooncake(
    dir: &Path,
    name: &str,
    n: u64,
    gap_ms: u64,
    shift: u64,
    plan_args: &[&str],
) -> (PathBuf, PathBuf) {
    let trace = dir.join(format!("{name}.jsonl"));
    let plan = dir.join(format!("{name}-plan"));
    plan_mooncake(&trace, &plan, n, gap_ms, shift, plan_args);
    (trace, plan)
}

/// A verified plan of `n` Mooncake rows 40 ms apart in a fresh directory
/// `loadproof-{label}-PID`: `DIR/trace.jsonl` planned into `DIR/plan`. The directory.
pub fn planned_dir(label: &str, n: u64) -> PathBuf {
    let dir = fresh_dir(label);
    plan_mooncake(&dir.join("trace.jsonl"), &dir.join("plan"), n, 40, 0, &[]);
    dir
}

/// The arguments of `loadproof fire PLAN --endpoint ENDPOINT --engine native` with a 100 ms
/// scrape interval, a 50 ms lag bound and `extra`, writing `out`.
pub fn fire_args<'a>(
    plan: &'a Path,
    endpoint: &'a str,
    out: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "fire",
        s(plan),
        "--endpoint",
        endpoint,
        "--engine",
        "native",
        "--scrape-interval-ms",
        "100",
        "--lag-bound-ms",
        "50",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    args
}

/// [`fire_args`] run; it must exit 0. `out`.
pub fn fire_native(plan: &Path, endpoint: &str, out: &Path, extra: &[&str]) -> PathBuf {
    let result = run(&fire_args(plan, endpoint, out, extra));
    assert_eq!(result.status.code(), Some(0), "{}", stderr(&result));
    out.to_path_buf()
}

/// Runs `fire` (which writes the receipt `out`) until `loadproof receipt qualify out` exits 0,
/// at most four times. On a busy machine the client can fall behind the policy's send-lag bound
/// (10 ms) while staying within the fire's own: the receipt is written, and refused, and an
/// operator would fire again. Panics with the last refusal.
pub fn until_qualified(out: &Path, mut fire: impl FnMut()) {
    let mut refusal = String::new();
    for _ in 0..4 {
        fire();
        let qualify = run(&["receipt", "qualify", s(out)]);
        if qualify.status.code() == Some(0) {
            return;
        }
        refusal = format!("{}{}", stdout(&qualify), stderr(&qualify));
    }
    panic!("{} did not qualify in four fires: {refusal}", out.display())
}

/// `loadproof receipt audit RECEIPT --json`, which must exit 0, as JSON.
pub fn audit_json(receipt: &Path) -> serde_json::Value {
    let out = run(&["receipt", "audit", s(receipt), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The sha256 of `bytes` in hex, computed here (not by core) so a test checks core's digests.
pub fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An older receipt (the native sim fixture) whose lease block holds the bearer `token` itself,
/// written to `dir/old.json`: what `publish` must refuse to put on a site or in a page.
pub fn receipt_holding_lease_token(dir: &Path, token: &str) -> PathBuf {
    use loadproof_core::receipt::{Evidence, Lease, Receipt, block};
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/data/receipt/native_sim.json");
    let mut r = Receipt::from_json(&std::fs::read(fixture).unwrap()).unwrap();
    let mut lease = Lease::from_json(&r.block(block::LEASE).unwrap()).unwrap();
    lease.token = Some(token.to_owned());
    lease.token_sha256 = None;
    r.evidence.insert(
        block::LEASE.to_owned(),
        Evidence::of(serde_json::to_string_pretty(&lease).unwrap().as_bytes()),
    );
    let old = dir.join("old.json");
    std::fs::write(&old, r.to_json()).unwrap();
    old
}
