//! The receipt audit: every fact recomputed from a receipt's raw evidence, every standing with
//! its reason, and one qualification that consumes them all.

pub mod bench_output;
pub mod exposition;
