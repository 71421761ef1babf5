//! What a run asked of the server ([`Protocol`]), its canonical key, and how two protocols
//! differ field by field ([`FieldDifference`]): the rule both an experiment's arms and a
//! comparison of two receipts are held to.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::evidence::sha256_hex;

/// Which client fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// `vllm bench serve` as a child process.
    VllmBenchServe,
    /// loadproof's own open-loop client.
    Native,
    /// NVIDIA AIPerf (`aiperf profile`, its `mooncake_trace` dataset on a fixed schedule) as
    /// a child process.
    Aiperf,
    /// GuideLLM (`guidellm run`, its `replay` profile) as a child process.
    Guidellm,
}

impl Engine {
    /// The name a receipt and the page show for it.
    pub fn label(self) -> &'static str {
        match self {
            Engine::VllmBenchServe => "vllm bench serve",
            Engine::Native => "loadproof native",
            Engine::Aiperf => "AIPerf",
            Engine::Guidellm => "GuideLLM",
        }
    }

    /// True for the engines that run as a child process with an exit code (`Execution::Ran`).
    pub fn is_process(self) -> bool {
        !matches!(self, Engine::Native)
    }
}

/// Every field that changes the work a run asked of the server, and its canonical key.
/// Two receipts with one `key` ran one protocol. `None` is "not stated" (an imported run
/// whose caller did not say): an unknown field never equals a known one, and the audit names
/// it rather than guessing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Protocol {
    /// The client.
    pub engine: Engine,
    /// The client's version (`vllm` package version, or loadproof's).
    pub client_version: Option<String>,
    /// API flavour (`openai` completions).
    pub backend: Option<String>,
    /// Request path (`/v1/completions`).
    pub endpoint: Option<String>,
    /// Where it was fired.
    pub base_url: Option<String>,
    /// The `model` field of every request.
    pub model: Option<String>,
    /// The tokenizer the prompts were built with, when the client needs one.
    pub tokenizer: Option<String>,
    /// sha256 of the source trace.
    pub trace_sha256: Option<String>,
    /// sha256 of the `timed_trace` file fired.
    pub timed_trace_sha256: Option<String>,
    /// sha256 of `plan.json`.
    pub plan_sha256: Option<String>,
    /// Requests offered.
    pub requests: Option<u64>,
    /// Tokens per hash id.
    pub chunk_size: Option<u32>,
    /// `--timed-trace-sec-multiplier`.
    pub sec_multiplier: Option<String>,
    /// The arrival process (`self_timed`: the file's schedule, open loop).
    pub arrival: Option<String>,
    /// `ignore_eos` on every request.
    pub ignore_eos: Option<bool>,
    /// A cap on requests in flight; `Some(0)` = stated uncapped.
    pub max_concurrency: Option<u64>,
    /// `PYTHONHASHSEED` for vLLM's client (its prompt tokens depend on it).
    pub python_hash_seed: Option<String>,
    /// Sampling fields sent with every request (empty: the server's defaults).
    pub sampling: BTreeMap<String, String>,
    /// The exact argv (vllm engine) or request template (native), placeholders filled; empty
    /// when not known.
    pub argv: Vec<String>,
    /// How the client checked the server's TLS certificate; absent when nothing was asked of
    /// TLS (plain `http://`, no trust flags), so receipts made before TLS keep their keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<Tls>,
    /// `sha256:` + sha256 of the canonical JSON of every field above.
    pub key: String,
}

/// How a run's client checked the certificates of the `https://` servers it talked to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tls {
    /// Which certificates were accepted.
    pub verify: TlsVerify,
    /// sha256 of the `--ca-cert` file, when a private CA was trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_sha256: Option<String>,
}

/// Which certificates a client accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TlsVerify {
    /// Those the platform's trust store vouches for.
    System,
    /// Those the platform's store or a private CA (`ca_sha256`) vouches for.
    CaCert,
    /// Any: the certificate was not checked, so anyone on the network path could have
    /// answered (`--insecure`).
    Insecure,
}

impl Protocol {
    /// The fields that are not stated, by name.
    pub fn unstated(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut note = |missing: bool, name: &'static str| {
            if missing {
                out.push(name);
            }
        };
        note(self.client_version.is_none(), "client_version");
        note(self.backend.is_none(), "backend");
        note(self.endpoint.is_none(), "endpoint");
        note(self.base_url.is_none(), "base_url");
        note(self.model.is_none(), "model");
        note(self.trace_sha256.is_none(), "trace_sha256");
        note(self.timed_trace_sha256.is_none(), "timed_trace_sha256");
        note(self.plan_sha256.is_none(), "plan_sha256");
        note(self.requests.is_none(), "requests");
        note(self.chunk_size.is_none(), "chunk_size");
        note(self.sec_multiplier.is_none(), "sec_multiplier");
        note(self.arrival.is_none(), "arrival");
        note(self.ignore_eos.is_none(), "ignore_eos");
        note(self.max_concurrency.is_none(), "max_concurrency");
        note(self.argv.is_empty(), "argv");
        out
    }
}

impl Protocol {
    /// The canonical key: sha256 over the JSON of every field but `key`, keys sorted.
    pub fn canonical_key(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let serde_json::Value::Object(map) = &mut value {
            map.remove("key");
        }
        // serde_json's Map is a BTreeMap here (no preserve_order): keys come out sorted.
        let canonical = serde_json::to_string(&value).unwrap_or_default();
        format!("sha256:{}", sha256_hex(canonical.as_bytes()))
    }

    /// Sets `key` from the other fields.
    pub fn sealed(mut self) -> Protocol {
        self.key = self.canonical_key();
        self
    }
}

impl Protocol {
    /// Every field (all but `key`) on which `other` differs from `self`, values as compact
    /// JSON (long values shortened).
    pub fn differences(&self, other: &Protocol) -> Vec<FieldDifference> {
        differences(self, other)
    }
}

/// Longest value quoted in a protocol difference; argv lists can be long.
const QUOTED_CHARS: usize = 160;

/// One protocol field on which a receipt differs from baseline receipt 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDifference {
    /// The protocol field (`trace_sha256`, `base_url`, `argv`, …).
    pub field: String,
    /// Its value in baseline receipt 0, as compact JSON.
    pub first: String,
    /// Its value in this receipt.
    pub found: String,
}

impl fmt::Display for FieldDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} vs {}", self.field, self.first, self.found)
    }
}

fn differences(a: &Protocol, b: &Protocol) -> Vec<FieldDifference> {
    let as_map = |p: &Protocol| match serde_json::to_value(p) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let (a, b) = (as_map(a), as_map(b));
    let null = serde_json::Value::Null;
    let fields: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    fields
        .into_iter()
        .filter(|f| f.as_str() != "key")
        .filter_map(|f| {
            let (x, y) = (a.get(f).unwrap_or(&null), b.get(f).unwrap_or(&null));
            (x != y).then(|| FieldDifference {
                field: f.clone(),
                first: quoted(x),
                found: quoted(y),
            })
        })
        .collect()
}

fn quoted(v: &serde_json::Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= QUOTED_CHARS {
        return text;
    }
    let head: String = text.chars().take(QUOTED_CHARS).collect();
    format!("{head}…")
}
