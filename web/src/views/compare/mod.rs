//! The comparison view: two receipts side by side, baseline against treatment.
//!
//! Each slot takes a file (chosen, dropped, or one the site publishes in `receipts.json`) and
//! audits it with the receipt view's loader ([`ReceiptLoad`]: off the page's thread, with
//! progress and a cancel). The comparison itself is core's `compare::compare` on the two
//! audits — the same code as `loadproof receipt compare --json`, published as
//! `window.loadproofComparison` so a browser test can compare the page with the CLI; it is laid
//! out by `result.rs`. Every number shown is in the table; the bar chart of relative changes
//! (`draw.rs`) is a picture of that table.
//!
//! Both receipts are audited against the reviewer's audit policy ([`AuditPolicy`], the
//! "Audit policy" panel, shared with the receipt view): the same comparison as `receipt compare
//! --policy FILE`. A comparison is made only of two audits judged against one policy.
//!
//! On a published site the hash names the pair on screen (`#/compare/BASELINE/TREATMENT`,
//! [`crate::route`]): a link opens that pair from the site's own `receipts.json` (a name it
//! does not list is said so, and nothing is fetched for it); with no pair named the first two
//! open. A local file in either slot leaves the pair unnamed (`#/compare`).
//!
//! A comparison of one receipt per arm is an observation, not a measured effect; the page says
//! so beside the numbers, as the JSON does.

mod draw;
mod model;
mod result;

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::claim::Arm;
use loadproof_core::compare::{Comparison, compare};
use loadproof_core::receipt::sha256_hex;
use loadproof_core::site::{SITE_RECEIPTS, SiteReceipt};

use self::result::ComparisonView;
use crate::policy::{AuditPolicy, summary};
use crate::publish::{json_value, publish};
use crate::route::{Here, Linked, Route};
use crate::site::{Fetched, SiteIndex, blob_of, fetch_bytes, fetch_site_receipts};
use crate::views::receipt::loader::{Loading, ReceiptLoad};
use crate::views::receipt::model::ReceiptModel;
use crate::widgets::drop_zone::DropZone;
use crate::widgets::policy_panel::{JudgedBy, PolicyPanel};
use crate::widgets::readout::{Message, key_values};

/// One side: its receipt's load, and which of the site's receipts is chosen.
#[derive(Clone, Copy)]
struct Slot {
    arm: Arm,
    /// The receipt: its audit, progress, note or error.
    load: ReceiptLoad,
    /// The site receipt chosen in the select (its index), or "".
    chosen: RwSignal<String>,
}

impl Slot {
    fn new(arm: Arm, policy: AuditPolicy) -> Slot {
        Slot {
            arm,
            load: ReceiptLoad::new(policy),
            chosen: RwSignal::new(String::new()),
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

    fn load_file(self, file: web_sys::File) {
        let name = file.name();
        self.chosen.set(String::new());
        let generation = self.load.begin(&name, "read");
        self.load.audit(name, file.into(), generation, |_| Ok(()));
    }

    /// Fetches a receipt the site publishes, checks it is the bytes the listing names, and
    /// audits it.
    fn load_site(self, index: usize, entry: SiteReceipt) {
        self.chosen.set(index.to_string());
        let load = self.load;
        let generation = load.begin(&entry.name, "fetch");
        spawn_local(async move {
            let fetched = fetch_bytes(&entry.path).await;
            if !load.is_current(generation) {
                return;
            }
            let bytes = match fetched {
                Ok(Fetched::Body(bytes)) => bytes,
                Ok(Fetched::Status(code)) => {
                    return load.fail(format!(
                        "{}: this site does not serve {} (HTTP {code}), though {SITE_RECEIPTS} lists it",
                        entry.name, entry.path
                    ));
                }
                Err(e) => {
                    return load.fail(format!(
                        "{}: could not fetch {}: {e}",
                        entry.name, entry.path
                    ));
                }
            };
            let sha = sha256_hex(&bytes);
            if sha != entry.sha256 || bytes.len() as u64 != entry.bytes {
                return load.fail(format!(
                    "{}: the site serves {} bytes with sha256 {sha}; {SITE_RECEIPTS} lists {} bytes with sha256 {}",
                    entry.name,
                    bytes.len(),
                    entry.bytes,
                    entry.sha256
                ));
            }
            match blob_of(&bytes) {
                Ok(blob) => load.audit(entry.name, blob, generation, |_| Ok(())),
                Err(e) => load.fail(format!(
                    "{}: the browser could not hold the file: {e:?}",
                    entry.name
                )),
            }
        });
    }

    fn cancel(self) {
        let name = self.load.cancel();
        self.load.status.set(Some(format!(
            "Cancelled{}: choose a file to start again.",
            name.map_or(String::new(), |n| format!(" {n}"))
        )));
    }
}

/// A comparison and the two models it was made of (their latency samples are drawn beside it).
#[derive(Clone)]
struct Compared {
    comparison: Arc<Comparison>,
    baseline: Arc<ReceiptModel>,
    treatment: Arc<ReceiptModel>,
}

impl PartialEq for Compared {
    /// The same comparison of the same two loads: a model is compared by identity, never
    /// field by field (a long run's model is large).
    fn eq(&self, other: &Compared) -> bool {
        Arc::ptr_eq(&self.baseline, &other.baseline)
            && Arc::ptr_eq(&self.treatment, &other.treatment)
            && self.comparison == other.comparison
    }
}

/// Two slots and, once both are audited, the comparison.
#[component]
pub fn CompareView() -> impl IntoView {
    let policy = AuditPolicy::from_context();
    let baseline = Slot::new(Arm::Baseline, policy);
    let treatment = Slot::new(Arm::Treatment, policy);
    let site: RwSignal<Vec<SiteReceipt>> = RwSignal::new(Vec::new());
    let site_status = RwSignal::new(None::<String>);
    let site_error = RwSignal::new(None::<String>);
    // Whether the site's index has been read (`None`: not yet; `Some(false)`: none to read).
    let site_read = RwSignal::new(None::<bool>);
    let here = Here::from_context();

    // The site's own receipts, when it publishes some.
    spawn_local(async move {
        match fetch_site_receipts().await {
            SiteIndex::Listed(list) => {
                site_status.set(Some(format!(
                    "This site publishes {} receipt(s) in {SITE_RECEIPTS}.",
                    list.len()
                )));
                site.set(list);
                site_read.set(Some(true));
            }
            SiteIndex::Missing => site_read.set(Some(false)),
            SiteIndex::Invalid { error: e, .. } | SiteIndex::Failed(e) => {
                site_error.set(Some(format!("{SITE_RECEIPTS}: {e}")));
                site_read.set(Some(false));
            }
        }
    });

    // The address bar names the pair on screen when both slots hold the site's receipts.
    let name_pair = move || {
        let pick = |slot: Slot, list: &[SiteReceipt]| {
            let i = slot.chosen.get_untracked().parse::<usize>().ok()?;
            list.get(i).map(|e| e.name.clone())
        };
        let linked = site.with_untracked(|l| match (pick(baseline, l), pick(treatment, l)) {
            (Some(a), Some(b)) => Linked::Pair(a, b),
            _ => Linked::Nothing,
        });
        here.name(Route::Compare, linked);
    };
    let renamed = Callback::new(move |()| name_pair());

    // Follow the hash: open the pair it names, or the first two when it names none.
    Effect::new(move |_| {
        let read = site_read.get();
        let linked = here.linked();
        if here.route() != Route::Compare || read.is_none() {
            return;
        }
        let list = site.get_untracked();
        let find = |name: &str| {
            list.iter()
                .enumerate()
                .find(|(_, e)| e.name == name)
                .map(|(i, e)| (i, e.clone()))
        };
        let open = |slot: Slot, (i, entry): (usize, SiteReceipt)| {
            if slot.chosen.get_untracked() != i.to_string() {
                slot.load_site(i, entry);
            }
        };
        match linked {
            Linked::Pair(a, b) => match (find(&a), find(&b)) {
                (Some(first), Some(second)) => {
                    open(baseline, first);
                    open(treatment, second);
                }
                (found_a, found_b) => {
                    let missing: Vec<String> = [(a, found_a.is_none()), (b, found_b.is_none())]
                        .into_iter()
                        .filter(|(_, gone)| *gone)
                        .map(|(n, _)| format!("{n:?}"))
                        .collect();
                    site_error.set(Some(format!(
                        "The link names {}, but this site bundles no receipt of that name{}.",
                        missing.join(" and "),
                        if list.is_empty() {
                            String::new()
                        } else {
                            format!(
                                " (it bundles {})",
                                list.iter()
                                    .map(|e| e.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        }
                    )));
                }
            },
            Linked::Nothing => {
                let mut entries = list.iter().cloned().enumerate();
                if baseline.load.is_empty()
                    && treatment.load.is_empty()
                    && let (Some(first), Some(second)) = (entries.next(), entries.next())
                {
                    open(baseline, first);
                    open(treatment, second);
                }
                name_pair();
            }
            Linked::Receipt(_) => {}
        }
    });

    // Only two audits judged against one policy (while the policy changes, one side may be
    // audited again before the other).
    let comparison = Memo::new(move |_| {
        let b = baseline.load.model.get()?;
        let t = treatment.load.model.get()?;
        (b.audit.policy == t.audit.policy).then(|| Compared {
            comparison: Arc::new(compare(&b.side(), &t.side())),
            baseline: b,
            treatment: t,
        })
    });
    Effect::new(move |_| {
        comparison.with(|c| {
            publish(
                "loadproofComparison",
                &json_value(c.as_ref().map(|c| &*c.comparison)),
            )
        });
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
            <Message id="compare-site" class="hint" text=site_status />
            <Message id="compare-site-error" class="error" role="alert" text=site_error />
        </section>
        <PolicyPanel prefix="compare" />
        <SlotCard of=baseline site=site renamed=renamed />
        <SlotCard of=treatment site=site renamed=renamed />
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
            Some(c) => {
                view! { <ComparisonView c=c.comparison baseline=c.baseline treatment=c.treatment /> }
                    .into_any()
            }
        }}
    }
}

/// One slot: the file input and drop zone, the site's receipts, progress, error and banner.
#[component]
fn SlotCard(
    of: Slot,
    site: RwSignal<Vec<SiteReceipt>>,
    /// Called once the slot holds another file (the address bar names the pair, or not).
    renamed: Callback<()>,
) -> impl IntoView {
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
                on_file=move |file| {
                    slot.load_file(file);
                    renamed.run(());
                }
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
                                            renamed.run(());
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
                slot.load
                    .loading
                    .get()
                    .map(|Loading { name, progress: p }| {
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
            <Message id=slot.id("status") class="hint" role="status" text=slot.load.status />
            <Message id=slot.id("error") class="error" role="alert" text=slot.load.error />
            {move || slot.load.model.get().map(|m| view! { <Banner of=slot model=m /> })}
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
    let knobs = key_values(&model.subject.knobs);
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
            <p class="policy-used" id=of.id("policy")>
                "Judged against " <JudgedBy used=model.audit.policy.clone() /> ": "
                {summary(&model.audit.policy)}
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
