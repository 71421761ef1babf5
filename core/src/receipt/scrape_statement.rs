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
//!
//! Signed bodies alone can still be left out: a receipt without one of them reads as if that
//! scrape was never taken. So the lessor numbers the bodies it serves to the lease's holder (the
//! request carries the lease's token) while the lease holds, from 0 (`seq`, v2), and states at
//! release how many it served ([`super::LeaseAccount::scrapes`]): a number missing from the
//! receipt names the drop. Bodies served to anyone else, or with no lease holding, carry no
//! number, so other scrapers cannot break the holder's sequence.
//!
//! The lessor also keeps a running digest of the statements it numbered ([`ScrapeChain`]) and
//! states it at release: the one signature on its account then vouches for every numbered
//! statement whose bytes chain to it, so a reader checks one signature, not thousands (each
//! statement's own signature still stands for a receipt whose account never came).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Schema identity of [`ScrapeStatement`] as lessors write it now.
pub const SCRAPE_STATEMENT_SCHEMA: &str = "loadproof.scrape-statement/v2";

/// The first schema: no numbering. Still read (and never numbered), so receipts written
/// before lessors numbered their scrapes audit as they did.
pub const SCRAPE_STATEMENT_SCHEMA_V1: &str = "loadproof.scrape-statement/v1";

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
    /// Its number among the bodies the lessor served to the lease's holder under the lease,
    /// from 0 (v2; none: served to someone else, or with no lease holding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

impl ScrapeStatement {
    /// The statement of `body` served at `path` under `lease_id` at `served_unix_ns`, the
    /// holder's `seq`-th when it went to the lease's holder.
    pub fn of(
        path: &str,
        body: &[u8],
        lease_id: Option<String>,
        served_unix_ns: i64,
        seq: Option<u64>,
    ) -> ScrapeStatement {
        ScrapeStatement {
            schema: SCRAPE_STATEMENT_SCHEMA.to_owned(),
            path: path.to_owned(),
            body_sha256: super::sha256_hex(body),
            lease_id,
            served_unix_ns,
            seq,
        }
    }

    /// The bytes signed: compact JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a statement; `None` when the bytes are not one (unknown or repeated fields,
    /// another schema, a v1 statement with a number, a number without a lease).
    pub fn from_bytes(bytes: &[u8]) -> Option<ScrapeStatement> {
        let s: ScrapeStatement = serde_json::from_slice(bytes).ok()?;
        let ok = match s.schema.as_str() {
            SCRAPE_STATEMENT_SCHEMA => s.seq.is_none() || s.lease_id.is_some(),
            SCRAPE_STATEMENT_SCHEMA_V1 => s.seq.is_none(),
            _ => false,
        };
        ok.then_some(s)
    }
}

/// The running digest of the statements a lessor numbered under one lease, in their numbers'
/// order: `head₀ = sha256("loadproof.scrape-chain/v1")`, `headₙ₊₁ = sha256(headₙ ‖
/// sha256(statementₙ) ‖ signatureₙ)` over each statement's exact signed bytes and the 64 bytes
/// of its signature (Ed25519 signs deterministically, so the lessor knows it when it chains):
/// a statement the chain vouches for carries the very signature the lessor made, or none of
/// it is vouched for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScrapeChain {
    head: [u8; 32],
    len: u64,
}

impl Default for ScrapeChain {
    fn default() -> ScrapeChain {
        ScrapeChain {
            head: Sha256::digest(b"loadproof.scrape-chain/v1").into(),
            len: 0,
        }
    }
}

impl ScrapeChain {
    /// The next statement's bytes and its signature's, chained.
    pub fn push(&mut self, statement: &[u8], signature: &[u8]) {
        let mut h = Sha256::new();
        h.update(self.head);
        h.update(Sha256::digest(statement));
        h.update(signature);
        self.head = h.finalize().into();
        self.len = self.len.saturating_add(1);
    }

    /// Statements chained.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True before the first.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The head, lowercase hex (what the account states).
    pub fn hex(&self) -> String {
        crate::trace::hex(&self.head)
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
    fn the_chain_depends_on_every_statement_and_its_order() {
        let mut ab = ScrapeChain::default();
        assert!(ab.is_empty());
        ab.push(b"a", b"s");
        ab.push(b"b", b"s");
        let mut ba = ScrapeChain::default();
        ba.push(b"b", b"s");
        ba.push(b"a", b"s");
        let mut a = ScrapeChain::default();
        a.push(b"a", b"s");
        let mut other_signature = ScrapeChain::default();
        other_signature.push(b"a", b"t");
        assert_ne!(other_signature.hex(), a.hex());
        assert_eq!(ab.len(), 2);
        assert_ne!(ab.hex(), ba.hex());
        assert_ne!(ab.hex(), a.hex());
        assert_eq!(ab.hex().len(), 64);
        assert_ne!(ScrapeChain::default().hex(), a.hex());
    }

    #[test]
    fn a_statement_reads_back_from_the_bytes_signed() {
        let s = ScrapeStatement::of(
            "/metrics",
            b"x 1\n",
            Some("gate-lease-1".into()),
            7,
            Some(0),
        );
        assert_eq!(ScrapeStatement::from_bytes(&s.to_bytes()), Some(s.clone()));
        assert!(!String::from_utf8(s.to_bytes()).unwrap().contains('\n'));
        let mut other = serde_json::to_value(&s).unwrap();
        other["schema"] = "loadproof.lease/v1".into();
        assert_eq!(
            ScrapeStatement::from_bytes(other.to_string().as_bytes()),
            None
        );
        assert_eq!(signed_block_of("metrics/3"), "signed/metrics/3");
        // v1 (unnumbered) still reads; a number needs v2 and a lease.
        let v1 = br#"{"schema":"loadproof.scrape-statement/v1","path":"/metrics","body_sha256":"ab","lease_id":null,"served_unix_ns":1}"#;
        assert_eq!(ScrapeStatement::from_bytes(v1).map(|s| s.seq), Some(None));
        let mut numbered_v1 = serde_json::to_value(&s).unwrap();
        numbered_v1["schema"] = SCRAPE_STATEMENT_SCHEMA_V1.into();
        assert_eq!(
            ScrapeStatement::from_bytes(numbered_v1.to_string().as_bytes()),
            None
        );
        let unleased = ScrapeStatement::of("/metrics", b"", None, 1, Some(0));
        assert_eq!(ScrapeStatement::from_bytes(&unleased.to_bytes()), None);
    }
}
