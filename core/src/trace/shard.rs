//! A later part of a source, read on another thread and joined, in order, by the ingester
//! that read the part before it.
//!
//! Reading lines into values is the expensive part of ingestion and has no state from one line
//! to the next; the accounting (arrival order, the caller's time window and row limit, session
//! interning, examples) does, and is cheap. So a source is cut at line boundaries, each later
//! part is read by a [`ShardIngester`](super::ShardIngester) into a [`Shard`] — its sound rows
//! as columns, its defective lines counted — and the ingester of the first part replays every
//! shard's rows through the same accounting, in file order. The trace that comes out is the
//! one a single reader makes of the whole file, to the byte of its report; the tests hold every
//! split of real and random files to that.
//!
//! A shard crosses a thread (in the browser, a worker), so it comes apart into a small
//! serializable [`ShardMeta`] and its columns ([`ShardRows`]), and [`Shard::from_parts`]
//! refuses parts that do not hold together, as [`super::Trace::new`] refuses a trace whose
//! counts do not reconcile.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::shard_error::ShardError;
use super::{DropReason, Format, PrefixBlocks, Requests, RowIssue};

/// What a shard holds besides its rows: small, and serializable for a hand-over between
/// threads. Line numbers in it count from the shard's first line (1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardMeta {
    pub(crate) format: Format,
    pub(crate) columns: Vec<String>,
    /// The `(model, log_type)` cell filters the rows were checked against.
    pub(crate) cell_filter: (Option<String>, Option<String>),
    pub(crate) bytes: u64,
    /// Lines in the shard, blank ones included.
    pub(crate) lines: u64,
    pub(crate) rows_read: u64,
    pub(crate) blank_lines: u64,
    /// Lines dropped while reading (never a reason the accounting gives: those are decided
    /// when the rows are replayed).
    pub(crate) dropped: BTreeMap<DropReason, u64>,
    /// The first examples of each reason, by line within the shard.
    pub(crate) examples: BTreeMap<DropReason, Vec<RowIssue>>,
    /// `(row, lines before it that are not rows)` wherever that count changes: row `i` is on
    /// line `i + 1 + skip` of the shard, found without a line number per row.
    pub(crate) skips: Vec<(u64, u64)>,
    /// Azure timestamps read `(with, without)` a UTC offset.
    pub(crate) azure_stamps: (u64, u64),
}

/// A shard's sound rows, column by column, as read and before any accounting: arrivals are in
/// the source's clock (not rebased) and may be out of order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShardRows {
    /// Arrival of each row in the source's clock, nanoseconds.
    pub arrival_ns: Vec<i64>,
    /// Prompt tokens of each row (0 is dropped only when replayed).
    pub input_tokens: Vec<u32>,
    /// Completion tokens of each row.
    pub output_tokens: Vec<u32>,
    /// Per row, the cell filter that leaves it out: 0 none, 1 model, 2 log type. Empty when
    /// the caller set no cell filter.
    pub excluded: Vec<u8>,
    /// Per row, the index of its session id in `session_ends` (`u32::MAX`: none), when the
    /// layout has sessions.
    pub session: Option<Vec<u32>>,
    /// Every distinct session id of the shard, concatenated, in order of first appearance.
    pub session_names: Vec<u8>,
    /// Where each session id ends in `session_names`.
    pub session_ends: Vec<u64>,
    /// Prefix blocks, when the format carries prefix identity.
    pub prefix: Option<PrefixBlocks>,
}

/// Rows excluded by the `--model` cell filter, in [`ShardRows::excluded`].
pub(crate) const EXCLUDED_MODEL: u8 = 1;
/// Rows excluded by the `--log-type` cell filter, in [`ShardRows::excluded`].
pub(crate) const EXCLUDED_LOG_TYPE: u8 = 2;

/// A later part of a source, read and not yet accounted. Made by a
/// [`ShardIngester`](super::ShardIngester), joined by
/// [`Ingester::join`](super::Ingester::join).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    pub(crate) meta: ShardMeta,
    pub(crate) rows: ShardRows,
}

impl Shard {
    /// The two parts to hand to another thread.
    pub fn into_parts(self) -> (ShardMeta, ShardRows) {
        (self.meta, self.rows)
    }

    /// Rebuilds a shard from its parts, refusing parts that do not hold together: columns of
    /// one length, session and prefix indexes in range, line numbers inside the shard, and
    /// `rows_read == rows + dropped`.
    pub fn from_parts(meta: ShardMeta, rows: ShardRows) -> Result<Shard, ShardError> {
        use ShardError::Inconsistent;
        let n = rows.arrival_ns.len();
        if rows.input_tokens.len() != n || rows.output_tokens.len() != n {
            return Err(Inconsistent("token columns differ in length"));
        }
        // A cell filter decided every row (a column of one length); without one, none.
        let cell_filtered = meta.cell_filter.0.is_some() || meta.cell_filter.1.is_some();
        let excluded_ok = if cell_filtered {
            rows.excluded.len() == n && rows.excluded.iter().all(|&e| e <= EXCLUDED_LOG_TYPE)
        } else {
            rows.excluded.is_empty()
        };
        if !excluded_ok {
            return Err(Inconsistent("the excluded column"));
        }
        let names = rows.session_ends.len();
        if !rows
            .session_ends
            .windows(2)
            .all(|w| matches!(w, [a, b] if a <= b))
            || rows
                .session_ends
                .last()
                .is_some_and(|&e| e != rows.session_names.len() as u64)
            || (names == 0 && !rows.session_names.is_empty())
        {
            return Err(Inconsistent("session names"));
        }
        if let Some(session) = &rows.session {
            let in_range = |&s: &u32| s == Requests::NO_SESSION || (s as usize) < names;
            if session.len() != n || !session.iter().all(in_range) {
                return Err(Inconsistent("the session column"));
            }
        } else if names > 0 {
            return Err(Inconsistent("session names without a session column"));
        }
        if rows.prefix.as_ref().is_some_and(|p| !p.indexes(n)) {
            return Err(Inconsistent("prefix offsets do not index the ids"));
        }
        if meta.dropped.values().any(|&d| d == 0) {
            return Err(Inconsistent("a drop reason with no drops"));
        }
        let dropped = meta
            .dropped
            .values()
            .try_fold(n as u64, |acc, &d| acc.checked_add(d));
        if dropped != Some(meta.rows_read) {
            return Err(Inconsistent("rows_read is not rows + dropped"));
        }
        let rows_and_blanks = meta.rows_read.checked_add(meta.blank_lines);
        if rows_and_blanks.is_none_or(|r| r > meta.lines) {
            return Err(Inconsistent("more rows and blank lines than lines"));
        }
        let mut last: Option<(u64, u64)> = None;
        for &(row, skip) in &meta.skips {
            let ordered = last.is_none_or(|(r, s)| row > r && skip > s);
            let line = row.checked_add(1).and_then(|l| l.checked_add(skip));
            if !ordered || row >= n as u64 || line.is_none_or(|l| l > meta.lines) {
                return Err(Inconsistent("the line index"));
            }
            last = Some((row, skip));
        }
        // The last row is on a line of the shard.
        let last_skip = meta.skips.last().map_or(0, |&(_, s)| s);
        if (n as u64)
            .checked_add(last_skip)
            .is_none_or(|l| l > meta.lines)
        {
            return Err(Inconsistent("the line index"));
        }
        // Each sound Azure row is exactly one timestamp read, with or without its offset.
        let stamps = meta.azure_stamps.0.checked_add(meta.azure_stamps.1);
        let stamps_ok = match meta.format {
            Format::Azure => stamps == Some(n as u64),
            _ => meta.azure_stamps == (0, 0),
        };
        if !stamps_ok {
            return Err(Inconsistent("the Azure timestamp counts"));
        }
        let lines_inside = meta
            .examples
            .values()
            .flatten()
            .all(|e| (1..=meta.lines).contains(&e.line));
        if !lines_inside {
            return Err(Inconsistent("an example's line is outside the shard"));
        }
        let examples_counted = meta
            .examples
            .iter()
            .all(|(r, e)| meta.dropped.get(r).is_some_and(|&d| e.len() as u64 <= d));
        if !examples_counted {
            return Err(Inconsistent("more examples than drops"));
        }
        Ok(Shard { meta, rows })
    }

    /// Sound rows read (before any accounting).
    pub fn rows(&self) -> u64 {
        self.rows.arrival_ns.len() as u64
    }

    /// Bytes the shard was read from.
    pub fn bytes(&self) -> u64 {
        self.meta.bytes
    }

    /// The line of the shard row `row` is on (from 1).
    pub(crate) fn line_of(&self, row: u64) -> u64 {
        let skips = &self.meta.skips;
        let at = skips.partition_point(|&(r, _)| r <= row);
        let skip = at
            .checked_sub(1)
            .and_then(|i| skips.get(i))
            .map_or(0, |&(_, s)| s);
        row + 1 + skip
    }

    /// The session id at `index` in [`ShardRows::session_names`].
    pub(crate) fn session_name(&self, index: u32) -> Option<&[u8]> {
        let i = index as usize;
        let end = usize::try_from(*self.rows.session_ends.get(i)?).ok()?;
        let start = match i.checked_sub(1) {
            Some(p) => usize::try_from(*self.rows.session_ends.get(p)?).ok()?,
            None => 0,
        };
        self.rows.session_names.get(start..end)
    }
}
