//! Standings and the one qualification that consumes them.
//!
//! A standing is a verdict on one thing a claim needs (the subject is known, the window was
//! isolated, the counters agree, …): positive or not, always with its reason, and when not
//! positive, the producer that would settle it. [`Qualification::from_standings`] is the only
//! way to get a qualification: it reads every standing, so a claim cannot qualify while any
//! of them refuses, and the refusals it lists are exactly the non-positive standings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The standings every qualification consumes, in the order they are reported.
pub const STANDINGS: [&str; 8] = [
    "subject",
    "implementation",
    "window",
    "arrival",
    "occupancy",
    "counter_agreement",
    "continuity",
    "ledger",
];

/// One verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    /// True only when the evidence establishes it.
    pub positive: bool,
    /// What the evidence says, in one line.
    pub reason: String,
    /// When not positive: what would settle it (the producer that is missing).
    pub settle: Option<String>,
}

impl Standing {
    /// Established by the evidence.
    pub fn positive(reason: impl Into<String>) -> Standing {
        Standing {
            positive: true,
            reason: reason.into(),
            settle: None,
        }
    }

    /// Not established; `settle` names what would.
    pub fn refused(reason: impl Into<String>, settle: impl Into<String>) -> Standing {
        Standing {
            positive: false,
            reason: reason.into(),
            settle: Some(settle.into()),
        }
    }
}

/// Qualified only when every standing in [`STANDINGS`] is present and positive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Qualification {
    /// Every standing is positive.
    Qualified,
    /// At least one is not; every refusal is listed as `standing: reason`.
    Unqualified {
        /// One line per non-positive (or missing) standing, plus any receipt-level refusal.
        refusals: Vec<String>,
    },
}

impl Qualification {
    /// The one constructor: reads every standing and every receipt-level refusal (a failed
    /// digest, an inconsistent derived number). Extra standings are ignored; a missing one
    /// refuses.
    pub fn from_standings(
        standings: &BTreeMap<String, Standing>,
        receipt_refusals: &[String],
    ) -> Qualification {
        let mut refusals: Vec<String> = receipt_refusals.to_vec();
        for name in STANDINGS {
            match standings.get(name) {
                Some(s) if s.positive => {}
                Some(s) => refusals.push(format!("{name}: {}", s.reason)),
                None => refusals.push(format!("{name}: not assessed")),
            }
        }
        if refusals.is_empty() {
            Qualification::Qualified
        } else {
            Qualification::Unqualified { refusals }
        }
    }

    /// True for [`Qualification::Qualified`].
    pub fn is_qualified(&self) -> bool {
        matches!(self, Qualification::Qualified)
    }

    /// The refusals (empty when qualified).
    pub fn refusals(&self) -> &[String] {
        match self {
            Qualification::Qualified => &[],
            Qualification::Unqualified { refusals } => refusals,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_positive() -> BTreeMap<String, Standing> {
        STANDINGS
            .iter()
            .map(|n| ((*n).to_owned(), Standing::positive("ok")))
            .collect()
    }

    #[test]
    fn qualification_needs_every_standing_positive() {
        let mut s = all_positive();
        assert!(Qualification::from_standings(&s, &[]).is_qualified());
        s.insert("window".into(), Standing::refused("no lease", "a lease"));
        let q = Qualification::from_standings(&s, &[]);
        assert_eq!(q.refusals(), ["window: no lease"]);
        s.remove("arrival");
        let q = Qualification::from_standings(&s, &[]);
        assert_eq!(q.refusals().len(), 2);
        assert!(q.refusals().contains(&"arrival: not assessed".to_owned()));
    }

    #[test]
    fn a_receipt_level_refusal_alone_unqualifies() {
        let q = Qualification::from_standings(&all_positive(), &["digest".to_owned()]);
        assert!(!q.is_qualified());
    }
}
