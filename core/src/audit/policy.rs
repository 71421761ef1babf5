//! The reviewer's standards: every threshold a standing is judged against.
//!
//! A receipt is the claimant's file. Anything in it that is not raw evidence — a bound the
//! firing client was started with, a tolerance, a gap limit — is the claimant's *intent*, and
//! a claimant who may raise the bar's height may also lower it. So the audit judges against a
//! [`Policy`] the *reviewer* holds: [`Policy::default`] (documented below and in the README)
//! unless the reviewer supplies their own (`--policy FILE`, or in the page). The receipt's own
//! numbers are reported beside it as what the claimant asked for, never used.

use serde::{Deserialize, Serialize};

/// Schema identity of [`Policy`].
pub const POLICY_SCHEMA: &str = "loadproof.audit-policy/v1";

/// What the standings are judged against. Every field is required in a file: a policy that
/// silently took a default for a misspelt field would not be the reviewer's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// [`POLICY_SCHEMA`].
    pub schema: String,
    /// Arrival: the largest send lag behind the schedule (sent − scheduled) a run may show,
    /// milliseconds. vLLM's relative lags are held to the same bound, and a request more than
    /// this far *ahead* of its slot counts as sent early.
    pub max_send_lag_ms: f64,
    /// Occupancy: the longest gap between two `/metrics` samples that still covers the run,
    /// milliseconds.
    pub max_scrape_gap_ms: f64,
    /// Occupancy: a queue (requests waiting for admission) seen in this many consecutive scrapes
    /// means the engine did not keep up; fewer is admission at the next scheduler step.
    pub max_waiting_scrapes: u32,
    /// The public keys the reviewer trusts (`loadproof-ed25519 BASE64 [comment]` lines). When
    /// any is given, the window and subject standings stand only on a lease signed by one of
    /// them; none given, every receipt is read as self-attested (and said to be).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_keys: Vec<String>,
}

impl Default for Policy {
    /// 10 ms of send lag (what `fire` aims for on an idle client), 1 s between scrapes (fire
    /// takes one every 250 ms), a queue across 2 consecutive scrapes.
    fn default() -> Policy {
        Policy {
            schema: POLICY_SCHEMA.to_owned(),
            max_send_lag_ms: 10.0,
            max_scrape_gap_ms: 1_000.0,
            max_waiting_scrapes: 2,
            trusted_keys: Vec::new(),
        }
    }
}

/// Why bytes are not a policy.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// Not JSON of this shape (a missing or unknown field included).
    #[error("not an audit policy: line {line}, column {column}: {detail}")]
    Malformed {
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// serde's message.
        detail: String,
    },
    /// Another schema.
    #[error("policy schema {found:?} is not {POLICY_SCHEMA:?}")]
    Schema {
        /// What the file says.
        found: String,
    },
    /// A threshold outside what a standing can mean.
    #[error("{field}: {value} is not {expected}")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// Its value, as written.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
}

/// The largest lag or gap a policy may state: one day. Anything larger is not a bound.
const MAX_MS: f64 = 86_400_000.0;

impl Policy {
    /// Reads a policy file; refuses another schema, unknown or missing fields, and thresholds
    /// that are not finite, positive numbers of at most a day (or, for the waiting run, ≥ 1).
    pub fn from_json(bytes: &[u8]) -> Result<Policy, PolicyError> {
        let policy: Policy = serde_json::from_slice(bytes).map_err(|e| PolicyError::Malformed {
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        })?;
        if policy.schema != POLICY_SCHEMA {
            return Err(PolicyError::Schema {
                found: policy.schema,
            });
        }
        policy.checked()
    }

    /// Refuses thresholds a standing cannot be judged against.
    pub fn checked(self) -> Result<Policy, PolicyError> {
        for (field, value) in [
            ("max_send_lag_ms", self.max_send_lag_ms),
            ("max_scrape_gap_ms", self.max_scrape_gap_ms),
        ] {
            if !(value.is_finite() && value > 0.0 && value <= MAX_MS) {
                return Err(PolicyError::OutOfRange {
                    field,
                    value: value.to_string(),
                    expected: "a number of milliseconds > 0 and ≤ 86400000 (one day)",
                });
            }
        }
        if self.max_waiting_scrapes == 0 {
            return Err(PolicyError::OutOfRange {
                field: "max_waiting_scrapes",
                value: "0".to_owned(),
                expected: "a whole number of scrapes ≥ 1",
            });
        }
        for (i, line) in self.trusted_keys.iter().enumerate() {
            if let Err(e) = crate::signing::PublicKey::parse_line(line) {
                return Err(PolicyError::OutOfRange {
                    field: "trusted_keys",
                    value: format!("entry {}: {e}", i + 1),
                    expected: "a public key line (`loadproof-ed25519 BASE64 [comment]`)",
                });
            }
        }
        Ok(self)
    }

    /// The trusted keys as a set (every entry was checked by [`Policy::checked`]; one that
    /// does not read is left out, so it trusts nothing).
    pub fn trust(&self) -> crate::signing::TrustSet {
        let mut set = crate::signing::TrustSet::default();
        for line in &self.trusted_keys {
            let _ = set.add(line);
        }
        set
    }

    /// The policy as the audit reports it: pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_reads_back_from_its_own_json() {
        let p = Policy::default();
        assert_eq!(Policy::from_json(p.to_json().as_bytes()), Ok(p));
    }

    #[test]
    fn a_policy_names_a_missing_unknown_or_out_of_range_field() {
        let e = Policy::from_json(br#"{"schema":"loadproof.audit-policy/v1","max_send_lag_ms":5}"#)
            .unwrap_err();
        assert!(e.to_string().contains("missing field"), "{e}");
        let e = Policy::from_json(
            br#"{"schema":"loadproof.audit-policy/v1","max_send_lag_ms":5,"max_scrape_gap_ms":1000,"max_waiting_scrapes":2,"lag":1}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        for (text, field) in [
            (
                r#""max_send_lag_ms":1e300,"max_scrape_gap_ms":1000,"max_waiting_scrapes":2"#,
                "max_send_lag_ms",
            ),
            (
                r#""max_send_lag_ms":-1,"max_scrape_gap_ms":1000,"max_waiting_scrapes":2"#,
                "max_send_lag_ms",
            ),
            (
                r#""max_send_lag_ms":5,"max_scrape_gap_ms":0,"max_waiting_scrapes":2"#,
                "max_scrape_gap_ms",
            ),
            (
                r#""max_send_lag_ms":5,"max_scrape_gap_ms":10,"max_waiting_scrapes":0"#,
                "max_waiting_scrapes",
            ),
        ] {
            let json = format!(r#"{{"schema":"loadproof.audit-policy/v1",{text}}}"#);
            let e = Policy::from_json(json.as_bytes()).unwrap_err();
            assert!(
                matches!(&e, PolicyError::OutOfRange { field: f, .. } if *f == field),
                "{e}"
            );
        }
        assert!(matches!(
            Policy::from_json(br#"{"schema":"x","max_send_lag_ms":5,"max_scrape_gap_ms":1,"max_waiting_scrapes":2}"#),
            Err(PolicyError::Schema { .. })
        ));
    }
}
