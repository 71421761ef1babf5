//! `loadproof playbook row|match|examples|publish`: a row built from audited receipts, the
//! matcher asked about live traffic, the illustrative examples regenerated from the real
//! traces, and a playbook published as a static site (the web app plus the file).
//!
//! Every decision is core's (`Experiment::of`, `Row::measured`, `match_rows`); these files read
//! files, resolve flags, print and map outcomes to exit codes: `row` 0 appended, 1 refused (the
//! reason on stderr, nothing written), 2 unreadable input or bad usage; `match` 0 at least one
//! row applies, 1 none does (every reason printed), 2 bad input; `examples` 0 written, 2 the real
//! traces are missing or are not the pinned bytes; `publish` 0 written, 1 the playbook is
//! refused, 2 unreadable input, no built app or a SITE_DIR it may not touch. This file holds what
//! the subcommands share: the playbook file read and written, and the refusal.

mod examples;
mod live;
mod matches;
mod publish;
mod row;
mod single_file;
mod text;

use std::fmt::Display;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use loadproof_core::playbook::Playbook;

use crate::input::BadInput;
use crate::output::write_atomically;

pub use examples::examples;
pub use matches::matches;
pub use publish::publish;
pub use row::row;

/// Reads a playbook file; `None` when there is none yet.
pub(crate) fn read_playbook(path: &Path, must_exist: bool) -> Result<Option<Playbook>> {
    if !must_exist && !path.exists() && std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    let bytes = crate::input::read_file(path, crate::input::MAX_DOCUMENT_BYTES, "a playbook")?;
    let book =
        Playbook::from_json(&bytes).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
    Ok(Some(book))
}

/// A refusal: the reason on stderr, exit 1, nothing written.
pub(crate) fn refused(command: &str, reason: impl Display) -> Result<ExitCode> {
    let mut err = std::io::stderr().lock();
    writeln!(err, "loadproof playbook {command}: REFUSED: {reason}")?;
    Ok(ExitCode::from(1))
}

/// Writes `book` to `path` (atomically), creating its directory if missing.
fn write_playbook(path: &Path, book: &Playbook) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    write_atomically(path, |w| Ok(w.write_all(book.to_json().as_bytes())?))
}
