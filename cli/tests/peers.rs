//! The peer engines against `loadproof sim`: real AIPerf (PyPI `aiperf` 0.13) fed the plan,
//! its records read by the audit. These need `tools/peers/install.sh` (and the vLLM lab's tiny
//! tokenizer), so they are `#[ignore]`d in a plain `cargo test`; `tools/test.sh` installs both
//! and runs them with `--ignored`.

mod common;

use std::path::{Path, PathBuf};

use common::{Sim, audit_json, fresh_dir, planned_mooncake, run, run_env, s, stderr};

/// The interpreter of the installed peer, from `PEERS_AIPERF_PYTHON` or the default install.
fn python(tool: &str) -> PathBuf {
    let var = format!("PEERS_{}_PYTHON", tool.to_ascii_uppercase());
    std::env::var_os(&var)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            let path = home.join(format!(".cache/loadproof/peers/{tool}/bin/python"));
            assert!(
                path.is_file(),
                "{} not found: run tools/peers/install.sh (or set {var})",
                path.display()
            );
            path
        })
}

/// The vLLM lab's tiny tokenizer (a local Hugging Face tokenizer directory).
fn tokenizer() -> PathBuf {
    let path = std::env::var_os("VLLM_LAB_TOKENIZER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/loadproof/vllm-lab/tiny-llama")
        });
    assert!(
        path.join("tokenizer.json").is_file(),
        "{}: no tokenizer.json; run tools/vllm-lab/install.sh",
        path.display()
    );
    path
}

fn fire_aiperf(
    plan: &Path,
    url: &str,
    out: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let py = python("aiperf");
    let tok = tokenizer();
    let mut args = vec![
        "fire",
        s(plan),
        "--endpoint",
        url,
        "--engine",
        "aiperf",
        "--python",
        s(&py),
        "--tokenizer",
        s(&tok),
        "--scrape-interval-ms",
        "200",
        "--out",
        s(out),
    ];
    args.extend_from_slice(extra);
    // From the plan's parent directory, so a test can name files there by relative paths.
    std::process::Command::new(env!("CARGO_BIN_EXE_loadproof"))
        .current_dir(plan.parent().unwrap())
        .args(&args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn standing(audit: &serde_json::Value, name: &str) -> (bool, String) {
    let st = &audit["standings"][name];
    (
        st["positive"].as_bool().unwrap_or(false),
        st["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

#[test]
#[ignore = "needs tools/peers/install.sh"]
fn aiperf_replays_the_plan_and_the_audit_reads_its_own_records() {
    let dir = fresh_dir("peers-aiperf");
    let (_, plan) = planned_mooncake(&dir, "t", 20, 50, 0, &[]);
    let sim = Sim::start(&["--model", "tiny-llama"]);
    let out = dir.join("r.receipt");
    let fired = fire_aiperf(&plan, &sim.url, &out, &[], &[]);
    assert_eq!(fired.status.code(), Some(0), "{}", stderr(&fired));
    let audit = audit_json(&out);
    assert_eq!(audit["execution_gate"]["read"], true, "{audit}");
    assert_eq!(audit["ledger"]["offered"], 20);
    assert_eq!(audit["ledger"]["completed"], 20);
    assert_eq!(audit["ledger"]["closed"], true);
    assert_eq!(audit["arrival"]["observed"], true);
    assert_eq!(audit["arrival"]["sent"], 20);
    assert_eq!(audit["inconsistencies"], serde_json::json!([]), "{audit}");
    for name in [
        "implementation",
        "counter_agreement",
        "ledger",
        "continuity",
    ] {
        let (positive, reason) = standing(&audit, name);
        assert!(positive, "{name}: {reason}");
    }
    let (_, implementation) = standing(&audit, "implementation");
    assert!(implementation.contains("AIPerf 0.13"), "{implementation}");
    // What AIPerf was given and what it wrote are blocks of the receipt.
    for block in [
        "aiperf/input.jsonl",
        "aiperf/aiperf.yaml",
        "aiperf/profile_export.jsonl",
        "bench/stdout",
    ] {
        let got = run(&["receipt", "extract", s(&out), block]);
        assert_eq!(got.status.code(), Some(0), "{block}: {}", stderr(&got));
    }
    // The same run's files imported as if made elsewhere: the same records read, its input and
    // configuration held to the plan, the implementation unbound (nothing hashed it).
    let run_dir = only_run_dir(&plan, "aiperf");
    let imported = dir.join("imported.receipt");
    let got = run(&[
        "receipt",
        "import",
        "--aiperf-dir",
        s(&run_dir.join("artifacts")),
        "--tool-input",
        s(&run_dir.join("input.jsonl")),
        "--aiperf-config",
        s(&run_dir.join("aiperf.yaml")),
        "--exit-code",
        "0",
        "--plan",
        s(&plan),
        "--model",
        "tiny-llama",
        "--base-url",
        &sim.url,
        "--out",
        s(&imported),
    ]);
    assert_eq!(got.status.code(), Some(0), "{}", stderr(&got));
    let again = audit_json(&imported);
    assert_eq!(again["execution_gate"]["read"], true, "{again}");
    assert_eq!(again["ledger"], audit["ledger"]);
    assert_eq!(again["latency"], audit["latency"]);
    assert_eq!(again["inconsistencies"], serde_json::json!([]), "{again}");
    let (bound, _) = standing(&again, "implementation");
    assert!(!bound);
}

/// The one run directory `fire` made under `PLAN/peer-runs/` for `tool`.
fn only_run_dir(plan: &Path, tool: &str) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(plan.join("peer-runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(tool))
        })
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.into_iter().next().unwrap()
}

#[test]
#[ignore = "needs tools/peers/install.sh"]
fn an_api_key_reaches_aiperf_only_through_its_environment() {
    let dir = fresh_dir("peers-aiperf-key");
    let (_, plan) = planned_mooncake(&dir, "t", 6, 50, 0, &[]);
    let key = "sk-peer-secret-7f3a9c";
    // Over TLS with a private CA named by a relative path: the tool runs in its own
    // directory, and still trusts the file the caller meant.
    let ca = dir.join("ca.pem");
    let sim = Sim::start_env(
        &[
            "--model",
            "tiny-llama",
            "--api-key-env",
            "SIM_KEY",
            "--tls-self-signed",
            s(&ca),
        ],
        &[("SIM_KEY", key)],
    );
    assert!(sim.url.starts_with("https://"), "{}", sim.url);
    let out = dir.join("r.receipt");
    // A PYTHONPATH in the caller's environment must not run code beside the bound install.
    let inject = dir.join("inject");
    std::fs::create_dir_all(&inject).unwrap();
    let marker = dir.join("injected");
    std::fs::write(
        inject.join("sitecustomize.py"),
        format!("open({:?}, 'w').write('ran')\n", s(&marker)),
    )
    .unwrap();
    let fired = fire_aiperf(
        &plan,
        &sim.url,
        &out,
        &[
            "--api-key-env",
            "MY_KEY",
            "--form",
            "json",
            "--ca-cert",
            "ca.pem",
        ],
        &[("MY_KEY", key), ("PYTHONPATH", s(&inject))],
    );
    assert_eq!(fired.status.code(), Some(0), "{}", stderr(&fired));
    assert!(
        !marker.exists(),
        "code on the caller's PYTHONPATH ran in the child"
    );
    let audit = audit_json(&out);
    assert_eq!(audit["ledger"]["completed"], 6, "{audit}");
    let receipt = std::fs::read_to_string(&out).unwrap();
    assert!(!receipt.contains(key), "the key is in the receipt");
    let config = run(&["receipt", "extract", s(&out), "aiperf/aiperf.yaml"]);
    let config = String::from_utf8_lossy(&config.stdout);
    assert!(config.contains("${LOADPROOF_PEER_API_KEY}"), "{config}");
    // Nor in anything AIPerf left on disk.
    for entry in walk(&plan.join("peer-runs")) {
        if let Ok(text) = std::fs::read(&entry) {
            assert!(
                !String::from_utf8_lossy(&text).contains(key),
                "the key is in {}",
                entry.display()
            );
        }
    }
}

#[test]
#[ignore = "needs tools/peers/install.sh"]
fn requests_aiperf_saw_fail_are_named_in_the_ledger_by_status() {
    let dir = fresh_dir("peers-aiperf-fault");
    let (_, plan) = planned_mooncake(&dir, "t", 10, 50, 0, &[]);
    let sim = Sim::start(&["--model", "tiny-llama", "--fault", "http500:5"]);
    let out = dir.join("r.receipt");
    let fired = fire_aiperf(&plan, &sim.url, &out, &[], &[]);
    // AIPerf exits 0 with failed requests: its records say which.
    assert_eq!(fired.status.code(), Some(0), "{}", stderr(&fired));
    let audit = audit_json(&out);
    assert_eq!(audit["execution_gate"]["read"], true, "{audit}");
    assert_eq!(audit["ledger"]["completed"], 8);
    assert_eq!(audit["ledger"]["failed"], 2);
    assert_eq!(audit["ledger"]["dispositions"]["http"], 2);
    let (positive, _) = standing(&audit, "ledger");
    assert!(!positive);
}

#[test]
#[ignore = "needs tools/peers/install.sh"]
fn an_aiperf_run_that_exits_nonzero_is_a_receipt_whose_records_are_unread() {
    let dir = fresh_dir("peers-aiperf-fail");
    let (_, plan) = planned_mooncake(&dir, "t", 4, 50, 0, &[]);
    // Every request refused: AIPerf exits 1.
    let sim = Sim::start(&["--model", "tiny-llama", "--fault", "http500"]);
    let out = dir.join("r.receipt");
    let fired = fire_aiperf(&plan, &sim.url, &out, &[], &[]);
    assert_eq!(fired.status.code(), Some(1), "{}", stderr(&fired));
    let audit = audit_json(&out);
    assert_eq!(audit["execution_gate"]["read"], false);
    let reason = audit["execution_gate"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.contains("AIPerf's process ended with exit code"),
        "{reason}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
#[ignore = "needs tools/peers/install.sh"]
fn guidellm_replays_the_plan_with_its_key_only_in_its_environment() {
    let dir = fresh_dir("peers-guidellm");
    let (_, plan) = planned_mooncake(&dir, "t", 12, 50, 0, &[]);
    let key = "sk-guidellm-secret-51c0";
    let sim = Sim::start_env(
        &["--model", "tiny-llama", "--api-key-env", "SIM_KEY"],
        &[("SIM_KEY", key)],
    );
    let out = dir.join("r.receipt");
    let py = python("guidellm");
    let tok = tokenizer();
    let fired = run_env(
        &[
            "fire",
            s(&plan),
            "--endpoint",
            &sim.url,
            "--engine",
            "guidellm",
            "--python",
            s(&py),
            "--tokenizer",
            s(&tok),
            "--api-key-env",
            "MY_KEY",
            "--form",
            "json",
            "--out",
            s(&out),
        ],
        &[
            ("MY_KEY", key),
            ("GUIDELLM__SPEC__BACKEND__TARGET", "http://127.0.0.1:9"),
        ],
    );
    assert_eq!(fired.status.code(), Some(0), "{}", stderr(&fired));
    let audit = audit_json(&out);
    assert_eq!(audit["execution_gate"]["read"], true, "{audit}");
    assert_eq!(audit["ledger"]["completed"], 12, "{audit}");
    assert_eq!(audit["ledger"]["closed"], true);
    assert_eq!(audit["inconsistencies"], serde_json::json!([]), "{audit}");
    let (positive, reason) = standing(&audit, "counter_agreement");
    assert!(positive, "{reason}");
    let (_, implementation) = standing(&audit, "implementation");
    assert!(implementation.contains("GuideLLM 0.8"), "{implementation}");
    // GuideLLM keeps no per-token times: the ITL distribution is empty and says why.
    let itl = audit["latency"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["metric"] == "itl")
        .unwrap();
    assert_eq!(itl["count"], 0);
    assert!(
        itl["source"]
            .as_str()
            .unwrap()
            .contains("first and last token")
    );
    let receipt = std::fs::read_to_string(&out).unwrap();
    assert!(!receipt.contains(key), "the key is in the receipt");
    for entry in walk(&plan.join("peer-runs")) {
        if let Ok(text) = std::fs::read(&entry) {
            assert!(
                !String::from_utf8_lossy(&text).contains(key),
                "{}",
                entry.display()
            );
        }
    }
}
