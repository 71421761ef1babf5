//! Optimized code for the hot paths before the first large file arrives.
//!
//! V8 runs a WebAssembly function in its baseline compiler first and swaps in optimized code
//! only once the function has run for a while — and a call in progress keeps the code it began
//! with. The page calls the arrival-gap pass and the regime once per trace, on every row at
//! once: on 5M rows that one call ran in baseline code, 100 ms where the optimized code takes
//! 44 (measured in Node's V8 on this machine: the same call, cold and after a warm-up). So a
//! worker of its own, a second after the page is ready, reads a small synthetic trace and
//! reports on it a few times (`offload::schedule_tier_up`); the page and its workers share one
//! compiled module, so the optimized code serves them all.

use loadproof_core::Window;
use loadproof_core::report::InspectReport;
use loadproof_core::synth::{Stop, SynthSpec, generate};

use crate::ingest::ingest_bytes;
use crate::views::trace::model::{TokenCdf, WindowCounts};

/// Rows of the warm-up trace: enough for every hot loop to run long, little enough for tens
/// of milliseconds of an idle worker.
const WARM_ROWS: u64 = 20_000;

/// How many times the trace is read and reported on.
const WARM_ROUNDS: usize = 3;

/// Reads a small synthetic trace and builds everything the trace view computes from it, a few
/// times over. Runs in a worker of its own (`kind: 'warm', tierUp: true`); its results are
/// dropped.
pub fn warm_up() {
    let spec = SynthSpec {
        stop: Stop::Rows(WARM_ROWS),
        ..SynthSpec::DEFAULT
    };
    let Ok(bytes) = generate(&spec) else {
        return;
    };
    for _ in 0..WARM_ROUNDS {
        let Ok(trace) = ingest_bytes(&bytes) else {
            return;
        };
        let report = InspectReport::new("warm-up", &trace, Window::ONE_SECOND);
        let counts = WindowCounts::of(&trace, Window::ONE_SECOND);
        let req = trace.requests();
        let cdfs = (
            TokenCdf::of(&req.input_tokens, 64),
            TokenCdf::of(&req.output_tokens, 64),
        );
        std::hint::black_box((report.to_json(), counts, cdfs));
    }
}
