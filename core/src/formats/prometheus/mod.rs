//! Prometheus text exposition (the classical format `/metrics` serves), read exactly.
//!
//! A receipt keeps the raw bytes of every `/metrics` scrape; the audit recomputes the engine's
//! token counts from them, so this reader is strict where a number is at stake and keeps
//! every value as the exact decimal that was written ([`Decimal`]), never an `f64`:
//! `338.0 − 0.0` is exactly 338 tokens, and `1512.0005` tokens is refused rather than rounded.
//!
//! **Families.** Samples are mapped to families by the `# TYPE` lines wherever they appear in
//! the text (order does not matter), with the suffix rules of the format: a histogram `h` owns
//! `h_bucket` (with an `le` label), `h_count`, `h_sum` and `h_created`; a summary `s` owns `s`
//! (quantiles), `s_count`, `s_sum`, `s_created`; a counter `c` owns `c`, `c_total` and
//! `c_created`; a gauge or untyped family owns only its own name. A sample whose exact name is
//! declared belongs to that family first, which is how both spellings of a counter work:
//! `prometheus_client` (and so vLLM) declares `# TYPE vllm:prompt_tokens_total counter` with a
//! separate `# TYPE vllm:prompt_tokens_created gauge` family, while OpenMetrics-style writers
//! declare `# TYPE vllm:prompt_tokens counter` and emit `vllm:prompt_tokens_total`. A sample
//! that nothing declares is its own untyped family. A sample whose suffix points at a declared
//! family of a type without that suffix (`x_bucket` under `# TYPE x counter`) is an error, not
//! a silent reassignment.
//!
//! **Refusals.** Structural problems are errors naming the 1-based line: a malformed line, a
//! value that is not a number, a repeated series (same name and label set), a repeated HELP or
//! TYPE, an unknown type word, a bucket without a numeric `le`. `NaN`, `+Inf` and `-Inf` are
//! values, kept as such ([`SampleValue`]); a finite value beyond a 64-bit float's range (which
//! no Prometheus writer can produce) is refused. Deltas refuse counter resets, vanished series,
//! non-finite values and the wrong family type, naming the series and both values.
//!
//! **Many scrapes.** A receipt can hold thousands of scrapes taken during a run. [`parse`]
//! builds every sample (a `String` per name and label); [`scan`] reads and checks every line
//! the same way but builds only the families of the sample names asked for.
//!
//! **Parts**, lowest first, each with its own tests:
//!
//! - `lines` — line splitting, byte classes and the cursor every line parser uses;
//! - `metric_type` — [`MetricType`] and the suffix rules that place a sample name in its family;
//! - `value` — [`SampleValue`], exact or one of `NaN`, `+Inf`, `-Inf`;
//! - `error` — every refusal: [`ExpositionError`], [`ReadError`], [`DeltaError`] (with
//!   [`Scrape`]), [`PrecisionLoss`];
//! - `exposition` — [`Sample`], [`Family`], [`Exposition`] and the queries on it;
//! - `comments` — `# HELP` and `# TYPE` lines;
//! - `samples` — sample lines: name, labels, value, timestamp;
//! - `read` — [`parse`] and [`scan`], the two passes over a scrape;
//! - `rescan` — [`Rescan`]: [`scan`] over consecutive scrapes, reading only the lines that
//!   changed;
//! - `delta` — [`counter_delta`], [`histogram_delta`], [`whole_tokens`].
//!
//! [`Decimal`]: crate::decimal::Decimal

mod comments;
mod delta;
mod error;
mod exposition;
mod lines;
mod metric_type;
mod read;
mod rescan;
mod samples;
mod value;

pub use delta::{HistogramDelta, counter_delta, histogram_delta, whole_tokens};
pub use error::{
    DeltaError, ExpositionError, ExpositionErrorKind, PrecisionLoss, ReadError, Scrape,
};
pub use exposition::{Exposition, Family, Sample};
pub use metric_type::MetricType;
pub use read::{parse, scan};
pub use rescan::Rescan;
pub use value::SampleValue;

#[cfg(test)]
mod test_support;
