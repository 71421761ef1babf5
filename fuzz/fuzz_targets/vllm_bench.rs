//! `vllm bench serve` stdout summary and result JSON, and the two peak sweeps, on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_vllm_bench(data);
});
