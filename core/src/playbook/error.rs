//! Why bytes or rows are not a playbook: the one error a playbook file, and a row read on its
//! own, are refused with.

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
    pub(super) fn malformed(e: serde_json::Error) -> PlaybookError {
        PlaybookError::Malformed {
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        }
    }
}
