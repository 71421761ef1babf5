//! The comparison view: two receipts side by side, baseline against treatment.
//!
//! Each slot takes a file (chosen, dropped, or one the site publishes in `receipts.json`) and
//! audits it through [`crate::offload::audit_receipt`] (off the page's thread, with progress
//! and a cancel). The comparison itself is core's `compare::compare` on the two audits —
//! the same code as `loadproof receipt compare --json`, published as
//! `window.loadproofComparison` so a browser test can compare the page with the CLI. Every
//! number shown is in the table; the bar chart of relative changes is a picture of that table.
//!
//! A comparison of one receipt per arm is an observation, not a measured effect; the page says
//! so beside the numbers, as the JSON does.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::claim::Arm;
use loadproof_core::compare::{Better, Comparison, MetricChange, Side, compare};
use loadproof_core::receipt::sha256_hex;
use loadproof_core::site::{SITE_RECEIPTS, SiteReceipt, SiteReceipts};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_canvas::CanvasBackend;
use web_sys::{Blob, HtmlCanvasElement};

use crate::offload::{Job, Progress, audit_receipt};
use crate::publish::{json_value, publish};
use crate::site::{Fetched, fetch_bytes};
use crate::views::receipt::model::ReceiptModel;
use crate::widgets::canvas_figure::{CanvasFigure, DrawProblem};
use crate::widgets::drop_zone::DropZone;
use crate::widgets::number::{ABSENT, fixed, js, readable};

/// Reads `receipts.json` with core's rule: another schema or a path that leaves the site is
/// refused.
fn parse_listing(bytes: &[u8]) -> Result<Vec<SiteReceipt>, String> {
    SiteReceipts::from_json(bytes)
        .map(|index| index.receipts)
        .map_err(|e| format!("{SITE_RECEIPTS}: {e}"))
}

/// One side: its file's audit, or its progress, or its error.
#[derive(Clone, Copy)]
struct Slot {
    arm: Arm,
    model: RwSignal<Option<Arc<ReceiptModel>>>,
    error: RwSignal<Option<String>>,
    /// The file being read and how far.
    progress: RwSignal<Option<(String, Progress)>>,
    /// A note after a cancel.
    status: RwSignal<Option<String>>,
    /// The site receipt chosen in the select (its index), or "".
    chosen: RwSignal<String>,
    job: StoredValue<Option<Job>, LocalStorage>,
    /// Bumped by every load, so a slower, older fetch never overwrites a newer choice.
    generation: StoredValue<u64>,
}

impl Slot {
    fn new(arm: Arm) -> Slot {
        Slot {
            arm,
            model: RwSignal::new(None),
            error: RwSignal::new(None),
            progress: RwSignal::new(None),
            status: RwSignal::new(None),
            chosen: RwSignal::new(String::new()),
            job: StoredValue::new_local(None),
            generation: StoredValue::new(0),
        }
    }

    fn id(self, what: &str) -> String {
        format!("{}-{what}", self.arm)
    }

    fn title(self) -> &'static str {
        match self.arm {
            Arm::Baseline => "Baseline",
            Arm::Treatment => "Treatment",
        }
    }

    fn is_empty(self) -> bool {
        self.model.with_untracked(Option::is_none)
            && self.progress.with_untracked(Option::is_none)
            && self.error.with_untracked(Option::is_none)
    }

    /// Starts a new load: stops the running job and invalidates older ones.
    fn begin(self, source: &str, stage: &str) -> u64 {
        self.job.update_value(|j| {
            if let Some(job) = j.take() {
                job.cancel();
            }
        });
        let generation = self.generation.get_value() + 1;
        self.generation.set_value(generation);
        self.model.set(None);
        self.error.set(None);
        self.status.set(None);
        self.progress.set(Some((
            source.to_owned(),
            Progress {
                fraction: 0.0,
                stage: stage.to_owned(),
            },
        )));
        generation
    }

    fn fail(self, message: String) {
        self.progress.set(None);
        self.error.set(Some(message));
    }

    /// Audits `blob` (reported as `source`) off the page's thread.
    fn audit(self, source: String, blob: Blob, generation: u64) {
        if self.generation.get_value() != generation {
            return;
        }
        let name = source.clone();
        let job = audit_receipt(
            source,
            blob,
            move |p| {
                if self.generation.get_value() == generation {
                    self.progress.set(Some((name.clone(), p)));
                }
            },
            move |result| {
                if self.generation.get_value() != generation {
                    return;
                }
                self.job.set_value(None);
                self.progress.set(None);
                match result {
                    Ok(model) => self.model.set(Some(Arc::new(model))),
                    Err(e) => self.error.set(Some(e)),
                }
            },
        );
        self.job.set_value(Some(job));
    }

    fn load_file(self, file: web_sys::File) {
        let name = file.name();
        self.chosen.set(String::new());
        let generation = self.begin(&name, "read");
        self.audit(name, file.into(), generation);
    }

    /// Fetches a receipt the site publishes, checks it is the bytes the listing names, and
    /// audits it.
    fn load_site(self, index: usize, entry: SiteReceipt) {
        self.chosen.set(index.to_string());
        let generation = self.begin(&entry.name, "fetch");
        spawn_local(async move {
            let fetched = fetch_bytes(&entry.path).await;
            if self.generation.get_value() != generation {
                return;
            }
            let bytes = match fetched {
                Ok(Fetched::Body(bytes)) => bytes,
                Ok(Fetched::Status(code)) => {
                    return self.fail(format!(
                        "{}: this site does not serve {} (HTTP {code}), though {SITE_RECEIPTS} lists it",
                        entry.name, entry.path
                    ));
                }
                Err(e) => {
                    return self.fail(format!(
                        "{}: could not fetch {}: {e}",
                        entry.name, entry.path
                    ));
                }
            };
            let sha = sha256_hex(&bytes);
            if sha != entry.sha256 || bytes.len() as u64 != entry.bytes {
                return self.fail(format!(
                    "{}: the site serves {} bytes with sha256 {sha}; {SITE_RECEIPTS} lists {} bytes with sha256 {}",
                    entry.name,
                    bytes.len(),
                    entry.bytes,
                    entry.sha256
                ));
            }
            match blob_of(&bytes) {
                Ok(blob) => self.audit(entry.name, blob, generation),
                Err(e) => self.fail(format!("{}: {e}", entry.name)),
            }
        });
    }

    fn cancel(self) {
        let name = self
            .progress
            .with_untracked(|p| p.as_ref().map(|(n, _)| n.clone()));
        self.job.update_value(|j| {
            if let Some(job) = j.take() {
                job.cancel();
            }
        });
        self.generation.set_value(self.generation.get_value() + 1);
        self.progress.set(None);
        self.status.set(Some(format!(
            "Cancelled{}: choose a file to start again.",
            name.map_or(String::new(), |n| format!(" {n}"))
        )));
    }
}

fn blob_of(bytes: &[u8]) -> Result<Blob, String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    Blob::new_with_u8_array_sequence(&parts)
        .map_err(|e| format!("the browser could not hold the file: {e:?}"))
}

fn side(m: &ReceiptModel) -> Side<'_> {
    Side {
        source: &m.source,
        file_sha256: &m.file_sha256,
        protocol: &m.protocol,
        subject: &m.subject,
        audit: &m.audit,
    }
}

/// Two slots and, once both are audited, the comparison.
#[component]
pub fn CompareView() -> impl IntoView {
    let baseline = Slot::new(Arm::Baseline);
    let treatment = Slot::new(Arm::Treatment);
    let site: RwSignal<Vec<SiteReceipt>> = RwSignal::new(Vec::new());
    let site_status = RwSignal::new(None::<String>);
    let site_error = RwSignal::new(None::<String>);

    // The site's own receipts, when it publishes some: the first two preload the slots.
    spawn_local(async move {
        match fetch_bytes(SITE_RECEIPTS).await {
            Ok(Fetched::Body(bytes)) => match parse_listing(&bytes) {
                Ok(list) => {
                    site_status.set(Some(format!(
                        "This site publishes {} receipt(s) in {SITE_RECEIPTS}.",
                        list.len()
                    )));
                    site.set(list.clone());
                    let mut entries = list.into_iter().enumerate();
                    if let (Some((i, first)), Some((j, second))) = (entries.next(), entries.next())
                    {
                        if baseline.is_empty() {
                            baseline.load_site(i, first);
                        }
                        if treatment.is_empty() {
                            treatment.load_site(j, second);
                        }
                    }
                }
                Err(e) => site_error.set(Some(e)),
            },
            Ok(Fetched::Status(_)) => {}
            Err(e) => site_error.set(Some(format!("{SITE_RECEIPTS}: {e}"))),
        }
    });

    let comparison = Memo::new(move |_| {
        let b = baseline.model.get()?;
        let t = treatment.model.get()?;
        Some(Arc::new(compare(&side(&b), &side(&t))))
    });
    Effect::new(move |_| {
        comparison.with(|c| publish("loadproofComparison", &json_value(c.as_deref())));
    });

    view! {
        <section class="card wide compare-intro" aria-labelledby="compare-heading">
            <h2 id="compare-heading">"Compare two receipts"</h2>
            <p class="hint">
                "Choose or drop a baseline receipt (without the change) and a treatment receipt (with it). "
                "Both are audited here, by the same code as "
                <code>"loadproof receipt compare"</code>
                ". One receipt per arm is an observation, not a measured effect."
            </p>
            {move || site_status.get().map(|s| view! { <p id="compare-site" class="hint">{s}</p> })}
            {move || {
                site_error
                    .get()
                    .map(|e| view! { <p id="compare-site-error" class="error" role="alert">{e}</p> })
            }}
        </section>
        <SlotCard of=baseline site=site />
        <SlotCard of=treatment site=site />
        {move || match comparison.get() {
            None => {
                view! {
                    <section class="card wide" aria-live="polite">
                        <p id="compare-waiting" class="hint">
                            "The comparison appears when both receipts are audited."
                        </p>
                    </section>
                }
                    .into_any()
            }
            Some(c) => view! { <ComparisonView c=c /> }.into_any(),
        }}
    }
}

/// One slot: the file input and drop zone, the site's receipts, progress, error and banner.
#[component]
fn SlotCard(of: Slot, site: RwSignal<Vec<SiteReceipt>>) -> impl IntoView {
    let slot = of;
    let site_id = slot.id("site");
    let progress_id = slot.id("progress");
    let what = match slot.arm {
        Arm::Baseline => "without the change under test",
        Arm::Treatment => "with the change under test",
    };
    view! {
        <section class="card compare-slot" data-arm=slot.arm.to_string() aria-labelledby=slot.id("heading")>
            <h2 id=slot.id("heading")>{slot.title()} <span class="hint">" — " {what}</span></h2>
            <DropZone
                id=slot.id("file")
                accept=".json,application/json"
                on_file=move |file| slot.load_file(file)
            >
                {format!("Choose the {} receipt (loadproof.receipt/v1 JSON), or drop it here.", slot.arm)}
            </DropZone>
            {move || {
                let list = site.get();
                (!list.is_empty())
                    .then(|| {
                        let (site_for, site_id) = (site_id.clone(), site_id.clone());
                        view! {
                            <label class="field" for=site_for>
                                <span>"Or a receipt published with this site"</span>
                                <select
                                    id=site_id
                                    prop:value=move || slot.chosen.get()
                                    on:change=move |ev| {
                                        let value = event_target_value(&ev);
                                        let entry = value
                                            .parse::<usize>()
                                            .ok()
                                            .and_then(|i| site.with_untracked(|l| l.get(i).cloned()).map(|e| (i, e)));
                                        if let Some((i, entry)) = entry {
                                            slot.load_site(i, entry);
                                        }
                                    }
                                >
                                    <option value="">"—"</option>
                                    {list
                                        .into_iter()
                                        .enumerate()
                                        .map(|(i, r)| view! { <option value=i.to_string()>{r.name}</option> })
                                        .collect_view()}
                                </select>
                            </label>
                        }
                    })
            }}
            {move || {
                slot.progress
                    .get()
                    .map(|(name, p)| {
                        let progress_id = progress_id.clone();
                        view! {
                            <p class="reading" role="status">
                                <label for=progress_id.clone()>{format!("Auditing {name}: {} ", p.stage)}</label>
                                <progress id=progress_id max="1" value=p.fraction.to_string()></progress>
                                " "
                                <button type="button" id=slot.id("cancel") on:click=move |_| slot.cancel()>
                                    "Cancel"
                                </button>
                            </p>
                        }
                    })
            }}
            {move || slot.status.get().map(|s| view! { <p class="hint" id=slot.id("status") role="status">{s}</p> })}
            {move || slot.error.get().map(|e| view! { <p class="error" id=slot.id("error") role="alert">{e}</p> })}
            {move || slot.model.get().map(|m| view! { <Banner of=slot model=m /> })}
        </section>
    }
}

/// A side's qualification, as the audit gives it.
#[component]
fn Banner(of: Slot, model: Arc<ReceiptModel>) -> impl IntoView {
    let q = model.audit.qualification();
    let qualified = q.is_qualified();
    let refusals = q.refusals().to_vec();
    let failing: Vec<String> = model
        .audit
        .digests
        .iter()
        .filter(|d| !d.ok)
        .map(|d| d.block.clone())
        .collect();
    let short: String = model.file_sha256.chars().take(12).collect();
    let headline = if qualified {
        "QUALIFIED".to_owned()
    } else {
        format!("UNQUALIFIED — {} refusal(s)", refusals.len())
    };
    let simulator = model.audit.simulator;
    let knobs = model
        .subject
        .knobs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ");
    view! {
        <div
            class="banner"
            class:qualified=qualified
            class:unqualified=!qualified
            id=of.id("banner")
            data-qualified=qualified.to_string()
        >
            <p class="verdict">
                <strong>{headline}</strong>
                {simulator.then_some(" (of loadproof sim, a simulator)")}
            </p>
            <p class="source">
                <span class="name">{model.source.clone()}</span>
                " · sha256 "
                <code title=model.file_sha256.clone()>{short} "…"</code>
                " · knobs: "
                {if knobs.is_empty() { "none stated".to_owned() } else { knobs }}
            </p>
            {(!failing.is_empty())
                .then(|| {
                    view! {
                        <p class="error" id=of.id("digests")>
                            "Evidence fails verification: " {failing.join(", ")}
                        </p>
                    }
                })}
            {(!refusals.is_empty())
                .then(|| {
                    view! {
                        <details>
                            <summary>"Refusals"</summary>
                            <ul class="refusals">
                                {refusals.into_iter().map(|r| view! { <li>{r}</li> }).collect_view()}
                            </ul>
                        </details>
                    }
                })}
        </div>
    }
}

/// The verdict, the differences, the table and the chart.
#[component]
fn ComparisonView(c: Arc<Comparison>) -> impl IntoView {
    let verdict = if c.comparable {
        "Comparable: one protocol, one subject apart from knobs, both qualified".to_owned()
    } else {
        format!("Not comparable: {} reason(s)", c.reasons.len())
    };
    let reasons = c.reasons.clone();
    let charted: Vec<(String, f64, Option<Better>)> = c
        .metrics
        .iter()
        .filter_map(|m| m.relative_change.map(|r| (m.metric.clone(), r, m.better)))
        .collect();
    let canvas_height = (64 + 24 * charted.len().max(1)).to_string();
    let chart_problem = RwSignal::new(None::<String>);
    let to_draw = charted.clone();
    let protocol = if c.same_protocol {
        view! {
            <p id="compare-protocol" data-same="true">
                "One protocol: " <code class="wrap">{c.baseline.protocol_key.clone()}</code>
            </p>
        }
        .into_any()
    } else {
        view! {
            <div id="compare-protocol" data-same="false">
                <p class="bad">
                    {format!("Not one protocol: {} field(s) differ", c.protocol_differences.len())}
                </p>
                <DifferenceTable rows=c.protocol_differences.clone() label="Protocol field" />
            </div>
        }
        .into_any()
    };
    let subject = if c.same_subject {
        view! { <p id="compare-subject" data-same="true">"One subject apart from knobs."</p> }
            .into_any()
    } else {
        view! {
            <div id="compare-subject" data-same="false">
                <p class="bad">
                    {format!("Not one subject: {} axis/axes differ or are unknown", c.subject_differences.len())}
                </p>
                <DifferenceTable rows=c.subject_differences.clone() label="Subject axis" />
            </div>
        }
            .into_any()
    };
    let knobs = if c.knobs_changed.is_empty() {
        let text = if c.same_protocol && c.same_subject {
            "No knob differs: an A/A pair."
        } else {
            "No knob differs."
        };
        view! { <li>{text}</li> }.into_any()
    } else {
        c.knobs_changed
            .iter()
            .map(|k| view! { <li data-knob=k.knob.clone()>{format!("Changed: {k}")}</li> })
            .collect_view()
            .into_any()
    };
    view! {
        <section class="card wide compare-result" aria-labelledby="compare-result-heading">
            <h2 id="compare-result-heading">"Baseline vs treatment"</h2>
            <div
                id="compare-verdict"
                class="banner"
                class:qualified=c.comparable
                class:unqualified=!c.comparable
                data-comparable=c.comparable.to_string()
                role="status"
            >
                <p class="verdict">
                    <strong>{verdict}</strong>
                </p>
                {(!reasons.is_empty())
                    .then(|| {
                        view! {
                            <ul id="compare-reasons">
                                {reasons
                                    .into_iter()
                                    .map(|r| {
                                        view! {
                                            <li data-rule=r.rule.to_string()>
                                                <code>{r.rule.to_string()}</code>
                                                ": "
                                                {r.message}
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                    })}
            </div>
            <p id="compare-caveat" class="caveat">
                <strong>"An observation, not a measured effect. "</strong>
                {c.caveat.clone()}
            </p>
            <div class="compare-differences">
                <div>
                    <h3>"Protocol"</h3>
                    {protocol}
                </div>
                <div>
                    <h3>"Subject"</h3>
                    {subject}
                    <ul id="compare-knobs">{knobs}</ul>
                </div>
            </div>
            <div class="compare-figure">
                <div class="numbers">
                    <p class="hint" id="compare-table-note">
                        "Δ = treatment − baseline; Δ% = Δ / baseline (absent when the baseline is 0 or a side is unread). "
                        "Green reads as better and red as worse for that metric — a direction, not a cause."
                    </p>
                    <div class="scroll">
                    <table id="compare-table" aria-describedby="compare-table-note">
                        <caption>"Every metric, baseline vs treatment"</caption>
                        <thead>
                            <tr>
                                <th scope="col">"Metric"</th>
                                <th scope="col" class="num">"Baseline"</th>
                                <th scope="col" class="num">"Treatment"</th>
                                <th scope="col" class="num">"Δ"</th>
                                <th scope="col" class="num">"Δ%"</th>
                            </tr>
                        </thead>
                        <tbody>
                            {c.metrics.iter().map(|m| view! { <MetricRow m=m.clone() /> }).collect_view()}
                        </tbody>
                    </table>
                    </div>
                </div>
                <figure class="compare-chart">
                    <CanvasFigure
                        id="compare-chart"
                        width="600"
                        height=canvas_height
                        alt="Bar chart of each metric's relative change, treatment against baseline; the numbers are in the table beside it."
                        problem=chart_problem
                        draw=move |canvas| draw_changes(canvas, &to_draw)
                    />
                    <figcaption class="hint">
                        {format!(
                            "Relative change of the {} metric(s) with a nonzero, readable baseline on both sides; the table is the text alternative.",
                            charted.len()
                        )}
                    </figcaption>
                    <DrawProblem problem=chart_problem />
                </figure>
            </div>
            <ul id="compare-notes" class="hint">
                {c.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}
            </ul>
        </section>
    }
}

#[component]
fn DifferenceTable(
    rows: Vec<loadproof_core::compare::Difference>,
    label: &'static str,
) -> impl IntoView {
    view! {
        <div class="scroll">
            <table class="differences">
                <thead>
                    <tr>
                        <th scope="col">{label}</th>
                        <th scope="col">"Baseline"</th>
                        <th scope="col">"Treatment"</th>
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|d| {
                            let field = d.field.clone();
                            view! {
                                <tr data-field=field>
                                    <th scope="row">{d.field}</th>
                                    <td class="wrap">{d.baseline}</td>
                                    <td class="wrap">{d.treatment}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// `+` for positive numbers, as the change columns read.
fn signed(v: f64, text: String) -> String {
    if v > 0.0 { format!("+{text}") } else { text }
}

/// A cell: readable text, the exact value in `data-value` (`""` when absent).
fn cell(v: Option<f64>, text: fn(f64) -> String, note: Option<String>) -> impl IntoView {
    let exact = v.map_or_else(String::new, js);
    let shown = v.map_or_else(|| ABSENT.to_owned(), text);
    let title = match (v, note) {
        (Some(v), _) => js(v),
        (None, Some(n)) => n,
        (None, None) => String::new(),
    };
    view! {
        <td class="num" data-value=exact title=title>
            {shown}
        </td>
    }
}

/// Which way a change reads for a metric with a better direction.
fn tone(m: &MetricChange) -> &'static str {
    match (m.better, m.change) {
        (Some(_), Some(0.0)) => "same",
        (Some(Better::Higher), Some(c)) if c > 0.0 => "better",
        (Some(Better::Lower), Some(c)) if c < 0.0 => "better",
        (Some(_), Some(_)) => "worse",
        _ => "neutral",
    }
}

#[component]
fn MetricRow(m: MetricChange) -> impl IntoView {
    let note = m.note.clone();
    // A break opportunity after each underscore, so a narrow screen wraps names at words.
    let parts: Vec<String> = m.metric.split_inclusive('_').map(str::to_owned).collect();
    let unit = format!(" ({})", m.unit);
    view! {
        <tr data-metric=m.metric.clone() class=tone(&m)>
            <th scope="row">
                {parts.into_iter().map(|p| view! { {p}<wbr /> }).collect_view()}
                <span class="unit">{unit}</span>
            </th>
            {cell(m.baseline, readable, None)}
            {cell(m.treatment, readable, None)}
            {cell(m.change, |v| signed(v, readable(v)), note.clone())}
            {cell(m.relative_change, |v| format!("{}%", signed(v, fixed(v * 100.0, 1))), note.clone())}
        </tr>
    }
}

const BETTER: RGBColor = RGBColor(6, 118, 71);
const WORSE: RGBColor = RGBColor(180, 35, 24);
const NEUTRAL: RGBColor = RGBColor(87, 96, 106);
const CHART_FONT: (&str, u32) = ("sans-serif", 14);
/// Pixels kept on the left for the metric names.
const NAMES_PX: u32 = 250;

/// Horizontal bars of relative change in percent (the first metric at the top), coloured by
/// whether the direction reads as better for that metric.
fn draw_changes(
    canvas: HtmlCanvasElement,
    rows: &[(String, f64, Option<Better>)],
) -> Result<(), String> {
    let backend = CanvasBackend::with_canvas_object(canvas)
        .ok_or_else(|| "this browser gives the canvas no 2D context".to_owned())?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(chart_error)?;
    if rows.is_empty() {
        root.draw(&Text::new(
            "no metric has a relative change (a side unread, or a baseline of 0)",
            (12, 30),
            CHART_FONT,
        ))
        .map_err(chart_error)?;
        return root.present().map_err(chart_error);
    }
    let n = rows.len() as f64;
    let top = rows
        .iter()
        .map(|(_, r, _)| (r * 100.0).abs())
        .fold(0.0f64, f64::max);
    let x_max = if top > 0.0 { top * 1.25 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(NAMES_PX)
        .build_cartesian_2d(-x_max..x_max, 0f64..n)
        .map_err(chart_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .y_label_formatter(&|_| String::new())
        .x_labels(5)
        .x_desc("relative change, % (treatment vs baseline)")
        .label_style(CHART_FONT)
        .x_label_formatter(&|v| format!("{}%", readable(*v)))
        .draw()
        .map_err(chart_error)?;
    let slot = |k: usize| n - 1.0 - k as f64;
    chart
        .draw_series(rows.iter().enumerate().map(|(k, (_, r, better))| {
            let pct = r * 100.0;
            let color = match better {
                Some(Better::Higher) if pct > 0.0 => BETTER,
                Some(Better::Lower) if pct < 0.0 => BETTER,
                Some(_) if pct != 0.0 => WORSE,
                _ => NEUTRAL,
            };
            Rectangle::new([(0.0, slot(k) + 0.2), (pct, slot(k) + 0.8)], color.filled())
        }))
        .map_err(chart_error)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 0.0), (0.0, n)],
            BLACK.stroke_width(1),
        )))
        .map_err(chart_error)?;
    let name_style =
        TextStyle::from(CHART_FONT.into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, (name, r, _)) in rows.iter().enumerate() {
        let (_, y) = chart.backend_coord(&(0.0, slot(k) + 0.5));
        let label = format!("{name}  {}%", signed(*r, fixed(r * 100.0, 1)));
        root.draw(&Text::new(label, (12, y), name_style.clone()))
            .map_err(chart_error)?;
    }
    root.present().map_err(chart_error)
}

fn chart_error(err: impl std::fmt::Display) -> String {
    format!("could not draw the chart: {err}")
}
