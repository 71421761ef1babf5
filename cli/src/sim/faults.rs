//! Fault injection for `loadproof sim`: `--fault KIND[:EVERY_N]`, repeatable.
//!
//! Valid completion requests are numbered 1, 2, 3, … in the order the server accepts them
//! (after the body is read and validated: a 400 or 404 takes no number). Request k gets the
//! first listed fault whose `EVERY_N` divides k; `EVERY_N` defaults to 1 (every request).
//!
//! - `refuse`: the connection is closed without a response (the body is read first).
//! - `http500`: a 500 with an OpenAI-style error body.
//! - `cut`: the stream stops abruptly after `max_tokens / 2` (rounded down) tokens: no final
//!   chunk, no usage, no `[DONE]`, the chunked body never terminated, the connection closed.
//! - `stall`: after the first token nothing more is sent and the connection stays open until
//!   the client gives up.
//!
//! A faulted request never counts in `vllm:request_success_total`. `refuse` and `http500`
//! never reach the engine; `cut` and `stall` are prefilled (prompt tokens counted) and count
//! the tokens they actually streamed, then leave the batch.

use anyhow::{Context, bail};

/// What goes wrong with a faulted request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Close the TCP connection without a response.
    Refuse,
    /// Respond 500.
    Http500,
    /// Stop the stream abruptly after half the tokens.
    Cut,
    /// Stop sending after the first token; keep the connection open.
    Stall,
}

/// One `--fault` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultSpec {
    /// The fault.
    pub kind: FaultKind,
    /// Applies to valid completion requests whose number is a multiple of this (≥ 1).
    pub every_n: u64,
}

impl FaultSpec {
    /// Parses `KIND[:EVERY_N]`.
    pub fn parse(spec: &str) -> anyhow::Result<Self> {
        let (kind, every) = match spec.split_once(':') {
            Some((kind, every)) => (kind, Some(every)),
            None => (spec, None),
        };
        let kind = match kind {
            "refuse" => FaultKind::Refuse,
            "http500" => FaultKind::Http500,
            "cut" => FaultKind::Cut,
            "stall" => FaultKind::Stall,
            other => bail!(
                "--fault {spec:?}: unknown kind {other:?}; expected refuse, http500, cut or stall, \
                 optionally followed by :EVERY_N"
            ),
        };
        let every_n = match every {
            None => 1,
            Some(n) => n.parse::<u64>().with_context(|| {
                format!("--fault {spec:?}: EVERY_N {n:?} is not a whole number")
            })?,
        };
        if every_n == 0 {
            bail!("--fault {spec:?}: EVERY_N must be at least 1");
        }
        Ok(FaultSpec { kind, every_n })
    }
}

/// The fault, if any, for valid completion request number `k` (from 1).
pub fn fault_for(specs: &[FaultSpec], k: u64) -> Option<FaultKind> {
    specs
        .iter()
        .find(|s| k.is_multiple_of(s.every_n))
        .map(|s| s.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kind_and_every_n() {
        let s = FaultSpec::parse("cut:3").unwrap();
        assert_eq!((s.kind, s.every_n), (FaultKind::Cut, 3));
        let s = FaultSpec::parse("http500").unwrap();
        assert_eq!((s.kind, s.every_n), (FaultKind::Http500, 1));
        assert!(FaultSpec::parse("cut:0").is_err());
        assert!(FaultSpec::parse("explode").is_err());
        assert!(FaultSpec::parse("stall:x").is_err());
    }

    #[test]
    fn first_listed_matching_fault_wins() {
        let specs = [
            FaultSpec::parse("refuse:4").unwrap(),
            FaultSpec::parse("stall:2").unwrap(),
        ];
        assert_eq!(fault_for(&specs, 1), None);
        assert_eq!(fault_for(&specs, 2), Some(FaultKind::Stall));
        assert_eq!(fault_for(&specs, 4), Some(FaultKind::Refuse));
    }
}
