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
}

/// `loadproof trace …`
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Read a trace and report what it is and what was dropped and why.
    Inspect(InspectArgs),
    /// Write a deterministic synthetic trace in BurstGPT_1's CSV layout (labelled synthetic).
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
#[derive(Debug, clap::Args)]
pub struct SynthArgs {
    /// Where to write the CSV.
    #[arg(long)]
    pub out: PathBuf,
    /// Rows to write.
    #[arg(long, default_value_t = 2_000)]
    pub rows: u64,
    /// Seed of the generator (same seed, same bytes).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Mean arrival rate, requests per second.
    #[arg(long, value_name = "RPS", default_value_t = 2.0)]
    pub rate: f64,
    /// Share of rows written as failures (0 response tokens), 0..1.
    #[arg(long, default_value_t = 0.03)]
    pub failure_share: f64,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        super::Cli::command().debug_assert();
    }
}
