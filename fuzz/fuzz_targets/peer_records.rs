//! AIPerf's export, GuideLLM's report and the plan's translation into their inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_peer_records(data);
});
