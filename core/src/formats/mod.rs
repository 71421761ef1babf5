//! Readers of the file formats other programs write: what a receipt's evidence blocks hold.
//!
//! These are parsers, not audit logic: each reads one format exactly (every number as the
//! decimal that was written) and refuses what it cannot read by line and field. The audit
//! decides what the values mean; the gateway's readback and the page read the same bytes with
//! the same code.
//!
//! - [`prometheus`] — the Prometheus text exposition a `/metrics` endpoint serves.
//! - [`vllm_bench`] — `vllm bench serve`'s stdout summary and its `--save-result` JSON.
//! - [`dcgm`] — an NVIDIA DCGM exporter's GPU fields in a `/metrics` body.
//! - [`aiperf`] — AIPerf's per-request export (`profile_export.jsonl`).
//! - [`guidellm`] — GuideLLM's report (`benchmarks.json`).

pub mod aiperf;
pub mod dcgm;
pub mod guidellm;
pub mod prometheus;
pub mod vllm_bench;
