//! The Azure adapter, forced, on arbitrary bytes pushed in 1–3 fuzzer-chosen chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loadproof_core::Format;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_ingest(data, Some(Format::Azure));
});
