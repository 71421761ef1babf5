//! The receipt view: choose or drop a receipt (or open one the site bundles), then read core's
//! audit of it.
//!
//! The file is audited off the page's thread by [`crate::offload::audit_receipt`] (progress
//! bar, Cancel), which builds one [`ReceiptModel`]: core's `Audit` verbatim plus the
//! receipt's own evidence re-arranged for plots. This view computes nothing core computes: it
//! lays the model out. The audit is published as `window.loadproofAudit` (the JSON `loadproof
//! receipt audit --json` prints, parsed) so a browser test can compare the page with the CLI.
//! Numbers are shown readable ([`crate::widgets::number::readable`]) with the exact value in the
//! element's `title`. Every chart has a table of the numbers it draws beside it.
//!
//! On first mount the view reads the site's `receipts.json` (what `loadproof playbook publish
//! --receipt` writes beside the app), lists its receipts as buttons and opens the first. A
//! site without one (404) says nothing.

mod draw;
pub mod model;

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::audit::{Audit, STANDINGS};
use loadproof_core::receipt::{Axis, Encoding, Execution, Phase};
use loadproof_core::site::{SITE_RECEIPTS, SiteReceipt, SiteReceipts};
use wasm_bindgen::JsValue;
use web_sys::File;

use self::draw as plots;
use self::model::{MetricSamples, MetricsSeries, ReceiptModel, Timeline, TimelineRow};
use crate::offload::{Job, Progress, audit_receipt};
use crate::publish::{json_value, publish};
use crate::site::{Fetched, fetch_bytes};
use crate::widgets::canvas_figure::FigureCard;
use crate::widgets::drop_zone::DropZone;
use crate::widgets::number::{ABSENT, js, js_opt, readable};

/// Timeline rows written out as a table at most (the chart draws them all).
const TABLE_ROWS: usize = 500;
/// The classes of a chart's card in this view.
const FIGURE_CLASS: &str = "card chart receipt-figure";
/// A chart's canvas size unless it says otherwise, pixels.
const FIGURE_W: &str = "960";
const FIGURE_H: &str = "420";

/// Reads `receipts.json` with core's rule: every path must stay on this site.
fn parse_index(bytes: &[u8]) -> Result<Vec<SiteReceipt>, String> {
    SiteReceipts::from_json(bytes)
        .map(|index| index.receipts)
        .map_err(|e| e.to_string())
}

/// A load in progress.
#[derive(Debug, Clone, PartialEq)]
struct Loading {
    name: String,
    progress: Progress,
}

/// What the bundled-receipts fetch found (`data-state` of `#bundled-receipts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bundled {
    Pending,
    None,
    Listed,
    Failed,
}

impl Bundled {
    fn word(self) -> &'static str {
        match self {
            Bundled::Pending => "pending",
            Bundled::None => "none",
            Bundled::Listed => "listed",
            Bundled::Failed => "error",
        }
    }
}

/// Load a receipt and show its audit.
#[component]
pub fn ReceiptView() -> impl IntoView {
    let model: RwSignal<Option<Arc<ReceiptModel>>> = RwSignal::new(None);
    let error = RwSignal::new(None::<String>);
    let status = RwSignal::new(None::<String>);
    let loading = RwSignal::new(None::<Loading>);
    let bundled = RwSignal::new(Vec::<SiteReceipt>::new());
    let bundled_state = RwSignal::new(Bundled::Pending);
    let job = StoredValue::new_local(None::<Job>);
    // Bumped by every load and cancel; an older job's callbacks see the change and do nothing.
    let generation = StoredValue::new(0u64);

    Effect::new(move |_| {
        model.with(|m| {
            let m = m.as_deref();
            publish("loadproofAudit", &json_value(m.map(|m| &m.audit)));
            publish(
                "loadproofAuditSource",
                &m.map_or(JsValue::NULL, |m| JsValue::from_str(&m.source)),
            );
        });
        crate::ingest::mark("audit-published");
    });

    // `expected`: the sha256 the site's index lists, checked against the file's own.
    let start = move |name: String, blob: web_sys::Blob, expected: Option<String>| {
        if let Some(old) = job.get_value() {
            old.cancel();
        }
        let this = generation.get_value() + 1;
        generation.set_value(this);
        model.set(None);
        error.set(None);
        status.set(None);
        loading.set(Some(Loading {
            name: name.clone(),
            progress: Progress {
                fraction: 0.0,
                stage: "read".to_owned(),
            },
        }));
        let progress_name = name.clone();
        let done_name = name.clone();
        let started = audit_receipt(
            name,
            blob,
            move |progress| {
                if generation.get_value() == this {
                    loading.set(Some(Loading {
                        name: progress_name.clone(),
                        progress,
                    }));
                }
            },
            move |result| {
                if generation.get_value() != this {
                    return;
                }
                loading.set(None);
                job.set_value(None);
                match result {
                    Ok(m) => match expected {
                        Some(want) if want != m.file_sha256 => error.set(Some(format!(
                            "{done_name}: this site's copy has sha256 {}, but {SITE_RECEIPTS} lists {want}: not shown",
                            m.file_sha256
                        ))),
                        _ => model.set(Some(Arc::new(m))),
                    },
                    Err(e) => error.set(Some(e)),
                }
            },
        );
        if generation.get_value() == this {
            job.set_value(Some(started));
        }
    };

    let cancel = move |_| {
        if let Some(j) = job.get_value() {
            j.cancel();
        }
        job.set_value(None);
        generation.update_value(|g| *g += 1);
        if let Some(l) = loading.get_untracked() {
            status.set(Some(format!("Cancelled: {} was not audited.", l.name)));
        }
        loading.set(None);
    };

    let open_bundled = move |entry: SiteReceipt| {
        error.set(None);
        status.set(Some(format!("Fetching {} from this site…", entry.path)));
        spawn_local(async move {
            match fetch_bytes(&entry.path).await {
                Ok(Fetched::Body(bytes)) => match blob_of(&bytes) {
                    Ok(blob) => start(entry.name.clone(), blob, Some(entry.sha256.clone())),
                    Err(e) => error.set(Some(format!("{}: {e}", entry.name))),
                },
                Ok(Fetched::Status(code)) => {
                    status.set(None);
                    error.set(Some(format!(
                        "{}: this site answered HTTP {code} for {}",
                        entry.name, entry.path
                    )));
                }
                Err(e) => {
                    status.set(None);
                    error.set(Some(format!(
                        "{}: could not fetch {}: {e}",
                        entry.name, entry.path
                    )));
                }
            }
        });
    };

    // The site's bundled receipts, when it has any.
    spawn_local(async move {
        match fetch_bytes(SITE_RECEIPTS).await {
            Ok(Fetched::Body(bytes)) => match parse_index(&bytes) {
                Ok(list) => {
                    let first = list.first().cloned();
                    bundled.set(list);
                    bundled_state.set(Bundled::Listed);
                    if let Some(first) = first
                        && model.get_untracked().is_none()
                        && loading.get_untracked().is_none()
                        && error.get_untracked().is_none()
                    {
                        open_bundled(first);
                    }
                }
                // A development server that answers every path with the app's HTML.
                Err(_) if bytes.trim_ascii_start().starts_with(b"<") => {
                    bundled_state.set(Bundled::None);
                }
                Err(e) => {
                    bundled_state.set(Bundled::Failed);
                    error.set(Some(format!("{SITE_RECEIPTS} (this site): {e}")));
                }
            },
            Ok(Fetched::Status(_)) => bundled_state.set(Bundled::None),
            Err(e) => {
                bundled_state.set(Bundled::Failed);
                status.set(Some(format!(
                    "Could not read {SITE_RECEIPTS} from this site ({e}): choose or drop a receipt."
                )));
            }
        }
    });

    let start_file = move |file: File| {
        let blob: web_sys::Blob = file.clone().into();
        start(file.name(), blob, None);
    };

    view! {
        <section class="card load receipt-load" aria-labelledby="receipt-heading">
            <h2 id="receipt-heading">"Receipt"</h2>
            // Choosing the same file again is a new load (`rechoose`).
            <DropZone
                id="receipt-file"
                accept=".json,application/json"
                rechoose=true
                on_file=start_file
            >
                "Choose a receipt, or drop one here. "
                <span class="hint">
                    "A loadproof.receipt/v1 JSON file, as "
                    <code>"loadproof fire"</code>
                    " or "
                    <code>"loadproof receipt import"</code>
                    " writes it. Files never leave this machine: the audit runs in this page."
                </span>
            </DropZone>
            <div id="bundled-receipts" data-state=move || bundled_state.get().word()>
                {move || {
                    let list = bundled.get();
                    (!list.is_empty())
                        .then(|| {
                            let current = model.with(|m| m.as_ref().map(|m| m.source.clone()));
                            view! {
                                <p class="hint">"Receipts this site bundles:"</p>
                                <ul class="bundled">
                                    {list
                                        .into_iter()
                                        .enumerate()
                                        .map(|(i, entry)| {
                                            let pressed = (current.as_deref() == Some(entry.name.as_str()))
                                                .to_string();
                                            let label = format!(
                                                "{} ({} bytes)",
                                                entry.name,
                                                readable(entry.bytes as f64),
                                            );
                                            view! {
                                                <li>
                                                    <button
                                                        type="button"
                                                        id=format!("bundled-{i}")
                                                        data-name=entry.name.clone()
                                                        aria-pressed=pressed
                                                        on:click=move |_| open_bundled(entry.clone())
                                                    >
                                                        {label}
                                                    </button>
                                                </li>
                                            }
                                        })
                                        .collect_view()}
                                </ul>
                            }
                        })
                }}
            </div>
            {move || {
                loading
                    .get()
                    .map(|l| {
                        let percent = (l.progress.fraction * 100.0).clamp(0.0, 100.0);
                        view! {
                            <p class="reading" role="status">
                                <label for="receipt-progress">
                                    {format!("Auditing {} ({}) ", l.name, l.progress.stage)}
                                </label>
                                <progress
                                    id="receipt-progress"
                                    max="1"
                                    value=l.progress.fraction.to_string()
                                ></progress>
                                {format!(" {percent:.0} % ")}
                                <button type="button" id="receipt-cancel" on:click=cancel>
                                    "Cancel"
                                </button>
                            </p>
                        }
                    })
            }}
            {move || {
                status
                    .get()
                    .map(|msg| {
                        view! {
                            <p id="receipt-status" class="hint" role="status">
                                {msg}
                            </p>
                        }
                    })
            }}
            {move || {
                error
                    .get()
                    .map(|msg| {
                        view! {
                            <p id="receipt-error" class="error" role="alert">
                                {msg}
                            </p>
                        }
                    })
            }}
        </section>
        {move || model.get().map(|m| view! { <Report model=m /> })}
    }
}

/// A `Blob` holding `bytes` (a receipt fetched from the site).
fn blob_of(bytes: &[u8]) -> Result<web_sys::Blob, String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    web_sys::Blob::new_with_u8_array_sequence(&parts)
        .map_err(|_| "the browser could not hold the file".to_owned())
}

// --- formatting ---------------------------------------------------------------------------

/// A number for reading, `—` when absent.
fn num(x: Option<f64>) -> String {
    x.map_or_else(|| ABSENT.to_owned(), readable)
}

/// The exact value, for an element's `title`.
fn exact(x: Option<f64>) -> Option<String> {
    x.map(js)
}

/// A whole count for reading.
fn int(n: u64) -> String {
    readable(n as f64)
}

fn int_opt(n: Option<u64>) -> String {
    n.map_or_else(|| ABSENT.to_owned(), int)
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// A Unix-ns instant as an ISO date (UTC).
fn when(unix_ns: i64) -> String {
    let date = js_sys::Date::new(&JsValue::from_f64(unix_ns as f64 / 1e6));
    String::from(date.to_iso_string())
}

/// An id-safe version of a block name (`metrics/3` → `metrics-3`).
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A `<td class="num">` with the readable value and the exact one in its title.
fn td(x: Option<f64>) -> impl IntoView {
    view! {
        <td class="num" title=exact(x)>
            {num(x)}
        </td>
    }
}

/// A `<dd>` the same way.
fn dd(id: &'static str, x: Option<f64>) -> impl IntoView {
    view! {
        <dd id=id class="num-dd" title=exact(x)>
            {num(x)}
        </dd>
    }
}

/// A list, or "none".
fn list(id: &'static str, items: Vec<String>) -> impl IntoView {
    view! {
        <ul id=id>
            {if items.is_empty() {
                view! { <li class="hint">"none"</li> }.into_any()
            } else {
                items.into_iter().map(|i| view! { <li>{i}</li> }).collect_view().into_any()
            }}
        </ul>
    }
}

// --- the report -----------------------------------------------------------------------------

/// Everything about one audited receipt.
#[component]
fn Report(model: Arc<ReceiptModel>) -> impl IntoView {
    let m = model;
    view! {
        <Banner m=m.clone() />
        <Digests m=m.clone() />
        <Execution m=m.clone() />
        <Ledger m=m.clone() />
        <Client m=m.clone() />
        <Latency m=m.clone() />
        <LatencyCharts m=m.clone() />
        <TimelineChart m=m.clone() />
        <SeriesChart m=m.clone() />
        <Engine m=m.clone() />
        <Agreement m=m.clone() />
        <Standings m=m.clone() />
        <Refusals m=m.clone() />
        <SubjectCard m=m.clone() />
        <LeaseCard m=m.clone() />
        <EvidenceCard m=m />
    }
}

/// The verdict, first.
#[component]
fn Banner(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let verdict = if a.qualified {
        format!(
            "QUALIFIED{}: every standing is positive",
            if a.simulator {
                " (of loadproof sim, a simulator)"
            } else {
                ""
            }
        )
    } else {
        format!("UNQUALIFIED: {} refusals", a.refusals.len())
    };
    let class = if a.qualified {
        "card wide banner qualified"
    } else {
        "card wide banner unqualified"
    };
    let captured = if a.captured {
        "Captured: a raw observation exists (digests verify and client facts were read). Qualification is a separate answer.".to_owned()
    } else if !a.digests_ok {
        "Not captured: evidence fails verification.".to_owned()
    } else {
        format!("Not captured: {}", a.execution_gate.reason)
    };
    view! {
        <section
            id="receipt-banner"
            class=class
            data-qualified=a.qualified.to_string()
            aria-labelledby="receipt-verdict"
        >
            <h2 id="receipt-verdict" class="verdict">
                {verdict}
            </h2>
            {a
                .simulator
                .then(|| {
                    view! {
                        <p id="receipt-simulator" class="synthetic">
                            "The endpoint was loadproof sim, a simulator: these numbers describe the simulator, not a serving engine."
                        </p>
                    }
                })}
            {(!a.qualified)
                .then(|| {
                    view! {
                        <ul id="receipt-banner-refusals" class="refusals">
                            {a.refusals.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}
                        </ul>
                    }
                })}
            <p id="receipt-captured" class="hint">
                {captured}
            </p>
            <dl class="facts">
                <dt>"File"</dt>
                <dd id="receipt-source">{m.source.clone()}</dd>
                <dt>"Size, bytes"</dt>
                <dd id="receipt-bytes" title=m.file_bytes.to_string()>
                    {int(m.file_bytes)}
                </dd>
                <dt>"sha256"</dt>
                <dd id="receipt-sha256" class="mono">
                    {m.file_sha256.clone()}
                </dd>
                <dt>"Protocol key"</dt>
                <dd class="mono">{m.protocol.key.clone()}</dd>
                <dt>"Made by"</dt>
                <dd>
                    {format!(
                        "{} ({}), written {}",
                        m.provenance.generator,
                        m.provenance.source,
                        when(m.provenance.written_unix_ns),
                    )}
                </dd>
            </dl>
        </section>
    }
}

/// Digest verification per evidence block.
#[component]
fn Digests(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let failed: Vec<_> = a.digests.iter().filter(|d| !d.ok).cloned().collect();
    let summary = if failed.is_empty() {
        format!("{} blocks, every digest verifies", a.digests.len())
    } else {
        format!(
            "{} of {} blocks fail verification: {}",
            failed.len(),
            a.digests.len(),
            failed
                .iter()
                .map(|d| d.block.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let rows = a
        .digests
        .iter()
        .map(|d| {
            view! {
                <tr data-block=d.block.clone() data-ok=d.ok.to_string() class:bad=!d.ok>
                    <th scope="row" class="mono">
                        {d.block.clone()}
                    </th>
                    <td class="num" title=d.bytes.to_string()>
                        {int(d.bytes)}
                    </td>
                    <td class=if d.ok { "good" } else { "bad" }>{if d.ok { "ok" } else { "FAILED" }}</td>
                    <td class="error-cell">{d.error.clone().unwrap_or_default()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section
            id="receipt-digests"
            class="card wide"
            data-ok=a.digests_ok.to_string()
            aria-labelledby="digests-heading"
        >
            <h2 id="digests-heading">"Evidence digests"</h2>
            <p id="digests-summary" class=if failed.is_empty() { "good" } else { "bad" }>
                {summary}
            </p>
            {(!failed.is_empty())
                .then(|| {
                    view! {
                        <ul id="digest-failures" class="refusals">
                            {failed
                                .iter()
                                .map(|d| {
                                    view! {
                                        <li data-block=d.block.clone()>
                                            <strong>{d.block.clone()}</strong>
                                            ": "
                                            {d.error.clone().unwrap_or_else(|| "fails verification".to_owned())}
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                })}
            <details open=a.digests.len() <= 8>
                <summary>{format!("Every block ({})", a.digests.len())}</summary>
                <div class="scroll tall">
                    <table id="digests-table">
                        <caption>
                            "Each evidence block's bytes hashed and compared with the digest the receipt records."
                        </caption>
                        <thead>
                            <tr>
                                <th scope="col">"block"</th>
                                <th scope="col" class="num">
                                    "bytes"
                                </th>
                                <th scope="col">"sha256"</th>
                                <th scope="col">"error"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </details>
        </section>
    }
}

/// The execution gate and what ran.
#[component]
fn Execution(m: Arc<ReceiptModel>) -> impl IntoView {
    let gate = &m.audit.execution_gate;
    let (kind, facts): (&str, Vec<(&str, String)>) = match &m.execution {
        Execution::Native {
            events,
            offered,
            started,
            ended,
            interrupted,
            lag_bound_ns,
        } => (
            "native client (loadproof's open-loop client)",
            vec![
                ("Event log block", events.clone()),
                ("Offered", int(*offered)),
                ("Started", when(started.unix_ns)),
                (
                    "Ran for, s",
                    readable((ended.mono_ns - started.mono_ns) as f64 / 1e9),
                ),
                (
                    "Interrupted",
                    interrupted.map_or("no".to_owned(), |i| format!("{i:?}")),
                ),
                ("Lag bound, ms", readable(*lag_bound_ns as f64 / 1e6)),
            ],
        ),
        Execution::Ran {
            program,
            exit,
            stdout,
            result,
            started,
            ended,
            interrupted,
            ..
        } => (
            "vllm bench serve (a child process)",
            vec![
                ("Program", program.clone()),
                (
                    "Exit",
                    match (exit.code, exit.signal) {
                        (Some(c), _) => format!("code {c}"),
                        (None, Some(s)) => format!("signal {s}"),
                        (None, None) => "unknown".to_owned(),
                    },
                ),
                ("Stdout block", stdout.clone()),
                (
                    "Result JSON",
                    match result {
                        loadproof_core::receipt::ResultFile::Kept { block } => block.clone(),
                        loadproof_core::receipt::ResultFile::Absent { reason } => {
                            format!("absent: {reason}")
                        }
                    },
                ),
                (
                    "Started",
                    started.map_or(ABSENT.to_owned(), |s| when(s.unix_ns)),
                ),
                (
                    "Ran for, s",
                    started.zip(*ended).map_or(ABSENT.to_owned(), |(a, b)| {
                        readable((b.mono_ns - a.mono_ns) as f64 / 1e9)
                    }),
                ),
                (
                    "Interrupted",
                    interrupted.map_or("no".to_owned(), |i| format!("{i:?}")),
                ),
            ],
        ),
        Execution::NotStarted { cause } => {
            ("the client never started", vec![("Cause", cause.clone())])
        }
        Execution::Unreachable { url, cause } => (
            "the endpoint was unreachable",
            vec![("URL", url.clone()), ("Cause", cause.clone())],
        ),
    };
    view! {
        <section id="receipt-gate" class="card" data-read=gate.read.to_string() aria-labelledby="gate-heading">
            <h2 id="gate-heading">"Execution gate"</h2>
            <p id="gate-verdict" class=if gate.read { "good" } else { "bad" }>
                {if gate.read { "Client facts read: " } else { "Client facts unread: " }}
                {gate.reason.clone()}
            </p>
            <dl>
                <dt>"Client"</dt>
                <dd id="execution-kind">{kind}</dd>
                {facts
                    .into_iter()
                    .map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> })
                    .collect_view()}
            </dl>
        </section>
    }
}

/// The operation ledger.
#[component]
fn Ledger(m: Arc<ReceiptModel>) -> impl IntoView {
    let body = match &m.audit.ledger {
        None => view! { <p class="hint">"No ledger: client facts are unread."</p> }.into_any(),
        Some(l) => {
            let rows = l
                .dispositions
                .iter()
                .map(|(k, v)| {
                    view! {
                        <tr data-kind=k.clone() class:bad=(k != "ok")>
                            <th scope="row">{k.clone()}</th>
                            <td class="num">{int(*v)}</td>
                        </tr>
                    }
                })
                .collect_view();
            let failed = l.failed.unwrap_or(0);
            view! {
                <dl>
                    <dt>"Offered"</dt>
                    <dd id="ledger-offered">{int_opt(l.offered)}</dd>
                    <dt>"Completed"</dt>
                    <dd id="ledger-completed">{int(l.completed)}</dd>
                    <dt>"Failed"</dt>
                    <dd id="ledger-failed" class:bad=(failed > 0)>
                        {int_opt(l.failed)}
                    </dd>
                    <dt>"Failed after streaming tokens"</dt>
                    <dd id="ledger-failed-after-tokens">{int_opt(l.failed_after_tokens)}</dd>
                    <dt>"Closed"</dt>
                    <dd id="ledger-closed">
                        {yes_no(l.closed)}
                        {if l.closed {
                            " (every offered request has one terminal disposition)"
                        } else {
                            ""
                        }}
                    </dd>
                    <dt>"Per request"</dt>
                    <dd>
                        {if l.aggregate { "no: totals only (aggregate)" } else { "yes" }}
                    </dd>
                    <dt>"Source"</dt>
                    <dd>{l.source.clone()}</dd>
                </dl>
                {(!l.dispositions.is_empty())
                    .then(|| {
                        view! {
                            <table id="ledger-dispositions">
                                <caption>"Terminal dispositions"</caption>
                                <thead>
                                    <tr>
                                        <th scope="col">"kind"</th>
                                        <th scope="col" class="num">
                                            "requests"
                                        </th>
                                    </tr>
                                </thead>
                                <tbody>{rows}</tbody>
                            </table>
                        }
                    })}
            }
            .into_any()
        }
    };
    view! {
        <section id="receipt-ledger" class="card" aria-labelledby="ledger-heading">
            <h2 id="ledger-heading">"Ledger"</h2>
            {body}
        </section>
    }
}

/// Client rate, peaks and arrival.
#[component]
fn Client(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let client = match &a.client {
        None => view! {
            <p class="hint">"No client totals: client facts are unread or incomplete."</p>
        }
        .into_any(),
        Some(c) => view! {
            <dl>
                <dt>"Output tokens"</dt>
                <dd id="client-output" title=c.output_tokens.to_string()>{int(c.output_tokens)}</dd>
                <dt>"Input tokens"</dt>
                <dd id="client-input" title=c.input_tokens.to_string()>{int(c.input_tokens)}</dd>
                <dt>"Interval, s"</dt>
                {dd("client-duration", Some(c.duration_s))}
                <dt>"Output tokens/s"</dt>
                {dd("client-rate", c.output_tokens_per_s)}
                <dt>"Interval"</dt>
                <dd>{c.interval.clone()}</dd>
            </dl>
        }
        .into_any(),
    };
    let concurrency = a.concurrency.as_ref().map(|c| {
        view! {
            <h3>"Client peaks"</h3>
            <dl>
                <dt>"Exact peak in flight"</dt>
                <dd id="client-peak">{int_opt(c.exact_client_peak)}</dd>
                <dt>"Whole-second bucket peak"</dt>
                <dd>{int_opt(c.successful_client_second_bucket_peak)}</dd>
                <dt>"Declared cap"</dt>
                <dd>{c.declared_cap.map_or("none".to_owned(), int)}</dd>
            </dl>
            <p class="hint">{c.note.clone()}</p>
        }
    });
    let arrival = a.arrival.as_ref().map(|r| {
        view! {
            <h3>"Arrival"</h3>
            <dl id="client-arrival">
                <dt>"Observed"</dt>
                <dd>{yes_no(r.observed)}</dd>
                <dt>"Sent"</dt>
                <dd>{int(r.sent)}</dd>
                <dt>"Never sent"</dt>
                <dd>{int(r.not_sent)}</dd>
                <dt>"Send lag p50, ms"</dt>
                {dd("arrival-lag-p50", r.lag_p50_ms)}
                <dt>"Send lag p99, ms"</dt>
                {dd("arrival-lag-p99", r.lag_p99_ms)}
                <dt>"Send lag max, ms"</dt>
                {dd("arrival-lag-max", r.lag_max_ms)}
                <dt>"Lag bound, ms"</dt>
                {dd("arrival-bound", r.bound_ms)}
                <dt>"Sent early"</dt>
                <dd>{int(r.early)}</dd>
                <dt>"Source"</dt>
                <dd>{r.source.clone()}</dd>
            </dl>
        }
    });
    view! {
        <section id="receipt-client" class="card" aria-labelledby="client-heading">
            <h2 id="client-heading">"Client rate"</h2>
            {client}
            {concurrency}
            {arrival}
        </section>
    }
}

/// The audit's latency distributions.
#[component]
fn Latency(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let rows = a
        .latency
        .iter()
        .map(|l| {
            view! {
                <tr data-metric=l.metric.clone()>
                    <th scope="row">{l.metric.to_uppercase()}</th>
                    <td class="num">{int_opt(l.count)}</td>
                    {td(l.mean_ms)}
                    {td(l.p50_ms)}
                    {td(l.p90_ms)}
                    {td(l.p99_ms)}
                    {td(l.max_ms)}
                    <td class="src">{l.source.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let tail = a.itl_tail.as_ref().map(|t| {
        view! {
            <p id="itl-tail">
                "ITL tail: p99 " <span title=js(t.p99_ms)>{readable(t.p99_ms)}</span> " ms = "
                <span title=js_opt(t.ratio)>{t.ratio.map_or(ABSENT.to_owned(), readable)}</span> "× the median ("
                <span title=js(t.p50_ms)>{readable(t.p50_ms)}</span> " ms); cause "
                {t.cause.clone()} ". " <span class="hint">{t.why.clone()}</span>
            </p>
        }
    });
    view! {
        <section id="receipt-latency" class="card wide" aria-labelledby="latency-heading">
            <h2 id="latency-heading">"Latency as the client observed it"</h2>
            <div class="scroll">
                <table id="latency-table">
                    <caption>"Milliseconds; completed requests only"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"metric"</th>
                            <th scope="col" class="num">"count"</th>
                            <th scope="col" class="num">"mean"</th>
                            <th scope="col" class="num">"p50"</th>
                            <th scope="col" class="num">"p90"</th>
                            <th scope="col" class="num">"p99"</th>
                            <th scope="col" class="num">"max"</th>
                            <th scope="col">"source"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {if a.latency.is_empty() {
                            view! {
                                <tr>
                                    <td colspan="8" class="hint">
                                        "No latency: client facts are unread."
                                    </td>
                                </tr>
                            }
                                .into_any()
                        } else {
                            rows.into_any()
                        }}
                    </tbody>
                </table>
            </div>
            {tail}
            <p id="latency-samples-source" class="hint">
                "Histograms and CDFs below: " {m.latency.source.clone()}
            </p>
        </section>
    }
}

/// Histograms and CDFs of the latency samples.
#[component]
fn LatencyCharts(m: Arc<ReceiptModel>) -> impl IntoView {
    let for_hist = m.clone();
    let for_cdf = m.clone();
    let hist_tables = m
        .latency
        .metrics
        .iter()
        .map(|s| view! { <HistTable s=s.clone() /> })
        .collect_view();
    let cdf_tables = view! { <CdfTable metrics=m.latency.metrics.clone() audit=m.audit.clone() /> };
    let empty = m.latency.metrics.is_empty();
    let why = m.latency.source.clone();
    let why2 = why.clone();
    let hist_side = if empty {
        view! { <p class="hint">{why}</p> }.into_any()
    } else {
        hist_tables.into_any()
    };
    let cdf_side = if empty {
        view! { <p class="hint">{why2}</p> }.into_any()
    } else {
        cdf_tables.into_any()
    };
    view! {
        <FigureCard
            slug="histograms"
            id="receipt-histograms"
            class=FIGURE_CLASS
            title="Latency histograms"
            alt="Histograms of TTFT, TPOT, ITL and end-to-end latency; the bins are in the tables beside it."
            width="760"
            height="480"
            draw=move |canvas| plots::draw_histograms(canvas, &for_hist.latency.metrics)
        >
            {hist_side}
        </FigureCard>
        <FigureCard
            slug="cdfs"
            id="receipt-cdfs"
            class=FIGURE_CLASS
            title="Latency CDFs"
            alt="Cumulative distributions of TTFT, TPOT, ITL and end-to-end latency; the quantiles are in the tables beside it."
            width="760"
            height="480"
            draw=move |canvas| plots::draw_cdfs(canvas, &for_cdf.latency.metrics)
        >
            {cdf_side}
        </FigureCard>
    }
}

#[component]
fn HistTable(s: MetricSamples) -> impl IntoView {
    let rows = s
        .bins
        .iter()
        .map(|b| {
            view! {
                <tr>
                    {td(Some(b.lo_ms))}
                    {td(Some(b.hi_ms))}
                    <td class="num">{int(b.count)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <details id=format!("hist-{}", s.metric)>
            <summary>
                {format!(
                    "{}: {} samples, {}–{} ms{}",
                    s.metric.to_uppercase(),
                    int(s.count),
                    readable(s.min_ms),
                    readable(s.max_ms),
                    if s.log_bins { ", log-spaced bins" } else { "" },
                )}
            </summary>
            <div class="scroll tall">
                <table>
                    <thead>
                        <tr>
                            <th scope="col" class="num">"from, ms"</th>
                            <th scope="col" class="num">"to, ms"</th>
                            <th scope="col" class="num">"samples"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </details>
    }
}

/// The audit's quantiles of every metric drawn, then each curve's points.
#[component]
fn CdfTable(metrics: Vec<MetricSamples>, audit: Audit) -> impl IntoView {
    let facts: Vec<Option<loadproof_core::audit::LatencyFacts>> = metrics
        .iter()
        .map(|s| audit.latency.iter().find(|l| l.metric == s.metric).cloned())
        .collect();
    let row = |label: &'static str,
               pick: fn(&loadproof_core::audit::LatencyFacts) -> Option<f64>| {
        let cells = facts
            .iter()
            .map(|f| td(f.as_ref().and_then(pick)))
            .collect_view();
        view! {
            <tr>
                <th scope="row">{label}</th>
                {cells}
            </tr>
        }
    };
    let heads = metrics
        .iter()
        .map(|s| view! { <th scope="col" class="num">{s.metric.to_uppercase()}</th> })
        .collect_view();
    let mins = metrics.iter().map(|s| td(Some(s.min_ms))).collect_view();
    let points = metrics
        .iter()
        .map(|s| {
            let rows = s
                .cdf
                .iter()
                .map(|(ms, share)| {
                    view! {
                        <tr>
                            {td(Some(*ms))}
                            {td(Some(*share))}
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <details id=format!("cdf-{}", s.metric)>
                    <summary>
                        {format!("{}: {} curve points", s.metric.to_uppercase(), s.cdf.len())}
                    </summary>
                    <div class="scroll tall">
                        <table>
                            <thead>
                                <tr>
                                    <th scope="col" class="num">"ms"</th>
                                    <th scope="col" class="num">"share at or below"</th>
                                </tr>
                            </thead>
                            <tbody>{rows}</tbody>
                        </table>
                    </div>
                </details>
            }
        })
        .collect_view();
    view! {
        <table id="cdf-quantiles">
            <caption>"Milliseconds: the audit's quantiles (linear interpolation)"</caption>
            <thead>
                <tr>
                    <th scope="col">"quantile"</th>
                    {heads}
                </tr>
            </thead>
            <tbody>
                <tr>
                    <th scope="row">"min"</th>
                    {mins}
                </tr>
                {row("p50", |f| f.p50_ms)}
                {row("p90", |f| f.p90_ms)}
                {row("p99", |f| f.p99_ms)}
                {row("max", |f| f.max_ms)}
            </tbody>
        </table>
        {points}
    }
}

/// One row of the timeline table.
fn timeline_row(r: &TimelineRow) -> impl IntoView {
    let ms = |s: Option<f64>| s.map(|s| s * 1e3);
    view! {
        <tr data-index=r.index.to_string() data-disposition=r.disposition.clone() class:bad=!r.ok()>
            <th scope="row" class="num">{r.index.to_string()}</th>
            {td(ms(r.scheduled_s))}
            {td(ms(r.sent_s))}
            {td(ms(r.first_token_s))}
            {td(ms(r.end_s))}
            <td>{r.disposition.clone()}</td>
            <td class="error-cell">{r.detail.clone().unwrap_or_default()}</td>
        </tr>
    }
}

/// One row of the failed-requests table.
fn failure_row(r: &TimelineRow) -> impl IntoView {
    view! {
        <tr data-index=r.index.to_string() data-disposition=r.disposition.clone()>
            <th scope="row" class="num">{r.index.to_string()}</th>
            <td>{r.disposition.clone()}</td>
            <td class="error-cell">{r.detail.clone().unwrap_or_default()}</td>
        </tr>
    }
}

fn timeline_head() -> impl IntoView {
    view! {
        <thead>
            <tr>
                <th scope="col" class="num">"request"</th>
                <th scope="col" class="num">"scheduled, ms"</th>
                <th scope="col" class="num">"sent, ms"</th>
                <th scope="col" class="num">"first token, ms"</th>
                <th scope="col" class="num">"end, ms"</th>
                <th scope="col">"disposition"</th>
                <th scope="col">"what went wrong"</th>
            </tr>
        </thead>
    }
}

/// The per-request timeline.
#[component]
fn TimelineChart(m: Arc<ReceiptModel>) -> impl IntoView {
    let for_draw = m.clone();
    let t: &Timeline = &m.timeline;
    let failed: Vec<&TimelineRow> = t.rows.iter().filter(|r| !r.ok()).collect();
    let shown_failed = failed
        .iter()
        .take(TABLE_ROWS)
        .map(|r| failure_row(r))
        .collect_view();
    let every = t
        .rows
        .iter()
        .take(TABLE_ROWS)
        .map(timeline_row)
        .collect_view();
    let rows_note = if t.rows.len() > TABLE_ROWS {
        format!(
            "The first {TABLE_ROWS} of {} requests (the chart draws them all; the event log is in the raw evidence).",
            t.rows.len()
        )
    } else {
        format!("All {} requests.", t.rows.len())
    };
    let side = view! {
            <table id="timeline-summary" class="compact">
                <caption>{t.source.clone()}</caption>
                <tbody>
                    <tr>
                        <th scope="row">"Requests in the evidence"</th>
                        <td class="num">{int(t.total)}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Drawn"</th>
                        <td class="num">{int(t.rows.len() as u64)}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Failed (drawn in red)"</th>
                        <td id="timeline-failed" class="num" class:bad=!failed.is_empty()>
                            {int(failed.len() as u64)}
                        </td>
                    </tr>
                </tbody>
            </table>
            {t
                .truncated
                .then(|| {
                    view! {
                        <p id="timeline-truncated" class="hint">
                            {format!(
                                "Only the first {} of {} requests are drawn.",
                                t.rows.len(),
                                t.total,
                            )}
                        </p>
                    }
                })}
            {(!failed.is_empty())
                .then(|| {
                    view! {
                        <div class="scroll tall">
                            <table id="timeline-failures">
                                <caption>"Failed requests"</caption>
                                <thead>
                                    <tr>
                                        <th scope="col" class="num">"request"</th>
                                        <th scope="col">"disposition"</th>
                                        <th scope="col">"what went wrong"</th>
                                    </tr>
                                </thead>
                                <tbody>{shown_failed}</tbody>
                            </table>
                        </div>
                    }
                })}
            {(!t.rows.is_empty())
                .then(|| {
                    view! {
                        <details>
                            <summary>"Every request"</summary>
                            <p class="hint">{rows_note}</p>
                            <div class="scroll tall">
                                <table id="timeline-table">{timeline_head()} <tbody>{every}</tbody></table>
                            </div>
                        </details>
                    }
                })}
    }
    .into_any();
    view! {
        <FigureCard
            slug="timeline"
            id="receipt-timeline"
            class=FIGURE_CLASS
            title="Requests over time"
            alt="Each request as a line at its index: scheduled to sent, sent to first token, first token to end; failed requests in red with a cross. The numbers are in the tables beside it."
            width=FIGURE_W
            height=FIGURE_H
            draw=move |canvas| plots::draw_timeline(canvas, &for_draw.timeline)
        >
            {side}
        </FigureCard>
    }
}

/// The `/metrics` series.
#[component]
fn SeriesChart(m: Arc<ReceiptModel>) -> impl IntoView {
    let for_draw = m.clone();
    let s: &MetricsSeries = &m.metrics;
    let o = &m.audit.occupancy;
    let rows = s
        .points
        .iter()
        .take(2_000)
        .map(|p| {
            view! {
                <tr data-scrape=p.scrape.to_string()>
                    <th scope="row" class="num">{p.scrape.to_string()}</th>
                    <td>
                        {match p.phase {
                            Phase::Before => "before",
                            Phase::During => "during",
                            Phase::After => "after",
                        }}
                    </td>
                    {td(p.t_s)}
                    {td(p.running)}
                    {td(p.waiting)}
                    {td(p.kv_usage)}
                    {td(p.generation_tokens)}
                    {td(p.prompt_tokens)}
                </tr>
            }
        })
        .collect_view();
    let unread = s.unread.clone();
    let side = view! {
            <table id="metrics-summary" class="compact">
                <caption>"The audit's occupancy reading"</caption>
                <tbody>
                    <tr>
                        <th scope="row">"Samples during the run"</th>
                        <td class="num">{int(o.samples)}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Unread during the run"</th>
                        <td class="num">{int(o.unread)}</td>
                    </tr>
                    <tr>
                        <th scope="row">"Largest gap, ms"</th>
                        {td(o.max_gap_ms)}
                    </tr>
                    <tr>
                        <th scope="row">"Max running"</th>
                        {td(o.max_running)}
                    </tr>
                    <tr>
                        <th scope="row">"Max waiting"</th>
                        {td(o.max_waiting)}
                    </tr>
                    <tr>
                        <th scope="row">"Max KV usage"</th>
                        {td(o.max_kv_usage)}
                    </tr>
                    <tr>
                        <th scope="row">"Preemptions"</th>
                        <td class="num">{int_opt(o.preemptions_delta)}</td>
                    </tr>
                </tbody>
            </table>
            <p class="hint">{o.reason.clone()}</p>
            {o
                .engine_over_client
                .clone()
                .map(|w| view! { <p class="bad">"Engine held more than this client: " {w}</p> })}
            {(s.urls.len() > 1)
                .then(|| {
                    view! {
                        <p class="hint">
                            {format!(
                                "{} URLs were scraped; the chart shows the first ({}).",
                                s.urls.len(),
                                s.urls.first().cloned().unwrap_or_default(),
                            )}
                        </p>
                    }
                })}
            {(s.unread_count > 0)
                .then(|| {
                    view! {
                        <h3>{format!("{} scrapes could not be read", s.unread_count)}</h3>
                        {list("metrics-unread", unread)}
                    }
                })}
            <details>
                <summary>{format!("Every readable scrape ({})", s.points.len())}</summary>
                <div class="scroll tall">
                    <table id="metrics-table">
                        <thead>
                            <tr>
                                <th scope="col" class="num">"scrape"</th>
                                <th scope="col">"phase"</th>
                                <th scope="col" class="num">"t, s"</th>
                                <th scope="col" class="num">"running"</th>
                                <th scope="col" class="num">"waiting"</th>
                                <th scope="col" class="num">"KV usage"</th>
                                <th scope="col" class="num">"generation tokens"</th>
                                <th scope="col" class="num">"prompt tokens"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </details>
    }
    .into_any();
    view! {
        <FigureCard
            slug="metrics"
            id="receipt-metrics"
            class=FIGURE_CLASS
            title="/metrics over the run"
            alt="Requests running and waiting, KV-cache usage, and generated and prompt tokens since the first scrape, over the run; the numbers are in the tables beside it."
            width=FIGURE_W
            height="520"
            draw=move |canvas| plots::draw_series(canvas, &for_draw.metrics)
        >
            {side}
        </FigureCard>
    }
}

/// Engine counter deltas and histograms.
#[component]
fn Engine(m: Arc<ReceiptModel>) -> impl IntoView {
    let e = &m.audit.engine;
    let hist = e
        .histograms
        .iter()
        .map(|h| {
            view! {
                <tr>
                    <th scope="row" class="mono">{h.family.clone()}</th>
                    <td class="num">{int(h.count)}</td>
                    {td(h.mean_ms)}
                    {td(h.p50_le_ms)}
                    {td(h.p99_le_ms)}
                </tr>
            }
        })
        .collect_view();
    view! {
        <section id="receipt-engine" class="card" aria-labelledby="engine-heading">
            <h2 id="engine-heading">"Engine counters"</h2>
            <dl>
                <dt>"Generation tokens Δ"</dt>
                <dd id="engine-generation">{int_opt(e.generation_tokens_delta)}</dd>
                <dt>"Prompt tokens Δ"</dt>
                <dd id="engine-prompt">{int_opt(e.prompt_tokens_delta)}</dd>
                <dt>"One incarnation"</dt>
                <dd id="engine-continuous">{yes_no(e.continuous)}</dd>
                <dt>"Read"</dt>
                <dd>{e.reason.clone()}</dd>
            </dl>
            <h3>"Incarnations"</h3>
            {list("engine-incarnations", e.incarnations.clone())}
            {(!e.histograms.is_empty())
                .then(|| {
                    view! {
                        <div class="scroll">
                            <table id="engine-histograms">
                                <caption>
                                    "The engine's own latency histograms over the envelope, ms (bucket bounds: an observation, not a cause)"
                                </caption>
                                <thead>
                                    <tr>
                                        <th scope="col">"family"</th>
                                        <th scope="col" class="num">"count"</th>
                                        <th scope="col" class="num">"mean"</th>
                                        <th scope="col" class="num">"p50 ≤"</th>
                                        <th scope="col" class="num">"p99 ≤"</th>
                                    </tr>
                                </thead>
                                <tbody>{hist}</tbody>
                            </table>
                        </div>
                    }
                })}
        </section>
    }
}

/// Engine vs client: agreement or foreign work.
#[component]
fn Agreement(m: Arc<ReceiptModel>) -> impl IntoView {
    let f = &m.audit.foreign_work;
    view! {
        <section
            id="receipt-foreign"
            class="card"
            data-contradiction=f.contradiction.to_string()
            aria-labelledby="foreign-heading"
        >
            <h2 id="foreign-heading">"Agreement and foreign work"</h2>
            <p id="foreign-reason" class:bad=(f.contradiction || f.surplus_tokens.is_some_and(|s| s > 0))>
                {f.reason.clone()}
            </p>
            <dl>
                <dt>"Generation surplus, tokens"</dt>
                <dd id="foreign-surplus">{int_opt(f.surplus_tokens)}</dd>
                <dt>"Prompt surplus, tokens"</dt>
                <dd id="foreign-prompt-surplus">{int_opt(f.prompt_surplus_tokens)}</dd>
                <dt>"Contradiction"</dt>
                <dd>{yes_no(f.contradiction)}</dd>
            </dl>
        </section>
    }
}

/// Every standing.
#[component]
fn Standings(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let mut names: Vec<String> = STANDINGS.iter().map(|s| (*s).to_owned()).collect();
    names.extend(
        a.standings
            .keys()
            .filter(|k| !STANDINGS.contains(&k.as_str()))
            .cloned(),
    );
    let items = names
        .into_iter()
        .map(|name| {
            let s = a.standings.get(&name).cloned();
            let positive = s.as_ref().is_some_and(|s| s.positive);
            view! {
                <li
                    id=format!("standing-{name}")
                    class=if positive { "standing positive" } else { "standing refused" }
                    data-positive=positive.to_string()
                >
                    <span class=if positive { "badge ok" } else { "badge failed" }>
                        {if positive { "positive" } else { "refused" }}
                    </span>
                    " "
                    <strong>{name.clone()}</strong>
                    <p class="reason">
                        {s.as_ref().map_or("not assessed".to_owned(), |s| s.reason.clone())}
                    </p>
                    {s
                        .and_then(|s| s.settle)
                        .map(|settle| {
                            view! {
                                <p class="settle">
                                    <span class="hint">"Would settle it: "</span>
                                    {settle}
                                </p>
                            }
                        })}
                </li>
            }
        })
        .collect_view();
    view! {
        <section id="receipt-standings" class="card wide" aria-labelledby="standings-heading">
            <h2 id="standings-heading">"Standings"</h2>
            <p class="hint">
                "A claim qualifies only when all eight are positive and nothing refused the receipt."
            </p>
            <ul class="standings">{items}</ul>
        </section>
    }
}

/// Refusals and inconsistencies.
#[component]
fn Refusals(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    view! {
        <section id="receipt-refusals" class="card wide" aria-labelledby="refusals-heading">
            <h2 id="refusals-heading">"Refusals and inconsistencies"</h2>
            <h3>"Refusals"</h3>
            {list("refusals-list", a.refusals.clone())}
            <h3>"Inconsistencies (evidence contradicting other evidence)"</h3>
            {list("inconsistencies-list", a.inconsistencies.clone())}
            <h3>"Notes in the receipt (the writer's, not facts)"</h3>
            {list("receipt-notes", m.notes.clone())}
        </section>
    }
}

fn axis_text(axis: &Axis) -> String {
    match axis {
        Axis::Known { value, source } => format!("{value} (from {source})"),
        Axis::Unknown { reason } => format!("unknown: {reason}"),
    }
}

/// What was measured and what was asked.
#[component]
fn SubjectCard(m: Arc<ReceiptModel>) -> impl IntoView {
    let s = &m.subject;
    let p = &m.protocol;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "not stated".to_owned());
    let unstated = p.unstated();
    view! {
        <section id="receipt-subject" class="card" aria-labelledby="subject-heading">
            <h2 id="subject-heading">"Subject and protocol"</h2>
            <dl>
                <dt>"Model"</dt>
                <dd>{axis_text(&s.model)}</dd>
                <dt>"Model revision"</dt>
                <dd>{axis_text(&s.model_revision)}</dd>
                <dt>"GPU"</dt>
                <dd>{axis_text(&s.gpu_sku)}</dd>
                <dt>"Engine"</dt>
                <dd>{axis_text(&s.engine)}</dd>
                <dt>"Engine version"</dt>
                <dd>{axis_text(&s.engine_version)}</dd>
                <dt>"Knobs"</dt>
                <dd>
                    {if s.knobs.is_empty() {
                        "none stated".to_owned()
                    } else {
                        s.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
                    }}
                </dd>
                <dt>"Simulator"</dt>
                <dd>{yes_no(s.simulator)}</dd>
            </dl>
            <h3>"Protocol"</h3>
            <dl>
                <dt>"Client"</dt>
                <dd>{format!("{:?} {}", p.engine, opt(&p.client_version))}</dd>
                <dt>"Endpoint"</dt>
                <dd>{format!("{}{}", opt(&p.base_url), p.endpoint.clone().unwrap_or_default())}</dd>
                <dt>"Model field"</dt>
                <dd>{opt(&p.model)}</dd>
                <dt>"Requests"</dt>
                <dd>{int_opt(p.requests)}</dd>
                <dt>"Time multiplier"</dt>
                <dd>{opt(&p.sec_multiplier)}</dd>
                <dt>"Arrival"</dt>
                <dd>{opt(&p.arrival)}</dd>
                <dt>"Concurrency cap"</dt>
                <dd>
                    {match p.max_concurrency {
                        Some(0) => "uncapped".to_owned(),
                        Some(c) => int(c),
                        None => "not stated".to_owned(),
                    }}
                </dd>
                <dt>"Trace sha256"</dt>
                <dd class="mono">{opt(&p.trace_sha256)}</dd>
                <dt>"Not stated"</dt>
                <dd>
                    {if unstated.is_empty() { "nothing".to_owned() } else { unstated.join(", ") }}
                </dd>
            </dl>
        </section>
    }
}

/// The lease and the client implementation.
#[component]
fn LeaseCard(m: Arc<ReceiptModel>) -> impl IntoView {
    let lease = match (&m.lease.block, &m.lease.lease, &m.lease.problem) {
        (None, _, _) => view! { <p id="lease-none">"No lease: the window's isolation is not established."</p> }.into_any(),
        (Some(_), Some(l), _) => view! {
            <dl id="lease-facts">
                <dt>"Id"</dt>
                <dd class="mono">{l.id.clone()}</dd>
                <dt>"Issuer"</dt>
                <dd>{l.issuer.clone()}</dd>
                <dt>"Holder"</dt>
                <dd>{l.holder.clone()}</dd>
                <dt>"Route"</dt>
                <dd>{l.route.clone()}</dd>
                <dt>"Bound to"</dt>
                <dd>
                    {if l.subject.is_empty() {
                        "nothing (a generic lease)".to_owned()
                    } else {
                        l.subject.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
                    }}
                </dd>
                <dt>"From"</dt>
                <dd>{when(l.from_unix_ns)}</dd>
                <dt>"Until"</dt>
                <dd>{when(l.until_unix_ns)}</dd>
                <dt>"Exclusion"</dt>
                <dd>{if l.exclusion.is_empty() { "none stated".to_owned() } else { l.exclusion.clone() }}</dd>
            </dl>
        }
            .into_any(),
        (Some(block), None, problem) => view! {
            <p class="bad">
                {format!(
                    "The lease block {block} cannot be read: {}",
                    problem.clone().unwrap_or_default(),
                )}
            </p>
        }
            .into_any(),
    };
    let implementation = match &m.implementation {
        None => view! { <p>"Not stated: the receipt does not say which client produced it."</p> }.into_any(),
        Some(i) => view! {
            <dl id="implementation-facts">
                <dt>"Name"</dt>
                <dd>{i.name.clone()}</dd>
                <dt>"Version"</dt>
                <dd>{i.version.clone().unwrap_or_else(|| "unknown".to_owned())}</dd>
                <dt>"Digest of"</dt>
                <dd class="mono">{i.source.clone().unwrap_or_else(|| ABSENT.to_owned())}</dd>
                <dt>"sha256"</dt>
                <dd class="mono">
                    {i.source_sha256.clone().unwrap_or_else(|| format!("unbound: {}", i.unbound.clone().unwrap_or_default()))}
                </dd>
            </dl>
        }
            .into_any(),
    };
    view! {
        <section id="receipt-lease" class="card" aria-labelledby="lease-heading">
            <h2 id="lease-heading">"Lease"</h2>
            {lease}
            <h3>"Client implementation"</h3>
            {implementation}
        </section>
    }
}

/// Raw evidence, one `<details>` per block; a preview is put in the page when first opened.
#[component]
fn EvidenceCard(m: Arc<ReceiptModel>) -> impl IntoView {
    let items = m
        .blocks
        .iter()
        .map(|b| {
            let opened = RwSignal::new(false);
            let b = b.clone();
            let status = if b.ok { "ok" } else { "FAILED" };
            let summary = format!(
                "{} — {} bytes, {}, {status}",
                b.name,
                int(b.bytes),
                match b.encoding {
                    Some(Encoding::Utf8) => "text",
                    Some(Encoding::Base64) => "base64",
                    None => "missing",
                }
            );
            let ok = b.ok;
            view! {
                <details
                    id=format!("evidence-{}", slug(&b.name))
                    class="evidence"
                    data-block=b.name.clone()
                    data-ok=ok.to_string()
                >
                    <summary on:click=move |_| opened.set(true) class:bad=!ok>
                        {summary}
                    </summary>
                    {move || {
                        opened
                            .get()
                            .then(|| match (&b.preview, &b.error) {
                                (Some(text), _) => {
                                    view! {
                                        {b
                                            .truncated
                                            .then(|| {
                                                view! {
                                                    <p class="hint">
                                                        {format!(
                                                            "The first {} KiB of {} bytes{}.",
                                                            model::PREVIEW_BYTES / 1024,
                                                            int(b.bytes),
                                                            if b.binary { ", invalid UTF-8 shown as �" } else { "" },
                                                        )}
                                                    </p>
                                                }
                                            })}
                                        <pre class="preview">{text.clone()}</pre>
                                    }
                                        .into_any()
                                }
                                (None, Some(err)) => {
                                    view! { <p class="error">{err.clone()}</p> }.into_any()
                                }
                                (None, None) => {
                                    if b.preview_omitted {
                                        view! {
                                            <p class="hint">
                                                {format!(
                                                    "This block verified; its text is not kept in the page (previews stop at {} MiB in all). Read it in the receipt file.",
                                                    model::PREVIEW_TOTAL_BYTES / (1024 * 1024),
                                                )}
                                            </p>
                                        }
                                            .into_any()
                                    } else {
                                        view! { <p class="hint">"No preview."</p> }.into_any()
                                    }
                                }
                            })
                    }}
                </details>
            }
        })
        .collect_view();
    view! {
        <section id="receipt-evidence" class="card wide" aria-labelledby="evidence-heading">
            <h2 id="evidence-heading">"Raw evidence"</h2>
            <p class="hint">
                "Every block as the receipt holds it, decoded. A block whose digest fails is not shown: its bytes are not the ones recorded."
            </p>
            <div class="evidence-list">{items}</div>
        </section>
    }
}
