//! A gzip or zstd trace file read through its decompressor, as a stream.
//!
//! The design of the plain read holds: a reader thread reads, decompresses and hashes, the
//! calling thread only parses, and buffers cycle between the two so memory is bounded by the
//! buffers and the decoder's window, never by the decompressed size. The reader hashes twice:
//! the compressed bytes (the file as given, [`Compression::file_sha256`]) and the decompressed
//! bytes (the content, the trace's `source_sha256`). A stream cannot be cut at its middle, so
//! the two-halves parse (`crate::halves`) does not apply.
//!
//! A compressed file that does not decode to its end is refused whole, naming where the
//! decoder stopped: a truncated file would otherwise read as the rows before the cut, a short
//! trace that looks sound. Every gzip member is read (`gzip -d` does; `cat a.gz b.gz` is one
//! valid file), and bytes after the last member or frame that are not another one are refused,
//! not skipped.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Result, anyhow};
use flate2::bufread::MultiGzDecoder;
use loadproof_core::trace::{Codec, Compression, Sha256Stream};
use loadproof_core::{IngestOptions, Ingester, Trace};

use crate::bad_input::BadInput;
use crate::buffers::{Buffers, POOL};

/// Compressed bytes read from the file at a time.
const FILE_BUF_BYTES: usize = 1 << 20;

/// Reads the compressed `file` at `path` through `codec`'s decoder into a trace of its
/// content, with the file as given recorded beside it.
pub(crate) fn ingest_compressed(
    path: &Path,
    file: File,
    codec: Codec,
    opts: IngestOptions,
    bar: Option<indicatif::ProgressBar>,
) -> Result<Trace> {
    let (filled_tx, filled_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(POOL);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let file_read = Arc::new(AtomicU64::new(0));
    let progress = Arc::clone(&file_read);
    let shown = path.display().to_string();
    let reader =
        std::thread::spawn(move || decode(file, codec, &shown, &file_read, filled_tx, empty_rx));
    let mut ingester = Ingester::new_unhashed(opts);
    for chunk in filled_rx {
        ingester
            .push(&chunk)
            .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        if let Some(bar) = &bar {
            bar.set_position(progress.load(Ordering::Relaxed));
            bar.set_message(format!(
                "{} rows, {} bytes decompressed",
                ingester.rows_read(),
                ingester.bytes_seen()
            ));
        }
        // The reader may have finished; a buffer it never takes back is only an allocation.
        let _ = empty_tx.send(chunk);
    }
    let decoded = reader
        .join()
        .map_err(|_| anyhow!("the reading thread panicked"))??;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let trace = ingester
        .finish_with_sha256(decoded.content_sha256)
        .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
    Ok(trace.with_compression(decoded.file))
}

/// What the reading thread learnt of a file it decoded to its end.
struct Decoded {
    /// sha256 of every decompressed byte.
    content_sha256: [u8; 32],
    /// The file as given.
    file: Compression,
}

/// The file, hashed and counted as the decoder reads it.
struct Counted {
    file: File,
    sha: Sha256Stream,
    /// Bytes read from the file so far, shared with the progress bar.
    read: Arc<AtomicU64>,
    /// A read of the file itself failed: the error is the disk's, not the data's.
    failed: bool,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.file.read(buf) {
            Ok(n) => {
                let got = buf.get(..n).unwrap_or_default();
                self.sha.update(got);
                self.read.fetch_add(n as u64, Ordering::Relaxed);
                Ok(n)
            }
            Err(e) => {
                self.failed = e.kind() != std::io::ErrorKind::Interrupted;
                Err(e)
            }
        }
    }
}

/// The reading thread: decodes `file` to its end, sends the content in chunks, and hashes
/// both sides. Stops early, with no error of its own, when the parser stops listening (it
/// reports its own error).
fn decode(
    file: File,
    codec: Codec,
    shown: &str,
    read: &Arc<AtomicU64>,
    filled_tx: std::sync::mpsc::SyncSender<Vec<u8>>,
    empty_rx: std::sync::mpsc::Receiver<Vec<u8>>,
) -> Result<Decoded> {
    let mut counted = Counted {
        file,
        sha: Sha256Stream::default(),
        read: Arc::clone(read),
        failed: false,
    };
    let mut buffered = BufReader::with_capacity(FILE_BUF_BYTES, &mut counted);
    let mut content = Sha256Stream::default();
    let mut decompressed = 0u64;
    let pumped = match codec {
        Codec::Gzip => pump(
            MultiGzDecoder::new(&mut buffered),
            &mut content,
            &mut decompressed,
            &filled_tx,
            empty_rx,
        ),
        Codec::Zstd => match zstd::stream::read::Decoder::with_buffer(&mut buffered) {
            Ok(decoder) => pump(
                decoder,
                &mut content,
                &mut decompressed,
                &filled_tx,
                empty_rx,
            ),
            Err(e) => Err(e),
        },
    };
    // Where the decoder stopped: what was read from the file less what it had not consumed.
    let at = read
        .load(Ordering::Relaxed)
        .saturating_sub(buffered.buffer().len() as u64);
    let outcome = match pumped {
        Ok(Pumped::Stopped) => None,
        Ok(Pumped::Ended) => {
            // Both decoders read on until the file ends; anything left is bytes after the last
            // member or frame that were not read as data, and the file is refused rather than
            // hashed as if they were.
            let left = std::io::copy(&mut buffered, &mut std::io::sink());
            Some(left.map(|left| (left, decompressed)))
        }
        Err(e) => Some(Err(e)),
    };
    drop(buffered);
    let file_bytes = read.load(Ordering::Relaxed);
    let file_failed = counted.failed;
    let unit = match codec {
        Codec::Gzip => "gzip member",
        Codec::Zstd => "zstd frame",
    };
    let failure = |what: String| -> anyhow::Error {
        if file_failed {
            anyhow!("reading {shown}: {what}")
        } else {
            BadInput(format!(
                "{shown}: not a whole {codec} file: {what} (at compressed byte {at} of the {file_bytes} read; {decompressed} bytes decompressed before it); the trace is refused rather than read short",
            ))
            .into()
        }
    };
    match outcome {
        // The parser stopped and reports why; nothing here is the command's error.
        None => {}
        Some(Ok((0, _))) => {}
        Some(Ok((left, _))) => {
            return Err(failure(format!(
                "{left} bytes after the last {unit} are not one"
            )));
        }
        Some(Err(e)) => {
            let what = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                format!(
                    "the compressed data ends inside a {unit} or its header ({e}): the file is truncated, or ends with bytes that are not a whole {unit}"
                )
            } else {
                e.to_string()
            };
            return Err(failure(what));
        }
    }
    Ok(Decoded {
        content_sha256: content.finalize(),
        file: Compression {
            codec,
            file_sha256: counted.sha.finalize_hex(),
            file_bytes,
        },
    })
}

/// How the decoding loop ended.
enum Pumped {
    /// The decoder reached the end of its input.
    Ended,
    /// The parser stopped listening.
    Stopped,
}

/// Moves the decoder's output to the parser a chunk at a time, hashing it on the way.
fn pump(
    mut decoder: impl Read,
    content: &mut Sha256Stream,
    decompressed: &mut u64,
    filled_tx: &std::sync::mpsc::SyncSender<Vec<u8>>,
    empty_rx: std::sync::mpsc::Receiver<Vec<u8>>,
) -> std::io::Result<Pumped> {
    let mut buffers = Buffers::new(empty_rx);
    loop {
        let Some(mut buf) = buffers.next() else {
            return Ok(Pumped::Stopped);
        };
        // Filled here rather than by `read_full` so that bytes decoded before an error are
        // counted: the refusal says how far the decoder got.
        let mut n = 0;
        while let Some(rest) = buf.get_mut(n..).filter(|r| !r.is_empty()) {
            match decoder.read(rest) {
                Ok(0) => break,
                Ok(got) => {
                    n += got;
                    *decompressed += got as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if n == 0 {
            return Ok(Pumped::Ended);
        }
        buf.truncate(n);
        content.update(&buf);
        if filled_tx.send(buf).is_err() {
            return Ok(Pumped::Stopped);
        }
    }
}
