//! vLLM `timed_trace` files read back exactly as vLLM would read them, on arbitrary bytes;
//! the same bytes read as a plan's `blocks.jsonl`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_timed_trace(data);
});
