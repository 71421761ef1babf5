//! The subject: what was measured (model, revision, GPU, engine, version), from every party
//! that says something about it, and the one standing they must all agree to.
//!
//! A receipt can hear about an axis from many parties: the claimant (the receipt's own
//! `subject`), the lessor (the lease's `subject`), each engine URL's `/metrics` (one per replica
//! of a fleet), the endpoint's `GET /version` and `GET /v1/models`, and each GPU exporter
//! (DCGM's `modelName`). Every one of them must agree, or the standing is refused naming the two
//! that differ. An axis is *established* only by the server side's own answers — a `/metrics`
//! URL on the endpoint's origin or one whose counters moved with this run's work (an idle URL
//! someone chose to scrape cannot speak for the subject), `/version`, `/v1/models`, a GPU
//! exporter — never by the claimant or the lease alone.
//!
//! When the reviewer trusts keys and the receipt reads signed, every engine `/metrics` body the
//! audit reads and the lease carry the lessor's signature; `/version`, `/v1/models` and a DCGM
//! exporter's body do not (the claimant can write them). So then an axis stands only when a
//! signed source states it too — an engine `/metrics` URL that speaks, or the lease the lessor
//! bound to what it read back at grant time: the unsigned answers may still corroborate (and
//! any disagreement still refuses), but cannot establish an axis alone.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::client;
use super::engine::EngineSide;
use super::standing::Standing;
use crate::receipt::{Axis, Lease, Receipt, Subject, block, origin};

const SUBJECT_SETTLE: &str = "fire at an endpoint whose own answers state every axis (its /metrics, GET /version, GET /v1/models, a DCGM exporter's --dcgm-url for the GPU; `loadproof gate --model-revision … --gpu-sku …` states what vLLM does not report), or accept the run as unestablished";

const SIGNED_SUBJECT_SETTLE: &str = "have the lessor state the axis under its signature: bound in the lease (`loadproof gate --gpu-sku … --model-revision …`, which it also states in its signed /metrics), or read from the engine's own /metrics behind it";

/// One knob: stated by the claimant, and read back from the server or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnobFacts {
    /// The knob's name (`enable_prefix_caching`, `decode_step_ms`).
    pub name: String,
    /// Its value as the receipt states it.
    pub stated: String,
    /// Its value as the server states it, when a `*config_info` family names it.
    pub read_back: Option<String>,
    /// That family (`vllm:cache_config_info`, `loadproof_sim_config_info`).
    pub source: Option<String>,
    /// `read_back` (the server says the same), `contradicted` (it says another value) or
    /// `stated` (nothing the server answered names it: the claimant's word only).
    pub status: String,
}

/// One party's word on the subject.
#[derive(Debug, Clone)]
struct Source {
    /// Who says it, as a refusal names it (`/metrics at URL`, `DCGM at URL`, `the lease`).
    name: String,
    /// Axis → value.
    axes: BTreeMap<String, String>,
    /// A server-side answer that may establish an axis.
    speaks: bool,
    /// The lessor's own word (an engine `/metrics` that speaks, the lease): signed whenever
    /// the receipt reads signed.
    lessors: bool,
}

/// Every source of the subject and what they establish together.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    sources: Vec<Source>,
    /// Axis → value, from the sources that speak (all agreeing).
    pub established: BTreeMap<String, String>,
    /// Two sources that differ, or a source that differs with itself; each names both.
    conflicts: Vec<String>,
    /// Engine settings by name from the sources that speak: (value, family, source).
    settings: BTreeMap<String, Vec<(String, String, String)>>,
}

impl Reading {
    /// Whether the established engine is `loadproof sim`.
    pub fn simulator(&self) -> bool {
        self.established.get("engine").map(String::as_str) == Some("loadproof sim")
    }
}

/// Gathers every source of the subject in `receipt` and `eng`.
pub fn read(receipt: &Receipt, block: &client::BlockReader<'_>, eng: &EngineSide) -> Reading {
    let endpoint = receipt.protocol.base_url.as_deref().and_then(origin);
    let mut sources = Vec::new();
    let mut settings: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    let mut conflicts = Vec::new();
    for s in &eng.sources {
        let name = format!("/metrics at {}", s.url);
        if let Some(why) = &s.changed {
            conflicts.push(format!("{name}: {why}"));
        }
        let ours = endpoint.is_some() && origin(&s.url) == endpoint;
        let speaks = ours || s.served;
        if speaks {
            for (k, (v, family)) in &s.readback.settings {
                settings.entry(k.clone()).or_default().push((
                    v.clone(),
                    family.clone(),
                    name.clone(),
                ));
            }
        }
        sources.push(Source {
            name,
            axes: s.readback.axes.clone(),
            speaks,
            lessors: speaks,
        });
    }
    if let Ok(bytes) = block(block::VERSION)
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
        && let Some(version) = v.get("version").and_then(serde_json::Value::as_str)
    {
        sources.push(Source {
            name: "GET /version".to_owned(),
            axes: BTreeMap::from([("engine_version".to_owned(), version.to_owned())]),
            speaks: true,
            lessors: false,
        });
    }
    // A model the endpoint lists is a model it serves (its id is what requests name); a list
    // that does not hold the receipt's model says the endpoint serves another.
    if let (Ok(bytes), Axis::Known { value, .. }) = (block(block::MODELS), &receipt.subject.model)
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
        && let Some(models) = v.get("data").and_then(serde_json::Value::as_array)
    {
        let ids: Vec<&str> = models
            .iter()
            .filter_map(|m| m.get("id").and_then(serde_json::Value::as_str))
            .collect();
        if ids.contains(&value.as_str()) {
            sources.push(Source {
                name: "GET /v1/models".to_owned(),
                axes: BTreeMap::from([("model".to_owned(), value.clone())]),
                speaks: true,
                lessors: false,
            });
        } else if !ids.is_empty() {
            conflicts.push(format!(
                "model: the receipt says {value:?}, GET /v1/models lists only {ids:?}"
            ));
        }
    }
    let sim_engine = eng
        .sources
        .iter()
        .any(|s| s.readback.axes.get("engine").map(String::as_str) == Some("loadproof sim"));
    for e in eng.gpu.iter().flat_map(|g| &g.exporters) {
        let name = format!("DCGM at {}", e.url);
        // A simulated exporter is the simulator's word beside a simulator; beside a real engine
        // it is a contradiction, never a GPU.
        if e.simulated
            && let Some(real) = eng.sources.iter().find(|s| {
                s.readback
                    .axes
                    .get("engine")
                    .is_some_and(|v| v != "loadproof sim")
            })
        {
            conflicts.push(format!(
                "gpu_sku: {name} is a simulated GPU exporter, but /metrics at {} reads back engine {:?}, not a simulator",
                real.url,
                real.readback.axes.get("engine").map_or("", String::as_str)
            ));
        }
        let speaks = e.not_evidence.is_none() || (e.simulated && sim_engine);
        match e.model_names.as_slice() {
            [] => {}
            [one] => sources.push(Source {
                name: match &e.not_evidence {
                    Some(why) if !speaks => format!("{name} (not evidence of the GPU: {why})"),
                    _ => name,
                },
                axes: BTreeMap::from([("gpu_sku".to_owned(), one.clone())]),
                speaks,
                lessors: false,
            }),
            many => conflicts.push(format!(
                "gpu_sku: {name} reports GPUs of {} models ({}): one gpu_sku cannot describe them",
                many.len(),
                many.join(", ")
            )),
        }
    }
    if let Some(lease) = receipt
        .lease
        .as_deref()
        .and_then(|n| block(n).ok())
        .and_then(|b| Lease::from_json(&b).ok())
    {
        sources.push(Source {
            name: format!("the lease ({})", lease.issuer),
            axes: lease.subject.clone(),
            speaks: false,
            lessors: true,
        });
    }
    conflicts.extend(disagreements(&sources));
    let mut established = BTreeMap::new();
    for s in sources.iter().filter(|s| s.speaks) {
        for (k, v) in &s.axes {
            established.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    Reading {
        sources,
        established,
        conflicts,
        settings,
    }
}

/// Every axis on which two sources differ (the first two, named), and a value that names a
/// simulator (`… (simulator)`) beside a server that reads back a real engine.
fn disagreements(sources: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    let mut axes: Vec<&String> = sources.iter().flat_map(|s| s.axes.keys()).collect();
    axes.sort();
    axes.dedup();
    for axis in axes {
        let said: Vec<(&str, &str)> = sources
            .iter()
            .filter_map(|s| Some((s.name.as_str(), s.axes.get(axis)?.as_str())))
            .collect();
        if let Some(((a, x), (b, y))) = said
            .first()
            .and_then(|first| Some((*first, *said.iter().find(|(_, v)| v != &first.1)?)))
        {
            out.push(format!("{axis}: {a} says {x:?}, {b} says {y:?}"));
        }
    }
    let real_engine = sources.iter().find_map(|s| {
        let e = s.axes.get("engine")?;
        (s.speaks && e != "loadproof sim").then_some((s.name.as_str(), e.as_str()))
    });
    if let Some((reader, engine)) = real_engine {
        for s in sources {
            for (axis, value) in &s.axes {
                if value.contains("(simulator)") {
                    out.push(format!(
                        "{axis}: {} says {value:?}, a simulator's value, but {reader} reads back engine {engine:?}, not a simulator",
                        s.name
                    ));
                }
            }
        }
    }
    out
}

/// Each stated knob against the settings the speaking sources state (every one must agree).
pub fn knob_facts(stated: &BTreeMap<String, String>, reading: &Reading) -> Vec<KnobFacts> {
    stated
        .iter()
        .map(|(name, value)| {
            let read = reading.settings.get(name).map(Vec::as_slice).unwrap_or(&[]);
            let differing = read.iter().find(|(seen, _, _)| !same_setting(value, seen));
            let shown = differing.or(read.first());
            let status = match (read.is_empty(), differing) {
                (true, _) => "stated",
                (false, None) => "read_back",
                (false, Some(_)) => "contradicted",
            };
            KnobFacts {
                name: name.clone(),
                stated: value.clone(),
                read_back: shown.map(|(v, _, _)| v.clone()),
                source: shown.map(|(_, family, source)| {
                    if read.len() > 1 {
                        format!("{family} ({source})")
                    } else {
                        family.clone()
                    }
                }),
                status: status.to_owned(),
            }
        })
        .collect()
}

/// Two spellings of one setting are one setting (`True`/`true`, `2`/`2.0`).
fn same_setting(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let boolean = |s: &str| match s.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    if let (Some(x), Some(y)) = (boolean(a), boolean(b)) {
        return x == y;
    }
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x.is_finite() && x == y,
        _ => false,
    }
}

/// Positive only when every source agrees, the server's own answers establish all five axes,
/// and no knob is contradicted. A value the receipt states and nothing establishes is the
/// claimant's statement: reported, never enough. `signed`: the receipt reads signed by a key
/// the reviewer trusts, so each axis must also be stated by a signed source (see the module
/// doc).
pub fn standing(
    subject: &Subject,
    reading: &Reading,
    knobs: &[KnobFacts],
    signed: bool,
) -> Standing {
    let mut unknown = Vec::new();
    let mut stated = Vec::new();
    let mut unsigned = Vec::new();
    let mut established = Vec::new();
    let mut contradicted = reading.conflicts.clone();
    for (name, axis) in axes(subject) {
        match axis {
            Axis::Unknown { reason } => unknown.push(format!("{name} ({reason})")),
            Axis::Known { value, .. } => match reading.established.get(name) {
                Some(seen)
                    if seen == value
                        && signed
                        && !reading
                            .sources
                            .iter()
                            .any(|s| s.lessors && s.axes.get(name) == Some(seen)) =>
                {
                    let by: Vec<&str> = reading
                        .sources
                        .iter()
                        .filter(|s| s.speaks && s.axes.get(name) == Some(seen))
                        .map(|s| s.name.as_str())
                        .collect();
                    unsigned.push(format!(
                        "{name}={value} (its only source is unsigned: {})",
                        by.join(", ")
                    ));
                }
                Some(seen) if seen == value => established.push(format!("{name}={value}")),
                Some(seen) => {
                    let by = reading
                        .sources
                        .iter()
                        .find(|s| s.speaks && s.axes.get(name) == Some(seen))
                        .map_or("the server", |s| s.name.as_str());
                    contradicted.push(format!("{name}: stated {value:?}, {by} says {seen:?}"))
                }
                None => stated.push(format!("{name}={value}")),
            },
        }
    }
    for k in knobs.iter().filter(|k| k.status == "contradicted") {
        contradicted.push(format!(
            "knob {}: stated {:?}, {} says {:?}",
            k.name,
            k.stated,
            k.source.as_deref().unwrap_or("the server"),
            k.read_back.as_deref().unwrap_or("")
        ));
    }
    if !contradicted.is_empty() {
        return Standing::refused(
            format!(
                "the sources of the subject disagree: {}",
                contradicted.join("; ")
            ),
            "fire at the subject the receipt names, with every replica, exporter and lessor serving that one subject, or correct the stated axes and knobs",
        );
    }
    if !unknown.is_empty() || !stated.is_empty() || !unsigned.is_empty() {
        let mut parts = Vec::new();
        if !unknown.is_empty() {
            parts.push(format!("unknown {}", unknown.join(", ")));
        }
        if !stated.is_empty() {
            parts.push(format!(
                "stated by the receipt, established by nothing the server answered: {}",
                stated.join(", ")
            ));
        }
        if !unsigned.is_empty() {
            parts.push(format!(
                "established by no source the lessor signed (neither its /metrics nor its lease states it): {}",
                unsigned.join(", ")
            ));
        }
        return Standing::refused(
            format!("not established: {}", parts.join("; ")),
            if unsigned.is_empty() {
                SUBJECT_SETTLE
            } else {
                SIGNED_SUBJECT_SETTLE
            },
        );
    }
    let speakers: Vec<&str> = reading
        .sources
        .iter()
        .filter(|s| s.speaks)
        .map(|s| s.name.as_str())
        .collect();
    Standing::positive(format!(
        "established from the server ({}): {}",
        speakers.join(", "),
        established.join(", ")
    ))
}

/// The five axes by name.
pub fn axes(subject: &Subject) -> [(&'static str, &Axis); 5] {
    [
        ("model", &subject.model),
        ("model_revision", &subject.model_revision),
        ("gpu_sku", &subject.gpu_sku),
        ("engine", &subject.engine),
        ("engine_version", &subject.engine_version),
    ]
}
