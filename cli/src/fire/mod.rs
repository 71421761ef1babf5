//! `loadproof fire PLAN_DIR --endpoint URL --engine vllm|native --out RECEIPT`.
//!
//! Fires a verified plan and writes one receipt whatever happens: a run that could not start,
//! an endpoint that did not answer and a run stopped by Ctrl-C are receipts too. Exit codes:
//! 0 the run was captured and the client finished cleanly (exit 0) — a capture, not a
//! qualification; 1 a receipt was written for a run that failed, was refused or was
//! interrupted; 2 bad input, nothing written.

mod http;
mod scrape;
mod vllm;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use loadproof_core::plan::{
    BASE_URL_PLACEHOLDER, MODEL_PLACEHOLDER, PLAN_FILE, PlanDoc, RESULT_DIR, RESULT_FILE,
    TOKENIZER_PLACEHOLDER,
};
use loadproof_core::receipt::{
    Axis, Engine, Evidence, Execution, ExitStatus, Interruption, Phase, Protocol, RECEIPT_SCHEMA,
    Receipt, ResultFile, Subject, block, sha256_hex,
};

use crate::args::{EngineArg, FireArgs};
use crate::plan_cmd::write_atomically;
use crate::receipt_cmd::{provenance, subject};
use crate::trace_cmd::BadInput;
use http::Http;
use scrape::{Clock, Scrapes};

/// What the caller stated, checked before firing.
struct Stated {
    subject: Subject,
    provenance: loadproof_core::receipt::Provenance,
}

/// A verified plan directory, read once.
struct PlanDir {
    dir: PathBuf,
    doc: PlanDoc,
    bytes: Vec<u8>,
}

fn read_plan(dir: &Path) -> Result<PlanDir> {
    let path = dir.join(PLAN_FILE);
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let doc: PlanDoc = serde_json::from_slice(&bytes)
        .map_err(|e| BadInput(format!("{}: not a loadproof plan: {e}", path.display())))?;
    if !doc.verified {
        return Err(BadInput(format!(
            "{}: the plan did not pass its read-back check (verified: false); fix it and re-plan",
            path.display()
        ))
        .into());
    }
    // The file fired must be the file planned: a changed byte means re-run `plan check`.
    let file = dir.join(&doc.timed_trace.file);
    let data = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
    let sha = sha256_hex(&data);
    if sha != doc.timed_trace.sha256 {
        return Err(BadInput(format!(
            "{}: sha256 {sha} is not the planned {}; the plan directory changed — run `loadproof plan check {}`",
            file.display(),
            doc.timed_trace.sha256,
            dir.display()
        ))
        .into());
    }
    Ok(PlanDir {
        dir: dir.to_path_buf(),
        doc,
        bytes,
    })
}

/// Sets the value after `flag` (the planned argv has each flag once).
fn set_flag(argv: &mut [String], flag: &str, value: &str) {
    if let Some(i) = argv.iter().position(|a| a == flag)
        && let Some(v) = argv.get_mut(i + 1)
    {
        *v = value.to_owned();
    }
}

/// `loadproof fire`.
pub fn fire(args: &FireArgs, out: &mut impl Write) -> Result<ExitCode> {
    let plan = read_plan(&args.plan)?;
    // Bad KEY=VALUE pairs are usage errors: found before anything is fired.
    let stated = Stated {
        subject: subject(&args.subject, args.model.as_deref(), None)?,
        provenance: provenance("fire", &args.subject)?,
    };
    let endpoint = args.endpoint.trim_end_matches('/').to_owned();
    let metrics_urls = if args.metrics_urls.is_empty() {
        vec![format!("{endpoint}/metrics")]
    } else {
        args.metrics_urls.clone()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let receipt = runtime.block_on(fire_async(args, &stated, &plan, &endpoint, &metrics_urls))?;
    write_atomically(&args.out, |w| {
        Ok(w.write_all((receipt.to_json() + "\n").as_bytes())?)
    })?;
    let (summary, clean) = summarize(&receipt);
    writeln!(out, "{}", args.out.display())?;
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{summary}");
    }
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One line about the run, and whether it was a clean capture.
fn summarize(r: &Receipt) -> (String, bool) {
    match &r.execution {
        Execution::Ran {
            exit, interrupted, ..
        } => {
            let clean = exit.code == Some(0) && interrupted.is_none();
            (
                format!(
                    "fire: vllm bench serve exited {:?}{}; {} scrapes; receipt written (a capture, not a qualification)",
                    exit.code,
                    if interrupted.is_some() {
                        " (interrupted)"
                    } else {
                        ""
                    },
                    r.scrapes.len()
                ),
                clean,
            )
        }
        Execution::NotStarted { cause } => (format!("fire: not started: {cause}"), false),
        Execution::Unreachable { url, cause } => {
            (format!("fire: {url} unreachable: {cause}"), false)
        }
        Execution::Native { .. } => ("fire: native run captured".to_owned(), true),
    }
}

async fn fire_async(
    args: &FireArgs,
    stated: &Stated,
    plan: &PlanDir,
    endpoint: &str,
    metrics_urls: &[String],
) -> Result<Receipt> {
    let http = Http::new();
    let clock = Clock::start();
    let doc = &plan.doc;
    let mut notes = Vec::new();
    let mut evidence = BTreeMap::new();
    evidence.insert(block::PLAN.to_owned(), Evidence::of(&plan.bytes));

    // The planned argv with the caller's endpoint, model and tokenizer filled in.
    let mut argv = doc.bench.argv.clone();
    let planned = |flag: &str, placeholder: &str| {
        doc.bench
            .value(flag)
            .filter(|v| *v != placeholder)
            .map(str::to_owned)
    };
    set_flag(&mut argv, "--base-url", endpoint);
    if let Some(p) = planned("--base-url", BASE_URL_PLACEHOLDER)
        && p != endpoint
    {
        notes.push(format!(
            "the plan named --base-url {p}; fired at {endpoint} as the caller asked"
        ));
    }

    // Reachability first: an endpoint that does not answer is a receipt, not a crash.
    let models_url = format!("{endpoint}/v1/models");
    let served = match http.get(&models_url, Duration::from_secs(10)).await {
        Ok((200, body)) => served_model(&body),
        Ok((status, _)) => {
            return Ok(bare_receipt(
                args,
                stated,
                plan,
                Execution::Unreachable {
                    url: models_url,
                    cause: format!("HTTP {status}"),
                },
                evidence,
                notes,
            ));
        }
        Err(cause) => {
            return Ok(bare_receipt(
                args,
                stated,
                plan,
                Execution::Unreachable {
                    url: models_url,
                    cause,
                },
                evidence,
                notes,
            ));
        }
    };
    let model = args
        .model
        .clone()
        .or_else(|| planned("--model", MODEL_PLACEHOLDER))
        .or(served.clone())
        .ok_or_else(|| {
            BadInput("no --model given, none planned, and /v1/models lists none".to_owned())
        })?;
    if args.model.is_none() && planned("--model", MODEL_PLACEHOLDER).is_none() {
        notes.push(format!("--model {model} read from {models_url}"));
    }
    let tokenizer = args
        .tokenizer
        .clone()
        .or_else(|| planned("--tokenizer", TOKENIZER_PLACEHOLDER))
        .unwrap_or_else(|| model.clone());
    set_flag(&mut argv, "--model", &model);
    set_flag(&mut argv, "--tokenizer", &tokenizer);

    let engine_version = match &args.subject.engine_version {
        Some(v) => Some(v.clone()),
        None => match http
            .get(&format!("{endpoint}/version"), Duration::from_secs(5))
            .await
        {
            Ok((200, body)) => serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("version")?.as_str().map(str::to_owned)),
            _ => None,
        },
    };

    let install = match args.engine {
        EngineArg::Vllm => {
            let Some(python) = &args.python else {
                return Err(BadInput(
                    "--engine vllm needs --python PATH: the interpreter whose vLLM is checked and run (never a bare `vllm` from PATH)".to_owned(),
                )
                .into());
            };
            match vllm::resolve(python).await {
                Ok(install) => install,
                Err(cause) => {
                    return Ok(bare_receipt(
                        args,
                        stated,
                        plan,
                        Execution::NotStarted { cause },
                        evidence,
                        notes,
                    ));
                }
            }
        }
        EngineArg::Native => {
            return Err(BadInput(
                "--engine native is not available in this build yet; use --engine vllm".to_owned(),
            )
            .into());
        }
    };

    let mut scrapes = Scrapes::default();
    scrapes
        .take(&http, &clock, metrics_urls, Phase::Before)
        .await;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let during = tokio::spawn(scrape::during(
        http.clone(),
        clock,
        metrics_urls.to_vec(),
        Duration::from_millis(args.scrape_interval_ms.max(10)),
        stop_rx,
    ));

    let result_path = plan.dir.join(RESULT_DIR).join(RESULT_FILE);
    let _ = std::fs::remove_file(&result_path);
    let mut run_argv = argv.clone();
    if let Some(first) = run_argv.first_mut() {
        *first = install.program.to_string_lossy().into_owned();
    }
    let env: Vec<(String, String)> = doc
        .bench
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let started = clock.stamp();
    let outcome = vllm::run(&run_argv, &plan.dir, &env).await;
    let ended = clock.stamp();
    let _ = stop_tx.send(true);
    if let Ok(taken) = during.await {
        scrapes.extend(taken);
    }
    scrapes
        .take(&http, &clock, metrics_urls, Phase::After)
        .await;

    let execution = match outcome {
        Err(cause) => Execution::NotStarted { cause },
        Ok(o) => {
            evidence.insert(block::STDOUT.to_owned(), Evidence::of(&o.stdout));
            evidence.insert(block::STDERR.to_owned(), Evidence::of(&o.stderr));
            let result = match std::fs::read(&result_path) {
                Ok(bytes) => {
                    evidence.insert(block::RESULT.to_owned(), Evidence::of(&bytes));
                    ResultFile::Kept {
                        block: block::RESULT.to_owned(),
                    }
                }
                Err(e) => ResultFile::Absent {
                    reason: format!("{}: {e}", result_path.display()),
                },
            };
            Execution::Ran {
                program: install.program.to_string_lossy().into_owned(),
                argv: run_argv,
                env: doc.bench.env.clone(),
                exit: ExitStatus {
                    code: o.code,
                    signal: o.signal,
                },
                stdout: block::STDOUT.to_owned(),
                stderr: block::STDERR.to_owned(),
                result,
                started: Some(started),
                ended: Some(ended),
                interrupted: o.interrupted.then_some(Interruption::Signal),
            }
        }
    };
    let simulator = scrapes
        .first_body()
        .is_some_and(|b| b.contains("loadproof_sim_info"));
    evidence.extend(std::mem::take(&mut scrapes.blocks));

    let protocol = Protocol {
        engine: Engine::VllmBenchServe,
        client_version: Some(install.version.clone()),
        backend: doc.bench.value("--backend").map(str::to_owned),
        endpoint: doc.bench.value("--endpoint").map(str::to_owned),
        base_url: Some(endpoint.to_owned()),
        model: Some(model.clone()),
        tokenizer: Some(tokenizer),
        trace_sha256: Some(doc.source.sha256.clone()),
        timed_trace_sha256: Some(doc.timed_trace.sha256.clone()),
        plan_sha256: Some(sha256_hex(&plan.bytes)),
        requests: Some(doc.timed_trace.lines),
        chunk_size: Some(doc.timed_trace.chunk_size),
        sec_multiplier: Some(doc.timed_trace.sec_multiplier.clone()),
        arrival: doc
            .bench
            .switch("--self-timed")
            .then(|| "self_timed".to_owned()),
        ignore_eos: Some(doc.bench.switch("--ignore-eos")),
        max_concurrency: Some(0),
        python_hash_seed: doc.bench.env.get("PYTHONHASHSEED").cloned(),
        sampling: BTreeMap::new(),
        argv,
        key: String::new(),
    }
    .sealed();
    let mut subject = subject_for(args, stated, &model, engine_version, simulator);
    if simulator {
        subject.engine = Axis::Known {
            value: "loadproof sim".to_owned(),
            source: "/metrics (loadproof_sim_info)".to_owned(),
        };
        notes.push(
            "the endpoint is `loadproof sim`, a simulator: its numbers describe the simulator, not a serving engine"
                .to_owned(),
        );
    }
    Ok(Receipt {
        schema: RECEIPT_SCHEMA.to_owned(),
        protocol,
        subject,
        provenance: stated.provenance.clone(),
        execution,
        scrapes: scrapes.list,
        evidence,
        notes,
    })
}

fn subject_for(
    args: &FireArgs,
    stated: &Stated,
    model: &str,
    engine_version: Option<String>,
    simulator: bool,
) -> Subject {
    let mut s = stated.subject.clone();
    s.model = Axis::Known {
        value: model.to_owned(),
        source: if args.model.is_some() {
            "caller".to_owned()
        } else {
            "plan or /v1/models".to_owned()
        },
    };
    if args.subject.engine_version.is_none()
        && let Some(v) = engine_version
    {
        s.engine_version = Axis::Known {
            value: v,
            source: "GET /version".to_owned(),
        };
    }
    s.engine = Axis::Unknown {
        reason: "the endpoint does not say which engine serves it".to_owned(),
    };
    s.simulator = simulator;
    s
}

/// The first model id of a `/v1/models` body.
fn served_model(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v.get("data")?
        .as_array()?
        .first()?
        .get("id")?
        .as_str()
        .map(str::to_owned)
}

/// A receipt for a run that never fired: the plan is kept; the protocol is what was planned.
fn bare_receipt(
    args: &FireArgs,
    stated: &Stated,
    plan: &PlanDir,
    execution: Execution,
    evidence: BTreeMap<String, Evidence>,
    mut notes: Vec<String>,
) -> Receipt {
    let doc = &plan.doc;
    notes.push("nothing was fired: see the execution for why".to_owned());
    let protocol = Protocol {
        engine: match args.engine {
            EngineArg::Vllm => Engine::VllmBenchServe,
            EngineArg::Native => Engine::Native,
        },
        client_version: None,
        backend: doc.bench.value("--backend").map(str::to_owned),
        endpoint: doc.bench.value("--endpoint").map(str::to_owned),
        base_url: Some(args.endpoint.trim_end_matches('/').to_owned()),
        model: args.model.clone(),
        tokenizer: args.tokenizer.clone(),
        trace_sha256: Some(doc.source.sha256.clone()),
        timed_trace_sha256: Some(doc.timed_trace.sha256.clone()),
        plan_sha256: Some(sha256_hex(&plan.bytes)),
        requests: Some(doc.timed_trace.lines),
        chunk_size: Some(doc.timed_trace.chunk_size),
        sec_multiplier: Some(doc.timed_trace.sec_multiplier.clone()),
        arrival: Some("self_timed".to_owned()),
        ignore_eos: Some(true),
        max_concurrency: Some(0),
        python_hash_seed: doc.bench.env.get("PYTHONHASHSEED").cloned(),
        sampling: BTreeMap::new(),
        argv: doc.bench.argv.clone(),
        key: String::new(),
    }
    .sealed();
    Receipt {
        schema: RECEIPT_SCHEMA.to_owned(),
        protocol,
        subject: stated.subject.clone(),
        provenance: stated.provenance.clone(),
        execution,
        scrapes: Vec::new(),
        evidence,
        notes,
    }
}
