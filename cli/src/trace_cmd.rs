//! `loadproof trace inspect`: a trace read through core's ingester ([`ingest_file`]) and its
//! report printed, as text or as `--json`.

use std::io::Write;

use anyhow::Result;
use loadproof_core::InspectReport;
use loadproof_core::trace::ArrivalGaps;

use crate::args::InspectArgs;
use crate::input::{ingest_file_with_gaps, slice_options, synthetic_note, window_of};
use crate::render;

/// `loadproof trace inspect`.
pub fn inspect(args: &InspectArgs, out: &mut impl Write) -> Result<()> {
    let window = window_of(args.window)?;
    let opts = slice_options(&args.slice)?;
    let (trace, gaps) = ingest_file_with_gaps(&args.file, opts)?;
    let name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| args.file.display().to_string());
    // The gaps on a second core while this one reads the regime (both only read the
    // arrivals), unless they were read while the file was hashed.
    let mut report = match gaps {
        Some(gaps) => InspectReport::with_gaps(&name, &trace, window, || gaps),
        None => std::thread::scope(|scope| {
            let gaps = scope.spawn(|| ArrivalGaps::of(&trace));
            InspectReport::with_gaps(&name, &trace, window, || {
                // Core does not panic on a trace it built; were the thread to, compute them here.
                gaps.join().unwrap_or_else(|_| ArrivalGaps::of(&trace))
            })
        }),
    };
    if let Some(note) = synthetic_note(&args.file, &report.meta.source_sha256) {
        report.meta.notes.push(note);
    }
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        render::inspect_text(&report, out)?;
    }
    Ok(())
}
