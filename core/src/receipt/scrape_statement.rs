//! What a signing lessor states about each `/metrics` body it serves: the body's sha256, the
//! lease that held when it served it, and its own clock.
//!
//! A scrape body is where the audit reads the subject (the engine's own `*_info` families), the
//! lease gauge and every counter. Digested in the receipt, it is still the claimant's file: a
//! forger writes a body, digests it, and it reads as served. Signed by the lessor when it
//! served it, a body is the lessor's word instead: swapping it for another (digest recomputed)
//! breaks the statement's digest, and a statement made under another lease names that lease.
//! The statement is one line of compact JSON, the exact bytes the lessor signs
//! ([`crate::signing::Signed`]), so it travels in an HTTP header.

use serde::{Deserialize, Serialize};

/// Schema identity of [`ScrapeStatement`].
pub const SCRAPE_STATEMENT_SCHEMA: &str = "loadproof.scrape-statement/v1";

/// The response header a signing lessor sends the signed statement of a `/metrics` body in.
pub const SCRAPE_SIGNED_HEADER: &str = "x-loadproof-scrape-signed";

/// One body, as its lessor served it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScrapeStatement {
    /// [`SCRAPE_STATEMENT_SCHEMA`].
    pub schema: String,
    /// The path served (`/metrics`).
    pub path: String,
    /// sha256 of the body's bytes, lowercase hex.
    pub body_sha256: String,
    /// The lease that held when the body was served (none: no lease held).
    pub lease_id: Option<String>,
    /// When the lessor served it, Unix ns on the lessor's clock.
    pub served_unix_ns: i64,
}

impl ScrapeStatement {
    /// The statement of `body` served at `path` under `lease_id` at `served_unix_ns`.
    pub fn of(
        path: &str,
        body: &[u8],
        lease_id: Option<String>,
        served_unix_ns: i64,
    ) -> ScrapeStatement {
        ScrapeStatement {
            schema: SCRAPE_STATEMENT_SCHEMA.to_owned(),
            path: path.to_owned(),
            body_sha256: super::sha256_hex(body),
            lease_id,
            served_unix_ns,
        }
    }

    /// The bytes signed: compact JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a statement; `None` when the bytes are not one (unknown or repeated fields,
    /// another schema).
    pub fn from_bytes(bytes: &[u8]) -> Option<ScrapeStatement> {
        let s: ScrapeStatement = serde_json::from_slice(bytes).ok()?;
        (s.schema == SCRAPE_STATEMENT_SCHEMA).then_some(s)
    }
}

/// The block holding the signed statement of the scrape body in block `body` (`metrics/17` →
/// `signed/metrics/17`).
pub fn signed_block_of(body: &str) -> String {
    format!("signed/{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_reads_back_from_the_bytes_signed() {
        let s = ScrapeStatement::of("/metrics", b"x 1\n", Some("gate-lease-1".into()), 7);
        assert_eq!(ScrapeStatement::from_bytes(&s.to_bytes()), Some(s.clone()));
        assert!(!String::from_utf8(s.to_bytes()).unwrap().contains('\n'));
        let mut other = serde_json::to_value(&s).unwrap();
        other["schema"] = "loadproof.lease/v1".into();
        assert_eq!(
            ScrapeStatement::from_bytes(other.to_string().as_bytes()),
            None
        );
        assert_eq!(signed_block_of("metrics/3"), "signed/metrics/3");
    }
}
