//! Leases: the one thing that can make a run's window *isolated*.
//!
//! A window is isolated only when someone who controls the route granted an exclusive lease for
//! it, bound to the exact subject and route being measured, covering the run, with a stated
//! exclusion mechanism. A sentence saying "nobody else was using it" is prose, not a lease; a
//! lease for another model or another URL is not this window's. The raw lease (as the lessor
//! returned it) is kept as the evidence block [`super::block::LEASE`], so the audit reads the
//! lessor's words, never the firing side's copy of them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Schema identity of [`Lease`].
pub const LEASE_SCHEMA: &str = "loadproof.lease/v1";

/// An exclusive window granted by whoever controls a route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// [`LEASE_SCHEMA`].
    pub schema: String,
    /// The lessor's id for this lease.
    pub id: String,
    /// Who granted it (`loadproof sim 0.1.0`, a gateway, an operator's tool).
    pub issuer: String,
    /// Who holds it (free text from the holder's request).
    pub holder: String,
    /// The base URL the lease protects (`http://host:port`).
    pub route: String,
    /// Subject axes the lease is bound to (`model`, `engine`, `engine_version`, …): the lessor's
    /// statement of what it serves. An empty map is a generic lease and isolates nothing.
    pub subject: BTreeMap<String, String>,
    /// Start of the window, Unix ns (the lessor's clock).
    pub from_unix_ns: i64,
    /// End of the window, Unix ns.
    pub until_unix_ns: i64,
    /// How other traffic is kept out while the lease holds (e.g. "requests without the lease
    /// token are refused with 423"). Empty: no exclusion, so no isolation.
    pub exclusion: String,
    /// The bearer token itself. Only leases written before tokens left the document carry it,
    /// and a receipt holding one must not be published as it is (the token may still be live).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// sha256 of the bearer token requests must carry, when the exclusion is token-based. The
    /// token travels beside the document (the grant's `x-loadproof-lease-token` header), never
    /// in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_sha256: Option<String>,
    /// The `/metrics` gauge in which the lessor reports the lease that holds:
    /// `NAME{lease_id="ID"} 1` while lease ID holds, `NAME{lease_id=""} 0` when none does
    /// (`loadproof_sim_lease_active`, `loadproof_gate_lease_active`). The audit reads it from the
    /// run's own scrapes: a lease counts only when its lessor says it held across the run. A
    /// lease that names none cannot be checked, so it isolates nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readback: Option<String>,
}

/// Why bytes are not a lease.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// Not JSON, or not the lease shape.
    #[error("not a loadproof lease: line {line}, column {column}: {detail}")]
    Malformed {
        /// Line of the JSON error.
        line: usize,
        /// Column of the JSON error.
        column: usize,
        /// serde's message.
        detail: String,
    },
    /// Another schema.
    #[error("lease schema {found:?} is not {LEASE_SCHEMA:?}")]
    Schema {
        /// What the bytes say.
        found: String,
    },
}

impl Lease {
    /// Parses a lease as the lessor wrote it.
    pub fn from_json(bytes: &[u8]) -> Result<Lease, LeaseError> {
        let lease: Lease = serde_json::from_slice(bytes).map_err(|e| LeaseError::Malformed {
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        })?;
        if lease.schema != LEASE_SCHEMA {
            return Err(LeaseError::Schema {
                found: lease.schema,
            });
        }
        Ok(lease)
    }
}
