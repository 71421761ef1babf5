//! Counters as rates: a `/metrics` counter (`vllm:generation_tokens_total`) only ever grows,
//! so its curve over a run is a ramp that hides when the engine worked hardest; a reviewer
//! reads tokens per second between consecutive scrapes instead, as Grafana's `rate()` shows
//! it. A counter that went down was reset (the engine restarted): its rate counts from 0, as
//! Prometheus does, and the interval is named a reset instead of drawn negative.
//!
//! The chart and the table beside it both take their numbers from [`counter_rates`].

use super::model::{MetricPoint, MetricsSeries};

/// A counter's rate over the interval ending at one scrape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// The scrape's time, seconds since the run's start (the interval's end).
    pub t_s: f64,
    /// Growth since the previous scrape of the same URL (the value itself after a reset).
    pub delta: f64,
    /// `delta` per second of the interval.
    pub per_s: f64,
    /// True when the counter went down: it restarted, and `delta` counts from 0.
    pub reset: bool,
}

/// The rate of `pick` at each of `series.points` (parallel to it): since the previous point of
/// the same URL that has a time and a value; `None` for a URL's first reading, a point without
/// a time or a value, or an interval of no time.
pub fn counter_rates(
    series: &MetricsSeries,
    pick: fn(&MetricPoint) -> Option<f64>,
) -> Vec<Option<Rate>> {
    let mut last: Vec<Option<(f64, f64)>> = vec![None; series.urls.len()];
    series
        .points
        .iter()
        .map(|p| {
            let (Some(t), Some(v)) = (p.t_s, pick(p)) else {
                return None;
            };
            let slot = last.get_mut(p.url as usize)?;
            let before = slot.replace((t, v));
            let (t0, v0) = before?;
            rate(t0, v0, t, v)
        })
        .collect()
}

/// The rate from `(t0, v0)` to `(t1, v1)`, when time passed.
fn rate(t0: f64, v0: f64, t1: f64, v1: f64) -> Option<Rate> {
    let dt = t1 - t0;
    if !(dt > 0.0 && dt.is_finite()) {
        return None;
    }
    let reset = v1 < v0;
    let delta = if reset { v1 } else { v1 - v0 };
    Some(Rate {
        t_s: t1,
        delta,
        per_s: delta / dt,
        reset,
    })
}

/// The engine's generated and prompt token counters as rates (see [`counter_rates`]), and how
/// many of those intervals followed a reset: what the `/metrics` chart draws and its table shows.
pub fn token_rates(series: &MetricsSeries) -> (Vec<Option<Rate>>, Vec<Option<Rate>>, usize) {
    let generated = counter_rates(series, |p| p.generation_tokens);
    let prompt = counter_rates(series, |p| p.prompt_tokens);
    let resets = generated
        .iter()
        .chain(&prompt)
        .flatten()
        .filter(|r| r.reset)
        .count();
    (generated, prompt, resets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadproof_core::receipt::Phase;

    fn point(url: u32, t_s: Option<f64>, generation: Option<f64>) -> MetricPoint {
        MetricPoint {
            scrape: 0,
            url,
            phase: Phase::During,
            t_s,
            running: None,
            waiting: None,
            kv_usage: None,
            generation_tokens: generation,
            prompt_tokens: None,
            preemptions: None,
            gpu: None,
        }
    }

    fn series(points: Vec<MetricPoint>, urls: usize) -> MetricsSeries {
        MetricsSeries {
            urls: (0..urls).map(|u| format!("http://e{u}/metrics")).collect(),
            exporters: Vec::new(),
            points,
            unread: Vec::new(),
            unread_count: 0,
            truncated: false,
        }
    }

    fn per_s(s: &MetricsSeries) -> Vec<Option<f64>> {
        counter_rates(s, |p| p.generation_tokens)
            .iter()
            .map(|r| r.map(|r| r.per_s))
            .collect()
    }

    #[test]
    fn rate_is_growth_per_second_since_the_previous_scrape() {
        let s = series(
            vec![
                point(0, Some(0.0), Some(100.0)),
                point(0, Some(2.0), Some(300.0)),
                point(0, Some(2.5), Some(300.0)),
            ],
            1,
        );
        assert_eq!(per_s(&s), [None, Some(100.0), Some(0.0)]);
    }

    #[test]
    fn a_reset_counts_from_zero_and_is_named() {
        let s = series(
            vec![
                point(0, Some(0.0), Some(500.0)),
                point(0, Some(1.0), Some(40.0)),
            ],
            1,
        );
        let r = counter_rates(&s, |p| p.generation_tokens)[1].unwrap();
        assert!(r.reset);
        assert_eq!((r.delta, r.per_s), (40.0, 40.0));
    }

    #[test]
    fn each_url_is_its_own_counter() {
        let s = series(
            vec![
                point(0, Some(0.0), Some(10.0)),
                point(1, Some(0.5), Some(1000.0)),
                point(0, Some(1.0), Some(20.0)),
                point(1, Some(1.5), Some(1100.0)),
            ],
            2,
        );
        assert_eq!(per_s(&s), [None, None, Some(10.0), Some(100.0)]);
    }

    #[test]
    fn no_rate_without_a_time_a_value_or_elapsed_time() {
        let s = series(
            vec![
                point(0, Some(1.0), Some(10.0)),
                point(0, None, Some(20.0)),
                point(0, Some(2.0), None),
                point(0, Some(1.0), Some(30.0)),
                point(7, Some(3.0), Some(30.0)),
            ],
            1,
        );
        assert_eq!(per_s(&s), [None, None, None, None, None]);
    }
}
