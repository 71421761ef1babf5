//! Leases on `loadproof sim`: `POST /loadproof/lease` grants one exclusive window at a time,
//! and while it holds, `/v1/completions` requests that do not carry its bearer token are
//! refused with 423 Locked (and counted). `/metrics`, `/health` and `/v1/models` stay open, so
//! anyone can see that the endpoint is leased and how many requests the lease kept out.
//!
//! The lease is a `loadproof.lease/v1` document ([`Lease`]) bound to what the simulator
//! serves: the route the client addressed (`http://` + its `Host` header), the model, the
//! engine and its version, and the model revision and GPU SKU it was told to state. Its token
//! is 32 bytes of `/dev/urandom` (with the time, pid and a counter mixed in) through sha256; the
//! document carries only the token's sha256 (a receipt keeps the document, and a receipt is
//! published), the token itself travels in the grant's [`TOKEN_HEADER`]. The holder ends the
//! lease early with `DELETE /loadproof/lease` and its token ([`Lessor::release`]).
//!
//! Every scrape says which lease holds, in the gauge the lease names as its `readback`
//! (`loadproof_sim_lease_active{lease_id="…"} 1`), so the audit can check a receipt's lease
//! against the lessor's own words in the run's scrapes instead of believing the lease file.
//!
//! `loadproof gate` grants its leases with the same [`Lessor`], under its own [`Terms`] (id
//! prefix and exclusion sentence) and with the subject it reads back from its upstream at grant
//! time ([`Lessor::precheck`], then [`Lessor::grant_bound`]).

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hyper::header::HeaderValue;
use loadproof_core::receipt::{
    LEASE_ACCOUNT_SCHEMA, LEASE_SCHEMA, Lease, LeaseAccount, ScrapeChain, ScrapeStatement,
    sha256_hex,
};
use loadproof_core::signing::{SecretKey, Signed};
use serde_json::Value;

/// The longest lease granted (a week).
pub const MAX_SECONDS: f64 = 604_800.0;

/// Longest accepted `holder`, in bytes.
const MAX_HOLDER_BYTES: usize = 1024;

/// What the simulator grants leases on, fixed at start.
pub struct LessorConfig {
    /// `loadproof sim <version>`.
    pub issuer: String,
    /// The lease subject: model, engine, engine_version, model_revision, gpu_sku.
    pub subject: BTreeMap<String, String>,
    /// `http://ADDR` (or `https://`) of the listening socket, for a request without a usable
    /// `Host`; a route is always of its scheme.
    pub fallback_route: String,
}

/// What a lessor writes into every lease besides the subject: how its ids start and how it
/// keeps other traffic out.
pub struct Terms {
    /// Ids are `<id_prefix>-<n>-<from_unix_ns>` (`sim-lease`, `gate-lease`).
    pub id_prefix: &'static str,
    /// The lease's `exclusion`: the mechanism, stated exactly.
    pub exclusion: String,
    /// The `/metrics` gauge in which the lessor reports the lease that holds (the lease's
    /// `readback`).
    pub readback: &'static str,
}

/// Grants leases and checks requests against the one that holds.
pub struct Lessor {
    config: LessorConfig,
    terms: Terms,
    held: Mutex<Option<Held>>,
    granted: AtomicU64,
    refused: AtomicU64,
    signer: Option<SecretKey>,
}

/// The lease that holds (or held: it expires by its `until`, or its holder released it).
struct Held {
    id: String,
    holder: String,
    from_unix_ns: i64,
    until_unix_ns: i64,
    token: String,
    /// Requests admitted under the token (the lease account's count).
    admitted: u64,
    /// The tokens counted in the responses to them.
    tally: Arc<Tally>,
    /// The statements of the `/metrics` bodies signed for the holder so far, chained: their
    /// count is the next one's number, their head what the account states.
    served: ScrapeChain,
}

/// The tokens a lessor counted in the responses it served or relayed under one lease, each
/// added once its response is whole: what the account states beside the requests it admitted.
/// Shared with the response bodies still running (a relayed stream is counted as it ends).
#[derive(Debug, Default)]
pub struct Tally {
    /// Responses counted.
    counted: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
}

impl Tally {
    /// One response whose usage the lessor saw: `prompt_tokens` in, `completion_tokens` out.
    pub fn count(&self, prompt_tokens: u64, completion_tokens: u64) {
        self.prompt_tokens
            .fetch_add(prompt_tokens, Ordering::SeqCst);
        self.completion_tokens
            .fetch_add(completion_tokens, Ordering::SeqCst);
        self.counted.fetch_add(1, Ordering::SeqCst);
    }

    /// (responses counted, prompt tokens, completion tokens) so far.
    pub fn counts(&self) -> (u64, u64, u64) {
        (
            self.counted.load(Ordering::SeqCst),
            self.prompt_tokens.load(Ordering::SeqCst),
            self.completion_tokens.load(Ordering::SeqCst),
        )
    }
}

/// A release: the body to answer with, and the signed account of the lease when the lessor
/// signs (for [`LEASE_ACCOUNT_HEADER`]).
#[derive(Debug)]
pub struct Released {
    /// `{"released": ID, "until_unix_ns": …}`.
    pub json: String,
    /// A `loadproof.signed/v1` envelope of the lease's [`LeaseAccount`].
    pub account: Option<HeaderValue>,
}

pub use loadproof_core::receipt::LEASE_ACCOUNT_HEADER;

/// The response header that carries a granted lease's bearer token (the body is the lease
/// document, which names only the token's sha256).
pub const TOKEN_HEADER: &str = "x-loadproof-lease-token";

/// A granted lease: the document to answer with, and the token to send beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    /// The `loadproof.lease/v1` JSON, exactly the bytes to send.
    pub json: String,
    /// The bearer token, for [`TOKEN_HEADER`] only.
    pub token: String,
    /// `json` signed by the lessor's key (a `loadproof.signed/v1` envelope, one line), for
    /// [`SIGNED_HEADER`], when the lessor signs.
    pub signed: Option<String>,
}

/// The response header that carries the lessor's signature of the lease it granted (the
/// envelope holds the body's exact bytes).
pub const SIGNED_HEADER: &str = "x-loadproof-lease-signed";

pub use loadproof_core::receipt::SCRAPE_SIGNED_HEADER;

/// Why a lease was not granted: an HTTP status and a JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 400 (a bad request), 409 (a lease holds) or 500.
    pub status: u16,
    /// `{"error": {...}}`.
    pub body: String,
}

/// Why a completion request was kept out: the lease that holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    /// Who holds it.
    pub holder: String,
    /// Until when, Unix ns.
    pub until_unix_ns: i64,
}

impl Lessor {
    /// The simulator's lessor, with no lease held.
    pub fn new(config: LessorConfig) -> Lessor {
        Lessor::with_terms(
            config,
            Terms {
                id_prefix: "sim-lease",
                exclusion: EXCLUSION.to_owned(),
                readback: "loadproof_sim_lease_active",
            },
        )
    }

    /// A lessor with its own terms, with no lease held.
    pub fn with_terms(config: LessorConfig, terms: Terms) -> Lessor {
        Lessor {
            config,
            terms,
            held: Mutex::new(None),
            granted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            signer: None,
        }
    }

    /// The signed statement of a `path` body this lessor serves now (for
    /// [`SCRAPE_SIGNED_HEADER`]), naming the lease that holds; none when it does not sign.
    /// Served to the lease's holder (`authorization` carries its token, as
    /// [`Lessor::credential`] reads it), the body gets the next of the lease's numbers, under
    /// the same lock that hands it out, so the numbers follow the order of serving.
    pub fn sign_scrape(
        &self,
        path: &str,
        body: &[u8],
        now_unix_ns: i64,
        authorization: Option<&[u8]>,
    ) -> Option<HeaderValue> {
        let key = self.signer.as_ref()?;
        let mut held = self.lock();
        let active = held.as_mut().filter(|h| now_unix_ns < h.until_unix_ns);
        let presented = authorization.and_then(|a| a.strip_prefix(b"Bearer "));
        let signed = match active {
            Some(h) => {
                let holder = presented.is_some_and(|t| same_bytes(t, h.token.as_bytes()));
                let seq = holder.then(|| h.served.len());
                let statement =
                    ScrapeStatement::of(path, body, Some(h.id.clone()), now_unix_ns, seq)
                        .to_bytes();
                let signed = Signed::sign(key, &statement);
                if holder {
                    h.served.push(&statement, &signed.signature_bytes());
                }
                signed
            }
            None => Signed::sign(
                key,
                &ScrapeStatement::of(path, body, None, now_unix_ns, None).to_bytes(),
            ),
        }
        .to_json();
        drop(held);
        HeaderValue::from_str(&signed).ok()
    }

    /// This lessor signing every lease it grants with `key` (`--signing-key`).
    pub fn signing_with(mut self, key: Option<SecretKey>) -> Lessor {
        self.signer = key;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Held>> {
        // A handler that panicked holding the lock leaves a consistent value: keep using it.
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Grants a lease for the body `{"holder": "...", "seconds": N}` at `now_unix_ns`, or says
    /// why not. `host` is the request's `Host` header: the route is what the client addressed.
    /// The answer is the lease JSON and the token that goes beside it.
    pub fn grant(
        &self,
        body: &[u8],
        host: Option<&str>,
        now_unix_ns: i64,
    ) -> Result<Granted, Refusal> {
        self.grant_bound(body, host, now_unix_ns, self.config.subject.clone())
    }

    /// What [`Lessor::grant_bound`] would refuse before any subject is known: a bad body
    /// (400) or a lease that holds (409). A lessor that must ask someone for the subject
    /// asks only after this passes; the grant checks both again.
    pub fn precheck(&self, body: &[u8], now_unix_ns: i64) -> Result<(), Refusal> {
        parse_request(body)?;
        match self.lock().as_ref() {
            Some(h) => conflict(h, now_unix_ns),
            None => Ok(()),
        }
    }

    /// [`Lessor::grant`] bound to `subject` instead of the configured one.
    pub fn grant_bound(
        &self,
        body: &[u8],
        host: Option<&str>,
        now_unix_ns: i64,
        subject: BTreeMap<String, String>,
    ) -> Result<Granted, Refusal> {
        let (holder, seconds) = parse_request(body)?;
        let mut held = self.lock();
        if let Some(h) = held.as_ref() {
            conflict(h, now_unix_ns)?;
        }
        let n = self.granted.fetch_add(1, Ordering::Relaxed) + 1;
        let token = fresh_token(n, now_unix_ns);
        let duration_ns = (seconds * 1e9).round() as i64;
        let until_unix_ns = now_unix_ns.saturating_add(duration_ns);
        let route = match host {
            Some(h) if usable_host(h) && names_us(h, &self.config.fallback_route) => {
                let scheme = self
                    .config
                    .fallback_route
                    .split_once("://")
                    .map_or("http", |(scheme, _)| scheme);
                format!("{scheme}://{h}")
            }
            _ => self.config.fallback_route.clone(),
        };
        let id = format!("{}-{n}-{now_unix_ns}", self.terms.id_prefix);
        let lease = Lease {
            schema: LEASE_SCHEMA.to_owned(),
            id: id.clone(),
            issuer: self.config.issuer.clone(),
            holder: holder.clone(),
            route,
            subject,
            from_unix_ns: now_unix_ns,
            until_unix_ns,
            exclusion: self.terms.exclusion.clone(),
            token: None,
            token_sha256: Some(sha256_hex(token.as_bytes())),
            readback: Some(self.terms.readback.to_owned()),
        };
        let json = serde_json::to_string_pretty(&lease).map_err(|e| Refusal {
            status: 500,
            body: serde_json::json!({"error": {"message": format!("writing the lease: {e}"), "type": "InternalServerError", "code": 500}}).to_string(),
        })? + "\n";
        *held = Some(Held {
            id,
            holder,
            from_unix_ns: now_unix_ns,
            until_unix_ns,
            token: token.clone(),
            admitted: 0,
            tally: Arc::default(),
            served: ScrapeChain::default(),
        });
        let signed = self
            .signer
            .as_ref()
            .map(|key| Signed::sign(key, json.as_bytes()).to_json());
        Ok(Granted {
            json,
            token,
            signed,
        })
    }

    /// `DELETE /loadproof/lease` by its holder: the lease that holds ends now. 200 with
    /// `{"released": ID}`; 404 when none holds; 403 without its token (counted as a refusal).
    pub fn release(
        &self,
        authorization: Option<&[u8]>,
        now_unix_ns: i64,
    ) -> Result<Released, Refusal> {
        let mut held = self.lock();
        let Some(h) = held.as_mut().filter(|h| now_unix_ns < h.until_unix_ns) else {
            return Err(Refusal {
                status: 404,
                body: serde_json::json!({"error": {"message": "no lease holds", "type": "NotFound", "code": 404}}).to_string(),
            });
        };
        let presented = authorization.and_then(|a| a.strip_prefix(b"Bearer "));
        if !presented.is_some_and(|t| same_bytes(t, h.token.as_bytes())) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Err(Refusal {
                status: 403,
                body: serde_json::json!({"error": {"message": "only the holder may release a lease: `Authorization: Bearer <the lease token>`", "type": "Forbidden", "code": 403}}).to_string(),
            });
        }
        // The token stays known (a gateway keeps scrubbing it); the window closes now.
        h.until_unix_ns = now_unix_ns;
        let account = self.signer.as_ref().and_then(|key| {
            // A response still running at release, or one whose usage was never seen, is in
            // the requests and not in the sums: stated, never guessed.
            let (counted, prompt, completion) = h.tally.counts();
            let account = LeaseAccount {
                schema: LEASE_ACCOUNT_SCHEMA.to_owned(),
                lease_id: h.id.clone(),
                from_unix_ns: h.from_unix_ns,
                closed_unix_ns: now_unix_ns,
                requests: h.admitted,
                prompt_tokens: Some(prompt),
                completion_tokens: Some(completion),
                uncounted_requests: Some(h.admitted.saturating_sub(counted)),
                scrapes: Some(h.served.len()),
                scrape_chain: Some(h.served.hex()),
            };
            HeaderValue::from_str(&Signed::sign(key, &account.to_bytes()).to_json()).ok()
        });
        Ok(Released {
            json: serde_json::json!({"released": h.id, "until_unix_ns": now_unix_ns}).to_string(),
            account,
        })
    }

    /// Whether a completion request with this `Authorization` header may proceed at
    /// `now_unix_ns`; a refusal is counted. Admitted under a lease, the request comes with the
    /// lease's [`Tally`], where its response's tokens are counted once it is whole.
    pub fn admit(
        &self,
        authorization: Option<&[u8]>,
        now_unix_ns: i64,
    ) -> Result<Option<Arc<Tally>>, Locked> {
        let mut held = self.lock();
        let Some(h) = held.as_mut().filter(|h| now_unix_ns < h.until_unix_ns) else {
            return Ok(None);
        };
        let presented = authorization.and_then(|a| a.strip_prefix(b"Bearer "));
        if presented.is_some_and(|t| same_bytes(t, h.token.as_bytes())) {
            h.admitted += 1;
            return Ok(Some(Arc::clone(&h.tally)));
        }
        self.refused.fetch_add(1, Ordering::Relaxed);
        Err(Locked {
            holder: h.holder.clone(),
            until_unix_ns: h.until_unix_ns,
        })
    }

    /// The lease credential `headers` present, as `Bearer <token>` bytes: the
    /// [`crate::secret::LEASE_HEADER`] value when there is one (`Authorization` then carries the
    /// server's API key), else the `Authorization` value that carries the token (a second
    /// header must not hide it), else the first.
    pub fn credential(&self, headers: &hyper::HeaderMap) -> Option<Vec<u8>> {
        if let Some(v) = headers.get(crate::secret::LEASE_HEADER) {
            return Some([b"Bearer ".as_slice(), v.as_bytes()].concat());
        }
        let all = headers.get_all(hyper::header::AUTHORIZATION);
        all.iter()
            .find(|v| self.carries_token(Some(v.as_bytes())))
            .or_else(|| all.iter().next())
            .map(|v| v.as_bytes().to_vec())
    }

    /// Whether `authorization` carries the token of the last lease granted, holding or
    /// expired: a header a gateway must not pass on.
    pub fn carries_token(&self, authorization: Option<&[u8]>) -> bool {
        let presented = authorization.and_then(|a| a.strip_prefix(b"Bearer "));
        match (self.lock().as_ref(), presented) {
            (Some(h), Some(t)) => same_bytes(t, h.token.as_bytes()),
            _ => false,
        }
    }

    /// The id of the lease that holds at `now_unix_ns`.
    pub fn active_id(&self, now_unix_ns: i64) -> Option<String> {
        self.lock()
            .as_ref()
            .filter(|h| now_unix_ns < h.until_unix_ns)
            .map(|h| h.id.clone())
    }

    /// The token of the last lease granted, holding or not: what a gateway must never forward.
    pub fn last_token(&self) -> Option<String> {
        self.lock().as_ref().map(|h| h.token.clone())
    }

    /// Completion requests refused so far.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

/// The exclusion mechanism, stated in every lease.
const EXCLUSION: &str = "while this lease holds (from_unix_ns <= now < until_unix_ns on the \
simulator's clock), loadproof sim refuses every POST /v1/completions request that does not carry \
`Authorization: Bearer <token>` with 423 Locked and counts it in \
loadproof_sim_lease_refused_total; a second lease is refused with 409 Conflict; /metrics, \
/health and /v1/models stay open (loadproof_sim_lease_active{lease_id} names the lease)";

/// 409 while `held` holds at `now_unix_ns`.
fn conflict(held: &Held, now_unix_ns: i64) -> Result<(), Refusal> {
    if now_unix_ns >= held.until_unix_ns {
        return Ok(());
    }
    Err(Refusal {
        status: 409,
        body: serde_json::json!({
            "error": {
                "message": format!(
                    "a lease is already held by {:?} until {} (Unix ns); try again after it expires",
                    held.holder, held.until_unix_ns
                ),
                "type": "Conflict",
                "code": 409,
                "holder": held.holder,
                "until_unix_ns": held.until_unix_ns,
            }
        })
        .to_string(),
    })
}

fn bad(message: String) -> Refusal {
    Refusal {
        status: 400,
        body: serde_json::json!({
            "error": {"message": message, "type": "BadRequestError", "param": "body", "code": 400}
        })
        .to_string(),
    }
}

/// `{"holder": "...", "seconds": N}` → (holder, seconds).
fn parse_request(body: &[u8]) -> Result<(String, f64), Refusal> {
    let doc: Value = serde_json::from_slice(body)
        .map_err(|e| bad(format!("the body is not valid JSON: {e}")))?;
    let holder = match doc.get("holder") {
        Some(Value::String(h)) if !h.is_empty() && h.len() <= MAX_HOLDER_BYTES => h.clone(),
        _ => {
            return Err(bad(format!(
                "holder must be a non-empty string of at most {MAX_HOLDER_BYTES} bytes (who holds the lease)"
            )));
        }
    };
    let seconds = match doc.get("seconds").and_then(Value::as_f64) {
        Some(s) if s.is_finite() && s > 0.0 && s <= MAX_SECONDS => s,
        _ => {
            return Err(bad(format!(
                "seconds must be a number greater than 0 and at most {MAX_SECONDS}"
            )));
        }
    };
    Ok((holder, seconds))
}

/// A `Host` value fit for a URL: printable, no path, no spaces.
fn usable_host(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 255
        && h.bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'/' | b'\\' | b'?' | b'#' | b'@'))
}

/// Whether a `Host` header can name this lessor, whose own address is `ours`
/// (`http://IP:PORT`): the same port, and an IP literal only when it is ours (or both are
/// loopback, or we listen on every address). A client cannot have a lease issued for another
/// server's route by naming it in `Host` (a name is taken as given: the audit checks the
/// route's own scrapes).
fn names_us(host: &str, ours: &str) -> bool {
    let Some(our_addr) = ours
        .split_once("://")
        .and_then(|(_, a)| a.parse::<std::net::SocketAddr>().ok())
    else {
        return false;
    };
    let (name, port) = match host.rsplit_once(':') {
        Some((n, p)) if !n.ends_with(']') || n.starts_with('[') => match p.parse::<u16>() {
            Ok(p) => (n, p),
            Err(_) => return false,
        },
        _ => (host, 80),
    };
    if port != our_addr.port() {
        return false;
    }
    let name = name.trim_start_matches('[').trim_end_matches(']');
    match name.parse::<std::net::IpAddr>() {
        Ok(ip) => {
            ip == our_addr.ip()
                || our_addr.ip().is_unspecified()
                || (ip.is_loopback() && our_addr.ip().is_loopback())
        }
        Err(_) => true,
    }
}

/// Compares without stopping at the first difference.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// 16 hex digits that name this process among others (a gateway's loop header).
pub fn fresh_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    fresh_token(0, now).chars().take(16).collect()
}

/// 64 hex digits no one else can guess: sha256 over OS randomness, the clock, the pid, a
/// counter and std's per-process random hash keys.
fn fresh_token(n: u64, now_unix_ns: i64) -> String {
    let mut seed = Vec::with_capacity(96);
    let mut random = [0u8; 32];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut random))
        .is_ok()
    {
        seed.extend_from_slice(&random);
    }
    let mut keyed = std::collections::hash_map::RandomState::new().build_hasher();
    keyed.write_u64(n);
    seed.extend_from_slice(&keyed.finish().to_le_bytes());
    seed.extend_from_slice(&now_unix_ns.to_le_bytes());
    seed.extend_from_slice(&std::process::id().to_le_bytes());
    seed.extend_from_slice(&n.to_le_bytes());
    sha256_hex(&seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lessor() -> Lessor {
        Lessor::new(LessorConfig {
            issuer: "loadproof sim 0.1.0".into(),
            subject: BTreeMap::from([("model".to_owned(), "sim".to_owned())]),
            fallback_route: "http://127.0.0.1:1".into(),
        })
    }

    #[test]
    fn one_lease_at_a_time_and_only_its_token_passes() {
        let l = lessor();
        let granted = l
            .grant(br#"{"holder": "me", "seconds": 2}"#, Some("h:1"), 1_000)
            .unwrap();
        let lease = Lease::from_json(granted.json.as_bytes()).unwrap();
        assert_eq!(lease.route, "http://h:1");
        assert_eq!(lease.until_unix_ns, 2_000_001_000);
        // The document names the token's digest, never the token.
        let token = granted.token;
        assert_eq!(token.len(), 64);
        assert_eq!(lease.token, None);
        assert!(!granted.json.contains(&token));
        assert_eq!(lease.token_sha256, Some(sha256_hex(token.as_bytes())));
        let conflict = l
            .grant(br#"{"holder": "you", "seconds": 1}"#, None, 2_000)
            .unwrap_err();
        assert_eq!(conflict.status, 409);
        assert!(
            conflict.body.contains("\"holder\":\"me\""),
            "{}",
            conflict.body
        );
        assert!(l.admit(None, 5).is_err());
        assert!(l.admit(Some(b"Bearer nope"), 5).is_err());
        assert!(
            l.admit(Some(format!("Bearer {token}").as_bytes()), 5)
                .is_ok()
        );
        assert_eq!(l.refused(), 2);
        assert!(l.active_id(2_000_000_999).is_some());
        // Expired: open again, and a new lease may be granted.
        assert!(l.active_id(2_000_001_000).is_none());
        assert!(l.admit(None, 2_000_001_000).is_ok());
        let next = l
            .grant(br#"{"holder": "you", "seconds": 1}"#, None, 2_000_001_000)
            .unwrap();
        assert_ne!(next.token, token);
        let next = Lease::from_json(next.json.as_bytes()).unwrap();
        assert_eq!(next.route, "http://127.0.0.1:1");
    }

    #[test]
    fn a_bound_grant_states_its_own_terms_and_subject() {
        let l = Lessor::with_terms(
            LessorConfig {
                issuer: "loadproof gate 0.1.0 for http://u:1".into(),
                subject: BTreeMap::new(),
                fallback_route: "http://127.0.0.1:2".into(),
            },
            Terms {
                id_prefix: "gate-lease",
                exclusion: "the gateway refuses".into(),
                readback: "loadproof_gate_lease_active",
            },
        );
        let body = br#"{"holder": "me", "seconds": 2}"#;
        assert_eq!(l.precheck(b"nope", 0).unwrap_err().status, 400);
        assert!(l.precheck(body, 0).is_ok());
        assert!(!l.carries_token(Some(b"Bearer x")));
        let subject = BTreeMap::from([("engine".to_owned(), "vllm".to_owned())]);
        let granted = l
            .grant_bound(body, Some("g:3"), 7, subject.clone())
            .unwrap();
        let lease = Lease::from_json(granted.json.as_bytes()).unwrap();
        assert_eq!(lease.id, "gate-lease-1-7");
        assert_eq!(lease.subject, subject);
        assert_eq!(lease.exclusion, "the gateway refuses");
        assert_eq!(l.precheck(body, 8).unwrap_err().status, 409);
        let token = granted.token;
        let header = format!("Bearer {token}");
        assert!(l.carries_token(Some(header.as_bytes())));
        // Expired: a new lease may be granted; the old token stays recognisable until then.
        assert!(l.precheck(body, 2_000_000_007).is_ok());
        assert!(l.carries_token(Some(header.as_bytes())));
        assert!(!l.carries_token(None));
    }

    #[test]
    fn a_signing_lessor_signs_its_lease_its_scrapes_and_its_account_of_what_it_admitted() {
        let key = SecretKey::from_seed([3; 32]);
        let l = lessor().signing_with(Some(key.clone()));
        let granted = l
            .grant(br#"{"holder": "me", "seconds": 60}"#, None, 10)
            .unwrap();
        let signed = Signed::from_json(granted.signed.unwrap().as_bytes()).unwrap();
        assert_eq!(signed.statement(), granted.json.as_bytes());
        assert_eq!(signed.key(), &key.public());
        let id = Lease::from_json(granted.json.as_bytes()).unwrap().id;
        let header = format!("Bearer {}", granted.token);
        for t in 11..14 {
            let tally = l.admit(Some(header.as_bytes()), t).unwrap();
            // Two responses whole with their usage, the third never.
            if t < 13 {
                tally.unwrap().count(10, 5);
            }
        }
        assert!(
            l.admit(Some(b"Bearer other"), 14).is_err(),
            "refused: not admitted"
        );
        let statement = |authorization: Option<&[u8]>, at: i64| {
            let scrape = l
                .sign_scrape("/metrics", b"x 1\n", at, authorization)
                .unwrap();
            let scrape = Signed::from_json(scrape.as_bytes()).unwrap();
            ScrapeStatement::from_bytes(scrape.statement()).unwrap()
        };
        let first = statement(Some(header.as_bytes()), 15);
        assert_eq!(first.lease_id.as_deref(), Some(id.as_str()));
        assert_eq!(first.body_sha256, sha256_hex(b"x 1\n"));
        // The holder's scrapes are numbered; anyone else's are not, and take no number.
        assert_eq!(first.seq, Some(0));
        let other = statement(Some(b"Bearer other"), 15);
        assert_eq!(
            (other.lease_id.as_deref(), other.seq),
            (Some(id.as_str()), None)
        );
        assert_eq!(statement(None, 15).seq, None);
        assert_eq!(statement(Some(header.as_bytes()), 15).seq, Some(1));
        let released = l.release(Some(header.as_bytes()), 16).unwrap();
        let account = Signed::from_json(released.account.unwrap().as_bytes()).unwrap();
        let account = LeaseAccount::from_bytes(account.statement()).unwrap();
        assert_eq!(
            (account.lease_id.as_str(), account.requests),
            (id.as_str(), 3)
        );
        assert_eq!(
            (
                account.prompt_tokens,
                account.completion_tokens,
                account.uncounted_requests
            ),
            (Some(20), Some(10), Some(1))
        );
        assert_eq!((account.from_unix_ns, account.closed_unix_ns), (10, 16));
        assert_eq!(account.scrapes, Some(2));
        // Released: the holder's next scrape is under no lease, and unnumbered.
        let after = statement(Some(header.as_bytes()), 17);
        assert_eq!((after.lease_id, after.seq), (None, None));
        // An unsigned lessor signs nothing.
        assert!(lessor().sign_scrape("/metrics", b"", 1, None).is_none());
    }

    #[test]
    fn the_holder_releases_a_lease_and_every_scrape_says_which_lease_holds() {
        let l = lessor();
        let granted = l
            .grant(br#"{"holder": "me", "seconds": 60}"#, None, 10)
            .unwrap();
        let lease = Lease::from_json(granted.json.as_bytes()).unwrap();
        let id = lease.id;
        assert_eq!(
            lease.readback.as_deref(),
            Some("loadproof_sim_lease_active")
        );
        assert_eq!(l.active_id(11), Some(id.clone()));
        assert_eq!(l.release(None, 12).unwrap_err().status, 403);
        assert_eq!(l.release(Some(b"Bearer nope"), 12).unwrap_err().status, 403);
        let header = format!("Bearer {}", granted.token);
        assert!(
            l.release(Some(header.as_bytes()), 13)
                .unwrap()
                .json
                .contains(&id)
        );
        assert!(l.active_id(14).is_none());
        assert!(
            l.admit(None, 14).is_ok(),
            "released: the endpoint is open again"
        );
        assert_eq!(
            l.release(Some(header.as_bytes()), 15).unwrap_err().status,
            404
        );
        // A gateway still knows the token, to keep it from the upstream.
        assert_eq!(l.last_token(), Some(granted.token));
        assert!(
            l.grant(br#"{"holder": "you", "seconds": 1}"#, None, 16)
                .is_ok()
        );
    }

    #[test]
    fn a_host_header_cannot_have_a_lease_issued_for_another_servers_route() {
        let l = lessor(); // listens on 127.0.0.1:1
        for (host, route) in [
            ("127.0.0.1:1", "http://127.0.0.1:1"),
            ("localhost:1", "http://localhost:1"),
            ("127.0.0.1:9", "http://127.0.0.1:1"),
            ("10.0.0.7:1", "http://127.0.0.1:1"),
            ("[::1]:1", "http://[::1]:1"),
            ("sim", "http://127.0.0.1:1"),
        ] {
            let granted = l
                .grant(br#"{"holder": "me", "seconds": 1}"#, Some(host), 0)
                .unwrap();
            let lease = Lease::from_json(granted.json.as_bytes()).unwrap();
            assert_eq!(lease.route, route, "{host}");
            // The next grant at a later time: the first has expired.
            let _ = l.release(Some(format!("Bearer {}", granted.token).as_bytes()), 0);
        }
    }

    #[test]
    fn bad_requests_are_400() {
        let l = lessor();
        for body in [
            &b"nope"[..],
            br#"{"seconds": 1}"#,
            br#"{"holder": "", "seconds": 1}"#,
            br#"{"holder": "me"}"#,
            br#"{"holder": "me", "seconds": 0}"#,
            br#"{"holder": "me", "seconds": 1e9}"#,
        ] {
            assert_eq!(l.grant(body, None, 0).unwrap_err().status, 400);
        }
        assert!(l.active_id(0).is_none());
    }
}
