//! Forwarding: the upstream URL, the pooled hyper client, hop-by-hop headers, and the response
//! body that is either the upstream's own stream (passed on frame by frame, never buffered) or
//! a whole buffer the gateway wrote.
//!
//! A forwarded request keeps its method, path and query, end-to-end headers and body (streamed);
//! `Host` becomes the upstream's. The connection to the upstream times out after
//! [`CONNECT_TIMEOUT`]; the response itself has no deadline (a long generation is not a fault:
//! the client bounds its own requests).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{
    ACCEPT_ENCODING, CONNECTION, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, EXPECT, HOST,
    HeaderMap, HeaderName, HeaderValue, PROXY_AUTHENTICATE, PROXY_AUTHORIZATION, TE, TRAILER,
    TRANSFER_ENCODING, UPGRADE,
};
use hyper::{Request, Response, StatusCode, Uri, Version};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::metrics::{self, GateLines};
use super::usage::Tap;
use crate::http_client::describe;
use crate::sim::lease::Tally;

/// How long connecting to the upstream may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest upstream `/metrics` body the gateway reads to append its lines (vLLM's is ~100 KB).
const MAX_METRICS_BYTES: usize = 64 << 20;

/// The upstream's base URL: `http://AUTHORITY` or `https://AUTHORITY`, no path.
#[derive(Debug, Clone)]
pub struct Upstream {
    base: String,
}

impl Upstream {
    /// `http(s)://HOST:PORT` (a trailing `/` allowed); anything else is refused with the reason.
    pub fn parse(url: &str) -> anyhow::Result<Upstream> {
        let uri: Uri = url.parse().map_err(|e| anyhow::anyhow!("not a URL: {e}"))?;
        let Some(scheme @ ("http" | "https")) = uri.scheme_str() else {
            anyhow::bail!("only http:// and https:// upstreams are supported");
        };
        let Some(authority) = uri.authority() else {
            anyhow::bail!("no host in the URL");
        };
        if authority.as_str().contains('@') {
            anyhow::bail!("credentials in the URL are not supported");
        }
        if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
            anyhow::bail!(
                "the upstream is a server's base URL (http://HOST:PORT), without a path or query"
            );
        }
        Ok(Upstream {
            base: format!("{scheme}://{authority}"),
        })
    }

    /// `http(s)://HOST:PORT`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Whether this upstream names `local` itself: the same port, and the same IP or a
    /// loopback name for a loopback or unspecified listening address. (A loop through another
    /// name or another proxy is caught per request by [`LOOP_HEADER`].)
    pub fn is_address(&self, local: std::net::SocketAddr) -> bool {
        let Ok(uri) = format!("{}/", self.base).parse::<Uri>() else {
            return false;
        };
        let default_port = if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        };
        if uri.port_u16().unwrap_or(default_port) != local.port() {
            return false;
        }
        let host = uri
            .host()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']');
        let loopback_name = host.eq_ignore_ascii_case("localhost");
        match host.parse::<std::net::IpAddr>() {
            Ok(ip) => {
                ip == local.ip()
                    || (ip.is_loopback() || ip.is_unspecified())
                        && (local.ip().is_loopback() || local.ip().is_unspecified())
            }
            Err(_) => loopback_name && (local.ip().is_loopback() || local.ip().is_unspecified()),
        }
    }

    /// The upstream URL of `path_and_query`.
    fn uri(&self, path_and_query: &str) -> Result<Uri, String> {
        let url = format!("{}{path_and_query}", self.base);
        url.parse()
            .map_err(|e| format!("{url:?} is not a URL: {e}"))
    }
}

/// Clients to the upstream: one for forwarded bodies (read whole first, so the gateway can
/// check them for its token), one for the gateway's own GETs; and the upstream's API key, sent
/// on every request in place of any `Authorization` a client sent.
#[derive(Clone)]
pub struct Client {
    forward: hyper_util::client::legacy::Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    get: hyper_util::client::legacy::Client<HttpsConnector<HttpConnector>, Empty<Bytes>>,
    api_key: Option<HeaderValue>,
}

/// The header every forwarded request carries: this gateway's id. A request that arrives with
/// it has come round a loop (an upstream that is, or leads back to, this gateway).
pub const LOOP_HEADER: &str = "x-loadproof-gate";

/// A pooled keep-alive client with `TCP_NODELAY` and [`CONNECT_TIMEOUT`], checking an
/// `https://` upstream's certificate as `tls` says; `api_key` is a sensitive `Bearer` value.
pub fn client(tls: &crate::tls::ClientTls, api_key: Option<HeaderValue>) -> Client {
    let connector = tls.connector(Some(CONNECT_TIMEOUT));
    let builder = hyper_util::client::legacy::Client::builder(TokioExecutor::new());
    Client {
        forward: builder.build(connector.clone()),
        get: builder.build(connector),
        api_key,
    }
}

impl Client {
    /// GET `path` on the upstream; the status and whole body, or what went wrong, within
    /// `timeout`.
    pub async fn get(
        &self,
        upstream: &Upstream,
        path: &str,
        timeout: Duration,
    ) -> Result<(u16, Bytes), String> {
        let uri = upstream.uri(path)?;
        let mut request = Request::get(uri);
        if let Some(key) = &self.api_key {
            request = request.header(hyper::header::AUTHORIZATION, key.clone());
        }
        let request = request
            .body(Empty::new())
            .map_err(|e| format!("building GET {path}: {e}"))?;
        let exchange = async {
            let response = self.get.request(request).await.map_err(|e| describe(&e))?;
            let status = response.status().as_u16();
            let body = Limited::new(response.into_body(), MAX_METRICS_BYTES)
                .collect()
                .await
                .map_err(|e| format!("reading the body: {e}"))?
                .to_bytes();
            Ok((status, body))
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(format!("no response within {} ms", timeout.as_millis())),
        }
    }
}

/// Forwards `req` to the upstream and streams its answer back; 502 when the upstream does not
/// answer. A request admitted under a lease has its response's usage counted into the lease's
/// `tally` as it passes.
pub async fn forward(
    client: &Client,
    upstream: &Upstream,
    req: Request<Full<Bytes>>,
    gate_id: &str,
    tally: Option<Arc<Tally>>,
) -> Response<GateBody> {
    match send(client, upstream, req, gate_id).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            remove_hop_by_hop(&mut parts.headers);
            let tap = tally.and_then(|t| Tap::new(parts.status, &parts.headers, t));
            let body = match tap {
                Some(tap) => GateBody::Tapped(body, Box::new(tap)),
                None => GateBody::Upstream(body),
            };
            Response::from_parts(parts, body)
        }
        Err(response) => response,
    }
}

/// `GET /metrics`: the upstream's body with the gateway's lines appended (asked for without
/// compression, so the bytes can be extended); any other answer is passed on untouched.
pub async fn metrics(
    client: &Client,
    upstream: &Upstream,
    mut req: Request<Full<Bytes>>,
    gate_id: &str,
    lines: &GateLines<'_>,
    sign: impl Fn(&[u8]) -> Option<HeaderValue>,
) -> Response<GateBody> {
    req.headers_mut()
        .insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    let response = match send(client, upstream, req, gate_id).await {
        Ok(response) => response,
        Err(response) => return response,
    };
    let (mut parts, body) = response.into_parts();
    remove_hop_by_hop(&mut parts.headers);
    let encoded = parts
        .headers
        .get(CONTENT_ENCODING)
        .is_some_and(|e| e.as_bytes() != b"identity");
    if parts.status != StatusCode::OK || encoded {
        return Response::from_parts(parts, GateBody::Upstream(body));
    }
    let bytes = match Limited::new(body, MAX_METRICS_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) => {
            return error(
                StatusCode::BAD_GATEWAY,
                "BadGateway",
                format!("reading the upstream's /metrics: {err}"),
            );
        }
    };
    parts.headers.remove(CONTENT_LENGTH);
    let joined = metrics::append(&bytes, lines);
    // The lessor's statement of exactly the bytes it serves (the upstream's and its own).
    if let Some(signed) = sign(&joined) {
        parts
            .headers
            .insert(crate::sim::lease::SCRAPE_SIGNED_HEADER, signed);
    }
    Response::from_parts(parts, GateBody::Full(Some(Bytes::from(joined))))
}

/// The request, rewritten for the upstream and sent; the upstream's response head, or the
/// gateway's 400/502 answer.
async fn send(
    client: &Client,
    upstream: &Upstream,
    req: Request<Full<Bytes>>,
    gate_id: &str,
) -> Result<Response<Incoming>, Response<GateBody>> {
    let (mut parts, body) = req.into_parts();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    parts.uri = upstream
        .uri(&path_and_query)
        .map_err(|why| error(StatusCode::BAD_REQUEST, "BadRequestError", why))?;
    parts.version = Version::HTTP_11;
    remove_hop_by_hop(&mut parts.headers);
    // hyper's client writes the upstream's own Host from the URI; it cannot wait for a
    // `100 Continue`, so the body is sent at once.
    parts.headers.remove(HOST);
    parts.headers.remove(EXPECT);
    if let Ok(id) = HeaderValue::from_str(gate_id) {
        parts.headers.append(LOOP_HEADER, id);
    }
    if let Some(key) = &client.api_key {
        parts
            .headers
            .insert(hyper::header::AUTHORIZATION, key.clone());
    }
    client
        .forward
        .request(Request::from_parts(parts, body))
        .await
        .map_err(|e| {
            error(
                StatusCode::BAD_GATEWAY,
                "BadGateway",
                format!(
                    "the upstream {} did not answer: {}",
                    upstream.base(),
                    describe(&e)
                ),
            )
        })
}

/// Removes the headers that describe one connection, not the message (RFC 9110 §7.6.1): the
/// standard ones and every header the `Connection` header names.
fn remove_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in [
        CONNECTION,
        TE,
        TRAILER,
        TRANSFER_ENCODING,
        UPGRADE,
        PROXY_AUTHENTICATE,
        PROXY_AUTHORIZATION,
    ] {
        headers.remove(name);
    }
    headers.remove("keep-alive");
    headers.remove("proxy-connection");
}

/// A whole response the gateway wrote.
pub fn full(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<GateBody> {
    let mut response = Response::new(GateBody::Full(Some(body).filter(|b| !b.is_empty())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The gateway's own error, shaped like vLLM's: `{"error": {"message", "type", "code"}}`.
pub fn error(status: StatusCode, kind: &str, message: String) -> Response<GateBody> {
    let body = serde_json::json!({
        "error": {"message": message, "type": kind, "code": status.as_u16()}
    });
    full(status, "application/json", Bytes::from(body.to_string()))
}

/// A response body: the upstream's stream, passed on frame by frame (its usage read on the way
/// when it answers a request admitted under a lease), or a whole buffer.
pub enum GateBody {
    Upstream(Incoming),
    Tapped(Incoming, Box<Tap>),
    Full(Option<Bytes>),
}

impl Body for GateBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut() {
            GateBody::Upstream(body) => Pin::new(body).poll_frame(cx),
            GateBody::Tapped(body, tap) => {
                let polled = Pin::new(&mut *body).poll_frame(cx);
                match &polled {
                    Poll::Ready(Some(Ok(frame))) => {
                        if let Some(data) = frame.data_ref() {
                            tap.data(data);
                        }
                        // The last frame of a body with a known end: counted before it is
                        // passed on, as the client may act on it at once.
                        if body.is_end_stream() {
                            tap.end();
                        }
                    }
                    Poll::Ready(None) => tap.end(),
                    Poll::Ready(Some(Err(_))) => tap.abandon(),
                    Poll::Pending => {}
                }
                polled
            }
            GateBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            GateBody::Upstream(body) | GateBody::Tapped(body, _) => body.is_end_stream(),
            GateBody::Full(bytes) => bytes.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            GateBody::Upstream(body) | GateBody::Tapped(body, _) => body.size_hint(),
            GateBody::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_is_an_http_or_https_base_url() {
        assert_eq!(
            Upstream::parse("http://127.0.0.1:8000/").unwrap().base(),
            "http://127.0.0.1:8000"
        );
        assert_eq!(
            Upstream::parse("https://h:1").unwrap().base(),
            "https://h:1"
        );
        let tls = Upstream::parse("https://127.0.0.1:443").unwrap();
        assert!(tls.is_address("127.0.0.1:443".parse().unwrap()));
        assert!(!tls.is_address("127.0.0.1:80".parse().unwrap()));
        for bad in [
            "ftp://h:1",
            "h:1",
            "http://h:1/v1",
            "http://u:p@h:1",
            "http://h:1/?a=b",
        ] {
            assert!(Upstream::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_removed() {
        let mut h = HeaderMap::new();
        h.insert(CONNECTION, HeaderValue::from_static("keep-alive, x-hop"));
        h.insert("x-hop", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert(TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
        h.insert(
            hyper::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer upstream-key"),
        );
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        remove_hop_by_hop(&mut h);
        let mut left: Vec<&str> = h.keys().map(HeaderName::as_str).collect();
        left.sort_unstable();
        assert_eq!(left, ["authorization", "content-type"]);
    }
}
