//! A scrape body written against the one before it from the same URL: consecutive `/metrics`
//! bodies differ in a few lines (the counters that moved), so a body is stored as runs of lines
//! copied from its base and the new lines between them. Decoding rebuilds the bytes exactly;
//! the record's sha256 is of the rebuilt bytes, the body as received.
//!
//! Wire form, repeated to the end of the payload:
//! `=` varint(first line of the base) varint(line count) — copy those base lines;
//! `+` varint(byte count) bytes — literal bytes.
//! A line is everything up to and including a `\n` (the last one may have none); varints are
//! unsigned LEB128.

use std::collections::HashMap;

/// Why a delta payload cannot be rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeltaError {
    /// The payload ends inside an op.
    #[error("the delta ends inside an operation at byte {at}")]
    Truncated {
        /// Offset in the payload.
        at: usize,
    },
    /// A byte that starts no known op.
    #[error("byte {at} of the delta is {byte:#04x}, not an operation (`=` or `+`)")]
    UnknownOp {
        /// Offset in the payload.
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// A copy names lines the base does not have.
    #[error("the delta copies lines {first}..{end} of a base with {lines} lines")]
    OutOfBase {
        /// First line asked for.
        first: u64,
        /// One past the last.
        end: u64,
        /// Lines in the base.
        lines: usize,
    },
    /// The rebuilt body would exceed the bound the caller set.
    #[error("the rebuilt body would exceed {limit} bytes")]
    TooLarge {
        /// The bound.
        limit: usize,
    },
}

/// Start offsets of each line of `base`, plus its length at the end.
fn line_starts(base: &[u8]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(base.len() / 40 + 2);
    starts.push(0);
    for i in memchr::memchr_iter(b'\n', base) {
        starts.push(i + 1);
    }
    if starts.last() != Some(&base.len()) {
        starts.push(base.len());
    }
    starts
}

fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split_inclusive(|b| *b == b'\n')
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn get_varint(payload: &[u8], at: &mut usize) -> Result<u64, DeltaError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = payload.get(*at) else {
            return Err(DeltaError::Truncated { at: *at });
        };
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(DeltaError::Truncated { at: *at })
}

/// `body` as a delta against `base`; `None` when the delta would not be smaller than the body
/// (the writer then stores the body as it is).
pub fn encode(base: &[u8], body: &[u8]) -> Option<Vec<u8>> {
    let base_lines: Vec<&[u8]> = lines(base).collect();
    let mut index: HashMap<&[u8], u64> = HashMap::with_capacity(base_lines.len());
    for (i, line) in base_lines.iter().enumerate() {
        index.entry(line).or_insert(i as u64);
    }
    let mut out = Vec::with_capacity(body.len() / 16);
    let mut copy: Option<(u64, u64)> = None;
    let mut literal: &[u8] = &[];
    let mut literal_start = 0usize;
    let mut offset = 0usize;
    let flush_copy = |out: &mut Vec<u8>, copy: &mut Option<(u64, u64)>| {
        if let Some((first, count)) = copy.take() {
            out.push(b'=');
            put_varint(out, first);
            put_varint(out, count);
        }
    };
    let flush_literal = |out: &mut Vec<u8>, literal: &mut &[u8]| {
        if !literal.is_empty() {
            out.push(b'+');
            put_varint(out, literal.len() as u64);
            out.extend_from_slice(literal);
            *literal = &[];
        }
    };
    for line in lines(body) {
        // The line after the current run first (repeated lines keep one run), then any.
        let next = copy
            .map(|(first, count)| first + count)
            .filter(|&k| usize::try_from(k).ok().and_then(|k| base_lines.get(k)) == Some(&line));
        match next.or_else(|| index.get(line).copied()) {
            Some(k) => {
                flush_literal(&mut out, &mut literal);
                match &mut copy {
                    Some((first, count)) if *first + *count == k => *count += 1,
                    _ => {
                        flush_copy(&mut out, &mut copy);
                        copy = Some((k, 1));
                    }
                }
            }
            None => {
                flush_copy(&mut out, &mut copy);
                if literal.is_empty() {
                    literal_start = offset;
                }
                literal = body.get(literal_start..offset + line.len()).unwrap_or(line);
            }
        }
        offset += line.len();
        if out.len() >= body.len() {
            return None;
        }
    }
    flush_copy(&mut out, &mut copy);
    flush_literal(&mut out, &mut literal);
    (out.len() < body.len()).then_some(out)
}

/// Rebuilds the body `payload` encodes against `base`, refusing one over `limit` bytes.
pub fn decode(base: &[u8], payload: &[u8], limit: usize) -> Result<Vec<u8>, DeltaError> {
    let mut out = Vec::with_capacity(base.len().min(limit));
    decode_into(base, payload, limit, &mut out)?;
    Ok(out)
}

/// [`decode`] into `out` (cleared first), so a reader of thousands of bodies reuses one
/// buffer.
pub fn decode_into(
    base: &[u8],
    payload: &[u8],
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<(), DeltaError> {
    let starts = line_starts(base);
    let n_lines = starts.len().saturating_sub(1);
    out.clear();
    let mut at = 0usize;
    while let Some(&op) = payload.get(at) {
        let op_at = at;
        at += 1;
        match op {
            b'=' => {
                let first = get_varint(payload, &mut at)?;
                let count = get_varint(payload, &mut at)?;
                let end = first.saturating_add(count);
                let range = usize::try_from(first)
                    .ok()
                    .zip(usize::try_from(end).ok())
                    .filter(|&(_, e)| e <= n_lines)
                    .and_then(|(f, e)| Some((*starts.get(f)?, *starts.get(e)?)))
                    .and_then(|(a, b)| base.get(a..b));
                let Some(bytes) = range else {
                    return Err(DeltaError::OutOfBase {
                        first,
                        end,
                        lines: n_lines,
                    });
                };
                if out.len() + bytes.len() > limit {
                    return Err(DeltaError::TooLarge { limit });
                }
                out.extend_from_slice(bytes);
            }
            b'+' => {
                let len = get_varint(payload, &mut at)?;
                let bytes = usize::try_from(len)
                    .ok()
                    .and_then(|l| payload.get(at..at.checked_add(l)?))
                    .ok_or(DeltaError::Truncated { at })?;
                if out.len() + bytes.len() > limit {
                    return Err(DeltaError::TooLarge { limit });
                }
                out.extend_from_slice(bytes);
                at += bytes.len();
            }
            byte => return Err(DeltaError::UnknownOp { at: op_at, byte }),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const A: &[u8] = b"# HELP x\n# TYPE x counter\nx_total 1.0\ny 2\nz 3\n";

    #[test]
    fn a_body_with_one_moved_counter_is_a_few_bytes() {
        let b = b"# HELP x\n# TYPE x counter\nx_total 2.0\ny 2\nz 3\n";
        let d = encode(A, b).unwrap();
        assert!(d.len() < 25, "{} bytes", d.len());
        assert_eq!(decode(A, &d, usize::MAX).unwrap(), b);
    }

    #[test]
    fn a_body_unlike_its_base_is_stored_whole() {
        assert_eq!(encode(A, b"entirely\nnew\n"), None);
    }

    #[test]
    fn bad_deltas_are_named_never_a_panic() {
        assert!(matches!(
            decode(A, b"=", 99),
            Err(DeltaError::Truncated { .. })
        ));
        assert!(matches!(
            decode(A, b"=\x00\x09", 99),
            Err(DeltaError::OutOfBase { .. })
        ));
        assert!(matches!(
            decode(A, b"+\x05ab", 99),
            Err(DeltaError::Truncated { .. })
        ));
        assert!(matches!(
            decode(A, b"?", 99),
            Err(DeltaError::UnknownOp { byte: b'?', .. })
        ));
        assert!(matches!(
            decode(A, b"=\x00\x05", 3),
            Err(DeltaError::TooLarge { .. })
        ));
        assert!(decode(A, b"=\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x01", 99).is_err());
    }

    proptest! {
        #[test]
        fn every_body_rebuilds_exactly(
            base in proptest::collection::vec(proptest::sample::select(vec!["a 1\n", "b 2\n", "c\n", "\n", "d 4"]), 0..20),
            body in proptest::collection::vec(proptest::sample::select(vec!["a 1\n", "b 3\n", "c\n", "\n", "e", "d 4"]), 0..20),
        ) {
            let base = base.concat().into_bytes();
            let body = body.concat().into_bytes();
            if let Some(d) = encode(&base, &body) {
                prop_assert_eq!(decode(&base, &d, usize::MAX).unwrap(), body);
            }
        }

        #[test]
        fn any_payload_decodes_or_is_refused(base in proptest::collection::vec(any::<u8>(), 0..64), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode(&base, &payload, 1 << 16);
        }
    }
}
