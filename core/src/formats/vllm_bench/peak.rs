//! Peaks of concurrent requests: vLLM's whole-second bucket count ([`second_bucket_peak`]) and
//! the exact number in flight ([`exact_peak`]).
//!
//! Side by side because they are easily confused: the bucket peak over-counts what was in
//! flight at any instant, and it is the one vLLM prints and saves.

/// vLLM's `max_concurrent_requests` recomputed from the `(start, latency)` seconds of the
/// successful requests, as v0.23.0–0.33.0 compute it: seconds are counted from the earliest
/// start, and a request counts in every whole second from `int(start - origin)` to
/// `int(start + latency - origin)`, both inclusive. `None` for no requests or a non-finite
/// value (vLLM itself would have raised).
pub fn second_bucket_peak(spans_s: &[(f64, f64)]) -> Option<u64> {
    if spans_s
        .iter()
        .any(|&(start, latency)| !(start + latency).is_finite() || !start.is_finite())
    {
        return None;
    }
    let origin = spans_s.iter().map(|&(start, _)| start).reduce(f64::min)?;
    let mut events = Vec::with_capacity(spans_s.len().saturating_mul(2));
    for &(start, latency) in spans_s {
        // `as` truncates toward zero like Python's `int()`; the sums are Python's, in order.
        let first = (start - origin) as i64;
        let last = ((start + latency) - origin) as i64;
        if last >= first {
            events.push((first, 1i64));
            events.push((last.saturating_add(1), -1i64));
        }
    }
    Some(sweep(events))
}

/// The exact peak number of requests in flight: a sweep over half-open `[start_ns, end_ns)`
/// intervals in integer nanoseconds, a departure before an arrival at the same instant (a
/// request that ends as another starts never overlaps it). Empty intervals count nowhere.
pub fn exact_peak(spans_ns: &[(i64, i64)]) -> u64 {
    let mut events = Vec::with_capacity(spans_ns.len().saturating_mul(2));
    for &(start, end) in spans_ns {
        if end > start {
            events.push((start, 1i64));
            events.push((end, -1i64));
        }
    }
    sweep(events)
}

/// The largest running sum of `(instant, ±1)` events, `-1` first at equal instants.
fn sweep(mut events: Vec<(i64, i64)>) -> u64 {
    events.sort_unstable();
    let mut current: i64 = 0;
    let mut peak: i64 = 0;
    for (_, delta) in events {
        current = current.saturating_add(delta);
        peak = peak.max(current);
    }
    u64::try_from(peak).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::parse_result;
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn second_bucket_peak_recomputes_max_concurrent_requests() {
        for (folder, _, result) in REAL {
            let r = parse_result(result).unwrap();
            let spans = r.detailed.unwrap().successful_spans_s().unwrap();
            assert_eq!(
                second_bucket_peak(&spans),
                r.successful_client_second_bucket_peak,
                "{RUNS}/{folder}"
            );
        }
    }

    #[test]
    fn real_bucket_peaks_overstate_what_was_in_flight() {
        // 20 requests over ~4.8 s: vLLM reports 11, 8 and 11; at most 3, 2 and 3 overlapped.
        for ((folder, _, result), want) in REAL.into_iter().zip([(11, 3), (8, 2), (11, 3)]) {
            let spans = parse_result(result)
                .unwrap()
                .detailed
                .unwrap()
                .successful_spans_s()
                .unwrap();
            let ns = |s: f64| (s * 1e9).round() as i64;
            let spans_ns: Vec<(i64, i64)> = spans
                .iter()
                .map(|&(start, latency)| (ns(start), ns(start + latency)))
                .collect();
            assert_eq!(
                (second_bucket_peak(&spans), exact_peak(&spans_ns)),
                (Some(want.0), want.1),
                "{RUNS}/{folder}"
            );
        }
    }

    #[test]
    fn the_bucket_peak_is_not_engine_concurrency() {
        // --max-concurrency 2, no foreign traffic: A and B run 0.05–0.80 s, C and D 0.81–1.40 s.
        let spans_s = [(0.05, 0.75), (0.05, 0.75), (0.81, 0.59), (0.81, 0.59)];
        let spans_ns = [
            (50_000_000, 800_000_000),
            (50_000_000, 800_000_000),
            (810_000_000, 1_400_000_000),
            (810_000_000, 1_400_000_000),
        ];
        assert_eq!(second_bucket_peak(&spans_s), Some(4));
        assert_eq!(exact_peak(&spans_ns), 2);
    }

    #[test]
    fn exact_peak_lets_a_departure_precede_an_arrival() {
        assert_eq!(exact_peak(&[(0, 10), (10, 20), (20, 30)]), 1);
        assert_eq!(exact_peak(&[(0, 11), (10, 20)]), 2);
        assert_eq!(exact_peak(&[(5, 5), (7, 3)]), 0);
        assert_eq!(exact_peak(&[]), 0);
    }

    #[test]
    fn second_bucket_peak_counts_both_end_seconds() {
        // One request from 0.9 s to 2.1 s touches seconds 0, 1 and 2; one at 2.5 s shares 2.
        assert_eq!(second_bucket_peak(&[(0.9, 1.2), (2.5, 0.1)]), Some(2));
        assert_eq!(second_bucket_peak(&[(0.0, 0.999), (1.0, 0.5)]), Some(1));
        assert_eq!(second_bucket_peak(&[]), None);
        assert_eq!(second_bucket_peak(&[(0.0, f64::NAN)]), None);
        // A negative latency touches no second, as `range(start, end + 1)` is empty.
        assert_eq!(second_bucket_peak(&[(5.0, -2.0)]), Some(0));
    }

    proptest! {
        #[test]
        fn exact_peak_never_exceeds_the_bucket_peak(
            spans in proptest::collection::vec((0i64..400, 0i64..80), 1..40),
        ) {
            // Eighths of a second: exact in f64 and in nanoseconds.
            let spans_s: Vec<(f64, f64)> =
                spans.iter().map(|&(s, l)| (s as f64 / 8.0, l as f64 / 8.0)).collect();
            let spans_ns: Vec<(i64, i64)> = spans
                .iter()
                .map(|&(s, l)| (s * 125_000_000, (s + l) * 125_000_000))
                .collect();
            let bucket = second_bucket_peak(&spans_s).unwrap();
            prop_assert!(exact_peak(&spans_ns) <= bucket);
            prop_assert!(bucket <= spans.len() as u64);
        }
    }
}
