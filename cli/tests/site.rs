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
