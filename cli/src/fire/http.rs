//! A small HTTP/1 client over hyper: GET for `/metrics`, `/health`, `/version`, `/v1/models`,
//! and the lessor's `POST`/`DELETE /loadproof/lease`. `http://` and `https://` (rustls, with the
//! run's trust settings, [`crate::tls`]). The server's API key, when the run has one, goes only
//! to the endpoint's own origin: a replica's or a GPU exporter's `/metrics` elsewhere never sees it.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::header::{AUTHORIZATION, HeaderName, HeaderValue};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use loadproof_core::receipt::origin;

use crate::http_client::describe;
use crate::secret;
use crate::tls::ClientTls;

/// A shared connection pool.
#[derive(Clone)]
pub struct Http {
    client: Client<HttpsConnector<HttpConnector>, Empty<Bytes>>,
    poster: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// The endpoint's origin and `Bearer <API key>` for it.
    api_key: Option<(String, HeaderValue)>,
}

impl Http {
    /// A client with a small pool, checking certificates as `tls` says; `api_key` (already
    /// checked to fit a header) is sent to `endpoint`'s origin only.
    pub fn new(tls: &ClientTls, endpoint: &str, api_key: Option<&str>) -> Http {
        let connector = tls.connector(None);
        let api_key = api_key.and_then(|key| Some((origin(endpoint)?, secret::bearer(key).ok()?)));
        Http {
            client: Client::builder(TokioExecutor::new()).build(connector.clone()),
            poster: Client::builder(TokioExecutor::new()).build(connector),
            api_key,
        }
    }

    /// The API key's header, when `url` is the endpoint's origin.
    fn key_for(&self, url: &str) -> Option<&HeaderValue> {
        let (ours, value) = self.api_key.as_ref()?;
        (origin(url).as_deref() == Some(ours.as_str())).then_some(value)
    }

    /// `builder` with the API key (for the endpoint's origin) and the lease token: `Authorization:
    /// Bearer`, or [`secret::LEASE_HEADER`] when `Authorization` carries the API key; both
    /// sensitive.
    fn credentials(
        &self,
        mut builder: hyper::http::request::Builder,
        url: &str,
        lease_token: Option<&str>,
    ) -> Result<hyper::http::request::Builder, String> {
        let key = self.key_for(url);
        if let Some(key) = key {
            builder = builder.header(AUTHORIZATION, key.clone());
        }
        if let Some(token) = lease_token {
            let cannot =
                |_| "the lease token has characters an HTTP header cannot carry".to_owned();
            builder = if key.is_some() {
                builder.header(
                    HeaderName::from_static(secret::LEASE_HEADER),
                    secret::raw(token).map_err(cannot)?,
                )
            } else {
                builder.header(AUTHORIZATION, secret::bearer(token).map_err(cannot)?)
            };
        }
        Ok(builder)
    }

    /// GET `url`; the status and whole body, or what went wrong, within `timeout`.
    pub async fn get(&self, url: &str, timeout: Duration) -> Result<(u16, Vec<u8>), String> {
        self.get_answer(url, timeout)
            .await
            .map(|answer| (answer.status, answer.body))
    }

    /// As [`Http::get`], with the response's headers (a signing lessor's statement of the body
    /// travels in one).
    pub async fn get_answer(&self, url: &str, timeout: Duration) -> Result<Answer, String> {
        self.get_leased(url, timeout, None).await
    }

    /// As [`Http::get_answer`], presenting `lease_token` as [`Http::send`] does: the lessor
    /// numbers the `/metrics` bodies it serves to its lease's holder.
    pub async fn get_leased(
        &self,
        url: &str,
        timeout: Duration,
        lease_token: Option<&str>,
    ) -> Result<Answer, String> {
        let uri = http_uri(url)?;
        let builder = hyper::Request::builder()
            .method(hyper::Method::GET)
            .uri(uri);
        let builder = self.credentials(builder, url, lease_token)?;
        let request = builder
            .body(Empty::new())
            .map_err(|e| format!("building the request to {url}: {e}"))?;
        let request = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| describe(&e))?;
            whole(response).await
        };
        match tokio::time::timeout(timeout, request).await {
            Ok(result) => result,
            Err(_) => Err(format!("no response within {} ms", timeout.as_millis())),
        }
    }

    /// One request with an optional lease token and JSON body; the status, headers and whole
    /// body, or what went wrong, within `timeout`. The token travels as `Authorization:
    /// Bearer`, or in [`secret::LEASE_HEADER`] when `Authorization` carries the API key; both
    /// are marked sensitive (never logged by hyper).
    pub async fn send(
        &self,
        method: hyper::Method,
        url: &str,
        lease_token: Option<&str>,
        json: Option<String>,
        timeout: Duration,
    ) -> Result<Answer, String> {
        let uri = http_uri(url)?;
        let mut builder = hyper::Request::builder().method(method).uri(uri);
        if json.is_some() {
            builder = builder.header(hyper::header::CONTENT_TYPE, "application/json");
        }
        builder = self.credentials(builder, url, lease_token)?;
        let request = builder
            .body(Full::new(Bytes::from(json.unwrap_or_default())))
            .map_err(|e| format!("building the request to {url}: {e}"))?;
        let exchange = async {
            let response = self
                .poster
                .request(request)
                .await
                .map_err(|e| describe(&e))?;
            whole(response).await
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(format!("no response within {} ms", timeout.as_millis())),
        }
    }
}

/// A whole answer: status, headers, body.
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The response headers.
    pub headers: hyper::HeaderMap,
    /// The whole body.
    pub body: Vec<u8>,
}

fn http_uri(url: &str) -> Result<hyper::Uri, String> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(format!(
            "{url}: only http:// and https:// URLs are supported"
        ));
    }
    Ok(uri)
}

/// The largest body read (a vLLM `/metrics` is ~100 KB): a server that answers more is not
/// read, so it cannot exhaust the firing machine's memory.
pub const MAX_BODY_BYTES: usize = 64 << 20;

/// The status, headers and whole body of `response`, up to [`MAX_BODY_BYTES`].
async fn whole(response: hyper::Response<hyper::body::Incoming>) -> Result<Answer, String> {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = http_body_util::Limited::new(response.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                format!(
                    "the body is larger than {} MiB: not read",
                    MAX_BODY_BYTES >> 20
                )
            } else {
                format!("reading the body: {e}")
            }
        })?
        .to_bytes();
    Ok(Answer {
        status,
        headers,
        body: body.to_vec(),
    })
}
