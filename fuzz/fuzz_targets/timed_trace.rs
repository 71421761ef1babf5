//! vLLM `timed_trace` files read back exactly as vLLM would read them, on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_timed_trace(data);
});
