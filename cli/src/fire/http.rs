//! A small HTTP/1 client over hyper: GET for `/metrics`, `/health`, `/version`, `/v1/models`,
//! and the lessor's `POST`/`DELETE /loadproof/lease`. Plain `http://` only: the endpoints a plan is fired
//! at are on the operator's network.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::http_client::describe;

/// A shared connection pool.
#[derive(Clone)]
pub struct Http {
    client: Client<HttpConnector, Empty<Bytes>>,
    poster: Client<HttpConnector, Full<Bytes>>,
}

impl Http {
    /// A client with a small pool.
    pub fn new() -> Http {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        Http {
            client: Client::builder(TokioExecutor::new()).build(connector.clone()),
            poster: Client::builder(TokioExecutor::new()).build(connector),
        }
    }

    /// GET `url`; the status and whole body, or what went wrong, within `timeout`.
    pub async fn get(&self, url: &str, timeout: Duration) -> Result<(u16, Vec<u8>), String> {
        let uri = http_uri(url)?;
        let request = async {
            let response = self.client.get(uri).await.map_err(|e| describe(&e))?;
            whole(response).await
        };
        match tokio::time::timeout(timeout, request).await {
            Ok(result) => result,
            Err(_) => Err(format!("no response within {} ms", timeout.as_millis())),
        }
    }

    /// One request with an optional bearer token and JSON body; the status, headers and whole
    /// body, or what went wrong, within `timeout`. The token is marked sensitive (never logged
    /// by hyper).
    pub async fn send(
        &self,
        method: hyper::Method,
        url: &str,
        bearer: Option<&str>,
        json: Option<String>,
        timeout: Duration,
    ) -> Result<Answer, String> {
        let uri = http_uri(url)?;
        let mut builder = hyper::Request::builder().method(method).uri(uri);
        if json.is_some() {
            builder = builder.header(hyper::header::CONTENT_TYPE, "application/json");
        }
        if let Some(token) = bearer {
            let mut value = hyper::header::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| {
                    "the bearer token has characters an HTTP header cannot carry".to_owned()
                })?;
            value.set_sensitive(true);
            builder = builder.header(hyper::header::AUTHORIZATION, value);
        }
        let request = builder
            .body(Full::new(Bytes::from(json.unwrap_or_default())))
            .map_err(|e| format!("building the request to {url}: {e}"))?;
        let exchange = async {
            let response = self
                .poster
                .request(request)
                .await
                .map_err(|e| describe(&e))?;
            let headers = response.headers().clone();
            let (status, body) = whole(response).await?;
            Ok(Answer {
                status,
                headers,
                body,
            })
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
    if uri.scheme_str() != Some("http") {
        return Err(format!("{url}: only http:// endpoints are supported"));
    }
    Ok(uri)
}

/// The status and the whole body of `response`.
async fn whole(response: hyper::Response<hyper::body::Incoming>) -> Result<(u16, Vec<u8>), String> {
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("reading the body: {e}"))?
        .to_bytes();
    Ok((status, body.to_vec()))
}
