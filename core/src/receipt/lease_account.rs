//! What a signing lessor states when a lease ends: how many requests it admitted under it, and
//! the tokens it counted in what it forwarded.
//!
//! The client says how many requests it sent and the engine's counters say how much work was
//! done; neither says how much came in under the lease's token. The lessor does, and only it
//! can: it admitted each one. Signed, its count is a third account the claimant did not write —
//! fewer admitted than the client says completed, or more than it offered, is a contradiction
//! the audit names.
//!
//! Tokens (v2) are counted as the lessor saw them, never guessed: a lessor that did not see a
//! response's usage (a stream the client asked without `stream_options.include_usage`, an error,
//! a response cut or still running at release) leaves it out of the sums and counts it in
//! [`LeaseAccount::uncounted_requests`] instead, so the sums are exact for the responses counted
//! and a lower bound for the lease whenever that count is not 0.
//!
//! It also states (v2) how many `/metrics` bodies the lessor served to the lease's holder, the
//! numbers its scrape statements carry, so a signed scrape dropped from the end of a receipt is
//! named as surely as one dropped from the middle.

use serde::{Deserialize, Serialize};

/// Schema identity of [`LeaseAccount`] as lessors write it now.
pub const LEASE_ACCOUNT_SCHEMA: &str = "loadproof.lease-account/v2";

/// The first schema: requests only. Still read, so receipts written before tokens were counted
/// audit as they did.
pub const LEASE_ACCOUNT_SCHEMA_V1: &str = "loadproof.lease-account/v1";

/// The response header of a lease's release that carries the lessor's signed account.
pub const LEASE_ACCOUNT_HEADER: &str = "x-loadproof-lease-account-signed";

/// One lease's account, as its lessor kept it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseAccount {
    /// [`LEASE_ACCOUNT_SCHEMA`] (or, read back, [`LEASE_ACCOUNT_SCHEMA_V1`]).
    pub schema: String,
    /// The lease accounted for.
    pub lease_id: String,
    /// When it was granted, Unix ns (the lessor's clock).
    pub from_unix_ns: i64,
    /// When it was released, Unix ns (the lessor's clock).
    pub closed_unix_ns: i64,
    /// Requests admitted under the lease's token.
    pub requests: u64,
    /// Prompt tokens of the admitted requests whose usage the lessor counted (v2; absent in
    /// v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens of the same responses (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Admitted requests whose usage the lessor did not see, so not in the sums (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncounted_requests: Option<u64>,
    /// `/metrics` bodies the lessor served to the lease's holder under the lease, numbered
    /// `0..scrapes` in their statements ([`super::ScrapeStatement::seq`]) (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrapes: Option<u64>,
    /// [`super::ScrapeChain::hex`] over those `scrapes` statements in number order: this
    /// account's signature vouches for each of them (v2, with `scrapes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_chain: Option<String>,
}

/// The tokens a v2 account states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenAccount {
    /// [`LeaseAccount::prompt_tokens`].
    pub prompt_tokens: u64,
    /// [`LeaseAccount::completion_tokens`].
    pub completion_tokens: u64,
    /// [`LeaseAccount::uncounted_requests`].
    pub uncounted_requests: u64,
}

impl LeaseAccount {
    /// The bytes signed: compact JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads an account; `None` when the bytes are not one: another schema, a v1 account with
    /// v2 fields, a v2 account without every one of them, or more uncounted requests than
    /// admitted.
    pub fn from_bytes(bytes: &[u8]) -> Option<LeaseAccount> {
        let a: LeaseAccount = serde_json::from_slice(bytes).ok()?;
        let fields = [a.prompt_tokens, a.completion_tokens, a.uncounted_requests];
        // A chain head is of the numbered statements: only beside their count, and a sha256.
        let chain_ok = match &a.scrape_chain {
            None => true,
            Some(head) => {
                a.scrapes.is_some()
                    && head.len() == 64
                    && head
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            }
        };
        let ok = chain_ok
            && match a.schema.as_str() {
                LEASE_ACCOUNT_SCHEMA => {
                    fields.iter().all(Option::is_some)
                        && a.uncounted_requests.is_some_and(|u| u <= a.requests)
                }
                LEASE_ACCOUNT_SCHEMA_V1 => {
                    fields.iter().all(Option::is_none) && a.scrape_chain.is_none()
                }
                _ => false,
            };
        ok.then_some(a)
    }

    /// The tokens it states; `None` for a v1 account, which counted none.
    pub fn tokens(&self) -> Option<TokenAccount> {
        Some(TokenAccount {
            prompt_tokens: self.prompt_tokens?,
            completion_tokens: self.completion_tokens?,
            uncounted_requests: self.uncounted_requests?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> LeaseAccount {
        LeaseAccount {
            schema: LEASE_ACCOUNT_SCHEMA.into(),
            lease_id: "l".into(),
            from_unix_ns: 1,
            closed_unix_ns: 2,
            requests: 4,
            prompt_tokens: Some(40),
            completion_tokens: Some(20),
            uncounted_requests: Some(0),
            scrapes: Some(7),
            scrape_chain: None,
        }
    }

    #[test]
    fn a_v1_account_still_reads_and_a_v2_one_states_every_token_field() {
        let a = v2();
        assert_eq!(LeaseAccount::from_bytes(&a.to_bytes()), Some(a.clone()));
        assert_eq!(a.tokens().map(|t| t.completion_tokens), Some(20));
        let v1 = br#"{"schema":"loadproof.lease-account/v1","lease_id":"l","from_unix_ns":1,"closed_unix_ns":2,"requests":4}"#;
        let read = LeaseAccount::from_bytes(v1).unwrap();
        assert_eq!((read.requests, read.tokens()), (4, None));
        // A v2 account missing a field, a v1 one with tokens, more uncounted than admitted.
        let mut partial = v2();
        partial.uncounted_requests = None;
        assert_eq!(LeaseAccount::from_bytes(&partial.to_bytes()), None);
        let mut mixed = v2();
        mixed.schema = LEASE_ACCOUNT_SCHEMA_V1.into();
        assert_eq!(LeaseAccount::from_bytes(&mixed.to_bytes()), None);
        let mut over = v2();
        over.uncounted_requests = Some(5);
        assert_eq!(LeaseAccount::from_bytes(&over.to_bytes()), None);
        // A chain head: a sha256, and only beside the count it chains.
        let mut chained = v2();
        chained.scrape_chain = Some("ab".repeat(32));
        assert_eq!(
            LeaseAccount::from_bytes(&chained.to_bytes()),
            Some(chained.clone())
        );
        for head in ["AB".repeat(32), "ab".repeat(31), "zz".repeat(32)] {
            let mut bad = chained.clone();
            bad.scrape_chain = Some(head);
            assert_eq!(LeaseAccount::from_bytes(&bad.to_bytes()), None);
        }
        let mut uncounted = chained.clone();
        uncounted.scrapes = None;
        assert_eq!(LeaseAccount::from_bytes(&uncounted.to_bytes()), None);
    }
}
