//! The recording grid of each real published trace in `../shared/traces/`, as its `SOURCES.md`
//! describes the timestamps: Mooncake's ~3 s ticks, BurstGPT's whole seconds, Azure's 7
//! fractional digits (whose last is always 0 in the 2023 file: a 1 µs clock).

mod common;

use common::{ingest, shared};
use loadproof_core::{InspectReport, Window};

fn gaps_of(rel: &str) -> loadproof_core::trace::ArrivalGaps {
    let trace = ingest(&shared(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    InspectReport::new(rel, &trace, Window::ONE_SECOND).arrival_gaps
}

#[test]
fn mooncake_is_recorded_on_a_three_second_grid() {
    let gaps = gaps_of("traces/mooncake/conversation_trace.jsonl");
    assert_eq!(gaps.grid_s, Some(3.0));
    assert_eq!((gaps.gaps, gaps.zero_gaps), (12_030, 10_851));
    // Every tick from 0 to 3,537 s holds a request: each positive gap is one tick.
    assert_eq!(gaps.bins.len(), 1, "{:?}", gaps.bins);
    assert_eq!(
        (gaps.bins[0].from_s, gaps.bins[0].to_s, gaps.bins[0].gaps),
        (3.0, Some(6.0), 1_179)
    );
    assert_eq!(gaps.suggested_window_s, Some(30.0));
}

#[test]
fn burstgpt_is_recorded_in_whole_seconds() {
    for rel in [
        "traces/burstgpt/BurstGPT_1.first400.csv",
        "traces/burstgpt/BurstGPT_3.first400.csv",
    ] {
        let gaps = gaps_of(rel);
        assert_eq!(gaps.grid_s, Some(1.0), "{rel}");
        assert_eq!(gaps.suggested_window_s, Some(10.0), "{rel}");
        let binned: u64 = gaps.bins.iter().map(|b| b.gaps).sum();
        assert_eq!(gaps.zero_gaps + binned, gaps.gaps, "{rel}");
    }
}

#[test]
fn azure_2023_is_recorded_to_the_microsecond() {
    let gaps = gaps_of("traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
    assert_eq!(gaps.grid_s, Some(1e-6));
    assert_eq!(gaps.suggested_window_s, None);
    assert_eq!(gaps.gaps, 19_365);
    let binned: u64 = gaps.bins.iter().map(|b| b.gaps).sum();
    assert_eq!(gaps.zero_gaps + binned, gaps.gaps);
    assert!(gaps.bins.len() <= loadproof_core::trace::MAX_GAP_BINS);
}
