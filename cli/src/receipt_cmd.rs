//! `loadproof receipt …`: build a receipt from hand-captured files; verify a receipt's digests.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use loadproof_core::receipt::{
    Axis, Engine, Evidence, Execution, ExitStatus, Phase, Protocol, Provenance, RECEIPT_SCHEMA,
    Receipt, ResultFile, Scrape, ScrapeOutcome, Subject, block, sha256_hex,
};

use crate::args::{ExtractArgs, ImportArgs, ReceiptForm, SubjectArgs, UpgradeArgs, VerifyArgs};
use crate::input::BadInput;
use crate::input::{MAX_EVIDENCE_BYTES, pairs, read_file, read_plan_doc, read_receipt};
use crate::output::write_atomically;

/// One captured file, whole: at most [`MAX_EVIDENCE_BYTES`] (a larger or sparse file is
/// refused by name before it is read, never read into memory to find out).
fn read(path: &Path) -> Result<Vec<u8>> {
    read_file(
        path,
        MAX_EVIDENCE_BYTES,
        "one evidence block of an imported run",
    )
}

/// The subject as the caller states it; `engine` is what fired at it.
pub(crate) fn subject(
    args: &SubjectArgs,
    model: Option<&str>,
    engine: Option<&str>,
) -> Result<Subject> {
    Ok(Subject {
        model: Axis::from_caller(model, "not stated: pass --model"),
        model_revision: Axis::from_caller(
            args.model_revision.as_deref(),
            "not stated: pass --model-revision (a hub commit or checkpoint digest)",
        ),
        gpu_sku: Axis::from_caller(args.gpu_sku.as_deref(), "not stated: pass --gpu-sku"),
        engine: Axis::from_caller(engine, "not stated"),
        engine_version: Axis::from_caller(
            args.engine_version.as_deref(),
            "not stated: pass --engine-version",
        ),
        knobs: pairs("knob", &args.knobs)?,
        simulator: false,
    })
}

/// Provenance of a receipt this process writes.
pub(crate) fn provenance(source: &str, args: &SubjectArgs) -> Result<Provenance> {
    Ok(Provenance {
        source: source.to_owned(),
        generator: concat!("loadproof ", env!("CARGO_PKG_VERSION")).to_owned(),
        command: std::env::args().collect(),
        caller: pairs("caller", &args.caller)?,
        written_unix_ns: unix_ns_now(),
    })
}

pub(crate) fn unix_ns_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `loadproof receipt import`.
pub fn import(args: &ImportArgs, out: &mut impl Write) -> Result<ExitCode> {
    let mut evidence = BTreeMap::new();
    let mut keep = |name: &str, raw: Vec<u8>| {
        evidence.insert(name.to_owned(), Evidence::of(&raw));
        name.to_owned()
    };
    let mut unsupplied = Vec::new();
    let mut stream = |name: &str, path: &Option<std::path::PathBuf>| -> Result<String> {
        Ok(match path {
            Some(p) => keep(name, read(p)?),
            None => {
                unsupplied.push(name.to_owned());
                keep(name, Vec::new())
            }
        })
    };
    let stdout = stream(block::STDOUT, &args.stdout)?;
    let stderr = stream(block::STDERR, &args.stderr)?;
    let engine = if args.aiperf_dir.is_some() {
        Engine::Aiperf
    } else if args.guidellm_report.is_some() {
        Engine::Guidellm
    } else {
        Engine::VllmBenchServe
    };
    let result = match (&args.aiperf_dir, &args.guidellm_report, &args.result) {
        (Some(dir), _, _) => {
            let export = dir.join("profile_export.jsonl");
            let kept = ResultFile::Kept {
                block: keep(block::AIPERF_EXPORT, read(&export)?),
            };
            for (name, path) in [
                (
                    block::AIPERF_SUMMARY,
                    dir.join("profile_export_aiperf.json"),
                ),
                (block::AIPERF_LOG, dir.join("logs").join("aiperf.log")),
            ] {
                if let Ok(bytes) = std::fs::read(&path) {
                    keep(name, bytes);
                }
            }
            kept
        }
        (None, Some(report), _) => ResultFile::Kept {
            block: keep(block::GUIDELLM_REPORT, read(report)?),
        },
        (None, None, Some(p)) => ResultFile::Kept {
            block: keep(block::RESULT, read(p)?),
        },
        (None, None, None) => ResultFile::Absent {
            reason: "not supplied to receipt import".to_owned(),
        },
    };
    if let Some(input) = &args.tool_input {
        let name = match engine {
            Engine::Guidellm => block::GUIDELLM_INPUT,
            _ => block::AIPERF_INPUT,
        };
        keep(name, read(input)?);
    }
    if let Some(config) = &args.aiperf_config {
        keep(block::AIPERF_CONFIG, read(config)?);
    }
    let mut scrapes = Vec::new();
    for (phase, path, name) in [
        (Phase::Before, &args.metrics_before, "metrics/0"),
        (Phase::After, &args.metrics_after, "metrics/1"),
    ] {
        if let Some(p) = path {
            scrapes.push(Scrape {
                url: args
                    .base_url
                    .as_deref()
                    .map_or_else(|| "unknown".to_owned(), |b| format!("{b}/metrics")),
                phase,
                requested: None,
                completed_mono_ns: None,
                outcome: ScrapeOutcome::Response {
                    status: None,
                    body: keep(name, read(p)?),
                },
                exporter: Default::default(),
            });
        }
    }

    let mut protocol = Protocol {
        engine,
        client_version: args.client_version.clone(),
        backend: None,
        endpoint: None,
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        tokenizer: args.tokenizer.clone().or_else(|| args.model.clone()),
        trace_sha256: None,
        timed_trace_sha256: None,
        plan_sha256: None,
        requests: None,
        chunk_size: args.chunk_size,
        sec_multiplier: args.sec_multiplier.clone(),
        arrival: None,
        ignore_eos: None,
        max_concurrency: None,
        python_hash_seed: None,
        sampling: BTreeMap::new(),
        argv: Vec::new(),
        tls: None,
        key: String::new(),
    };
    if let Some(dir) = &args.plan {
        let path = dir.join(loadproof_core::plan::PLAN_FILE);
        let (bytes, doc) = read_plan_doc(&path)?;
        let bench = &doc.bench;
        protocol.backend = bench.value("--backend").map(str::to_owned);
        protocol.endpoint = bench.value("--endpoint").map(str::to_owned);
        protocol.trace_sha256 = Some(doc.source.sha256.clone());
        protocol.timed_trace_sha256 = Some(doc.timed_trace.sha256.clone());
        protocol.plan_sha256 = Some(sha256_hex(&bytes));
        protocol.requests = Some(doc.timed_trace.lines);
        protocol.chunk_size = Some(doc.timed_trace.chunk_size);
        protocol.sec_multiplier = Some(doc.timed_trace.sec_multiplier.clone());
        protocol.arrival = bench
            .switch("--self-timed")
            .then(|| "self_timed".to_owned());
        protocol.ignore_eos = Some(bench.switch("--ignore-eos"));
        protocol.max_concurrency = Some(0);
        if engine == Engine::VllmBenchServe {
            protocol.python_hash_seed = bench.env.get("PYTHONHASHSEED").cloned();
            protocol.argv = bench.argv.clone();
        } else {
            // A peer tool replays the plan's rows on their own schedule; its argv is its own.
            protocol.backend = Some("openai".to_owned());
            protocol.arrival = Some("fixed_schedule".to_owned());
            protocol.ignore_eos = None;
            // The schedule, so the audit can join its records to the rows and rebuild its input.
            let file = dir.join(&doc.timed_trace.file);
            if let Ok(trace) = std::fs::read(&file)
                && sha256_hex(&trace) == doc.timed_trace.sha256
            {
                keep(block::TIMED_TRACE, trace);
            }
        }
        keep(block::PLAN, bytes);
    } else if let Some(trace) = &args.trace {
        let bytes = read(trace)?;
        let sha = sha256_hex(&bytes);
        protocol.requests = Some(bytes.iter().filter(|&&b| b == b'\n').count() as u64);
        protocol.timed_trace_sha256 = Some(sha.clone());
        protocol.trace_sha256 = Some(sha);
    }
    let protocol = protocol.sealed();
    let unstated = protocol.unstated();
    let unsupplied_note = (!unsupplied.is_empty()).then(|| {
        format!(
            "not supplied to receipt import, kept empty: {}",
            unsupplied.join(", ")
        )
    });
    let mut notes = vec![
        "imported: loadproof did not run this; the files were captured by someone else and are kept as given".to_owned(),
        "the run's start and end times and the scrapes' times are unknown (not in the files)".to_owned(),
    ];
    if !unstated.is_empty() {
        notes.push(format!(
            "protocol fields not stated: {} (an unknown field never matches a known one)",
            unstated.join(", ")
        ));
    }
    notes.extend(unsupplied_note);
    let receipt = Receipt {
        schema: RECEIPT_SCHEMA.to_owned(),
        subject: subject(
            &args.subject,
            args.model.as_deref(),
            (engine == Engine::VllmBenchServe).then_some("vllm"),
        )?,
        provenance: provenance("import", &args.subject)?,
        execution: Execution::Ran {
            program: "unknown (imported)".to_owned(),
            argv: protocol.argv.clone(),
            env: BTreeMap::new(),
            exit: ExitStatus {
                code: Some(args.exit_code),
                signal: None,
            },
            stdout,
            stderr,
            result,
            started: None,
            ended: None,
            interrupted: None,
        },
        protocol,
        scrapes,
        evidence,
        notes,
        lease: None,
        implementation: Some(match &args.client_source {
            Some(path) => loadproof_core::receipt::Implementation {
                name: engine.label().to_owned(),
                version: args.client_version.clone(),
                source: Some(path.display().to_string()),
                source_sha256: Some(sha256_hex(&read(path)?)),
                unbound: None,
            },
            None => loadproof_core::receipt::Implementation {
                name: engine.label().to_owned(),
                version: args.client_version.clone(),
                source: None,
                source_sha256: None,
                unbound: Some(
                    "imported: pass --client-source FILE (…/vllm/benchmarks/serve.py, or the peer tool's module that sends the requests) to bind the implementation"
                        .to_owned(),
                ),
            },
        }),
        derived: None,
        stream: None,
        packed: Default::default(),
    }
    .with_capture();
    write_receipt(&args.out, &receipt, args.form)?;
    writeln!(
        out,
        "wrote {} ({} evidence blocks, protocol {})",
        args.out.display(),
        receipt.evidence.len(),
        receipt.protocol.key
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `loadproof receipt verify`.
pub fn verify(args: &VerifyArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (_, receipt) = read_receipt(&args.receipt)?;
    let errors = receipt.verify_evidence();
    let failed: std::collections::HashSet<&str> = errors.iter().map(|e| e.block()).collect();
    for (name, sha256, bytes) in receipt.block_names() {
        let bad = failed.contains(name);
        writeln!(
            out,
            "  {}  {name}  ({bytes} bytes, sha256 {sha256})",
            if bad { "FAIL" } else { "ok  " },
        )?;
    }
    if errors.is_empty() {
        writeln!(out, "every evidence block verifies")?;
        Ok(ExitCode::SUCCESS)
    } else {
        for e in &errors {
            writeln!(out, "  * {e}")?;
        }
        Ok(ExitCode::from(1))
    }
}

/// Writes a whole receipt in `form`.
pub(crate) fn write_receipt(path: &Path, receipt: &Receipt, form: ReceiptForm) -> Result<()> {
    match form {
        ReceiptForm::Stream => crate::stream_out::write_whole(path, receipt),
        ReceiptForm::Json => write_atomically(path, |w| Ok(receipt.write_json(w)?)),
    }
}

/// `loadproof receipt upgrade`.
pub fn upgrade(args: &UpgradeArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (bytes, receipt) = read_receipt(&args.receipt)?;
    if !receipt.sealed() {
        return Err(BadInput(format!(
            "{}: the receipt is unsealed (its writer stopped); it is read as far as it got, but converting it would present it as whole: audit it as it is",
            args.receipt.display()
        ))
        .into());
    }
    let errors = receipt.verify_evidence();
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
        return Err(BadInput(format!(
            "{}: evidence does not verify, so converting it would record digests the bytes do not have: {}",
            args.receipt.display(),
            list.join("; ")
        ))
        .into());
    }
    let mut receipt = receipt;
    receipt.stream = None;
    write_receipt(&args.out, &receipt, args.form)?;
    let written = std::fs::metadata(&args.out).map(|m| m.len()).unwrap_or(0);
    writeln!(
        out,
        "wrote {} as {} ({written} bytes; {} was {} bytes)",
        args.out.display(),
        match args.form {
            ReceiptForm::Stream => "a sealed record stream",
            ReceiptForm::Json => "a v1 JSON document",
        },
        args.receipt.display(),
        bytes.len(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `loadproof receipt extract`.
pub fn extract(args: &ExtractArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (_, receipt) = read_receipt(&args.receipt)?;
    if !receipt.has_block(&args.block) {
        let all = receipt.block_names();
        let names: Vec<&str> = all.iter().map(|(n, _, _)| *n).take(12).collect();
        return Err(BadInput(format!(
            "{}: no block {:?} (blocks: {}{})",
            args.receipt.display(),
            args.block,
            names.join(", "),
            if all.len() > names.len() { ", …" } else { "" }
        ))
        .into());
    }
    match receipt.block(&args.block) {
        Ok(raw) => {
            out.write_all(&raw)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{}: {e}; nothing written", args.receipt.display());
            }
            Ok(ExitCode::from(1))
        }
    }
}
