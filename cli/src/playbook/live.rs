//! The live traffic a `playbook match` query describes, read from what the caller hands over:
//! a trace (its regime and prefixes computed as `trace inspect` computes them), a regime JSON
//! (a bare regime, `trace inspect --json` output or a plan.json) or a receipt (the schedule it
//! fired). Each says what it can about its prefixes and origin; the flags settle the rest.

use std::path::Path;

use anyhow::Result;
use loadproof_core::plan::PLAN_SCHEMA;
use loadproof_core::playbook::{Prefixes, RegimeAxes, Traffic, traffic_of_notes};
use loadproof_core::receipt::block;
use loadproof_core::report::INSPECT_SCHEMA;
use loadproof_core::{IngestOptions, Limits, Regime, Trace};

use crate::args::PlaybookMatchArgs;
use crate::input::{
    BadInput, caller_filter, format_of, ingest_file, read_receipt, read_schema, synthetic_note,
    window_of,
};

/// The live traffic as the query sees it: its regime, and what its source says about its
/// prefixes and its origin (`None`: the source does not say).
pub(super) struct Live {
    pub(super) regime: RegimeAxes,
    pub(super) prefixes: Option<Prefixes>,
    pub(super) traffic: std::result::Result<Traffic, String>,
    pub(super) described: String,
}

pub(super) fn live_from_trace(args: &PlaybookMatchArgs, path: &Path) -> Result<Live> {
    let window = window_of(args.window.unwrap_or(1.0))?;
    let trace: Trace = ingest_file(
        path,
        IngestOptions {
            format: args.format.map(format_of),
            filter: caller_filter(None, None, None, None, None)?,
            limits: Limits::STANDARD,
            block_lengths: None,
            schema: read_schema(args.schema.as_deref())?,
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

pub(super) fn live_from_json(args: &PlaybookMatchArgs, path: &Path) -> Result<Live> {
    let bytes = crate::input::read_file(path, crate::input::MAX_DOCUMENT_BYTES, "a regime JSON")?;
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
pub(super) fn live_from_receipt(args: &PlaybookMatchArgs, path: &Path) -> Result<Live> {
    let bad = |why: String| BadInput(format!("{}: {why}", path.display()));
    let (_, receipt) = read_receipt(path)?;
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
