//! A trace read through the user's own mapping (`loadproof.trace-schema/v1`): one chosen or
//! dropped, or one built here from the log's first line when no built-in format recognises it.
//!
//! The mapping is held as its exact bytes, checked by core's `TraceSchema::from_json` (a
//! refusal is core's message, the field named) and handed to the worker as bytes: the sha256
//! the report carries is of the bytes the CLI's `--schema` would read. A built mapping is
//! serialized once, by core's `SchemaDoc::to_json_bytes`, and "Save mapping" downloads those
//! very bytes, so the saved file gives the CLI the report the page shows.

use std::collections::BTreeMap;
use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::trace::{
    ArrivalField, ArrivalUnit, ISO8601, LogFields, LogKind, PrefixBlocksField, SchemaDoc,
    TRACE_SCHEMA, TraceSchema,
};

use crate::widgets::export::save_text;
use crate::widgets::readout::Message;

/// A mapping the trace is read through: where it came from and its checked bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    /// The file it was read from, or what built it.
    pub name: String,
    /// The exact bytes (JSON), as read from the file or built by core.
    pub bytes: Arc<[u8]>,
    /// The bytes, checked.
    pub schema: Arc<TraceSchema>,
}

impl Mapping {
    /// Checks `bytes` as the CLI's `--schema` does; the refusal reads as the CLI's
    /// (`NAME: not a trace mapping: field ...`).
    pub fn read(name: &str, bytes: Vec<u8>) -> Result<Mapping, String> {
        let schema = crate::ingest::schema_of(Some(&bytes))
            .map_err(|e| format!("{name}: {e}"))?
            .ok_or_else(|| format!("{name}: no mapping"))?;
        Ok(Mapping {
            name: name.to_owned(),
            bytes: bytes.into(),
            schema,
        })
    }
}

/// What the form offers: the log's fields, and the file they were read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// The log's file name (the saved mapping is named after it).
    pub source: String,
    /// Its fields, from its first line.
    pub fields: LogFields,
}

/// The choices as made, text only; [`MappingChoices::doc`] turns them into core's document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MappingChoices {
    pub arrival: String,
    pub unit: String,
    /// For a datetime: `iso8601` or a strftime-style layout (empty reads as `iso8601`).
    pub format: String,
    pub zone: String,
    pub input: String,
    pub output: String,
    pub session: String,
    /// The field listing each request's prefix-block ids (JSONL; empty: none).
    pub prefix_field: String,
    /// Tokens per prefix block, as typed.
    pub block_tokens: String,
    pub filters: Vec<String>,
}

impl MappingChoices {
    /// The document these choices declare. Every check beyond the unit's name is core's
    /// (`TraceSchema::from_json` on the saved bytes): a column left unchosen is an empty name,
    /// which core refuses by its field.
    pub fn doc(&self) -> Result<SchemaDoc, String> {
        let unit = match self.unit.as_str() {
            "s" => ArrivalUnit::S,
            "ms" => ArrivalUnit::Ms,
            "us" => ArrivalUnit::Us,
            "ns" => ArrivalUnit::Ns,
            "datetime" => ArrivalUnit::Datetime,
            _ => {
                return Err(
                    "field `arrival.unit`: choose s, ms, us, ns or datetime (a unit is never guessed)"
                        .to_owned(),
                );
            }
        };
        let datetime = unit == ArrivalUnit::Datetime;
        let optional = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        Ok(SchemaDoc {
            schema: TRACE_SCHEMA.to_owned(),
            name: None,
            arrival: ArrivalField {
                field: self.arrival.clone(),
                unit,
                format: datetime.then(|| match self.format.trim() {
                    "" => ISO8601.to_owned(),
                    f => f.to_owned(),
                }),
                zone: datetime.then(|| self.zone.trim().to_owned()),
            },
            input_tokens: self.input.clone(),
            output_tokens: self.output.clone(),
            session: optional(&self.session),
            prefix_blocks: match self.prefix_field.as_str() {
                "" => None,
                field => Some(PrefixBlocksField {
                    field: field.to_owned(),
                    block_tokens: self.block_tokens.trim().parse().map_err(|_| {
                        format!(
                            "field `prefix_blocks.block_tokens`: {:?} is not a whole number of tokens per block",
                            self.block_tokens
                        )
                    })?,
                }),
            },
            filters: self
                .filters
                .iter()
                .map(|c| (c.clone(), c.clone()))
                .collect::<BTreeMap<_, _>>(),
        })
    }

    /// The mapping these choices make, as the bytes core writes and checked as core reads them.
    pub fn mapping(&self, name: &str) -> Result<Mapping, String> {
        Mapping::read(name, self.doc()?.to_json_bytes())
    }
}

/// The saved mapping's file name: `gateway.csv` → `gateway.schema.json`.
pub fn mapping_file_name(source: &str) -> String {
    let stem = source.rsplit_once('.').map_or(source, |(stem, _)| stem);
    format!("{stem}.schema.json")
}

/// The form: one select per role over the log's fields, the unit (and zone, for datetimes),
/// filter columns; "Read with this mapping" hands the mapping to `on_read`.
#[component]
pub fn MappingForm(draft: Draft, on_read: Callback<Mapping>) -> impl IntoView {
    let choices = RwSignal::new(MappingChoices {
        format: ISO8601.to_owned(),
        zone: "UTC".to_owned(),
        ..MappingChoices::default()
    });
    let problem = RwSignal::new(None::<String>);
    let names = Arc::new(draft.fields.names.clone());
    let jsonl = draft.fields.kind == LogKind::Jsonl;
    let (noun, kind) = match draft.fields.kind {
        LogKind::Csv => ("column", "CSV header"),
        LogKind::Jsonl => ("field", "first JSON object"),
    };
    let source = draft.source.clone();
    let made_name = format!("mapping built for {source}");
    let read = {
        let made_name = made_name.clone();
        move |_| match choices.with_untracked(|c| c.mapping(&made_name)) {
            Ok(m) => {
                problem.set(None);
                on_read.run(m);
            }
            Err(e) => problem.set(Some(e)),
        }
    };
    let save = move |_| {
        let made = choices.with_untracked(|c| c.mapping(&made_name));
        match made {
            Ok(m) => {
                problem.set(None);
                let text = String::from_utf8_lossy(&m.bytes).into_owned();
                if save_text(&mapping_file_name(&source), &text, "application/json").is_err() {
                    problem.set(Some("the browser did not save the file".to_owned()));
                }
            }
            Err(e) => problem.set(Some(e)),
        }
    };
    let select = move |id: &'static str,
                       label: String,
                       none: &'static str,
                       get: fn(&MappingChoices) -> &String,
                       set: fn(&mut MappingChoices, String)| {
        let options = names
            .iter()
            .map(|n| view! { <option value=n.clone()>{n.clone()}</option> })
            .collect_view();
        view! {
            <label class="field" for=id>
                <span>{label}</span>
                <select
                    id=id
                    prop:value=move || choices.with(|c| get(c).clone())
                    on:change=move |ev| choices.update(|c| set(c, event_target_value(&ev)))
                >
                    <option value="">{none}</option>
                    {options}
                </select>
            </label>
        }
    };
    let filter_boxes = draft
        .fields
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let id = format!("map-filter-{i}");
            let label_for = id.clone();
            let column = n.clone();
            let checked = {
                let column = column.clone();
                move || choices.with(|c| c.filters.contains(&column))
            };
            view! {
                <label class="check" for=label_for>
                    <input
                        type="checkbox"
                        id=id
                        value=n.clone()
                        prop:checked=checked
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            let column = column.clone();
                            choices
                                .update(|c| {
                                    c.filters.retain(|f| f != &column);
                                    if on {
                                        c.filters.push(column);
                                    }
                                });
                        }
                    />
                    {format!(" {n}")}
                </label>
            }
        })
        .collect_view();
    view! {
        <section class="card mapping" aria-labelledby="mapping-heading">
            <h2 id="mapping-heading">"Build a mapping"</h2>
            <p class="hint">
                {format!(
                    "No built-in format reads {}. Say which {noun} of its {kind} holds what, and read it through that mapping (loadproof.trace-schema/v1); save it to read the same log with ",
                    draft.source,
                )}
                <code>"loadproof trace inspect LOG --schema MAPPING"</code>
                "."
            </p>
            <fieldset class="identity map-form">
                <legend>{format!("The log's {noun}s")}</legend>
                {select(
                    "map-arrival",
                    "Arrival".to_owned(),
                    "— choose —",
                    |c| &c.arrival,
                    |c, v| c.arrival = v,
                )}
                <label class="field" for="map-unit">
                    <span>"Arrival unit"</span>
                    <select
                        id="map-unit"
                        prop:value=move || choices.with(|c| c.unit.clone())
                        on:change=move |ev| choices.update(|c| c.unit = event_target_value(&ev))
                    >
                        <option value="">"— choose —"</option>
                        <option value="s">"seconds (s)"</option>
                        <option value="ms">"milliseconds (ms)"</option>
                        <option value="us">"microseconds (us)"</option>
                        <option value="ns">"nanoseconds (ns)"</option>
                        <option value="datetime">"date and time"</option>
                    </select>
                </label>
                <Show when=move || choices.with(|c| c.unit == "datetime")>
                    <label class="field" for="map-format">
                        <span>
                            "Layout: iso8601, or a pattern such as %d/%b/%Y:%H:%M:%S %z or %m/%d/%Y %I:%M:%S %p (%f: 1–9 fraction digits)"
                        </span>
                        <input
                            type="text"
                            id="map-format"
                            prop:value=move || choices.with(|c| c.format.clone())
                            on:input=move |ev| choices.update(|c| c.format = event_target_value(&ev))
                        />
                    </label>
                    <label class="field" for="map-zone">
                        <span>"Zone of stamps without an offset (UTC or ±HH:MM)"</span>
                        <input
                            type="text"
                            id="map-zone"
                            prop:value=move || choices.with(|c| c.zone.clone())
                            on:input=move |ev| choices.update(|c| c.zone = event_target_value(&ev))
                        />
                    </label>
                </Show>
                {select(
                    "map-input",
                    "Input (prompt) tokens".to_owned(),
                    "— choose —",
                    |c| &c.input,
                    |c, v| c.input = v,
                )}
                {select(
                    "map-output",
                    "Output (completion) tokens".to_owned(),
                    "— choose —",
                    |c| &c.output,
                    |c, v| c.output = v,
                )}
                {select(
                    "map-session",
                    "Session (optional)".to_owned(),
                    "— none —",
                    |c| &c.session,
                    |c, v| c.session = v,
                )}
                // A CSV cell holds no list: prefix blocks are a JSONL log's only.
                {jsonl
                    .then(|| {
                        view! {
                            {select(
                                "map-prefix",
                                "Prefix block ids (optional: a list of integer ids)".to_owned(),
                                "— none —",
                                |c| &c.prefix_field,
                                |c, v| c.prefix_field = v,
                            )}
                            <Show when=move || choices.with(|c| !c.prefix_field.is_empty())>
                                <label class="field" for="map-block-tokens">
                                    <span>"Tokens per block"</span>
                                    <input
                                        type="number"
                                        min="1"
                                        id="map-block-tokens"
                                        prop:value=move || choices.with(|c| c.block_tokens.clone())
                                        on:input=move |ev| {
                                            choices.update(|c| c.block_tokens = event_target_value(&ev))
                                        }
                                    />
                                </label>
                            </Show>
                        }
                    })}
            </fieldset>
            <fieldset class="map-filters">
                <legend>
                    "Filter columns (optional: the CLI's --where NAME=VALUE keeps rows by them)"
                </legend>
                {filter_boxes}
            </fieldset>
            <p class="actions">
                <button id="map-read" type="button" on:click=read>
                    "Read with this mapping"
                </button>
                " "
                <button id="map-save" type="button" on:click=save>
                    "Save mapping"
                </button>
            </p>
            <Message id="map-error" class="error" role="alert" text=problem />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chosen() -> MappingChoices {
        MappingChoices {
            arrival: "received_at".to_owned(),
            unit: "datetime".to_owned(),
            format: String::new(),
            zone: "UTC".to_owned(),
            input: "prompt".to_owned(),
            output: "completion".to_owned(),
            session: String::new(),
            prefix_field: String::new(),
            block_tokens: String::new(),
            filters: vec!["model".to_owned()],
        }
    }

    #[test]
    fn the_built_mapping_is_core_s_bytes_and_reads_back() {
        let m = chosen().mapping("built").unwrap();
        assert_eq!(m.schema.doc().to_json_bytes(), &*m.bytes);
        assert_eq!(m.schema.doc().arrival.format.as_deref(), Some("iso8601"));
        assert_eq!(
            m.schema.doc().filters.get("model").map(String::as_str),
            Some("model")
        );
    }

    #[test]
    fn an_unchosen_column_is_refused_by_core_with_its_field() {
        let mut c = chosen();
        c.input = String::new();
        let err = c.mapping("built").unwrap_err();
        assert!(
            err.contains("not a trace mapping: field `input_tokens`"),
            "{err}"
        );
        c.unit = String::new();
        assert!(c.mapping("built").unwrap_err().contains("arrival.unit"));
    }

    #[test]
    fn a_declared_layout_is_saved_and_a_bad_one_refused_by_core_at_its_field() {
        let mut c = chosen();
        c.format = " %d/%b/%Y:%H:%M:%S %z ".to_owned();
        let m = c.mapping("built").unwrap();
        assert_eq!(
            m.schema.doc().arrival.format.as_deref(),
            Some("%d/%b/%Y:%H:%M:%S %z")
        );
        c.format = "%d/%b %H:%M".to_owned();
        let err = c.mapping("built").unwrap_err();
        assert!(
            err.contains("arrival.format") && err.contains("year"),
            "{err}"
        );
    }

    #[test]
    fn prefix_blocks_need_a_whole_block_size_and_core_refuses_zero() {
        let mut c = chosen();
        c.prefix_field = "hash_ids".to_owned();
        c.block_tokens = "abc".to_owned();
        assert!(
            c.mapping("built")
                .unwrap_err()
                .contains("prefix_blocks.block_tokens")
        );
        c.block_tokens = "0".to_owned();
        assert!(
            c.mapping("built")
                .unwrap_err()
                .contains("prefix_blocks.block_tokens")
        );
        c.block_tokens = " 512 ".to_owned();
        let doc = c.mapping("built").unwrap().schema.doc().clone();
        assert_eq!(
            doc.prefix_blocks,
            Some(PrefixBlocksField {
                field: "hash_ids".to_owned(),
                block_tokens: 512
            })
        );
    }

    #[test]
    fn a_number_unit_carries_no_zone() {
        let mut c = chosen();
        c.unit = "ms".to_owned();
        assert_eq!(c.mapping("built").unwrap().schema.doc().arrival.zone, None);
        assert_eq!(mapping_file_name("gw.log.csv"), "gw.log.schema.json");
    }
}
