//! The reviewer's audit policy in the page: one shared value every audit the page runs is
//! judged against (the Receipt view and both Compare slots), kept in `localStorage` so that it
//! survives a reload.
//!
//! The thresholds are the reviewer's, never the receipt's: core's [`Policy`]
//! (`loadproof.audit-policy/v1`), [`Policy::default`] unless the reviewer sets their own —
//! typed into the panel ([`crate::widgets::policy_panel`]) and checked by
//! [`Policy::checked`], or read from a file by [`Policy::from_json`], the same reader as the
//! CLI's `--policy FILE`. Nothing here judges a receipt; it only holds which policy is in force.
//!
//! [`AuditPolicy`] is provided by the page ([`crate::app::App`]) as a context, so every view
//! reads and sets the same one; the receipt loader re-audits what it shows when the policy in
//! force changes. A stored value that no longer reads as a policy is ignored, with a note.

use leptos::prelude::*;
use loadproof_core::audit::{Policy, PolicyError};
use loadproof_core::signing::{PublicKey, TrustSet};

/// The `localStorage` key of the reviewer's policy (its JSON, as [`Policy::to_json`] writes it).
pub const STORAGE_KEY: &str = "loadproof.auditPolicy";

/// A policy file larger than this is refused unread (a policy is a few hundred bytes).
pub const MAX_POLICY_BYTES: f64 = 64.0 * 1024.0;

/// A key file larger than this is refused unread (a public key line is under 300 bytes; this
/// leaves room for a team's file of them).
pub const MAX_KEYS_BYTES: f64 = 64.0 * 1024.0;

/// Whose policy an audit was judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// loadproof's documented defaults (no policy of the reviewer's).
    Defaults,
    /// The reviewer's, in force now.
    Yours,
    /// Neither: a policy that was in force when the audit ran, and no longer is.
    Earlier,
}

impl Whose {
    /// The words after "judged against".
    pub fn phrase(self) -> &'static str {
        match self {
            Whose::Defaults => "loadproof's defaults",
            Whose::Yours => "your policy",
            Whose::Earlier => "a policy no longer in force",
        }
    }

    /// A word for `data-whose`.
    pub fn word(self) -> &'static str {
        match self {
            Whose::Defaults => "defaults",
            Whose::Yours => "yours",
            Whose::Earlier => "earlier",
        }
    }
}

/// The policy every audit in the page is judged against. `Copy`: every part is a handle.
#[derive(Debug, Clone, Copy)]
pub struct AuditPolicy {
    /// The reviewer's policy (`None`: loadproof's defaults are in force).
    yours: RwSignal<Option<Policy>>,
    /// The policy in force (changes only when its numbers do).
    in_force: Memo<Policy>,
    /// Something to say about the stored policy (ignored, or not kept).
    note: RwSignal<Option<String>>,
}

impl AuditPolicy {
    /// The policy the reviewer stored in this browser, or loadproof's defaults.
    pub fn load() -> AuditPolicy {
        let (stored, note) = match storage() {
            Some(s) => from_storage(s.get_item(STORAGE_KEY).ok().flatten().as_deref()),
            None => (None, None),
        };
        AuditPolicy::with(stored, note)
    }

    pub(crate) fn with(yours: Option<Policy>, note: Option<String>) -> AuditPolicy {
        let yours = RwSignal::new(yours);
        AuditPolicy {
            yours,
            in_force: Memo::new(move |_| yours.get().unwrap_or_default()),
            note: RwSignal::new(note),
        }
    }

    /// The one the page provides (see [`crate::app::App`]).
    pub fn from_context() -> AuditPolicy {
        expect_context::<AuditPolicy>()
    }

    /// The policy in force (tracked).
    pub fn in_force(self) -> Policy {
        self.in_force.get()
    }

    /// The policy in force, untracked: what a new audit is judged against.
    pub fn in_force_untracked(self) -> Policy {
        self.in_force.get_untracked()
    }

    /// The reviewer's policy, when they set one (tracked).
    pub fn yours(self) -> Option<Policy> {
        self.yours.get()
    }

    /// The reviewer's policy, untracked.
    pub fn yours_untracked(self) -> Option<Policy> {
        self.yours.get_untracked()
    }

    /// What to say about the stored policy, if anything (tracked).
    pub fn note(self) -> Signal<Option<String>> {
        self.note.into()
    }

    /// Whose policy `used` is, now (tracked).
    pub fn whose(self, used: &Policy) -> Whose {
        self.yours.with(|yours| match yours {
            Some(p) if p == used => Whose::Yours,
            None if *used == Policy::default() => Whose::Defaults,
            _ => Whose::Earlier,
        })
    }

    /// Puts the reviewer's `policy` in force (already checked by core) and keeps it in this
    /// browser.
    pub fn set(self, policy: Policy) {
        let note = match storage().map(|s| s.set_item(STORAGE_KEY, &policy.to_json())) {
            Some(Ok(())) => None,
            _ => Some(
                "This browser does not let the page keep your policy: it is in force until the page is closed."
                    .to_owned(),
            ),
        };
        self.note.set(note);
        self.yours.set(Some(policy));
    }

    /// Back to loadproof's defaults; the stored policy is removed.
    pub fn reset(self) {
        if let Some(s) = storage() {
            let _ = s.remove_item(STORAGE_KEY);
        }
        self.note.set(None);
        self.yours.set(None);
    }
}

/// The policy's numbers in one line, as a reader checks them against the facts:
/// `send lag ≤ 10 ms · scrape gap ≤ 1000 ms · a queue across 2 consecutive scrapes refuses`.
pub fn summary(p: &Policy) -> String {
    use crate::widgets::number::js;
    format!(
        "send lag ≤ {} ms · scrape gap ≤ {} ms · a queue across {} consecutive scrapes refuses",
        js(p.max_send_lag_ms),
        js(p.max_scrape_gap_ms),
        p.max_waiting_scrapes
    )
}

/// This page's `localStorage`, where the browser offers one.
fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The stored text read as a policy: the policy, or nothing and why it was ignored.
pub fn from_storage(text: Option<&str>) -> (Option<Policy>, Option<String>) {
    match text {
        None => (None, None),
        Some(text) => match Policy::from_json(text.as_bytes()) {
            Ok(p) => (Some(p), None),
            Err(e) => (
                None,
                Some(format!(
                    "The policy this browser kept (localStorage {STORAGE_KEY}) no longer reads as a policy, so loadproof's defaults are in force: {e}"
                )),
            ),
        },
    }
}

/// The panel's three fields as typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Draft {
    /// `max_send_lag_ms`.
    pub max_send_lag_ms: String,
    /// `max_scrape_gap_ms`.
    pub max_scrape_gap_ms: String,
    /// `max_waiting_scrapes`.
    pub max_waiting_scrapes: String,
}

/// The fields, in the panel's order: (name, label).
pub const FIELDS: [(&str, &str); 3] = [
    ("max_send_lag_ms", "Send lag at most, ms"),
    (
        "max_scrape_gap_ms",
        "Gap between /metrics scrapes at most, ms",
    ),
    (
        "max_waiting_scrapes",
        "Refuse a queue seen in this many scrapes in a row",
    ),
];

impl Draft {
    /// `policy`'s numbers as the fields show them (as JavaScript writes numbers).
    pub fn of(policy: &Policy) -> Draft {
        Draft {
            max_send_lag_ms: crate::widgets::number::js(policy.max_send_lag_ms),
            max_scrape_gap_ms: crate::widgets::number::js(policy.max_scrape_gap_ms),
            max_waiting_scrapes: policy.max_waiting_scrapes.to_string(),
        }
    }

    /// The text of field `name`.
    pub fn get(&self, name: &str) -> &str {
        match name {
            "max_send_lag_ms" => &self.max_send_lag_ms,
            "max_scrape_gap_ms" => &self.max_scrape_gap_ms,
            _ => &self.max_waiting_scrapes,
        }
    }

    /// Sets the text of field `name`.
    pub fn set(&mut self, name: &str, text: String) {
        match name {
            "max_send_lag_ms" => self.max_send_lag_ms = text,
            "max_scrape_gap_ms" => self.max_scrape_gap_ms = text,
            _ => self.max_waiting_scrapes = text,
        }
    }

    /// The policy these fields state over `base` (the fields are only its thresholds: the keys
    /// the reviewer trusts stay as `base` holds them), through [`Policy::checked`]; or every
    /// field that is wrong, with why (a field that is not a number, or core's reason it is out of
    /// range).
    pub fn policy(&self, base: &Policy) -> Result<Policy, Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        let ms = |name: &'static str, text: &str, errors: &mut Vec<(&'static str, String)>| {
            let text = text.trim();
            match text.parse::<f64>() {
                Ok(v) => Some(v),
                Err(_) if text.is_empty() => {
                    errors.push((name, "required: a number of milliseconds".to_owned()));
                    None
                }
                Err(_) => {
                    errors.push((name, format!("{text:?} is not a number")));
                    None
                }
            }
        };
        let lag = ms("max_send_lag_ms", &self.max_send_lag_ms, &mut errors);
        let gap = ms("max_scrape_gap_ms", &self.max_scrape_gap_ms, &mut errors);
        let text = self.max_waiting_scrapes.trim();
        let waiting = match text.parse::<u32>() {
            Ok(v) => Some(v),
            Err(_) if text.is_empty() => {
                errors.push((
                    "max_waiting_scrapes",
                    "required: a whole number of scrapes".to_owned(),
                ));
                None
            }
            Err(_) => {
                errors.push((
                    "max_waiting_scrapes",
                    format!("{text:?} is not a whole number of scrapes ≥ 1"),
                ));
                None
            }
        };
        // Each number alone, beside `base`'s: core says which is out of range, and why.
        let base = base.clone();
        let alone = [
            lag.map(|v| Policy {
                max_send_lag_ms: v,
                ..base.clone()
            }),
            gap.map(|v| Policy {
                max_scrape_gap_ms: v,
                ..base.clone()
            }),
            waiting.map(|v| Policy {
                max_waiting_scrapes: v,
                ..base.clone()
            }),
        ];
        for p in alone.into_iter().flatten() {
            if let Err(e) = p.checked() {
                errors.push((field_of(&e), e.to_string()));
            }
        }
        match (lag, gap, waiting) {
            (Some(lag), Some(gap), Some(waiting)) if errors.is_empty() => Policy {
                max_send_lag_ms: lag,
                max_scrape_gap_ms: gap,
                max_waiting_scrapes: waiting,
                ..base
            }
            .checked()
            .map_err(|e| vec![(field_of(&e), e.to_string())]),
            _ => Err(errors),
        }
    }
}

/// The field a policy error names (the first field when it names none).
fn field_of(e: &PolicyError) -> &'static str {
    match e {
        PolicyError::OutOfRange { field, .. } => field,
        _ => FIELDS[0].0,
    }
}

/// A key the reviewer trusts, as the panel lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldKey {
    /// Core's [`PublicKey::id`]: what the audit names a signer by.
    pub id: String,
    /// The comment on the reviewer's key line (empty when it has none).
    pub comment: String,
}

/// The keys `policy` trusts, in its order. Every line of a policy in force went through
/// [`Policy::checked`], so none fails to read; were one to, it would be left out of the list
/// exactly as [`Policy::trust`] leaves it out of the audit's trust.
pub fn held_keys(policy: &Policy) -> Vec<HeldKey> {
    policy
        .trusted_keys
        .iter()
        .filter_map(|line| PublicKey::parse_line(line).ok())
        .map(|(key, comment)| HeldKey {
            id: key.id(),
            comment,
        })
        .collect()
}

/// What trusting more keys did.
#[derive(Debug, Clone, PartialEq)]
pub struct Trusted {
    /// The policy trusting them.
    pub policy: Policy,
    /// The keys it trusts now and did not before.
    pub added: Vec<HeldKey>,
    /// How many of the keys given it trusted already (each kept with its first comment).
    pub already: usize,
}

/// `policy` trusting every key in `text` as well: public key lines, as `loadproof key new`
/// writes them to `KEY.pub` (blank lines and `#` comments allowed), read by core's
/// [`TrustSet`] — the reader behind the CLI's `--trust KEYFILE` — so the page trusts a file
/// exactly when the CLI does. All or nothing: a line that is not a key refuses the whole text,
/// by its line number, and text with no key is refused as the CLI refuses such a file. The
/// keys already trusted stay as written, the new ones are appended as core writes them
/// ([`TrustSet::lines`], which is what `--trust` appends), so the audit's `policy` is the
/// CLI's for the same keys.
pub fn trusting(policy: &Policy, text: &str) -> Result<Trusted, String> {
    let given = TrustSet::parse(text).map_err(|e| e.to_string())?;
    if given.is_empty() {
        return Err(
            "holds no public key (a key line reads `loadproof-ed25519 BASE64 [comment]`, as `loadproof key new` writes it to KEY.pub)"
                .to_owned(),
        );
    }
    let held = policy.trust();
    let mut trusted_keys = policy.trusted_keys.clone();
    let mut added = Vec::new();
    let mut already = 0;
    for line in given.lines() {
        let (key, comment) = PublicKey::parse_line(&line).map_err(|e| e.to_string())?;
        if held.comment(&key).is_some() {
            already += 1;
            continue;
        }
        added.push(HeldKey {
            id: key.id(),
            comment,
        });
        trusted_keys.push(line);
    }
    let policy = Policy {
        trusted_keys,
        ..policy.clone()
    }
    .checked()
    .map_err(|e| e.to_string())?;
    Ok(Trusted {
        policy,
        added,
        already,
    })
}

/// `policy` no longer trusting the key whose id is `id` (every line of it, should a policy file
/// have named it twice).
pub fn untrusting(policy: &Policy, id: &str) -> Policy {
    let trusted_keys = policy
        .trusted_keys
        .iter()
        .filter(|line| match PublicKey::parse_line(line) {
            Ok((key, _)) => key.id() != id,
            Err(_) => true,
        })
        .cloned()
        .collect();
    Policy {
        trusted_keys,
        ..policy.clone()
    }
}

/// True when `policy` differs from loadproof's defaults only by the keys it trusts.
pub fn default_thresholds(policy: &Policy) -> bool {
    Policy {
        trusted_keys: Vec::new(),
        ..policy.clone()
    } == Policy::default()
}

#[cfg(test)]
mod tests {
    use loadproof_core::audit::Policy;

    use loadproof_core::signing::SecretKey;

    use super::{Draft, default_thresholds, from_storage, held_keys, trusting, untrusting};

    #[test]
    fn the_fields_of_a_policy_read_back_as_that_policy() {
        let p = Policy {
            max_send_lag_ms: 0.000001,
            ..Policy::default()
        };
        let d = Draft::of(&p);
        assert_eq!(d.max_send_lag_ms, "0.000001");
        assert_eq!(d.policy(&Policy::default()), Ok(p));
        assert_eq!(
            Draft::of(&Policy::default()).policy(&Policy::default()),
            Ok(Policy::default())
        );
    }

    #[test]
    fn every_wrong_field_is_named_with_why() {
        let d = Draft {
            max_send_lag_ms: "abc".to_owned(),
            max_scrape_gap_ms: "0".to_owned(),
            max_waiting_scrapes: "0".to_owned(),
        };
        let errors = d.policy(&Policy::default()).unwrap_err();
        let fields: Vec<_> = errors.iter().map(|(f, _)| *f).collect();
        assert_eq!(
            fields,
            [
                "max_send_lag_ms",
                "max_scrape_gap_ms",
                "max_waiting_scrapes"
            ]
        );
        assert!(errors[0].1.contains("not a number"), "{errors:?}");
        assert!(errors[1].1.contains("> 0"), "{errors:?}");
        assert!(errors[2].1.contains("≥ 1"), "{errors:?}");
        let d = Draft {
            max_waiting_scrapes: "2.5".to_owned(),
            ..Draft::of(&Policy::default())
        };
        assert_eq!(
            d.policy(&Policy::default()).unwrap_err()[0].0,
            "max_waiting_scrapes"
        );
        let d = Draft {
            max_send_lag_ms: " ".to_owned(),
            ..Draft::of(&Policy::default())
        };
        assert!(
            d.policy(&Policy::default()).unwrap_err()[0]
                .1
                .starts_with("required")
        );
    }

    #[test]
    fn a_stored_policy_that_no_longer_reads_is_ignored_with_a_note() {
        assert_eq!(from_storage(None), (None, None));
        let p = Policy {
            max_waiting_scrapes: 5,
            ..Policy::default()
        };
        assert_eq!(from_storage(Some(&p.to_json())), (Some(p), None));
        let (policy, note) = from_storage(Some(r#"{"schema":"loadproof.audit-policy/v0"}"#));
        assert_eq!(policy, None);
        assert!(note.unwrap().contains("no longer reads as a policy"));
    }

    #[test]
    fn typed_thresholds_keep_the_keys_the_reviewer_trusts() {
        let line = SecretKey::from_seed([3; 32]).public().to_line("gate");
        let base = trusting(&Policy::default(), &line).unwrap().policy;
        let d = Draft {
            max_waiting_scrapes: "4".to_owned(),
            ..Draft::of(&base)
        };
        let p = d.policy(&base).unwrap();
        assert_eq!(p.max_waiting_scrapes, 4);
        assert_eq!(p.trusted_keys, [line]);
        assert!(default_thresholds(&base));
        assert!(!default_thresholds(&p));
    }

    #[test]
    fn pasted_keys_are_trusted_as_the_cli_trusts_a_key_file_or_refused_by_line() {
        let a = SecretKey::from_seed([1; 32]).public();
        let b = SecretKey::from_seed([2; 32]).public();
        // Spaces and a comment line around it, as a file or a paste may have them: kept as core
        // writes the line, which is what `--trust` appends.
        let text = format!("# the lab\n  {}  \n\n", a.to_line("sim at lab-3"));
        let t = trusting(&Policy::default(), &text).unwrap();
        assert_eq!(t.policy.trusted_keys, [a.to_line("sim at lab-3")]);
        assert_eq!(t.added.len(), 1);
        assert_eq!(t.added[0].id, a.id());
        assert_eq!(t.added[0].comment, "sim at lab-3");
        assert_eq!(t.already, 0);
        // Again, and a second key: the first is already held (its comment kept), the second added.
        let again = format!("{}\n{}", a.to_line("renamed"), b.to_line(""));
        let t2 = trusting(&t.policy, &again).unwrap();
        assert_eq!(t2.already, 1);
        assert_eq!(
            t2.policy.trusted_keys,
            [a.to_line("sim at lab-3"), b.to_line("")]
        );
        let held = held_keys(&t2.policy);
        assert_eq!(held.len(), 2);
        assert_eq!(
            (held[1].id.as_str(), held[1].comment.as_str()),
            (b.id().as_str(), "")
        );
        // A bad line refuses the whole paste, by its number; nothing is held from it.
        let bad = format!("{}\nssh-ed25519 AAAA\n", b.to_line(""));
        let e = trusting(&t.policy, &bad).unwrap_err();
        assert!(e.starts_with("line 2: not a loadproof key"), "{e}");
        let e = trusting(&Policy::default(), "# nothing\n\n").unwrap_err();
        assert!(e.contains("holds no public key"), "{e}");
        // Removed by id: the other stays as written.
        let p = untrusting(&t2.policy, &a.id());
        assert_eq!(p.trusted_keys, [b.to_line("")]);
        assert_eq!(untrusting(&p, &b.id()), Policy::default());
    }
}
