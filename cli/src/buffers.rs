//! The buffers a reading thread fills and the parsing thread hands back.
//!
//! Reading (and hashing, and decompressing) runs on one thread while another parses. The
//! buffers cycle between the two, so no fresh pages are faulted in per chunk, and at most
//! [`POOL`] + 2 exist: the reader waits for the parser rather than running ahead of it.

use std::sync::mpsc::Receiver;

/// Bytes handed to the parser at a time: large enough to amortise syscalls, small enough for
/// progress.
pub(crate) const CHUNK_BYTES: usize = 4 << 20;

/// Buffers in flight between the reader and the parser.
pub(crate) const POOL: usize = 4;

/// The reader's side of the cycle: the buffers the parser handed back.
pub(crate) struct Buffers {
    returned: Receiver<Vec<u8>>,
    allocated: usize,
}

impl Buffers {
    pub(crate) fn new(returned: Receiver<Vec<u8>>) -> Buffers {
        Buffers {
            returned,
            allocated: 0,
        }
    }

    /// The next buffer to fill, [`CHUNK_BYTES`] long: one handed back, else a new one while
    /// fewer than [`POOL`] + 2 exist, else one the parser hands back when it does. `None` when
    /// the parser is gone (it stopped on an error it reports itself).
    pub(crate) fn next(&mut self) -> Option<Vec<u8>> {
        let mut buf = match self.returned.try_recv() {
            Ok(buf) => buf,
            Err(_) if self.allocated < POOL + 2 => {
                self.allocated += 1;
                Vec::new()
            }
            Err(_) => self.returned.recv().ok()?,
        };
        buf.resize(CHUNK_BYTES, 0);
        Some(buf)
    }
}
