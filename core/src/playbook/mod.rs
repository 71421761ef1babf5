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
//!   filed under ([`Experiment`]).
//!
//! A [`Playbook`] file (`loadproof.playbook/v1`) is read through the same checks as a row is
//! built, plus unique row ids: a file that reads is a file every row of which could have been
//! constructed.

mod axes;
mod delta;
mod experiment;
mod identity;
mod matcher;
mod row;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

pub use axes::{AxesError, RegimeAxes, RegimeAxis};
pub use delta::{ArmSummary, Change, DeltaError, MeasuredDelta, Spread};
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

/// Schema identity of [`Playbook`].
pub const PLAYBOOK_SCHEMA: &str = "loadproof.playbook/v1";

/// Why bytes or rows are not a playbook.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlaybookError {
    /// Not JSON, not this shape, or a row that breaks a rule (the rule's message is in
    /// `detail`).
    #[error("not a loadproof playbook: line {line}, column {column}: {detail}")]
    Malformed {
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// serde's message, or the broken rule.
        detail: String,
    },
    /// Another schema version.
    #[error("playbook schema {found:?} is not {PLAYBOOK_SCHEMA:?}")]
    Schema {
        /// What the file says.
        found: String,
    },
    /// Two rows with one id: a rejection naming the id would be ambiguous.
    #[error("row id {id:?} appears twice (rows {first} and {second})")]
    DuplicateId {
        /// The id.
        id: String,
        /// The first index.
        first: usize,
        /// The second index.
        second: usize,
    },
}

impl PlaybookError {
    fn malformed(e: serde_json::Error) -> PlaybookError {
        PlaybookError::Malformed {
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        }
    }
}

/// A versioned list of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawPlaybook")]
pub struct Playbook {
    schema: String,
    rows: Vec<Row>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlaybook {
    schema: String,
    rows: Vec<Row>,
}

impl TryFrom<RawPlaybook> for Playbook {
    type Error = PlaybookError;

    fn try_from(raw: RawPlaybook) -> Result<Playbook, PlaybookError> {
        if raw.schema != PLAYBOOK_SCHEMA {
            return Err(PlaybookError::Schema { found: raw.schema });
        }
        Playbook::new(raw.rows)
    }
}

impl Playbook {
    /// A playbook of `rows` (each already a valid row); refuses duplicate ids.
    pub fn new(rows: Vec<Row>) -> Result<Playbook, PlaybookError> {
        let mut seen = std::collections::BTreeMap::new();
        for (i, row) in rows.iter().enumerate() {
            if let Some(first) = seen.insert(row.id(), i) {
                return Err(PlaybookError::DuplicateId {
                    id: row.id().to_owned(),
                    first,
                    second: i,
                });
            }
        }
        Ok(Playbook {
            schema: PLAYBOOK_SCHEMA.to_owned(),
            rows,
        })
    }

    /// Parses a playbook file, checking every row's rules and the schema.
    pub fn from_json(bytes: &[u8]) -> Result<Playbook, PlaybookError> {
        let raw: RawPlaybook = serde_json::from_slice(bytes).map_err(PlaybookError::malformed)?;
        Playbook::try_from(raw)
    }

    /// Pretty JSON, deterministic (maps are ordered), newline-terminated.
    pub fn to_json(&self) -> String {
        let mut s =
            serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        s.push('\n');
        s
    }

    /// The schema string.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The rows, in file order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The rows a match may select.
    pub fn selectable(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.is_selectable())
    }

    /// Ids of every row.
    pub fn ids(&self) -> BTreeSet<&str> {
        self.rows.iter().map(Row::id).collect()
    }

    /// [`match_rows`] over this playbook.
    pub fn match_query(
        &self,
        query: &Query,
        policy: &MatchPolicy,
    ) -> Result<MatchReport, AxesError> {
        match_rows(&self.rows, query, policy)
    }
}

#[cfg(test)]
mod test_support;
