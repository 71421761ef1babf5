//! The gateway's lease token stays with the gateway: `Authorization: Bearer <token>` is the one
//! place a request may carry it (and that header is removed before forwarding); anywhere else —
//! another header, another scheme, the path or query (raw or percent-decoded), the body — the
//! request is refused with 400 rather than forwarded, because the upstream would see it.

use hyper::header::AUTHORIZATION;
use hyper::{Request, Response, StatusCode};

use super::proxy::{self, GateBody};

/// Where in `req` (besides an exact `Authorization: Bearer <token>`) the token appears, named
/// for the refusal; `None` when nowhere.
pub fn found_outside_authorization<B>(req: &Request<B>, token: &str) -> Option<String> {
    let token = token.as_bytes();
    if token.is_empty() {
        return None;
    }
    for (name, value) in req.headers() {
        let bytes = value.as_bytes();
        if !contains(bytes, token) {
            continue;
        }
        let bearer_exactly = name == AUTHORIZATION && bytes.strip_prefix(b"Bearer ") == Some(token);
        if !bearer_exactly {
            return Some(format!("the {name} header"));
        }
    }
    let target = req.uri().path_and_query().map_or("", |p| p.as_str());
    if contains(target.as_bytes(), token) || contains(&percent_decoded(target), token) {
        return Some("the request path or query".to_owned());
    }
    None
}

/// Whether `haystack` holds `needle`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(haystack, needle).is_some()
}

/// 400, naming where the token was found.
pub fn refusal(place: &str) -> Response<GateBody> {
    proxy::error(
        StatusCode::BAD_REQUEST,
        "BadRequestError",
        format!(
            "the lease token was found in {place}: it may travel only as `Authorization: Bearer <token>`, which the gateway removes; anywhere else the upstream would see it, so the request is not forwarded"
        ),
    )
}

/// `%XX` decoded (anything else kept); `+` is left alone.
fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(uri: &str, headers: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().uri(uri);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap()
    }

    #[test]
    fn the_token_is_allowed_only_as_an_exact_bearer_authorization() {
        let t = "abc123";
        assert_eq!(
            found_outside_authorization(
                &req("/v1/completions", &[("authorization", "Bearer abc123")]),
                t
            ),
            None
        );
        for (uri, headers, place) in [
            ("/v1/completions?key=abc123", vec![], "path or query"),
            ("/v1/completions?key=%61bc123", vec![], "path or query"),
            (
                "/v1/completions",
                vec![("x-api-key", "abc123")],
                "x-api-key",
            ),
            (
                "/v1/completions",
                vec![("cookie", "session=abc123")],
                "cookie",
            ),
            (
                "/v1/completions",
                vec![("authorization", "Basic abc123")],
                "authorization",
            ),
            (
                "/v1/completions",
                vec![("authorization", "Bearer abc123 x")],
                "authorization",
            ),
        ] {
            let found = found_outside_authorization(&req(uri, &headers), t).unwrap_or_default();
            assert!(found.contains(place), "{uri} {headers:?}: {found}");
        }
        assert!(contains(br#"{"prompt": "abc123"}"#, t.as_bytes()));
    }
}
