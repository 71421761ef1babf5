//! BurstGPT CSV: releases 1/2 (6 columns) and 3 (8 columns).
//!
//! Release 3 inserts `Session ID` and `Elapsed time` at positions 1–2, so every column is
//! found by header name; a positional reader would take the session id for the model. An empty
//! `Session ID` is single-shot API traffic, a real value, never a defect.

use super::DropReason;
use super::csv_line::Cells;
use super::datetime::MinuteMemo;
use super::plain_line::{PlainColumn, PlainLayout};
use super::row::{Defect, Row, number_defect, plain_digits, token_cell};
use crate::decimal::{Decimal, NumberError};

const TIMESTAMP: &str = "Timestamp";
const MODEL: &str = "Model";
const REQUEST: &str = "Request tokens";
const RESPONSE: &str = "Response tokens";
const TOTAL: &str = "Total tokens";
const LOG_TYPE: &str = "Log Type";
const SESSION: &str = "Session ID";
const ELAPSED: &str = "Elapsed time";
const REQUIRED: [&str; 6] = [TIMESTAMP, MODEL, REQUEST, RESPONSE, TOTAL, LOG_TYPE];

/// The columns of releases 1 and 2, in their order.
const RELEASE_1: [PlainColumn; 6] = [
    PlainColumn::Seconds,
    PlainColumn::Text(0),
    PlainColumn::Count(0),
    PlainColumn::Count(1),
    PlainColumn::Count(2),
    PlainColumn::Text(1),
];

/// Column positions, found by name in the header.
#[derive(Debug, Clone)]
pub(crate) struct BurstgptColumns {
    n_cols: usize,
    timestamp: usize,
    model: usize,
    request: usize,
    response: usize,
    log_type: usize,
    total: usize,
    session: Option<usize>,
    /// The columns as [`BurstgptColumns::read_plain`] reads them.
    plain: PlainLayout<6>,
}

fn position(names: &[String], name: &str) -> Option<usize> {
    names.iter().position(|n| n == name)
}

impl BurstgptColumns {
    pub(crate) fn from_header(names: &[String]) -> Option<BurstgptColumns> {
        let mut cols = BurstgptColumns {
            n_cols: names.len(),
            timestamp: position(names, TIMESTAMP)?,
            model: position(names, MODEL)?,
            request: position(names, REQUEST)?,
            response: position(names, RESPONSE)?,
            log_type: position(names, LOG_TYPE)?,
            total: position(names, TOTAL)?,
            session: position(names, SESSION),
            plain: PlainLayout::new(&RELEASE_1, Vec::new()),
        };
        let columns = (0..names.len())
            .map(|i| match i {
                _ if i == cols.timestamp => PlainColumn::Seconds,
                _ if i == cols.request => PlainColumn::Count(0),
                _ if i == cols.response => PlainColumn::Count(1),
                _ if i == cols.total => PlainColumn::Count(2),
                _ if i == cols.model => PlainColumn::Text(0),
                _ if i == cols.log_type => PlainColumn::Text(1),
                _ if Some(i) == cols.session => PlainColumn::Text(2),
                _ => PlainColumn::Skip,
            })
            .collect();
        cols.plain = PlainLayout::new(&RELEASE_1, columns);
        Some(cols)
    }

    pub(crate) fn missing_hint(names: &[String]) -> String {
        let missing: Vec<&str> = REQUIRED
            .iter()
            .copied()
            .filter(|r| position(names, r).is_none())
            .collect();
        format!("; not BurstGPT: missing column(s) {}", missing.join(", "))
    }

    pub(crate) fn has_sessions(&self) -> bool {
        self.session.is_some()
    }

    pub(crate) fn layout(&self) -> &'static str {
        if self.session.is_some() {
            "BurstGPT_3 (8 columns: Session ID, Elapsed time at 1-2)"
        } else {
            "BurstGPT_1/2 (6 columns)"
        }
    }

    pub(crate) fn notes(&self, names: &[String]) -> Vec<String> {
        let mut notes = vec!["BurstGPT carries no prefix identity in any layout".to_owned()];
        if self.session.is_none() {
            notes.push("no session identity in this layout (BurstGPT_1/2)".to_owned());
        }
        if position(names, ELAPSED).is_some() {
            notes.push(
                "'Elapsed time' (the source system's end-to-end latency) is not read: it is never comparable to a measured latency".to_owned(),
            );
        }
        let unknown: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| !REQUIRED.contains(n) && *n != SESSION && *n != ELAPSED)
            .collect();
        if !unknown.is_empty() {
            notes.push(format!(
                "unrecognised columns ignored: {}",
                unknown.join(", ")
            ));
        }
        notes
    }

    pub(crate) fn read<'a>(&self, line: &'a [u8], cells: &'a mut Cells) -> Result<Row<'a>, Defect> {
        cells.split_row(line, self.n_cols)?;
        let cells: &'a Cells = cells;
        let ts_ns = timestamp_ns(cells.get(line, self.timestamp), TIMESTAMP, 9)?;
        let input = token_cell(cells.get(line, self.request), REQUEST)?;
        let output = token_cell(cells.get(line, self.response), RESPONSE)?;
        // The three counts must agree: a row that contradicts itself is not one request.
        let total = token_cell(cells.get(line, self.total), TOTAL)?;
        if u64::from(total) != u64::from(input) + u64::from(output) {
            return Err(Defect::new(
                DropReason::InconsistentTotal,
                Some(TOTAL),
                format!("{total} is not Request tokens {input} + Response tokens {output}"),
            ));
        }
        Ok(Row {
            ts_ns,
            input,
            output,
            model: Some(cells.get(line, self.model)),
            log_type: Some(cells.get(line, self.log_type)),
            excluded: None,
            session: self
                .session
                .map(|i| std::borrow::Cow::Borrowed(cells.get(line, i))),
            hash_ids: None,
        })
    }
}

impl BurstgptColumns {
    /// The row at the start of `bytes` and the bytes it took, when its line is plain, sound
    /// and no longer than `max_line` bytes; `None` sends the line to [`BurstgptColumns::read`], which decides it.
    #[inline(always)]
    pub(crate) fn read_plain<'a>(
        &self,
        bytes: &'a [u8],
        max_line: usize,
    ) -> Option<(Row<'a>, usize)> {
        let plain = self
            .plain
            .read(bytes, &mut MinuteMemo::default(), max_line)?;
        let [input, output, total] = plain.counts;
        if u64::from(total) != u64::from(input) + u64::from(output) {
            return None;
        }
        let [model, log_type, session] = plain.texts;
        let row = Row {
            ts_ns: plain.time_ns,
            input,
            output,
            model: Some(model),
            log_type: Some(log_type),
            excluded: None,
            session: self.session.map(|_| std::borrow::Cow::Borrowed(session)),
            hash_ids: None,
        };
        Some((row, plain.consumed))
    }
}

/// A non-negative decimal timestamp cell, scaled by `10^scale` to nanoseconds (`scale = 9`
/// for seconds).
pub(crate) fn timestamp_ns(cell: &[u8], field: &'static str, scale: i32) -> Result<i64, Defect> {
    if scale == 9
        && let Some(ns) = plain_seconds_ns(cell)
    {
        return Ok(ns);
    }
    if cell.trim_ascii().is_empty() {
        return Err(Defect::new(DropReason::MissingField, Some(field), "empty"));
    }
    let value = Decimal::parse(cell)
        .and_then(|d| {
            if d.is_negative() {
                Err(NumberError::Negative)
            } else {
                d.scaled_i64(scale)
            }
        })
        .map_err(|e| number_defect(e, field, cell))?;
    Ok(value)
}

/// `digits[.digits]` seconds (≤ 10 integer and ≤ 9 fractional digits) straight to
/// nanoseconds: the shape of nearly every BurstGPT cell. `None` sends it to the general parser.
#[inline]
fn plain_seconds_ns(cell: &[u8]) -> Option<i64> {
    // A cell is a dozen bytes: a plain scan, not a SIMD search's setup.
    let (int, frac) = match cell.iter().position(|&b| b == b'.') {
        Some(dot) => (cell.get(..dot)?, cell.get(dot + 1..)?),
        None => (cell, &[][..]),
    };
    if int.len() > 10 || frac.len() > 9 {
        return None;
    }
    let secs = i64::try_from(plain_digits(int)?).ok()?;
    let sub = if frac.is_empty() {
        0
    } else {
        i64::try_from(plain_digits(frac)?).ok()?
    };
    let scale = 10i64.checked_pow(9 - frac.len() as u32)?;
    // Ten integer digits can pass i64's nanosecond range: the general parser refuses those.
    secs.checked_mul(1_000_000_000)?
        .checked_add(sub.checked_mul(scale)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_fast_paths_agree_with_the_exact_parser_and_never_overflow() {
        for cell in [
            "0",
            "5",
            "19440110.0",
            "1.000000001",
            "9223372036",
            "9999999999",
            "9999999999.999999999",
            "12.5",
        ] {
            let fast = plain_seconds_ns(cell.as_bytes());
            let exact = Decimal::parse(cell.as_bytes())
                .and_then(|d| d.scaled_i64(9))
                .ok();
            if let Some(f) = fast {
                assert_eq!(Some(f), exact, "{cell}");
            }
        }
        assert_eq!(plain_seconds_ns(b"9999999999"), None);
        assert!(timestamp_ns(b"9999999999", TIMESTAMP, 9).is_err());
    }
}
