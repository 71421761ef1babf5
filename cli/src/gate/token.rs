//! The gateway's lease token stays with the gateway: `Authorization: Bearer <token>`, or
//! `x-loadproof-lease-token: <token>` beside an API key, are the places a request may carry it
//! (and every such header is removed before forwarding); anywhere
//! else — another header, another scheme, the path or query (raw or percent-decoded), the body
//! (raw, percent-decoded as a form, or inside any JSON string once its escapes are read) — the
//! request is refused with 400 rather than forwarded, because the upstream would see it. A body
//! the gateway cannot read (content-encoding other than identity) is refused before this.

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
        let own_header = name.as_str() == crate::secret::LEASE_HEADER && bytes == token;
        if !bearer_exactly && !own_header {
            return Some(format!("the {name} header"));
        }
    }
    let target = req.uri().path_and_query().map_or("", |p| p.as_str());
    if contains(target.as_bytes(), token) || contains(&percent_decoded(target), token) {
        return Some("the request path or query".to_owned());
    }
    None
}

/// Whether a request body holds the token: as bytes, percent-decoded (a form), or in any
/// string or key of a JSON document once its escapes (`\u0030…`) are read.
pub fn in_body(body: &[u8], token: &[u8]) -> bool {
    if contains(body, token) || contains(&percent_decoded_form(body), token) {
        return true;
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(v) => json_holds(&v, token),
        Err(_) => false,
    }
}

fn json_holds(v: &serde_json::Value, token: &[u8]) -> bool {
    match v {
        serde_json::Value::String(s) => contains(s.as_bytes(), token),
        serde_json::Value::Array(items) => items.iter().any(|i| json_holds(i, token)),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(k, v)| contains(k.as_bytes(), token) || json_holds(v, token)),
        _ => false,
    }
}

/// Every `Authorization: Bearer <token>` value and the lease's own header removed; other
/// Authorization values (an API key the upstream reads) kept.
pub fn remove_bearer(headers: &mut hyper::HeaderMap, token: &str) {
    headers.remove(crate::secret::LEASE_HEADER);
    let bearer = format!("Bearer {token}");
    let kept: Vec<hyper::header::HeaderValue> = headers
        .get_all(AUTHORIZATION)
        .iter()
        .filter(|v| v.as_bytes() != bearer.as_bytes())
        .cloned()
        .collect();
    headers.remove(AUTHORIZATION);
    for v in kept {
        headers.append(AUTHORIZATION, v);
    }
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
            "the lease token was found in {place}: it may travel only as `Authorization: Bearer <token>` or `x-loadproof-lease-token: <token>`, which the gateway removes; anywhere else the upstream would see it, so the request is not forwarded"
        ),
    )
}

/// A form body decoded: `+` as a space, `%XX` as its byte.
fn percent_decoded_form(body: &[u8]) -> Vec<u8> {
    let spaced: Vec<u8> = body
        .iter()
        .map(|&b| if b == b'+' { b' ' } else { b })
        .collect();
    percent_decoded_bytes(&spaced)
}

/// `%XX` decoded (anything else kept); `+` is left alone.
fn percent_decoded(text: &str) -> Vec<u8> {
    percent_decoded_bytes(text.as_bytes())
}

fn percent_decoded_bytes(bytes: &[u8]) -> Vec<u8> {
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
        // issue 20 (adversarial pass): escaped and form-encoded bodies hide nothing.
        assert!(in_body(br#"{"prompt": "\u0061bc123"}"#, t.as_bytes()));
        assert!(in_body(b"prompt=%61bc%31%323", t.as_bytes()));
        assert!(!in_body(br#"{"prompt": "abc12"}"#, t.as_bytes()));
        let mut h = hyper::HeaderMap::new();
        h.append(AUTHORIZATION, "Bearer other".parse().unwrap());
        h.append(AUTHORIZATION, "Bearer abc123".parse().unwrap());
        remove_bearer(&mut h, t);
        let left: Vec<&[u8]> = h
            .get_all(AUTHORIZATION)
            .iter()
            .map(|v| v.as_bytes())
            .collect();
        assert_eq!(left, [&b"Bearer other"[..]]);
    }
}
