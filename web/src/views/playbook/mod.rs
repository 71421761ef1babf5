//! The playbook view: every row of a playbook, and core's matcher asked about a live trace.
//!
//! The playbook is `playbook.json` from the page's own origin (what `loadproof playbook
//! publish` writes beside the app) or a file the user chooses or drops; it is read by core's
//! `Playbook::from_json`, so a file the CLI refuses is refused here with the same message. The
//! live trace goes through the trace view's ingestion path ([`crate::ingest::ingest_blob`]) and
//! core's `Regime::of`, so its regime is the one `trace inspect` and `playbook match --trace`
//! compute. The verdicts are core's `match_rows` with `MatchPolicy::default()`; the report is
//! also published as `window.loadproofMatch` (the JSON `playbook match --json` prints), so a
//! browser test can compare the page with the CLI.
//!
//! The live traffic may also be a receipt (`loadproof.receipt/v1` JSON, told apart from a
//! trace by its content): its regime is core's `RegimeAxes::of_receipt`, the schedule it fired,
//! and its prefixes and traffic come from the plan it embeds — what `playbook match --receipt`
//! computes. The rows table filters by evidence, model, GPU, engine, knob and free text; every
//! row's per-axis distances are drawn against their tolerances beside the table of the same
//! numbers. Numbers are shown readable ([`crate::widgets::number::readable`]), the exact value in each
//! element's `title`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::claim::{Arm, Metric};
use loadproof_core::plan::PlanDoc;
use loadproof_core::playbook::{
    Concurrency, ConcurrencyError, Distance, Evidence, Identity, MatchPolicy, MatchReport,
    Playbook, Prefixes, Query, Reason, RegimeAxes, RegimeAxis, Row, SourceKind, Traffic, distance,
    knobs_line, match_rows, traffic_of_notes,
};
use loadproof_core::receipt::{Receipt, block, key_value};
use loadproof_core::site::SITE_PLAYBOOK;
use loadproof_core::trace::Trace;
use loadproof_core::{Regime, Window};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_canvas::CanvasBackend;
use web_sys::{File, HtmlCanvasElement};

use crate::ingest::{ReadError, ingest_blob};
use crate::publish::{json_value, publish};
use crate::site::{Fetched, fetch_bytes, read_blob};
use crate::widgets::canvas_figure::{CanvasFigure, DrawProblem};
use crate::widgets::drop_zone::DropZone;
use crate::widgets::number::{count, fixed, js, readable};

/// A playbook as read, and where from.
#[derive(Debug)]
struct Book {
    source: String,
    playbook: Playbook,
}

/// The live traffic as read, and its name: a trace, or a receipt (the schedule it fired).
#[derive(Debug)]
struct Live {
    source: String,
    data: LiveData,
}

#[derive(Debug)]
enum LiveData {
    Trace(Box<Trace>),
    Receipt(Box<Receipt>),
}

/// Bytes read from the head of a live file to tell a receipt from a trace.
const SNIFF_BYTES: f64 = 65_536.0;

/// Whether `head` (the start of a file) is a loadproof receipt: a JSON object whose `schema` is
/// `loadproof.receipt/…`. A Mooncake trace is JSON lines of objects too, but has no `schema`.
fn looks_like_receipt(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if !text.starts_with('{') {
        return false;
    }
    let mut rest = text;
    while let Some((_, after)) = rest.split_once("\"schema\"") {
        let value = after.trim_start();
        if let Some(value) = value.strip_prefix(':')
            && value.trim_start().starts_with("\"loadproof.receipt/")
        {
            return true;
        }
        rest = after;
    }
    false
}

/// The prefixes and traffic a receipt's embedded plan states, when it embeds a readable one
/// (what `playbook match --receipt` reads).
fn plan_of(receipt: &Receipt) -> Option<PlanDoc> {
    receipt.embedded_plan()
}

/// The identity fields of the query, as typed.
#[derive(Debug, Clone, Copy)]
struct Form {
    model: RwSignal<String>,
    revision: RwSignal<String>,
    gpu: RwSignal<String>,
    engine: RwSignal<String>,
    version: RwSignal<String>,
    concurrency: RwSignal<String>,
    knobs: RwSignal<String>,
    traffic: RwSignal<String>,
    window: RwSignal<String>,
}

impl Form {
    fn new() -> Form {
        Form {
            model: RwSignal::new(String::new()),
            revision: RwSignal::new(String::new()),
            gpu: RwSignal::new(String::new()),
            engine: RwSignal::new(String::new()),
            version: RwSignal::new(String::new()),
            concurrency: RwSignal::new("uncapped".to_owned()),
            knobs: RwSignal::new(String::new()),
            traffic: RwSignal::new("recorded".to_owned()),
            window: RwSignal::new("1".to_owned()),
        }
    }

    /// Fills the identity fields from `row` (a convenience: the user edits from there).
    fn prefill(&self, row: &Row) {
        let id = row.identity();
        self.model.set(id.model.clone());
        self.revision.set(id.model_revision.clone());
        self.gpu.set(id.gpu_sku.clone());
        self.engine.set(id.engine.clone());
        self.version.set(id.engine_version.clone());
        self.concurrency.set(match id.concurrency {
            Concurrency::Uncapped => "uncapped".to_owned(),
            Concurrency::Max(n) => n.to_string(),
        });
        self.knobs.set(
            id.knobs
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        self.traffic.set(id.source_kind.traffic.to_string());
        self.window.set(js(row.regime().window_s));
    }
}

/// The row filters, as chosen (an empty string: any).
#[derive(Debug, Clone, Copy)]
struct Filters {
    evidence: RwSignal<String>,
    model: RwSignal<String>,
    gpu: RwSignal<String>,
    engine: RwSignal<String>,
    knob: RwSignal<String>,
    text: RwSignal<String>,
}

impl Filters {
    fn new() -> Filters {
        Filters {
            evidence: RwSignal::new(String::new()),
            model: RwSignal::new(String::new()),
            gpu: RwSignal::new(String::new()),
            engine: RwSignal::new(String::new()),
            knob: RwSignal::new(String::new()),
            text: RwSignal::new(String::new()),
        }
    }

    fn clear(&self) {
        for s in [
            self.evidence,
            self.model,
            self.gpu,
            self.engine,
            self.knob,
            self.text,
        ] {
            s.set(String::new());
        }
    }

    /// Whether `row` passes every filter (tracks the signals).
    fn admits(&self, row: &RowKeys) -> bool {
        let is =
            |chosen: RwSignal<String>, value: &str| chosen.with(|c| c.is_empty() || c == value);
        is(self.evidence, &row.evidence)
            && is(self.model, &row.model)
            && is(self.gpu, &row.gpu)
            && is(self.engine, &row.engine)
            && self
                .knob
                .with(|k| k.is_empty() || row.knobs.iter().any(|n| n == k))
            && self.text.with(|t| {
                t.split_whitespace()
                    .all(|word| row.haystack.contains(&word.to_lowercase()))
            })
    }
}

/// What the filters compare of one row.
#[derive(Debug, Clone)]
struct RowKeys {
    evidence: String,
    model: String,
    gpu: String,
    engine: String,
    knobs: Vec<String>,
    /// Everything the free-text filter searches, lowercase.
    haystack: String,
}

impl RowKeys {
    fn of(row: &Row) -> RowKeys {
        let id = row.identity();
        let p = row.provenance();
        let haystack = [
            row.id().to_owned(),
            row.evidence().to_string(),
            format!("{} {}", id.model, id.model_revision),
            id.gpu_sku.clone(),
            format!("{} {}", id.engine, id.engine_version),
            id.source_kind.to_string(),
            format!("concurrency {}", id.concurrency),
            knobs_line(&id.knobs),
            row.notes().join(" "),
            row.invalidation().map_or_else(
                || "valid".to_owned(),
                |i| format!("invalidated {}", i.reason),
            ),
            p.trace_sha256.clone(),
            p.baseline_receipts.join(" "),
            p.treatment_receipts.join(" "),
        ]
        .join(" ")
        .to_lowercase();
        RowKeys {
            evidence: row.evidence().to_string(),
            model: id.model.clone(),
            gpu: id.gpu_sku.clone(),
            engine: engine_of(id),
            knobs: id.knobs.keys().cloned().collect(),
            haystack,
        }
    }
}

fn engine_of(id: &Identity) -> String {
    format!("{} {}", id.engine, id.engine_version)
}

/// The playbook table and the matcher.
#[component]
pub fn PlaybookView() -> impl IntoView {
    let book: RwSignal<Option<Arc<Book>>> = RwSignal::new(None);
    let book_error = RwSignal::new(None::<String>);
    let book_status = RwSignal::new(format!("Looking for {SITE_PLAYBOOK} on this site…"));
    let live: RwSignal<Option<Arc<Live>>> = RwSignal::new(None);
    let live_error = RwSignal::new(None::<String>);
    let live_reading = RwSignal::new(None::<String>);
    let form = Form::new();
    let filters = Filters::new();
    let chosen = RwSignal::new(None::<usize>);
    let generation = StoredValue::new(0u64);

    let accept_book = move |source: String, bytes: &[u8]| match Playbook::from_json(bytes) {
        Ok(playbook) => {
            if let Some(first) = playbook.rows().first() {
                form.prefill(first);
            }
            book_error.set(None);
            chosen.set(None);
            book.set(Some(Arc::new(Book { source, playbook })));
        }
        Err(err) => {
            book.set(None);
            book_error.set(Some(format!("{source}: {err}")));
        }
    };

    // The site's own playbook, when it has one (a relative URL: same origin, same directory).
    spawn_local(async move {
        match fetch_bytes(SITE_PLAYBOOK).await {
            Ok(Fetched::Body(bytes)) => {
                if book.get_untracked().is_none() {
                    accept_book(format!("{SITE_PLAYBOOK} (this site)"), &bytes);
                }
                book_status.set(String::new());
            }
            Ok(Fetched::Status(code)) => book_status.set(format!(
                "This site serves no {SITE_PLAYBOOK} (HTTP {code}): choose or drop a playbook file."
            )),
            Err(err) => book_status.set(format!(
                "Could not read {SITE_PLAYBOOK} from this site ({err}): choose or drop a playbook file."
            )),
        }
    });

    let start_book = move |file: File| {
        let name = file.name();
        spawn_local(async move {
            match read_blob(&file).await {
                Ok(bytes) => {
                    book_status.set(String::new());
                    accept_book(name, &bytes);
                }
                Err(err) => book_error.set(Some(format!(
                    "{name}: the browser could not read the file: {err}"
                ))),
            }
        });
    };

    let start_live = move |file: File| {
        let this_load = generation.get_value() + 1;
        generation.set_value(this_load);
        let name = file.name();
        live.set(None);
        live_error.set(None);
        live_reading.set(Some(name.clone()));
        spawn_local(async move {
            let is_current = move || generation.get_value() == this_load;
            let head = match file.slice_with_f64_and_f64(0.0, SNIFF_BYTES) {
                Ok(blob) => read_blob(&blob).await.unwrap_or_default(),
                Err(_) => Vec::new(),
            };
            let result = if looks_like_receipt(&head) {
                match read_blob(&file).await {
                    Ok(bytes) => Receipt::from_json(&bytes)
                        .map(|r| LiveData::Receipt(Box::new(r)))
                        .map_err(|e| format!("{name}: {e}")),
                    Err(err) => Err(format!(
                        "{name}: the browser could not read the file: {err}"
                    )),
                }
            } else {
                match ingest_blob(&file, |_, _| {}, is_current).await {
                    Ok(trace) => Ok(LiveData::Trace(Box::new(trace))),
                    Err(ReadError::Superseded) => return,
                    Err(err) => Err(format!("{name}: {err}")),
                }
            };
            if !is_current() {
                return;
            }
            live_reading.set(None);
            match result {
                Ok(data) => {
                    // The receipt's plan says where its traffic came from, as `--receipt` reads
                    // it; the user may still change it.
                    if let LiveData::Receipt(r) = &data
                        && let Some(plan) = plan_of(r)
                        && let Ok(traffic) = traffic_of_notes(&plan.notes)
                    {
                        form.traffic.set(traffic.to_string());
                    }
                    live.set(Some(Arc::new(Live { source: name, data })));
                }
                Err(e) => live_error.set(Some(e)),
            }
        });
    };

    let outcome = Memo::new(move |_| {
        let book = book.get()?;
        let live = live.get()?;
        Some(run_match(&book.playbook, &live, &form))
    });
    Effect::new(move |_| {
        outcome.with(|o| {
            let report = o.as_ref().and_then(|r| r.as_ref().map(|m| &m.report).ok());
            publish("loadproofMatch", &json_value(report));
        });
    });

    view! {
        <section class="card wide" aria-labelledby="playbook-heading">
            <h2 id="playbook-heading">"Playbook"</h2>
            <p class="hint">
                "A playbook row says: this knob, on this model and GPU, under this traffic, moved these numbers. "
                "Rows marked illustrative hold invented numbers and are never selected. "
                "Numbers are rounded for reading; hover over one for its exact value."
            </p>
            <DropZone id="playbook-file" on_file=start_book>
                "Choose a playbook file (loadproof.playbook/v1 JSON), or drop one here."
            </DropZone>
            <p id="playbook-status" class="hint" role="status">{move || book_status.get()}</p>
            {move || {
                book_error
                    .get()
                    .map(|e| view! { <p id="playbook-error" class="error" role="alert">{e}</p> })
            }}
            {move || book.get().map(|b| view! { <RowsTable book=b filters=filters form=form /> })}
        </section>
        <section class="card wide" aria-labelledby="match-heading">
            <h2 id="match-heading">"Which rows apply to my traffic?"</h2>
            <p class="hint">
                "Choose or drop a live trace, or a receipt, and say what you serve. A trace's regime is computed as the Trace view computes it; "
                "a receipt's is the schedule it fired (its embedded plan/timed_trace.jsonl), with its prefixes and traffic from its embedded plan. "
                "Every row is judged by the same matcher as "
                <code>"loadproof playbook match"</code>
                " (with "<code>"--trace"</code>" or "<code>"--receipt"</code>") with the default policy (every gate exact, rate not an axis, no calibrated tolerance)."
            </p>
            <DropZone id="live-file" on_file=start_live>
                "Choose a live trace (BurstGPT CSV, Mooncake JSONL or Azure CSV) or a receipt (loadproof.receipt/v1 JSON), or drop one here."
            </DropZone>
            {move || {
                live_reading
                    .get()
                    .map(|n| view! { <p class="reading" role="status">"Reading " {n} "…"</p> })
            }}
            {move || {
                live_error
                    .get()
                    .map(|e| view! { <p id="live-error" class="error" role="alert">{e}</p> })
            }}
            <IdentityForm form=form />
            {move || match outcome.get() {
                None => {
                    view! {
                        <p id="match-waiting" class="hint">
                            {if book.with(Option::is_none) {
                                "Load a playbook first."
                            } else {
                                "Choose a live trace or a receipt to see which rows apply."
                            }}
                        </p>
                    }
                        .into_any()
                }
                Some(Err(e)) => view! { <p id="match-error" class="error" role="alert">{e}</p> }.into_any(),
                Some(Ok(m)) => view! { <MatchTable outcome=m book=book chosen=chosen /> }.into_any(),
            }}
        </section>
    }
}
/// The identity the query states, one labelled input per field.
#[component]
fn IdentityForm(form: Form) -> impl IntoView {
    let field = |id: &'static str, label: &'static str, signal: RwSignal<String>| {
        view! {
            <label class="field" for=id>
                <span>{label}</span>
                <input
                    type="text"
                    id=id
                    prop:value=move || signal.get()
                    on:input=move |ev| signal.set(event_target_value(&ev))
                />
            </label>
        }
    };
    view! {
        <fieldset class="identity">
            <legend>"What you serve (prefilled from the playbook's first row, or the row whose “Use as query” you pressed)"</legend>
            {field("q-model", "Model", form.model)}
            {field("q-revision", "Model revision", form.revision)}
            {field("q-gpu", "GPU SKU", form.gpu)}
            {field("q-engine", "Engine", form.engine)}
            {field("q-version", "Engine version", form.version)}
            {field("q-concurrency", "Concurrency (a number, or uncapped)", form.concurrency)}
            <label class="field" for="q-traffic">
                <span>"Traffic"</span>
                <select
                    id="q-traffic"
                    prop:value=move || form.traffic.get()
                    on:change=move |ev| form.traffic.set(event_target_value(&ev))
                >
                    <option value="recorded">"recorded"</option>
                    <option value="synthetic">"synthetic"</option>
                </select>
            </label>
            {field("q-window", "Burstiness window, seconds", form.window)}
            <label class="field knobs" for="q-knobs">
                <span>"Knobs, KEY=VALUE, one per line"</span>
                <textarea
                    id="q-knobs"
                    rows="3"
                    prop:value=move || form.knobs.get()
                    on:input=move |ev| form.knobs.set(event_target_value(&ev))
                ></textarea>
            </label>
        </fieldset>
    }
}

/// One row per playbook row: what it claims and where the claim comes from, behind filters.
#[component]
fn RowsTable(book: Arc<Book>, filters: Filters, form: Form) -> impl IntoView {
    let rows = book.playbook.rows().to_vec();
    let n = rows.len();
    let measured = rows
        .iter()
        .filter(|r| r.evidence() == Evidence::Measured)
        .count();
    let keys: Arc<Vec<RowKeys>> = Arc::new(rows.iter().map(RowKeys::of).collect());
    let distinct = |pick: fn(&RowKeys) -> Vec<String>| -> Vec<String> {
        keys.iter()
            .flat_map(pick)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let models = distinct(|k| vec![k.model.clone()]);
    let gpus = distinct(|k| vec![k.gpu.clone()]);
    let engines = distinct(|k| vec![k.engine.clone()]);
    let knobs = distinct(|k| k.knobs.clone());
    let shown_keys = Arc::clone(&keys);
    let showing = Memo::new(move |_| shown_keys.iter().filter(|k| filters.admits(k)).count());
    let select = move |id: &'static str,
                       label: &'static str,
                       any: &'static str,
                       signal: RwSignal<String>,
                       options: Vec<(String, String)>| {
        view! {
            <label class="field" for=id>
                <span>{label}</span>
                <select
                    id=id
                    prop:value=move || signal.get()
                    on:change=move |ev| signal.set(event_target_value(&ev))
                >
                    <option value="">{any}</option>
                    {options
                        .into_iter()
                        .map(|(value, text)| view! { <option value=value>{text}</option> })
                        .collect_view()}
                </select>
            </label>
        }
    };
    let same = |v: Vec<String>| v.into_iter().map(|x| (x.clone(), x)).collect::<Vec<_>>();
    view! {
        <p id="playbook-source">
            {book.source.clone()} ": " <span id="playbook-count">{n.to_string()}</span> " row(s), "
            {measured.to_string()} " measured, " {(n - measured).to_string()} " illustrative"
        </p>
        <fieldset class="filters" aria-describedby="playbook-showing">
            <legend>"Filter the rows"</legend>
            {select(
                "f-evidence",
                "Evidence",
                "measured and illustrative",
                filters.evidence,
                vec![
                    ("measured".to_owned(), "measured".to_owned()),
                    ("illustrative".to_owned(), "illustrative".to_owned()),
                ],
            )}
            {select("f-model", "Model", "any model", filters.model, same(models))}
            {select("f-gpu", "GPU", "any GPU", filters.gpu, same(gpus))}
            {select("f-engine", "Engine", "any engine", filters.engine, same(engines))}
            {select("f-knob", "Knob", "any knob", filters.knob, same(knobs))}
            <label class="field text" for="f-text">
                <span>"Text (every word must appear: id, identity, knobs, notes, digests)"</span>
                <input
                    type="search"
                    id="f-text"
                    prop:value=move || filters.text.get()
                    on:input=move |ev| filters.text.set(event_target_value(&ev))
                    on:keydown=move |ev: web_sys::KeyboardEvent| {
                        if ev.key() == "Escape" {
                            filters.text.set(String::new());
                        }
                    }
                />
            </label>
            <div class="filter-end">
                <button type="button" id="f-clear" on:click=move |_| filters.clear()>
                    "Clear filters"
                </button>
                <p id="playbook-showing" role="status" aria-live="polite">
                    {move || format!("Showing {} of {} rows", count(showing.get()), count(n))}
                </p>
            </div>
        </fieldset>
        <div class="scroll">
            <table id="playbook-rows">
                <thead>
                    <tr>
                        <th scope="col">"Row"</th>
                        <th scope="col">"Identity"</th>
                        <th scope="col">"Regime"</th>
                        <th scope="col">"Delta (medians; change = treatment vs baseline)"</th>
                        <th scope="col">"Provenance"</th>
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .enumerate()
                        .map(|(i, row)| {
                            let keys = Arc::clone(&keys);
                            let hidden = Signal::derive(move || {
                                !keys.get(i).is_some_and(|k| filters.admits(k))
                            });
                            view! { <RowLine row=row hidden=hidden form=form /> }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
        {move || {
            (showing.get() == 0)
                .then(|| view! { <p id="playbook-none" class="hint">"No row passes the filters."</p> })
        }}
    }
}

/// A number for reading, its exact value as the tooltip and in `data-value`.
fn num_view(x: f64) -> impl IntoView {
    view! { <span class="n" title=js(x) data-value=js(x)>{readable(x)}</span> }
}

#[component]
fn RowLine(row: Row, hidden: Signal<bool>, form: Form) -> impl IntoView {
    let evidence = row.evidence();
    let id = row.identity().clone();
    let regime = *row.regime();
    let delta = row.delta().clone();
    let provenance = row.provenance().clone();
    let invalidation = row
        .invalidation()
        .map(|i| {
            format!(
                "invalidated: {}{}",
                i.reason,
                i.by.as_deref()
                    .map_or(String::new(), |b| format!(" (by {b})"))
            )
        })
        .unwrap_or_else(|| "valid".to_owned());
    let invalid = row.invalidation().is_some();
    let notes = row.notes().to_vec();
    let concurrency = id.concurrency.to_string();
    let row_id = row.id().to_owned();
    let for_query = row.clone();
    view! {
        <tr data-row-id=row_id.clone() hidden=move || hidden.get()>
            <td>
                <div class="row-id mono">{row_id.clone()}</div>
                <span class=format!("badge {evidence}") data-evidence=evidence.to_string()>
                    {match evidence {
                        Evidence::Measured => "MEASURED",
                        Evidence::Illustrative => "ILLUSTRATIVE: invented numbers",
                    }}
                </span>
                <div class="invalidation" class:bad=invalid>{invalidation}</div>
                {(!notes.is_empty())
                    .then(|| {
                        view! {
                            <details class="notes">
                                <summary>{format!("{} note(s)", notes.len())}</summary>
                                <ul>{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                            </details>
                        }
                    })}
                <button
                    type="button"
                    class="use-row"
                    data-row-id=row_id.clone()
                    title="Copy this row's model, GPU, engine, concurrency, knobs, traffic and window into the query below"
                    on:click=move |_| form.prefill(&for_query)
                >
                    "Use as query"
                </button>
            </td>
            <td class="identity-cell">
                <div>{format!("{}@{}", id.model, id.model_revision)}</div>
                <div>{id.gpu_sku.clone()}</div>
                <div>{format!("{}@{}", id.engine, id.engine_version)}</div>
                <div>{id.source_kind.to_string()}</div>
                <div>{format!("concurrency {concurrency}")}</div>
                <div class="mono">{knobs_line(&id.knobs)}</div>
            </td>
            <td class="mono regime-cell">
                {RegimeAxis::ALL
                    .iter()
                    .map(|axis| {
                        view! {
                            <div data-axis=axis.name()>{format!("{axis} ")} {num_view(regime.get(*axis))}</div>
                        }
                    })
                    .collect_view()}
                <div data-axis="window_s">"window " {num_view(regime.window_s)} " s"</div>
            </td>
            <td>
                <table class="delta">
                    <thead>
                        <tr>
                            <th scope="col">"metric"</th>
                            <th scope="col" class="num">"baseline"</th>
                            <th scope="col" class="num">"treatment"</th>
                            <th scope="col" class="num">"change"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {Metric::ALL
                            .iter()
                            .map(|m| {
                                let change = delta.change().get(*m);
                                let base = delta.baseline().get(*m).median;
                                let treat = delta.treatment().get(*m).median;
                                view! {
                                    <tr data-metric=m.name()>
                                        <th scope="row">{m.name()}</th>
                                        <td class="num" title=js(base)>{readable(base)}</td>
                                        <td class="num" title=js(treat)>{readable(treat)}</td>
                                        <td class="num" title=js(change)>{format!("{:+.1}%", change * 100.0)}</td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
                <div class="hint">{format!("{} repeat(s) per arm", delta.repeats())}</div>
            </td>
            <td class="provenance">
                <div>"trace " <Digest sha256=provenance.trace_sha256.clone() /></div>
                {[Arm::Baseline, Arm::Treatment]
                    .into_iter()
                    .map(|arm| {
                        let receipts = provenance.receipts(arm).to_vec();
                        view! {
                            <div class="receipts" data-arm=arm.to_string()>
                                {format!("{arm} receipts ({}): ", receipts.len())}
                                {if receipts.is_empty() {
                                    view! { <span class="hint">"none"</span> }.into_any()
                                } else {
                                    receipts
                                        .into_iter()
                                        .map(|r| view! { <Digest sha256=r /> })
                                        .collect_view()
                                        .into_any()
                                }}
                            </div>
                        }
                    })
                    .collect_view()}
            </td>
        </tr>
    }
}

/// A sha256 abbreviated to 12 hex digits; the whole digest is the tooltip and, expanded,
/// selectable text.
#[component]
fn Digest(sha256: String) -> impl IntoView {
    let short = format!("{}…", sha256.get(..12).unwrap_or(&sha256));
    let title = sha256.clone();
    view! {
        <details class="digest" title=title>
            <summary class="mono">{short}</summary>
            <code class="mono full">{sha256}</code>
        </details>
    }
}

/// Core's match report and how the live traffic was read.
#[derive(Debug, Clone, PartialEq)]
struct Matched {
    report: MatchReport,
    /// The live file and what its regime is (a trace's, or a receipt's fired schedule).
    described: String,
}

/// One row's per-axis distances to the query: the matcher's own (rows it judged on distance),
/// or core's `distance` for reference (rows refused before distance: illustrative, invalidated,
/// gated).
#[derive(Debug, Clone, PartialEq)]
struct RowDistance {
    index: usize,
    id: String,
    distance: Distance,
    from_matcher: bool,
}

fn row_distances(report: &MatchReport, rows: &[Row]) -> BTreeMap<usize, RowDistance> {
    let mut out = BTreeMap::new();
    for s in &report.selected {
        out.insert(
            s.row.index,
            RowDistance {
                index: s.row.index,
                id: s.row.id.clone(),
                distance: s.distance.clone(),
                from_matcher: true,
            },
        );
    }
    for r in &report.rejected {
        let judged = match &r.reason {
            Reason::OutsideTolerance { distances, .. } | Reason::Uncalibrated { distances, .. } => {
                Some((distances.clone(), true))
            }
            _ => rows
                .get(r.row.index)
                .and_then(|row| {
                    distance(
                        row.regime(),
                        &report.query.regime,
                        report.policy.rate_is_axis,
                    )
                    .ok()
                })
                .map(|d| (d, false)),
        };
        if let Some((distance, from_matcher)) = judged {
            out.insert(
                r.row.index,
                RowDistance {
                    index: r.row.index,
                    id: r.row.id.clone(),
                    distance,
                    from_matcher,
                },
            );
        }
    }
    out
}

/// Every row's verdict, in playbook order, and the chosen row's per-axis distances.
#[component]
fn MatchTable(
    outcome: Matched,
    book: RwSignal<Option<Arc<Book>>>,
    chosen: RwSignal<Option<usize>>,
) -> impl IntoView {
    let Matched {
        report: outcome,
        described,
    } = outcome;
    let q = &outcome.query;
    let n_rows = book.with(|b| b.as_ref().map_or(0, |b| b.playbook.rows().len()));
    let distances = book.with(|b| {
        b.as_ref()
            .map(|b| row_distances(&outcome, b.playbook.rows()))
            .unwrap_or_default()
    });
    // The chart shows the row chosen, else the nearest applicable row, else the first row the
    // matcher measured, else the first row with any distance.
    let default_row = outcome
        .selected
        .first()
        .map(|s| s.row.index)
        .or_else(|| distances.values().find(|d| d.from_matcher).map(|d| d.index))
        .or_else(|| distances.keys().next().copied());
    let distances = Arc::new(distances);
    let shown = {
        let distances = Arc::clone(&distances);
        Memo::new(move |_| {
            chosen
                .get()
                .filter(|i| distances.contains_key(i))
                .or(default_row)
        })
    };
    let chart_button = {
        let distances = Arc::clone(&distances);
        move |index: usize, id: String| {
            if distances.contains_key(&index) {
                view! {
                    <button
                        type="button"
                        class="show-distances"
                        data-row-id=id
                        aria-controls="distance-panel"
                        aria-pressed=move || (shown.get() == Some(index)).to_string()
                        on:click=move |_| chosen.set(Some(index))
                    >
                        "Per-axis chart"
                    </button>
                }
                .into_any()
            } else {
                view! { <span class="hint">"— (windows differ)"</span> }.into_any()
            }
        }
    };
    let mut lines: BTreeMap<usize, AnyView> = BTreeMap::new();
    for s in &outcome.selected {
        let limiting = if s.exact {
            "exact regime match".to_owned()
        } else {
            s.distance
                .limiting
                .map_or("exact regime match".to_owned(), |a| a.to_string())
        };
        lines.insert(
            s.row.index,
            view! {
                <tr data-row-id=s.row.id.clone() data-verdict="applies">
                    <td class="mono">{s.row.id.clone()}</td>
                    <td class="good">"APPLIES"</td>
                    <td class="num" title=js(s.distance.linf) data-value=js(s.distance.linf)>
                        {fixed(s.distance.linf, 3)}
                    </td>
                    <td>{limiting}</td>
                    <td>
                        {if s.delta_is_floor {
                            "delta_is_floor: a lower bound (prefix-dependent knob on synthesized prefixes)"
                        } else {
                            "no"
                        }}
                    </td>
                    <td class="reason">"—"</td>
                    <td>{chart_button(s.row.index, s.row.id.clone())}</td>
                </tr>
            }
            .into_any(),
        );
    }
    for r in &outcome.rejected {
        let (linf, limiting) = match &r.reason {
            Reason::OutsideTolerance { distances, .. } | Reason::Uncalibrated { distances, .. } => {
                (
                    view! {
                        <td class="num" title=js(distances.linf) data-value=js(distances.linf)>
                            {fixed(distances.linf, 3)}
                        </td>
                    }
                    .into_any(),
                    distances
                        .limiting
                        .map_or_else(|| "—".to_owned(), |a| a.to_string()),
                )
            }
            _ => (
                view! { <td class="num">"—"</td> }.into_any(),
                "—".to_owned(),
            ),
        };
        lines.insert(
            r.row.index,
            view! {
                <tr data-row-id=r.row.id.clone() data-verdict="rejected">
                    <td class="mono">{r.row.id.clone()}</td>
                    <td class="bad">"does not apply"</td>
                    {linf}
                    <td>{limiting}</td>
                    <td>"—"</td>
                    <td class="reason">{r.reason.to_string()}</td>
                    <td>{chart_button(r.row.index, r.row.id.clone())}</td>
                </tr>
            }
            .into_any(),
        );
    }
    let regime = q.regime;
    let policy = outcome.policy.clone();
    let query_regime = q.regime;
    view! {
        <p id="match-query" class="mono">
            {format!(
                "query: {}@{}, {}, {}@{}, {}, concurrency {}, {}",
                q.identity.model,
                q.identity.model_revision,
                q.identity.gpu_sku,
                q.identity.engine,
                q.identity.engine_version,
                q.identity.source_kind,
                q.identity.concurrency,
                knobs_line(&q.identity.knobs),
            )}
            <br />
            <span id="match-regime">
                {format!("regime of {described}: ")}
                {RegimeAxis::ALL
                    .iter()
                    .map(|a| {
                        view! {
                            <span class="axis" data-axis=a.name()>
                                {format!("{a} ")}
                                {num_view(regime.get(*a))}
                                ", "
                            </span>
                        }
                    })
                    .collect_view()}
                <span class="axis" data-axis="window_s">"window " {num_view(regime.window_s)} " s"</span>
            </span>
        </p>
        <p id="match-summary">
            {format!("{} of {n_rows} row(s) apply", outcome.selected.len())}
        </p>
        <div class="scroll">
            <table id="match-results">
                <thead>
                    <tr>
                        <th scope="col">"Row"</th>
                        <th scope="col">"Verdict"</th>
                        <th scope="col" class="num">"Distance (L∞)"</th>
                        <th scope="col">"Limiting axis"</th>
                        <th scope="col">"Floor"</th>
                        <th scope="col">"Why not"</th>
                        <th scope="col">"Distances"</th>
                    </tr>
                </thead>
                <tbody>{lines.into_values().collect_view()}</tbody>
            </table>
        </div>
        {move || {
            shown
                .get()
                .and_then(|i| distances.get(&i).cloned())
                .map(|d| {
                    view! { <DistancePanel row=d policy=policy.clone() query=query_regime /> }
                })
        }}
    }
}

/// One axis of the chart and its table.
#[derive(Debug, Clone, PartialEq)]
struct AxisLine {
    axis: RegimeAxis,
    row: f64,
    query: f64,
    distance: f64,
    tolerance: Option<(f64, String)>,
    limiting: bool,
}

impl AxisLine {
    fn status(&self) -> &'static str {
        match &self.tolerance {
            Some((t, _)) if self.distance > *t => "over tolerance",
            Some(_) => "within tolerance",
            None if self.distance == 0.0 => "equal",
            None => "uncalibrated",
        }
    }
}

/// The chosen row's distance per axis: a bar chart against the tolerances, and the same
/// numbers in a table (the chart's text alternative).
#[component]
fn DistancePanel(row: RowDistance, policy: MatchPolicy, query: RegimeAxes) -> impl IntoView {
    let lines: Vec<AxisLine> = row
        .distance
        .axes
        .iter()
        .map(|a| AxisLine {
            axis: a.axis,
            row: a.row,
            query: a.query,
            distance: a.distance,
            tolerance: policy
                .tolerances
                .get(a.axis)
                .map(|t| (t.max_distance(), t.calibration().to_owned())),
            limiting: row.distance.limiting == Some(a.axis),
        })
        .collect();
    let problem = RwSignal::new(None::<String>);
    let drawn = lines.clone();
    let linf = row.distance.linf;
    let limiting = row
        .distance
        .limiting
        .map_or_else(|| "none: every axis is at 0".to_owned(), |a| a.to_string());
    let rate_note = if policy.rate_is_axis {
        ""
    } else {
        " Rate is not an axis under this policy, so it has no bar."
    };
    let source_note = if row.from_matcher {
        "The matcher's own distances for this row (the numbers in window.loadproofMatch)."
    } else {
        "For reference only: the matcher refused this row before comparing regimes (see “Why not”), so these distances decide nothing; core computed them the same way."
    };
    let height = (70 + 46 * lines.len()).to_string();
    let window = query.window_s;
    view! {
        <div
            id="distance-panel"
            class="distance-panel"
            data-row-id=row.id.clone()
            data-source=if row.from_matcher { "matcher" } else { "reference" }
        >
            <h3 id="distance-heading">{format!("Per-axis distance: {}", row.id)}</h3>
            <p class="hint">
                "Each bar is |log2(row / query)| on one axis (burstiness: |log2((1+row)/(1+query))|, at the "
                {num_view(window)}
                " s window); the row is as far as its worst axis (L∞), the limiting axis, drawn in orange. "
                "A black tick marks an axis's calibrated tolerance; none is calibrated yet, so any nonzero bar leaves the row uncalibrated."
                {rate_note}
                " "
                {source_note}
            </p>
            <p id="distance-linf">
                "L∞ "
                <strong title=js(linf) data-value=js(linf)>{fixed(linf, 3)}</strong>
                ", limiting axis "
                <strong id="distance-limiting">{limiting}</strong>
            </p>
            <div class="figure">
                <div>
                    <CanvasFigure
                        id="distance-chart"
                        width="640"
                        height=height
                        alt="Bar chart of the distance per regime axis, limiting axis highlighted; the numbers are in the table beside it."
                        problem=problem
                        draw=move |canvas| draw_distances(canvas, &drawn)
                    />
                    <DrawProblem problem=problem role="alert" />
                </div>
                <div class="numbers">
                    <table id="distance-table">
                        <caption>{format!("Distance per axis, row {} vs the query", row.id)}</caption>
                        <thead>
                            <tr>
                                <th scope="col">"Axis"</th>
                                <th scope="col" class="num">"Row"</th>
                                <th scope="col" class="num">"Query"</th>
                                <th scope="col" class="num">"|log2| distance"</th>
                                <th scope="col" class="num">"Tolerance"</th>
                                <th scope="col">"Standing"</th>
                            </tr>
                        </thead>
                        <tbody>
                            {lines
                                .into_iter()
                                .map(|l| {
                                    let status = l.status();
                                    let tolerance = match &l.tolerance {
                                        Some((t, cite)) => {
                                            view! { <td class="num" title=cite.clone()>{fixed(*t, 3)}</td> }.into_any()
                                        }
                                        None => view! { <td class="num">"none"</td> }.into_any(),
                                    };
                                    view! {
                                        <tr
                                            data-axis=l.axis.name()
                                            data-limiting=l.limiting.to_string()
                                            class:limiting=l.limiting
                                        >
                                            <th scope="row">{l.axis.name()}</th>
                                            <td class="num">{num_view(l.row)}</td>
                                            <td class="num">{num_view(l.query)}</td>
                                            <td class="num distance" title=js(l.distance) data-value=js(l.distance)>
                                                {fixed(l.distance, 3)}
                                            </td>
                                            {tolerance}
                                            <td>
                                                {if l.limiting { format!("limiting (L∞); {status}") } else { status.to_owned() }}
                                            </td>
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                </div>
            </div>
        </div>
    }
}

const BAR: RGBColor = RGBColor(37, 99, 235);
const LIMITING: RGBColor = RGBColor(217, 119, 6);
const CHART_FONT: (&str, u32) = ("sans-serif", 14);

/// Horizontal bars, one per axis (the first at the top), the limiting one highlighted, a
/// tick at each calibrated tolerance, each bar labelled with its distance.
fn draw_distances(canvas: HtmlCanvasElement, lines: &[AxisLine]) -> Result<(), String> {
    let backend = CanvasBackend::with_canvas_object(canvas)
        .ok_or_else(|| "this browser gives the canvas no 2D context".to_owned())?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(chart_error)?;
    let n = lines.len() as f64;
    let top = lines
        .iter()
        .map(|l| l.distance.max(l.tolerance.as_ref().map_or(0.0, |t| t.0)))
        .fold(0.0f64, f64::max);
    let x_max = if top > 0.0 { top * 1.2 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(104)
        .build_cartesian_2d(0f64..x_max, 0f64..n.max(1.0))
        .map_err(chart_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .y_label_formatter(&|_| String::new())
        .x_desc("|log2| distance, row vs query")
        .label_style(CHART_FONT)
        .x_label_formatter(&|v| readable(*v))
        .draw()
        .map_err(chart_error)?;
    // Bar k spans [slot, slot + 1) with slot counted from the top.
    let slot = |k: usize| n - 1.0 - k as f64;
    chart
        .draw_series(lines.iter().enumerate().map(|(k, l)| {
            let color = if l.limiting { LIMITING } else { BAR };
            Rectangle::new(
                [(0.0, slot(k) + 0.2), (l.distance, slot(k) + 0.8)],
                color.filled(),
            )
        }))
        .map_err(chart_error)?;
    chart
        .draw_series(lines.iter().enumerate().filter_map(|(k, l)| {
            l.tolerance.as_ref().map(|(t, _)| {
                PathElement::new(
                    vec![(*t, slot(k) + 0.05), (*t, slot(k) + 0.95)],
                    BLACK.stroke_width(3),
                )
            })
        }))
        .map_err(chart_error)?;
    let value_style =
        TextStyle::from(CHART_FONT.into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    chart
        .draw_series(lines.iter().enumerate().map(|(k, l)| {
            let label = if l.limiting {
                format!("{} (limiting)", fixed(l.distance, 3))
            } else {
                fixed(l.distance, 3)
            };
            Text::new(label, (l.distance, slot(k) + 0.5), value_style.clone())
        }))
        .map_err(chart_error)?;
    let name_style =
        TextStyle::from(CHART_FONT.into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, l) in lines.iter().enumerate() {
        let (_, y) = chart.backend_coord(&(0.0, slot(k) + 0.5));
        root.draw(&Text::new(l.axis.name(), (12, y), name_style.clone()))
            .map_err(chart_error)?;
    }
    root.present().map_err(chart_error)
}

fn chart_error(err: impl std::fmt::Display) -> String {
    format!("could not draw the chart: {err}")
}

/// Core's verdicts for the live traffic under the typed identity, or what is wrong with the
/// input (named by field).
fn run_match(book: &Playbook, live: &Live, form: &Form) -> Result<Matched, String> {
    let window_text = form.window.get();
    let window = window_text
        .trim()
        .parse::<f64>()
        .ok()
        .and_then(Window::from_secs)
        .ok_or_else(|| {
            format!("Burstiness window: {window_text:?} is not a positive number of seconds")
        })?;
    let source = &live.source;
    let (axes, prefixes, described) = match &live.data {
        LiveData::Trace(trace) => {
            let regime = Regime::of(trace, window).map_err(|e| format!("{source}: {e}"))?;
            let axes = RegimeAxes::of(&regime)
                .map_err(|e| format!("{source}: the live trace's regime cannot be matched: {e}"))?;
            (
                axes,
                Prefixes::of_trace(trace),
                format!("{source} ({} requests)", count(regime.requests as usize)),
            )
        }
        LiveData::Receipt(receipt) => {
            let (axes, requests) = RegimeAxes::of_receipt(receipt, window)
                .map_err(|e| format!("{source}: the receipt's regime cannot be matched: {e}"))?;
            let prefixes = plan_of(receipt).map(|p| Prefixes::of_plan(&p)).ok_or_else(|| {
                format!(
                    "{source}: the receipt embeds no readable plan (evidence block {:?}), so whether its prefixes were its own is unknown",
                    block::PLAN
                )
            })?;
            (
                axes,
                prefixes,
                format!(
                    "{source} (a receipt: the schedule it fired, {} requests)",
                    count(requests)
                ),
            )
        }
    };
    let concurrency_text = form.concurrency.get();
    let concurrency = concurrency_text
        .trim()
        .parse::<Concurrency>()
        .map_err(|_| ConcurrencyError {
            text: concurrency_text.clone(),
        })
        .map_err(|e| format!("Concurrency: {e}"))?;
    let mut knobs = BTreeMap::new();
    for (i, line) in form.knobs.get().lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (k, v) = key_value(line)
            .ok_or_else(|| format!("Knobs, line {}: {line:?} is not KEY=VALUE", i + 1))?;
        knobs.insert(k.to_owned(), v.to_owned());
    }
    let traffic = match form.traffic.get().as_str() {
        "synthetic" => Traffic::Synthetic,
        _ => Traffic::Recorded,
    };
    let query = Query {
        identity: Identity {
            model: form.model.get(),
            model_revision: form.revision.get(),
            gpu_sku: form.gpu.get(),
            engine: form.engine.get(),
            engine_version: form.version.get(),
            source_kind: SourceKind { traffic, prefixes },
            concurrency,
            knobs,
        },
        regime: axes,
    };
    let report = match_rows(book.rows(), &query, &MatchPolicy::default())
        .map_err(|e| format!("the query's regime: {e}"))?;
    Ok(Matched { report, described })
}
