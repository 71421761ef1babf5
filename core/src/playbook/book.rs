//! The playbook file (`loadproof.playbook/v1`): a versioned list of rows, read only through the
//! same checks every row is built with, with unique ids.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::axes::AxesError;
use super::error::{PLAYBOOK_SCHEMA, PlaybookError};
use super::matcher::{MatchPolicy, MatchReport, Query, match_rows};
use super::row::Row;

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
