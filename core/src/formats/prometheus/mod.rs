//! Prometheus text exposition (the classical format `/metrics` serves), read exactly.
//!
//! A receipt keeps the raw bytes of every `/metrics` scrape; the audit recomputes the engine's
//! token counts from them, so this reader is strict where a number is at stake and keeps
//! every value as the exact decimal that was written ([`Decimal`]), never an `f64`:
//! `338.0 − 0.0` is exactly 338 tokens, and `1512.0005` tokens is refused rather than rounded.
//!
//! **Families.** Samples are mapped to families by the `# TYPE` lines wherever they appear in
//! the text (order does not matter), with the suffix rules of the format: a histogram `h` owns
//! `h_bucket` (with an `le` label), `h_count`, `h_sum` and `h_created`; a summary `s` owns `s`
//! (quantiles), `s_count`, `s_sum`, `s_created`; a counter `c` owns `c`, `c_total` and
//! `c_created`; a gauge or untyped family owns only its own name. A sample whose exact name is
//! declared belongs to that family first, which is how both spellings of a counter work:
//! `prometheus_client` (and so vLLM) declares `# TYPE vllm:prompt_tokens_total counter` with a
//! separate `# TYPE vllm:prompt_tokens_created gauge` family, while OpenMetrics-style writers
//! declare `# TYPE vllm:prompt_tokens counter` and emit `vllm:prompt_tokens_total`. A sample
//! that nothing declares is its own untyped family. A sample whose suffix points at a declared
//! family of a type without that suffix (`x_bucket` under `# TYPE x counter`) is an error, not
//! a silent reassignment.
//!
//! **Refusals.** Structural problems are errors naming the 1-based line: a malformed line, a
//! value that is not a number, a repeated series (same name and label set), a repeated HELP or
//! TYPE, an unknown type word, a bucket without a numeric `le`. `NaN`, `+Inf` and `-Inf` are
//! values, kept as such ([`SampleValue`]); a finite value beyond a 64-bit float's range (which
//! no Prometheus writer can produce) is refused. Deltas refuse counter resets, vanished series,
//! non-finite values and the wrong family type, naming the series and both values.
//!
//! **Many scrapes.** A receipt can hold thousands of scrapes taken during a run. [`parse`]
//! builds every sample (a `String` per name and label); [`scan`] reads and checks every line
//! the same way but builds only the families of the sample names asked for.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};

use crate::decimal::{Decimal, NumberError};

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

    fn from_word(word: &[u8]) -> Option<MetricType> {
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

/// A sample's value. Prometheus values are floats, so `NaN` and the infinities are legal
/// (a `+Inf` bucket bound, a gauge with nothing to report); everything finite is kept as the
/// exact decimal that was written. The derived `==` compares spellings (`1.0` ≠ `1`) and
/// calls `NaN` equal to `NaN`; compare values with [`SampleValue::cmp_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleValue {
    /// A finite number, exact.
    Finite(Decimal),
    /// `+Inf`.
    PosInf,
    /// `-Inf`.
    NegInf,
    /// `NaN`.
    NaN,
}

impl SampleValue {
    /// The finite value, if it is one.
    pub fn finite(self) -> Option<Decimal> {
        match self {
            SampleValue::Finite(d) => Some(d),
            _ => None,
        }
    }

    /// Orders values as numbers (`-Inf` < finite < `+Inf`, `1.0` = `1`); `None` when either
    /// is `NaN`, which has no place in an order.
    pub fn cmp_value(self, other: SampleValue) -> Option<Ordering> {
        use SampleValue::*;
        let rank = |v: SampleValue| match v {
            NegInf => Some(0u8),
            Finite(_) => Some(1),
            PosInf => Some(2),
            NaN => None,
        };
        match (self, other) {
            (Finite(a), Finite(b)) => Some(a.cmp_value(b)),
            _ => Some(rank(self)?.cmp(&rank(other)?)),
        }
    }

    /// Reads a value token: a decimal, or `NaN`/`Inf`/`+Inf`/`-Inf`/`Infinity` in any case,
    /// as Go's `ParseFloat` (Prometheus's own reader) accepts them.
    fn parse(token: &[u8]) -> Result<SampleValue, NumberError> {
        match Decimal::parse(token) {
            Ok(d) => Ok(SampleValue::Finite(d)),
            Err(NumberError::NonFinite) => {
                let (negative, body) = match token.split_first() {
                    Some((b'-', rest)) => (true, rest),
                    Some((b'+', rest)) => (false, rest),
                    _ => (false, token),
                };
                Ok(if body.eq_ignore_ascii_case(b"nan") {
                    SampleValue::NaN
                } else if negative {
                    SampleValue::NegInf
                } else {
                    SampleValue::PosInf
                })
            }
            Err(e) => Err(e),
        }
    }
}

/// Written the way the format writes them: `NaN`, `+Inf`, `-Inf`, or the exact decimal.
impl fmt::Display for SampleValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleValue::Finite(d) => d.fmt(f),
            SampleValue::PosInf => f.write_str("+Inf"),
            SampleValue::NegInf => f.write_str("-Inf"),
            SampleValue::NaN => f.write_str("NaN"),
        }
    }
}

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
    families: Vec<Family>,
    /// Indices into `families`, sorted by family name.
    by_name: Vec<usize>,
}

/// Reads a whole scrape body. See the module docs for the rules. Declarations are read
/// first and samples second, so the error is the first faulty `# HELP`/`# TYPE` line, else
/// the first faulty sample line, else the first repeated series.
pub fn parse(bytes: &[u8]) -> Result<Exposition, ExpositionError> {
    read(bytes, None)
}

/// [`parse`] for an audit that reads a few values from many scrapes: the result holds only
/// the families that own one of `sample_names` (complete: every series, HELP, TYPE), so
/// [`counter_delta`], [`Exposition::total`] and [`Exposition::process_start_time`] give the
/// same answers for those names as on a full parse, and any other name is absent. Every line
/// is still checked as [`parse`] checks it, except for the three checks that need a sample's
/// labels kept (a repeated label, a repeated series, a histogram bucket's `le`), which run on
/// the kept families only. Only kept samples allocate, and allocation is most of a full
/// parse's cost (about 3× on vLLM's scrape).
pub fn scan(bytes: &[u8], sample_names: &[&str]) -> Result<Exposition, ExpositionError> {
    read(bytes, Some(sample_names))
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

/// Which of the two scrapes of a delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scrape {
    /// The earlier scrape.
    Before,
    /// The later scrape.
    After,
}

impl fmt::Display for Scrape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scrape::Before => "before",
            Scrape::After => "after",
        })
    }
}

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

/// Why a value is not a whole token count. Messages read after "refused: ".
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrecisionLoss {
    /// `1512.0005`: rounding it would invent or drop part of a token.
    #[error("{0} tokens is not a whole number")]
    Fraction(Decimal),
    /// Below zero.
    #[error("{0} tokens is negative")]
    Negative(Decimal),
    /// Whole, but beyond `u64`.
    #[error("{0} tokens does not fit in 64 bits")]
    TooLarge(Decimal),
}

/// A scrape that cannot be read, at a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct ExpositionError {
    line: usize,
    kind: Box<ExpositionErrorKind>,
}

impl ExpositionError {
    fn new(line: usize, kind: ExpositionErrorKind) -> ExpositionError {
        ExpositionError {
            line,
            kind: Box::new(kind),
        }
    }

    /// The line at fault, from 1.
    pub fn line(&self) -> usize {
        self.line
    }

    /// What is wrong.
    pub fn kind(&self) -> &ExpositionErrorKind {
        &self.kind
    }
}

/// What is wrong with a scrape's line. Quoted text from the input is cut at 40 characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExpositionErrorKind {
    /// A metric name was expected (at the start of a sample, or after HELP/TYPE).
    #[error("expected a metric name, found {found:?}")]
    MetricName {
        /// The text found instead.
        found: String,
    },
    /// Label syntax: a missing `=`, quote, comma or brace, or a bad escape.
    #[error("sample {sample:?}: {detail}")]
    Labels {
        /// The sample's metric name.
        sample: String,
        /// What was expected.
        detail: String,
    },
    /// The same label name twice in one sample.
    #[error("sample {sample:?}: label {label:?} appears twice")]
    DuplicateLabel {
        /// The sample's metric name.
        sample: String,
        /// The repeated label name.
        label: String,
    },
    /// Bytes that are not UTF-8 (the format is UTF-8 throughout).
    #[error("not UTF-8")]
    NotUtf8,
    /// Nothing after the name and labels.
    #[error("sample {sample:?} has no value")]
    MissingValue {
        /// The sample's metric name.
        sample: String,
    },
    /// A value that is not a number, `NaN` or an infinity.
    #[error("sample {sample:?}: value {value:?} is not a number")]
    BadValue {
        /// The sample's metric name.
        sample: String,
        /// The value as written.
        value: String,
    },
    /// A finite value that cannot be kept exactly (over 36 significant digits) or lies beyond
    /// a 64-bit float's range, so no Prometheus writer produced it.
    #[error("sample {sample:?}: value {value:?} {why}")]
    ValueOutOfRange {
        /// The sample's metric name.
        sample: String,
        /// The value as written.
        value: String,
        /// Which limit.
        why: &'static str,
    },
    /// A timestamp that is not an integer number of milliseconds.
    #[error("sample {sample:?}: timestamp {timestamp:?} is not an integer number of milliseconds")]
    BadTimestamp {
        /// The sample's metric name.
        sample: String,
        /// The timestamp as written.
        timestamp: String,
    },
    /// Text after the timestamp.
    #[error("sample {sample:?}: unexpected {text:?} after the value and timestamp")]
    TrailingText {
        /// The sample's metric name.
        sample: String,
        /// The extra text.
        text: String,
    },
    /// The same series (name and label set) twice.
    #[error("series {series} appears twice (first on line {first_line})")]
    DuplicateSeries {
        /// The series, `name{labels}`.
        series: String,
        /// The first occurrence.
        first_line: usize,
    },
    /// A second `# HELP` or `# TYPE` line for one family.
    #[error("a second {what} line for {family:?} (first on line {first_line})")]
    DuplicateDeclaration {
        /// The family name.
        family: String,
        /// `HELP` or `TYPE`.
        what: &'static str,
        /// The first one.
        first_line: usize,
    },
    /// A `# TYPE` word other than the five.
    #[error(
        "TYPE {word:?} of {family:?} is not one of counter, gauge, histogram, summary, untyped"
    )]
    UnknownType {
        /// The family name.
        family: String,
        /// The word found (empty when missing).
        word: String,
    },
    /// A sample whose name points at a declared family of a type that has no such series
    /// (`x_bucket` under a counter `x`, or a bare `h` under a histogram `h`).
    #[error(
        "sample {sample:?} conflicts with {kind} family {family:?} (line {family_line}): a {kind} has no such series"
    )]
    TypeConflict {
        /// The sample's metric name.
        sample: String,
        /// The family it points at.
        family: String,
        /// That family's declared type.
        kind: MetricType,
        /// Where the family is declared.
        family_line: usize,
    },
    /// A histogram `_bucket` sample without a numeric `le` label.
    #[error("histogram bucket {sample:?}: {detail}")]
    BadBucket {
        /// The sample's metric name.
        sample: String,
        /// What is wrong with `le`.
        detail: String,
    },
}

/// Why a value cannot be read out of one scrape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// `NaN` or an infinity where a number is needed.
    #[error("{series} is {value}, not a finite number")]
    NonFinite {
        /// The series.
        series: String,
        /// Its value.
        value: SampleValue,
    },
    /// The exact sum no longer fits.
    #[error("the sum of {name:?} overflows exact arithmetic")]
    Overflow {
        /// The sample name.
        name: String,
    },
    /// Two series of a value that must be single disagree.
    #[error("{first} is {first_value} but {second} is {second_value}")]
    Conflicting {
        /// The first series.
        first: String,
        /// Its value.
        first_value: Decimal,
        /// The disagreeing series.
        second: String,
        /// Its value.
        second_value: Decimal,
    },
}

/// Why a delta between two scrapes is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeltaError {
    /// The scrape has neither such a sample nor a family declaring it.
    #[error("{name:?} is absent from the {scrape} scrape")]
    Absent {
        /// The sample or family name asked for.
        name: String,
        /// Which scrape.
        scrape: Scrape,
    },
    /// The sample's family is not a counter in one of the scrapes.
    #[error("{name:?} belongs to {kind} family {family:?} in the {scrape} scrape, not a counter")]
    NotCounter {
        /// The sample name.
        name: String,
        /// Its family.
        family: String,
        /// The family's type.
        kind: MetricType,
        /// Which scrape.
        scrape: Scrape,
    },
    /// A counter family's sample that is not its value (`x_created`).
    #[error("{name:?} is not the value of counter {family:?} (that is {family}_total or {family})")]
    NotCounterValue {
        /// The sample name.
        name: String,
        /// The counter family.
        family: String,
    },
    /// The family is not a histogram in one of the scrapes.
    #[error("family {family:?} is a {kind} in the {scrape} scrape, not a histogram")]
    NotHistogram {
        /// The family name.
        family: String,
        /// Its type.
        kind: MetricType,
        /// Which scrape.
        scrape: Scrape,
    },
    /// A series went down: the counter was reset.
    #[error("{series} went from {before} to {after}: a counter reset (did the server restart?)")]
    Decreased {
        /// The series.
        series: String,
        /// Its value before.
        before: SampleValue,
        /// Its value after.
        after: SampleValue,
    },
    /// A series present before is gone after: the counter was reset.
    #[error(
        "{series} ({before} before) is missing from the after scrape: a counter reset (did the server restart?)"
    )]
    Vanished {
        /// The series.
        series: String,
        /// Its value before.
        before: SampleValue,
    },
    /// A count that is not a finite number ≥ 0.
    #[error("{series} is {value} in the {scrape} scrape: a count must be a finite number ≥ 0")]
    Invalid {
        /// The series.
        series: String,
        /// Its value.
        value: SampleValue,
        /// Which scrape.
        scrape: Scrape,
    },
    /// The exact sum no longer fits.
    #[error("the delta of {name:?} overflows exact arithmetic")]
    Overflow {
        /// The sample or family name.
        name: String,
    },
    /// A histogram whose series cannot be compared or summed.
    #[error("histogram {series}: {detail}")]
    Layout {
        /// The series.
        series: String,
        /// What is wrong.
        detail: String,
    },
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

/// `name{k="v",…}`, escaped as the format escapes label values.
fn series_name(name: &str, labels: &[(String, String)]) -> String {
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

// ---------------------------------------------------------------------------------------------
// Parsing: lines.

/// Lines split on `\n`, with their 0-based index; a last line without `\n` counts.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text;
    let mut idx = 0usize;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
            // `\n` is ASCII, so both cuts fall on character boundaries.
            Some(pos) => (
                rest.get(..pos).unwrap_or_default(),
                rest.get(pos + 1..).unwrap_or_default(),
            ),
            None => (rest, ""),
        };
        rest = next;
        idx += 1;
        Some((idx - 1, line))
    })
}

/// Byte classes, looked up in [`CLASS`]: the name scans are the parser's hottest loop.
const BLANK: u8 = 1;
const NAME_START: u8 = 2;
const NAME_CHAR: u8 = 4;
const LABEL_START: u8 = 8;
const LABEL_CHAR: u8 = 16;

#[allow(clippy::indexing_slicing)] // evaluated at compile time: an out-of-bounds index fails the build
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0usize;
    while b < 256 {
        let c = b as u8;
        let alpha = c.is_ascii_alphabetic() || c == b'_';
        let digit = c.is_ascii_digit();
        let mut class = 0;
        if c == b' ' || c == b'\t' {
            class |= BLANK;
        }
        if alpha || c == b':' {
            class |= NAME_START | NAME_CHAR;
        }
        if digit {
            class |= NAME_CHAR | LABEL_CHAR;
        }
        if alpha {
            class |= LABEL_START | LABEL_CHAR;
        }
        table[b] = class;
        b += 1;
    }
    table
};

fn class(b: u8) -> u8 {
    CLASS.get(usize::from(b)).copied().unwrap_or(0)
}

fn is_blank(b: u8) -> bool {
    class(b) & BLANK != 0
}

/// A position in one line. The input was checked to be UTF-8 once; every cut made here falls
/// after an ASCII byte or at the end, so slicing the `str` never fails in practice (and would
/// yield `""`, not a panic, if it did).
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Cursor<'a> {
        Cursor { text, pos: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or_default()
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.pos += 1;
        }
    }

    /// Consumes `b` when it is next.
    fn eat(&mut self, b: u8) -> bool {
        let next = self.peek() == Some(b);
        if next {
            self.pos += 1;
        }
        next
    }

    /// The run of bytes of class `more`, if the first is of class `first` (else `""`).
    fn take(&mut self, first: u8, more: u8) -> &'a str {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        if bytes.get(start).is_some_and(|&b| class(b) & first != 0) {
            let run = bytes
                .get(start + 1..)
                .unwrap_or_default()
                .iter()
                .take_while(|&&b| class(b) & more != 0)
                .count();
            self.pos = start + 1 + run;
        }
        self.slice(start, self.pos)
    }

    /// Up to the next blank or the end.
    fn token(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|b| !is_blank(b)) {
            self.pos += 1;
        }
        self.slice(start, self.pos)
    }
}

/// Input text for a message: at most 40 characters.
fn snippet(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars.by_ref().take(40).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Parsing: comments.

/// A `# HELP` or `# TYPE` line.
enum DeclLine<'a> {
    /// Name and text, still escaped: unescaped only for a family that is kept.
    Help(&'a str, &'a str),
    Type(&'a str, MetricType),
}

/// Reads a `#` line (the cursor just past the `#`): `Some` for HELP/TYPE, `None` for any other
/// comment.
fn parse_comment<'a>(
    mut c: Cursor<'a>,
    line: usize,
) -> Result<Option<DeclLine<'a>>, ExpositionError> {
    c.skip_blanks();
    let keyword = c.token();
    // As Go's reader: `# HELP` with nothing after the keyword is an ordinary comment.
    if !(keyword == "HELP" || keyword == "TYPE") || c.peek().is_none() {
        return Ok(None);
    }
    c.skip_blanks();
    let name = c.take(NAME_START, NAME_CHAR);
    if name.is_empty() || c.peek().is_some_and(|b| !is_blank(b)) {
        let start = c.pos - name.len();
        let found = Cursor::new(c.text.get(start..).unwrap_or_default()).token();
        return Err(ExpositionError::new(
            line,
            ExpositionErrorKind::MetricName {
                found: snippet(found),
            },
        ));
    }
    c.skip_blanks();
    let text = c.rest();
    if keyword == "HELP" {
        // A carriage return left at the end is line-ending noise (`\r\r\n`), not text.
        return Ok(Some(DeclLine::Help(name, text.trim_end_matches('\r'))));
    }
    let word = text.trim_ascii_end();
    match MetricType::from_word(word.as_bytes()) {
        Some(kind) => Ok(Some(DeclLine::Type(name, kind))),
        None => Err(ExpositionError::new(
            line,
            ExpositionErrorKind::UnknownType {
                family: name.to_owned(),
                word: snippet(word),
            },
        )),
    }
}

/// HELP text with `\\` and `\n` unescaped; other backslashes are kept as written (HELP is
/// prose, and refusing a scrape over its punctuation would help nobody).
fn unescape_help(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// A family as declared so far.
struct Decl<'a> {
    name: &'a str,
    kind: Option<(MetricType, usize)>,
    help: Option<(&'a str, usize)>,
    first_line: usize,
}

fn declare<'a>(
    decls: &mut Vec<Decl<'a>>,
    index: &mut HashMap<&'a str, usize>,
    decl: DeclLine<'a>,
    line: usize,
) -> Result<(), ExpositionError> {
    let name = match &decl {
        DeclLine::Help(name, _) | DeclLine::Type(name, _) => *name,
    };
    let idx = *index.entry(name).or_insert_with(|| {
        decls.push(Decl {
            name,
            kind: None,
            help: None,
            first_line: line,
        });
        decls.len() - 1
    });
    let Some(d) = decls.get_mut(idx) else {
        return Ok(());
    };
    let duplicate = |what: &'static str, first_line: usize| {
        ExpositionError::new(
            line,
            ExpositionErrorKind::DuplicateDeclaration {
                family: name.to_owned(),
                what,
                first_line,
            },
        )
    };
    match decl {
        DeclLine::Help(_, text) => match &d.help {
            Some((_, first)) => return Err(duplicate("HELP", *first)),
            None => d.help = Some((text, line)),
        },
        DeclLine::Type(_, kind) => match d.kind {
            Some((_, first)) => return Err(duplicate("TYPE", first)),
            None => d.kind = Some((kind, line)),
        },
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Parsing: samples.

/// Label pairs of one line, borrowed from the input (owned only when unescaped).
type Scratch<'a> = Vec<(&'a str, Cow<'a, str>)>;

/// The metric name at the start of a sample line.
fn sample_name<'a>(c: &mut Cursor<'a>, line: usize) -> Result<&'a str, ExpositionError> {
    let name = c.take(NAME_START, NAME_CHAR);
    if !name.is_empty() {
        return Ok(name);
    }
    let start = c.pos;
    let mut end = start;
    while c
        .text
        .as_bytes()
        .get(end)
        .is_some_and(|&b| !is_blank(b) && b != b'{')
    {
        end += 1;
    }
    let found = match c.text.get(start..end) {
        Some(token) if !token.is_empty() => token,
        _ => c.rest().get(..1).unwrap_or_default(),
    };
    Err(ExpositionError::new(
        line,
        ExpositionErrorKind::MetricName {
            found: snippet(found),
        },
    ))
}

/// The rest of a sample line after its name: labels into `labels` (sorted, checked for
/// repeats when `check_labels`), then value and optional timestamp.
fn sample_rest<'a>(
    c: &mut Cursor<'a>,
    name: &str,
    line: usize,
    labels: &mut Scratch<'a>,
    check_labels: bool,
) -> Result<(SampleValue, Option<i64>), ExpositionError> {
    let err = |kind| ExpositionError::new(line, kind);
    c.skip_blanks();
    if c.eat(b'{') {
        parse_labels(c, name, labels).map_err(err)?;
        c.skip_blanks();
        if check_labels {
            if !labels.is_sorted_by(|a, b| a.0 <= b.0) {
                labels.sort_by(|a, b| a.0.cmp(b.0));
            }
            if let Some([a, _]) = labels
                .windows(2)
                .find(|w| matches!(w, [a, b] if a.0 == b.0))
            {
                return Err(err(ExpositionErrorKind::DuplicateLabel {
                    sample: name.to_owned(),
                    label: a.0.to_owned(),
                }));
            }
        }
    }
    let value_token = c.token();
    if value_token.is_empty() {
        return Err(err(ExpositionErrorKind::MissingValue {
            sample: name.to_owned(),
        }));
    }
    let value = read_value(value_token, name).map_err(err)?;
    c.skip_blanks();
    let ts_token = c.token();
    let timestamp_ms = if ts_token.is_empty() {
        None
    } else {
        Some(parse_timestamp(ts_token.as_bytes()).ok_or_else(|| {
            err(ExpositionErrorKind::BadTimestamp {
                sample: name.to_owned(),
                timestamp: snippet(ts_token),
            })
        })?)
    };
    c.skip_blanks();
    if c.peek().is_some() {
        return Err(err(ExpositionErrorKind::TrailingText {
            sample: name.to_owned(),
            text: snippet(c.rest()),
        }));
    }
    Ok((value, timestamp_ms))
}

/// A value token of sample `name`.
fn read_value(token: &str, name: &str) -> Result<SampleValue, ExpositionErrorKind> {
    let out_of_range = |why| ExpositionErrorKind::ValueOutOfRange {
        sample: name.to_owned(),
        value: snippet(token),
        why,
    };
    match SampleValue::parse(token.as_bytes()) {
        Ok(SampleValue::Finite(d)) => finite_in_float_range(d)
            .map(|()| SampleValue::Finite(d))
            .map_err(out_of_range),
        Ok(v) => Ok(v),
        Err(NumberError::OutOfRange) => Err(out_of_range(
            "has more significant digits than can be kept exactly (36)",
        )),
        Err(_) => Err(ExpositionErrorKind::BadValue {
            sample: name.to_owned(),
            value: snippet(token),
        }),
    }
}

/// Prometheus stores every value as an `f64`, so a finite value beyond its range cannot have
/// come from a real writer (and would not read back through any other tool).
fn finite_in_float_range(d: Decimal) -> Result<(), &'static str> {
    match d.adjusted_exponent() {
        None => Ok(()),
        Some(e) if (-300..=300).contains(&e) => Ok(()),
        Some(_) => {
            let f = d.to_f64();
            if f.is_infinite() {
                Err("is beyond the range of a 64-bit float")
            } else if f == 0.0 {
                Err("is below the smallest 64-bit float")
            } else {
                Ok(())
            }
        }
    }
}

/// `-?[0-9]+` fitting an `i64`.
fn parse_timestamp(token: &[u8]) -> Option<i64> {
    let (negative, digits) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, token),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for &b in digits {
        let digit = i64::from(b - b'0');
        v = v
            .checked_mul(10)?
            .checked_add(if negative { -digit } else { digit })?;
    }
    Some(v)
}

/// Reads `name="value", …}` (the `{` already consumed) into `labels`, leaving the cursor after
/// the closing brace.
fn parse_labels<'a>(
    c: &mut Cursor<'a>,
    sample: &str,
    labels: &mut Scratch<'a>,
) -> Result<(), ExpositionErrorKind> {
    let syntax = |detail: String| ExpositionErrorKind::Labels {
        sample: sample.to_owned(),
        detail,
    };
    loop {
        c.skip_blanks();
        match c.peek() {
            Some(b'}') => {
                c.pos += 1;
                return Ok(());
            }
            None => return Err(syntax("the label set has no closing '}'".to_owned())),
            Some(_) => {}
        }
        let label = c.take(LABEL_START, LABEL_CHAR);
        if label.is_empty() {
            return Err(syntax(format!(
                "expected a label name, found {:?}",
                snippet(Cursor::new(c.rest()).token())
            )));
        }
        c.skip_blanks();
        if !c.eat(b'=') {
            return Err(syntax(format!("expected '=' after label {label:?}")));
        }
        c.skip_blanks();
        if !c.eat(b'"') {
            return Err(syntax(format!(
                "expected '\"' to open the value of label {label:?}"
            )));
        }
        let value = parse_label_value(c)
            .map_err(|detail| syntax(format!("the value of label {label:?} {detail}")))?;
        labels.push((label, value));
        c.skip_blanks();
        match c.peek() {
            Some(b',') => c.pos += 1,
            Some(b'}') => {}
            _ => {
                return Err(syntax(format!(
                    "expected ',' or '}}' after the value of label {label:?}"
                )));
            }
        }
    }
}

/// A quoted label value (opening quote consumed), unescaped: borrowed from the input unless
/// it had escapes. The cursor ends after the closing quote.
fn parse_label_value<'a>(c: &mut Cursor<'a>) -> Result<Cow<'a, str>, String> {
    let unterminated = || "has no closing '\"'".to_owned();
    let bytes = c.text.as_bytes();
    let mut out: Option<String> = None;
    loop {
        let from = c.pos;
        let tail = bytes.get(from..).unwrap_or_default();
        let at = from + memchr::memchr2(b'"', b'\\', tail).ok_or_else(unterminated)?;
        let plain = c.slice(from, at);
        if bytes.get(at) == Some(&b'"') {
            c.pos = at + 1;
            return Ok(match out {
                None => Cow::Borrowed(plain),
                Some(mut owned) => {
                    owned.push_str(plain);
                    Cow::Owned(owned)
                }
            });
        }
        let escaped = match bytes.get(at + 1) {
            Some(b'\\') => '\\',
            Some(b'"') => '"',
            Some(b'n') => '\n',
            Some(_) => {
                let shown = c.text.get(at + 1..).and_then(|t| t.chars().next());
                return Err(format!(
                    "has an invalid escape \\{} (only \\\\, \\\" and \\n exist)",
                    shown.unwrap_or('?')
                ));
            }
            None => return Err(unterminated()),
        };
        let owned = out.get_or_insert_with(String::new);
        owned.push_str(plain);
        owned.push(escaped);
        c.pos = at + 2;
    }
}

// ---------------------------------------------------------------------------------------------
// Families.

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

enum Resolution {
    Family(usize),
    Conflict { family: usize },
    Undeclared,
}

/// Which family a sample name belongs to, given a lookup of families by exact name: its own
/// name when declared with a type that has bare samples; else the name without a suffix when
/// that family's type has such a suffix; else a conflict when a typed family claims the name
/// but not this suffix; else its own (new, untyped) family.
fn resolve(name: &str, lookup: impl Fn(&str) -> Option<(usize, MetricType)>) -> Resolution {
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

/// [`parse`] (`wanted: None`) and [`scan`]: declarations in a first pass, so that each sample
/// is placed in its family (or skipped, unallocated) as it is read in the second.
fn read(bytes: &[u8], wanted: Option<&[&str]>) -> Result<Exposition, ExpositionError> {
    // The format is UTF-8. Checking it once up front lets every name and label value below
    // be a slice of the input, never re-validated.
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let good = bytes.get(..e.valid_up_to()).unwrap_or_default();
        let line = memchr::memchr_iter(b'\n', good).count() + 1;
        ExpositionError::new(line, ExpositionErrorKind::NotUtf8)
    })?;
    let content_lines = || {
        lines(text).filter_map(|(idx, raw)| {
            let mut c = Cursor::new(raw.strip_suffix('\r').unwrap_or(raw));
            c.skip_blanks();
            c.peek().map(|first| (idx + 1, first == b'#', c))
        })
    };

    let mut decls: Vec<Decl<'_>> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (line, is_comment, mut c) in content_lines() {
        if is_comment {
            c.pos += 1;
            if let Some(decl) = parse_comment(c, line)? {
                declare(&mut decls, &mut index, decl, line)?;
            }
        }
    }
    // Declarations alone decide where every sample name goes: an undeclared name becomes an
    // untyped family, which owns no suffix and so never changes another name's place.
    let declared_kind = |d: &Decl<'_>| d.kind.map_or(MetricType::Untyped, |(k, _)| k);
    let mut keep = vec![wanted.is_none(); decls.len()];
    for name in wanted.unwrap_or_default() {
        let lookup = |n: &str| {
            let i = *index.get(n)?;
            Some((i, declared_kind(decls.get(i)?)))
        };
        if let Resolution::Family(i) = resolve(name, lookup)
            && let Some(k) = keep.get_mut(i)
        {
            *k = true;
        }
    }
    // Every family's name, for lookups and messages; only kept families own Strings.
    let mut names: Vec<&str> = decls.iter().map(|d| d.name).collect();
    let mut families: Vec<Family> = decls
        .iter()
        .zip(&keep)
        .map(|(d, &kept)| Family {
            name: if kept {
                d.name.to_owned()
            } else {
                String::new()
            },
            kind: declared_kind(d),
            help: d.help.filter(|_| kept).map(|(h, _)| unescape_help(h)),
            samples: Vec::new(),
            line: d.first_line,
        })
        .collect();

    let mut labels: Scratch<'_> = Vec::new();
    let mut last: Option<(&str, Option<usize>)> = None;
    for (line, is_comment, mut c) in content_lines() {
        if is_comment {
            continue;
        }
        let name = sample_name(&mut c, line)?;
        let target = match last {
            Some((n, target)) if n == name => target,
            _ => {
                let lookup = |n: &str| {
                    let i = *index.get(n)?;
                    Some((i, families.get(i)?.kind))
                };
                let target = match resolve(name, lookup) {
                    Resolution::Family(i) => keep.get(i).copied().unwrap_or(false).then_some(i),
                    Resolution::Conflict { family } => {
                        let family_name = names.get(family).copied().unwrap_or_default();
                        let (kind, family_line) = families
                            .get(family)
                            .map_or((MetricType::Untyped, 0), |f| (f.kind, f.line));
                        return Err(ExpositionError::new(
                            line,
                            ExpositionErrorKind::TypeConflict {
                                sample: name.to_owned(),
                                family: family_name.to_owned(),
                                kind,
                                family_line,
                            },
                        ));
                    }
                    Resolution::Undeclared if wanted.is_none_or(|w| w.contains(&name)) => {
                        families.push(Family {
                            name: name.to_owned(),
                            kind: MetricType::Untyped,
                            help: None,
                            samples: Vec::new(),
                            line,
                        });
                        keep.push(true);
                        names.push(name);
                        index.insert(name, families.len() - 1);
                        Some(families.len() - 1)
                    }
                    Resolution::Undeclared => None,
                };
                last = Some((name, target));
                target
            }
        };
        labels.clear();
        let (value, timestamp_ms) = sample_rest(&mut c, name, line, &mut labels, target.is_some())?;
        let Some(family) = target.and_then(|i| families.get_mut(i)) else {
            continue;
        };
        if family.kind == MetricType::Histogram {
            check_bucket(&family.name, name, &labels, line)?;
        }
        family.samples.push(Sample {
            name: name.to_owned(),
            labels: labels
                .drain(..)
                .map(|(k, v)| (k.to_owned(), v.into_owned()))
                .collect(),
            value,
            timestamp_ms,
            line,
        });
    }
    let mut families: Vec<Family> = families
        .into_iter()
        .zip(keep)
        .filter_map(|(f, k)| k.then_some(f))
        .collect();
    check_duplicate_series(&families)?;
    families.sort_by_key(|f| f.line);
    let mut by_name: Vec<usize> = (0..families.len()).collect();
    by_name
        .sort_unstable_by(|&x, &y| family_name_of(&families, x).cmp(family_name_of(&families, y)));
    Ok(Exposition { families, by_name })
}

fn family_name_of(families: &[Family], idx: usize) -> &str {
    families.get(idx).map_or("", |f| f.name.as_str())
}

/// A histogram's `_bucket` sample needs an `le` that is a number or an infinity.
fn check_bucket(
    family: &str,
    sample: &str,
    labels: &Scratch<'_>,
    line: usize,
) -> Result<(), ExpositionError> {
    let is_bucket = sample
        .strip_prefix(family)
        .is_some_and(|suffix| suffix == "_bucket");
    if !is_bucket {
        return Ok(());
    }
    let le = labels
        .iter()
        .find(|(k, _)| *k == "le")
        .map(|(_, v)| v.as_ref());
    let detail = match le.map(|le| (le, SampleValue::parse(le.as_bytes()))) {
        None => "has no le label".to_owned(),
        Some((_, Ok(SampleValue::NaN))) => "has le=\"NaN\"".to_owned(),
        Some((_, Ok(_))) => return Ok(()),
        Some((le, Err(_))) => format!("le {:?} is not a number", snippet(le)),
    };
    Err(ExpositionError::new(
        line,
        ExpositionErrorKind::BadBucket {
            sample: sample.to_owned(),
            detail,
        },
    ))
}

/// The first repeated series (by the line of its repetition), as an error. Samples are
/// sorted by a hash of name and labels, ties by the full key, so equal series are adjacent.
fn check_duplicate_series(families: &[Family]) -> Result<(), ExpositionError> {
    let mut keyed: Vec<(u64, &Sample)> = families
        .iter()
        .flat_map(|f| f.samples.iter())
        .map(|s| (series_hash(s), s))
        .collect();
    keyed.sort_unstable_by(|(ha, a), (hb, b)| {
        ha.cmp(hb).then_with(|| {
            (a.name.as_str(), &a.labels, a.line).cmp(&(b.name.as_str(), &b.labels, b.line))
        })
    });
    let mut worst: Option<(&Sample, &Sample)> = None;
    for w in keyed.windows(2) {
        if let [(ha, a), (hb, b)] = w
            && ha == hb
            && a.name == b.name
            && a.labels == b.labels
            && worst.is_none_or(|(_, second)| b.line < second.line)
        {
            worst = Some((a, b));
        }
    }
    match worst {
        None => Ok(()),
        Some((first, second)) => Err(ExpositionError::new(
            second.line,
            ExpositionErrorKind::DuplicateSeries {
                series: second.series(),
                first_line: first.line,
            },
        )),
    }
}

/// A fast, unkeyed hash of a sample's name and labels. Collisions cost only a comparison:
/// the sort above breaks ties by the full key.
fn series_hash(s: &Sample) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, bytes: &[u8]| {
        let mut h = h;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            h = (h.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        (h.rotate_left(5) ^ 0xff).wrapping_mul(K)
    };
    let mut h = mix(0, s.name.as_bytes());
    for (k, v) in &s.labels {
        h = mix(mix(h, k.as_bytes()), v.as_bytes());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU_BEFORE: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu/metrics_before.txt");
    const CPU_AFTER: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu/metrics_after.txt");
    const PREFIX_BEFORE: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu-prefix/metrics_before.txt");
    const PREFIX_AFTER: &[u8] =
        include_bytes!("../../../../../shared/vllm/real-runs/vllm-cpu-prefix/metrics_after.txt");

    fn p(text: &str) -> Exposition {
        parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn err(text: &str) -> String {
        match parse(text.as_bytes()) {
            Ok(e) => panic!("parsed: {e:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn dec(s: &str) -> Decimal {
        Decimal::parse(s.as_bytes()).unwrap()
    }

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
    fn simulator_spellings_parse() {
        // `cli/src/sim/metrics.rs` writes prometheus_client's floatToGoString, `2.e+06` included.
        let e = p(concat!(
            "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n",
            "# TYPE process_start_time_seconds gauge\n",
            "process_start_time_seconds 1.5e+09\n",
            "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n",
            "# TYPE vllm:generation_tokens_total counter\n",
            "vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 2.e+06\n",
            "# TYPE loadproof_sim_info gauge\n",
            "loadproof_sim_info{version=\"0.1.0\"} 1.0\n",
        ));
        assert_eq!(
            e.process_start_time().unwrap().unwrap().to_string(),
            "1500000000"
        );
        assert_eq!(
            e.total("vllm:generation_tokens_total")
                .unwrap()
                .unwrap()
                .to_string(),
            "2000000"
        );
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

    #[test]
    fn untyped_is_the_default_type() {
        let e = p(
            "# HELP documented Only HELP.\ndocumented 1\nundeclared{a=\"b\"} 2\n# TYPE explicit untyped\nexplicit 3\n",
        );
        let kinds: Vec<(&str, MetricType)> = e
            .families()
            .iter()
            .map(|f| (f.name.as_str(), f.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("documented", MetricType::Untyped),
                ("undeclared", MetricType::Untyped),
                ("explicit", MetricType::Untyped),
            ]
        );
        assert_eq!(
            e.family("documented").unwrap().help.as_deref(),
            Some("Only HELP.")
        );
        // An untyped family owns no suffixes: `documented_total` is its own family.
        let e = p("# HELP documented x\ndocumented_total 1\n");
        assert_eq!(
            e.family_of("documented_total").unwrap().name,
            "documented_total"
        );
    }

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

    #[test]
    fn histogram_buckets_need_a_numeric_le() {
        assert_eq!(
            err("# TYPE h histogram\nh_bucket 1\n"),
            "line 2: histogram bucket \"h_bucket\": has no le label"
        );
        assert!(
            err("# TYPE h histogram\nh_bucket{le=\"x\"} 1\n").contains("le \"x\" is not a number")
        );
        assert!(err("# TYPE h histogram\nh_bucket{le=\"NaN\"} 1\n").contains("NaN"));
    }

    #[test]
    fn label_values_are_unescaped_and_labels_sorted() {
        let e = p("m{z=\"1\",path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",nl=\"a\\nb\",u=\"é\",} 1\n");
        let s = e.families().first().unwrap().samples.first().unwrap();
        let keys: Vec<&str> = s.labels.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["nl", "path", "q", "u", "z"]);
        assert_eq!(s.label("path"), Some("C:\\dir"));
        assert_eq!(s.label("q"), Some("say \"hi\""));
        assert_eq!(s.label("nl"), Some("a\nb"));
        assert_eq!(s.label("u"), Some("é"));
        assert_eq!(
            s.series(),
            "m{nl=\"a\\nb\",path=\"C:\\\\dir\",q=\"say \\\"hi\\\"\",u=\"é\",z=\"1\"}"
        );
        // Blanks around the label syntax and an empty label set are fine.
        let e = p("m { a = \"1\" , b=\"2\" } 1\nn{} 2\n");
        assert_eq!(
            e.family("m").unwrap().samples.first().unwrap().label("b"),
            Some("2")
        );
        assert!(err("m{a=\"\\t\"} 1\n").contains("invalid escape \\t"));
        assert!(err("m{a=\"1\",a=\"2\"} 1\n").contains("label \"a\" appears twice"));
    }

    #[test]
    fn crlf_line_endings_and_blank_lines_are_accepted() {
        let e = p(
            "# HELP a Some help.\r\n# TYPE a counter\r\n\r\n   \r\na_total{x=\"1\"} 3.0\r\n\na_total{x=\"2\"} 4 1700000000000\r\n",
        );
        assert_eq!(e.total("a_total").unwrap().unwrap().to_string(), "7");
        assert_eq!(e.family("a").unwrap().help.as_deref(), Some("Some help."));
        let samples = &e.family("a").unwrap().samples;
        assert_eq!(samples.iter().map(|s| s.line).collect::<Vec<_>>(), [5, 7]);
        // No final newline either.
        assert_eq!(p("x 1").total("x").unwrap(), Some(dec("1")));
        assert!(p("").families().is_empty());
    }

    #[test]
    fn a_duplicate_series_is_refused_with_its_line() {
        assert_eq!(
            err(
                "# TYPE c counter\nc_total{a=\"1\",b=\"2\"} 1\nc_total{a=\"2\"} 1\nc_total{b=\"2\",a=\"1\"} 2\n"
            ),
            "line 4: series c_total{a=\"1\",b=\"2\"} appears twice (first on line 2)"
        );
        assert_eq!(
            err("# TYPE c counter\n# TYPE c gauge\n"),
            "line 2: a second TYPE line for \"c\" (first on line 1)"
        );
        assert!(err("# HELP c a\n# HELP c b\n").starts_with("line 2: a second HELP line"));
    }

    #[test]
    fn inf_and_nan_values_are_kept() {
        let e = p("a +Inf\nb -Inf\nc NaN\nd nan\ne Inf\n");
        let values: Vec<SampleValue> = e
            .families()
            .iter()
            .map(|f| f.samples.first().unwrap().value)
            .collect();
        use SampleValue::*;
        assert_eq!(values, [PosInf, NegInf, NaN, NaN, PosInf]);
        assert_eq!(
            e.total("a").unwrap_err().to_string(),
            "a is +Inf, not a finite number"
        );
        assert_eq!(NaN.cmp_value(NaN), None);
        assert_eq!(
            NegInf.cmp_value(Finite(dec("-1e300"))),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn malformed_lines_name_the_line_and_the_fault() {
        for (text, message) in [
            (
                "ok 1\nx 1.2.3\n",
                "line 2: sample \"x\": value \"1.2.3\" is not a number",
            ),
            ("x\n", "line 1: sample \"x\" has no value"),
            ("x{a=\"1\"}\n", "line 1: sample \"x\" has no value"),
            ("9x 1\n", "line 1: expected a metric name, found \"9x\""),
            (
                "{a=\"1\"} 1\n",
                "line 1: expected a metric name, found \"{\"",
            ),
            (
                "x{a=\"1\" 1\n",
                "line 1: sample \"x\": expected ',' or '}' after the value of label \"a\"",
            ),
            (
                "x{a=\"1} 1\n",
                "line 1: sample \"x\": the value of label \"a\" has no closing '\"'",
            ),
            (
                "x{a} 1\n",
                "line 1: sample \"x\": expected '=' after label \"a\"",
            ),
            (
                "x{a=1} 1\n",
                "line 1: sample \"x\": expected '\"' to open the value of label \"a\"",
            ),
            (
                "x{\"a\"=\"1\"} 1\n",
                "line 1: sample \"x\": expected a label name, found \"\\\"a\\\"=\\\"1\\\"}\"",
            ),
            (
                "x{a=\"1\"\n",
                "line 1: sample \"x\": expected ',' or '}' after the value of label \"a\"",
            ),
            (
                "x 1 12.5\n",
                "line 1: sample \"x\": timestamp \"12.5\" is not an integer number of milliseconds",
            ),
            (
                "x 1 12 junk\n",
                "line 1: sample \"x\": unexpected \"junk\" after the value and timestamp",
            ),
            (
                "# TYPE x info\n",
                "line 1: TYPE \"info\" of \"x\" is not one of counter, gauge, histogram, summary, untyped",
            ),
            (
                "# TYPE x\n",
                "line 1: TYPE \"\" of \"x\" is not one of counter, gauge, histogram, summary, untyped",
            ),
            (
                "# HELP 1x y\n",
                "line 1: expected a metric name, found \"1x\"",
            ),
            (
                "x 1e400\n",
                "line 1: sample \"x\": value \"1e400\" is beyond the range of a 64-bit float",
            ),
            (
                "x 1e-400\n",
                "line 1: sample \"x\": value \"1e-400\" is below the smallest 64-bit float",
            ),
            (
                "x 1234567890123456789012345678901234567\n",
                "line 1: sample \"x\": value \"1234567890123456789012345678901234567\" has more significant digits than can be kept exactly (36)",
            ),
        ] {
            assert_eq!(err(text), message, "{text:?}");
        }
        let e = parse(b"a 1\nb{x=\"\xff\"} 2\n").unwrap_err();
        assert_eq!(e.line(), 2);
        assert_eq!(e.kind(), &ExpositionErrorKind::NotUtf8);
        // Ordinary comments, HELP without a name and OpenMetrics' EOF are comments.
        assert!(
            p("# just a comment\n#HELPFUL\n# HELP\n# EOF\n")
                .families()
                .is_empty()
        );
    }

    #[test]
    fn timestamps_are_integer_milliseconds() {
        let e = p("x 1 1700000000123\ny 2 -5\nz 3\n");
        let ts: Vec<Option<i64>> = e
            .families()
            .iter()
            .map(|f| f.samples.first().unwrap().timestamp_ms)
            .collect();
        assert_eq!(ts, [Some(1_700_000_000_123), Some(-5), None]);
        assert!(err("x 1 99999999999999999999\n").contains("timestamp"));
    }

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

    #[test]
    fn declarations_may_follow_their_samples() {
        let e = p(
            "h_bucket{le=\"+Inf\"} 1\nh_count 1\nh_sum 2\n# TYPE h histogram\nc_total 3\n# TYPE c counter\n",
        );
        let kinds: Vec<(&str, MetricType, usize)> = e
            .families()
            .iter()
            .map(|f| (f.name.as_str(), f.kind, f.samples.len()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("h", MetricType::Histogram, 3),
                ("c", MetricType::Counter, 1)
            ]
        );
    }

    #[test]
    fn a_scan_keeps_complete_families_of_the_wanted_names_only() {
        const WANTED: [&str; 4] = [
            "vllm:generation_tokens_total",
            "vllm:prompt_tokens_total",
            "process_start_time_seconds",
            "vllm:request_prompt_tokens_sum",
        ];
        let full = [parse(CPU_BEFORE).unwrap(), parse(CPU_AFTER).unwrap()];
        let scanned = [
            scan(CPU_BEFORE, &WANTED).unwrap(),
            scan(CPU_AFTER, &WANTED).unwrap(),
        ];
        for (f, s) in full.iter().zip(&scanned) {
            let kept: Vec<&str> = s.families().iter().map(|f| f.name.as_str()).collect();
            assert_eq!(
                kept,
                [
                    "process_start_time_seconds",
                    "vllm:prompt_tokens_total",
                    "vllm:generation_tokens_total",
                    "vllm:request_prompt_tokens",
                ]
            );
            for family in s.families() {
                assert_eq!(Some(family), f.family(&family.name));
            }
            assert_eq!(s.process_start_time(), f.process_start_time());
            assert!(s.family_of("vllm:num_preemptions_total").is_none());
        }
        for name in ["vllm:generation_tokens_total", "vllm:prompt_tokens_total"] {
            assert_eq!(
                counter_delta(&scanned[0], &scanned[1], name),
                counter_delta(&full[0], &full[1], name)
            );
        }
        assert_eq!(
            histogram_delta(&scanned[0], &scanned[1], "vllm:request_prompt_tokens"),
            histogram_delta(&full[0], &full[1], "vllm:request_prompt_tokens")
        );
        // Undeclared names are kept only when wanted; every line is still read.
        let text = "a 1\nb{x=\"1\"} 2\n";
        assert_eq!(scan(text.as_bytes(), &["b"]).unwrap().families().len(), 1);
        assert_eq!(
            scan(b"a 1\nb 1.2.3\n", &["a"]).unwrap_err().to_string(),
            "line 2: sample \"b\": value \"1.2.3\" is not a number"
        );
    }

    // ---- properties -----------------------------------------------------------------------

    use proptest::prelude::*;

    /// One generated series: sample name, labels, value with its spelling, timestamp.
    type GenSeries = (
        String,
        Vec<(String, String)>,
        (SampleValue, String),
        Option<i64>,
    );

    /// One generated family.
    #[derive(Debug, Clone)]
    struct GenFamily {
        name: String,
        kind: MetricType,
        help: Option<String>,
        series: Vec<GenSeries>,
    }

    /// A value and the spelling to write it with.
    fn value() -> impl Strategy<Value = (SampleValue, String)> {
        prop_oneof![
            8 => (any::<i64>(), -30i32..30).prop_map(|(m, e)| {
                let spelled = format!("{m}e{e}");
                (SampleValue::Finite(Decimal::parse(spelled.as_bytes()).unwrap()), spelled)
            }),
            1 => prop_oneof![Just("NaN"), Just("nan")].prop_map(|w| (SampleValue::NaN, w.to_owned())),
            1 => prop_oneof![Just("+Inf"), Just("Inf"), Just("+inf")].prop_map(|w| (SampleValue::PosInf, w.to_owned())),
            1 => Just((SampleValue::NegInf, "-Inf".to_owned())),
        ]
    }

    fn label_value() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just('\\'),
                Just('"'),
                Just('\n'),
                Just('é'),
                Just(' '),
                Just('{'),
                proptest::char::range('a', 'z')
            ],
            0..6,
        )
        .prop_map(|cs| cs.into_iter().collect())
    }

    fn labels() -> impl Strategy<Value = Vec<(String, String)>> {
        proptest::collection::btree_map("[a-zA-Z_][a-zA-Z0-9_]{0,4}", label_value(), 0..3).prop_map(
            |m| {
                m.into_iter()
                    .filter(|(k, _)| k != "le" && k != "quantile")
                    .collect()
            },
        )
    }

    fn family(idx: usize) -> impl Strategy<Value = GenFamily> {
        let kind = prop_oneof![
            Just(MetricType::Counter),
            Just(MetricType::Gauge),
            Just(MetricType::Histogram),
            Just(MetricType::Summary),
            Just(MetricType::Untyped),
        ];
        (
            "[a-zA-Z_:][a-zA-Z0-9:]{0,6}",
            kind,
            // Blanks after `# HELP name` separate, so a text cannot start with one.
            proptest::option::of("[!-~é][ -~é]{0,11}"),
            proptest::collection::vec(
                (labels(), value(), proptest::option::of(any::<i64>())),
                0..3,
            ),
        )
            .prop_map(move |(stem, kind, help, sets)| {
                // `_<idx>` ends every name: no two collide, none ends in a type suffix.
                let name = format!("{stem}_{idx}");
                let mut series = Vec::new();
                let mut seen = std::collections::BTreeSet::new();
                for (labels, v, ts) in sets {
                    if !seen.insert(labels.clone()) {
                        continue;
                    }
                    let with = |extra: (&str, &str)| {
                        let mut l = labels.clone();
                        l.push((extra.0.to_owned(), extra.1.to_owned()));
                        l.sort();
                        l
                    };
                    match kind {
                        MetricType::Counter => {
                            series.push((format!("{name}_total"), labels.clone(), v.clone(), ts))
                        }
                        MetricType::Gauge | MetricType::Untyped => {
                            series.push((name.clone(), labels.clone(), v.clone(), ts))
                        }
                        MetricType::Summary => {
                            series.push((name.clone(), with(("quantile", "0.5")), v.clone(), ts));
                            series.push((format!("{name}_sum"), labels.clone(), v.clone(), ts));
                            series.push((format!("{name}_count"), labels.clone(), v.clone(), None));
                        }
                        MetricType::Histogram => {
                            series.push((
                                format!("{name}_bucket"),
                                with(("le", "0.25")),
                                v.clone(),
                                ts,
                            ));
                            series.push((
                                format!("{name}_bucket"),
                                with(("le", "+Inf")),
                                v.clone(),
                                ts,
                            ));
                            series.push((format!("{name}_count"), labels.clone(), v.clone(), None));
                            series.push((format!("{name}_sum"), labels.clone(), v.clone(), None));
                        }
                    }
                }
                GenFamily {
                    name,
                    kind,
                    help,
                    series,
                }
            })
    }

    fn families() -> impl Strategy<Value = Vec<GenFamily>> {
        (0usize..6).prop_flat_map(|n| (0..n).map(family).collect::<Vec<_>>())
    }

    /// An independent writer, deliberately unlike `render`: labels in reverse order with a
    /// trailing comma, values as generated (`-1234e-5`, `nan`, `Inf`), CRLF when asked.
    fn write(families: &[GenFamily], crlf: bool) -> String {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut out = String::new();
        for f in families {
            if let Some(help) = &f.help {
                out.push_str(&format!(
                    "# HELP {} {}{nl}",
                    f.name,
                    help.replace('\\', "\\\\")
                ));
            }
            out.push_str(&format!("# TYPE {} {}{nl}", f.name, f.kind.word()));
            for (name, labels, v, ts) in &f.series {
                out.push_str(name);
                out.push('{');
                for (k, val) in labels.iter().rev() {
                    let escaped = val
                        .replace('\\', "\\\\")
                        .replace('"', "\\\"")
                        .replace('\n', "\\n");
                    out.push_str(&format!("{k}=\"{escaped}\","));
                }
                out.push('}');
                let shown = &v.1;
                out.push_str(&format!(" {shown}"));
                if let Some(ts) = ts {
                    out.push_str(&format!(" {ts}"));
                }
                out.push_str(nl);
            }
        }
        out
    }

    proptest! {
        #[test]
        fn parse_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn parse_never_panics_on_exposition_shaped_bytes(
            pieces in proptest::collection::vec(prop_oneof![
                Just("# TYPE "), Just("# HELP "), Just("counter"), Just("histogram"), Just("summary"),
                Just("gauge"), Just("x"), Just("x_total"), Just("x_bucket"), Just("x_sum"), Just("x_count"),
                Just("{"), Just("}"), Just("le"), Just("="), Just("\""), Just("\\"), Just(","), Just(" "),
                Just("\n"), Just("\r\n"), Just("\r"), Just("1.5"), Just("+Inf"), Just("NaN"), Just("-3e2"),
                Just("17"), Just("é"),
            ], 0..60)
        ) {
            let text: String = pieces.concat();
            let parsed = parse(text.as_bytes());
            for wanted in [&["x"][..], &["x_total", "x_sum"], &["x_bucket", "xx"]] {
                match (&parsed, scan(text.as_bytes(), wanted)) {
                    (Ok(full), Ok(part)) => {
                        for f in part.families() {
                            prop_assert_eq!(Some(f), full.family(&f.name));
                        }
                        for name in wanted {
                            prop_assert_eq!(part.family_of(name), full.family_of(name));
                        }
                    }
                    (Ok(_), Err(e)) => prop_assert!(false, "scan refused what parse read: {}", e),
                    (Err(_), _) => {}
                }
            }
            if let Ok(e) = parsed {
                let again = parse(e.render().as_bytes());
                prop_assert!(again.is_ok(), "{:?}\n{}", again, e.render());
                if let Ok(again) = again {
                    prop_assert_eq!(again.render(), e.render());
                }
                for f in e.families() {
                    let _ = counter_delta(&e, &e, &f.name);
                    let _ = histogram_delta(&e, &e, &f.name);
                    let _ = e.total(&f.name);
                }
            }
        }

        #[test]
        fn generated_expositions_read_back_with_the_same_values(fams in families(), crlf in any::<bool>()) {
            let text = write(&fams, crlf);
            let e = parse(text.as_bytes()).map_err(|err| TestCaseError::fail(format!("{err}\n{text}")))?;
            prop_assert_eq!(e.families().len(), fams.len());
            for g in &fams {
                let f = e.family(&g.name).unwrap();
                prop_assert_eq!(f.kind, g.kind);
                prop_assert_eq!(&f.help, &g.help);
                prop_assert_eq!(f.samples.len(), g.series.len());
                for (s, (name, labels, v, ts)) in f.samples.iter().zip(&g.series) {
                    prop_assert_eq!(&s.name, name);
                    prop_assert_eq!(&s.labels, labels);
                    match (s.value, v.0) {
                        (SampleValue::NaN, want) => prop_assert_eq!(want, SampleValue::NaN),
                        (got, want) => prop_assert_eq!(got.cmp_value(want), Some(Ordering::Equal)),
                    }
                    prop_assert_eq!(s.timestamp_ms, *ts);
                    prop_assert_eq!(e.family_of(name).map(|f| f.name.as_str()), Some(g.name.as_str()));
                }
            }
            let rendered = e.render();
            let again = parse(rendered.as_bytes()).unwrap();
            prop_assert_eq!(again.render(), rendered);
        }
    }
}
