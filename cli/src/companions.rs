//! RAGPulse's companion files, found beside the trace under their published names.
//!
//! A RAGPulse trace names its prompt blocks by id; the token length of each id is in five
//! files published with it (`1_sys_prompt.jsonl` … `5_web_search.jsonl`). The user gives
//! only the trace, as they downloaded it: the files are looked for in its directory, only
//! when the trace's first line is RAGPulse's, and their sha256s go into the report.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use loadproof_core::IngestOptions;
use loadproof_core::trace::{BlockLengths, Codec, SEGMENTS, looks_like_ragpulse};

use crate::bad_input::BadInput;
use crate::user_file::{open_file, read_file};

/// The longest first line looked at to tell a RAGPulse trace.
const FIRST_LINE_MAX: u64 = 1 << 20;

/// The most bytes one companion file may have (the published ones are under 400 KB).
const COMPANION_MAX: u64 = 256 << 20;

/// `opts` with the companion files of `trace` when it is a RAGPulse trace and they are beside
/// it: all five, or none (the trace is then read without lengths, and says so); some but not
/// all is refused, naming the missing ones.
pub(crate) fn with_companions(trace: &Path, mut opts: IngestOptions) -> Result<IngestOptions> {
    if opts.block_lengths.is_some() || opts.schema.is_some() {
        return Ok(opts);
    }
    let mut head = Vec::new();
    open_file(trace)?
        .take(FIRST_LINE_MAX)
        .read_to_end(&mut head)
        .map_err(|e| BadInput(format!("{}: {e}", trace.display())))?;
    // A compressed trace is told by its content: decode what the head holds (a cut stream
    // stops with an error after what it could decode, which is all a first line needs).
    if let Some(codec) = Codec::sniff(&head) {
        let mut plain = Vec::new();
        let _ = match codec {
            Codec::Gzip => flate2::read::MultiGzDecoder::new(head.as_slice())
                .take(FIRST_LINE_MAX)
                .read_to_end(&mut plain),
            Codec::Zstd => match zstd::stream::read::Decoder::new(head.as_slice()) {
                Ok(d) => d.take(FIRST_LINE_MAX).read_to_end(&mut plain),
                Err(e) => Err(e),
            },
        };
        head = plain;
    }
    let first = head
        .split(|&b| b == b'\n')
        .find(|l| !l.trim_ascii().is_empty())
        .unwrap_or_default();
    if !looks_like_ragpulse(first) {
        return Ok(opts);
    }
    let dir = trace.parent().unwrap_or(Path::new("."));
    let present: Vec<_> = SEGMENTS
        .iter()
        .map(|s| (s.file, dir.join(s.file)))
        .filter(|(_, p)| p.is_file())
        .collect();
    if present.is_empty() {
        return Ok(opts);
    }
    if present.len() < SEGMENTS.len() {
        let missing: Vec<&str> = SEGMENTS
            .iter()
            .map(|s| s.file)
            .filter(|f| !present.iter().any(|(p, _)| p == f))
            .collect();
        return Err(BadInput(format!(
            "{}: a RAGPulse trace with some of its companion files beside it: {} missing in {} (all five give the blocks' token lengths; remove the others to read it without lengths)",
            trace.display(),
            missing.join(", "),
            dir.display()
        ))
        .into());
    }
    let mut bytes = Vec::new();
    for (name, path) in &present {
        bytes.push((
            *name,
            read_file(path, COMPANION_MAX, "a RAGPulse companion file")?,
        ));
    }
    let files: Vec<(&str, &[u8])> = bytes.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    let lengths = BlockLengths::from_files(&files)
        .map_err(|e| BadInput(format!("{}: {e}", dir.display())))?;
    opts.block_lengths = Some(Arc::new(lengths));
    Ok(opts)
}
