//! Prometheus text exposition (`/metrics` scrape bodies) read exactly, on arbitrary bytes; and
//! read again as an NVIDIA DCGM exporter's GPU fields.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_prometheus(data);
});
