//! Why a source read in parts could not be joined: its own file, so that `TraceError` can hold
//! it without the trace module and the shard module importing each other.

/// Why a shard could not be made or joined. Each is a misuse or a corrupted hand-over, never a
/// property of the data: the caller can always read the source in one part instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShardError {
    /// The bytes given as the source's head end before its header (or first JSON record).
    #[error("the head of the source ends before its header or first record")]
    NoHeaderInHead,
    /// The parts handed over contradict each other.
    #[error("a shard's parts do not hold together: {0}")]
    Inconsistent(&'static str),
    /// The shard was read as another layout, or against other filters, than the part before.
    #[error("the shard was read with a different {0} than the part before it")]
    Mismatch(&'static str),
    /// The part before the shard did not end at a line boundary.
    #[error("the part before the shard does not end at a line boundary")]
    Misaligned,
    /// The joining ingester hashes what it is pushed: its digest would miss the shard's bytes.
    #[error(
        "an ingester that hashes its own bytes cannot join a shard (hash the whole source and use finish_with_sha256)"
    )]
    Hashed,
    /// A format whose rows are tallied as a whole (RAGPulse's segment sharing): read in one part.
    #[error("a {0} source is read in one part")]
    Unsplittable(&'static str),
}
