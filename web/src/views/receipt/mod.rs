//! The receipt view: choose or drop a receipt (or open one the site bundles), then read core's
//! audit of it.
//!
//! The file is audited off the page's thread by [`loader::ReceiptLoad`] (progress bar,
//! Cancel), which builds one [`model::ReceiptModel`]: core's `Audit` verbatim plus the
//! receipt's own evidence re-arranged for plots. This view computes nothing core computes: it
//! lays the model out (`report.rs`, `figures.rs`). The audit is published as
//! `window.loadproofAudit` (the JSON `loadproof receipt audit --json` prints, parsed) so a
//! browser test can compare the page with the CLI. Numbers are shown readable
//! ([`crate::widgets::number::readable`]) with the exact value in the element's `title`. Every
//! chart has a table of the numbers it draws beside it.
//!
//! On first mount the view reads the site's `receipts.json` (what `loadproof playbook publish
//! --receipt` writes beside the app; asked for as the page started), lists its receipts as
//! buttons and opens the one the hash names (`#/receipt/NAME`), else the first. The hash then
//! names the bundled receipt on screen; a chosen or dropped local file has no link
//! (`#/receipt`). A name the site does not list is said so, and nothing is fetched for it: only
//! the paths `receipts.json` lists are. A site without one (404) says nothing.
//!
//! Once audited, the audit can be saved (`#receipt-download-audit`: core's `Audit::to_json`,
//! the bytes `receipt audit --json` writes) and the page printed as a report.
//!
//! Every audit is judged against the reviewer's audit policy ([`AuditPolicy`], set in the
//! "Audit policy" panel below the file input, shared with the compare view); changing it audits
//! the receipt on screen again.
//!
//! The model and the loader are shared with the compare view, which audits two receipts the
//! same way.

mod draw;
mod figures;
pub mod loader;
pub mod model;
mod over_time;
mod rates;
mod report;
mod statements;
mod summary;
mod toc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::site::{SITE_RECEIPTS, SiteReceipt};
use wasm_bindgen::JsValue;
use web_sys::File;

use self::loader::ReceiptLoad;
use self::report::Report;
use crate::handoff::{Handoff, Target};
use crate::policy::AuditPolicy;
use crate::publish::{json_value, publish};
use crate::route::{Here, Linked, Route};
use crate::site::{Fetched, SiteIndex, blob_of, fetch_bytes, fetch_site_receipts};
use crate::widgets::drop_zone::DropZone;
use crate::widgets::export::{PrintButton, audit_file_name, save_text};
use crate::widgets::number::readable;
use crate::widgets::policy_panel::PolicyPanel;
use crate::widgets::readout::Message;

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
    let load = ReceiptLoad::new(AuditPolicy::from_context());
    let ReceiptLoad {
        model,
        verdict,
        error,
        status,
        loading,
        ..
    } = load;
    let bundled = RwSignal::new(Vec::<SiteReceipt>::new());
    let bundled_state = RwSignal::new(Bundled::Pending);
    let here = Here::from_context();
    // The bundled receipt on screen (or being opened); `None` for a local file.
    let shown_bundled = RwSignal::new(None::<String>);

    // The report on screen has every card built (they are built a frame at a time): the audit
    // is published for tests and the console only then.
    // `shown` counts the reports put on screen; `built` is the count of the last complete one.
    let shown = StoredValue::new(0u64);
    let built = RwSignal::new(0u64);
    Effect::new(move |_| {
        let built = built.get();
        model.with(|m| {
            // A report still being built (a new receipt, or the same one audited again under
            // another policy) publishes nothing yet: never the audit of the report it replaces.
            if m.is_some() && built != shown.get_value() {
                publish("loadproofAudit", &JsValue::NULL);
                publish("loadproofAuditSource", &JsValue::NULL);
                return;
            }
            let m = m.as_deref();
            publish("loadproofAudit", &json_value(m.map(|m| &m.audit)));
            publish(
                "loadproofAuditSource",
                &m.map_or(JsValue::NULL, |m| JsValue::from_str(&m.source)),
            );
        });
        crate::ingest::mark("audit-published");
    });
    // `{source, file_sha256, audit}` while a verdict is shown ahead of its report, else null.
    Effect::new(move |_| {
        verdict.with(|v| {
            publish("loadproofVerdict", &json_value(v.as_deref()));
            if v.is_some() {
                crate::ingest::mark("verdict-published");
            }
        });
    });

    // `expected`: the sha256 the site's index lists, checked against the file's own.
    let start = move |name: String, blob: web_sys::Blob, expected: Option<String>| {
        let generation = load.begin(&name, "read");
        let done_name = name.clone();
        load.audit(name, blob, generation, move |sha256| match &expected {
            Some(want) if want != sha256 => Err(format!(
                "{done_name}: this site's copy has sha256 {sha256}, but {SITE_RECEIPTS} lists {want}: not shown"
            )),
            _ => Ok(()),
        });
    };

    let cancel = move |_| {
        if let Some(name) = load.cancel() {
            status.set(Some(format!("Cancelled: {name} was not audited.")));
        }
    };

    let open_bundled = move |entry: SiteReceipt| {
        shown_bundled.set(Some(entry.name.clone()));
        here.name(Route::Receipt, Linked::Receipt(entry.name.clone()));
        error.set(None);
        status.set(Some(format!("Fetching {} from this site…", entry.path)));
        spawn_local(async move {
            match fetch_bytes(&entry.path).await {
                Ok(Fetched::Body(bytes)) => match blob_of(&bytes) {
                    Ok(blob) => start(entry.name.clone(), blob, Some(entry.sha256.clone())),
                    Err(_) => error.set(Some(format!(
                        "{}: the browser could not hold the file",
                        entry.name
                    ))),
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
        match fetch_site_receipts().await {
            SiteIndex::Listed(list) => {
                bundled.set(list);
                bundled_state.set(Bundled::Listed);
            }
            // A development server that answers every path with the app's HTML.
            SiteIndex::Invalid { html: true, .. } | SiteIndex::Missing => {
                bundled_state.set(Bundled::None);
            }
            SiteIndex::Invalid { error: e, .. } => {
                bundled_state.set(Bundled::Failed);
                error.set(Some(format!("{SITE_RECEIPTS} (this site): {e}")));
            }
            SiteIndex::Failed(e) => {
                bundled_state.set(Bundled::Failed);
                status.set(Some(format!(
                    "Could not read {SITE_RECEIPTS} from this site ({e}): choose or drop a receipt."
                )));
            }
        }
    });

    // Follow the hash: open the bundled receipt it names (once the index is read), or name
    // the one on screen; the first bundled one when nothing is shown yet.
    Effect::new(move |_| {
        let state = bundled_state.get();
        let linked = here.linked();
        if here.route() != Route::Receipt || state == Bundled::Pending {
            return;
        }
        let shown = shown_bundled.get_untracked();
        match linked {
            Linked::Receipt(name) if shown.as_deref() != Some(name.as_str()) => {
                let entry = bundled.with_untracked(|l| l.iter().find(|e| e.name == name).cloned());
                match entry {
                    Some(entry) => open_bundled(entry),
                    None => error.set(Some(not_bundled(&name, &bundled.get_untracked()))),
                }
            }
            Linked::Nothing => match shown {
                Some(name) => here.name(Route::Receipt, Linked::Receipt(name)),
                None => {
                    if let Some(first) = bundled.with_untracked(|l| l.first().cloned())
                        && load.is_empty()
                    {
                        open_bundled(first);
                    }
                }
            },
            _ => {}
        }
    });

    let download = move |_| {
        let Some(m) = model.get_untracked() else {
            return;
        };
        if save_text(
            &audit_file_name(&m.source),
            &m.audit.to_json(),
            "application/json",
        )
        .is_err()
        {
            error.set(Some("The browser refused to save the file.".to_owned()));
        }
    };

    let start_file = move |file: File| {
        shown_bundled.set(None);
        here.name(Route::Receipt, Linked::Nothing);
        let blob: web_sys::Blob = file.clone().into();
        start(file.name(), blob, None);
    };
    // A receipt dropped on another view opens here.
    Handoff::receive(Target::Receipt, start_file);

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
            <Message id="receipt-status" class="hint" role="status" text=status />
            <Message id="receipt-error" class="error" role="alert" text=error />
        </section>
        <PolicyPanel prefix="receipt" />
        {move || {
            verdict
                .get()
                .filter(|_| model.with(Option::is_none))
                .map(|v| view! { <report::EarlyVerdict verdict=v /> })
        }}
        {move || {
            model
                .get()
                .map(|m| {
                    shown.update_value(|n| *n += 1);
                    let this_report = shown.get_value();
                    view! {
                        <section class="card wide export" aria-label="Export">
                            <button type="button" id="receipt-download-audit" on:click=download>
                                {format!("Download audit JSON ({})", audit_file_name(&m.source))}
                            </button>
                            <PrintButton id="receipt-print" />
                            <span class="hint">
                                "The file is what "
                                <code>"loadproof receipt audit --json"</code>
                                " writes for this receipt, byte for byte."
                            </span>
                        </section>
                        <Report
                            model=m
                            on_built=Callback::new(move |()| built.set(this_report))
                        />
                    }
                })
        }}
    }
}

/// Why a linked name opened nothing: the name (as text, never markup) and what the site has.
fn not_bundled(name: &str, list: &[SiteReceipt]) -> String {
    if list.is_empty() {
        return format!("The link names the receipt {name:?}, but this site bundles no receipts.");
    }
    let names: Vec<&str> = list.iter().map(|e| e.name.as_str()).collect();
    format!(
        "The link names the receipt {name:?}, but this site bundles no receipt of that name (it bundles {}).",
        names.join(", ")
    )
}
