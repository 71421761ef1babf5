//! Format auto-detection (no forced format) on arbitrary bytes pushed in 1–3 chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_ingest(data, None);
});
