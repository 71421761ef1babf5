//! The `vllm bench serve` command a plan is fired with: argv, environment, working directory.
//!
//! Every flag that changes what is sent is explicit, even where it equals today's default,
//! because defaults move between vLLM releases and the file alone does not say how to read it:
//! `--timed-trace-chunk-hash-size` (default 16, Mooncake needs 512),
//! `--timed-trace-sec-multiplier` (the file's time unit), `--num-prompts` (default 1000: a
//! longer trace is silently truncated), `--self-timed` and `--ignore-eos` (so arrivals and
//! output lengths are the trace's), `--num-warmups 0` and `--ready-check-timeout-sec 0` (no
//! extra requests move the server's counters), `--tokenizer` (the client builds prompts with
//! it; a served name it cannot resolve fails late). `PYTHONHASHSEED` is pinned because vLLM
//! seeds each block's tokens from Python's per-process string hash.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::timed_trace::TimeUnit;

/// The oldest vLLM with `--dataset-name timed_trace` (landed 2026-05-28, first in v0.23.0).
pub const MIN_VLLM: &str = "0.23.0";

/// Stands for the served model name until `fire` (or `plan --model`) fills it in.
pub const MODEL_PLACEHOLDER: &str = "{model}";
/// Stands for the tokenizer path or name until filled in.
pub const TOKENIZER_PLACEHOLDER: &str = "{tokenizer}";
/// Stands for the server's base URL until filled in.
pub const BASE_URL_PLACEHOLDER: &str = "{base_url}";

/// The seed pinned in `PYTHONHASHSEED` by a command no plan has given its own seed.
pub const PYTHON_HASH_SEED: &str = "0";

/// Where the bench client writes its result (relative to the plan directory).
pub const RESULT_DIR: &str = "results";
/// The result file name.
pub const RESULT_FILE: &str = "result.json";

/// The endpoint the caller may name now; what is not named stays a placeholder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchTarget {
    /// `--model`: the served model name.
    pub model: Option<String>,
    /// `--tokenizer`: defaults to the model when only the model is given.
    pub tokenizer: Option<String>,
    /// `--base-url`, e.g. `http://127.0.0.1:8000`.
    pub base_url: Option<String>,
}

/// How to run `vllm bench serve` on a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchCommand {
    /// The full argv, program first. Paths are relative to `cwd`.
    pub argv: Vec<String>,
    /// Environment variables to set.
    pub env: BTreeMap<String, String>,
    /// The directory to run in.
    pub cwd: String,
    /// Flags whose value is still a placeholder (`--model`, `--tokenizer`, `--base-url`).
    pub placeholders: Vec<String>,
    /// The oldest vLLM that can run it.
    pub min_vllm: String,
}

impl BenchCommand {
    /// The command for a `file` of `lines` requests written in `unit` with `chunk`-token blocks.
    pub fn new(
        file: &str,
        lines: u64,
        unit: TimeUnit,
        chunk: u32,
        target: &BenchTarget,
    ) -> BenchCommand {
        let model = target.model.as_deref();
        let tokenizer = target.tokenizer.as_deref().or(model);
        let mut placeholders = Vec::new();
        let mut fill = |value: Option<&str>, flag: &str, placeholder: &str| {
            value.map(str::to_owned).unwrap_or_else(|| {
                placeholders.push(flag.to_owned());
                placeholder.to_owned()
            })
        };
        let base_url = fill(
            target.base_url.as_deref(),
            "--base-url",
            BASE_URL_PLACEHOLDER,
        );
        let model = fill(model, "--model", MODEL_PLACEHOLDER);
        let tokenizer = fill(tokenizer, "--tokenizer", TOKENIZER_PLACEHOLDER);
        let argv: Vec<String> = [
            "vllm",
            "bench",
            "serve",
            "--backend",
            "openai",
            "--endpoint",
            "/v1/completions",
            "--base-url",
            &base_url,
            "--model",
            &model,
            "--tokenizer",
            &tokenizer,
            "--dataset-name",
            "timed_trace",
            "--dataset-path",
            file,
            "--timed-trace-sec-multiplier",
            unit.multiplier(),
            "--timed-trace-chunk-hash-size",
            &chunk.to_string(),
            "--num-prompts",
            &lines.to_string(),
            "--self-timed",
            "--ignore-eos",
            "--num-warmups",
            "0",
            "--ready-check-timeout-sec",
            "0",
            "--percentile-metrics",
            "ttft,tpot,itl,e2el",
            "--metric-percentiles",
            "50,90,95,99",
            "--save-result",
            "--save-detailed",
            "--result-dir",
            RESULT_DIR,
            "--result-filename",
            RESULT_FILE,
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        BenchCommand {
            argv,
            env: BTreeMap::from([("PYTHONHASHSEED".to_owned(), PYTHON_HASH_SEED.to_owned())]),
            cwd: "the plan directory".to_owned(),
            placeholders,
            min_vllm: MIN_VLLM.to_owned(),
        }
    }

    /// The command with `PYTHONHASHSEED` set to `seed` (a plan's own, [`crate::plan::Plan::hash_seed`]).
    pub fn with_hash_seed(mut self, seed: u32) -> BenchCommand {
        self.env
            .insert("PYTHONHASHSEED".to_owned(), seed.to_string());
        self
    }

    /// The value argparse would give `flag` (`--flag v` or `--flag=v`; the last one wins).
    pub fn value(&self, flag: &str) -> Option<&str> {
        let mut found = None;
        let mut args = self.argv.iter();
        while let Some(arg) = args.next() {
            if arg == flag {
                found = args.next().map(String::as_str);
            } else if let Some(v) = arg.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                found = Some(v);
            }
        }
        found
    }

    /// Whether a boolean flag is on (the last of `flag` / `--no-…` wins).
    pub fn switch(&self, flag: &str) -> bool {
        let negated = flag.replacen("--", "--no-", 1);
        self.argv
            .iter()
            .rev()
            .find(|a| **a == flag || **a == negated)
            .is_some_and(|a| a == flag)
    }

    /// The multiplier vLLM will apply (its default is 1 when the flag is absent).
    pub fn sec_multiplier(&self) -> &str {
        self.value("--timed-trace-sec-multiplier").unwrap_or("1")
    }

    /// The chunk size vLLM will use (its default is 16 when the flag is absent); `None` when
    /// the value is not a positive integer.
    pub fn chunk_size(&self) -> Option<u32> {
        self.value("--timed-trace-chunk-hash-size")
            .unwrap_or("16")
            .parse()
            .ok()
            .filter(|&c| c > 0)
    }

    /// Every way this command would not replay `file` (`lines` requests, `chunk`-token blocks,
    /// timestamps in `unit`) as planned, as sentences. Empty when it agrees.
    pub fn disagreements(&self, file: &str, lines: u64, chunk: u32, unit: TimeUnit) -> Vec<String> {
        let mut out = Vec::new();
        let mut expect = |flag: &str, want: &str, why: &str| match self.value(flag) {
            Some(v) if v == want => {}
            Some(v) => out.push(format!("{flag} is {v:?}, the file needs {want:?}: {why}")),
            None => out.push(format!("{flag} is missing, the file needs {want:?}: {why}")),
        };
        expect(
            "--dataset-name",
            "timed_trace",
            "only timed_trace reads this file",
        );
        expect("--dataset-path", file, "that is the planned file");
        expect(
            "--num-prompts",
            &lines.to_string(),
            "vLLM stops after --num-prompts lines (default 1000)",
        );
        expect(
            "--timed-trace-chunk-hash-size",
            &chunk.to_string(),
            "each id expands to this many tokens (default 16)",
        );
        let same = TimeUnit::from_multiplier(self.sec_multiplier()) == Some(unit);
        if !same {
            out.push(format!(
                "--timed-trace-sec-multiplier is {:?}, the file's timestamps are in {} ({})",
                self.sec_multiplier(),
                unit_name(unit),
                unit.multiplier()
            ));
        }
        for (flag, why) in [
            ("--self-timed", "arrivals must come from the file"),
            ("--ignore-eos", "output lengths must be the trace's"),
            ("--save-result", "the result JSON is the evidence"),
            ("--save-detailed", "per-request arrays are the evidence"),
        ] {
            if !self.switch(flag) {
                out.push(format!("{flag} is not set: {why}"));
            }
        }
        if let Some(b) = self
            .value("--backend")
            .filter(|b| !matches!(*b, "openai" | "vllm"))
        {
            out.push(format!(
                "--backend {b:?} cannot send token-id prompts; timed_trace needs openai or vllm"
            ));
        }
        if !self.env.contains_key("PYTHONHASHSEED") {
            out.push(
                "PYTHONHASHSEED is not pinned: prompt tokens would change from run to run"
                    .to_owned(),
            );
        }
        out
    }
}

fn unit_name(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::S => "seconds",
        TimeUnit::Ms => "milliseconds",
        TimeUnit::Us => "microseconds",
        TimeUnit::Ns => "nanoseconds",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_listed_and_the_tokenizer_follows_the_model() {
        let cmd = BenchCommand::new("t.jsonl", 3, TimeUnit::Ms, 512, &BenchTarget::default());
        assert_eq!(cmd.placeholders, ["--base-url", "--model", "--tokenizer"]);
        let cmd = BenchCommand::new(
            "t.jsonl",
            3,
            TimeUnit::Ms,
            512,
            &BenchTarget {
                model: Some("m".into()),
                ..BenchTarget::default()
            },
        );
        assert_eq!(cmd.value("--tokenizer"), Some("m"));
        assert_eq!(cmd.placeholders, ["--base-url"]);
        assert!(
            cmd.disagreements("t.jsonl", 3, 512, TimeUnit::Ms)
                .is_empty()
        );
    }

    #[test]
    fn argparse_semantics_last_flag_wins() {
        let mut cmd = BenchCommand::new("t.jsonl", 3, TimeUnit::Ms, 512, &BenchTarget::default());
        cmd.argv.push("--num-prompts=1000".into());
        cmd.argv.push("--no-self-timed".into());
        cmd.argv.push("--timed-trace-sec-multiplier".into());
        cmd.argv.push("1e-3".into());
        assert_eq!(cmd.value("--num-prompts"), Some("1000"));
        assert!(!cmd.switch("--self-timed"));
        let d = cmd.disagreements("t.jsonl", 3, 512, TimeUnit::Ms);
        assert_eq!(d.len(), 2, "{d:?}");
    }
}
