//! A datetime arrival written in a log's own layout, declared as a strftime-style pattern
//! (`%d/%b/%Y:%H:%M:%S %z`, `%m/%d/%Y %I:%M:%S.%f %p`, …) and read to integer nanoseconds.
//!
//! Gateways rarely write ISO 8601: nginx writes `05/Dec/2026:01:02:03 +0000`, US-locale
//! exports write `12/05/2026 01:02:03 AM`. A mapping names the layout instead of the reader
//! guessing it, so `03/04` is never read as March when it is April. The directives are the
//! common strftime ones with one stated difference: `%f` reads 1–9 fraction digits (Python's
//! reads at most 6 and would drop the nanoseconds of a 7- or 9-digit stamp). Integer
//! arithmetic only, as in [`super::datetime`]: no float of epoch nanoseconds, no rounding.
//!
//! The pattern is checked when the mapping is read (an unknown directive, a field given
//! twice, a date without its year, `%I` without `%p`), so a row can only fail on its own
//! bytes, never on the pattern.

use super::datetime::{DatetimeError, days_from_civil, days_in_month, epoch_ns};

/// One piece of a compiled pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// A byte the stamp must hold as it is.
    Byte(u8),
    /// Whitespace in the pattern: one or more spaces or tabs in the stamp.
    Space,
    /// `%Y`: four digits.
    Year,
    /// `%m`: 1–2 digits.
    Month,
    /// `%b` / `%h`: an English month abbreviation, any case.
    MonthAbbr,
    /// `%B`: an English month name, any case.
    MonthName,
    /// `%d`: 1–2 digits.
    Day,
    /// `%H`: 1–2 digits, 0–23.
    Hour,
    /// `%I`: 1–2 digits, 1–12, with `%p`.
    Hour12,
    /// `%p`: `AM` or `PM`, any case.
    AmPm,
    /// `%M`: 1–2 digits.
    Minute,
    /// `%S`: 1–2 digits, up to 60 (a leap second, as the ISO reader allows).
    Second,
    /// `%f`: 1–9 fraction digits.
    Fraction,
    /// `%z`: `Z`, `±HHMM` or `±HH:MM`.
    Offset,
}

/// A checked pattern, ready to read stamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DatetimeFormat {
    pieces: Vec<Piece>,
}

/// Why a pattern was refused: said to the operator at the mapping's `arrival.format`.
pub(crate) type PatternError = String;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The directives a pattern may hold, for error messages.
pub(crate) const DIRECTIVES: &str =
    "%Y %m %b %B %d %H %I %p %M %S %f %z %T (=%H:%M:%S) %F (=%Y-%m-%d) %%";

impl DatetimeFormat {
    /// Compiles `pattern`, refusing one that could not name a single instant.
    pub(crate) fn compile(pattern: &str) -> Result<DatetimeFormat, PatternError> {
        let mut pieces = Vec::new();
        let mut bytes = pattern.bytes();
        while let Some(b) = bytes.next() {
            if b != b'%' {
                match (b, pieces.last()) {
                    (b' ' | b'\t', Some(Piece::Space)) => {}
                    (b' ' | b'\t', _) => pieces.push(Piece::Space),
                    _ => pieces.push(Piece::Byte(b)),
                }
                continue;
            }
            let Some(d) = bytes.next() else {
                return Err("ends with a lone `%`".to_owned());
            };
            match d {
                b'Y' => pieces.push(Piece::Year),
                b'm' => pieces.push(Piece::Month),
                b'b' | b'h' => pieces.push(Piece::MonthAbbr),
                b'B' => pieces.push(Piece::MonthName),
                b'd' => pieces.push(Piece::Day),
                b'H' => pieces.push(Piece::Hour),
                b'I' => pieces.push(Piece::Hour12),
                b'p' => pieces.push(Piece::AmPm),
                b'M' => pieces.push(Piece::Minute),
                b'S' => pieces.push(Piece::Second),
                b'f' => pieces.push(Piece::Fraction),
                b'z' => pieces.push(Piece::Offset),
                b'T' => pieces.extend([
                    Piece::Hour,
                    Piece::Byte(b':'),
                    Piece::Minute,
                    Piece::Byte(b':'),
                    Piece::Second,
                ]),
                b'F' => pieces.extend([
                    Piece::Year,
                    Piece::Byte(b'-'),
                    Piece::Month,
                    Piece::Byte(b'-'),
                    Piece::Day,
                ]),
                b'%' => pieces.push(Piece::Byte(b'%')),
                other => {
                    return Err(format!(
                        "`%{}` is not a directive this version reads ({DIRECTIVES})",
                        char::from(other).escape_default()
                    ));
                }
            }
        }
        let count = |p: Piece| pieces.iter().filter(|&&x| x == p).count();
        let fields = [
            (Piece::Year, "%Y"),
            (Piece::Month, "%m"),
            (Piece::MonthAbbr, "%b"),
            (Piece::MonthName, "%B"),
            (Piece::Day, "%d"),
            (Piece::Hour, "%H"),
            (Piece::Hour12, "%I"),
            (Piece::AmPm, "%p"),
            (Piece::Minute, "%M"),
            (Piece::Second, "%S"),
            (Piece::Fraction, "%f"),
            (Piece::Offset, "%z"),
        ];
        if let Some((_, name)) = fields.iter().find(|(p, _)| count(*p) > 1) {
            return Err(format!("{name} is given twice"));
        }
        let months = count(Piece::Month) + count(Piece::MonthAbbr) + count(Piece::MonthName);
        let hours = count(Piece::Hour) + count(Piece::Hour12);
        let missing = [
            (count(Piece::Year) == 0, "the year (%Y)"),
            (months != 1, "one month (%m, %b or %B)"),
            (count(Piece::Day) == 0, "the day (%d)"),
            (hours != 1, "one hour (%H, or %I with %p)"),
            (count(Piece::Minute) == 0, "the minute (%M)"),
        ];
        if let Some((_, what)) = missing.iter().find(|(m, _)| *m) {
            return Err(format!("names no instant: it needs {what}"));
        }
        if count(Piece::Hour12) != count(Piece::AmPm) {
            return Err("%I (a 12-hour clock) and %p (AM/PM) go together".to_owned());
        }
        if count(Piece::Fraction) == 1 && count(Piece::Second) == 0 {
            return Err("%f (a fraction of a second) needs %S".to_owned());
        }
        Ok(DatetimeFormat { pieces })
    }

    /// Reads `s` to nanoseconds since the Unix epoch, and whether it carried its own offset
    /// (otherwise it is read as UTC and the caller applies the declared zone), as
    /// [`super::datetime::parse_datetime_ns_memo`] does for ISO stamps.
    pub(crate) fn parse(&self, s: &[u8]) -> Result<(i64, bool), DatetimeError> {
        use DatetimeError::Shape;
        let mut at = s;
        let (mut year, mut month, mut day) = (None, None, None);
        let (mut hour, mut hour12, mut pm) = (None, None, None);
        let (mut minute, mut second, mut frac_ns) = (None, 0i64, 0i64);
        let mut offset_s = None;
        for piece in &self.pieces {
            match *piece {
                Piece::Byte(b) => at = at.strip_prefix(&[b]).ok_or(Shape)?,
                Piece::Space => {
                    let n = at.iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
                    if n == 0 {
                        return Err(Shape);
                    }
                    at = at.get(n..).unwrap_or_default();
                }
                Piece::Year => year = Some(take_digits(&mut at, 4, 4)?),
                Piece::Month => month = Some(take_digits(&mut at, 1, 2)?),
                Piece::MonthAbbr => month = Some(take_month(&mut at, true)?),
                Piece::MonthName => month = Some(take_month(&mut at, false)?),
                Piece::Day => day = Some(take_digits(&mut at, 1, 2)?),
                Piece::Hour => hour = Some(take_digits(&mut at, 1, 2)?),
                Piece::Hour12 => hour12 = Some(take_digits(&mut at, 1, 2)?),
                Piece::AmPm => {
                    let word = at.get(..2).ok_or(Shape)?;
                    pm = Some(if word.eq_ignore_ascii_case(b"pm") {
                        true
                    } else if word.eq_ignore_ascii_case(b"am") {
                        false
                    } else {
                        return Err(Shape);
                    });
                    at = at.get(2..).unwrap_or_default();
                }
                Piece::Minute => minute = Some(take_digits(&mut at, 1, 2)?),
                Piece::Second => second = take_digits(&mut at, 1, 2)?,
                Piece::Fraction => {
                    let n = at.iter().take_while(|b| b.is_ascii_digit()).count();
                    if n == 0 || n > 9 {
                        return Err(Shape);
                    }
                    frac_ns = take_digits(&mut at, n, n)? * 10i64.pow(9 - n as u32);
                }
                Piece::Offset => offset_s = Some(take_offset(&mut at)?),
            }
        }
        if !at.is_empty() {
            return Err(Shape);
        }
        let (Some(year), Some(month), Some(day), Some(minute)) = (year, month, day, minute) else {
            return Err(Shape);
        };
        let hour = match (hour, hour12, pm) {
            (Some(h), None, _) => h,
            (None, Some(h), Some(pm)) if (1..=12).contains(&h) => h % 12 + if pm { 12 } else { 0 },
            _ => return Err(Shape),
        };
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return Err(Shape);
        }
        let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
            - offset_s.unwrap_or(0);
        Ok((epoch_ns(secs, frac_ns)?, offset_s.is_some()))
    }
}

/// Takes `min..=max` ASCII digits (as many as there are, up to `max`) from the front of `at`.
fn take_digits(at: &mut &[u8], min: usize, max: usize) -> Result<i64, DatetimeError> {
    let n = at
        .iter()
        .take(max)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if n < min {
        return Err(DatetimeError::Shape);
    }
    let (digits, rest) = at.split_at_checked(n).ok_or(DatetimeError::Shape)?;
    *at = rest;
    Ok(digits
        .iter()
        .fold(0i64, |acc, &b| acc * 10 + i64::from(b - b'0')))
}

/// Takes an English month name (or its three-letter abbreviation) from the front of `at`.
fn take_month(at: &mut &[u8], abbreviated: bool) -> Result<i64, DatetimeError> {
    for (i, name) in MONTHS.iter().enumerate() {
        let want = if abbreviated {
            name.get(..3).unwrap_or(name)
        } else {
            name
        };
        if let Some(head) = at.get(..want.len())
            && head.eq_ignore_ascii_case(want.as_bytes())
        {
            *at = at.get(want.len()..).unwrap_or_default();
            return Ok(i as i64 + 1);
        }
    }
    Err(DatetimeError::Shape)
}

/// Takes `Z`, `±HHMM` or `±HH:MM` from the front of `at`, as seconds east of UTC.
fn take_offset(at: &mut &[u8]) -> Result<i64, DatetimeError> {
    use DatetimeError::Shape;
    if let Some(rest) = at.strip_prefix(b"Z") {
        *at = rest;
        return Ok(0);
    }
    let (sign, rest) = match at.split_first() {
        Some((b'+', rest)) => (1, rest),
        Some((b'-', rest)) => (-1, rest),
        _ => return Err(Shape),
    };
    let mut rest = rest;
    let h = take_digits(&mut rest, 2, 2)?;
    if let Some(r) = rest.strip_prefix(b":") {
        rest = r;
    }
    let m = take_digits(&mut rest, 2, 2)?;
    if h > 23 || m > 59 {
        return Err(Shape);
    }
    *at = rest;
    Ok(sign * (h * 3600 + m * 60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::datetime::parse_datetime_ns;

    fn read(pattern: &str, stamp: &str) -> Result<(i64, bool), DatetimeError> {
        DatetimeFormat::compile(pattern)
            .unwrap()
            .parse(stamp.as_bytes())
    }

    #[test]
    fn a_declared_layout_reads_the_instant_the_iso_reader_reads() {
        let iso = |s: &str| parse_datetime_ns(s.as_bytes()).unwrap();
        assert_eq!(
            read("%d/%b/%Y:%H:%M:%S %z", "05/Dec/2026:01:02:03 +0100").unwrap(),
            iso("2026-12-05 01:02:03+01:00")
        );
        assert_eq!(
            read("%m/%d/%Y %I:%M:%S.%f %p", "12/05/2026 01:02:03.5 PM").unwrap(),
            iso("2026-12-05 13:02:03.5")
        );
        assert_eq!(
            read("%m/%d/%Y %I:%M %p", "2/9/2026 12:30 am").unwrap(),
            iso("2026-02-09 00:30:00")
        );
        assert_eq!(
            read("%B %d, %Y %T", "march 1, 2024 00:00:00").unwrap(),
            iso("2024-03-01 00:00:00")
        );
        assert_eq!(
            read("%FT%T.%f%z", "2024-05-10T00:00:00.123456789Z").unwrap(),
            iso("2024-05-10 00:00:00.123456789Z")
        );
        assert_eq!(
            read("%Y%m%d %H%M%S", "20240510 010203").unwrap(),
            iso("2024-05-10 01:02:03")
        );
    }

    #[test]
    fn a_stamp_that_does_not_fit_its_layout_is_refused_not_guessed() {
        for (pattern, stamp) in [
            ("%d/%m/%Y %H:%M", "31/02/2024 00:00"),
            ("%d/%m/%Y %H:%M", "05/12/2026 00:00 trailing"),
            ("%d/%m/%Y %H:%M", "05-12-2026 00:00"),
            ("%m/%d/%Y %I:%M %p", "12/05/2026 13:00 PM"),
            ("%m/%d/%Y %I:%M %p", "12/05/2026 00:00 AM"),
            ("%d/%b/%Y:%H:%M:%S %z", "05/Dez/2026:01:02:03 +0100"),
            ("%d/%b/%Y:%H:%M:%S %z", "05/Dec/2026:01:02:03 +2400"),
            ("%Y-%m-%d %H:%M:%S.%f", "2024-05-10 00:00:00.1234567890"),
            ("%Y-%m-%d %H:%M", "1969-12-31 23:59"),
            ("%Y-%m-%d %H:%M", ""),
        ] {
            assert!(read(pattern, stamp).is_err(), "{pattern} {stamp}");
        }
    }

    #[test]
    fn a_pattern_that_names_no_single_instant_is_refused() {
        for (pattern, says) in [
            ("%m/%d %H:%M", "year"),
            ("%Y-%m-%d", "hour"),
            ("%Y-%m-%d %H:%M %H", "twice"),
            ("%Y-%m-%d %I:%M", "%p"),
            ("%Y-%m-%d %H:%M.%f", "%S"),
            ("%Y-%m-%d %H:%M:%S %Q", "%Q"),
            ("%Y-%m-%d %H:%M %", "lone"),
            ("%Y-%b-%m %H:%M", "one month"),
        ] {
            let err = DatetimeFormat::compile(pattern).unwrap_err();
            assert!(err.contains(says), "{pattern}: {err}");
        }
    }

    #[test]
    fn whitespace_in_the_pattern_reads_any_run_of_spaces() {
        assert_eq!(
            read("%Y-%m-%d %H:%M", "2024-05-10   01:02").unwrap(),
            read("%Y-%m-%d %H:%M", "2024-05-10 01:02").unwrap()
        );
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_in_any_layout_read_or_are_refused(
            stamp in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
        ) {
            for pattern in ["%d/%b/%Y:%H:%M:%S %z", "%m/%d/%Y %I:%M:%S.%f %p", "%B %d, %Y %T"] {
                let _ = DatetimeFormat::compile(pattern).unwrap().parse(&stamp);
            }
        }
    }
}
