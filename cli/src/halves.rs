//! A large trace file parsed in two halves on two threads, joined into the trace one reader
//! makes of it.
//!
//! Parsing is most of `trace inspect`'s time and ran on one core while the other only read
//! and hashed. So the file is cut at the line end after its midpoint (the first newline at or
//! after byte `mid - 1`, found by both sides without talking): the reading thread hands the
//! first half to the main thread's `Ingester` as before, and a second thread reads the second
//! half from its own handle into a core `Shard`, which the main thread joins (core replays its
//! rows through the same accounting, in file order).
//!
//! The reading thread takes the sha256 of every byte, as before, and also a 128-bit xxh3 of
//! the second half; the second thread takes the xxh3 of what it parsed. The shard is joined
//! as soon as the first half is parsed (the reader is then still hashing the file's end, so
//! the join's replay costs no wall time) and kept only when the two are equal — the bytes parsed are the bytes the file's sha256 covers, even
//! if the file changes under the command — and otherwise the main thread reads that half
//! itself, checked against the same xxh3. The check is xxh3, not a second sha256: it guards
//! against a file that changes while it is read, not against a forger (who could as well edit
//! the file before), and a second sha256 of half the file cost more than the halves saved on
//! two cores (0.87 s of CPU against 0.70 s for one parser).

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::Path;

use anyhow::{Context, Result, bail};
use loadproof_core::trace::{IngestOptions, Ingester, Shard, ShardIngester};
use xxhash_rust::xxh3::Xxh3;

use crate::bad_input::{BadInput, read_full};

/// Files from this size are parsed in halves: below it a second thread costs more than it
/// saves.
const HALVES_MIN_BYTES: u64 = 64 << 20;

/// The environment variable that sets the size from which a file is parsed in halves (the
/// tests read every real trace both ways and compare); when set, stderr says how the second
/// half was read.
pub(crate) const HALVES_MIN_BYTES_VAR: &str = "LOADPROOF_HALVES_MIN_BYTES";

/// The size from which a file is parsed in halves: [`HALVES_MIN_BYTES`], or
/// [`HALVES_MIN_BYTES_VAR`].
pub(crate) fn halves_min_bytes() -> u64 {
    std::env::var(HALVES_MIN_BYTES_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(HALVES_MIN_BYTES)
}

/// The most of the file's start the second thread reads to learn the layout.
const HEAD_MAX_BYTES: usize = 1 << 20;

/// Bytes read at a time by the second thread.
const CHUNK_BYTES: usize = 4 << 20;

/// Where the search for the cut starts: one byte before the file's middle.
pub(crate) fn midpoint(len: u64) -> u64 {
    (len / 2).max(1)
}

/// Finds the cut in a chunk read at `offset` of the file: `Some(i + 1)` when the chunk's byte
/// `i` is the first newline at or after byte `mid - 1`.
pub(crate) fn cut_in(chunk: &[u8], offset: u64, mid: u64) -> Option<usize> {
    let from = usize::try_from((mid - 1).saturating_sub(offset)).ok()?;
    let i = memchr::memchr(b'\n', chunk.get(from..)?)?;
    Some(from + i + 1)
}

/// The second half as its thread read it.
pub(crate) struct SecondHalf {
    /// Its rows, read and not yet accounted.
    pub shard: Shard,
    /// Where it starts in the file (the cut).
    pub start: u64,
    /// The xxh3-128 of every byte it parsed.
    pub xxh3: u128,
}

/// Reads `path` from the cut after `mid` to its end into a shard, told the layout by the
/// file's head. An error here is never the command's: the main thread then reads the half
/// itself and reports what is wrong with it.
pub(crate) fn read_second_half(path: &Path, mid: u64, opts: IngestOptions) -> Result<SecondHalf> {
    let mut file = File::open(path)?;
    let mut head = vec![0u8; HEAD_MAX_BYTES.min(usize::try_from(mid).unwrap_or(usize::MAX))];
    let n = read_full(&mut file, &mut head)?;
    head.truncate(n);
    let mut shard = ShardIngester::new(&head, opts)?;
    drop(head);
    let mut sha = Xxh3::new();
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut offset = mid - 1;
    file.seek(SeekFrom::Start(offset))?;
    let mut start = None;
    loop {
        let n = read_full(&mut file, &mut buf)?;
        let Some(chunk) = buf.get(..n).filter(|c| !c.is_empty()) else {
            break;
        };
        let from = match start {
            Some(_) => 0,
            None => match cut_in(chunk, offset, mid) {
                Some(i) => {
                    start = Some(offset + i as u64);
                    i
                }
                None => chunk.len(),
            },
        };
        if let Some(part) = chunk.get(from..) {
            sha.update(part);
            shard.push(part)?;
        }
        offset += n as u64;
    }
    Ok(SecondHalf {
        shard: shard.finish()?,
        // No newline after the middle: the second half is empty.
        start: start.unwrap_or(offset),
        xxh3: sha.digest128(),
    })
}

/// How the second half was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SecondRead {
    /// Its thread's shard was joined.
    Joined,
    /// The main thread read it (the shard failed or was not of the hashed bytes).
    Reread,
}

/// The second half once the first is parsed, before the reading thread is done hashing the
/// file's end.
pub(crate) enum Early {
    /// Joined already; the reader's cut and xxh3 must be these.
    Joined { start: u64, xxh3: u128 },
    /// Not joinable as it is (the thread failed, or found no line after the middle): settled
    /// by [`join_second_half`] once the reader is done.
    Pending(Box<Result<SecondHalf>>),
}

/// Joins the second thread's shard into `ingester` as soon as the first half is parsed: the
/// reader is then still hashing the file's end (a sha256 cannot be split), and the join's
/// replay of the rows is done on this core meanwhile instead of after it. [`settle`] checks
/// the join against the reader's xxh3 of the same bytes.
pub(crate) fn join_early(
    path: &Path,
    ingester: &mut Ingester,
    second: Result<SecondHalf>,
    len: u64,
) -> Result<Early> {
    match second {
        Ok(half) if half.start < len => {
            let (start, xxh3) = (half.start, half.xxh3);
            ingester
                .join(half.shard)
                .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
            Ok(Early::Joined { start, xxh3 })
        }
        other => Ok(Early::Pending(Box::new(other))),
    }
}

/// Settles the second half against what the reader hashed (`cut`: where the first half ended
/// and the xxh3 of every byte after it, `None` with one parser): a joined shard must be of
/// exactly those bytes, else the file changed while it was read; a pending one is read here.
pub(crate) fn settle(
    path: &Path,
    ingester: &mut Ingester,
    early: Early,
    cut: Option<(u64, u128)>,
    len: u64,
) -> Result<Option<SecondRead>> {
    match (early, cut) {
        (Early::Joined { start, xxh3 }, Some((cut, second_xxh3)))
            if start == cut && xxh3 == second_xxh3 =>
        {
            Ok(Some(SecondRead::Joined))
        }
        (Early::Joined { .. }, _) => bail!(
            "{}: the file changed while it was read (its second half differs between two reads)",
            path.display()
        ),
        (Early::Pending(half), Some((cut, second_xxh3))) if cut < len => {
            join_second_half(path, ingester, *half, cut, second_xxh3).map(Some)
        }
        // A cut at the end (no newline after the middle) leaves no second half to join.
        (Early::Pending(_), _) => Ok(None),
    }
}

/// Ends the first half's `ingester` with the second: the shard when it is the bytes from
/// `cut` whose xxh3 the reading thread took (`second_xxh3`), else the half read here.
pub(crate) fn join_second_half(
    path: &Path,
    ingester: &mut Ingester,
    second: Result<SecondHalf>,
    cut: u64,
    second_xxh3: u128,
) -> Result<SecondRead> {
    if let Ok(half) = second
        && half.start == cut
        && half.xxh3 == second_xxh3
    {
        ingester
            .join(half.shard)
            .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        return Ok(SecondRead::Joined);
    }
    let mut file = File::open(path).with_context(|| format!("reading {}", path.display()))?;
    file.seek(SeekFrom::Start(cut))
        .with_context(|| format!("reading {}", path.display()))?;
    let mut sha = Xxh3::new();
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        let n = read_full(&mut file, &mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        let Some(chunk) = buf.get(..n).filter(|c| !c.is_empty()) else {
            break;
        };
        sha.update(chunk);
        ingester
            .push(chunk)
            .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
    }
    if sha.digest128() != second_xxh3 {
        bail!(
            "{}: the file changed while it was read (its second half differs between two reads)",
            path.display()
        );
    }
    Ok(SecondRead::Reread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_half_joined_early_is_kept_only_if_it_is_the_bytes_the_reader_hashed() {
        let path = Path::new("trace.csv");
        let mut ingester = Ingester::new_unhashed(IngestOptions::default());
        let joined = || Early::Joined { start: 10, xxh3: 7 };
        let settled = settle(path, &mut ingester, joined(), Some((10, 7)), 20).unwrap();
        assert_eq!(settled, Some(SecondRead::Joined));
        for cut in [Some((10, 8)), Some((11, 7)), None] {
            let err = settle(path, &mut ingester, joined(), cut, 20).unwrap_err();
            assert!(
                err.to_string()
                    .contains("the file changed while it was read"),
                "{cut:?}: {err}"
            );
        }
        // No newline after the middle: nothing to join, nothing read again.
        let pending = Early::Pending(Box::new(Err(anyhow::anyhow!("no line"))));
        assert_eq!(
            settle(path, &mut ingester, pending, Some((20, 0)), 20).unwrap(),
            None
        );
    }

    #[test]
    fn the_cut_is_after_the_first_newline_at_or_after_the_byte_before_the_middle() {
        // mid = 5: the search starts at byte 4.
        assert_eq!(cut_in(b"ab\ncd\nef", 0, 5), Some(6));
        assert_eq!(cut_in(b"abcd\nef", 0, 5), Some(5));
        assert_eq!(cut_in(b"abcdef", 0, 5), None);
        // The chunk starts past the search's start: its first newline.
        assert_eq!(cut_in(b"x\ny", 10, 5), Some(2));
        // The chunk ends before the search's start.
        assert_eq!(cut_in(b"a\nb", 0, 50), None);
    }
}
