//! The playbook: rows that say *this knob, on this model and GPU, under this traffic, moved
//! these numbers*, and the matcher that decides when a row may be applied to live traffic.
//!
//! - `identity` — the fields compared by equality ([`Identity`], [`SourceKind`],
//!   [`Concurrency`]);
//! - `axes` — the regime axes compared by distance ([`RegimeAxes`]);
//! - `delta` — both arms' repeats, medians, spreads and the change ([`MeasuredDelta`]);
//! - `row` — the row, its provenance and every construction refusal ([`Row`], [`RowError`],
//!   [`delta_is_floor`]);
//! - `matcher` — gates, distances, tolerances and the report ([`match_rows`]);
//! - `experiment` — two arms of receipts checked to be one experiment, and what its row is
//!   filed under ([`Experiment`]);
//! - `book` — the playbook file ([`Playbook`]); `error` — why bytes are not one
//!   ([`PlaybookError`]).
//!
//! A [`Playbook`] file (`loadproof.playbook/v1`) is read through the same checks as a row is
//! built, plus unique row ids: a file that reads is a file every row of which could have been
//! constructed.

mod axes;
mod book;
mod delta;
mod error;
mod experiment;
mod identity;
mod matcher;
mod row;

pub use axes::{AxesError, RegimeAxes, RegimeAxis};
pub use book::Playbook;
pub use delta::{ArmSummary, Change, DeltaError, MeasuredDelta, Spread};
pub use error::{PLAYBOOK_SCHEMA, PlaybookError};
pub use experiment::{Experiment, ExperimentError, SYNTHETIC_SOURCE_NOTE, traffic_of_notes};
pub use identity::{
    Concurrency, ConcurrencyError, Identity, Prefixes, SourceKind, Traffic, knobs_line,
};
pub use matcher::{
    AxisDistance, AxisTolerance, Distance, DistanceError, GateName, MATCH_SCHEMA, MatchPolicy,
    MatchReport, Query, Reason, Rejected, RowRef, Selected, ToleranceError, Tolerances,
    burstiness_distance, distance, log2_distance, match_rows,
};
pub use row::{
    Evidence, FailedStanding, Invalidation, PREFIX_DEPENDENT_KNOB_PARTS, Provenance, Row, RowError,
    RowSpec, SIM_ENGINE, delta_is_floor, is_prefix_dependent,
};

#[cfg(test)]
mod test_support;
