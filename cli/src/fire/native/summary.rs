//! The few numbers printed after a native run, computed from the records alone (the receipt
//! keeps the records; the audit recomputes everything). Percentiles are numpy's default
//! (linear interpolation between order statistics).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use loadproof_core::receipt::{Disposition, RequestRecord};

/// What the run says about itself.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Lines for stderr.
    pub text: String,
    /// Set when the largest dispatch lag exceeds the bound: the receipt note.
    pub fell_behind: Option<String>,
}

/// numpy's `percentile(values, q, method="linear")` on sorted values; `None` when empty.
pub fn percentile(sorted: &[i64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let rank = q / 100.0 * last as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let (a, b) = (*sorted.get(lo)? as f64, *sorted.get(hi)? as f64);
    Some(a + (b - a) * (rank - lo as f64))
}

fn ms(ns: Option<f64>) -> String {
    ns.map_or_else(|| "-".to_owned(), |v| format!("{:.3}", v / 1e6))
}

fn sorted(values: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut v: Vec<i64> = values.collect();
    v.sort_unstable();
    v
}

/// Summarizes `records` (one per offered request).
pub fn summarize(
    records: &[RequestRecord],
    offered_rate: Option<f64>,
    lag_bound_ns: i64,
) -> Summary {
    let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    for r in records {
        *counts.entry(r.disposition.kind()).or_default() += 1;
    }
    let ok = counts.get("ok").copied().unwrap_or(0);
    let not_sent = counts.get("not_sent").copied().unwrap_or(0);
    let failed = records.len() as u64 - ok - not_sent;
    let lags = sorted(
        records
            .iter()
            .filter_map(|r| Some(r.sent_ns? - r.scheduled_ns)),
    );
    let sends = sorted(records.iter().filter_map(|r| r.sent_ns));
    let achieved = match (sends.first(), sends.last()) {
        (Some(a), Some(b)) if b > a => Some((sends.len() - 1) as f64 * 1e9 / (b - a) as f64),
        _ => None,
    };
    let oks = || records.iter().filter(|r| r.disposition == Disposition::Ok);
    let ttft_send = sorted(oks().filter_map(|r| Some(r.chunks_ns.first()? - r.sent_ns?)));
    let ttft_sched = sorted(oks().filter_map(|r| Some(r.chunks_ns.first()? - r.scheduled_ns)));

    let mut text = String::new();
    let failures: Vec<String> = counts
        .iter()
        .filter(|(k, _)| !matches!(**k, "ok" | "not_sent"))
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(
        text,
        "requests {} offered: {ok} ok, {failed} failed{}, {not_sent} not sent",
        records.len(),
        if failures.is_empty() {
            String::new()
        } else {
            format!(" ({})", failures.join(", "))
        }
    );
    let rate = |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.1}"));
    let _ = writeln!(
        text,
        "rate     offered {} req/s, achieved {} req/s ({} sends)",
        rate(offered_rate),
        rate(achieved),
        sends.len()
    );
    let max_lag = lags.last().copied();
    let _ = writeln!(
        text,
        "lag      dispatch (send − schedule) p50 {} ms, p99 {} ms, max {} ms; bound {} ms",
        ms(percentile(&lags, 50.0)),
        ms(percentile(&lags, 99.0)),
        ms(max_lag.map(|v| v as f64)),
        ms(Some(lag_bound_ns as f64)),
    );
    let _ = write!(
        text,
        "ttft     from send p50 {} ms, p99 {} ms; from schedule p50 {} ms, p99 {} ms ({} ok requests)",
        ms(percentile(&ttft_send, 50.0)),
        ms(percentile(&ttft_send, 99.0)),
        ms(percentile(&ttft_sched, 50.0)),
        ms(percentile(&ttft_sched, 99.0)),
        ttft_send.len()
    );
    let fell_behind = max_lag.filter(|&m| m > lag_bound_ns).map(|m| {
        let late = lags.iter().filter(|&&l| l > lag_bound_ns).count();
        format!(
            "the client fell behind: dispatch lag (send − schedule) reached {} ms, over the bound of {} ms ({late} of {} sent requests later than the bound); the run is invalid as a replay of the plan's schedule",
            ms(Some(m as f64)),
            ms(Some(lag_bound_ns as f64)),
            lags.len()
        )
    });
    Summary { text, fell_behind }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_numpys_linear() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[3], 99.0), Some(3.0));
        assert_eq!(percentile(&[1, 2, 3, 4], 50.0), Some(2.5));
        // numpy.percentile([0, 10, 20, 30, 40], 99) == 39.6
        assert!((percentile(&[0, 10, 20, 30, 40], 99.0).unwrap() - 39.6).abs() < 1e-9);
    }

    fn record(index: u64, scheduled: i64, sent: Option<i64>, d: Disposition) -> RequestRecord {
        RequestRecord {
            index,
            scheduled_ns: scheduled,
            sent_ns: sent,
            first_token_ns: sent.map(|s| s + 5_000_000),
            chunks_ns: sent.map(|s| vec![s + 5_000_000]).unwrap_or_default(),
            end_ns: sent,
            prompt_tokens: 1,
            max_tokens: 1,
            usage: None,
            disposition: d,
        }
    }

    #[test]
    fn a_lag_over_the_bound_marks_the_run() {
        let rs = vec![
            record(0, 0, Some(100), Disposition::Ok),
            record(1, 1_000_000, Some(1_000_100), Disposition::Ok),
            record(
                2,
                2_000_000,
                Some(14_000_000),
                Disposition::Http {
                    status: 500,
                    body: String::new(),
                },
            ),
            record(
                3,
                3_000_000,
                None,
                Disposition::NotSent {
                    reason: "stopped".into(),
                },
            ),
        ];
        let s = summarize(&rs, Some(1000.0), 10_000_000);
        assert!(
            s.text
                .contains("4 offered: 2 ok, 1 failed (http 1), 1 not sent"),
            "{}",
            s.text
        );
        assert!(s.fell_behind.unwrap().contains("reached 12.000 ms"));
        assert!(summarize(&rs, None, 20_000_000).fell_behind.is_none());
    }
}
