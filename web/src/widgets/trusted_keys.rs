//! The "Trusted keys" part of the audit policy panel: the public keys whose signature the
//! reviewer accepts, pasted or read from a `KEY.pub` file, listed by id and comment, each
//! removable; folded while none is held.
//!
//! A receipt is the claimant's file, so its lease is the claimant's word unless a key the
//! *reviewer* names vouches for it; the keys therefore come from the reviewer's own paste or
//! file, never from a receipt (not even the one on screen, whose signer is whoever the claimant
//! says). Every key is read by core's `TrustSet` (the CLI's `--trust KEYFILE` reader) and held
//! in the one shared [`AuditPolicy`] (`Policy.trusted_keys`), so it is kept in this browser with
//! the rest of the policy, sent nowhere, and every receipt on screen is audited again against
//! it. Refused text changes nothing and is left in the box to be corrected.

use leptos::prelude::*;
use leptos::task::spawn_local;
use loadproof_core::audit::Policy;
use web_sys::File;

use crate::policy::{AuditPolicy, HeldKey, MAX_KEYS_BYTES, held_keys, trusting, untrusting};
use crate::widgets::drop_zone::DropZone;
use crate::widgets::readout::Message;

/// A key as a reader names it: `key 0123abcd… (comment)`.
fn named(key: &HeldKey) -> String {
    if key.comment.is_empty() {
        format!("key {}", key.id)
    } else {
        format!("key {} ({})", key.id, key.comment)
    }
}

/// The keys the reviewer trusts, and the box and file input that add more. Ids start with
/// `{prefix}-policy-keys` (`#receipt-policy-keys-text`, `#receipt-policy-key-ID-remove`, …).
#[component]
pub fn TrustedKeys(
    /// The first word of every id (`receipt`, `compare`).
    prefix: &'static str,
) -> impl IntoView {
    let policy = AuditPolicy::from_context();
    let id = move |what: &str| format!("{prefix}-policy-keys{what}");
    let text = RwSignal::new(String::new());
    let status = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);

    // `from`: the file's name, or None for the box. The box is emptied once its keys are in
    // and keeps refused text to be corrected; a file leaves it alone.
    let trust = move |given: &str, from: Option<String>| {
        status.set(None);
        error.set(None);
        let from_box = from.is_none();
        // After a file's name the message runs on; alone it starts a sentence.
        let whence = from.map(|name| format!("{name}: ")).unwrap_or_default();
        let said = move |rest: String| {
            if from_box {
                let mut chars = rest.chars();
                chars.next().map_or_else(String::new, |c| {
                    c.to_uppercase().chain(chars).collect::<String>()
                })
            } else {
                format!("{whence}{rest}")
            }
        };
        match trusting(&policy.in_force_untracked(), given) {
            Ok(t) if t.added.is_empty() => {
                if from_box {
                    text.set(String::new());
                }
                status.set(Some(said("already trusted; nothing changed.".to_owned())));
            }
            Ok(t) => {
                let added: Vec<String> = t.added.iter().map(named).collect();
                policy.set(t.policy);
                if from_box {
                    text.set(String::new());
                }
                status.set(Some(said(format!(
                    "trusted {}{}; what is on screen is audited against it.",
                    added.join(", "),
                    match t.already {
                        0 => String::new(),
                        n => format!(" ({n} already trusted)"),
                    }
                ))));
            }
            Err(e) => error.set(Some(said(format!(
                "not trusted: {e} (the keys you trust are unchanged)"
            )))),
        }
    };
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let given = text.get_untracked();
        trust(&given, None);
    };
    let on_file = move |file: File| {
        let name = file.name();
        status.set(None);
        error.set(None);
        if file.size() > MAX_KEYS_BYTES {
            error.set(Some(format!(
                "{name}: {} bytes is not a file of public keys (a key line is under 300 bytes); the keys you trust are unchanged",
                file.size()
            )));
            return;
        }
        spawn_local(async move {
            let read = crate::site::read_blob(&file.into())
                .await
                .and_then(|bytes| {
                    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
                });
            match read {
                Ok(given) => trust(&given, Some(name)),
                Err(e) => error.set(Some(format!(
                    "{name}: {e} (the keys you trust are unchanged)"
                ))),
            }
        });
    };
    let remove = move |key: HeldKey| {
        error.set(None);
        let fewer = untrusting(&policy.in_force_untracked(), &key.id);
        // Nothing of the reviewer's left: loadproof's defaults, as Reset leaves them.
        if fewer == Policy::default() {
            policy.reset();
        } else {
            policy.set(fewer);
        }
        status.set(Some(format!(
            "No longer trusted: {}; what is on screen is audited again.",
            named(&key)
        )));
    };

    let held = Memo::new(move |_| held_keys(&policy.in_force()));
    let list = move || {
        let keys = held.get();
        if keys.is_empty() {
            return view! {
                <p id=id("-none") class="hint">
                    "None: every receipt is read as self-attested (the claimant's word)."
                </p>
            }
            .into_any();
        }
        let items = keys
            .into_iter()
            .map(|key| {
                let item = format!("{prefix}-policy-key-{}", key.id);
                let button = format!("{item}-remove");
                let label = format!("Stop trusting {}", named(&key));
                let comment = if key.comment.is_empty() {
                    "(no comment)".to_owned()
                } else {
                    key.comment.clone()
                };
                let id_text = key.id.clone();
                let data_id = key.id.clone();
                view! {
                    <li id=item data-key-id=data_id>
                        <code class="key-id">{id_text}</code>
                        " "
                        <span class="key-comment">{comment}</span>
                        " "
                        <button
                            type="button"
                            id=button
                            class="secondary"
                            aria-label=label
                            on:click=move |_| remove(key.clone())
                        >
                            "Remove"
                        </button>
                    </li>
                }
            })
            .collect_view();
        view! { <ul id=id("-list") class="key-list">{items}</ul> }.into_any()
    };
    // Folded while no key is held, so the verdict stays near the top for the reviewer who
    // trusts none yet; open once they do (and after a reload that finds their keys).
    let open = held.with_untracked(|k| !k.is_empty());
    let error_id = id("-error");
    let described = error_id.clone();

    view! {
        <details
            id=id("")
            class="trusted-keys"
            data-count=move || held.with(Vec::len).to_string()
            open=open
        >
            <summary id=id("-heading")>
                {move || match held.with(Vec::len) {
                    0 => "Trusted keys: none (every receipt is self-attested)".to_owned(),
                    n => format!("Trusted keys: {n}"),
                }}
            </summary>
            <p class="hint">
                "The public keys of the lessors whose signed leases you accept ("
                <code>"loadproof gate"</code>
                " or "
                <code>"loadproof sim"</code>
                " with "
                <code>"--signing-key"</code>
                "). With any key here, the window and subject stand only on a lease signed by one of them; with none, every receipt is self-attested. Take a key from its holder, never from a receipt. Kept in this browser with your policy; the same lines work with "
                <code>"loadproof receipt audit --trust KEYFILE"</code>
                "."
            </p>
            {list}
            <form class="keys-form" novalidate=true on:submit=add>
                <label for=id("-text")>"Public key lines, one per line"</label>
                <textarea
                    id=id("-text")
                    rows="3"
                    spellcheck="false"
                    autocomplete="off"
                    placeholder="loadproof-ed25519 BASE64 comment"
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                    aria-invalid=move || error.with(Option::is_some).then_some("true")
                    aria-describedby=move || error.with(Option::is_some).then(|| described.clone())
                ></textarea>
                <div class="policy-actions">
                    <button type="submit" id=id("-add")>
                        "Trust these keys"
                    </button>
                    <DropZone
                        id=id("-file")
                        accept=".pub,text/plain"
                        rechoose=true
                        on_file=on_file
                    >
                        "Or choose or drop a public key file ("
                        <code>"KEY.pub"</code>
                        ", as "
                        <code>"loadproof key new"</code>
                        " writes it)."
                    </DropZone>
                </div>
            </form>
            <Message id=id("-status") class="hint" role="status" text=status />
            <Message id=error_id class="error" role="alert" text=error />
        </details>
    }
}
