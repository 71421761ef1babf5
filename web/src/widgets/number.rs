//! Numbers as text: exactly as JavaScript's `String(n)` writes them ([`js`], for whatever a
//! test compares with the CLI's JSON), and for reading ([`readable`], [`count`], [`fixed`]),
//! where the page keeps the exact value in the element's `title`.
//!
//! The browser test compares the page's text with the JSON report that the CLI prints, parsed
//! in JavaScript. Both therefore have to write an `f64` the same way: shortest round-trip
//! digits, no trailing `.0` on integral values, and exponent notation only outside
//! `[1e-6, 1e21)`. Rust's `{}` already gives the shortest digits without `.0`; this module
//! adds JavaScript's exponent ranges and spelling so the two never disagree.
//!
//! One number goes the other way: a burstiness window typed in seconds
//! ([`window_from_text`]), read the same in the trace and playbook views.

use loadproof_core::Window;

/// A burstiness window typed in seconds (surrounding blanks ignored), when core accepts it.
pub fn window_from_text(text: &str) -> Option<Window> {
    text.trim().parse::<f64>().ok().and_then(Window::from_secs)
}

/// `x` written as JavaScript's `String(x)` writes it.
pub fn js(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if x == 0.0 {
        // Covers -0.0, which JavaScript writes as "0".
        return "0".to_owned();
    }
    let magnitude = x.abs();
    if (1e-6..1e21).contains(&magnitude) {
        return format!("{x}");
    }
    // Rust writes `1.5e-7` and `1e21`; JavaScript writes `1.5e-7` and `1e+21`.
    let text = format!("{x:e}");
    match text.split_once('e') {
        Some((mantissa, exponent)) if !exponent.starts_with('-') => {
            format!("{mantissa}e+{exponent}")
        }
        _ => text,
    }
}

/// An optional number: `—` when absent (the JSON holds `null`).
pub fn js_opt(x: Option<f64>) -> String {
    x.map_or_else(|| ABSENT.to_owned(), js)
}

/// What the page shows where the report holds `null`.
pub const ABSENT: &str = "—";

/// Significant digits [`readable`] keeps.
pub const READABLE_DIGITS: usize = 4;

/// `x` for reading: [`READABLE_DIGITS`] significant digits (never fewer than the integer
/// part's), thousands separated by commas, no trailing zeros; exponent notation below 1e-4
/// and from 1e15. `841.6999999999992` reads `841.7`, `12345.67` reads `12,346`.
pub fn readable(x: f64) -> String {
    significant(x, READABLE_DIGITS)
}

/// `x` to `digits` significant digits (at least 1), as [`readable`] describes.
pub fn significant(x: f64, digits: usize) -> String {
    if !x.is_finite() || x == 0.0 {
        return js(x);
    }
    let digits = digits.max(1);
    let magnitude = x.abs();
    if !(1e-4..1e15).contains(&magnitude) {
        let text = format!("{x:.*e}", digits - 1);
        return match text.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim_zeros(mantissa)),
            None => text,
        };
    }
    let exponent = magnitude.log10().floor() as i64;
    let decimals = (digits as i64 - 1 - exponent).clamp(0, 20) as usize;
    group(&trim_zeros(&format!("{x:.decimals$}")))
}

/// `x` with exactly `decimals` decimals and thousands separated (for distances, which the CLI
/// prints with three).
pub fn fixed(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return js(x);
    }
    group(&format!("{x:.decimals$}"))
}

/// Decimals [`column_decimals`] writes at most (a microsecond of a value in ms, and finer).
pub const MAX_COLUMN_DECIMALS: usize = 6;

/// Decimals that numbers read side by side (a column, or a row of one unit) are written with,
/// so they read at one precision: none when every value is whole; otherwise enough for the
/// smallest nonzero magnitude to keep three significant digits (at most
/// [`MAX_COLUMN_DECIMALS`]). Non-finite values are ignored. `[12.345, 1523.4]` gives 1:
/// `12.3`, `1,523.4`.
pub fn column_decimals(values: impl IntoIterator<Item = f64>) -> usize {
    let smallest = values
        .into_iter()
        .filter(|v| v.is_finite() && v.fract() != 0.0)
        .map(f64::abs)
        .fold(f64::INFINITY, f64::min);
    if !smallest.is_finite() {
        return 0;
    }
    let exponent = smallest.log10().floor() as i64;
    (2 - exponent).clamp(0, MAX_COLUMN_DECIMALS as i64) as usize
}

/// `text` (the writing of `v`) with a `+` when `v` is positive, as a change reads.
pub fn signed(v: f64, text: String) -> String {
    if v > 0.0 { format!("+{text}") } else { text }
}

/// A fraction as a signed percent with one decimal: `0.1234` reads `+12.3%`.
pub fn percent_change(fraction: f64) -> String {
    format!("{}%", signed(fraction, fixed(fraction * 100.0, 1)))
}

/// A count with thousands separated: `1234567` reads `1,234,567`.
pub fn count(n: usize) -> String {
    group(&n.to_string())
}

/// Drops trailing zeros after a decimal point, and the point itself when nothing follows.
fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}

/// Commas between thousands of the integer part of a plain decimal (`-1234.5` → `-1,234.5`).
fn group(text: &str) -> String {
    let (sign, unsigned) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let (int, frac) = match unsigned.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (unsigned, None),
    };
    let mut grouped = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    // "-0" after rounding a tiny negative reads as 0.
    let sign =
        if grouped.chars().all(|c| c == '0') && frac.is_none_or(|f| f.chars().all(|c| c == '0')) {
            ""
        } else {
            sign
        };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{column_decimals, count, fixed, js, percent_change, readable, significant};

    #[test]
    fn integral_values_have_no_fraction() {
        assert_eq!(js(2.0), "2");
        assert_eq!(js(-0.0), "0");
        assert_eq!(js(1234.5), "1234.5");
    }

    #[test]
    fn exponents_follow_javascript_ranges() {
        assert_eq!(js(1e21), "1e+21");
        assert_eq!(js(1.5e-7), "1.5e-7");
        assert_eq!(js(0.000001), "0.000001");
        assert_eq!(js(123456789012345680000.0), "123456789012345680000");
        assert_eq!(js(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn readable_keeps_four_significant_digits_and_separates_thousands() {
        assert_eq!(readable(841.6999999999992), "841.7");
        assert_eq!(readable(12345.678), "12,346");
        assert_eq!(readable(1234567.0), "1,234,567");
        assert_eq!(readable(2.5), "2.5");
        assert_eq!(readable(0.012345), "0.01235");
        assert_eq!(readable(999.96), "1,000");
        assert_eq!(readable(-1234.6), "-1,235");
        assert_eq!(readable(0.0), "0");
        assert_eq!(readable(0.00001234), "1.234e-5");
        assert_eq!(readable(3e20), "3e20");
        assert_eq!(significant(1.23456, 2), "1.2");
    }

    #[test]
    fn fixed_and_count_separate_thousands() {
        assert_eq!(fixed(0.58496, 3), "0.585");
        assert_eq!(fixed(4.0, 3), "4.000");
        assert_eq!(fixed(-0.0001, 3), "0.000");
        assert_eq!(fixed(12345.0, 1), "12,345.0");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(percent_change(0.1234), "+12.3%");
        assert_eq!(percent_change(-0.5), "-50.0%");
        assert_eq!(percent_change(0.0), "0.0%");
    }

    #[test]
    fn a_column_reads_at_one_precision_set_by_its_smallest_fraction() {
        assert_eq!(column_decimals([12.345, 1523.4]), 1);
        assert_eq!(column_decimals([1523.456, 1601.2]), 0);
        assert_eq!(column_decimals([0.0123, 5.6]), 4);
        assert_eq!(column_decimals([60.0, 2.0, 0.0]), 0);
        assert_eq!(column_decimals([1e-12, 3.5]), super::MAX_COLUMN_DECIMALS);
        assert_eq!(column_decimals([f64::NAN, 7.0]), 0);
        assert_eq!(column_decimals(std::iter::empty()), 0);
        let d = column_decimals([12.345, 1523.4]);
        assert_eq!([fixed(12.345, d), fixed(1523.4, d)], ["12.3", "1,523.4"]);
    }
}
