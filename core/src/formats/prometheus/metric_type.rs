//! The five metric types and the suffix rules that place a sample name in its family.
//!
//! The rules of the module docs' **Families** paragraph in one place: which suffixes each
//! `# TYPE` owns, and [`resolve`], which the reader uses to place every sample and
//! `Exposition::family_of` uses to answer a query, so that both place a name the same way.

use std::fmt;

/// The five `# TYPE` words of the classical text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricType {
    /// A monotonic count; only its deltas between scrapes of one process mean anything.
    Counter,
    /// A value that may go up and down; read as is.
    Gauge,
    /// Cumulative `le` buckets plus `_count` and `_sum`.
    Histogram,
    /// Quantiles plus `_count` and `_sum`.
    Summary,
    /// No `# TYPE` line, or `# TYPE x untyped`: nothing may be assumed about the value.
    Untyped,
}

impl MetricType {
    /// The word a `# TYPE` line uses.
    pub fn word(&self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Histogram => "histogram",
            MetricType::Summary => "summary",
            MetricType::Untyped => "untyped",
        }
    }

    pub(super) fn from_word(word: &[u8]) -> Option<MetricType> {
        Some(match word {
            b"counter" => MetricType::Counter,
            b"gauge" => MetricType::Gauge,
            b"histogram" => MetricType::Histogram,
            b"summary" => MetricType::Summary,
            b"untyped" => MetricType::Untyped,
            _ => return None,
        })
    }

    /// Whether a sample named family name + `suffix` (`None`: the bare name) belongs here.
    fn owns(self, suffix: Option<Suffix>) -> bool {
        use Suffix::*;
        match (self, suffix) {
            (MetricType::Histogram, None) => false,
            (_, None) => true,
            (MetricType::Counter, Some(Total | Created)) => true,
            (MetricType::Histogram, Some(Bucket | Count | Sum | Created)) => true,
            (MetricType::Summary, Some(Count | Sum | Created)) => true,
            _ => false,
        }
    }
}

impl fmt::Display for MetricType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// The suffixes a family's samples may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Suffix {
    Bucket,
    Count,
    Sum,
    Created,
    Total,
}

const SUFFIXES: [(&str, Suffix); 5] = [
    ("_bucket", Suffix::Bucket),
    ("_count", Suffix::Count),
    ("_sum", Suffix::Sum),
    ("_created", Suffix::Created),
    ("_total", Suffix::Total),
];

pub(super) enum Resolution {
    Family(usize),
    Conflict { family: usize },
    Undeclared,
}

/// Which family a sample name belongs to, given a lookup of families by exact name: its own
/// name when declared with a type that has bare samples; else the name without a suffix when
/// that family's type has such a suffix; else a conflict when a typed family claims the name
/// but not this suffix; else its own (new, untyped) family.
pub(super) fn resolve(
    name: &str,
    lookup: impl Fn(&str) -> Option<(usize, MetricType)>,
) -> Resolution {
    let exact = lookup(name);
    if let Some((i, kind)) = exact
        && kind.owns(None)
    {
        return Resolution::Family(i);
    }
    let stripped = SUFFIXES.iter().find_map(|(text, suffix)| {
        name.strip_suffix(text)
            .filter(|base| !base.is_empty())
            .map(|base| (base, *suffix))
    });
    if let Some((base, suffix)) = stripped
        && let Some((i, kind)) = lookup(base)
    {
        if kind.owns(Some(suffix)) {
            return Resolution::Family(i);
        }
        if exact.is_none() && kind != MetricType::Untyped {
            return Resolution::Conflict { family: i };
        }
    }
    match exact {
        Some((i, _)) => Resolution::Conflict { family: i },
        None => Resolution::Undeclared,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{DeltaError, histogram_delta};
    use super::*;

    #[test]
    fn summary_and_histogram_both_have_sum_and_count() {
        let e = p(concat!(
            "# TYPE s summary\n",
            "s{quantile=\"0.5\"} 0.2\n",
            "s_sum 10\n",
            "s_count 4\n",
            "s_created 1.7e9\n",
            "# TYPE h histogram\n",
            "h_bucket{le=\"+Inf\"} 4\n",
            "h_sum 11\n",
            "h_count 4\n",
        ));
        for (sample, family) in [
            ("s", "s"),
            ("s_sum", "s"),
            ("s_count", "s"),
            ("s_created", "s"),
            ("h_bucket", "h"),
            ("h_sum", "h"),
            ("h_count", "h"),
        ] {
            assert_eq!(
                e.family_of(sample).map(|f| f.name.as_str()),
                Some(family),
                "{sample}"
            );
        }
        assert_eq!(e.total("s_sum").unwrap(), Some(dec("10")));
        assert_eq!(e.total("h_count").unwrap(), Some(dec("4")));
        assert_eq!(e.total("h_missing").unwrap(), None);
        assert!(matches!(
            histogram_delta(&e, &e, "s"),
            Err(DeltaError::NotHistogram {
                kind: MetricType::Summary,
                ..
            })
        ));
    }

    #[test]
    fn a_suffix_under_the_wrong_type_is_a_conflict_naming_both() {
        assert_eq!(
            err("# TYPE x counter\nx_bucket{le=\"1\"} 1\n"),
            "line 2: sample \"x_bucket\" conflicts with counter family \"x\" (line 1): a counter has no such series"
        );
        assert_eq!(
            err("# TYPE h histogram\nh 1\n"),
            "line 2: sample \"h\" conflicts with histogram family \"h\" (line 1): a histogram has no such series"
        );
        assert!(err("# TYPE g gauge\ng_total 1\n").contains("gauge family \"g\""));
        // A name declared in its own right wins over a suffix.
        let e = p("# TYPE g gauge\ng 1\n# TYPE g_total counter\ng_total 2\n");
        assert_eq!(e.family_of("g_total").unwrap().kind, MetricType::Counter);
    }
}
