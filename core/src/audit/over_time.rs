//! Throughput and latency over the run, in equal time slices: the panels a reviewer coming from
//! Grafana or AIPerf looks for first, computed from the same completed requests the audit's
//! latency distributions are made of.
//!
//! The run is the span of every instant in the population: from the earliest send (or
//! completion, should a hostile record end before it was sent) to the latest. It is cut into
//! [`MAX_SLICES`] equal slices, or one per request when there are fewer requests, so a short
//! run is not mostly empty slices. A request belongs to the slice its **send time** falls in
//! (its TTFT and E2E count there, and it counts as started there); it counts as completed in the
//! slice its **end** (send + E2E) falls in. Its output tokens are spread evenly over its decode
//! interval, first token → end, each slice taking the share of that interval it overlaps (all
//! of them at the end when the interval is empty or no first token was recorded), so the
//! tokens/s line is comparable with the engine's generation counter read between scrapes.
//!
//! Position in the run is computed as `(t − start) / (end − start)` on halved values (so that
//! no difference of two finite times overflows), times the slice count, rounded down and
//! clamped to the last slice; a slice is `[start_s, end_s)`, the last one closed. A record with
//! a non-finite send time or E2E is not placed and is counted in `unplaced`; a zero-length run
//! (one request, or all in one instant) is one slice of zero length whose rates are absent.
//! Percentiles are [`crate::stats::percentile_sorted_f64`], the audit's own. Nothing here can
//! produce NaN or an infinity: an undefined number is `None`.

use serde::{Deserialize, Serialize};

use crate::stats::percentile_sorted_f64;

/// Slices at most.
pub const MAX_SLICES: usize = 30;

/// One completed request as the slices read it: times in seconds on one axis, latencies in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Completed {
    /// When it was sent, seconds on the population's axis ([`OverTime::axis`]).
    pub sent_s: f64,
    /// Time to first token, ms (`None`: no first token recorded).
    pub ttft_ms: Option<f64>,
    /// End-to-end latency, ms.
    pub e2e_ms: f64,
    /// Output tokens (`None`: the client recorded no usage).
    pub output_tokens: Option<u64>,
}

/// The slices of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverTime {
    /// Where the requests come from.
    pub source: String,
    /// What the seconds count from.
    pub axis: String,
    /// True when the seconds count from the execution's start on the firing machine's
    /// monotonic clock: the axis the `/metrics` scrapes' times are on, so the engine's counters
    /// can be drawn against these slices. False for send times on a clock of their own (vLLM's
    /// `perf_counter`), which count from the first send.
    pub on_run_clock: bool,
    /// Completed requests placed in a slice (the sum of `started` over the slices).
    pub requests: u64,
    /// Completed requests with a non-finite send time or E2E: in no slice.
    pub unplaced: u64,
    /// Placed requests without an output token count: in the request counts and latencies,
    /// not in the token rates.
    pub without_tokens: u64,
    /// The run's first instant, seconds on [`Self::axis`].
    pub start_s: f64,
    /// The run's last instant.
    pub end_s: f64,
    /// The slices in time order; they tile `[start_s, end_s]`.
    pub slices: Vec<Slice>,
}

/// One time slice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    /// Its start, seconds on the run's axis (inclusive).
    pub start_s: f64,
    /// Its end (exclusive, except for the last slice).
    pub end_s: f64,
    /// Requests sent in it.
    pub started: u64,
    /// Requests that ended in it.
    pub completed: u64,
    /// `started / (end_s − start_s)`; `None` for a zero-length slice.
    pub started_per_s: Option<f64>,
    /// `completed / (end_s − start_s)`.
    pub completed_per_s: Option<f64>,
    /// Output tokens attributed to it (fractional: a request's tokens are spread over its
    /// decode interval).
    pub output_tokens: f64,
    /// `output_tokens / (end_s − start_s)`.
    pub output_tokens_per_s: Option<f64>,
    /// Median TTFT of the requests sent in it, ms.
    pub ttft_p50_ms: Option<f64>,
    /// P99 TTFT.
    pub ttft_p99_ms: Option<f64>,
    /// Median E2E latency of the requests sent in it, ms.
    pub e2e_p50_ms: Option<f64>,
    /// P99 E2E latency.
    pub e2e_p99_ms: Option<f64>,
}

/// The slices of `requests` (any order). `source` and `axis` say where the requests come from
/// and what their seconds count from; `on_run_clock` whether that is the scrapes' axis.
/// `None` when no request can be placed.
pub fn slices(
    requests: &[Completed],
    source: &str,
    axis: &str,
    on_run_clock: bool,
) -> Option<OverTime> {
    let mut placed: Vec<Placed> = requests.iter().filter_map(Placed::of).collect();
    // In one order whatever the input's, so the fractional token sums are the same bits.
    placed.sort_by(|a, b| {
        a.sent_s
            .total_cmp(&b.sent_s)
            .then(a.e2e_ms.total_cmp(&b.e2e_ms))
            .then(a.decode_from_s.total_cmp(&b.decode_from_s))
            .then(a.output_tokens.cmp(&b.output_tokens))
    });
    let unplaced = (requests.len() - placed.len()) as u64;
    let start = placed
        .iter()
        .map(|p| p.sent_s.min(p.end_s))
        .min_by(f64::total_cmp)?;
    let end = placed
        .iter()
        .map(|p| p.sent_s.max(p.end_s))
        .max_by(f64::total_cmp)?;
    let run = Run::new(start, end);
    let n = if run.half_span > 0.0 {
        placed.len().clamp(1, MAX_SLICES)
    } else {
        1
    };
    let edges = run.edges(n);
    let mut acc: Vec<Accumulator> = (0..n).map(|_| Accumulator::default()).collect();
    for p in &placed {
        // Counted by the published edges themselves, so re-binning a request by the slice
        // bounds in the JSON always finds it where it is counted.
        if let Some(a) = acc.get_mut(slice_of(&edges, p.sent_s)) {
            a.started += 1;
            a.e2e.push(p.e2e_ms);
            if let Some(t) = p.ttft_ms {
                a.ttft.push(t);
            }
        }
        if let Some(a) = acc.get_mut(slice_of(&edges, p.end_s)) {
            a.completed += 1;
        }
        if let Some(tokens) = p.output_tokens {
            spread(&run, n, &mut acc, tokens as f64, p.decode_from_s, p.end_s);
        }
    }
    let slices = acc
        .into_iter()
        .enumerate()
        .map(|(k, a)| {
            let lo = edges.get(k).copied().unwrap_or(end);
            let hi = edges.get(k + 1).copied().unwrap_or(end);
            a.finish(lo, hi)
        })
        .collect();
    Some(OverTime {
        source: source.to_owned(),
        axis: axis.to_owned(),
        on_run_clock,
        requests: placed.len() as u64,
        unplaced,
        without_tokens: placed.iter().filter(|p| p.output_tokens.is_none()).count() as u64,
        start_s: start,
        end_s: end,
        slices,
    })
}

/// A request with finite times, its end and decode start on the run's axis.
struct Placed {
    sent_s: f64,
    end_s: f64,
    /// First token, or the end when none was recorded (then every token is at the end).
    decode_from_s: f64,
    ttft_ms: Option<f64>,
    e2e_ms: f64,
    output_tokens: Option<u64>,
}

impl Placed {
    fn of(r: &Completed) -> Option<Placed> {
        let end_s = r.sent_s + r.e2e_ms / 1e3;
        if !(r.sent_s.is_finite() && r.e2e_ms.is_finite() && end_s.is_finite()) {
            return None;
        }
        let ttft_ms = r.ttft_ms.filter(|t| t.is_finite());
        let decode_from_s = ttft_ms
            .map(|t| r.sent_s + t / 1e3)
            .filter(|t| t.is_finite() && *t <= end_s)
            .unwrap_or(end_s);
        Some(Placed {
            sent_s: r.sent_s,
            end_s,
            decode_from_s,
            ttft_ms,
            e2e_ms: r.e2e_ms,
            output_tokens: r.output_tokens,
        })
    }
}

/// The run's bounds, with half its span (finite for any two finite bounds).
struct Run {
    start: f64,
    end: f64,
    half_span: f64,
}

impl Run {
    fn new(start: f64, end: f64) -> Run {
        Run {
            start,
            end,
            half_span: (end / 2.0 - start / 2.0).max(0.0),
        }
    }

    /// Where `t` is in the run, 0 at its start and 1 at its end (0 for a zero-length run).
    fn position(&self, t: f64) -> f64 {
        if self.half_span > 0.0 {
            ((t / 2.0 - self.start / 2.0) / self.half_span).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The slice `t` falls in.
    fn slice(&self, t: f64, n: usize) -> usize {
        ((self.position(t) * n as f64).floor() as usize).min(n.saturating_sub(1))
    }

    /// The `n + 1` slice edges, the first exactly the start and the last exactly the end.
    fn edges(&self, n: usize) -> Vec<f64> {
        (0..=n)
            .map(|k| {
                if k == n {
                    return self.end;
                }
                let half = self.half_span * (k as f64 / n as f64);
                (self.start + half + half).min(self.end)
            })
            .collect()
    }
}

/// The slice whose `[start, end)` holds `t` among the `n + 1` edges (the last slice holds the
/// run's end too; a time before the first edge counts in the first).
fn slice_of(edges: &[f64], t: f64) -> usize {
    let last = edges.len().saturating_sub(2);
    edges
        .partition_point(|e| *e <= t)
        .saturating_sub(1)
        .min(last)
}

/// Adds `tokens` spread evenly over `[from, to]` to the slices it overlaps (all to the slice
/// of `to` when the interval is empty). The shares are positions in the run, so the slices'
/// tokens sum to `tokens` up to rounding.
fn spread(run: &Run, n: usize, acc: &mut [Accumulator], tokens: f64, from: f64, to: f64) {
    let (a, b) = (run.position(from), run.position(to));
    if b <= a {
        if let Some(slot) = acc.get_mut(run.slice(to, n)) {
            slot.output_tokens += tokens;
        }
        return;
    }
    let width = b - a;
    let first = run.slice(from, n);
    let last = run.slice(to, n);
    for k in first..=last {
        let lo = (k as f64 / n as f64).max(a);
        let hi = if k + 1 == n {
            b
        } else {
            ((k + 1) as f64 / n as f64).min(b)
        };
        if let Some(slot) = acc.get_mut(k)
            && hi > lo
        {
            slot.output_tokens += tokens * ((hi - lo) / width);
        }
    }
}

#[derive(Default)]
struct Accumulator {
    started: u64,
    completed: u64,
    output_tokens: f64,
    ttft: Vec<f64>,
    e2e: Vec<f64>,
}

impl Accumulator {
    fn finish(mut self, start_s: f64, end_s: f64) -> Slice {
        let width = end_s - start_s;
        let per_s = |x: f64| Some(x / width).filter(|r| width > 0.0 && r.is_finite());
        self.ttft.sort_by(f64::total_cmp);
        self.e2e.sort_by(f64::total_cmp);
        Slice {
            start_s,
            end_s,
            started: self.started,
            completed: self.completed,
            started_per_s: per_s(self.started as f64),
            completed_per_s: per_s(self.completed as f64),
            output_tokens: self.output_tokens,
            output_tokens_per_s: per_s(self.output_tokens),
            ttft_p50_ms: percentile_sorted_f64(&self.ttft, 50.0),
            ttft_p99_ms: percentile_sorted_f64(&self.ttft, 99.0),
            e2e_p50_ms: percentile_sorted_f64(&self.e2e, 50.0),
            e2e_p99_ms: percentile_sorted_f64(&self.e2e, 99.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(sent_s: f64, ttft_ms: f64, e2e_ms: f64, tokens: u64) -> Completed {
        Completed {
            sent_s,
            ttft_ms: Some(ttft_ms),
            e2e_ms,
            output_tokens: Some(tokens),
        }
    }

    fn of(requests: &[Completed]) -> Option<OverTime> {
        slices(requests, "test", "seconds", true)
    }

    /// Every number a slice holds is finite (JSON keeps no NaN or infinity).
    fn all_finite(o: &OverTime) -> bool {
        [o.start_s, o.end_s].iter().all(|x| x.is_finite())
            && o.slices.iter().all(|s| {
                [s.start_s, s.end_s, s.output_tokens]
                    .into_iter()
                    .chain(
                        [
                            s.started_per_s,
                            s.completed_per_s,
                            s.output_tokens_per_s,
                            s.ttft_p50_ms,
                            s.ttft_p99_ms,
                            s.e2e_p50_ms,
                            s.e2e_p99_ms,
                        ]
                        .into_iter()
                        .flatten(),
                    )
                    .all(f64::is_finite)
            })
    }

    #[test]
    fn every_request_lies_in_the_slice_it_is_counted_in() {
        // Sends on a 1 ms grid over runs of odd lengths: the halved arithmetic that places a
        // request must agree with the edges the JSON publishes, end exclusive.
        for len_ms in [900u32, 750, 333, 1_001, 29, 7_919] {
            let reqs: Vec<Completed> = (0..=len_ms)
                .step_by(3)
                .map(|ms| req(f64::from(ms) / 1000.0, 0.5, 0.0, 1))
                .collect();
            let o = of(&reqs).unwrap();
            let n = o.slices.len();
            let mut rebinned = vec![0u64; n];
            for r in &reqs {
                let k = o
                    .slices
                    .iter()
                    .position(|s| s.start_s <= r.sent_s && r.sent_s < s.end_s)
                    .unwrap_or(n - 1);
                rebinned[k] += 1;
            }
            let counted: Vec<u64> = o.slices.iter().map(|s| s.started).collect();
            assert_eq!(counted, rebinned, "run of {len_ms} ms");
        }
    }

    #[test]
    fn no_requests_make_no_slices() {
        assert_eq!(of(&[]), None);
    }

    #[test]
    fn slices_are_at_most_thirty_and_at_most_one_per_request() {
        let many: Vec<Completed> = (0..1000).map(|i| req(i as f64, 5.0, 10.0, 3)).collect();
        assert_eq!(of(&many).map(|o| o.slices.len()), Some(MAX_SLICES));
        let few: Vec<Completed> = (0..4).map(|i| req(i as f64, 5.0, 10.0, 3)).collect();
        assert_eq!(of(&few).map(|o| o.slices.len()), Some(4));
    }

    #[test]
    fn a_request_counts_where_it_was_sent_and_where_it_ended() {
        // Run 0–10 s in two slices of 5 s: sent at 1, ends at 8.
        let o = of(&[req(0.0, 1.0, 10_000.0, 0), req(1.0, 2.0, 7_000.0, 0)]).unwrap();
        let started: Vec<u64> = o.slices.iter().map(|s| s.started).collect();
        let completed: Vec<u64> = o.slices.iter().map(|s| s.completed).collect();
        assert_eq!(started, [2, 0]);
        assert_eq!(completed, [0, 2]);
        assert_eq!(o.slices[0].started_per_s, Some(0.4));
        assert_eq!(o.slices[0].ttft_p50_ms, Some(1.5));
        assert_eq!(o.slices[1].e2e_p50_ms, None);
    }

    #[test]
    fn tokens_are_spread_over_the_decode_interval() {
        // Run 0–10 s, two slices; one request decodes 0–10 s (ttft 0): half its tokens each.
        // The other request (sent at 10 s, no decode time) puts its tokens at its end.
        let o = of(&[req(0.0, 0.0, 10_000.0, 100), req(10.0, 0.0, 0.0, 7)]).unwrap();
        assert_eq!(o.slices[0].output_tokens, 50.0);
        assert_eq!(o.slices[1].output_tokens, 57.0);
        assert_eq!(o.slices[0].output_tokens_per_s, Some(10.0));
    }

    #[test]
    fn one_request_is_one_zero_length_slice_without_rates() {
        let o = of(&[req(3.0, 0.0, 0.0, 5)]).unwrap();
        assert_eq!(o.slices.len(), 1);
        let s = &o.slices[0];
        assert_eq!(
            (s.start_s, s.end_s, s.started, s.completed),
            (3.0, 3.0, 1, 1)
        );
        assert_eq!(s.started_per_s, None);
        assert_eq!(s.output_tokens_per_s, None);
        assert_eq!(s.output_tokens, 5.0);
        assert_eq!(s.e2e_p99_ms, Some(0.0));
    }

    #[test]
    fn everything_in_one_instant_is_one_slice() {
        let same: Vec<Completed> = (0..50).map(|_| req(7.0, 0.0, 0.0, 1)).collect();
        let o = of(&same).unwrap();
        assert_eq!(o.slices.len(), 1);
        assert_eq!(o.slices[0].started, 50);
        assert_eq!(o.slices[0].completed_per_s, None);
    }

    #[test]
    fn non_finite_times_are_unplaced_not_nan() {
        let o = of(&[
            req(f64::NAN, 1.0, 1.0, 1),
            req(1.0, 1.0, f64::INFINITY, 1),
            req(1.0, f64::NAN, 2.0, 1),
            req(2.0, 1.0, 2.0, 1),
        ])
        .unwrap();
        assert_eq!((o.requests, o.unplaced), (2, 2));
        assert!(all_finite(&o));
        assert_eq!(of(&[req(f64::NAN, 0.0, 0.0, 0)]), None);
    }

    #[test]
    fn negative_times_and_latencies_stay_inside_the_run() {
        // An end before the send (a negative E2E) widens the run backwards.
        let o = of(&[req(-5.0, -1.0, -2_000.0, 4), req(-1.0, 1.0, 1_000.0, 4)]).unwrap();
        assert_eq!((o.start_s, o.end_s), (-7.0, 0.0));
        assert_eq!(o.slices.iter().map(|s| s.completed).sum::<u64>(), 2);
        assert!(all_finite(&o));
    }

    #[test]
    fn huge_times_do_not_overflow() {
        let o = of(&[
            req(-f64::MAX, 0.0, 0.0, 1),
            req(f64::MAX, 0.0, 0.0, 1),
            req(0.0, 0.0, 0.0, 1),
        ])
        .unwrap();
        assert_eq!(o.slices.len(), 3);
        assert_eq!(
            o.slices.iter().map(|s| s.started).collect::<Vec<_>>(),
            [1, 1, 1]
        );
        assert!(all_finite(&o));
        // A send near the top of f64 whose end overflows is unplaced.
        let o = of(&[req(f64::MAX, 0.0, f64::MAX, 1), req(1.0, 0.0, 0.0, 1)]).unwrap();
        assert_eq!(o.unplaced, 1);
    }

    #[test]
    fn requests_without_usage_count_but_carry_no_tokens() {
        let mut r = req(0.0, 1.0, 1.0, 9);
        r.output_tokens = None;
        let o = of(&[r, req(1.0, 1.0, 1.0, 9)]).unwrap();
        assert_eq!(o.without_tokens, 1);
        assert_eq!(o.slices.iter().map(|s| s.output_tokens).sum::<f64>(), 9.0);
    }

    #[test]
    fn one_slice_of_everything_has_the_run_s_percentiles() {
        let mut e2e: Vec<f64> = vec![5.0, 1.0, 100.0, 3.0];
        let o = of(&[
            req(0.0, 0.0, e2e[0], 0),
            req(0.0, 0.0, e2e[1], 0),
            req(0.0, 0.0, e2e[2], 0),
            req(0.0, 0.0, e2e[3], 0),
        ])
        .unwrap();
        e2e.sort_by(f64::total_cmp);
        // Not one slice (the ends differ), so pool them back.
        let all: Vec<&Slice> = o.slices.iter().filter(|s| s.started > 0).collect();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].e2e_p99_ms, percentile_sorted_f64(&e2e, 99.0));
    }

    proptest::proptest! {
        #[test]
        fn slices_tile_the_run_and_hold_every_request(
            rows in proptest::collection::vec(
                (
                    proptest::prop_oneof![-1e6f64..1e6, proptest::num::f64::ANY],
                    proptest::option::of(proptest::prop_oneof![0f64..1e5, proptest::num::f64::ANY]),
                    proptest::prop_oneof![0f64..1e6, proptest::num::f64::ANY],
                    proptest::option::of(0u64..100_000),
                ),
                0..200,
            )
        ) {
            let requests: Vec<Completed> = rows
                .iter()
                .map(|&(sent_s, ttft_ms, e2e_ms, output_tokens)| Completed { sent_s, ttft_ms, e2e_ms, output_tokens })
                .collect();
            let Some(o) = of(&requests) else {
                proptest::prop_assert!(requests.iter().all(|r| Placed::of(r).is_none()));
                return Ok(());
            };
            proptest::prop_assert_eq!(o.requests + o.unplaced, requests.len() as u64);
            proptest::prop_assert_eq!(o.slices.iter().map(|s| s.started).sum::<u64>(), o.requests);
            proptest::prop_assert_eq!(o.slices.iter().map(|s| s.completed).sum::<u64>(), o.requests);
            proptest::prop_assert!(!o.slices.is_empty() && o.slices.len() <= MAX_SLICES);
            proptest::prop_assert_eq!(o.slices.first().map(|s| s.start_s), Some(o.start_s));
            proptest::prop_assert_eq!(o.slices.last().map(|s| s.end_s), Some(o.end_s));
            for w in o.slices.windows(2) {
                proptest::prop_assert_eq!(w[0].end_s, w[1].start_s);
            }
            proptest::prop_assert!(o.slices.iter().all(|s| s.start_s <= s.end_s));
            proptest::prop_assert!(all_finite(&o));
            let tokens: f64 = requests
                .iter()
                .filter(|r| Placed::of(r).is_some())
                .filter_map(|r| r.output_tokens)
                .map(|t| t as f64)
                .sum();
            let attributed: f64 = o.slices.iter().map(|s| s.output_tokens).sum();
            proptest::prop_assert!((attributed - tokens).abs() <= 1e-6 * tokens.max(1.0));
            // Deterministic: the same requests in another order give the same slices.
            let mut reversed = requests.clone();
            reversed.reverse();
            proptest::prop_assert_eq!(of(&reversed), Some(o));
        }
    }
}
