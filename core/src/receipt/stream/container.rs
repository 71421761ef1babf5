//! The compressed container: one zstd frame, flushed block by block while the run goes on.
//!
//! A writer killed mid-run leaves a frame with no last block, possibly ending inside a block.
//! Everything up to the last whole block still decodes: the reader finds where that block ends,
//! closes the frame there (an empty last block) and decodes that, naming the rest as a torn
//! tail. Decoding uses `ruzstd`, pure Rust, so the page reads exactly what the CLI reads.

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

use super::{StreamError, TornTail};

/// An empty raw block with the last-block bit set: closes a frame whose writer died.
const LAST_EMPTY_BLOCK: [u8; 3] = [0x01, 0x00, 0x00];

/// The decompressed stream and, when the frame did not end whole, what was left unread.
#[derive(Debug)]
pub struct Decompressed {
    /// The bytes of every whole block.
    pub bytes: Vec<u8>,
    /// The torn end of the frame, if any.
    pub torn: Option<TornTail>,
}

/// Decodes the frame in `file`, up to `limit` decompressed bytes.
pub fn decompress(file: &[u8], limit: u64) -> Result<Decompressed, StreamError> {
    match decode(file, limit)? {
        Ok(bytes) => Ok(Decompressed { bytes, torn: None }),
        Err((good, detail)) => {
            if good == 0 {
                return Err(StreamError::Container { detail });
            }
            let mut closed = file.get(..good).unwrap_or_default().to_vec();
            closed.extend_from_slice(&LAST_EMPTY_BLOCK);
            let bytes = decode(&closed, limit)?.map_err(|(_, detail)| StreamError::Container {
                detail: format!("the frame does not decode even where its blocks end: {detail}"),
            })?;
            // A frame cut exactly where a block ended lost nothing: no torn tail to name.
            let left = (file.len() - good) as u64;
            Ok(Decompressed {
                bytes,
                torn: (left > 0).then(|| TornTail {
                    layer: "compressed".to_owned(),
                    offset: good as u64,
                    bytes: left,
                    detail: format!(
                        "the zstd frame ends without its last block after byte {good} (the writer stopped): {detail}"
                    ),
                }),
            })
        }
    }
}

/// `Ok(Ok(bytes))` for a whole frame (trailing bytes after it refused); `Ok(Err((good, why)))`
/// when decoding stops early, `good` being the offset just after the last whole block (0
/// when not even the frame header reads).
#[allow(clippy::type_complexity)]
fn decode(file: &[u8], limit: u64) -> Result<Result<Vec<u8>, (usize, String)>, StreamError> {
    let mut source = file;
    let mut frame = FrameDecoder::new();
    if let Err(e) = frame.init(&mut source) {
        return Ok(Err((0, e.to_string())));
    }
    let mut out = Vec::new();
    let mut good = file.len() - source.len();
    loop {
        match frame.decode_blocks(&mut source, BlockDecodingStrategy::UptoBlocks(1)) {
            Ok(_) => {
                good = file.len() - source.len();
                if let Some(bytes) = frame.collect() {
                    out.extend_from_slice(&bytes);
                }
                if out.len() as u64 > limit {
                    return Err(StreamError::TooLarge { limit });
                }
                if frame.is_finished() {
                    if !source.is_empty() {
                        return Err(StreamError::Container {
                            detail: format!(
                                "{} bytes follow the end of the frame (a second frame, or bytes appended)",
                                source.len()
                            ),
                        });
                    }
                    return Ok(Ok(out));
                }
                if source.is_empty() {
                    return Ok(Err((
                        good,
                        "the file ends before the frame's last block".to_owned(),
                    )));
                }
            }
            Err(e) => return Ok(Err((good, e.to_string()))),
        }
    }
}
