//! Two receipts side by side through core's public API: every rule of `compare` by name, on
//! the real sim receipt (`data/receipt/native_sim.json`) and variations of it.

use loadproof_core::audit::{Audit, Standing, audit};
use loadproof_core::claim::{Arm, Metric, Repeat};
use loadproof_core::compare::{
    Better, CAVEAT, COMPARE_SCHEMA, Comparison, Rule, Side, compare, metric_names, playbook_metric,
};
use loadproof_core::receipt::{Axis, Receipt, sha256_hex};
use proptest::prelude::*;

const SIM_RECEIPT: &[u8] = include_bytes!("data/receipt/native_sim.json");

/// One side: a receipt, its file's digest and its audit.
struct Arm1 {
    source: String,
    sha: String,
    receipt: Receipt,
    audit: Audit,
}

impl Arm1 {
    /// The sim receipt with a note (so each file has its own digest) and `tamper` applied.
    fn sim(source: &str, tamper: impl Fn(&mut Receipt)) -> Arm1 {
        let mut r = Receipt::from_json(SIM_RECEIPT).unwrap();
        r.notes.push(source.to_owned());
        tamper(&mut r);
        let sha = sha256_hex(r.to_json().as_bytes());
        let audit = audit(&r);
        Arm1 {
            source: source.to_owned(),
            sha,
            receipt: r,
            audit,
        }
    }

    fn knob(source: &str, value: &str) -> Arm1 {
        Arm1::sim(source, |r| {
            r.subject
                .knobs
                .insert("scheduling_policy".to_owned(), value.to_owned());
        })
    }

    fn side(&self) -> Side<'_> {
        Side {
            source: &self.source,
            file_sha256: &self.sha,
            protocol: &self.receipt.protocol,
            subject: &self.receipt.subject,
            audit: &self.audit,
        }
    }
}

fn pair(b: &Arm1, t: &Arm1) -> Comparison {
    compare(&b.side(), &t.side())
}

fn rules(c: &Comparison) -> Vec<Rule> {
    c.reasons.iter().map(|r| r.rule).collect()
}

#[test]
fn two_qualified_receipts_of_one_protocol_differing_in_a_knob_are_comparable() {
    let b = Arm1::knob("a.json", "64");
    let t = Arm1::knob("b.json", "2");
    assert!(b.audit.qualified, "{:?}", b.audit.refusals);
    let c = pair(&b, &t);
    assert!(c.comparable, "{:#?}", c.reasons);
    assert_eq!(c.schema, COMPARE_SCHEMA);
    assert!(c.same_protocol && c.same_subject);
    assert!(c.protocol_differences.is_empty() && c.subject_differences.is_empty());
    assert_eq!(c.knobs_changed.len(), 1);
    let k = &c.knobs_changed[0];
    assert_eq!(
        (
            k.knob.as_str(),
            k.baseline.as_deref(),
            k.treatment.as_deref()
        ),
        ("scheduling_policy", Some("64"), Some("2"))
    );
    assert!(
        c.notes
            .iter()
            .any(|n| n == "change under test: knob scheduling_policy 64 → 2")
    );
    assert!(c.notes.iter().any(|n| n.contains("a simulator")));
    assert!(c.baseline.qualified && c.treatment.qualified);
    assert_eq!(c.baseline.source, "a.json");
    assert_eq!(c.treatment.file_sha256, t.sha);
    // The same audit on both sides (only a note and a knob differ): every change is 0.
    for m in &c.metrics {
        if let (Some(x), Some(y)) = (m.baseline, m.treatment) {
            assert_eq!(x, y, "{}", m.metric);
            assert_eq!(m.change, Some(0.0), "{}", m.metric);
        }
    }
}

#[test]
fn every_comparison_says_one_receipt_per_arm_is_an_observation_not_an_effect() {
    let c = pair(&Arm1::knob("a", "64"), &Arm1::knob("b", "2"));
    assert!(c.observation_only);
    assert_eq!(c.repeats_per_arm, 1);
    assert_eq!(c.min_repeats, 2);
    assert_eq!(c.caveat, CAVEAT);
    assert!(c.caveat.contains("observation, not a measured effect"));
    assert!(c.caveat.contains("no spread"));
    let json: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    assert_eq!(json["observation_only"], true);
    assert_eq!(json["caveat"], CAVEAT);
}

#[test]
fn a_comparison_of_two_protocols_names_every_differing_field() {
    let b = Arm1::knob("a", "64");
    let t = Arm1::sim("b", |r| {
        r.subject
            .knobs
            .insert("scheduling_policy".into(), "2".into());
        r.protocol.requests = Some(4);
        r.protocol.base_url = Some("http://127.0.0.1:9".into());
        r.protocol.sec_multiplier = Some("0.002".into());
        r.protocol = r.protocol.clone().sealed();
    });
    let c = pair(&b, &t);
    assert!(!c.comparable);
    assert!(!c.same_protocol);
    let fields: Vec<&str> = c
        .protocol_differences
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    assert_eq!(fields, ["base_url", "requests", "sec_multiplier"]);
    let d = &c.protocol_differences[1];
    assert_eq!((d.baseline.as_str(), d.treatment.as_str()), ("3", "4"));
    let reason = c
        .reasons
        .iter()
        .find(|r| r.rule == Rule::NotOneProtocol)
        .unwrap();
    for f in fields {
        assert!(reason.message.contains(f), "{}", reason.message);
    }
    assert!(reason.message.contains(&b.receipt.protocol.key));
    assert!(reason.message.contains(&t.receipt.protocol.key));
    assert!(
        reason
            .message
            .contains("base_url \"http://127.0.0.1:18311\" vs \"http://127.0.0.1:9\"")
    );
}

#[test]
fn an_edited_protocol_key_alone_is_not_one_protocol_and_says_so() {
    let b = Arm1::knob("a", "64");
    let t = Arm1::sim("b", |r| r.protocol.key = "sha256:00".into());
    let c = pair(&b, &t);
    assert!(!c.same_protocol);
    assert_eq!(c.protocol_differences.len(), 1);
    assert_eq!(c.protocol_differences[0].field, "key");
    assert!(rules(&c).contains(&Rule::NotOneProtocol));
    // The audit itself calls the edited key an inconsistency: the side is unqualified too.
    assert!(rules(&c).contains(&Rule::Unqualified));
}

#[test]
fn a_different_model_gpu_or_simulator_flag_is_not_one_subject() {
    let b = Arm1::knob("a", "64");
    let mut t = Arm1::knob("b", "2");
    t.receipt.subject.model = Axis::Known {
        value: "other".into(),
        source: "caller".into(),
    };
    t.receipt.subject.gpu_sku = Axis::Unknown {
        reason: "not stated".into(),
    };
    t.receipt.subject.simulator = false;
    let c = pair(&b, &t);
    assert!(!c.comparable);
    assert!(!c.same_subject);
    let axes: Vec<&str> = c
        .subject_differences
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    assert_eq!(axes, ["model", "gpu_sku", "simulator"]);
    assert_eq!(c.subject_differences[0].baseline, "\"sim\"");
    assert_eq!(c.subject_differences[0].treatment, "\"other\"");
    assert_eq!(c.subject_differences[1].treatment, "unknown (not stated)");
    let reason = c
        .reasons
        .iter()
        .find(|r| r.rule == Rule::NotOneSubject)
        .unwrap();
    assert!(reason.message.contains("model \"sim\" vs \"other\""));
    assert!(reason.message.contains("simulator true vs false"));
    // Knobs are the change under test, never a subject difference.
    assert_eq!(c.knobs_changed.len(), 1);
}

#[test]
fn an_unknown_axis_on_both_sides_is_not_shown_to_be_one_subject() {
    let unknown = |r: &mut Receipt| {
        r.subject.engine_version = Axis::Unknown {
            reason: "unreported".into(),
        }
    };
    let c = pair(&Arm1::sim("a", unknown), &Arm1::sim("b", unknown));
    assert!(!c.same_subject);
    assert_eq!(c.subject_differences[0].field, "engine_version");
}

#[test]
fn a_knob_stated_on_one_side_only_is_a_change_and_equal_knobs_are_held() {
    let b = Arm1::sim("a", |r| {
        r.subject.knobs.insert("block_size".into(), "16".into());
    });
    let t = Arm1::sim("b", |r| {
        r.subject.knobs.insert("block_size".into(), "16".into());
        r.subject
            .knobs
            .insert("scheduling_policy".into(), "2".into());
    });
    let c = pair(&b, &t);
    assert_eq!(c.knobs_changed.len(), 1);
    assert_eq!(c.knobs_changed[0].baseline, None);
    assert_eq!(
        c.knobs_changed[0].to_string(),
        "scheduling_policy absent → 2"
    );
    assert_eq!(
        c.knobs_held.get("block_size").map(String::as_str),
        Some("16")
    );
    assert!(
        c.notes
            .iter()
            .any(|n| n == "knobs held equal: block_size=16")
    );
}

#[test]
fn an_a_a_pair_is_comparable_and_says_no_knob_differs() {
    let c = pair(&Arm1::sim("a", |_| {}), &Arm1::sim("b", |_| {}));
    assert!(c.comparable, "{:?}", c.reasons);
    assert!(c.knobs_changed.is_empty());
    assert!(c.notes.iter().any(|n| n.contains("no knob differs")));
    assert!(c.notes.iter().any(|n| n.contains("an A/A pair")));
    // Two protocols with no knob changed are no A/A pair: only the absence of a knob is noted.
    let t = Arm1::sim("b", |r| {
        r.protocol.requests = Some(9);
        r.protocol = r.protocol.clone().sealed();
    });
    let c = pair(&Arm1::sim("a", |_| {}), &t);
    assert!(!c.same_protocol);
    assert!(
        c.notes
            .iter()
            .any(|n| n == "no knob differs between the receipts")
    );
    assert!(!c.notes.iter().any(|n| n.contains("A/A")));
}

#[test]
fn a_side_with_a_failing_digest_is_named_with_its_block_and_its_refusals() {
    let b = Arm1::knob("a.json", "64");
    let t = Arm1::sim("b.json", |r| {
        r.subject
            .knobs
            .insert("scheduling_policy".into(), "2".into());
        let e = r.evidence.get_mut("native/events.jsonl").unwrap();
        e.content = e.content.replacen('1', "2", 1);
    });
    let c = pair(&b, &t);
    assert!(!c.comparable);
    assert_eq!(rules(&c), [Rule::DigestFailure, Rule::Unqualified]);
    assert!(c.reasons.iter().all(|r| r.arm == Some(Arm::Treatment)));
    assert_eq!(c.treatment.failing_blocks, ["native/events.jsonl"]);
    assert!(!c.treatment.digests_ok && !c.treatment.qualified);
    assert!(c.reasons[0].message.contains("\"native/events.jsonl\""));
    assert!(c.reasons[0].message.contains("b.json"));
    assert!(c.reasons[1].message.contains("unqualified"));
    assert!(c.reasons[1].message.contains(&c.treatment.refusals[0]));
    // Facts that needed the block are unread: absent, never 0.
    let tput = c.metric("throughput_tok_s").unwrap();
    assert!(tput.baseline.is_some());
    assert_eq!(
        (tput.treatment, tput.change, tput.relative_change),
        (None, None, None)
    );
    assert_eq!(tput.note.as_deref(), Some("unread in the treatment"));
}

#[test]
fn an_unqualified_baseline_is_refused_by_name() {
    let mut b = Arm1::knob("a", "64");
    b.audit.standings.insert(
        "window".into(),
        Standing::refused("isolation not established: no lease", "a lease"),
    );
    let t = Arm1::knob("b", "2");
    let c = pair(&b, &t);
    assert_eq!(rules(&c), [Rule::Unqualified]);
    assert_eq!(c.reasons[0].arm, Some(Arm::Baseline));
    assert!(!c.baseline.qualified);
    assert_eq!(
        c.baseline.refusals,
        ["window: isolation not established: no lease"]
    );
    assert!(
        c.reasons[0]
            .message
            .contains("window: isolation not established: no lease"),
        "{}",
        c.reasons[0].message
    );
}

#[test]
fn the_same_file_on_both_sides_is_one_observation_not_two() {
    let a = Arm1::knob("a", "64");
    let c = pair(&a, &a);
    assert_eq!(rules(&c), [Rule::SameFile]);
    assert!(c.reasons[0].message.contains(&a.sha));
}

#[test]
fn relative_change_is_absent_when_the_baseline_is_zero() {
    let b = Arm1::knob("a", "64");
    let mut t = Arm1::knob("b", "2");
    t.audit.ledger.as_mut().unwrap().failed = Some(2);
    let c = pair(&b, &t);
    let failed = c.metric("failed_requests").unwrap();
    assert_eq!(failed.baseline, Some(0.0));
    assert_eq!(failed.treatment, Some(2.0));
    assert_eq!(failed.change, Some(2.0));
    assert_eq!(failed.relative_change, None);
    assert_eq!(
        failed.note.as_deref(),
        Some("the baseline is 0: no relative change")
    );
    assert_eq!(failed.better, Some(Better::Lower));
    let json: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    let row = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "failed_requests")
        .unwrap();
    assert!(row["relative_change"].is_null());
}

#[test]
fn change_and_relative_change_are_treatment_minus_baseline_over_baseline() {
    let b = Arm1::knob("a", "64");
    let mut t = Arm1::knob("b", "2");
    let base = b
        .audit
        .client
        .as_ref()
        .unwrap()
        .output_tokens_per_s
        .unwrap();
    t.audit.client.as_mut().unwrap().output_tokens_per_s = Some(base * 1.5);
    let ttft = t
        .audit
        .latency
        .iter_mut()
        .find(|l| l.metric == "ttft")
        .unwrap();
    let p99 = ttft.p99_ms.unwrap();
    ttft.p99_ms = Some(p99 / 2.0);
    let c = pair(&b, &t);
    let tput = c.metric("throughput_tok_s").unwrap();
    assert_eq!(tput.change, Some(base * 1.5 - base));
    assert_eq!(tput.relative_change, Some((base * 1.5 - base) / base));
    assert_eq!(tput.better, Some(Better::Higher));
    let lat = c.metric("ttft_p99_ms").unwrap();
    assert_eq!(lat.relative_change, Some((p99 / 2.0 - p99) / p99));
    assert_eq!(lat.unit, "ms");
}

#[test]
fn an_unread_metric_is_absent_on_that_side_never_zero() {
    let b = Arm1::knob("a", "64");
    let mut t = Arm1::knob("b", "2");
    t.audit.latency.retain(|l| l.metric != "itl");
    t.audit.engine.generation_tokens_delta = None;
    let c = pair(&b, &t);
    for name in ["itl_p50_ms", "itl_p99_ms", "engine_generation_tokens_delta"] {
        let m = c.metric(name).unwrap();
        assert!(m.baseline.is_some(), "{name}");
        assert_eq!(
            (m.treatment, m.change, m.relative_change),
            (None, None, None)
        );
    }
}

#[test]
fn the_playbook_metrics_are_read_as_the_playbook_reads_a_repeat() {
    let b = Arm1::knob("a", "64");
    let t = Arm1::knob("b", "2");
    let c = pair(&b, &t);
    let repeat = Repeat::from_audit(&b.audit).unwrap();
    for m in Metric::ALL {
        assert_eq!(playbook_metric(m.name()), Some(m));
        let row = c.metric(m.name()).unwrap();
        assert_eq!(row.baseline, Some(repeat.get(m)), "{m}");
    }
    let names: Vec<&str> = c.metrics.iter().map(|m| m.metric.as_str()).collect();
    assert_eq!(names, metric_names().collect::<Vec<_>>());
    for wanted in [
        "tpot_p90_ms",
        "e2el_p99_ms",
        "completed_requests",
        "failed_requests",
        "output_tokens",
        "engine_generation_tokens_delta",
        "engine_prompt_tokens_delta",
    ] {
        assert!(names.contains(&wanted), "{wanted}");
    }
    let completed = c.metric("completed_requests").unwrap();
    assert_eq!(completed.baseline, Some(3.0));
    let out = c.metric("output_tokens").unwrap();
    assert_eq!(
        out.baseline,
        Some(b.audit.client.as_ref().unwrap().output_tokens as f64)
    );
}

#[test]
fn the_comparison_reads_back_from_its_json() {
    let c = pair(&Arm1::knob("a", "64"), &Arm1::knob("b", "2"));
    let back: Comparison = serde_json::from_str(&c.to_json()).unwrap();
    assert_eq!(back, c);
    let json: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    assert_eq!(json["schema"], "loadproof.compare/v1");
    assert_eq!(json["knobs_changed"][0]["knob"], "scheduling_policy");
}

// ---------------------------------------------------------------------------------------------
// Never panics

fn arb_number() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        Just(None),
        Just(Some(0.0)),
        Just(Some(-0.0)),
        Just(Some(f64::NAN)),
        Just(Some(f64::INFINITY)),
        Just(Some(f64::MAX)),
        Just(Some(f64::MIN_POSITIVE)),
        any::<f64>().prop_map(Some),
        (0.0f64..1e6).prop_map(Some),
    ]
}

fn arb_count() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        Just(None),
        Just(Some(0)),
        Just(Some(u64::MAX)),
        any::<u64>().prop_map(Some)
    ]
}

/// The sim audit with every number the comparison reads replaced.
fn mutated(numbers: &[Option<f64>], counts: &[Option<u64>], drop_client: bool) -> Audit {
    let mut a = audit(&Receipt::from_json(SIM_RECEIPT).unwrap());
    let n = |i: usize| numbers.get(i).copied().flatten();
    let k = |i: usize| counts.get(i).copied().flatten();
    if drop_client {
        a.client = None;
        a.ledger = None;
        a.concurrency = None;
    }
    if let Some(c) = a.client.as_mut() {
        c.output_tokens_per_s = n(0);
        c.duration_s = n(1).unwrap_or(-1.0);
        c.output_tokens = k(0).unwrap_or(0);
        c.input_tokens = k(1).unwrap_or(u64::MAX);
    }
    for (i, l) in a.latency.iter_mut().enumerate() {
        l.p50_ms = n(2 + 3 * i);
        l.p90_ms = n(3 + 3 * i);
        l.p99_ms = n(4 + 3 * i);
    }
    if let Some(l) = a.ledger.as_mut() {
        l.completed = k(2).unwrap_or(0);
        l.failed = k(3);
        l.offered = k(4);
    }
    a.engine.generation_tokens_delta = k(5);
    a.engine.prompt_tokens_delta = k(6);
    a.occupancy.preemptions_delta = k(7);
    a.occupancy.max_running = n(14);
    a.occupancy.max_waiting = n(15);
    a
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn compare_never_panics_and_never_divides_by_zero(
        bn in proptest::collection::vec(arb_number(), 16),
        bk in proptest::collection::vec(arb_count(), 8),
        tn in proptest::collection::vec(arb_number(), 16),
        tk in proptest::collection::vec(arb_count(), 8),
        drops in (any::<bool>(), any::<bool>()),
        knob in proptest::option::of("[a-z0-9]{0,3}"),
    ) {
        let r = Receipt::from_json(SIM_RECEIPT).unwrap();
        let (b, t) = (mutated(&bn, &bk, drops.0), mutated(&tn, &tk, drops.1));
        let mut subject = r.subject.clone();
        if let Some(v) = &knob {
            subject.knobs.insert("k".into(), v.clone());
        }
        let c = compare(
            &Side { source: "a", file_sha256: "aa", protocol: &r.protocol, subject: &r.subject, audit: &b },
            &Side { source: "b", file_sha256: "bb", protocol: &r.protocol, subject: &subject, audit: &t },
        );
        prop_assert_eq!(c.comparable, c.reasons.is_empty());
        prop_assert_eq!(c.knobs_changed.len(), usize::from(knob.is_some()));
        for m in &c.metrics {
            for v in [m.baseline, m.treatment, m.change, m.relative_change].into_iter().flatten() {
                prop_assert!(v.is_finite(), "{} {:?}", m.metric, m);
            }
            if m.baseline == Some(0.0) || m.baseline.is_none() || m.treatment.is_none() {
                prop_assert_eq!(m.relative_change, None);
            }
            if m.change.is_none() || m.relative_change.is_none() {
                prop_assert!(m.note.is_some(), "{:?}", m);
            }
        }
        let back: Comparison = serde_json::from_str(&c.to_json()).unwrap();
        prop_assert_eq!(back, c);
    }
}
