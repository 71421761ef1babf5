//! The playbook view's rows table: one line per playbook row (identity, regime, delta,
//! provenance), behind filters by evidence, model, GPU, engine, knob and free text.
//!
//! The filters' choices are signals here; whether a row passes is
//! [`super::model::RowFilter::admits`] on the row's [`RowKeys`]. A row's "Use as query" fills
//! the query form from it.

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::claim::{Arm, Metric};
use loadproof_core::compare::metric_label;
use loadproof_core::playbook::{Evidence, RegimeAxis, Row, knobs_line};

use super::form::Form;
use super::model::{Book, RowFilter, RowKeys};
use crate::widgets::number::{count, js, percent_change, readable};
use crate::widgets::readout::{Col, num_span, thead};

/// The row filters, as chosen (an empty string: any). `Copy`: every field is a signal.
#[derive(Debug, Clone, Copy)]
pub struct Filters {
    evidence: RwSignal<String>,
    model: RwSignal<String>,
    gpu: RwSignal<String>,
    engine: RwSignal<String>,
    knob: RwSignal<String>,
    text: RwSignal<String>,
}

impl Filters {
    /// Every filter open.
    pub fn new() -> Filters {
        Filters {
            evidence: RwSignal::new(String::new()),
            model: RwSignal::new(String::new()),
            gpu: RwSignal::new(String::new()),
            engine: RwSignal::new(String::new()),
            knob: RwSignal::new(String::new()),
            text: RwSignal::new(String::new()),
        }
    }

    /// Opens every filter.
    pub fn clear(&self) {
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

    /// The choices as they are (tracked).
    fn current(&self) -> RowFilter {
        RowFilter {
            evidence: self.evidence.get(),
            model: self.model.get(),
            gpu: self.gpu.get(),
            engine: self.engine.get(),
            knob: self.knob.get(),
            text: self.text.get(),
        }
    }
}

impl Default for Filters {
    fn default() -> Filters {
        Filters::new()
    }
}

/// One row per playbook row: what it claims and where the claim comes from, behind filters.
#[component]
pub fn RowsTable(
    book: Arc<Book>,
    filters: Filters,
    form: Form,
    /// The row whose per-axis distances the matcher's chart shows ("Use as query" points it
    /// at that row).
    chosen: RwSignal<Option<usize>>,
) -> impl IntoView {
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
    let filter = Memo::new(move |_| filters.current());
    let shown_keys = Arc::clone(&keys);
    let showing =
        Memo::new(move |_| filter.with(|f| shown_keys.iter().filter(|k| f.admits(k)).count()));
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
                {thead(&[Col::Text("Row"), Col::Text("Identity"), Col::Text("Regime"), Col::Text("Delta (medians; change = treatment vs baseline)"), Col::Text("Provenance")])}
                <tbody>
                    {rows
                        .into_iter()
                        .enumerate()
                        .map(|(i, row)| {
                            let keys = Arc::clone(&keys);
                            let hidden = Signal::derive(move || {
                                filter.with(|f| !keys.get(i).is_some_and(|k| f.admits(k)))
                            });
                            view! { <RowLine row=row index=i hidden=hidden form=form chosen=chosen /> }
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

#[component]
fn RowLine(
    row: Row,
    index: usize,
    hidden: Signal<bool>,
    form: Form,
    chosen: RwSignal<Option<usize>>,
) -> impl IntoView {
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
                    title="Copy this row's model, GPU, engine, concurrency, knobs, traffic and window into the query below, and chart this row's distances"
                    on:click=move |_| {
                        form.prefill(&for_query);
                        chosen.set(Some(index));
                    }
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
                            <div data-axis=axis.name()>{format!("{axis} ")} {num_span(regime.get(*axis))}</div>
                        }
                    })
                    .collect_view()}
                <div data-axis="window_s">"window " {num_span(regime.window_s)} " s"</div>
            </td>
            <td>
                <table class="delta">
                    {thead(&[Col::Text("metric"), Col::Num("baseline"), Col::Num("treatment"), Col::Num("change")])}
                    <tbody>
                        {Metric::ALL
                            .iter()
                            .map(|m| {
                                let change = delta.change().get(*m);
                                let base = delta.baseline().get(*m).median;
                                let treat = delta.treatment().get(*m).median;
                                view! {
                                    <tr data-metric=m.name()>
                                        <th scope="row" title=m.name()>{metric_label(m.name()).map_or(m.name(), |l| l.0)}</th>
                                        <td class="num" title=js(base) data-value=js(base)>{readable(base)}</td>
                                        <td class="num" title=js(treat) data-value=js(treat)>{readable(treat)}</td>
                                        <td class="num" title=js(change) data-value=js(change)>{percent_change(change)}</td>
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
