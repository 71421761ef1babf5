//! A file one view hands another: a receipt or a playbook dropped on the Trace view opens in
//! the view that reads it, as if it had been dropped there.
//!
//! The page holds one slot (a context `App` provides). The giver fills it and changes the URL's
//! hash, which shows (and, the first time, mounts) the receiving view; the receiver's effect
//! takes the file out of the slot and opens it. A view mounted later still finds it, because
//! the slot keeps the file until it is taken.

use leptos::prelude::*;
use web_sys::File;

/// The views a file can be handed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The Receipt view (`#/receipt`).
    Receipt,
    /// The Playbook view (`#/playbook`).
    Playbook,
}

impl Target {
    /// The view's name, as its navigation link says it.
    pub fn name(self) -> &'static str {
        match self {
            Target::Receipt => "Receipt",
            Target::Playbook => "Playbook",
        }
    }

    /// The hash that shows the view.
    fn hash(self) -> &'static str {
        match self {
            Target::Receipt => "#/receipt",
            Target::Playbook => "#/playbook",
        }
    }
}

/// The page's slot for a file in transit.
#[derive(Debug, Clone, Copy)]
pub struct Handoff(RwSignal<Option<(Target, File)>, LocalStorage>);

impl Handoff {
    /// Provides the slot to every view below (once, in `App`).
    pub fn provide() {
        provide_context(Handoff(RwSignal::new_local(None)));
    }

    /// The page's slot, when `App` provides one (read while a view is built, not in an
    /// event handler, where no owner is current).
    pub fn from_context() -> Option<Handoff> {
        use_context::<Handoff>()
    }

    /// Hands `file` to `target` and shows that view; false when the URL could not be changed.
    pub fn give(self, target: Target, file: File) -> bool {
        self.0.set(Some((target, file)));
        web_sys::window().is_some_and(|w| w.location().set_hash(target.hash()).is_ok())
    }

    /// Opens with `open` every file handed to `target`, from now on (and one already waiting).
    pub fn receive(target: Target, open: impl Fn(File) + 'static) {
        let Some(handoff) = use_context::<Handoff>() else {
            return;
        };
        Effect::new(move |_| {
            let mine = handoff
                .0
                .with(|slot| matches!(slot, Some((t, _)) if *t == target));
            if mine && let Some(Some((_, file))) = handoff.0.try_update(Option::take) {
                open(file);
            }
        });
    }
}
