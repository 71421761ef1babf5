//! Reading records back into the [`Receipt`] their writer held.

use std::collections::{BTreeMap, HashMap};

use super::{
    Fields, Header, Kind, MAGIC, Opening, SealSignature, Sealing, StreamError, StreamStatus,
    TornTail,
};
use crate::receipt::{
    Evidence, Execution, Packed, PackedBody, Receipt, Scrape, ScrapeOutcome, Stamp, sha256_hex,
    strict_json,
};

/// A receipt rebuilt from its records, and how far its stream got.
#[derive(Debug)]
pub struct Materialized {
    /// The receipt (for an unsealed stream: the opening's fields, the execution closed at the
    /// last record).
    pub receipt: Receipt,
    /// The stream's reading.
    pub status: StreamStatus,
}

/// A block being assembled from parts.
struct Growing {
    bytes: Vec<u8>,
    parts: u64,
}

/// One record cut from the stream.
struct Cut<'a> {
    header: Header,
    line: &'a [u8],
    payload: &'a [u8],
}

/// The next record at `at`, `Ok(None)` at the end, `Err(torn)` when the stream ends inside it.
fn cut<'a>(
    stream: &'a [u8],
    at: usize,
    position: u64,
) -> Result<Option<Cut<'a>>, Result<TornTail, StreamError>> {
    let rest = stream.get(at..).unwrap_or_default();
    if rest.is_empty() {
        return Ok(None);
    }
    let torn = |what: String| {
        Err(Ok(TornTail {
            layer: "record".to_owned(),
            offset: at as u64,
            bytes: rest.len() as u64,
            detail: what,
        }))
    };
    let Some(eol) = memchr::memchr(b'\n', rest) else {
        return torn(format!(
            "record {position}'s header is cut short ({} bytes, no end of line)",
            rest.len()
        ));
    };
    let line = rest.get(..eol).unwrap_or_default();
    let bad = |detail: String| StreamError::Header {
        position,
        offset: at as u64,
        detail,
    };
    match strict_json::first_duplicate_key(line) {
        Ok(None) => {}
        Ok(Some(path)) => return Err(Err(bad(format!("the key {path} appears twice")))),
        Err(e) => return Err(Err(bad(e.to_string()))),
    }
    let header: Header = serde_json::from_slice(line).map_err(|e| Err(bad(e.to_string())))?;
    let start = eol + 1;
    let len = usize::try_from(header.len).unwrap_or(usize::MAX);
    let Some(end) = start.checked_add(len).filter(|&e| e < rest.len()) else {
        return torn(format!(
            "record {position}'s payload is cut short ({} of {} bytes)",
            rest.len().saturating_sub(start).min(len),
            header.len
        ));
    };
    if rest.get(end) != Some(&b'\n') {
        return Err(Err(bad(format!(
            "the payload's {} bytes are not followed by a newline",
            header.len
        ))));
    }
    Ok(Some(Cut {
        payload: rest.get(start..end).unwrap_or_default(),
        line,
        header,
    }))
}

/// Reads a decompressed record stream. `torn` is what the container left unread (if anything);
/// `file_bytes` the size of the file as given. `limit` bounds the raw evidence the receipt may
/// hold in all (every block, rebuilt): a few bytes of delta cannot become gigabytes.
pub fn read_records(
    stream: &[u8],
    torn: Option<TornTail>,
    file_bytes: u64,
    limit: usize,
) -> Result<Materialized, StreamError> {
    let mut at = MAGIC.len();
    if !stream.starts_with(MAGIC) {
        return Err(StreamError::Magic);
    }
    let mut prev = sha256_hex(MAGIC.strip_suffix(b"\n").unwrap_or(MAGIC));
    // Header digests by sequence number, to tell a duplicate from a reordered record.
    let mut seen: Vec<String> = Vec::new();
    let mut opening: Option<Opening> = None;
    let mut latest: Option<Fields> = None;
    let mut sealing: Option<Sealing> = None;
    let mut seal_signature: Option<SealSignature> = None;
    let mut evidence: BTreeMap<String, Evidence> = BTreeMap::new();
    let mut growing: BTreeMap<String, Growing> = BTreeMap::new();
    let mut scrapes: Vec<Scrape> = Vec::new();
    let mut packed = Packed::default();
    let mut last_body: HashMap<String, String> = HashMap::new();
    let mut last = (0u64, Kind::Open, 0i64);
    let mut torn_tail = None;
    // Raw evidence bytes held so far, against `limit`.
    let mut held = 0usize;
    let over = |held: usize, more: usize| -> Result<usize, StreamError> {
        let total = held.saturating_add(more);
        if total > limit {
            return Err(StreamError::TooLarge {
                limit: limit as u64,
            });
        }
        Ok(total)
    };
    loop {
        let position = seen.len() as u64;
        let record = match cut(stream, at, position) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(Ok(t)) => {
                torn_tail = Some(t);
                break;
            }
            Err(Err(e)) => return Err(e),
        };
        let h = &record.header;
        let digest = sha256_hex(record.line);
        if h.seq < position {
            let identical = seen.get(h.seq as usize) == Some(&digest);
            return Err(StreamError::Repeated {
                position,
                seq: h.seq,
                identical,
            });
        }
        if h.seq > position {
            return Err(StreamError::Gap {
                position,
                seq: h.seq,
            });
        }
        if h.prev != prev {
            return Err(StreamError::Chain { seq: h.seq });
        }
        if sealing.is_some() && (h.kind != Kind::SealSignature || seal_signature.is_some()) {
            return Err(StreamError::AfterSeal { seq: h.seq });
        }
        let refuse = |detail: String| StreamError::Record {
            seq: h.seq,
            kind: h.kind,
            detail,
        };
        // The writer stamps records under one lock from one monotonic clock.
        if h.seq > 0 && h.at_mono_ns < last.2 {
            return Err(refuse(format!(
                "stamped at {} ns, before record {} ({} ns)",
                h.at_mono_ns, last.0, last.2
            )));
        }
        // Each kind carries its own fields and no other's.
        let fields_ok = match h.kind {
            Kind::Open | Kind::Update | Kind::Seal | Kind::SealSignature => {
                h.block.is_none() && h.part.is_none() && h.scrape.is_none() && h.base.is_none()
            }
            Kind::Block => h.block.is_some() && h.scrape.is_none() && h.base.is_none(),
            Kind::Scrape => h.scrape.is_some() && h.part.is_none(),
        };
        if !fields_ok {
            return Err(refuse(
                "its header carries fields its kind does not have (or lacks its own)".to_owned(),
            ));
        }
        if (h.seq == 0) != (h.kind == Kind::Open) {
            return Err(if h.seq == 0 {
                StreamError::Open {
                    detail: format!("it is a {:?} record", h.kind),
                }
            } else {
                refuse("a second opening".to_owned())
            });
        }
        // A scrape body written against the previous body from its URL is kept as that delta
        // (rebuilt when read, see `Packed`): its base must be exactly that body.
        if let Some(base) = &h.base {
            let url = h
                .scrape
                .as_ref()
                .map(|s| s.url.as_str())
                .unwrap_or_default();
            if last_body.get(url) != Some(base) {
                return Err(refuse(format!(
                    "written against {base:?}, which is not the previous body scraped from {url:?}"
                )));
            }
        }
        let raw: std::borrow::Cow<'_, [u8]> = std::borrow::Cow::Borrowed(record.payload);
        // Whole blocks carry their header's claim, checked once by whoever verifies the
        // receipt (a changed byte fails by name, as in a v1 receipt). Everything else the
        // reader itself relies on — the opening, updates, the seal, each part of a growing
        // block — is checked here.
        let intact = || raw.len() as u64 == h.bytes && sha256_hex(&raw) == h.sha256;
        let as_recorded =
            |raw: std::borrow::Cow<'_, [u8]>| Evidence::claimed(raw, &h.sha256, h.bytes);
        // Raw evidence counts at the size it rebuilds to: the header's claim, which bounds the
        // rebuild itself.
        if matches!(h.kind, Kind::Block | Kind::Scrape) {
            let claimed = usize::try_from(h.bytes).unwrap_or(usize::MAX);
            held = over(held, raw.len().max(claimed))?;
        }
        match h.kind {
            Kind::Open => {
                let o: Opening = read_json(&raw).map_err(|detail| StreamError::Open { detail })?;
                if !intact() {
                    return Err(StreamError::Open {
                        detail: "its payload is not the bytes its header digests".to_owned(),
                    });
                }
                opening = Some(o);
            }
            Kind::Update => {
                if !intact() {
                    return Err(refuse(
                        "its payload is not the bytes its header digests".to_owned(),
                    ));
                }
                latest = Some(read_json(&raw).map_err(refuse)?);
            }
            Kind::Seal => {
                if !intact() {
                    return Err(refuse(
                        "its payload is not the bytes its header digests".to_owned(),
                    ));
                }
                sealing = Some(read_json(&raw).map_err(refuse)?);
            }
            Kind::SealSignature => {
                if sealing.is_none() {
                    return Err(refuse("a seal signature before the seal".to_owned()));
                }
                if !intact() {
                    return Err(refuse(
                        "its payload is not the bytes its header digests".to_owned(),
                    ));
                }
                let envelope = String::from_utf8(raw.to_vec())
                    .map_err(|_| refuse("a seal signature that is not UTF-8".to_owned()))?;
                seal_signature = Some(SealSignature {
                    envelope,
                    seal_sha256: h.prev.clone(),
                });
            }
            Kind::Block => {
                let Some(name) = &h.block else {
                    return Err(refuse("a block record without a block name".to_owned()));
                };
                if h.scrape.is_some() || h.base.is_some() {
                    return Err(refuse("a block record with scrape fields".to_owned()));
                }
                match h.part {
                    None => {
                        if evidence.contains_key(name)
                            || growing.contains_key(name)
                            || packed.contains(name)
                        {
                            return Err(refuse(format!("block {name:?} is written twice")));
                        }
                        evidence.insert(name.clone(), as_recorded(raw));
                    }
                    Some(part) => {
                        if evidence.contains_key(name) || packed.contains(name) {
                            return Err(refuse(format!(
                                "block {name:?} is written whole and in parts"
                            )));
                        }
                        let g = growing.entry(name.clone()).or_insert_with(|| Growing {
                            bytes: Vec::new(),
                            parts: 0,
                        });
                        if part != g.parts {
                            return Err(refuse(format!(
                                "part {part} of block {name:?} where part {} was due",
                                g.parts
                            )));
                        }
                        // A part is checked here: the seal's digest of the joined block can be
                        // rewritten with the last record, a part's header only with the chain.
                        if !intact() {
                            return Err(refuse(format!(
                                "part {part} of block {name:?} is not the bytes its header digests"
                            )));
                        }
                        g.parts += 1;
                        g.bytes.extend_from_slice(&raw);
                    }
                }
            }
            Kind::Scrape => {
                let Some(scrape) = &h.scrape else {
                    return Err(refuse("a scrape record without its scrape".to_owned()));
                };
                match &scrape.outcome {
                    ScrapeOutcome::Response { body, .. } => {
                        // Scrape bodies are held apart from the other blocks (packed): a
                        // scrape naming the plan, say, would take it out of every check that
                        // reads the plan.
                        if !body.starts_with(crate::receipt::block::METRICS_PREFIX) {
                            return Err(refuse(format!(
                                "the scrape's body is {body:?}: scrape bodies are {}<n> blocks",
                                crate::receipt::block::METRICS_PREFIX
                            )));
                        }
                        if h.block.as_ref() != Some(body) {
                            return Err(refuse(format!(
                                "the scrape's body is {body:?} but the record holds block {:?}",
                                h.block
                            )));
                        }
                        if evidence.contains_key(body)
                            || growing.contains_key(body)
                            || packed.contains(body)
                        {
                            return Err(refuse(format!("block {body:?} is written twice")));
                        }
                        packed.push(
                            body.clone(),
                            PackedBody {
                                base: h.base.clone(),
                                payload: record.payload.to_vec(),
                                sha256: h.sha256.clone(),
                                bytes: h.bytes,
                            },
                        );
                        last_body.insert(scrape.url.clone(), body.clone());
                    }
                    ScrapeOutcome::Failed { .. } => {
                        if h.block.is_some() || h.len != 0 || h.bytes != 0 {
                            return Err(refuse("a failed scrape with a body".to_owned()));
                        }
                    }
                }
                scrapes.push(scrape.clone());
            }
        }
        last = (h.seq, h.kind, h.at_mono_ns);
        seen.push(digest.clone());
        prev = digest;
        at += record.line.len() + 1 + record.payload.len() + 1;
    }
    let Some(opening) = opening else {
        return Err(match torn_tail {
            Some(t) => StreamError::Open {
                detail: format!(
                    "the stream ends before its first record is whole: {}",
                    t.detail
                ),
            },
            None => StreamError::Open {
                detail: "the stream holds no records".to_owned(),
            },
        });
    };
    // Parts become whole blocks (every part was checked against its header as it came).
    for (name, g) in growing {
        evidence.insert(name, Evidence::of(&g.bytes));
    }
    let sealed = sealing.is_some();
    // A sealed stream ends with its seal: bytes after it (a torn record, a frame that does not
    // end) are something appended, not a writer that died.
    if sealed && let Some(t) = torn_tail.as_ref().or(torn.as_ref()) {
        return Err(StreamError::Seal {
            detail: format!("{} bytes follow it ({})", t.bytes, t.detail),
        });
    }
    // What was fixed before the run cannot differ between the opening, any update and the
    // seal: the claimant could otherwise show one run in the records and another in the seal.
    agree(
        &opening.receipt,
        latest.as_ref(),
        sealing.as_ref().map(|s| &s.receipt),
    )?;
    let fields = match sealing {
        Some(seal) => {
            check_seal(&seal, &evidence, &packed, scrapes.len() as u64)?;
            seal.receipt
        }
        None => unsealed(latest.unwrap_or(opening.receipt), last.2),
    };
    let status = StreamStatus {
        sealed,
        run: opening.run,
        records: seen.len() as u64,
        last_seq: last.0,
        last_kind: last.1,
        last_mono_ns: last.2,
        file_bytes,
        stream_bytes: stream.len() as u64,
        torn_tail: torn_tail.or(torn),
        seal_signature,
    };
    Ok(Materialized {
        receipt: Receipt {
            schema: fields.schema,
            protocol: fields.protocol,
            subject: fields.subject,
            provenance: fields.provenance,
            execution: fields.execution,
            scrapes,
            evidence,
            notes: fields.notes,
            lease: fields.lease,
            implementation: fields.implementation,
            derived: fields.derived,
            stream: Some(status.clone()),
            packed,
        },
        status,
    })
}

/// The fields a run fixes before it fires — the receipt schema, what the protocol says of the
/// plan and the endpoint, who made it, the kind of execution and what it offers — agree between
/// the opening, the last update and the seal.
fn agree(open: &Fields, update: Option<&Fields>, seal: Option<&Fields>) -> Result<(), StreamError> {
    fn fixed(f: &Fields) -> serde_json::Value {
        let p = &f.protocol;
        let execution = match &f.execution {
            Execution::Native {
                events,
                offered,
                lag_bound_ns,
                ..
            } => {
                serde_json::json!({"kind": "native", "events": events, "offered": offered, "lag_bound_ns": lag_bound_ns})
            }
            // The client process: it ran, or (its spawn failed) it never started.
            Execution::Ran { .. } | Execution::NotStarted { .. } => {
                serde_json::json!({"kind": "client process"})
            }
            // A run that never fired opens and seals as one value (it is written whole).
            other => serde_json::to_value(other).unwrap_or_default(),
        };
        serde_json::json!({
            "schema": f.schema,
            "protocol.engine": p.engine,
            "protocol.base_url": p.base_url,
            "protocol.model": p.model,
            "protocol.trace_sha256": p.trace_sha256,
            "protocol.timed_trace_sha256": p.timed_trace_sha256,
            "protocol.plan_sha256": p.plan_sha256,
            "protocol.requests": p.requests,
            "protocol.chunk_size": p.chunk_size,
            "protocol.sec_multiplier": p.sec_multiplier,
            "provenance": f.provenance,
            "lease": f.lease,
            "execution": execution,
        })
    }
    let first = fixed(open);
    for (what, other) in [("the last update", update), ("the seal", seal)] {
        let Some(other) = other else { continue };
        let second = fixed(other);
        if let (serde_json::Value::Object(a), serde_json::Value::Object(b)) = (&first, &second)
            && let Some((key, value)) = a.iter().find(|(k, v)| b.get(*k) != Some(*v))
        {
            return Err(StreamError::Seal {
                detail: format!(
                    "the opening says {key} = {value}, {what} says {}: fixed before the run, it cannot change",
                    b.get(key).cloned().unwrap_or_default()
                ),
            });
        }
    }
    if open.schema != crate::receipt::RECEIPT_SCHEMA {
        return Err(StreamError::Open {
            detail: format!(
                "it builds a receipt of schema {:?}, not {:?}",
                open.schema,
                crate::receipt::RECEIPT_SCHEMA
            ),
        });
    }
    Ok(())
}

/// A JSON payload, refusing a key twice.
fn read_json<T: serde::de::DeserializeOwned>(raw: &[u8]) -> Result<T, String> {
    if let Some(path) = strict_json::first_duplicate_key(raw).map_err(|e| e.to_string())? {
        return Err(format!("the key {path} appears twice"));
    }
    serde_json::from_slice(raw).map_err(|e| e.to_string())
}

/// The seal must list exactly the blocks read, with the digests their records carry.
fn check_seal(
    seal: &Sealing,
    evidence: &BTreeMap<String, Evidence>,
    packed: &Packed,
    scrapes: u64,
) -> Result<(), StreamError> {
    if seal.scrapes != scrapes {
        return Err(StreamError::Seal {
            detail: format!(
                "it counts {} scrapes, the stream holds {scrapes}",
                seal.scrapes
            ),
        });
    }
    let held = |name: &str| {
        evidence
            .get(name)
            .map(|e| (e.sha256.as_str(), e.bytes))
            .or_else(|| packed.get(name).map(|b| (b.sha256.as_str(), b.bytes)))
    };
    for (name, d) in &seal.blocks {
        match held(name) {
            None => {
                return Err(StreamError::Seal {
                    detail: format!("it lists block {name:?}, which no record holds"),
                });
            }
            Some((sha256, bytes)) if sha256 != d.sha256 || bytes != d.bytes => {
                return Err(StreamError::Seal {
                    detail: format!(
                        "block {name:?} is sealed as sha256 {} ({} bytes); its records hold {sha256} ({bytes} bytes)",
                        d.sha256, d.bytes
                    ),
                });
            }
            Some(_) => {}
        }
    }
    if let Some(name) = evidence
        .keys()
        .chain(packed.iter().map(|(n, _)| n))
        .find(|n| !seal.blocks.contains_key(*n))
    {
        return Err(StreamError::Seal {
            detail: format!("block {name:?} is in the stream but not in the seal"),
        });
    }
    Ok(())
}

/// The opening's fields for a stream whose writer never sealed it: the execution closed at the
/// last record's time, with nothing the writer did not get to say.
fn unsealed(mut fields: Fields, last_mono_ns: i64) -> Fields {
    match &mut fields.execution {
        Execution::Native { started, ended, .. } => {
            let mono_ns = last_mono_ns.max(started.mono_ns);
            *ended = Stamp {
                mono_ns,
                unix_ns: started
                    .unix_ns
                    .saturating_add(mono_ns.saturating_sub(started.mono_ns)),
            };
        }
        Execution::Ran { .. } | Execution::NotStarted { .. } | Execution::Unreachable { .. } => {}
    }
    fields
}
