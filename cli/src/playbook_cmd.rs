//! `loadproof playbook row|match|examples|publish`: a row built from audited receipts, the
//! matcher asked about live traffic, the illustrative examples regenerated from the real
//! traces, and a playbook published as a static site (the web app plus the file).
//!
//! Every decision is core's ([`Experiment::of`], [`Row::measured`], [`match_rows`]); this file
//! reads files, resolves flags, prints and maps outcomes to exit codes: `row` 0 appended, 1
//! refused (the reason on stderr, nothing written), 2 unreadable input or bad usage; `match` 0
//! at least one row applies, 1 none does (every reason printed), 2 bad input; `examples` 0
//! written, 2 the real traces are missing or are not the pinned bytes; `publish` 0 written, 1
//! the playbook is refused, 2 unreadable input, no built app or a SITE_DIR it may not touch.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use loadproof_core::audit::{Audit, STANDINGS, audit};
use loadproof_core::claim::{Arm, Metric, Repeat};
use loadproof_core::plan::PLAN_SCHEMA;
use loadproof_core::playbook::{
    ArmSummary, AxesError, Concurrency, Experiment, ExperimentError, Identity, Invalidation,
    MatchPolicy, MatchReport, MeasuredDelta, Playbook, Prefixes, Provenance, Query, RegimeAxes,
    RegimeAxis, Row, RowSpec, SourceKind, Traffic, knobs_line, traffic_of_notes,
};
use loadproof_core::receipt::{Receipt, block, sha256_hex};
use loadproof_core::report::INSPECT_SCHEMA;
use loadproof_core::site::{
    SITE_MANIFEST, SITE_PLAYBOOK, SITE_RECEIPT_DIR, SITE_RECEIPTS, SiteReceipt, SiteReceipts,
};
use loadproof_core::{IngestOptions, Limits, Regime, Trace, Window};

use crate::args::{
    PlaybookExamplesArgs, PlaybookMatchArgs, PlaybookPublishArgs, PlaybookRowArgs, PrefixesArg,
    TrafficArg,
};
use crate::input::{
    BadInput, caller_filter, concurrency_of, format_of, ingest_file, pairs, synthetic_note,
    window_of,
};
use crate::output::write_atomically;
use crate::receipt_cmd::unix_ns_now;

// ---------------------------------------------------------------------------------------------
// playbook row

/// One receipt file as read: its path, the sha256 of its bytes (its digest in a row's
/// provenance), the receipt and its audit.
struct Loaded {
    path: PathBuf,
    sha256: String,
    receipt: Receipt,
    audit: Audit,
}

fn load_arm(paths: &[PathBuf]) -> Result<Vec<Loaded>> {
    paths
        .iter()
        .map(|path| {
            let bytes =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            let receipt = Receipt::from_json(&bytes)
                .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
            let audit = audit(&receipt);
            Ok(Loaded {
                path: path.clone(),
                sha256: sha256_hex(&bytes),
                receipt,
                audit,
            })
        })
        .collect()
}

/// Reads a playbook file; `None` when there is none yet.
fn read_playbook(path: &Path, must_exist: bool) -> Result<Option<Playbook>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let book =
        Playbook::from_json(&bytes).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
    Ok(Some(book))
}

/// A refusal: the reason on stderr, exit 1, nothing written.
fn refused(command: &str, reason: impl Display) -> Result<ExitCode> {
    let mut err = std::io::stderr().lock();
    writeln!(err, "loadproof playbook {command}: REFUSED: {reason}")?;
    Ok(ExitCode::from(1))
}

/// Every standing that keeps `audit` from qualifying, in report order, with what settles it.
fn unqualified(audit: &Audit) -> Option<String> {
    if audit.qualified && audit.qualification().is_qualified() {
        return None;
    }
    let mut reasons: Vec<String> = STANDINGS
        .iter()
        .filter_map(|name| match audit.standings.get(*name) {
            Some(s) if s.positive => None,
            Some(s) => Some(format!(
                "standing {name} failed: {}{}",
                s.reason,
                s.settle
                    .as_deref()
                    .map_or(String::new(), |how| format!(" (settle: {how})"))
            )),
            None => Some(format!("standing {name} was not assessed")),
        })
        .collect();
    if reasons.is_empty() {
        reasons.clone_from(&audit.refusals);
    }
    Some(reasons.join("; "))
}

/// "the arms are not one experiment: " for a refusal that compares receipts with each other.
fn arms_prefix(e: &ExperimentError) -> &'static str {
    let about_the_arms = matches!(
        e,
        ExperimentError::ProtocolDiffers { .. }
            | ExperimentError::SubjectDiffers { .. }
            | ExperimentError::SimulatorDiffers { .. }
            | ExperimentError::KnobNotInTreatment { .. }
            | ExperimentError::KnobInBaseline { .. }
            | ExperimentError::BaselineKnobDiffers { .. }
            | ExperimentError::KnobDiffers { .. }
            | ExperimentError::TimedTraceDiffers { .. }
    );
    if about_the_arms {
        "the arms are not one experiment: "
    } else {
        ""
    }
}

/// What to do about a schedule too short for the window.
fn window_hint(e: &ExperimentError, window_s: f64) -> String {
    match e {
        ExperimentError::Axes(AxesError::Undefined {
            axis: RegimeAxis::Burstiness,
            ..
        }) => format!(
            " (at --window {window_s} s; a shorter --window gives the schedule windows to count)"
        ),
        _ => String::new(),
    }
}

/// `loadproof playbook row`.
pub fn row(args: &PlaybookRowArgs, out: &mut impl Write) -> Result<ExitCode> {
    let knobs = pairs("knob", &args.knobs)?;
    let window = window_of(args.window)?;
    if args.id.trim().is_empty() {
        return Err(BadInput("--id must not be empty".to_owned()).into());
    }
    let existing = read_playbook(&args.playbook, false)?;
    if let Some(book) = &existing
        && let Some(i) = book.rows().iter().position(|r| r.id() == args.id)
    {
        return Err(BadInput(format!(
            "{}: row {i} already has id {:?}; pick another --id (rows are never replaced: invalidate one instead)",
            args.playbook.display(),
            args.id
        ))
        .into());
    }
    let baseline = load_arm(&args.baseline)?;
    let treatment = load_arm(&args.treatment)?;
    let arm_of = |arm: Arm| match arm {
        Arm::Baseline => &baseline,
        Arm::Treatment => &treatment,
    };
    let base_receipts: Vec<&Receipt> = baseline.iter().map(|l| &l.receipt).collect();
    let treat_receipts: Vec<&Receipt> = treatment.iter().map(|l| &l.receipt).collect();

    let experiment = match Experiment::of(&base_receipts, &treat_receipts, &knobs, window) {
        Ok(e) => e,
        Err(e) => {
            let at = e
                .receipt()
                .and_then(|(arm, i)| arm_of(arm).get(i).map(|l| (arm, i, &l.path)))
                .map_or(String::new(), |(arm, i, path)| {
                    format!(" [{arm} receipt {i} is {}]", path.display())
                });
            return refused(
                "row",
                format!("{}{e}{}{at}", arms_prefix(&e), window_hint(&e, args.window)),
            );
        }
    };
    for arm in [Arm::Baseline, Arm::Treatment] {
        for (i, l) in arm_of(arm).iter().enumerate() {
            if let Some(why) = unqualified(&l.audit) {
                return refused(
                    "row",
                    format!(
                        "{arm} receipt {i} ({}) is not qualified: {why}",
                        l.path.display()
                    ),
                );
            }
        }
    }
    let mut repeats: BTreeMap<Arm, Vec<Repeat>> = BTreeMap::new();
    for arm in [Arm::Baseline, Arm::Treatment] {
        for (i, l) in arm_of(arm).iter().enumerate() {
            match Repeat::from_audit(&l.audit) {
                Ok(r) => repeats.entry(arm).or_default().push(r),
                Err(e) => {
                    return refused(
                        "row",
                        format!("{arm} receipt {i} ({}): {e}", l.path.display()),
                    );
                }
            }
        }
    }
    let delta = match MeasuredDelta::from_repeats(
        repeats.get(&Arm::Baseline).map_or(&[][..], Vec::as_slice),
        repeats.get(&Arm::Treatment).map_or(&[][..], Vec::as_slice),
    ) {
        Ok(d) => d,
        Err(e) => return refused("row", e),
    };
    let mut notes = args.notes.clone();
    notes.extend(experiment.notes().iter().cloned());
    let spec = RowSpec {
        id: args.id.clone(),
        identity: experiment.identity().clone(),
        regime: *experiment.regime(),
        delta,
        provenance: Provenance {
            trace_sha256: experiment.trace_sha256().to_owned(),
            baseline_receipts: baseline.iter().map(|l| l.sha256.clone()).collect(),
            treatment_receipts: treatment.iter().map(|l| l.sha256.clone()).collect(),
            verified_unix_ns: Some(unix_ns_now()),
        },
        notes,
    };
    let audits = |arm: &[Loaded]| arm.iter().map(|l| l.audit.clone()).collect::<Vec<_>>();
    let row = match Row::measured(spec, &audits(&baseline), &audits(&treatment)) {
        Ok(r) => r,
        Err(e) => return refused("row", e),
    };
    let mut rows = existing.map(|b| b.rows().to_vec()).unwrap_or_default();
    rows.push(row.clone());
    let book = Playbook::new(rows).map_err(|e| BadInput(e.to_string()))?;
    if let Some(parent) = args.playbook.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    write_atomically(&args.playbook, |w| {
        Ok(w.write_all(book.to_json().as_bytes())?)
    })?;
    writeln!(
        out,
        "row {:?} appended to {} ({} row(s))",
        row.id(),
        args.playbook.display(),
        book.rows().len()
    )?;
    render_row(&row, out)?;
    Ok(ExitCode::SUCCESS)
}

/// A number for reading: four significant digits or so, trailing zeros dropped.
fn num(v: f64) -> String {
    let decimals = if v.abs() >= 100.0 {
        1
    } else if v.abs() >= 1.0 {
        3
    } else {
        4
    };
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

fn identity_lines(id: &Identity) -> [String; 2] {
    [
        format!(
            "model {} @ {} · gpu {} · engine {} {}",
            id.model, id.model_revision, id.gpu_sku, id.engine, id.engine_version
        ),
        format!(
            "{} · concurrency {} · knobs {}",
            id.source_kind,
            id.concurrency,
            knobs_line(&id.knobs)
        ),
    ]
}

fn regime_line(r: &RegimeAxes) -> String {
    format!(
        "rate {} req/s · D {} @ {} s · input p50 {} p95 {} · output p50 {} p95 {}",
        num(r.rate_rps),
        num(r.burstiness),
        num(r.window_s),
        num(r.input_p50),
        num(r.input_p95),
        num(r.output_p50),
        num(r.output_p95)
    )
}

fn spread(arm: &ArmSummary, m: Metric) -> String {
    let s = arm.get(m);
    format!("{} [{}..{}]", num(s.median), num(s.min), num(s.max))
}

/// A row in full: identity, regime, provenance, every metric's medians and spreads, the change.
fn render_row(row: &Row, out: &mut impl Write) -> Result<()> {
    let [a, b] = identity_lines(row.identity());
    writeln!(out, "  identity  {a}")?;
    writeln!(out, "            {b}")?;
    writeln!(out, "  regime    {}", regime_line(row.regime()))?;
    let p = row.provenance();
    writeln!(out, "  trace     sha256 {}", p.trace_sha256)?;
    for (arm, shas) in [
        ("baseline", &p.baseline_receipts),
        ("treatment", &p.treatment_receipts),
    ] {
        for sha in shas {
            writeln!(out, "  receipt   {arm:<9} sha256 {sha}")?;
        }
    }
    let d = row.delta();
    writeln!(
        out,
        "  delta     {} ({}); medians over {} repeats per arm, [min..max] across repeats",
        row.evidence(),
        if row.evidence() == loadproof_core::playbook::Evidence::Illustrative {
            "invented numbers"
        } else {
            "from the receipts"
        },
        d.repeats()
    )?;
    writeln!(
        out,
        "            {:<18} {:>28} {:>28} {:>9}",
        "metric", "baseline", "treatment", "change"
    )?;
    for m in Metric::ALL {
        writeln!(
            out,
            "            {:<18} {:>28} {:>28} {:>+8.1}%",
            m.name(),
            spread(d.baseline(), m),
            spread(d.treatment(), m),
            d.change().get(m) * 100.0
        )?;
    }
    for note in row.notes() {
        writeln!(out, "  note      {note}")?;
    }
    if let Some(inv) = row.invalidation() {
        writeln!(out, "  INVALIDATED: {}", inv.reason)?;
    }
    if row.delta_is_floor() {
        writeln!(
            out,
            "  delta_is_floor: true — a prefix-dependent knob measured on synthesized prefixes: the delta is a lower bound"
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// playbook match

/// The live traffic as the query sees it: its regime, and what its source says about its
/// prefixes and its origin (`None`: the source does not say).
struct Live {
    regime: RegimeAxes,
    prefixes: Option<Prefixes>,
    traffic: std::result::Result<Traffic, String>,
    described: String,
}

fn live_from_trace(args: &PlaybookMatchArgs, path: &Path) -> Result<Live> {
    let window = window_of(args.window.unwrap_or(1.0))?;
    let trace: Trace = ingest_file(
        path,
        IngestOptions {
            format: args.format.map(format_of),
            filter: caller_filter(None, None, None, None, None)?,
            limits: Limits::STANDARD,
        },
    )?;
    let regime =
        Regime::of(&trace, window).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
    let axes = RegimeAxes::of(&regime).map_err(|e| {
        BadInput(format!(
            "{}: the live trace's regime cannot be matched: {e}",
            path.display()
        ))
    })?;
    let traffic = match synthetic_note(path, &trace.meta().source_sha256) {
        Some(note) => traffic_of_notes(&[note]).map_err(|e| e.to_string()),
        None => Ok(Traffic::Recorded),
    };
    Ok(Live {
        regime: axes,
        prefixes: Some(Prefixes::of_trace(&trace)),
        traffic,
        described: format!("{} ({} requests)", path.display(), regime.requests),
    })
}

fn live_from_json(args: &PlaybookMatchArgs, path: &Path) -> Result<Live> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let bad = |why: String| BadInput(format!("{}: {why}", path.display()));
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
    let schema = value.get("schema").and_then(|s| s.as_str());
    let inner = value.get("regime").unwrap_or(&value);
    if inner.is_null() {
        return Err(bad(format!(
            "the regime is null ({})",
            value
                .get("regime_error")
                .and_then(|e| e.as_str())
                .unwrap_or("no regime was computed")
        ))
        .into());
    }
    let regime = match serde_json::from_value::<Regime>(inner.clone()) {
        Ok(r) => RegimeAxes::of(&r).map_err(|e| bad(format!("the regime cannot be matched: {e}")))?,
        Err(as_regime) => serde_json::from_value::<RegimeAxes>(inner.clone()).map_err(|e| {
            bad(format!(
                "neither a regime ({as_regime}) nor regime axes ({e}); pass a Regime, `trace inspect --json` output or a plan.json"
            ))
        })?,
    };
    if let Some(w) = args.window
        && w != regime.window_s
    {
        return Err(bad(format!(
            "--window {w} differs from the file's burstiness window {} s; D at one window says nothing about D at another",
            regime.window_s
        ))
        .into());
    }
    let prefixes = match schema {
        Some(PLAN_SCHEMA) => value
            .pointer("/timed_trace/prefix_synthesized")
            .and_then(serde_json::Value::as_bool)
            .map(|synth| {
                if synth {
                    Prefixes::Synthesized
                } else {
                    Prefixes::Recorded
                }
            }),
        Some(INSPECT_SCHEMA) => Some(match value.get("rows_without_prefix") {
            Some(serde_json::Value::Number(n)) if n.as_u64() == Some(0) => Prefixes::Recorded,
            _ => Prefixes::Synthesized,
        }),
        _ => None,
    };
    let notes: Vec<String> = value
        .get("notes")
        .and_then(|n| n.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Ok(Live {
        regime,
        prefixes,
        traffic: traffic_of_notes(&notes).map_err(|e| e.to_string()),
        described: format!(
            "{} ({})",
            path.display(),
            match schema {
                Some(PLAN_SCHEMA) => "a plan: the trace as fired",
                Some(INSPECT_SCHEMA) => "trace inspect output",
                _ => "a regime",
            }
        ),
    })
}

/// A receipt's traffic: the regime of the schedule it fired (core's
/// [`RegimeAxes::of_receipt`], the computation a row's regime comes from), and the prefixes and
/// traffic of the plan it embeds (none embedded: the caller must say).
fn live_from_receipt(args: &PlaybookMatchArgs, path: &Path) -> Result<Live> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let bad = |why: String| BadInput(format!("{}: {why}", path.display()));
    let receipt = Receipt::from_json(&bytes).map_err(|e| bad(e.to_string()))?;
    let window = window_of(args.window.unwrap_or(1.0))?;
    let (regime, requests) = RegimeAxes::of_receipt(&receipt, window)
        .map_err(|e| bad(format!("the receipt's regime cannot be matched: {e}")))?;
    let plan = receipt.embedded_plan();
    let traffic = match &plan {
        Some(plan) => traffic_of_notes(&plan.notes).map_err(|e| e.to_string()),
        None => Err(format!(
            "{} embeds no readable plan (evidence block {:?}), which says whether the traffic was recorded or synthetic",
            path.display(),
            block::PLAN
        )),
    };
    Ok(Live {
        regime,
        prefixes: plan.as_ref().map(Prefixes::of_plan),
        traffic,
        described: format!(
            "{} (a receipt: the schedule it fired, {requests} requests)",
            path.display()
        ),
    })
}

/// `loadproof playbook match`.
pub fn matches(args: &PlaybookMatchArgs, out: &mut impl Write) -> Result<ExitCode> {
    let book = read_playbook(&args.playbook, true)?
        .ok_or_else(|| BadInput(format!("{}: no playbook", args.playbook.display())))?;
    let policy = match &args.policy {
        Some(p) => {
            let bytes = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
            serde_json::from_slice::<MatchPolicy>(&bytes)
                .map_err(|e| BadInput(format!("{}: not a match policy: {e}", p.display())))?
        }
        None => MatchPolicy::default(),
    };
    let live = match (&args.trace, &args.regime, &args.receipt) {
        (Some(t), None, None) => live_from_trace(args, t)?,
        (None, Some(r), None) => live_from_json(args, r)?,
        (None, None, Some(r)) => live_from_receipt(args, r)?,
        _ => {
            return Err(BadInput(
                "pass one of --trace FILE, --regime JSON_FILE or --receipt RECEIPT".to_owned(),
            )
            .into());
        }
    };
    let prefixes = match (args.prefixes, live.prefixes) {
        (Some(PrefixesArg::Recorded), _) => Prefixes::Recorded,
        (Some(PrefixesArg::Synthesized), _) => Prefixes::Synthesized,
        (None, Some(p)) => p,
        (None, None) => {
            return Err(BadInput(format!(
                "{} does not say whether the traffic's prefixes are its own; pass --prefixes recorded|synthesized",
                live.described
            ))
            .into());
        }
    };
    let traffic = match (args.traffic, &live.traffic) {
        (Some(TrafficArg::Recorded), _) => Traffic::Recorded,
        (Some(TrafficArg::Synthetic), _) => Traffic::Synthetic,
        (None, Ok(t)) => *t,
        (None, Err(why)) => {
            return Err(BadInput(format!("{why}; pass --traffic recorded|synthetic")).into());
        }
    };
    let query = Query {
        identity: Identity {
            model: args.model.clone(),
            model_revision: args.model_revision.clone(),
            gpu_sku: args.gpu_sku.clone(),
            engine: args.engine.clone(),
            engine_version: args.engine_version.clone(),
            source_kind: SourceKind { traffic, prefixes },
            concurrency: concurrency_of(&args.concurrency)?,
            knobs: pairs("knob", &args.knobs)?,
        },
        regime: live.regime,
    };
    let report = book
        .match_query(&query, &policy)
        .map_err(|e| BadInput(format!("the query's regime: {e}")))?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report).context("serializing the report")?;
        writeln!(out)?;
    } else {
        render_match(&book, &report, &live.described, args.policy.as_deref(), out)?;
    }
    Ok(if report.selected.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn render_match(
    book: &Playbook,
    report: &MatchReport,
    described: &str,
    policy: Option<&Path>,
    out: &mut impl Write,
) -> Result<()> {
    let q = &report.query;
    let [a, b] = identity_lines(&q.identity);
    writeln!(out, "query   {a}")?;
    writeln!(out, "        {b}")?;
    writeln!(out, "        regime {}", regime_line(&q.regime))?;
    writeln!(out, "        from {described}")?;
    match policy {
        Some(p) => writeln!(out, "policy  {}", p.display())?,
        None => writeln!(
            out,
            "policy  default: every gate exact, rate not an axis, no calibrated tolerance (only an exact regime applies)"
        )?,
    }
    writeln!(
        out,
        "\n{} of {} row(s) apply",
        report.selected.len(),
        book.rows().len()
    )?;
    if !report.selected.is_empty() {
        writeln!(out, "\nAPPLIES")?;
    }
    for s in &report.selected {
        let limiting = match s.distance.limiting {
            _ if s.exact => "exact regime match".to_owned(),
            Some(axis) => format!("limited by {axis}"),
            None => "exact regime match".to_owned(),
        };
        writeln!(
            out,
            "  {}  distance {:.3} ({limiting}){}",
            s.row.id,
            s.distance.linf,
            if s.delta_is_floor {
                "  delta_is_floor: a lower bound (prefix-dependent knob on synthesized prefixes)"
            } else {
                ""
            }
        )?;
        if let Some(row) = book.rows().get(s.row.index) {
            writeln!(out, "    {}", row.summary())?;
        }
    }
    if !report.rejected.is_empty() {
        writeln!(out, "\nDOES NOT APPLY")?;
    }
    for r in &report.rejected {
        writeln!(out, "  {}  {}", r.row.id, r.reason)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// playbook examples

/// One illustrative row: a real regime computed from a pinned trace, an invented experiment.
struct Example {
    id: &'static str,
    /// Path under the shared directory.
    file: &'static str,
    /// The file's pinned sha256 (fixtures/MANIFEST.sha256).
    sha256: &'static str,
    /// Rows kept from the start (`None`: all).
    max_rows: Option<u64>,
    /// Seconds kept from the first row (`None`: all).
    duration_s: Option<f64>,
    /// The slice, in words.
    slice: &'static str,
    window_s: f64,
    model: &'static str,
    gpu_sku: &'static str,
    engine_version: &'static str,
    concurrency: Concurrency,
    /// The knob and the treatment's value.
    knob: (&'static str, &'static str),
    /// The baseline's value.
    baseline_value: &'static str,
    /// The baseline's middle repeat: throughput tok/s, TTFT p50, p99, ITL p50, p99 (ms).
    baseline: [f64; 5],
    /// Treatment / baseline, per metric in the same order.
    ratio: [f64; 5],
    story: &'static str,
    invalidated: Option<&'static str>,
}

const BURSTGPT_1: &str = "traces/burstgpt/BurstGPT_1.first400.csv";
const BURSTGPT_3: &str = "traces/burstgpt/BurstGPT_3.first400.csv";
const MOONCAKE: &str = "traces/mooncake/conversation_trace.jsonl";
const AZURE: &str = "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv";
const BURSTGPT_1_SHA: &str = "7865fda5dac50938a84dfccb06c405e2f5202969ecfbd671c8399de00f4335f0";
const BURSTGPT_3_SHA: &str = "5465fc4c38b0815b8f75d126a120c229ae93632d62e3adf1792f5e8401a73559";
const MOONCAKE_SHA: &str = "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df";
const AZURE_SHA: &str = "2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8";

/// Revision written into every example's identity: there is no model behind these numbers.
const NO_REVISION: &str = "illustrative (no real revision)";

/// When the invalidated example was retired: a fixed instant, so the file is the same bytes
/// on every run (2026-01-01T00:00:00Z).
const EXAMPLE_INVALIDATED_UNIX_NS: i64 = 1_767_225_600_000_000_000;

/// Per repeat: (throughput factor, latency factor) around the middle repeat. Fixed, so the
/// invented spreads are the same on every run.
const BASELINE_JITTER: [(f64, f64); 3] = [(0.985, 1.021), (1.0, 1.0), (1.012, 0.992)];
const TREATMENT_JITTER: [(f64, f64); 3] = [(1.006, 0.989), (0.991, 1.014), (1.0, 1.0)];

fn examples_list() -> Vec<Example> {
    vec![
        Example {
            id: "example-burstgpt1-prefix-caching",
            file: BURSTGPT_1,
            sha256: BURSTGPT_1_SHA,
            max_rows: None,
            duration_s: None,
            slice: "the whole 400-row prefix file",
            window_s: 1.0,
            model: "meta-llama/Llama-3.1-8B-Instruct",
            gpu_sku: "NVIDIA H100 80GB HBM3",
            engine_version: "0.11.0",
            concurrency: Concurrency::Uncapped,
            knob: ("enable_prefix_caching", "true"),
            baseline_value: "false",
            baseline: [3.1, 38.0, 212.0, 7.9, 19.5],
            ratio: [1.0, 0.97, 0.99, 1.0, 1.01],
            story: "BurstGPT has no prefix identity, so the replay synthesized a fresh block for every request and nothing was shared: a prefix-caching delta measured on it is a floor (delta_is_floor), never the effect on the real traffic",
            invalidated: None,
        },
        Example {
            id: "example-burstgpt3-max-num-seqs-null-result",
            file: BURSTGPT_3,
            sha256: BURSTGPT_3_SHA,
            max_rows: None,
            duration_s: None,
            slice: "the whole 400-row prefix file",
            window_s: 1.0,
            model: "Qwen/Qwen2.5-7B-Instruct",
            gpu_sku: "NVIDIA L4",
            engine_version: "0.10.2",
            concurrency: Concurrency::Uncapped,
            knob: ("max_num_seqs", "32"),
            baseline_value: "256",
            baseline: [1.45, 29.0, 160.0, 12.1, 27.0],
            ratio: [1.0, 1.0, 1.02, 0.99, 1.0],
            story: "at about 0.01 requests per second a batch never fills, so capping it changes nothing measurable: a null result is a row too",
            invalidated: None,
        },
        Example {
            id: "example-mooncake400-prefix-caching",
            file: MOONCAKE,
            sha256: MOONCAKE_SHA,
            max_rows: Some(400),
            duration_s: None,
            slice: "its first 400 rows",
            window_s: 1.0,
            model: "meta-llama/Llama-3.1-70B-Instruct",
            gpu_sku: "NVIDIA H100 80GB HBM3",
            engine_version: "0.11.0",
            concurrency: Concurrency::Uncapped,
            knob: ("enable_prefix_caching", "true"),
            baseline_value: "false",
            baseline: [1021.0, 1840.0, 9650.0, 31.0, 88.0],
            ratio: [1.07, 0.38, 0.55, 0.93, 0.81],
            story: "Mooncake records every request's 512-token prefix blocks, so the replay shares prefixes as the production traffic did and the delta is not a floor; burstiness at 1 s reflects the trace's ~3 s recording grid (the regime's own warning)",
            invalidated: None,
        },
        Example {
            id: "example-mooncake-batched-tokens-3s-window",
            file: MOONCAKE,
            sha256: MOONCAKE_SHA,
            max_rows: None,
            duration_s: None,
            slice: "the whole file",
            window_s: 3.0,
            model: "Qwen/Qwen3-32B",
            gpu_sku: "NVIDIA H100 80GB HBM3",
            engine_version: "0.11.0",
            concurrency: Concurrency::Uncapped,
            knob: ("max_num_batched_tokens", "8192"),
            baseline_value: "2048",
            baseline: [1198.0, 2210.0, 11800.0, 34.0, 95.0],
            ratio: [1.03, 0.71, 0.78, 1.06, 1.38],
            story: "regime at a 3 s window because the trace's timestamps sit on a ~3 s grid; a query at 1 s is not comparable with it (the matcher refuses to compare windows). Larger prefill chunks cut TTFT and stall decode steps: the ITL tail is the price",
            invalidated: None,
        },
        Example {
            id: "example-azure-conv-gpu-memory",
            file: AZURE,
            sha256: AZURE_SHA,
            max_rows: None,
            duration_s: None,
            slice: "the whole file",
            window_s: 1.0,
            model: "mistralai/Mistral-7B-Instruct-v0.3",
            gpu_sku: "NVIDIA A100-SXM4-80GB",
            engine_version: "0.10.2",
            concurrency: Concurrency::Uncapped,
            knob: ("gpu_memory_utilization", "0.95"),
            baseline_value: "0.90",
            baseline: [1105.0, 61.0, 420.0, 14.2, 41.0],
            ratio: [1.0, 0.96, 0.83, 0.99, 0.95],
            story: "open loop under capacity: throughput follows the arrival rate whatever the knob, so the claim lives in the TTFT tail",
            invalidated: None,
        },
        Example {
            id: "example-azure-conv-10min-kv-fp8-capped",
            file: AZURE,
            sha256: AZURE_SHA,
            max_rows: None,
            duration_s: Some(600.0),
            slice: "its first 600 s",
            window_s: 1.0,
            model: "meta-llama/Llama-3.1-8B-Instruct",
            gpu_sku: "NVIDIA L40S",
            engine_version: "0.11.0",
            concurrency: Concurrency::Max(64),
            knob: ("kv_cache_dtype", "fp8"),
            baseline_value: "auto",
            baseline: [1010.0, 48.0, 310.0, 11.8, 33.0],
            ratio: [1.01, 0.98, 0.74, 1.02, 0.97],
            story: "a KV-cache knob is prefix-dependent (capacity decides how much shared prefix survives), and Azure's trace has no prefix identity: delta_is_floor. The client capped requests in flight at 64, so only a query at that cap passes the concurrency gate",
            invalidated: None,
        },
        Example {
            id: "example-azure-conv-chunked-prefill-retired",
            file: AZURE,
            sha256: AZURE_SHA,
            max_rows: None,
            duration_s: None,
            slice: "the whole file",
            window_s: 1.0,
            model: "meta-llama/Llama-2-13b-chat-hf",
            gpu_sku: "NVIDIA A100-SXM4-80GB",
            engine_version: "0.6.3",
            concurrency: Concurrency::Uncapped,
            knob: ("enable_chunked_prefill", "false"),
            baseline_value: "true",
            baseline: [1080.0, 140.0, 980.0, 19.0, 55.0],
            ratio: [0.97, 0.82, 1.21, 1.12, 1.9],
            story: "how a row is retired: invalidation is a field with a reason, never a deletion",
            invalidated: Some(
                "illustrative invalidation: the engine this row names is superseded (newer vLLM releases schedule prefill differently), so its delta no longer says anything about a current server",
            ),
        },
    ]
}

fn repeat_of(v: [f64; 5]) -> Repeat {
    let [
        throughput_tok_s,
        ttft_p50_ms,
        ttft_p99_ms,
        itl_p50_ms,
        itl_p99_ms,
    ] = v;
    Repeat {
        throughput_tok_s,
        ttft_p50_ms,
        ttft_p99_ms,
        itl_p50_ms,
        itl_p99_ms,
    }
}

/// Invented repeats around `middle`: throughput and latencies moved by fixed factors, each
/// rounded to 3 decimals so the file reads as numbers someone wrote down.
fn invented_runs(middle: [f64; 5], jitter: &[(f64, f64); 3]) -> Vec<Repeat> {
    let r = |v: f64| (v * 1000.0).round() / 1000.0;
    jitter
        .iter()
        .map(|&(t, l)| {
            let [tp, a, b, c, d] = middle;
            repeat_of([r(tp * t), r(a * l), r(b * l), r(c * l), r(d * l)])
        })
        .collect()
}

/// The shared directory: `--shared`, else `$LOADPROOF_SHARED`, else `../shared`.
fn shared_root(args: &PlaybookExamplesArgs) -> PathBuf {
    args.shared
        .clone()
        .or_else(|| std::env::var_os("LOADPROOF_SHARED").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("../shared"))
}

fn example_row(root: &Path, e: &Example) -> Result<Row> {
    let path = root.join(e.file);
    if !path.is_file() {
        return Err(BadInput(format!(
            "{} is not there: the examples' regimes are computed from the real traces (../shared/traces, pinned in fixtures/MANIFEST.sha256); pass --shared DIR or set LOADPROOF_SHARED",
            path.display()
        ))
        .into());
    }
    let filter = caller_filter(None, None, None, e.duration_s, e.max_rows)?;
    let trace = ingest_file(
        &path,
        IngestOptions {
            format: None,
            filter,
            limits: Limits::STANDARD,
        },
    )?;
    let sha = &trace.meta().source_sha256;
    if sha != e.sha256 {
        return Err(BadInput(format!(
            "{}: sha256 {sha} is not the pinned {} (fixtures/MANIFEST.sha256): the examples are computed from the pinned bytes only",
            path.display(),
            e.sha256
        ))
        .into());
    }
    let window = Window::from_secs(e.window_s)
        .ok_or_else(|| anyhow::anyhow!("example {}: window {} s", e.id, e.window_s))?;
    let regime =
        Regime::of(&trace, window).map_err(|err| BadInput(format!("{}: {err}", path.display())))?;
    let axes = RegimeAxes::of(&regime)
        .map_err(|err| anyhow::anyhow!("example {}: {}: {err}", e.id, path.display()))?;
    let treatment_middle = {
        let mut t = e.baseline;
        for (v, r) in t.iter_mut().zip(e.ratio) {
            *v *= r;
        }
        t
    };
    let delta = MeasuredDelta::from_repeats(
        &invented_runs(e.baseline, &BASELINE_JITTER),
        &invented_runs(treatment_middle, &TREATMENT_JITTER),
    )
    .map_err(|err| anyhow::anyhow!("example {}: {err}", e.id))?;
    let (knob, value) = e.knob;
    let spec = RowSpec {
        id: e.id.to_owned(),
        identity: Identity {
            model: e.model.to_owned(),
            model_revision: NO_REVISION.to_owned(),
            gpu_sku: e.gpu_sku.to_owned(),
            engine: "vllm".to_owned(),
            engine_version: e.engine_version.to_owned(),
            source_kind: SourceKind {
                traffic: Traffic::Recorded,
                prefixes: Prefixes::of_trace(&trace),
            },
            concurrency: e.concurrency,
            knobs: BTreeMap::from([(knob.to_owned(), value.to_owned())]),
        },
        regime: axes,
        delta,
        provenance: Provenance {
            trace_sha256: sha.clone(),
            baseline_receipts: Vec::new(),
            treatment_receipts: Vec::new(),
            verified_unix_ns: None,
        },
        notes: vec![
            "ILLUSTRATIVE — invented numbers: the delta and every per-repeat run are made up to show what a row holds; no receipt backs them (provenance names none) and the matcher never selects this row".to_owned(),
            format!(
                "the regime is real: computed by `loadproof playbook examples` from {} ({}, {} requests; sha256 = provenance.trace_sha256; see ../shared/traces/SOURCES.md) with burstiness at a {} s window",
                e.file, e.slice, regime.requests, e.window_s
            ),
            format!(
                "the experiment is invented: baseline {knob}={}, treatment {knob}={value}",
                e.baseline_value
            ),
            e.story.to_owned(),
        ],
    };
    let row = Row::illustrative(spec).map_err(|err| anyhow::anyhow!("example {}: {err}", e.id))?;
    match e.invalidated {
        Some(reason) => row
            .invalidate(Invalidation {
                reason: reason.to_owned(),
                at_unix_ns: EXAMPLE_INVALIDATED_UNIX_NS,
                by: Some("loadproof playbook examples (illustrative)".to_owned()),
            })
            .map_err(|err| anyhow::anyhow!("example {}: {err}", e.id)),
        None => Ok(row),
    }
}

/// `loadproof playbook examples`.
pub fn examples(args: &PlaybookExamplesArgs, out: &mut impl Write) -> Result<ExitCode> {
    let root = shared_root(args);
    let rows = examples_list()
        .iter()
        .map(|e| example_row(&root, e))
        .collect::<Result<Vec<Row>>>()?;
    let book = Playbook::new(rows).map_err(|e| anyhow::anyhow!("the examples: {e}"))?;
    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    write_atomically(&args.out, |w| Ok(w.write_all(book.to_json().as_bytes())?))?;
    writeln!(
        out,
        "wrote {} illustrative rows to {} (real regimes from {}, invented deltas; none is ever selected)",
        book.rows().len(),
        args.out.display(),
        root.display()
    )?;
    for row in book.rows() {
        writeln!(out, "  {}", row.summary())?;
        writeln!(out, "    regime {}", regime_line(row.regime()))?;
    }
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------------------------
// playbook publish

/// A receipt to bundle: its bytes, read and checked before anything is written.
struct Bundled {
    entry: SiteReceipt,
    bytes: Vec<u8>,
    qualified: bool,
}

/// Reads every `--receipt`: each must be a receipt (it need not qualify: the page shows why
/// not), and no two may share a file name (the site keeps names, so a reader sees which is
/// which).
fn bundled_receipts(paths: &[PathBuf]) -> Result<Vec<Bundled>> {
    let mut out: Vec<Bundled> = Vec::new();
    for path in paths {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let receipt = loadproof_core::receipt::Receipt::from_json(&bytes)
            .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let entry = SiteReceipt::bundled(&name, &bytes).map_err(|_| {
            BadInput(format!(
                "{}: not a file name a site can keep",
                path.display()
            ))
        })?;
        if out.iter().any(|b| b.entry.name == name) {
            return Err(BadInput(format!(
                "{}: a second receipt named {name:?}; bundled receipts keep their file names, so rename one",
                path.display()
            ))
            .into());
        }
        let qualified = loadproof_core::audit::audit(&receipt).qualified;
        out.push(Bundled {
            entry,
            bytes,
            qualified,
        });
    }
    Ok(out)
}

/// Writes `receipts/NAME` for each and the index the page reads.
/// The index is written even when empty, so the page finds one (no 404) on every site.
fn write_bundled(site: &Path, bundled: &[Bundled]) -> Result<()> {
    let dir = site.join(SITE_RECEIPT_DIR);
    if !bundled.is_empty() {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    for b in bundled {
        let path = dir.join(&b.entry.name);
        std::fs::write(&path, &b.bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    let index = SiteReceipts::new(bundled.iter().map(|b| b.entry.clone()).collect());
    let path = site.join(SITE_RECEIPTS);
    std::fs::write(&path, index.to_json()).with_context(|| format!("writing {}", path.display()))
}

/// `loadproof playbook publish`.
pub fn publish(args: &PlaybookPublishArgs, out: &mut impl Write) -> Result<ExitCode> {
    let path = &args.playbook;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let book = match Playbook::from_json(&bytes) {
        Ok(book) => book,
        Err(e) => return refused("publish", format!("{}: {e}", path.display())),
    };
    let index = args.app.join("index.html");
    if !index.is_file() {
        return Err(BadInput(format!(
            "{}: no built web app there (no index.html); build it with bash web/build.sh",
            args.app.display()
        ))
        .into());
    }
    let html =
        std::fs::read_to_string(&index).with_context(|| format!("reading {}", index.display()))?;
    if let Some(url) = root_absolute_url(&html) {
        return Err(BadInput(format!(
            "{}: loads {url:?} from the server's root, so the site would only work at /; rebuild it with bash web/build.sh (Trunk.toml sets public_url = \"./\")",
            index.display()
        ))
        .into());
    }
    check_site_dir(&args.out)?;
    let bundled = bundled_receipts(&args.receipts)?;

    // Build beside the target and rename into place, so a failed publish leaves nothing half
    // written and a re-publish never mixes two apps' files.
    let staging = staging_dir(&args.out)?;
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("removing {}", staging.display()))?;
    }
    let result = (|| -> Result<usize> {
        copy_tree(&args.app, &staging)?;
        let playbook_path = staging.join(SITE_PLAYBOOK);
        std::fs::write(&playbook_path, &bytes)
            .with_context(|| format!("writing {}", playbook_path.display()))?;
        write_bundled(&staging, &bundled)?;
        let manifest = site_manifest(&staging)?;
        let manifest_path = staging.join(SITE_MANIFEST);
        std::fs::write(&manifest_path, manifest.join(""))
            .with_context(|| format!("writing {}", manifest_path.display()))?;
        Ok(manifest.len())
    })();
    let n_files = match result {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    if args.out.exists() {
        std::fs::remove_dir_all(&args.out)
            .with_context(|| format!("replacing {}", args.out.display()))?;
    }
    std::fs::rename(&staging, &args.out)
        .with_context(|| format!("moving {} to {}", staging.display(), args.out.display()))?;
    let illustrative = book
        .rows()
        .iter()
        .filter(|r| r.evidence() == loadproof_core::playbook::Evidence::Illustrative)
        .count();
    writeln!(
        out,
        "published {} row(s) ({} measured, {illustrative} illustrative) to {}: {n_files} files listed in {SITE_MANIFEST}",
        book.rows().len(),
        book.rows().len() - illustrative,
        args.out.display()
    )?;
    for b in &bundled {
        writeln!(
            out,
            "bundled receipt {SITE_RECEIPT_DIR}/{} ({}; the Receipt view shows why)",
            b.entry.name,
            if b.qualified {
                "qualified"
            } else {
                "unqualified"
            }
        )?;
    }
    writeln!(
        out,
        "serve it with any static file server (e.g. python3 -m http.server -d {}) and open …/#/playbook; check it with (cd {} && sha256sum -c {SITE_MANIFEST})",
        args.out.display(),
        args.out.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The first URL in `html` that points at the server's root (`"/x.js"`, `'/x.wasm'`,
/// `//host/x`), if any: such a page works only when served at `/`.
fn root_absolute_url(html: &str) -> Option<String> {
    for quote in ['"', '\''] {
        let opening = format!("{quote}/");
        let mut rest = html;
        while let Some(at) = rest.find(&opening) {
            let after = &rest[at + 1..];
            let end = after.find(quote).unwrap_or(after.len());
            let url = &after[..end];
            // A lone "/" inside text (e.g. a closing tag written in a string) is not a URL.
            if url.len() > 1 && !url.contains(char::is_whitespace) {
                return Some(url.to_owned());
            }
            rest = &after[end.min(after.len())..];
        }
    }
    None
}

/// Refuses a SITE_DIR that is a file, or a non-empty directory publish did not make.
fn check_site_dir(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.is_dir() {
        return Err(BadInput(format!("{}: exists and is not a directory", dir.display())).into());
    }
    let mut entries =
        std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    if entries.next().is_none() || dir.join(SITE_MANIFEST).is_file() {
        return Ok(());
    }
    Err(BadInput(format!(
        "{}: not empty and not a site publish made (no {SITE_MANIFEST}); refusing to write into it",
        dir.display()
    ))
    .into())
}

/// A hidden sibling of `out` to build the site in.
fn staging_dir(out: &Path) -> Result<PathBuf> {
    let name = out
        .file_name()
        .ok_or_else(|| BadInput(format!("{}: not a directory name", out.display())))?;
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(parent) = parent {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let staged = format!(".{}.publish-{}", name.to_string_lossy(), std::process::id());
    Ok(match parent {
        Some(p) => p.join(staged),
        None => PathBuf::from(staged),
    })
}

/// Copies every regular file under `from` to `to` (directories recreated), leaving out a
/// playbook or manifest the app directory may hold: the site's own are written after.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let top = from;
    let mut stack = vec![from.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?
        {
            let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
            let source = entry.path();
            let rel = source.strip_prefix(top).unwrap_or(&source);
            if rel == Path::new(SITE_PLAYBOOK)
                || rel == Path::new(SITE_MANIFEST)
                || rel == Path::new(SITE_RECEIPTS)
                || rel.starts_with(SITE_RECEIPT_DIR)
            {
                continue;
            }
            let target = to.join(rel);
            let kind = entry
                .file_type()
                .with_context(|| format!("reading {}", source.display()))?;
            if kind.is_dir() || (kind.is_symlink() && source.is_dir()) {
                std::fs::create_dir_all(&target)
                    .with_context(|| format!("creating {}", target.display()))?;
                stack.push(source);
            } else {
                std::fs::copy(&source, &target).with_context(|| {
                    format!("copying {} to {}", source.display(), target.display())
                })?;
            }
        }
    }
    Ok(())
}

/// `sha256  path\n` for every file under `dir` (paths relative, `/`-separated, sorted by
/// bytes), as `sha256sum` writes them.
fn site_manifest(dir: &Path) -> Result<Vec<String>> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let entry = entry.with_context(|| format!("reading {}", d.display()))?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            if name.contains(['\n', '\\']) {
                return Err(BadInput(format!(
                    "{}: a file name with a newline or backslash cannot be listed in {SITE_MANIFEST}",
                    path.display()
                ))
                .into());
            }
            files.push((name, path));
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|(name, path)| {
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            Ok(format!("{}  {name}\n", sha256_hex(&bytes)))
        })
        .collect()
}
