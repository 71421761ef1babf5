//! Numbers as text, exactly as JavaScript's `String(n)` writes them.
//!
//! The browser test compares the page's text with the JSON report that the CLI prints, parsed
//! in JavaScript. Both therefore have to write an `f64` the same way: shortest round-trip
//! digits, no trailing `.0` on integral values, and exponent notation only outside
//! `[1e-6, 1e21)`. Rust's `{}` already gives the shortest digits without `.0`; this module
//! adds JavaScript's exponent ranges and spelling so the two never disagree.

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

#[cfg(test)]
mod tests {
    use super::js;

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
}
