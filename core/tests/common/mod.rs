//! Helpers shared by core's integration tests: ingest bytes, find `../shared`.
#![allow(dead_code)]
#![allow(clippy::disallowed_methods)] // tests read fixture files; the library does not.

use std::path::PathBuf;

use loadproof_core::{CallerFilter, Format, IngestOptions, Ingester, Limits, Trace, TraceError};

pub fn opts() -> IngestOptions {
    IngestOptions {
        format: None,
        filter: CallerFilter::default(),
        limits: Limits::STANDARD,
        block_lengths: None,
        schema: None,
    }
}

pub fn ingest_with(bytes: &[u8], opts: IngestOptions) -> Result<Trace, TraceError> {
    let mut ing = Ingester::new(opts);
    ing.push(bytes)?;
    ing.finish()
}

pub fn ingest(bytes: &[u8]) -> Result<Trace, TraceError> {
    ingest_with(bytes, opts())
}

pub fn forced(format: Format) -> IngestOptions {
    IngestOptions {
        format: Some(format),
        ..opts()
    }
}

pub fn data(rel: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The read-only `../shared` beside the repository (CI lays it there), or `$LOADPROOF_SHARED`.
pub fn shared(rel: &str) -> Vec<u8> {
    let root = std::env::var_os("LOADPROOF_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    let path = root.join(rel);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (real traces are read from ../shared; set LOADPROOF_SHARED)",
            path.display()
        )
    })
}

/// Offsets just after each newline (every place a source may be cut), the last excluded.
pub fn line_starts(bytes: &[u8]) -> Vec<usize> {
    bytes
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' && i + 1 < bytes.len())
        .map(|(i, _)| i + 1)
        .collect()
}
