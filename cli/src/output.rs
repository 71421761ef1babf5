//! Writing the files a command produces (plans, receipts, playbooks): through a temporary file
//! in the same directory and a rename, so a reader never sees half a file.

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::Path;

use anyhow::{Context, Result};

/// Writes through a temporary file in the same directory, then renames: a reader never sees
/// half a file, and an interrupted run leaves the previous file intact.
pub(crate) fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    fill(&mut w).with_context(|| format!("writing {}", tmp.display()))?;
    let file = w
        .into_inner()
        .map_err(|e| anyhow::anyhow!("writing {}: {}", tmp.display(), e.error()))?;
    file.sync_all()
        .with_context(|| format!("syncing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming {} into place", tmp.display()))?;
    Ok(())
}
