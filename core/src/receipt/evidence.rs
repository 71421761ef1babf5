//! Evidence blocks: raw bytes kept inline in a receipt, each with its sha256, so every fact
//! can be recomputed from the file it sits in and a changed byte names its block.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How a block's bytes are written in the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// The bytes are valid UTF-8 and written as the string itself (readable in the file).
    Utf8,
    /// Standard base64 of the bytes (anything that is not UTF-8).
    Base64,
}

/// One piece of raw evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// sha256 of the raw bytes, lowercase hex.
    pub sha256: String,
    /// Number of raw bytes.
    pub bytes: u64,
    /// How `content` encodes them.
    pub encoding: Encoding,
    /// The bytes, encoded.
    pub content: String,
}

/// A block whose bytes do not match its digest, or cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EvidenceError {
    /// `content` is not valid base64.
    #[error("evidence block {block:?}: content is not valid base64")]
    Undecodable {
        /// The block's name.
        block: String,
    },
    /// The bytes hash to something else than the recorded digest.
    #[error(
        "evidence block {block:?}: sha256 is {actual}, the receipt records {recorded} ({bytes} bytes)"
    )]
    DigestMismatch {
        /// The block's name.
        block: String,
        /// What the receipt says.
        recorded: String,
        /// What the bytes hash to.
        actual: String,
        /// Bytes decoded.
        bytes: u64,
    },
    /// The recorded length differs from the decoded bytes.
    #[error("evidence block {block:?}: {actual} bytes, the receipt records {recorded}")]
    LengthMismatch {
        /// The block's name.
        block: String,
        /// What the receipt says.
        recorded: u64,
        /// Bytes decoded.
        actual: u64,
    },
    /// A scrape body held as a delta (a record stream) that does not rebuild.
    #[error("evidence block {block:?} does not rebuild from its record: {detail}")]
    Unbuilt {
        /// The block's name.
        block: String,
        /// Why.
        detail: String,
    },
    /// A block the receipt refers to is not in it.
    #[error("evidence block {block:?} is referred to but missing")]
    Missing {
        /// The block's name.
        block: String,
    },
}

impl EvidenceError {
    /// The block the error is about.
    pub fn block(&self) -> &str {
        match self {
            EvidenceError::Undecodable { block }
            | EvidenceError::DigestMismatch { block, .. }
            | EvidenceError::LengthMismatch { block, .. }
            | EvidenceError::Unbuilt { block, .. }
            | EvidenceError::Missing { block } => block,
        }
    }
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::trace::hex(&Sha256::digest(bytes))
}

impl Evidence {
    /// Keeps `raw` exactly: as text when it is UTF-8, base64 otherwise.
    pub fn of(raw: &[u8]) -> Evidence {
        Evidence::claimed(
            std::borrow::Cow::Borrowed(raw),
            &sha256_hex(raw),
            raw.len() as u64,
        )
    }

    /// `raw` with the digest and length a record claims for it, not computed here: whoever
    /// reads the block verifies the claim (once, as for a v1 block).
    pub(crate) fn claimed(raw: std::borrow::Cow<'_, [u8]>, sha256: &str, bytes: u64) -> Evidence {
        // Owned bytes (a rebuilt scrape body) become the text without a copy.
        let (encoding, content) = match String::from_utf8(raw.into_owned()) {
            Ok(text) => (Encoding::Utf8, text),
            Err(e) => (
                Encoding::Base64,
                base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
            ),
        };
        Evidence {
            sha256: sha256.to_owned(),
            bytes,
            encoding,
            content,
        }
    }

    /// The raw bytes, decoded but *not* checked: for a caller that has already verified this
    /// block (the audit hashes each block once, then reads it), borrowed when it is text.
    pub fn decoded(&self, name: &str) -> Result<std::borrow::Cow<'_, [u8]>, EvidenceError> {
        Ok(match self.encoding {
            Encoding::Utf8 => std::borrow::Cow::Borrowed(self.content.as_bytes()),
            Encoding::Base64 => std::borrow::Cow::Owned(
                base64::engine::general_purpose::STANDARD
                    .decode(&self.content)
                    .map_err(|_| EvidenceError::Undecodable {
                        block: name.to_owned(),
                    })?,
            ),
        })
    }

    /// The raw bytes, checked against the digest and length; `name` labels errors.
    pub fn verified(&self, name: &str) -> Result<Vec<u8>, EvidenceError> {
        let raw = self.decoded(name)?.into_owned();
        check(name, &self.sha256, self.bytes, &raw)?;
        Ok(raw)
    }
}

/// `raw` is the block `name` recorded as `sha256` and `bytes` long, or the error that says how
/// it is not (the digest first: it names a changed byte whatever the length).
pub(crate) fn check(name: &str, sha256: &str, bytes: u64, raw: &[u8]) -> Result<(), EvidenceError> {
    let actual = sha256_hex(raw);
    if actual != sha256 {
        return Err(EvidenceError::DigestMismatch {
            block: name.to_owned(),
            recorded: sha256.to_owned(),
            actual,
            bytes: raw.len() as u64,
        });
    }
    if raw.len() as u64 != bytes {
        return Err(EvidenceError::LengthMismatch {
            block: name.to_owned(),
            recorded: bytes,
            actual: raw.len() as u64,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_binary_round_trip_exactly() {
        for raw in [&b"Successful requests: 20\n"[..], &[0xff, 0x00, 0xfe], b""] {
            let e = Evidence::of(raw);
            assert_eq!(e.verified("x").unwrap(), raw);
        }
        assert_eq!(Evidence::of(&[0xff]).encoding, Encoding::Base64);
    }

    #[test]
    fn a_changed_byte_names_its_block() {
        let mut e = Evidence::of(b"vllm:prompt_tokens_total 2283.0\n");
        e.content = e.content.replace("2283", "2284");
        let err = e.verified("metrics/after").unwrap_err();
        assert!(
            matches!(err, EvidenceError::DigestMismatch { ref block, .. } if block == "metrics/after")
        );
    }
}
