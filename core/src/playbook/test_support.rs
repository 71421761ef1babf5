//! Valid parts to build rows from in module tests.

use std::collections::BTreeMap;

use super::*;
use crate::claim::Repeat;

pub fn axes() -> RegimeAxes {
    RegimeAxes {
        rate_rps: 2.0,
        burstiness: 1.0,
        window_s: 1.0,
        input_p50: 350.0,
        input_p95: 1640.0,
        output_p50: 240.0,
        output_p95: 840.0,
    }
}

pub fn identity() -> Identity {
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

pub fn repeat(throughput: f64) -> Repeat {
    Repeat {
        throughput_tok_s: throughput,
        ttft_p50_ms: 40.0,
        ttft_p99_ms: 120.0,
        itl_p50_ms: 8.0,
        itl_p99_ms: 30.0,
    }
}

pub fn delta() -> MeasuredDelta {
    MeasuredDelta::from_repeats(
        &[repeat(100.0), repeat(104.0)],
        &[repeat(110.0), repeat(112.0)],
    )
    .unwrap()
}

pub fn sha(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

pub fn spec() -> RowSpec {
    RowSpec {
        id: "r1".into(),
        identity: identity(),
        regime: axes(),
        delta: delta(),
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

pub fn illustrative(id: &str) -> Row {
    Row::illustrative(RowSpec {
        id: id.into(),
        ..spec()
    })
    .unwrap()
}

/// A measured row without its audits (module tests only: the audits are `Row::measured`'s).
pub fn measured(spec: RowSpec) -> Row {
    Row::checked(spec, Evidence::Measured, None).unwrap()
}
