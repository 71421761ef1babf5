//! The row: *this knob, on this model and GPU, under this traffic, moved these numbers*, with
//! the evidence that says so.
//!
//! A [`Row`] exists only through [`Row::measured`], [`Row::illustrative`] or deserialization,
//! and all three run one check ([`RowSpec`]'s rules), so a hand-edited file cannot hold a row
//! that could not have been constructed. Its fields are private: once a row exists, it stays
//! one. The one rule reading cannot re-prove is receipt qualification — the file holds the
//! receipts' digests, not the receipts — so [`Row::measured`] takes the arms' audits and
//! refuses any that does not qualify, naming the standing that failed.
//!
//! Rules the issue leaves open, chosen here:
//! - every identity string is non-empty (an empty GPU SKU would gate nothing), and so is the
//!   row id;
//! - digests are 64 lowercase hex characters, and one receipt cannot count twice (a repeat
//!   that is the same run twice has no spread);
//! - a measured row names exactly one receipt per repeat per arm and says when it was
//!   verified; an illustrative row (invented numbers) may name none;
//! - a receipt fired at `loadproof sim` makes a row whose engine is `loadproof sim`, and only
//!   such receipts do: a simulator's numbers are never filed under a real engine;
//! - invalidation keeps the row and needs a reason; a row is invalidated once.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::axes::{AxesError, RegimeAxes};
use super::delta::MeasuredDelta;
use super::error::PlaybookError;
use super::identity::{Concurrency, Identity, knobs_line};
use crate::audit::{Audit, STANDINGS};
use crate::claim::Arm;

/// The engine name `loadproof sim` reports; rows from its receipts must carry it.
pub const SIM_ENGINE: &str = "loadproof sim";

/// Knob-name fragments that make a knob prefix-dependent (matched case-insensitively, with `-`
/// read as `_`): its benefit grows with how much prompts share. `prefix` (prefix caching and
/// its hash settings), `cache` (any KV-cache knob: capacity decides how much shared prefix
/// survives to be reused), `kv_reuse`, `kv_offload`, `kv_transfer`, `kv_connector` (KV
/// offloading and transfer connectors such as LMCache). Capacity knobs named for something
/// else (`gpu_memory_utilization`, `max_num_seqs`) are not listed.
pub const PREFIX_DEPENDENT_KNOB_PARTS: [&str; 6] = [
    "prefix",
    "cache",
    "kv_reuse",
    "kv_offload",
    "kv_transfer",
    "kv_connector",
];

/// True when `knob` names a prefix-dependent setting ([`PREFIX_DEPENDENT_KNOB_PARTS`]).
pub fn is_prefix_dependent(knob: &str) -> bool {
    let name = knob.to_ascii_lowercase().replace('-', "_");
    PREFIX_DEPENDENT_KNOB_PARTS
        .iter()
        .any(|part| name.contains(part))
}

/// True when the row's delta is a lower bound: a prefix-dependent knob measured on traffic
/// whose prefixes were synthesized saw the least reuse the real traffic could have had, so
/// its delta reads "at least this much", never "this much". Computed, never stored: it
/// follows from the identity, and a stored flag could disagree with it.
pub fn delta_is_floor(row: &Row) -> bool {
    row.identity.source_kind.prefix_synthesized()
        && row.identity.knobs.keys().any(|k| is_prefix_dependent(k))
}

/// Whether a row's numbers were measured or invented for an example.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// Built from qualified receipts.
    Measured,
    /// A worked example: the format of a real row, numbers invented. Never selectable, so an
    /// example copied into a live playbook cannot pass for a measured one.
    Illustrative,
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Evidence::Measured => "measured",
            Evidence::Illustrative => "illustrative",
        })
    }
}

/// Where a row's numbers come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// sha256 of the source trace both arms replayed.
    pub trace_sha256: String,
    /// sha256 of each baseline receipt file, in repeat order.
    pub baseline_receipts: Vec<String>,
    /// sha256 of each treatment receipt file, in repeat order.
    pub treatment_receipts: Vec<String>,
    /// When the receipts were audited for this row, Unix ns (core reads no clock: the caller
    /// says). Required for a measured row.
    pub verified_unix_ns: Option<i64>,
    /// The row's knobs the server read back in every receipt that states them, with the gauge
    /// that said so (`vllm:cache_config_info`). A knob of the identity not listed here is only
    /// *stated*: the receipts' claimant said it was set; no server answer established it.
    /// Filled by [`Row::measured`] from the audits.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub knobs_read_back: BTreeMap<String, String>,
}

/// Each knob of the row's identity that every audit stating it read back from the server, with
/// the gauge; a knob some receipt only states is left out (stated, not established).
fn knobs_read_back(
    identity: &Identity,
    baseline: &[Audit],
    treatment: &[Audit],
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for name in identity.knobs.keys() {
        let stated: Vec<_> = baseline
            .iter()
            .chain(treatment)
            .filter_map(|a| a.knobs.iter().find(|k| &k.name == name))
            .collect();
        let all_read_back = !stated.is_empty() && stated.iter().all(|k| k.status == "read_back");
        if all_read_back && let Some(source) = stated.iter().find_map(|k| k.source.clone()) {
            out.insert(name.clone(), source);
        }
    }
    out
}

impl Provenance {
    /// The receipt digests of `arm`.
    pub fn receipts(&self, arm: Arm) -> &[String] {
        match arm {
            Arm::Baseline => &self.baseline_receipts,
            Arm::Treatment => &self.treatment_receipts,
        }
    }
}

/// Why a row no longer applies. The row stays in the playbook, unselectable, with this reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Invalidation {
    /// Why (non-empty).
    pub reason: String,
    /// When, Unix ns.
    pub at_unix_ns: i64,
    /// Who or what invalidated it.
    pub by: Option<String>,
}

/// Everything a row holds but its evidence kind and invalidation: what a caller assembles
/// before asking [`Row::measured`] or [`Row::illustrative`] for a row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSpec {
    /// A stable name for the row, unique within a playbook.
    pub id: String,
    /// The equality half of the row's key.
    pub identity: Identity,
    /// The regime both arms replayed.
    pub regime: RegimeAxes,
    /// What the knob moved.
    pub delta: MeasuredDelta,
    /// Digests and verification time.
    pub provenance: Provenance,
    /// Things a reader should know (labelled notes, never facts).
    pub notes: Vec<String>,
}

/// One standing that was not positive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedStanding {
    /// The standing's name (one of [`STANDINGS`]), or `receipt` for a receipt-level refusal
    /// (a digest, an inconsistency, the execution gate).
    pub standing: String,
    /// The audit's reason.
    pub reason: String,
}

/// Why a row does not construct.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RowError {
    /// The row id is empty.
    #[error("the row id is empty")]
    EmptyId,
    /// An identity field is empty.
    #[error("identity.{field} is empty: an empty value gates nothing")]
    EmptyIdentityField {
        /// The field.
        field: &'static str,
    },
    /// No knob: a row with no knob set says nothing.
    #[error("the row has no knobs: a row says what a knob moved, so it needs at least one")]
    NoKnobs,
    /// A knob with an empty name.
    #[error("a knob has an empty name")]
    EmptyKnobName,
    /// `Concurrency::Max(0)`: no request could ever be in flight (uncapped is `uncapped`).
    #[error("concurrency max 0 admits no request; open loop is \"uncapped\"")]
    ZeroConcurrencyCap,
    /// The regime axes are not usable.
    #[error("regime: {0}")]
    Axes(#[from] AxesError),
    /// No trace digest: nobody could tell which traffic the row is about.
    #[error("provenance.trace_sha256 is empty: a row must name the trace both arms replayed")]
    EmptyTraceSha256,
    /// A digest that is not 64 lowercase hex characters.
    #[error("{field} is {value:?}: not a sha256 (64 lowercase hex characters)")]
    MalformedSha256 {
        /// Where, e.g. `provenance.treatment_receipts[1]`.
        field: String,
        /// The value.
        value: String,
    },
    /// One receipt named twice (within or across arms).
    #[error("receipt {sha256} is named twice: a repeat must be a separate run")]
    DuplicateReceipt {
        /// Its digest.
        sha256: String,
    },
    /// An arm's receipt count is not its repeat count.
    #[error("{arm}: {receipts} receipt(s) for {repeats} repeats; {expected}")]
    ReceiptCountMismatch {
        /// The arm.
        arm: Arm,
        /// Receipts named.
        receipts: usize,
        /// Repeats in the delta.
        repeats: usize,
        /// What was expected.
        expected: &'static str,
    },
    /// A measured row without a verification time.
    #[error("a measured row needs provenance.verified_unix_ns (when its receipts were audited)")]
    Unverified,
    /// An invalidation without a reason.
    #[error("an invalidation needs a reason")]
    EmptyInvalidationReason,
    /// Invalidating a row that already is.
    #[error("the row is already invalidated: {reason}")]
    AlreadyInvalidated {
        /// The existing reason.
        reason: String,
    },
    /// An arm's audit count is not its receipt count.
    #[error("{arm}: {audits} audit(s) for {receipts} receipt(s); pass one audit per receipt")]
    AuditCountMismatch {
        /// The arm.
        arm: Arm,
        /// Audits given.
        audits: usize,
        /// Receipts named.
        receipts: usize,
    },
    /// A receipt whose audit does not qualify it.
    #[error(
        "{arm} receipt {index} ({sha256}) is not qualified: standing {} failed: {}{}",
        failed.first().map_or("?", |f| f.standing.as_str()),
        failed.first().map_or("", |f| f.reason.as_str()),
        also_failed(failed)
    )]
    UnqualifiedReceipt {
        /// The arm.
        arm: Arm,
        /// Index in the arm (from 0).
        index: usize,
        /// The receipt's digest.
        sha256: String,
        /// Every standing that is not positive, in [`STANDINGS`] order (never empty).
        failed: Vec<FailedStanding>,
    },
    /// A simulator's receipt under a real engine's name, or the reverse.
    #[error(
        "{arm} receipt {index}: the audit says simulator={simulator} but identity.engine is {engine:?}; rows from loadproof sim carry engine \"loadproof sim\", and only they do"
    )]
    SimulatorMismatch {
        /// The arm.
        arm: Arm,
        /// Index in the arm.
        index: usize,
        /// The audit's `simulator`.
        simulator: bool,
        /// The identity's engine.
        engine: String,
    },
}

fn also_failed(failed: &[FailedStanding]) -> String {
    let rest: Vec<&str> = failed.iter().skip(1).map(|f| f.standing.as_str()).collect();
    if rest.is_empty() {
        String::new()
    } else {
        format!(" (also failed: {})", rest.join(", "))
    }
}

/// A playbook row. See the module doc for the rules every row satisfies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawRow")]
pub struct Row {
    id: String,
    evidence: Evidence,
    invalidated: Option<Invalidation>,
    identity: Identity,
    regime: RegimeAxes,
    delta: MeasuredDelta,
    provenance: Provenance,
    notes: Vec<String>,
}

/// The row as a file holds it, before its rules are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    id: String,
    evidence: Evidence,
    invalidated: Option<Invalidation>,
    identity: Identity,
    regime: RegimeAxes,
    delta: MeasuredDelta,
    provenance: Provenance,
    #[serde(default)]
    notes: Vec<String>,
}

impl TryFrom<RawRow> for Row {
    type Error = RowError;

    fn try_from(raw: RawRow) -> Result<Row, RowError> {
        Row::checked(
            RowSpec {
                id: raw.id,
                identity: raw.identity,
                regime: raw.regime,
                delta: raw.delta,
                provenance: raw.provenance,
                notes: raw.notes,
            },
            raw.evidence,
            raw.invalidated,
        )
    }
}

impl Row {
    /// A measured row: `spec`'s rules, plus one audit per named receipt in each arm (in the
    /// same order), every one qualified. The refusal names the receipt and every standing that
    /// failed.
    pub fn measured(
        spec: RowSpec,
        baseline: &[Audit],
        treatment: &[Audit],
    ) -> Result<Row, RowError> {
        let row = Row::checked(spec, Evidence::Measured, None)?;
        for (arm, audits) in [(Arm::Baseline, baseline), (Arm::Treatment, treatment)] {
            let receipts = row.provenance.receipts(arm);
            if audits.len() != receipts.len() {
                return Err(RowError::AuditCountMismatch {
                    arm,
                    audits: audits.len(),
                    receipts: receipts.len(),
                });
            }
            for (index, (audit, sha256)) in audits.iter().zip(receipts).enumerate() {
                let failed = failed_standings(audit);
                if !failed.is_empty() {
                    return Err(RowError::UnqualifiedReceipt {
                        arm,
                        index,
                        sha256: sha256.clone(),
                        failed,
                    });
                }
                if audit.simulator != (row.identity.engine == SIM_ENGINE) {
                    return Err(RowError::SimulatorMismatch {
                        arm,
                        index,
                        simulator: audit.simulator,
                        engine: row.identity.engine.clone(),
                    });
                }
            }
        }
        let mut row = row;
        row.provenance.knobs_read_back = knobs_read_back(&row.identity, baseline, treatment);
        Ok(row)
    }

    /// An illustrative row: a worked example with invented numbers, never selectable.
    pub fn illustrative(spec: RowSpec) -> Result<Row, RowError> {
        Row::checked(spec, Evidence::Illustrative, None)
    }

    /// The same row, invalidated with `reason`. Never a deletion: the row stays, unselectable.
    pub fn invalidate(mut self, invalidation: Invalidation) -> Result<Row, RowError> {
        if let Some(existing) = &self.invalidated {
            return Err(RowError::AlreadyInvalidated {
                reason: existing.reason.clone(),
            });
        }
        if invalidation.reason.trim().is_empty() {
            return Err(RowError::EmptyInvalidationReason);
        }
        self.invalidated = Some(invalidation);
        Ok(self)
    }

    /// Parses one row (the JSON [`Row`] serializes to), with every rule checked.
    pub fn from_json(bytes: &[u8]) -> Result<Row, PlaybookError> {
        serde_json::from_slice(bytes).map_err(PlaybookError::malformed)
    }

    /// Pretty JSON, deterministic (maps are ordered).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Every rule a row's own contents can prove. Shared by every way a row comes to exist.
    pub(super) fn checked(
        spec: RowSpec,
        evidence: Evidence,
        invalidated: Option<Invalidation>,
    ) -> Result<Row, RowError> {
        if spec.id.trim().is_empty() {
            return Err(RowError::EmptyId);
        }
        let id = &spec.identity;
        for (field, value) in [
            ("model", &id.model),
            ("model_revision", &id.model_revision),
            ("gpu_sku", &id.gpu_sku),
            ("engine", &id.engine),
            ("engine_version", &id.engine_version),
        ] {
            if value.trim().is_empty() {
                return Err(RowError::EmptyIdentityField { field });
            }
        }
        if id.knobs.is_empty() {
            return Err(RowError::NoKnobs);
        }
        if id.knobs.keys().any(|k| k.trim().is_empty()) {
            return Err(RowError::EmptyKnobName);
        }
        if id.concurrency == Concurrency::Max(0) {
            return Err(RowError::ZeroConcurrencyCap);
        }
        spec.regime.validate()?;
        let p = &spec.provenance;
        if p.trace_sha256.is_empty() {
            return Err(RowError::EmptyTraceSha256);
        }
        check_sha256("provenance.trace_sha256", &p.trace_sha256)?;
        let mut seen = BTreeSet::new();
        let repeats = spec.delta.repeats();
        for arm in [Arm::Baseline, Arm::Treatment] {
            let receipts = p.receipts(arm);
            for (i, sha) in receipts.iter().enumerate() {
                check_sha256(&format!("provenance.{arm}_receipts[{i}]"), sha)?;
                if !seen.insert(sha.as_str()) {
                    return Err(RowError::DuplicateReceipt {
                        sha256: sha.clone(),
                    });
                }
            }
            let ok = match evidence {
                Evidence::Measured => receipts.len() == repeats,
                Evidence::Illustrative => receipts.is_empty() || receipts.len() == repeats,
            };
            if !ok {
                return Err(RowError::ReceiptCountMismatch {
                    arm,
                    receipts: receipts.len(),
                    repeats,
                    expected: match evidence {
                        Evidence::Measured => "a measured row names one receipt per repeat",
                        Evidence::Illustrative => {
                            "an illustrative row names none or one per repeat"
                        }
                    },
                });
            }
        }
        if evidence == Evidence::Measured && p.verified_unix_ns.is_none() {
            return Err(RowError::Unverified);
        }
        if let Some(inv) = &invalidated
            && inv.reason.trim().is_empty()
        {
            return Err(RowError::EmptyInvalidationReason);
        }
        Ok(Row {
            id: spec.id,
            evidence,
            invalidated,
            identity: spec.identity,
            regime: spec.regime,
            delta: spec.delta,
            provenance: spec.provenance,
            notes: spec.notes,
        })
    }

    /// The row's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Measured or illustrative.
    pub fn evidence(&self) -> Evidence {
        self.evidence
    }

    /// Why the row no longer applies, when it does not.
    pub fn invalidation(&self) -> Option<&Invalidation> {
        self.invalidated.as_ref()
    }

    /// The equality half of the key.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The regime both arms replayed.
    pub fn regime(&self) -> &RegimeAxes {
        &self.regime
    }

    /// What the knob moved.
    pub fn delta(&self) -> &MeasuredDelta {
        &self.delta
    }

    /// Digests and verification time.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// Notes.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// True for a measured row that is not invalidated: the only rows a match may select.
    pub fn is_selectable(&self) -> bool {
        self.evidence == Evidence::Measured && self.invalidated.is_none()
    }

    /// [`delta_is_floor`].
    pub fn delta_is_floor(&self) -> bool {
        delta_is_floor(self)
    }

    /// One line: id, knobs, engine and GPU, the throughput and p99 changes, and labels.
    pub fn summary(&self) -> String {
        let c = self.delta.change();
        let mut out = format!(
            "{}: {} on {} {} / {} -> throughput {:+.1}%, ttft p99 {:+.1}%, itl p99 {:+.1}% (medians of {} repeats)",
            self.id,
            knobs_line(&self.identity.knobs),
            self.identity.engine,
            self.identity.engine_version,
            self.identity.gpu_sku,
            c.throughput_tok_s * 100.0,
            c.ttft_p99_ms * 100.0,
            c.itl_p99_ms * 100.0,
            self.delta.repeats()
        );
        if self.evidence == Evidence::Illustrative {
            out.push_str("  [illustrative]");
        }
        if self.invalidated.is_some() {
            out.push_str("  [invalidated]");
        }
        if self.delta_is_floor() {
            out.push_str("  [floor: prefixes synthesized]");
        }
        out
    }
}

fn check_sha256(field: &str, value: &str) -> Result<(), RowError> {
    let ok = value.len() == 64
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if ok {
        Ok(())
    } else {
        Err(RowError::MalformedSha256 {
            field: field.to_owned(),
            value: value.to_owned(),
        })
    }
}

/// Every standing that keeps `audit` from qualifying, rebuilt through
/// [`Audit::qualification`] rather than trusted from its `qualified` field.
fn failed_standings(audit: &Audit) -> Vec<FailedStanding> {
    let q = audit.qualification();
    if q.is_qualified() && audit.qualified {
        return Vec::new();
    }
    let mut failed: Vec<FailedStanding> = STANDINGS
        .iter()
        .filter_map(|name| match audit.standings.get(*name) {
            Some(s) if s.positive => None,
            Some(s) => Some(FailedStanding {
                standing: (*name).to_owned(),
                reason: s.reason.clone(),
            }),
            None => Some(FailedStanding {
                standing: (*name).to_owned(),
                reason: "not assessed".to_owned(),
            }),
        })
        .collect();
    if failed.is_empty() {
        let reason = q
            .refusals()
            .first()
            .or(audit.refusals.first())
            .cloned()
            .unwrap_or_else(|| "the audit does not qualify the receipt".to_owned());
        failed.push(FailedStanding {
            standing: "receipt".to_owned(),
            reason,
        });
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::super::Prefixes;
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn a_row_without_knobs_does_not_construct() {
        let mut s = spec();
        s.identity.knobs.clear();
        assert_eq!(Row::illustrative(s).unwrap_err(), RowError::NoKnobs);
        let mut s = spec();
        s.identity.knobs.insert(" ".into(), "1".into());
        assert_eq!(Row::illustrative(s).unwrap_err(), RowError::EmptyKnobName);
    }

    #[test]
    fn an_empty_trace_sha256_does_not_construct() {
        let mut s = spec();
        s.provenance.trace_sha256.clear();
        assert_eq!(
            Row::illustrative(s).unwrap_err(),
            RowError::EmptyTraceSha256
        );
        let mut s = spec();
        s.provenance.trace_sha256 = "8090d6a3…52dc".into();
        assert!(matches!(
            Row::illustrative(s).unwrap_err(),
            RowError::MalformedSha256 { field, .. } if field == "provenance.trace_sha256"
        ));
    }

    #[test]
    fn every_identity_field_is_required() {
        let mut s = spec();
        s.identity.gpu_sku = String::new();
        assert_eq!(
            Row::illustrative(s).unwrap_err(),
            RowError::EmptyIdentityField { field: "gpu_sku" }
        );
        let mut s = spec();
        s.identity.concurrency = Concurrency::Max(0);
        assert_eq!(
            Row::illustrative(s).unwrap_err(),
            RowError::ZeroConcurrencyCap
        );
        let mut s = spec();
        s.id = " ".into();
        assert_eq!(Row::illustrative(s).unwrap_err(), RowError::EmptyId);
    }

    #[test]
    fn a_measured_row_names_one_receipt_per_repeat_and_each_once() {
        let mut s = spec();
        s.provenance.treatment_receipts.pop();
        assert!(matches!(
            Row::checked(s.clone(), Evidence::Measured, None).unwrap_err(),
            RowError::ReceiptCountMismatch {
                arm: Arm::Treatment,
                receipts: 1,
                repeats: 2,
                ..
            }
        ));
        s.provenance.treatment_receipts = vec![sha(3), sha(1)];
        assert_eq!(
            Row::checked(s.clone(), Evidence::Measured, None).unwrap_err(),
            RowError::DuplicateReceipt { sha256: sha(1) }
        );
        // An illustrative row may name no receipts at all.
        s.provenance.baseline_receipts.clear();
        s.provenance.treatment_receipts.clear();
        assert!(Row::illustrative(s.clone()).is_ok());
        s.provenance.verified_unix_ns = None;
        assert!(Row::illustrative(s.clone()).is_ok());
        let mut m = spec();
        m.provenance.verified_unix_ns = None;
        assert_eq!(
            Row::checked(m, Evidence::Measured, None).unwrap_err(),
            RowError::Unverified
        );
    }

    #[test]
    fn invalidation_keeps_the_row_and_needs_a_reason() {
        let row = measured(spec());
        let inv = |reason: &str| Invalidation {
            reason: reason.into(),
            at_unix_ns: 1,
            by: None,
        };
        assert_eq!(
            row.clone().invalidate(inv(" ")).unwrap_err(),
            RowError::EmptyInvalidationReason
        );
        let gone = row
            .invalidate(inv("vLLM 0.12 rewrote the scheduler"))
            .unwrap();
        assert!(!gone.is_selectable());
        assert_eq!(
            gone.invalidation().map(|i| i.reason.as_str()),
            Some("vLLM 0.12 rewrote the scheduler")
        );
        assert!(matches!(
            gone.invalidate(inv("again")).unwrap_err(),
            RowError::AlreadyInvalidated { .. }
        ));
    }

    #[test]
    fn a_prefix_dependent_knob_on_synthesized_prefixes_is_a_floor() {
        let mut s = spec();
        assert!(
            !measured(s.clone()).delta_is_floor(),
            "real prefixes: not a floor"
        );
        s.identity.source_kind.prefixes = Prefixes::Synthesized;
        assert!(measured(s.clone()).delta_is_floor());
        s.identity.knobs = [("max_num_seqs".to_owned(), "64".to_owned())].into();
        assert!(!measured(s.clone()).delta_is_floor(), "the control knob");
        for knob in [
            "enable-prefix-caching",
            "kv_cache_dtype",
            "KV_OFFLOADING_SIZE",
            "kv_transfer_config",
        ] {
            assert!(is_prefix_dependent(knob), "{knob}");
        }
        assert!(!is_prefix_dependent("gpu_memory_utilization"));
    }

    #[test]
    fn a_hand_edited_row_is_validated_on_read() {
        let row = measured(spec());
        let json = row.to_json();
        assert_eq!(Row::from_json(json.as_bytes()).unwrap(), row);
        let no_knobs = json.replace("\"enable_prefix_caching\": \"true\"", "");
        assert_ne!(no_knobs, json);
        let e = Row::from_json(no_knobs.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("no knobs"), "{e}");
        let unknown = json.replacen(
            "\"id\": \"r1\",",
            "\"id\": \"r1\", \"selectable\": true,",
            1,
        );
        assert!(Row::from_json(unknown.as_bytes()).is_err());
    }
}
