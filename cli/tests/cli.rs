//! The `loadproof` binary end to end: output shapes, exit codes, and error messages.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_loadproof"))
}

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

fn shared(rel: &str) -> PathBuf {
    std::env::var_os("LOADPROOF_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo("../shared"))
        .join(rel)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn inspect_json_holds_the_documented_keys() {
    let f = shared("traces/burstgpt/BurstGPT_1.first400.csv");
    let out = run(&["trace", "inspect", f.to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    for key in [
        "rows_read",
        "emitted",
        "dropped",
        "filtered",
        "source_sha256",
        "format",
        "regime",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let r = &v["regime"];
    for key in [
        "rate_rps",
        "burstiness",
        "window_s",
        "timestamp_resolution_s",
    ] {
        assert!(r.get(key).is_some(), "missing regime.{key}");
    }
    assert_eq!(v["rows_read"], 400);
    assert_eq!(v["emitted"], 383);
    assert_eq!(v["dropped"]["zero_input_tokens"], 17);
    assert_eq!(v["format"], "burstgpt");
    assert_eq!(r["input_tokens"]["p50"], 353.0);
    assert_eq!(r["input_tokens"]["p95"], 1638.8);
    assert_eq!(r["window_s"], 1.0);
    assert_eq!(
        v["source_sha256"],
        "7865fda5dac50938a84dfccb06c405e2f5202969ecfbd671c8399de00f4335f0"
    );
}

#[test]
fn stdout_is_machine_clean_json_only() {
    let f = shared("traces/mooncake/conversation_trace.jsonl");
    let out = run(&[
        "trace",
        "inspect",
        f.to_str().unwrap(),
        "--json",
        "--window",
        "3",
    ]);
    assert!(out.status.success());
    let v = json(&out);
    assert_eq!(v["regime"]["window_s"], 3.0);
    assert!(v["regime"]["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn bad_input_exits_2_naming_file_line_and_columns_never_101() {
    let dir = std::env::temp_dir().join(format!("loadproof-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.csv");
    std::fs::write(&f, "a,b,c\n1,2,3\n").unwrap();
    let out = run(&["trace", "inspect", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.csv") && err.contains("line 1") && err.contains("[a, b, c]"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = run(&[
        "trace",
        "inspect",
        dir.join("missing.csv").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.csv"));

    let f2 = dir.join("binary.bin");
    std::fs::write(&f2, [0xffu8, 0xfe, 0, 1, 2, b'\n', 0x80]).unwrap();
    let out = run(&["trace", "inspect", f2.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));

    let out = run(&["trace", "inspect", f.to_str().unwrap(), "--window", "nan"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn dropped_rows_are_reported_with_line_and_field_in_text_output() {
    let f = repo("core/tests/data/burstgpt/dirty.csv");
    let out = run(&["trace", "inspect", f.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("16 read = 4 emitted + 12 dropped + 0 filtered"),
        "{text}"
    );
    assert!(
        text.contains("line 6, field \"Request tokens\": not a number: \"abc\""),
        "{text}"
    );
}

#[test]
fn filters_reconcile_and_are_reported_apart() {
    let f = shared("traces/burstgpt/BurstGPT_1.first400.csv");
    let out = run(&[
        "trace",
        "inspect",
        f.to_str().unwrap(),
        "--json",
        "--model",
        "GPT-4",
    ]);
    let v = json(&out);
    let (read, emitted) = (
        v["rows_read"].as_u64().unwrap(),
        v["emitted"].as_u64().unwrap(),
    );
    let (dropped, filtered) = (
        v["dropped_total"].as_u64().unwrap(),
        v["filtered_total"].as_u64().unwrap(),
    );
    assert_eq!(read, emitted + dropped + filtered);
    // The predecessor's reference: GPT-4 → 77 emitted, 320 filtered, 3 zero-input.
    assert_eq!((emitted, filtered, dropped), (77, 320, 3));
}

#[test]
fn synth_is_deterministic_and_inspectable() {
    let dir = std::env::temp_dir().join(format!("loadproof-synth-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.csv"), dir.join("b.csv"));
    assert!(
        run(&["trace", "synth", "--out", a.to_str().unwrap()])
            .status
            .success()
    );
    assert!(
        run(&["trace", "synth", "--out", b.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let v = json(&run(&["trace", "inspect", a.to_str().unwrap(), "--json"]));
    assert_eq!(v["rows_read"], 2000);
    assert!(v["dropped"]["zero_input_tokens"].as_u64().unwrap() > 0);
}

// ---- `trace synth`: target regime, sidecar, and the synthetic note in `inspect` ----

/// A fresh directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadproof-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sidecar_of(trace: &std::path::Path) -> serde_json::Value {
    let mut name = trace.file_name().unwrap().to_os_string();
    name.push(".synth.json");
    let text = std::fs::read_to_string(trace.with_file_name(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn synth_writes_a_sidecar_whose_realised_regime_is_what_inspect_reports() {
    let dir = scratch("synth-sidecar");
    let f = dir.join("m.jsonl");
    let out = run(&[
        "trace",
        "synth",
        "--out",
        f.to_str().unwrap(),
        "--layout",
        "mooncake",
        "--rows",
        "4000",
        "--seed",
        "7",
        "--rate",
        "20",
        "--burstiness",
        "4",
        "--input-p50",
        "900",
        "--input-p95",
        "4000",
        "--output-p50",
        "200",
        "--output-p95",
        "600",
        "--prefix-share",
        "0.3",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty(), "the result is the file, not stdout");
    for part in [
        "4000 synthetic rows",
        "Mooncake",
        "rate 20 →",
        "D 4 →",
        "prefix share 0.3 →",
    ] {
        assert!(stderr.contains(part), "summary lacks {part:?}: {stderr}");
    }
    let first_line = std::fs::read_to_string(&f).unwrap();
    let first_line = first_line.lines().next().unwrap();
    assert!(first_line.starts_with("{\"timestamp\": "), "{first_line}");

    let sidecar = sidecar_of(&f);
    assert_eq!(sidecar["schema"], "loadproof.trace.synth/v1");
    assert_eq!(sidecar["synthetic"], true);
    assert_eq!(sidecar["spec"]["layout"], "mooncake");
    assert_eq!(sidecar["spec"]["seed"], 7);
    assert_eq!(sidecar["target"]["burstiness"], 4.0);
    assert!(
        sidecar["command"]
            .as_str()
            .unwrap()
            .contains("--layout mooncake --rows 4000 --seed 7")
    );
    let inspected = json(&run(&["trace", "inspect", f.to_str().unwrap(), "--json"]));
    assert_eq!(sidecar["sha256"], inspected["source_sha256"]);
    let realised = &sidecar["realised"]["regime"];
    for key in ["rate_rps", "burstiness", "input_tokens", "output_tokens"] {
        assert_eq!(realised[key], inspected["regime"][key], "{key}");
    }
    let prefix = sidecar["realised"]["prefix_share"].as_f64().unwrap();
    assert!((prefix - 0.3).abs() < 0.05, "prefix share {prefix}");
}

#[test]
fn inspect_notes_a_synthetic_trace_whose_sidecar_matches() {
    let dir = scratch("synth-note");
    let f = dir.join("s.csv");
    assert!(
        run(&["trace", "synth", "--out", f.to_str().unwrap()])
            .status
            .success()
    );
    let out = run(&["trace", "inspect", f.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("note: synthetic: generated by loadproof trace synth")
            && text.contains("(sidecar s.csv.synth.json, sha256 verified)"),
        "{text}"
    );
    let v = json(&run(&["trace", "inspect", f.to_str().unwrap(), "--json"]));
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("synthetic: generated by")),
        "{notes:?}"
    );
}

#[test]
fn inspect_says_a_changed_synthetic_trace_does_not_match_its_sidecar() {
    let dir = scratch("synth-mismatch");
    let f = dir.join("s.csv");
    assert!(
        run(&[
            "trace",
            "synth",
            "--out",
            f.to_str().unwrap(),
            "--rows",
            "100"
        ])
        .status
        .success()
    );
    let mut bytes = std::fs::read(&f).unwrap();
    bytes.extend_from_slice(b"999999.000,ChatGPT,10,10,20,API log\n");
    std::fs::write(&f, bytes).unwrap();
    let out = run(&["trace", "inspect", f.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("does NOT match"), "{text}");
    assert!(!text.contains("sha256 verified"), "{text}");
}

#[test]
fn synth_by_duration_stops_before_the_duration() {
    let dir = scratch("synth-duration");
    let f = dir.join("d.csv");
    let out = run(&[
        "trace",
        "synth",
        "--out",
        f.to_str().unwrap(),
        "--duration",
        "120",
        "--rate",
        "5",
        "--burstiness",
        "0.5",
        "--failure-share",
        "0",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sidecar = sidecar_of(&f);
    assert_eq!(sidecar["spec"]["duration_s"], 120.0);
    assert_eq!(sidecar["spec"]["rows"], serde_json::Value::Null);
    assert_eq!(sidecar["spec"]["count_law"], "paced_poisson_mixture");
    let span = sidecar["realised"]["regime"]["span_s"].as_f64().unwrap();
    assert!(span < 120.0, "{span}");
    let v = json(&run(&["trace", "inspect", f.to_str().unwrap(), "--json"]));
    assert_eq!(v["dropped_total"], 0);
}

#[test]
fn synth_refuses_bad_parameter_combinations_with_exit_2() {
    let dir = scratch("synth-bad");
    let f = dir.join("never.csv");
    let out_flag = f.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--rows", "10", "--duration", "10"], "--duration"),
        (&["--prefix-share", "0.5"], "--prefix-share"),
        (
            &["--layout", "mooncake", "--failure-share", "0.1"],
            "--failure-share",
        ),
        (
            &["--rate", "2.5", "--burstiness", "0.05"],
            "least D there is 0.1",
        ),
        (&["--input-p50", "300"], "--input-p95"),
        (
            &["--input-p50", "300", "--input-p95", "100"],
            "--input-p50/--input-p95",
        ),
        (&["--window", "0.0005"], "--window"),
        (&["--rate", "0"], "--rate"),
        (&["--rate", "0.000001", "--rows", "1000000"], "--rows"),
        (&["--layout", "azure"], "azure"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["trace", "synth", "--out", out_flag];
        args.extend_from_slice(extra);
        let out = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        assert!(!f.exists(), "{extra:?} wrote a file");
    }
}

/// A one-row Mooncake trace planned in `dir`: the trace's path and the plan directory.
fn one_row_plan(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let trace = dir.join("t.jsonl");
    std::fs::write(
        &trace,
        "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1]}\n",
    )
    .unwrap();
    let plan = dir.join("plan");
    let out = run(&[
        "plan",
        trace.to_str().unwrap(),
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (trace, plan)
}

/// issue 20: a FIFO with no writer blocked forever; `plan check` said a FIFO source "is not
/// there"; `receipt import` of a 1 GB sparse file grew without bound.
#[test]
fn special_files_are_named_and_oversized_inputs_are_refused_before_reading() {
    let dir = scratch("special");
    let fifo = dir.join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let f = fifo.to_str().unwrap();
    for args in [
        vec!["trace", "inspect", f],
        vec!["receipt", "audit", f],
        vec!["receipt", "verify", f],
        vec!["plan", "check", f],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is a FIFO (named pipe), not a regular file")
                || err.contains("pipe/plan.json"),
            "{args:?}: {err}"
        );
    }
    // plan check of a plan whose recorded source became a FIFO.
    let (trace, plan) = one_row_plan(&dir);
    std::fs::remove_file(&trace).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&trace)
            .status()
            .unwrap()
            .success()
    );
    let out = run(&["plan", "check", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is a FIFO (named pipe)") && !err.contains("is not there"),
        "{err}"
    );

    // A sparse file of 2 GiB: refused by its size, never read.
    let sparse = dir.join("sparse.txt");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let s = sparse.to_str().unwrap();
    let out = run(&[
        "receipt",
        "import",
        "--stdout",
        s,
        "--stderr",
        s,
        "--exit-code",
        "0",
        "--out",
        dir.join("r.json").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("2147483648 bytes, over the 1073741824-byte limit"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// issue 20: `--lag-bound-ms 1e300` was accepted (and printed as 9223372036854.775 ms) and
/// `-0` printed as "-0.000 ms".
#[test]
fn a_lag_bound_that_no_run_can_be_held_to_is_refused() {
    let dir = scratch("lagbound");
    let (_, plan) = one_row_plan(&dir);
    for bound in ["1e300", "-0", "0", "-5", "NaN"] {
        let out = run(&[
            "fire",
            plan.to_str().unwrap(),
            "--endpoint",
            "http://127.0.0.1:9",
            "--engine",
            "native",
            &format!("--lag-bound-ms={bound}"),
            "--out",
            "/dev/null/r.json",
        ]);
        assert_eq!(out.status.code(), Some(2), "{bound}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("must be a number of milliseconds > 0 and ≤ 86400000")
                || err.contains("invalid float literal"),
            "{bound}: {err}"
        );
    }
}

/// Every real trace and dirty fixture read in two halves on two threads (forced with
/// `LOADPROOF_HALVES_MIN_BYTES=1`, as files from 64 MiB are) prints the report it prints read
/// whole, byte for byte; a filter, a forced format and a file without a final newline
/// included.
#[test]
fn a_trace_read_in_halves_reports_what_it_reports_read_whole() {
    let files = [
        shared("traces/burstgpt/BurstGPT_1.first400.csv"),
        shared("traces/burstgpt/BurstGPT_3.first400.csv"),
        shared("traces/mooncake/conversation_trace.jsonl"),
        shared("traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv"),
        repo("core/tests/data/burstgpt/dirty.csv"),
        repo("core/tests/data/burstgpt/v3_dirty.csv"),
        repo("core/tests/data/mooncake/dirty.jsonl"),
        repo("core/tests/data/azure/dirty.csv"),
    ];
    let inspect = |file: &PathBuf, extra: &[&str], min: &str| {
        let mut args = vec!["trace", "inspect", file.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        bin()
            .args(&args)
            .env("LOADPROOF_HALVES_MIN_BYTES", min)
            .output()
            .unwrap()
    };
    for file in &files {
        for extra in [&[][..], &["--max-rows", "7"][..], &["--window", "30"][..]] {
            let whole = inspect(file, extra, "18446744073709551615");
            let halves = inspect(file, extra, "1");
            assert_eq!(
                whole.status.code(),
                halves.status.code(),
                "{file:?} {extra:?}"
            );
            // The second thread's shard was joined, not read again by the first.
            let said = String::from_utf8_lossy(&halves.stderr);
            assert!(
                said.contains("second half Joined"),
                "{file:?} {extra:?}: {said}"
            );
            assert_eq!(
                String::from_utf8_lossy(&whole.stdout),
                String::from_utf8_lossy(&halves.stdout),
                "{file:?} {extra:?}"
            );
        }
    }
    let burst = &files[0];
    for extra in [&["--model", "ChatGPT"][..], &["--format", "burstgpt"][..]] {
        let whole = inspect(burst, extra, "18446744073709551615");
        let halves = inspect(burst, extra, "1");
        assert_eq!(whole.stdout, halves.stdout, "{extra:?}");
    }
}

/// The `--json` report of a successful `trace inspect` (`out`), checked to read the rows the
/// `builtin` report read, to the same regime.
fn reads_as(out: &std::process::Output, builtin: &serde_json::Value) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mapped = json(out);
    for key in [
        "regime",
        "emitted",
        "rows_read",
        "dropped",
        "clock_anchor_ns",
    ] {
        assert_eq!(mapped[key], builtin[key], "{key}");
    }
    mapped
}

/// The Azure 2023 trace as a gateway would export it: renamed, reordered columns, an extra
/// filter column, stamps written with a `T` and a +01:00 offset (the same instants).
fn gateway_log(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let azure = std::fs::read_to_string(shared(
        "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
    ))
    .unwrap();
    let mut out = String::from("route,completion_tokens,prompt_tokens,received_at\n");
    for (i, line) in azure.lines().skip(1).enumerate() {
        let cells: Vec<&str> = line.trim_end_matches('\r').split(',').collect();
        let (date, time) = cells[0].split_once(' ').unwrap();
        let hour: u32 = time[..2].parse().unwrap();
        // 23:xx UTC would be the next day at +01:00: keep those rows in UTC (`Z`).
        let stamp = if hour < 23 {
            format!("{date}T{:02}{}+01:00", hour + 1, &time[2..])
        } else {
            format!("{date}T{time}Z")
        };
        let route = if i % 3 == 0 { "batch" } else { "chat" };
        out.push_str(&format!("{route},{},{},{stamp}\n", cells[2], cells[1]));
    }
    let log = dir.join("gateway.csv");
    std::fs::write(&log, out).unwrap();
    let schema = dir.join("gateway.schema.json");
    std::fs::write(
        &schema,
        r#"{"schema": "loadproof.trace-schema/v1", "name": "gateway export",
  "arrival": {"field": "received_at", "unit": "datetime", "format": "iso8601", "zone": "UTC"},
  "input_tokens": "prompt_tokens", "output_tokens": "completion_tokens",
  "filters": {"route": "route"}}
"#,
    )
    .unwrap();
    (log, schema)
}

#[test]
fn a_log_read_through_a_saved_mapping_is_the_trace_it_maps() {
    let dir = scratch("mapping");
    let (log, schema) = gateway_log(&dir);
    let (log, schema) = (log.to_str().unwrap(), schema.to_str().unwrap());
    let azure = shared("traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
    let builtin = json(&run(&[
        "trace",
        "inspect",
        azure.to_str().unwrap(),
        "--json",
    ]));
    let out = run(&["trace", "inspect", log, "--schema", schema, "--json"]);
    let mapped = reads_as(&out, &builtin);
    assert_eq!(mapped["format"], "mapped");
    let sha = hex_sha256(&std::fs::read(schema).unwrap());
    assert_eq!(mapped["schema_sha256"], sha.as_str());
    // --where keeps the declared column's rows and counts the rest as filtered.
    let chat = json(&run(&[
        "trace",
        "inspect",
        log,
        "--schema",
        schema,
        "--where",
        "route=chat",
        "--json",
    ]));
    assert_eq!(
        chat["emitted"].as_u64().unwrap() + chat["filtered"]["field"].as_u64().unwrap(),
        mapped["emitted"].as_u64().unwrap()
    );
    // Read in halves, the mapped log is the same trace.
    let halves = bin()
        .args(["trace", "inspect", log, "--schema", schema, "--json"])
        .env("LOADPROOF_HALVES_MIN_BYTES", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&halves.stderr).contains("second half Joined"));
    assert_eq!(halves.stdout, out.stdout);
    // The plan records the mapping; checking it needs the same mapping.
    let plan = dir.join("plan");
    let p = run(&[
        "plan",
        log,
        "--schema",
        schema,
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(
        p.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&p.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(plan.join("plan.json")).unwrap()).unwrap();
    assert_eq!(doc["source"]["schema_sha256"], sha.as_str());
    let check = run(&["plan", "check", plan.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&check.stderr).contains("--schema"));
    let check = run(&["plan", "check", plan.to_str().unwrap(), "--schema", schema]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

/// A gateway that writes its own datetime layout (nginx's `16/Nov/2023:19:15:46.68059 +0100`):
/// the mapping declares the layout, and the log reads as the trace it was written from.
#[test]
fn a_log_in_its_own_datetime_layout_reads_through_its_declared_pattern() {
    let dir = scratch("layout");
    let azure_path = shared("traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
    let azure = std::fs::read_to_string(&azure_path).unwrap();
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut out = String::from("time_local,in,out\n");
    for line in azure.lines().skip(1) {
        let cells: Vec<&str> = line.trim_end_matches('\r').split(',').collect();
        let (date, time) = cells[0].split_once(' ').unwrap();
        let ymd: Vec<&str> = date.split('-').collect();
        let month = MONTHS[ymd[1].parse::<usize>().unwrap() - 1];
        // Written in UTC with a +0000 offset: the layout carries the zone (`%z`).
        out.push_str(&format!(
            "{}/{month}/{}:{time} +0000,{},{}\n",
            ymd[2], ymd[0], cells[1], cells[2]
        ));
    }
    let log = dir.join("access.csv");
    std::fs::write(&log, out).unwrap();
    let schema = dir.join("access.schema.json");
    std::fs::write(
        &schema,
        r#"{"schema": "loadproof.trace-schema/v1",
  "arrival": {"field": "time_local", "unit": "datetime", "format": "%d/%b/%Y:%H:%M:%S.%f %z", "zone": "UTC"},
  "input_tokens": "in", "output_tokens": "out"}
"#,
    )
    .unwrap();
    let builtin = json(&run(&[
        "trace",
        "inspect",
        azure_path.to_str().unwrap(),
        "--json",
    ]));
    let out = run(&[
        "trace",
        "inspect",
        log.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
        "--json",
    ]);
    reads_as(&out, &builtin);
    // A pattern that names no instant is refused at the mapping's field, before any row.
    std::fs::write(
        &schema,
        r#"{"schema": "loadproof.trace-schema/v1",
  "arrival": {"field": "time_local", "unit": "datetime", "format": "%d/%b:%H:%M:%S", "zone": "UTC"},
  "input_tokens": "in", "output_tokens": "out"}"#,
    )
    .unwrap();
    let err = mapping_refusal(&log, &schema);
    assert!(
        err.contains("arrival.format") && err.contains("year"),
        "{err}"
    );
}

#[test]
fn a_mapping_that_cannot_be_read_is_refused_naming_the_file_and_field() {
    let dir = scratch("bad-mapping");
    let (log, _) = gateway_log(&dir);
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"received_at","unit":"datetime"},"input_tokens":"prompt_tokens","output_tokens":"completion_tokens"}"#,
    )
    .unwrap();
    let said = mapping_refusal(&log, &bad);
    assert!(
        said.contains("bad.json") && said.contains("arrival.zone"),
        "{said}"
    );
}

/// What `trace inspect LOG --schema MAPPING` says when it refuses the mapping (exit 2).
fn mapping_refusal(log: &std::path::Path, mapping: &std::path::Path) -> String {
    let out = run(&[
        "trace",
        "inspect",
        log.to_str().unwrap(),
        "--schema",
        mapping.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The RAGPulse sample and its companion files copied to a scratch directory (as a user
/// downloads them: side by side), with `keep` of the five companions.
fn ragpulse_dir(test: &str, keep: usize) -> PathBuf {
    let dir = scratch(test);
    let src = shared("traces/ragpulse");
    std::fs::copy(
        src.join("0_trace.first400.jsonl"),
        dir.join("0_trace.jsonl"),
    )
    .unwrap();
    for name in [
        "1_sys_prompt.jsonl",
        "2_passages.jsonl",
        "3_history.jsonl",
        "4_user_input.jsonl",
        "5_web_search.jsonl",
    ]
    .iter()
    .take(keep)
    {
        std::fs::copy(src.join(name), dir.join(name)).unwrap();
    }
    dir
}

#[test]
fn ragpulse_is_read_with_the_companion_files_found_beside_it() {
    let dir = ragpulse_dir("ragpulse-all", 5);
    let trace = dir.join("0_trace.jsonl");
    let out = run(&["trace", "inspect", trace.to_str().unwrap(), "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["format"], "ragpulse");
    assert_eq!(v["emitted"], 400);
    assert_eq!(
        v["segments"]["undescribed_tokens"],
        serde_json::json!([6, 9, 12])
    );
    let sys_sha = hex_sha256(&std::fs::read(dir.join("1_sys_prompt.jsonl")).unwrap());
    assert_eq!(
        v["segments"]["companions"]["1_sys_prompt.jsonl"],
        sys_sha.as_str()
    );
    let text = run(&["trace", "inspect", trace.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("passages_ids") && text.contains("median 9"),
        "{text}"
    );
    // The plan says what timed_trace cannot rebuild, and records the companions.
    let plan = dir.join("plan");
    let p = run(&[
        "plan",
        trace.to_str().unwrap(),
        "--out",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(
        p.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&p.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(plan.join("plan.json")).unwrap()).unwrap();
    assert_eq!(
        doc["source"]["companions"]["1_sys_prompt.jsonl"],
        sys_sha.as_str()
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("NOT replayed") && notes.contains("one chunk size"),
        "{notes}"
    );
    // A companion changed after planning: plan check refuses to re-read the source as planned.
    std::fs::write(
        dir.join("5_web_search.jsonl"),
        "{\"web_search_id\": 1, \"token_length\": 2}\n",
    )
    .unwrap();
    let check = run(&["plan", "check", plan.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&check.stderr).contains("companion files"));
}

#[test]
fn a_gzipped_ragpulse_trace_finds_its_companions_too() {
    let dir = ragpulse_dir("ragpulse-gz", 5);
    let trace = dir.join("0_trace.jsonl");
    let gz = std::process::Command::new("gzip")
        .args(["-k", trace.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(gz.success());
    let plain = json(&run(&[
        "trace",
        "inspect",
        trace.to_str().unwrap(),
        "--json",
    ]));
    let out = run(&[
        "trace",
        "inspect",
        dir.join("0_trace.jsonl.gz").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json(&out)["segments"], plain["segments"]);
}

#[test]
fn ragpulse_with_some_of_its_companions_is_refused_naming_the_missing() {
    let dir = ragpulse_dir("ragpulse-some", 3);
    let trace = dir.join("0_trace.jsonl");
    let out = run(&["trace", "inspect", trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("4_user_input.jsonl")
            && said.contains("5_web_search.jsonl")
            && said.contains("missing"),
        "{said}"
    );
    // None beside it: read, and said to be without lengths.
    let dir = ragpulse_dir("ragpulse-none", 0);
    let out = run(&[
        "trace",
        "inspect",
        dir.join("0_trace.jsonl").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json(&out)["segments"]["undescribed_tokens"],
        serde_json::Value::Null
    );
}
