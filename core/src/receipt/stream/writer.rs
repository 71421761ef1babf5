//! Appending records: the pure half of a stream writer. It numbers and chains records, writes
//! scrape bodies against the previous body from the same URL and keeps the digests the seal
//! lists; the caller (the CLI) compresses the bytes it returns and puts them on disk.

use std::collections::BTreeMap;

use sha2::{Digest as _, Sha256};

use super::{Digest, Fields, Header, Kind, MAGIC, Opening, SealStatement, Sealing, delta};
use crate::receipt::{Receipt, Scrape, ScrapeOutcome, sha256_hex};

/// A block being appended in parts: its running digest.
struct Open {
    hasher: Sha256,
    bytes: u64,
    parts: u64,
}

/// Numbers, chains and encodes records. Every method returns the bytes to append, in order.
pub struct RecordWriter {
    seq: u64,
    prev: String,
    /// Whole blocks written, by name.
    blocks: BTreeMap<String, Digest>,
    /// Blocks still growing part by part.
    growing: BTreeMap<String, Open>,
    /// The last body per scraped URL, and its block name: the next body's delta base.
    last_body: BTreeMap<String, (String, Vec<u8>)>,
    scrapes: u64,
    /// The run id record 0 names (a seal signature restates it).
    run: String,
}

impl RecordWriter {
    /// Starts a stream: the magic line and the open record for run id `run`.
    pub fn open(run: &str, fields: &Fields, at_mono_ns: i64) -> (RecordWriter, Vec<u8>) {
        let mut writer = RecordWriter {
            seq: 0,
            prev: sha256_hex(MAGIC.strip_suffix(b"\n").unwrap_or(MAGIC)),
            blocks: BTreeMap::new(),
            growing: BTreeMap::new(),
            last_body: BTreeMap::new(),
            scrapes: 0,
            run: run.to_owned(),
        };
        let payload = serde_json::to_vec(&Opening {
            run: run.to_owned(),
            receipt: fields.clone(),
        })
        .unwrap_or_default();
        let mut out = MAGIC.to_vec();
        writer.fields_record(&mut out, Kind::Open, at_mono_ns, &payload);
        (writer, out)
    }

    /// Blocks written so far (whole ones).
    pub fn has_block(&self, name: &str) -> bool {
        self.blocks.contains_key(name) || self.growing.contains_key(name)
    }

    /// The fields as the writer knows them now (read only if the stream is never sealed).
    pub fn update(&mut self, fields: &Fields, at_mono_ns: i64) -> Vec<u8> {
        let payload = serde_json::to_vec(fields).unwrap_or_default();
        let mut out = Vec::with_capacity(payload.len() + 256);
        self.fields_record(&mut out, Kind::Update, at_mono_ns, &payload);
        out
    }

    /// A whole evidence block.
    pub fn block(&mut self, name: &str, raw: &[u8], at_mono_ns: i64) -> Vec<u8> {
        self.blocks.insert(
            name.to_owned(),
            Digest {
                sha256: sha256_hex(raw),
                bytes: raw.len() as u64,
            },
        );
        let mut out = Vec::with_capacity(raw.len() + 256);
        let header_block = Some(name.to_owned());
        self.record(
            &mut out,
            Kind::Block,
            at_mono_ns,
            header_block,
            None,
            None,
            raw,
            None,
        );
        out
    }

    /// The next part of a block that grows over the run (the native event log).
    pub fn part(&mut self, name: &str, raw: &[u8], at_mono_ns: i64) -> Vec<u8> {
        let open = self.growing.entry(name.to_owned()).or_insert_with(|| Open {
            hasher: Sha256::new(),
            bytes: 0,
            parts: 0,
        });
        open.hasher.update(raw);
        open.bytes += raw.len() as u64;
        let part = open.parts;
        open.parts += 1;
        let mut out = Vec::with_capacity(raw.len() + 256);
        let header_block = Some(name.to_owned());
        self.record(
            &mut out,
            Kind::Block,
            at_mono_ns,
            header_block,
            Some(part),
            None,
            raw,
            None,
        );
        out
    }

    /// One scrape; `body` is its response body (for a [`ScrapeOutcome::Response`]).
    pub fn scrape(&mut self, scrape: &Scrape, body: &[u8], at_mono_ns: i64) -> Vec<u8> {
        self.scrapes += 1;
        let mut out = Vec::with_capacity(body.len() / 8 + 512);
        let ScrapeOutcome::Response { body: name, .. } = &scrape.outcome else {
            self.record(
                &mut out,
                Kind::Scrape,
                at_mono_ns,
                None,
                None,
                Some(scrape),
                b"",
                None,
            );
            return out;
        };
        self.blocks.insert(
            name.clone(),
            Digest {
                sha256: sha256_hex(body),
                bytes: body.len() as u64,
            },
        );
        let encoded = self
            .last_body
            .get(&scrape.url)
            .and_then(|(base, bytes)| Some((base.clone(), delta::encode(bytes, body)?)));
        let block = Some(name.clone());
        match encoded {
            Some((base, payload)) => self.record(
                &mut out,
                Kind::Scrape,
                at_mono_ns,
                block,
                None,
                Some(scrape),
                &payload,
                Some((base, body)),
            ),
            None => self.record(
                &mut out,
                Kind::Scrape,
                at_mono_ns,
                block,
                None,
                Some(scrape),
                body,
                None,
            ),
        }
        self.last_body
            .insert(scrape.url.clone(), (name.clone(), body.to_vec()));
        out
    }

    /// The seal: `receipt`'s final fields, after appending every block of it not yet written
    /// (a block written earlier with other bytes is appended under no name: the seal then
    /// lists what the stream holds, and the reader refuses the disagreement).
    pub fn seal(mut self, receipt: &Receipt, at_mono_ns: i64) -> Vec<u8> {
        self.seal_in_place(receipt, at_mono_ns)
    }

    /// The seal's records, the writer kept (its chain head is the seal's header line).
    fn seal_in_place(&mut self, receipt: &Receipt, at_mono_ns: i64) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, evidence) in &receipt.evidence {
            if self.has_block(name) {
                continue;
            }
            if let Ok(raw) = evidence.decoded(name) {
                out.extend(self.block(name, &raw, at_mono_ns));
            }
        }
        for (name, open) in std::mem::take(&mut self.growing) {
            self.blocks.insert(
                name,
                Digest {
                    sha256: crate::trace::hex(&open.hasher.finalize()),
                    bytes: open.bytes,
                },
            );
        }
        let sealing = Sealing {
            receipt: Fields::of(receipt),
            scrapes: self.scrapes,
            blocks: std::mem::take(&mut self.blocks),
        };
        let payload = serde_json::to_vec(&sealing).unwrap_or_default();
        self.fields_record(&mut out, Kind::Seal, at_mono_ns, &payload);
        out
    }

    /// [`RecordWriter::seal`], then, given the firing client's `key`, its signature of the
    /// seal: a [`Kind::SealSignature`] record holding a `loadproof.signed/v1` envelope of a
    /// [`SealStatement`] naming this run and the seal's header line (the chain's head).
    pub fn seal_signed(
        self,
        receipt: &Receipt,
        at_mono_ns: i64,
        key: Option<&crate::signing::SecretKey>,
    ) -> Vec<u8> {
        let run = self.run.clone();
        let mut sealer = self;
        let mut out = sealer.seal_in_place(receipt, at_mono_ns);
        if let Some(key) = key {
            let statement = SealStatement {
                schema: super::SEAL_STATEMENT_SCHEMA.to_owned(),
                run,
                seal: sealer.prev.clone(),
            };
            let envelope = crate::signing::Signed::sign(key, &statement.to_bytes()).to_json();
            sealer.fields_record(
                &mut out,
                Kind::SealSignature,
                at_mono_ns,
                envelope.as_bytes(),
            );
        }
        out
    }

    /// Appends a record whose payload is the writer's own JSON (the opening, an update, the
    /// seal): no block, part, scrape or delta.
    fn fields_record(&mut self, out: &mut Vec<u8>, kind: Kind, at_mono_ns: i64, payload: &[u8]) {
        self.record(out, kind, at_mono_ns, None, None, None, payload, None);
    }

    /// Appends one record to `out`. `raw` is `Some((base, raw bytes))` when `payload` is a
    /// delta; otherwise the payload is the raw bytes.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        out: &mut Vec<u8>,
        kind: Kind,
        at_mono_ns: i64,
        block: Option<String>,
        part: Option<u64>,
        scrape: Option<&Scrape>,
        payload: &[u8],
        delta_of: Option<(String, &[u8])>,
    ) {
        let (base, raw) = match delta_of {
            Some((base, raw)) => (Some(base), raw),
            None => (None, payload),
        };
        let header = Header {
            seq: self.seq,
            prev: std::mem::take(&mut self.prev),
            kind,
            at_mono_ns,
            block,
            part,
            scrape: scrape.cloned(),
            base,
            len: payload.len() as u64,
            sha256: sha256_hex(raw),
            bytes: raw.len() as u64,
        };
        let line = serde_json::to_vec(&header).unwrap_or_default();
        self.prev = sha256_hex(&line);
        self.seq += 1;
        out.extend_from_slice(&line);
        out.push(b'\n');
        out.extend_from_slice(payload);
        out.push(b'\n');
    }
}

impl Fields {
    /// The fields of `receipt` other than its scrapes and evidence.
    pub fn of(receipt: &Receipt) -> Fields {
        Fields {
            schema: receipt.schema.clone(),
            protocol: receipt.protocol.clone(),
            subject: receipt.subject.clone(),
            provenance: receipt.provenance.clone(),
            execution: receipt.execution.clone(),
            notes: receipt.notes.clone(),
            lease: receipt.lease.clone(),
            implementation: receipt.implementation.clone(),
            derived: receipt.derived.clone(),
        }
    }
}

/// A whole receipt as a record stream (uncompressed): the open record, every evidence block
/// that is not a scrape body, the scrapes in order, the seal. What `receipt upgrade` writes.
pub fn whole(receipt: &Receipt, run: &str) -> Vec<u8> {
    let (mut writer, mut out) = RecordWriter::open(run, &Fields::of(receipt), 0);
    let bodies: std::collections::BTreeSet<&str> = receipt
        .scrapes
        .iter()
        .filter_map(|s| match &s.outcome {
            ScrapeOutcome::Response { body, .. } => Some(body.as_str()),
            ScrapeOutcome::Failed { .. } => None,
        })
        .collect();
    for (name, evidence) in &receipt.evidence {
        if bodies.contains(name.as_str()) {
            continue;
        }
        if let Ok(raw) = evidence.decoded(name) {
            out.extend(writer.block(name, &raw, 0));
        }
    }
    // Stamps run forward: each scrape at its completion (never before the record before it).
    // Packed bodies (a stream written again) come from one walk, in the order written.
    let mut at = 0i64;
    let mut walk = receipt.packed.walk();
    for scrape in &receipt.scrapes {
        at = at.max(scrape.completed_mono_ns.unwrap_or(0));
        let body: Vec<u8> = match &scrape.outcome {
            ScrapeOutcome::Response { body, .. } if receipt.evidence.contains_key(body) => receipt
                .evidence
                .get(body)
                .and_then(|e| e.decoded(body).ok())
                .map(|b| b.into_owned())
                .unwrap_or_default(),
            ScrapeOutcome::Response { body, .. } if receipt.packed.contains(body) => {
                match walk.next() {
                    Some(w) if w.name == body => w.bytes.map(<[u8]>::to_vec),
                    _ => receipt.packed.rebuild(body).ok(),
                }
                .unwrap_or_default()
            }
            ScrapeOutcome::Response { .. } | ScrapeOutcome::Failed { .. } => Vec::new(),
        };
        out.extend(writer.scrape(scrape, &body, at));
    }
    out.extend(writer.seal(receipt, at));
    out
}
