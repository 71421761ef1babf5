//! An operator's own log read through a declared [`TraceSchema`]: CSV columns found by the
//! header's names, JSONL fields by key (`a.b` reaches into an object).
//!
//! Cells go through the same readers as the built-in formats (`token_cell`, the exact
//! decimal timestamp, the ISO datetime), so a mapped log's row is accepted or dropped for the
//! same named reasons. A defect names the log's own column, not the role it plays.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::burstgpt::timestamp_ns;
use super::csv_line::Cells;
use super::datetime::{DatetimeError, MinuteMemo, parse_datetime_ns_memo};
use super::datetime_format::DatetimeFormat;
use super::mooncake::kind;
use super::row::{Defect, Row, number_defect, token_cell};
use super::schema::{ArrivalUnit, TraceSchema};
use super::{DropReason, FilterReason, TraceError};
use crate::decimal::NumberError;

/// How arrivals are read, and the names defects carry.
#[derive(Debug, Clone)]
pub(crate) struct Arrival {
    unit: ArrivalUnit,
    zone_offset_ns: i64,
    name: String,
    minute: std::cell::Cell<MinuteMemo>,
    /// The declared layout of a datetime that is not ISO 8601, with the mapping's pattern.
    format: Option<(DatetimeFormat, String)>,
}

impl Arrival {
    fn of(schema: &TraceSchema) -> Arrival {
        Arrival {
            unit: schema.doc().arrival.unit,
            zone_offset_ns: schema.zone_offset_ns(),
            name: schema.doc().arrival.field.clone(),
            minute: std::cell::Cell::new(MinuteMemo::default()),
            format: schema
                .datetime_format()
                .zip(schema.doc().arrival.format.clone()),
        }
    }

    /// Reads one arrival cell (trimmed text) to nanoseconds in the log's clock.
    fn read(&self, cell: &[u8]) -> Result<i64, Defect> {
        let cell = cell.trim_ascii();
        match self.unit.scale() {
            Some(scale) => timestamp_ns(cell, "arrival", scale).map_err(|d| named(d, &self.name)),
            None => {
                if cell.is_empty() {
                    return Err(Defect::named(DropReason::MissingField, &self.name, "empty"));
                }
                let (ns, had_offset) = match &self.format {
                    Some((format, pattern)) => format.parse(cell).map_err(|e| {
                        self.datetime_defect(
                            e,
                            cell,
                            &format!("in the declared layout {pattern:?}"),
                        )
                    })?,
                    None => {
                        let mut memo = self.minute.get();
                        let parsed = parse_datetime_ns_memo(cell, &mut memo);
                        self.minute.set(memo);
                        parsed.map_err(|e| {
                            self.datetime_defect(
                                e,
                                cell,
                                "an ISO 8601 datetime (YYYY-MM-DD[ T]HH:MM:SS[.f][Z|±HH:MM])",
                            )
                        })?
                    }
                };
                if had_offset {
                    return Ok(ns);
                }
                ns.checked_sub(self.zone_offset_ns)
                    .filter(|v| *v >= 0)
                    .ok_or_else(|| {
                        named(
                            number_defect(NumberError::OutOfRange, "arrival", cell),
                            &self.name,
                        )
                    })
            }
        }
    }
}

impl Arrival {
    /// The defect of a stamp that is not `layout` (or out of range).
    fn datetime_defect(&self, e: DatetimeError, cell: &[u8], layout: &str) -> Defect {
        match e {
            DatetimeError::Shape => Defect::named(
                DropReason::NonNumeric,
                &self.name,
                format!(
                    "not {layout}: {:?}",
                    String::from_utf8_lossy(cell.get(..40).unwrap_or(cell))
                ),
            ),
            DatetimeError::Range => named(
                number_defect(NumberError::OutOfRange, "arrival", cell),
                &self.name,
            ),
        }
    }
}

/// A defect of a role's reader, renamed to the log's column.
fn named(mut d: Defect, column: &str) -> Defect {
    d.field = Some(Cow::Owned(column.to_owned()));
    d
}

/// A caller's filter on one mapped column: keep rows whose cell equals `wanted`.
#[derive(Debug, Clone)]
struct Keep<C> {
    at: C,
    wanted: String,
    reason: FilterReason,
}

/// The caller's filters (`name`, wanted value, the reason a miss is counted under) on the
/// schema's filter columns, or the first one the schema does not declare.
pub(crate) type Wanted = [(String, String, FilterReason)];

fn keeps<C>(
    schema: &TraceSchema,
    wanted: &Wanted,
    locate: impl Fn(&str) -> C,
) -> Result<Vec<Keep<C>>, TraceError> {
    let filters = &schema.doc().filters;
    wanted
        .iter()
        .map(|(name, value, reason)| match filters.get(name) {
            Some(column) => Ok(Keep {
                at: locate(column),
                wanted: value.clone(),
                reason: *reason,
            }),
            None => Err(TraceError::FilterNotInSchema {
                name: name.clone(),
                declared: filters.keys().cloned().collect(),
            }),
        })
        .collect()
}

/// A mapped CSV log: column positions found by name in the header.
#[derive(Debug, Clone)]
pub(crate) struct MappedCsv {
    n_cols: usize,
    arrival_at: usize,
    arrival: Arrival,
    input: (usize, String),
    output: (usize, String),
    session: Option<usize>,
    keeps: Vec<Keep<usize>>,
}

impl MappedCsv {
    /// Finds the schema's columns in the header, or says which are missing.
    pub(crate) fn from_header(
        schema: &TraceSchema,
        wanted: &Wanted,
        names: &[String],
        line: u64,
    ) -> Result<MappedCsv, TraceError> {
        let doc = schema.doc();
        let missing: Vec<&str> = doc
            .columns()
            .into_iter()
            .filter(|c| !names.iter().any(|n| n == c))
            .collect();
        if !missing.is_empty() {
            return Err(TraceError::UnrecognisedLayout {
                line,
                seen_kind: "columns",
                seen: names.to_vec(),
                hint: format!(
                    "; the mapping names column(s) not in the header: {}",
                    missing.join(", ")
                ),
            });
        }
        if let Some(p) = &doc.prefix_blocks {
            return Err(TraceError::SchemaMismatch {
                line,
                detail: format!(
                    "prefix_blocks.field {:?} is a list, which a CSV cell does not hold: prefix blocks are read from JSONL logs",
                    p.field
                ),
            });
        }
        let pos = |c: &str| names.iter().position(|n| n == c).unwrap_or(0);
        Ok(MappedCsv {
            n_cols: names.len(),
            arrival_at: pos(&doc.arrival.field),
            arrival: Arrival::of(schema),
            input: (pos(&doc.input_tokens), doc.input_tokens.clone()),
            output: (pos(&doc.output_tokens), doc.output_tokens.clone()),
            session: doc.session.as_deref().map(pos),
            keeps: keeps(schema, wanted, pos)?,
        })
    }

    pub(crate) fn has_sessions(&self) -> bool {
        self.session.is_some()
    }

    pub(crate) fn names(&self) -> [&str; 3] {
        [&self.arrival.name, &self.input.1, &self.output.1]
    }

    pub(crate) fn read<'a>(&self, line: &'a [u8], cells: &'a mut Cells) -> Result<Row<'a>, Defect> {
        cells.split_row(line, self.n_cols)?;
        let cells: &'a Cells = cells;
        let ts_ns = self.arrival.read(cells.get(line, self.arrival_at))?;
        let input = token_cell(cells.get(line, self.input.0), "input_tokens")
            .map_err(|d| named(d, &self.input.1))?;
        let output = token_cell(cells.get(line, self.output.0), "output_tokens")
            .map_err(|d| named(d, &self.output.1))?;
        let excluded = self
            .keeps
            .iter()
            .find(|k| cells.get(line, k.at).trim_ascii() != k.wanted.as_bytes())
            .map(|k| k.reason);
        Ok(Row {
            ts_ns,
            input,
            output,
            model: None,
            log_type: None,
            excluded,
            session: self.session.map(|i| Cow::Borrowed(cells.get(line, i))),
            hash_ids: None,
        })
    }
}

/// A field of a JSON object: the key as written, and its dotted path when it has dots.
#[derive(Debug, Clone)]
pub(crate) struct JsonField {
    name: String,
}

impl JsonField {
    fn new(name: &str) -> JsonField {
        JsonField {
            name: name.to_owned(),
        }
    }

    /// The value: the key as written if the object has it, else the dotted path.
    fn get<'m>(&self, map: &'m Map<String, Value>) -> Option<&'m Value> {
        if let Some(v) = map.get(&self.name) {
            return Some(v);
        }
        let mut parts = self.name.split('.');
        let mut v = map.get(parts.next()?)?;
        for p in parts {
            v = v.as_object()?.get(p)?;
        }
        Some(v)
    }

    /// The top-level key this field starts at.
    pub(crate) fn top(&self) -> &str {
        self.name.split('.').next().unwrap_or(&self.name)
    }
}

/// A scalar's text, to read with the cell readers: a number as JSON writes it, a string as is.
fn scalar<'v>(v: Option<&'v Value>, field: &str) -> Result<Cow<'v, str>, Defect> {
    match v {
        None | Some(Value::Null) => Err(Defect::named(DropReason::MissingField, field, "absent")),
        Some(Value::Number(n)) => Ok(Cow::Owned(n.to_string())),
        Some(Value::String(s)) => Ok(Cow::Borrowed(s)),
        Some(other) => Err(Defect::named(
            DropReason::NonNumeric,
            field,
            format!("not a number or a string: {}", kind(other)),
        )),
    }
}

/// A mapped JSONL log.
#[derive(Debug, Clone)]
pub(crate) struct MappedJson {
    arrival_at: JsonField,
    arrival: Arrival,
    input: JsonField,
    output: JsonField,
    session: Option<JsonField>,
    prefix: Option<JsonField>,
    keeps: Vec<Keep<JsonField>>,
}

impl MappedJson {
    /// The reader for a log whose first object has `fields`, or why the mapping does not fit.
    pub(crate) fn from_first(
        schema: &TraceSchema,
        wanted: &Wanted,
        fields: &[String],
        line: u64,
    ) -> Result<MappedJson, TraceError> {
        let doc = schema.doc();
        let required = [&doc.arrival.field, &doc.input_tokens, &doc.output_tokens];
        let found = required.iter().any(|r| {
            let f = JsonField::new(r);
            fields.iter().any(|k| k == r.as_str() || k == f.top())
        });
        if !found {
            return Err(TraceError::UnrecognisedLayout {
                line,
                seen_kind: "fields",
                seen: fields.to_vec(),
                hint: format!(
                    "; the mapping's arrival, input and output fields ({}, {}, {}) are all absent from the first object",
                    doc.arrival.field, doc.input_tokens, doc.output_tokens
                ),
            });
        }
        Ok(MappedJson {
            arrival_at: JsonField::new(&doc.arrival.field),
            arrival: Arrival::of(schema),
            input: JsonField::new(&doc.input_tokens),
            output: JsonField::new(&doc.output_tokens),
            session: doc.session.as_deref().map(JsonField::new),
            prefix: doc.prefix_blocks.as_ref().map(|p| JsonField::new(&p.field)),
            keeps: keeps(schema, wanted, JsonField::new)?,
        })
    }

    pub(crate) fn has_sessions(&self) -> bool {
        self.session.is_some()
    }

    pub(crate) fn has_prefix(&self) -> bool {
        self.prefix.is_some()
    }

    pub(crate) fn names(&self) -> [&str; 3] {
        [&self.arrival.name, &self.input.name, &self.output.name]
    }

    pub(crate) fn read(&self, line: &[u8]) -> Result<Row<'static>, Defect> {
        let (map, duplicate) = super::mooncake::object(line)?;
        if let Some(key) = duplicate {
            return Err(super::mooncake::duplicate_key(&key, None));
        }
        let a = &self.arrival_at;
        let ts_ns = self
            .arrival
            .read(scalar(a.get(&map), &a.name)?.as_bytes())?;
        let count = |f: &JsonField, role: &'static str| -> Result<u32, Defect> {
            let text = scalar(f.get(&map), &f.name)?;
            token_cell(text.as_bytes(), role).map_err(|d| named(d, &f.name))
        };
        let input = count(&self.input, "input_tokens")?;
        let output = count(&self.output, "output_tokens")?;
        let session = match &self.session {
            Some(f) => match f.get(&map) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(Cow::Owned(s.clone().into_bytes())),
                Some(Value::Number(n)) => Some(Cow::Owned(n.to_string().into_bytes())),
                Some(other) => {
                    return Err(Defect::named(
                        DropReason::MalformedRow,
                        &f.name,
                        format!("a session id is a string or a number, not {}", kind(other)),
                    ));
                }
            },
            None => None,
        };
        let hash_ids = match &self.prefix {
            Some(f) => super::mooncake::ids(f.get(&map), &f.name)?,
            None => None,
        };
        super::mooncake::check_blocks_fit(
            hash_ids.as_deref(),
            input,
            self.prefix.as_ref().map(|p| p.name.as_str()),
        )?;
        let excluded = self
            .keeps
            .iter()
            .find(|k| match k.at.get(&map) {
                Some(Value::String(s)) => s.trim() != k.wanted,
                Some(Value::Number(n)) => n.to_string() != k.wanted,
                Some(Value::Bool(b)) => b.to_string() != k.wanted,
                _ => true,
            })
            .map(|k| k.reason);
        Ok(Row {
            ts_ns,
            input,
            output,
            model: None,
            log_type: None,
            excluded,
            session,
            hash_ids,
        })
    }
}
