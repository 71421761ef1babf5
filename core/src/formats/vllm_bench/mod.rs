//! vLLM `bench serve` output: the stdout summary and the `--save-result` JSON.
//!
//! The receipt audit recomputes client facts from what `vllm bench serve` wrote, so both outputs
//! are read exactly: every stdout value as the decimal vLLM printed ([`Decimal`]), every JSON
//! float as the decimal Python wrote, counts as integers. Client facts come from stdout only;
//! stderr carries progress bars and logs and is never parsed, so nothing here takes it.
//!
//! [`disagreements`] refuses a receipt whose stdout and result JSON come from different runs:
//! vLLM prints each JSON float with Python's `{:.2f}`, which rounds the binary double half to
//! even. Rust's `{:.2}` does the same (checked against CPython on 200,000 values, exact binary
//! ties included), so the comparison reprints the JSON value and compares decimals.
//!
//! `Peak concurrent requests` / `max_concurrent_requests` is vLLM's whole-second bucket count
//! of successful requests ([`second_bucket_peak`]), not the number of requests the engine had in
//! flight ([`exact_peak`]); the field names say so.
//!
//! **Parts**, each with its own tests:
//!
//! - `decimal_text` — decimals written out with their digits, compared by value, read as counts;
//! - `summary` — the stdout summary: [`parse_summary`], [`Summary`], [`SummaryError`];
//! - `result` — the result JSON: [`parse_result`], [`BenchResult`], [`Detailed`],
//!   [`ResultError`];
//! - `agreement` — [`disagreements`] between the two;
//! - `peak` — [`second_bucket_peak`] and [`exact_peak`].
//!
//! [`Decimal`]: crate::decimal::Decimal

mod agreement;
mod decimal_text;
mod peak;
mod result;
mod summary;

pub use agreement::{Disagreement, disagreements};
pub use peak::{exact_peak, second_bucket_peak};
pub use result::{BenchResult, Detailed, RequestRate, ResultError, parse_result};
pub use summary::{
    LatencySummary, OtherLine, SUMMARY_CLOSING, SUMMARY_HEADER, Summary, SummaryError,
    parse_summary,
};

#[cfg(test)]
mod test_support;
