//! Who vouches for the window: the lease as its lessor signed it, checked against the keys the
//! reviewer trusts.
//!
//! Without a signature every fact about the window is the claimant's to type (the lease, the
//! gauge in the scrapes, the subject): such a receipt is *self-attested*, and says so. With the
//! lessor's signature over the exact lease bytes the receipt holds, and the lessor's key among
//! those the reviewer trusts ([`super::Policy::trusted_keys`]), the lease is the lessor's word,
//! not the claimant's: *signed*. A signature that does not verify, or that covers another
//! lease, is not a weaker attestation but a tampered receipt: an inconsistency, refused.

use serde::{Deserialize, Serialize};

use crate::receipt::{Receipt, block};
use crate::signing::{Signed, TrustSet};

/// How well the window's evidence is vouched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The lease is signed by a key the reviewer trusts.
    Signed,
    /// Nothing the reviewer trusts vouches for it: the claimant's word.
    SelfAttested,
}

/// The attestation of one audited receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// [`Level::Signed`] or [`Level::SelfAttested`].
    pub level: Level,
    /// Why, in one line.
    pub reason: String,
    /// The lease's signature, when the receipt holds one that verifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_key: Option<SignerFacts>,
    /// How many keys the reviewer trusted (0: every receipt is self-attested).
    pub trusted_keys: usize,
}

/// The key behind a verified signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignerFacts {
    /// [`crate::signing::PublicKey::id`].
    pub key_id: String,
    /// The key as a public key line (what a reviewer would add to trust it).
    pub key: String,
    /// True when the reviewer trusts it.
    pub trusted: bool,
    /// The comment the reviewer's key file gives it, when trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_as: Option<String>,
}

/// The settle line of a standing refused for want of a trusted signature.
pub const SIGNED_SETTLE: &str = "fire through a lessor that signs its leases (`loadproof gate --signing-key`, `loadproof sim --signing-key`) and trust its public key (`--trust KEYFILE`)";

/// Reads the lease's signature: the attestation, and an inconsistency when a signature is
/// present but does not hold.
pub fn read(
    receipt: &Receipt,
    block_bytes: &super::client::BlockReader<'_>,
    trust: &TrustSet,
) -> (Attestation, Option<String>) {
    let trusted_keys = trust.lines().len();
    let self_attested = |reason: String, key: Option<SignerFacts>| Attestation {
        level: Level::SelfAttested,
        reason,
        lease_key: key,
        trusted_keys,
    };
    if !receipt.has_block(block::LEASE_SIGNED) {
        let why = if receipt.lease.is_some() {
            "self-attested: the lease is not signed by its lessor"
        } else {
            "self-attested: no lease, so nothing a lessor signed"
        };
        return (self_attested(why.to_owned(), None), None);
    }
    let signed = match block_bytes(block::LEASE_SIGNED) {
        Ok(bytes) => Signed::from_json(&bytes),
        Err(why) => {
            return (
                self_attested(
                    format!("self-attested: the signed lease cannot be read: {why}"),
                    None,
                ),
                None,
            );
        }
    };
    let signed = match signed {
        Ok(s) => s,
        Err(e) => {
            return (
                self_attested(
                    format!("self-attested: the lease's signature is refused: {e}"),
                    None,
                ),
                Some(format!("{}: {e}", block::LEASE_SIGNED)),
            );
        }
    };
    let lease_name = receipt.lease.as_deref().unwrap_or(block::LEASE);
    let same = block_bytes(lease_name).is_ok_and(|b| b.as_ref() == signed.statement());
    let key = signed.key();
    let trusted_as = trust.comment(key).map(str::to_owned);
    let facts = SignerFacts {
        key_id: key.id(),
        key: key.to_line(""),
        trusted: trusted_as.is_some(),
        trusted_as: trusted_as.clone(),
    };
    if !same {
        return (
            self_attested(
                format!(
                    "self-attested: key {} signed another lease than the one this receipt holds",
                    key.id()
                ),
                Some(facts),
            ),
            Some(format!(
                "{} is signed by key {} over other bytes than the receipt's lease ({lease_name}): the lease was edited or swapped after signing",
                block::LEASE_SIGNED,
                key.id()
            )),
        );
    }
    match trusted_as {
        Some(name) => (
            Attestation {
                level: Level::Signed,
                reason: format!(
                    "signed: the lease is signed by key {}{}, which you trust",
                    key.id(),
                    if name.is_empty() {
                        String::new()
                    } else {
                        format!(" ({name})")
                    }
                ),
                lease_key: Some(facts),
                trusted_keys,
            },
            None,
        ),
        None => (
            self_attested(
                format!(
                    "self-attested: the lease is signed by key {}, which is not among the {trusted_keys} key(s) you trust",
                    key.id()
                ),
                Some(facts),
            ),
            None,
        ),
    }
}
