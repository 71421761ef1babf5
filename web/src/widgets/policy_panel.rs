//! The "Audit policy" panel the Receipt and Compare views show: the reviewer's policy in force
//! (loadproof's defaults, or yours), its three numbers editable, a policy file to choose or
//! drop, a reset, and the keys the reviewer trusts ([`TrustedKeys`]).
//!
//! Typed numbers are checked by core's `Policy::checked` and a file is read by
//! `Policy::from_json` (the reader behind the CLI's `--policy FILE`); anything refused is shown
//! by field (or under the file input) and never applied. Both views' panels set the one shared
//! [`AuditPolicy`], so a policy set in one is in force in the other, and every receipt on
//! screen is audited again against it. Ids start with the view's `prefix`
//! (`#receipt-policy`, `#compare-policy-max_send_lag_ms`, …).
//!
//! [`JudgedBy`] says whose policy an audit was judged against ("your policy", "loadproof's
//! defaults"), beside the numbers the views show.

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::audit::{POLICY_SCHEMA, Policy};
use web_sys::File;

use crate::policy::{AuditPolicy, Draft, FIELDS, MAX_POLICY_BYTES, default_thresholds};
use crate::widgets::drop_zone::DropZone;
use crate::widgets::readout::Message;
use crate::widgets::trusted_keys::TrustedKeys;

/// "your policy" or "loadproof's defaults": whose policy `used` is (follows the panel).
#[component]
pub fn JudgedBy(used: Policy) -> impl IntoView {
    let policy = AuditPolicy::from_context();
    let whose = Memo::new(move |_| policy.whose(&used));
    view! {
        <span class="whose" data-whose=move || whose.get().word()>
            {move || whose.get().phrase()}
        </span>
    }
}

/// The policy in force, editable.
#[component]
pub fn PolicyPanel(
    /// The first word of every id (`receipt`, `compare`).
    prefix: &'static str,
) -> impl IntoView {
    let policy = AuditPolicy::from_context();
    let id = move |what: &str| format!("{prefix}-policy{what}");
    let draft = RwSignal::new(Draft::of(&policy.in_force_untracked()));
    let errors = RwSignal::new(Vec::<(&'static str, String)>::new());
    let status = RwSignal::new(None::<String>);
    let file_error = RwSignal::new(None::<String>);

    // Whenever the policy in force changes (here, in the other view's panel, from a file), the
    // fields show its numbers.
    Effect::watch(
        move || (policy.in_force(), policy.yours()),
        move |(p, _), _, _| {
            draft.set(Draft::of(p));
            errors.set(Vec::new());
        },
        false,
    );

    let apply = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        file_error.set(None);
        // The fields are the thresholds only: the keys trusted stay as they are.
        match draft.with_untracked(|d| d.policy(&policy.in_force_untracked())) {
            Ok(p) => {
                errors.set(Vec::new());
                if policy.yours_untracked().as_ref() == Some(&p) {
                    status.set(Some("Your policy already says this.".to_owned()));
                } else {
                    policy.set(p);
                    status.set(Some(
                        "Your policy is in force: what is on screen is audited against it."
                            .to_owned(),
                    ));
                }
            }
            Err(e) => {
                status.set(Some(
                    "Not applied: the policy in force is unchanged.".to_owned(),
                ));
                errors.set(e);
            }
        }
    };
    let reset = move |_| {
        file_error.set(None);
        errors.set(Vec::new());
        let had_keys = !policy.in_force_untracked().trusted_keys.is_empty();
        policy.reset();
        draft.set(Draft::of(&Policy::default()));
        status.set(Some(if had_keys {
            "loadproof's defaults are in force: no key is trusted, so every receipt is self-attested."
                .to_owned()
        } else {
            "loadproof's defaults are in force.".to_owned()
        }));
    };
    let on_file = move |file: File| {
        let name = file.name();
        status.set(None);
        file_error.set(None);
        if file.size() > MAX_POLICY_BYTES {
            file_error.set(Some(format!(
                "{name}: {} bytes is not an audit policy (a policy is a few hundred bytes); the policy in force is unchanged",
                file.size()
            )));
            return;
        }
        spawn_local(async move {
            let read = crate::site::read_blob(&file.into()).await;
            match read.and_then(|bytes| Policy::from_json(&bytes).map_err(|e| e.to_string())) {
                Ok(p) => {
                    errors.set(Vec::new());
                    policy.set(p);
                    status.set(Some(format!(
                        "{name}: your policy is in force; what is on screen is audited against it."
                    )));
                }
                Err(e) => file_error.set(Some(format!(
                    "{name}: {e} (the policy in force is unchanged)"
                ))),
            }
        });
    };

    let whose = move || match policy.yours() {
        None => ("defaults", "loadproof's defaults".to_owned()),
        Some(p) if p == Policy::default() => (
            "yours",
            "yours (the same numbers as loadproof's defaults)".to_owned(),
        ),
        Some(p) if default_thresholds(&p) => (
            "yours",
            "yours (loadproof's default thresholds, with the keys you trust)".to_owned(),
        ),
        Some(_) => ("yours", "yours".to_owned()),
    };

    let fields = FIELDS
        .into_iter()
        .map(|(name, label)| {
            let input_id = id(&format!("-{name}"));
            let error_id = format!("{input_id}-error");
            let error = move || {
                errors.with(|e| {
                    e.iter()
                        .find(|(f, _)| *f == name)
                        .map(|(_, why)| why.clone())
                })
            };
            let described = error_id.clone();
            view! {
                <div class="policy-field" data-field=name>
                    <label for=input_id.clone()>
                        <span>{label}</span>
                        <code class="hint">{name}</code>
                    </label>
                    <input
                        type="text"
                        id=input_id
                        name=name
                        inputmode=if name == "max_waiting_scrapes" { "numeric" } else { "decimal" }
                        autocomplete="off"
                        spellcheck="false"
                        prop:value=move || draft.with(|d| d.get(name).to_owned())
                        on:input=move |ev| draft.update(|d| d.set(name, event_target_value(&ev)))
                        aria-invalid=move || error().is_some().then_some("true")
                        aria-describedby=move || error().is_some().then(|| described.clone())
                    />
                    {move || {
                        error()
                            .map(|why| {
                                view! {
                                    <p id=error_id.clone() class="error field-error">
                                        {why}
                                    </p>
                                }
                            })
                    }}
                </div>
            }
        })
        .collect_view();

    view! {
        <section
            id=id("")
            class="card wide policy"
            data-whose=move || whose().0
            aria-labelledby=id("-heading")
        >
            <h2 id=id("-heading")>
                "Audit policy: "
                <span id=id("-whose") class="whose">
                    {move || whose().1}
                </span>
            </h2>
            <p class="hint">
                "The thresholds every standing is judged against: the reviewer's (yours), never the receipt's. "
                "Kept in this browser; the same file works with "
                <code>"loadproof receipt audit --policy FILE"</code>
                "."
            </p>
            <form class="policy-form" novalidate=true on:submit=apply>
                <div class="policy-fields">{fields}</div>
                <div class="policy-actions">
                    <button type="submit" id=id("-apply")>
                        "Apply"
                    </button>
                    <button type="button" id=id("-reset") class="secondary" on:click=reset>
                        "Reset to defaults"
                    </button>
                    <DropZone
                        id=id("-file")
                        accept=".json,application/json"
                        rechoose=true
                        on_file=on_file
                    >
                        "Or choose or drop a policy file ("
                        <code>{POLICY_SCHEMA}</code>
                        " JSON)."
                    </DropZone>
                </div>
            </form>
            <Message id=id("-status") class="hint" role="status" text=status />
            <Message id=id("-error") class="error" role="alert" text=file_error />
            <Message id=id("-note") class="error" role="status" text=policy.note() />
            <TrustedKeys prefix=prefix />
            <details class="policy-json">
                <summary>"This policy as a file"</summary>
                <pre id=id("-json") class="preview">
                    {move || policy.in_force().to_json()}
                </pre>
            </details>
        </section>
    }
}
