//! A plain line of a built-in CSV layout, read in one pass from the chunk it sits in.
//!
//! Nearly every line of a BurstGPT or Azure file is plain: no quotes, digits where counts
//! go, a terminator right after the last cell. Finding the line's end, splitting it on commas
//! and reading its numbers were three passes over the same bytes (a third of the parse);
//! here one pass does all three, and reads the numbers as it goes.
//!
//! It only ever answers for a line it can read completely: anything else — a quote, a
//! count that is not 1 to 9 digits, a cell count off by one, a line cut by the chunk's end —
//! is `None`, and the line goes to the general path ([`super::csv_line::Cells`] and the
//! adapter's `read`), which decides it. So this reader adds speed, never behaviour: what it
//! reads is exactly what the general path would have read (a property test holds it to that).

use super::datetime::{MinuteMemo, epoch_ns, leading_datetime};
use super::row::leading_digits;
use super::swar::skip_to_separator;

/// What one column of a layout holds, as the one-pass reader reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlainColumn {
    /// Decimal seconds, `digits[.digits]`, to nanoseconds (BurstGPT's `Timestamp`).
    Seconds,
    /// An ISO datetime, read where it sits (Azure's `TIMESTAMP`), to nanoseconds.
    Stamp,
    /// A count of 1 to 9 digits, into slot `n` of [`PlainRow::counts`].
    Count(u8),
    /// Any unquoted text, into slot `n` of [`PlainRow::texts`].
    Text(u8),
    /// A cell no one reads.
    Skip,
}

/// Slots a layout may fill: three counts (input, output, total) and three texts.
pub(crate) const SLOTS: usize = 3;

/// One plain line's cells, borrowed from the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlainRow<'a> {
    /// The `Seconds` or `Stamp` column in nanoseconds since its zero (0 when the layout has
    /// neither).
    pub(crate) time_ns: i64,
    /// The `Stamp` carried its own UTC offset.
    pub(crate) had_offset: bool,
    pub(crate) counts: [u32; SLOTS],
    pub(crate) texts: [&'a [u8]; SLOTS],
    /// Bytes consumed from the start of the input: the line and its `\n`.
    pub(crate) consumed: usize,
}

/// Reads the line at the start of `bytes` if it is plain and ends (`\n`) within `bytes`;
/// a `Stamp` column reads its minute through `memo`.
#[inline(always)]
pub(crate) fn read_plain<'a>(
    columns: &[PlainColumn],
    bytes: &'a [u8],
    memo: &mut MinuteMemo,
) -> Option<PlainRow<'a>> {
    let mut row = PlainRow::empty();
    let mut pos = 0;
    let last = columns.len().checked_sub(1)?;
    for (idx, &column) in columns.iter().enumerate() {
        read_cell(column, idx == last, bytes, &mut pos, &mut row, memo)?;
    }
    Some(row)
}

/// [`read_plain`] for the column order a file of `N` columns publishes, `columns` known where
/// it is called: each cell is read by code made for its kind, without the loop's dispatch
/// on it (a sixth of the 5M BurstGPT parse).
#[inline(always)]
pub(crate) fn read_plain_fixed<'a, const N: usize>(
    columns: &[PlainColumn; N],
    bytes: &'a [u8],
    memo: &mut MinuteMemo,
) -> Option<PlainRow<'a>> {
    let mut row = PlainRow::empty();
    let mut pos = 0;
    macro_rules! cells {
        ($($i:literal)+) => {$(
            if $i < N {
                read_cell(*columns.get($i)?, $i + 1 == N, bytes, &mut pos, &mut row, memo)?;
            }
        )+};
    }
    cells!(0 1 2 3 4 5 6 7);
    (1..=8).contains(&N).then_some(row)
}

/// A layout's columns as read in one pass: by the code made for its published order when the
/// header has it (decided once, from the header), else by the loop.
#[derive(Debug, Clone)]
pub(crate) struct PlainLayout<const N: usize> {
    published: &'static [PlainColumn; N],
    columns: Vec<PlainColumn>,
    is_published: bool,
}

impl<const N: usize> PlainLayout<N> {
    pub(crate) fn new(published: &'static [PlainColumn; N], columns: Vec<PlainColumn>) -> Self {
        let is_published = columns == published;
        PlainLayout {
            published,
            columns,
            is_published,
        }
    }

    /// The plain line at the start of `bytes`, when it is no longer than `max_line` bytes (a
    /// longer one is the general path's to drop, before any side effect of reading it).
    #[inline(always)]
    pub(crate) fn read<'a>(
        &self,
        bytes: &'a [u8],
        memo: &mut MinuteMemo,
        max_line: usize,
    ) -> Option<PlainRow<'a>> {
        let row = if self.is_published {
            read_plain_fixed(self.published, bytes, memo)?
        } else {
            read_plain(&self.columns, bytes, memo)?
        };
        fits(row.consumed, max_line).then_some(row)
    }
}

/// Whether a line that took `consumed` bytes (its `\n` included) is within a limit of
/// `max_line` bytes, as the general path holds a line without its `\n`.
#[inline(always)]
fn fits(consumed: usize, max_line: usize) -> bool {
    consumed.checked_sub(1).is_some_and(|line| line <= max_line)
}

impl PlainRow<'_> {
    fn empty() -> Self {
        PlainRow {
            time_ns: 0,
            had_offset: false,
            counts: [0; SLOTS],
            texts: [&[]; SLOTS],
            consumed: 0,
        }
    }
}

/// Reads the cell of `column` at `*pos` and its separator (a comma, or the line's end when it
/// is the `last`), into `row`; `None` when the line is not plain.
#[inline(always)]
fn read_cell<'a>(
    column: PlainColumn,
    last: bool,
    bytes: &'a [u8],
    pos: &mut usize,
    row: &mut PlainRow<'a>,
    memo: &mut MinuteMemo,
) -> Option<()> {
    let start = *pos;
    match column {
        PlainColumn::Seconds => {
            let (secs, int_len) = leading_digits(bytes, pos, 10)?;
            let mut sub = 0;
            let mut frac_len = 0;
            if bytes.get(*pos) == Some(&b'.') {
                *pos += 1;
                let frac_start = *pos;
                (sub, frac_len) = leading_digits(bytes, pos, 9)?;
                // "5." is read by the general path alone.
                if *pos == frac_start {
                    return None;
                }
            }
            if int_len == 0 {
                return None;
            }
            let scale = 10i64.checked_pow(9 - frac_len as u32)?;
            row.time_ns = i64::try_from(secs)
                .ok()?
                .checked_mul(1_000_000_000)?
                .checked_add(i64::try_from(sub).ok()?.checked_mul(scale)?)?;
        }
        PlainColumn::Stamp => {
            let stamp = leading_datetime(bytes.get(*pos..)?, memo).ok()?;
            *pos += stamp.len;
            row.time_ns = epoch_ns(stamp.secs, stamp.frac_ns).ok()?;
            row.had_offset = stamp.had_offset;
        }
        PlainColumn::Count(slot) => {
            let (value, len) = leading_digits(bytes, pos, 9)?;
            if len == 0 {
                return None;
            }
            *row.counts.get_mut(usize::from(slot))? = u32::try_from(value).ok()?;
        }
        // A quote stops the scan, and is no separator: the line is the general path's.
        PlainColumn::Text(_) | PlainColumn::Skip => skip_to_separator(bytes, pos),
    }
    let end = *pos;
    match (bytes.get(*pos), last) {
        (Some(b','), false) => *pos += 1,
        (Some(b'\n'), true) => row.consumed = *pos + 1,
        // A CR before the line's end belongs to the terminator, not the last cell.
        (Some(b'\r'), true) if bytes.get(*pos + 1) == Some(&b'\n') => row.consumed = *pos + 2,
        _ => return None,
    }
    if let PlainColumn::Text(slot) = column {
        let mut cell = bytes.get(start..end)?;
        if last {
            cell = cell.strip_suffix(b"\r").unwrap_or(cell);
        }
        *row.texts.get_mut(usize::from(slot))? = cell;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use PlainColumn::*;

    const BURSTGPT: [PlainColumn; 6] = [Seconds, Text(0), Count(0), Count(1), Count(2), Text(1)];

    #[test]
    fn a_plain_line_is_read_with_its_terminator() {
        let bytes = b"0.067,GPT-4,224,105,329,Conversation log\r\nnext";
        let row = read_plain(&BURSTGPT, bytes, &mut MinuteMemo::default()).unwrap();
        assert_eq!(row.time_ns, 67_000_000);
        assert_eq!(row.counts, [224, 105, 329]);
        assert_eq!(row.texts[0], b"GPT-4");
        assert_eq!(row.texts[1], b"Conversation log");
        assert_eq!(row.consumed, bytes.len() - 4);
    }

    proptest::proptest! {
        #[test]
        fn a_fixed_order_reads_as_the_loop_reads_it(
            line in "[0-9.,\"a\r\n:+ -]{0,40}",
            azure_line in "(2024-05-10 00:0[0-9]:[0-6][0-9](\\.[0-9]{1,10})?(\\+00:00|Z|-01:30)?|[0-9 ]{0,3}),[0-9]{0,4},[0-9]{0,4}(\r)?\n",
        ) {
            const AZURE: [PlainColumn; 3] = [Stamp, Count(0), Count(1)];
            for (bytes, layout) in [(line.as_bytes(), &BURSTGPT[..]), (azure_line.as_bytes(), &AZURE[..])] {
                let (mut a, mut b) = (MinuteMemo::default(), MinuteMemo::default());
                let fixed = match layout.len() {
                    6 => read_plain_fixed(&BURSTGPT, bytes, &mut a),
                    _ => read_plain_fixed(&AZURE, bytes, &mut a),
                };
                proptest::prop_assert_eq!(fixed, read_plain(layout, bytes, &mut b));
            }
        }
    }

    #[test]
    fn a_layout_of_no_columns_reads_no_line() {
        let memo = &mut MinuteMemo::default();
        assert_eq!(read_plain(&[], b"\n", memo), None);
        assert_eq!(read_plain_fixed(&[], b"\n", memo), None);
        assert_eq!(read_plain_fixed(&[Skip; 9], b",,,,,,,,\n", memo), None);
    }

    #[test]
    fn anything_but_a_whole_plain_line_goes_to_the_general_path() {
        for line in [
            "0.067,GPT-4,224,105,329,API log", // no terminator in the chunk
            "0.067,\"GPT-4\",224,105,329,API log\n", // a quote
            "0.067,GPT-4,224,105,API log\n",   // a cell short
            "0.067,GPT-4,224,105,329,API log,x\n", // a cell over
            "0.067,GPT-4,,105,329,API log\n",  // an empty count
            "0.067,GPT-4,1234567890,105,329,API log\n", // ten digits
            "5.,GPT-4,1,1,2,API log\n",
            ".5,GPT-4,1,1,2,API log\n",
            "0.0670000000,GPT-4,1,1,2,API log\n",
            " 0.067,GPT-4,1,1,2,API log\n",
            "\n",
        ] {
            assert_eq!(
                read_plain(&BURSTGPT, line.as_bytes(), &mut MinuteMemo::default()),
                None,
                "{line:?}"
            );
        }
    }
}
