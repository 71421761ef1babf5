//! The record that says a file is synthetic: written beside it as `FILE.synth.json`
//! ([`SYNTH_SCHEMA`]), holding the spec, the target regime, the regime `inspect` computes over
//! the written bytes, and the file's sha256 — and the check `inspect` runs on it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::counts::{CountLaw, least_burstiness};
use super::{GENERATOR_VERSION, Layout, Stop, SynthSpec};
use crate::regime::Regime;
use crate::stats::Percentiles;
use crate::trace::{DropReason, Trace};

/// Schema identity of [`SynthRecord`].
pub const SYNTH_SCHEMA: &str = "loadproof.trace.synth/v1";

/// How the file was generated: everything but the target regime.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpecRecord {
    /// The layout written.
    pub layout: Layout,
    /// The row stop, when the spec stops by rows.
    pub rows: Option<u64>,
    /// The duration stop in seconds, when the spec stops by time.
    pub duration_s: Option<f64>,
    /// The seed.
    pub seed: u64,
    /// Share of rows written as failures (BurstGPT).
    pub failure_share: f64,
    /// Share of requests reusing an earlier request's leading blocks (Mooncake).
    pub prefix_share: f64,
    /// The per-window count law the burstiness target chose.
    pub count_law: &'static str,
    /// The least D reachable at this rate and window.
    pub least_reachable_burstiness: f64,
}

/// The regime the emitted requests were generated to show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetRecord {
    /// Requests per second.
    pub rate_rps: f64,
    /// Index of dispersion of per-window request counts.
    pub burstiness: f64,
    /// The window, seconds.
    pub window_s: f64,
    /// Prompt token p50/p95.
    pub input_tokens: Percentiles,
    /// Completion token p50/p95.
    pub output_tokens: Percentiles,
}

/// What core's ingester and [`Regime`] say about the written bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RealisedRecord {
    /// Data rows read.
    pub rows_read: u64,
    /// Requests emitted.
    pub requests: u64,
    /// Rows dropped, by reason (only the deliberate failure rows, for a sound generator).
    pub dropped: BTreeMap<DropReason, u64>,
    /// Dropped rows / rows read.
    pub failure_share: f64,
    /// [`realised_prefix_share`], for layouts with prefix identity.
    pub prefix_share: Option<f64>,
    /// The regime at the target window.
    pub regime: Regime,
}

/// The sidecar: a synthetic trace's provenance, target and realised regime.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SynthRecord {
    /// [`SYNTH_SCHEMA`].
    pub schema: &'static str,
    /// Always true: this file is not a recorded trace.
    pub synthetic: bool,
    /// `loadproof trace synth`.
    pub generator: &'static str,
    /// [`GENERATOR_VERSION`]: same spec, same version → same bytes.
    pub generator_version: u32,
    /// The loadproof release that wrote it.
    pub loadproof_version: &'static str,
    /// The trace's file name.
    pub file: String,
    /// sha256 of the trace's bytes, lowercase hex.
    pub sha256: String,
    /// Size of the trace in bytes.
    pub bytes: u64,
    /// A command line that regenerates the file.
    pub command: String,
    /// How it was generated.
    pub spec: SpecRecord,
    /// The target regime.
    pub target: TargetRecord,
    /// The regime of the written bytes; `None` with `realised_error` when there is none.
    pub realised: Option<RealisedRecord>,
    /// Why `realised` is absent.
    pub realised_error: Option<String>,
}

impl SynthRecord {
    /// The record for a file written from `spec`, named `file`, with digest `sha256` over
    /// `bytes` bytes, and `read_back` = the trace core ingested from exactly those bytes (or
    /// why it could not).
    pub fn new(
        spec: &SynthSpec,
        file: &str,
        command: &str,
        sha256: &str,
        bytes: u64,
        read_back: Result<&Trace, String>,
    ) -> SynthRecord {
        let mean = spec.mean_per_window();
        let count_law = CountLaw::new(mean, spec.burstiness).map_or("unreachable", |l| l.name());
        let window = spec.window();
        let (realised, realised_error) = match read_back {
            Ok(trace) => match Regime::of(trace, window) {
                Ok(regime) => {
                    let meta = trace.meta();
                    let dropped = meta.dropped_total();
                    (
                        Some(RealisedRecord {
                            rows_read: meta.rows_read,
                            requests: meta.emitted,
                            dropped: meta.dropped.clone(),
                            failure_share: if meta.rows_read == 0 {
                                0.0
                            } else {
                                dropped as f64 / meta.rows_read as f64
                            },
                            prefix_share: realised_prefix_share(trace),
                            regime,
                        }),
                        None,
                    )
                }
                Err(e) => (None, Some(e.to_string())),
            },
            Err(e) => (None, Some(e)),
        };
        SynthRecord {
            schema: SYNTH_SCHEMA,
            synthetic: true,
            generator: "loadproof trace synth",
            generator_version: GENERATOR_VERSION,
            loadproof_version: env!("CARGO_PKG_VERSION"),
            file: file.to_owned(),
            sha256: sha256.to_owned(),
            bytes,
            command: command.to_owned(),
            spec: SpecRecord {
                layout: spec.layout,
                rows: match spec.stop {
                    Stop::Rows(n) => Some(n),
                    Stop::DurationMs(_) => None,
                },
                duration_s: match spec.stop {
                    Stop::Rows(_) => None,
                    Stop::DurationMs(ms) => Some(ms as f64 / 1e3),
                },
                seed: spec.seed,
                failure_share: spec.failure_share,
                prefix_share: spec.prefix_share,
                count_law,
                least_reachable_burstiness: least_burstiness(mean),
            },
            target: TargetRecord {
                rate_rps: spec.rate_rps,
                burstiness: spec.burstiness,
                window_s: window.secs(),
                input_tokens: spec.input_tokens,
                output_tokens: spec.output_tokens,
            },
            realised,
            realised_error,
        }
    }

    /// Pretty JSON, deterministic.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// Share of requests whose leading prefix block also leads an earlier request — the requests
/// a prefix cache could serve in part. Hash ids are chained (a block's id names its whole
/// prefix), so sharing the first block is sharing a prefix. `None` without prefix identity
/// or requests.
pub fn realised_prefix_share(trace: &Trace) -> Option<f64> {
    trace.requests().prefix.as_ref()?;
    let n = trace.len();
    if n == 0 {
        return None;
    }
    let mut leading: Vec<u64> = (0..n)
        .filter_map(|i| trace.prefix_blocks(i).and_then(|ids| ids.first().copied()))
        .collect();
    let with_blocks = leading.len();
    leading.sort_unstable();
    leading.dedup();
    Some((with_blocks - leading.len()) as f64 / n as f64)
}

/// What a sidecar says about the file beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SidecarCheck {
    /// A synth record whose sha256 is the file's: the file is synthetic.
    Verified(String),
    /// A synth record for other bytes: the file was changed or replaced.
    Mismatch(String),
    /// Not a synth record at all.
    Unreadable(String),
}

impl SidecarCheck {
    /// The note `inspect` adds to its report.
    pub fn note(&self) -> &str {
        match self {
            SidecarCheck::Verified(n) | SidecarCheck::Mismatch(n) | SidecarCheck::Unreadable(n) => {
                n
            }
        }
    }
}

/// Checks the sidecar text `sidecar_json` (named `sidecar_name`) against the sha256 of the
/// file it sits beside.
pub fn check_sidecar(sidecar_json: &str, sidecar_name: &str, source_sha256: &str) -> SidecarCheck {
    let value: Value = match serde_json::from_str(sidecar_json) {
        Ok(v) => v,
        Err(e) => {
            return SidecarCheck::Unreadable(format!(
                "sidecar {sidecar_name} is not JSON ({e}): whether this file is synthetic is unknown"
            ));
        }
    };
    let schema = value.get("schema").and_then(Value::as_str);
    let sha = value.get("sha256").and_then(Value::as_str);
    let (Some(SYNTH_SCHEMA), Some(sha)) = (schema, sha) else {
        return SidecarCheck::Unreadable(format!(
            "sidecar {sidecar_name} is not a {SYNTH_SCHEMA} record: whether this file is synthetic is unknown"
        ));
    };
    if !sha.eq_ignore_ascii_case(source_sha256) {
        return SidecarCheck::Mismatch(format!(
            "sidecar {sidecar_name} describes a synthetic trace with sha256 {sha}, but this file's sha256 is {source_sha256}: it does NOT match (the file was changed or replaced), so its provenance is unknown"
        ));
    }
    let field = |path: &[&str]| {
        let mut v = &value;
        for key in path {
            v = v.get(key)?;
        }
        Some(match v {
            Value::Number(n) => n.as_u64().map_or_else(
                || n.as_f64().unwrap_or(f64::NAN).to_string(),
                |u| u.to_string(),
            ),
            other => other.to_string(),
        })
    };
    let shown = |path: &[&str]| field(path).unwrap_or_else(|| "?".to_owned());
    SidecarCheck::Verified(format!(
        "synthetic: generated by loadproof trace synth (generator v{}, seed {}; target {} req/s, D {} at {} s windows), not a recorded trace (sidecar {sidecar_name}, sha256 verified)",
        shown(&["generator_version"]),
        shown(&["spec", "seed"]),
        shown(&["target", "rate_rps"]),
        shown(&["target", "burstiness"]),
        shown(&["target", "window_s"]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "ab12";

    fn sidecar(sha: &str) -> String {
        serde_json::json!({
            "schema": SYNTH_SCHEMA,
            "sha256": sha,
            "generator_version": 3,
            "spec": {"seed": 42},
            "target": {"rate_rps": 2.0, "burstiness": 2.0, "window_s": 1.0},
        })
        .to_string()
    }

    #[test]
    fn a_sidecar_with_the_files_sha256_says_synthetic_and_verified() {
        let check = check_sidecar(&sidecar(SHA), "t.csv.synth.json", SHA);
        assert!(matches!(check, SidecarCheck::Verified(_)), "{check:?}");
        let note = check.note();
        assert!(note.starts_with("synthetic: generated by loadproof trace synth"));
        assert!(note.contains("seed 42"), "{note}");
        assert!(
            note.contains("(sidecar t.csv.synth.json, sha256 verified)"),
            "{note}"
        );
    }

    #[test]
    fn a_sidecar_for_other_bytes_says_it_does_not_match() {
        let check = check_sidecar(&sidecar("ffff"), "t.csv.synth.json", SHA);
        assert!(matches!(check, SidecarCheck::Mismatch(_)));
        assert!(check.note().contains("does NOT match"), "{}", check.note());
    }

    #[test]
    fn a_sidecar_that_is_not_a_synth_record_is_reported_as_such() {
        for text in ["{", "{\"schema\": \"other\", \"sha256\": \"ab12\"}", "[]"] {
            let check = check_sidecar(text, "t.csv.synth.json", SHA);
            assert!(matches!(check, SidecarCheck::Unreadable(_)), "{text}");
            assert!(!check.note().contains("sha256 verified"));
        }
    }
}
