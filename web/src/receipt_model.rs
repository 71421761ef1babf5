//! What the page shows of one receipt, computed in one place (the offload worker or, as a
//! fallback, the page's own thread) and sent to the views as one serializable value.
//!
//! Every number here comes from `loadproof_core`: the audit is core's `audit()` verbatim (the
//! same JSON as `loadproof receipt audit --json`); the series only re-arrange the receipt's own
//! evidence for plotting.

use loadproof_core::audit::Audit;
use loadproof_core::receipt::{Protocol, Subject};
use serde::{Deserialize, Serialize};

/// One receipt, audited, ready to show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceiptModel {
    /// The file's name as chosen or fetched (no directories).
    pub source: String,
    /// Bytes in the file.
    pub file_bytes: u64,
    /// sha256 of the whole file, lowercase hex.
    pub file_sha256: String,
    /// What was asked of the server.
    pub protocol: Protocol,
    /// What was measured.
    pub subject: Subject,
    /// Core's audit, as `receipt audit --json` prints it.
    pub audit: Audit,
}

/// Stages a build reports, in order, so the page can show a progress bar.
pub const STAGES: [&str; 4] = ["parse", "digests", "audit", "series"];

/// Builds the model from a receipt file's bytes. `on_stage(i)` is called as stage `STAGES[i]`
/// begins. Never panics on any input: bad bytes are an `Err` naming what is wrong.
pub fn build(
    source: &str,
    bytes: &[u8],
    on_stage: &mut dyn FnMut(usize),
) -> Result<ReceiptModel, String> {
    on_stage(0);
    let receipt =
        loadproof_core::receipt::Receipt::from_json(bytes).map_err(|e| format!("{source}: {e}"))?;
    on_stage(2);
    let audit = loadproof_core::audit::audit(&receipt);
    on_stage(3);
    Ok(ReceiptModel {
        source: source.to_owned(),
        file_bytes: bytes.len() as u64,
        file_sha256: loadproof_core::receipt::sha256_hex(bytes),
        protocol: receipt.protocol.clone(),
        subject: receipt.subject.clone(),
        audit,
    })
}
