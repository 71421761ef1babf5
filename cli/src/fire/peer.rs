//! The peer engines: AIPerf and GuideLLM as child processes of a named Python interpreter,
//! fed the verified plan in their own input format.
//!
//! As for `vllm bench serve`, the console script beside `--python` is the one run (never one
//! from PATH), and the implementation is bound by digest: the sha256 of a manifest of the
//! installed modules that build the schedule and send the requests (`sha256sum FILES |
//! sha256sum` from the site-packages directory recomputes it). Everything a run is given — its
//! input file and its configuration — is written into a fresh directory of its own and kept
//! in the receipt, so the audit can rebuild the input from the plan and compare. Secrets travel
//! only in the child's environment (the configuration names the variable, never the value).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use loadproof_core::receipt::{Implementation, block, sha256_hex};

use super::child::NotStarted;
use super::implementation::file_sha256;

/// Which peer tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// NVIDIA AIPerf (PyPI `aiperf`).
    Aiperf,
    /// GuideLLM (PyPI `guidellm`).
    Guidellm,
}

impl Tool {
    /// The PyPI distribution and console script.
    fn dist(self) -> &'static str {
        match self {
            Tool::Aiperf => "aiperf",
            Tool::Guidellm => "guidellm",
        }
    }

    /// The release series loadproof reads the records of.
    fn series(self) -> &'static str {
        match self {
            Tool::Aiperf => "0.13.",
            Tool::Guidellm => "0.8.",
        }
    }

    /// The installed modules that define what was sent when: the input format's loader, the
    /// schedule, and the transport that stamps the send.
    fn modules(self) -> &'static [&'static str] {
        match self {
            Tool::Aiperf => &[
                "aiperf/dataset/loader/mooncake_trace.py",
                "aiperf/timing/strategies/fixed_schedule.py",
                "aiperf/transports/aiohttp_client.py",
            ],
            Tool::Guidellm => &[
                "guidellm/data/deserializers/trace_common.py",
                "guidellm/data/deserializers/trace_mooncake.py",
                "guidellm/scheduler/strategies.py",
                "guidellm/scheduler/worker.py",
                "guidellm/backends/openai/http.py",
            ],
        }
    }

    /// The name in a receipt's implementation.
    pub fn label(self) -> &'static str {
        match self {
            Tool::Aiperf => "AIPerf",
            Tool::Guidellm => "GuideLLM",
        }
    }
}

/// A checked install.
#[derive(Debug, Clone)]
pub struct Install {
    /// Which tool.
    pub tool: Tool,
    /// The console script run.
    pub program: PathBuf,
    /// The installed distribution's version.
    pub version: String,
    /// The site-packages directory the modules are in, or why they were not found.
    pub site: Result<PathBuf, String>,
}

/// Finds the tool's console script beside `python` and reads the installed version from the
/// interpreter's package metadata (no import: AIPerf's import alone takes seconds).
pub async fn resolve(tool: Tool, python: &Path) -> Result<Install, NotStarted> {
    let probe = format!(
        "import importlib.metadata as m\n\
         dist = m.distribution({:?})\n\
         print(dist.version)\n\
         print(dist.locate_file(''))\n",
        tool.dist()
    );
    let (ok, lines) = super::child::probe(python, &probe).await?;
    let mut lines = lines.iter().map(String::as_str);
    let version = lines.next().unwrap_or_default().to_owned();
    if !ok || version.is_empty() {
        return Err(format!(
            "{} is not installed for {} (no `{}` distribution); tools/peers/install.sh installs it",
            tool.label(),
            python.display(),
            tool.dist()
        ));
    }
    if !version.starts_with(tool.series()) {
        return Err(format!(
            "{} {version} is installed; loadproof reads the records of {}x only (their fields change between releases)",
            tool.label(),
            tool.series()
        ));
    }
    let site = match lines.next().filter(|l| !l.is_empty()) {
        Some(dir) if Path::new(dir).is_dir() => Ok(PathBuf::from(dir)),
        Some(dir) => Err(format!("{dir} is not a directory")),
        None => Err(format!(
            "{} did not say where its {} distribution is installed",
            python.display(),
            tool.dist()
        )),
    };
    let program = super::child::console_script(python, tool.dist())?;
    Ok(Install {
        tool,
        program,
        version,
        site,
    })
}

/// The implementation: the tool at its version, bound to the sha256 of the manifest
/// `sha256  path` (one line per module, paths relative to site-packages, in the order listed).
pub fn implementation(install: &Install) -> Implementation {
    let tool = install.tool;
    let bound = install.site.clone().and_then(|site| {
        let mut manifest = String::new();
        for module in tool.modules() {
            let path = site.join(module);
            let sha = file_sha256(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            manifest.push_str(&format!("{sha}  {module}\n"));
        }
        Ok((site, manifest))
    });
    match bound {
        Ok((site, manifest)) => Implementation {
            name: tool.label().to_owned(),
            version: Some(install.version.clone()),
            source: Some(format!(
                "{}: {} (the digest is of `sha256sum` over these files, run in that directory)",
                site.display(),
                tool.modules().join(" ")
            )),
            source_sha256: Some(sha256_hex(manifest.as_bytes())),
            unbound: None,
        },
        Err(why) => Implementation {
            name: tool.label().to_owned(),
            version: Some(install.version.clone()),
            source: None,
            source_sha256: None,
            unbound: Some(why),
        },
    }
}

/// A Hugging Face tokenizer in a local directory, laid out as a hub cache (AIPerf resolves a
/// tokenizer offline only from there): `models--loadproof--tokenizer/snapshots/REV/` with the
/// tokenizer files, `refs/main` naming REV (the first 40 hex digits of tokenizer.json's sha256).
/// Returns the cache directory and the repo id to ask for.
pub fn tokenizer_cache(local: &Path, into: &Path) -> Result<(PathBuf, String)> {
    let tokenizer = local.join("tokenizer.json");
    let sha = file_sha256(&tokenizer)
        .with_context(|| format!("--tokenizer {}: reading tokenizer.json", local.display()))?;
    let rev = sha.get(..40).unwrap_or(&sha).to_owned();
    let hub = into.join("hub");
    let repo = hub.join("models--loadproof--tokenizer");
    let snapshot = repo.join("snapshots").join(&rev);
    std::fs::create_dir_all(&snapshot)
        .with_context(|| format!("creating {}", snapshot.display()))?;
    for file in [
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
    ] {
        let from = local.join(file);
        if from.is_file() {
            std::fs::copy(&from, snapshot.join(file))
                .with_context(|| format!("copying {}", from.display()))?;
        }
    }
    std::fs::create_dir_all(repo.join("refs"))?;
    std::fs::write(repo.join("refs").join("main"), &rev)?;
    Ok((hub, "loadproof/tokenizer".to_owned()))
}

/// A fresh directory for one run's inputs and the tool's outputs: `PLAN/peer-runs/TOOL-N`,
/// never an existing one (nothing of the caller's is overwritten or removed).
pub fn run_dir(plan_dir: &Path, tool: Tool) -> Result<PathBuf> {
    let parent = plan_dir.join("peer-runs");
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    // Absolute: the child runs inside it, and its environment names paths in it.
    let parent = parent
        .canonicalize()
        .with_context(|| format!("resolving {}", parent.display()))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    for n in 0..1000u32 {
        let dir = parent.join(format!("{}-{stamp}-{n}", tool.dist()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
        }
    }
    anyhow::bail!("no fresh run directory under {}", parent.display())
}

/// A fresh directory `lp-TOOL-PID-N` under the system's temporary directory, for the tool's
/// TMPDIR (its socket paths must stay short).
pub fn short_tmp(tool: Tool) -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for n in 0..1000u32 {
        let dir = base.join(format!("lp-{}-{}-{n}", tool.dist(), std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
        }
    }
    anyhow::bail!("no fresh temporary directory under {}", base.display())
}

/// The environment variable the configuration names for the API key (or the lease token).
pub const KEY_VAR: &str = "LOADPROOF_PEER_API_KEY";
/// The environment variable the configuration names for the lease token beside an API key.
pub const LEASE_VAR: &str = "LOADPROOF_PEER_LEASE_TOKEN";

/// What the run is given.
pub struct Given<'a> {
    /// The endpoint's base URL.
    pub endpoint: &'a str,
    /// The served model.
    pub model: &'a str,
    /// The repo id (or path) the tool loads its tokenizer by.
    pub tokenizer: &'a str,
    /// The plan's block size.
    pub chunk: u32,
    /// An `Authorization: Bearer` secret is in [`KEY_VAR`].
    pub bearer: bool,
    /// A lease token is in [`LEASE_VAR`], for the lease header.
    pub lease_header: bool,
}

/// AIPerf's configuration (`aiperf profile --config`): the whole run in one document, written
/// as JSON (a YAML subset) so that every value is quoted exactly. Fixed schedule from the
/// plan's zero (`auto_offset: false`, `start_offset: 0`), streaming completions, `ignore_eos`
/// as vLLM's bench sends it, the plan's block size, no warm-up, and none of AIPerf's own GPU
/// telemetry or `/metrics` scraping (loadproof scrapes; the run must not depend on ports AIPerf
/// probes).
pub fn aiperf_config(given: &Given<'_>) -> std::result::Result<Vec<u8>, String> {
    // AIPerf substitutes `${NAME}` in every value from its environment — the secret's variable
    // included — so a value holding one could carry the API key into a request or a record.
    for (what, value) in [
        ("--endpoint", given.endpoint),
        ("--model", given.model),
        ("--tokenizer", given.tokenizer),
    ] {
        if value.contains("${") {
            return Err(format!(
                "{what} {value:?}: AIPerf would substitute `${{…}}` from its environment (where the API key is); refused"
            ));
        }
    }
    let mut endpoint = serde_json::json!({
        "urls": [given.endpoint],
        "type": "completions",
        "streaming": true,
        "extra": {"ignore_eos": true},
    });
    if given.bearer {
        endpoint["api_key"] = format!("${{{KEY_VAR}}}").into();
    }
    if given.lease_header {
        endpoint["headers"] = serde_json::json!({
            crate::secret::LEASE_HEADER: format!("${{{LEASE_VAR}}}")
        });
    }
    let config = serde_json::json!({
        "models": [given.model],
        "endpoint": endpoint,
        "datasets": [{
            "name": "main",
            "type": "file",
            "path": AIPERF_INPUT_FILE,
            "format": "mooncake_trace",
            "block_size": given.chunk,
        }],
        "phases": [{
            "name": "profiling",
            "type": "fixed_schedule",
            "auto_offset": false,
            "start_offset": 0,
        }],
        "artifacts": {"dir": AIPERF_ARTIFACTS},
        "tokenizer": {"name": given.tokenizer},
        "random_seed": 0,
        "gpu_telemetry": {"enabled": false},
        "server_metrics": {"enabled": false},
        "runtime": {"ui": "none"},
    });
    let mut out = serde_json::to_vec_pretty(&config).unwrap_or_default();
    out.push(b'\n');
    Ok(out)
}

/// AIPerf's input file's name inside the run directory.
pub const AIPERF_INPUT_FILE: &str = "input.jsonl";
/// Its configuration's name.
pub const AIPERF_CONFIG_FILE: &str = "aiperf.yaml";
/// Its artifact directory's name.
pub const AIPERF_ARTIFACTS: &str = "artifacts";

/// The files a run leaves, as `(block, path)`: the per-request records first (the
/// execution's result), then what is kept beside them (AIPerf's summary and log: never read
/// for a fact).
pub fn outputs(tool: Tool, dir: &Path) -> Vec<(&'static str, PathBuf)> {
    if tool == Tool::Guidellm {
        return vec![(block::GUIDELLM_REPORT, dir.join(GUIDELLM_REPORT_FILE))];
    }
    let artifacts = dir.join(AIPERF_ARTIFACTS);
    vec![
        (block::AIPERF_EXPORT, artifacts.join("profile_export.jsonl")),
        (
            block::AIPERF_SUMMARY,
            artifacts.join("profile_export_aiperf.json"),
        ),
        (block::AIPERF_LOG, artifacts.join("logs").join("aiperf.log")),
    ]
}

/// GuideLLM's input file's name inside the run directory.
pub const GUIDELLM_INPUT_FILE: &str = "input.jsonl";
/// Its report's name.
pub const GUIDELLM_REPORT_FILE: &str = "benchmarks.json";

/// GuideLLM's argv after the program: `run` with the replay profile on the rows' own
/// timestamps, the plan's rows as its `mooncake` trace at the plan's block size, streaming
/// completions (its `openai_http` backend sends `ignore_eos` and `max_tokens` per row), TLS
/// checked unless `insecure` (GuideLLM checks no certificate by default), and its JSON report
/// with every request (no sampling). GuideLLM's `k=v,k=v` option syntax cannot carry a comma
/// in a value: such a value is refused.
pub fn guidellm_args(
    given: &Given<'_>,
    insecure: bool,
) -> std::result::Result<Vec<String>, String> {
    for (what, value) in [
        ("--endpoint", given.endpoint),
        ("--model", given.model),
        ("--tokenizer", given.tokenizer),
    ] {
        if value.contains(',') {
            return Err(format!(
                "{what} {value:?}: GuideLLM's option syntax (k=v,k=v) cannot carry a comma"
            ));
        }
    }
    Ok(vec![
        "run".to_owned(),
        "--backend".to_owned(),
        format!(
            "kind=openai_http,target={},model={},request_format=/v1/completions,verify={}",
            given.endpoint,
            given.model,
            if insecure { "false" } else { "true" }
        ),
        "--profile".to_owned(),
        "kind=replay,schedule_turn=timestamp".to_owned(),
        "--data".to_owned(),
        format!(
            "kind=mooncake,source.kind=json_file,source.path={GUIDELLM_INPUT_FILE},hash_id_block_size={}",
            given.chunk
        ),
        "--tokenizer".to_owned(),
        format!("kind=huggingface_auto,model={}", given.tokenizer),
        "--output".to_owned(),
        format!("kind=json,path={GUIDELLM_REPORT_FILE}"),
        "--disable-console-interactive".to_owned(),
    ])
}
