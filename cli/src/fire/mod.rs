//! `loadproof fire PLAN_DIR --endpoint URL --engine vllm|native --out RECEIPT`.
//!
//! Fires a verified plan and writes one receipt whatever happens: a run that could not start,
//! an endpoint that did not answer and a run stopped by Ctrl-C are receipts too. Once the
//! endpoint has answered and every input is checked, the receipt is a record stream appended
//! while the run happens (`crate::stream_out`): a `kill -9` leaves it readable up to its last
//! record, unsealed; `--form json` writes the v1 document at the end instead. Two engines:
//! `vllm` runs `vllm bench serve` ([`vllm`]), `native` is loadproof's own open-loop client
//! ([`native`]); both are wrapped in the same `/metrics` scrapes and the same receipt. Exit
//! codes: 0 the run was captured and the client finished cleanly (vllm: exit 0; native: its
//! whole schedule, never later than `--lag-bound-ms`; failed requests are evidence, as they
//! are to `vllm bench serve`) — a capture, not a qualification; 1 a receipt was written for a
//! run that failed, was refused, was interrupted or fell behind its schedule; 2 bad input,
//! nothing written.
//!
//! A run may hold a lease on the endpoint ([`lease`]: `--lease FILE` or `--acquire-lease`),
//! kept raw in the receipt, its token handed to the client only. Every run that fires names its
//! client implementation, bound by a digest ([`implementation`]). Against `loadproof sim`, the
//! subject's engine, version, revision and GPU come from its `loadproof_sim_info`.

mod child;
mod http;
mod implementation;
mod lease;
mod native;
mod peer;
mod scrape;
mod vllm;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use loadproof_core::plan::{
    BASE_URL_PLACEHOLDER, MODEL_PLACEHOLDER, PLAN_FILE, PlanDoc, RESULT_DIR, RESULT_FILE,
    TOKENIZER_PLACEHOLDER,
};
use loadproof_core::receipt::{
    Axis, Engine, Evidence, Execution, ExitStatus, Exporter, Implementation, Interruption, Phase,
    Protocol, RECEIPT_SCHEMA, Receipt, ResultFile, Stamp, Subject, Tls, block, sha256_hex,
};

use crate::args::{EngineArg, FireArgs, ReceiptForm};
use crate::http_client::first_model_id;
use crate::input::{BadInput, read_plan_doc};
use crate::output::write_atomically;
use crate::receipt_cmd::{provenance, subject};
use crate::secret;
use crate::stream_out::{StreamOut, write_whole};
use crate::tls::ClientTls;
use http::Http;
use loadproof_core::receipt::stream::Fields;
use scrape::{Clock, Scrapes, Sink, Target};

/// What the caller stated, checked before firing.
struct Stated {
    subject: Subject,
    provenance: loadproof_core::receipt::Provenance,
    /// How certificates are checked, and what the protocol records of it (`None`: nothing
    /// was asked of TLS).
    client_tls: ClientTls,
    tls: Option<Tls>,
    /// The server's API key, read from the environment variable `--api-key-env` names.
    api_key: Option<String>,
    /// `--ca-cert` made absolute: a child tool runs in its own directory, so a relative path
    /// given as `SSL_CERT_FILE` would name no file there and every request would fail.
    ca_file: Option<PathBuf>,
}

/// Plans up to this size travel inside the receipt (about 100k Mooncake rows).
const EMBED_TIMED_TRACE_BYTES: usize = 64 << 20;

/// A verified plan directory, read once.
struct PlanDir {
    dir: PathBuf,
    doc: PlanDoc,
    bytes: Vec<u8>,
    /// The `timed_trace` file's bytes (checked against the plan's sha256).
    trace: Vec<u8>,
    /// `blocks.jsonl`'s bytes, when plan.json names it (checked against its sha256).
    sized: Option<Vec<u8>>,
}

fn read_plan(dir: &Path) -> Result<PlanDir> {
    let path = dir.join(PLAN_FILE);
    let (bytes, doc) = read_plan_doc(&path)?;
    if !doc.verified {
        return Err(BadInput(format!(
            "{}: the plan did not pass its read-back check (verified: false); fix it and re-plan",
            path.display()
        ))
        .into());
    }
    // The file fired must be the file planned: a changed byte means re-run `plan check`.
    let file = dir.join(&doc.timed_trace.file);
    let data = read_member(&file)?;
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
    if doc.sized_blocks.is_none()
        && doc.source.format == loadproof_core::Format::Ragpulse
        && !doc.source.companions.is_empty()
    {
        return Err(BadInput(format!(
            "{}: names no blocks file although its source (RAGPulse read with its companion files) has blocks at their own lengths; the plan was edited or written by an older version — re-plan",
            path.display()
        ))
        .into());
    }
    let sized = match &doc.sized_blocks {
        Some(entry) => {
            let name = Path::new(&entry.file);
            if name.file_name() != Some(name.as_os_str()) {
                return Err(BadInput(format!(
                    "{}: sized_blocks.file {:?} is not a file name inside the plan directory",
                    path.display(),
                    entry.file
                ))
                .into());
            }
            let file = dir.join(name);
            let data = read_member(&file)?;
            let sha = sha256_hex(&data);
            if sha != entry.sha256 {
                return Err(BadInput(format!(
                    "{}: sha256 {sha} is not the planned {}; the plan directory changed — run `loadproof plan check {}`",
                    file.display(),
                    entry.sha256,
                    dir.display()
                ))
                .into());
            }
            Some(data)
        }
        None => None,
    };
    Ok(PlanDir {
        dir: dir.to_path_buf(),
        doc,
        bytes,
        trace: data,
        sized,
    })
}

/// A file of the plan directory, read only when it is a regular file there: a symbolic link
/// would fire bytes from outside the directory the plan names (a link to `/dev/zero`, or a
/// FIFO, would never finish reading), so either is refused before anything is read.
fn read_member(file: &Path) -> Result<Vec<u8>> {
    let meta =
        std::fs::symlink_metadata(file).with_context(|| format!("reading {}", file.display()))?;
    if meta.file_type().is_symlink() {
        return Err(BadInput(format!(
            "{}: a symbolic link; a plan directory's files are fired only as regular files inside it — copy the file in and run `loadproof plan check`",
            file.display()
        ))
        .into());
    }
    if !meta.is_file() {
        return Err(BadInput(format!(
            "{}: not a regular file; a plan directory's files are fired only as regular files inside it",
            file.display()
        ))
        .into());
    }
    std::fs::read(file).with_context(|| format!("reading {}", file.display()))
}

/// Sets the value after `flag` (the planned argv has each flag once).
fn set_flag(argv: &mut [String], flag: &str, value: &str) {
    if let Some(i) = argv.iter().position(|a| a == flag)
        && let Some(v) = argv.get_mut(i + 1)
    {
        *v = value.to_owned();
    }
}

/// What the native engine needs, read and checked before anything is fired (bad input here
/// is exit 2 with nothing written).
struct NativeInputs {
    schedule: Arc<native::Schedule>,
    vocab: Arc<native::Vocab>,
    options: native::Options,
    lag_bound_ns: i64,
}

fn native_inputs(args: &FireArgs, plan: &PlanDir, tls: &ClientTls) -> Result<NativeInputs> {
    if !(args.request_timeout.is_finite() && args.request_timeout > 0.0) {
        return Err(BadInput(format!(
            "--request-timeout {}: must be a positive number of seconds",
            args.request_timeout
        ))
        .into());
    }
    // -0 and 1e300 are numbers too: a bound must be one a run can be held to.
    if !(args.lag_bound_ms > 0.0 && args.lag_bound_ms <= 86_400_000.0) {
        return Err(BadInput(format!(
            "--lag-bound-ms {}: must be a number of milliseconds > 0 and ≤ 86400000 (one day)",
            args.lag_bound_ms
        ))
        .into());
    }
    let vocab = match &args.tokenizer {
        Some(t) => {
            let path = Path::new(t);
            if !path.exists() {
                return Err(BadInput(format!(
                    "--tokenizer {t}: no such file or directory; --engine native reads a local tokenizer.json (or a directory holding one) and fetches nothing"
                ))
                .into());
            }
            native::Vocab::from_tokenizer(path)?
        }
        None => native::Vocab::range(args.vocab_size)?,
    };
    Ok(NativeInputs {
        schedule: Arc::new(native::Schedule::read(
            &plan.doc,
            &plan.trace,
            plan.sized.as_deref(),
        )?),
        vocab: Arc::new(vocab),
        options: native::Options {
            request_timeout: Duration::from_secs_f64(args.request_timeout),
            progress: std::io::stderr().is_terminal(),
            credentials: Vec::new(),
            tls: tls.clone(),
            journal: None,
        },
        lag_bound_ns: (args.lag_bound_ms * 1e6).round() as i64,
    })
}

/// `loadproof fire`.
pub fn fire(args: &FireArgs, out: &mut impl Write) -> Result<ExitCode> {
    let plan = read_plan(&args.plan)?;
    // Read before anything is fired: a key that cannot be read is bad input, not a lost run.
    let signing_key = args
        .signing_key
        .as_deref()
        .map(crate::key_cmd::read_secret)
        .transpose()?;
    if signing_key.is_some() && args.form == ReceiptForm::Json {
        return Err(BadInput(
            "--signing-key signs a record stream's seal; --form json writes no stream (leave one out)"
                .to_owned(),
        )
        .into());
    }
    let endpoint = args.endpoint.trim_end_matches('/').to_owned();
    let engine_urls = if args.metrics_urls.is_empty() {
        vec![format!("{endpoint}/metrics")]
    } else {
        args.metrics_urls.clone()
    };
    let metrics_urls: Vec<Target> = engine_urls
        .into_iter()
        .map(|url| Target {
            url,
            exporter: Exporter::Engine,
        })
        .chain(args.dcgm_urls.iter().map(|url| Target {
            url: url.clone(),
            exporter: Exporter::Dcgm,
        }))
        .collect();
    let api_key = args
        .api_key_env
        .as_deref()
        .map(|name| secret::from_env("--api-key-env", name))
        .transpose()?;
    if api_key.is_some()
        && matches!(args.engine, EngineArg::Guidellm)
        && (args.lease.is_some() || args.acquire_lease.is_some())
    {
        return Err(BadInput(
            "--engine guidellm with both --api-key-env and a lease: GuideLLM sends one secret (its API key); give the key to the gate instead (`loadproof gate --upstream-api-key-env NAME`) or fire with --engine native or aiperf".to_owned(),
        )
        .into());
    }
    if api_key.is_some()
        && matches!(args.engine, EngineArg::Vllm)
        && (args.lease.is_some() || args.acquire_lease.is_some())
    {
        return Err(BadInput(
            "--engine vllm with both --api-key-env and a lease: vllm bench serve sends one secret (OPENAI_API_KEY); the lease token could travel only as a --header flag, which lands in argv. Give the key to the gate instead (`loadproof gate --upstream-api-key-env NAME`) or fire with --engine native".to_owned(),
        )
        .into());
    }
    // A password in a URL would be written into the receipt (the URL is the protocol's and
    // every scrape's): refused, with where a secret goes instead.
    for (flag, url) in
        std::iter::once(("--endpoint", &endpoint)).chain(metrics_urls.iter().map(|t| {
            (
                if t.exporter == Exporter::Dcgm {
                    "--dcgm-url"
                } else {
                    "--metrics-url"
                },
                &t.url,
            )
        }))
    {
        if url
            .parse::<hyper::Uri>()
            .ok()
            .and_then(|u| u.authority().map(|a| a.as_str().contains('@')))
            .unwrap_or(false)
        {
            return Err(BadInput(format!(
                "{flag}: credentials in the URL are refused (the URL is written into the receipt); pass an API key with --api-key-env NAME"
            ))
            .into());
        }
    }
    let client_tls = args.trust.trust().client()?;
    let https = std::iter::once(&endpoint)
        .chain(metrics_urls.iter().map(|t| &t.url))
        .any(|u| {
            u.get(..8)
                .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
        });
    let tls = (https || args.trust.insecure || args.trust.ca_cert.is_some())
        .then(|| client_tls.record.clone());
    // Bad KEY=VALUE pairs are usage errors: found before anything is fired.
    let stated = Stated {
        subject: subject(&args.subject, args.model.as_deref(), None)?,
        provenance: provenance("fire", &args.subject)?,
        client_tls,
        tls,
        api_key,
        ca_file: args
            .trust
            .ca_cert
            .as_deref()
            .map(std::path::absolute)
            .transpose()
            .context("--ca-cert: resolving the path")?,
    };
    let native = match args.engine {
        EngineArg::Native => Some(native_inputs(args, &plan, &stated.client_tls)?),
        EngineArg::Vllm | EngineArg::Aiperf | EngineArg::Guidellm => None,
    };
    let leased = args
        .lease
        .as_deref()
        .map(|path| lease::read(path, args.lease_token_env.as_deref()))
        .transpose()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let (receipt, report, journal) = runtime.block_on(fire_async(
        args,
        &stated,
        &plan,
        native,
        leased,
        &endpoint,
        &metrics_urls,
    ))?;
    // Idle pooled connections are dropped, and no blocking-pool thread (a resolver stuck on
    // a hostname) holds the process open once the receipt is decided.
    runtime.shutdown_background();
    // The receipt carries its own audit's numbers as `derived`: readable in the file, and
    // checked (never trusted) by every later audit.
    let mut receipt = receipt.with_capture();
    let audit = loadproof_core::audit::audit(&receipt);
    receipt.derived = Some(audit.derived());
    match (journal, args.form) {
        (Some(journal), _) => journal.seal_signed(&receipt, signing_key)?,
        (None, ReceiptForm::Stream) => write_whole(&args.out, &receipt)?,
        (None, ReceiptForm::Json) => write_atomically(&args.out, |w| Ok(receipt.write_json(w)?))?,
    }
    let (summary, clean) = report.unwrap_or_else(|| summarize(&receipt));
    writeln!(out, "{}", args.out.display())?;
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{summary}");
        let refused: Vec<&str> = loadproof_core::audit::STANDINGS
            .into_iter()
            .filter(|n| audit.standings.get(*n).is_some_and(|s| !s.positive))
            .collect();
        eprintln!(
            "audit: {}; {} (`loadproof receipt audit {}` for everything)",
            if audit.captured {
                "captured"
            } else {
                "not captured"
            },
            if audit.qualified {
                "qualified".to_owned()
            } else if refused.is_empty() {
                format!("unqualified ({} refusals)", audit.refusals.len())
            } else {
                format!("unqualified: {} not positive", refused.join(", "))
            },
            args.out.display()
        );
    }
    Ok(if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What the writer knows when it opens the stream, before anything is fired.
struct Opening<'a> {
    args: &'a FireArgs,
    stated: &'a Stated,
    plan: &'a PlanDir,
    endpoint: &'a str,
    model: &'a str,
    engine_version: Option<String>,
    native: Option<&'a NativeInputs>,
    install: Option<&'a vllm::Install>,
    peer: Option<&'a PeerRun>,
    argv: &'a [String],
    lease: Option<String>,
    implementation: Option<Implementation>,
    notes: &'a [String],
    clock: Clock,
}

impl Opening<'_> {
    /// The open record's fields: the protocol as planned, the subject as stated, and the
    /// execution the run is about to have — what an unsealed receipt is read with.
    fn fields(&self) -> Fields {
        let now = self.clock.stamp();
        let (engine, execution) = match (self.native, self.peer) {
            (Some(inputs), _) => (
                Engine::Native,
                Execution::Native {
                    events: block::EVENTS.to_owned(),
                    offered: inputs.schedule.len() as u64,
                    started: now,
                    ended: now,
                    interrupted: None,
                    lag_bound_ns: inputs.lag_bound_ns,
                },
            ),
            (None, Some(peer)) => (
                peer.engine,
                running(
                    peer.program(),
                    peer.argv.clone(),
                    peer.env.iter().cloned().collect(),
                    now,
                ),
            ),
            (None, None) => (
                Engine::VllmBenchServe,
                running(
                    self.install
                        .map(|i| i.program.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    self.argv.to_vec(),
                    self.plan.doc.bench.env.clone(),
                    now,
                ),
            ),
        };
        let protocol = match self.peer {
            Some(peer) => Protocol {
                tls: self.stated.tls.clone(),
                ..peer.protocol(self.plan, self.endpoint, self.model)
            },
            None => Protocol {
                model: Some(self.model.to_owned()),
                tls: self.stated.tls.clone(),
                ..planned_protocol(self.plan, engine, self.endpoint)
            },
        };
        Fields {
            schema: RECEIPT_SCHEMA.to_owned(),
            protocol: protocol.sealed(),
            subject: subject_for(
                self.args,
                self.stated,
                self.model,
                self.engine_version.clone(),
                false,
            ),
            provenance: self.stated.provenance.clone(),
            execution,
            notes: self.notes.to_vec(),
            lease: self.lease.clone(),
            implementation: self.implementation.clone(),
            derived: None,
        }
    }
}

/// A process engine's execution as the stream opens: started, not yet ended.
fn running(
    program: String,
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    now: loadproof_core::receipt::Stamp,
) -> Execution {
    Execution::Ran {
        program,
        argv,
        env,
        exit: ExitStatus {
            code: None,
            signal: None,
        },
        stdout: block::STDOUT.to_owned(),
        stderr: block::STDERR.to_owned(),
        result: ResultFile::Absent {
            reason: "the run had not ended when this was written".to_owned(),
        },
        started: Some(now),
        ended: None,
        interrupted: None,
    }
}

/// One line about the run, and whether it was a clean capture.
fn summarize(r: &Receipt) -> (String, bool) {
    match &r.execution {
        Execution::Ran {
            exit, interrupted, ..
        } => {
            // A peer tool's run is clean only with its records: AIPerf exits 0 even when it
            // could not start its own services and wrote none.
            let records = !r.protocol.engine.is_process()
                || r.protocol.engine == Engine::VllmBenchServe
                || matches!(
                    r.execution,
                    Execution::Ran {
                        result: ResultFile::Kept { .. },
                        ..
                    }
                );
            let clean = exit.code == Some(0) && interrupted.is_none() && records;
            (
                format!(
                    "fire: {} exited {:?}{}; {} scrapes; receipt written (a capture, not a qualification)",
                    r.protocol.engine.label(),
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
        Execution::Native { interrupted, .. } => (
            "fire: native run captured".to_owned(),
            interrupted.is_none(),
        ),
    }
}

/// Where and how a run is scraped: what every engine's run shares.
struct Scraping<'a> {
    http: &'a Http,
    clock: Clock,
    urls: &'a [Target],
    interval: Duration,
    journal: Option<&'a StreamOut>,
    /// The lease the scrapes of its route present, when the run holds one with a token.
    lease: Option<Arc<scrape::ScrapeLease>>,
}

/// A child tool's run: when it started and ended, and what it did (`Err`: it never started).
struct ChildRan {
    started: Stamp,
    ended: Stamp,
    outcome: Result<child::Outcome, child::NotStarted>,
}

impl Scraping<'_> {
    /// Runs `work` between a scrape of every URL before and one after, scraping on
    /// `interval` while it runs.
    async fn around<T>(&self, work: impl Future<Output = T>) -> (T, Scrapes) {
        let sink = Sink::to(self.journal.cloned()).leased(self.lease.clone());
        let (http, clock, urls) = (self.http, self.clock, self.urls);
        let mut scrapes = Scrapes::new(sink.clone());
        scrapes.take(http, &clock, urls, Phase::Before).await;
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let during = tokio::spawn(scrape::during(
            http.clone(),
            clock,
            urls.to_vec(),
            self.interval,
            stop_rx,
            sink,
        ));
        let out = work.await;
        let _ = stop_tx.send(true);
        if let Ok(taken) = during.await {
            scrapes.extend(taken);
        }
        scrapes.take(http, &clock, urls, Phase::After).await;
        (out, scrapes)
    }

    /// Runs a child tool (its own process group, see [`child::run`]) between the scrapes. Its
    /// progress output is evidence, so on a terminal only a spinner says it runs.
    async fn child(
        &self,
        label: &str,
        requests: u64,
        argv: &[String],
        cwd: &Path,
        env: &[(String, String)],
    ) -> (ChildRan, Scrapes) {
        let clock = self.clock;
        self.around(async {
            let spinner = std::io::stderr().is_terminal().then(|| {
                let bar = indicatif::ProgressBar::new_spinner();
                bar.set_message(format!(
                    "{label}: {requests} requests (its output is captured into the receipt)"
                ));
                bar.enable_steady_tick(Duration::from_millis(200));
                bar
            });
            let started = clock.stamp();
            let outcome = child::run(argv, cwd, env, self.journal).await;
            if let Some(bar) = spinner {
                bar.finish_and_clear();
            }
            ChildRan {
                started,
                ended: clock.stamp(),
                outcome,
            }
        })
        .await
    }
}

impl ChildRan {
    /// The execution record: stdout and stderr kept as blocks, and the tool's result file(s)
    /// read by `result` — only for a child that ran.
    fn execution(
        self,
        program: String,
        argv: Vec<String>,
        env: BTreeMap<String, String>,
        evidence: &mut BTreeMap<String, Evidence>,
        result: impl FnOnce(&mut BTreeMap<String, Evidence>) -> ResultFile,
    ) -> Execution {
        let o = match self.outcome {
            Err(cause) => return Execution::NotStarted { cause },
            Ok(o) => o,
        };
        evidence.insert(block::STDOUT.to_owned(), Evidence::of(&o.stdout));
        evidence.insert(block::STDERR.to_owned(), Evidence::of(&o.stderr));
        Execution::Ran {
            program,
            argv,
            env,
            exit: ExitStatus {
                code: o.code,
                signal: o.signal,
            },
            stdout: block::STDOUT.to_owned(),
            stderr: block::STDERR.to_owned(),
            result: result(evidence),
            started: Some(self.started),
            ended: Some(self.ended),
            interrupted: o.interrupted.then_some(Interruption::Signal),
        }
    }
}

/// The protocol fields every engine takes from the plan.
fn planned_protocol(plan: &PlanDir, engine: Engine, base_url: &str) -> Protocol {
    let doc = &plan.doc;
    Protocol {
        engine,
        client_version: None,
        backend: doc.bench.value("--backend").map(str::to_owned),
        endpoint: doc.bench.value("--endpoint").map(str::to_owned),
        base_url: Some(base_url.to_owned()),
        model: None,
        tokenizer: None,
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
        tls: None,
        key: String::new(),
    }
}

/// What one engine's run produced, before the receipt is assembled.
struct Fired {
    execution: Execution,
    protocol: Protocol,
    scrapes: Scrapes,
    /// The native engine's summary and whether the run was clean.
    report: Option<(String, bool)>,
}

#[allow(clippy::too_many_arguments)]
async fn fire_async(
    args: &FireArgs,
    stated: &Stated,
    plan: &PlanDir,
    native: Option<NativeInputs>,
    leased: Option<lease::Held>,
    endpoint: &str,
    metrics_urls: &[Target],
) -> Result<(Receipt, Option<(String, bool)>, Option<StreamOut>)> {
    // The native client is this executable: hash it (tens of MB) while the endpoint is checked.
    let native_implementation = native
        .is_some()
        .then(|| tokio::task::spawn_blocking(implementation::native));
    let http = Http::new(&stated.client_tls, endpoint, stated.api_key.as_deref());
    let clock = Clock::start();
    let doc = &plan.doc;
    let mut notes = Vec::new();
    let mut evidence = BTreeMap::new();
    evidence.insert(block::PLAN.to_owned(), Evidence::of(&plan.bytes));
    // The schedule itself, so the audit can join send times to it from the receipt alone.
    if let Some(sized) = plan.sized.as_deref().filter(|_| native.is_some()) {
        evidence.insert(block::SIZED_BLOCKS.to_owned(), Evidence::of(sized));
    }
    if plan.trace.len() <= EMBED_TIMED_TRACE_BYTES {
        evidence.insert(block::TIMED_TRACE.to_owned(), Evidence::of(&plan.trace));
    } else {
        notes.push(format!(
            "the timed_trace file ({} bytes) is larger than {} MiB and is not embedded: the audit cannot join send times to the schedule",
            plan.trace.len(),
            EMBED_TIMED_TRACE_BYTES >> 20
        ));
    }

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
    let unreachable = |cause: String| Execution::Unreachable {
        url: models_url.clone(),
        cause,
    };
    let served = match http.get(&models_url, Duration::from_secs(10)).await {
        Ok((200, body)) => {
            // The server's own answer: the audit reads the model it serves from it.
            let first = first_model_id(&body);
            evidence.insert(block::MODELS.to_owned(), Evidence::of(&body));
            first
        }
        Ok((status, _)) => {
            let execution = unreachable(match status {
                401 | 403 if stated.api_key.is_none() => {
                    format!("HTTP {status} (the server wants an API key: pass --api-key-env NAME)")
                }
                _ => format!("HTTP {status}"),
            });
            return Ok((
                bare_receipt(args, stated, plan, execution, evidence, notes),
                None,
                None,
            ));
        }
        Err(cause) => {
            let hint = if cause.contains("UnknownIssuer")
                || cause.contains("invalid peer certificate")
            {
                match &args.trust.ca_cert {
                    Some(ca) => format!(
                        " (the certificate is not signed by --ca-cert {} nor by the platform's trust store)",
                        ca.display()
                    ),
                    None => " (trust the server's private CA with --ca-cert FILE, or, knowingly, --insecure)".to_owned(),
                }
            } else {
                String::new()
            };
            let execution = unreachable(format!("{cause}{hint}"));
            return Ok((
                bare_receipt(args, stated, plan, execution, evidence, notes),
                None,
                None,
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
    // vllm bench serve's own switch: its aiohttp client then checks no certificate either.
    if args.trust.insecure && !argv.iter().any(|a| a == "--insecure") {
        argv.push("--insecure".to_owned());
    }

    // GET /version always: its answer is evidence (the audit's engine_version), even when the
    // caller states one (the audit then checks the two agree).
    let served_version = match http
        .get(&format!("{endpoint}/version"), Duration::from_secs(5))
        .await
    {
        Ok((200, body)) => {
            let version = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("version")?.as_str().map(str::to_owned));
            if version.is_some() {
                evidence.insert(block::VERSION.to_owned(), Evidence::of(&body));
            }
            version
        }
        _ => None,
    };
    let engine_version = args.subject.engine_version.clone().or(served_version);

    // The vllm client is checked before a lease is asked for: a client that cannot start
    // should not hold the endpoint.
    let install = match args.engine {
        EngineArg::Native | EngineArg::Aiperf | EngineArg::Guidellm => None,
        EngineArg::Vllm => {
            let Some(python) = &args.python else {
                return Err(BadInput(
                    "--engine vllm needs --python PATH: the interpreter whose vLLM is checked and run (never a bare `vllm` from PATH)".to_owned(),
                )
                .into());
            };
            match vllm::resolve(python).await {
                Ok(install) => Some(install),
                Err(cause) => {
                    let execution = Execution::NotStarted { cause };
                    return Ok((
                        bare_receipt(args, stated, plan, execution, evidence, notes),
                        None,
                        None,
                    ));
                }
            }
        }
    };

    // So is a peer tool.
    let peer_tool = match args.engine {
        EngineArg::Aiperf => Some(peer::Tool::Aiperf),
        EngineArg::Guidellm => Some(peer::Tool::Guidellm),
        EngineArg::Native | EngineArg::Vllm => None,
    };
    let peer_install = match peer_tool {
        Some(tool) => {
            let Some(python) = &args.python else {
                return Err(BadInput(format!(
                    "--engine {0} needs --python PATH: the interpreter whose {1} is checked and run (never a bare `{0}` from PATH)",
                    tool.label().to_ascii_lowercase(),
                    tool.label()
                ))
                .into());
            };
            match peer::resolve(tool, python).await {
                Ok(install) => Some(install),
                Err(cause) => {
                    let execution = Execution::NotStarted { cause };
                    return Ok((
                        bare_receipt(args, stated, plan, execution, evidence, notes),
                        None,
                        None,
                    ));
                }
            }
        }
        None => None,
    };

    // The native client is bound before it fires, and never hashes while it fires (the
    // dispatcher's timing shares the cores).
    let native_implementation = match native_implementation {
        Some(hashing) => Some(hashing.await.unwrap_or_else(|e| Implementation {
            name: implementation::NATIVE.to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            source: None,
            source_sha256: None,
            unbound: Some(format!("hashing the executable failed: {e}")),
        })),
        None => None,
    };

    // The lease, last thing before the first scrape.
    let leased = match (leased, args.acquire_lease) {
        (Some(held), _) => Some(held),
        (None, Some(seconds)) => {
            let holder = format!("loadproof fire {}", args.plan.display());
            Some(lease::acquire(&http, endpoint, &holder, seconds).await?)
        }
        (None, None) => None,
    };
    let bearer = leased.as_ref().and_then(lease::Held::bearer);
    // Checked before the receipt file is opened: bad input writes nothing (exit 2).
    let credentials = credentials(stated.api_key.as_deref(), bearer)?;
    let peer_run = match peer_install {
        Some(install) => Some(PeerRun::prepare(
            install, plan, endpoint, &model, &tokenizer, args, stated, bearer,
        )?),
        None => None,
    };
    if let Some(run) = &peer_run {
        notes.extend(run.notes.iter().cloned());
        for (name, bytes) in &run.blocks {
            evidence.insert((*name).to_owned(), Evidence::of(bytes));
        }
    }

    let interval = Duration::from_millis(args.scrape_interval_ms.max(10));
    // From here on the receipt is written as the run happens: a crash leaves a receipt that
    // reads up to its last record. The opening states what the writer expects; the seal, the
    // run's real end.
    let journal = match args.form {
        ReceiptForm::Json => None,
        ReceiptForm::Stream => {
            let opening = Opening {
                args,
                stated,
                plan,
                endpoint,
                model: &model,
                engine_version: engine_version.clone(),
                native: native.as_ref(),
                install: install.as_ref(),
                peer: peer_run.as_ref(),
                argv: &argv,
                lease: leased.as_ref().map(|_| block::LEASE.to_owned()),
                implementation: native_implementation
                    .clone()
                    .or_else(|| {
                        install.as_ref().map(|i| {
                            implementation::bind(
                                implementation::VLLM,
                                Some(i.version.clone()),
                                i.serve_py.clone(),
                            )
                        })
                    })
                    .or_else(|| peer_run.as_ref().map(|r| r.implementation.clone())),
                notes: &notes,
                clock,
            };
            let journal = StreamOut::create(&args.out, &opening.fields(), clock.mono_ns())?;
            for (name, e) in &evidence {
                if let Ok(raw) = e.decoded(name) {
                    journal.block(name, &raw);
                }
            }
            if let Some(held) = &leased {
                journal.block(block::LEASE, &held.raw);
                if let Some(signed) = &held.signed {
                    journal.block(block::LEASE_SIGNED, signed);
                }
            }
            Some(journal)
        }
    };
    let scraping = Scraping {
        http: &http,
        clock,
        urls: metrics_urls,
        interval,
        journal: journal.as_ref(),
        lease: leased.as_ref().and_then(|held| {
            Some(Arc::new(scrape::ScrapeLease {
                origin: loadproof_core::receipt::origin(&held.lease.route)?,
                token: held.bearer()?.to_owned(),
            }))
        }),
    };
    let (fired, implementation) = match (native, install, peer_run) {
        (None, None, Some(run)) => {
            let implementation = run.implementation.clone();
            let fired = fire_peer(plan, run, endpoint, &model, &scraping, &mut evidence).await;
            (fired, implementation)
        }
        (Some(mut inputs), None, None) => {
            inputs.options.credentials = credentials;
            let fired = fire_native(
                plan,
                inputs,
                endpoint,
                &model,
                &scraping,
                &mut evidence,
                &mut notes,
            )
            .await?;
            let implementation = native_implementation.unwrap_or_else(implementation::native);
            (fired, implementation)
        }
        (None, Some(install), None) => {
            let implementation = implementation::bind(
                implementation::VLLM,
                Some(install.version.clone()),
                install.serve_py.clone(),
            );
            if let Some(ca) = &stated.ca_file {
                notes.push(format!(
                    "vllm bench serve ran with SSL_CERT_FILE={} (the --ca-cert, sha256 in protocol.tls): its client trusts that file in place of the platform's store",
                    ca.display()
                ));
            }
            if stated.api_key.is_some() {
                notes.push(
                    "vllm bench serve ran with OPENAI_API_KEY set to the API key from --api-key-env (its openai backend sends it as `Authorization: Bearer`); execution.env lists only the plan's environment"
                        .to_owned(),
                );
            } else if bearer.is_some() {
                notes.push(
                    "vllm bench serve ran with OPENAI_API_KEY set to the lease token (its openai backend sends it as `Authorization: Bearer`); execution.env lists only the plan's environment"
                        .to_owned(),
                );
            }
            let fired = fire_vllm(
                plan,
                install,
                argv,
                endpoint,
                &model,
                tokenizer,
                ChildSecrets {
                    openai_api_key: stated.api_key.as_deref().or(bearer),
                    ssl_cert_file: stated.ca_file.as_deref(),
                },
                &scraping,
                &mut evidence,
            )
            .await;
            (fired, implementation)
        }
        _ => {
            return Err(anyhow::anyhow!(
                "the {:?} engine's inputs were not prepared",
                args.engine
            ));
        }
    };
    let Fired {
        execution,
        protocol,
        mut scrapes,
        report,
    } = fired;
    // The run is over (its last scrape taken): the lease's token should die with it.
    let mut lease_account = None;
    if let Some(held) = &leased {
        let (note, account) = lease::release(&http, endpoint, held).await;
        notes.push(note);
        lease_account = account;
    }

    let simulator = scrapes
        .first_body(endpoint)
        .is_some_and(|b| b.contains("loadproof_sim_info"));
    let sim_info = scrapes
        .first_body(endpoint)
        .and_then(sim_info)
        .unwrap_or_default();
    // vLLM's own exporter: its metric families are vLLM's readback of what serves.
    let vllm_exporter = scrapes
        .first_body(endpoint)
        .is_some_and(|b| b.contains("\nvllm:") || b.starts_with("vllm:"));
    let dcgm_models = scrapes.dcgm_models();
    evidence.extend(std::mem::take(&mut scrapes.blocks));
    let mut subject = subject_for(args, stated, &model, engine_version, simulator);
    if simulator {
        subject.engine = Axis::Known {
            value: "loadproof sim".to_owned(),
            source: SIM_INFO_SOURCE.to_owned(),
        };
        notes.push(
            "the endpoint is `loadproof sim`, a simulator: its numbers describe the simulator, not a serving engine"
                .to_owned(),
        );
        notes.extend(sim_axes(&mut subject, &args.subject, &sim_info));
    } else if vllm_exporter {
        subject.engine = Axis::Known {
            value: "vllm".to_owned(),
            source: "/metrics (vllm: metric families)".to_owned(),
        };
    }
    // The GPU's own name for itself, when a DCGM exporter was scraped and the caller did not
    // state one (the audit checks it against every other source either way).
    if args.subject.gpu_sku.is_none()
        && let Some((url, model)) = dcgm_models.into_iter().next()
    {
        subject.gpu_sku = Axis::Known {
            value: model,
            source: format!("DCGM at {url} (modelName)"),
        };
    }
    if let Some(held) = &leased {
        let run = run_interval(&execution);
        notes.extend(held.notes(endpoint, run));
        evidence.insert(block::LEASE.to_owned(), Evidence::of(&held.raw));
        if let Some(signed) = &held.signed {
            evidence.insert(block::LEASE_SIGNED.to_owned(), Evidence::of(signed));
        }
        if let Some(account) = &lease_account {
            evidence.insert(
                block::LEASE_ACCOUNT_SIGNED.to_owned(),
                Evidence::of(account),
            );
        }
    }
    let report = report.map(|(text, clean)| {
        (
            format!(
                "{text}\n{} scrapes; receipt written (a capture, not a qualification)",
                scrapes.list.len()
            ),
            clean,
        )
    });
    Ok((
        Receipt {
            schema: RECEIPT_SCHEMA.to_owned(),
            protocol: Protocol {
                tls: stated.tls.clone(),
                ..protocol
            }
            .sealed(),
            subject,
            provenance: stated.provenance.clone(),
            execution,
            scrapes: scrapes.list,
            evidence,
            notes,
            lease: leased.map(|_| block::LEASE.to_owned()),
            implementation: Some(implementation),
            derived: None,
            stream: None,
            packed: Default::default(),
        },
        report,
        journal,
    ))
}

/// Where subject axes read from the sim's `/metrics` say they came from.
const SIM_INFO_SOURCE: &str = "/metrics (loadproof_sim_info)";

/// The labels of the `loadproof_sim_info` sample in a scrape body (empty when it has none).
fn sim_info(body: &str) -> Option<BTreeMap<String, String>> {
    let line = body
        .lines()
        .find(|l| l.starts_with("loadproof_sim_info{") || l.starts_with("loadproof_sim_info "))?;
    let mut labels = BTreeMap::new();
    let Some(mut rest) = line.strip_prefix("loadproof_sim_info{") else {
        return Some(labels);
    };
    loop {
        rest = rest.trim_start_matches(',');
        if rest.starts_with('}') || rest.is_empty() {
            return Some(labels);
        }
        let (name, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        labels.insert(name.trim().to_owned(), value);
        rest = after.get(end + 1..)?;
    }
}

/// Sets the engine version, model revision and GPU SKU from the sim's own statement, unless
/// the caller stated another value: then the caller's is kept and the disagreement is a note.
fn sim_axes(
    subject: &mut Subject,
    stated: &crate::args::SubjectArgs,
    info: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut notes = Vec::new();
    for (label, flag, caller, axis) in [
        (
            "version",
            "--engine-version",
            &stated.engine_version,
            &mut subject.engine_version,
        ),
        (
            "revision",
            "--model-revision",
            &stated.model_revision,
            &mut subject.model_revision,
        ),
        (
            "gpu_sku",
            "--gpu-sku",
            &stated.gpu_sku,
            &mut subject.gpu_sku,
        ),
    ] {
        let Some(read) = info.get(label) else {
            continue;
        };
        match caller {
            Some(value) if value != read => notes.push(format!(
                "the caller stated {flag} {value:?} but the endpoint's /metrics says {label}={read:?} (loadproof_sim_info): the caller's value is kept"
            )),
            _ => {
                *axis = Axis::Known {
                    value: read.clone(),
                    source: SIM_INFO_SOURCE.to_owned(),
                }
            }
        }
    }
    notes
}

/// The run's start and end on the wall clock, when the execution has them.
fn run_interval(execution: &Execution) -> Option<(i64, i64)> {
    match execution {
        Execution::Native { started, ended, .. } => Some((started.unix_ns, ended.unix_ns)),
        Execution::Ran {
            started: Some(started),
            ended: Some(ended),
            ..
        } => Some((started.unix_ns, ended.unix_ns)),
        _ => None,
    }
}

/// What `vllm bench serve` gets in its environment only (never argv, never `execution.env`).
struct ChildSecrets<'a> {
    /// `OPENAI_API_KEY`: the API key, else the lease token.
    openai_api_key: Option<&'a str>,
    /// `SSL_CERT_FILE`: the private CA.
    ssl_cert_file: Option<&'a Path>,
}

/// The headers every native request carries: the API key as `Authorization: Bearer`, and the
/// lease token in [`secret::LEASE_HEADER`] beside it — or as `Authorization: Bearer` when there
/// is no key. Values are marked sensitive.
fn credentials(
    api_key: Option<&str>,
    lease_token: Option<&str>,
) -> Result<Vec<(hyper::header::HeaderName, hyper::header::HeaderValue)>> {
    use hyper::header::{AUTHORIZATION, HeaderName};
    let lease_cannot =
        |_| BadInput("the lease's token has characters an HTTP header cannot carry".to_owned());
    let mut out = Vec::new();
    match (api_key, lease_token) {
        (Some(key), token) => {
            out.push((
                AUTHORIZATION,
                secret::bearer(key).map_err(|_| {
                    BadInput("the API key has characters an HTTP header cannot carry".to_owned())
                })?,
            ));
            if let Some(token) = token {
                out.push((
                    HeaderName::from_static(secret::LEASE_HEADER),
                    secret::raw(token).map_err(lease_cannot)?,
                ));
            }
        }
        (None, Some(token)) => {
            out.push((AUTHORIZATION, secret::bearer(token).map_err(lease_cannot)?));
        }
        (None, None) => {}
    }
    Ok(out)
}

/// The `vllm` engine: the planned argv through the checked install's console script.
#[allow(clippy::too_many_arguments)]
async fn fire_vllm(
    plan: &PlanDir,
    install: vllm::Install,
    argv: Vec<String>,
    endpoint: &str,
    model: &str,
    tokenizer: String,
    secrets: ChildSecrets<'_>,
    scraping: &Scraping<'_>,
    evidence: &mut BTreeMap<String, Evidence>,
) -> Fired {
    let doc = &plan.doc;
    let result_path = plan.dir.join(RESULT_DIR).join(RESULT_FILE);
    let _ = std::fs::remove_file(&result_path);
    let mut run_argv = argv.clone();
    if let Some(first) = run_argv.first_mut() {
        *first = install.program.to_string_lossy().into_owned();
    }
    let mut env: Vec<(String, String)> = doc
        .bench
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // vllm bench serve's request functions send `Authorization: Bearer $OPENAI_API_KEY`
    // (`vllm/benchmarks/lib/endpoint_request_func.py`, `_get_headers`). Set for the child
    // only: `Execution::Ran.env` below is the plan's environment, without the token.
    if let Some(token) = secrets.openai_api_key {
        env.push(("OPENAI_API_KEY".to_owned(), token.to_owned()));
    }
    // OpenSSL (under aiohttp) reads its trust store from this file.
    if let Some(ca) = secrets.ssl_cert_file {
        env.push((
            "SSL_CERT_FILE".to_owned(),
            ca.to_string_lossy().into_owned(),
        ));
    }
    let (ran, scrapes) = scraping
        .child(
            "vllm bench serve",
            doc.timed_trace.lines,
            &run_argv,
            &plan.dir,
            &env,
        )
        .await;
    let execution = ran.execution(
        install.program.to_string_lossy().into_owned(),
        run_argv,
        doc.bench.env.clone(),
        evidence,
        |evidence| match std::fs::read(&result_path) {
            Ok(bytes) => {
                evidence.insert(block::RESULT.to_owned(), Evidence::of(&bytes));
                ResultFile::Kept {
                    block: block::RESULT.to_owned(),
                }
            }
            Err(e) => ResultFile::Absent {
                reason: format!("{}: {e}", result_path.display()),
            },
        },
    );
    let protocol = Protocol {
        client_version: Some(install.version.clone()),
        model: Some(model.to_owned()),
        tokenizer: Some(tokenizer),
        arrival: doc
            .bench
            .switch("--self-timed")
            .then(|| "self_timed".to_owned()),
        ignore_eos: Some(doc.bench.switch("--ignore-eos")),
        argv,
        ..planned_protocol(plan, Engine::VllmBenchServe, endpoint)
    };
    Fired {
        execution,
        protocol,
        scrapes,
        report: None,
    }
}

/// A peer tool's run, prepared before the receipt is opened: its own directory, the plan's
/// schedule in its input format, its configuration, and its environment (secrets apart).
struct PeerRun {
    engine: Engine,
    install: peer::Install,
    implementation: Implementation,
    dir: PathBuf,
    /// The tool's TMPDIR (removed after the run: it is loadproof's, made fresh for it).
    tmp: PathBuf,
    /// The argv as run (program first).
    argv: Vec<String>,
    /// The environment loadproof set, as recorded (no secret).
    env: Vec<(String, String)>,
    /// Secrets, in the child's environment only.
    secret_env: Vec<(String, String)>,
    /// The tokenizer as the caller named it.
    tokenizer: String,
    /// Blocks the run is given (its input, its configuration).
    blocks: Vec<(&'static str, Vec<u8>)>,
    /// What the receipt should say about how it ran.
    notes: Vec<String>,
}

impl PeerRun {
    #[allow(clippy::too_many_arguments)]
    fn prepare(
        install: peer::Install,
        plan: &PlanDir,
        endpoint: &str,
        model: &str,
        tokenizer: &str,
        args: &FireArgs,
        stated: &Stated,
        lease_token: Option<&str>,
    ) -> Result<PeerRun> {
        let api_key = stated.api_key.as_deref();
        let doc = &plan.doc;
        let rows =
            loadproof_core::plan::read_peer_rows(&plan.trace, &doc.timed_trace.sec_multiplier)
                .map_err(|e| BadInput(format!("{}: {e}", doc.timed_trace.file)))?;
        let dir = peer::run_dir(&plan.dir, install.tool)?;
        // AIPerf's ZMQ sockets live under TMPDIR and a Unix socket path has 107 bytes: a short
        // fresh directory of its own under the system's temporary directory.
        let tmp = peer::short_tmp(install.tool)?;
        let mut env: Vec<(String, String)> = vec![
            ("HF_HUB_OFFLINE".to_owned(), "1".to_owned()),
            ("TRANSFORMERS_OFFLINE".to_owned(), "1".to_owned()),
            // No user site-packages: only the install whose modules are bound is imported.
            ("PYTHONNOUSERSITE".to_owned(), "1".to_owned()),
            ("TMPDIR".to_owned(), tmp.to_string_lossy().into_owned()),
            (
                "AIPERF_DATASET_MMAP_CACHE_ENABLED".to_owned(),
                "false".to_owned(),
            ),
        ];
        let mut notes = vec![format!(
            "{} ran in {} (its input, configuration and outputs are there and in this receipt)",
            install.tool.label(),
            dir.display()
        )];
        let tool = install.tool;
        let local = Path::new(tokenizer);
        let is_local = local.join("tokenizer.json").is_file();
        if let Some(ca) = &stated.ca_file {
            env.push((
                "SSL_CERT_FILE".to_owned(),
                ca.to_string_lossy().into_owned(),
            ));
        }
        let mut secret_env = Vec::new();
        let chunk = doc.timed_trace.chunk_size;
        let (engine, argv, blocks) = match tool {
            peer::Tool::Aiperf => {
                let repo = if is_local {
                    let (hub, repo) = peer::tokenizer_cache(local, &dir.join("hf"))?;
                    env.push((
                        "HF_HUB_CACHE".to_owned(),
                        hub.to_string_lossy().into_owned(),
                    ));
                    notes.push(format!(
                        "the tokenizer {tokenizer} was given to AIPerf as the Hugging Face cache entry {repo} (it loads tokenizers offline only from the hub cache layout)"
                    ));
                    repo
                } else {
                    tokenizer.to_owned()
                };
                env.push((
                    "AIPERF_DATASET_MMAP_CACHE_ENABLED".to_owned(),
                    "false".to_owned(),
                ));
                if args.trust.insecure {
                    env.push(("AIPERF_HTTP_SSL_VERIFY".to_owned(), "false".to_owned()));
                }
                let (bearer, lease_header) = match (api_key, lease_token) {
                    (Some(key), token) => {
                        secret_env.push((peer::KEY_VAR.to_owned(), key.to_owned()));
                        if let Some(token) = token {
                            secret_env.push((peer::LEASE_VAR.to_owned(), token.to_owned()));
                        }
                        (true, token.is_some())
                    }
                    (None, Some(token)) => {
                        secret_env.push((peer::KEY_VAR.to_owned(), token.to_owned()));
                        (true, false)
                    }
                    (None, None) => (false, false),
                };
                if bearer {
                    notes.push(format!(
                        "AIPerf read its bearer secret from the environment variable its configuration names (${{{}}}): the secret is in no file and no argv",
                        peer::KEY_VAR
                    ));
                }
                let input = loadproof_core::plan::aiperf_input(&rows);
                let config = peer::aiperf_config(&peer::Given {
                    endpoint,
                    model,
                    tokenizer: &repo,
                    chunk,
                    bearer,
                    lease_header,
                })
                .map_err(BadInput)?;
                std::fs::write(dir.join(peer::AIPERF_INPUT_FILE), &input)?;
                std::fs::write(dir.join(peer::AIPERF_CONFIG_FILE), &config)?;
                let argv = vec![
                    install.program.to_string_lossy().into_owned(),
                    "profile".to_owned(),
                    "--config".to_owned(),
                    peer::AIPERF_CONFIG_FILE.to_owned(),
                ];
                (
                    Engine::Aiperf,
                    argv,
                    vec![(block::AIPERF_INPUT, input), (block::AIPERF_CONFIG, config)],
                )
            }
            peer::Tool::Guidellm => {
                let tokenizer_arg = if is_local {
                    local
                        .canonicalize()
                        .with_context(|| format!("resolving --tokenizer {tokenizer}"))?
                        .to_string_lossy()
                        .into_owned()
                } else {
                    tokenizer.to_owned()
                };
                // Its default poll interval loses the last record to a shutdown race (measured
                // here: 3 of 3 full-trace runs); 1 s lost none. Its default of 10 worker
                // processes is more than this machine's cores.
                let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
                env.push(("GUIDELLM__MP_POLL_INTERVAL".to_owned(), "1.0".to_owned()));
                env.push((
                    "GUIDELLM__MAX_WORKER_PROCESSES".to_owned(),
                    workers.to_string(),
                ));
                match (api_key, lease_token) {
                    (Some(_), Some(_)) => {
                        return Err(BadInput(
                            "--engine guidellm with both --api-key-env and a lease: GuideLLM sends one secret (its API key); give the key to the gate instead (`loadproof gate --upstream-api-key-env NAME`) or fire with --engine native or aiperf".to_owned(),
                        )
                        .into());
                    }
                    (Some(secret), None) | (None, Some(secret)) => {
                        secret_env.push((
                            "GUIDELLM__SPEC__BACKEND__API_KEY".to_owned(),
                            secret.to_owned(),
                        ));
                        notes.push(
                            "GuideLLM read its bearer secret from GUIDELLM__SPEC__BACKEND__API_KEY in its environment: the secret is in no file and no argv".to_owned(),
                        );
                    }
                    (None, None) => {}
                }
                let input = loadproof_core::plan::guidellm_input(&rows);
                std::fs::write(dir.join(peer::GUIDELLM_INPUT_FILE), &input)?;
                let mut argv = vec![install.program.to_string_lossy().into_owned()];
                argv.extend(
                    peer::guidellm_args(
                        &peer::Given {
                            endpoint,
                            model,
                            tokenizer: &tokenizer_arg,
                            chunk,
                            bearer: false,
                            lease_header: false,
                        },
                        args.trust.insecure,
                    )
                    .map_err(BadInput)?,
                );
                (Engine::Guidellm, argv, vec![(block::GUIDELLM_INPUT, input)])
            }
        };
        Ok(PeerRun {
            engine,
            implementation: peer::implementation(&install),
            install,
            dir,
            tmp,
            argv,
            env,
            secret_env,
            tokenizer: tokenizer.to_owned(),
            blocks,
            notes,
        })
    }

    fn program(&self) -> String {
        self.install.program.to_string_lossy().into_owned()
    }

    /// The protocol: the plan's, with the tool's own argv (its program by name, so two
    /// machines' runs of one plan share a key) and what its configuration fixes.
    fn protocol(&self, plan: &PlanDir, endpoint: &str, model: &str) -> Protocol {
        let mut argv = self.argv.clone();
        if let Some(first) = argv.first_mut() {
            *first = self.install.tool.label().to_ascii_lowercase();
        }
        Protocol {
            client_version: Some(self.install.version.clone()),
            backend: Some("openai".to_owned()),
            endpoint: Some("/v1/completions".to_owned()),
            model: Some(model.to_owned()),
            tokenizer: Some(self.tokenizer.clone()),
            arrival: Some("fixed_schedule".to_owned()),
            ignore_eos: Some(true),
            python_hash_seed: None,
            argv,
            ..planned_protocol(plan, self.engine, endpoint)
        }
    }
}

/// A peer engine: the prepared run through the checked install's console script.
async fn fire_peer(
    plan: &PlanDir,
    run: PeerRun,
    endpoint: &str,
    model: &str,
    scraping: &Scraping<'_>,
    evidence: &mut BTreeMap<String, Evidence>,
) -> Fired {
    let env: Vec<(String, String)> = run
        .env
        .iter()
        .chain(run.secret_env.iter())
        .cloned()
        .collect();
    let (ran, scrapes) = scraping
        .child(
            run.install.tool.label(),
            plan.doc.timed_trace.lines,
            &run.argv,
            &run.dir,
            &env,
        )
        .await;
    let _ = std::fs::remove_dir_all(&run.tmp);
    let execution = ran.execution(
        run.program(),
        run.argv.clone(),
        run.env.iter().cloned().collect(),
        evidence,
        |evidence| {
            let mut result = None;
            for (k, (name, path)) in peer::outputs(run.install.tool, &run.dir)
                .into_iter()
                .enumerate()
            {
                match std::fs::read(&path) {
                    Ok(bytes) => {
                        if let Some(j) = scraping.journal {
                            j.block(name, &bytes);
                        }
                        evidence.insert(name.to_owned(), Evidence::of(&bytes));
                        if k == 0 {
                            result = Some(ResultFile::Kept {
                                block: name.to_owned(),
                            });
                        }
                    }
                    Err(e) if k == 0 => {
                        result = Some(ResultFile::Absent {
                            reason: format!("{}: {e}", path.display()),
                        })
                    }
                    Err(_) => {}
                }
            }
            result.unwrap_or(ResultFile::Absent {
                reason: "no output was listed".to_owned(),
            })
        },
    );
    Fired {
        execution,
        protocol: run.protocol(plan, endpoint, model),
        scrapes,
        report: None,
    }
}

/// The `native` engine: loadproof's own open-loop client.
async fn fire_native(
    plan: &PlanDir,
    inputs: NativeInputs,
    endpoint: &str,
    model: &str,
    scraping: &Scraping<'_>,
    evidence: &mut BTreeMap<String, Evidence>,
    notes: &mut Vec<String>,
) -> Result<Fired> {
    // Ctrl-C from here on stops the run; the receipt is still written.
    let (interrupt_tx, mut interrupts) = tokio::sync::mpsc::unbounded_channel();
    let listener = tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if interrupt_tx.send(()).is_err() {
                break;
            }
        }
    });
    let template = Arc::new(native::Template::new(model));
    let mut inputs = inputs;
    inputs.options.journal = scraping.journal.cloned();
    let (outcome, scrapes) = scraping
        .around(native::run(
            Arc::clone(&inputs.schedule),
            Arc::clone(&inputs.vocab),
            template,
            endpoint,
            scraping.clock,
            &inputs.options,
            &mut interrupts,
        ))
        .await;
    listener.abort();
    let outcome = outcome.map_err(|e| BadInput(format!("--endpoint {endpoint}: {e}")))?;

    let summary = native::summarize(
        &outcome.records,
        inputs.schedule.offered_rate(),
        inputs.lag_bound_ns,
    );
    evidence.insert(block::EVENTS.to_owned(), Evidence::of(&outcome.log));
    if inputs.vocab.tokenizer().is_none() {
        notes.push(format!(
            "no --tokenizer: prompt tokens were drawn from {}; a real model needs ids of its own vocabulary (pass --tokenizer)",
            inputs.vocab.description()
        ));
    }
    notes.push(match inputs.schedule.sized_blocks() {
        Some(blocks) => format!(
            "prompt tokens: {} — built block for block from the plan's blocks.jsonl ({blocks} blocks at their own lengths, each (segment, id) always the same tokens), so the source's recorded sharing is replayed, which vllm bench serve's timed_trace (one chunk size per id) cannot; the tokens no block describes follow them as tokens of the request's own",
            native::SIZED_GENERATOR
        ),
        None => format!(
            "prompt tokens: {} (each hash id expands to the same {} tokens; a last partial block is a prefix of the full one), so token values differ from vllm bench serve's while lengths and prefix sharing are the same",
            native::GENERATOR,
            inputs.schedule.chunk
        ),
    });
    if endpoint
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    {
        notes.push(format!(
            "{} connections were opened before the schedule's zero (concurrent GET /health), so TLS handshakes do not fall on the schedule",
            native::WARM_CONNECTIONS
        ));
    }
    if outcome.interrupted {
        notes.push(format!(
            "interrupted (Ctrl-C): dispatching stopped, requests in flight had {} s to finish",
            native::GRACE.as_secs()
        ));
    }
    if let Some(note) = &summary.fell_behind {
        notes.push(note.clone());
    }
    let clean = !outcome.interrupted && summary.fell_behind.is_none();
    let mut text = format!("fire: native client\n{}", summary.text);
    if let Some(note) = &summary.fell_behind {
        text.push_str(&format!("\nINVALID: {note}"));
    }
    if outcome.interrupted {
        text.push_str("\ninterrupted (Ctrl-C)");
    }
    let protocol = Protocol {
        client_version: Some(format!("loadproof {}", env!("CARGO_PKG_VERSION"))),
        backend: Some("openai".to_owned()),
        endpoint: Some(native::PATH.to_owned()),
        model: Some(model.to_owned()),
        tokenizer: inputs.vocab.tokenizer().map(|p| p.display().to_string()),
        python_hash_seed: None,
        argv: native::Template::describe(model, &inputs.schedule, &inputs.vocab),
        ..planned_protocol(plan, Engine::Native, endpoint)
    };
    Ok(Fired {
        execution: Execution::Native {
            events: block::EVENTS.to_owned(),
            offered: outcome.records.len() as u64,
            started: outcome.started,
            ended: outcome.ended,
            interrupted: outcome.interrupted.then_some(Interruption::Signal),
            lag_bound_ns: inputs.lag_bound_ns,
        },
        protocol,
        scrapes,
        report: Some((text, clean)),
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

/// A receipt for a run that never fired: the plan is kept; the protocol is what was planned.
fn bare_receipt(
    args: &FireArgs,
    stated: &Stated,
    plan: &PlanDir,
    execution: Execution,
    evidence: BTreeMap<String, Evidence>,
    mut notes: Vec<String>,
) -> Receipt {
    notes.push("nothing was fired: see the execution for why".to_owned());
    let engine = match args.engine {
        EngineArg::Vllm => Engine::VllmBenchServe,
        EngineArg::Native => Engine::Native,
        EngineArg::Aiperf => Engine::Aiperf,
        EngineArg::Guidellm => Engine::Guidellm,
    };
    let mut protocol = Protocol {
        model: args.model.clone(),
        tokenizer: args.tokenizer.clone(),
        tls: stated.tls.clone(),
        ..planned_protocol(plan, engine, args.endpoint.trim_end_matches('/'))
    };
    if engine == Engine::Native {
        protocol.client_version = Some(format!("loadproof {}", env!("CARGO_PKG_VERSION")));
        protocol.python_hash_seed = None;
    }
    let protocol = protocol.sealed();
    Receipt {
        schema: RECEIPT_SCHEMA.to_owned(),
        protocol,
        subject: stated.subject.clone(),
        provenance: stated.provenance.clone(),
        execution,
        scrapes: Vec::new(),
        evidence,
        notes,
        lease: None,
        implementation: None,
        derived: None,
        stream: None,
        packed: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::sim_info;

    #[test]
    fn sim_info_labels_are_read_with_their_escapes() {
        let body = "vllm:x 1.0\nloadproof_sim_info{gpu_sku=\"a \\\"b\\\" c\",revision=\"x\\\\y\",version=\"0.1.0\"} 1.0\n";
        let labels = sim_info(body).unwrap();
        assert_eq!(labels["gpu_sku"], "a \"b\" c");
        assert_eq!(labels["revision"], "x\\y");
        assert_eq!(labels["version"], "0.1.0");
        assert_eq!(
            sim_info("loadproof_sim_info 1.0\n").map(|l| l.len()),
            Some(0)
        );
        assert_eq!(sim_info("vllm:x 1.0\n"), None);
        assert_eq!(sim_info("loadproof_sim_info{version=\"unterminated"), None);
    }
}
