//! gzip and zstd traces end to end: read as their content, the file as given named beside it,
//! and refused whole when they do not decode to their end. The real traces are compressed
//! into a temporary directory at test time; nothing compressed is committed.

mod common;

use common::*;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

const REAL: [&str; 4] = [
    "traces/burstgpt/BurstGPT_1.first400.csv",
    "traces/burstgpt/BurstGPT_3.first400.csv",
    "traces/mooncake/conversation_trace.jsonl",
    "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
];

/// A fresh directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "loadproof-compressed-{test}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(bytes, 3).unwrap()
}

/// `bytes` written to `dir/name`.
fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn json_of(args: &[&str]) -> Value {
    let out = run(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn inspect(path: &Path) -> Value {
    json_of(&["trace", "inspect", s(path), "--json"])
}

/// `value` without its top-level `key` (which must be there), and that key's value.
fn without(mut value: Value, key: &str) -> (Value, Value) {
    let taken = value.as_object_mut().unwrap().remove(key);
    (value, taken.unwrap_or_else(|| panic!("no {key:?}")))
}

/// Each real trace gzipped and zstd-compressed, under the same file name in a directory of its
/// own (so the report's `source` is the same, and the name cannot be what gives the codec away),
/// inspects to the uncompressed report plus `compression`, whose digest and size are the file's.
#[test]
fn a_compressed_trace_inspects_as_its_content_with_the_file_as_given_beside_it() {
    let root = scratch("inspect");
    for rel in REAL {
        let plain = shared(rel);
        let content = std::fs::read(&plain).unwrap();
        let name = plain.file_name().unwrap().to_str().unwrap();
        let expected = inspect(&plain);
        assert!(expected.get("compression").is_none(), "{rel}");
        for (codec, packed) in [("gzip", gzip(&content)), ("zstd", zstd(&content))] {
            let dir = root.join(codec);
            std::fs::create_dir_all(&dir).unwrap();
            let file = put(&dir, name, &packed);
            let (report, compression) = without(inspect(&file), "compression");
            assert_eq!(report, expected, "{rel} as {codec}");
            assert_eq!(compression["codec"], codec, "{rel}");
            assert_eq!(compression["file_sha256"], sha256_hex(&packed), "{rel}");
            assert_eq!(compression["file_bytes"], packed.len(), "{rel}");
            assert_eq!(report["source_sha256"], sha256_hex(&content), "{rel}");
            assert_eq!(report["bytes"], content.len(), "{rel}");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// The text report names both digests: the content's as the trace's, the file's as given.
#[test]
fn the_text_report_of_a_compressed_trace_names_both_digests() {
    let dir = scratch("text");
    let content = std::fs::read(shared(REAL[1])).unwrap();
    let packed = gzip(&content);
    let file = put(&dir, "b3.csv.gz", &packed);
    let out = run(&["trace", "inspect", s(&file)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "sha256   {}  ({} bytes)",
            sha256_hex(&content),
            content.len()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "file     {}  ({} bytes, gzip;",
            sha256_hex(&packed),
            packed.len()
        )),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The digests reported are what `sha256sum` prints for the file and for `gzip -dc FILE` /
/// `zstd -dc FILE` (when those programs are installed; the in-test sha256 is checked above).
#[test]
fn the_reported_digests_are_sha256sum_of_the_file_and_of_its_decompressed_content() {
    let dir = scratch("sha256sum");
    let content = std::fs::read(shared(REAL[0])).unwrap();
    for (codec, packed, tool) in [
        ("gzip", gzip(&content), "gzip"),
        ("zstd", zstd(&content), "zstd"),
    ] {
        let file = put(&dir, &format!("t.{codec}"), &packed);
        let (report, compression) = without(inspect(&file), "compression");
        let sum = |args: &[&str], input: Option<&Path>| -> Option<String> {
            let mut cmd = std::process::Command::new(args[0]);
            cmd.args(&args[1..]);
            let out = match input {
                None => cmd.output().ok()?,
                Some(_) => {
                    let sh = format!("{} | sha256sum", args.join(" "));
                    std::process::Command::new("sh")
                        .args(["-c", &sh])
                        .output()
                        .ok()?
                }
            };
            out.status.success().then(|| {
                String::from_utf8_lossy(&out.stdout)
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            })
        };
        if let Some(file_sum) = sum(&["sha256sum", s(&file)], None) {
            assert_eq!(compression["file_sha256"], file_sum, "{codec}");
        }
        if let Some(content_sum) = sum(&[tool, "-dc", s(&file)], Some(&file)) {
            assert_eq!(report["source_sha256"], content_sum, "{codec}");
        }
        assert_eq!(report["source_sha256"], sha256_hex(&content), "{codec}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A plan of a compressed trace is the plan of its content: the same plan.json but for the
/// recorded path and `source.compression`, the same timed_trace bytes; `plan check` passes on
/// it, and passes too when handed the uncompressed file (the same content).
#[test]
fn a_compressed_trace_plans_as_its_content_and_rechecks_against_either_file() {
    let root = scratch("plan");
    for rel in [REAL[0], REAL[2]] {
        let plain = shared(rel);
        let content = std::fs::read(&plain).unwrap();
        let plain_dir = root.join("plain");
        let _ = std::fs::remove_dir_all(&plain_dir);
        let expected = json_of(&["plan", s(&plain), "--out", s(&plain_dir), "--json"]);
        for (codec, packed) in [("gzip", gzip(&content)), ("zstd", zstd(&content))] {
            let file = put(&root, &format!("trace.{codec}"), &packed);
            let dir = root.join(format!("plan-{codec}"));
            let _ = std::fs::remove_dir_all(&dir);
            let mut doc = json_of(&["plan", s(&file), "--out", s(&dir), "--json"]);
            let source = doc["source"].as_object_mut().unwrap();
            let compression = source.remove("compression").unwrap();
            source.remove("path");
            assert_eq!(compression["codec"], codec);
            assert_eq!(compression["file_sha256"], sha256_hex(&packed));
            assert_eq!(compression["file_bytes"], packed.len());
            let mut expected = expected.clone();
            expected["source"].as_object_mut().unwrap().remove("path");
            assert_eq!(doc, expected, "{rel} as {codec}");
            assert_eq!(
                std::fs::read(dir.join("timed_trace.jsonl")).unwrap(),
                std::fs::read(plain_dir.join("timed_trace.jsonl")).unwrap()
            );
            let check = run(&["plan", "check", s(&dir)]);
            assert_eq!(check.status.code(), Some(0), "{rel}: {}", stderr(&check));
            let check = run(&["plan", "check", s(&dir), "--trace", s(&plain)]);
            assert_eq!(check.status.code(), Some(0), "{rel}: {}", stderr(&check));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// `cat a.gz b.gz` is one gzip file whose content is both: every member is read, even when
/// the cut between them falls inside a line.
#[test]
fn a_multi_member_gzip_reads_as_every_member_in_turn() {
    let dir = scratch("multi-member");
    let content = std::fs::read(shared(REAL[2])).unwrap();
    let expected = inspect(&shared(REAL[2]));
    for cut in [
        1,
        content.len() / 3,
        content.len() / 2 + 17,
        content.len() - 1,
    ] {
        let mut packed = gzip(&content[..cut]);
        packed.extend(gzip(&content[cut..]));
        packed.extend(gzip(b""));
        let file = put(&dir, "conversation_trace.jsonl", &packed);
        let (report, compression) = without(inspect(&file), "compression");
        assert_eq!(report, expected, "cut at {cut}");
        assert_eq!(compression["file_sha256"], sha256_hex(&packed));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `trace inspect` on `bytes` written as `name` and returns stderr, asserting exit 2 and
/// that the message names the file and the codec.
fn refused(dir: &Path, name: &str, bytes: &[u8], codec: &str) -> String {
    let file = put(dir, name, bytes);
    let out = run(&["trace", "inspect", s(&file), "--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{name}: {err}");
    assert!(out.stdout.is_empty(), "{name}: a refusal prints no report");
    assert!(err.contains(s(&file)), "{name}: {err}");
    assert!(
        err.contains(&format!("not a whole {codec} file")),
        "{name}: {err}"
    );
    assert!(err.contains("at compressed byte "), "{name}: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    err
}

/// A gzip file cut anywhere — inside the deflate data, at a point where the rows before it end
/// whole, inside the 8-byte trailer — is refused, never read as the rows before the cut.
#[test]
fn a_truncated_gzip_is_refused_not_read_short() {
    let dir = scratch("truncated-gzip");
    let content = std::fs::read(shared(REAL[3])).unwrap();
    let packed = gzip(&content);
    for cut in [
        3,
        10,
        11,
        packed.len() / 2,
        packed.len() - 8,
        packed.len() - 1,
    ] {
        let err = refused(&dir, "t.csv.gz", &packed[..cut], "gzip");
        assert!(err.contains("truncated"), "cut at {cut}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A zstd file cut anywhere after its magic is refused.
#[test]
fn a_truncated_zstd_is_refused_not_read_short() {
    let dir = scratch("truncated-zstd");
    let content = std::fs::read(shared(REAL[3])).unwrap();
    let packed = zstd(&content);
    for cut in [4, 5, packed.len() / 2, packed.len() - 4, packed.len() - 1] {
        let err = refused(&dir, "t.csv.zst", &packed[..cut], "zstd");
        assert!(err.contains("truncated"), "cut at {cut}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes after a whole gzip member or zstd frame that are not another one (text, a partial
/// header, zero padding) refuse the file: they were not read as data, and a digest of the file
/// must be of what was read.
#[test]
fn garbage_after_a_valid_member_or_frame_is_refused() {
    let dir = scratch("garbage");
    let content = std::fs::read(shared(REAL[0])).unwrap();
    for tail in [
        &b"garbage\n"[..],
        b"garbage after the member\n",
        &[0u8; 100],
        &[0x1f],
    ] {
        let mut packed = gzip(&content);
        packed.extend_from_slice(tail);
        refused(&dir, "t.csv.gz", &packed, "gzip");
        let mut packed = zstd(&content);
        packed.extend_from_slice(tail);
        refused(&dir, "t.csv.zst", &packed, "zstd");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compressing a synthetic trace keeps what its sidecar proves: the sidecar names the content's
/// sha256, which the compressed file's trace reports, whether the sidecar is the compressed
/// file's own or the one `trace synth` wrote for the uncompressed name.
#[test]
fn a_compressed_synthetic_trace_is_still_verified_by_its_sidecar() {
    let dir = scratch("synth");
    let plain = dir.join("s.csv");
    let out = run(&["trace", "synth", "--out", s(&plain), "--rows", "500"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let content = std::fs::read(&plain).unwrap();
    let notes = |file: &Path| -> String {
        inspect(file)["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let expected = notes(&plain);
    assert!(expected.contains("verified"), "{expected}");
    let gz = put(&dir, "s.csv.gz", &gzip(&content));
    assert_eq!(notes(&gz), expected);
    let zst = put(&dir, "s.csv.zst", &zstd(&content));
    assert_eq!(notes(&zst), expected);
    // Its own sidecar, copied beside it, is read first, and agrees.
    std::fs::copy(
        dir.join("s.csv.synth.json"),
        dir.join("s.csv.gz.synth.json"),
    )
    .unwrap();
    let own = notes(&gz);
    assert!(own.contains("verified"), "{own}");
    let _ = std::fs::remove_dir_all(&dir);
}
