//! A signed statement: the exact bytes a key vouches for, as one JSON envelope.
//!
//! ```json
//! {"schema":"loadproof.signed/v1","key":"BASE64","statement":"BASE64","signature":"BASE64"}
//! ```
//!
//! The statement travels as base64 of its bytes, not as nested JSON, so what was signed is
//! exactly what is read back — no re-serialisation, key order or whitespace can change it. The
//! signature covers the schema name, a newline and the statement (domain separation: a
//! signature made for anything else never verifies here). The envelope is compact ASCII on
//! one line, so it fits an HTTP header value and a JSON-lines file alike.
//!
//! A [`Signed`] that does not verify cannot be constructed: [`Signed::from_json`] checks the
//! signature before it returns one. Who the key belongs to, and whether the reader trusts it,
//! is [`super::TrustSet`]'s question, not this one's.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::Signature;
use serde::{Deserialize, Serialize};

use super::key::{KeyError, PublicKey, SecretKey};

/// Schema identity of the envelope, and the domain its signatures are made in.
pub const SIGNED_SCHEMA: &str = "loadproof.signed/v1";

/// The largest statement an envelope may carry, in bytes (a lease or a digest is a few
/// hundred; a bound keeps a hostile envelope from costing memory).
pub const MAX_STATEMENT_BYTES: usize = 1 << 20;

/// Why bytes are not a statement a key vouches for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignedError {
    /// Not the envelope's JSON (a field missing, unknown or repeated, not an object).
    #[error("not a signed statement: {0}")]
    Malformed(String),
    /// Another schema.
    #[error("signed statement schema {0:?} is not {SIGNED_SCHEMA:?}")]
    Schema(String),
    /// The key is not an Ed25519 public key.
    #[error("the signing key: {0}")]
    Key(#[from] KeyError),
    /// A field that is not base64, or a statement or signature of the wrong size.
    #[error("{field}: {why}")]
    Encoding {
        /// `statement` or `signature`.
        field: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The signature does not verify: the statement, the key or the signature was changed
    /// after signing (or never signed by that key).
    #[error(
        "the signature does not verify against key {key_id}: the statement is not what that key signed"
    )]
    BadSignature {
        /// [`PublicKey::id`] of the key the envelope names.
        key_id: String,
    },
}

/// A statement and the key that signed it, the signature checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    key: PublicKey,
    statement: Vec<u8>,
    signature: Signature,
}

/// The envelope as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    schema: String,
    key: String,
    statement: String,
    signature: String,
}

/// The bytes a signature covers.
fn message(statement: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(SIGNED_SCHEMA.len() + 1 + statement.len());
    m.extend_from_slice(SIGNED_SCHEMA.as_bytes());
    m.push(b'\n');
    m.extend_from_slice(statement);
    m
}

impl Signed {
    /// `statement` signed with `secret`.
    pub fn sign(secret: &SecretKey, statement: &[u8]) -> Signed {
        Signed {
            key: secret.public(),
            statement: statement.to_vec(),
            signature: secret.sign(&message(statement)),
        }
    }

    /// Reads an envelope and checks its signature; only a statement its key signed is
    /// returned.
    pub fn from_json(bytes: &[u8]) -> Result<Signed, SignedError> {
        let envelope: Envelope =
            serde_json::from_slice(bytes).map_err(|e| SignedError::Malformed(e.to_string()))?;
        if envelope.schema != SIGNED_SCHEMA {
            return Err(SignedError::Schema(envelope.schema));
        }
        let key = PublicKey::from_base64(&envelope.key)?;
        if envelope.statement.len() > MAX_STATEMENT_BYTES / 3 * 4 + 4 {
            return Err(SignedError::Encoding {
                field: "statement",
                why: format!("longer than {MAX_STATEMENT_BYTES} bytes"),
            });
        }
        let statement = decode("statement", &envelope.statement)?;
        let raw = decode("signature", &envelope.signature)?;
        let signature = Signature::from_slice(&raw).map_err(|_| SignedError::Encoding {
            field: "signature",
            why: format!("{} bytes, not 64", raw.len()),
        })?;
        if !key.verifies(&message(&statement), &signature) {
            return Err(SignedError::BadSignature { key_id: key.id() });
        }
        Ok(Signed {
            key,
            statement,
            signature,
        })
    }

    /// The envelope: compact JSON, one line of ASCII.
    pub fn to_json(&self) -> String {
        let envelope = Envelope {
            schema: SIGNED_SCHEMA.to_owned(),
            key: self.key.to_base64(),
            statement: STANDARD.encode(&self.statement),
            signature: STANDARD.encode(self.signature.to_bytes()),
        };
        serde_json::to_string(&envelope).unwrap_or_default()
    }

    /// The key that signed it.
    pub fn key(&self) -> &PublicKey {
        &self.key
    }

    /// The exact bytes signed.
    pub fn statement(&self) -> &[u8] {
        &self.statement
    }
}

fn decode(field: &'static str, text: &str) -> Result<Vec<u8>, SignedError> {
    STANDARD.decode(text).map_err(|e| SignedError::Encoding {
        field,
        why: format!("not base64: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(n: u8) -> SecretKey {
        SecretKey::from_seed([n; 32])
    }

    #[test]
    fn a_signed_statement_reads_back_as_the_bytes_its_key_signed() {
        let s = Signed::sign(&secret(1), b"{\"a\": 1}\n");
        let json = s.to_json();
        assert!(json.is_ascii() && !json.contains('\n'));
        let back = Signed::from_json(json.as_bytes()).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.statement(), b"{\"a\": 1}\n");
        assert_eq!(back.key(), &secret(1).public());
    }

    fn edited(json: &str, field: &str, value: &str) -> String {
        let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
        v[field] = serde_json::Value::String(value.to_owned());
        v.to_string()
    }

    #[test]
    fn a_signed_statement_that_does_not_verify_cannot_be_constructed() {
        let json = Signed::sign(&secret(1), b"lease 1..2").to_json();
        // The statement edited.
        let other = edited(&json, "statement", &STANDARD.encode(b"lease 1..3"));
        assert!(matches!(
            Signed::from_json(other.as_bytes()),
            Err(SignedError::BadSignature { .. })
        ));
        // The key swapped for another (the claimant's own).
        let other = edited(&json, "key", &secret(2).public().to_base64());
        assert!(matches!(
            Signed::from_json(other.as_bytes()),
            Err(SignedError::BadSignature { .. })
        ));
        // The statement and signature both from the claimant's key: verifies, but as that key.
        let forged = Signed::sign(&secret(2), b"lease 1..3").to_json();
        assert_eq!(
            Signed::from_json(forged.as_bytes()).unwrap().key(),
            &secret(2).public()
        );
        // A signature made outside the envelope's domain (over the bare statement).
        let bare = secret(1).sign(b"lease 1..2");
        let other = edited(&json, "signature", &STANDARD.encode(bare.to_bytes()));
        assert!(matches!(
            Signed::from_json(other.as_bytes()),
            Err(SignedError::BadSignature { .. })
        ));
    }

    #[test]
    fn envelopes_that_are_not_one_are_refused_by_name() {
        let json = Signed::sign(&secret(1), b"x").to_json();
        for (bytes, word) in [
            (b"[]".to_vec(), "not a signed statement"),
            (
                json.replace("}", ",\"extra\":1}").into_bytes(),
                "unknown field",
            ),
            (
                json.replace("{", "{\"key\":\"AAAA\",").into_bytes(),
                "duplicate field",
            ),
            (
                edited(&json, "schema", "loadproof.signed/v0").into_bytes(),
                "schema",
            ),
            (edited(&json, "signature", "AAAA").into_bytes(), "not 64"),
            (edited(&json, "statement", "***").into_bytes(), "not base64"),
        ] {
            let e = Signed::from_json(&bytes).unwrap_err().to_string();
            assert!(e.contains(word), "{e}");
        }
    }
}
