//! Receipts: everything that happened when a plan was fired, in one self-contained file.
//!
//! A [`Receipt`] keeps the raw evidence inline — bench stdout and stderr, the `--save-result`
//! JSON, every `/metrics` scrape, the native client's per-request event log, the plan itself —
//! each as an [`Evidence`] block with its sha256. Everything else in the file either names
//! what was done ([`Protocol`], [`Subject`], [`Provenance`]) or points at evidence. Derived
//! numbers are never trusted from the file: the audit recomputes them.
//!
//! [`Execution`] is one value minted from one run: a bench process that ran (exit status and
//! its raw outputs), one that never started, an endpoint that did not answer, or the native
//! client's event log. A failed run is evidence too: every outcome has a variant.

mod events;
mod evidence;
mod lease;
mod lease_account;
mod packed;
mod protocol;
mod scrape_statement;
pub mod stream;
mod strict_json;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::plan::PlanDoc;

pub use events::{Disposition, EventsError, RequestRecord, Usage, parse_events};
pub use evidence::{Encoding, Evidence, EvidenceError, sha256_hex};
pub use lease::{LEASE_SCHEMA, Lease, LeaseError};
pub use lease_account::{
    LEASE_ACCOUNT_HEADER, LEASE_ACCOUNT_SCHEMA, LEASE_ACCOUNT_SCHEMA_V1, LeaseAccount, TokenAccount,
};
pub use packed::{Packed, PackedBody, Walk, Walked};
pub use protocol::{Engine, FieldDifference, Protocol, Tls, TlsVerify};
pub use scrape_statement::{
    SCRAPE_SIGNED_HEADER, SCRAPE_STATEMENT_SCHEMA, SCRAPE_STATEMENT_SCHEMA_V1, ScrapeChain,
    ScrapeStatement, signed_block_of,
};

/// Schema identity of [`Receipt`].
pub const RECEIPT_SCHEMA: &str = "loadproof.receipt/v1";

/// Names of the evidence blocks a receipt may hold (scrapes are `metrics/<n>`).
pub mod block {
    /// `plan.json` as it was on disk when fired.
    pub const PLAN: &str = "plan.json";
    /// The bench client's stdout.
    pub const STDOUT: &str = "bench/stdout";
    /// The bench client's stderr (diagnostics only; never feeds a fact).
    pub const STDERR: &str = "bench/stderr";
    /// The `--save-result` JSON.
    pub const RESULT: &str = "bench/result.json";
    /// The native client's per-request event log (JSON lines of `RequestRecord`).
    pub const EVENTS: &str = "native/events.jsonl";
    /// The prefix of scrape blocks: `metrics/0`, `metrics/1`, …
    pub const METRICS_PREFIX: &str = "metrics/";
    /// The lease the run held, as the lessor returned it.
    pub const LEASE: &str = "window/lease.json";
    /// The lessor's signed statement of the lease ([`crate::signing::Signed`] over the exact
    /// bytes of [`LEASE`]), when the lessor signs.
    pub const LEASE_SIGNED: &str = "window/lease.signed.json";
    /// The lessor's signed account of the lease at its release ([`crate::receipt::LeaseAccount`]).
    pub const LEASE_ACCOUNT_SIGNED: &str = "window/lease.account.signed.json";
    /// The `timed_trace` file fired (the schedule), when small enough to embed.
    pub const TIMED_TRACE: &str = "plan/timed_trace.jsonl";
    /// The plan's blocks at their own lengths (`blocks.jsonl`), when it has them and the
    /// native client built its prompts from them.
    pub const SIZED_BLOCKS: &str = "plan/blocks.jsonl";
    /// The endpoint's `GET /v1/models` answer (200 body): which models it serves.
    pub const MODELS: &str = "endpoint/v1-models.json";
    /// The endpoint's `GET /version` answer (200 body): `{"version": …}`.
    pub const VERSION: &str = "endpoint/version.json";
    /// The writer's capture of the run outside the other blocks (`Receipt::capture_json`).
    pub const CAPTURE: &str = "run/capture.json";
    /// AIPerf's input: the plan's schedule as its `mooncake_trace` dataset.
    pub const AIPERF_INPUT: &str = "aiperf/input.jsonl";
    /// AIPerf's configuration (`aiperf profile --config`).
    pub const AIPERF_CONFIG: &str = "aiperf/aiperf.yaml";
    /// AIPerf's per-request export, `profile_export.jsonl`: the execution's result.
    pub const AIPERF_EXPORT: &str = "aiperf/profile_export.jsonl";
    /// AIPerf's summary, `profile_export_aiperf.json` (kept; its numbers are not read).
    pub const AIPERF_SUMMARY: &str = "aiperf/profile_export_aiperf.json";
    /// AIPerf's log (diagnostics only, like stderr).
    pub const AIPERF_LOG: &str = "aiperf/aiperf.log";
    /// GuideLLM's input: the plan's schedule as its `mooncake` trace.
    pub const GUIDELLM_INPUT: &str = "guidellm/input.jsonl";
    /// GuideLLM's report, `benchmarks.json`: the execution's result.
    pub const GUIDELLM_REPORT: &str = "guidellm/benchmarks.json";
}

/// A moment on the firing machine: monotonic nanoseconds since the run's start (for intervals)
/// and the wall clock at that moment (for humans and cross-machine joins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stamp {
    /// Monotonic ns since the run's zero.
    pub mono_ns: i64,
    /// Unix time, ns.
    pub unix_ns: i64,
}

/// `KEY=VALUE` as a knob or a caller statement is written (`--knob`, `--caller`, a line of the
/// page's knob box): the key before the first `=`, non-empty; the value everything after it,
/// possibly empty. `None` when there is no `=` or no key.
pub fn key_value(item: &str) -> Option<(&str, &str)> {
    item.split_once('=').filter(|(key, _)| !key.is_empty())
}

/// The origin of an `http(s)://` URL — scheme, host and port, lower-cased, the port made
/// explicit (`http://Host:8000/metrics` → `http://host:8000`) — so two URLs can be compared as
/// "the same server". `None` for anything else.
pub fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let authority = authority.to_ascii_lowercase();
    // `[::1]:8000`, `host:8000`, `host`.
    let has_port = match authority.rfind(':') {
        Some(i) => {
            authority
                .get(i + 1..)
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                && !authority.get(i..).is_some_and(|t| t.contains(']'))
        }
        None => false,
    };
    Some(if has_port {
        format!("{scheme}://{authority}")
    } else {
        format!("{scheme}://{authority}:{default_port}")
    })
}

/// One axis of what was measured: known (and who said so) or explicitly unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "standing", rename_all = "snake_case", deny_unknown_fields)]
pub enum Axis {
    /// Known.
    Known {
        /// The value.
        value: String,
        /// Who or what established it (`caller`, `/metrics`, `bench stdout`, …).
        source: String,
    },
    /// Not known; why, and what would settle it.
    Unknown {
        /// Why it is not known.
        reason: String,
    },
}

impl Axis {
    /// Known from the caller, or unknown with `reason`.
    pub fn from_caller(value: Option<&str>, reason: &str) -> Axis {
        match value {
            Some(v) => Axis::Known {
                value: v.to_owned(),
                source: "caller".to_owned(),
            },
            None => Axis::Unknown {
                reason: reason.to_owned(),
            },
        }
    }
}

/// What was measured: the serving stack under the load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subject {
    /// The served model.
    pub model: Axis,
    /// Its exact revision (hub commit, checkpoint digest).
    pub model_revision: Axis,
    /// The accelerator.
    pub gpu_sku: Axis,
    /// The serving engine (`vllm`, or `loadproof sim` — a simulator, said so).
    pub engine: Axis,
    /// The engine's version.
    pub engine_version: Axis,
    /// Engine settings the caller states (`--knob k=v`), by name.
    pub knobs: BTreeMap<String, String>,
    /// True when the endpoint said it is `loadproof sim` (its `/metrics` carries
    /// `loadproof_sim_info`): numbers from it describe the simulator, not a server.
    pub simulator: bool,
}

/// Who made the receipt and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// `fire` (loadproof ran it) or `import` (files captured by someone else).
    pub source: String,
    /// The loadproof that wrote the receipt.
    pub generator: String,
    /// The command line that made the receipt.
    pub command: Vec<String>,
    /// Caller-supplied statements (operator, ticket, note), verbatim and attributed to the caller.
    pub caller: BTreeMap<String, String>,
    /// When the receipt was written (Unix ns, the writing machine's clock).
    pub written_unix_ns: i64,
}

/// A process's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitStatus {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
}

/// Why a run stopped before it finished on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interruption {
    /// The operator pressed Ctrl-C (SIGINT) or the run was terminated.
    Signal,
    /// A deadline the caller set passed.
    Deadline,
}

/// What happened when the plan was fired: exactly one of these per receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Execution {
    /// The bench client ran as a process. Its facts come from stdout (and the result JSON)
    /// only when `exit.code == Some(0)`; stderr is diagnostics.
    Ran {
        /// The program run (resolved path).
        program: String,
        /// Its argv, program first.
        argv: Vec<String>,
        /// Environment set for it (only what loadproof set).
        env: BTreeMap<String, String>,
        /// How it ended.
        exit: ExitStatus,
        /// Evidence block of stdout.
        stdout: String,
        /// Evidence block of stderr.
        stderr: String,
        /// The result JSON's evidence block, or why there is none.
        result: ResultFile,
        /// When it started (`None` when imported without times).
        started: Option<Stamp>,
        /// When it ended.
        ended: Option<Stamp>,
        /// Set when loadproof stopped it.
        interrupted: Option<Interruption>,
    },
    /// The client could not be started (missing interpreter, vLLM too old, …).
    NotStarted {
        /// Why.
        cause: String,
    },
    /// The endpoint did not answer before anything was fired.
    Unreachable {
        /// The URL tried.
        url: String,
        /// What happened.
        cause: String,
    },
    /// The native client ran; its per-request records are in the `events` block.
    Native {
        /// Evidence block of the event log (JSON lines of [`RequestRecord`]).
        events: String,
        /// Requests the plan offered.
        offered: u64,
        /// When the schedule's zero was.
        started: Stamp,
        /// When the last request ended (or the run was stopped).
        ended: Stamp,
        /// Set when loadproof stopped it.
        interrupted: Option<Interruption>,
        /// The dispatch lag beyond which the client counts as having fallen behind, ns.
        lag_bound_ns: i64,
    },
}

/// The bench client's `--save-result` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ResultFile {
    /// Written and kept.
    Kept {
        /// Its evidence block.
        block: String,
    },
    /// Not there.
    Absent {
        /// Why (the process failed first, the file was not written, …).
        reason: String,
    },
}

/// When a scrape was taken relative to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Before the first request.
    Before,
    /// While requests were in flight (on the interval).
    During,
    /// After the last request ended.
    After,
}

/// One `/metrics` scrape, kept whether or not it succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scrape {
    /// The URL scraped.
    pub url: String,
    /// Before, during or after.
    pub phase: Phase,
    /// When the request was sent (`None` when imported without times).
    pub requested: Option<Stamp>,
    /// When the response (or the failure) came back, monotonic ns.
    pub completed_mono_ns: Option<i64>,
    /// HTTP status and the evidence block of the body, or the failure.
    pub outcome: ScrapeOutcome,
    /// What the URL exports: a serving engine (a replica of the fleet), or a GPU exporter.
    #[serde(default, skip_serializing_if = "Exporter::is_engine")]
    pub exporter: Exporter,
}

/// What a scraped URL exports, as the firing side declared it (the audit checks the body
/// against it: an engine URL must serve engine families, a DCGM URL DCGM fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exporter {
    /// A serving engine's own `/metrics` (vLLM, the sim): one replica of the fleet.
    #[default]
    Engine,
    /// An NVIDIA DCGM exporter: GPU telemetry and the GPU's model name.
    Dcgm,
}

impl Exporter {
    /// True for [`Exporter::Engine`] (the default, left out of the JSON).
    pub fn is_engine(&self) -> bool {
        *self == Exporter::Engine
    }
}

/// How a scrape ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScrapeOutcome {
    /// A response came back (any status); the body is evidence.
    Response {
        /// HTTP status (`None` when imported from a file without it).
        status: Option<u16>,
        /// Evidence block of the body.
        body: String,
    },
    /// No response: connection refused, timeout, …
    Failed {
        /// What happened.
        error: String,
    },
}

/// The client program that fired, bound by a digest of its source (vLLM's `serve.py`) or
/// binary (loadproof's own executable), so a reader knows which implementation produced the
/// labels, the semaphore semantics and the summary it printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Implementation {
    /// `vllm bench serve` or `loadproof native`.
    pub name: String,
    /// Its version, when known.
    pub version: Option<String>,
    /// The file the digest covers.
    pub source: Option<String>,
    /// sha256 of that file, lowercase hex; `None`: unbound, and why is in `unbound`.
    pub source_sha256: Option<String>,
    /// Why the digest is missing, when it is.
    pub unbound: Option<String>,
}

/// A receipt: one fired (or imported) run, self-contained. Serialized as the v1 document
/// (packed bodies rebuilt into `evidence`: see the `Serialize` impl below).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// [`RECEIPT_SCHEMA`].
    pub schema: String,
    /// What was asked of the server.
    pub protocol: Protocol,
    /// What was measured.
    pub subject: Subject,
    /// Who made the receipt and how.
    pub provenance: Provenance,
    /// What happened.
    pub execution: Execution,
    /// Every `/metrics` scrape, in order.
    pub scrapes: Vec<Scrape>,
    /// The raw evidence, by block name.
    pub evidence: BTreeMap<String, Evidence>,
    /// Things a reader should know (labelled as notes, never facts).
    pub notes: Vec<String>,
    /// The lease the run held: the name of its evidence block ([`block::LEASE`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
    /// The client implementation, bound or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    /// Numbers the writer derived when it wrote the file (the audit's facts at write time).
    /// Never trusted: the audit recomputes them from the evidence and reports any difference
    /// as an inconsistent receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<serde_json::Value>,
    /// How the receipt was read when it came from a record stream ([`stream`]): sealed or not,
    /// how far the run got. `None` for a v1 document, which is whole by construction. Not part
    /// of either form's bytes: it describes the reading.
    #[serde(skip)]
    pub stream: Option<stream::StreamStatus>,
    /// The scrape bodies a record stream holds as deltas ([`Packed`]), outside `evidence`:
    /// empty for a v1 document. Never serialized as such — [`Receipt::to_json`] writes them
    /// into `evidence`, rebuilt. Read every block through [`Receipt::block`],
    /// [`Receipt::block_names`] and [`Receipt::walk_scrapes`], which see both.
    #[serde(skip)]
    pub packed: Packed,
}

/// The v1 document, field by field as declared (so the bytes are what a derived impl wrote),
/// with `evidence` holding every block: a receipt read from a record stream serializes whole,
/// whoever serializes it — its packed bodies are rebuilt, under the digests their records
/// claim (a body that does not rebuild at all is left out, and so reads as missing).
impl Serialize for Receipt {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let optional = [
            self.lease.is_some(),
            self.implementation.is_some(),
            self.derived.is_some(),
        ];
        let fields = 8 + optional.iter().filter(|&&o| o).count();
        let mut st = serializer.serialize_struct("Receipt", fields)?;
        st.serialize_field("schema", &self.schema)?;
        st.serialize_field("protocol", &self.protocol)?;
        st.serialize_field("subject", &self.subject)?;
        st.serialize_field("provenance", &self.provenance)?;
        st.serialize_field("execution", &self.execution)?;
        st.serialize_field("scrapes", &self.scrapes)?;
        if self.packed.is_empty() {
            st.serialize_field("evidence", &self.evidence)?;
        } else {
            st.serialize_field("evidence", &self.all_evidence())?;
        }
        st.serialize_field("notes", &self.notes)?;
        if let Some(lease) = &self.lease {
            st.serialize_field("lease", lease)?;
        }
        if let Some(implementation) = &self.implementation {
            st.serialize_field("implementation", implementation)?;
        }
        if let Some(derived) = &self.derived {
            st.serialize_field("derived", derived)?;
        }
        st.end()
    }
}

/// Why bytes are not a receipt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// Not JSON, or not this schema's shape.
    #[error("not a loadproof receipt: line {line}, column {column}: {detail}")]
    Malformed {
        /// Line of the JSON error.
        line: usize,
        /// Column of the JSON error.
        column: usize,
        /// serde's message.
        detail: String,
    },
    /// Another schema version.
    #[error("receipt schema {found:?} is not {RECEIPT_SCHEMA:?}")]
    Schema {
        /// What the file says.
        found: String,
    },
    /// A record stream that cannot be read as a receipt (a record dropped, duplicated,
    /// reordered, spliced in or malformed).
    #[error("not a loadproof receipt: {0}")]
    Stream(#[from] stream::StreamError),
    /// A key twice in one object: readers that keep the first and readers that keep the last
    /// would read two different receipts.
    #[error(
        "not a loadproof receipt: the key {path} appears twice in one object (ambiguous: refused)"
    )]
    DuplicateKey {
        /// Where, as a JSON path.
        path: String,
    },
}

impl Receipt {
    /// False only for a record stream whose writer never appended its seal (it died, or is
    /// still writing): such a receipt is read as far as it got and never qualifies.
    pub fn sealed(&self) -> bool {
        self.stream.as_ref().is_none_or(|s| s.sealed)
    }

    /// Parses a receipt, refusing a key twice in any object. Digests are not checked here:
    /// see [`Receipt::verify_evidence`].
    pub fn from_json(bytes: &[u8]) -> Result<Receipt, ReceiptError> {
        let malformed = |e: serde_json::Error| ReceiptError::Malformed {
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        };
        if let Some(path) = strict_json::first_duplicate_key(bytes).map_err(malformed)? {
            return Err(ReceiptError::DuplicateKey { path });
        }
        let receipt: Receipt = serde_json::from_slice(bytes).map_err(malformed)?;
        if receipt.schema != RECEIPT_SCHEMA {
            return Err(ReceiptError::Schema {
                found: receipt.schema,
            });
        }
        Ok(receipt)
    }

    /// What the firing client captured about the run outside the evidence blocks — the
    /// protocol it fired, the execution (exit status, clock stamps, the offered count, its own
    /// lag bound), every scrape's record, the implementation it bound and the lease block it
    /// names — as the
    /// bytes of [`block::CAPTURE`]. A writer stores these bytes as evidence; the audit compares
    /// the receipt's fields with them, so an edit to a capture field after the fact is a named
    /// inconsistency, not a new fact.
    pub fn capture_json(&self) -> Vec<u8> {
        let value = serde_json::json!({
            "execution": self.execution,
            "implementation": self.implementation,
            "lease": self.lease,
            "protocol": self.protocol,
            "scrapes": self.scrapes,
        });
        serde_json::to_vec(&value).unwrap_or_default()
    }

    /// The bearer token a lease block still holds (leases written before tokens left the
    /// document): a secret that must not be published. `Ok(None)` when there is no lease block
    /// or it names only `token_sha256`; `Err` when the block cannot be read as one unambiguous
    /// JSON object, so nobody can tell whether it holds a token. Read leniently on purpose: a
    /// block that is not a valid lease (another schema, a missing field) can still hold one.
    pub fn lease_token(&self) -> Result<Option<String>, String> {
        let name = self.lease.as_deref().unwrap_or(block::LEASE);
        let Some(bytes) = self.raw_block(name) else {
            return Ok(None);
        };
        let bytes = bytes.map_err(|e| e.to_string())?;
        if let Some(path) = strict_json::first_duplicate_key(&bytes).map_err(|e| e.to_string())? {
            return Err(format!("{name}: the key {path} appears twice"));
        }
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| format!("{name}: {e}"))?;
        let serde_json::Value::Object(map) = value else {
            return Err(format!("{name}: not a JSON object"));
        };
        match map.get("token") {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(t)) if t.is_empty() => Ok(None),
            Some(serde_json::Value::String(t)) => Ok(Some(t.clone())),
            Some(_) => Err(format!("{name}: a token field that is not a string")),
        }
    }

    /// The receipt with the bearer token taken out of its lease block: the document rewritten
    /// with `token_sha256` in place of `token`, its evidence digest recomputed, and a note that
    /// says so (with the digest of the bytes as received). The lease block is then no longer
    /// the lessor's bytes; the audit's window standing rests on the lessor's readback in the
    /// scrapes, which redaction does not touch. Unchanged when there is no token to take out.
    pub fn redact_lease_token(mut self) -> Receipt {
        let Ok(Some(token)) = self.lease_token() else {
            return self;
        };
        let name = self
            .lease
            .clone()
            .unwrap_or_else(|| block::LEASE.to_owned());
        let Some(Ok(bytes)) = self.raw_block(&name) else {
            return self;
        };
        let bytes = bytes.into_owned();
        let Ok(serde_json::Value::Object(mut map)) = serde_json::from_slice(&bytes) else {
            return self;
        };
        let original = sha256_hex(&bytes);
        map.remove("token");
        map.insert(
            "token_sha256".to_owned(),
            serde_json::Value::String(sha256_hex(token.as_bytes())),
        );
        let mut json = serde_json::to_string_pretty(&map).unwrap_or_default();
        json.push('\n');
        self.evidence
            .insert(name.clone(), Evidence::of(json.as_bytes()));
        self.notes.push(format!(
            "{name} was redacted when published: its bearer token replaced by token_sha256 (the block as received had sha256 {original})"
        ));
        self
    }

    /// The receipt with its [`block::CAPTURE`] block (re)written from its fields: the last
    /// thing a writer does before the audit and the file.
    pub fn with_capture(mut self) -> Receipt {
        let capture = Evidence::of(&self.capture_json());
        self.evidence.insert(block::CAPTURE.to_owned(), capture);
        self
    }

    /// [`Receipt::to_json`] and a final newline, written straight to `out` (a receipt of
    /// hundreds of megabytes is not built as one string first).
    pub fn write_json<W: std::io::Write>(&self, mut out: W) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut out, self).map_err(std::io::Error::other)?;
        out.write_all(b"\n")
    }

    /// Pretty JSON, deterministic (maps are ordered): the v1 document, every packed body
    /// rebuilt into `evidence`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Every block as an inline [`Evidence`]: packed bodies rebuilt (in one walk) under the
    /// digest their record claims, verified or not (a body that does not match keeps failing
    /// by name); a body that does not rebuild at all is left out.
    fn all_evidence(&self) -> BTreeMap<String, Evidence> {
        let mut all = self.evidence.clone();
        self.walk_scrapes(|w| {
            if let Some(bytes) = w.bytes
                && !all.contains_key(w.name)
            {
                all.insert(
                    w.name.to_owned(),
                    Evidence::claimed(
                        std::borrow::Cow::Borrowed(bytes),
                        &w.body.sha256,
                        w.body.bytes,
                    ),
                );
            }
        });
        all
    }

    /// The receipt with every packed body rebuilt into `evidence` (see `all_evidence`): the
    /// v1 form in memory, for a reader that compares receipts block by block.
    pub fn unpacked(&self) -> std::borrow::Cow<'_, Receipt> {
        if self.packed.is_empty() {
            return std::borrow::Cow::Borrowed(self);
        }
        std::borrow::Cow::Owned(Receipt {
            evidence: self.all_evidence(),
            packed: Packed::default(),
            ..self.clone()
        })
    }

    /// Every block the receipt holds, inline or packed, by name, with the digest and length
    /// its record claims.
    pub fn block_names(&self) -> Vec<(&str, &str, u64)> {
        let mut names: Vec<(&str, &str, u64)> = self
            .evidence
            .iter()
            .map(|(n, e)| (n.as_str(), e.sha256.as_str(), e.bytes))
            .chain(
                self.packed
                    .iter()
                    .filter(|(n, _)| !self.evidence.contains_key(*n))
                    .map(|(n, b)| (n.as_str(), b.sha256.as_str(), b.bytes)),
            )
            .collect();
        names.sort_unstable_by(|a, b| a.0.cmp(b.0));
        names
    }

    /// The sha256 the receipt records for block `name`, inline or packed.
    pub fn recorded_sha256(&self, name: &str) -> Option<&str> {
        self.evidence
            .get(name)
            .map(|e| e.sha256.as_str())
            .or_else(|| self.packed.get(name).map(|b| b.sha256.as_str()))
    }

    /// The raw bytes of block `name`, inline (decoded) or packed (rebuilt), *not* checked
    /// against its digest; `None` when the receipt does not hold it.
    pub fn raw_block(
        &self,
        name: &str,
    ) -> Option<Result<std::borrow::Cow<'_, [u8]>, EvidenceError>> {
        match self.evidence.get(name) {
            Some(e) => Some(e.decoded(name)),
            None if self.packed.contains(name) => {
                Some(self.packed.rebuild(name).map(std::borrow::Cow::Owned))
            }
            None => None,
        }
    }

    /// True when the receipt holds block `name`, inline or packed.
    pub fn has_block(&self, name: &str) -> bool {
        self.evidence.contains_key(name) || self.packed.contains(name)
    }

    /// The inline blocks ([`Receipt::evidence`]) checked, and every block the receipt refers
    /// to that it does not hold: [`Receipt::verify_evidence`] without the packed bodies, for a
    /// reader that checks those as it walks them.
    pub fn verify_inline(&self) -> Vec<EvidenceError> {
        let mut errors: Vec<EvidenceError> = self
            .evidence
            .iter()
            .filter_map(|(name, e)| e.verified(name).err())
            .collect();
        for name in self.referenced_blocks() {
            if !self.has_block(name) {
                errors.push(EvidenceError::Missing {
                    block: name.to_owned(),
                });
            }
        }
        errors
    }

    /// Every evidence block the receipt refers to or holds, checked: one error per block that
    /// is missing, undecodable, does not rebuild, or is not the bytes its digest names, in
    /// the order of the blocks' names. Empty when all verify.
    pub fn verify_evidence(&self) -> Vec<EvidenceError> {
        let mut errors: BTreeMap<String, EvidenceError> = self
            .evidence
            .iter()
            .filter_map(|(name, e)| e.verified(name).err())
            .map(|e| (e.block().to_owned(), e))
            .collect();
        self.walk_scrapes(|w| {
            if let Some(e) = &w.error {
                errors.insert(e.block().to_owned(), e.clone());
            }
        });
        let mut errors: Vec<EvidenceError> = errors.into_values().collect();
        for name in self.referenced_blocks() {
            if !self.has_block(name) {
                errors.push(EvidenceError::Missing {
                    block: name.to_owned(),
                });
            }
        }
        errors
    }

    /// Every packed body, rebuilt and checked, once each in the order written (see [`Walk`]).
    pub fn walk_scrapes(&self, mut each: impl FnMut(&Walked<'_>)) {
        let mut walk = self.packed.walk();
        while let Some(w) = walk.next() {
            each(&w);
        }
    }

    /// The raw bytes of block `name`, verified. A packed body is rebuilt from its chain: to
    /// read every scrape, walk them ([`Receipt::walk_scrapes`]).
    pub fn block(&self, name: &str) -> Result<Vec<u8>, EvidenceError> {
        if let Some(e) = self.evidence.get(name) {
            return e.verified(name);
        }
        let Some(body) = self.packed.get(name) else {
            return Err(EvidenceError::Missing {
                block: name.to_owned(),
            });
        };
        let raw = self.packed.rebuild(name)?;
        packed::check(name, body, &raw)?;
        Ok(raw)
    }

    /// The plan this receipt says it fired (`plan/plan.json`), when embedded, verified and
    /// readable. Not checked against the protocol: an experiment does that, by name.
    pub fn embedded_plan(&self) -> Option<PlanDoc> {
        self.block(block::PLAN)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
    }

    /// Names of the blocks the execution and scrapes point at.
    pub fn referenced_blocks(&self) -> Vec<&str> {
        let mut names = Vec::new();
        match &self.execution {
            Execution::Ran {
                stdout,
                stderr,
                result,
                ..
            } => {
                names.push(stdout.as_str());
                names.push(stderr.as_str());
                if let ResultFile::Kept { block } = result {
                    names.push(block.as_str());
                }
            }
            Execution::Native { events, .. } => names.push(events.as_str()),
            Execution::NotStarted { .. } | Execution::Unreachable { .. } => {}
        }
        if let Some(lease) = &self.lease {
            names.push(lease.as_str());
        }
        for s in &self.scrapes {
            if let ScrapeOutcome::Response { body, .. } = &s.outcome {
                names.push(body.as_str());
            }
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol() -> Protocol {
        Protocol {
            engine: Engine::VllmBenchServe,
            client_version: Some("0.32.0".into()),
            backend: Some("openai".into()),
            endpoint: Some("/v1/completions".into()),
            base_url: Some("http://127.0.0.1:8000".into()),
            model: Some("tiny-llama".into()),
            tokenizer: Some("/tok".into()),
            trace_sha256: Some("a".into()),
            timed_trace_sha256: Some("b".into()),
            plan_sha256: Some("c".into()),
            requests: Some(20),
            chunk_size: Some(512),
            sec_multiplier: Some("0.001".into()),
            arrival: Some("self_timed".into()),
            ignore_eos: Some(true),
            max_concurrency: Some(0),
            python_hash_seed: Some("0".into()),
            sampling: BTreeMap::new(),
            argv: vec!["vllm".into()],
            tls: None,
            key: String::new(),
        }
        .sealed()
    }

    #[test]
    fn the_protocol_key_covers_every_work_changing_field() {
        let p = protocol();
        assert!(p.key.starts_with("sha256:"));
        assert_eq!(p.canonical_key(), p.key);
        let mut q = p.clone();
        q.max_concurrency = Some(2);
        assert_ne!(q.canonical_key(), p.key);
        let mut q = p.clone();
        q.model = None;
        assert_eq!(q.unstated(), ["model"]);
        assert_ne!(q.canonical_key(), p.key);
        let mut q = p.clone();
        q.sampling.insert("temperature".into(), "0".into());
        assert_ne!(q.canonical_key(), p.key);
        let mut q = p.clone();
        q.chunk_size = Some(16);
        assert_ne!(q.canonical_key(), p.key);
    }

    #[test]
    fn a_receipt_round_trips_and_verifies() {
        let mut evidence = BTreeMap::new();
        evidence.insert(block::STDOUT.to_owned(), Evidence::of(b"ok\n"));
        evidence.insert(block::STDERR.to_owned(), Evidence::of(b""));
        evidence.insert("metrics/0".to_owned(), Evidence::of(b"vllm:x 1\n"));
        let t = Stamp {
            mono_ns: 0,
            unix_ns: 1_790_000_000_000_000_000,
        };
        let receipt = Receipt {
            schema: RECEIPT_SCHEMA.into(),
            protocol: protocol(),
            subject: Subject {
                model: Axis::from_caller(Some("tiny-llama"), ""),
                model_revision: Axis::from_caller(None, "not given: pass --model-revision"),
                gpu_sku: Axis::from_caller(None, "not given"),
                engine: Axis::from_caller(Some("vllm"), ""),
                engine_version: Axis::from_caller(None, "not given"),
                knobs: BTreeMap::new(),
                simulator: false,
            },
            provenance: Provenance {
                source: "fire".into(),
                generator: "loadproof 0.1.0".into(),
                command: vec!["loadproof".into(), "fire".into()],
                caller: BTreeMap::new(),
                written_unix_ns: 1,
            },
            execution: Execution::Ran {
                program: "/venv/bin/vllm".into(),
                argv: vec!["vllm".into()],
                env: BTreeMap::new(),
                exit: ExitStatus {
                    code: Some(0),
                    signal: None,
                },
                stdout: block::STDOUT.into(),
                stderr: block::STDERR.into(),
                result: ResultFile::Absent {
                    reason: "no --save-result file was written".into(),
                },
                started: Some(t),
                ended: Some(t),
                interrupted: None,
            },
            scrapes: vec![Scrape {
                url: "http://127.0.0.1:8000/metrics".into(),
                phase: Phase::Before,
                requested: Some(t),
                completed_mono_ns: Some(5),
                outcome: ScrapeOutcome::Response {
                    status: Some(200),
                    body: "metrics/0".into(),
                },
                exporter: Default::default(),
            }],
            evidence,
            notes: vec![],
            lease: None,
            implementation: None,
            derived: None,
            stream: None,
            packed: Default::default(),
        };
        let json = receipt.to_json();
        let back = Receipt::from_json(json.as_bytes()).unwrap();
        assert_eq!(back, receipt);
        assert!(back.verify_evidence().is_empty());

        let tampered = json.replace("vllm:x 1", "vllm:x 2");
        let errors = Receipt::from_json(tampered.as_bytes())
            .unwrap()
            .verify_evidence();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("\"metrics/0\""));

        let mut missing = receipt.clone();
        missing.evidence.remove(block::STDOUT);
        assert!(matches!(
            missing.verify_evidence().as_slice(),
            [EvidenceError::Missing { block }] if block == block::STDOUT
        ));
        assert!(matches!(
            Receipt::from_json(b"{}"),
            Err(ReceiptError::Malformed { .. })
        ));
    }
}
