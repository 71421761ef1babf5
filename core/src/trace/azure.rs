//! Azure LLM inference traces (2023 and 2024): `TIMESTAMP,ContextTokens,GeneratedTokens`.
//!
//! 2023 writes `2023-11-16 18:17:03.9799600` (7 fractional digits, no zone, CRLF, no final
//! newline); 2024 mixes `…00.001163+00:00` and `…00+00:00`. Both parse to integer nanoseconds
//! since the Unix epoch; a zone-less stamp is read as UTC.

use std::cell::Cell;

use super::DropReason;
use super::csv_line::Cells;
use super::datetime::{DatetimeError, MinuteMemo, parse_datetime_ns_memo};
use super::plain_line::{PlainColumn, PlainLayout};
use super::row::{Defect, Row, number_defect, token_cell};
use crate::decimal::NumberError;

const TIMESTAMP: &str = "TIMESTAMP";
const CONTEXT: &str = "ContextTokens";
const GENERATED: &str = "GeneratedTokens";
const REQUIRED: [&str; 3] = [TIMESTAMP, CONTEXT, GENERATED];

/// The columns in the order both years publish them.
const PUBLISHED: [PlainColumn; 3] = [
    PlainColumn::Stamp,
    PlainColumn::Count(0),
    PlainColumn::Count(1),
];

/// Column positions plus counts of the timestamp shapes seen.
#[derive(Debug, Clone)]
pub(crate) struct AzureColumns {
    n_cols: usize,
    timestamp: usize,
    context: usize,
    generated: usize,
    with_offset: Cell<u64>,
    without_offset: Cell<u64>,
    minute: Cell<MinuteMemo>,
    /// The columns as [`AzureColumns::read_plain`] reads them.
    plain: PlainLayout<3>,
}

impl AzureColumns {
    pub(crate) fn from_header(names: &[String]) -> Option<AzureColumns> {
        let pos = |name: &str| names.iter().position(|n| n == name);
        let (timestamp, context, generated) = (pos(TIMESTAMP)?, pos(CONTEXT)?, pos(GENERATED)?);
        Some(AzureColumns {
            n_cols: names.len(),
            timestamp,
            context,
            generated,
            with_offset: Cell::new(0),
            without_offset: Cell::new(0),
            minute: Cell::new(MinuteMemo::default()),
            plain: PlainLayout::new(
                &PUBLISHED,
                (0..names.len())
                    .map(|i| match i {
                        _ if i == timestamp => PlainColumn::Stamp,
                        _ if i == context => PlainColumn::Count(0),
                        _ if i == generated => PlainColumn::Count(1),
                        _ => PlainColumn::Skip,
                    })
                    .collect(),
            ),
        })
    }

    /// The row at the start of `bytes` and the bytes it took, when its line is plain, no
    /// longer than `max_line` bytes, and its stamp parses; `None` sends the line to
    /// [`AzureColumns::read`], which decides it.
    #[inline(always)]
    pub(crate) fn read_plain<'a>(
        &self,
        bytes: &'a [u8],
        max_line: usize,
    ) -> Option<(Row<'a>, usize)> {
        let mut memo = self.minute.get();
        let plain = self.plain.read(bytes, &mut memo, max_line);
        self.minute.set(memo);
        // Held to the limit before its stamp is counted: a line over it is dropped unread.
        let plain = plain?;
        let [input, output, _] = plain.counts;
        let row = self.counted(plain.time_ns, plain.had_offset, input, output);
        Some((row, plain.consumed))
    }

    /// The row of a stamp that parsed, its shape counted.
    fn counted<'a>(&self, ts_ns: i64, had_offset: bool, input: u32, output: u32) -> Row<'a> {
        let counter = if had_offset {
            &self.with_offset
        } else {
            &self.without_offset
        };
        counter.set(counter.get() + 1);
        Row::of_counts(ts_ns, input, output)
    }

    pub(crate) fn missing_hint(names: &[String]) -> String {
        let missing: Vec<&str> = REQUIRED
            .iter()
            .copied()
            .filter(|r| !names.iter().any(|n| n == r))
            .collect();
        format!("; not Azure: missing column(s) {}", missing.join(", "))
    }

    pub(crate) fn notes(&self) -> Vec<String> {
        let (with, without) = (self.with_offset.get(), self.without_offset.get());
        let mut notes = vec!["Azure carries no prefix or session identity".to_owned()];
        if with > 0 {
            notes.push(format!(
                "of the parsed timestamps, {with} carry a UTC offset (2024 layout) and {without} do not (read as UTC)"
            ));
        } else if without > 0 {
            notes.push(format!(
                "all {without} parsed timestamps are zone-less, read as UTC (2023 layout)"
            ));
        }
        notes
    }

    /// Timestamps read so far `(with, without)` a UTC offset.
    pub(crate) fn stamps(&self) -> (u64, u64) {
        (self.with_offset.get(), self.without_offset.get())
    }

    /// Sets the counts of [`AzureColumns::stamps`] (a shard starts at 0; a join adds its own).
    pub(crate) fn set_stamps(&self, (with, without): (u64, u64)) {
        self.with_offset.set(with);
        self.without_offset.set(without);
    }

    pub(crate) fn read<'a>(&self, line: &'a [u8], cells: &'a mut Cells) -> Result<Row<'a>, Defect> {
        cells.split_row(line, self.n_cols)?;
        let cells: &'a Cells = cells;
        let ts_cell = cells.get(line, self.timestamp);
        if ts_cell.trim_ascii().is_empty() {
            return Err(Defect::new(
                DropReason::MissingField,
                Some(TIMESTAMP),
                "empty",
            ));
        }
        let mut memo = self.minute.get();
        let parsed = parse_datetime_ns_memo(ts_cell.trim_ascii(), &mut memo);
        self.minute.set(memo);
        let (ts_ns, had_offset) = parsed.map_err(|e| match e {
            DatetimeError::Shape => Defect::new(
                DropReason::NonNumeric,
                Some(TIMESTAMP),
                format!(
                    "not a timestamp of the form YYYY-MM-DD HH:MM:SS[.fffffffff][+HH:MM]: {:?}",
                    String::from_utf8_lossy(ts_cell.get(..40).unwrap_or(ts_cell))
                ),
            ),
            DatetimeError::Range => number_defect(NumberError::OutOfRange, TIMESTAMP, ts_cell),
        })?;
        let input = token_cell(cells.get(line, self.context), CONTEXT)?;
        let output = token_cell(cells.get(line, self.generated), GENERATED)?;
        Ok(self.counted(ts_ns, had_offset, input, output))
    }
}
