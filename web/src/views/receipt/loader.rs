//! One receipt's load: audited off the page's thread, with progress and a cancel.
//!
//! The receipt view and each of the compare view's two slots load a receipt the same way: a
//! new load stops the running one, an older load's late callbacks change nothing, and Cancel
//! terminates the worker. This is that one loader; the views keep their own markup (and their
//! own words for a cancel or a refused file).
//!
//! Every audit is judged against the reviewer's policy in force ([`AuditPolicy`]). The loader
//! keeps the file it audited, so when that policy changes it audits the same bytes again:
//! what is shown stays on screen (with progress) until the new audit replaces it.

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use web_sys::Blob;

use super::model::{ReceiptModel, Verdict};
use crate::offload::{Job, Progress, audit_receipt};
use crate::policy::AuditPolicy;

/// A check a view makes of a receipt file's sha256 before showing anything of it, the early
/// verdict included (`Err`: the message shown).
type Accept = Rc<dyn Fn(&str) -> Result<(), String>>;

/// The file last handed to the worker: audited again when the policy changes.
#[derive(Clone)]
struct Source {
    name: String,
    blob: Blob,
    accept: Accept,
}

/// A load in progress: the file's name and how far its audit is.
#[derive(Debug, Clone, PartialEq)]
pub struct Loading {
    /// The file's name.
    pub name: String,
    /// How far.
    pub progress: Progress,
}

/// The signals of one receipt's load. `Copy`: every part is a handle.
#[derive(Debug, Clone, Copy)]
pub struct ReceiptLoad {
    /// The audited receipt.
    pub model: RwSignal<Option<Arc<ReceiptModel>>>,
    /// The audit of the file being loaded, ahead of its model (`None` once the model is in).
    pub verdict: RwSignal<Option<Arc<Verdict>>>,
    /// Why the last load failed.
    pub error: RwSignal<Option<String>>,
    /// A note about the load (a fetch under way, a cancel).
    pub status: RwSignal<Option<String>>,
    /// The load in progress.
    pub loading: RwSignal<Option<Loading>>,
    /// The running audit, if any.
    job: StoredValue<Option<Job>, LocalStorage>,
    /// The file being audited or shown, for a re-audit under another policy.
    source: StoredValue<Option<Source>, LocalStorage>,
    /// The policy every audit is judged against.
    policy: AuditPolicy,
    /// Bumped by every load and cancel; an older load's callbacks see the change and do
    /// nothing.
    generation: StoredValue<u64>,
}

impl ReceiptLoad {
    /// Nothing loaded; audits will be judged against `policy`, and re-run when it changes.
    pub fn new(policy: AuditPolicy) -> ReceiptLoad {
        let load = ReceiptLoad::blank(policy);
        Effect::watch(
            move || policy.in_force(),
            move |_, _, _| load.reaudit(),
            false,
        );
        load
    }

    /// Nothing loaded, and nothing watching the policy.
    fn blank(policy: AuditPolicy) -> ReceiptLoad {
        ReceiptLoad {
            model: RwSignal::new(None),
            verdict: RwSignal::new(None),
            error: RwSignal::new(None),
            status: RwSignal::new(None),
            loading: RwSignal::new(None),
            job: StoredValue::new_local(None),
            source: StoredValue::new_local(None),
            policy,
            generation: StoredValue::new(0),
        }
    }

    /// True when nothing is shown, loading or failed (untracked).
    pub fn is_empty(self) -> bool {
        self.model.with_untracked(Option::is_none)
            && self.loading.with_untracked(Option::is_none)
            && self.error.with_untracked(Option::is_none)
    }

    /// Starts a new load of `name` at `stage`: stops the running audit, invalidates older
    /// loads, clears what was shown. Returns the load's generation.
    pub fn begin(self, name: &str, stage: &str) -> u64 {
        self.stop_job();
        let generation = self.generation.get_value() + 1;
        self.generation.set_value(generation);
        self.source.set_value(None);
        self.model.set(None);
        self.verdict.set(None);
        self.error.set(None);
        self.status.set(None);
        self.loading.set(Some(Loading {
            name: name.to_owned(),
            progress: Progress {
                fraction: 0.0,
                stage: stage.to_owned(),
            },
        }));
        generation
    }

    /// True while `generation` is the newest load.
    pub fn is_current(self, generation: u64) -> bool {
        self.generation.get_value() == generation
    }

    /// Audits `blob` (reported as `name`) off the page's thread against the policy in force,
    /// for the load `generation` began. `accept` may refuse the audited receipt with the message
    /// shown instead (it is asked again after every re-audit).
    pub fn audit(
        self,
        name: String,
        blob: Blob,
        generation: u64,
        accept: impl Fn(&str) -> Result<(), String> + 'static,
    ) {
        if !self.is_current(generation) {
            return;
        }
        let source = Source {
            name,
            blob,
            accept: Rc::new(accept),
        };
        self.source.set_value(Some(source.clone()));
        self.run(source, generation);
    }

    /// Audits what is shown (or loading) again, against the policy now in force: the receipt
    /// on screen stays until the new audit replaces it.
    fn reaudit(self) {
        let Some(source) = self.source.get_value() else {
            return;
        };
        if self.model.with_untracked(Option::is_none)
            && self.loading.with_untracked(Option::is_none)
        {
            return;
        }
        self.stop_job();
        let generation = self.generation.get_value() + 1;
        self.generation.set_value(generation);
        // An early verdict was judged under the policy no longer in force.
        self.verdict.set(None);
        self.error.set(None);
        self.status.set(None);
        self.loading.set(Some(Loading {
            name: source.name.clone(),
            progress: Progress {
                fraction: 0.0,
                stage: "read".to_owned(),
            },
        }));
        self.run(source, generation);
    }

    fn run(self, source: Source, generation: u64) {
        let Source { name, blob, accept } = source;
        let progress_name = name.clone();
        let policy = self.policy.in_force_untracked();
        let job = audit_receipt(
            name,
            &policy,
            blob,
            move |progress| {
                if self.is_current(generation) {
                    self.loading.set(Some(Loading {
                        name: progress_name.clone(),
                        progress,
                    }));
                }
            },
            {
                let accept = accept.clone();
                move |verdict: Verdict| {
                    if self.is_current(generation)
                        && self.model.with_untracked(Option::is_none)
                        && accept(&verdict.file_sha256).is_ok()
                    {
                        self.verdict.set(Some(Arc::new(verdict)));
                    }
                }
            },
            move |result| {
                if !self.is_current(generation) {
                    return;
                }
                self.loading.set(None);
                self.job.set_value(None);
                self.verdict.set(None);
                match result.and_then(|m| accept(&m.file_sha256).map(|()| m)) {
                    Ok(m) => self.model.set(Some(Arc::new(m))),
                    Err(e) => {
                        self.model.set(None);
                        self.error.set(Some(e));
                    }
                }
            },
        );
        if self.is_current(generation) {
            self.job.set_value(Some(job));
        }
    }

    /// Ends the load with `message` shown as its error.
    pub fn fail(self, message: String) {
        self.loading.set(None);
        self.verdict.set(None);
        self.error.set(Some(message));
    }

    /// Stops the load in progress (its worker terminated, its callbacks ignored); returns the
    /// name of the file it was loading, if one was. A receipt shown under a policy no longer in
    /// force (its re-audit cancelled) is no longer shown.
    pub fn cancel(self) -> Option<String> {
        let name = self
            .loading
            .with_untracked(|l| l.as_ref().map(|l| l.name.clone()));
        self.stop_job();
        self.generation.update_value(|g| *g += 1);
        self.loading.set(None);
        // The load's verdict went ahead of a report that will not come.
        self.verdict.set(None);
        let policy = self.policy.in_force_untracked();
        if self
            .model
            .with_untracked(|m| m.as_ref().is_some_and(|m| m.audit.policy != policy))
        {
            self.model.set(None);
        }
        name
    }

    fn stop_job(self) {
        self.job.update_value(|j| {
            if let Some(job) = j.take() {
                job.cancel();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NATIVE: &[u8] = include_bytes!("../../../../core/tests/data/receipt/native_sim.json");

    /// `ReceiptLoad::new` without its policy watch (no executor in a native test).
    fn load() -> ReceiptLoad {
        ReceiptLoad::blank(AuditPolicy::with(None, None))
    }

    fn verdict() -> Arc<Verdict> {
        let r = loadproof_core::receipt::Receipt::from_bytes(NATIVE).unwrap();
        Arc::new(Verdict {
            source: "a.receipt".to_owned(),
            file_sha256: loadproof_core::receipt::sha256_hex(NATIVE),
            audit: loadproof_core::audit::audit(&r),
        })
    }

    /// The adversarial pass's finding: a verdict sent ahead of its report stayed on the page
    /// after the load was cancelled or failed ("the report is being built", beside
    /// "Cancelled").
    #[test]
    fn a_cancelled_or_failed_load_shows_no_early_verdict() {
        Owner::new().with(|| {
            let load = load();
            load.begin("a.receipt", "read");
            load.verdict.set(Some(verdict()));
            assert_eq!(load.cancel().as_deref(), Some("a.receipt"));
            assert!(load.verdict.with_untracked(Option::is_none));

            load.begin("a.receipt", "read");
            load.verdict.set(Some(verdict()));
            load.fail("a.receipt: no".to_owned());
            assert!(load.verdict.with_untracked(Option::is_none));
        });
    }
}
