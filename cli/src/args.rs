//! Command-line arguments. Doc comments are the help text; parsing does no I/O.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// loadproof — make an LLM-serving tuning claim checkable.
///
/// Exit codes: 0 success; 2 bad input, bad usage or a runtime error (the message names the
/// file, line and field). A broken pipe on stdout exits 0.
#[derive(Debug, Parser)]
#[command(name = "loadproof", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Production traces: inspect one, or synthesize one.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Turn a trace into the exact file and command `vllm bench serve` replays, and prove the
    /// file says what the trace says (`plan TRACE --out DIR`; `plan check DIR` re-proves it).
    Plan(PlanCommand),
    /// Fire a verified plan at an endpoint and write one receipt, whatever happens.
    Fire(FireArgs),
    /// Receipts: build one from files captured by hand, or verify one's evidence digests.
    #[command(subcommand)]
    Receipt(ReceiptCommand),
    /// Serve a local OpenAI-compatible LLM-serving SIMULATOR (not vLLM) for demos and tests.
    Sim(SimArgs),
    /// Forward to a serving engine (vLLM) and grant exclusive leases on it: the lessor a real
    /// server lacks.
    Gate(GateArgs),
    /// The playbook: build a row from two arms of receipts, ask which rows apply to live
    /// traffic, write the illustrative examples.
    #[command(subcommand)]
    Playbook(PlaybookCommand),
    /// Signing keys: the lessor (`gate`, `sim`) signs what only it sees with one; a reviewer
    /// trusts its public half (`--trust`).
    #[command(subcommand)]
    Key(KeyCommand),
}

/// `loadproof key`
#[derive(Debug, clap::Subcommand)]
pub enum KeyCommand {
    /// Write a new Ed25519 key pair: the secret key to OUT (mode 0600, never overwritten) and
    /// its public key to OUT.pub; print the public key line (what a reviewer trusts).
    New(KeyNewArgs),
}

/// `loadproof key new`
#[derive(Debug, clap::Args)]
pub struct KeyNewArgs {
    /// The secret key file to write (refused if it exists); the public key goes to OUT.pub.
    #[arg(long, value_name = "OUT")]
    pub out: PathBuf,
    /// A comment on the public key line: who holds the secret half (e.g. "gate at lab-3").
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub comment: String,
}

/// Which client fires the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// `vllm bench serve` as a child process of `--python`'s install.
    Vllm,
    /// loadproof's own open-loop client.
    Native,
    /// NVIDIA AIPerf (`aiperf profile`, 0.13.x) as a child process of `--python`'s install,
    /// fed the plan as its `mooncake_trace` dataset on a fixed schedule.
    Aiperf,
    /// GuideLLM (`guidellm run`, 0.8.x) as a child process of `--python`'s install, fed the
    /// plan as its `mooncake` trace under its `replay` profile.
    Guidellm,
}

/// The form a receipt is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReceiptForm {
    /// A zstd-compressed record stream, appended as the run happens and sealed at its end.
    Stream,
    /// One `loadproof.receipt/v1` JSON document, written whole at the end.
    Json,
}

/// `loadproof fire PLAN_DIR --endpoint URL --engine vllm|native --out RECEIPT`
///
/// Exit codes: 0 the run was captured and the client finished cleanly (a capture, not a
/// qualification; failed requests are recorded, not an exit code); 1 a receipt was written for
/// a run that failed, could not start, found the endpoint unreachable, was interrupted or (native)
/// fell behind its schedule by more than --lag-bound-ms; 2 bad input, nothing written.
#[derive(Debug, clap::Args)]
pub struct FireArgs {
    /// A secret key (`loadproof key new`) to sign the record stream's seal with: a reviewer
    /// then sees who sealed it, and no record can be added, dropped or changed afterwards
    /// without the signature naming another stream. (The lessor's own signatures are what
    /// make a window signed; this one binds the file to its writer.)
    #[arg(long, value_name = "KEYFILE")]
    pub signing_key: Option<PathBuf>,
    /// The plan directory (from `loadproof plan`; must be verified and unchanged).
    pub plan: PathBuf,
    /// The server's base URL, e.g. http://127.0.0.1:8000 (fills the plan's --base-url).
    #[arg(long, value_name = "URL")]
    pub endpoint: String,
    /// The client that fires.
    #[arg(long, value_enum)]
    pub engine: EngineArg,
    /// Where to write the receipt (also for failed runs). As a record stream it is written
    /// while the run happens (a crash leaves a receipt readable up to its last record).
    #[arg(long, value_name = "RECEIPT")]
    pub out: PathBuf,
    /// The receipt's form: `stream` (zstd record stream, written as the run happens) or `json`
    /// (one v1 JSON document written at the end, as loadproof wrote before).
    #[arg(long, value_enum, default_value = "stream")]
    pub form: ReceiptForm,
    /// The Python interpreter whose vLLM install is checked and run (--engine vllm).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// The served model name (default: the plan's, else the first id of /v1/models).
    #[arg(long)]
    pub model: Option<String>,
    /// The tokenizer. --engine vllm: the name or path vLLM loads (default: the plan's, else
    /// the model). --engine native: a Hugging Face tokenizer.json, or a directory holding one,
    /// whose vocabulary minus special tokens the prompt tokens are drawn from (default: none,
    /// ids 0..--vocab-size, fine for `loadproof sim`).
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// --engine native without --tokenizer: prompt token ids are drawn from 0..N.
    #[arg(long, value_name = "N", default_value_t = 32_000)]
    pub vocab_size: u32,
    /// --engine native: seconds after its send before a request that has not ended is a
    /// `timeout`.
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    pub request_timeout: f64,
    /// --engine native: the run is invalid (exit 1, a receipt note) when any request was sent
    /// later than this after its scheduled time.
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    pub lag_bound_ms: f64,
    /// A serving engine's /metrics URL to scrape (repeatable: one per replica of a fleet behind
    /// a router, or a frontend and its workers). The audit sums their counters and hears each
    /// one's word on the subject. Default: ENDPOINT/metrics.
    #[arg(long = "metrics-url", value_name = "URL")]
    pub metrics_urls: Vec<String>,
    /// An NVIDIA DCGM exporter's /metrics URL (repeatable: one per GPU node): scraped with the
    /// engine's, its GPU model read back as the subject's gpu_sku, its utilisation, memory,
    /// power and clocks kept as telemetry. `loadproof sim` serves a simulated one at
    /// /dcgm/metrics.
    #[arg(long = "dcgm-url", value_name = "URL")]
    pub dcgm_urls: Vec<String>,
    /// Milliseconds between /metrics scrapes while requests are in flight.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    pub scrape_interval_ms: u64,
    /// A lease on the endpoint obtained elsewhere (an operator's gateway, `POST
    /// /loadproof/lease`): a `loadproof.lease/v1` JSON file, kept byte for byte as the receipt's
    /// `window/lease.json`, so it must name only its token's sha256 (a document holding the
    /// token is refused). The token (--lease-token-env) is sent as `Authorization: Bearer`
    /// (native) or `OPENAI_API_KEY` (vllm) and written nowhere.
    #[arg(long, value_name = "FILE", conflicts_with = "acquire_lease")]
    pub lease: Option<PathBuf>,
    /// With --lease: the environment variable that holds the lease's bearer token (never a flag
    /// value: flags land in argv, `ps` and receipts). Checked against the lease's token_sha256.
    #[arg(long, value_name = "NAME", requires = "lease")]
    pub lease_token_env: Option<String>,
    /// Ask the endpoint for an exclusive lease of SECONDS before the first scrape (`POST
    /// ENDPOINT/loadproof/lease`, as `loadproof sim` grants); a refusal is exit 2.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub acquire_lease: Option<u64>,
    /// The environment variable holding the server's API key (a vLLM started with
    /// `--api-key`): sent as `Authorization: Bearer` on every request to the endpoint (native),
    /// or as `OPENAI_API_KEY` (vllm), and written nowhere — never a flag value, since flags land
    /// in argv, `ps` and receipts. With a lease too, the lease token travels in its own
    /// `x-loadproof-lease-token` header.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub subject: SubjectArgs,
}

/// How a client checks the certificates of `https://` servers.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TrustArgs {
    /// A private CA's certificate (PEM) to trust besides the platform's store, for `https://`
    /// endpoints and /metrics URLs (recorded in the receipt's protocol by its sha256).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub ca_cert: Option<PathBuf>,
    /// Check no TLS certificate: anyone on the network path could answer. Recorded — by fire
    /// in the receipt's protocol, by the gate in its /metrics (`loadproof_gate_info{upstream_tls}`)
    /// — and named by the audit as a caveat.
    #[arg(long)]
    pub insecure: bool,
}

/// A server's own certificate and key, to serve `https://`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeTlsArgs {
    /// Serve `https://` with this certificate chain (PEM, leaf first).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve `https://` with a throwaway certificate for 127.0.0.1, ::1 and localhost, signed by
    /// a throwaway CA whose certificate is written to CA_FILE (for clients' `--ca-cert`): TLS
    /// to try out without anyone's real certificate.
    #[arg(long, value_name = "CA_FILE", conflicts_with = "tls_cert")]
    pub tls_self_signed: Option<PathBuf>,
}

/// `loadproof receipt …`
#[derive(Debug, Subcommand)]
pub enum ReceiptCommand {
    /// Build a receipt from a `vllm bench serve` run someone captured by hand (stdout, stderr,
    /// exit code, result JSON, /metrics before and after). Provenance says it was imported.
    Import(Box<ImportArgs>),
    /// Check every evidence block's sha256. Exit 0 all verify, 1 a block fails, 2 unreadable.
    Verify(VerifyArgs),
    /// Recompute every fact from the raw evidence and print it all: digests, the execution
    /// gate, ledger, client rate, latency, engine counters, foreign work, occupancy, every
    /// standing and the qualification. Exit 0 printed (whatever it found), 2 unreadable.
    Audit(AuditArgs),
    /// Exit 0 when the receipt holds a captured raw observation (digests verify, client facts
    /// read), 1 when it does not, 2 unreadable. Says nothing about qualification.
    CaptureCheck(AuditArgs),
    /// Exit 0 when qualified, 1 unqualified (every refusal listed), 2 invalid receipt.
    Qualify(AuditArgs),
    /// Compare two receipts, baseline vs treatment: each side's qualification, every differing
    /// protocol field and subject axis, the knobs changed, and every metric with its change.
    /// One receipt per arm is an observation, not a measured effect. Exit 0 comparable, 1 not
    /// (every reason printed), 2 a file unreadable or not a receipt.
    Compare(CompareArgs),
    /// Rewrite a receipt in another form (a v1 JSON document as a sealed record stream, or
    /// back): the same receipt, the same audit. Refuses a receipt whose evidence does not
    /// verify or that is unsealed (nothing is laundered by a conversion). Exit 0 written, 2 bad
    /// input.
    Upgrade(UpgradeArgs),
    /// Write one evidence block's raw bytes, exactly as received, to stdout: its `sha256sum`
    /// is the digest the receipt records. Exit 0 written, 1 the block fails verification
    /// (nothing written), 2 no such block or not a receipt.
    Extract(ExtractArgs),
}

/// `loadproof receipt upgrade`
#[derive(Debug, clap::Args)]
pub struct UpgradeArgs {
    /// The receipt to convert (either form).
    pub receipt: PathBuf,
    /// Where to write the converted receipt.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The form to write.
    #[arg(long, value_enum, default_value = "stream")]
    pub form: ReceiptForm,
}

/// `loadproof receipt extract`
#[derive(Debug, clap::Args)]
pub struct ExtractArgs {
    /// The receipt (either form).
    pub receipt: PathBuf,
    /// The block's name (`loadproof receipt verify` lists them): `metrics/3`, `plan.json`, …
    pub block: String,
}

/// `loadproof receipt audit|capture-check|qualify`
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// The receipt.
    pub receipt: PathBuf,
    /// Print the audit as JSON (`loadproof.audit/v1`, documented in the README).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// The reviewer's audit policy (`loadproof.audit-policy/v1`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PolicyArgs {
    /// The reviewer's audit policy: the thresholds every standing is judged against (send lag,
    /// scrape gap, queue length; README "The audit policy") [default: loadproof's documented
    /// defaults]. A receipt's own bounds are the claimant's intent and never used.
    #[arg(long = "policy", value_name = "POLICY_JSON")]
    pub file: Option<PathBuf>,
    /// A file of public keys you trust (`loadproof-ed25519 BASE64 [comment]` lines, as
    /// `loadproof key new` prints them; repeatable). Given any, the window and subject stand
    /// only on a lease signed by one of them; given none, every receipt is self-attested.
    #[arg(long = "trust", value_name = "KEYFILE")]
    pub trust: Vec<PathBuf>,
}

/// `loadproof receipt compare`
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline receipt (without the change under test).
    pub baseline: PathBuf,
    /// The treatment receipt (with it).
    pub treatment: PathBuf,
    /// Print the comparison as JSON (`loadproof.compare/v1`, documented in the README).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// `loadproof receipt import`
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The bench client's stdout, as captured.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["aiperf_dir", "guidellm_report"])]
    pub stdout: Option<PathBuf>,
    /// Its stderr, as captured (kept as diagnostics; never read for facts).
    #[arg(long, value_name = "FILE", required_unless_present_any = ["aiperf_dir", "guidellm_report"])]
    pub stderr: Option<PathBuf>,
    /// An AIPerf run's artifact directory (its `profile_export.jsonl`, summary and log): the run
    /// was AIPerf's.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["result", "guidellm_report"])]
    pub aiperf_dir: Option<PathBuf>,
    /// A GuideLLM run's JSON report (`benchmarks.json`): the run was GuideLLM's.
    #[arg(long, value_name = "FILE", conflicts_with = "result")]
    pub guidellm_report: Option<PathBuf>,
    /// The trace file the peer tool was given (kept as its input block, which the audit holds
    /// to the plan's schedule).
    #[arg(long, value_name = "FILE")]
    pub tool_input: Option<PathBuf>,
    /// AIPerf's configuration file, when it ran from one (`aiperf profile --config`).
    #[arg(long, value_name = "FILE", requires = "aiperf_dir")]
    pub aiperf_config: Option<PathBuf>,
    /// Its exit code.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub exit_code: i32,
    /// The `--save-result` JSON, if there was one.
    #[arg(long, value_name = "FILE")]
    pub result: Option<PathBuf>,
    /// A /metrics scrape taken before the run.
    #[arg(long, value_name = "FILE")]
    pub metrics_before: Option<PathBuf>,
    /// A /metrics scrape taken after the run.
    #[arg(long, value_name = "FILE")]
    pub metrics_after: Option<PathBuf>,
    /// The plan directory that was fired (fills the protocol from plan.json).
    #[arg(long, value_name = "DIR", conflicts_with = "trace")]
    pub plan: Option<PathBuf>,
    /// The timed_trace file that was fired, when there is no plan directory.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The served model name the run used.
    #[arg(long)]
    pub model: Option<String>,
    /// The tokenizer the run used.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// The base URL the run fired at.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// `--timed-trace-chunk-hash-size` of the run (with --trace).
    #[arg(long, value_name = "TOKENS")]
    pub chunk_size: Option<u32>,
    /// `--timed-trace-sec-multiplier` of the run (with --trace).
    #[arg(long, value_name = "X")]
    pub sec_multiplier: Option<String>,
    /// The version of `vllm bench serve` that ran.
    #[arg(long, value_name = "VERSION")]
    pub client_version: Option<String>,
    /// The client's source as it ran (`…/site-packages/vllm/benchmarks/serve.py`): its sha256
    /// binds the receipt's implementation.
    #[arg(long, value_name = "FILE")]
    pub client_source: Option<PathBuf>,
    #[command(flatten)]
    pub subject: SubjectArgs,
    /// Where to write the receipt (atomically).
    #[arg(long, value_name = "RECEIPT")]
    pub out: PathBuf,
    /// The receipt's form: `stream` (a sealed zstd record stream) or `json` (a v1 document).
    #[arg(long, value_enum, default_value = "stream")]
    pub form: ReceiptForm,
}

/// What was measured, as the caller states it; anything not given is recorded as unknown.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SubjectArgs {
    /// The model's exact revision (hub commit or checkpoint digest).
    #[arg(long, value_name = "REV")]
    pub model_revision: Option<String>,
    /// The accelerator (e.g. "NVIDIA H100 80GB HBM3").
    #[arg(long, value_name = "SKU")]
    pub gpu_sku: Option<String>,
    /// The serving engine's version (e.g. 0.32.0).
    #[arg(long, value_name = "VERSION")]
    pub engine_version: Option<String>,
    /// An engine setting of the measured server, KEY=VALUE (repeatable).
    #[arg(long = "knob", value_name = "KEY=VALUE")]
    pub knobs: Vec<String>,
    /// A statement to keep in the receipt's provenance, KEY=VALUE (operator, ticket, note).
    #[arg(long = "caller", value_name = "KEY=VALUE")]
    pub caller: Vec<String>,
}

/// `loadproof sim --port P`
///
/// Streams placeholder tokens from `POST /v1/completions` on the schedule of a simple
/// continuous-batching model, and serves `GET /metrics` (vLLM's metric names, plus
/// `loadproof_sim_info`), `GET /health` and `GET /v1/models`. `POST /loadproof/lease` with
/// `{"holder": "...", "seconds": N}` grants one exclusive lease at a time: while it holds,
/// completions without its `Authorization: Bearer` token get 423. Prints "loadproof sim
/// listening on http://HOST:PORT (simulator, not vLLM)" on stderr; stops on SIGINT or SIGTERM
/// (exit 0).
#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// A secret key (`loadproof key new`) to sign every lease granted with: the grant's
    /// `x-loadproof-lease-signed` header carries the signature, fire keeps it in the receipt,
    /// and a reviewer who trusts the public half sees the lease as the simulator's, not the claimant's.
    #[arg(long, value_name = "KEYFILE")]
    pub signing_key: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1]. Anything but loopback (0.0.0.0, say) only
    /// when given here explicitly.
    #[arg(long)]
    pub host: Option<String>,
    /// Port to listen on; 0 picks a free one (the stderr line names it).
    #[arg(long)]
    pub port: u16,
    /// The served model name (requests naming another model get 404).
    #[arg(long, default_value = "sim")]
    pub model: String,
    /// Sequences in the running batch at most; later requests queue.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_num_seqs: u32,
    /// Prefill speed: a step that admits P prompt tokens lasts P / X seconds longer.
    #[arg(long, value_name = "X", default_value_t = 50_000.0)]
    pub prefill_tokens_per_s: f64,
    /// Fixed length of a decode step, milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2.0)]
    pub decode_step_ms: f64,
    /// Extra length of a decode step per running sequence, milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0.05)]
    pub decode_ms_per_seq: f64,
    /// KV-cache capacity in tokens; each running request reserves prompt + max_tokens. A
    /// request larger than this is refused (400).
    #[arg(long, value_name = "N", default_value_t = 1_048_576)]
    pub kv_capacity_tokens: u64,
    /// Inject a fault into every EVERY_N-th valid completion request (default every one):
    /// refuse (close without a response), http500, cut (end the stream abruptly after half
    /// the tokens), stall (stop after the first token, keep the connection open). Repeatable;
    /// the first matching flag wins.
    #[arg(long, value_name = "KIND[:EVERY_N]")]
    pub fault: Vec<String>,
    /// The model revision the simulator states (lease subject, `loadproof_sim_info{revision}`).
    #[arg(long, value_name = "REV", default_value = "none (simulator)")]
    pub model_revision: String,
    /// The accelerator the simulator states (lease subject, `loadproof_sim_info{gpu_sku}`).
    #[arg(long, value_name = "SKU", default_value = "none (simulator)")]
    pub gpu_sku: String,
    /// Require this environment variable's value as `Authorization: Bearer` on `/v1/*`, as vLLM
    /// does when started with `--api-key` (401 otherwise); the lease token then travels in
    /// `x-loadproof-lease-token`.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    #[command(flatten)]
    pub tls: ServeTlsArgs,
}

/// `loadproof gate --upstream URL --port P`
///
/// A reverse proxy in front of a serving engine (vLLM) that grants exclusive leases, so a run
/// fired through it can have an isolated window. Every request is forwarded to `--upstream`
/// (responses stream back unbuffered). `POST /loadproof/lease` with `{"holder": "...",
/// "seconds": N}` grants one lease at a time, bound to the model, engine and engine version
/// read back from the upstream (`/v1/models`, `/metrics`, `/version`) plus `--model-revision`
/// and `--gpu-sku` when given; while it holds, requests without its `Authorization: Bearer`
/// token get 423 (except GET /metrics, /health, /version, /v1/models) and requests with it are
/// forwarded without it. Traffic that reaches the upstream directly is not kept out. Prints
/// "loadproof gate listening on http://HOST:PORT (forwarding to UPSTREAM)" on stderr; stops on
/// SIGINT or SIGTERM (exit 0).
#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// A secret key (`loadproof key new`) to sign every lease granted with: the grant's
    /// `x-loadproof-lease-signed` header carries the signature, fire keeps it in the receipt,
    /// and a reviewer who trusts the public half sees the lease as the gate's, not the claimant's.
    #[arg(long, value_name = "KEYFILE")]
    pub signing_key: Option<PathBuf>,
    /// The server to forward to, `http://HOST:PORT` (vLLM's OpenAI-compatible server).
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// Address to listen on [default: 127.0.0.1]. Anything but loopback (0.0.0.0, say) only
    /// when given here explicitly.
    #[arg(long)]
    pub host: Option<String>,
    /// Port to listen on; 0 picks a free one (the stderr line names it).
    #[arg(long)]
    pub port: u16,
    /// The model revision the upstream serves, stated in every lease's subject. Not given: the
    /// lease states none (a `loadproof sim` upstream states its own).
    #[arg(long, value_name = "REV")]
    pub model_revision: Option<String>,
    /// The accelerator the upstream runs on, stated in every lease's subject. Not given: the
    /// lease states none (a `loadproof sim` upstream states its own).
    #[arg(long, value_name = "SKU")]
    pub gpu_sku: Option<String>,
    /// The environment variable holding the upstream's API key (a vLLM started with
    /// `--api-key`): the gate sends it as `Authorization: Bearer` on every request it forwards
    /// and every readback it makes, in place of whatever the client sent. Never a flag value.
    #[arg(long, value_name = "NAME")]
    pub upstream_api_key_env: Option<String>,
    /// Trust for an `https://` upstream.
    #[command(flatten)]
    pub trust: TrustArgs,
    #[command(flatten)]
    pub tls: ServeTlsArgs,
}

/// `loadproof receipt verify`
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The receipt.
    pub receipt: PathBuf,
}

/// `loadproof plan TRACE --out DIR` or `loadproof plan check DIR`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct PlanCommand {
    /// `check DIR`: re-read a plan directory and its source and re-run every check.
    #[command(subcommand)]
    pub check: Option<PlanSubcommand>,
    /// Make a plan.
    #[command(flatten)]
    pub make: PlanArgs,
}

/// `loadproof plan check`.
#[derive(Debug, Subcommand)]
pub enum PlanSubcommand {
    /// Re-read DIR/plan.json, its source trace and DIR/timed_trace.jsonl; recompute and compare
    /// everything. Exit 0 PASS, 1 FAIL, 2 unreadable input.
    Check(PlanCheckArgs),
}

/// `loadproof plan TRACE --out DIR`
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// The trace file (BurstGPT CSV, Mooncake JSONL or Azure CSV; detected by header).
    #[arg(required = true)]
    pub trace: Option<PathBuf>,
    /// The plan directory to write (`plan.json`, `timed_trace.jsonl`); created if missing.
    #[arg(long, value_name = "DIR", required = true, display_order = 0)]
    pub out: Option<PathBuf>,
    /// Which part of the trace to plan.
    #[command(flatten)]
    pub slice: TraceSliceArgs,
    /// Tokens per hash id (`--timed-trace-chunk-hash-size`). Default: the source's block size
    /// (Mooncake 512), or 512 for synthesized blocks. Refused when it does not tile a prompt.
    #[arg(long, value_name = "TOKENS", display_order = 20)]
    pub chunk_size: Option<u32>,
    /// Speed-up: 2 replays the arrivals twice as fast (an exact decimal, recorded).
    #[arg(long, value_name = "FACTOR", default_value = "1", display_order = 60)]
    pub time_scale: String,
    /// Burstiness window in seconds, for the regime and the fidelity check.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 1.0,
        display_order = 90
    )]
    pub window: f64,
    /// The served model name for `--model` (default: a placeholder `fire` fills in).
    #[arg(long, display_order = 100)]
    pub model: Option<String>,
    /// The tokenizer for `--tokenizer` (default: --model, else a placeholder).
    #[arg(long, display_order = 110)]
    pub tokenizer: Option<String>,
    /// The server for `--base-url`, e.g. http://127.0.0.1:8000 (default: a placeholder).
    #[arg(long, value_name = "URL", display_order = 120)]
    pub base_url: Option<String>,
    /// Print plan.json instead of the text summary.
    #[arg(long, display_order = 130)]
    pub json: bool,
}

/// `loadproof plan check DIR`
#[derive(Debug, clap::Args)]
pub struct PlanCheckArgs {
    /// The plan directory.
    pub dir: PathBuf,
    /// Read the source trace from here instead of the path recorded in plan.json.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The mapping the source was planned through (a mapped log; its sha256 must be the one
    /// plan.json records).
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `loadproof trace …`
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Read a trace and report what it is and what was dropped and why.
    Inspect(InspectArgs),
    /// Write a synthetic trace with a target regime (rate, burstiness, token percentiles) in
    /// BurstGPT or Mooncake layout, plus a FILE.synth.json sidecar that labels it synthetic.
    Synth(SynthArgs),
}

/// A trace format to force instead of detecting it from the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// BurstGPT CSV (releases 1/2 with 6 columns, 3 with 8).
    Burstgpt,
    /// Mooncake JSONL (timestamp ms, input_length, output_length, hash_ids).
    Mooncake,
    /// Azure LLM inference CSV, 2023 or 2024 (TIMESTAMP, ContextTokens, GeneratedTokens).
    Azure,
    /// RAGPulse JSONL (segmented hash_ids; companion files beside it give the lengths).
    Ragpulse,
}

/// Which part of a trace file to read, and as what: the flags `trace inspect` and `plan`
/// share (`input::slice_options` turns them into core's ingestion options).
///
/// `plan --help` lists them among its own flags (`--chunk-size` after `--format`,
/// `--time-scale` before `--trace-model`): the display orders keep that listing.
#[derive(Debug, Clone, clap::Args)]
pub struct TraceSliceArgs {
    /// Force a format instead of detecting it.
    #[arg(long, value_enum, display_order = 10)]
    pub format: Option<FormatArg>,
    /// Keep only requests at or after this many seconds from the first sound row.
    #[arg(long, value_name = "SECONDS", display_order = 30)]
    pub start: Option<f64>,
    /// Keep only requests within this many seconds after --start.
    #[arg(long, value_name = "SECONDS", display_order = 40)]
    pub duration: Option<f64>,
    /// Plan at most this many requests (the rest are read and counted as filtered).
    #[arg(long, value_name = "N", alias = "max-rows", display_order = 50)]
    pub max_requests: Option<u64>,
    /// Keep only rows of this BurstGPT `Model` (e.g. ChatGPT). Not the served model: see --model.
    #[arg(long, value_name = "NAME", display_order = 70)]
    pub trace_model: Option<String>,
    /// Keep only rows of this BurstGPT `Log Type` (e.g. "Conversation log").
    #[arg(long, display_order = 80)]
    pub log_type: Option<String>,
    /// Read the trace through this mapping (`loadproof.trace-schema/v1`): any CSV or JSONL
    /// log, its arrival, token and session columns named (see the README).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "format",
        display_order = 11
    )]
    pub schema: Option<PathBuf>,
    /// Keep only rows whose mapped filter column NAME equals VALUE (repeatable; the mapping's
    /// `filters` name the columns).
    #[arg(
        long = "where",
        value_name = "NAME=VALUE",
        requires = "schema",
        display_order = 85
    )]
    pub where_: Vec<String>,
}

/// `loadproof trace inspect`
///
/// The slice flags speak of rows here, as inspect counts them, and `--model` (their name here
/// before `--trace-model`) still works.
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("trace_model", |a| a
        .alias("model")
        .display_order(21)
        .help("Keep only rows of this model (BurstGPT `Model`, e.g. ChatGPT or GPT-4)")),
    mut_arg("log_type", |a| a
        .display_order(22)
        .help("Keep only rows of this log type (BurstGPT `Log Type`, e.g. \"Conversation log\")")),
    mut_arg("start", |a| a
        .help("Keep only rows at or after this many seconds from the first sound row")),
    mut_arg("duration", |a| a
        .help("Keep only rows within this many seconds after --start")),
    mut_arg("max_requests", |a| a
        .help("Emit at most this many rows (later rows are read and counted as filtered)")),
)]
pub struct InspectArgs {
    /// The trace file (BurstGPT CSV, Mooncake JSONL or Azure CSV; detected by header).
    pub file: PathBuf,
    /// Which part of the file to read.
    #[command(flatten)]
    pub slice: TraceSliceArgs,
    /// Burstiness window width in seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 1.0,
        display_order = 20
    )]
    pub window: f64,
    /// Print one JSON object (schema loadproof.trace.inspect/v1) instead of the text report.
    #[arg(long, display_order = 130)]
    pub json: bool,
}

/// `loadproof trace synth`
///
/// The target regime is the one `loadproof trace inspect` reports for the file: rate and
/// burstiness of the requests (failure rows excluded), token p50/p95. Same seed and version,
/// same bytes. The realised regime, computed by reading the written bytes back, goes into the
/// sidecar FILE.synth.json with the spec and the file's sha256.
#[derive(Debug, clap::Args)]
pub struct SynthArgs {
    /// Where to write the trace (the sidecar goes to FILE.synth.json).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// File layout: BurstGPT_1 CSV (seconds with millisecond decimals) or Mooncake JSONL
    /// (integer milliseconds, 512-token hash_ids blocks).
    #[arg(long, value_parser = ["burstgpt", "mooncake"], default_value = "burstgpt")]
    pub layout: String,
    /// Stop after this many rows, failure rows included [default: 2000 unless --duration].
    #[arg(long, value_name = "N", conflicts_with = "duration")]
    pub rows: Option<u64>,
    /// Stop at this many seconds of trace time instead of a row count.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Seed of the generator (same seed and version, same bytes).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Target rate of the requests (failure rows excluded), requests per second.
    #[arg(long, value_name = "RPS", default_value_t = 2.0)]
    pub rate: f64,
    /// Target burstiness D = variance/mean of requests per window: 1 Poisson, > 1 bursty
    /// (up to 1000), < 1 paced (down to f(1-f)/m for m = rate x window requests per window,
    /// f = frac(m): 0 when m is whole).
    #[arg(long, value_name = "D", default_value_t = 2.0)]
    pub burstiness: f64,
    /// Window the burstiness is targeted at, seconds (a whole number of milliseconds).
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub window: f64,
    /// Target median prompt tokens (with --input-p95) [default: 350].
    #[arg(long, value_name = "N", requires = "input_p95")]
    pub input_p50: Option<f64>,
    /// Target 95th-percentile prompt tokens (with --input-p50) [default: 1640].
    #[arg(long, value_name = "N", requires = "input_p50")]
    pub input_p95: Option<f64>,
    /// Target median completion tokens (with --output-p95) [default: 240].
    #[arg(long, value_name = "N", requires = "output_p95")]
    pub output_p50: Option<f64>,
    /// Target 95th-percentile completion tokens (with --output-p50) [default: 840].
    #[arg(long, value_name = "N", requires = "output_p50")]
    pub output_p95: Option<f64>,
    /// Share of rows written as BurstGPT failures (0 request and 0 response tokens, which
    /// inspect drops), 0..0.9 [default: 0.03 for burstgpt; mooncake has no failure marker].
    #[arg(long, value_name = "F")]
    pub failure_share: Option<f64>,
    /// Share of requests that reuse the leading hash_ids blocks of a recent request, 0..1
    /// (mooncake only) [default: 0].
    #[arg(long, value_name = "F")]
    pub prefix_share: Option<f64>,
}

/// `loadproof playbook …`
#[derive(Debug, Subcommand)]
pub enum PlaybookCommand {
    /// Build one measured row from two arms of receipts (same plan, protocol and subject;
    /// differing only in --knob) and append it to a playbook file. Exit 0 appended; 1 refused
    /// (an unqualified receipt, arms that are not one experiment, unequal or too few repeats,
    /// a missing percentile: the reason is printed); 2 unreadable input or bad usage.
    Row(PlaybookRowArgs),
    /// Judge every row of a playbook against live traffic: exact gates, then the regime
    /// distance. Prints the rows that apply and every other row with its reason. Exit 0 at
    /// least one row applies, 1 none does, 2 bad input.
    Match(PlaybookMatchArgs),
    /// Write the illustrative example rows (real regimes from ../shared/traces, invented
    /// deltas, never selectable), byte for byte the same on every run. Exit 0 written, 2 the
    /// real traces are missing or not the pinned bytes.
    Examples(PlaybookExamplesArgs),
    /// Publish a playbook as a static site: the built web app (its Playbook view) plus
    /// `playbook.json` (the input, byte for byte, after core validates it) and `site.sha256`
    /// (every file, `sha256sum -c` compatible). Serve SITE_DIR with any static file server,
    /// under any path. Exit 0 written; 1 the playbook is refused (the reason is printed,
    /// nothing written); 2 unreadable input, no built app, or a non-empty SITE_DIR that
    /// publish did not make.
    Publish(PlaybookPublishArgs),
}

/// `loadproof playbook row`
#[derive(Debug, clap::Args)]
pub struct PlaybookRowArgs {
    /// Receipts of the baseline arm (the knob absent or at another value), one per repeat.
    #[arg(long, value_name = "RECEIPT", num_args = 1.., required = true)]
    pub baseline: Vec<PathBuf>,
    /// Receipts of the treatment arm (the knob at its stated value), one per repeat.
    #[arg(long, value_name = "RECEIPT", num_args = 1.., required = true)]
    pub treatment: Vec<PathBuf>,
    /// The knob under test as the treatment sets it, KEY=VALUE (repeatable): every treatment
    /// receipt must state it (`fire --knob`), no baseline receipt may.
    #[arg(long = "knob", value_name = "KEY=VALUE", required = true)]
    pub knobs: Vec<String>,
    /// The row's id, unique in the playbook.
    #[arg(long)]
    pub id: String,
    /// The playbook file to append to (`loadproof.playbook/v1`; created if missing).
    #[arg(long, value_name = "FILE")]
    pub playbook: PathBuf,
    /// Burstiness window of the row's regime, seconds (the matcher compares equal windows only).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub window: f64,
    /// A note to keep with the row (repeatable).
    #[arg(long = "note", value_name = "TEXT")]
    pub notes: Vec<String>,
    /// The reviewer's audit policy every receipt is audited against (`loadproof.audit-policy/v1`;
    /// README "The audit policy") [default: loadproof's documented defaults].
    #[arg(long, value_name = "POLICY_JSON")]
    pub audit_policy: Option<PathBuf>,
    /// A file of public keys the audits trust (repeatable; see `receipt audit --trust`).
    #[arg(long = "trust", value_name = "KEYFILE")]
    pub trust: Vec<PathBuf>,
}

/// Where the live traffic was generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrafficArg {
    /// Recorded production traffic.
    Recorded,
    /// Generated to a target regime (`loadproof trace synth`).
    Synthetic,
}

/// Whether the live traffic's prefix identity is its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrefixesArg {
    /// Every request carries its prefix identity (Mooncake hash_ids).
    Recorded,
    /// Some request has none: a replay invents blocks for it.
    Synthesized,
}

/// `loadproof playbook match PLAYBOOK (--trace FILE | --regime JSON | --receipt R.json) --model … [--json]`
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("live").required(true).args(["trace", "regime", "receipt"])))]
pub struct PlaybookMatchArgs {
    /// The playbook file.
    pub playbook: PathBuf,
    /// The live trace (BurstGPT CSV, Mooncake JSONL or Azure CSV): its regime and prefixes are
    /// computed as `trace inspect` computes them.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// A JSON file holding a regime: a bare `Regime`, `trace inspect --json` output, or a
    /// plan.json (its `regime`, the trace as fired).
    #[arg(long, value_name = "JSON_FILE")]
    pub regime: Option<PathBuf>,
    /// A receipt (`loadproof.receipt/v1`): the regime of the schedule it fired (its embedded
    /// `plan/timed_trace.jsonl`, read as fired), the prefixes and traffic of its embedded plan.
    #[arg(long, value_name = "RECEIPT")]
    pub receipt: Option<PathBuf>,
    /// Force the --trace format instead of detecting it.
    #[arg(long, value_enum, requires = "trace")]
    pub format: Option<FormatArg>,
    /// Read the --trace through this mapping (`loadproof.trace-schema/v1`).
    #[arg(
        long,
        value_name = "FILE",
        requires = "trace",
        conflicts_with = "format"
    )]
    pub schema: Option<PathBuf>,
    /// The served model.
    #[arg(long)]
    pub model: String,
    /// Its exact revision.
    #[arg(long, value_name = "REV")]
    pub model_revision: String,
    /// The accelerator.
    #[arg(long, value_name = "SKU")]
    pub gpu_sku: String,
    /// The serving engine (`vllm`, or `loadproof sim`).
    #[arg(long)]
    pub engine: String,
    /// The engine's exact version.
    #[arg(long, value_name = "VERSION")]
    pub engine_version: String,
    /// The client's cap on requests in flight: a number, or `uncapped` (open loop, what
    /// `fire` replays).
    #[arg(long, value_name = "N|uncapped", default_value = "uncapped")]
    pub concurrency: String,
    /// A knob setting the row must have been measured with, KEY=VALUE (repeatable; the set
    /// and the values must equal the row's).
    #[arg(long = "knob", value_name = "KEY=VALUE")]
    pub knobs: Vec<String>,
    /// Where the live traffic came from [default: synthetic when a verified `trace synth`
    /// sidecar or note says so, else recorded].
    #[arg(long, value_enum)]
    pub traffic: Option<TrafficArg>,
    /// Whether the live traffic's prefixes are its own [default: from the trace, or from the
    /// inspect or plan JSON; a bare regime needs this flag].
    #[arg(long, value_enum)]
    pub prefixes: Option<PrefixesArg>,
    /// A match policy JSON (gates to loosen, rate as an axis, calibrated tolerances) [default:
    /// every gate exact, rate not an axis, no tolerance].
    #[arg(long, value_name = "POLICY_JSON")]
    pub policy: Option<PathBuf>,
    /// Burstiness window for --trace and --receipt, seconds [default: 1]; with --regime, the
    /// file's window (a different value here is refused).
    #[arg(long, value_name = "SECONDS")]
    pub window: Option<f64>,
    /// Print the match report as JSON (`loadproof.playbook.match/v1`).
    #[arg(long)]
    pub json: bool,
}

/// `loadproof playbook examples --out FILE`
#[derive(Debug, clap::Args)]
pub struct PlaybookExamplesArgs {
    /// Where to write the examples playbook.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The directory holding `traces/` (see fixtures/MANIFEST.sha256) [default:
    /// $LOADPROOF_SHARED, else ../shared from the current directory].
    #[arg(long, value_name = "DIR")]
    pub shared: Option<PathBuf>,
}

/// `loadproof playbook publish PLAYBOOK (--out SITE_DIR | --single-file OUT.html) [--app DIST_DIR]`
#[derive(Debug, clap::Args)]
pub struct PlaybookPublishArgs {
    /// The playbook file (`loadproof.playbook/v1`).
    pub playbook: PathBuf,
    /// The site directory to write: must be absent, empty, or a site publish made before
    /// whose `site.sha256` still verifies and lists every file in it; only then is it replaced.
    #[arg(long, value_name = "SITE_DIR", required_unless_present = "single_file")]
    pub out: Option<PathBuf>,
    /// Write one self-contained HTML file instead of a site: the app's JS and wasm, the
    /// playbook and the bundled receipts inlined, so it opens from disk with no network. The
    /// file must be absent or one publish wrote and nobody edited since; only then is it
    /// replaced.
    #[arg(long, value_name = "OUT_HTML", conflicts_with = "out")]
    pub single_file: Option<PathBuf>,
    /// The largest single file publish writes, in bytes [default: 67108864, 64 MiB]; a bigger
    /// one is refused before anything is written.
    // Clap's own default note is hidden: it would say the number a second time, without MiB.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = 64 << 20,
        hide_default_value = true
    )]
    pub max_single_file_bytes: u64,
    /// The built web app to copy (`bash web/build.sh` writes it).
    #[arg(long, value_name = "DIST_DIR", default_value = "dist")]
    pub app: PathBuf,
    /// A receipt to bundle with the site (repeatable, in order): the Receipt view lists them and
    /// the Compare view takes the first two as baseline and treatment. Copied byte for byte to
    /// `receipts/NAME`, indexed in `receipts.json`.
    #[arg(long = "receipt", value_name = "RECEIPT")]
    pub receipts: Vec<PathBuf>,
    /// Publish a receipt whose lease block still holds its bearer token (written before leases
    /// named only token_sha256) with the token replaced by its sha256 and a note saying so.
    /// Without it such a receipt is refused: a site would hand the token to anyone.
    #[arg(long)]
    pub redact_lease_tokens: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn publish_help_states_the_single_file_cap_default_once() {
        let mut cli = super::Cli::command();
        let publish = cli
            .find_subcommand_mut("playbook")
            .and_then(|p| p.find_subcommand_mut("publish"))
            .expect("playbook publish exists");
        for help in [
            publish.render_help().to_string(),
            publish.render_long_help().to_string(),
        ] {
            assert_eq!(help.matches("67108864").count(), 1, "{help}");
            assert_eq!(help.matches("64 MiB").count(), 1, "{help}");
        }
    }
}
