//! What a reading of a record stream found, and why one is refused: the types the receipt
//! itself refers to, kept apart from the reader so the receipt does not import it.

use serde::{Deserialize, Serialize};

/// The first line of a decompressed record stream.
pub const MAGIC: &[u8] = b"loadproof.record-stream/v1\n";

/// What a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Record 0: the run id and the writer's fields when it opened the stream ([`super::Opening`]).
    Open,
    /// An evidence block, or one part of a block appended over time.
    Block,
    /// One `/metrics` scrape; its body, when it has one, is the payload.
    Scrape,
    /// The writer's fields restated mid-run (the native client's real start, once known):
    /// what an unsealed stream is read with. A seal supersedes every update.
    Update,
    /// The last record: the final fields and every block's digest ([`super::Sealing`]).
    Seal,
    /// After the seal, at most one: the firing client's signature of it (a
    /// `loadproof.signed/v1` envelope of a [`SealStatement`]), when it was given a key.
    SealSignature,
}

/// Schema identity of [`SealStatement`].
pub const SEAL_STATEMENT_SCHEMA: &str = "loadproof.seal-statement/v1";

/// What the firing client signs when it seals: this run's stream, up to and including its seal.
/// The seal's header line digests every record before it through the `prev` chain, so no
/// record can be added, dropped or changed afterwards without this statement naming another
/// stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealStatement {
    /// [`SEAL_STATEMENT_SCHEMA`].
    pub schema: String,
    /// The run id record 0 names.
    pub run: String,
    /// sha256 (hex) of the seal record's header line: the head of the chain.
    pub seal: String,
}

impl SealStatement {
    /// The bytes signed: compact JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a statement; `None` when the bytes are not one.
    pub fn from_bytes(bytes: &[u8]) -> Option<SealStatement> {
        let s: SealStatement = serde_json::from_slice(bytes).ok()?;
        (s.schema == SEAL_STATEMENT_SCHEMA).then_some(s)
    }
}

/// The seal's signature as read: the envelope, and the chain head it must name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealSignature {
    /// The `loadproof.signed/v1` envelope, as written.
    pub envelope: String,
    /// sha256 (hex) of the seal record's header line, as this reading found it.
    pub seal_sha256: String,
}

/// Bytes after the last complete record: a writer that died mid-record or mid-block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TornTail {
    /// Where the torn part starts: `compressed` (a zstd block that does not decode whole) or
    /// `record` (a record header or payload cut short).
    pub layer: String,
    /// Its offset: in the file for `compressed`, in the decompressed stream for `record`.
    pub offset: u64,
    /// How many bytes were left unread.
    pub bytes: u64,
    /// What was found there.
    pub detail: String,
}

/// How a record-stream receipt was read: how far the run got and whether its writer sealed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamStatus {
    /// True when the seal record was read: the writer finished.
    pub sealed: bool,
    /// The run id record 0 names.
    pub run: String,
    /// Complete records read (the seal included).
    pub records: u64,
    /// The last complete record's sequence number and kind.
    pub last_seq: u64,
    /// Its kind.
    pub last_kind: Kind,
    /// The writer's clock at the last complete record, ns since the run's zero.
    pub last_mono_ns: i64,
    /// The file's size.
    pub file_bytes: u64,
    /// The decompressed stream's size.
    pub stream_bytes: u64,
    /// Bytes left unread after the last complete record, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torn_tail: Option<TornTail>,
    /// The firing client's signature of the seal, when the stream carries one (the audit
    /// verifies it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal_signature: Option<SealSignature>,
}

/// Why a record stream is refused as a receipt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// Not zstd and not a record stream.
    #[error("the stream does not begin with {:?}", String::from_utf8_lossy(MAGIC).trim_end())]
    Magic,
    /// The compressed container cannot be read at all.
    #[error("the zstd container cannot be read: {detail}")]
    Container {
        /// What the decoder said.
        detail: String,
    },
    /// The decompressed stream exceeds the reader's bound.
    #[error(
        "the stream unfolds to more than {limit} bytes of evidence, the bound for a file its size (refused as a decompression bomb, not read)"
    )]
    TooLarge {
        /// The bound.
        limit: u64,
    },
    /// A header line that is not a [`super::Header`].
    #[error("record {position}: the header at byte {offset} is not a record header: {detail}")]
    Header {
        /// The record's position.
        position: u64,
        /// Offset in the decompressed stream.
        offset: u64,
        /// Why.
        detail: String,
    },
    /// Record 0 is not an open record, or its payload is not an [`super::Opening`].
    #[error("record 0 is not the stream's opening: {detail}")]
    Open {
        /// Why.
        detail: String,
    },
    /// A record carrying a sequence number already read.
    #[error(
        "record {position} repeats sequence number {seq}: {}",
        if *identical { "a duplicated record" } else { "a record out of order (reordered, or from another receipt)" }
    )]
    Repeated {
        /// Where it was found.
        position: u64,
        /// The number it carries.
        seq: u64,
        /// True when its header is byte-identical to the earlier one.
        identical: bool,
    },
    /// A record further on than the next expected one.
    #[error(
        "record {position} carries sequence number {seq}: records {position}..{seq} are missing (dropped or reordered)"
    )]
    Gap {
        /// Where it was found.
        position: u64,
        /// The number it carries.
        seq: u64,
    },
    /// A record in sequence whose `prev` is not the previous header's digest.
    #[error("record {seq} does not chain to record {}: its prev digest is not that record's (edited, or spliced in from another receipt)", seq.saturating_sub(1))]
    Chain {
        /// The record.
        seq: u64,
    },
    /// A record that breaks the stream's rules for its kind.
    #[error("record {seq} ({kind:?}): {detail}")]
    Record {
        /// The record.
        seq: u64,
        /// Its kind.
        kind: Kind,
        /// Why.
        detail: String,
    },
    /// A complete record after the seal.
    #[error("record {seq} follows the seal (appended after the writer finished)")]
    AfterSeal {
        /// The record.
        seq: u64,
    },
    /// The seal disagrees with the records it seals.
    #[error("the seal does not match the stream: {detail}")]
    Seal {
        /// What differs.
        detail: String,
    },
}

/// The zstd frame magic (little-endian 0xFD2FB528).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// True when `bytes` look like a record-stream receipt (compressed or not), not a v1 document.
pub fn is_stream(bytes: &[u8]) -> bool {
    bytes.starts_with(&ZSTD_MAGIC) || bytes.starts_with(MAGIC)
}
