//! The clock a trace was recorded with, and the gaps between its arrivals read on that clock.
//!
//! Published traces are often written on a coarse tick: Mooncake's conversation trace puts
//! 12,031 requests on a ~3 s grid (0, 3000, 5999, 9000 ms …), so 10,851 of its 12,030 gaps are
//! exactly zero and a plain histogram shows one bar. Read on the grid instead, the same
//! numbers say something: this many requests shared a tick, this many were one tick apart.
//!
//! Definitions (the docs quote them):
//! - the **recording grid** is the largest duration `g` of [`GRID_LADDER`] such that every
//!   distinct arrival (in the source's clock: anchor + offset) lies within `g / 100` of a
//!   multiple of `g`, on at least two ticks and with at most two distinct timestamps per tick
//!   on average. "Within rounding", because recorders round: Mooncake's ticks sit up to 3 ms
//!   off its 3 s grid. A trace with fewer than two distinct timestamps, or on no tick coarser
//!   than 1 ns, has **no grid**. It differs from `timestamp_resolution_s` (the smallest
//!   gap seen, 2.997 s on Mooncake): that is a spacing, this is the tick it sits on.
//! - a **zero gap** is two consecutive requests with the same timestamp; it is counted apart,
//!   never binned.
//! - positive gaps are rounded to the nearest multiple of the grid (of 1 ns with no grid) and
//!   binned by multiple: one bin per multiple while there are at most [`MAX_GAP_BINS`] (from
//!   one tick, or from zero when a positive gap is under half a tick: two timestamps rounded
//!   onto one tick), else [`MAX_GAP_BINS`] − 1 bins of a round number of multiples up to the 99th percentile
//!   and one open-ended bin above.
//! - the **suggested window** is ten ticks, when that is wider than the default 1 s window:
//!   a window of ten ticks moves by at most a tenth when one tick's requests land a few ms
//!   early across its edge, while a window of one tick measures the recorder's rounding.

use serde::{Deserialize, Serialize};

use crate::divisor::Divisor;
use crate::trace::Trace;

/// Candidate grids, nanoseconds, finest first: 1, 2, 3 and 5 × 10^k from 1 ns to 50 s, then
/// the minute-scale ticks loggers use.
#[rustfmt::skip]
pub const GRID_LADDER: [i64; 51] = [
    1, 2, 3, 5,
    10, 20, 30, 50,
    100, 200, 300, 500,
    US, 2 * US, 3 * US, 5 * US,
    10 * US, 20 * US, 30 * US, 50 * US,
    100 * US, 200 * US, 300 * US, 500 * US,
    MS, 2 * MS, 3 * MS, 5 * MS,
    10 * MS, 20 * MS, 30 * MS, 50 * MS,
    100 * MS, 200 * MS, 300 * MS, 500 * MS,
    S, 2 * S, 3 * S, 5 * S,
    10 * S, 20 * S, 30 * S, 50 * S,
    60 * S, 120 * S, 300 * S, 600 * S,
    900 * S, 1800 * S, 3600 * S,
];

const US: i64 = 1_000;
const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;

/// Most bins of positive gaps.
pub const MAX_GAP_BINS: usize = 24;

/// Ticks a burstiness window should span on a gridded trace.
pub const WINDOW_TICKS: i64 = 10;

/// The largest grid of [`GRID_LADDER`] all of `arrival_ns` (offsets from `anchor_ns`, in
/// arrival order) sit on within 1 %, in nanoseconds; `None` when there is none coarser than
/// 1 ns. Any input is accepted: unsorted or extreme values give some answer, never a panic.
pub fn recording_grid(arrival_ns: &[i64], anchor_ns: i64) -> Option<i64> {
    let distinct = || {
        let mut prev = None;
        arrival_ns.iter().filter_map(move |&t| {
            let new = prev != Some(t);
            prev = Some(t);
            new.then_some(t)
        })
    };
    let mut all = distinct();
    let first = all.next()?;
    // One timestamp, however many requests carry it, is no clock.
    all.find(|&t| t != first)?;
    GRID_LADDER
        .iter()
        .rev()
        .copied()
        .filter(|&g| g > 1)
        .find(|&g| on_grid(distinct(), anchor_ns, g))
}

/// Whether every one of `distinct` (offsets from `anchor`, in order) is within 1 % of a
/// multiple of `g`, on at least two ticks, with at most two distinct timestamps per tick on
/// average: a recorder's rounding puts one tick's requests on one timestamp, or two when some
/// land a few ms off. Without that last rule any trace shorter than 1 % of an hour would sit
/// on the hour's grid.
///
/// All in `i64`: the anchor and the offset are reduced modulo `g` apart, so their sum never
/// overflows, and a tick is only compared with the one before (wrapping cannot make two
/// different ticks equal). `i128` division is a library call: with it the pass took 64 ms
/// on 5M rows natively, 37 ms without.
fn on_grid(distinct: impl Iterator<Item = i64>, anchor: i64, g: i64) -> bool {
    let tolerance = g / 100;
    let anchor_r = anchor.rem_euclid(g);
    let Some(divisor) = u64::try_from(g).ok().and_then(Divisor::new) else {
        return false;
    };
    let mut timestamps = 0u64;
    let mut ticks = 0u64;
    let mut last_tick = None;
    for t in distinct {
        // Offsets from the anchor are non-negative but for hostile input: those divide by the
        // reciprocal (`Divisor`), the rest as `i64`, both to the same Euclidean quotient.
        let (q, rem) = match u64::try_from(t) {
            Ok(u) => {
                let (q, r) = divisor.div_rem(u);
                (q as i64, r as i64)
            }
            Err(_) => (t.div_euclid(g), t.rem_euclid(g)),
        };
        // (anchor + t) mod g, and the tick it rounds to (up to a constant: the anchor's own).
        let sum = anchor_r + rem;
        let (r, carry) = if sum >= g { (sum - g, 1) } else { (sum, 0) };
        if r.min(g - r) > tolerance {
            return false;
        }
        let tick = q.wrapping_add(carry + i64::from(r > g / 2));
        timestamps += 1;
        if last_tick != Some(tick) {
            ticks += 1;
            last_tick = Some(tick);
        }
    }
    ticks >= 2 && timestamps <= 2 * ticks
}

/// Positive gaps whose rounded multiple of the grid is in `[from_s, to_s)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapBin {
    /// Lower edge, seconds (a multiple of the grid).
    pub from_s: f64,
    /// Upper edge, seconds, exclusive; `None` on the open-ended last bin.
    pub to_s: Option<f64>,
    /// Gaps in the bin.
    pub gaps: u64,
}

/// The gaps between consecutive arrivals, read on the recording grid. `Deserialize`: the page
/// computes them in the worker that parsed the trace and reads them back from its JSON (exact:
/// `serde_json`'s `float_roundtrip`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArrivalGaps {
    /// The recording grid, seconds; `None`: no grid.
    pub grid_s: Option<f64>,
    /// Gaps in all (requests − 1).
    pub gaps: u64,
    /// Gaps of zero: a request with the same timestamp as the one before.
    pub zero_gaps: u64,
    /// Width of each bin but an open-ended last one, seconds.
    pub bin_width_s: f64,
    /// The positive gaps, ascending; empty when there are none.
    pub bins: Vec<GapBin>,
    /// A burstiness window of [`WINDOW_TICKS`] ticks, seconds, when that is wider than 1 s.
    pub suggested_window_s: Option<f64>,
}

impl ArrivalGaps {
    /// The gaps of `trace` on its recording grid.
    pub fn of(trace: &Trace) -> ArrivalGaps {
        let anchor = trace.meta().clock_anchor_ns.unwrap_or(0);
        let arrivals = &trace.requests().arrival_ns;
        ArrivalGaps::of_arrivals(arrivals, recording_grid(arrivals, anchor))
    }

    /// The gaps of a trace from its arrivals in the source's clock, before they are rebased
    /// on the first: what [`ArrivalGaps::of`] reads of the trace they make. The grid is read
    /// on anchor + offset, which is the raw stamp, and gaps are differences, which rebasing
    /// keeps. The CLI reads them of an ingester's rows while the file's sha256 is still being
    /// taken, before the trace exists.
    pub fn of_raw_arrivals(arrivals_raw: &[i64]) -> ArrivalGaps {
        ArrivalGaps::of_arrivals(arrivals_raw, recording_grid(arrivals_raw, 0))
    }

    /// The gaps of sorted `arrival_ns` binned on `grid_ns` (1 ns when `None`).
    fn of_arrivals(arrival_ns: &[i64], grid_ns: Option<i64>) -> ArrivalGaps {
        let unit = grid_ns.unwrap_or(1).max(1) as u64;
        // Each positive gap as its multiple of `step` ns, rounded to the unit first (one
        // division: ⌊⌊x / u⌋ / w⌋ = ⌊x / (u·w)⌋); 5M gaps are divided twice, not four times,
        // each by a reciprocal (`Divisor`).
        let multiples = |step: u64| {
            let step = Divisor::new(step.max(1));
            arrival_ns
                .windows(2)
                .filter_map(move |pair| match (pair, step) {
                    ([a, b], Some(step)) if b > a => {
                        Some(step.div(b.abs_diff(*a).saturating_add(unit / 2)))
                    }
                    _ => None,
                })
        };
        let gaps = arrival_ns.len().saturating_sub(1) as u64;
        // One pass for the largest multiple and a log2 histogram, to place the 99th percentile.
        let mut positive = 0u64;
        let mut sub_tick = 0u64;
        let mut m_max = 0u64;
        let mut log2 = [0u64; 64];
        for m in multiples(unit) {
            positive += 1;
            sub_tick += u64::from(m == 0);
            m_max = m_max.max(m);
            // The log2 buckets only bound the 99th percentile from above: a gap under half a
            // tick (multiple 0) shares bucket 0 with one-tick gaps, whose upper edge (2) holds
            // both. Its bin is its own multiple's, below: from zero, never the one-tick bin.
            if let Some(slot) = log2.get_mut(m.checked_ilog2().unwrap_or(0) as usize) {
                *slot += 1;
            }
        }
        let zero_gaps = arrival_ns
            .windows(2)
            .filter(|pair| matches!(pair, [a, b] if a == b))
            .count() as u64;
        let width = bin_width(m_max, positive, &log2);
        // One bin per multiple starts at one tick, unless some positive gap is under half a
        // tick (two timestamps rounded onto one tick): those get the bin of multiple 0, never
        // the one-tick bin they are not in.
        let first = u64::from(width == 1 && sub_tick == 0);
        let end = m_max / width + 1;
        let limit = first + MAX_GAP_BINS as u64;
        let (regular_end, open) = if end <= limit {
            (end, false)
        } else {
            (limit - 1, true)
        };
        let n_bins = if positive == 0 {
            0
        } else {
            (regular_end - first + u64::from(open)) as usize
        };
        let mut counts = vec![0u64; n_bins];
        for idx in multiples(unit.saturating_mul(width)) {
            let idx = idx.min(regular_end).max(first) - first;
            if let Some(c) = usize::try_from(idx).ok().and_then(|i| counts.get_mut(i)) {
                *c += 1;
            }
        }
        let secs = |multiple: u64| multiple as f64 * unit as f64 / 1e9;
        let bins = counts
            .into_iter()
            .enumerate()
            .map(|(i, gaps)| {
                let idx = first + i as u64;
                GapBin {
                    from_s: secs(idx.saturating_mul(width)),
                    to_s: (idx < regular_end).then(|| secs((idx + 1).saturating_mul(width))),
                    gaps,
                }
            })
            .collect();
        // A window longer than the trace would hold it all in one count: no burstiness to read.
        let span_ns = match (arrival_ns.first(), arrival_ns.last()) {
            (Some(a), Some(b)) => b.saturating_sub(*a),
            _ => 0,
        };
        let suggested_window_s = grid_ns
            .map(|g| g.saturating_mul(WINDOW_TICKS))
            .filter(|&w| w > 1_000_000_000 && w <= span_ns)
            .map(|w| w as f64 / 1e9);
        ArrivalGaps {
            grid_s: grid_ns.map(|g| g as f64 / 1e9),
            gaps,
            zero_gaps,
            bin_width_s: secs(width),
            bins,
            suggested_window_s,
        }
    }
}

/// Multiples of the unit per bin: 1 when every multiple gets its own bin, else the round
/// number (1, 2 or 5 × 10^k) that spreads up to the 99th percentile over all bins but one.
fn bin_width(m_max: u64, positive: u64, log2: &[u64; 64]) -> u64 {
    if m_max <= MAX_GAP_BINS as u64 {
        return 1;
    }
    // The log2 bucket holding the 99th percentile; its upper edge bounds the regular bins.
    let wanted = positive - positive / 100;
    let mut seen = 0u64;
    let mut cap = m_max.saturating_add(1);
    for (bucket, &count) in log2.iter().enumerate() {
        seen += count;
        if seen >= wanted {
            cap = cap.min(2u64.checked_pow(bucket as u32 + 1).unwrap_or(u64::MAX));
            break;
        }
    }
    let per_bin = cap.div_ceil(MAX_GAP_BINS as u64 - 1).max(1);
    round_up(per_bin)
}

/// The smallest 1, 2 or 5 × 10^k at or above `x` (`x` itself beyond u64's range).
fn round_up(x: u64) -> u64 {
    let mut scale = 1u64;
    loop {
        for m in [1u64, 2, 5] {
            match scale.checked_mul(m) {
                Some(v) if v >= x => return v,
                Some(_) => {}
                None => return x,
            }
        }
        match scale.checked_mul(10) {
            Some(s) => scale = s,
            None => return x,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{ArrivalGaps, GRID_LADDER, MAX_GAP_BINS, recording_grid, round_up};

    const S: i64 = 1_000_000_000;

    #[test]
    fn the_ladder_is_ascending() {
        assert!(
            GRID_LADDER.windows(2).all(|w| w[0] < w[1]),
            "{GRID_LADDER:?}"
        );
        assert_eq!(GRID_LADDER[0], 1);
        assert_eq!(GRID_LADDER[GRID_LADDER.len() - 1], 3600 * S);
    }

    #[test]
    fn a_positive_gap_under_half_a_tick_is_not_binned_as_one_tick() {
        let ms = 1_000_000;
        // On a 3 s grid, 3000 → 3001 ms is 1 ms apart: the same tick, not 3 s.
        let ticks = [0, 3000, 3001, 6000, 9000, 12000, 15000, 18000];
        let arrivals: Vec<i64> = ticks.iter().map(|t| t * ms).collect();
        let gaps = ArrivalGaps::of_arrivals(&arrivals, recording_grid(&arrivals, 0));
        assert_eq!(gaps.grid_s, Some(3.0));
        assert_eq!(gaps.bins[0].from_s, 0.0);
        assert_eq!(gaps.bins[0].gaps, 1, "{gaps:?}");
        assert_eq!(gaps.bins[1].from_s, 3.0);
        assert_eq!(gaps.bins[1].gaps, 6, "{gaps:?}");
        // Without such a gap the bins start at one tick.
        let even: Vec<i64> = (0..8).map(|k| k * 3 * S).collect();
        let gaps = ArrivalGaps::of_arrivals(&even, Some(3 * S));
        assert_eq!(gaps.bins[0].from_s, 3.0);
    }

    #[test]
    fn a_positive_gap_under_half_a_tick_is_counted_under_one_tick_in_wide_bins_too() {
        // A 1 s grid with gaps of 1..=99 s: bins of 5 s, from zero. The 1 ms gap (0 ticks,
        // rounded) is in [0, 5 s) with the 1..=4 s gaps; every gap is counted once.
        let mut arrivals = vec![0i64, 1_000_000];
        for gap in 1..=99i64 {
            let last = arrivals[arrivals.len() - 1];
            arrivals.push(last + gap * S);
        }
        let gaps = ArrivalGaps::of_arrivals(&arrivals, Some(S));
        assert_eq!(gaps.bin_width_s, 5.0, "{gaps:?}");
        assert_eq!((gaps.bins[0].from_s, gaps.bins[0].to_s), (0.0, Some(5.0)));
        // 1 ms, then 1, 2, 3 and 4 s.
        assert_eq!(gaps.bins[0].gaps, 5, "{gaps:?}");
        assert_eq!(gaps.bins.iter().map(|b| b.gaps).sum::<u64>(), 100);
    }

    #[test]
    fn arrival_gaps_read_back_from_their_json_are_the_same_gaps() {
        // The page computes the gaps in its worker and reads them back from JSON: the report
        // must not move by a bit. Grids and bin edges of every size, a 1 ns clock included.
        let ms = 1_000_000;
        let cases: [(&[i64], Option<i64>); 4] = [
            (
                &[0, 3000 * ms, 3001 * ms, 6000 * ms, 9000 * ms],
                Some(3 * S),
            ),
            (&[0, 7, 13, 29, 1_000_000_007], None),
            (&[0, 300 * ms, 700 * ms, 1_300 * ms], Some(100 * ms)),
            (&[0], None),
        ];
        for (arrivals, grid) in cases {
            let gaps = ArrivalGaps::of_arrivals(arrivals, grid);
            let json = serde_json::to_string(&gaps).expect("gaps serialize");
            let back: ArrivalGaps = serde_json::from_str(&json).expect("gaps read back");
            assert_eq!(back, gaps);
            assert_eq!(serde_json::to_string(&back).expect("gaps serialize"), json);
        }
    }

    #[test]
    fn a_grid_is_found_from_an_anchor_near_the_end_of_the_clock() {
        // Anchor + offset would overflow i64 arithmetic done naively; reduced modulo the grid
        // first, it does not.
        let arrivals: Vec<i64> = (0..8).map(|k| k * S).collect();
        assert_eq!(recording_grid(&arrivals, (i64::MAX / S) * S), Some(S));
        let arrivals: Vec<i64> = (0..8).map(|k| -k * S).collect();
        assert_eq!(recording_grid(&arrivals, (i64::MIN / S) * S), Some(S));
    }

    #[test]
    fn a_jittered_three_second_grid_is_three_seconds() {
        let ms = 1_000_000;
        let ticks = [0, 3000, 5999, 9000, 12000, 15001, 18000, 20997];
        let arrivals: Vec<i64> = ticks.iter().map(|t| t * ms).collect();
        assert_eq!(recording_grid(&arrivals, 0), Some(3 * S));
    }

    #[test]
    fn the_anchor_is_part_of_the_clock() {
        // Offsets 0, 2, 4 s from an anchor at 1 s: ticks at 1, 3, 5 s are on 1 s, not 2 s.
        assert_eq!(recording_grid(&[0, 2 * S, 4 * S], S), Some(S));
        assert_eq!(recording_grid(&[0, 2 * S, 4 * S], 0), Some(2 * S));
    }

    #[test]
    fn too_few_timestamps_or_a_nanosecond_clock_is_no_grid() {
        assert_eq!(recording_grid(&[], 0), None);
        assert_eq!(recording_grid(&[5, 5, 5], 0), None);
        assert_eq!(recording_grid(&[0, 7, 13, 29], 0), None);
    }

    #[test]
    fn same_timestamp_arrivals_are_counted_apart_from_the_bins() {
        let arrivals = [0, 0, 0, 3 * S, 3 * S, 6 * S, 12 * S];
        let gaps = ArrivalGaps::of_arrivals(&arrivals, recording_grid(&arrivals, 0));
        assert_eq!(gaps.grid_s, Some(3.0));
        assert_eq!((gaps.gaps, gaps.zero_gaps), (6, 3));
        let bins: Vec<_> = gaps
            .bins
            .iter()
            .map(|b| (b.from_s, b.to_s, b.gaps))
            .collect();
        assert_eq!(bins, [(3.0, Some(6.0), 2), (6.0, Some(9.0), 1)]);
        assert_eq!(gaps.bin_width_s, 3.0);
        // Ten ticks (30 s) would be longer than this 12 s trace: none is suggested.
        assert_eq!(gaps.suggested_window_s, None);
    }

    #[test]
    fn a_long_tail_goes_to_an_open_last_bin() {
        // 1 s grid: 990 gaps of 1..=99 s spread out, and 10 gaps of a day.
        let mut arrivals = vec![0i64];
        for i in 0..1000i64 {
            let gap = if i % 100 == 99 { 86_400 } else { 1 + i % 99 };
            let last = arrivals[arrivals.len() - 1];
            arrivals.push(last + gap * S);
        }
        let gaps = ArrivalGaps::of_arrivals(&arrivals, Some(S));
        assert_eq!(gaps.bins.len(), MAX_GAP_BINS);
        let last = &gaps.bins[MAX_GAP_BINS - 1];
        assert_eq!(last.to_s, None);
        assert!(last.gaps >= 10, "{last:?}");
        assert_eq!(gaps.bins.iter().map(|b| b.gaps).sum::<u64>(), 1000);
        assert_eq!(gaps.bins[0].from_s, 0.0);
        assert_eq!(gaps.bin_width_s, 10.0);
    }

    #[test]
    fn the_suggested_window_is_never_longer_than_the_trace() {
        // 0, 0.3 s, 1 h, 1 h 0.3 s sit on the hour's grid: ten hours is no window for it.
        let arrivals = [0, 300 * super::MS, 3_600 * S, 3_600 * S + 300 * super::MS];
        let gaps = ArrivalGaps::of_arrivals(&arrivals, Some(3_600 * S));
        assert_eq!(gaps.suggested_window_s, None);
        // Mooncake's 3 s grid over an hour: 30 s is offered.
        let long: Vec<i64> = (0..1_200).map(|k| k * 3 * S).collect();
        let gaps = ArrivalGaps::of_arrivals(&long, Some(3 * S));
        assert_eq!(gaps.suggested_window_s, Some(30.0));
    }

    #[test]
    fn one_request_or_all_at_once_has_no_bins() {
        let one = ArrivalGaps::of_arrivals(&[0], None);
        assert_eq!((one.gaps, one.zero_gaps, one.bins.len()), (0, 0, 0));
        let burst = ArrivalGaps::of_arrivals(&[0, 0, 0], None);
        assert_eq!((burst.gaps, burst.zero_gaps, burst.bins.len()), (2, 2, 0));
        assert_eq!(burst.suggested_window_s, None);
    }

    #[test]
    fn round_numbers_round_up() {
        assert_eq!(
            [1, 2, 3, 6, 11, 2000, 2001].map(round_up),
            [1, 2, 5, 10, 20, 2000, 5000]
        );
        assert_eq!(round_up(u64::MAX), u64::MAX);
    }

    proptest! {
        /// A trace whose every tick is a multiple of a ladder grid, give or take a thousandth
        /// of it, is detected on that grid or a coarser one it is consistent with.
        #[test]
        fn a_trace_on_a_grid_is_detected_on_it(
            g_idx in 1usize..GRID_LADDER.len(),
            steps in prop::collection::vec(0i64..5, 2..200),
            jitter in prop::collection::vec(-1000i64..=1000, 200),
            anchor_ticks in 0i64..1_000,
        ) {
            let g = GRID_LADDER[g_idx];
            let at = |tick: i64| tick * g + jitter[(tick as usize) % jitter.len()] * (g / 1000) / 1000;
            let mut tick = 0i64;
            let mut arrivals = vec![at(0)];
            for step in &steps {
                tick += step;
                arrivals.push(at(tick));
            }
            // Arrivals must stay in order and include a second distinct tick.
            arrivals.sort_unstable();
            prop_assume!(tick > 0);
            let anchor = anchor_ticks * g;
            let found = recording_grid(&arrivals, anchor);
            prop_assert!(found.is_some_and(|d| d >= g), "grid {g} found {found:?}");
            let d = i128::from(found.unwrap_or(1));
            for &t in &arrivals {
                let r = (i128::from(anchor) + i128::from(t)).rem_euclid(d);
                prop_assert!(r.min(d - r) <= d / 100);
            }
        }

        /// Read on the raw stamps, before rebasing, a trace's gaps are the gaps of the trace:
        /// its grid and bins whatever its anchor, on a grid or off one.
        #[test]
        fn the_gaps_of_the_raw_stamps_are_the_gaps_of_the_rebased_trace(
            g_idx in 0usize..GRID_LADDER.len(),
            steps in prop::collection::vec(0i64..5, 1..200),
            jitter in prop::collection::vec(-1000i64..=1000, 200),
            anchor in 0i64..(1 << 62),
            off_grid in any::<bool>(),
        ) {
            let g = GRID_LADDER[g_idx];
            let mut tick = 0i64;
            let mut offsets = vec![0];
            for (i, step) in steps.iter().enumerate() {
                tick += step;
                let wobble = if off_grid { jitter[i % jitter.len()] * g / 7 } else { 0 };
                offsets.push((tick * g + wobble).max(*offsets.last().unwrap_or(&0)));
            }
            let raw: Vec<i64> = offsets.iter().map(|o| anchor + o).collect();
            let rebased: Vec<i64> = raw.iter().map(|t| t - raw[0]).collect();
            let of_trace = ArrivalGaps::of_arrivals(&rebased, recording_grid(&rebased, raw[0]));
            prop_assert_eq!(ArrivalGaps::of_raw_arrivals(&raw), of_trace);
        }

        /// Hostile timestamps (unsorted, extreme, negative) give an answer, never a panic, and
        /// the gap summary's counts add up.
        #[test]
        fn hostile_timestamps_never_panic(
            arrivals in prop::collection::vec(any::<i64>(), 0..64),
            anchor in any::<i64>(),
        ) {
            let grid = recording_grid(&arrivals, anchor);
            if let Some(g) = grid {
                prop_assert!(GRID_LADDER.contains(&g));
            }
            let gaps = ArrivalGaps::of_arrivals(&arrivals, grid);
            let binned: u64 = gaps.bins.iter().map(|b| b.gaps).sum();
            prop_assert!(gaps.zero_gaps + binned <= gaps.gaps);
            prop_assert!(gaps.bins.len() <= MAX_GAP_BINS);
        }

        /// On sorted arrivals every gap is either zero or in exactly one bin.
        #[test]
        fn every_gap_is_counted_once(
            mut arrivals in prop::collection::vec(0i64..1_000_000_000_000, 1..300),
            grid in prop::option::of(prop::sample::select(GRID_LADDER.to_vec())),
        ) {
            arrivals.sort_unstable();
            let gaps = ArrivalGaps::of_arrivals(&arrivals, grid);
            let binned: u64 = gaps.bins.iter().map(|b| b.gaps).sum();
            prop_assert_eq!(gaps.zero_gaps + binned, gaps.gaps);
            prop_assert_eq!(gaps.gaps, arrivals.len() as u64 - 1);
        }
    }
}
