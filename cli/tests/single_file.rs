//! `loadproof playbook publish --single-file`: one HTML page holding the app, the playbook and
//! the bundled receipts, and the rules that keep it safe to write and to open: nothing of the
//! user's replaced, nothing inlined able to close its element, a size cap, no bearer token.
//! Also the service worker a published site gets (`sw.js`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{run, s, stderr};
use loadproof_core::site::single_file::{SITE_FILES_ID, decode_base64, read_files_json};

fn scratch(name: &str) -> PathBuf {
    common::fresh_dir(&format!("single-{name}"))
}

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

/// A stand-in for Trunk's `dist/`: a stylesheet, the glue (modulepreload) and the wasm
/// (preload), named by links the way Trunk writes them.
fn fake_app(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("index.html"),
        concat!(
            "<!doctype html><html><head><title>loadproof test</title>\n",
            "<link rel=\"stylesheet\" href=\"./style-1.css\" integrity=\"x\"/>\n",
            "<link rel=\"modulepreload\" href=\"./app-1.js\" crossorigin=\"anonymous\">\n",
            "<link rel=\"preload\" href=\"./app-1_bg.wasm\" as=\"fetch\" type=\"application/wasm\">\n",
            "<script type=\"module\">import init from './app-1.js'; await init();</script>\n",
            "</head><body></body></html>\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("style-1.css"), "body { color: black }\n").unwrap();
    std::fs::write(
        dir.join("app-1.js"),
        "export default async function () {}\n",
    )
    .unwrap();
    std::fs::write(dir.join("app-1_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
}

fn examples() -> PathBuf {
    repo("fixtures/playbook/examples.json")
}

fn receipt_fixture() -> PathBuf {
    repo("core/tests/data/receipt/native_sim.json")
}

fn single(playbook: &Path, app: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "playbook",
        "publish",
        s(playbook),
        "--single-file",
        s(out),
        "--app",
        s(app),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// The text of the `<script … id="ID">` element.
fn script_text<'a>(html: &'a str, id: &str) -> &'a str {
    let open = format!("id=\"{id}\">");
    let start = html.find(&open).unwrap() + open.len();
    let len = html[start..].find("</script>").unwrap();
    &html[start..start + len]
}

#[test]
fn a_single_file_holds_the_app_the_playbook_and_the_receipts_byte_for_byte() {
    let dir = scratch("whole");
    let app = dir.join("dist");
    fake_app(&app);
    let baseline = dir.join("baseline.json");
    std::fs::copy(receipt_fixture(), &baseline).unwrap();
    let page = dir.join("report.html");
    let out = single(&examples(), &app, &page, &["--receipt", s(&baseline)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let files = read_files_json(script_text(&html, SITE_FILES_ID)).unwrap();
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        ["playbook.json", "receipts.json", "receipts/baseline.json"]
    );
    assert_eq!(files["playbook.json"], std::fs::read(examples()).unwrap());
    assert_eq!(
        files["receipts/baseline.json"],
        std::fs::read(receipt_fixture()).unwrap()
    );
    let index = loadproof_core::site::SiteReceipts::from_json(&files["receipts.json"]).unwrap();
    assert_eq!(index.receipts[0].path, "receipts/baseline.json");
    assert_eq!(
        decode_base64(script_text(&html, "loadproof-glue")).unwrap(),
        std::fs::read(app.join("app-1.js")).unwrap()
    );
    assert_eq!(
        decode_base64(script_text(&html, "loadproof-wasm")).unwrap(),
        std::fs::read(app.join("app-1_bg.wasm")).unwrap()
    );
    assert!(
        html.contains("body { color: black }"),
        "the stylesheet is inlined"
    );
    assert!(
        !html.contains("./app-1.js"),
        "nothing is loaded from beside the page"
    );
    assert!(!dir.join("site.sha256").exists());
}

#[test]
fn a_single_file_replaces_only_an_unedited_page_it_wrote() {
    let dir = scratch("replace");
    let app = dir.join("dist");
    fake_app(&app);
    let page = dir.join("report.html");
    let first = single(&examples(), &app, &page, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    // Its own page, unedited: replaced.
    let again = single(&examples(), &app, &page, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    // Edited since: refused, left as it is.
    let edited = std::fs::read_to_string(&page)
        .unwrap()
        .replace("loadproof test", "mine");
    std::fs::write(&page, &edited).unwrap();
    let refused = single(&examples(), &app, &page, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("nothing was changed"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(std::fs::read_to_string(&page).unwrap(), edited);
    // A file of the user's: refused, left as it is.
    let theirs = dir.join("notes.html");
    std::fs::write(&theirs, "<p>my notes</p>").unwrap();
    let refused = single(&examples(), &app, &theirs, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "<p>my notes</p>");
    // A directory: refused.
    let refused = single(&examples(), &app, &dir, &[]);
    assert_eq!(refused.status.code(), Some(2));
    // No staging file is left behind by any of these.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".publish-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[cfg(unix)]
#[test]
fn a_single_file_target_that_is_a_link_is_refused_and_what_it_names_untouched() {
    let dir = scratch("link");
    let app = dir.join("dist");
    fake_app(&app);
    // Even a link to a page publish wrote: replacing it would write through, or drop, the link.
    let page = dir.join("real.html");
    let first = single(&examples(), &app, &page, &[]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let before = std::fs::read(&page).unwrap();
    let link = dir.join("link.html");
    std::os::unix::fs::symlink(&page, &link).unwrap();
    let out = single(&examples(), &app, &link, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a link"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&page).unwrap(), before);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A dangling link, too.
    let dangling = dir.join("dangling.html");
    std::os::unix::fs::symlink(dir.join("nowhere.html"), &dangling).unwrap();
    let out = single(&examples(), &app, &dangling, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.join("nowhere.html").exists());
}

#[test]
fn closing_script_text_in_a_playbook_or_a_receipt_name_cannot_break_out_of_the_page() {
    let dir = scratch("script");
    let app = dir.join("dist");
    fake_app(&app);
    let hostile = "</script><script>alert(1)</script><!--";
    let mut book: serde_json::Value =
        serde_json::from_slice(&std::fs::read(examples()).unwrap()).unwrap();
    book["rows"][0]["notes"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::Value::from(hostile));
    let playbook = dir.join("playbook.json");
    std::fs::write(&playbook, serde_json::to_string_pretty(&book).unwrap()).unwrap();
    let named = dir.join("a<b>&'\".json");
    std::fs::copy(receipt_fixture(), &named).unwrap();
    let page = dir.join("report.html");
    let out = single(&playbook, &app, &page, &["--receipt", s(&named)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("alert(1)"),
        "the note is not in the page as text"
    );
    assert!(
        !html.contains("<b>"),
        "the receipt's name is not in the page as markup"
    );
    // Exactly the page's own four scripts close.
    assert_eq!(html.matches("</script>").count(), 4, "{html:.2000}");
    let files = read_files_json(script_text(&html, SITE_FILES_ID)).unwrap();
    assert_eq!(files["playbook.json"], std::fs::read(&playbook).unwrap());
    assert!(files.contains_key("receipts/a<b>&'\".json"));
}

#[test]
fn a_single_file_over_the_cap_is_refused_before_anything_is_written() {
    let dir = scratch("cap");
    let app = dir.join("dist");
    fake_app(&app);
    let page = dir.join("report.html");
    let out = single(
        &examples(),
        &app,
        &page,
        &["--max-single-file-bytes", "1000"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("over the cap of 1000"), "{err}");
    assert!(err.contains("--max-single-file-bytes"), "{err}");
    assert!(!page.exists());
}

#[test]
fn the_single_file_cap_is_checked_before_any_receipt_is_encoded() {
    let dir = scratch("cap-floor");
    let app = dir.join("dist");
    fake_app(&app);
    let page = dir.join("report.html");
    let receipt = receipt_fixture();
    let bytes = std::fs::metadata(&receipt).unwrap().len();
    let cap = (bytes / 2).to_string();
    let out = single(
        &examples(),
        &app,
        &page,
        &["--receipt", s(&receipt), "--max-single-file-bytes", &cap],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("would be at least"), "{err}");
    assert!(!page.exists());
}

#[test]
fn a_target_larger_than_any_page_publish_writes_is_refused_unread() {
    let dir = scratch("cap-target");
    let app = dir.join("dist");
    fake_app(&app);
    let page = dir.join("report.html");
    // A sparse file far over the cap: refused by its size, never read into memory.
    let f = std::fs::File::create(&page).unwrap();
    f.set_len(1 << 33).unwrap();
    let out = single(&examples(), &app, &page, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("larger than the cap"), "{err}");
    assert_eq!(std::fs::metadata(&page).unwrap().len(), 1 << 33);
}

#[test]
fn a_single_file_refuses_a_receipt_holding_a_lease_token() {
    let dir = scratch("token");
    let app = dir.join("dist");
    fake_app(&app);
    let token = "6a".repeat(32);
    let old = common::receipt_holding_lease_token(&dir, &token);
    let page = dir.join("report.html");
    let out = single(&examples(), &app, &page, &["--receipt", s(&old)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds the lease's bearer token"),
        "{}",
        stderr(&out)
    );
    assert!(!page.exists());
    let out = single(
        &examples(),
        &app,
        &page,
        &["--receipt", s(&old), "--redact-lease-tokens"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let files = read_files_json(script_text(&html, SITE_FILES_ID)).unwrap();
    assert!(memchr::memmem::find(&files["receipts/old.json"], token.as_bytes()).is_none());
}

#[test]
fn an_app_that_names_an_asset_outside_itself_or_could_close_a_style_is_refused() {
    let dir = scratch("assets");
    let app = dir.join("dist");
    fake_app(&app);
    std::fs::write(dir.join("secret.js"), "secret").unwrap();
    let index = std::fs::read_to_string(app.join("index.html")).unwrap();
    std::fs::write(
        app.join("index.html"),
        index.replace("./app-1.js\" crossorigin", "../secret.js\" crossorigin"),
    )
    .unwrap();
    let page = dir.join("report.html");
    let out = single(&examples(), &app, &page, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a file inside the app"),
        "{}",
        stderr(&out)
    );
    assert!(!page.exists());

    fake_app(&app);
    std::fs::write(
        app.join("style-1.css"),
        "a::after { content: '</STYLE><script>x()' }",
    )
    .unwrap();
    let out = single(&examples(), &app, &page, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot be inlined"),
        "{}",
        stderr(&out)
    );
    assert!(!page.exists());
}

#[test]
fn single_file_and_out_are_one_or_the_other() {
    let dir = scratch("both");
    let app = dir.join("dist");
    fake_app(&app);
    let out = run(&[
        "playbook",
        "publish",
        s(&examples()),
        "--app",
        s(&app),
        "--out",
        s(&dir.join("site")),
        "--single-file",
        s(&dir.join("p.html")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["playbook", "publish", s(&examples()), "--app", s(&app)]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_published_site_has_a_service_worker_caching_only_its_own_files() {
    let dir = scratch("worker");
    let app = dir.join("dist");
    fake_app(&app);
    let site = dir.join("site");
    let out = run(&[
        "playbook",
        "publish",
        s(&examples()),
        "--out",
        s(&site),
        "--app",
        s(&app),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sw = std::fs::read_to_string(site.join("sw.js")).unwrap();
    let manifest = std::fs::read_to_string(site.join("site.sha256")).unwrap();
    assert!(manifest.contains("  sw.js\n"), "the worker is listed too");
    for line in manifest.lines() {
        let name = line.split_once("  ").unwrap().1;
        if name != "sw.js" && name != "site.sha256" {
            assert!(
                sw.contains(&format!("\"{name}\"")),
                "{name} not cached: {sw}"
            );
        }
    }
    assert!(!sw.contains("http"), "no other origin: {sw}");
    // Another playbook is another version: the old cache is not served for the new site.
    let version = |sw: &str| {
        sw.lines()
            .find(|l| l.starts_with("const VERSION"))
            .unwrap()
            .to_owned()
    };
    let mut book: serde_json::Value =
        serde_json::from_slice(&std::fs::read(examples()).unwrap()).unwrap();
    book["rows"][0]["notes"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::Value::from("another note"));
    let other = dir.join("other.json");
    std::fs::write(&other, serde_json::to_string_pretty(&book).unwrap()).unwrap();
    let out = run(&[
        "playbook",
        "publish",
        s(&other),
        "--out",
        s(&site),
        "--app",
        s(&app),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let again = std::fs::read_to_string(site.join("sw.js")).unwrap();
    assert_ne!(version(&sw), version(&again));
}
