//! The real vLLM scrapes and the small helpers the module tests share.

use super::{Exposition, parse};
use crate::decimal::Decimal;

pub const CPU_BEFORE: &[u8] =
    include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu/metrics_before.txt");
pub const CPU_AFTER: &[u8] =
    include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu/metrics_after.txt");

pub fn p(text: &str) -> Exposition {
    parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

pub fn err(text: &str) -> String {
    match parse(text.as_bytes()) {
        Ok(e) => panic!("parsed: {e:?}"),
        Err(e) => e.to_string(),
    }
}

pub fn dec(s: &str) -> Decimal {
    Decimal::parse(s.as_bytes()).unwrap()
}
