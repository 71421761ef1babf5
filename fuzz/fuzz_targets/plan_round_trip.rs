//! Any trace that plans writes a file that reads back with every statistic exactly 0.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_plan_round_trip(data);
});
