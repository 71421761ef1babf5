//! A signed statement: the exact bytes a key vouches for, as one JSON envelope.
//!
//! ```json
//! {"schema":"loadproof.signed/v1","key":"BASE64","statement":"BASE64","signature":"BASE64"}
//! ```
//!
//! The statement travels as base64 of its bytes, not as nested JSON, so what was signed is
//! exactly what is read back — no re-serialisation, key order or whitespace can change it. A
//! statement that is UTF-8 text may travel instead as a JSON string of exactly its bytes
//! (`"text"` for `"statement"`, [`Signed::to_text_json`]): the same bytes, no less exact, and a
//! receipt holding thousands of them compresses them (base64 hides the repeats zstd finds). The
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

/// The envelope as written: the statement as base64 (`statement`) or as text (`text`),
/// exactly one of them.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    schema: String,
    key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    statement: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
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
        Unverified::from_json(bytes)?.verify()
    }

    /// The envelope: compact JSON, one line of ASCII (what a header carries).
    pub fn to_json(&self) -> String {
        let envelope = Envelope {
            schema: SIGNED_SCHEMA.to_owned(),
            key: self.key.to_base64(),
            statement: Some(STANDARD.encode(&self.statement)),
            text: None,
            signature: STANDARD.encode(self.signature.to_bytes()),
        };
        serde_json::to_string(&envelope).unwrap_or_default()
    }

    /// The envelope with a UTF-8 statement as text (base64 otherwise): what a receipt keeps,
    /// where thousands of statements alike compress only when they are not base64.
    pub fn to_text_json(&self) -> String {
        let Ok(text) = std::str::from_utf8(&self.statement) else {
            return self.to_json();
        };
        let envelope = Envelope {
            schema: SIGNED_SCHEMA.to_owned(),
            key: self.key.to_base64(),
            statement: None,
            text: Some(text.to_owned()),
            signature: STANDARD.encode(self.signature.to_bytes()),
        };
        serde_json::to_string(&envelope).unwrap_or_default()
    }

    /// The key that signed it.
    pub fn key(&self) -> &PublicKey {
        &self.key
    }

    /// The signature's 64 bytes (what a lessor's chain of its statements covers).
    pub fn signature_bytes(&self) -> [u8; 64] {
        self.signature.to_bytes()
    }

    /// The exact bytes signed.
    pub fn statement(&self) -> &[u8] {
        &self.statement
    }
}

/// An envelope read, its signature not yet checked. Only [`Unverified::verify`] makes a
/// [`Signed`] of it. A reader may rely on its statement without that only when a statement it
/// has verified commits to these exact bytes (a lessor's account of a lease commits to the
/// digests of every scrape statement it numbered, so one signature checked vouches for
/// thousands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverified {
    key: PublicKey,
    statement: Vec<u8>,
    signature: Signature,
}

impl Unverified {
    /// Reads an envelope without checking its signature.
    pub fn from_json(bytes: &[u8]) -> Result<Unverified, SignedError> {
        let envelope: Envelope =
            serde_json::from_slice(bytes).map_err(|e| SignedError::Malformed(e.to_string()))?;
        if envelope.schema != SIGNED_SCHEMA {
            return Err(SignedError::Schema(envelope.schema));
        }
        let key = PublicKey::from_base64(&envelope.key)?;
        let statement = match (envelope.statement, envelope.text) {
            (Some(encoded), None) => {
                if encoded.len() > MAX_STATEMENT_BYTES / 3 * 4 + 4 {
                    return Err(SignedError::Encoding {
                        field: "statement",
                        why: format!("longer than {MAX_STATEMENT_BYTES} bytes"),
                    });
                }
                decode("statement", &encoded)?
            }
            (None, Some(text)) => {
                if text.len() > MAX_STATEMENT_BYTES {
                    return Err(SignedError::Encoding {
                        field: "text",
                        why: format!("longer than {MAX_STATEMENT_BYTES} bytes"),
                    });
                }
                text.into_bytes()
            }
            (Some(_), Some(_)) => {
                return Err(SignedError::Malformed(
                    "both statement and text: an envelope carries its statement once".to_owned(),
                ));
            }
            (None, None) => {
                return Err(SignedError::Malformed(
                    "missing field `statement` (or `text`)".to_owned(),
                ));
            }
        };
        let raw = decode("signature", &envelope.signature)?;
        let signature = Signature::from_slice(&raw).map_err(|_| SignedError::Encoding {
            field: "signature",
            why: format!("{} bytes, not 64", raw.len()),
        })?;
        Ok(Unverified {
            key,
            statement,
            signature,
        })
    }

    /// The key the envelope names.
    pub fn key(&self) -> &PublicKey {
        &self.key
    }

    /// The statement it carries, not yet known to be that key's.
    pub fn statement(&self) -> &[u8] {
        &self.statement
    }

    /// The signature's 64 bytes, not yet checked.
    pub fn signature_bytes(&self) -> [u8; 64] {
        self.signature.to_bytes()
    }

    /// The envelope's signature checked: the statement, as its key signed it.
    pub fn verify(self) -> Result<Signed, SignedError> {
        if !self
            .key
            .verifies(&message(&self.statement), &self.signature)
        {
            return Err(SignedError::BadSignature {
                key_id: self.key.id(),
            });
        }
        Ok(Signed {
            key: self.key,
            statement: self.statement,
            signature: self.signature,
        })
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
            (
                edited(&json, "text", "x").into_bytes(),
                "both statement and text",
            ),
            (
                json.replace(",\"statement\":\"eA==\"", "").into_bytes(),
                "missing field",
            ),
        ] {
            let e = Signed::from_json(&bytes).unwrap_err().to_string();
            assert!(e.contains(word), "{e}");
        }
    }

    #[test]
    fn a_text_statement_is_the_same_bytes_signed_and_verifies_alike() {
        let statement = br#"{"schema":"s","body_sha256":"ab\"c","seq":7}"#;
        let s = Signed::sign(&secret(1), statement);
        let text = s.to_text_json();
        assert!(text.contains("\"text\":") && !text.contains("\"statement\":"));
        assert_eq!(Signed::from_json(text.as_bytes()).unwrap(), s);
        // Edited as text, it no longer verifies.
        let other = edited(
            &text,
            "text",
            r#"{"schema":"s","body_sha256":"ab\"c","seq":8}"#,
        );
        assert!(matches!(
            Signed::from_json(other.as_bytes()),
            Err(SignedError::BadSignature { .. })
        ));
        // Bytes that are not UTF-8 stay base64.
        let binary = Signed::sign(&secret(1), &[0xff, 0x00]);
        assert_eq!(binary.to_text_json(), binary.to_json());
    }
}
