//! `loadproof receipt import` and `receipt verify` on the real vLLM captures in ../shared.

mod common;

use common::*;

use std::process::Output;

fn capture(file: &str) -> String {
    shared(&format!("vllm/real-runs/vllm-cpu/{file}"))
        .to_str()
        .unwrap()
        .to_owned()
}

fn import(out: &std::path::Path, form: &str) -> Output {
    run(&[
        "receipt",
        "import",
        "--stdout",
        &capture("bench_stdout.txt"),
        "--stderr",
        &capture("bench_stderr.txt"),
        "--exit-code",
        "0",
        "--result",
        &capture("result.json"),
        "--metrics-before",
        &capture("metrics_before.txt"),
        "--metrics-after",
        &capture("metrics_after.txt"),
        "--trace",
        &capture("trace.jsonl"),
        "--model",
        "tiny-llama",
        "--chunk-size",
        "16",
        "--sec-multiplier",
        "0.001",
        "--knob",
        "max-model-len=2048",
        "--caller",
        "operator=shared capture",
        "--out",
        out.to_str().unwrap(),
        "--form",
        form,
    ])
}

#[test]
fn an_imported_capture_keeps_every_byte_and_verifies() {
    let out = std::env::temp_dir().join(format!("loadproof-import-{}.json", std::process::id()));
    let res = import(&out, "json");
    assert_eq!(
        res.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let receipt = loadproof_core::receipt::Receipt::from_json(text.as_bytes()).unwrap();
    // Every file is kept byte for byte.
    for (block, file) in [
        ("bench/stdout", "bench_stdout.txt"),
        ("bench/stderr", "bench_stderr.txt"),
        ("bench/result.json", "result.json"),
        ("metrics/0", "metrics_before.txt"),
        ("metrics/1", "metrics_after.txt"),
    ] {
        assert_eq!(
            receipt.block(block).unwrap(),
            std::fs::read(capture(file)).unwrap(),
            "{block}"
        );
    }
    assert_eq!(receipt.provenance.source, "import");
    assert_eq!(receipt.protocol.requests, Some(20));
    assert!(receipt.protocol.unstated().contains(&"argv"));
    assert!(
        receipt
            .notes
            .iter()
            .any(|n| n.contains("protocol fields not stated"))
    );
    // The receipt round-trips through core unchanged.
    assert_eq!(receipt.to_json() + "\n", text);

    let ok = run(&["receipt", "verify", out.to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0));

    // One changed byte of stdout: verify names the block and exits 1.
    std::fs::write(
        &out,
        text.replacen("Successful requests:", "Successful requests:x", 1),
    )
    .unwrap();
    let bad = run(&["receipt", "verify", out.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    let said = String::from_utf8_lossy(&bad.stdout);
    assert!(
        said.contains("evidence block \"bench/stdout\": sha256 is"),
        "{said}"
    );
    let _ = std::fs::remove_file(&out);
}

#[test]
fn a_file_that_is_not_a_receipt_exits_2() {
    let out = run(&["receipt", "verify", &capture("result.json")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a loadproof receipt"));
}

/// Every receipt the project has (the core fixture, an import of the real vLLM capture), upgraded
/// to a record stream: the audit is byte-identical before and after, each block extracts to the
/// bytes its digest names, and the stream converts back to the same v1 document.
#[test]
fn an_upgraded_receipt_audits_identically_and_extracts_every_block_exactly() {
    let dir = fresh_dir("upgrade");
    let imported = dir.join("imported.json");
    let res = import(&imported, "json");
    assert_eq!(res.status.code(), Some(0), "{}", stderr(&res));
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/data/receipt/native_sim.json");
    for (name, v1) in [("imported", imported.clone()), ("native", fixture)] {
        let stream = dir.join(format!("{name}.receipt.zst"));
        let up = run(&["receipt", "upgrade", s(&v1), "--out", s(&stream)]);
        assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
        for args in [&["--json"][..], &[][..]] {
            let before = run(&[&["receipt", "audit", s(&v1)][..], args].concat());
            let after = run(&[&["receipt", "audit", s(&stream)][..], args].concat());
            assert_eq!(before.status.code(), Some(0));
            assert_eq!(
                stdout(&before),
                stdout(&after).replace(s(&stream), s(&v1)),
                "{name} {args:?}"
            );
        }
        let r = loadproof_core::receipt::Receipt::from_bytes(&std::fs::read(&v1).unwrap()).unwrap();
        for (block, e) in &r.evidence {
            let out = run(&["receipt", "extract", s(&stream), block]);
            assert_eq!(out.status.code(), Some(0), "{block}: {}", stderr(&out));
            assert_eq!(hex_sha256(&out.stdout), e.sha256, "{block}");
        }
        let back = dir.join(format!("{name}.back.json"));
        let down = run(&[
            "receipt",
            "upgrade",
            s(&stream),
            "--out",
            s(&back),
            "--form",
            "json",
        ]);
        assert_eq!(down.status.code(), Some(0), "{}", stderr(&down));
        assert_eq!(
            std::fs::read(&back).unwrap(),
            r.to_json()
                .into_bytes()
                .into_iter()
                .chain(*b"\n")
                .collect::<Vec<u8>>()
        );
    }
    // Nothing is laundered: a block that fails verification is not converted.
    let text = std::fs::read_to_string(&imported).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        text.replacen("Successful requests:", "Successful requests:x", 1),
    )
    .unwrap();
    let out = run(&[
        "receipt",
        "upgrade",
        s(&bad),
        "--out",
        s(&dir.join("bad.zst")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bench/stdout"), "{}", stderr(&out));
    assert!(!dir.join("bad.zst").exists());
    // Nor is a receipt the stream form cannot hold (two scrapes sharing one body block):
    // upgrade reads its stream back before writing it.
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/data/receipt/native_sim.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&fixture).unwrap()).unwrap();
    v["scrapes"][1]["outcome"] = v["scrapes"][0]["outcome"].clone();
    let shared_body = dir.join("shared-body.json");
    std::fs::write(&shared_body, serde_json::to_vec(&v).unwrap()).unwrap();
    let out = run(&[
        "receipt",
        "upgrade",
        s(&shared_body),
        "--out",
        s(&dir.join("sb.zst")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be written as a record stream"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("sb.zst").exists());
    // Extract refuses a block that fails verification, and names a missing one.
    let out = run(&["receipt", "extract", s(&bad), "bench/stdout"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let out = run(&["receipt", "extract", s(&imported), "no/such"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no block \"no/such\""),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
