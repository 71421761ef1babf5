//! Mooncake JSONL: `{"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}`.
//!
//! Each hash id names a 512-token block: two requests share a prefix as far as their leading
//! ids agree. Numbers must be JSON numbers: a numeric string or a boolean is not a count.

use serde_json::{Map, Number, Value};

use super::DropReason;
use super::row::{Defect, Row, number_defect};

/// Tokens per hash-id block in the published Mooncake traces.
pub(crate) const BLOCK_TOKENS: u32 = 512;
/// The fields of a Mooncake object; an object with any of them is taken for Mooncake (a row
/// missing the others is a `missing_field` drop, not a different format).
pub(crate) const KNOWN: [&str; 4] = ["timestamp", "input_length", "output_length", "hash_ids"];

/// The field names of the first object, for detection and for error messages.
pub(crate) fn field_names(line: &[u8]) -> Result<Vec<String>, serde_json::Error> {
    serde_json::from_slice::<Map<String, Value>>(line).map(|map| map.keys().cloned().collect())
}

fn number<'a>(map: &'a Map<String, Value>, field: &'static str) -> Result<&'a Number, Defect> {
    match map.get(field) {
        None | Some(Value::Null) => {
            Err(Defect::new(DropReason::MissingField, Some(field), "absent"))
        }
        Some(Value::Number(n)) => Ok(n),
        Some(other) => Err(Defect::new(
            DropReason::NonNumeric,
            Some(field),
            format!("not a JSON number: {}", kind(other)),
        )),
    }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn tokens(map: &Map<String, Value>, field: &'static str) -> Result<u32, Defect> {
    let n = number(map, field)?;
    if let Some(v) = n.as_u64() {
        return u32::try_from(v).map_err(|_| {
            Defect::new(
                DropReason::OutOfRange,
                Some(field),
                format!("{v} does not fit 32 bits"),
            )
        });
    }
    if n.as_i64().is_some() {
        return Err(Defect::new(
            DropReason::NegativeValue,
            Some(field),
            format!("negative: {n}"),
        ));
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f < 0.0 {
        return Err(Defect::new(
            DropReason::NegativeValue,
            Some(field),
            format!("negative: {n}"),
        ));
    }
    if f.fract() == 0.0 && f <= f64::from(u32::MAX) {
        return Ok(f as u32);
    }
    Err(Defect::new(
        DropReason::OutOfRange,
        Some(field),
        format!("not a whole token count: {n}"),
    ))
}

fn timestamp_ns(map: &Map<String, Value>) -> Result<i64, Defect> {
    const FIELD: &str = "timestamp";
    let n = number(map, FIELD)?;
    let out_of_range = || {
        Defect::new(
            DropReason::OutOfRange,
            Some(FIELD),
            format!("out of range: {n}"),
        )
    };
    if let Some(ms) = n.as_u64() {
        return i64::try_from(ms)
            .ok()
            .and_then(|ms| ms.checked_mul(1_000_000))
            .ok_or_else(out_of_range);
    }
    if n.as_i64().is_some() {
        return Err(Defect::new(
            DropReason::NegativeValue,
            Some(FIELD),
            format!("negative: {n}"),
        ));
    }
    // A fractional millisecond: read the number's shortest decimal text exactly, so epoch-scale
    // stamps keep their microseconds (f64 arithmetic would not).
    let text = n.to_string();
    crate::decimal::Decimal::parse(text.as_bytes())
        .and_then(|d| {
            if d.is_negative() {
                Err(crate::decimal::NumberError::Negative)
            } else {
                d.scaled_i64(6)
            }
        })
        .map_err(|e| number_defect(e, FIELD, text.as_bytes()))
}

/// A list of prefix-block ids: absent or null is no list; anything but non-negative integers
/// drops the row.
pub(crate) fn ids(v: Option<&Value>, field: &str) -> Result<Option<Vec<u64>>, Defect> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_u64())
            .collect::<Option<Vec<u64>>>()
            .map(Some)
            .ok_or_else(|| {
                Defect::named(
                    DropReason::MalformedRow,
                    field,
                    format!("{field} must all be non-negative integers"),
                )
            }),
        Some(other) => Err(Defect::named(
            DropReason::MalformedRow,
            field,
            format!("{field} must be a list, found {}", kind(other)),
        )),
    }
}

/// Each id names a block of at least one token, whatever the block size a replay picks
/// (`plan --chunk-size`): more ids than the prompt has tokens cannot be this row's (vLLM
/// would ignore the extra ids; a reader of the prefix structure would not). A zero-token
/// prompt is named by the zero-token check instead.
pub(crate) fn check_blocks_fit(
    ids: Option<&[u64]>,
    input: u32,
    field: Option<&str>,
) -> Result<(), Defect> {
    if let Some(ids) = ids
        && input > 0
        && ids.len() as u64 > u64::from(input)
    {
        let mut d = Defect::new(
            DropReason::PrefixBlocksExceedPrompt,
            None,
            format!(
                "{} prefix blocks for a {input}-token prompt: no block size fits them",
                ids.len()
            ),
        );
        d.field = field.map(|f| std::borrow::Cow::Owned(f.to_owned()));
        return Err(d);
    }
    Ok(())
}

/// A row's object, and the first of its keys that appears twice (serde_json keeps the last).
struct Object {
    map: Map<String, Value>,
    duplicate: Option<String>,
}

impl<'de> serde::Deserialize<'de> for Object {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Object, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = Object;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Object, A::Error> {
                let mut map = Map::new();
                let mut duplicate = None;
                while let Some(key) = a.next_key::<String>()? {
                    let value: Value = a.next_value()?;
                    if map.contains_key(&key) && duplicate.is_none() {
                        duplicate = Some(key.clone());
                    }
                    map.insert(key, value);
                }
                Ok(Object { map, duplicate })
            }
        }
        d.deserialize_map(Keys)
    }
}

/// A line as a JSON object, and the first of its keys that appears twice.
pub(crate) fn object(line: &[u8]) -> Result<(Map<String, Value>, Option<String>), Defect> {
    let Object { map, duplicate } = serde_json::from_slice(line).map_err(|e| {
        Defect::new(
            DropReason::MalformedRow,
            None,
            format!("not a JSON object: {e}"),
        )
    })?;
    Ok((map, duplicate))
}

/// The defect of a row with `key` twice (`field` when the key is one the format reads).
pub(crate) fn duplicate_key(key: &str, field: Option<&'static str>) -> Defect {
    let shown: String = key.chars().take(40).collect();
    Defect::new(
        DropReason::DuplicateKey,
        field,
        format!(
            "the key {shown:?} appears twice in the object (ambiguous: which value is the row's?)"
        ),
    )
}

/// Reads one line.
pub(crate) fn read(line: &[u8]) -> Result<Row<'static>, Defect> {
    let (map, duplicate) = object(line)?;
    if let Some(key) = duplicate {
        let field = KNOWN.iter().copied().find(|k| *k == key);
        return Err(duplicate_key(&key, field));
    }
    let ts_ns = timestamp_ns(&map)?;
    let input = tokens(&map, "input_length")?;
    let output = tokens(&map, "output_length")?;
    let hash_ids = ids(map.get("hash_ids"), "hash_ids")?;
    check_blocks_fit(hash_ids.as_deref(), input, Some("hash_ids"))?;
    Ok(Row {
        hash_ids,
        ..Row::of_counts(ts_ns, input, output)
    })
}
