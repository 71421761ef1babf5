//! What happened between two scrapes: [`counter_delta`], [`histogram_delta`], and
//! [`whole_tokens`] for a delta that counts tokens.
//!
//! The only place values of two scrapes are combined. A delta's refusals (a reset, a vanished
//! series, the wrong family type, a value that is not a count, an overflow) are
//! [`DeltaError`]s; a delta that is not a whole token count is a [`PrecisionLoss`].

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::error::{DeltaError, PrecisionLoss, Scrape};
use super::exposition::{Exposition, Sample, series_name};
use super::metric_type::MetricType;
use super::value::SampleValue;
use crate::decimal::{Decimal, NumberError};

/// How much a counter grew between two scrapes of one server incarnation: per series (label
/// set) `after − before`, summed. A series first seen in `after` counts from 0 (a label value
/// that appeared during the run), and so does every series of a counter that `before`
/// declares without any series yet. Refused, because the difference would not be what the
/// engine did: a family that is not a counter (the type is named), a sample name absent from
/// either scrape, a series that decreased or vanished (a counter reset: the server restarted),
/// a value that is not a finite number ≥ 0, a sum that overflows.
pub fn counter_delta(
    before: &Exposition,
    after: &Exposition,
    sample_name: &str,
) -> Result<Decimal, DeltaError> {
    let series_before = counter_series(before, sample_name, Scrape::Before)?;
    let series_after = counter_series(after, sample_name, Scrape::After)?;
    let by_labels: BTreeMap<&[(String, String)], &Sample> = series_after
        .iter()
        .map(|s| (s.labels.as_slice(), *s))
        .collect();
    let overflow = || DeltaError::Overflow {
        name: sample_name.to_owned(),
    };
    let mut delta = Decimal::ZERO;
    let mut matched = 0usize;
    for b in &series_before {
        let Some(a) = by_labels.get(b.labels.as_slice()) else {
            return Err(DeltaError::Vanished {
                series: b.series(),
                before: b.value,
            });
        };
        matched += 1;
        let (vb, va) = (
            counter_value(b, Scrape::Before)?,
            counter_value(a, Scrape::After)?,
        );
        if va.cmp_value(vb) == Ordering::Less {
            return Err(DeltaError::Decreased {
                series: a.series(),
                before: b.value,
                after: a.value,
            });
        }
        delta = delta
            .checked_add(va.checked_sub(vb).ok_or_else(overflow)?)
            .ok_or_else(overflow)?;
    }
    if matched < series_after.len() {
        let seen: BTreeMap<&[(String, String)], ()> = series_before
            .iter()
            .map(|s| (s.labels.as_slice(), ()))
            .collect();
        for a in series_after
            .iter()
            .filter(|a| !seen.contains_key(a.labels.as_slice()))
        {
            let va = counter_value(a, Scrape::After)?;
            delta = delta.checked_add(va).ok_or_else(overflow)?;
        }
    }
    Ok(delta)
}

/// A histogram's growth between two scrapes, summed across label sets other than `le`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistogramDelta {
    /// `(le, cumulative count delta)`, by ascending `le`, `+Inf` last.
    pub buckets: Vec<(SampleValue, Decimal)>,
    /// The `_count` delta.
    pub count: Decimal,
    /// The `_sum` delta.
    pub sum: Decimal,
}

/// A histogram family's growth between two scrapes (see [`HistogramDelta`]). Only a family
/// whose `# TYPE` is histogram qualifies: a counter, gauge, summary or untyped family is
/// refused with its type named. Per series: each bucket and `_count` may not decrease (a
/// reset), a series may not vanish, a new series counts from 0, the `le` bounds must be the
/// same in both scrapes and across the label sets summed. `_sum` is not checked for
/// monotonicity: negative observations may legitimately lower it.
pub fn histogram_delta(
    before: &Exposition,
    after: &Exposition,
    family_name: &str,
) -> Result<HistogramDelta, DeltaError> {
    let hb = histogram_series(before, family_name, Scrape::Before)?;
    let ha = histogram_series(after, family_name, Scrape::After)?;
    let overflow = || DeltaError::Overflow {
        name: family_name.to_owned(),
    };
    let mut layout: Option<Vec<SampleValue>> = None;
    let mut buckets: Vec<(SampleValue, Decimal)> = Vec::new();
    let mut count = Decimal::ZERO;
    let mut sum = Decimal::ZERO;
    for (labels, b) in &hb {
        if !ha.contains_key(labels) {
            return Err(DeltaError::Vanished {
                series: b.count.series(),
                before: b.count.value,
            });
        }
    }
    for (labels, a) in &ha {
        let b = hb.get(labels);
        let bounds: Vec<SampleValue> = a.buckets.iter().map(|(le, _)| *le).collect();
        if let Some(b) = b {
            let before_bounds: Vec<SampleValue> = b.buckets.iter().map(|(le, _)| *le).collect();
            if !same_bounds(&before_bounds, &bounds) {
                return Err(DeltaError::Layout {
                    series: a.count.series(),
                    detail: format!(
                        "its buckets changed between the scrapes (le {} before, {} after): a restart with another configuration?",
                        list(&before_bounds),
                        list(&bounds)
                    ),
                });
            }
        }
        match &layout {
            None => {
                buckets = bounds.iter().map(|le| (*le, Decimal::ZERO)).collect();
                layout = Some(bounds);
            }
            Some(first) if !same_bounds(first, &bounds) => {
                return Err(DeltaError::Layout {
                    series: a.count.series(),
                    detail: format!(
                        "its buckets (le {}) differ from another label set's ({}): they cannot be summed",
                        list(&bounds),
                        list(first)
                    ),
                });
            }
            Some(_) => {}
        }
        let grow = |after: &Sample, before: Option<&Sample>| -> Result<Decimal, DeltaError> {
            let va = counter_value(after, Scrape::After)?;
            let Some(before) = before else {
                return Ok(va);
            };
            let vb = counter_value(before, Scrape::Before)?;
            if va.cmp_value(vb) == Ordering::Less {
                return Err(DeltaError::Decreased {
                    series: after.series(),
                    before: before.value,
                    after: after.value,
                });
            }
            va.checked_sub(vb).ok_or_else(overflow)
        };
        for (k, (_, bucket)) in a.buckets.iter().enumerate() {
            let before_bucket = b.and_then(|b| b.buckets.get(k)).map(|(_, s)| *s);
            let d = grow(bucket, before_bucket)?;
            if let Some((_, total)) = buckets.get_mut(k) {
                *total = total.checked_add(d).ok_or_else(overflow)?;
            }
        }
        count = count
            .checked_add(grow(a.count, b.map(|b| b.count))?)
            .ok_or_else(overflow)?;
        let finite_sum = |s: &Sample, scrape: Scrape| {
            s.value.finite().ok_or_else(|| DeltaError::Invalid {
                series: s.series(),
                value: s.value,
                scrape,
            })
        };
        let sum_after = finite_sum(a.sum, Scrape::After)?;
        let sum_before = match b {
            Some(b) => finite_sum(b.sum, Scrape::Before)?,
            None => Decimal::ZERO,
        };
        sum = sum
            .checked_add(sum_after.checked_sub(sum_before).ok_or_else(overflow)?)
            .ok_or_else(overflow)?;
    }
    Ok(HistogramDelta {
        buckets,
        count,
        sum,
    })
}

/// A counter value as a whole number of tokens, exactly: `512.0` is 512, `1512.0005` is
/// refused (the engine cannot have produced a fraction of a token, so the number is not what
/// it says), as are negative values and values beyond `u64`.
pub fn whole_tokens(value: Decimal) -> Result<u64, PrecisionLoss> {
    match value.whole_u64() {
        Ok(n) => Ok(n),
        Err(NumberError::Negative) => Err(PrecisionLoss::Negative(value)),
        Err(_) if !value.is_whole() => Err(PrecisionLoss::Fraction(value)),
        Err(_) => Err(PrecisionLoss::TooLarge(value)),
    }
}

// ---------------------------------------------------------------------------------------------
// Deltas: helpers.

/// The series of a counter's value sample in one scrape (possibly none: a labelled counter
/// declared before any label value was seen).
fn counter_series<'e>(
    e: &'e Exposition,
    sample_name: &str,
    scrape: Scrape,
) -> Result<Vec<&'e Sample>, DeltaError> {
    let family = e.family_of(sample_name).ok_or_else(|| DeltaError::Absent {
        name: sample_name.to_owned(),
        scrape,
    })?;
    if family.kind != MetricType::Counter {
        return Err(DeltaError::NotCounter {
            name: sample_name.to_owned(),
            family: family.name.clone(),
            kind: family.kind,
            scrape,
        });
    }
    let is_value = sample_name == family.name
        || sample_name
            .strip_prefix(family.name.as_str())
            .is_some_and(|rest| rest == "_total");
    if !is_value {
        return Err(DeltaError::NotCounterValue {
            name: sample_name.to_owned(),
            family: family.name.clone(),
        });
    }
    Ok(family
        .samples
        .iter()
        .filter(|s| s.name == sample_name)
        .collect())
}

/// A count's value: finite and ≥ 0.
fn counter_value(s: &Sample, scrape: Scrape) -> Result<Decimal, DeltaError> {
    match s.value.finite() {
        Some(v) if !v.is_negative() => Ok(v),
        _ => Err(DeltaError::Invalid {
            series: s.series(),
            value: s.value,
            scrape,
        }),
    }
}

/// One histogram series (label set without `le`): buckets by ascending `le`, count, sum.
struct HistogramSeries<'e> {
    buckets: Vec<(SampleValue, &'e Sample)>,
    count: &'e Sample,
    sum: &'e Sample,
}

type SeriesKey = Vec<(String, String)>;

fn histogram_series<'e>(
    e: &'e Exposition,
    family_name: &str,
    scrape: Scrape,
) -> Result<BTreeMap<SeriesKey, HistogramSeries<'e>>, DeltaError> {
    let family = e.family(family_name).ok_or_else(|| DeltaError::Absent {
        name: family_name.to_owned(),
        scrape,
    })?;
    if family.kind != MetricType::Histogram {
        return Err(DeltaError::NotHistogram {
            family: family.name.clone(),
            kind: family.kind,
            scrape,
        });
    }
    type Parts<'e> = (
        Vec<(SampleValue, &'e Sample)>,
        Option<&'e Sample>,
        Option<&'e Sample>,
    );
    let mut parts: BTreeMap<SeriesKey, Parts<'e>> = BTreeMap::new();
    for s in &family.samples {
        let Some(suffix) = s.name.strip_prefix(family.name.as_str()) else {
            continue;
        };
        let key: SeriesKey = s
            .labels
            .iter()
            .filter(|(k, _)| k != "le")
            .cloned()
            .collect();
        let entry = parts.entry(key).or_insert_with(|| (Vec::new(), None, None));
        match suffix {
            "_bucket" => {
                // `parse` guarantees a numeric, non-NaN `le` on every bucket.
                if let Some(le) = s
                    .label("le")
                    .and_then(|le| SampleValue::parse(le.as_bytes()).ok())
                {
                    entry.0.push((le, s));
                }
            }
            "_count" => entry.1 = Some(s),
            "_sum" => entry.2 = Some(s),
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    for (key, (mut buckets, count, sum)) in parts {
        let named = || series_name(&family.name, &key);
        let (Some(count), Some(sum)) = (count, sum) else {
            if buckets.is_empty() && count.is_none() && sum.is_none() {
                continue;
            }
            return Err(DeltaError::Layout {
                series: named(),
                detail: format!(
                    "the {} scrape lacks its {}",
                    scrape,
                    if count.is_none() { "_count" } else { "_sum" }
                ),
            });
        };
        buckets.sort_by(|(a, _), (b, _)| a.cmp_value(*b).unwrap_or(Ordering::Equal));
        if buckets
            .windows(2)
            .any(|w| matches!(w, [(a, _), (b, _)] if a.cmp_value(*b) == Some(Ordering::Equal)))
        {
            return Err(DeltaError::Layout {
                series: named(),
                detail: format!("two buckets share one le in the {scrape} scrape"),
            });
        }
        out.insert(
            key,
            HistogramSeries {
                buckets,
                count,
                sum,
            },
        );
    }
    Ok(out)
}

fn same_bounds(a: &[SampleValue], b: &[SampleValue]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.cmp_value(*y) == Some(Ordering::Equal))
}

fn list(bounds: &[SampleValue]) -> String {
    let shown: Vec<String> = bounds.iter().map(ToString::to_string).collect();
    format!("[{}]", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::super::test_support::*;
    use super::*;

    const PREFIX_BEFORE: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu-prefix/metrics_before.txt");
    const PREFIX_AFTER: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu-prefix/metrics_after.txt");

    fn delta(before: &str, after: &str, name: &str) -> Result<Decimal, DeltaError> {
        counter_delta(&p(before), &p(after), name)
    }

    #[test]
    fn the_real_vllm_scrapes_parse_with_exact_values() {
        let before = parse(CPU_BEFORE).unwrap();
        let after = parse(CPU_AFTER).unwrap();
        assert_eq!(
            after.process_start_time().unwrap().unwrap().to_string(),
            "1795940336.77"
        );
        assert!(
            before
                .process_start_time()
                .unwrap()
                .unwrap()
                .value_eq(dec("1795940336.77"))
        );
        // README: prompt 2283 = 2279 + 4, generation 338 = 330 + 8 (one earlier curl request).
        let tokens = |name| whole_tokens(counter_delta(&before, &after, name).unwrap());
        assert_eq!(tokens("vllm:generation_tokens_total"), Ok(338));
        assert_eq!(tokens("vllm:prompt_tokens_total"), Ok(2283));
        assert_eq!(tokens("vllm:num_preemptions_total"), Ok(0));
        // The prefix run's before-scrape is this run's after-scrape: 9 × 256 cached tokens.
        let (pb, pa) = (parse(PREFIX_BEFORE).unwrap(), parse(PREFIX_AFTER).unwrap());
        assert_eq!(pb, after);
        assert_eq!(
            whole_tokens(counter_delta(&pb, &pa, "vllm:prefix_cache_hits_total").unwrap()),
            Ok(2304)
        );

        // vLLM (prometheus_client) declares counters with `_total` and `_created` apart.
        let family = after.family_of("vllm:generation_tokens_total").unwrap();
        assert_eq!(
            (family.name.as_str(), family.kind),
            ("vllm:generation_tokens_total", MetricType::Counter)
        );
        assert_eq!(family.line, 151);
        let created = after.family_of("vllm:generation_tokens_created").unwrap();
        assert_eq!(created.kind, MetricType::Gauge);
        // A histogram whose own name ends in `_total`.
        let it = after
            .family_of("vllm:iteration_tokens_total_bucket")
            .unwrap();
        assert_eq!(
            (it.name.as_str(), it.kind),
            ("vllm:iteration_tokens_total", MetricType::Histogram)
        );
        // Summaries without quantiles.
        let size = after.family_of("http_request_size_bytes_sum").unwrap();
        assert_eq!(size.kind, MetricType::Summary);
        assert_eq!(
            after
                .total("http_request_size_bytes_sum")
                .unwrap()
                .unwrap()
                .to_string(),
            "16021"
        );
        // Labelled counter declared before any series exists: every series counts from 0.
        assert!(
            before
                .family("http_requests_total")
                .unwrap()
                .samples
                .is_empty()
        );
        assert_eq!(
            whole_tokens(counter_delta(&before, &after, "http_requests_total").unwrap()),
            Ok(22)
        );

        let h = histogram_delta(&before, &after, "vllm:request_generation_tokens").unwrap();
        assert_eq!(h.count.to_string(), "21");
        assert_eq!(h.sum.to_string(), "338");
        assert_eq!(h.buckets.len(), 12);
        assert_eq!(
            h.buckets.last().map(|(le, _)| *le),
            Some(SampleValue::PosInf)
        );
        let shown: Vec<String> = h
            .buckets
            .iter()
            .map(|(le, n)| format!("{le}:{n}"))
            .collect();
        assert_eq!(
            shown.join(" "),
            "1:0 2:0 5:2 10:8 20:15 50:21 100:21 200:21 500:21 1000:21 2000:21 +Inf:21"
        );
        let ttft = histogram_delta(&before, &after, "vllm:time_to_first_token_seconds").unwrap();
        assert_eq!(ttft.count.to_string(), "21");

        let n_samples: usize = after.families().iter().map(|f| f.samples.len()).sum();
        assert_eq!(n_samples, 445);
        assert_eq!(after.families().len(), 92);
        // Every family was declared: nothing fell back to untyped.
        assert!(after.families().iter().all(|f| f.help.is_some()));
        // Re-rendered, it reads back to the same values.
        let again = parse(after.render().as_bytes()).unwrap();
        assert_eq!(again.render(), after.render());
    }

    #[test]
    fn a_counter_reset_across_a_restart_is_refused() {
        let before =
            "# TYPE t_total counter\nprocess_start_time_seconds 100\nt_total{a=\"1\"} 338.0\n";
        let after =
            "# TYPE t_total counter\nprocess_start_time_seconds 200\nt_total{a=\"1\"} 12.0\n";
        let e = delta(before, after, "t_total").unwrap_err();
        assert_eq!(
            e,
            DeltaError::Decreased {
                series: "t_total{a=\"1\"}".to_owned(),
                before: SampleValue::Finite(dec("338.0")),
                after: SampleValue::Finite(dec("12.0")),
            }
        );
        assert_eq!(
            e.to_string(),
            "t_total{a=\"1\"} went from 338 to 12: a counter reset (did the server restart?)"
        );
    }

    #[test]
    fn a_vanished_series_is_a_counter_reset() {
        let before = "# TYPE t counter\nt_total{a=\"1\"} 5\nt_total{a=\"2\"} 5\n";
        let after = "# TYPE t counter\nt_total{a=\"1\"} 9\n";
        assert!(matches!(
            delta(before, after, "t_total"),
            Err(DeltaError::Vanished { series, .. }) if series == "t_total{a=\"2\"}"
        ));
    }

    #[test]
    fn a_new_series_counts_from_zero() {
        let before = "# TYPE t counter\nt_total{a=\"1\"} 5\n";
        let after = "# TYPE t counter\nt_total{a=\"1\"} 9\nt_total{a=\"2\"} 3\n";
        assert_eq!(delta(before, after, "t_total").unwrap().to_string(), "7");
    }

    #[test]
    fn a_counter_absent_or_not_a_counter_is_refused_by_name() {
        let gauge = "# TYPE t gauge\nt 5\n";
        assert_eq!(
            delta(gauge, gauge, "t").unwrap_err().to_string(),
            "\"t\" belongs to gauge family \"t\" in the before scrape, not a counter"
        );
        assert_eq!(
            delta("x 1\n", "# TYPE t counter\nt_total 1\n", "t_total").unwrap_err(),
            DeltaError::Absent {
                name: "t_total".to_owned(),
                scrape: Scrape::Before
            }
        );
        let om = "# TYPE t counter\nt_total 1\nt_created 1.7e9\n";
        assert!(matches!(
            delta(om, om, "t_created"),
            Err(DeltaError::NotCounterValue { .. })
        ));
        for bad in ["NaN", "+Inf", "-1"] {
            let after = format!("# TYPE t counter\nt_total {bad}\n");
            assert!(
                matches!(
                    delta("# TYPE t counter\nt_total 0\n", &after, "t_total"),
                    Err(DeltaError::Invalid {
                        scrape: Scrape::After,
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn counters_are_found_whichever_way_they_are_declared() {
        let vllm = "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total 3.0\n# TYPE vllm:num_preemptions_created gauge\nvllm:num_preemptions_created 1.7e9\n";
        let om = "# TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total 5.0\nvllm:num_preemptions_created 1.7e9\n";
        let bare = "# TYPE vllm:num_preemptions counter\nvllm:num_preemptions 6\n";
        assert_eq!(
            delta(vllm, om, "vllm:num_preemptions_total")
                .unwrap()
                .to_string(),
            "2"
        );
        assert_eq!(
            p(om).family_of("vllm:num_preemptions_total").unwrap().name,
            "vllm:num_preemptions"
        );
        assert_eq!(
            p(om)
                .family_of("vllm:num_preemptions_created")
                .unwrap()
                .kind,
            MetricType::Counter
        );
        assert_eq!(
            delta(bare, bare, "vllm:num_preemptions")
                .unwrap()
                .to_string(),
            "0"
        );
        assert!(p(vllm).family_of("vllm:num_preemptions").is_none());
    }

    #[test]
    fn a_fraction_of_a_token_is_refused_as_precision_loss() {
        let scrape = |v: &str| format!("# TYPE t counter\nt_total {v}\n");
        let refused = delta(&scrape("1000.0"), &scrape("1512.0005"), "t_total").unwrap();
        assert_eq!(
            whole_tokens(refused),
            Err(PrecisionLoss::Fraction(dec("512.0005")))
        );
        assert_eq!(
            whole_tokens(refused).unwrap_err().to_string(),
            "512.0005 tokens is not a whole number"
        );
        assert_eq!(
            whole_tokens(dec("1512.0005")).unwrap_err().to_string(),
            "1512.0005 tokens is not a whole number"
        );
        let accepted = delta(&scrape("1000.0"), &scrape("1512.0"), "t_total").unwrap();
        assert_eq!(whole_tokens(accepted), Ok(512));
        assert_eq!(
            whole_tokens(dec("-1")),
            Err(PrecisionLoss::Negative(dec("-1")))
        );
        assert!(matches!(
            whole_tokens(dec("1e20")),
            Err(PrecisionLoss::TooLarge(_))
        ));
    }

    const HISTOGRAM: &str = "\
# TYPE h histogram
h_bucket{le=\"0.5\",m=\"a\"} 1
h_bucket{le=\"+Inf\",m=\"a\"} 2
h_count{m=\"a\"} 2
h_sum{m=\"a\"} 1.25
h_bucket{le=\"0.5\",m=\"b\"} 0
h_bucket{le=\"+Inf\",m=\"b\"} 1
h_count{m=\"b\"} 1
h_sum{m=\"b\"} 3
# TYPE c counter
c_total 4
";

    #[test]
    fn histogram_deltas_only_for_histogram_families() {
        let e = p(HISTOGRAM);
        assert_eq!(
            histogram_delta(&e, &e, "c").unwrap_err().to_string(),
            "family \"c\" is a counter in the before scrape, not a histogram"
        );
        let after = HISTOGRAM
            .replace(
                "h_bucket{le=\"+Inf\",m=\"a\"} 2",
                "h_bucket{le=\"+Inf\",m=\"a\"} 5",
            )
            .replace("h_count{m=\"a\"} 2", "h_count{m=\"a\"} 5")
            .replace("h_sum{m=\"a\"} 1.25", "h_sum{m=\"a\"} 10.5")
            .replace("le=\"0.5\",m=\"b\"} 0", "le=\"0.50\",m=\"b\"} 1");
        let d = histogram_delta(&e, &p(&after), "h").unwrap();
        let shown: Vec<String> = d
            .buckets
            .iter()
            .map(|(le, n)| format!("{le}:{n}"))
            .collect();
        assert_eq!(shown, ["0.5:1", "+Inf:3"]);
        assert_eq!(
            (d.count.to_string(), d.sum.to_string()),
            ("3".into(), "9.25".into())
        );

        let reset = HISTOGRAM.replace("h_count{m=\"b\"} 1", "h_count{m=\"b\"} 0");
        assert!(matches!(
            histogram_delta(&e, &p(&reset), "h"),
            Err(DeltaError::Decreased { .. })
        ));
        let moved = HISTOGRAM.replace("le=\"0.5\",m=\"b\"", "le=\"0.6\",m=\"b\"");
        assert!(matches!(
            histogram_delta(&e, &p(&moved), "h"),
            Err(DeltaError::Layout { .. })
        ));
        assert!(matches!(
            histogram_delta(&p(&moved), &p(&moved), "h"),
            Err(DeltaError::Layout { .. })
        ));
        assert!(matches!(
            histogram_delta(&e, &e, "nope"),
            Err(DeltaError::Absent { .. })
        ));
    }
}
