//! Sample lines: the metric name, the label set, the value and the optional timestamp.
//!
//! Labels are borrowed from the input (owned only when unescaped), so a sample that a scan
//! skips is checked without being copied; values and timestamps are held to the strict rules
//! of the module docs.

use std::borrow::Cow;

use super::error::{ExpositionError, ExpositionErrorKind};
use super::lines::{Cursor, LABEL_CHAR, LABEL_START, NAME_CHAR, NAME_START, is_blank, snippet};
use super::value::SampleValue;
use crate::decimal::{Decimal, NumberError};

/// Label pairs of one line, borrowed from the input (owned only when unescaped).
pub(super) type Scratch<'a> = Vec<(&'a str, Cow<'a, str>)>;

/// The metric name at the start of a sample line.
pub(super) fn sample_name<'a>(c: &mut Cursor<'a>, line: usize) -> Result<&'a str, ExpositionError> {
    let name = c.take(NAME_START, NAME_CHAR);
    if !name.is_empty() {
        return Ok(name);
    }
    let start = c.pos;
    let mut end = start;
    while c
        .text
        .as_bytes()
        .get(end)
        .is_some_and(|&b| !is_blank(b) && b != b'{')
    {
        end += 1;
    }
    let found = match c.text.get(start..end) {
        Some(token) if !token.is_empty() => token,
        _ => c.rest().get(..1).unwrap_or_default(),
    };
    Err(ExpositionError::new(
        line,
        ExpositionErrorKind::MetricName {
            found: snippet(found),
        },
    ))
}

/// The rest of a sample line after its name: labels into `labels` (sorted, checked for
/// repeats when `check_labels`), then value and optional timestamp.
pub(super) fn sample_rest<'a>(
    c: &mut Cursor<'a>,
    name: &str,
    line: usize,
    labels: &mut Scratch<'a>,
    check_labels: bool,
) -> Result<(SampleValue, Option<i64>), ExpositionError> {
    sample_labels(c, name, line, labels, check_labels)?;
    sample_value(c, name, line)
}

/// The label set after a sample's name, into `labels` (sorted, checked for repeats when
/// `check_labels`); the cursor is left on the value.
pub(super) fn sample_labels<'a>(
    c: &mut Cursor<'a>,
    name: &str,
    line: usize,
    labels: &mut Scratch<'a>,
    check_labels: bool,
) -> Result<(), ExpositionError> {
    let err = |kind| ExpositionError::new(line, kind);
    c.skip_blanks();
    if c.eat(b'{') {
        parse_labels(c, name, labels).map_err(err)?;
        c.skip_blanks();
        if check_labels {
            if !labels.is_sorted_by(|a, b| a.0 <= b.0) {
                labels.sort_by(|a, b| a.0.cmp(b.0));
            }
            if let Some([a, _]) = labels
                .windows(2)
                .find(|w| matches!(w, [a, b] if a.0 == b.0))
            {
                return Err(err(ExpositionErrorKind::DuplicateLabel {
                    sample: name.to_owned(),
                    label: a.0.to_owned(),
                }));
            }
        }
    }
    Ok(())
}

/// The value and optional timestamp that end a sample line, and nothing after them.
pub(super) fn sample_value(
    c: &mut Cursor<'_>,
    name: &str,
    line: usize,
) -> Result<(SampleValue, Option<i64>), ExpositionError> {
    let err = |kind| ExpositionError::new(line, kind);
    let value_token = c.token();
    if value_token.is_empty() {
        return Err(err(ExpositionErrorKind::MissingValue {
            sample: name.to_owned(),
        }));
    }
    let value = read_value(value_token, name).map_err(err)?;
    c.skip_blanks();
    let ts_token = c.token();
    let timestamp_ms = if ts_token.is_empty() {
        None
    } else {
        Some(parse_timestamp(ts_token.as_bytes()).ok_or_else(|| {
            err(ExpositionErrorKind::BadTimestamp {
                sample: name.to_owned(),
                timestamp: snippet(ts_token),
            })
        })?)
    };
    c.skip_blanks();
    if c.peek().is_some() {
        return Err(err(ExpositionErrorKind::TrailingText {
            sample: name.to_owned(),
            text: snippet(c.rest()),
        }));
    }
    Ok((value, timestamp_ms))
}

/// A value token of sample `name`.
fn read_value(token: &str, name: &str) -> Result<SampleValue, ExpositionErrorKind> {
    let out_of_range = |why| ExpositionErrorKind::ValueOutOfRange {
        sample: name.to_owned(),
        value: snippet(token),
        why,
    };
    match SampleValue::parse(token.as_bytes()) {
        Ok(SampleValue::Finite(d)) => finite_in_float_range(d)
            .map(|()| SampleValue::Finite(d))
            .map_err(out_of_range),
        Ok(v) => Ok(v),
        Err(NumberError::OutOfRange) => Err(out_of_range(
            "has more significant digits than can be kept exactly (36)",
        )),
        Err(_) => Err(ExpositionErrorKind::BadValue {
            sample: name.to_owned(),
            value: snippet(token),
        }),
    }
}

/// Prometheus stores every value as an `f64`, so a finite value beyond its range cannot have
/// come from a real writer (and would not read back through any other tool).
fn finite_in_float_range(d: Decimal) -> Result<(), &'static str> {
    match d.adjusted_exponent() {
        None => Ok(()),
        Some(e) if (-300..=300).contains(&e) => Ok(()),
        Some(_) => {
            let f = d.to_f64();
            if f.is_infinite() {
                Err("is beyond the range of a 64-bit float")
            } else if f == 0.0 {
                Err("is below the smallest 64-bit float")
            } else {
                Ok(())
            }
        }
    }
}

/// `-?[0-9]+` fitting an `i64`.
fn parse_timestamp(token: &[u8]) -> Option<i64> {
    let (negative, digits) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, token),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for &b in digits {
        let digit = i64::from(b - b'0');
        v = v
            .checked_mul(10)?
            .checked_add(if negative { -digit } else { digit })?;
    }
    Some(v)
}

/// Reads `name="value", …}` (the `{` already consumed) into `labels`, leaving the cursor after
/// the closing brace.
fn parse_labels<'a>(
    c: &mut Cursor<'a>,
    sample: &str,
    labels: &mut Scratch<'a>,
) -> Result<(), ExpositionErrorKind> {
    let syntax = |detail: String| ExpositionErrorKind::Labels {
        sample: sample.to_owned(),
        detail,
    };
    loop {
        c.skip_blanks();
        match c.peek() {
            Some(b'}') => {
                c.pos += 1;
                return Ok(());
            }
            None => return Err(syntax("the label set has no closing '}'".to_owned())),
            Some(_) => {}
        }
        let label = c.take(LABEL_START, LABEL_CHAR);
        if label.is_empty() {
            return Err(syntax(format!(
                "expected a label name, found {:?}",
                snippet(Cursor::new(c.rest()).token())
            )));
        }
        c.skip_blanks();
        if !c.eat(b'=') {
            return Err(syntax(format!("expected '=' after label {label:?}")));
        }
        c.skip_blanks();
        if !c.eat(b'"') {
            return Err(syntax(format!(
                "expected '\"' to open the value of label {label:?}"
            )));
        }
        let value = parse_label_value(c)
            .map_err(|detail| syntax(format!("the value of label {label:?} {detail}")))?;
        labels.push((label, value));
        c.skip_blanks();
        match c.peek() {
            Some(b',') => c.pos += 1,
            Some(b'}') => {}
            _ => {
                return Err(syntax(format!(
                    "expected ',' or '}}' after the value of label {label:?}"
                )));
            }
        }
    }
}

/// A quoted label value (opening quote consumed), unescaped: borrowed from the input unless
/// it had escapes. The cursor ends after the closing quote.
fn parse_label_value<'a>(c: &mut Cursor<'a>) -> Result<Cow<'a, str>, String> {
    let unterminated = || "has no closing '\"'".to_owned();
    let bytes = c.text.as_bytes();
    let mut out: Option<String> = None;
    loop {
        let from = c.pos;
        let tail = bytes.get(from..).unwrap_or_default();
        let at = from + memchr::memchr2(b'"', b'\\', tail).ok_or_else(unterminated)?;
        let plain = c.slice(from, at);
        if bytes.get(at) == Some(&b'"') {
            c.pos = at + 1;
            return Ok(match out {
                None => Cow::Borrowed(plain),
                Some(mut owned) => {
                    owned.push_str(plain);
                    Cow::Owned(owned)
                }
            });
        }
        let escaped = match bytes.get(at + 1) {
            Some(b'\\') => '\\',
            Some(b'"') => '"',
            Some(b'n') => '\n',
            Some(_) => {
                let shown = c.text.get(at + 1..).and_then(|t| t.chars().next());
                return Err(format!(
                    "has an invalid escape \\{} (only \\\\, \\\" and \\n exist)",
                    shown.unwrap_or('?')
                ));
            }
            None => return Err(unterminated()),
        };
        let owned = out.get_or_insert_with(String::new);
        owned.push_str(plain);
        owned.push(escaped);
        c.pos = at + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{ExpositionErrorKind, parse};

    #[test]
    fn label_values_are_unescaped_and_labels_sorted() {
        let e = p("m{z=\"1\",path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",nl=\"a\\nb\",u=\"é\",} 1\n");
        let s = e.families().first().unwrap().samples.first().unwrap();
        let keys: Vec<&str> = s.labels.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["nl", "path", "q", "u", "z"]);
        assert_eq!(s.label("path"), Some("C:\\dir"));
        assert_eq!(s.label("q"), Some("say \"hi\""));
        assert_eq!(s.label("nl"), Some("a\nb"));
        assert_eq!(s.label("u"), Some("é"));
        assert_eq!(
            s.series(),
            "m{nl=\"a\\nb\",path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",u=\"é\",z=\"1\"}"
        );
        // Blanks around the label syntax and an empty label set are fine.
        let e = p("m { a = \"1\" , b=\"2\" } 1\nn{} 2\n");
        assert_eq!(
            e.family("m").unwrap().samples.first().unwrap().label("b"),
            Some("2")
        );
        assert!(err("m{a=\"\\t\"} 1\n").contains("invalid escape \\t"));
        assert!(err("m{a=\"1\",a=\"2\"} 1\n").contains("label \"a\" appears twice"));
    }

    #[test]
    fn malformed_lines_name_the_line_and_the_fault() {
        for (text, message) in [
            (
                "ok 1\nx 1.2.3\n",
                "line 2: sample \"x\": value \"1.2.3\" is not a number",
            ),
            ("x\n", "line 1: sample \"x\" has no value"),
            ("x{a=\"1\"}\n", "line 1: sample \"x\" has no value"),
            ("9x 1\n", "line 1: expected a metric name, found \"9x\""),
            (
                "{a=\"1\"} 1\n",
                "line 1: expected a metric name, found \"{\"",
            ),
            (
                "x{a=\"1\" 1\n",
                "line 1: sample \"x\": expected ',' or '}' after the value of label \"a\"",
            ),
            (
                "x{a=\"1} 1\n",
                "line 1: sample \"x\": the value of label \"a\" has no closing '\"'",
            ),
            (
                "x{a} 1\n",
                "line 1: sample \"x\": expected '=' after label \"a\"",
            ),
            (
                "x{a=1} 1\n",
                "line 1: sample \"x\": expected '\"' to open the value of label \"a\"",
            ),
            (
                "x{\"a\"=\"1\"} 1\n",
                "line 1: sample \"x\": expected a label name, found \"\\\"a\\\"=\\\"1\\\"}\"",
            ),
            (
                "x{a=\"1\"\n",
                "line 1: sample \"x\": expected ',' or '}' after the value of label \"a\"",
            ),
            (
                "x 1 12.5\n",
                "line 1: sample \"x\": timestamp \"12.5\" is not an integer number of milliseconds",
            ),
            (
                "x 1 12 junk\n",
                "line 1: sample \"x\": unexpected \"junk\" after the value and timestamp",
            ),
            (
                "# TYPE x info\n",
                "line 1: TYPE \"info\" of \"x\" is not one of counter, gauge, histogram, summary, untyped",
            ),
            (
                "# TYPE x\n",
                "line 1: TYPE \"\" of \"x\" is not one of counter, gauge, histogram, summary, untyped",
            ),
            (
                "# HELP 1x y\n",
                "line 1: expected a metric name, found \"1x\"",
            ),
            (
                "x 1e400\n",
                "line 1: sample \"x\": value \"1e400\" is beyond the range of a 64-bit float",
            ),
            (
                "x 1e-400\n",
                "line 1: sample \"x\": value \"1e-400\" is below the smallest 64-bit float",
            ),
            (
                "x 1234567890123456789012345678901234567\n",
                "line 1: sample \"x\": value \"1234567890123456789012345678901234567\" has more significant digits than can be kept exactly (36)",
            ),
        ] {
            assert_eq!(err(text), message, "{text:?}");
        }
        let e = parse(b"a 1\nb{x=\"\xff\"} 2\n").unwrap_err();
        assert_eq!(e.line(), 2);
        assert_eq!(e.kind(), &ExpositionErrorKind::NotUtf8);
        // Ordinary comments, HELP without a name and OpenMetrics' EOF are comments.
        assert!(
            p("# just a comment\n#HELPFUL\n# HELP\n# EOF\n")
                .families()
                .is_empty()
        );
    }

    #[test]
    fn timestamps_are_integer_milliseconds() {
        let e = p("x 1 1700000000123\ny 2 -5\nz 3\n");
        let ts: Vec<Option<i64>> = e
            .families()
            .iter()
            .map(|f| f.samples.first().unwrap().timestamp_ms)
            .collect();
        assert_eq!(ts, [Some(1_700_000_000_123), Some(-5), None]);
        assert!(err("x 1 99999999999999999999\n").contains("timestamp"));
    }
}
