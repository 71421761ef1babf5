//! What the user handed the command that cannot be read: [`BadInput`] (exit 2), and
//! [`read_full`], the one way a file's bytes are read in chunks. Apart from `input`, so the
//! modules `input` calls (the halves reader) can use them without importing it back.

use std::io::Read;

/// A failure the user caused (bad file, bad flag): exit code 2 with the message.
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Fills `buf` as far as the file (or a decompressor over one) allows; 0 means end of file.
pub(crate) fn read_full(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match file.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
