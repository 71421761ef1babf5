//! Replay plans: the rules of the `timed_trace` file, each as a test named after it, on real
//! traces from `../shared/traces` and on hand-made ones.

mod common;

use common::{data, forced, ingest, ingest_with, opts, shared};
use loadproof_core::plan::{
    BenchCommand, BlockError, Fidelity, Plan, PlanError, PlanOptions, ReadBack, TimeScale,
    TimeUnit, check_document,
};
use loadproof_core::{CallerFilter, Format, IngestOptions, Trace};

const REAL: [&str; 4] = [
    "traces/burstgpt/BurstGPT_1.first400.csv",
    "traces/burstgpt/BurstGPT_3.first400.csv",
    "traces/mooncake/conversation_trace.jsonl",
    "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
];

/// Writes the plan's file, reads the bytes back in odd-sized pieces, verifies.
fn write_and_verify(plan: &Plan, bench: &BenchCommand) -> (Vec<u8>, ReadBack, Fidelity) {
    let mut file = Vec::new();
    plan.write_timed_trace(&mut file).unwrap();
    let back = read_back(plan, bench, &file);
    let fidelity = plan.verify(&back, bench);
    (file, back, fidelity)
}

fn read_back(plan: &Plan, bench: &BenchCommand, file: &[u8]) -> ReadBack {
    let mut reader = plan.reader(bench).unwrap();
    for piece in file.chunks(4093) {
        reader.push(piece);
    }
    reader.finish().unwrap()
}

fn statistics(f: &Fidelity) -> Vec<(String, f64)> {
    f.checks
        .iter()
        .map(|c| (c.name.clone(), c.statistic))
        .collect()
}

#[test]
fn plans_for_every_real_trace_read_back_with_all_zero_statistics() {
    for path in REAL {
        let trace = ingest(&shared(path)).unwrap();
        let n = trace.len() as u64;
        let plan = Plan::new(trace, PlanOptions::default()).unwrap();
        let bench = plan.bench_command();
        let (_, back, fidelity) = write_and_verify(&plan, &bench);
        assert!(
            fidelity.pass,
            "{path}: {:#?}",
            fidelity.failures().collect::<Vec<_>>()
        );
        assert!(
            statistics(&fidelity).iter().all(|(_, s)| *s == 0.0),
            "{path}: {:?}",
            statistics(&fidelity)
        );
        assert_eq!(back.lines, n, "{path}");
        assert_eq!(bench.value("--num-prompts"), Some(n.to_string().as_str()));
        let names: Vec<_> = fidelity.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "request_count",
                "arrival_ks",
                "input_len_ks",
                "output_len_ks",
                "rate_rps",
                "burstiness",
                "rows_identical",
                "tiling",
                "argv_agrees"
            ]
        );
    }
}

#[test]
fn mooncake_at_vllm_default_chunk_16_is_refused_32x_short() {
    let trace = ingest(&shared("traces/mooncake/conversation_trace.jsonl")).unwrap();
    let options = PlanOptions {
        chunk_size: Some(16),
        ..PlanOptions::default()
    };
    let err = Plan::new(trace.clone(), options).unwrap_err();
    let PlanError::Blocks(BlockError::ChunkTooSmall {
        request,
        blocks,
        input,
        factor,
        short_rows,
        rows,
        worst,
        ..
    }) = &err
    else {
        panic!("{err:?}")
    };
    // The first row: 14 blocks × 16 = 224 tokens against 6,758.
    assert_eq!((*request, *blocks, *input), (0, 14, 6758));
    assert!((factor - 6758.0 / 224.0).abs() < 1e-9);
    // Mooncake's 512-token blocks tile every prompt with no slack: the worst is exactly 32×.
    assert_eq!(*worst, 32.0);
    assert_eq!((*short_rows, *rows), (12_031, 12_031));
    let msg = err.to_string();
    assert!(
        msg.contains("request 0") && msg.contains("--chunk-size 512"),
        "{msg}"
    );

    // 511 fails later (the seed: request 50), 512 and 1024 pass.
    let at = |chunk| {
        Plan::new(
            trace.clone(),
            PlanOptions {
                chunk_size: Some(chunk),
                ..PlanOptions::default()
            },
        )
    };
    assert!(matches!(
        at(511),
        Err(PlanError::Blocks(BlockError::ChunkTooSmall {
            request: 50,
            ..
        }))
    ));
    assert!(at(512).is_ok());
    let big = at(1024).unwrap();
    assert!(
        big.notes()
            .iter()
            .any(|n| n.contains("differs from the source's 512"))
    );
}

#[test]
fn a_plans_fresh_ids_are_its_own_tokens_no_two_plans_share_a_seed() {
    let plan = |rel: &str, max_rows: Option<u64>| {
        let mut opts = opts();
        opts.filter.max_rows = max_rows;
        let trace = ingest_with(&shared(rel), opts).unwrap();
        let mut options = PlanOptions::default();
        options.filter.max_rows = max_rows;
        Plan::new(trace, options).unwrap()
    };
    let seed = |p: &Plan| p.bench_command().env["PYTHONHASHSEED"].clone();
    let a = plan("traces/burstgpt/BurstGPT_1.first400.csv", None);
    // One plan, one seed: its repeats and `plan check` draw the same tokens.
    assert_eq!(seed(&a), a.hash_seed().to_string());
    assert_eq!(
        seed(&a),
        seed(&plan("traces/burstgpt/BurstGPT_1.first400.csv", None))
    );
    // Another source, or another slice of the same one, is another plan: its fresh ids from 0
    // are other tokens, so a warm prefix cache shares nothing between them.
    assert_ne!(
        seed(&a),
        seed(&plan("traces/burstgpt/BurstGPT_3.first400.csv", None))
    );
    assert_ne!(
        seed(&a),
        seed(&plan("traces/burstgpt/BurstGPT_1.first400.csv", Some(40)))
    );
}

#[test]
fn synthesized_ids_never_collide_with_real_ids() {
    // Rows 3 and 4 (1000 and 512 input tokens) carry no hash_ids next to real ids up to 7.
    let trace = ingest(&data("mooncake/dirty.jsonl")).unwrap();
    let max_real = trace
        .requests()
        .prefix
        .as_ref()
        .unwrap()
        .ids
        .iter()
        .max()
        .copied()
        .unwrap();
    let plan = Plan::new(trace, PlanOptions::default()).unwrap();
    let blocks = plan.blocks();
    assert!(blocks.prefix_synthesized());
    assert!(blocks.synthesized_rows >= 1);
    assert_eq!(blocks.synthesized_from, Some(max_real + 1));
    let mut real = std::collections::BTreeSet::new();
    let mut synthesized = Vec::new();
    for (i, row) in blocks.rows(plan.trace()).enumerate() {
        match row {
            loadproof_core::plan::RowBlocks::Source(ids) => real.extend(ids.iter().copied()),
            loadproof_core::plan::RowBlocks::Synthesized { .. } => {
                assert!(plan.trace().prefix_blocks(i).unwrap().is_empty());
                synthesized.extend(row.ids());
            }
        }
    }
    assert!(!synthesized.is_empty());
    assert!(
        synthesized.iter().all(|id| !real.contains(id)),
        "{synthesized:?} vs {real:?}"
    );
    let unique: std::collections::BTreeSet<_> = synthesized.iter().collect();
    assert_eq!(unique.len(), synthesized.len(), "synthesized ids repeat");
    let (_, _, fidelity) = write_and_verify(&plan, &plan.bench_command());
    assert!(fidelity.pass);
}

#[test]
fn traces_without_prefix_identity_get_unique_ids_and_say_prefix_synthesized() {
    for path in [REAL[0], REAL[3]] {
        let trace = ingest(&shared(path)).unwrap();
        let plan = Plan::new(trace, PlanOptions::default()).unwrap();
        let b = plan.blocks();
        assert!(b.prefix_synthesized(), "{path}");
        assert_eq!(b.synthesized_rows, plan.trace().len() as u64);
        assert_eq!(b.synthesized_from, Some(0));
        let ids: Vec<u64> = b
            .rows(plan.trace())
            .flat_map(|r| r.ids().collect::<Vec<_>>())
            .collect();
        assert_eq!(ids, (0..ids.len() as u64).collect::<Vec<_>>());
        assert!(plan.notes().iter().any(|n| n.contains("SYNTHESIZED")));
    }
}

#[test]
fn num_prompts_equals_the_lines_written() {
    let trace = ingest(&shared(REAL[1])).unwrap();
    let plan = Plan::new(trace, PlanOptions::default()).unwrap();
    let mut bench = plan.bench_command();
    let (file, back, fidelity) = write_and_verify(&plan, &bench);
    let lines = file.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(lines, back.lines);
    assert_eq!(
        bench.value("--num-prompts"),
        Some(lines.to_string().as_str())
    );
    assert!(fidelity.pass);
    // vLLM's default of 1000 (or any other count) would truncate or overrun: refused.
    bench
        .argv
        .retain(|a| a != "--num-prompts" && *a != lines.to_string());
    let fidelity = plan.verify(&back, &bench);
    let argv = fidelity
        .checks
        .iter()
        .find(|c| c.name == "argv_agrees")
        .unwrap();
    assert!(
        !argv.pass && argv.detail.contains("--num-prompts is missing"),
        "{}",
        argv.detail
    );
}

#[test]
fn a_file_or_argv_edited_after_planning_fails_the_check() {
    let trace = ingest(&shared(REAL[2])).unwrap();
    let plan = Plan::new(trace, PlanOptions::default()).unwrap();
    let bench = plan.bench_command();
    let (file, _, _) = write_and_verify(&plan, &bench);
    let text = String::from_utf8(file.clone()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();

    // Two rows trade places: every KS distance stays 0, the row check does not.
    lines.swap(10, 11);
    let swapped = lines.join("\n") + "\n";
    let f = plan.verify(&read_back(&plan, &bench, swapped.as_bytes()), &bench);
    assert!(!f.pass);
    let failed: Vec<_> = f.failures().map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["rows_identical"], "{:?}", statistics(&f));

    // The last line lost: count, KS and rows all move.
    let short = text.lines().take(12_030).collect::<Vec<_>>().join("\n") + "\n";
    let f = plan.verify(&read_back(&plan, &bench, short.as_bytes()), &bench);
    let failed: Vec<_> = f.failures().map(|c| c.name.as_str()).collect();
    assert!(
        failed.contains(&"request_count") && failed.contains(&"argv_agrees"),
        "{failed:?}"
    );

    // The multiplier edited to seconds: arrivals 1000× later, the rate and KS show it.
    let mut seconds = bench.clone();
    let at = seconds
        .argv
        .iter()
        .position(|a| a == "--timed-trace-sec-multiplier")
        .unwrap();
    seconds.argv[at + 1] = "1".into();
    let f = plan.verify(&read_back(&plan, &seconds, &file), &seconds);
    let failed: Vec<_> = f.failures().map(|c| c.name.as_str()).collect();
    assert!(
        failed.contains(&"arrival_ks") && failed.contains(&"rate_rps"),
        "{failed:?}"
    );
    assert!(failed.contains(&"argv_agrees"));

    // The chunk flag removed: vLLM falls back to 16 and every prompt reads short.
    let mut default_chunk = bench.clone();
    let at = default_chunk
        .argv
        .iter()
        .position(|a| a == "--timed-trace-chunk-hash-size")
        .unwrap();
    default_chunk.argv.drain(at..at + 2);
    let back = read_back(&plan, &default_chunk, &file);
    assert_eq!(back.short_rows, 12_031);
    let f = plan.verify(&back, &default_chunk);
    let failed: Vec<_> = f.failures().map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["tiling", "argv_agrees"]);
}

#[test]
fn a_sped_up_plan_reads_back_exactly_and_scales_the_rate() {
    let source = ingest(&shared(REAL[3])).unwrap();
    let rate = loadproof_core::Regime::of(&source, loadproof_core::Window::ONE_SECOND)
        .unwrap()
        .rate_rps
        .unwrap();
    let plan = Plan::new(
        source,
        PlanOptions {
            time_scale: TimeScale::parse("2").unwrap(),
            ..PlanOptions::default()
        },
    )
    .unwrap();
    let scaled = plan.regime().rate_rps.unwrap();
    assert!((scaled / rate - 2.0).abs() < 1e-6, "{scaled} vs {rate}");
    let bench = plan.bench_command();
    let (_, back, fidelity) = write_and_verify(&plan, &bench);
    assert!(fidelity.pass, "{:?}", statistics(&fidelity));
    // Azure's 100 ns stamps halve to 50 ns: only nanoseconds hold them.
    assert_eq!(plan.unit(), TimeUnit::Ns);
    assert_eq!(
        bench.value("--timed-trace-sec-multiplier"),
        Some("0.000000001")
    );
    let doc = plan.document("azure.csv", &back, bench, fidelity);
    assert!(doc.source_regime.is_some());
    assert!(doc.notes.iter().any(|n| n.contains("sped up ×2")));
    assert!(TimeScale::parse("0").is_err() && TimeScale::parse("-1").is_err());
}

#[test]
fn caller_slicing_is_recorded_and_counted_as_filtered() {
    let filter = CallerFilter {
        start_ns: Some(60_000_000_000),
        end_ns: Some(660_000_000_000),
        max_rows: Some(500),
        ..CallerFilter::default()
    };
    let trace = ingest_with(
        &shared(REAL[2]),
        IngestOptions {
            filter: filter.clone(),
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(trace.len(), 500);
    let filtered = trace.meta().filtered_total();
    assert_eq!(filtered, 12_031 - 500);
    assert_eq!(trace.meta().dropped_total(), 0);
    let plan = Plan::new(
        trace,
        PlanOptions {
            filter: filter.clone(),
            ..PlanOptions::default()
        },
    )
    .unwrap();
    let bench = plan.bench_command();
    let (_, back, fidelity) = write_and_verify(&plan, &bench);
    assert!(fidelity.pass);
    let doc = plan.document("conversation_trace.jsonl", &back, bench, fidelity);
    assert_eq!(doc.slice.filter(), filter);
    assert_eq!(doc.source.filtered.values().sum::<u64>(), filtered);
    assert!(doc.notes.iter().any(|n| n.contains("counted as filtered")));
}

#[test]
fn plan_json_round_trips_and_rechecks_clean() {
    let bytes = shared(REAL[0]);
    let trace = ingest(&bytes).unwrap();
    let plan = Plan::new(trace, PlanOptions::default()).unwrap();
    let bench = plan.bench_command();
    let (file, back, fidelity) = write_and_verify(&plan, &bench);
    let doc = plan.document("BurstGPT_1.first400.csv", &back, bench, fidelity);
    let json = doc.to_json();
    let parsed: loadproof_core::plan::PlanDoc = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed, doc);

    // What `plan check` does: rebuild from the source with the document's options.
    let rebuilt = Plan::new(
        ingest_with(
            &bytes,
            IngestOptions {
                format: Some(parsed.source.format),
                filter: parsed.slice.filter(),
                ..opts()
            },
        )
        .unwrap(),
        parsed.options().unwrap(),
    )
    .unwrap();
    let again = read_back(&rebuilt, &parsed.bench, &file);
    let verdict = check_document(&parsed, &rebuilt, &again, None);
    assert!(
        verdict.pass,
        "{:#?}",
        verdict.failures().collect::<Vec<_>>()
    );

    // A number edited in plan.json is caught.
    let mut edited = parsed.clone();
    edited.timed_trace.input_tokens_total += 1;
    let verdict = check_document(&edited, &rebuilt, &again, None);
    let failed: Vec<_> = verdict.failures().map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["plan_json_agrees"]);
}

#[test]
fn an_empty_slice_cannot_be_planned() {
    let trace = ingest_with(
        &shared(REAL[0]),
        IngestOptions {
            filter: CallerFilter {
                model: Some("no-such-model".into()),
                ..CallerFilter::default()
            },
            ..forced(Format::Burstgpt)
        },
    )
    .unwrap();
    assert_eq!(
        Plan::new(trace, PlanOptions::default()).unwrap_err(),
        PlanError::Empty
    );
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Any sound trace plans, writes and reads back with every statistic 0.
    #[test]
    fn any_trace_reads_back_exactly(
        rows in proptest::collection::vec((0u64..5_000_000, 1u32..5000, 1u32..900, proptest::option::of(proptest::collection::vec(0u64..50, 0..12))), 1..60),
        scale in proptest::sample::select(vec!["1", "2", "0.5", "3"]),
        csv in proptest::bool::ANY,
    ) {
        let mut bytes = Vec::new();
        let mut t = 0u64;
        if csv {
            bytes.extend_from_slice(b"TIMESTAMP,ContextTokens,GeneratedTokens\n");
        }
        for (gap, input, output, ids) in &rows {
            t += gap;
            if csv {
                // 100 ns ticks, as Azure 2023 writes them (at most ~30 s here).
                let secs = t / 10_000_000;
                bytes.extend_from_slice(format!("2023-11-16 18:{:02}:{:02}.{:07},{input},{output}\n", secs / 60, secs % 60, t % 10_000_000).as_bytes());
            } else {
                let ids = ids.clone().unwrap_or_default();
                // Real ids tile their prompt at 512 tokens, as Mooncake's do.
                let need = input.div_ceil(512) as usize;
                let ids: Vec<u64> = if ids.is_empty() { ids } else { ids.iter().cycle().take(need).copied().collect() };
                let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
                bytes.extend_from_slice(format!("{{\"timestamp\": {}, \"input_length\": {input}, \"output_length\": {output}, \"hash_ids\": [{list}]}}\n", t / 1000).as_bytes());
            }
        }
        let trace: Trace = ingest(&bytes).unwrap();
        let plan = Plan::new(trace, PlanOptions { time_scale: TimeScale::parse(scale).unwrap(), ..PlanOptions::default() }).unwrap();
        let (_, _, fidelity) = write_and_verify(&plan, &plan.bench_command());
        proptest::prop_assert!(fidelity.pass, "{:?}", statistics(&fidelity));
    }
}

#[test]
fn argv_with_underscore_abbreviated_or_label_flags_fails_the_check() {
    // vLLM's parser reads `--num_prompts` as `--num-prompts` and accepts unique prefixes, so
    // any argument the plan did not build is a failure, whatever it is spelled like.
    let bytes = shared(REAL[2]);
    let plan = Plan::new(ingest(&bytes).unwrap(), PlanOptions::default()).unwrap();
    let bench = plan.bench_command();
    let (file, back, fidelity) = write_and_verify(&plan, &bench);
    let doc = plan.document("conversation_trace.jsonl", &back, bench, fidelity);
    for extra in [
        &["--num_prompts", "1000"][..],
        &["--num-p=1000"],
        &["--timed-trace-label-hash-ids", "nope"],
        &["--max-concurrency", "1"],
        &["--config", "x.yaml"],
    ] {
        let mut edited = doc.clone();
        edited
            .bench
            .argv
            .extend(extra.iter().map(|a| a.to_string()));
        let again = read_back(&plan, &edited.bench, &file);
        let verdict = check_document(&edited, &plan, &again, None);
        let failed: Vec<_> = verdict.failures().map(|c| c.name.as_str()).collect();
        assert_eq!(failed, ["argv_is_planned"], "{extra:?}");
    }
    let mut edited = doc.clone();
    edited
        .bench
        .env
        .insert("PYTHONHASHSEED".into(), "random".into());
    let verdict = check_document(
        &edited,
        &plan,
        &read_back(&plan, &edited.bench, &file),
        None,
    );
    let failed: Vec<_> = verdict.failures().map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["argv_is_planned"]);
    // The caller's own values (filled placeholders) are not a difference.
    let filled = Plan::new(
        ingest(&bytes).unwrap(),
        PlanOptions {
            target: loadproof_core::plan::BenchTarget {
                model: Some("m".into()),
                tokenizer: Some("/tok".into()),
                base_url: Some("http://127.0.0.1:9".into()),
            },
            ..PlanOptions::default()
        },
    )
    .unwrap();
    let bench = filled.bench_command();
    let (_, back, fidelity) = write_and_verify(&filled, &bench);
    let doc = filled.document("c.jsonl", &back, bench, fidelity);
    let rebuilt = Plan::new(ingest(&bytes).unwrap(), doc.options().unwrap()).unwrap();
    assert!(check_document(&doc, &rebuilt, &back, None).pass);
}

#[test]
fn a_row_whose_line_would_pass_the_reader_limit_is_refused() {
    let trace = ingest(b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,1600000000,5,1600000005,API log\n").unwrap();
    let err = Plan::new(
        trace,
        PlanOptions {
            chunk_size: Some(1),
            ..PlanOptions::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            PlanError::Blocks(BlockError::RowTooLong { request: 0, .. })
        ),
        "{err:?}"
    );
}
