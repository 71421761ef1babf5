//! How a trace file was compressed, when it was: the codec its first bytes name, and the
//! digest of the file as given beside the digest of its content.
//!
//! A trace is read for its content: [`super::TraceMeta::source_sha256`] and `bytes` are the
//! decompressed bytes', so a plan of the same rows is the same plan whether they arrived as
//! `.csv`, `.csv.gz` or `.csv.zst`. The file as given has a digest of its own, which a reader
//! holding the compressed file needs to find it; [`Compression`] carries it. The codec is
//! recognised by magic bytes, never by a name's extension, which anyone may change.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A compression format loadproof reads traces through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Codec {
    /// gzip (RFC 1952), every member of a multi-member file read in turn, as `gzip -d` does.
    Gzip,
    /// Zstandard (RFC 8878), every frame read in turn.
    Zstd,
}

/// The first bytes of a gzip member (ID1, ID2).
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The first bytes of a zstd frame (0xFD2FB528, little-endian).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

impl Codec {
    /// The stable lowercase name used in JSON and messages.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
        }
    }

    /// The codec whose magic `head` (a file's first bytes, at least four when the file has
    /// them) starts with; `None` for anything else, which is read as it is. No text trace
    /// starts with either: `0x8b` and `0xb5` are not UTF-8 lead bytes after `0x1f`/`0x28`.
    pub fn sniff(head: &[u8]) -> Option<Codec> {
        if head.starts_with(&GZIP_MAGIC) {
            Some(Codec::Gzip)
        } else if head.starts_with(&ZSTD_MAGIC) {
            Some(Codec::Zstd)
        } else {
            None
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The file as given, when it was compressed: what a reader holding that file can check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compression {
    /// The codec its magic bytes named.
    pub codec: Codec,
    /// sha256 of every byte of the compressed file, lowercase hex.
    pub file_sha256: String,
    /// Size of the compressed file in bytes.
    pub file_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codec_is_named_by_magic_bytes_only() {
        assert_eq!(Codec::sniff(&[0x1f, 0x8b, 0x08, 0x00]), Some(Codec::Gzip));
        assert_eq!(Codec::sniff(&[0x28, 0xb5, 0x2f, 0xfd]), Some(Codec::Zstd));
        assert_eq!(Codec::sniff(b"Timestamp,Model"), None);
        assert_eq!(Codec::sniff(&[0x1f]), None);
        assert_eq!(Codec::sniff(&[0x28, 0xb5, 0x2f]), None);
        assert_eq!(Codec::sniff(&[]), None);
    }

    #[test]
    fn the_codec_serializes_as_its_name() {
        for codec in [Codec::Gzip, Codec::Zstd] {
            assert_eq!(
                serde_json::to_string(&codec).ok(),
                Some(format!("\"{}\"", codec.name()))
            );
        }
    }
}
