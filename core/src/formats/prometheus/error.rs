//! Every refusal of the reader, the queries and the deltas, with its message.
//!
//! Parse errors name the line; the others name the series or sample name and the values at
//! stake.
//! [`Scrape`] is here because it exists to say which scrape a [`DeltaError`] is about.

use std::fmt;

use super::metric_type::MetricType;
use super::value::SampleValue;
use crate::decimal::Decimal;

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
    pub(super) fn new(line: usize, kind: ExpositionErrorKind) -> ExpositionError {
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
