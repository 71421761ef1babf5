//! The record-stream form of a receipt: written as the run happens, compact, readable up to
//! its last complete record after a crash.
//!
//! A v1 receipt is one JSON document written when the run ends: an hour of `/metrics` scrapes
//! is ~700 MB of text, and a `kill -9` loses all of it. The stream form holds the same
//! [`Receipt`] as a sequence of records appended while the run goes on — the
//! writer's view of the run when it opened ([`Kind::Open`]), each evidence block (or part of
//! one: the native event log grows as requests end), each scrape with its body, and at the end
//! a [`Kind::Seal`] with the final fields. Reading the records rebuilds the very `Receipt` the
//! writer held, so every surface (the audit, compare, the playbook, the page) reads either
//! form; [`StreamStatus`] says how far the run got and whether it was sealed.
//!
//! **Layout.** The file is one zstd frame, flushed block by block as records are appended, so
//! the bytes on disk always decode up to the last flushed block ([`container`]). Decompressed,
//! it is [`MAGIC`] and then records: a header (one JSON line, [`Header`]) and `len` payload
//! bytes and a `\n`. A scrape body is usually stored as a line delta against the previous body
//! from the same URL ([`delta`]); every header carries the sha256 of the raw bytes as
//! received, so `loadproof receipt extract` gives bytes a reviewer can check with `sha256sum`.
//!
//! **Order and chain.** Headers are numbered from 0, and each carries `prev`, the sha256 of
//! the previous header line (record 0: of the magic line), and the open record names a random
//! run id — so a record dropped, duplicated, reordered or spliced in from another receipt is a
//! named refusal ([`StreamError`]). The chain shows what happened to the file, not who wrote
//! it: anyone can write a consistent stream; signatures are what establish a writer.
//!
//! **A torn tail** — the bytes after the last complete record, left by a writer that died — is
//! named in [`StreamStatus::torn_tail`] and never read as a record.

pub mod container;
pub mod delta;
mod reader;
mod record;
mod status;
mod writer;

use super::{RECEIPT_SCHEMA, Receipt, ReceiptError};

pub use reader::{Materialized, read_records};
pub use record::{Digest, Fields, Header, Opening, Sealing};
pub use status::{
    Kind, MAGIC, SEAL_STATEMENT_SCHEMA, SealSignature, SealStatement, StreamError, StreamStatus,
    TornTail, ZSTD_MAGIC, is_stream,
};
pub use writer::{RecordWriter, whole};

/// The most raw evidence any record stream may hold: 4 GiB, the v1 document's bound.
pub const MAX_STREAM_BYTES: u64 = 4 << 30;

/// How much raw evidence a stream file of `file_bytes` may unfold to: 1024× its size (real
/// receipts unfold ~130×: scrapes are deltas of one another), at least 256 MiB, at most
/// [`MAX_STREAM_BYTES`]. A few kilobytes cannot claim gigabytes of memory (a decompression bomb,
/// or a delta copying a huge body again and again): they are refused, by the bound, unread.
pub fn evidence_budget(file_bytes: u64) -> u64 {
    file_bytes
        .saturating_mul(1024)
        .clamp(256 << 20, MAX_STREAM_BYTES)
}

impl Receipt {
    /// Reads a receipt in either form: a record stream (zstd-compressed or not) or a v1 JSON
    /// document. Digests are not checked here: see [`Receipt::verify_evidence`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Receipt, ReceiptError> {
        if !is_stream(bytes) {
            return Receipt::from_json(bytes);
        }
        let budget = evidence_budget(bytes.len() as u64);
        let (decompressed, torn) = if bytes.starts_with(&ZSTD_MAGIC) {
            let d = container::decompress(bytes, budget)?;
            (std::borrow::Cow::Owned(d.bytes), d.torn)
        } else {
            (std::borrow::Cow::Borrowed(bytes), None)
        };
        let limit = usize::try_from(budget).unwrap_or(usize::MAX);
        let read = read_records(&decompressed, torn, bytes.len() as u64, limit)?;
        if read.receipt.schema != RECEIPT_SCHEMA {
            return Err(ReceiptError::Schema {
                found: read.receipt.schema,
            });
        }
        Ok(read.receipt)
    }
}

#[cfg(test)]
mod tests;
