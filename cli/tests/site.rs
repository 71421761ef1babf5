//! `loadproof playbook publish --receipt`: receipts bundled with a published site, byte for
//! byte, indexed for the page, listed in the manifest; a file that is not a receipt refused.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{run, s, stderr};

fn scratch(name: &str) -> PathBuf {
    common::fresh_dir(&format!("site-{name}"))
}

/// A stand-in for `dist/` with relative asset URLs.
fn fake_app(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><script type=\"module\" src=\"./app.js\"></script>\n",
    )
    .unwrap();
    std::fs::write(dir.join("app.js"), "export {};\n").unwrap();
}

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

/// `loadproof playbook publish` of the example playbook to `site` with the app `app` and
/// `receipts` bundled (in order).
fn publish(site: &Path, app: &Path, receipts: &[&Path]) -> Output {
    let examples = repo("fixtures/playbook/examples.json");
    let mut args = vec![
        "playbook",
        "publish",
        s(&examples),
        "--out",
        s(site),
        "--app",
        s(app),
    ];
    for r in receipts {
        args.extend_from_slice(&["--receipt", s(r)]);
    }
    run(&args)
}

fn sha256(bytes: &[u8]) -> String {
    loadproof_core::receipt::sha256_hex(bytes)
}

#[test]
fn a_bundled_receipt_is_published_byte_for_byte_indexed_and_in_the_manifest() {
    let dir = scratch("bundle");
    let app = dir.join("dist");
    fake_app(&app);
    let fixture = repo("core/tests/data/receipt/native_sim.json");
    let baseline = dir.join("baseline.json");
    let treatment = dir.join("treatment.json");
    std::fs::copy(&fixture, &baseline).unwrap();
    std::fs::copy(&fixture, &treatment).unwrap();
    let site = dir.join("site");
    let out = publish(&site, &app, &[&baseline, &treatment]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bundled receipt receipts/baseline.json"),
        "{text}"
    );

    let bytes = std::fs::read(&fixture).unwrap();
    assert_eq!(
        std::fs::read(site.join("receipts/baseline.json")).unwrap(),
        bytes
    );
    assert_eq!(
        std::fs::read(site.join("receipts/treatment.json")).unwrap(),
        bytes
    );
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("receipts.json")).unwrap()).unwrap();
    assert_eq!(index["schema"], "loadproof.site-receipts/v1");
    let listed = index["receipts"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        listed[0]["name"], "baseline.json",
        "order kept: the first is the baseline"
    );
    assert_eq!(listed[0]["path"], "receipts/baseline.json");
    assert_eq!(listed[0]["sha256"], sha256(&bytes).as_str());
    assert_eq!(listed[0]["bytes"], bytes.len());
    let manifest = std::fs::read_to_string(site.join("site.sha256")).unwrap();
    assert!(manifest.contains(&format!("{}  receipts/baseline.json\n", sha256(&bytes))));
    assert!(manifest.contains("  receipts.json\n"));

    // Re-publishing without receipts leaves none behind (the site is replaced whole), and the
    // index is still there, empty, so the page finds it.
    let out = publish(&site, &app, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("receipts.json")).unwrap()).unwrap();
    assert_eq!(index["receipts"].as_array().unwrap().len(), 0);
    assert!(!site.join("receipts").exists());
}

#[test]
fn a_file_that_is_not_a_receipt_is_refused_before_anything_is_written() {
    let dir = scratch("not-a-receipt");
    let app = dir.join("dist");
    fake_app(&app);
    let bogus = dir.join("bogus.json");
    std::fs::write(&bogus, "{\"schema\": \"something else\"}").unwrap();
    let site = dir.join("site");
    let out = publish(&site, &app, &[&bogus]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("bogus.json"), "{}", stderr(&out));
    assert!(!site.exists());
}

#[test]
fn two_bundled_receipts_with_one_name_are_refused() {
    let dir = scratch("same-name");
    let app = dir.join("dist");
    fake_app(&app);
    let fixture = repo("core/tests/data/receipt/native_sim.json");
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::copy(&fixture, dir.join("a/r.json")).unwrap();
    std::fs::copy(&fixture, dir.join("b/r.json")).unwrap();
    let out = publish(
        &dir.join("site"),
        &app,
        &[&dir.join("a/r.json"), &dir.join("b/r.json")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a second receipt named \"r.json\""),
        "{}",
        stderr(&out)
    );
}

/// issue 20: a directory holding a file named `site.sha256` (any content) was wiped whole.
#[test]
fn publish_replaces_only_a_site_it_wrote_and_can_prove_and_deletes_nothing_else() {
    let dir = scratch("nodataloss");
    let app = dir.join("dist");
    fake_app(&app);
    // A user's directory with a file that happens to be called site.sha256.
    let theirs = dir.join("theirs");
    std::fs::create_dir_all(theirs.join("sub")).unwrap();
    std::fs::write(theirs.join("site.sha256"), "anything\n").unwrap();
    std::fs::write(theirs.join("thesis.tex"), "mine").unwrap();
    std::fs::write(theirs.join("sub/data.csv"), "1,2").unwrap();
    let out = publish(&theirs, &app, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not provably a site publish wrote"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(theirs.join("thesis.tex")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(theirs.join("sub/data.csv")).unwrap(),
        "1,2"
    );

    // A real site is replaced; the same site with an edited file or an extra file is not.
    let site = dir.join("site");
    assert_eq!(publish(&site, &app, &[]).status.code(), Some(0));
    assert_eq!(
        publish(&site, &app, &[]).status.code(),
        Some(0),
        "a verified site is replaced"
    );
    std::fs::write(site.join("notes.md"), "mine").unwrap();
    let out = publish(&site, &app, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("notes.md is not in its site.sha256"),
        "{}",
        stderr(&out)
    );
    assert!(site.join("notes.md").exists());
    std::fs::remove_file(site.join("notes.md")).unwrap();
    std::fs::write(site.join("app.js"), "edited").unwrap();
    let out = publish(&site, &app, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("app.js changed since it was published"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(site.join("app.js")).unwrap(),
        "edited"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// issue 20: `--app` followed links out of the app directory into the site.
#[test]
fn publish_never_follows_a_link_out_of_the_app_directory() {
    let dir = scratch("applink");
    let app = dir.join("dist");
    fake_app(&app);
    std::fs::write(dir.join("secret.txt"), "private").unwrap();
    std::os::unix::fs::symlink(dir.join("secret.txt"), app.join("leak.txt")).unwrap();
    let site = dir.join("site");
    let out = publish(&site, &app, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("outside the app directory"),
        "{}",
        stderr(&out)
    );
    assert!(!site.exists());
    // A link to a file inside the app is copied as that file.
    std::fs::remove_file(app.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(app.join("app.js"), app.join("alias.js")).unwrap();
    let out = publish(&site, &app, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(site.join("alias.js")).unwrap(),
        b"export {};\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// issue 20: receipts kept the lease's bearer token and publish copied them byte for byte.
#[test]
fn a_receipt_that_holds_a_lease_token_is_refused_unless_redacted() {
    use loadproof_core::receipt::{Lease, Receipt, block};
    let dir = scratch("token");
    let app = dir.join("dist");
    fake_app(&app);
    // An older receipt: its lease block holds the token itself.
    let token = "5f".repeat(32);
    let old = common::receipt_holding_lease_token(&dir, &token);
    let site = dir.join("site");
    let out = publish(&site, &app, &[&old]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds the lease's bearer token"),
        "{}",
        stderr(&out)
    );
    assert!(!site.exists());

    let examples = repo("fixtures/playbook/examples.json");
    let out = run(&[
        "playbook",
        "publish",
        s(&examples),
        "--out",
        s(&site),
        "--app",
        s(&app),
        "--receipt",
        s(&old),
        "--redact-lease-tokens",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let published = std::fs::read(site.join("receipts/old.json")).unwrap();
    assert!(
        !String::from_utf8_lossy(&published).contains(&token),
        "the token is gone"
    );
    let back = Receipt::from_json(&published).unwrap();
    assert!(
        back.verify_evidence().is_empty(),
        "the redacted block verifies"
    );
    let lease = Lease::from_json(&back.block(block::LEASE).unwrap()).unwrap();
    assert_eq!(lease.token, None);
    assert_eq!(lease.token_sha256, Some(sha256(token.as_bytes())));
    assert!(back.notes.iter().any(|n| n.contains("redacted")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Adversarial pass: a FIFO in `--app` hung publish (and left its staging directory); a
/// directory named like the staging directory was deleted; an empty directory made inside a
/// published site vanished on the next publish.
#[test]
fn publish_refuses_special_files_and_touches_no_directory_it_did_not_make() {
    let dir = scratch("staging");
    let app = dir.join("dist");
    fake_app(&app);
    assert!(
        std::process::Command::new("mkfifo")
            .arg(app.join("pipe"))
            .status()
            .unwrap()
            .success()
    );
    let site = dir.join("site");
    let out = publish(&site, &app, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is a FIFO (named pipe)"),
        "{}",
        stderr(&out)
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".publish-"))
        .collect();
    assert!(leftovers.is_empty(), "no staging directory left behind");
    std::fs::remove_file(app.join("pipe")).unwrap();

    // An empty directory made inside the published site is not the site's.
    assert_eq!(publish(&site, &app, &[]).status.code(), Some(0));
    std::fs::create_dir_all(site.join("mydrafts/sub")).unwrap();
    let out = publish(&site, &app, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("mydrafts/ holds nothing"),
        "{}",
        stderr(&out)
    );
    assert!(site.join("mydrafts/sub").is_dir());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Adversarial pass: a lease block that is not a valid lease (another schema, a key twice)
/// still holding a token was published with it.
#[test]
fn a_lease_block_publish_cannot_read_is_refused_rather_than_published() {
    use loadproof_core::receipt::{Evidence, Receipt, block};
    let dir = scratch("badlease");
    let app = dir.join("dist");
    fake_app(&app);
    let fixture = Receipt::from_json(
        &std::fs::read(repo("core/tests/data/receipt/native_sim.json")).unwrap(),
    )
    .unwrap();
    let token = "5f".repeat(16);
    for (name, lease) in [
        (
            "schema.json",
            format!(r#"{{"schema": "loadproof.lease/v0", "token": "{token}"}}"#),
        ),
        (
            "dup.json",
            format!(r#"{{"token": "", "token": "{token}"}}"#),
        ),
    ] {
        let mut r = fixture.clone();
        r.evidence
            .insert(block::LEASE.to_owned(), Evidence::of(lease.as_bytes()));
        let path = dir.join(name);
        std::fs::write(&path, r.to_json()).unwrap();
        let site = dir.join(format!("site-{name}"));
        let out = publish(&site, &app, &[&path]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("holds the lease's bearer token") || err.contains("cannot be read"),
            "{name}: {err}"
        );
        assert!(!site.exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
