//! A declared mapping from an operator's own log (CSV or JSONL, any column names) to the
//! fields a trace is made of: which column is the arrival and in what unit, which hold the
//! token counts, and optionally the session, the prefix blocks and the columns a caller may
//! filter on.
//!
//! The mapping is a small JSON document the operator writes (or the page saves) once. Its
//! sha256 travels with every trace read through it, so the trace *as read* can be reproduced:
//! the same bytes through the same mapping give the same rows. Nothing in it is guessed: an
//! arrival in a zone-less datetime needs its zone stated, a unit is never inferred from the
//! magnitude of the numbers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::datetime_format::{DIRECTIVES, DatetimeFormat};
use super::hex::hex;

/// The `arrival.format` of an ISO 8601 datetime, the default.
pub const ISO8601: &str = "iso8601";

/// The `schema` tag of a mapping document.
pub const TRACE_SCHEMA: &str = "loadproof.trace-schema/v1";

/// The most bytes a mapping document may have: it names a handful of columns.
pub const TRACE_SCHEMA_MAX_BYTES: usize = 64 << 10;

/// A mapping as written, checked, with the sha256 of the exact bytes it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSchema {
    doc: SchemaDoc,
    sha256: String,
}

/// The mapping document (`loadproof.trace-schema/v1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaDoc {
    /// Always [`TRACE_SCHEMA`].
    pub schema: String,
    /// A name for the log this maps (shown in reports), e.g. "gateway export".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The arrival: its column and unit.
    pub arrival: ArrivalField,
    /// The column of the prompt's token count.
    pub input_tokens: String,
    /// The column of the completion's token count.
    pub output_tokens: String,
    /// The column of the session (conversation) id, if the log has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The field listing each request's prefix-block ids (JSONL), and the block size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_blocks: Option<PrefixBlocksField>,
    /// Filter name → column: the columns a caller may keep rows by (`--where NAME=VALUE`;
    /// `model` also answers `--trace-model`, `log_type` `--log-type`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub filters: BTreeMap<String, String>,
}

/// Where the arrival is and how it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalField {
    /// The column (CSV header name) or field (JSONL; `a.b` reaches into an object).
    pub field: String,
    /// The unit: a number of `s`, `ms`, `us` or `ns` (of any epoch: arrivals are rebased to
    /// the first), or `datetime` (ISO 8601 / RFC 3339).
    pub unit: ArrivalUnit,
    /// For `datetime`: the format, `iso8601` (`YYYY-MM-DD[ T]HH:MM:SS[.f][Z|±HH:MM]`, the
    /// default) or a strftime-style pattern such as `%d/%b/%Y:%H:%M:%S %z` (see
    /// `datetime_format`: `%f` reads 1–9 fraction digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// For `datetime`: the zone a stamp without its own offset is in, `UTC` or `±HH:MM`.
    /// Required for `datetime`: a zone-less stamp is otherwise ambiguous.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

/// The unit of an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalUnit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// Nanoseconds.
    Ns,
    /// An ISO 8601 datetime.
    Datetime,
}

impl ArrivalUnit {
    /// The stable name, as in the document.
    pub fn name(self) -> &'static str {
        match self {
            ArrivalUnit::S => "s",
            ArrivalUnit::Ms => "ms",
            ArrivalUnit::Us => "us",
            ArrivalUnit::Ns => "ns",
            ArrivalUnit::Datetime => "datetime",
        }
    }

    /// Decimal places from this unit to nanoseconds (`None` for `datetime`).
    pub(crate) fn scale(self) -> Option<i32> {
        match self {
            ArrivalUnit::S => Some(9),
            ArrivalUnit::Ms => Some(6),
            ArrivalUnit::Us => Some(3),
            ArrivalUnit::Ns => Some(0),
            ArrivalUnit::Datetime => None,
        }
    }
}

/// Prefix identity in a mapped log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefixBlocksField {
    /// The field holding a list of non-negative integer block ids (JSONL only).
    pub field: String,
    /// Tokens per block.
    pub block_tokens: u32,
}

/// Why a mapping document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// Larger than [`TRACE_SCHEMA_MAX_BYTES`].
    #[error("{bytes} bytes: a mapping is at most {TRACE_SCHEMA_MAX_BYTES} bytes")]
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// Not JSON of the document's shape.
    #[error("line {line}, column {column}: {message}")]
    Json {
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// What serde said.
        message: String,
    },
    /// The `schema` tag is not [`TRACE_SCHEMA`].
    #[error("field `schema`: {found:?} is not {TRACE_SCHEMA:?}")]
    Tag {
        /// The tag found.
        found: String,
    },
    /// A field of the document holds a value it cannot.
    #[error("field `{field}`: {detail}")]
    Field {
        /// The document's field, e.g. `arrival.zone`.
        field: String,
        /// What is wrong.
        detail: String,
    },
}

fn field_error(field: impl Into<String>, detail: impl Into<String>) -> SchemaError {
    SchemaError::Field {
        field: field.into(),
        detail: detail.into(),
    }
}

impl TraceSchema {
    /// Reads and checks a mapping document.
    pub fn from_json(bytes: &[u8]) -> Result<TraceSchema, SchemaError> {
        if bytes.len() > TRACE_SCHEMA_MAX_BYTES {
            return Err(SchemaError::TooLarge { bytes: bytes.len() });
        }
        let doc: SchemaDoc = serde_json::from_slice(bytes).map_err(|e| SchemaError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        doc.check()?;
        Ok(TraceSchema {
            doc,
            sha256: hex(Sha256::digest(bytes).as_slice()),
        })
    }

    /// The document.
    pub fn doc(&self) -> &SchemaDoc {
        &self.doc
    }

    /// The sha256 of the bytes the mapping was read from, lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The declared layout of a datetime arrival, when it is a pattern (`None` for ISO 8601
    /// and for numeric units). The pattern was checked when the mapping was read.
    pub(crate) fn datetime_format(&self) -> Option<DatetimeFormat> {
        let arrival = &self.doc.arrival;
        match (arrival.unit, arrival.format.as_deref()) {
            (ArrivalUnit::Datetime, Some(f)) if f != ISO8601 => DatetimeFormat::compile(f).ok(),
            _ => None,
        }
    }

    /// The offset, in nanoseconds east of UTC, of the zone zone-less datetimes are in.
    pub(crate) fn zone_offset_ns(&self) -> i64 {
        self.doc
            .arrival
            .zone
            .as_deref()
            .and_then(parse_zone)
            .unwrap_or(0)
    }
}

/// `UTC`, `Z` or `±HH:MM` as seconds east of UTC, in nanoseconds.
fn parse_zone(zone: &str) -> Option<i64> {
    if zone == "UTC" || zone == "Z" {
        return Some(0);
    }
    let b = zone.as_bytes();
    let [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] = b else {
        return None;
    };
    let two = |a: u8, b: u8| -> Option<i64> {
        (a.is_ascii_digit() && b.is_ascii_digit())
            .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
    };
    let (h, m) = (two(*h1, *h2)?, two(*m1, *m2)?);
    if h > 23 || m > 59 {
        return None;
    }
    let secs = h * 3600 + m * 60;
    Some(if *sign == b'-' { -secs } else { secs } * 1_000_000_000)
}

impl SchemaDoc {
    fn check(&self) -> Result<(), SchemaError> {
        if self.schema != TRACE_SCHEMA {
            return Err(SchemaError::Tag {
                found: self.schema.clone(),
            });
        }
        let named = |field: &str, value: &str| {
            if value.trim().is_empty() {
                Err(field_error(field, "names no column"))
            } else {
                Ok(())
            }
        };
        named("arrival.field", &self.arrival.field)?;
        named("input_tokens", &self.input_tokens)?;
        named("output_tokens", &self.output_tokens)?;
        if let Some(s) = &self.session {
            named("session", s)?;
        }
        // One column, one meaning: a count read as the arrival too is a mistake, not a trace.
        let roles = [
            ("arrival.field", Some(&self.arrival.field)),
            ("input_tokens", Some(&self.input_tokens)),
            ("output_tokens", Some(&self.output_tokens)),
            ("session", self.session.as_ref()),
            (
                "prefix_blocks.field",
                self.prefix_blocks.as_ref().map(|p| &p.field),
            ),
        ];
        for (i, (a, x)) in roles.iter().enumerate() {
            for (b, y) in roles.iter().skip(i + 1) {
                if let (Some(x), Some(y)) = (x, y)
                    && x == y
                {
                    return Err(field_error(
                        *b,
                        format!("names column {x:?}, which `{a}` names too"),
                    ));
                }
            }
        }
        let arrival = &self.arrival;
        match arrival.unit {
            ArrivalUnit::Datetime => {
                if let Some(f) = &arrival.format
                    && f != ISO8601
                {
                    DatetimeFormat::compile(f).map_err(|why| {
                        field_error(
                            "arrival.format",
                            format!(
                                "{f:?}: {why}; a format is \"iso8601\" (YYYY-MM-DD[ T]HH:MM:SS[.f][Z|±HH:MM]) or a strftime-style pattern of {DIRECTIVES}"
                            ),
                        )
                    })?;
                }
                match &arrival.zone {
                    None => {
                        return Err(field_error(
                            "arrival.zone",
                            "required for unit datetime: the zone a stamp without its own offset is in, \"UTC\" or \"±HH:MM\"",
                        ));
                    }
                    Some(z) if parse_zone(z).is_none() => {
                        return Err(field_error(
                            "arrival.zone",
                            format!("{z:?} is not \"UTC\" or an offset \"±HH:MM\""),
                        ));
                    }
                    Some(_) => {}
                }
            }
            unit => {
                for (name, v) in [
                    ("arrival.format", &arrival.format),
                    ("arrival.zone", &arrival.zone),
                ] {
                    if v.is_some() {
                        return Err(field_error(
                            name,
                            format!("applies to unit datetime only, not {}", unit.name()),
                        ));
                    }
                }
            }
        }
        if let Some(p) = &self.prefix_blocks {
            named("prefix_blocks.field", &p.field)?;
            if p.block_tokens == 0 {
                return Err(field_error(
                    "prefix_blocks.block_tokens",
                    "must be at least 1",
                ));
            }
        }
        for (name, column) in &self.filters {
            if name.trim().is_empty() || name.contains('=') {
                return Err(field_error(
                    "filters",
                    format!("{name:?} is not a filter name (non-empty, no `=`)"),
                ));
            }
            named(&format!("filters.{name}"), column)?;
        }
        Ok(())
    }

    /// The document as the bytes a mapping is saved as: pretty JSON (two-space indent, fields
    /// in declaration order, filters sorted) and a final newline. One writer, so a mapping
    /// built in the page and saved reads back in the CLI with the sha256 the page reported.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        // A struct of strings, enums and a string map always serializes.
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// Every column the mapping reads, for checking a header.
    pub(crate) fn columns(&self) -> Vec<&str> {
        let mut out = vec![
            self.arrival.field.as_str(),
            self.input_tokens.as_str(),
            self.output_tokens.as_str(),
        ];
        out.extend(self.session.as_deref());
        out.extend(self.prefix_blocks.as_ref().map(|p| p.field.as_str()));
        out.extend(self.filters.values().map(String::as_str));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(arrival: &str) -> String {
        format!(
            r#"{{"schema":"loadproof.trace-schema/v1","arrival":{arrival},"input_tokens":"in","output_tokens":"out"}}"#
        )
    }

    #[test]
    fn a_zone_less_datetime_needs_its_zone_stated() {
        let err = TraceSchema::from_json(doc(r#"{"field":"t","unit":"datetime"}"#).as_bytes())
            .unwrap_err();
        assert!(err.to_string().contains("arrival.zone"), "{err}");
        let ok = TraceSchema::from_json(
            doc(r#"{"field":"t","unit":"datetime","zone":"+05:30"}"#).as_bytes(),
        )
        .unwrap();
        assert_eq!(ok.zone_offset_ns(), (5 * 3600 + 30 * 60) * 1_000_000_000);
    }

    #[test]
    fn a_unit_is_one_of_five_and_never_guessed() {
        let err = TraceSchema::from_json(doc(r#"{"field":"t","unit":"minutes"}"#).as_bytes())
            .unwrap_err();
        assert!(matches!(err, SchemaError::Json { .. }), "{err}");
        for u in ["s", "ms", "us", "ns"] {
            let s = doc(&format!(r#"{{"field":"t","unit":"{u}"}}"#));
            assert!(TraceSchema::from_json(s.as_bytes()).is_ok(), "{u}");
        }
    }

    #[test]
    fn one_column_cannot_hold_two_roles() {
        let s = r#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"t","unit":"s"},"input_tokens":"n","output_tokens":"n"}"#;
        let err = TraceSchema::from_json(s.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("output_tokens"), "{err}");
    }

    #[test]
    fn unknown_fields_and_tags_are_refused() {
        let s = r#"{"schema":"loadproof.trace-schema/v1","arrival":{"field":"t","unit":"s"},"input_tokens":"i","output_tokens":"o","extra":1}"#;
        assert!(TraceSchema::from_json(s.as_bytes()).is_err());
        let s = r#"{"schema":"other/v1","arrival":{"field":"t","unit":"s"},"input_tokens":"i","output_tokens":"o"}"#;
        assert!(matches!(
            TraceSchema::from_json(s.as_bytes()),
            Err(SchemaError::Tag { .. })
        ));
    }

    #[test]
    fn a_saved_document_reads_back_as_itself() {
        let mut doc: SchemaDoc = serde_json::from_str(&doc(
            r#"{"field":"t","unit":"datetime","format":"iso8601","zone":"UTC"}"#,
        ))
        .unwrap();
        doc.session = Some("conv".to_owned());
        doc.filters
            .insert("status".to_owned(), "http_status".to_owned());
        let bytes = doc.to_json_bytes();
        assert!(bytes.ends_with(b"}\n"));
        let read = TraceSchema::from_json(&bytes).unwrap();
        assert_eq!(read.doc(), &doc);
        assert_eq!(read.doc().to_json_bytes(), bytes);
    }

    #[test]
    fn the_sha256_is_of_the_bytes_as_given() {
        let a = doc(r#"{"field":"t","unit":"s"}"#);
        let b = format!("{a}\n");
        let (sa, sb) = (
            TraceSchema::from_json(a.as_bytes()).unwrap(),
            TraceSchema::from_json(b.as_bytes()).unwrap(),
        );
        assert_eq!(sa.doc(), sb.doc());
        assert_ne!(sa.sha256(), sb.sha256());
    }
}
