//! One line as an adapter reads it: a [`Row`] of values or the [`Defect`] that drops it, and
//! the cell readers every format shares (token counts, numbers that did not parse).
//!
//! The adapters (`burstgpt`, `mooncake`, `azure`) and the CSV splitter produce these; the
//! ingester consumes them. Keeping them here lets every adapter depend on one small module
//! instead of on the ingester or on each other.

use std::borrow::Cow;

use super::DropReason;
use crate::decimal::{Decimal, NumberError};

/// A row an adapter could read: values, plus the cells the caller's filters look at.
pub(crate) struct Row<'a> {
    pub(crate) ts_ns: i64,
    pub(crate) input: u32,
    pub(crate) output: u32,
    pub(crate) model: Option<&'a [u8]>,
    pub(crate) log_type: Option<&'a [u8]>,
    /// The caller's filter that left the row out, when the adapter decided it (a mapped log's
    /// filter columns); the ingester decides `model` and `log_type` for the built-in formats.
    pub(crate) excluded: Option<super::FilterReason>,
    pub(crate) session: Option<Cow<'a, [u8]>>,
    pub(crate) hash_ids: Option<Vec<u64>>,
}

impl<'a> Row<'a> {
    /// A row of an arrival and two counts, no cell for a filter, no session, no blocks: the
    /// shape the other fields are added to.
    pub(crate) fn of_counts(ts_ns: i64, input: u32, output: u32) -> Row<'a> {
        Row {
            ts_ns,
            input,
            output,
            model: None,
            log_type: None,
            excluded: None,
            session: None,
            hash_ids: None,
        }
    }
}

/// A row an adapter could not read.
pub(crate) struct Defect {
    pub(crate) reason: DropReason,
    pub(crate) field: Option<Cow<'static, str>>,
    pub(crate) detail: Cow<'static, str>,
}

impl Defect {
    pub(crate) fn new(
        reason: DropReason,
        field: Option<&'static str>,
        detail: impl Into<Cow<'static, str>>,
    ) -> Defect {
        Defect {
            reason,
            field: field.map(Cow::Borrowed),
            detail: detail.into(),
        }
    }

    /// A defect of a column whose name the log chose (a mapped log's).
    pub(crate) fn named(
        reason: DropReason,
        field: &str,
        detail: impl Into<Cow<'static, str>>,
    ) -> Defect {
        Defect {
            reason,
            field: Some(Cow::Owned(field.to_owned())),
            detail: detail.into(),
        }
    }
}

/// A run of 1 to 18 ASCII digits as a number; `None` for anything else.
#[inline]
pub(super) fn plain_digits(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 18 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    Some(v)
}

/// The ASCII digits from `*pos` on (at most `max`, at most 18) as a number and their count,
/// `*pos` moved past them; `None` when more than `max` follow.
#[inline]
pub(crate) fn leading_digits(bytes: &[u8], pos: &mut usize, max: usize) -> Option<(u64, usize)> {
    let max = max.min(18);
    let start = *pos;
    let mut value: u64 = 0;
    while let Some(d) = bytes
        .get(*pos)
        .map(|b| b.wrapping_sub(b'0'))
        .filter(|&d| d <= 9)
    {
        if *pos - start == max {
            return None;
        }
        value = value * 10 + u64::from(d);
        *pos += 1;
    }
    Some((value, *pos - start))
}

/// Up to 9 plain digits straight to a count. `None` sends it to the general parser.
#[inline]
fn plain_u32(cell: &[u8]) -> Option<u32> {
    if cell.len() > 9 {
        return None;
    }
    u32::try_from(plain_digits(cell)?).ok()
}

/// A token-count cell.
pub(crate) fn token_cell(cell: &[u8], field: &'static str) -> Result<u32, Defect> {
    if let Some(v) = plain_u32(cell) {
        return Ok(v);
    }
    if cell.trim_ascii().is_empty() {
        return Err(Defect::new(DropReason::MissingField, Some(field), "empty"));
    }
    Decimal::parse(cell)
        .and_then(Decimal::token_count)
        .map_err(|e| number_defect(e, field, cell))
}

/// The defect for a number that did not parse, quoting (a prefix of) the cell.
pub(crate) fn number_defect(err: NumberError, field: &'static str, cell: &[u8]) -> Defect {
    let shown: String = String::from_utf8_lossy(cell.get(..40).unwrap_or(cell)).into_owned();
    let (reason, what) = match err {
        NumberError::NotNumeric => (DropReason::NonNumeric, "not a number"),
        NumberError::NonFinite => (DropReason::NonFinite, "not finite"),
        NumberError::Negative => (DropReason::NegativeValue, "negative"),
        NumberError::OutOfRange => (DropReason::OutOfRange, "out of range"),
    };
    Defect::new(reason, Some(field), format!("{what}: {shown:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn leading_digits_are_read_as_a_fold_reads_them(
            bytes in proptest::collection::vec(proptest::prop_oneof![0x2f_u8..0x3b, proptest::prelude::any::<u8>()], 0..30),
            from in 0usize..30,
            max in 0usize..20,
        ) {
            let from = from.min(bytes.len());
            let digits = bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
            let mut pos = from;
            let read = leading_digits(&bytes, &mut pos, max);
            if digits > max.min(18) {
                proptest::prop_assert_eq!(read, None);
            } else {
                let value = bytes[from..from + digits]
                    .iter()
                    .fold(0u64, |v, b| v * 10 + u64::from(b - b'0'));
                proptest::prop_assert_eq!(read, Some((value, digits)));
                proptest::prop_assert_eq!(pos, from + digits);
            }
        }
    }

    #[test]
    fn plain_counts_stop_where_u32_does() {
        assert_eq!(plain_u32(b"999999999"), Some(999_999_999));
        assert_eq!(plain_u32(b"4294967296"), None);
    }
}
