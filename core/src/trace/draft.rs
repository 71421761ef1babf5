//! What a mapping can be built from: the names a log's first line offers (a CSV header's
//! columns, or the first JSON object's fields with dotted paths into nested objects), so the
//! page can offer them to pick from when no built-in format recognises the file.
//!
//! The names are exactly those the mapped reader resolves (`mapped.rs`: a CSV column by its
//! trimmed header name, a JSONL field by its key or a dotted path), so a mapping built from
//! them reads the file it was built from. The mapping's saved bytes are
//! [`SchemaDoc::to_json_bytes`](super::SchemaDoc::to_json_bytes): what the page reads with is
//! what the CLI's `--schema` reads, sha256 and all.

use serde_json::{Map, Value};

use super::csv_line::Cells;

/// How deep dotted paths reach into nested objects: usage blocks are one level down, and a
/// deeper log is named by hand.
const MAX_DEPTH: usize = 4;

/// The most names offered: a picker of thousands helps no one, and the head is untrusted.
pub const MAX_NAMES: usize = 512;

/// The kind of line a log starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    /// A CSV header.
    Csv,
    /// A JSON object per line.
    Jsonl,
}

/// The names a mapping could give for a log's fields, in the order the log has them (JSON
/// keys in sorted order, as every JSONL reader here sees them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFields {
    /// CSV or JSONL, as the readers tell them apart (the first line starts with `{`).
    pub kind: LogKind,
    /// Column names, or field keys and dotted paths to nested values.
    pub names: Vec<String>,
}

/// The fields of the log starting with `head` (its first bytes: only the first non-blank line
/// is read, a UTF-8 BOM skipped). `None` when that line is no CSV header or JSON object, or a
/// CSV header names a column twice (the reader refuses such a header).
pub fn log_fields(head: &[u8]) -> Option<LogFields> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let line = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| !l.trim_ascii().is_empty())?;
    if line.trim_ascii_start().first() == Some(&b'{') {
        let map: Map<String, Value> = serde_json::from_slice(line).ok()?;
        let mut names = Vec::new();
        paths(&map, "", 0, &mut names);
        return Some(LogFields {
            kind: LogKind::Jsonl,
            names,
        });
    }
    std::str::from_utf8(line).ok()?;
    let mut cells = Cells::default();
    cells.split(line).ok()?;
    let mut names: Vec<String> = Vec::new();
    for i in 0..cells.len().min(MAX_NAMES) {
        let name = String::from_utf8_lossy(cells.get(line, i).trim_ascii()).into_owned();
        if name.is_empty() || names.contains(&name) {
            return None;
        }
        names.push(name);
    }
    Some(LogFields {
        kind: LogKind::Csv,
        names,
    })
}

/// Every key of `map` under `prefix`, a nested object's keys as `prefix.key.sub` instead of
/// the object itself (an object is no cell a mapping could read).
fn paths(map: &Map<String, Value>, prefix: &str, depth: usize, out: &mut Vec<String>) {
    for (key, value) in map {
        if out.len() >= MAX_NAMES {
            return;
        }
        let name = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Object(inner) if depth + 1 < MAX_DEPTH && !inner.is_empty() => {
                paths(inner, &name, depth + 1, out);
            }
            _ => out.push(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_header_offers_its_trimmed_column_names() {
        let f =
            log_fields(b"\xef\xbb\xbf\n ts , \"prompt, tokens\",completion\r\n1,2,3\n").unwrap();
        assert_eq!(f.kind, LogKind::Csv);
        assert_eq!(f.names, ["ts", "prompt, tokens", "completion"]);
        assert_eq!(log_fields(b"a,b,a\n"), None);
        assert_eq!(log_fields(b"\n\n"), None);
    }

    #[test]
    fn a_json_object_offers_dotted_paths_to_nested_values() {
        let f = log_fields(
            br#"{"t":"2024-01-01T00:00:00Z","usage":{"prompt_tokens":3,"completion_tokens":4},"ids":[1,2],"meta":{}}"#,
        )
        .unwrap();
        assert_eq!(f.kind, LogKind::Jsonl);
        assert_eq!(
            f.names,
            [
                "ids",
                "meta",
                "t",
                "usage.completion_tokens",
                "usage.prompt_tokens"
            ]
        );
        assert_eq!(log_fields(b"{not json\n"), None);
    }
}
