//! gzip members and zstd frames decoded in wasm, given the file a piece at a time.
//!
//! Browsers read no zstd, and their `DecompressionStream('gzip')` stops after the first gzip
//! member, while the CLI reads every member and every frame. These decoders let the page read
//! what the CLI reads. They are pushed to (a `Blob` is read asynchronously, so a decoder that
//! pulls from a reader would have to block) and hand the content out as it comes, so memory is
//! bounded by a piece of the file, the decoder's window and one output buffer, never by the
//! decompressed size. Their verdicts are the CLI's: every member or frame is read in turn
//! (zstd's skippable frames skipped, as libzstd skips them), a checksum that does not match is
//! refused, and so is a file that ends inside a member or frame or holds bytes after the last
//! one that are not another — each refusal naming where decoding stopped.
//!
//! Nothing here touches the browser, so the verdicts are tested natively.

use std::io::Write;

use flate2::write::MultiGzDecoder;
use loadproof_core::trace::Codec;
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use xxhash_rust::xxh64::Xxh64;

/// Content handed out at a time: large enough that the parser's per-push cost vanishes, small
/// enough that no piece of a highly compressed file balloons in memory.
const OUT_BYTES: usize = 1 << 20;

/// Why a compressed file was not read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What the decoder found.
    pub what: String,
    /// The compressed byte where the member, frame or block that failed starts.
    pub at: u64,
    /// Content bytes decoded before it.
    pub decompressed: u64,
}

/// Why decoding stopped early: the file, or whoever took the content.
#[derive(Debug)]
pub enum Stop<E> {
    /// The file is not a whole compressed file.
    Refused(Refusal),
    /// The content's taker refused it.
    Taker(E),
}

/// A decoder of one codec, fed the compressed file in order.
pub enum Unpacker {
    /// Every gzip member in turn (flate2's, as the CLI's).
    Gzip(Box<GzipMembers>),
    /// Every zstd frame in turn.
    Zstd(Box<ZstdFrames>),
}

impl Unpacker {
    pub fn new(codec: Codec) -> Unpacker {
        match codec {
            Codec::Gzip => Unpacker::Gzip(Box::default()),
            Codec::Zstd => Unpacker::Zstd(Box::default()),
        }
    }

    /// Decodes `input`, the next bytes of the file, handing content to `take` as it comes.
    pub fn feed<E>(
        &mut self,
        input: &[u8],
        take: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), Stop<E>> {
        match self {
            Unpacker::Gzip(g) => g.feed(input, take),
            Unpacker::Zstd(z) => z.feed(input, take),
        }
    }

    /// The file has ended: hands out the last content, or refuses a file that stopped short.
    pub fn finish<E>(self, take: &mut impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), Stop<E>> {
        match self {
            Unpacker::Gzip(g) => g.finish(take),
            Unpacker::Zstd(z) => z.finish(take),
        }
    }

    /// Content bytes handed out so far.
    pub fn decompressed(&self) -> u64 {
        match self {
            Unpacker::Gzip(g) => g.decompressed,
            Unpacker::Zstd(z) => z.decompressed,
        }
    }
}

/// The content gathered in `out` handed to `take` and counted.
fn hand_out<E>(
    out: &mut Vec<u8>,
    decompressed: &mut u64,
    take: &mut impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), Stop<E>> {
    if out.is_empty() {
        return Ok(());
    }
    *decompressed += out.len() as u64;
    let taken = take(out).map_err(Stop::Taker);
    out.clear();
    taken
}

/// gzip, every member in turn: flate2's decoder, the one the CLI reads with.
pub struct GzipMembers {
    decoder: MultiGzDecoder<Vec<u8>>,
    /// Compressed bytes the decoder has taken.
    consumed: u64,
    decompressed: u64,
}

impl Default for GzipMembers {
    fn default() -> GzipMembers {
        GzipMembers {
            decoder: MultiGzDecoder::new(Vec::with_capacity(OUT_BYTES + (64 << 10))),
            consumed: 0,
            decompressed: 0,
        }
    }
}

impl GzipMembers {
    fn refusal(&self, what: String) -> Refusal {
        Refusal {
            what,
            at: self.consumed,
            decompressed: self.decompressed + self.decoder.get_ref().len() as u64,
        }
    }

    fn feed<E>(
        &mut self,
        mut input: &[u8],
        take: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), Stop<E>> {
        while !input.is_empty() {
            // Each write inflates at most flate2's own buffer (32 KiB) of content, so the
            // output is handed out in bounded steps however compressible the file.
            let n = match self.decoder.write(input) {
                Ok(0) => {
                    return Err(Stop::Refused(
                        self.refusal("the gzip decoder took no more bytes".to_owned()),
                    ));
                }
                Ok(n) => n,
                Err(e) => return Err(Stop::Refused(self.refusal(e.to_string()))),
            };
            self.consumed += n as u64;
            input = input.get(n..).unwrap_or_default();
            if self.decoder.get_ref().len() >= OUT_BYTES {
                hand_out(self.decoder.get_mut(), &mut self.decompressed, take)?;
            }
        }
        Ok(())
    }

    fn finish<E>(mut self, take: &mut impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), Stop<E>> {
        // Flushes what flate2 still holds and checks the last member's length and CRC; a file
        // cut inside a member (or its header or trailer) fails here.
        if let Err(e) = self.decoder.try_finish() {
            return Err(Stop::Refused(self.refusal(format!(
                "the compressed data ends inside a gzip member or its header ({e}): the file is truncated, or ends with bytes that are not a whole gzip member"
            ))));
        }
        hand_out(self.decoder.get_mut(), &mut self.decompressed, take)
    }
}

/// The magic of a zstd frame, as a little-endian u32.
const ZSTD_FRAME: u32 = 0xFD2F_B528;
/// Skippable frames' magics are `0x184D2A50..=0x184D2A5F`.
const SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
const SKIPPABLE: u32 = 0x184D_2A50;
/// zstd's largest block (RFC 8878 §3.1.1.2.3): a larger size is corrupt, and refusing it
/// before buffering it keeps a hostile header from growing the buffer.
const MAX_BLOCK: usize = 128 << 10;

/// Where the zstd decoder stands in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Before a frame (the next, or the end of the file after the last).
    Between,
    /// Inside a skippable frame, this many bytes still to skip.
    Skipping(u64),
    /// Inside a frame's blocks; `checksum`: a content checksum follows the last block.
    Blocks { checksum: bool },
}

/// zstd, every frame in turn, through ruzstd (the receipt reader's decoder). ruzstd decodes
/// from a reader holding whole blocks, so the file's bytes wait in `pending` until the next
/// header or block is whole there; a block is at most 128 KiB, so `pending` stays small.
pub struct ZstdFrames {
    frame: FrameDecoder,
    pending: Vec<u8>,
    /// The compressed offset of `pending[0]`.
    consumed: u64,
    place: Place,
    /// XXH64 of the current frame's content, for its checksum.
    hash: Xxh64,
    out: Vec<u8>,
    frames: u64,
    decompressed: u64,
}

impl Default for ZstdFrames {
    fn default() -> ZstdFrames {
        ZstdFrames {
            frame: FrameDecoder::new(),
            pending: Vec::new(),
            consumed: 0,
            place: Place::Between,
            hash: Xxh64::new(0),
            out: Vec::with_capacity(OUT_BYTES + MAX_BLOCK),
            frames: 0,
            decompressed: 0,
        }
    }
}

/// What one step over `pending` did.
enum Step {
    /// Took this many bytes of `pending`.
    Took(usize),
    /// Needs more of the file.
    Wait,
}

impl ZstdFrames {
    fn refusal(&self, what: String, at: usize) -> Refusal {
        Refusal {
            what,
            at: self.consumed + at as u64,
            decompressed: self.decompressed + self.out.len() as u64,
        }
    }

    fn feed<E>(
        &mut self,
        input: &[u8],
        take: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), Stop<E>> {
        self.pending.extend_from_slice(input);
        let mut start = 0;
        let stepped = loop {
            match self.step(start, take) {
                Ok(Step::Took(n)) => start += n,
                Ok(Step::Wait) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.pending.drain(..start);
        self.consumed += start as u64;
        stepped
    }

    /// Decodes the header, skipped bytes or block at `pending[start..]` when it is whole.
    fn step<E>(
        &mut self,
        start: usize,
        take: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<Step, Stop<E>> {
        let rest = self.pending.get(start..).unwrap_or_default();
        match self.place {
            Place::Between => {
                let Some(magic) = le_u32(rest, 0) else {
                    return Ok(Step::Wait);
                };
                if magic & SKIPPABLE_MASK == SKIPPABLE {
                    let Some(size) = le_u32(rest, 4) else {
                        return Ok(Step::Wait);
                    };
                    self.place = Place::Skipping(u64::from(size));
                    return Ok(Step::Took(8));
                }
                if magic != ZSTD_FRAME {
                    let what = if self.frames == 0 {
                        "the file does not start with a zstd frame".to_owned()
                    } else {
                        format!(
                            "the bytes after the last zstd frame are not one (they start {})",
                            hex_head(rest)
                        )
                    };
                    return Err(Stop::Refused(self.refusal(what, start)));
                }
                let Some(size) = rest.get(4).map(|&d| frame_header_bytes(d)) else {
                    return Ok(Step::Wait);
                };
                let Some(header) = rest.get(..size) else {
                    return Ok(Step::Wait);
                };
                let mut reader = header;
                if let Err(e) = self.frame.reset(&mut reader) {
                    return Err(Stop::Refused(
                        self.refusal(format!("a zstd frame header: {e}"), start),
                    ));
                }
                let checksum = header.get(4).is_some_and(|d| d & 0x04 != 0);
                self.place = Place::Blocks { checksum };
                self.hash = Xxh64::new(0);
                self.frames += 1;
                Ok(Step::Took(size - reader.len()))
            }
            Place::Skipping(left) => {
                if rest.is_empty() {
                    return Ok(Step::Wait);
                }
                let n = usize::try_from(left).unwrap_or(usize::MAX).min(rest.len());
                let left = left - n as u64;
                self.place = if left == 0 {
                    Place::Between
                } else {
                    Place::Skipping(left)
                };
                Ok(Step::Took(n))
            }
            Place::Blocks { checksum } => {
                let Some(head) = rest.get(..3) else {
                    return Ok(Step::Wait);
                };
                let raw = u32::from(head[0]) | u32::from(head[1]) << 8 | u32::from(head[2]) << 16;
                let last = raw & 1 == 1;
                let size = (raw >> 3) as usize;
                let body = match (raw >> 1) & 3 {
                    1 => 1, // RLE: one byte, repeated
                    _ => size,
                };
                if size > MAX_BLOCK {
                    return Err(Stop::Refused(self.refusal(
                        format!("a zstd block of {size} bytes, over the format's 128 KiB"),
                        start,
                    )));
                }
                let whole = 3 + body + if last && checksum { 4 } else { 0 };
                let Some(block) = rest.get(..whole) else {
                    return Ok(Step::Wait);
                };
                let mut reader = block;
                if let Err(e) = self
                    .frame
                    .decode_blocks(&mut reader, BlockDecodingStrategy::UptoBlocks(1))
                {
                    return Err(Stop::Refused(
                        self.refusal(format!("a zstd block: {e}"), start),
                    ));
                }
                let took = whole - reader.len();
                self.collect(take)?;
                if last {
                    if checksum
                        && self.frame.get_checksum_from_data() != Some(self.hash.digest() as u32)
                    {
                        return Err(Stop::Refused(self.refusal(
                            "the zstd frame's content does not match its checksum".to_owned(),
                            start,
                        )));
                    }
                    self.place = Place::Between;
                }
                Ok(Step::Took(took))
            }
        }
    }

    /// Moves what the decoder can give (all of it once the frame is finished, else all but
    /// its window) into `out`, handing `out` out once it is large.
    fn collect<E>(&mut self, take: &mut impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), Stop<E>> {
        let before = self.out.len();
        if let Err(e) = self.frame.collect_to_writer(&mut self.out) {
            return Err(Stop::Refused(self.refusal(format!("a zstd block: {e}"), 0)));
        }
        self.hash.update(self.out.get(before..).unwrap_or_default());
        if self.out.len() >= OUT_BYTES {
            hand_out(&mut self.out, &mut self.decompressed, take)?;
        }
        Ok(())
    }

    fn finish<E>(mut self, take: &mut impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), Stop<E>> {
        if self.place != Place::Between || !self.pending.is_empty() || self.frames == 0 {
            return Err(Stop::Refused(self.refusal(
                "the compressed data ends inside a zstd frame or its header: the file is truncated, or ends with bytes that are not a whole zstd frame".to_owned(),
                0,
            )));
        }
        hand_out(&mut self.out, &mut self.decompressed, take)
    }
}

/// The length of the start of `file` that holds a zstd frame's header and first block whole
/// (its checksum too when that block is the last and the frame has one), when it does: what
/// tells a record-stream receipt, whose writer flushes its first record alone, from a trace.
pub fn first_block_end(file: &[u8]) -> Option<usize> {
    if le_u32(file, 0)? != ZSTD_FRAME {
        return None;
    }
    let d = *file.get(4)?;
    let header = frame_header_bytes(d);
    let head = file.get(header..header + 3)?;
    let raw = u32::from(head[0]) | u32::from(head[1]) << 8 | u32::from(head[2]) << 16;
    let body = if (raw >> 1) & 3 == 1 {
        1
    } else {
        (raw >> 3) as usize
    };
    let checksum = if raw & 1 == 1 && d & 0x04 != 0 { 4 } else { 0 };
    let end = header + 3 + body + checksum;
    (end <= file.len()).then_some(end)
}

/// The little-endian u32 at `bytes[at..at + 4]`, when the bytes are there.
fn le_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let four = bytes.get(at..at.checked_add(4)?)?;
    <[u8; 4]>::try_from(four).ok().map(u32::from_le_bytes)
}

/// The length of a zstd frame header (magic included) whose descriptor byte is `d` (RFC 8878
/// §3.1.1.1): the magic, the descriptor, the window byte unless single-segment, the dictionary
/// id and the content size.
fn frame_header_bytes(d: u8) -> usize {
    let single_segment = d & 0x20 != 0;
    let content_size = match d >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let dictionary = match d & 3 {
        0 => 0,
        1 => 1,
        2 => 2,
        _ => 4,
    };
    4 + 1 + usize::from(!single_segment) + dictionary + content_size
}

/// Up to the first eight bytes of `bytes` in hex, to name what was found.
fn hex_head(bytes: &[u8]) -> String {
    let head: String = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("0x{head}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `file` fed in pieces of `piece` bytes, returning the content or the refusal.
    fn unpack(codec: Codec, file: &[u8], piece: usize) -> Result<Vec<u8>, Refusal> {
        let mut content = Vec::new();
        let mut take = |b: &[u8]| -> Result<(), ()> {
            content.extend_from_slice(b);
            Ok(())
        };
        let mut u = Unpacker::new(codec);
        let fed = file
            .chunks(piece.max(1))
            .try_for_each(|p| u.feed(p, &mut take));
        let done = fed.and_then(|()| u.finish(&mut take));
        match done {
            Ok(()) => Ok(content),
            Err(Stop::Refused(r)) => Err(r),
            Err(Stop::Taker(())) => Err(Refusal {
                what: "taker".to_owned(),
                at: 0,
                decompressed: 0,
            }),
        }
    }

    /// A text that compresses into several blocks and is not all one byte.
    fn text(lines: usize) -> Vec<u8> {
        let mut s = String::from("Timestamp,Model,Request tokens,Response tokens\n");
        for i in 0..lines {
            s.push_str(&format!(
                "{}.{},ChatGPT,{},{}\n",
                i / 7,
                i % 1000,
                i * 31 % 997,
                i % 13
            ));
        }
        s.into_bytes()
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        let _ = e.write_all(bytes);
        e.finish().unwrap_or_default()
    }

    fn zst(bytes: &[u8]) -> Vec<u8> {
        zstd_frame(bytes, true)
    }

    /// One zstd frame of `bytes` written by hand from raw blocks (ruzstd's encoder is not
    /// built here): single segment off, a window of 1 MiB, a checksum when asked.
    fn zstd_frame(bytes: &[u8], checksum: bool) -> Vec<u8> {
        let mut f = ZSTD_FRAME.to_le_bytes().to_vec();
        f.push(if checksum { 0x04 } else { 0x00 });
        f.push(0x50); // window: 2^(10 + 10) = 1 MiB
        let blocks: Vec<&[u8]> = bytes.chunks(100_000).collect();
        let blocks = if blocks.is_empty() {
            vec![&[][..]]
        } else {
            blocks
        };
        for (i, b) in blocks.iter().enumerate() {
            let last = u32::from(i + 1 == blocks.len());
            let raw = last | (b.len() as u32) << 3; // type 0: raw
            f.extend_from_slice(&raw.to_le_bytes()[..3]);
            f.extend_from_slice(b);
        }
        if checksum {
            f.extend_from_slice(&(xxhash_rust::xxh64::xxh64(bytes, 0) as u32).to_le_bytes());
        }
        f
    }

    #[test]
    fn a_gzip_file_of_several_members_reads_whole_in_any_pieces() {
        let content = text(40_000);
        let (a, b) = content.split_at(12_345);
        let file = [gz(a), gz(b), gz(b"")].concat();
        for piece in [1, 7, 4096, 1 << 20] {
            assert_eq!(
                unpack(Codec::Gzip, &file, piece).ok(),
                Some(content.clone()),
                "{piece}"
            );
        }
    }

    #[test]
    fn a_truncated_gzip_file_or_garbage_after_its_member_is_refused() {
        let file = gz(&text(5_000));
        for cut in [1, 5, 9, file.len() / 2] {
            let r = unpack(Codec::Gzip, &file[..file.len() - cut], 4096);
            assert!(
                r.as_ref()
                    .is_err_and(|r| r.what.contains("ends inside a gzip member")),
                "{cut}: {r:?}"
            );
        }
        let garbage = [file.clone(), b"garbage after the member\n".to_vec()].concat();
        let r = unpack(Codec::Gzip, &garbage, 4096);
        assert!(
            r.as_ref().is_err_and(|r| r.at == file.len() as u64),
            "{r:?}"
        );
        // A flipped byte in the deflate data, or in the CRC, is caught.
        let mut bad = file.clone();
        let at = bad.len() - 6;
        bad[at] ^= 0xff;
        assert!(unpack(Codec::Gzip, &bad, 4096).is_err());
    }

    #[test]
    fn a_zstd_file_of_several_frames_and_skippable_ones_reads_whole_in_any_pieces() {
        let content = text(40_000);
        let (a, b) = content.split_at(250_001);
        let mut skip = (SKIPPABLE | 3).to_le_bytes().to_vec();
        skip.extend_from_slice(&5u32.to_le_bytes());
        skip.extend_from_slice(b"12345");
        let file = [zst(a), skip, zstd_frame(b, false), zst(b"")].concat();
        for piece in [1, 3, 4096, 1 << 20] {
            assert_eq!(
                unpack(Codec::Zstd, &file, piece).ok(),
                Some(content.clone()),
                "{piece}"
            );
        }
    }

    #[test]
    fn frames_written_by_libzstd_and_ruzstd_read_whole_with_their_checksums() {
        let content = text(60_000);
        let (a, b) = content.split_at(400_000);
        let lib = |bytes: &[u8], level: i32| {
            let mut e = zstd::stream::write::Encoder::new(Vec::new(), level).ok();
            if let Some(e) = e.as_mut() {
                let _ = e.include_checksum(true);
                let _ = e.write_all(bytes);
            }
            e.and_then(|e| e.finish().ok()).unwrap_or_default()
        };
        let rus = ruzstd::encoding::compress_to_vec(b, ruzstd::encoding::CompressionLevel::Fastest);
        for file in [
            lib(&content, 3),
            lib(&content, 19),
            [lib(a, 1), lib(b, 9)].concat(),
            [lib(a, 3), rus].concat(),
        ] {
            for piece in [1000, 1 << 16, 1 << 20] {
                assert_eq!(
                    unpack(Codec::Zstd, &file, piece).ok(),
                    Some(content.clone())
                );
            }
        }
    }

    #[test]
    fn a_truncated_zstd_file_or_garbage_after_its_frame_is_refused() {
        let file = zst(&text(20_000));
        for cut in [1, 4, 5, file.len() / 2, file.len() - 6] {
            let r = unpack(Codec::Zstd, &file[..file.len() - cut], 4096);
            assert!(
                r.as_ref()
                    .is_err_and(|r| r.what.contains("ends inside a zstd frame")),
                "{cut}: {r:?}"
            );
        }
        for tail in [&b"garbage after the frame\n"[..], b"ab"] {
            let r = unpack(Codec::Zstd, &[file.clone(), tail.to_vec()].concat(), 4096);
            assert!(
                r.as_ref().is_err_and(|r| r.what.contains("zstd frame")),
                "{r:?}"
            );
        }
        let r = unpack(
            Codec::Zstd,
            &[file.clone(), b"garbage".to_vec()].concat(),
            4096,
        );
        assert_eq!(r.map_err(|r| r.at), Err(file.len() as u64));
    }

    #[test]
    fn a_zstd_frame_whose_content_does_not_match_its_checksum_is_refused() {
        let mut file = zst(&text(2_000));
        let at = file.len() - 10;
        file[at] ^= 0x01;
        let r = unpack(Codec::Zstd, &file, 4096);
        assert!(
            r.as_ref().is_err_and(|r| r.what.contains("checksum")),
            "{r:?}"
        );
    }

    #[test]
    fn a_zstd_block_over_the_format_limit_is_refused_before_it_is_buffered() {
        let mut file = ZSTD_FRAME.to_le_bytes().to_vec();
        file.extend_from_slice(&[0x00, 0x50]);
        let raw = 1u32 | ((MAX_BLOCK as u32 + 1) << 3);
        file.extend_from_slice(&raw.to_le_bytes()[..3]);
        let r = unpack(Codec::Zstd, &file, 4096);
        assert!(
            r.as_ref().is_err_and(|r| r.what.contains("128 KiB")),
            "{r:?}"
        );
    }

    #[test]
    fn the_frame_header_length_follows_the_descriptor() {
        assert_eq!(frame_header_bytes(0x00), 6);
        assert_eq!(frame_header_bytes(0x20), 6); // single segment: 1-byte content size
        assert_eq!(frame_header_bytes(0xE3), 4 + 1 + 4 + 8);
        assert_eq!(frame_header_bytes(0x44), 4 + 1 + 1 + 2);
    }
}
