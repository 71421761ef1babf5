//! The playbook through its public API: rows built from real audited receipts, every
//! construction refusal by its rule, the matcher's gates and distances, and the distance
//! between two real regimes computed by core's own ingestion.

mod common;

use std::collections::BTreeMap;

use common::{ingest, ingest_with, opts, shared};
use loadproof_core::audit::{Audit, audit};
use loadproof_core::claim::{Arm, Repeat, RepeatError};
use loadproof_core::playbook::{
    AxisTolerance, Concurrency, DeltaError, Evidence, GateName, Identity, Invalidation,
    MatchPolicy, MeasuredDelta, Playbook, PlaybookError, Prefixes, Provenance, Query, Reason,
    RegimeAxes, RegimeAxis, Row, RowError, RowSpec, SIM_ENGINE, SourceKind, ToleranceError,
    Traffic, delta_is_floor, distance, match_rows,
};
use loadproof_core::receipt::{Receipt, sha256_hex};
use loadproof_core::{Regime, Window};
use proptest::prelude::*;

const SIM_RECEIPT: &[u8] = include_bytes!("data/receipt/native_sim.json");

// ---------------------------------------------------------------------------------------------
// Parts

fn axes() -> RegimeAxes {
    RegimeAxes {
        rate_rps: 2.0,
        burstiness: 2.0,
        window_s: 1.0,
        input_p50: 350.0,
        input_p95: 1640.0,
        output_p50: 240.0,
        output_p95: 840.0,
    }
}

fn identity() -> Identity {
    Identity {
        model: "Qwen/Qwen3-8B".into(),
        model_revision: "b968826".into(),
        gpu_sku: "NVIDIA H100 80GB HBM3".into(),
        engine: "vllm".into(),
        engine_version: "0.11.0".into(),
        source_kind: SourceKind {
            traffic: Traffic::Recorded,
            prefixes: Prefixes::Recorded,
        },
        concurrency: Concurrency::Uncapped,
        knobs: BTreeMap::from([("enable_prefix_caching".to_owned(), "true".to_owned())]),
    }
}

fn repeat(throughput: f64) -> Repeat {
    Repeat {
        throughput_tok_s: throughput,
        ttft_p50_ms: 40.0,
        ttft_p99_ms: 120.0,
        itl_p50_ms: 8.0,
        itl_p99_ms: 30.0,
    }
}

fn sha(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

fn spec(id: &str) -> RowSpec {
    RowSpec {
        id: id.into(),
        identity: identity(),
        regime: axes(),
        delta: MeasuredDelta::from_repeats(
            &[repeat(100.0), repeat(104.0)],
            &[repeat(110.0), repeat(112.0)],
        )
        .unwrap(),
        provenance: Provenance {
            trace_sha256: sha(0xaa),
            baseline_receipts: vec![sha(1), sha(2)],
            treatment_receipts: vec![sha(3), sha(4)],
            verified_unix_ns: Some(1_790_000_000_000_000_000),
            knobs_read_back: Default::default(),
        },
        notes: vec![],
    }
}

/// A measured row as a file holds it: `Row::measured` needs audits, but reading a row's JSON
/// runs every rule the file itself can prove.
fn measured(spec: RowSpec) -> Row {
    let json = Row::illustrative(spec).unwrap().to_json().replace(
        "\"evidence\": \"illustrative\"",
        "\"evidence\": \"measured\"",
    );
    let row = Row::from_json(json.as_bytes()).unwrap();
    assert_eq!(row.evidence(), Evidence::Measured);
    row
}

fn query() -> Query {
    Query {
        identity: identity(),
        regime: axes(),
    }
}

/// `n` receipt files of the real sim run that differ only in a note (the audit does not read
/// notes), so each has its own digest: (sha256 of the file's bytes, its audit).
fn sim_receipts(n: usize, tamper: impl Fn(&mut Receipt)) -> Vec<(String, Audit)> {
    (0..n)
        .map(|i| {
            let mut r = Receipt::from_json(SIM_RECEIPT).unwrap();
            r.notes.push(format!("repeat {i}"));
            tamper(&mut r);
            let bytes = r.to_json();
            (sha256_hex(bytes.as_bytes()), audit(&r))
        })
        .collect()
}

fn sim_spec(baseline: &[(String, Audit)], treatment: &[(String, Audit)]) -> RowSpec {
    let repeats = |arm: &[(String, Audit)]| -> Vec<Repeat> {
        arm.iter()
            .map(|(_, a)| Repeat::from_audit(a).unwrap())
            .collect()
    };
    RowSpec {
        id: "sim-max-num-seqs".into(),
        identity: Identity {
            model: "sim".into(),
            model_revision: "none (simulator)".into(),
            gpu_sku: "none (simulator)".into(),
            engine: SIM_ENGINE.into(),
            engine_version: "0.1.0".into(),
            source_kind: SourceKind {
                traffic: Traffic::Synthetic,
                prefixes: Prefixes::Synthesized,
            },
            concurrency: Concurrency::from_max_concurrency(Some(0)).unwrap(),
            knobs: BTreeMap::from([("max_num_seqs".to_owned(), "4".to_owned())]),
        },
        regime: axes(),
        delta: MeasuredDelta::from_repeats(&repeats(baseline), &repeats(treatment)).unwrap(),
        provenance: Provenance {
            trace_sha256: "be6aacc3eef2cc0062da84778872bd9a5303e50e2a10d06fbf16adda772829af".into(),
            baseline_receipts: baseline.iter().map(|(s, _)| s.clone()).collect(),
            treatment_receipts: treatment.iter().map(|(s, _)| s.clone()).collect(),
            verified_unix_ns: Some(1_795_961_900_000_000_000),
            knobs_read_back: Default::default(),
        },
        notes: vec![],
    }
}

fn audits(arm: &[(String, Audit)]) -> Vec<Audit> {
    arm.iter().map(|(_, a)| a.clone()).collect()
}

// ---------------------------------------------------------------------------------------------
// Construction refusals

#[test]
fn a_row_without_knobs_does_not_construct() {
    let mut s = spec("r");
    s.identity.knobs.clear();
    let e = Row::illustrative(s).unwrap_err();
    assert_eq!(e, RowError::NoKnobs);
    assert!(e.to_string().contains("no knobs"));
}

#[test]
fn repeats_below_two_do_not_construct() {
    assert_eq!(
        MeasuredDelta::from_repeats(&[repeat(1.0)], &[repeat(2.0)]).unwrap_err(),
        DeltaError::TooFewRepeats { repeats: 1 }
    );
    // Nor on read: a file that drops a repeat from each arm is refused.
    let row = Row::illustrative(spec("r")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&row.to_json()).unwrap();
    for arm in ["baseline", "treatment"] {
        v["delta"][arm]["runs"].as_array_mut().unwrap().pop();
    }
    v["delta"]["repeats"] = 1.into();
    let e = Row::from_json(v.to_string().as_bytes()).unwrap_err();
    assert!(e.to_string().contains("1 repeat(s) per arm"), "{e}");
}

#[test]
fn a_delta_without_a_latency_percentile_is_unrepresentable() {
    // In a file: every repeat needs every metric.
    let row = Row::illustrative(spec("r")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&row.to_json()).unwrap();
    v["delta"]["treatment"]["runs"][1]
        .as_object_mut()
        .unwrap()
        .remove("itl_p99_ms");
    let e = Row::from_json(v.to_string().as_bytes()).unwrap_err();
    assert!(e.to_string().contains("missing field `itl_p99_ms`"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&row.to_json()).unwrap();
    v["delta"]["baseline"]["runs"][0]["ttft_p50_ms"] = serde_json::Value::Null;
    assert!(Row::from_json(v.to_string().as_bytes()).is_err());
    // From an audit: a missing percentile is named.
    let (_, a) = sim_receipts(1, |_| {}).remove(0);
    assert!(Repeat::from_audit(&a).is_ok());
    let mut no_itl_p99 = a.clone();
    for l in &mut no_itl_p99.latency {
        if l.metric == "itl" {
            l.p99_ms = None;
        }
    }
    assert_eq!(
        Repeat::from_audit(&no_itl_p99).unwrap_err(),
        RepeatError::MissingPercentile {
            metric: "itl",
            percentile: "p99"
        }
    );
    let mut no_ttft = a;
    no_ttft.latency.retain(|l| l.metric != "ttft");
    assert_eq!(
        Repeat::from_audit(&no_ttft).unwrap_err(),
        RepeatError::MissingPercentile {
            metric: "ttft",
            percentile: "p50"
        }
    );
}

#[test]
fn an_empty_trace_sha256_does_not_construct() {
    let mut s = spec("r");
    s.provenance.trace_sha256 = String::new();
    assert_eq!(
        Row::illustrative(s).unwrap_err(),
        RowError::EmptyTraceSha256
    );
    let json = Row::illustrative(spec("r"))
        .unwrap()
        .to_json()
        .replace(&sha(0xaa), "");
    let e = Row::from_json(json.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("trace_sha256 is empty"), "{e}");
}

#[test]
fn a_measured_row_needs_qualified_receipts_and_names_the_failed_standing() {
    let base = sim_receipts(2, |_| {});
    let treat = sim_receipts(4, |_| {}).split_off(2);
    assert!(base.iter().chain(&treat).all(|(_, a)| a.qualified));
    let row = Row::measured(sim_spec(&base, &treat), &audits(&base), &audits(&treat)).unwrap();
    assert_eq!(row.evidence(), Evidence::Measured);
    assert!(row.is_selectable());
    assert_eq!(row.delta().repeats(), 2);
    assert!(
        !delta_is_floor(&row),
        "max_num_seqs does not depend on reuse"
    );

    // The second treatment receipt ran without its lease: the window standing refuses.
    let mut unleased = treat.clone();
    unleased[1] = sim_receipts(5, |r| r.lease = None).remove(4);
    assert!(!unleased[1].1.qualified);
    let e = Row::measured(
        sim_spec(&base, &unleased),
        &audits(&base),
        &audits(&unleased),
    )
    .unwrap_err();
    let RowError::UnqualifiedReceipt {
        arm,
        index,
        sha256,
        failed,
    } = &e
    else {
        panic!("{e}");
    };
    assert_eq!((*arm, *index), (Arm::Treatment, 1));
    assert_eq!(sha256, &unleased[1].0);
    assert_eq!(failed[0].standing, "window");
    assert!(e.to_string().contains("standing window failed"), "{e}");

    // A qualified audit whose `qualified` flag was flipped by hand is still rebuilt.
    let mut forged = audits(&unleased);
    forged[1].qualified = true;
    assert!(matches!(
        Row::measured(sim_spec(&base, &unleased), &audits(&base), &forged),
        Err(RowError::UnqualifiedReceipt { .. })
    ));

    // One audit per receipt.
    assert!(matches!(
        Row::measured(
            sim_spec(&base, &treat),
            &audits(&base)[..1],
            &audits(&treat)
        ),
        Err(RowError::AuditCountMismatch {
            arm: Arm::Baseline,
            audits: 1,
            receipts: 2
        })
    ));

    // A simulator's receipts are never filed under a real engine.
    let mut as_vllm = sim_spec(&base, &treat);
    as_vllm.identity.engine = "vllm".into();
    assert!(matches!(
        Row::measured(as_vllm, &audits(&base), &audits(&treat)),
        Err(RowError::SimulatorMismatch {
            simulator: true,
            ..
        })
    ));
}

#[test]
fn a_hand_edited_row_is_validated_on_read() {
    let row = measured(spec("r"));
    let json = row.to_json();
    assert_eq!(Row::from_json(json.as_bytes()).unwrap(), row);
    let edits = [
        // A knob removed.
        ("\"enable_prefix_caching\": \"true\"", "", "no knobs"),
        // A receipt dropped from a measured row.
        (
            &*format!("\"{}\",\n", sha(1)),
            "",
            "1 receipt(s) for 2 repeats",
        ),
        // A better median than the repeats give.
        (
            "\"median\": 111.0",
            "\"median\": 150.0",
            "treatment.throughput_tok_s.median",
        ),
        // A change that is not the medians' change.
        (
            "\"throughput_tok_s\": 0.08823529411764706",
            "\"throughput_tok_s\": 0.2",
            "change.throughput_tok_s",
        ),
        // A field that is not in the schema.
        (
            "\"notes\": []",
            "\"notes\": [], \"selectable\": true",
            "unknown field",
        ),
        // A regime axis that cannot be compared.
        (
            "\"input_p50\": 350.0",
            "\"input_p50\": 0.0",
            "input_p50 is 0",
        ),
        // A measured row with no verification time.
        (
            "\"verified_unix_ns\": 1790000000000000000",
            "\"verified_unix_ns\": null",
            "verified_unix_ns",
        ),
        // An invalidation without a reason.
        (
            "\"invalidated\": null",
            "\"invalidated\": {\"reason\": \"\", \"at_unix_ns\": 1, \"by\": null}",
            "needs a reason",
        ),
    ];
    for (from, to, says) in edits {
        assert!(json.contains(from), "{from} not in {json}");
        let edited = json.replacen(from, to, 1);
        let e = Row::from_json(edited.as_bytes()).unwrap_err();
        assert!(e.to_string().contains(says), "{from}: {e}");
    }
}

#[test]
fn medians_not_means_over_repeats() {
    let d = MeasuredDelta::from_repeats(
        &[repeat(100.0), repeat(1000.0), repeat(100.0)],
        &[repeat(120.0), repeat(120.0), repeat(120.0)],
    )
    .unwrap();
    let b = d.baseline().throughput_tok_s;
    assert_eq!((b.median, b.min, b.max), (100.0, 100.0, 1000.0));
    assert!((d.change().throughput_tok_s - 0.2).abs() < 1e-12);
}

#[test]
fn unequal_repeat_counts_are_refused() {
    assert_eq!(
        MeasuredDelta::from_repeats(&[repeat(1.0); 2], &[repeat(1.0); 3]).unwrap_err(),
        DeltaError::UnequalRepeats {
            baseline: 2,
            treatment: 3
        }
    );
}

// ---------------------------------------------------------------------------------------------
// The matcher

#[test]
fn knob_values_not_just_names_gate_a_match() {
    let rows = [measured(spec("caching-on"))];
    let mut off = query();
    off.identity
        .knobs
        .insert("enable_prefix_caching".into(), "false".into());
    let r = match_rows(&rows, &off, &MatchPolicy::default()).unwrap();
    assert!(r.selected.is_empty());
    assert_eq!(
        r.rejected[0].reason,
        Reason::Gate {
            gate: GateName::Knobs,
            row: "enable_prefix_caching=true".into(),
            query: "enable_prefix_caching=false".into()
        }
    );
    let r = match_rows(&rows, &query(), &MatchPolicy::default()).unwrap();
    assert_eq!(r.selected.len(), 1);
}

#[test]
fn one_axis_8x_off_reads_3_0_by_l_infinity() {
    let mut q = axes();
    q.input_p95 *= 8.0;
    let d = distance(&axes(), &q, false).unwrap();
    assert_eq!(d.linf, 3.0);
    assert_eq!(d.limiting, Some(RegimeAxis::InputP95));
    assert!(d.axes.iter().filter(|a| a.distance > 0.0).count() == 1);
}

#[test]
fn burstiness_zero_stays_comparable() {
    let mut paced = axes();
    paced.burstiness = 0.0;
    assert_eq!(distance(&paced, &paced, false).unwrap().linf, 0.0);
    let mut poisson = axes();
    poisson.burstiness = 1.0;
    assert_eq!(distance(&paced, &poisson, false).unwrap().linf, 1.0);
    // A paced row applies to a paced query.
    let mut s = spec("paced");
    s.regime = paced;
    let r = match_rows(
        &[measured(s)],
        &Query {
            regime: paced,
            ..query()
        },
        &MatchPolicy::default(),
    )
    .unwrap();
    assert_eq!(r.selected.len(), 1);
}

#[test]
fn a_tolerance_without_calibration_does_not_construct() {
    assert_eq!(
        AxisTolerance::new(1.0, "").unwrap_err(),
        ToleranceError::NoCalibration
    );
    let t = AxisTolerance::new(1.0, "prereg E4: sign flip at 1.4").unwrap();
    assert_eq!(t.calibration(), "prereg E4: sign flip at 1.4");
    // Nor in a policy file.
    let e = serde_json::from_str::<MatchPolicy>(
        r#"{"tolerances": {"input_p95": {"max_distance": 1.0, "calibration": ""}}}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("calibration citation"), "{e}");
    let p: MatchPolicy = serde_json::from_str(
        r#"{"gpu_sku": false, "tolerances": {"input_p95": {"max_distance": 1.0, "calibration": "E4"}}}"#,
    )
    .unwrap();
    assert!(!p.gpu_sku && p.model_and_revision && !p.rate_is_axis);
}

#[test]
fn without_calibration_only_an_exact_regime_applies() {
    let mut near = spec("near");
    near.regime.burstiness = 2.1;
    let rows = [measured(spec("exact")), measured(near)];
    let r = match_rows(&rows, &query(), &MatchPolicy::default()).unwrap();
    assert_eq!(r.selected.len(), 1);
    assert_eq!(r.selected[0].row.id, "exact");
    assert!(r.selected[0].exact);
    let Reason::Uncalibrated { axis, distance, .. } = &r.rejected[0].reason else {
        panic!("{:?}", r.rejected);
    };
    assert_eq!(*axis, RegimeAxis::Burstiness);
    assert!((distance - (3.1f64 / 3.0).log2()).abs() < 1e-15);
    assert!(r.rejected[0].reason.to_string().starts_with("uncalibrated"));
}

#[test]
fn every_rejected_row_has_its_reason() {
    let mut other_gpu = spec("other-gpu");
    other_gpu.identity.gpu_sku = "NVIDIA A100-SXM4-80GB".into();
    let mut far = spec("far");
    far.regime.output_p95 = 105.0;
    far.regime.output_p50 = 30.0;
    let rows = vec![
        Row::illustrative(spec("example")).unwrap(),
        measured(spec("retired"))
            .invalidate(Invalidation {
                reason: "vLLM 0.12 scheduler rewrite".into(),
                at_unix_ns: 1,
                by: Some("validation".into()),
            })
            .unwrap(),
        measured(other_gpu),
        measured(far),
        measured(spec("applies")),
    ];
    let book = Playbook::new(rows).unwrap();
    let r = book.match_query(&query(), &MatchPolicy::default()).unwrap();
    assert_eq!(r.selected.len(), 1);
    assert_eq!(r.selected[0].row.id, "applies");
    assert_eq!(r.rejected.len(), 4);
    let text: Vec<String> = r
        .rejected
        .iter()
        .map(|x| format!("{}: {}", x.row.id, x.reason))
        .collect();
    assert!(text[0].starts_with("example: illustrative"), "{text:?}");
    assert_eq!(text[1], "retired: invalidated: vLLM 0.12 scheduler rewrite");
    assert_eq!(
        text[2],
        "other-gpu: gate gpu_sku: row has NVIDIA A100-SXM4-80GB, query has NVIDIA H100 80GB HBM3"
    );
    assert!(
        text[3].starts_with("far: uncalibrated: 3.000 away on output_p50"),
        "{text:?}"
    );
}

#[test]
fn illustrative_rows_are_never_selected() {
    // A perfectly matching query, every gate open: still nothing.
    let rows = [Row::illustrative(spec("ex1")).unwrap()];
    let open = MatchPolicy {
        model_and_revision: false,
        gpu_sku: false,
        engine_and_version: false,
        source_kind: false,
        concurrency: false,
        knobs: false,
        ..MatchPolicy::default()
    };
    let r = match_rows(&rows, &query(), &open).unwrap();
    assert!(r.selected.is_empty());
    assert_eq!(r.rejected[0].reason, Reason::Illustrative);
}

#[test]
fn a_synthesized_prefix_cache_row_is_a_floor_and_says_so_when_selected() {
    let mut s = spec("floor");
    s.identity.source_kind.prefixes = Prefixes::Synthesized;
    let row = measured(s);
    assert!(delta_is_floor(&row));
    let mut q = query();
    q.identity.source_kind.prefixes = Prefixes::Synthesized;
    let r = match_rows(&[row], &q, &MatchPolicy::default()).unwrap();
    assert!(r.selected[0].delta_is_floor);
}

#[test]
fn burstgpt_vs_mooncake_regimes_are_4_93_apart_limited_by_input_p95() {
    let burstgpt = ingest(&shared("traces/burstgpt/BurstGPT_1.first400.csv")).unwrap();
    let mut first400 = opts();
    first400.filter.max_rows = Some(400);
    let mooncake = ingest_with(
        &shared("traces/mooncake/conversation_trace.jsonl"),
        first400,
    )
    .unwrap();
    assert_eq!(mooncake.meta().emitted, 400);
    let b = RegimeAxes::of(&Regime::of(&burstgpt, Window::ONE_SECOND).unwrap()).unwrap();
    let m = RegimeAxes::of(&Regime::of(&mooncake, Window::ONE_SECOND).unwrap()).unwrap();
    // Unrounded: the predecessor truncated these to 1638 and 49904.
    assert_eq!(b.input_p95, 1638.8);
    assert!((m.input_p95 - 49904.3).abs() < 1e-9, "{}", m.input_p95);
    let d = distance(&b, &m, false).unwrap();
    for a in &d.axes {
        eprintln!(
            "{:<11} {:>22} {:>22} {:.15}",
            a.axis.name(),
            a.row,
            a.query,
            a.distance
        );
    }
    assert_eq!(d.limiting, Some(RegimeAxis::InputP95));
    assert!((d.linf - 4.93).abs() < 0.005, "{}", d.linf);
    assert!((d.linf - (49904.3f64 / 1638.8).log2()).abs() < 1e-12);
    // The predecessor's 4.929 is the truncated percentiles' ratio, not this one.
    assert!((d.linf - 4.929148195733143).abs() > 1e-4);
    let with_rate = distance(&b, &m, true).unwrap();
    assert_eq!(with_rate.limiting, Some(RegimeAxis::Rate));
}

// ---------------------------------------------------------------------------------------------
// The file

#[test]
fn a_playbook_reads_back_equal_and_refuses_what_it_cannot_hold() {
    let book = Playbook::new(vec![
        measured(spec("a")),
        Row::illustrative(spec("b")).unwrap(),
    ])
    .unwrap();
    let json = book.to_json();
    assert!(json.contains("\"schema\": \"loadproof.playbook/v1\""));
    assert_eq!(Playbook::from_json(json.as_bytes()).unwrap(), book);
    assert_eq!(book.selectable().count(), 1);
    assert!(matches!(
        Playbook::new(vec![measured(spec("a")), measured(spec("a"))]),
        Err(PlaybookError::DuplicateId {
            first: 0,
            second: 1,
            ..
        })
    ));
    let other = json.replace("loadproof.playbook/v1", "loadproof.playbook/v2");
    assert!(matches!(
        Playbook::from_json(other.as_bytes()),
        Err(PlaybookError::Schema { .. })
    ));
    let twice = json.replace("\"id\": \"b\"", "\"id\": \"a\"");
    assert!(matches!(
        Playbook::from_json(twice.as_bytes()),
        Err(PlaybookError::DuplicateId { .. })
    ));
    let bad_row = json.replacen(&sha(0xaa), "", 1);
    let e = Playbook::from_json(bad_row.as_bytes()).unwrap_err();
    assert!(
        matches!(&e, PlaybookError::Malformed { detail, .. } if detail.contains("trace_sha256")),
        "{e}"
    );
}

#[test]
fn a_receipts_regime_is_the_schedule_it_fired_and_refuses_a_missing_or_foreign_one() {
    let r = Receipt::from_json(SIM_RECEIPT).unwrap();
    let window = Window::from_secs(0.1).unwrap();
    let (axes, n) = RegimeAxes::of_receipt(&r, window).unwrap();
    // The embedded schedule, read by hand: `timestamp` in ms (sec_multiplier 0.001).
    let text = String::from_utf8(r.block("plan/timed_trace.jsonl").unwrap()).unwrap();
    let (mut at, mut input, mut output) = (vec![], vec![], vec![]);
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        at.push(v["timestamp"].as_i64().unwrap() * 1_000_000);
        input.push(v["input_length"].as_u64().unwrap() as u32);
        output.push(v["output_length"].as_u64().unwrap() as u32);
    }
    assert_eq!(n, at.len());
    assert_eq!(
        axes,
        RegimeAxes::of_schedule(&at, &input, &output, window).unwrap()
    );
    assert_eq!(axes.window_s, 0.1);

    let mut missing = r.clone();
    missing.evidence.remove("plan/timed_trace.jsonl");
    let e = RegimeAxes::of_receipt(&missing, window).unwrap_err();
    assert!(e.to_string().contains("plan/timed_trace.jsonl"), "{e}");

    let mut foreign = r.clone();
    foreign.protocol.timed_trace_sha256 = Some(sha(0x11));
    let e = RegimeAxes::of_receipt(&foreign, window).unwrap_err();
    assert!(e.to_string().contains("the protocol names"), "{e}");

    let mut no_multiplier = r;
    no_multiplier.protocol.sec_multiplier = None;
    let e = RegimeAxes::of_receipt(&no_multiplier, window).unwrap_err();
    assert!(e.to_string().contains("sec_multiplier"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Properties

fn arb_repeat() -> impl Strategy<Value = Repeat> {
    (
        1e-3f64..1e6,
        1e-3f64..1e5,
        1.0f64..10.0,
        1e-3f64..1e4,
        1.0f64..10.0,
    )
        .prop_map(|(t, ttft, ttft_tail, itl, itl_tail)| Repeat {
            throughput_tok_s: t,
            ttft_p50_ms: ttft,
            ttft_p99_ms: ttft * ttft_tail,
            itl_p50_ms: itl,
            itl_p99_ms: itl * itl_tail,
        })
}

fn arb_row() -> impl Strategy<Value = Row> {
    (
        2usize..6,
        prop::collection::vec(arb_repeat(), 10),
        prop::collection::btree_map("[a-z_]{1,12}", "[ -~]{0,8}", 1..4),
        (
            1e-4f64..1e3,
            0.0f64..50.0,
            1.0f64..1e5,
            1.0f64..4.0,
            1.0f64..1e4,
            1.0f64..4.0,
        ),
        any::<bool>(),
        proptest::option::of(any::<i64>()),
    )
        .prop_map(
            |(n, reps, knobs, (rate, d, in50, in_tail, out50, out_tail), synth, verified)| {
                let mut s = spec("prop");
                s.delta = MeasuredDelta::from_repeats(&reps[..n], &reps[5..5 + n]).unwrap();
                s.identity.knobs = knobs;
                if synth {
                    s.identity.source_kind.prefixes = Prefixes::Synthesized;
                }
                s.regime = RegimeAxes {
                    rate_rps: rate,
                    burstiness: d,
                    window_s: 1.0,
                    input_p50: in50,
                    input_p95: in50 * in_tail,
                    output_p50: out50,
                    output_p95: out50 * out_tail,
                };
                s.provenance.baseline_receipts = (0..n as u8).map(sha).collect();
                s.provenance.treatment_receipts = (0..n as u8).map(|i| sha(100 + i)).collect();
                s.provenance.verified_unix_ns = verified;
                Row::illustrative(s).unwrap()
            },
        )
}

/// Any JSON value, a few levels deep.
fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        "[ -~]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Replaces the `k`-th node (depth-first) of `v` with `with`.
fn replace_nth(v: &mut serde_json::Value, k: &mut usize, with: &serde_json::Value) -> bool {
    if *k == 0 {
        *v = with.clone();
        return true;
    }
    *k -= 1;
    match v {
        serde_json::Value::Array(items) => items.iter_mut().any(|x| replace_nth(x, k, with)),
        serde_json::Value::Object(map) => map.values_mut().any(|x| replace_nth(x, k, with)),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_serialized_valid_row_reads_back_equal(row in arb_row()) {
        let back = Row::from_json(row.to_json().as_bytes()).unwrap();
        prop_assert_eq!(&back, &row);
        let as_measured = row
            .to_json()
            .replace("\"evidence\": \"illustrative\"", "\"evidence\": \"measured\"");
        match Row::from_json(as_measured.as_bytes()) {
            Ok(m) => {
                prop_assert!(m.provenance().verified_unix_ns.is_some());
                prop_assert_eq!(Row::from_json(m.to_json().as_bytes()).unwrap(), m);
            }
            Err(e) => {
                prop_assert!(row.provenance().verified_unix_ns.is_none());
                prop_assert!(e.to_string().contains("verified_unix_ns"));
            }
        }
        let book = Playbook::new(vec![row]).unwrap();
        prop_assert_eq!(Playbook::from_json(book.to_json().as_bytes()).unwrap(), book);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = Row::from_json(&bytes);
        let _ = Playbook::from_json(&bytes);
        let _ = serde_json::from_slice::<MatchPolicy>(&bytes);
        let _ = serde_json::from_slice::<Query>(&bytes);
    }

    #[test]
    fn arbitrary_json_never_panics(v in arb_json()) {
        let bytes = v.to_string();
        let _ = Row::from_json(bytes.as_bytes());
        let _ = Playbook::from_json(bytes.as_bytes());
        let _ = serde_json::from_str::<MatchPolicy>(&bytes);
        let _ = serde_json::from_str::<Query>(&bytes);
    }

    #[test]
    fn a_valid_row_with_any_node_replaced_never_panics_and_what_reads_matches(
        row in arb_row(),
        k in 0usize..400,
        with in arb_json(),
    ) {
        let mut v: serde_json::Value = serde_json::from_str(&row.to_json()).unwrap();
        let mut k = k;
        replace_nth(&mut v, &mut k, &with);
        let book = serde_json::json!({"schema": "loadproof.playbook/v1", "rows": [v]});
        if let Ok(b) = Playbook::from_json(book.to_string().as_bytes()) {
            // Whatever reads is a row the matcher can judge without failing.
            let r = b.match_query(&query(), &MatchPolicy::default()).unwrap();
            prop_assert_eq!(r.selected.len() + r.rejected.len(), 1);
            prop_assert_eq!(Row::from_json(b.rows()[0].to_json().as_bytes()).unwrap(), b.rows()[0].clone());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Experiments: two arms of receipts as one experiment

mod experiment {
    use std::collections::BTreeMap;

    use super::common::{ingest, ingest_with, opts, shared};
    use super::{SIM_RECEIPT, audits};
    use loadproof_core::audit::audit;
    use loadproof_core::claim::{Arm, Repeat};
    use loadproof_core::plan::{Plan, PlanOptions, TimeScale, TimedTraceReader};
    use loadproof_core::playbook::{
        AxesError, Concurrency, Experiment, ExperimentError, MeasuredDelta, Prefixes, Provenance,
        RegimeAxes, Row, RowSpec, SIM_ENGINE, SYNTHETIC_SOURCE_NOTE, Traffic, traffic_of_notes,
    };
    use loadproof_core::receipt::{Axis, Evidence, Receipt, block, sha256_hex};
    use loadproof_core::synth::{SYNTH_SCHEMA, check_sidecar};
    use loadproof_core::{Trace, Window};

    fn knobs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// The real sim receipt as repeat `i` with `pairs` as its knobs (notes differ, so each
    /// repeat has its own digest; the audit reads neither).
    fn receipt(i: usize, pairs: &[(&str, &str)]) -> Receipt {
        let mut r = Receipt::from_json(SIM_RECEIPT).unwrap();
        r.notes.push(format!("repeat {i}"));
        r.subject.knobs = knobs(pairs);
        r
    }

    /// Two baseline receipts at scheduling_policy=64 and two treatment receipts at 2, block_size
    /// held at 16 in all four.
    fn arms() -> (Vec<Receipt>, Vec<Receipt>) {
        let base = (0..2)
            .map(|i| receipt(i, &[("scheduling_policy", "64"), ("block_size", "16")]))
            .collect();
        let treat = (2..4)
            .map(|i| receipt(i, &[("scheduling_policy", "2"), ("block_size", "16")]))
            .collect();
        (base, treat)
    }

    /// The fixture spans 0.4 s: a tenth of a second gives burstiness five windows.
    fn tenth() -> Window {
        Window::from_secs(0.1).unwrap()
    }

    fn of(
        base: &[Receipt],
        treat: &[Receipt],
        stated: &[(&str, &str)],
    ) -> Result<Experiment, ExperimentError> {
        let b: Vec<&Receipt> = base.iter().collect();
        let t: Vec<&Receipt> = treat.iter().collect();
        Experiment::of(&b, &t, &knobs(stated), tenth())
    }

    #[test]
    fn two_arms_differing_only_in_the_stated_knob_are_one_experiment() {
        let (base, treat) = arms();
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap();
        let id = e.identity();
        assert_eq!(
            (
                id.model.as_str(),
                id.model_revision.as_str(),
                id.gpu_sku.as_str(),
                id.engine.as_str(),
                id.engine_version.as_str()
            ),
            (
                "sim",
                "none (simulator)",
                "none (simulator)",
                SIM_ENGINE,
                "0.1.0"
            )
        );
        assert_eq!(id.source_kind.traffic, Traffic::Recorded);
        assert_eq!(id.source_kind.prefixes, Prefixes::Recorded);
        assert_eq!(id.concurrency, Concurrency::Uncapped);
        assert_eq!(id.knobs, knobs(&[("scheduling_policy", "2")]));
        assert_eq!(
            e.trace_sha256(),
            base[0].protocol.trace_sha256.as_deref().unwrap()
        );
        assert_eq!(e.repeats(), 2);
        assert!(e.simulator());
        assert_eq!(
            e.baseline_knobs(),
            &BTreeMap::from([("scheduling_policy".to_owned(), Some("64".to_owned()))])
        );
        assert_eq!(e.held_knobs(), &knobs(&[("block_size", "16")]));
        assert!(
            e.notes().iter().any(|n| n
                == "knob under test: baseline scheduling_policy=64, treatment scheduling_policy=2"),
            "{:?}",
            e.notes()
        );
        // Arrivals 0, 200, 400 ms: counts 1,0,1,0,1 in five 0.1 s windows.
        let r = e.regime();
        assert_eq!(r.rate_rps, 7.5);
        assert!((r.burstiness - 0.4).abs() < 1e-12, "{}", r.burstiness);
        assert_eq!((r.window_s, r.input_p50, r.input_p95), (0.1, 40.0, 58.0));
        assert_eq!((r.output_p50, r.output_p95), (4.0, 4.9));

        // A baseline without the knob at all is a baseline too.
        let bare: Vec<Receipt> = (0..2)
            .map(|i| receipt(i, &[("block_size", "16")]))
            .collect();
        let e2 = of(&bare, &treat, &[("scheduling_policy", "2")]).unwrap();
        assert_eq!(e2.baseline_knobs()["scheduling_policy"], None);

        // The experiment's parts make a measured row with the receipts' audits.
        let digest = |r: &Receipt| sha256_hex(r.to_json().as_bytes());
        let audited = |arm: &[Receipt]| -> Vec<(String, loadproof_core::audit::Audit)> {
            arm.iter().map(|r| (digest(r), audit(r))).collect()
        };
        let (ba, ta) = (audited(&base), audited(&treat));
        let repeats = |arm: &[(String, loadproof_core::audit::Audit)]| -> Vec<Repeat> {
            arm.iter()
                .map(|(_, a)| Repeat::from_audit(a).unwrap())
                .collect()
        };
        let spec = RowSpec {
            id: "sim-max-num-seqs-2".into(),
            identity: e.identity().clone(),
            regime: *e.regime(),
            delta: MeasuredDelta::from_repeats(&repeats(&ba), &repeats(&ta)).unwrap(),
            provenance: Provenance {
                trace_sha256: e.trace_sha256().to_owned(),
                baseline_receipts: ba.iter().map(|(s, _)| s.clone()).collect(),
                treatment_receipts: ta.iter().map(|(s, _)| s.clone()).collect(),
                verified_unix_ns: Some(1_795_961_900_000_000_000),
                knobs_read_back: Default::default(),
            },
            notes: e.notes().to_vec(),
        };
        let row = Row::measured(spec, &audits(&ba), &audits(&ta)).unwrap();
        assert!(row.is_selectable());
    }

    #[test]
    fn receipts_of_another_protocol_are_refused_naming_the_differing_field() {
        let (base, mut treat) = arms();
        treat[1].protocol.base_url = Some("http://127.0.0.1:9".into());
        treat[1].protocol = treat[1].protocol.clone().sealed();
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err();
        let ExperimentError::ProtocolDiffers {
            arm,
            index,
            differences,
            ..
        } = &e
        else {
            panic!("{e}");
        };
        assert_eq!((*arm, *index), (Arm::Treatment, 1));
        assert_eq!(differences.len(), 1, "{differences:?}");
        assert_eq!(differences[0].field, "base_url");
        assert_eq!(differences[0].first, "\"http://127.0.0.1:18311\"");
        assert_eq!(differences[0].found, "\"http://127.0.0.1:9\"");
        assert_eq!(e.receipt(), Some((Arm::Treatment, 1)));
        let text = e.to_string();
        assert!(
            text.starts_with("treatment receipt 1 ran another protocol"),
            "{text}"
        );
        assert!(
            text.contains("base_url \"http://127.0.0.1:18311\" vs \"http://127.0.0.1:9\""),
            "{text}"
        );

        // Another trace: every field that names it differs, each named.
        let (mut base, treat) = arms();
        base[1].protocol.trace_sha256 = Some("ab".repeat(32));
        base[1].protocol.requests = Some(4);
        base[1].protocol = base[1].protocol.clone().sealed();
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err();
        let ExperimentError::ProtocolDiffers { differences, .. } = &e else {
            panic!("{e}");
        };
        let fields: Vec<&str> = differences.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(fields, ["requests", "trace_sha256"]);
    }

    #[test]
    fn a_subject_axis_that_differs_or_is_unknown_is_refused() {
        let (mut base, treat) = arms();
        base[1].subject.gpu_sku = Axis::Known {
            value: "NVIDIA H100 80GB HBM3".into(),
            source: "caller".into(),
        };
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err();
        assert_eq!(
            e,
            ExperimentError::SubjectDiffers {
                arm: Arm::Baseline,
                index: 1,
                axis: "gpu_sku",
                first: "none (simulator)".into(),
                found: "NVIDIA H100 80GB HBM3".into(),
            }
        );
        let (base, mut treat) = arms();
        treat[0].subject.engine_version = Axis::Unknown {
            reason: "not stated: pass --engine-version".into(),
        };
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err();
        assert!(
            matches!(
                &e,
                ExperimentError::SubjectUnknown {
                    arm: Arm::Treatment,
                    index: 0,
                    axis: "engine_version",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("pass --engine-version"), "{e}");
        let (base, mut treat) = arms();
        treat[1].subject.simulator = false;
        assert!(matches!(
            of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err(),
            ExperimentError::SimulatorDiffers {
                arm: Arm::Treatment,
                index: 1,
                first: true,
                found: false
            }
        ));
    }

    #[test]
    fn a_knob_the_treatment_does_not_set_to_its_stated_value_is_refused() {
        let (base, mut treat) = arms();
        treat[1]
            .subject
            .knobs
            .insert("scheduling_policy".into(), "4".into());
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err();
        assert_eq!(
            e,
            ExperimentError::KnobNotInTreatment {
                index: 1,
                knob: "scheduling_policy".into(),
                stated: "2".into(),
                found: Some("4".into()),
            }
        );
        // A knob no receipt states at all.
        let (base, treat) = arms();
        let e = of(&base, &treat, &[("enable_chunked_prefill", "true")]).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "treatment receipt 0: knob enable_chunked_prefill is absent, but the stated treatment is enable_chunked_prefill=true"
            ),
            "{e}"
        );
        let (base, treat) = arms();
        assert_eq!(
            of(&base, &treat, &[]).unwrap_err(),
            ExperimentError::NoKnobs
        );
    }

    #[test]
    fn a_baseline_already_at_the_treatment_value_is_refused() {
        let (mut base, treat) = arms();
        base[0]
            .subject
            .knobs
            .insert("scheduling_policy".into(), "2".into());
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err();
        assert_eq!(
            e,
            ExperimentError::KnobInBaseline {
                index: 0,
                knob: "scheduling_policy".into(),
                value: "2".into(),
            }
        );
        assert!(
            e.to_string().contains("is the stated treatment itself"),
            "{e}"
        );
        // Nor may the baseline arm mix two other settings.
        let (mut base, treat) = arms();
        base[1]
            .subject
            .knobs
            .insert("scheduling_policy".into(), "32".into());
        assert!(matches!(
            of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err(),
            ExperimentError::BaselineKnobDiffers { index: 1, .. }
        ));
    }

    #[test]
    fn a_knob_not_under_test_must_be_equal_in_every_receipt() {
        let (base, mut treat) = arms();
        treat[0]
            .subject
            .knobs
            .insert("block_size".into(), "32".into());
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err();
        assert_eq!(
            e,
            ExperimentError::KnobDiffers {
                arm: Arm::Treatment,
                index: 0,
                knob: "block_size".into(),
                first: Some("16".into()),
                found: Some("32".into()),
            }
        );
        // Stating it as a knob of the experiment too makes it one.
        let (mut base, mut treat) = arms();
        for r in &mut treat {
            r.subject.knobs.insert("block_size".into(), "32".into());
        }
        base[0].subject.knobs.remove("block_size");
        base[1].subject.knobs.remove("block_size");
        let e = of(
            &base,
            &treat,
            &[("scheduling_policy", "2"), ("block_size", "32")],
        )
        .unwrap();
        assert_eq!(e.identity().knobs.len(), 2);
    }

    #[test]
    fn unequal_arms_and_a_single_repeat_are_refused() {
        let (base, treat) = arms();
        assert_eq!(
            of(&base, &treat[..1], &[("scheduling_policy", "2")]).unwrap_err(),
            ExperimentError::UnequalArms {
                baseline: 2,
                treatment: 1
            }
        );
        let e = of(&base[..1], &treat[..1], &[("scheduling_policy", "2")]).unwrap_err();
        assert_eq!(e, ExperimentError::TooFewRepeats { repeats: 1 });
        assert!(e.to_string().contains("one run has no spread"), "{e}");
    }

    #[test]
    fn a_receipt_without_its_timed_trace_is_refused() {
        let (base, mut treat) = arms();
        treat[1].evidence.remove(block::TIMED_TRACE);
        let e = of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err();
        assert_eq!(
            e,
            ExperimentError::TimedTraceMissing {
                arm: Arm::Treatment,
                index: 1
            }
        );
        assert!(
            e.to_string().contains("does not embed the timed_trace"),
            "{e}"
        );
        // Embedded, but not the bytes its digest names.
        let (mut base, treat) = arms();
        let block = base[0].evidence.get_mut(block::TIMED_TRACE).unwrap();
        block.content = block
            .content
            .replace("\"timestamp\": 400", "\"timestamp\": 401");
        assert!(matches!(
            of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err(),
            ExperimentError::TimedTraceUnverified {
                arm: Arm::Baseline,
                index: 0,
                ..
            }
        ));
        // Another file, whose own digest holds, than the protocol names.
        let (mut base, treat) = arms();
        base[1].evidence.insert(
            block::TIMED_TRACE.to_owned(),
            Evidence::of(b"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n"),
        );
        assert!(matches!(
            of(&base, &treat, &[("scheduling_policy", "2")]).unwrap_err(),
            ExperimentError::TimedTraceDiffers {
                arm: Arm::Baseline,
                index: 1,
                ..
            }
        ));
    }

    #[test]
    fn the_regime_needs_a_window_the_schedule_spans() {
        // 0.4 s of arrivals fit in one 1 s window: no burstiness, no row.
        let (base, treat) = arms();
        let b: Vec<&Receipt> = base.iter().collect();
        let t: Vec<&Receipt> = treat.iter().collect();
        let e = Experiment::of(
            &b,
            &t,
            &knobs(&[("scheduling_policy", "2")]),
            Window::ONE_SECOND,
        )
        .unwrap_err();
        assert!(
            matches!(e, ExperimentError::Axes(AxesError::Undefined { .. })),
            "{e}"
        );
    }

    #[test]
    fn traffic_is_synthetic_only_when_a_verified_synth_sidecar_says_so() {
        let sidecar = serde_json::json!({
            "schema": SYNTH_SCHEMA,
            "sha256": "ab12",
            "generator_version": 3,
            "spec": {"seed": 42},
            "target": {"rate_rps": 2.0, "burstiness": 2.0, "window_s": 1.0},
        })
        .to_string();
        let verified = check_sidecar(&sidecar, "t.jsonl.synth.json", "ab12");
        assert!(verified.note().starts_with(SYNTHETIC_SOURCE_NOTE));
        // `plan` prefixes the note with "source "; `trace inspect` keeps it bare.
        let planned = vec!["other".to_owned(), format!("source {}", verified.note())];
        assert_eq!(traffic_of_notes(&planned).unwrap(), Traffic::Synthetic);
        assert_eq!(
            traffic_of_notes(&[verified.note().to_owned()]).unwrap(),
            Traffic::Synthetic
        );
        let mismatch = check_sidecar(&sidecar, "t.jsonl.synth.json", "cd34");
        let e = traffic_of_notes(&[format!("source {}", mismatch.note())]).unwrap_err();
        assert!(
            matches!(&e, ExperimentError::SourceKindUnknown { note } if note.contains("does NOT match")),
            "{e}"
        );
        assert_eq!(traffic_of_notes(&[]).unwrap(), Traffic::Recorded);
    }

    // -----------------------------------------------------------------------------------------
    // RegimeAxes::of_schedule

    /// The plan's file as a receipt reads it back: its own multiplier and chunk size.
    fn fired(trace: Trace, options: PlanOptions) -> (RegimeAxes, RegimeAxes) {
        let window = options.window;
        let plan = Plan::new(trace, options).unwrap();
        let mut file = Vec::new();
        plan.write_timed_trace(&mut file).unwrap();
        let bench = plan.bench_command();
        let mut check = plan.reader(&bench).unwrap();
        check.push(&file);
        let back = check.finish().unwrap();
        let fidelity = plan.verify(&back, &bench);
        let doc = plan.document("source", &back, bench, fidelity);
        assert!(doc.verified);
        let mut reader =
            TimedTraceReader::new(&doc.timed_trace.sec_multiplier, doc.timed_trace.chunk_size)
                .unwrap();
        for piece in file.chunks(7919) {
            reader.push(piece);
        }
        let read = reader.finish().unwrap();
        assert_eq!(read.sha256, doc.timed_trace.sha256);
        let schedule = RegimeAxes::of_schedule(
            &read.arrival_ns,
            &read.input_tokens,
            &read.output_tokens,
            window,
        )
        .unwrap();
        (schedule, RegimeAxes::of(&doc.regime).unwrap())
    }

    #[test]
    fn of_schedule_on_a_plans_fired_file_equals_the_plans_regime() {
        let mut first400 = opts();
        first400.filter.max_rows = Some(400);
        let cases: Vec<(&str, Trace, PlanOptions)> = vec![
            (
                "BurstGPT_1",
                ingest(&shared("traces/burstgpt/BurstGPT_1.first400.csv")).unwrap(),
                PlanOptions::default(),
            ),
            (
                "BurstGPT_3 at 3 s",
                ingest(&shared("traces/burstgpt/BurstGPT_3.first400.csv")).unwrap(),
                PlanOptions {
                    window: Window::from_secs(3.0).unwrap(),
                    ..PlanOptions::default()
                },
            ),
            (
                "Mooncake first 400",
                ingest_with(
                    &shared("traces/mooncake/conversation_trace.jsonl"),
                    first400,
                )
                .unwrap(),
                PlanOptions::default(),
            ),
            (
                "Azure conv ×2",
                ingest(&shared(
                    "traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv",
                ))
                .unwrap(),
                PlanOptions {
                    time_scale: TimeScale::parse("2").unwrap(),
                    ..PlanOptions::default()
                },
            ),
        ];
        for (name, trace, options) in cases {
            let (schedule, planned) = fired(trace, options);
            // Exactly: the same statistics over the same integers.
            assert_eq!(schedule, planned, "{name}");
        }
    }

    #[test]
    fn of_schedule_refuses_what_is_not_a_schedule() {
        let w = Window::ONE_SECOND;
        assert!(matches!(
            RegimeAxes::of_schedule(&[0, 2_000_000_000], &[1, 2], &[1], w),
            Err(AxesError::Schedule { .. })
        ));
        assert!(matches!(
            RegimeAxes::of_schedule(&[], &[], &[], w),
            Err(AxesError::Undefined { .. })
        ));
        let e = RegimeAxes::of_schedule(&[0, 3_000_000_000, 2_000_000_000], &[1; 3], &[1; 3], w)
            .unwrap_err();
        assert!(e.to_string().contains("arrival 2"), "{e}");
        // Rebased to the first arrival: a schedule that starts late reads as one that starts
        // at 0.
        let late = RegimeAxes::of_schedule(
            &[5_000_000_000, 5_500_000_000, 7_000_000_000],
            &[10, 20, 30],
            &[1, 2, 3],
            w,
        )
        .unwrap();
        let zero = RegimeAxes::of_schedule(
            &[0, 500_000_000, 2_000_000_000],
            &[10, 20, 30],
            &[1, 2, 3],
            w,
        )
        .unwrap();
        assert_eq!(late, zero);
        assert_eq!(zero.rate_rps, 1.5);
    }
}
