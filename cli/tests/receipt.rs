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

fn import(out: &std::path::Path) -> Output {
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
    ])
}

#[test]
fn an_imported_capture_keeps_every_byte_and_verifies() {
    let out = std::env::temp_dir().join(format!("loadproof-import-{}.json", std::process::id()));
    let res = import(&out);
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
