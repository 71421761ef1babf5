//! A file the user named, opened as loadproof reads every one: only a regular file (a FIFO
//! would block, a directory is not a document), and whole only up to a stated limit.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};

use crate::bad_input::BadInput;

/// What is at `path`, when it is not a regular file loadproof can read: a FIFO with no writer
/// would block forever, a directory or device is not a document.
pub(crate) fn not_a_regular_file(path: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).ok()?;
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return None;
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    };
    Some(format!(
        "{}: is {what}, not a regular file; loadproof reads files whose size it can know",
        path.display()
    ))
}

/// Opens a regular file for reading; anything else is bad input naming what it is.
pub(crate) fn open_file(path: &Path) -> Result<File> {
    if let Some(why) = not_a_regular_file(path) {
        return Err(BadInput(why).into());
    }
    File::open(path).with_context(|| format!("opening {}", path.display()))
}

/// A whole regular file of at most `limit` bytes (`what` names it in the refusal). The limit
/// is checked before reading and enforced while reading, so a file that grows or a sparse
/// file of a terabyte costs at most `limit` bytes of memory.
pub(crate) fn read_file(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let file = open_file(path)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let over = |n: u64| {
        BadInput(format!(
            "{}: {n} bytes, over the {limit}-byte limit for {what}",
            path.display()
        ))
    };
    if len > limit {
        return Err(over(len).into());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(over(bytes.len() as u64).into());
    }
    Ok(bytes)
}
