//! Record-stream receipts (zstd or not; torn, reordered, spliced) read and audited, on arbitrary
//! bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_receipt_stream(data);
});
