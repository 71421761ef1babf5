//! `loadproof gate`: a lease-enforcing reverse proxy in front of a serving engine (vLLM).
//!
//! A real vLLM server grants no lease, so no run against it could have an isolated window. The
//! gateway is the lessor it lacks: it forwards every request to `--upstream` (method, path and
//! query, headers minus hop-by-hop ones, the body streamed both ways, an SSE stream chunk by
//! chunk) and grants `loadproof.lease/v1` leases itself at `POST /loadproof/lease`, one at a
//! time, with the sim's [`Lessor`] under the gateway's own [`Terms`]. The lease's subject is
//! read back from the upstream at grant time (`readback.rs`); its route is the gateway's URL as
//! the client addressed it; its exclusion says exactly what the gateway does and what it cannot
//! do (traffic that reaches the upstream directly is not kept out).
//!
//! While a lease holds, every request without `Authorization: Bearer <token>` is refused with
//! 423 and counted, except `GET /metrics`, `/health`, `/version` and `/v1/models`; a request
//! with the token is forwarded without it (the upstream never sees the gateway's token).
//! `GET /metrics` is the upstream's body, byte for byte, with the gateway's own lines appended
//! (`metrics.rs`).
//!
//! Threads: a tokio multi-thread runtime, one task per connection, hyper's HTTP/1.1 server
//! and its pooled client (`proxy.rs`).

mod metrics;
mod proxy;
mod readback;
mod token;
mod usage;

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HOST, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use crate::args::GateArgs;
use crate::sim::lease::{Lessor, LessorConfig, TOKEN_HEADER, Terms};
use proxy::{GateBody, Upstream};
use readback::Stated;

/// Runs the gateway until SIGINT or SIGTERM.
pub fn run(args: &GateArgs) -> anyhow::Result<()> {
    let cfg = GateConfig::from_args(args)?;
    crate::serve::on_runtime(serve(cfg))
}

/// What the gateway calls itself in its leases and its `/metrics` lines.
const NAME: &str = "loadproof gate";

/// How long the gateway waits for the upstream's `/metrics` before answering 504 (unsigned,
/// unnumbered), well inside `fire`'s scrape timeout (10 s). A body the lessor numbers must
/// reach the holder before the holder gives up on it and scrapes again: one served after the
/// holder's next scrape would carry a number after that scrape's, while the receipt holds the
/// failure before it, where the audit looks for the number a failure stands for (the
/// adversarial review: failed scrapes stand only for numbers where they sit).
const METRICS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Largest lease request body read.
const MAX_LEASE_BODY_BYTES: usize = 16 << 10;

/// `GET` paths that pass whatever lease holds: anyone may see the server and its lease.
const OPEN_PATHS: [&str; 4] = ["/metrics", "/health", "/version", "/v1/models"];

/// The resolved, validated configuration (stage two of argument handling). No `Debug`: it
/// holds the upstream's API key.
#[derive(Clone)]
struct GateConfig {
    addr: SocketAddr,
    upstream: Upstream,
    stated: Stated,
    /// The upstream's key as a sensitive `Bearer` header value.
    upstream_key: Option<HeaderValue>,
    upstream_tls: crate::tls::ClientTls,
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// The key every lease is signed with (`--signing-key`).
    signer: Option<loadproof_core::signing::SecretKey>,
}

impl GateConfig {
    fn from_args(args: &GateArgs) -> anyhow::Result<Self> {
        let ip = match args.host.as_deref() {
            None | Some("localhost") => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Some(host) => host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .with_context(|| format!("--host {host:?} is not an IP address"))?,
        };
        let upstream = Upstream::parse(&args.upstream)
            .with_context(|| format!("--upstream {:?}", args.upstream))?;
        for (flag, value) in [
            ("--model-revision", &args.model_revision),
            ("--gpu-sku", &args.gpu_sku),
        ] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                bail!("{flag} must not be empty (leave it out to state nothing)");
            }
        }
        let upstream_key = args
            .upstream_api_key_env
            .as_deref()
            .map(|name| crate::secret::from_env("--upstream-api-key-env", name))
            .transpose()?
            .map(|key| {
                crate::secret::bearer(&key).map_err(|()| {
                    anyhow::anyhow!("--upstream-api-key-env: the key cannot be sent in a header")
                })
            })
            .transpose()?;
        Ok(GateConfig {
            addr: SocketAddr::new(ip, args.port),
            upstream_key,
            upstream_tls: args.trust.trust().client()?,
            tls: args.tls.acceptor()?,
            signer: args
                .signing_key
                .as_deref()
                .map(crate::key_cmd::read_secret)
                .transpose()?,
            upstream,
            stated: Stated {
                model_revision: args.model_revision.clone(),
                gpu_sku: args.gpu_sku.clone(),
            },
        })
    }
}

/// What every request handler shares.
struct App {
    upstream: Upstream,
    /// How an `https://` upstream's certificate is checked, as `/metrics` states it.
    upstream_tls: Option<&'static str>,
    stated: Stated,
    client: proxy::Client,
    lessor: Lessor,
    /// This process's id in [`proxy::LOOP_HEADER`].
    gate_id: String,
}

/// The lease's exclusion: what the gateway does while it holds, and what it does not.
fn exclusion(upstream: &str) -> String {
    format!(
        "while this lease holds (from_unix_ns <= now < until_unix_ns on the gateway's clock), \
         loadproof gate refuses with 423 Locked every request through it (the lease's route) that \
         does not carry `Authorization: Bearer <token>` (or `x-loadproof-lease-token: <token>`), except GET /metrics, /health, /version \
         and /v1/models, and counts each in loadproof_gate_lease_refused_total; requests with the \
         token are forwarded to {upstream} without it; a second lease is refused with 409 \
         Conflict; loadproof_gate_lease_active names it (lease_id) in /metrics. Traffic that reaches {upstream} \
         directly, not through this gateway, is not excluded by this lease: only the engine's \
         counters agreeing with the client's tokens can show there was none"
    )
}

async fn serve(cfg: GateConfig) -> anyhow::Result<()> {
    let (listener, local) = crate::serve::bind(cfg.addr).await?;
    let scheme = crate::serve::scheme(cfg.tls.as_ref());

    let upstream = cfg.upstream.base().to_owned();
    if cfg.upstream.is_address(local) {
        bail!(
            "--upstream {upstream} is this gateway's own address ({scheme}://{local}): every request would come back to it"
        );
    }
    let upstream_tls = cfg.upstream.base().starts_with("https://").then_some(
        match cfg.upstream_tls.record.verify {
            loadproof_core::receipt::TlsVerify::System => "system",
            loadproof_core::receipt::TlsVerify::CaCert => "ca_cert",
            loadproof_core::receipt::TlsVerify::Insecure => "insecure",
        },
    );
    let app = Arc::new(App {
        upstream_tls,
        upstream: cfg.upstream,
        stated: cfg.stated,
        client: proxy::client(&cfg.upstream_tls, cfg.upstream_key.clone()),
        lessor: Lessor::with_terms(
            LessorConfig {
                issuer: format!("{NAME} {} for {upstream}", env!("CARGO_PKG_VERSION")),
                // Each lease is bound to the subject read back when it is granted.
                subject: Default::default(),
                fallback_route: format!("{scheme}://{local}"),
            },
            Terms {
                id_prefix: "gate-lease",
                exclusion: exclusion(&upstream),
                readback: "loadproof_gate_lease_active",
            },
        )
        .signing_with(cfg.signer.clone()),
        gate_id: crate::sim::lease::fresh_id(),
    });

    if !local.ip().is_loopback() {
        eprintln!(
            "{NAME}: warning: {} is not a loopback address; anyone who can reach it can use \
             {upstream} through it",
            local.ip()
        );
    }
    let ready = format!("{NAME} listening on {scheme}://{local} (forwarding to {upstream})");
    let signal_name =
        crate::serve::until_signal(NAME, &ready, listener, cfg.tls, app, handle).await?;
    eprintln!("{NAME}: {signal_name}, shutting down");
    Ok(())
}

async fn handle(app: Arc<App>, req: Request<Incoming>) -> Result<Response<GateBody>, Infallible> {
    if req
        .headers()
        .get_all(proxy::LOOP_HEADER)
        .iter()
        .any(|v| v.as_bytes() == app.gate_id.as_bytes())
    {
        return Ok(proxy::error(
            StatusCode::LOOP_DETECTED,
            "LoopDetected",
            format!(
                "this request already passed through this gateway: its upstream {} leads back to it",
                app.upstream.base()
            ),
        ));
    }
    let path = req.uri().path().to_owned();
    let path = path.as_str();
    if path == LEASE_PATH {
        return Ok(match *req.method() {
            Method::POST => grant_lease(&app, req).await,
            Method::DELETE => {
                let credential = app.lessor.credential(req.headers());
                match app.lessor.release(credential.as_deref(), unix_ns_now()) {
                    Ok(released) => {
                        let mut response = proxy::full(
                            StatusCode::OK,
                            "application/json",
                            Bytes::from(released.json),
                        );
                        if let Some(account) = released.account {
                            response
                                .headers_mut()
                                .insert(crate::sim::lease::LEASE_ACCOUNT_HEADER, account);
                        }
                        response
                    }
                    Err(refusal) => refused(refusal),
                }
            }
            _ => proxy::error(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                format!(
                    "{LEASE_PATH} takes POST {{\"holder\", \"seconds\"}}, or DELETE with the lease's token"
                ),
            ),
        });
    }
    // The gateway's token is its own: the upstream never sees it, wherever a client put it
    // (checked first: such a request is refused whatever the lease says).
    let token = app.lessor.last_token();
    if let Some(place) = token
        .as_deref()
        .and_then(|t| token::found_outside_authorization(&req, t))
    {
        return Ok(token::refusal(&place));
    }
    let open = req.method() == Method::GET && OPEN_PATHS.contains(&path);
    // Every credential header counts: the one that carries the token admits the request (a
    // second header must not hide it, nor let it through to the upstream).
    let credential = app.lessor.credential(req.headers());
    let admitted = if open {
        Ok(None)
    } else {
        app.lessor.admit(credential.as_deref(), unix_ns_now())
    };
    let tally = match admitted {
        Ok(tally) => tally,
        Err(locked) => {
            return Ok(proxy::error(
                StatusCode::LOCKED,
                "Locked",
                format!(
                    "a lease held by {:?} keeps this gateway until {} (Unix ns): requests need \
                 `Authorization: Bearer <the lease token>` (or `x-loadproof-lease-token: <the \
                 lease token>` beside an API key)",
                    locked.holder, locked.until_unix_ns
                ),
            ));
        }
    };
    if token.is_some()
        && let Some(encoding) = req
            .headers()
            .get(hyper::header::CONTENT_ENCODING)
            .filter(|e| !e.as_bytes().eq_ignore_ascii_case(b"identity"))
    {
        return Ok(proxy::error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "BadRequestError",
            format!(
                "the gateway reads request bodies to keep its lease token from the upstream; a body with content-encoding {:?} cannot be checked, so it is not forwarded",
                String::from_utf8_lossy(encoding.as_bytes())
            ),
        ));
    }
    let (mut parts, body) = req.into_parts();
    if let Some(t) = token.as_deref() {
        token::remove_bearer(&mut parts.headers, t);
    }
    let body = match Limited::new(body, MAX_FORWARD_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            return Ok(proxy::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "BadRequestError",
                format!("the body is larger than {MAX_FORWARD_BODY_BYTES} bytes"),
            ));
        }
        Err(err) => {
            return Ok(proxy::error(
                StatusCode::BAD_REQUEST,
                "BadRequestError",
                format!("reading the body: {err}"),
            ));
        }
    };
    if token
        .as_deref()
        .is_some_and(|t| token::in_body(&body, t.as_bytes()))
    {
        return Ok(token::refusal("the request body"));
    }
    let req = Request::from_parts(parts, Full::new(body));
    if req.method() == Method::GET && path == "/metrics" {
        let active = app.lessor.active_id(unix_ns_now());
        let lines = metrics::GateLines {
            upstream: app.upstream.base(),
            version: env!("CARGO_PKG_VERSION"),
            model_revision: app.stated.model_revision.as_deref(),
            gpu_sku: app.stated.gpu_sku.as_deref(),
            lease_active: active.as_deref(),
            lease_refused: app.lessor.refused(),
            upstream_tls: app.upstream_tls,
        };
        // The holder scrapes with the lease's token (removed before the upstream sees it): its
        // bodies are numbered.
        let sign = |body: &[u8]| {
            app.lessor
                .sign_scrape("/metrics", body, unix_ns_now(), credential.as_deref())
        };
        let served = proxy::metrics(&app.client, &app.upstream, req, &app.gate_id, &lines, sign);
        // `sign` (which takes the holder's next number) runs with no await after it, so a
        // timeout either drops the scrape before it took a number or not at all.
        return Ok(match tokio::time::timeout(METRICS_TIMEOUT, served).await {
            Ok(response) => response,
            Err(_) => proxy::error(
                StatusCode::GATEWAY_TIMEOUT,
                "GatewayTimeout",
                format!(
                    "the upstream's /metrics did not answer within {} s",
                    METRICS_TIMEOUT.as_secs()
                ),
            ),
        });
    }
    Ok(proxy::forward(&app.client, &app.upstream, req, &app.gate_id, tally).await)
}

/// Largest request body the gateway forwards (it reads each whole to keep its token out).
const MAX_FORWARD_BODY_BYTES: usize = 64 << 20;

/// The lessor's path on the gateway (the same as on `loadproof sim`).
const LEASE_PATH: &str = "/loadproof/lease";

/// `POST /loadproof/lease`: a lease JSON (200); 400, 409 or 413 as the sim answers; 502 when
/// the upstream cannot say what it serves.
async fn grant_lease(app: &App, req: Request<Incoming>) -> Response<GateBody> {
    let host = req
        .headers()
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = match Limited::new(req.into_body(), MAX_LEASE_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            return proxy::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "BadRequestError",
                format!("the body is larger than {MAX_LEASE_BODY_BYTES} bytes"),
            );
        }
        Err(err) => {
            return proxy::error(
                StatusCode::BAD_REQUEST,
                "BadRequestError",
                format!("reading the body: {err}"),
            );
        }
    };
    if let Err(refusal) = app.lessor.precheck(&body, unix_ns_now()) {
        return refused(refusal);
    }
    let subject = match readback::subject(&app.client, &app.upstream, &app.stated).await {
        Ok(subject) => subject,
        Err(why) => {
            return proxy::error(
                StatusCode::BAD_GATEWAY,
                "BadGateway",
                format!("no lease: {why}"),
            );
        }
    };
    match app
        .lessor
        .grant_bound(&body, host.as_deref(), unix_ns_now(), subject)
    {
        Ok(granted) => {
            let mut response = proxy::full(
                StatusCode::OK,
                "application/json",
                Bytes::from(granted.json),
            );
            if let Ok(token) = HeaderValue::from_str(&granted.token) {
                response.headers_mut().insert(TOKEN_HEADER, token);
            }
            if let Some(signed) = granted
                .signed
                .as_deref()
                .and_then(|s| HeaderValue::from_str(s).ok())
            {
                response
                    .headers_mut()
                    .insert(crate::sim::lease::SIGNED_HEADER, signed);
            }
            response
        }
        Err(refusal) => refused(refusal),
    }
}

fn refused(refusal: crate::sim::lease::Refusal) -> Response<GateBody> {
    proxy::full(
        StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_REQUEST),
        "application/json",
        Bytes::from(refusal.body),
    )
}

/// Unix ns now (the lessor's clock).
fn unix_ns_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
