//! Helpers shared by the CLI's integration tests: run the binary, find `../shared`, start
//! `loadproof sim` on a free port.
#![allow(dead_code)] // each test file uses a subset

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Runs `loadproof` with `args` to completion.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .args(args)
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

/// The fast model knobs that keep the sim from being the bottleneck.
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

impl Sim {
    pub fn start(extra: &[&str]) -> Sim {
        let mut child = Command::new(env!("CARGO_BIN_EXE_loadproof"))
            .args(["sim", "--port", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("loadproof sim listening on ")
            .and_then(|r| r.strip_suffix(" (simulator, not vLLM)"))
            .unwrap_or_else(|| panic!("unexpected first stderr line {line:?}"))
            .to_owned();
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = stderr.read_to_string(&mut sink);
        });
        let addr = url.trim_start_matches("http://").to_owned();
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
