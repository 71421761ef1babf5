//! `loadproof playbook match`: every row of a playbook judged against live traffic by core's
//! matcher (exact gates, then the regime distance), printed as the rows that apply and every
//! other row with its reason, or as `--json`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use loadproof_core::playbook::{
    Identity, MatchPolicy, MatchReport, Playbook, Prefixes, Query, SourceKind, Traffic,
};

use super::live::{live_from_json, live_from_receipt, live_from_trace};
use super::read_playbook;
use super::text::{identity_lines, regime_line};
use crate::args::{PlaybookMatchArgs, PrefixesArg, TrafficArg};
use crate::input::{BadInput, concurrency_of, pairs};

/// `loadproof playbook match`.
pub fn matches(args: &PlaybookMatchArgs, out: &mut impl Write) -> Result<ExitCode> {
    let book = read_playbook(&args.playbook, true)?
        .ok_or_else(|| BadInput(format!("{}: no playbook", args.playbook.display())))?;
    let policy = match &args.policy {
        Some(p) => {
            let bytes =
                crate::input::read_file(p, crate::input::MAX_DOCUMENT_BYTES, "a match policy")?;
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
        // Values from the playbook file and the live traffic print as one line each.
        let report = crate::render::printable(&report);
        let described = crate::render::escape_controls(&live.described);
        render_match(&book, &report, &described, args.policy.as_deref(), out)?;
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
            writeln!(
                out,
                "    {}",
                crate::render::escape_controls(&row.summary())
            )?;
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
