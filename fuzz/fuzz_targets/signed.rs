//! The signing parsers (envelopes, statements, keys, trusted-key files) on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadproof_fuzz::check_signed(data);
});
