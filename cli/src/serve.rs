//! The server side `loadproof sim` and `loadproof gate` share: the runtime, the bound listener,
//! and the accept loop (one task per HTTP/1.1 connection, over TLS when the server has a
//! certificate, until SIGINT or SIGTERM).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

/// Runs `server` on a multi-thread tokio runtime; when it returns, open connections (a
/// stalled stream, say) are dropped, not waited for.
pub fn on_runtime(server: impl Future<Output = anyhow::Result<()>>) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let result = runtime.block_on(server);
    runtime.shutdown_timeout(Duration::from_millis(100));
    result
}

/// Binds `addr`: the listener and the address it got (port 0 picks a free one).
pub async fn bind(addr: SocketAddr) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener
        .local_addr()
        .with_context(|| format!("reading the bound address of {addr}"))?;
    Ok((listener, local))
}

/// How long a client may take to complete a TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The scheme a server with (or without) a certificate serves.
pub fn scheme(tls: Option<&tokio_rustls::TlsAcceptor>) -> &'static str {
    if tls.is_some() { "https" } else { "http" }
}

/// Serves `handle` on every connection `listener` accepts until a signal arrives; returns the
/// signal's name. `name` prefixes the diagnostics (`loadproof sim: accept failed: …`). With
/// `tls`, each connection's handshake runs in its own task (a slow or failed one holds up no
/// other connection).
pub async fn until_signal<A, H, Fut, B, E>(
    name: &str,
    ready: &str,
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    app: Arc<A>,
    handle: H,
) -> anyhow::Result<&'static str>
where
    A: Send + Sync + 'static,
    H: Fn(Arc<A>, Request<Incoming>) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<B>, E>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    E: Into<BoxError>,
{
    let mut sigint = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut sigterm = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    // Said only now: a caller that signals as soon as it reads this line is handled, never
    // killed by the default action (a test read the address and sent SIGTERM first).
    eprintln!("{ready}");
    Ok(loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    // SSE chunks are small: without this, Nagle holds them back.
                    let _ = stream.set_nodelay(true);
                    let app = Arc::clone(&app);
                    let tls = tls.clone();
                    tokio::spawn(async move {
                        let service = service_fn(move |req| handle(Arc::clone(&app), req));
                        // A connection error (client gone, a refuse fault, a failed
                        // handshake) ends only that connection.
                        let http = http1::Builder::new().timer(TokioTimer::new()).clone();
                        match tls {
                            None => {
                                let _ = http.serve_connection(TokioIo::new(stream), service).await;
                            }
                            Some(acceptor) => {
                                let handshake = tokio::time::timeout(
                                    HANDSHAKE_TIMEOUT,
                                    acceptor.accept(stream),
                                );
                                if let Ok(Ok(stream)) = handshake.await {
                                    let _ =
                                        http.serve_connection(TokioIo::new(stream), service).await;
                                }
                            }
                        }
                    });
                }
                Err(err) => {
                    // Out of file descriptors, say: back off instead of spinning.
                    eprintln!("{name}: accept failed: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = sigint.recv() => break "SIGINT",
            _ = sigterm.recv() => break "SIGTERM",
        }
    })
}
