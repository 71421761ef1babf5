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

use std::collections::BTreeMap;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::playbook::{
    Arm, Concurrency, Evidence, Identity, MatchPolicy, MatchReport, Metric, Playbook, Prefixes,
    Query, RegimeAxes, RegimeAxis, Row, SourceKind, Traffic, knobs_line, match_rows,
};
use loadproof_core::trace::Trace;
use loadproof_core::{Regime, Window};
use wasm_bindgen::JsValue;
use web_sys::{File, HtmlInputElement};

use crate::ingest::{ReadError, ingest_blob};
use crate::number::js;
use crate::site::{Fetched, fetch_bytes, read_blob};

/// The file a published site serves beside the app.
pub const SITE_PLAYBOOK: &str = "playbook.json";

/// A playbook as read, and where from.
#[derive(Debug)]
struct Book {
    source: String,
    playbook: Playbook,
}

/// A live trace as read, and its name.
#[derive(Debug)]
struct LiveTrace {
    source: String,
    trace: Trace,
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

/// The playbook table and the matcher.
#[component]
pub fn PlaybookView() -> impl IntoView {
    let book: RwSignal<Option<Arc<Book>>> = RwSignal::new(None);
    let book_error = RwSignal::new(None::<String>);
    let book_status = RwSignal::new(format!("Looking for {SITE_PLAYBOOK} on this site…"));
    let live: RwSignal<Option<Arc<LiveTrace>>> = RwSignal::new(None);
    let live_error = RwSignal::new(None::<String>);
    let live_reading = RwSignal::new(None::<String>);
    let form = Form::new();
    let generation = StoredValue::new(0u64);

    let accept_book = move |source: String, bytes: &[u8]| match Playbook::from_json(bytes) {
        Ok(playbook) => {
            if let Some(first) = playbook.rows().first() {
                form.prefill(first);
            }
            book_error.set(None);
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
            let result = ingest_blob(&file, |_, _| {}, is_current).await;
            if !is_current() {
                return;
            }
            live_reading.set(None);
            match result {
                Ok(trace) => live.set(Some(Arc::new(LiveTrace {
                    source: name,
                    trace,
                }))),
                Err(ReadError::Superseded) => {}
                Err(err) => live_error.set(Some(format!("{name}: {err}"))),
            }
        });
    };

    let outcome = Memo::new(move |_| {
        let book = book.get()?;
        let live = live.get()?;
        Some(run_match(&book.playbook, &live, &form))
    });
    Effect::new(move |_| {
        outcome.with(|o| publish_match(o.as_ref().and_then(|r| r.as_ref().ok())));
    });

    view! {
        <section class="card wide" aria-labelledby="playbook-heading">
            <h2 id="playbook-heading">"Playbook"</h2>
            <p class="hint">
                "A playbook row says: this knob, on this model and GPU, under this traffic, moved these numbers. "
                "Rows marked illustrative hold invented numbers and are never selected."
            </p>
            <FilePicker
                id="playbook-file"
                label="Choose a playbook file (loadproof.playbook/v1 JSON), or drop one here."
                on_file=start_book
            />
            <p id="playbook-status" class="hint" role="status">{move || book_status.get()}</p>
            {move || {
                book_error
                    .get()
                    .map(|e| view! { <p id="playbook-error" class="error" role="alert">{e}</p> })
            }}
            {move || book.get().map(|b| view! { <RowsTable book=b /> })}
        </section>
        <section class="card wide" aria-labelledby="match-heading">
            <h2 id="match-heading">"Which rows apply to my traffic?"</h2>
            <p class="hint">
                "Choose or drop a live trace and say what you serve. The regime is computed as the Trace view computes it; "
                "every row is judged by the same matcher as "
                <code>"loadproof playbook match"</code>
                " with the default policy (every gate exact, rate not an axis, no calibrated tolerance)."
            </p>
            <FilePicker
                id="live-file"
                label="Choose a live trace (BurstGPT CSV, Mooncake JSONL or Azure CSV), or drop one here."
                on_file=start_live
            />
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
                                "Choose a live trace to see which rows apply."
                            }}
                        </p>
                    }
                        .into_any()
                }
                Some(Err(e)) => view! { <p id="match-error" class="error" role="alert">{e}</p> }.into_any(),
                Some(Ok(m)) => {
                    let source = live.with(|l| l.as_ref().map(|l| l.source.clone())).unwrap_or_default();
                    view! { <MatchTable outcome=m source=source book=book /> }.into_any()
                }
            }}
        </section>
    }
}

/// A file input inside a drop zone.
#[component]
fn FilePicker(
    /// The input's id.
    id: &'static str,
    /// What to choose.
    label: &'static str,
    /// Called with the chosen or dropped file.
    on_file: impl Fn(File) + Copy + 'static,
) -> impl IntoView {
    let dragging = RwSignal::new(false);
    view! {
        <div
            class="dropzone"
            class:dragging=move || dragging.get()
            data-for=id
            on:dragover=move |ev| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=move |ev| {
                ev.prevent_default();
                dragging.set(false);
                if let Some(file) = ev.data_transfer().and_then(|dt| dt.files()).and_then(|f| f.get(0)) {
                    on_file(file);
                }
            }
        >
            <label for=id>{label}</label>
            <input
                type="file"
                id=id
                on:change=move |ev| {
                    let input: HtmlInputElement = event_target(&ev);
                    if let Some(file) = input.files().and_then(|files| files.get(0)) {
                        on_file(file);
                    }
                }
            />
        </div>
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
            <legend>"What you serve (prefilled from the playbook's first row)"</legend>
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

/// One row per playbook row: what it claims and where the claim comes from.
#[component]
fn RowsTable(book: Arc<Book>) -> impl IntoView {
    let rows = book.playbook.rows().to_vec();
    let n = rows.len();
    let measured = rows
        .iter()
        .filter(|r| r.evidence() == Evidence::Measured)
        .count();
    view! {
        <p id="playbook-source">
            {book.source.clone()} ": " <span id="playbook-count">{n.to_string()}</span> " row(s), "
            {measured.to_string()} " measured, " {(n - measured).to_string()} " illustrative"
        </p>
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
                    {rows.into_iter().map(|row| view! { <RowLine row=row /> }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

#[component]
fn RowLine(row: Row) -> impl IntoView {
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
    view! {
        <tr data-row-id=row.id().to_owned()>
            <td>
                <div class="row-id mono">{row.id().to_owned()}</div>
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
                    .map(|axis| view! { <div>{format!("{axis} {}", js(regime.get(*axis)))}</div> })
                    .collect_view()}
                <div>{format!("window {} s", js(regime.window_s))}</div>
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
                                view! {
                                    <tr data-metric=m.name()>
                                        <th scope="row">{m.name()}</th>
                                        <td class="num">{js(delta.baseline().get(*m).median)}</td>
                                        <td class="num">{js(delta.treatment().get(*m).median)}</td>
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

/// Every row's verdict, in playbook order.
#[component]
fn MatchTable(
    outcome: MatchReport,
    source: String,
    book: RwSignal<Option<Arc<Book>>>,
) -> impl IntoView {
    let q = &outcome.query;
    let n_rows = book.with(|b| b.as_ref().map_or(0, |b| b.playbook.rows().len()));
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
                    <td class="num">{format!("{:.3}", s.distance.linf)}</td>
                    <td>{limiting}</td>
                    <td>
                        {if s.delta_is_floor {
                            "delta_is_floor: a lower bound (prefix-dependent knob on synthesized prefixes)"
                        } else {
                            "no"
                        }}
                    </td>
                    <td class="reason">"—"</td>
                </tr>
            }
            .into_any(),
        );
    }
    for r in &outcome.rejected {
        lines.insert(
            r.row.index,
            view! {
                <tr data-row-id=r.row.id.clone() data-verdict="rejected">
                    <td class="mono">{r.row.id.clone()}</td>
                    <td class="bad">"does not apply"</td>
                    <td class="num">"—"</td>
                    <td>"—"</td>
                    <td>"—"</td>
                    <td class="reason">{r.reason.to_string()}</td>
                </tr>
            }
            .into_any(),
        );
    }
    let regime = q.regime;
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
            {format!(
                "regime of {source}: {}",
                RegimeAxis::ALL
                    .iter()
                    .map(|a| format!("{a} {}", js(regime.get(*a))))
                    .chain(std::iter::once(format!("window {} s", js(regime.window_s))))
                    .collect::<Vec<_>>()
                    .join(", ")
            )}
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
                    </tr>
                </thead>
                <tbody>{lines.into_values().collect_view()}</tbody>
            </table>
        </div>
    }
}

/// Core's verdicts for the live trace under the typed identity, or what is wrong with the
/// input (named by field).
fn run_match(book: &Playbook, live: &LiveTrace, form: &Form) -> Result<MatchReport, String> {
    let window_text = form.window.get();
    let window = window_text
        .trim()
        .parse::<f64>()
        .ok()
        .and_then(Window::from_secs)
        .ok_or_else(|| {
            format!("Burstiness window: {window_text:?} is not a positive number of seconds")
        })?;
    let regime = Regime::of(&live.trace, window).map_err(|e| format!("{}: {e}", live.source))?;
    let axes = RegimeAxes::of(&regime).map_err(|e| {
        format!(
            "{}: the live trace's regime cannot be matched: {e}",
            live.source
        )
    })?;
    let concurrency_text = form.concurrency.get();
    let concurrency = match concurrency_text.trim() {
        "uncapped" => Concurrency::Uncapped,
        text => match text.parse::<u64>() {
            Ok(n) if n > 0 => Concurrency::Max(n),
            _ => {
                return Err(format!(
                    "Concurrency: {concurrency_text:?} is not a number of requests > 0, or uncapped"
                ));
            }
        },
    };
    let mut knobs = BTreeMap::new();
    for (i, line) in form.knobs.get().lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match line.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                knobs.insert(k.to_owned(), v.to_owned());
            }
            _ => return Err(format!("Knobs, line {}: {line:?} is not KEY=VALUE", i + 1)),
        }
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
            source_kind: SourceKind {
                traffic,
                prefixes: Prefixes::of_trace(&live.trace),
            },
            concurrency,
            knobs,
        },
        regime: axes,
    };
    match_rows(book.rows(), &query, &MatchPolicy::default())
        .map_err(|e| format!("the query's regime: {e}"))
}

/// `window.loadproofMatch`: the match report as `playbook match --json` prints it, or null.
fn publish_match(report: Option<&MatchReport>) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let value = report
        .and_then(|r| serde_json::to_string(r).ok())
        .and_then(|text| js_sys::JSON::parse(&text).ok())
        .unwrap_or(JsValue::NULL);
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("loadproofMatch"), &value);
}
