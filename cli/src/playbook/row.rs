//! `loadproof playbook row`: one measured row from two arms of receipts, appended to a playbook
//! file. Every receipt must qualify and the arms must be one experiment (core decides both);
//! a refusal names the receipt and the reason, and nothing is written.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use loadproof_core::audit::{Audit, Policy, STANDINGS, audit_with};
use loadproof_core::claim::{Arm, Metric, Repeat};
use loadproof_core::playbook::{
    ArmSummary, AxesError, Experiment, ExperimentError, MeasuredDelta, Playbook, Provenance,
    RegimeAxis, Row, RowSpec,
};
use loadproof_core::receipt::{Receipt, sha256_hex};

use super::text::{identity_lines, num, regime_line};
use super::{read_playbook, refused, write_playbook};
use crate::args::PlaybookRowArgs;
use crate::input::{BadInput, pairs, read_policy, read_receipt, window_of};
use crate::receipt_cmd::unix_ns_now;

/// One receipt file as read: its path, the sha256 of its bytes (its digest in a row's
/// provenance), the receipt and its audit.
struct Loaded {
    path: PathBuf,
    sha256: String,
    receipt: Receipt,
    audit: Audit,
}

fn load_arm(paths: &[PathBuf], policy: &Policy) -> Result<Vec<Loaded>> {
    paths
        .iter()
        .map(|path| {
            let (bytes, receipt) = read_receipt(path)?;
            let audit = audit_with(&receipt, policy);
            Ok(Loaded {
                path: path.clone(),
                sha256: sha256_hex(&bytes),
                receipt,
                audit,
            })
        })
        .collect()
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
    let policy = read_policy(args.audit_policy.as_deref(), &args.trust)?;
    let baseline = load_arm(&args.baseline, &policy)?;
    let treatment = load_arm(&args.treatment, &policy)?;
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
            knobs_read_back: Default::default(),
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
    write_playbook(&args.playbook, &book)?;
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
    for name in row.identity().knobs.keys() {
        match p.knobs_read_back.get(name) {
            Some(source) => writeln!(
                out,
                "  knob      {name}: read back from the server ({source})"
            )?,
            None => writeln!(
                out,
                "  knob      {name}: stated by the receipts, not read back from the server"
            )?,
        }
    }
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
