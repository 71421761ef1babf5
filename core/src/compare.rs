//! Two receipts side by side, baseline against treatment: whether they can be compared at all,
//! and what each number did (`loadproof.compare/v1`).
//!
//! [`compare`] reads two audited receipts and never the raw files again: each side's
//! qualification is rebuilt through [`Audit::qualification`], the protocols are compared field
//! by field with the rule experiments use (the canonical key, every differing field named), the
//! subjects axis by axis (an unknown axis never equals anything), and the knobs name by name —
//! a knob that differs is the change under test; a model, GPU or engine that differs means the
//! receipts measured two subjects.
//!
//! Every metric is read from the audit exactly as the playbook reads a repeat
//! ([`crate::claim::Repeat::from_audit`]: client throughput, latency percentiles from
//! `audit.latency`), plus the ledger, token and engine counts. The change is `t − b`; the
//! relative change `(t − b) / b` exists only when both values exist, are finite and the
//! baseline is not 0 — nothing is divided by zero and nothing absent is read as 0.
//!
//! A comparison is an observation, never a measured effect: one receipt per arm has no spread,
//! so a difference cannot be told apart from run-to-run variation, let alone attributed to the
//! knob. [`CAVEAT`] says so on every comparison, and `observation_only` is always true; a
//! measured effect is a playbook row (at least [`MIN_REPEATS`] repeats per arm).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::audit::Audit;
use crate::claim::{Arm, MIN_REPEATS, Metric};
use crate::receipt::{Axis, Protocol, Subject};

/// Schema identity of [`Comparison`] (the `receipt compare --json` interface).
pub const COMPARE_SCHEMA: &str = "loadproof.compare/v1";

/// What one receipt per arm can and cannot say; carried by every comparison.
pub const CAVEAT: &str = "One receipt per arm is an observation, not a measured effect: a single run has no spread, so these changes cannot be told apart from run-to-run variation, nor attributed to the knob. A measured effect needs at least 2 repeats per arm with medians and spreads (loadproof playbook row).";

/// One side of a comparison: a receipt's identity and its audit. Nothing is re-read from the
/// file; `file_sha256` is the caller's digest of the bytes it audited.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The file's name as given (reported, not interpreted).
    pub source: &'a str,
    /// sha256 of the whole file, lowercase hex.
    pub file_sha256: &'a str,
    /// The receipt's protocol.
    pub protocol: &'a Protocol,
    /// The receipt's subject.
    pub subject: &'a Subject,
    /// The receipt's audit.
    pub audit: &'a Audit,
}

/// What a comparison says about one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideSummary {
    /// The file's name.
    pub source: String,
    /// sha256 of the file.
    pub file_sha256: String,
    /// The protocol key the receipt records.
    pub protocol_key: String,
    /// Qualified: every standing positive and nothing refused the receipt.
    pub qualified: bool,
    /// Every refusal of the qualification (empty when qualified).
    pub refusals: Vec<String>,
    /// A raw observation was captured (digests verify, client facts read).
    pub captured: bool,
    /// Every evidence block verifies.
    pub digests_ok: bool,
    /// The blocks that do not verify, by name.
    pub failing_blocks: Vec<String>,
    /// The endpoint was `loadproof sim`.
    pub simulator: bool,
    /// The knobs the receipt states.
    pub knobs: BTreeMap<String, String>,
}

/// One field on which the two sides differ, both values as text (protocol fields as compact
/// JSON, long values shortened; subject axes as their value or `unknown (reason)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// The field or axis.
    pub field: String,
    /// Its value in the baseline.
    pub baseline: String,
    /// Its value in the treatment.
    pub treatment: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} vs {}", self.field, self.baseline, self.treatment)
    }
}

/// A knob set differently on the two sides (`None`: not stated on that side).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnobChange {
    /// The knob.
    pub knob: String,
    /// Its baseline value.
    pub baseline: Option<String>,
    /// Its treatment value.
    pub treatment: Option<String>,
}

impl fmt::Display for KnobChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "absent".to_owned());
        write!(
            f,
            "{} {} → {}",
            self.knob,
            shown(&self.baseline),
            shown(&self.treatment)
        )
    }
}

/// Which direction of a metric a reader would call better; `None` in JSON (`null`) for counts
/// that are neither (tokens, engine deltas). Says nothing about cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// More is better (throughput, completed requests).
    Higher,
    /// Less is better (latency, failures, preemptions).
    Lower,
}

/// One metric on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricChange {
    /// The name (`throughput_tok_s`, `ttft_p50_ms`, …; the playbook's names where it has one).
    pub metric: String,
    /// The unit (`tok/s`, `ms`, `s`, `requests`, `tokens`).
    pub unit: String,
    /// Which direction reads as better, when one does.
    pub better: Option<Better>,
    /// The baseline's value; `None` when its audit could not read it.
    pub baseline: Option<f64>,
    /// The treatment's value.
    pub treatment: Option<f64>,
    /// `treatment − baseline`, when both exist.
    pub change: Option<f64>,
    /// `(treatment − baseline) / baseline` as a fraction (0.1 = +10 %), when both exist and
    /// the baseline is not 0.
    pub relative_change: Option<f64>,
    /// Why a change is absent, when one is.
    pub note: Option<String>,
}

/// The rule a comparison breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The receipts ran different work (protocol keys or fields differ).
    NotOneProtocol,
    /// The receipts measured different subjects (model, revision, GPU, engine, version,
    /// simulator), or a subject axis is unknown.
    NotOneSubject,
    /// A side's receipt is not qualified.
    Unqualified,
    /// A side's evidence does not verify.
    DigestFailure,
    /// Both sides are the same file.
    SameFile,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::NotOneProtocol => "not_one_protocol",
            Rule::NotOneSubject => "not_one_subject",
            Rule::Unqualified => "unqualified",
            Rule::DigestFailure => "digest_failure",
            Rule::SameFile => "same_file",
        })
    }
}

/// Why the two sides are not comparable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    /// The rule.
    pub rule: Rule,
    /// The side it is about, when it is about one.
    pub arm: Option<Arm>,
    /// One line naming every field, block or refusal.
    pub message: String,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.message)
    }
}

/// Two receipts side by side (`loadproof.compare/v1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// [`COMPARE_SCHEMA`].
    pub schema: String,
    /// True only when no [`Reason`] holds: one protocol, one subject apart from knobs, both
    /// sides qualified with verifying evidence, two files. Even then: an observation.
    pub comparable: bool,
    /// Every reason it is not.
    pub reasons: Vec<Reason>,
    /// The baseline side.
    pub baseline: SideSummary,
    /// The treatment side.
    pub treatment: SideSummary,
    /// One protocol: equal keys and no field differing.
    pub same_protocol: bool,
    /// Every protocol field that differs (`key` when only the key does).
    pub protocol_differences: Vec<Difference>,
    /// One subject apart from knobs: every axis known and equal, and one side of the
    /// simulator line.
    pub same_subject: bool,
    /// Every subject axis that differs or is unknown.
    pub subject_differences: Vec<Difference>,
    /// The knobs set differently: the change under test.
    pub knobs_changed: Vec<KnobChange>,
    /// The knobs set equally on both sides.
    pub knobs_held: BTreeMap<String, String>,
    /// Every metric, in report order.
    pub metrics: Vec<MetricChange>,
    /// Receipts per arm here: always 1.
    pub repeats_per_arm: u32,
    /// Repeats per arm a measured effect needs ([`MIN_REPEATS`]).
    pub min_repeats: u32,
    /// Always true: one receipt per arm is an observation, not a measured effect.
    pub observation_only: bool,
    /// [`CAVEAT`].
    pub caveat: String,
    /// What a reader should know beside the numbers (the change under test, an A/A pair, the
    /// simulator).
    pub notes: Vec<String>,
}

impl Comparison {
    /// The comparison as pretty JSON (what `receipt compare --json` prints).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The row of `metric`, when it is one of [`metric_names`].
    pub fn metric(&self, metric: &str) -> Option<&MetricChange> {
        self.metrics.iter().find(|m| m.metric == metric)
    }
}

/// Where a metric's value is read in an audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Throughput,
    Duration,
    Latency(&'static str, Percentile),
    Offered,
    Completed,
    Failed,
    FailedAfterTokens,
    OutputTokens,
    InputTokens,
    GenerationDelta,
    PromptDelta,
    Preemptions,
    MaxRunning,
    MaxWaiting,
    ClientPeak,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Percentile {
    P50,
    P90,
    P99,
}

/// One metric's definition: its key, the name a reader sees, unit, better direction and where
/// it is read. The reader's name sits beside the key so that a new metric cannot be added
/// without one (the page and the CLI's table never show a raw key).
#[derive(Debug, Clone, Copy)]
struct Definition {
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    better: Option<Better>,
    source: Source,
}

const fn def(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    better: Option<Better>,
    source: Source,
) -> Definition {
    Definition {
        name,
        label,
        unit,
        better,
        source,
    }
}

const fn latency(
    name: &'static str,
    label: &'static str,
    metric: &'static str,
    p: Percentile,
) -> Definition {
    def(
        name,
        label,
        "ms",
        Some(Better::Lower),
        Source::Latency(metric, p),
    )
}

const LOWER: Option<Better> = Some(Better::Lower);
const HIGHER: Option<Better> = Some(Better::Higher);
const REQUESTS: &str = "requests";
const TOKENS: &str = "tokens";

/// Every metric a comparison reports, in report order.
const DEFINITIONS: [Definition; 26] = [
    def(
        "throughput_tok_s",
        "Output throughput",
        "tok/s",
        HIGHER,
        Source::Throughput,
    ),
    def("duration_s", "Duration", "s", None, Source::Duration),
    latency("ttft_p50_ms", "TTFT p50", "ttft", Percentile::P50),
    latency("ttft_p90_ms", "TTFT p90", "ttft", Percentile::P90),
    latency("ttft_p99_ms", "TTFT p99", "ttft", Percentile::P99),
    latency("tpot_p50_ms", "TPOT p50", "tpot", Percentile::P50),
    latency("tpot_p90_ms", "TPOT p90", "tpot", Percentile::P90),
    latency("tpot_p99_ms", "TPOT p99", "tpot", Percentile::P99),
    latency("itl_p50_ms", "ITL p50", "itl", Percentile::P50),
    latency("itl_p90_ms", "ITL p90", "itl", Percentile::P90),
    latency("itl_p99_ms", "ITL p99", "itl", Percentile::P99),
    latency("e2el_p50_ms", "E2E latency p50", "e2el", Percentile::P50),
    latency("e2el_p90_ms", "E2E latency p90", "e2el", Percentile::P90),
    latency("e2el_p99_ms", "E2E latency p99", "e2el", Percentile::P99),
    def(
        "offered_requests",
        "Requests offered",
        REQUESTS,
        None,
        Source::Offered,
    ),
    def(
        "completed_requests",
        "Requests completed",
        REQUESTS,
        HIGHER,
        Source::Completed,
    ),
    def(
        "failed_requests",
        "Requests failed",
        REQUESTS,
        LOWER,
        Source::Failed,
    ),
    def(
        "failed_after_tokens",
        "Failed after their first token",
        REQUESTS,
        LOWER,
        Source::FailedAfterTokens,
    ),
    def(
        "output_tokens",
        "Output tokens",
        TOKENS,
        None,
        Source::OutputTokens,
    ),
    def(
        "input_tokens",
        "Input tokens",
        TOKENS,
        None,
        Source::InputTokens,
    ),
    def(
        "engine_generation_tokens_delta",
        "Engine generation tokens",
        TOKENS,
        None,
        Source::GenerationDelta,
    ),
    def(
        "engine_prompt_tokens_delta",
        "Engine prompt tokens",
        TOKENS,
        None,
        Source::PromptDelta,
    ),
    def(
        "engine_preemptions_delta",
        "Engine preemptions",
        "preemptions",
        LOWER,
        Source::Preemptions,
    ),
    def(
        "engine_max_running",
        "Engine peak running",
        REQUESTS,
        None,
        Source::MaxRunning,
    ),
    def(
        "engine_max_waiting",
        "Engine peak waiting",
        REQUESTS,
        LOWER,
        Source::MaxWaiting,
    ),
    def(
        "client_peak_in_flight",
        "Client peak in flight",
        REQUESTS,
        None,
        Source::ClientPeak,
    ),
];

/// The names of every metric a comparison reports, in report order.
pub fn metric_names() -> impl Iterator<Item = &'static str> {
    DEFINITIONS.iter().map(|d| d.name)
}

/// What a reader is shown for the metric `key`: its name and unit (`ttft_p99_ms` reads
/// "TTFT p99", "ms"), for every key [`metric_names`] yields; `None` for any other key. The
/// JSON keeps the keys; only the page and the CLI's table show these.
pub fn metric_label(key: &str) -> Option<(&'static str, &'static str)> {
    DEFINITIONS
        .iter()
        .find(|d| d.name == key)
        .map(|d| (d.label, d.unit))
}

/// The playbook's metric of the same definition, when there is one (its five are a subset).
pub fn playbook_metric(name: &str) -> Option<Metric> {
    Metric::ALL.into_iter().find(|m| m.name() == name)
}

fn read(audit: &Audit, d: &Definition) -> Option<f64> {
    let counted = |v: u64| v as f64;
    let value =
        match d.source {
            Source::Offered => audit.ledger.as_ref().and_then(|l| l.offered).map(counted),
            Source::Throughput => audit.client.as_ref().and_then(|c| c.output_tokens_per_s),
            Source::Duration => audit.client.as_ref().map(|c| c.duration_s),
            Source::Latency(metric, p) => audit
                .latency
                .iter()
                .find(|l| l.metric == metric)
                .and_then(|l| match p {
                    Percentile::P50 => l.p50_ms,
                    Percentile::P90 => l.p90_ms,
                    Percentile::P99 => l.p99_ms,
                }),
            Source::Completed => audit.ledger.as_ref().map(|l| counted(l.completed)),
            Source::Failed => audit.ledger.as_ref().and_then(|l| l.failed).map(counted),
            Source::FailedAfterTokens => audit
                .ledger
                .as_ref()
                .and_then(|l| l.failed_after_tokens)
                .map(counted),
            Source::OutputTokens => audit.client.as_ref().map(|c| counted(c.output_tokens)),
            Source::InputTokens => audit.client.as_ref().map(|c| counted(c.input_tokens)),
            Source::GenerationDelta => audit.engine.generation_tokens_delta.map(counted),
            Source::PromptDelta => audit.engine.prompt_tokens_delta.map(counted),
            Source::Preemptions => audit.occupancy.preemptions_delta.map(counted),
            Source::MaxRunning => audit.occupancy.max_running,
            Source::MaxWaiting => audit.occupancy.max_waiting,
            Source::ClientPeak => audit
                .concurrency
                .as_ref()
                .and_then(|c| c.exact_client_peak)
                .map(counted),
        };
    // A non-finite number is not a reading (and JSON cannot hold it): absent, never invented.
    value.filter(|v| v.is_finite())
}

fn metric_change(d: &Definition, b: &Audit, t: &Audit) -> MetricChange {
    let (baseline, treatment) = (read(b, d), read(t, d));
    let (change, relative_change, note) = match (baseline, treatment) {
        (None, None) => (None, None, Some("unread on both sides".to_owned())),
        (None, Some(_)) => (None, None, Some("unread in the baseline".to_owned())),
        (Some(_), None) => (None, None, Some("unread in the treatment".to_owned())),
        (Some(b), Some(t)) => {
            let change = Some(t - b).filter(|c| c.is_finite());
            if b == 0.0 {
                (
                    change,
                    None,
                    Some("the baseline is 0: no relative change".to_owned()),
                )
            } else {
                let relative = change.map(|c| c / b).filter(|r| r.is_finite());
                let note = relative
                    .is_none()
                    .then(|| "the change overflows".to_owned());
                (change, relative, note)
            }
        }
    };
    MetricChange {
        metric: d.name.to_owned(),
        unit: d.unit.to_owned(),
        better: d.better,
        baseline,
        treatment,
        change,
        relative_change,
        note,
    }
}

fn summary(side: &Side<'_>) -> SideSummary {
    let q = side.audit.qualification();
    SideSummary {
        source: side.source.to_owned(),
        file_sha256: side.file_sha256.to_owned(),
        protocol_key: side.protocol.key.clone(),
        qualified: q.is_qualified(),
        refusals: q.refusals().to_vec(),
        captured: side.audit.captured,
        digests_ok: side.audit.digests_ok && side.audit.digests.iter().all(|d| d.ok),
        failing_blocks: side
            .audit
            .digests
            .iter()
            .filter(|d| !d.ok)
            .map(|d| d.block.clone())
            .collect(),
        simulator: side.subject.simulator || side.audit.simulator,
        knobs: side.subject.knobs.clone(),
    }
}

fn axis_text(a: &Axis) -> String {
    match a {
        Axis::Known { value, .. } => format!("{value:?}"),
        Axis::Unknown { reason } => format!("unknown ({reason})"),
    }
}

fn subject_differences(b: &Subject, t: &Subject) -> Vec<Difference> {
    let axes = [
        ("model", &b.model, &t.model),
        ("model_revision", &b.model_revision, &t.model_revision),
        ("gpu_sku", &b.gpu_sku, &t.gpu_sku),
        ("engine", &b.engine, &t.engine),
        ("engine_version", &b.engine_version, &t.engine_version),
    ];
    let mut out: Vec<Difference> = axes
        .into_iter()
        .filter(|(_, x, y)| match (x, y) {
            (Axis::Known { value: v, .. }, Axis::Known { value: w, .. }) => v != w,
            // An unknown axis is never shown to be the same subject.
            _ => true,
        })
        .map(|(field, x, y)| Difference {
            field: field.to_owned(),
            baseline: axis_text(x),
            treatment: axis_text(y),
        })
        .collect();
    if b.simulator != t.simulator {
        out.push(Difference {
            field: "simulator".to_owned(),
            baseline: b.simulator.to_string(),
            treatment: t.simulator.to_string(),
        });
    }
    out
}

fn knobs(b: &Subject, t: &Subject) -> (Vec<KnobChange>, BTreeMap<String, String>) {
    let names: BTreeSet<&String> = b.knobs.keys().chain(t.knobs.keys()).collect();
    let mut changed = Vec::new();
    let mut held = BTreeMap::new();
    for name in names {
        let (x, y) = (b.knobs.get(name), t.knobs.get(name));
        match (x, y) {
            (Some(x), Some(y)) if x == y => {
                held.insert(name.clone(), x.clone());
            }
            _ => changed.push(KnobChange {
                knob: name.clone(),
                baseline: x.cloned(),
                treatment: y.cloned(),
            }),
        }
    }
    (changed, held)
}

fn listed(items: impl IntoIterator<Item = String>) -> String {
    items.into_iter().collect::<Vec<_>>().join("; ")
}

/// Compares `baseline` with `treatment`. Never fails and never panics: whatever cannot be
/// compared is a named [`Reason`], whatever cannot be read is `None`.
pub fn compare(baseline: &Side<'_>, treatment: &Side<'_>) -> Comparison {
    let (b, t) = (summary(baseline), summary(treatment));
    let mut reasons = Vec::new();

    // Protocol: the experiment's rule, field by field.
    let mut protocol_differences: Vec<Difference> = baseline
        .protocol
        .differences(treatment.protocol)
        .into_iter()
        .map(|d| Difference {
            field: d.field,
            baseline: d.first,
            treatment: d.found,
        })
        .collect();
    if protocol_differences.is_empty() && baseline.protocol.key != treatment.protocol.key {
        protocol_differences.push(Difference {
            field: "key".to_owned(),
            baseline: baseline.protocol.key.clone(),
            treatment: treatment.protocol.key.clone(),
        });
    }
    let same_protocol = protocol_differences.is_empty();
    if !same_protocol {
        let names: Vec<&str> = protocol_differences
            .iter()
            .map(|d| d.field.as_str())
            .collect();
        reasons.push(Reason {
            rule: Rule::NotOneProtocol,
            arm: None,
            message: format!(
                "the receipts ran different work (protocol key {} vs {}); {} field(s) differ ({}): {}",
                baseline.protocol.key,
                treatment.protocol.key,
                protocol_differences.len(),
                names.join(", "),
                listed(protocol_differences.iter().map(ToString::to_string))
            ),
        });
    }

    // Subject: every axis known and equal; knobs are the change under test.
    let subject_differences = subject_differences(baseline.subject, treatment.subject);
    let same_subject = subject_differences.is_empty();
    if !same_subject {
        reasons.push(Reason {
            rule: Rule::NotOneSubject,
            arm: None,
            message: format!(
                "the receipts did not measure one subject apart from knobs: {}",
                listed(subject_differences.iter().map(ToString::to_string))
            ),
        });
    }
    let (knobs_changed, knobs_held) = knobs(baseline.subject, treatment.subject);

    // Each side: evidence, then qualification.
    for (arm, s) in [(Arm::Baseline, &b), (Arm::Treatment, &t)] {
        if !s.digests_ok {
            reasons.push(Reason {
                rule: Rule::DigestFailure,
                arm: Some(arm),
                message: format!(
                    "the {arm} receipt {}'s evidence fails verification{}",
                    s.source,
                    if s.failing_blocks.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ": block(s) {}",
                            s.failing_blocks
                                .iter()
                                .map(|b| format!("{b:?}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                ),
            });
        }
        if !s.qualified {
            reasons.push(Reason {
                rule: Rule::Unqualified,
                arm: Some(arm),
                message: format!(
                    "the {arm} receipt {} is unqualified ({} refusal(s)): {}",
                    s.source,
                    s.refusals.len(),
                    listed(s.refusals.iter().cloned())
                ),
            });
        }
    }
    if !b.file_sha256.is_empty() && b.file_sha256 == t.file_sha256 {
        reasons.push(Reason {
            rule: Rule::SameFile,
            arm: None,
            message: format!(
                "both sides are the same file (sha256 {}): one observation, not two",
                b.file_sha256
            ),
        });
    }

    let metrics = DEFINITIONS
        .iter()
        .map(|d| metric_change(d, baseline.audit, treatment.audit))
        .collect();

    let mut notes: Vec<String> = knobs_changed
        .iter()
        .map(|k| format!("change under test: knob {k}"))
        .collect();
    if knobs_changed.is_empty() {
        notes.push(if same_protocol && same_subject {
            "no knob differs between the receipts: an A/A pair, whose changes are run-to-run variation"
                .to_owned()
        } else {
            "no knob differs between the receipts".to_owned()
        });
    }
    if !knobs_held.is_empty() {
        notes.push(format!(
            "knobs held equal: {}",
            knobs_held
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if b.simulator || t.simulator {
        notes.push(
            "measured at loadproof sim, a simulator: the numbers describe the simulator, not a serving engine"
                .to_owned(),
        );
    }

    Comparison {
        schema: COMPARE_SCHEMA.to_owned(),
        comparable: reasons.is_empty(),
        reasons,
        baseline: b,
        treatment: t,
        same_protocol,
        protocol_differences,
        same_subject,
        subject_differences,
        knobs_changed,
        knobs_held,
        metrics,
        repeats_per_arm: 1,
        min_repeats: MIN_REPEATS as u32,
        observation_only: true,
        caveat: CAVEAT.to_owned(),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::{metric_label, metric_names, playbook_metric};

    #[test]
    fn every_metric_a_comparison_reports_has_a_readers_name() {
        let mut names = std::collections::BTreeSet::new();
        for key in metric_names() {
            let Some((name, unit)) = metric_label(key) else {
                panic!("{key} has no label")
            };
            // A raw key would show underscores; a name is words a reader knows.
            assert!(
                !name.contains('_') && !name.is_empty(),
                "{key} reads {name:?}"
            );
            assert!(!unit.is_empty(), "{key} has no unit");
            assert!(names.insert(name), "two metrics read {name:?}");
        }
        assert_eq!(names.len(), metric_names().count());
    }

    #[test]
    fn a_key_compare_does_not_emit_has_no_label() {
        assert_eq!(metric_label("ttft_p99_ms"), Some(("TTFT p99", "ms")));
        assert_eq!(
            metric_label("throughput_tok_s"),
            Some(("Output throughput", "tok/s"))
        );
        assert_eq!(metric_label("ttft_p99"), None);
        assert_eq!(metric_label(""), None);
    }

    #[test]
    fn the_playbooks_metrics_are_labelled_too() {
        for m in crate::claim::Metric::ALL {
            assert!(metric_label(m.name()).is_some(), "{}", m.name());
            assert_eq!(playbook_metric(m.name()), Some(m));
        }
    }
}
