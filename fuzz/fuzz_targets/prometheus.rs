//! Prometheus text exposition (`/metrics` scrape bodies) read exactly, on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_prometheus(data);
});
