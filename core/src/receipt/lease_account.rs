//! What a signing lessor states when a lease ends: how many requests it admitted under it.
//!
//! The client says how many requests it sent and the engine's counters say how much work was
//! done; neither says how much came in under the lease's token. The lessor does, and only it
//! can: it admitted each one. Signed, its count is a third account the claimant did not write —
//! fewer admitted than the client says completed, or more than it offered, is a contradiction
//! the audit names.

use serde::{Deserialize, Serialize};

/// Schema identity of [`LeaseAccount`].
pub const LEASE_ACCOUNT_SCHEMA: &str = "loadproof.lease-account/v1";

/// The response header of a lease's release that carries the lessor's signed account.
pub const LEASE_ACCOUNT_HEADER: &str = "x-loadproof-lease-account-signed";

/// One lease's account, as its lessor kept it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseAccount {
    /// [`LEASE_ACCOUNT_SCHEMA`].
    pub schema: String,
    /// The lease accounted for.
    pub lease_id: String,
    /// When it was granted, Unix ns (the lessor's clock).
    pub from_unix_ns: i64,
    /// When it was released, Unix ns (the lessor's clock).
    pub closed_unix_ns: i64,
    /// Requests admitted under the lease's token.
    pub requests: u64,
}

impl LeaseAccount {
    /// The bytes signed: compact JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads an account; `None` when the bytes are not one.
    pub fn from_bytes(bytes: &[u8]) -> Option<LeaseAccount> {
        let a: LeaseAccount = serde_json::from_slice(bytes).ok()?;
        (a.schema == LEASE_ACCOUNT_SCHEMA).then_some(a)
    }
}
