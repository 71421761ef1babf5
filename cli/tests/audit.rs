//! `loadproof receipt audit|capture-check|qualify` end to end: the positive path is reachable
//! (a native run at `loadproof sim` under its lease qualifies), the same run without a lease is
//! captured but unqualified, a tampered receipt names its block, and the three commands keep
//! their own exit codes.

use std::path::{Path, PathBuf};
use std::process::Output;

use loadproof_core::receipt::Receipt;

mod common;

use common::{FAST, Sim, audit_json, s, stderr};

/// One test at a time: a native fire hashes the debug executable (a core-second) and a busy
/// machine would push the dispatch lag over its bound.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn loadproof(args: &[&str]) -> Output {
    common::run(args)
}

/// A verified plan of `n` Mooncake rows 40 ms apart in a fresh directory.
fn planned(name: &str, n: u64) -> PathBuf {
    common::planned_dir(&format!("audit-{name}"), n)
}

/// Fires natively at `sim` with `extra`; the receipt path.
fn fire(dir: &Path, sim: &Sim, extra: &[&str]) -> PathBuf {
    common::fire_native(
        &dir.join("plan"),
        &sim.url,
        &dir.join("receipt.json"),
        extra,
    )
}

fn code(args: &[&str]) -> Option<i32> {
    loadproof(args).status.code()
}

#[test]
fn the_positive_path_qualifies_end_to_end_at_the_sim() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let sim = Sim::start(&FAST);
    let dir = planned("positive", 25);
    let receipt = dir.join("receipt.json");
    common::until_qualified(&receipt, || {
        fire(&dir, &sim, &["--acquire-lease", "120"]);
    });
    let a = audit_json(&receipt);
    assert_eq!(a["qualified"], true, "{:#}", a["refusals"]);
    // the documented --json names
    for key in [
        "digests_ok",
        "execution_gate",
        "ledger",
        "client",
        "engine",
        "foreign_work",
        "standings",
        "qualified",
        "refusals",
    ] {
        assert!(a.get(key).is_some(), "{key}");
    }
    assert_eq!(a["digests_ok"], true);
    assert_eq!(a["ledger"]["offered"], 25);
    assert_eq!(a["ledger"]["completed"], 25);
    assert_eq!(a["ledger"]["failed"], 0);
    assert_eq!(a["ledger"]["aggregate"], false);
    assert_eq!(
        a["engine"]["generation_tokens_delta"],
        a["client"]["output_tokens"]
    );
    assert_eq!(
        a["engine"]["prompt_tokens_delta"],
        a["client"]["input_tokens"]
    );
    assert_eq!(a["engine"]["continuous"], true);
    assert_eq!(a["foreign_work"]["surplus_tokens"], 0);
    assert_eq!(a["foreign_work"]["contradiction"], false);
    assert_eq!(a["simulator"], true);
    for name in [
        "subject",
        "implementation",
        "window",
        "arrival",
        "occupancy",
        "counter_agreement",
        "continuity",
        "ledger",
    ] {
        assert_eq!(
            a["standings"][name]["positive"], true,
            "{name}: {}",
            a["standings"][name]
        );
    }
    // fire wrote its own audit's numbers as `derived`; the audit found them consistent
    let r = Receipt::from_bytes(&std::fs::read(&receipt).unwrap()).unwrap();
    assert!(r.derived.is_some());
    assert_eq!(a["inconsistencies"], serde_json::json!([]));

    assert_eq!(code(&["receipt", "qualify", s(&receipt)]), Some(0));
    assert_eq!(code(&["receipt", "capture-check", s(&receipt)]), Some(0));
    let text = loadproof(&["receipt", "audit", s(&receipt)]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("QUALIFIED (of loadproof sim, a simulator)"),
        "{text}"
    );

    // a byte flipped in one scrape body: named, and the qualification is refused
    let mut v = serde_json::to_value(&r).unwrap();
    let body = v["evidence"]["metrics/1"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    v["evidence"]["metrics/1"]["content"] = serde_json::json!(body.replacen("vllm:", "vllm;", 1));
    let tampered = dir.join("tampered.json");
    std::fs::write(&tampered, serde_json::to_string(&v).unwrap()).unwrap();
    let out = loadproof(&["receipt", "audit", s(&tampered)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL \"metrics/1\""), "{text}");
    assert_eq!(code(&["receipt", "qualify", s(&tampered)]), Some(1));
    assert_eq!(code(&["receipt", "capture-check", s(&tampered)]), Some(1));
}

#[test]
fn without_a_lease_the_same_run_is_captured_but_not_qualified() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let sim = Sim::start(&FAST);
    let dir = planned("no-lease", 10);
    let receipt = fire(&dir, &sim, &[]);
    assert_eq!(code(&["receipt", "capture-check", s(&receipt)]), Some(0));
    let out = loadproof(&["receipt", "qualify", s(&receipt)]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("window: isolation not established"), "{text}");
    let a = audit_json(&receipt);
    assert_eq!(a["qualified"], false);
    assert_eq!(a["standings"]["window"]["positive"], false);
    assert!(
        a["standings"]["window"]["settle"]
            .as_str()
            .unwrap()
            .contains("--acquire-lease")
    );
}

#[test]
fn a_file_that_is_not_a_receipt_exits_2_for_every_command() {
    let dir = std::env::temp_dir().join(format!("loadproof-audit-{}-bad", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"schema\": 1}").unwrap();
    for cmd in ["audit", "capture-check", "qualify"] {
        let out = loadproof(&["receipt", cmd, s(&bad)]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(stderr(&out).contains("bad.json"), "{}", stderr(&out));
    }
    let out = loadproof(&["receipt", "qualify", s(&dir.join("missing.json"))]);
    assert_eq!(out.status.code(), Some(2));
}

/// issue 20, case 1: copying the lease block of a leased run into an unleased one (and, as a
/// careful forger would, the capture block rewritten to match and every digest recomputed) made
/// the unleased run qualify. The unleased run's own scrapes say no lease held: refused.
#[test]
fn a_lease_copied_from_another_run_is_refused_by_the_lessors_own_readback() {
    use loadproof_core::receipt::block;
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let sim = Sim::start(&FAST);
    let leased_dir = planned("splice-leased", 10);
    let leased = fire(&leased_dir, &sim, &["--acquire-lease", "120"]);
    let open_dir = planned("splice-open", 10);
    let open = fire(&open_dir, &sim, &[]);
    let donor = Receipt::from_bytes(&std::fs::read(&leased).unwrap()).unwrap();
    let mut forged = Receipt::from_bytes(&std::fs::read(&open).unwrap()).unwrap();
    forged.evidence.insert(
        block::LEASE.to_owned(),
        donor.evidence[block::LEASE].clone(),
    );
    forged.lease = Some(block::LEASE.to_owned());
    let forged = forged.with_capture();
    let path = open_dir.join("forged.json");
    std::fs::write(&path, forged.to_json()).unwrap();
    assert_eq!(
        code(&["receipt", "verify", s(&path)]),
        Some(0),
        "every digest verifies"
    );
    let a = audit_json(&path);
    assert_eq!(a["qualified"], false);
    let window = a["standings"]["window"]["reason"].as_str().unwrap();
    assert!(
        window.contains("shows no lease active") && window.contains("did not hold across this run"),
        "{window}"
    );
    assert_eq!(code(&["receipt", "qualify", s(&path)]), Some(1));
}

/// issue 19: a lease the sim signs is kept in the receipt and verifies against the sim's key:
/// signed to a reviewer who trusts that key, self-attested to one who does not, and refused
/// (window, subject) by a reviewer who trusts only another key.
#[test]
fn a_lease_signed_by_the_sims_key_verifies_against_the_key_the_reviewer_trusts() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = planned("signed", 20);
    let key = dir.join("sim.key");
    let out = loadproof(&[
        "key",
        "new",
        "--out",
        s(&key),
        "--comment",
        "loadproof sim (simulator)",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(line.starts_with("loadproof-ed25519 ") && line.trim_end().ends_with("(simulator)"));
    let public = dir.join("sim.key.pub");
    assert_eq!(std::fs::read_to_string(&public).unwrap(), line);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // A key is never overwritten.
    let again = loadproof(&["key", "new", "--out", s(&key)]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));

    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--signing-key", s(&key)]);
    let sim = Sim::start(&args);
    // The firing client signs the stream's seal with a key of its own.
    let client = dir.join("client.key");
    assert!(
        loadproof(&["key", "new", "--out", s(&client)])
            .status
            .success()
    );
    let receipt = dir.join("receipt.json");
    common::until_qualified(&receipt, || {
        // Exit 1 is a client that fell behind its own bound on a busy machine: fired again.
        let out = loadproof(&common::fire_args(
            &dir.join("plan"),
            &sim.url,
            &receipt,
            &["--acquire-lease", "120", "--signing-key", s(&client)],
        ));
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    });
    let r = Receipt::from_bytes(&std::fs::read(&receipt).unwrap()).unwrap();
    assert!(r.has_block(loadproof_core::receipt::block::LEASE_SIGNED));

    let audit = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["receipt", "audit", s(&receipt), "--json"];
        args.extend(extra);
        serde_json::from_slice(&loadproof(&args).stdout).unwrap()
    };
    let a = audit(&["--trust", s(&public)]);
    assert_eq!(a["qualified"], true, "{:#}", a["refusals"]);
    assert_eq!(a["attestation"]["level"], "signed");
    // The sim's signed account at release: the 20 requests it admitted under the lease.
    assert_eq!(a["attestation"]["lease_account"]["requests"], 20);
    assert_eq!(a["attestation"]["lease_account"]["agrees"], true);
    // The account chains every statement the sim numbered: its one signature vouches for
    // them all, and fire kept each as text.
    assert_eq!(
        a["attestation"]["lease_account"]["vouches_for_scrapes"], true,
        "{:#}",
        a["attestation"]
    );
    let r_text = Receipt::from_bytes(&std::fs::read(&receipt).unwrap()).unwrap();
    let kept = r_text.block("signed/metrics/1").unwrap();
    assert!(
        String::from_utf8_lossy(&kept).contains("\"text\":"),
        "{}",
        String::from_utf8_lossy(&kept)
    );
    // And the tokens it served: its own count, equal to the client's.
    assert_eq!(a["attestation"]["lease_account"]["uncounted_requests"], 0);
    assert_eq!(
        a["attestation"]["lease_account"]["completion_tokens"],
        a["client"]["output_tokens"]
    );
    assert_eq!(
        a["attestation"]["lease_account"]["prompt_tokens"],
        a["client"]["input_tokens"]
    );
    // Every scrape of the sim's /metrics went to the lease's holder: numbered, and as many as
    // its account says it served.
    assert_eq!(
        a["attestation"]["scrapes"]["numbered"],
        a["attestation"]["scrapes"]["lessor_scrapes"]
    );
    assert_eq!(
        a["attestation"]["lease_account"]["scrapes"],
        a["attestation"]["scrapes"]["numbered"]
    );
    assert_eq!(a["inconsistencies"], serde_json::json!([]));
    let text = loadproof(&["receipt", "audit", s(&receipt), "--trust", s(&public)]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("LESSOR COUNT  agrees") && l.contains("the lessor counted ")),
        "{text}"
    );
    assert_eq!(
        a["attestation"]["lease_key"]["trusted_as"],
        "loadproof sim (simulator)"
    );
    // A key the policy already trusts, given again with --trust, is held once (as the page's
    // policy panel holds it).
    let mut policy = a["policy"].clone();
    policy["trusted_keys"] = serde_json::json!([line.trim_end()]);
    let policy_file = dir.join("policy.json");
    std::fs::write(&policy_file, policy.to_string()).unwrap();
    let again = audit(&["--policy", s(&policy_file), "--trust", s(&public)]);
    assert_eq!(again["policy"]["trusted_keys"], policy["trusted_keys"]);
    assert_eq!(again["attestation"]["level"], "signed");
    let a = audit(&[]);
    assert_eq!(a["qualified"], true);
    assert_eq!(a["attestation"]["level"], "self_attested");
    // The seal's signer is named (the client's key, not the sim's; trusted by nobody here).
    assert_eq!(a["attestation"]["seal_key"]["trusted"], false);
    assert_ne!(
        a["attestation"]["seal_key"]["key_id"],
        a["attestation"]["lease_key"]["key_id"]
    );
    // Trusting only another key: the sim's signature counts for nothing.
    let other = dir.join("other.key");
    assert!(
        loadproof(&["key", "new", "--out", s(&other)])
            .status
            .success()
    );
    let a = audit(&["--trust", &format!("{}.pub", s(&other))]);
    assert_eq!(a["qualified"], false);
    assert_eq!(a["standings"]["window"]["positive"], false);
    // qualify says which it is on its first line.
    let q = loadproof(&["receipt", "qualify", s(&receipt), "--trust", s(&public)]);
    assert_eq!(q.status.code(), Some(0), "{}", stderr(&q));
    assert!(
        String::from_utf8_lossy(&q.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .contains("signed by a key you trust")
    );
    // A file that is not a key file is bad input naming it.
    let bad = loadproof(&["receipt", "audit", s(&receipt), "--trust", s(&receipt)]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("receipt.json"), "{}", stderr(&bad));
}

/// issue 19: the receipt `bench/make_receipt.py` writes in plain Python (a lease it made up,
/// scrapes it made up) is self-attested, and a reviewer who trusts a lessor's key refuses its
/// window and subject, whatever else it gets right.
#[test]
fn a_receipt_written_by_hand_is_self_attested_and_never_signed() {
    let dir = common::fresh_dir("audit-forged");
    let forged = dir.join("forged.json");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let made = std::process::Command::new("python3")
        .arg(root.join("bench/make_receipt.py"))
        .arg(common::shared("vllm/real-runs/vllm-cpu/metrics_after.txt"))
        .arg(&forged)
        .args(["40", "5"])
        .output()
        .expect("python3");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let a = audit_json(&forged);
    assert_eq!(a["attestation"]["level"], "self_attested");
    let key = dir.join("lessor.key");
    assert!(
        loadproof(&["key", "new", "--out", s(&key)])
            .status
            .success()
    );
    let out = loadproof(&[
        "receipt",
        "audit",
        s(&forged),
        "--json",
        "--trust",
        &format!("{}.pub", s(&key)),
    ]);
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(a["qualified"], false);
    assert_eq!(a["attestation"]["level"], "self_attested");
    for name in ["window", "subject"] {
        assert_eq!(a["standings"][name]["positive"], false, "{name}");
        assert!(
            a["standings"][name]["reason"]
                .as_str()
                .unwrap()
                .contains("not signed by its lessor")
        );
    }
}
