//! Prefix blocks: which ids each request's prompt is built from when vLLM replays it.
//!
//! vLLM's `timed_trace` dataset expands every id in `hash_ids` into
//! `--timed-trace-chunk-hash-size` tokens and stops when the ids run out. A chunk size that does
//! not tile a prompt therefore sends a shorter prompt, silently: Mooncake's blocks are 512
//! tokens and vLLM's default is 16, so every prompt would be 32× short while completed counts,
//! duration and percentiles still read perfectly. [`BlockPlan::new`] refuses that.
//!
//! Traces without prefix identity (BurstGPT, Azure) get fresh ids, one per block, never
//! repeated: prompt lengths hold and no sharing is invented. Rows of a prefix-identity trace
//! that carry no ids get fresh ids *above every real id*, so they cannot collide with a real
//! block and fake a shared prefix (the predecessor restarted such ids at 0).

use serde::{Deserialize, Serialize};

use crate::trace::Trace;

/// The longest `timed_trace` line: a plan whose row would not fit is refused here, and the
/// reader refuses a longer line rather than buffer it (a line of 131,072 one-token ids is
/// ~1 MiB).
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Bytes one id can take in a line: 20 digits and `", "`.
const MAX_ID_DIGITS: u64 = 22;
/// Room for ids in a line, leaving the other fields far more than they need.
const MAX_IDS_BYTES: u64 = MAX_LINE_BYTES as u64 - 1024;

/// The chunk size loadproof picks for synthesized blocks: Mooncake's, so one plan format
/// reads the same whichever trace it came from. Any size tiles a synthesized prompt.
pub const SYNTHESIZED_CHUNK: u32 = 512;

/// Where the chunk size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkOrigin {
    /// The source format's own block size (Mooncake: 512).
    SourceBlockSize,
    /// `--chunk-size` given by the caller.
    Caller,
    /// loadproof's choice for synthesized blocks ([`SYNTHESIZED_CHUNK`]).
    SynthesizedDefault,
}

/// How the `hash_ids` of every request are chosen, decided once for the whole trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPlan {
    /// Tokens each id expands to (`--timed-trace-chunk-hash-size`).
    pub chunk: u32,
    /// Where `chunk` came from.
    pub origin: ChunkOrigin,
    /// The source's block size, when it has prefix identity.
    pub source_block_tokens: Option<u32>,
    /// Requests whose ids are synthesized.
    pub synthesized_rows: u64,
    /// Ids synthesized in total.
    pub synthesized_ids: u64,
    /// The first synthesized id: one above the largest real id (0 without real ids).
    pub synthesized_from: Option<u64>,
    /// Real ids carried over from the source.
    pub source_ids: u64,
}

/// The ids of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowBlocks<'a> {
    /// The source's own ids.
    Source(&'a [u64]),
    /// `count` fresh ids `first, first + 1, …`.
    Synthesized {
        /// First id.
        first: u64,
        /// How many.
        count: u64,
    },
}

impl RowBlocks<'_> {
    /// Number of ids.
    pub fn len(&self) -> u64 {
        match self {
            RowBlocks::Source(ids) => ids.len() as u64,
            RowBlocks::Synthesized { count, .. } => *count,
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ids, in order.
    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        let (source, synth) = match *self {
            RowBlocks::Source(ids) => (ids, 0..0),
            RowBlocks::Synthesized { first, count } => {
                (&[][..], first..first.saturating_add(count))
            }
        };
        source.iter().copied().chain(synth)
    }
}

/// Why no block plan exists for a trace.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockError {
    /// A chunk of zero tokens cannot build any prompt.
    #[error("--chunk-size must be at least 1 token")]
    ZeroChunk,
    /// The chunk size leaves some prompt short: vLLM would send fewer tokens than the trace.
    #[error(
        "chunk size {chunk} does not tile the prompts: request {request} (line {} of the timed_trace file, arrival {arrival_s} s after the first kept request) has {blocks} blocks × {chunk} tokens = {covered} < input_length {input} ({factor:.2}× short); {short_rows} of {rows} requests are short, the worst {worst:.2}×. vLLM would silently send shorter prompts.{hint}",
        .request + 1
    )]
    ChunkTooSmall {
        /// The chunk size tried.
        chunk: u32,
        /// Index of the first short request (0-based, = its line in the timed_trace file − 1).
        request: u64,
        /// Its arrival, seconds from the first request.
        arrival_s: f64,
        /// Its number of ids.
        blocks: u64,
        /// Tokens those ids cover.
        covered: u64,
        /// Its input length.
        input: u32,
        /// input / covered for that request.
        factor: f64,
        /// Requests that are short.
        short_rows: u64,
        /// Requests in the trace.
        rows: u64,
        /// The largest input / covered over all requests.
        worst: f64,
        /// What to do instead.
        hint: String,
    },
    /// One request needs so many ids that its line would pass the reader's line limit: a chunk
    /// this small for a prompt this long is not a replay anyone means.
    #[error(
        "request {request} needs {ids} ids of {chunk} tokens for input_length {input}: its timed_trace line would exceed {max_bytes} bytes; use a larger --chunk-size"
    )]
    RowTooLong {
        /// Index of the request (0-based).
        request: u64,
        /// Ids it needs.
        ids: u64,
        /// The chunk size.
        chunk: u32,
        /// Its input length.
        input: u32,
        /// The line limit.
        max_bytes: usize,
    },
    /// The id space above the largest real id is too small for the synthesized ids.
    #[error(
        "cannot synthesize {needed} block ids above the largest real id {max_real}: the id space would overflow"
    )]
    IdSpaceExhausted {
        /// Largest real id.
        max_real: u64,
        /// Ids needed.
        needed: u64,
    },
}

impl BlockPlan {
    /// Decides the chunk size and ids for `trace`, refusing a chunk size that does not tile
    /// every prompt carrying real ids (`len(hash_ids) × chunk ≥ input_length`). Larger chunks
    /// than needed are allowed: vLLM ignores ids beyond the prompt's length.
    pub fn new(trace: &Trace, chunk: Option<u32>) -> Result<BlockPlan, BlockError> {
        let source_block_tokens = trace.meta().prefix_block_tokens;
        let (chunk, origin) = match (chunk, source_block_tokens) {
            (Some(c), _) => (c, ChunkOrigin::Caller),
            (None, Some(b)) => (b, ChunkOrigin::SourceBlockSize),
            (None, None) => (SYNTHESIZED_CHUNK, ChunkOrigin::SynthesizedDefault),
        };
        if chunk == 0 {
            return Err(BlockError::ZeroChunk);
        }
        let req = trace.requests();
        let rows = trace.len() as u64;
        let mut max_real: Option<u64> = None;
        let mut source_ids = 0u64;
        let mut synthesized_rows = 0u64;
        let mut synthesized_ids = 0u64;
        // (request, blocks, covered, input) of the first short row, count, worst factor.
        let mut first_short: Option<(usize, u64, u64, u32)> = None;
        let mut short_rows = 0u64;
        let mut worst = 0.0f64;
        for (i, &input) in req.input_tokens.iter().enumerate() {
            let ids = match trace.prefix_blocks(i).filter(|ids| !ids.is_empty()) {
                Some(ids) => ids.len() as u64,
                None => u64::from(input.div_ceil(chunk)),
            };
            if ids.saturating_mul(MAX_ID_DIGITS) > MAX_IDS_BYTES {
                return Err(BlockError::RowTooLong {
                    request: i as u64,
                    ids,
                    chunk,
                    input,
                    max_bytes: MAX_LINE_BYTES,
                });
            }
            match trace.prefix_blocks(i).filter(|ids| !ids.is_empty()) {
                Some(ids) => {
                    source_ids += ids.len() as u64;
                    max_real = max_real.max(ids.iter().copied().max());
                    let covered = ids.len() as u64 * u64::from(chunk);
                    if covered < u64::from(input) {
                        short_rows += 1;
                        worst = worst.max(f64::from(input) / covered as f64);
                        first_short.get_or_insert((i, ids.len() as u64, covered, input));
                    }
                }
                None => {
                    synthesized_rows += 1;
                    synthesized_ids += u64::from(input.div_ceil(chunk));
                }
            }
        }
        if let Some((i, blocks, covered, input)) = first_short {
            let arrival_ns = req.arrival_ns.get(i).copied().unwrap_or(0);
            let hint = match source_block_tokens {
                Some(b) if b > chunk => format!(
                    " The source's blocks are {b} tokens: pass --chunk-size {b} or leave it out."
                ),
                _ => String::new(),
            };
            return Err(BlockError::ChunkTooSmall {
                chunk,
                request: i as u64,
                arrival_s: arrival_ns as f64 / 1e9,
                blocks,
                covered,
                input,
                factor: f64::from(input) / covered as f64,
                short_rows,
                rows,
                worst,
                hint,
            });
        }
        let synthesized_from = if synthesized_rows == 0 {
            None
        } else {
            let first = match max_real {
                None => 0,
                Some(m) => m.checked_add(1).ok_or(BlockError::IdSpaceExhausted {
                    max_real: m,
                    needed: synthesized_ids,
                })?,
            };
            if first.checked_add(synthesized_ids).is_none() {
                return Err(BlockError::IdSpaceExhausted {
                    max_real: max_real.unwrap_or(0),
                    needed: synthesized_ids,
                });
            }
            Some(first)
        };
        Ok(BlockPlan {
            chunk,
            origin,
            source_block_tokens,
            synthesized_rows,
            synthesized_ids,
            synthesized_from,
            source_ids,
        })
    }

    /// True when any request's ids are synthesized: prefix sharing in the replay is then
    /// understated, never overstated, and a prefix-dependent result is a floor.
    pub fn prefix_synthesized(&self) -> bool {
        self.synthesized_rows > 0
    }

    /// The ids of every request of `trace` (the trace this plan was built for), in order.
    pub fn rows<'a>(&self, trace: &'a Trace) -> impl Iterator<Item = RowBlocks<'a>> + 'a {
        let chunk = self.chunk;
        let mut next = self.synthesized_from.unwrap_or(0);
        trace
            .requests()
            .input_tokens
            .iter()
            .enumerate()
            .map(move |(i, &input)| match trace.prefix_blocks(i) {
                Some(ids) if !ids.is_empty() => RowBlocks::Source(ids),
                _ => {
                    let count = u64::from(input.div_ceil(chunk.max(1)));
                    let first = next;
                    // `new` checked that every synthesized id fits.
                    next = next.saturating_add(count);
                    RowBlocks::Synthesized { first, count }
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{IngestOptions, Ingester};

    fn trace(bytes: &[u8]) -> Trace {
        let mut ing = Ingester::new(IngestOptions::default());
        ing.push(bytes).unwrap();
        ing.finish().unwrap()
    }

    #[test]
    fn synthesized_ids_are_unique_and_cover_each_prompt() {
        let t = trace(b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,1025,5,1030,Conversation log\n1,ChatGPT,512,5,517,Conversation log\n");
        let plan = BlockPlan::new(&t, None).unwrap();
        assert_eq!(plan.chunk, SYNTHESIZED_CHUNK);
        assert_eq!(plan.origin, ChunkOrigin::SynthesizedDefault);
        let ids: Vec<Vec<u64>> = plan.rows(&t).map(|r| r.ids().collect()).collect();
        assert_eq!(ids, vec![vec![0, 1, 2], vec![3]]);
        assert!(plan.prefix_synthesized());
    }

    #[test]
    fn larger_chunks_than_needed_are_accepted() {
        let t = trace(b"{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 3, \"hash_ids\": [7, 8]}\n");
        assert!(BlockPlan::new(&t, Some(1024)).is_ok());
        assert!(BlockPlan::new(&t, Some(500)).is_ok());
        let err = BlockPlan::new(&t, Some(499)).unwrap_err();
        assert!(matches!(
            err,
            BlockError::ChunkTooSmall {
                request: 0,
                covered: 998,
                ..
            }
        ));
        assert_eq!(BlockPlan::new(&t, Some(0)), Err(BlockError::ZeroChunk));
    }
}
