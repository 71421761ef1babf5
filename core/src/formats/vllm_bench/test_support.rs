//! The real runs' outputs and the small helpers the module tests share.

use crate::decimal::Decimal;

pub const RUNS: &str = "../../../../../shared/vllm/real-runs";
pub const CPU_STDOUT: &[u8] =
    include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu/bench_stdout.txt");
pub const CPU_RESULT: &[u8] =
    include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu/result.json");
pub const PREFIX_STDOUT: &[u8] =
    include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu-prefix/bench_stdout.txt");
pub const PREFIX_RESULT: &[u8] =
    include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu-prefix/result.json");
pub const STUB_STDOUT: &[u8] =
    include_bytes!("../../../../../shared/vllm/real-runs/stub-client/bench_stdout.txt");
pub const STUB_RESULT: &[u8] =
    include_bytes!("../../../../../shared/vllm/real-runs/stub-client/result.json");

/// The three real runs with both outputs, by folder under [`RUNS`].
pub const REAL: [(&str, &[u8], &[u8]); 3] = [
    ("vllm-cpu", CPU_STDOUT, CPU_RESULT),
    ("vllm-cpu-prefix", PREFIX_STDOUT, PREFIX_RESULT),
    ("stub-client", STUB_STDOUT, STUB_RESULT),
];

pub fn d(text: &str) -> Decimal {
    Decimal::parse(text.as_bytes()).unwrap()
}
