//! The playbook view's query form: what the user serves (model, GPU, engine, concurrency,
//! knobs, traffic) and the burstiness window, one signal per field.
//!
//! The form holds text only; [`super::model::run_match`] reads it into core's types (and says
//! which field is wrong). A row's "Use as query" and a newly read playbook fill it from a row
//! ([`super::model::QueryText::of_row`]); a dropped receipt sets its traffic from its plan.

use leptos::prelude::*;
use loadproof_core::playbook::Row;

use super::model::QueryText;

/// The query's fields, as typed. `Copy`: every field is a signal.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    pub model: RwSignal<String>,
    pub revision: RwSignal<String>,
    pub gpu: RwSignal<String>,
    pub engine: RwSignal<String>,
    pub version: RwSignal<String>,
    pub concurrency: RwSignal<String>,
    pub knobs: RwSignal<String>,
    pub traffic: RwSignal<String>,
    pub window: RwSignal<String>,
}

impl Form {
    /// The form as it first reads ([`QueryText::blank`]).
    pub fn new() -> Form {
        let q = QueryText::blank();
        Form {
            model: RwSignal::new(q.model),
            revision: RwSignal::new(q.revision),
            gpu: RwSignal::new(q.gpu),
            engine: RwSignal::new(q.engine),
            version: RwSignal::new(q.version),
            concurrency: RwSignal::new(q.concurrency),
            knobs: RwSignal::new(q.knobs),
            traffic: RwSignal::new(q.traffic),
            window: RwSignal::new(q.window),
        }
    }

    /// The fields' text (tracked: a change to any field re-runs the caller).
    pub fn text(&self) -> QueryText {
        QueryText {
            model: self.model.get(),
            revision: self.revision.get(),
            gpu: self.gpu.get(),
            engine: self.engine.get(),
            version: self.version.get(),
            concurrency: self.concurrency.get(),
            knobs: self.knobs.get(),
            traffic: self.traffic.get(),
            window: self.window.get(),
        }
    }

    /// Fills every field from `row` (a convenience: the user edits from there).
    pub fn prefill(&self, row: &Row) {
        let q = QueryText::of_row(row);
        self.model.set(q.model);
        self.revision.set(q.revision);
        self.gpu.set(q.gpu);
        self.engine.set(q.engine);
        self.version.set(q.version);
        self.concurrency.set(q.concurrency);
        self.knobs.set(q.knobs);
        self.traffic.set(q.traffic);
        self.window.set(q.window);
    }
}

impl Default for Form {
    fn default() -> Form {
        Form::new()
    }
}

/// The identity the query states, one labelled input per field.
#[component]
pub fn IdentityForm(form: Form) -> impl IntoView {
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
