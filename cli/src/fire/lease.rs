//! The lease a run holds: read from `--lease FILE` (obtained elsewhere, an operator's gateway;
//! its token from the environment variable `--lease-token-env` names) or acquired with
//! `--acquire-lease SECONDS` (`POST ENDPOINT/loadproof/lease`, as `loadproof sim` and
//! `loadproof gate` grant; the token comes back in the `x-loadproof-lease-token` header). The
//! document's bytes are kept exactly as read or received — they become the receipt's
//! `window/lease.json` — and must parse as a `loadproof.lease/v1` [`Lease`] that names only the
//! token's sha256: a document that holds the token itself is refused, because a receipt is
//! published. The token is handed to the client (a bearer header, or `OPENAI_API_KEY` for
//! `vllm bench serve`), checked against the document's `token_sha256`, written nowhere, and
//! given back with [`release`] when the run ends.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use hyper::Method;
use loadproof_core::receipt::{LEASE_ACCOUNT_HEADER, Lease, block, sha256_hex};
use loadproof_core::signing::Signed;

use super::http::Http;
use crate::input::{BadInput, MAX_DOCUMENT_BYTES, read_file};

/// The lessor's path on the endpoint.
pub const PATH: &str = "/loadproof/lease";

/// How long the lessor may take to answer.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes of a refusal's body quoted in the error.
const QUOTED_BYTES: usize = 1024;

/// A lease, as the lessor wrote it and as parsed, and the token that goes with it.
pub struct Held {
    /// The bytes exactly as read or received.
    pub raw: Vec<u8>,
    /// Those bytes, parsed.
    pub lease: Lease,
    /// Where they came from (`--lease FILE`, `POST URL`).
    pub origin: String,
    /// The bearer token (never in `raw`).
    token: Option<String>,
    /// The lessor's signature of `raw` (a `loadproof.signed/v1` envelope), when it signs.
    pub signed: Option<Vec<u8>>,
}

/// The response header a signing lessor sends its signature of the lease in.
const SIGNED_HEADER: &str = "x-loadproof-lease-signed";

/// The response header a lessor sends the token in.
const TOKEN_HEADER: &str = "x-loadproof-lease-token";

/// Refuses a document that holds its own token, and a token that is not the one it names.
fn checked(raw: Vec<u8>, token: Option<String>, origin: String, what: &str) -> Result<Held> {
    let lease = Lease::from_json(&raw).map_err(|e| BadInput(format!("{what}: {e}")))?;
    if lease.token.is_some() {
        return Err(BadInput(format!(
            "{what}: the lease document holds its bearer token; a receipt keeps the document byte for byte and receipts are published, so it would publish a live token. Ask the lessor for a lease that names only token_sha256 (loadproof sim and gate do) and pass the token apart"
        ))
        .into());
    }
    match (&lease.token_sha256, &token) {
        (Some(named), Some(t)) if *named != sha256_hex(t.as_bytes()) => {
            return Err(BadInput(format!(
                "{what}: the token given is not the one the lease names (token_sha256 {named})"
            ))
            .into());
        }
        (Some(_), None) => {
            return Err(BadInput(format!(
                "{what}: the lease needs a bearer token (it names token_sha256) and none was given"
            ))
            .into());
        }
        _ => {}
    }
    Ok(Held {
        raw,
        lease,
        origin,
        token,
        signed: None,
    })
}

/// `held` with the lessor's signature `envelope`, which must verify and cover exactly the
/// lease's bytes (a receipt never carries a signature the audit will refuse as tampered).
fn signed_by_lessor(mut held: Held, envelope: Vec<u8>, what: &str) -> Result<Held> {
    let signed = Signed::from_json(&envelope)
        .map_err(|e| BadInput(format!("{what}: the lessor's signature: {e}")))?;
    if signed.statement() != held.raw.as_slice() {
        return Err(BadInput(format!(
            "{what}: the lessor's signature covers other bytes than the lease it granted"
        ))
        .into());
    }
    held.signed = Some(envelope);
    Ok(held)
}

/// Reads `--lease FILE` and the token from the environment variable `token_env` names (bad
/// input naming the file when it is not a usable lease).
pub fn read(path: &Path, token_env: Option<&str>) -> Result<Held> {
    let file = read_file(path, MAX_DOCUMENT_BYTES, "a lease")?;
    // A lease as its lessor signed it (the envelope of a signing lessor's grant) is read as
    // the lease it holds, the signature kept.
    let envelope = Signed::from_json(&file)
        .ok()
        .map(|s| (s.statement().to_vec(), file.clone()));
    let raw = envelope.as_ref().map_or(file, |(lease, _)| lease.clone());
    let token = match token_env {
        Some(name) => Some(std::env::var(name).map_err(|_| {
            BadInput(format!(
                "--lease-token-env {name}: the environment variable {name} is not set (or not UTF-8)"
            ))
        })?),
        None => None,
    };
    let what = format!("--lease {}", path.display());
    let held = checked(raw, token, what.clone(), &what)?;
    match envelope {
        Some((_, envelope)) => signed_by_lessor(held, envelope, &what),
        None => Ok(held),
    }
}

/// `POST ENDPOINT/loadproof/lease` `{"holder", "seconds"}`; anything but a 200 with a lease
/// (and its token in the header) is bad input, with the status and body.
pub async fn acquire(http: &Http, endpoint: &str, holder: &str, seconds: u64) -> Result<Held> {
    let url = format!("{endpoint}{PATH}");
    let request = serde_json::json!({"holder": holder, "seconds": seconds}).to_string();
    let answer = http
        .send(Method::POST, &url, None, Some(request), TIMEOUT)
        .await
        .map_err(|e| BadInput(format!("--acquire-lease: POST {url}: {e}")))?;
    if answer.status != 200 {
        let raw = &answer.body;
        let quoted = String::from_utf8_lossy(raw.get(..QUOTED_BYTES).unwrap_or(raw));
        return Err(BadInput(format!(
            "--acquire-lease: POST {url} answered HTTP {}: {}",
            answer.status,
            quoted.trim_end()
        ))
        .into());
    }
    let token = answer
        .headers
        .get(TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let signed = answer
        .headers
        .get(SIGNED_HEADER)
        .map(|v| v.as_bytes().to_vec());
    let what = format!("--acquire-lease: the answer of POST {url}");
    let held = checked(
        answer.body,
        token,
        format!("POST {url} (--acquire-lease {seconds})"),
        &what,
    )?;
    match signed {
        Some(envelope) => signed_by_lessor(held, envelope, &what),
        None => Ok(held),
    }
}

/// `DELETE ENDPOINT/loadproof/lease` with the token: the window closes when the run does, so
/// the token is dead before anyone reads the receipt. Always a note for the receipt: released,
/// or why not (the lease then lasts until its `until_unix_ns`).
///
/// A signing lessor answers with its signed account of the lease (requests admitted under
/// it), returned for the receipt as it came; the audit verifies it.
pub async fn release(http: &Http, endpoint: &str, held: &Held) -> (String, Option<Vec<u8>>) {
    let Some(token) = held.token.as_deref() else {
        return (
            format!(
                "lease {:?} has no token to release it with: it lasts until {} Unix ns",
                held.lease.id, held.lease.until_unix_ns
            ),
            None,
        );
    };
    let url = format!("{endpoint}{PATH}");
    match http
        .send(Method::DELETE, &url, Some(token), None, TIMEOUT)
        .await
    {
        Ok(a) if a.status == 200 => (
            format!(
                "lease {:?} released at the end of the run (DELETE {url}: its token no longer admits anything)",
                held.lease.id
            ),
            a.headers
                .get(LEASE_ACCOUNT_HEADER)
                .map(|v| v.as_bytes().to_vec()),
        ),
        Ok(a) => (
            format!(
                "lease {:?} not released: DELETE {url} answered HTTP {}; it lasts until {} Unix ns",
                held.lease.id, a.status, held.lease.until_unix_ns
            ),
            None,
        ),
        Err(e) => (
            format!(
                "lease {:?} not released: DELETE {url}: {e}; it lasts until {} Unix ns",
                held.lease.id, held.lease.until_unix_ns
            ),
            None,
        ),
    }
}

impl Held {
    /// The token requests must carry, when the lease has one.
    pub fn bearer(&self) -> Option<&str> {
        self.token.as_deref().filter(|t| !t.is_empty())
    }

    /// What a reader should know about the lease: where it came from, and anything the firing
    /// side can see that does not fit (another route, a window that misses the run). The audit
    /// decides what the lease is worth; these are notes.
    pub fn notes(&self, endpoint: &str, run: Option<(i64, i64)>) -> Vec<String> {
        let l = &self.lease;
        let mut notes = vec![format!(
            "the run held lease {:?} from {:?} for {:?} ({}), bytes as received in the evidence block {}",
            l.id,
            l.issuer,
            l.holder,
            self.origin,
            block::LEASE
        )];
        if l.route.trim_end_matches('/') != endpoint {
            notes.push(format!(
                "the lease's route {} is not the endpoint fired at, {endpoint}",
                l.route
            ));
        }
        if let Some((start, end)) = run
            && (start < l.from_unix_ns || end > l.until_unix_ns)
        {
            notes.push(format!(
                "the lease's window [{}, {}) (Unix ns, the lessor's clock) does not cover the run [{start}, {end}] (this machine's clock)",
                l.from_unix_ns, l.until_unix_ns
            ));
        }
        if self.bearer().is_none() {
            notes.push(
                "the lease carries no token: requests were sent without an Authorization header"
                    .to_owned(),
            );
        }
        notes
    }
}
