//! Heavy work off the page's thread: a receipt's audit runs in a Web Worker, with progress and
//! a cancel that really stops it (the worker is terminated).
//!
//! The API is one call per job: [`audit_receipt`] takes the file (a `Blob`) and two
//! callbacks, and returns a [`Job`] whose [`Job::cancel`] stops it; after a cancel neither
//! callback runs again.

use std::cell::Cell;
use std::rc::Rc;

use leptos::task::spawn_local;

use crate::receipt_model::{self, ReceiptModel, STAGES};

/// How far a job is: `fraction` in 0..=1 and the stage's name.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// 0..=1.
    pub fraction: f64,
    /// What is being done (`read`, `parse`, `digests`, `audit`, `series`).
    pub stage: String,
}

/// A running job.
#[derive(Debug, Clone)]
pub struct Job {
    cancelled: Rc<Cell<bool>>,
}

impl Job {
    /// Stops the job; its callbacks never run again.
    pub fn cancel(&self) {
        self.cancelled.set(true);
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.get()
    }
}

/// Audits the receipt in `blob` (reported under `source`) off the page's thread.
pub fn audit_receipt(
    source: String,
    blob: web_sys::Blob,
    on_progress: impl Fn(Progress) + 'static,
    on_done: impl FnOnce(Result<ReceiptModel, String>) + 'static,
) -> Job {
    let job = Job {
        cancelled: Rc::new(Cell::new(false)),
    };
    let cancelled = job.cancelled.clone();
    spawn_local(async move {
        on_progress(Progress {
            fraction: 0.0,
            stage: "read".to_owned(),
        });
        let bytes = match crate::site::read_blob(&blob).await {
            Ok(b) => b,
            Err(e) => {
                if !cancelled.get() {
                    on_done(Err(format!(
                        "{source}: the browser could not read the file: {e}"
                    )));
                }
                return;
            }
        };
        if cancelled.get() {
            return;
        }
        let result = receipt_model::build(&source, &bytes, &mut |i| {
            on_progress(Progress {
                fraction: (i + 1) as f64 / (STAGES.len() + 1) as f64,
                stage: STAGES.get(i).copied().unwrap_or("").to_owned(),
            });
        });
        if !cancelled.get() {
            on_done(result);
        }
    });
    job
}
