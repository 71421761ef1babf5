//! Scrape bodies held as their records wrote them: each one a line delta against the previous
//! body from the same URL (or whole), with the digest and length of the bytes as received.
//!
//! A record stream's hour of `/metrics` scrapes unfolds to ~700 MB of text but is a few
//! megabytes of deltas. Holding the deltas, not the text, is what keeps a receipt's memory
//! bounded by what each scrape added; a body exists as bytes only while someone reads it.
//! [`Walk`] rebuilds them in the order they were written — each from the one before, two
//! buffers per URL — and checks each against its digest as it goes, so reading every scrape
//! costs one pass; [`Packed::rebuild`] gives any single body, for a reader that wants one.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::evidence::EvidenceError;
use super::stream::delta;

/// One scrape body as its record holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedBody {
    /// The block this body was written against (the previous body from the same URL); `None`:
    /// the payload is the body itself.
    pub base: Option<String>,
    /// The delta against `base`, or the whole body.
    pub payload: Vec<u8>,
    /// sha256 of the body as received, lowercase hex (the record's claim, checked on reading).
    pub sha256: String,
    /// Length of the body as received (the record's claim; also the bound a rebuild obeys).
    pub bytes: u64,
}

/// Every packed body of a receipt, by block name, and the order they were written in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packed {
    bodies: BTreeMap<String, PackedBody>,
    /// Names in the order of their records (a body's base always comes before it).
    order: Vec<String>,
}

impl Packed {
    /// Adds a body written after every one already held. Its base, when it has one, must be
    /// held already (the stream reader checks that it is the previous body of its URL).
    pub(crate) fn push(&mut self, name: String, body: PackedBody) {
        self.order.push(name.clone());
        self.bodies.insert(name, body);
    }

    /// True when no body is packed (a v1 receipt, or a stream without scrapes).
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Bodies held.
    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    /// The body recorded under `name`.
    pub fn get(&self, name: &str) -> Option<&PackedBody> {
        self.bodies.get(name)
    }

    /// True when `name` is a packed body.
    pub fn contains(&self, name: &str) -> bool {
        self.bodies.contains_key(name)
    }

    /// Every body, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &PackedBody)> {
        self.bodies.iter()
    }

    /// Names in the order their records were written.
    pub fn order(&self) -> &[String] {
        &self.order
    }

    /// Bytes the payloads hold (what this form costs in memory).
    pub fn payload_bytes(&self) -> u64 {
        self.bodies.values().map(|b| b.payload.len() as u64).sum()
    }

    /// The raw bytes of one body, rebuilt from the first body of its chain, *not* checked
    /// against its digest (see [`Walk`] for that, and for reading many: each call here walks
    /// the chain again).
    pub fn rebuild(&self, name: &str) -> Result<Vec<u8>, EvidenceError> {
        let mut chain: Vec<(&str, &PackedBody)> = Vec::new();
        let mut at = name;
        loop {
            let body = self.bodies.get(at).ok_or_else(|| EvidenceError::Missing {
                block: at.to_owned(),
            })?;
            chain.push((at, body));
            // Bases come before their bodies, so a chain is never longer than the receipt.
            if chain.len() > self.bodies.len() {
                return Err(EvidenceError::Unbuilt {
                    block: name.to_owned(),
                    detail: "its chain of bases loops".to_owned(),
                });
            }
            match &body.base {
                Some(base) => at = base,
                None => break,
            }
        }
        let mut bytes: Vec<u8> = Vec::new();
        for (block, body) in chain.into_iter().rev() {
            bytes = build(block, body, &bytes)?;
        }
        Ok(bytes)
    }

    /// A walk over every body in the order written.
    pub fn walk(&self) -> Walk<'_> {
        self.walk_with(None)
    }

    /// A walk that takes the sha256 of a body listed in `digests` (lowercase hex, by name) as
    /// computed by the caller over the bytes this walk rebuilds, instead of hashing them
    /// again: the page hashes with the browser's WebCrypto, several times faster than hashing
    /// in wasm. The digests are the reader's own computation, never anything from the file.
    pub fn walk_trusting<'p>(&'p self, digests: &'p BTreeMap<String, String>) -> Walk<'p> {
        self.walk_with(Some(digests))
    }

    fn walk_with<'p>(&'p self, known: Option<&'p BTreeMap<String, String>>) -> Walk<'p> {
        Walk {
            known,
            packed: self,
            next: 0,
            bases: self
                .bodies
                .values()
                .filter_map(|b| b.base.as_deref())
                .collect(),
            last: HashMap::new(),
            current: None,
            spare: Vec::new(),
        }
    }
}

/// `body` rebuilt against `base` (ignored for a whole body), within its recorded length.
fn build(block: &str, body: &PackedBody, base: &[u8]) -> Result<Vec<u8>, EvidenceError> {
    let mut out = Vec::new();
    build_into(block, body, base, &mut out)?;
    Ok(out)
}

fn build_into(
    block: &str,
    body: &PackedBody,
    base: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EvidenceError> {
    out.clear();
    let limit = usize::try_from(body.bytes).unwrap_or(usize::MAX);
    match body.base {
        None if body.payload.len() > limit => Err(EvidenceError::LengthMismatch {
            block: block.to_owned(),
            recorded: body.bytes,
            actual: body.payload.len() as u64,
        }),
        None => {
            out.extend_from_slice(&body.payload);
            Ok(())
        }
        Some(_) => delta::decode_into(base, &body.payload, limit, out).map_err(|e| {
            EvidenceError::Unbuilt {
                block: block.to_owned(),
                detail: e.to_string(),
            }
        }),
    }
}

/// The digest and length check every rebuilt body passes before anyone reads it.
pub(crate) fn check(block: &str, body: &PackedBody, raw: &[u8]) -> Result<(), EvidenceError> {
    super::evidence::check(block, &body.sha256, body.bytes, raw)
}

/// [`check`] with the digest the caller computed of `raw`.
fn check_known(
    block: &str,
    body: &PackedBody,
    sha256: &str,
    raw: &[u8],
) -> Result<(), EvidenceError> {
    if sha256 != body.sha256 {
        return Err(EvidenceError::DigestMismatch {
            block: block.to_owned(),
            recorded: body.sha256.clone(),
            actual: sha256.to_owned(),
            bytes: raw.len() as u64,
        });
    }
    if raw.len() as u64 != body.bytes {
        return Err(EvidenceError::LengthMismatch {
            block: block.to_owned(),
            recorded: body.bytes,
            actual: raw.len() as u64,
        });
    }
    Ok(())
}

/// Rebuilds every packed body once, in the order written, each checked against its digest.
/// Holds the last body of each URL (the next one's base) and nothing else.
#[derive(Debug)]
pub struct Walk<'p> {
    packed: &'p Packed,
    /// Digests the caller computed (see [`Packed::walk_trusting`]).
    known: Option<&'p BTreeMap<String, String>>,
    next: usize,
    /// Names some body is written against: only these are kept once rebuilt.
    bases: HashSet<&'p str>,
    /// The last body rebuilt under each name still due as a base: `Err` when it did not
    /// rebuild, so its successors fail at once instead of re-walking the chain.
    last: HashMap<&'p str, Result<Vec<u8>, ()>>,
    /// The body lent out by the last step when nothing is written against it.
    current: Option<&'p str>,
    spare: Vec<u8>,
}

/// One body of a [`Walk`].
#[derive(Debug)]
pub struct Walked<'w> {
    /// The block's name.
    pub name: &'w str,
    /// What the record says of it.
    pub body: &'w PackedBody,
    /// The rebuilt bytes, verified or not; `None` when the body did not rebuild.
    pub bytes: Option<&'w [u8]>,
    /// Why the bytes are not the body as received (`None`: they are).
    pub error: Option<EvidenceError>,
}

impl<'w> Walked<'w> {
    /// The bytes as received, or why they are not at hand.
    pub fn verified(&self) -> Result<&'w [u8], &EvidenceError> {
        match (&self.error, self.bytes) {
            (Some(e), _) => Err(e),
            (None, Some(bytes)) => Ok(bytes),
            // Unreachable by construction: a body without bytes has an error.
            (None, None) => Ok(&[]),
        }
    }
}

impl<'p> Walk<'p> {
    /// The next body, or `None` after the last.
    #[allow(clippy::should_implement_trait)] // it lends its buffer: not an `Iterator`
    pub fn next(&mut self) -> Option<Walked<'_>> {
        self.step(true)
    }

    /// The next body's name and rebuilt bytes (`None`: it does not rebuild), **not checked**
    /// against its digest: for a caller that hashes them itself and hands the digests to
    /// [`Packed::walk_trusting`].
    pub fn next_unchecked(&mut self) -> Option<(&str, Option<&[u8]>)> {
        let w = self.step(false)?;
        Some((w.name, w.bytes))
    }

    /// The next body as rebuilt, **not checked** against its digest (its `error` says only
    /// that it did not rebuild): for the audit's deferred scan, whose reading stands only once
    /// the caller's digests of these bytes are confirmed (`audit::Deferred::finish`).
    pub(crate) fn next_deferred(&mut self) -> Option<Walked<'_>> {
        self.step(false)
    }

    fn step(&mut self, verify: bool) -> Option<Walked<'_>> {
        // The body lent out last time, when nothing is written against it, is done with.
        if let Some(done) = self.current.take()
            && let Some(Ok(bytes)) = self.last.remove(done)
        {
            self.spare = bytes;
        }
        let name: &'p str = self.packed.order.get(self.next)?;
        self.next += 1;
        let body = self.packed.bodies.get(name)?;
        let mut out = std::mem::take(&mut self.spare);
        let built = match &body.base {
            None => build_into(name, body, &[], &mut out),
            Some(base) => match self.last.remove(base.as_str()) {
                Some(Ok(bytes)) => {
                    let r = build_into(name, body, &bytes, &mut out);
                    self.spare = bytes;
                    r
                }
                // Only the base is named: its own error says why, once (a chain of failures
                // must not grow each message by the one before).
                Some(Err(())) => Err(EvidenceError::Unbuilt {
                    block: name.to_owned(),
                    detail: format!("its base {base:?} did not rebuild"),
                }),
                // Not walked (a base that is not the previous body of its URL cannot be read,
                // but a caller may have built `Packed` by hand): rebuild it from its chain.
                None => self
                    .packed
                    .rebuild(base)
                    .and_then(|b| build_into(name, body, &b, &mut out)),
            },
        };
        // A body that rebuilt is the next one's base whether or not it verifies: the rebuild
        // is deterministic, and the next body's own digest says whether its copy is right.
        let raw = match built {
            Ok(()) => {
                let verdict = match self.known.and_then(|k| k.get(name)) {
                    _ if !verify => Ok(()),
                    Some(sha256) => check_known(name, body, sha256, &out),
                    None => check(name, body, &out),
                };
                self.last.insert(name, Ok(out));
                verdict
            }
            Err(e) => {
                self.last.insert(name, Err(()));
                Err(e)
            }
        };
        // Kept under its own name while the caller reads it; dropped at the next step unless
        // a later body is written against it.
        if !self.bases.contains(name) {
            self.current = Some(name);
        }
        let bytes = match self.last.get(name) {
            Some(Ok(bytes)) => Some(bytes.as_slice()),
            _ => None,
        };
        Some(Walked {
            name,
            body,
            bytes,
            error: raw.err(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipt::sha256_hex;

    fn packed(bodies: &[&[u8]]) -> Packed {
        let mut p = Packed::default();
        let mut prev: Option<(String, Vec<u8>)> = None;
        for (i, b) in bodies.iter().enumerate() {
            let name = format!("metrics/{i}");
            let (base, payload) = match prev
                .as_ref()
                .and_then(|(n, bytes)| Some((n.clone(), delta::encode(bytes, b)?)))
            {
                Some((n, d)) => (Some(n), d),
                None => (None, b.to_vec()),
            };
            p.push(
                name.clone(),
                PackedBody {
                    base,
                    payload,
                    sha256: sha256_hex(b),
                    bytes: b.len() as u64,
                },
            );
            prev = Some((name, b.to_vec()));
        }
        p
    }

    const BODIES: [&[u8]; 4] = [
        b"# TYPE a counter\na_total 1\nb 2\nc 3\nd 4\n",
        b"# TYPE a counter\na_total 2\nb 2\nc 3\nd 4\n",
        b"# TYPE a counter\na_total 3\nb 2\nc 3\nd 4\n",
        b"# TYPE a counter\na_total 4\nb 2\nc 3\nd 5\n",
    ];

    #[test]
    fn a_walk_rebuilds_every_body_as_received() {
        let p = packed(&BODIES);
        assert!(p.get("metrics/1").unwrap().base.is_some());
        let mut w = p.walk();
        let mut n = 0;
        while let Some(b) = w.next() {
            assert_eq!(b.verified().unwrap(), BODIES[n]);
            assert_eq!(p.rebuild(b.name).unwrap(), BODIES[n]);
            n += 1;
        }
        assert_eq!(n, 4);
    }

    #[test]
    fn a_changed_delta_fails_its_own_digest_and_names_its_block() {
        let mut p = packed(&BODIES);
        let body = p.bodies.get_mut("metrics/1").unwrap();
        let at = body.payload.iter().position(|&b| b == b'2').unwrap();
        body.payload[at] = b'9';
        let mut w = p.walk();
        assert!(w.next().unwrap().verified().is_ok());
        let second = w.next().unwrap();
        assert!(
            matches!(second.error, Some(EvidenceError::DigestMismatch { ref block, .. }) if block == "metrics/1")
        );
        assert!(second.bytes.is_some());
        // The next body copies none of the changed line: it still verifies.
        assert!(w.next().unwrap().verified().is_ok());
    }

    #[test]
    fn a_delta_that_does_not_rebuild_fails_its_successors_at_once() {
        let mut p = packed(&BODIES);
        p.bodies.get_mut("metrics/1").unwrap().payload = b"=\x00\x63".to_vec();
        let mut w = p.walk();
        assert!(w.next().unwrap().verified().is_ok());
        for name in ["metrics/1", "metrics/2", "metrics/3"] {
            let b = w.next().unwrap();
            assert!(
                matches!(b.error, Some(EvidenceError::Unbuilt { ref block, .. }) if block == name),
                "{name}: {:?}",
                b.error
            );
            assert!(b.bytes.is_none());
        }
    }

    #[test]
    fn a_walk_trusting_the_callers_digests_gives_the_walks_verdicts() {
        let mut p = packed(&BODIES);
        let body = p.bodies.get_mut("metrics/1").unwrap();
        let at = body.payload.iter().position(|&b| b == b'2').unwrap();
        body.payload[at] = b'9';
        let mut digests = BTreeMap::new();
        let mut raw = p.walk();
        while let Some((name, bytes)) = raw.next_unchecked() {
            digests.insert(name.to_owned(), sha256_hex(bytes.unwrap()));
        }
        let (mut a, mut b) = (p.walk(), p.walk_trusting(&digests));
        while let (Some(x), Some(y)) = (a.next(), b.next()) {
            assert_eq!(x.name, y.name);
            assert_eq!(x.error, y.error);
            assert_eq!(x.bytes, y.bytes);
        }
        assert!(matches!(
            p.walk_trusting(&digests).nth_error(1),
            Some(EvidenceError::DigestMismatch { .. })
        ));
    }

    impl Walk<'_> {
        fn nth_error(mut self, n: usize) -> Option<EvidenceError> {
            for _ in 0..n {
                self.next()?;
            }
            self.next()?.error
        }
    }

    #[test]
    fn a_body_longer_than_recorded_is_refused_unbuilt() {
        let mut p = packed(&BODIES);
        p.bodies.get_mut("metrics/0").unwrap().bytes = 3;
        assert!(matches!(
            p.walk().next().unwrap().error,
            Some(EvidenceError::LengthMismatch { .. })
        ));
        p.bodies.get_mut("metrics/2").unwrap().bytes = 3;
        assert!(matches!(
            p.rebuild("metrics/2"),
            Err(EvidenceError::LengthMismatch { .. } | EvidenceError::Unbuilt { .. })
        ));
    }
}
