//! ISO 8601 / RFC 3339 datetimes to integer nanoseconds since the Unix epoch, exactly.
//!
//! Azure's traces and any mapped log with a datetime arrival read their stamps here. Integer
//! arithmetic only: a float of epoch nanoseconds would lose the fractions that order a burst.

/// Why a stamp is not a datetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DatetimeError {
    /// Not of the form the parser reads.
    Shape,
    /// Before 1970 or past i64 nanoseconds.
    Range,
}

fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        s.iter()
            .fold(0i64, |acc, &b| acc * 10 + i64::from(b - b'0')),
    )
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days in `month` of `year` (proleptic Gregorian).
pub(crate) fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `YYYY-MM-DD[ T]HH:MM:SS[.f{1,9}][Z|±HH:MM]` to nanoseconds since the Unix epoch,
/// and whether the stamp carried its own offset (a zone-less stamp is read as UTC here; the
/// caller applies the zone it was declared in).
#[cfg(test)]
pub(crate) fn parse_datetime_ns(s: &[u8]) -> Result<(i64, bool), DatetimeError> {
    parse_datetime_ns_memo(s, &mut MinuteMemo::default())
}

/// The last stamp's first 16 bytes (`YYYY-MM-DD HH:MM`) and the seconds since the epoch they
/// stand for. A trace's stamps share their minute for many rows, so the calendar arithmetic
/// runs once a minute instead of once a row (it was a fifth of reading an Azure file).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MinuteMemo(Option<([u8; 16], i64)>);

/// [`parse_datetime_ns`], remembering the minute in `memo`: the same bytes give the same
/// minute, so a hit needs no check a miss would not have made.
pub(crate) fn parse_datetime_ns_memo(
    s: &[u8],
    memo: &mut MinuteMemo,
) -> Result<(i64, bool), DatetimeError> {
    let stamp = leading_datetime(s, memo)?;
    // Every shape error comes before the range check, whatever the bytes after the stamp.
    if stamp.len != s.len() {
        return Err(DatetimeError::Shape);
    }
    Ok((epoch_ns(stamp.secs, stamp.frac_ns)?, stamp.had_offset))
}

/// A datetime read from the start of some bytes, before its range is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeadingDatetime {
    /// Seconds since the epoch, the offset applied (may be negative: not yet checked).
    pub(crate) secs: i64,
    pub(crate) frac_ns: i64,
    pub(crate) had_offset: bool,
    /// Bytes the stamp took.
    pub(crate) len: usize,
}

/// Nanoseconds in one unit of the last of `n` fractional digits (`10^(9-n)`), `n` ≤ 9.
const NS_PER_DIGITS: [i64; 10] = [
    1_000_000_000,
    100_000_000,
    10_000_000,
    1_000_000,
    100_000,
    10_000,
    1_000,
    100,
    10,
    1,
];

/// The longest `YYYY-MM-DD[ T]HH:MM:SS[.f{1,9}][Z|±HH:MM]` at the start of `s`: a stamp is
/// read where it sits, so a caller finding its cell's end in the same pass (a plain line)
/// checks only that the stamp ends there. A stamp equal to all of `s` reads as
/// [`parse_datetime_ns_memo`] reads it.
pub(crate) fn leading_datetime(
    s: &[u8],
    memo: &mut MinuteMemo,
) -> Result<LeadingDatetime, DatetimeError> {
    use DatetimeError::Shape;
    let head: [u8; 16] = s.get(..16).and_then(|h| h.try_into().ok()).ok_or(Shape)?;
    let minute = match memo.0 {
        Some((h, secs)) if h == head => secs,
        _ => {
            let secs = minute_secs(&head)?;
            memo.0 = Some((head, secs));
            secs
        }
    };
    let second = match s.get(16..19) {
        Some([b':', a, b]) => two_digits(*a, *b).ok_or(Shape)?,
        _ => return Err(Shape),
    };
    if second > 60 {
        return Err(Shape);
    }
    let mut len = 19;
    let mut frac_ns = 0i64;
    if s.get(len) == Some(&b'.') {
        len += 1;
        let (frac, n) = super::row::leading_digits(s, &mut len, 9).ok_or(Shape)?;
        if n == 0 {
            return Err(Shape);
        }
        // Nine digits at most: below 10^9, and so is the scaled fraction.
        frac_ns = frac as i64 * NS_PER_DIGITS.get(n).copied().ok_or(Shape)?;
    }
    let (offset_s, had_offset) = match s.get(len..).unwrap_or_default() {
        // UTC written out, as nearly every Azure 2024 stamp has it.
        [b'+', b'0', b'0', b':', b'0', b'0', ..] => {
            len += 6;
            (0, true)
        }
        [b'Z', ..] => {
            len += 1;
            (0, true)
        }
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2, ..] => {
            let h = two_digits(*h1, *h2).ok_or(Shape)?;
            let m = two_digits(*m1, *m2).ok_or(Shape)?;
            if h > 23 || m > 59 {
                return Err(Shape);
            }
            len += 6;
            let off = h * 3600 + m * 60;
            (if *sign == b'-' { -off } else { off }, true)
        }
        _ => (0, false),
    };
    Ok(LeadingDatetime {
        secs: minute + second - offset_s,
        frac_ns,
        had_offset,
        len,
    })
}

/// `secs` since the epoch plus `frac_ns`, in nanoseconds: a stamp before 1970 or past i64
/// nanoseconds is out of range.
pub(crate) fn epoch_ns(secs: i64, frac_ns: i64) -> Result<i64, DatetimeError> {
    if secs < 0 {
        return Err(DatetimeError::Range);
    }
    secs.checked_mul(1_000_000_000)
        .and_then(|v| v.checked_add(frac_ns))
        .ok_or(DatetimeError::Range)
}

fn two_digits(a: u8, b: u8) -> Option<i64> {
    (a.is_ascii_digit() && b.is_ascii_digit())
        .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
}

/// `YYYY-MM-DD[ T]HH:MM` as seconds since the epoch (the minute's start), checked.
fn minute_secs(h: &[u8; 16]) -> Result<i64, DatetimeError> {
    use DatetimeError::Shape;
    let field = |a: usize, b: usize| h.get(a..b).and_then(digits).ok_or(Shape);
    if h[4] != b'-' || h[7] != b'-' || h[13] != b':' || !matches!(h[10], b' ' | b'T') {
        return Err(Shape);
    }
    let (year, month, day) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    let (hour, minute) = (field(11, 13)?, field(14, 16)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
    {
        return Err(Shape);
    }
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_digit_fractions_keep_100ns() {
        let (a, off) = parse_datetime_ns(b"2023-11-16 18:15:46.6805900").unwrap();
        let (b, _) = parse_datetime_ns(b"2023-11-16 18:15:46.6806000").unwrap();
        assert!(!off);
        assert_eq!(b - a, 10_000);
        assert_eq!(a % 1_000_000_000, 680_590_000);
        assert_eq!(a / 1_000_000_000, 1_700_158_546);
    }

    #[test]
    fn leap_days_exist_only_in_leap_years() {
        assert!(parse_datetime_ns(b"2024-02-29 00:00:00").is_ok());
        assert!(parse_datetime_ns(b"2000-02-29 00:00:00").is_ok());
        assert!(parse_datetime_ns(b"2100-02-29 00:00:00").is_err());
    }

    #[test]
    fn offset_shapes_of_2024_both_parse() {
        let (a, off) = parse_datetime_ns(b"2024-05-10 00:00:00.001163+00:00").unwrap();
        let (b, _) = parse_datetime_ns(b"2024-05-10 00:00:00+00:00").unwrap();
        assert!(off);
        assert_eq!(a - b, 1_163_000);
        let (c, _) = parse_datetime_ns(b"2024-05-10 02:00:00+02:00").unwrap();
        assert_eq!(c, b);
    }

    #[test]
    fn bad_shapes_are_refused() {
        for s in [
            "2023-11-16",
            "2023-13-16 18:15:46",
            "2023-11-16 18:15:46.",
            "2023-11-16 18:15:46+0000",
            "x023-11-16 18:15:46",
            "1969-12-31 23:59:59",
        ] {
            assert!(parse_datetime_ns(s.as_bytes()).is_err(), "{s}");
        }
    }

    #[test]
    fn a_remembered_minute_reads_every_stamp_as_a_fresh_parse_does() {
        let mut memo = MinuteMemo::default();
        for s in [
            "2024-05-10 00:00:00.001163+00:00",
            "2024-05-10 00:00:59+00:00",
            "2024-05-10 00:00:60",
            "2024-05-10 00:00:61",
            "2024-05-10 00:00:5x",
            "2024-05-10 00:01:00Z",
            "2024-05-10T00:01:00-01:30",
            "2024-05-10 00:01",
            "2024-05-11 00:01:00.5",
        ] {
            let fresh = parse_datetime_ns(s.as_bytes());
            assert_eq!(
                parse_datetime_ns_memo(s.as_bytes(), &mut memo),
                fresh,
                "{s}"
            );
        }
    }
}
