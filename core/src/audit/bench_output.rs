//! vLLM `bench serve` output: the stdout summary and the `--save-result` JSON.
