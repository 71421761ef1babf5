//! The playbook view: every row of a playbook, and core's matcher asked about a live trace.
//!
//! The playbook is `playbook.json` from the page's own origin (what `loadproof playbook
//! publish` writes beside the app) or a file the user chooses or drops; it is read by core's
//! `Playbook::from_json`, so a file the CLI refuses is refused here with the same message. The
//! live trace goes through the trace view's ingestion path ([`crate::gunzip::ingest_any`]: gzip too) and
//! core's `Regime::of`, so its regime is the one `trace inspect` and `playbook match --trace`
//! compute. The verdicts are core's `match_rows` with `MatchPolicy::default()`
//! (`model::run_match`); the report is also published as `window.loadproofMatch` (the JSON
//! `playbook match --json` prints), so a browser test can compare the page with the CLI.
//!
//! The live traffic may also be a receipt (`loadproof.receipt/v1` JSON, told apart from a
//! trace by its content): its regime is core's `RegimeAxes::of_receipt`, the schedule it fired,
//! and its prefixes and traffic come from the plan it embeds — what `playbook match --receipt`
//! computes. The rows table (`rows.rs`) filters by evidence, model, GPU, engine, knob and free
//! text; every row's per-axis distances are drawn against their tolerances beside the table of
//! the same numbers (`matches.rs`). Numbers are shown readable
//! ([`crate::widgets::number::readable`]), the exact value in each element's `title`.

mod draw;
mod form;
mod matches;
mod model;
mod rows;

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::playbook::Playbook;
use loadproof_core::receipt::Receipt;
use loadproof_core::site::SITE_PLAYBOOK;
use web_sys::File;

use self::form::{Form, IdentityForm};
use self::matches::MatchTable;
use self::model::{Book, Live, LiveData, SNIFF_BYTES, looks_like_receipt, run_match};
use self::rows::{Filters, RowsTable};
use crate::gunzip::ingest_any;
use crate::handoff::{Handoff, Target};
use crate::ingest::{ReadError, options};
use crate::publish::{json_value, publish};
use crate::site::{Fetched, fetch_bytes, read_blob};
use crate::widgets::drop_zone::DropZone;
use crate::widgets::readout::Message;

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

    // A playbook dropped on another view opens here.
    Handoff::receive(Target::Playbook, start_book);

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
                    Ok(bytes) => Receipt::from_bytes(&bytes)
                        .map(|r| LiveData::Receipt(Box::new(r)))
                        .map_err(|e| format!("{name}: {e}")),
                    Err(err) => Err(format!(
                        "{name}: the browser could not read the file: {err}"
                    )),
                }
            } else {
                match ingest_any(&file, None, options(), |_, _| {}, is_current).await {
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
                    let live_file = Live { source: name, data };
                    // A receipt's plan says where its traffic came from, as `--receipt` reads
                    // it; the user may still change it.
                    if let Some(traffic) = live_file.stated_traffic() {
                        form.traffic.set(traffic.to_string());
                    }
                    live.set(Some(Arc::new(live_file)));
                }
                Err(e) => live_error.set(Some(e)),
            }
        });
    };

    let outcome = Memo::new(move |_| {
        let book = book.get()?;
        let live = live.get()?;
        Some(run_match(&book.playbook, &live, &form.text()))
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
            <Message id="playbook-error" class="error" role="alert" text=book_error />
            {move || book.get().map(|b| view! { <RowsTable book=b filters=filters form=form chosen=chosen /> })}
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
            <Message id="live-error" class="error" role="alert" text=live_error />
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
