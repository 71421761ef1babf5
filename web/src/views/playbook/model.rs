//! What the playbook view computes, apart from its markup: the query the typed identity and
//! the live traffic make and core's verdicts on it, the keys the rows table filters on, and
//! each row's per-axis distances for the chart.
//!
//! Every number and verdict is core's: the live traffic's regime is `Regime::of` (a trace) or
//! `RegimeAxes::of_receipt` (a receipt's fired schedule), its prefixes and traffic come from
//! `Prefixes` and the receipt's embedded plan, the verdicts are `match_rows` under
//! `MatchPolicy::default()` — what `loadproof playbook match --trace`/`--receipt` computes.
//! This module only turns the form's text into core's types (naming the field that is wrong)
//! and re-arranges core's answers for the tables and the chart. No signal lives here, so all
//! of it is tested natively.

use std::collections::BTreeMap;

use loadproof_core::Regime;
use loadproof_core::playbook::{
    Concurrency, ConcurrencyError, Distance, Identity, MatchPolicy, MatchReport, Playbook,
    Prefixes, Query, Reason, RegimeAxes, RegimeAxis, Row, SourceKind, Traffic, distance,
    knobs_line, match_rows, traffic_of_notes,
};
use loadproof_core::receipt::{Receipt, block, key_value};
use loadproof_core::trace::Trace;

use crate::widgets::number::{count, js, window_from_text};

/// A playbook as read, and where from.
#[derive(Debug)]
pub struct Book {
    /// The file it was read from (`playbook.json (this site)`, or the chosen file's name).
    pub source: String,
    /// Core's playbook.
    pub playbook: Playbook,
}

/// The live traffic as read, and its name: a trace, or a receipt (the schedule it fired).
#[derive(Debug)]
pub struct Live {
    /// The file's name.
    pub source: String,
    /// What it holds.
    pub data: LiveData,
}

/// What a live file holds.
#[derive(Debug)]
pub enum LiveData {
    /// A trace, as the trace view reads it.
    Trace(Box<Trace>),
    /// A loadproof receipt.
    Receipt(Box<Receipt>),
}

impl Live {
    /// The traffic the live file states for itself: a receipt's embedded plan says where its
    /// traffic came from (as `--receipt` reads it); a trace says nothing.
    pub fn stated_traffic(&self) -> Option<Traffic> {
        match &self.data {
            LiveData::Receipt(r) => r
                .embedded_plan()
                .and_then(|plan| traffic_of_notes(&plan.notes).ok()),
            LiveData::Trace(_) => None,
        }
    }
}

/// Bytes read from the head of a live file to tell a receipt from a trace.
pub const SNIFF_BYTES: f64 = 65_536.0;

/// Whether `head` (the start of a file) is a loadproof receipt: a JSON object whose `schema` is
/// `loadproof.receipt/…`. A Mooncake trace is JSON lines of objects too, but has no `schema`.
pub fn looks_like_receipt(head: &[u8]) -> bool {
    if loadproof_core::receipt::stream::is_stream(head) {
        // A zstd file is a receipt only when it decodes to a record stream; else a zstd trace.
        return !head.starts_with(&loadproof_core::trace::ZSTD_MAGIC)
            || crate::file_kind::zstd_holds_stream(head);
    }
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if !text.starts_with('{') {
        return false;
    }
    let mut rest = text;
    while let Some((_, after)) = rest.split_once("\"schema\"") {
        let value = after.trim_start();
        if let Some(value) = value.strip_prefix(':')
            && value.trim_start().starts_with("\"loadproof.receipt/")
        {
            return true;
        }
        rest = after;
    }
    false
}

/// The query's fields as typed (the form's text, before core reads it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryText {
    /// Model.
    pub model: String,
    /// Model revision.
    pub revision: String,
    /// GPU SKU.
    pub gpu: String,
    /// Engine.
    pub engine: String,
    /// Engine version.
    pub version: String,
    /// A number of requests, or `uncapped`.
    pub concurrency: String,
    /// `KEY=VALUE`, one per line.
    pub knobs: String,
    /// `recorded` or `synthetic`.
    pub traffic: String,
    /// Burstiness window, seconds.
    pub window: String,
}

impl QueryText {
    /// The form as it first reads: no identity, uncapped, recorded traffic, a 1 s window.
    pub fn blank() -> QueryText {
        QueryText {
            model: String::new(),
            revision: String::new(),
            gpu: String::new(),
            engine: String::new(),
            version: String::new(),
            concurrency: "uncapped".to_owned(),
            knobs: String::new(),
            traffic: "recorded".to_owned(),
            window: "1".to_owned(),
        }
    }

    /// `row`'s identity, traffic and window as the form writes them (a convenience: the user
    /// edits from there).
    pub fn of_row(row: &Row) -> QueryText {
        let id = row.identity();
        QueryText {
            model: id.model.clone(),
            revision: id.model_revision.clone(),
            gpu: id.gpu_sku.clone(),
            engine: id.engine.clone(),
            version: id.engine_version.clone(),
            concurrency: match id.concurrency {
                Concurrency::Uncapped => "uncapped".to_owned(),
                Concurrency::Max(n) => n.to_string(),
            },
            knobs: id
                .knobs
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\n"),
            traffic: id.source_kind.traffic.to_string(),
            window: js(row.regime().window_s),
        }
    }
}

/// Core's match report and how the live traffic was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    /// Core's report, as `playbook match --json` prints it.
    pub report: MatchReport,
    /// The live file and what its regime is (a trace's, or a receipt's fired schedule).
    pub described: String,
}

/// Core's verdicts for the live traffic under the typed identity, or what is wrong with the
/// input (named by field).
pub fn run_match(book: &Playbook, live: &Live, text: &QueryText) -> Result<Matched, String> {
    let window = window_from_text(&text.window).ok_or_else(|| {
        format!(
            "Burstiness window: {:?} is not a positive number of seconds",
            text.window
        )
    })?;
    let source = &live.source;
    let (axes, prefixes, described) = match &live.data {
        LiveData::Trace(trace) => {
            let regime = Regime::of(trace, window).map_err(|e| format!("{source}: {e}"))?;
            let axes = RegimeAxes::of(&regime)
                .map_err(|e| format!("{source}: the live trace's regime cannot be matched: {e}"))?;
            (
                axes,
                Prefixes::of_trace(trace),
                format!("{source} ({} requests)", count(regime.requests as usize)),
            )
        }
        LiveData::Receipt(receipt) => {
            let (axes, requests) = RegimeAxes::of_receipt(receipt, window)
                .map_err(|e| format!("{source}: the receipt's regime cannot be matched: {e}"))?;
            let prefixes = receipt
                .embedded_plan()
                .map(|p| Prefixes::of_plan(&p))
                .ok_or_else(|| {
                    format!(
                        "{source}: the receipt embeds no readable plan (evidence block {:?}), so whether its prefixes were its own is unknown",
                        block::PLAN
                    )
                })?;
            (
                axes,
                prefixes,
                format!(
                    "{source} (a receipt: the schedule it fired, {} requests)",
                    count(requests)
                ),
            )
        }
    };
    let concurrency = text
        .concurrency
        .trim()
        .parse::<Concurrency>()
        .map_err(|_| ConcurrencyError {
            text: text.concurrency.clone(),
        })
        .map_err(|e| format!("Concurrency: {e}"))?;
    let knobs = knobs_of(&text.knobs)?;
    let traffic = match text.traffic.as_str() {
        "synthetic" => Traffic::Synthetic,
        _ => Traffic::Recorded,
    };
    let query = Query {
        identity: Identity {
            model: text.model.clone(),
            model_revision: text.revision.clone(),
            gpu_sku: text.gpu.clone(),
            engine: text.engine.clone(),
            engine_version: text.version.clone(),
            source_kind: SourceKind { traffic, prefixes },
            concurrency,
            knobs,
        },
        regime: axes,
    };
    let report = match_rows(book.rows(), &query, &MatchPolicy::default())
        .map_err(|e| format!("the query's regime: {e}"))?;
    Ok(Matched { report, described })
}

/// The knobs box: `KEY=VALUE` per line, blank lines skipped; a bad line is named by number.
fn knobs_of(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut knobs = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (k, v) = key_value(line)
            .ok_or_else(|| format!("Knobs, line {}: {line:?} is not KEY=VALUE", i + 1))?;
        knobs.insert(k.to_owned(), v.to_owned());
    }
    Ok(knobs)
}

/// What the filters compare of one row.
#[derive(Debug, Clone)]
pub struct RowKeys {
    /// `measured` or `illustrative`.
    pub evidence: String,
    /// The model.
    pub model: String,
    /// The GPU SKU.
    pub gpu: String,
    /// Engine and version, as the engine filter lists them.
    pub engine: String,
    /// The knobs' names.
    pub knobs: Vec<String>,
    /// Everything the free-text filter searches, lowercase.
    haystack: String,
}

impl RowKeys {
    /// The keys of `row`.
    pub fn of(row: &Row) -> RowKeys {
        let id = row.identity();
        let p = row.provenance();
        let engine = format!("{} {}", id.engine, id.engine_version);
        let haystack = [
            row.id().to_owned(),
            row.evidence().to_string(),
            format!("{} {}", id.model, id.model_revision),
            id.gpu_sku.clone(),
            engine.clone(),
            id.source_kind.to_string(),
            format!("concurrency {}", id.concurrency),
            knobs_line(&id.knobs),
            row.notes().join(" "),
            row.invalidation().map_or_else(
                || "valid".to_owned(),
                |i| format!("invalidated {}", i.reason),
            ),
            p.trace_sha256.clone(),
            p.baseline_receipts.join(" "),
            p.treatment_receipts.join(" "),
        ]
        .join(" ")
        .to_lowercase();
        RowKeys {
            evidence: row.evidence().to_string(),
            model: id.model.clone(),
            gpu: id.gpu_sku.clone(),
            engine,
            knobs: id.knobs.keys().cloned().collect(),
            haystack,
        }
    }
}

/// The row filters as chosen; an empty field admits any row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowFilter {
    /// `measured`, `illustrative`, or any.
    pub evidence: String,
    /// One model, or any.
    pub model: String,
    /// One GPU, or any.
    pub gpu: String,
    /// One engine and version, or any.
    pub engine: String,
    /// One knob name the row must set, or any.
    pub knob: String,
    /// Words that must all appear (any case) in the row's id, identity, knobs, notes or
    /// digests.
    pub text: String,
}

impl RowFilter {
    /// Whether the row with `keys` passes every filter.
    pub fn admits(&self, keys: &RowKeys) -> bool {
        let is = |chosen: &str, value: &str| chosen.is_empty() || chosen == value;
        is(&self.evidence, &keys.evidence)
            && is(&self.model, &keys.model)
            && is(&self.gpu, &keys.gpu)
            && is(&self.engine, &keys.engine)
            && (self.knob.is_empty() || keys.knobs.contains(&self.knob))
            && self
                .text
                .split_whitespace()
                .all(|word| keys.haystack.contains(&word.to_lowercase()))
    }
}

/// One row's per-axis distances to the query: the matcher's own (rows it judged on distance),
/// or core's `distance` for reference (rows refused before distance: illustrative, invalidated,
/// gated).
#[derive(Debug, Clone, PartialEq)]
pub struct RowDistance {
    /// The row's place in the playbook.
    pub index: usize,
    /// The row's id.
    pub id: String,
    /// Core's distances.
    pub distance: Distance,
    /// True when they are the matcher's own (the numbers in `window.loadproofMatch`).
    pub from_matcher: bool,
}

/// Every row with a distance to the query, by playbook index.
pub fn row_distances(report: &MatchReport, rows: &[Row]) -> BTreeMap<usize, RowDistance> {
    let mut out = BTreeMap::new();
    for s in &report.selected {
        out.insert(
            s.row.index,
            RowDistance {
                index: s.row.index,
                id: s.row.id.clone(),
                distance: s.distance.clone(),
                from_matcher: true,
            },
        );
    }
    for r in &report.rejected {
        let judged = match &r.reason {
            Reason::OutsideTolerance { distances, .. } | Reason::Uncalibrated { distances, .. } => {
                Some((distances.clone(), true))
            }
            _ => rows
                .get(r.row.index)
                .and_then(|row| {
                    distance(
                        row.regime(),
                        &report.query.regime,
                        report.policy.rate_is_axis,
                    )
                    .ok()
                })
                .map(|d| (d, false)),
        };
        if let Some((distance, from_matcher)) = judged {
            out.insert(
                r.row.index,
                RowDistance {
                    index: r.row.index,
                    id: r.row.id.clone(),
                    distance,
                    from_matcher,
                },
            );
        }
    }
    out
}

/// The row the chart shows when none is chosen: the nearest applicable row, else the first
/// row the matcher measured, else the first row with any distance.
pub fn default_row(
    report: &MatchReport,
    distances: &BTreeMap<usize, RowDistance>,
) -> Option<usize> {
    report
        .selected
        .first()
        .map(|s| s.row.index)
        .or_else(|| distances.values().find(|d| d.from_matcher).map(|d| d.index))
        .or_else(|| distances.keys().next().copied())
}

/// One axis of the distance chart and its table.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisLine {
    /// The axis.
    pub axis: RegimeAxis,
    /// The row's value.
    pub row: f64,
    /// The query's value.
    pub query: f64,
    /// `|log2|` distance between them.
    pub distance: f64,
    /// The policy's calibrated tolerance and its citation, when it has one.
    pub tolerance: Option<(f64, String)>,
    /// True for the axis that sets the row's L∞ distance.
    pub limiting: bool,
}

impl AxisLine {
    /// One line per axis of `row`'s distance, with `policy`'s tolerances.
    pub fn of(row: &RowDistance, policy: &MatchPolicy) -> Vec<AxisLine> {
        row.distance
            .axes
            .iter()
            .map(|a| AxisLine {
                axis: a.axis,
                row: a.row,
                query: a.query,
                distance: a.distance,
                tolerance: policy
                    .tolerances
                    .get(a.axis)
                    .map(|t| (t.max_distance(), t.calibration().to_owned())),
                limiting: row.distance.limiting == Some(a.axis),
            })
            .collect()
    }

    /// Where the axis stands against its tolerance.
    pub fn status(&self) -> &'static str {
        match &self.tolerance {
            Some((t, _)) if self.distance > *t => "over tolerance",
            Some(_) => "within tolerance",
            None if self.distance == 0.0 => "equal",
            None => "uncalibrated",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{QueryText, RowFilter, RowKeys, knobs_of, looks_like_receipt};

    #[test]
    fn a_receipt_is_told_apart_from_a_trace_by_its_schema() {
        assert!(looks_like_receipt(
            b"\xef\xbb\xbf {\"provenance\": {}, \"schema\" : \"loadproof.receipt/v1\"}"
        ));
        assert!(!looks_like_receipt(
            b"{\"timestamp\": 0, \"input_length\": 3}\n"
        ));
        assert!(!looks_like_receipt(b"Timestamp,Model\n"));
        assert!(!looks_like_receipt(
            b"{\"schema\": \"loadproof.playbook/v1\"}"
        ));
    }

    #[test]
    fn knobs_are_one_per_line_and_a_bad_line_is_named() {
        let knobs = knobs_of("a=1\n\n  b = 2 \n").unwrap();
        assert_eq!(knobs.len(), 2);
        assert_eq!(
            knobs_of("a=1\nnope").unwrap_err(),
            "Knobs, line 2: \"nope\" is not KEY=VALUE"
        );
        assert_eq!(QueryText::blank().concurrency, "uncapped");
    }

    #[test]
    fn an_empty_filter_admits_every_row_and_words_match_in_any_case() {
        let keys = RowKeys {
            evidence: "measured".to_owned(),
            model: "m".to_owned(),
            gpu: "g".to_owned(),
            engine: "vllm 0.1".to_owned(),
            knobs: vec!["max_num_seqs".to_owned()],
            haystack: "row-1 measured m g vllm 0.1 max_num_seqs=2".to_owned(),
        };
        assert!(RowFilter::default().admits(&keys));
        let f = RowFilter {
            knob: "max_num_seqs".to_owned(),
            text: "ROW-1 Vllm".to_owned(),
            ..RowFilter::default()
        };
        assert!(f.admits(&keys));
        let f = RowFilter {
            evidence: "illustrative".to_owned(),
            ..RowFilter::default()
        };
        assert!(!f.admits(&keys));
    }
}
