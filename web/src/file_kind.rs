//! What a file is, from its first bytes: a receipt, a playbook, a trace mapping, or (anything
//! else) a trace for the ingester to judge.
//!
//! Each view reads one kind; a receipt dropped on the Trace view used to be read as a trace and
//! refused as "empty input: no header line". Sniffing the head lets the page hand the file to
//! the view that reads it instead. The markers are the readers' own: a record-stream receipt
//! starts with zstd's magic or the stream's magic (`receipt::stream::is_stream`), a v1 receipt
//! and a playbook are JSON objects whose first `schema` is `loadproof.receipt/…` or
//! `loadproof.playbook/…`, a mapping one whose `schema` is `loadproof.trace-schema/…`. A Mooncake trace is JSON lines of objects too, but has no `schema`.

use loadproof_core::receipt::stream::container::decompress;
use loadproof_core::receipt::stream::is_stream;

/// Bytes of a file's head enough to tell its kind (a v1 receipt's `schema` is its first key).
pub const SNIFF_BYTES: f64 = 65_536.0;

/// The kind of a file, as far as its head tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A receipt: a record stream (compressed or not) or a v1 JSON document.
    Receipt,
    /// A playbook JSON document.
    Playbook,
    /// A trace mapping (`loadproof.trace-schema/v1`): read through, not as a trace.
    Mapping,
    /// Anything else: a trace, or a file the ingester will explain it cannot read.
    Other,
}

impl FileKind {
    /// The kind of a file that starts with `head`.
    pub fn sniff(head: &[u8]) -> FileKind {
        if is_stream(head) {
            return FileKind::Receipt;
        }
        match first_schema(head) {
            Some(s) if s.starts_with("loadproof.receipt/") => FileKind::Receipt,
            Some(s) if s.starts_with("loadproof.playbook/") => FileKind::Playbook,
            Some(s) if s.starts_with("loadproof.trace-schema/") => FileKind::Mapping,
            _ => FileKind::Other,
        }
    }

    /// How a reader calls it.
    pub fn noun(self) -> &'static str {
        match self {
            FileKind::Receipt => "a receipt",
            FileKind::Playbook => "a playbook",
            FileKind::Mapping => "a trace mapping",
            FileKind::Other => "not a receipt or playbook",
        }
    }
}

/// Whether a zstd file whose head is `head` holds a record-stream receipt: its first block,
/// whole in the head, decodes to the stream's magic. A receipt's writer flushes its first
/// record alone, so its first block starts with the magic; a zstd-compressed trace's first
/// block is text. Anything else — a first block that is not whole in the head, or does not
/// decode — is read as a trace, whose reader names what is wrong with it (the page reads zstd
/// traces; a torn receipt still has its first block).
pub fn zstd_holds_stream(head: &[u8]) -> bool {
    crate::unpack::first_block_end(head)
        .and_then(|end| head.get(..end))
        .is_some_and(|block| {
            decompress(block, SNIFF_BYTES as u64 * 64).is_ok_and(|d| is_stream(&d.bytes))
        })
}

/// The value of the first `"schema"` key of a JSON object at the head (blanks and a BOM before
/// it allowed), when it is a string.
fn first_schema(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if !text.starts_with('{') {
        return None;
    }
    let (_, after) = text.split_once("\"schema\"")?;
    let value = after.trim_start().strip_prefix(':')?.trim_start();
    let value = value.strip_prefix('"')?;
    value.split_once('"').map(|(s, _)| s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::FileKind;

    #[test]
    fn receipts_are_known_by_their_stream_magic_or_schema() {
        assert_eq!(
            FileKind::sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0]),
            FileKind::Receipt
        );
        assert_eq!(
            FileKind::sniff(b"loadproof.record-stream/v1\n{}"),
            FileKind::Receipt
        );
        assert_eq!(
            FileKind::sniff(
                b"\xef\xbb\xbf \n{\"schema\" : \"loadproof.receipt/v1\", \"protocol\": {"
            ),
            FileKind::Receipt
        );
    }

    #[test]
    fn playbooks_are_known_by_their_schema() {
        let head = b"{\n  \"schema\": \"loadproof.playbook/v1\",\n  \"rows\": [";
        assert_eq!(FileKind::sniff(head), FileKind::Playbook);
        // Only the head is read: a cut inside the object still tells.
        assert_eq!(FileKind::sniff(&head[..38]), FileKind::Playbook);
    }

    #[test]
    fn a_zstd_file_holds_a_stream_only_when_its_head_decodes_to_the_stream_magic() {
        use super::zstd_holds_stream;
        use ruzstd::encoding::{CompressionLevel, compress_to_vec};
        let trace = b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,1,2,3,API log\n";
        let stream = b"loadproof.record-stream/v1\n{\"kind\":\"header\"}\n";
        assert!(!zstd_holds_stream(&compress_to_vec(
            &trace[..],
            CompressionLevel::Fastest
        )));
        assert!(zstd_holds_stream(&compress_to_vec(
            &stream[..],
            CompressionLevel::Fastest
        )));
        // A trace of two frames, the first small; a stream with more after its first block; a
        // trace cut inside its first block; only the magic: a stream only where the first
        // block decodes to its magic.
        let two = [
            compress_to_vec(&trace[..20], CompressionLevel::Fastest),
            compress_to_vec(&trace[20..], CompressionLevel::Fastest),
        ]
        .concat();
        assert!(!zstd_holds_stream(&two));
        let more = [
            compress_to_vec(&stream[..], CompressionLevel::Fastest),
            b"more".to_vec(),
        ]
        .concat();
        assert!(zstd_holds_stream(&more));
        let cut = compress_to_vec(&trace[..], CompressionLevel::Fastest);
        assert!(!zstd_holds_stream(&cut[..cut.len() - 3]));
        assert!(!zstd_holds_stream(&[0x28, 0xb5, 0x2f, 0xfd]));
        assert!(!zstd_holds_stream(&[0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff]));
    }

    #[test]
    fn mappings_are_known_by_their_schema() {
        let head = b"{\n  \"schema\": \"loadproof.trace-schema/v1\",\n  \"arrival\": {";
        assert_eq!(FileKind::sniff(head), FileKind::Mapping);
    }

    #[test]
    fn traces_and_other_documents_are_other() {
        for head in [
            &b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"[..],
            b"{\"timestamp\": 0, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [0]}\n",
            b"TIMESTAMP,ContextTokens,GeneratedTokens\r\n",
            b"{\"schema\": \"loadproof.audit-policy/v1\"}",
            b"{\"schema\": 7}",
            b"[\"schema\", \"loadproof.receipt/v1\"]",
            b"",
            &[0x28, 0xb5][..],
        ] {
            assert_eq!(FileKind::sniff(head), FileKind::Other, "{head:?}");
        }
    }
}
