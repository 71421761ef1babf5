//! What a row was measured on, as the matcher compares it: by equality, never by distance.
//!
//! These are the fields where "close" means nothing: a result on one GPU says nothing about
//! another, a knob set to `true` says nothing about it set to `false`. The regime axes, where
//! closeness does mean something, live in [`super::axes`].

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::plan::PlanDoc;
use crate::trace::Trace;

/// Where the replayed requests came from. Kept apart from the prefixes because a synthetic
/// trace can carry real sharing (`trace synth --prefix-share`) and a recorded one can lack it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Traffic {
    /// A recorded trace (BurstGPT, Mooncake, Azure, a production capture).
    Recorded,
    /// Generated to a target regime (`loadproof trace synth`).
    Synthetic,
    /// A fixed-length public benchmark condition: not evidence about production traffic.
    Scoreboard,
}

/// Whether the replay's prefix sharing is the source's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prefixes {
    /// Every request carried its own prefix identity (Mooncake's `hash_ids`).
    Recorded,
    /// Some request had none, so the replay invented unique blocks for it: sharing in the
    /// replay is understated, never overstated (`prefix_synthesized` in a plan).
    Synthesized,
}

impl Prefixes {
    /// The prefixes of a plan's replay file, as the plan proved them.
    pub fn of_plan(plan: &PlanDoc) -> Prefixes {
        if plan.timed_trace.prefix_synthesized {
            Prefixes::Synthesized
        } else {
            Prefixes::Recorded
        }
    }

    /// The prefixes a replay of `trace` would carry: synthesized as soon as one emitted row
    /// lacks prefix identity, exactly as a plan decides.
    pub fn of_trace(trace: &Trace) -> Prefixes {
        match trace.meta().rows_without_prefix {
            Some(0) => Prefixes::Recorded,
            _ => Prefixes::Synthesized,
        }
    }
}

/// The kind of traffic a measurement replayed. The trace *format* is deliberately not part of
/// it: a format is an encoding, and the same requests in two encodings are one workload.
/// What the engine sees differently is whether prefixes were shared as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceKind {
    /// Recorded, synthetic or scoreboard.
    pub traffic: Traffic,
    /// Recorded or synthesized prefix identity.
    pub prefixes: Prefixes,
}

impl SourceKind {
    /// True when the replay invented prefix blocks (`prefix_synthesized`).
    pub fn prefix_synthesized(&self) -> bool {
        self.prefixes == Prefixes::Synthesized
    }
}

impl fmt::Display for Traffic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Traffic::Recorded => "recorded",
            Traffic::Synthetic => "synthetic",
            Traffic::Scoreboard => "scoreboard",
        })
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefixes = match self.prefixes {
            Prefixes::Recorded => "prefixes recorded",
            Prefixes::Synthesized => "prefix_synthesized",
        };
        write!(f, "{} traffic, {prefixes}", self.traffic)
    }
}

/// The client's cap on requests in flight. An enum rather than `Option<u64>` so that "open
/// loop" is a stated value, never an absent one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Concurrency {
    /// Open loop: requests are sent on schedule however many are in flight.
    Uncapped,
    /// At most this many in flight (> 0).
    Max(u64),
}

impl Concurrency {
    /// Reads a receipt's `protocol.max_concurrency`: `Some(0)` is the stated "uncapped",
    /// `None` is unstated and has no concurrency to give.
    pub fn from_max_concurrency(max: Option<u64>) -> Option<Concurrency> {
        match max {
            None => None,
            Some(0) => Some(Concurrency::Uncapped),
            Some(n) => Some(Concurrency::Max(n)),
        }
    }
}

/// Text that is not a [`Concurrency`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a number of requests > 0, or uncapped")]
pub struct ConcurrencyError {
    /// The text as given.
    pub text: String,
}

/// `uncapped`, or a whole number of requests > 0: what `playbook match --concurrency` and the
/// page's Concurrency field take, exactly (the caller trims a typed field if it wants).
impl std::str::FromStr for Concurrency {
    type Err = ConcurrencyError;

    fn from_str(text: &str) -> Result<Concurrency, ConcurrencyError> {
        match text {
            "uncapped" => Ok(Concurrency::Uncapped),
            t => match t.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Concurrency::Max(n)),
                _ => Err(ConcurrencyError {
                    text: text.to_owned(),
                }),
            },
        }
    }
}

impl fmt::Display for Concurrency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Concurrency::Uncapped => f.write_str("uncapped"),
            Concurrency::Max(n) => write!(f, "max {n}"),
        }
    }
}

/// The equality half of a row's key (and of a query). Knob values are strings, as a receipt's
/// `subject.knobs` records them, and compare exactly: `"true"` is not `"True"`, and the gate
/// that rejects says both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// The served model.
    pub model: String,
    /// Its exact revision (hub commit, checkpoint digest).
    pub model_revision: String,
    /// The accelerator.
    pub gpu_sku: String,
    /// The serving engine (`vllm`, or `loadproof sim`).
    pub engine: String,
    /// The engine's exact version.
    pub engine_version: String,
    /// What traffic was replayed.
    pub source_kind: SourceKind,
    /// The client's cap on requests in flight.
    pub concurrency: Concurrency,
    /// The treatment's knob settings, name → value: the knob set *and* its values.
    pub knobs: BTreeMap<String, String>,
}

/// Knobs as one line, `k=v, k2=v2` (sorted), for reasons and summaries.
pub fn knobs_line(knobs: &BTreeMap<String, String>) -> String {
    if knobs.is_empty() {
        return "(no knobs)".to_owned();
    }
    knobs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
