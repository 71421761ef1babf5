//! The records themselves: a header line per record, and the JSON payloads of the records
//! that carry the receipt's own fields (the opening, an update, the seal).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::receipt::{Execution, Implementation, Protocol, Provenance, Scrape, Subject};

/// One record's header line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Position in the stream, from 0.
    pub seq: u64,
    /// sha256 (hex) of the previous header line; record 0: of [`super::MAGIC`] without its newline.
    pub prev: String,
    /// What the record holds.
    pub kind: Kind,
    /// The writer's monotonic clock when it appended the record, ns since the run's zero.
    pub at_mono_ns: i64,
    /// The evidence block the payload is (part of); a scrape's body block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// For a block appended in parts: which part, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<u64>,
    /// The scrape (its URL, phase, stamps and outcome), for [`Kind::Scrape`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape: Option<Scrape>,
    /// When the payload is a line delta: the block it is written against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Payload bytes that follow this line.
    pub len: u64,
    /// sha256 of the raw bytes the payload stands for (after the delta, if any).
    pub sha256: String,
    /// Number of those raw bytes.
    pub bytes: u64,
}

/// The receipt's fields other than scrapes and evidence, as the writer knew them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fields {
    /// The receipt schema the records build ([`super::RECEIPT_SCHEMA`]).
    pub schema: String,
    /// What was asked of the server.
    pub protocol: Protocol,
    /// What was measured.
    pub subject: Subject,
    /// Who made the receipt.
    pub provenance: Provenance,
    /// What happened (at the open: what the writer expects to happen, provisionally).
    pub execution: Execution,
    /// Notes.
    pub notes: Vec<String>,
    /// The lease block, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
    /// The client implementation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    /// The writer's derived numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<serde_json::Value>,
}

/// Record 0's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Opening {
    /// A random id the writer chose for this run (hex): the chain starts from it.
    pub run: String,
    /// The fields as known before anything was fired.
    pub receipt: Fields,
}

/// One whole block as the seal lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Digest {
    /// sha256 of the whole block's raw bytes.
    pub sha256: String,
    /// Its length.
    pub bytes: u64,
}

/// The seal's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sealing {
    /// The final fields.
    pub receipt: Fields,
    /// How many scrape records precede the seal.
    pub scrapes: u64,
    /// Every block, whole.
    pub blocks: BTreeMap<String, Digest>,
}
