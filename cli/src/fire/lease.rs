//! The lease a run holds: read from `--lease FILE` (obtained elsewhere, an operator's gateway)
//! or acquired with `--acquire-lease SECONDS` (`POST ENDPOINT/loadproof/lease`, as
//! `loadproof sim` grants). The bytes are kept exactly as read or received — they become the
//! receipt's `window/lease.json`, so the audit reads the lessor's words, not a copy — and must
//! parse as a `loadproof.lease/v1` [`Lease`]. Its token is handed to the client (a bearer
//! header, or `OPENAI_API_KEY` for `vllm bench serve`) and written nowhere else.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use loadproof_core::receipt::{Lease, block};

use super::http::Http;
use crate::input::BadInput;

/// The lessor's path on the endpoint.
pub const PATH: &str = "/loadproof/lease";

/// How long the lessor may take to answer.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes of a refusal's body quoted in the error.
const QUOTED_BYTES: usize = 1024;

/// A lease, as the lessor wrote it and as parsed.
pub struct Held {
    /// The bytes exactly as read or received.
    pub raw: Vec<u8>,
    /// Those bytes, parsed.
    pub lease: Lease,
    /// Where they came from (`--lease FILE`, `POST URL`).
    pub origin: String,
}

/// Reads `--lease FILE`: raw, then parsed (bad input naming the file when it is not a lease).
pub fn read(path: &Path) -> Result<Held> {
    let raw = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let lease =
        Lease::from_json(&raw).map_err(|e| BadInput(format!("--lease {}: {e}", path.display())))?;
    Ok(Held {
        raw,
        lease,
        origin: format!("--lease {}", path.display()),
    })
}

/// `POST ENDPOINT/loadproof/lease` `{"holder", "seconds"}`; anything but a 200 with a lease in
/// it is bad input, with the status and body.
pub async fn acquire(http: &Http, endpoint: &str, holder: &str, seconds: u64) -> Result<Held> {
    let url = format!("{endpoint}{PATH}");
    let request = serde_json::json!({"holder": holder, "seconds": seconds}).to_string();
    let (status, raw) = http
        .post_json(&url, request, TIMEOUT)
        .await
        .map_err(|e| BadInput(format!("--acquire-lease: POST {url}: {e}")))?;
    if status != 200 {
        let quoted = String::from_utf8_lossy(raw.get(..QUOTED_BYTES).unwrap_or(&raw));
        return Err(BadInput(format!(
            "--acquire-lease: POST {url} answered HTTP {status}: {}",
            quoted.trim_end()
        ))
        .into());
    }
    let lease = Lease::from_json(&raw).map_err(|e| {
        BadInput(format!(
            "--acquire-lease: the answer of POST {url} is not a lease: {e}"
        ))
    })?;
    Ok(Held {
        raw,
        lease,
        origin: format!("POST {url} (--acquire-lease {seconds})"),
    })
}

impl Held {
    /// The token requests must carry, when the lease has one.
    pub fn bearer(&self) -> Option<&str> {
        self.lease.token.as_deref().filter(|t| !t.is_empty())
    }

    /// What a reader should know about the lease: where it came from, and anything the firing
    /// side can see that does not fit (another route, a window that misses the run). The audit
    /// decides what the lease is worth; these are notes.
    pub fn notes(&self, endpoint: &str, run: Option<(i64, i64)>, now_unix_ns: i64) -> Vec<String> {
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
        match self.bearer() {
            Some(_) if now_unix_ns >= l.until_unix_ns => notes.push(format!(
                "{} holds the bearer token of an expired lease (until {} Unix ns); the client was given it for every request and it is recorded nowhere else in this receipt",
                block::LEASE,
                l.until_unix_ns
            )),
            Some(_) => notes.push(format!(
                "{} holds the lease's bearer token, still valid until {} Unix ns ({:.0} s after this receipt was written); the client was given it for every request and it is recorded nowhere else in this receipt",
                block::LEASE,
                l.until_unix_ns,
                (l.until_unix_ns - now_unix_ns) as f64 / 1e9
            )),
            None => notes.push(
                "the lease carries no token: requests were sent without an Authorization header"
                    .to_owned(),
            ),
        }
        notes
    }
}
