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
    #[arg(long, value_name = "DIR", required = true)]
    pub out: Option<PathBuf>,
    /// Force a format instead of detecting it.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Tokens per hash id (`--timed-trace-chunk-hash-size`). Default: the source's block size
    /// (Mooncake 512), or 512 for synthesized blocks. Refused when it does not tile a prompt.
    #[arg(long, value_name = "TOKENS")]
    pub chunk_size: Option<u32>,
    /// Keep only requests at or after this many seconds from the first sound row.
    #[arg(long, value_name = "SECONDS")]
    pub start: Option<f64>,
    /// Keep only requests within this many seconds after --start.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Plan at most this many requests (the rest are read and counted as filtered).
    #[arg(long, value_name = "N")]
    pub max_requests: Option<u64>,
    /// Speed-up: 2 replays the arrivals twice as fast (an exact decimal, recorded).
    #[arg(long, value_name = "FACTOR", default_value = "1")]
    pub time_scale: String,
    /// Keep only rows of this BurstGPT `Model` (e.g. ChatGPT). Not the served model: see --model.
    #[arg(long, value_name = "NAME")]
    pub trace_model: Option<String>,
    /// Keep only rows of this BurstGPT `Log Type` (e.g. "Conversation log").
    #[arg(long)]
    pub log_type: Option<String>,
    /// Burstiness window in seconds, for the regime and the fidelity check.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub window: f64,
    /// The served model name for `--model` (default: a placeholder `fire` fills in).
    #[arg(long)]
    pub model: Option<String>,
    /// The tokenizer for `--tokenizer` (default: --model, else a placeholder).
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// The server for `--base-url`, e.g. http://127.0.0.1:8000 (default: a placeholder).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Print plan.json instead of the text summary.
    #[arg(long)]
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
}

/// `loadproof trace inspect`
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// The trace file (BurstGPT CSV, Mooncake JSONL or Azure CSV; detected by header).
    pub file: PathBuf,
    /// Force a format instead of detecting it.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Burstiness window width in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub window: f64,
    /// Keep only rows of this model (BurstGPT `Model`, e.g. ChatGPT or GPT-4).
    #[arg(long)]
    pub model: Option<String>,
    /// Keep only rows of this log type (BurstGPT `Log Type`, e.g. "Conversation log").
    #[arg(long)]
    pub log_type: Option<String>,
    /// Keep only rows at or after this many seconds from the first sound row.
    #[arg(long, value_name = "SECONDS")]
    pub start: Option<f64>,
    /// Keep only rows within this many seconds after --start.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Emit at most this many rows (later rows are read and counted as filtered).
    #[arg(long)]
    pub max_rows: Option<u64>,
    /// Print one JSON object (schema loadproof.trace.inspect/v1) instead of the text report.
    #[arg(long)]
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        super::Cli::command().debug_assert();
    }
}
