//! `loadproof sim`: a local OpenAI-compatible LLM-serving **simulator** for the quick start,
//! demos and fast tests. It is not vLLM and runs no model: it streams placeholder tokens on
//! the schedule of a simple continuous-batching model (`model.rs`), serves `/metrics` with
//! vLLM's metric names (`metrics.rs`, plus `loadproof_sim_info` so every scrape says it is a
//! simulator), injects faults on request (`faults.rs`) and grants exclusive leases
//! (`lease.rs`).
//!
//! Routes: `POST /v1/completions` (streaming or not; `api.rs`), `GET /metrics`,
//! `GET /health`, `GET /v1/models`, `POST /loadproof/lease`. HTTP/1.1 only (hyper),
//! keep-alive, `TCP_NODELAY`. While a lease holds, completions without its bearer token are
//! refused with 423; every other route stays open.
//!
//! Threads: a tokio multi-thread runtime; one task per connection, one engine task. A request
//! handler validates the body, submits it to the engine over a channel and gets back a
//! per-request channel of tokens, which its response body turns into SSE chunks (every token
//! ready at once goes out in one write).

mod api;
mod dcgm;
mod faults;
pub(crate) mod lease;
mod metrics;
mod model;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::mpsc;

use crate::args::SimArgs;
use faults::{FaultKind, FaultSpec};
use lease::{Lessor, LessorConfig};
use metrics::{EngineMetrics, ExpositionInfo, LeaseGauges};
use model::{EngineHandle, ModelConfig, Submission};

/// Largest request body read (a 128k-token prompt as JSON ids is ~1 MB).
const MAX_BODY_BYTES: usize = 64 << 20;

/// Largest lease request body read.
const MAX_LEASE_BODY_BYTES: usize = 16 << 10;

/// What the simulator calls itself (the lease issuer, the engine axis of its subject).
const ENGINE: &str = "loadproof sim";

/// Runs the simulator until SIGINT or SIGTERM.
pub fn run(args: &SimArgs) -> anyhow::Result<()> {
    let cfg = SimConfig::from_args(args)?;
    crate::serve::on_runtime(serve(cfg))
}

/// The resolved, validated configuration (stage two of argument handling).
#[derive(Clone)]
struct SimConfig {
    addr: SocketAddr,
    model: String,
    engine: ModelConfig,
    faults: Vec<FaultSpec>,
    model_revision: String,
    gpu_sku: String,
    api_key: Option<String>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// The key every lease is signed with (`--signing-key`).
    signer: Option<loadproof_core::signing::SecretKey>,
    /// The settings a knob can name, as `loadproof_sim_config_info` states them.
    settings: Vec<(String, String)>,
}

impl SimConfig {
    fn from_args(args: &SimArgs) -> anyhow::Result<Self> {
        let ip = match args.host.as_deref() {
            None => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Some("localhost") => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Some(host) => host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .with_context(|| format!("--host {host:?} is not an IP address"))?,
        };
        if args.max_num_seqs == 0 {
            bail!("--max-num-seqs must be at least 1");
        }
        if !(args.prefill_tokens_per_s.is_finite() && args.prefill_tokens_per_s > 0.0) {
            bail!("--prefill-tokens-per-s must be a positive number");
        }
        for (flag, ms) in [
            ("--decode-step-ms", args.decode_step_ms),
            ("--decode-ms-per-seq", args.decode_ms_per_seq),
        ] {
            if !(ms.is_finite() && (0.0..=3_600_000.0).contains(&ms)) {
                bail!("{flag} must be a number of milliseconds from 0 to 3600000, got {ms}");
            }
        }
        if args.kv_capacity_tokens == 0 {
            bail!("--kv-capacity-tokens must be at least 1");
        }
        let faults = args
            .fault
            .iter()
            .map(|s| FaultSpec::parse(s))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(SimConfig {
            addr: SocketAddr::new(ip, args.port),
            model: args.model.clone(),
            engine: ModelConfig {
                max_num_seqs: usize::try_from(args.max_num_seqs).unwrap_or(usize::MAX),
                prefill_tokens_per_s: args.prefill_tokens_per_s,
                decode_step_secs: args.decode_step_ms / 1000.0,
                decode_secs_per_seq: args.decode_ms_per_seq / 1000.0,
                kv_capacity_tokens: args.kv_capacity_tokens,
            },
            faults,
            model_revision: args.model_revision.clone(),
            gpu_sku: args.gpu_sku.clone(),
            api_key: args
                .api_key_env
                .as_deref()
                .map(|name| crate::secret::from_env("--api-key-env", name))
                .transpose()?
                .map(|key| format!("Bearer {key}")),
            tls: args.tls.acceptor()?,
            signer: args
                .signing_key
                .as_deref()
                .map(crate::key_cmd::read_secret)
                .transpose()?,
            settings: vec![
                (
                    "decode_ms_per_seq".to_owned(),
                    args.decode_ms_per_seq.to_string(),
                ),
                ("decode_step_ms".to_owned(), args.decode_step_ms.to_string()),
                (
                    "kv_capacity_tokens".to_owned(),
                    args.kv_capacity_tokens.to_string(),
                ),
                ("max_num_seqs".to_owned(), args.max_num_seqs.to_string()),
                (
                    "prefill_tokens_per_s".to_owned(),
                    args.prefill_tokens_per_s.to_string(),
                ),
            ],
        })
    }
}

/// What every request handler shares.
struct App {
    model: String,
    kv_capacity_tokens: u64,
    faults: Vec<FaultSpec>,
    engine: EngineHandle,
    metrics: Arc<Mutex<EngineMetrics>>,
    exposition: ExpositionInfo,
    start_unix_secs: u64,
    /// Valid completion requests accepted so far (fault numbering).
    accepted: AtomicU64,
    /// The exclusive lease, when one holds.
    lessor: Lessor,
    /// `Bearer <key>` every /v1 request must carry (`--api-key-env`).
    api_key: Option<String>,
}

async fn serve(cfg: SimConfig) -> anyhow::Result<()> {
    let (listener, local) = crate::serve::bind(cfg.addr).await?;
    let scheme = crate::serve::scheme(cfg.tls.as_ref());

    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let metrics = Arc::new(Mutex::new(EngineMetrics::new()));
    let (engine_tx, engine_rx) = mpsc::unbounded_channel();
    tokio::spawn(model::run(
        cfg.engine.clone(),
        engine_rx,
        Arc::clone(&metrics),
    ));
    let app = Arc::new(App {
        model: cfg.model.clone(),
        kv_capacity_tokens: cfg.engine.kv_capacity_tokens,
        faults: cfg.faults.clone(),
        engine: engine_tx,
        metrics,
        exposition: ExpositionInfo {
            model_name: cfg.model.clone(),
            kv_capacity_tokens: cfg.engine.kv_capacity_tokens,
            start_unix_secs: start.as_secs_f64(),
            version: env!("CARGO_PKG_VERSION"),
            revision: cfg.model_revision.clone(),
            gpu_sku: cfg.gpu_sku.clone(),
            settings: cfg.settings.clone(),
        },
        start_unix_secs: start.as_secs(),
        accepted: AtomicU64::new(0),
        api_key: cfg.api_key.clone(),
        lessor: Lessor::new(LessorConfig {
            issuer: format!("{ENGINE} {}", env!("CARGO_PKG_VERSION")),
            subject: [
                ("model", cfg.model.as_str()),
                ("engine", ENGINE),
                ("engine_version", env!("CARGO_PKG_VERSION")),
                ("model_revision", cfg.model_revision.as_str()),
                ("gpu_sku", cfg.gpu_sku.as_str()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
            fallback_route: format!("{scheme}://{local}"),
        })
        .signing_with(cfg.signer.clone()),
    });

    if !local.ip().is_loopback() {
        eprintln!(
            "loadproof sim: warning: {} is not a loopback address; anyone who can reach it can \
             use the simulator",
            local.ip()
        );
    }
    let ready = format!("loadproof sim listening on {scheme}://{local} (simulator, not vLLM)");
    let signal_name = crate::serve::until_signal(
        "loadproof sim",
        &ready,
        listener,
        cfg.tls.clone(),
        app,
        handle,
    )
    .await?;
    eprintln!("loadproof sim: {signal_name}, shutting down");
    Ok(())
}

/// The error that makes hyper close a connection without writing a response.
#[derive(Debug)]
struct CloseConnection;

impl std::fmt::Display for CloseConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed without a response")
    }
}

impl std::error::Error for CloseConnection {}

async fn handle(
    app: Arc<App>,
    req: Request<Incoming>,
) -> Result<Response<SimBody>, CloseConnection> {
    let path = req.uri().path();
    // As vLLM started with `--api-key`: every /v1 route needs the key; /metrics, /health and
    // the lessor stay open.
    if let Some(key) = &app.api_key
        && path.starts_with("/v1")
        && !req
            .headers()
            .get_all(AUTHORIZATION)
            .iter()
            .any(|v| v.as_bytes() == key.as_bytes())
    {
        return Ok(full(
            StatusCode::UNAUTHORIZED,
            "application/json",
            r#"{"error":"Unauthorized"}"#.to_owned(),
        ));
    }
    let known = matches!(
        path,
        "/v1/completions"
            | "/metrics"
            | "/dcgm/metrics"
            | "/health"
            | "/v1/models"
            | "/loadproof/lease"
    );
    match (req.method(), path) {
        (&Method::POST, "/v1/completions") => completions(app, req).await,
        (&Method::POST, "/loadproof/lease") => grant_lease(app, req).await,
        (&Method::DELETE, "/loadproof/lease") => {
            let credential = app.lessor.credential(req.headers());
            Ok(
                match app.lessor.release(credential.as_deref(), unix_ns_now()) {
                    Ok(released) => {
                        let mut response = full(StatusCode::OK, "application/json", released.json);
                        if let Some(account) = released.account {
                            response
                                .headers_mut()
                                .insert(lease::LEASE_ACCOUNT_HEADER, account);
                        }
                        response
                    }
                    Err(refusal) => full(
                        StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_REQUEST),
                        "application/json",
                        refusal.body,
                    ),
                },
            )
        }
        (&Method::GET, "/metrics") => {
            let lease = LeaseGauges {
                active: app.lessor.active_id(unix_ns_now()),
                refused: app.lessor.refused(),
            };
            let text = {
                let m = model::lock(&app.metrics);
                metrics::render(&m, &app.exposition, lease)
            };
            // The holder scrapes with the lease's token: its bodies are numbered.
            let credential = app.lessor.credential(req.headers());
            let signed = app.lessor.sign_scrape(
                "/metrics",
                text.as_bytes(),
                unix_ns_now(),
                credential.as_deref(),
            );
            let mut response = full(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                text,
            );
            if let Some(signed) = signed {
                response
                    .headers_mut()
                    .insert(lease::SCRAPE_SIGNED_HEADER, signed);
            }
            Ok(response)
        }
        (&Method::GET, "/dcgm/metrics") => {
            let text = {
                let m = model::lock(&app.metrics);
                dcgm::render(&m, &app.exposition)
            };
            Ok(full(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                text,
            ))
        }
        (&Method::GET, "/health") => Ok(full(StatusCode::OK, "text/plain", String::new())),
        (&Method::GET, "/v1/models") => Ok(full(
            StatusCode::OK,
            "application/json",
            api::models_response(&app.model, app.start_unix_secs, app.kv_capacity_tokens),
        )),
        _ if known => Ok(full(
            StatusCode::METHOD_NOT_ALLOWED,
            "application/json",
            r#"{"detail":"Method Not Allowed"}"#.to_string(),
        )),
        _ => Ok(full(
            StatusCode::NOT_FOUND,
            "application/json",
            r#"{"detail":"Not Found"}"#.to_string(),
        )),
    }
}

/// Unix ns now (the lessor's clock).
fn unix_ns_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `POST /loadproof/lease`: a lease JSON (200), or 400 / 409 with a JSON error.
async fn grant_lease(
    app: Arc<App>,
    req: Request<Incoming>,
) -> Result<Response<SimBody>, CloseConnection> {
    let host = req
        .headers()
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = match read_body(req.into_body(), MAX_LEASE_BODY_BYTES).await? {
        Ok(body) => body,
        Err(too_large) => return Ok(too_large),
    };
    match app.lessor.grant(&body, host.as_deref(), unix_ns_now()) {
        Ok(granted) => {
            let mut response = full(StatusCode::OK, "application/json", granted.json);
            if let Ok(token) = HeaderValue::from_str(&granted.token) {
                response.headers_mut().insert(lease::TOKEN_HEADER, token);
            }
            if let Some(signed) = granted
                .signed
                .as_deref()
                .and_then(|s| HeaderValue::from_str(s).ok())
            {
                response.headers_mut().insert(lease::SIGNED_HEADER, signed);
            }
            Ok(response)
        }
        Err(refusal) => Ok(full(
            StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_REQUEST),
            "application/json",
            refusal.body,
        )),
    }
}

/// A request body up to `limit` bytes; a larger one is answered 413 (the inner `Err`). A client
/// that goes away mid-body has no one to answer: the connection closes.
async fn read_body(
    body: Incoming,
    limit: usize,
) -> Result<Result<bytes::Bytes, Response<SimBody>>, CloseConnection> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(Ok(collected.to_bytes())),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            Ok(Err(error_response(&api::ApiError {
                status: 413,
                err_type: "BadRequestError",
                param: Some("body"),
                message: format!("the body is larger than {limit} bytes"),
            })))
        }
        Err(_) => Err(CloseConnection),
    }
}

async fn completions(
    app: Arc<App>,
    req: Request<Incoming>,
) -> Result<Response<SimBody>, CloseConnection> {
    let arrival = Instant::now();
    // A lease keeps out everyone without its token, before the body is even read.
    let credential = app.lessor.credential(req.headers());
    let tally = match app.lessor.admit(credential.as_deref(), unix_ns_now()) {
        Ok(tally) => tally,
        Err(locked) => {
            return Ok(error_response(&api::ApiError {
                status: 423,
                err_type: "Locked",
                param: None,
                message: format!(
                    "a lease held by {:?} keeps this endpoint until {} (Unix ns): /v1/completions needs `Authorization: Bearer <the lease token>` (or, beside an API key, `x-loadproof-lease-token: <the lease token>`)",
                    locked.holder, locked.until_unix_ns
                ),
            }));
        }
    };
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 256)
        .map(str::to_owned);
    let body = match read_body(req.into_body(), MAX_BODY_BYTES).await? {
        Ok(body) => body,
        Err(too_large) => return Ok(too_large),
    };
    let request = match api::parse_completion(&body, &app.model, app.kv_capacity_tokens) {
        Ok(r) => r,
        Err(err) => return Ok(error_response(&err)),
    };

    let number = app.accepted.fetch_add(1, Ordering::Relaxed) + 1;
    let fault = faults::fault_for(&app.faults, number);
    let stop_after = match fault {
        Some(FaultKind::Refuse) => return Err(CloseConnection),
        Some(FaultKind::Http500) => {
            return Ok(error_response(&api::ApiError {
                status: 500,
                err_type: "InternalServerError",
                param: None,
                message: format!("injected fault: http500 (request {number})"),
            }));
        }
        Some(FaultKind::Cut) => request.max_tokens / 2,
        Some(FaultKind::Stall) => 1,
        None => request.max_tokens,
    };

    let (tokens_tx, tokens_rx) = mpsc::unbounded_channel();
    let submission = Submission {
        prompt_tokens: request.prompt_tokens,
        max_tokens: request.max_tokens,
        stop_after,
        faulted: fault.is_some(),
        arrival,
        tokens: tokens_tx,
    };
    if app.engine.send(submission).is_err() {
        // The engine is gone: the process is shutting down.
        return Err(CloseConnection);
    }

    let id = match request_id {
        Some(rid) => format!("cmpl-{rid}"),
        None => format!("cmpl-{number:032x}"),
    };
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let head = api::response_head(&id, created, &app.model);

    if request.stream {
        let body = SseBody {
            tokens: tokens_rx,
            head,
            emitted: 0,
            max_tokens: request.max_tokens,
            prompt_tokens: request.prompt_tokens,
            include_usage: request.include_usage,
            fault,
            state: SseState::Streaming,
            tally,
        };
        let mut response = Response::new(SimBody::Sse(Box::new(body)));
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream; charset=utf-8"),
        );
        return Ok(response);
    }

    let mut tokens_rx = tokens_rx;
    let mut emitted = 0u64;
    while tokens_rx.recv().await.is_some() {
        emitted += 1;
    }
    if emitted >= request.max_tokens {
        if let Some(tally) = &tally {
            tally.count(request.prompt_tokens, emitted);
        }
        return Ok(full(
            StatusCode::OK,
            "application/json",
            api::full_response(&head, request.prompt_tokens, emitted),
        ));
    }
    match fault {
        // Hang until the client gives up (hyper drops this future when it does).
        Some(FaultKind::Stall) => std::future::pending().await,
        _ => Err(CloseConnection),
    }
}

fn full(status: StatusCode, content_type: &'static str, body: String) -> Response<SimBody> {
    let bytes = if body.is_empty() {
        None
    } else {
        Some(Bytes::from(body))
    };
    let mut response = Response::new(SimBody::Full(bytes));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn error_response(err: &api::ApiError) -> Response<SimBody> {
    let status = StatusCode::from_u16(err.status).unwrap_or(StatusCode::BAD_REQUEST);
    full(status, "application/json", err.body())
}

/// A response body: a whole buffer, or a token stream.
enum SimBody {
    Full(Option<Bytes>),
    Sse(Box<SseBody>),
}

/// An SSE completion stream fed by the engine's per-request token channel.
struct SseBody {
    tokens: mpsc::UnboundedReceiver<()>,
    head: String,
    emitted: u64,
    max_tokens: u64,
    prompt_tokens: u64,
    include_usage: bool,
    fault: Option<FaultKind>,
    state: SseState,
    /// The lease's tally when the request was admitted under one: the sim counts its own
    /// tokens for every response it finishes (usage chunk asked for or not); a cut or stalled
    /// one is left uncounted, as a gate would leave it.
    tally: Option<Arc<lease::Tally>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SseState {
    Streaming,
    /// The last data went out; yield once so hyper flushes it, then fail the body.
    CutAfterFlush,
    /// Fail the body now: hyper closes the connection without ending the chunked body.
    CutNow,
    /// Nothing more will be sent; the connection stays open until the client leaves.
    Stalled,
    Done,
}

/// The body error that aborts a cut stream.
#[derive(Debug)]
struct StreamCut;

impl std::fmt::Display for StreamCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stream cut")
    }
}

impl std::error::Error for StreamCut {}

impl Body for SimBody {
    type Data = Bytes;
    type Error = StreamCut;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        match self.get_mut() {
            SimBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            SimBody::Sse(sse) => sse.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            SimBody::Full(bytes) => bytes.is_none(),
            SimBody::Sse(sse) => sse.state == SseState::Done,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            SimBody::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            SimBody::Sse(_) => SizeHint::default(),
        }
    }
}

impl SseBody {
    fn poll_frame(
        &mut self,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        match self.state {
            SseState::Done => return Poll::Ready(None),
            SseState::Stalled => return Poll::Pending,
            SseState::CutAfterFlush => {
                self.state = SseState::CutNow;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            SseState::CutNow => {
                self.state = SseState::Done;
                return Poll::Ready(Some(Err(StreamCut)));
            }
            SseState::Streaming => {}
        }
        let mut out = String::new();
        loop {
            match self.tokens.poll_recv(cx) {
                Poll::Ready(Some(())) => {
                    let i = self.emitted;
                    self.emitted += 1;
                    api::push_token_chunk(&mut out, &self.head, i, self.emitted == self.max_tokens);
                }
                Poll::Ready(None) => {
                    if self.emitted >= self.max_tokens {
                        if self.include_usage {
                            api::push_usage_chunk(
                                &mut out,
                                &self.head,
                                self.prompt_tokens,
                                self.emitted,
                            );
                        }
                        out.push_str(api::DONE);
                        self.state = SseState::Done;
                        // Counted before the last bytes go out: the holder cannot have read
                        // them, and released the lease, before the tally holds them.
                        if let Some(tally) = &self.tally {
                            tally.count(self.prompt_tokens, self.emitted);
                        }
                    } else if self.fault == Some(FaultKind::Stall) {
                        self.state = SseState::Stalled;
                    } else {
                        // A cut fault (or the engine went away): end abruptly, after what is
                        // already written has been flushed.
                        self.state = SseState::CutAfterFlush;
                        if out.is_empty() {
                            return self.poll_frame(cx);
                        }
                    }
                    break;
                }
                Poll::Pending => break,
            }
        }
        if out.is_empty() {
            Poll::Pending
        } else {
            Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
        }
    }
}
