//! `blocks.jsonl`: every planned prompt as blocks at their own token lengths, line for line
//! beside the `timed_trace` file.
//!
//! vLLM's `timed_trace` gives every hash id one chunk size, so a source whose blocks are not
//! one size (RAGPulse: 512, 437, … 4 tokens, named by segment) cannot be replayed through it;
//! its plan gives vLLM fresh ids and says so. A client that builds prompts itself can do
//! better, and this file is what it builds from: line `i` holds request `i`'s blocks in prompt
//! order, `{"blocks":[["sys_prompt",0,512],["passages_ids",17,437],…]}`. The plan proves it
//! against the source like the `timed_trace` file: read back, it must equal the source's
//! blocks request for request (the `sized_blocks` check).

use std::borrow::Cow;
use std::collections::HashSet;
use std::io;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::fidelity::Check;
use crate::trace::{SEGMENTS, SizedBlock, SizedBlocks, Trace, hex, segment_index};

/// The file's name inside a plan directory.
pub const SIZED_BLOCKS_FILE: &str = "blocks.jsonl";

/// The native client's prompt-token generator for a plan with this file; the CLI implements
/// it, the protocol names it with the file's sha256 ([`protocol_argv`]).
pub const GENERATOR: &str = "loadproof-sized-blocks/v1";

/// How a native receipt's protocol names prompts built from the blocks file with `sha256`: so
/// two runs from different blocks are two protocols, and the audit can hold the embedded file
/// to it.
pub fn protocol_argv(sha256: &str) -> String {
    format!("prompt_tokens={GENERATOR} blocks=sha256:{sha256}")
}

/// The blocks file's sha256 a protocol argv names, if it names one.
pub fn named_in_argv(argv: &[String]) -> Option<&str> {
    argv.iter().find_map(|a| {
        a.strip_prefix("prompt_tokens=")?
            .strip_prefix(GENERATOR)?
            .strip_prefix(" blocks=sha256:")
    })
}

/// What `plan.json` states of the file, all recomputable from its bytes and the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizedBlocksFile {
    /// [`SIZED_BLOCKS_FILE`].
    pub file: String,
    /// Of the bytes written.
    pub sha256: String,
    /// One per request, as the `timed_trace` file.
    pub lines: u64,
    /// Blocks over every line.
    pub blocks: u64,
    /// Distinct (segment, id) blocks: what sharing leaves to prefill once.
    pub distinct_blocks: u64,
    /// Tokens the blocks hold, over every line.
    pub block_tokens: u64,
    /// Prompt tokens no block describes (`input_length` − blocks), over every line.
    pub undescribed_tokens: u64,
}

/// A line of the file that does not read as blocks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{SIZED_BLOCKS_FILE}: line {line}: {detail}")]
pub struct SizedBlocksError {
    /// 1-based.
    pub line: u64,
    /// What is wrong.
    pub detail: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    #[serde(borrow)]
    blocks: Vec<(Cow<'a, str>, u64, u32)>,
}

/// Writes `trace`'s sized blocks, one line per request. Nothing when it has none.
pub fn write(trace: &Trace, out: &mut impl io::Write) -> io::Result<()> {
    let Some(sized) = &trace.requests().sized else {
        return Ok(());
    };
    let mut buf = Vec::with_capacity(1 << 16);
    for i in 0..trace.len() {
        let line = Line {
            blocks: sized
                .row(i)
                .iter()
                .map(|b| {
                    let key = SEGMENTS.get(usize::from(b.segment)).map_or("?", |s| s.key);
                    (Cow::Borrowed(key), b.id, b.tokens)
                })
                .collect(),
        };
        serde_json::to_writer(&mut buf, &line)?;
        buf.push(b'\n');
        if buf.len() >= 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}

/// Reads the file back: one `{"blocks": […]}` of known segments per line, nothing else.
pub fn read(bytes: &[u8]) -> Result<SizedBlocks, SizedBlocksError> {
    let mut out = SizedBlocks {
        offsets: vec![0],
        blocks: Vec::new(),
    };
    // One line per request, as written: only the newline ending the last one is followed
    // by nothing.
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    for (n, line) in body.split(|&b| b == b'\n').enumerate() {
        let line_no = n as u64 + 1;
        let bad = |detail: String| SizedBlocksError {
            line: line_no,
            detail,
        };
        if body.is_empty() {
            break;
        }
        if line.trim_ascii().is_empty() {
            return Err(bad(
                "a blank line: one line per request, none between".to_owned()
            ));
        }
        let parsed: Line<'_> =
            serde_json::from_slice(line).map_err(|e| bad(format!("not a blocks line: {e}")))?;
        for (key, id, tokens) in parsed.blocks {
            let segment = segment_index(&key).ok_or_else(|| {
                let shown: String = key.chars().take(40).collect();
                bad(format!("unknown segment {shown:?}"))
            })?;
            out.blocks.push(SizedBlock {
                segment,
                id,
                tokens,
            });
        }
        out.offsets.push(out.blocks.len() as u64);
    }
    Ok(out)
}

/// What `plan.json` states of `bytes`, the file written for `trace`.
pub fn summary(trace: &Trace, bytes: &[u8]) -> Option<SizedBlocksFile> {
    let sized = trace.requests().sized.as_ref()?;
    let block_tokens = sized.tokens();
    let input = trace.requests().input_tokens_total();
    let distinct: HashSet<(u8, u64)> = sized.blocks.iter().map(|b| (b.segment, b.id)).collect();
    Some(SizedBlocksFile {
        file: SIZED_BLOCKS_FILE.to_owned(),
        sha256: hex(Sha256::digest(bytes).as_slice()),
        lines: trace.len() as u64,
        blocks: sized.blocks.len() as u64,
        distinct_blocks: distinct.len() as u64,
        block_tokens,
        undescribed_tokens: input.saturating_sub(block_tokens),
    })
}

/// The `sized_blocks` check: the file read back (`None`: absent) holds exactly the source's
/// blocks, request for request, none longer than its prompt. `None` when the trace has no
/// sized blocks and no file was found: nothing to check.
pub fn check(trace: &Trace, bytes: Option<&[u8]>) -> Option<Check> {
    let expected = trace.requests().sized.as_ref();
    let problems: Vec<String> = match (expected, bytes) {
        (None, None) => return None,
        (None, Some(_)) => vec![format!(
            "{SIZED_BLOCKS_FILE} is there, but the source names no blocks at their own lengths"
        )],
        (Some(_), None) => vec![format!(
            "the source's blocks at their own lengths are not in the plan: plan.json names no {SIZED_BLOCKS_FILE}, or it is missing"
        )],
        (Some(want), Some(bytes)) => match read(bytes) {
            Err(e) => vec![e.to_string()],
            Ok(got) => differences(trace, want, &got),
        },
    };
    Some(Check::agreement(
        "sized_blocks",
        &problems,
        "blocks.jsonl holds every request's blocks at their own lengths, as the source names them",
    ))
}

fn differences(trace: &Trace, want: &SizedBlocks, got: &SizedBlocks) -> Vec<String> {
    let lines = got.offsets.len().saturating_sub(1);
    if lines != trace.len() {
        return vec![format!(
            "{SIZED_BLOCKS_FILE} has {lines} lines, the plan {} requests",
            trace.len()
        )];
    }
    let inputs = &trace.requests().input_tokens;
    for (i, &input) in inputs.iter().enumerate() {
        let row = got.row(i);
        if row != want.row(i) {
            return vec![format!(
                "{SIZED_BLOCKS_FILE}: line {}: its blocks are not the source's",
                i + 1
            )];
        }
        let tokens = got.row_tokens(i);
        if tokens > u64::from(input) {
            return vec![format!(
                "{SIZED_BLOCKS_FILE}: line {}: blocks of {tokens} tokens exceed the {input}-token prompt",
                i + 1
            )];
        }
    }
    Vec::new()
}
