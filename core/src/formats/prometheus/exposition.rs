//! A read scrape: [`Sample`], [`Family`], [`Exposition`], and the queries on it.
//!
//! The reader builds these; the audit then looks families up by name or by sample name, sums
//! series, reads the process start time, or renders the scrape back to canonical text.

use std::fmt::Write as _;

use super::error::ReadError;
use super::metric_type::{MetricType, Resolution, resolve};
use super::value::SampleValue;
use crate::decimal::Decimal;

/// One sample line: one value of one series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// The metric name as written (`vllm:request_prompt_tokens_bucket`).
    pub name: String,
    /// Label pairs, unescaped and sorted by name, so that two spellings of one label set
    /// (`{a="1",b="2"}`, `{b="2",a="1"}`) are one series.
    pub labels: Vec<(String, String)>,
    /// The value, exact.
    pub value: SampleValue,
    /// The optional trailing timestamp, in milliseconds since the Unix epoch.
    pub timestamp_ms: Option<i64>,
    /// Line of the sample, from 1, for messages that send a reader to the bytes.
    pub line: usize,
}

impl Sample {
    /// The value of label `name`, if the sample has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .binary_search_by(|(k, _)| k.as_str().cmp(name))
            .ok()
            .and_then(|i| self.labels.get(i))
            .map(|(_, v)| v.as_str())
    }

    /// `name{label="value",…}` as the format writes it: how messages name a series.
    pub fn series(&self) -> String {
        series_name(&self.name, &self.labels)
    }
}

/// One metric family: a `# TYPE`/`# HELP` declaration and the samples it owns, or an
/// undeclared sample name (then untyped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// The declared name (`vllm:request_prompt_tokens`, `vllm:generation_tokens_total`).
    pub name: String,
    /// The declared type; [`MetricType::Untyped`] without a `# TYPE` line.
    pub kind: MetricType,
    /// The `# HELP` text, unescaped.
    pub help: Option<String>,
    /// Samples in the order of the text.
    pub samples: Vec<Sample>,
    /// Line of the family's first `# HELP` or `# TYPE` line, or of its first sample when it is
    /// undeclared; families are listed in this order.
    pub line: usize,
}

/// A parsed scrape: its families in order of appearance, indexed by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposition {
    pub(super) families: Vec<Family>,
    /// Indices into `families`, sorted by family name.
    pub(super) by_name: Vec<usize>,
}

impl Exposition {
    /// Every family, in order of appearance.
    pub fn families(&self) -> &[Family] {
        &self.families
    }

    /// The family declared (or, when undeclared, sampled) under exactly this name.
    pub fn family(&self, family_name: &str) -> Option<&Family> {
        self.family_index(family_name)
            .and_then(|i| self.families.get(i))
    }

    fn family_index(&self, family_name: &str) -> Option<usize> {
        let pos = self
            .by_name
            .binary_search_by(|&i| family_name_of(&self.families, i).cmp(family_name))
            .ok()?;
        self.by_name.get(pos).copied()
    }

    /// The family a sample of this name belongs to, by the same rules [`parse`] applied
    /// (`vllm:generation_tokens_total` → the counter family, whichever way it was declared;
    /// `vllm:request_prompt_tokens_bucket` → the histogram). `None` when the scrape neither
    /// declares such a family nor has such a sample.
    ///
    /// [`parse`]: super::parse
    pub fn family_of(&self, sample_name: &str) -> Option<&Family> {
        let lookup = |name: &str| {
            let idx = self.family_index(name)?;
            Some((idx, self.families.get(idx)?.kind))
        };
        match resolve(sample_name, lookup) {
            Resolution::Family(i) => self.families.get(i),
            Resolution::Conflict { .. } | Resolution::Undeclared => None,
        }
    }

    /// Every sample with exactly this name (every series of it), in text order.
    pub fn samples<'e>(&'e self, sample_name: &'e str) -> impl Iterator<Item = &'e Sample> + 'e {
        self.family_of(sample_name)
            .into_iter()
            .flat_map(|f| f.samples.iter())
            .filter(move |s| s.name == sample_name)
    }

    /// The exact sum over every series (label set) with this sample name: a token counter
    /// split by label (`source`, `engine`) summed back. `Ok(None)` when no such sample is in
    /// the scrape; an error when a value is not finite or the sum overflows.
    pub fn total(&self, sample_name: &str) -> Result<Option<Decimal>, ReadError> {
        let mut total: Option<Decimal> = None;
        for s in self.samples(sample_name) {
            let value = s.value.finite().ok_or_else(|| ReadError::NonFinite {
                series: s.series(),
                value: s.value,
            })?;
            total = Some(
                total
                    .unwrap_or(Decimal::ZERO)
                    .checked_add(value)
                    .ok_or_else(|| ReadError::Overflow {
                        name: sample_name.to_owned(),
                    })?,
            );
        }
        Ok(total)
    }

    /// The value of `process_start_time_seconds` when present: what tells one server
    /// incarnation from the next. Several series must agree (as values: `1.5e9` = `1500000000`).
    pub fn process_start_time(&self) -> Result<Option<Decimal>, ReadError> {
        const NAME: &str = "process_start_time_seconds";
        let mut first: Option<(&Sample, Decimal)> = None;
        for s in self.samples(NAME) {
            let value = s.value.finite().ok_or_else(|| ReadError::NonFinite {
                series: s.series(),
                value: s.value,
            })?;
            match first {
                None => first = Some((s, value)),
                Some((f, v)) if !v.value_eq(value) => {
                    return Err(ReadError::Conflicting {
                        first: f.series(),
                        first_value: v,
                        second: s.series(),
                        second_value: value,
                    });
                }
                Some(_) => {}
            }
        }
        Ok(first.map(|(_, v)| v))
    }

    /// The scrape in canonical text: every family with its `# HELP` (when it has one) and a
    /// `# TYPE` line (`untyped` included), samples with sorted labels and exact canonical
    /// values (`2283.0` → `2283`). [`parse`] reads it back to the same families and values;
    /// a second render is byte-identical to the first.
    ///
    /// [`parse`]: super::parse
    pub fn render(&self) -> String {
        let mut out = String::new();
        for family in &self.families {
            if let Some(help) = &family.help {
                let _ = write!(out, "# HELP {} ", family.name);
                for c in help.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        c => out.push(c),
                    }
                }
                out.push('\n');
            }
            let _ = writeln!(out, "# TYPE {} {}", family.name, family.kind);
            for s in &family.samples {
                out.push_str(&s.series());
                let _ = write!(out, " {}", s.value);
                if let Some(ts) = s.timestamp_ms {
                    let _ = write!(out, " {ts}");
                }
                out.push('\n');
            }
        }
        out
    }
}

/// `name{k="v",…}`, escaped as the format escapes label values.
pub(super) fn series_name(name: &str, labels: &[(String, String)]) -> String {
    let mut out = String::with_capacity(name.len() + 16 * labels.len());
    out.push_str(name);
    if labels.is_empty() {
        return out;
    }
    out.push('{');
    for (i, (k, v)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push_str("=\"");
        for c in v.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out.push('}');
    out
}

pub(super) fn family_name_of(families: &[Family], idx: usize) -> &str {
    families.get(idx).map_or("", |f| f.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;

    #[test]
    fn process_start_times_must_agree() {
        let one = p(
            "process_start_time_seconds{pid=\"1\"} 1.5e9\nprocess_start_time_seconds{pid=\"2\"} 1500000000\n",
        );
        assert_eq!(one.process_start_time().unwrap(), Some(dec("1.5e9")));
        let two = p(
            "process_start_time_seconds{pid=\"1\"} 1.5e9\nprocess_start_time_seconds{pid=\"2\"} 1.6e9\n",
        );
        assert_eq!(
            two.process_start_time().unwrap_err().to_string(),
            "process_start_time_seconds{pid=\"1\"} is 1500000000 but process_start_time_seconds{pid=\"2\"} is 1600000000"
        );
        assert_eq!(p("x 1\n").process_start_time().unwrap(), None);
    }

    #[test]
    fn totals_sum_every_series_exactly() {
        let e = p(
            "# TYPE t counter\nt_total{s=\"a\"} 0.1\nt_total{s=\"b\"} 0.2\nt_created{s=\"a\"} 1\n",
        );
        assert_eq!(e.total("t_total").unwrap().unwrap().to_string(), "0.3");
        assert_eq!(e.samples("t_total").count(), 2);
        assert_eq!(e.total("t_created").unwrap(), Some(dec("1")));
    }
}
