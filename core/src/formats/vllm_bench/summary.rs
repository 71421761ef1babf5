//! The stdout summary block, read exactly as printed: [`parse_summary`].
//!
//! One header, rows of `label: value`, one closing line. Known rows become typed fields, latency
//! rows are grouped by metric, and any other row is kept verbatim in [`Summary::other`], so a
//! line a newer vLLM prints never breaks replay.

use std::collections::BTreeMap;

use super::decimal_text::whole;
use crate::decimal::{Decimal, NumberError};

/// The line that opens the summary block (`" Serving Benchmark Result "` centred in 50 `=`).
pub const SUMMARY_HEADER: &str = "============ Serving Benchmark Result ============";

/// The line that closes the summary block: 50 `=`.
pub const SUMMARY_CLOSING: &str = "==================================================";

/// The summary block of one `vllm bench serve` stdout, every value as printed.
///
/// Rows vLLM prints only under some flags (a tokenizer, `--max-concurrency`, a finite
/// `--request-rate`, `--goodput`) or only in some versions are `Option`s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// 1-based line of [`SUMMARY_HEADER`], so a finding can point into the evidence.
    pub header_line: usize,
    /// 1-based line of [`SUMMARY_CLOSING`].
    pub closing_line: usize,
    /// `Successful requests:`.
    pub successful: u64,
    /// `Failed requests:`; older versions do not print it.
    pub failed: Option<u64>,
    /// `Maximum request concurrency:`, printed only with `--max-concurrency`.
    pub max_concurrency: Option<u64>,
    /// `Request rate configured (RPS):`, printed only for a finite `--request-rate`.
    pub request_rate: Option<Decimal>,
    /// `Benchmark duration (s):`.
    pub duration_s: Decimal,
    /// `Total input tokens:`.
    pub total_input_tokens: u64,
    /// `Total generated tokens:`, printed only when a tokenizer is loaded.
    pub total_generated_tokens: Option<u64>,
    /// `Request throughput (req/s):`.
    pub request_throughput: Option<Decimal>,
    /// `Request goodput (req/s):`, printed only with `--goodput`.
    pub request_goodput: Option<Decimal>,
    /// `Output token throughput (tok/s):`.
    pub output_throughput: Option<Decimal>,
    /// `Peak output token throughput (tok/s):`: the most token events in one whole-second
    /// bucket, not a sustained rate.
    pub peak_output_throughput: Option<Decimal>,
    /// `Peak concurrent requests:`. Every successful request counts in every whole second it
    /// touches (both ends inclusive, seconds counted from the earliest successful start), so this
    /// over-counts what was in flight at any instant: it is not engine concurrency. See
    /// [`second_bucket_peak`] and [`exact_peak`].
    ///
    /// [`second_bucket_peak`]: super::second_bucket_peak
    /// [`exact_peak`]: super::exact_peak
    pub successful_client_second_bucket_peak: Option<Decimal>,
    /// `Total token throughput (tok/s):` (older versions: `Total Token throughput`).
    pub total_token_throughput: Option<Decimal>,
    /// The latency sections (`Mean TTFT (ms):` …) in the order printed.
    pub latency: Vec<LatencySummary>,
    /// Rows this reader does not know (speculative decoding, probes, newer versions' lines),
    /// kept verbatim rather than failing: a new vLLM line must not break replay.
    pub other: Vec<OtherLine>,
}

/// One latency metric's printed statistics (`std` is saved in the JSON, never printed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencySummary {
    /// As printed: `TTFT`, `TPOT`, `ITL`, `E2EL`. Lowercased, it names the JSON keys.
    pub metric: String,
    /// `Mean {metric} (ms):`.
    pub mean_ms: Option<Decimal>,
    /// `Median {metric} (ms):`.
    pub median_ms: Option<Decimal>,
    /// `P{p} {metric} (ms):` in the order printed; `p` as printed (`"99"`, `"99.9"`), which is
    /// also how the JSON key spells it (`p99.9_itl_ms`).
    pub percentiles: Vec<(String, Decimal)>,
}

/// A summary row with a label this reader does not interpret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherLine {
    /// The section title above it (`Speculative Decoding`), or `""` before any section.
    pub section: String,
    /// The label with its colon, padding removed (`Acceptance rate (%):`). A line without a
    /// `label:` shape is kept whole here.
    pub label: String,
    /// The raw value, padding removed; `""` for a sub-heading such as
    /// `Per-position acceptance (%):`.
    pub value: String,
    /// 1-based line in stdout.
    pub line: usize,
}

/// Why a stdout has no usable summary. Every row error names the 1-based line, the label and
/// the raw value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SummaryError {
    /// The run printed no summary: it failed before the end, or this is not `bench serve`.
    #[error("no `{SUMMARY_HEADER}` line in stdout")]
    NoSummary,
    /// The summary opened but never closed: the capture was cut, and a cut capture cannot
    /// prove a replay.
    #[error(
        "line {line}: the summary opened here has no closing line of 50 `=`: stdout is truncated"
    )]
    Truncated {
        /// The header's line.
        line: usize,
    },
    /// Two summaries: stdout of two runs, and no way to tell which one the receipt means.
    #[error("line {second}: a second summary block (the first opens at line {first})")]
    TwoSummaries {
        /// The first header's line.
        first: usize,
        /// The second header's line.
        second: usize,
    },
    /// A summary line that is not UTF-8 (vLLM prints only ASCII there).
    #[error("line {line}: not UTF-8")]
    NotUtf8 {
        /// The line.
        line: usize,
    },
    /// A known row whose value is not a decimal.
    #[error("line {line}: `{label}` has value {value:?}, not a decimal ({reason:?})")]
    NotANumber {
        /// The line.
        line: usize,
        /// The row's label.
        label: String,
        /// The raw value.
        value: String,
        /// What the decimal parser said.
        reason: NumberError,
    },
    /// A count row (requests, tokens, concurrency) whose value is not a whole number ≥ 0.
    #[error("line {line}: `{label}` has value {value:?}, not a whole number")]
    NotWhole {
        /// The line.
        line: usize,
        /// The row's label.
        label: String,
        /// The raw value.
        value: String,
    },
    /// A known row printed twice in one summary: two values, no way to pick.
    #[error("line {line}: `{label}` again, with value {value:?} (first at line {first})")]
    Duplicate {
        /// The second occurrence's line.
        line: usize,
        /// The row's label.
        label: String,
        /// The second occurrence's raw value.
        value: String,
        /// The first occurrence's line.
        first: usize,
    },
    /// A row every version prints is missing.
    #[error("line {header_line}: the summary has no `{label}` row")]
    Missing {
        /// The header's line.
        header_line: usize,
        /// The missing row's label.
        label: &'static str,
    },
}

/// Reads the summary block of a `vllm bench serve` stdout (the caller has checked exit 0).
///
/// Lines may end in `\n` or `\r\n`; trailing padding is ignored. Values are parsed with
/// [`Decimal::parse`]; count rows must be whole numbers.
pub fn parse_summary(stdout: &[u8]) -> Result<Summary, SummaryError> {
    let lines: Vec<&[u8]> = stdout
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    let mut headers = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_ascii_end() == SUMMARY_HEADER.as_bytes())
        .map(|(idx, _)| idx + 1);
    let header_line = headers.next().ok_or(SummaryError::NoSummary)?;
    if let Some(second) = headers.next() {
        return Err(SummaryError::TwoSummaries {
            first: header_line,
            second,
        });
    }
    // `header_line` is the 0-based index of the first line after the header.
    let closing_line = lines
        .iter()
        .enumerate()
        .skip(header_line)
        .find(|(_, l)| l.trim_ascii_end() == SUMMARY_CLOSING.as_bytes())
        .map(|(idx, _)| idx + 1)
        .ok_or(SummaryError::Truncated { line: header_line })?;

    let mut rows = RowReader::new(header_line);
    for (idx, raw) in lines
        .iter()
        .enumerate()
        .take(closing_line - 1)
        .skip(header_line)
    {
        let line = idx + 1;
        let text = std::str::from_utf8(raw).map_err(|_| SummaryError::NotUtf8 { line })?;
        rows.read(line, text)?;
    }
    rows.finish(closing_line)
}

// ---------------------------------------------------------------------------------------------
// Stdout rows

/// Statistic of a latency row.
enum Stat<'a> {
    Mean,
    Median,
    Percentile(&'a str),
}

/// `Mean TTFT (ms):` → (`Mean`, `TTFT`). A metric with a space (`probe E2EL`) is not one of
/// the latency sections.
fn latency_label(label: &str) -> Option<(Stat<'_>, &str)> {
    let body = label.strip_suffix(" (ms):")?;
    let (word, metric) = body.split_once(' ')?;
    if metric.is_empty() || metric.contains(char::is_whitespace) {
        return None;
    }
    let stat = match word {
        "Mean" => Stat::Mean,
        "Median" => Stat::Median,
        _ => Stat::Percentile(word.strip_prefix('P').filter(|p| is_percentile(p))?),
    };
    Some((stat, metric))
}

/// `99`, `99.9`: how vLLM spells a percentile (`int(p)` when whole, else `str(p)`).
pub(super) fn is_percentile(p: &str) -> bool {
    p.starts_with(|c: char| c.is_ascii_digit())
        && p.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && p.bytes().filter(|&b| b == b'.').count() <= 1
        && !p.ends_with('.')
}

/// Splits `label:   value   ` at the first colon followed by a space or the end.
fn split_row(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    for (idx, &b) in bytes.iter().enumerate() {
        if b == b':'
            && matches!(bytes.get(idx + 1), None | Some(b' ' | b'\t'))
            && let Some((label, value)) = text.split_at_checked(idx + 1)
        {
            return (label.trim(), value.trim());
        }
    }
    (text.trim(), "")
}

/// Accumulates the rows of one summary block.
struct RowReader {
    header_line: usize,
    section: String,
    /// First line of each known row, to refuse a second.
    seen: BTreeMap<String, usize>,
    successful: Option<u64>,
    failed: Option<u64>,
    max_concurrency: Option<u64>,
    request_rate: Option<Decimal>,
    duration_s: Option<Decimal>,
    total_input_tokens: Option<u64>,
    total_generated_tokens: Option<u64>,
    request_throughput: Option<Decimal>,
    request_goodput: Option<Decimal>,
    output_throughput: Option<Decimal>,
    peak_output_throughput: Option<Decimal>,
    bucket_peak: Option<Decimal>,
    total_token_throughput: Option<Decimal>,
    latency: Vec<LatencySummary>,
    other: Vec<OtherLine>,
}

impl RowReader {
    fn new(header_line: usize) -> RowReader {
        RowReader {
            header_line,
            section: String::new(),
            seen: BTreeMap::new(),
            successful: None,
            failed: None,
            max_concurrency: None,
            request_rate: None,
            duration_s: None,
            total_input_tokens: None,
            total_generated_tokens: None,
            request_throughput: None,
            request_goodput: None,
            output_throughput: None,
            peak_output_throughput: None,
            bucket_peak: None,
            total_token_throughput: None,
            latency: Vec::new(),
            other: Vec::new(),
        }
    }

    fn read(&mut self, line: usize, text: &str) -> Result<(), SummaryError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(());
        }
        // Section titles are centred in `-` (or `=` for a nested result block).
        for fill in ['-', '='] {
            if trimmed.starts_with(fill) && trimmed.ends_with(fill) {
                self.section = trimmed.trim_matches(fill).trim().to_owned();
                return Ok(());
            }
        }
        let (label, value) = split_row(text);
        let row = Row { line, label, value };
        match label {
            "Successful requests:" => self.successful = Some(self.count(&row)?),
            "Failed requests:" => self.failed = Some(self.count(&row)?),
            "Maximum request concurrency:" => self.max_concurrency = Some(self.count(&row)?),
            "Total input tokens:" => self.total_input_tokens = Some(self.count(&row)?),
            "Total generated tokens:" => self.total_generated_tokens = Some(self.count(&row)?),
            "Request rate configured (RPS):" => self.request_rate = Some(self.decimal(&row)?),
            "Benchmark duration (s):" => self.duration_s = Some(self.decimal(&row)?),
            "Request throughput (req/s):" => self.request_throughput = Some(self.decimal(&row)?),
            "Request goodput (req/s):" => self.request_goodput = Some(self.decimal(&row)?),
            "Output token throughput (tok/s):" => {
                self.output_throughput = Some(self.decimal(&row)?);
            }
            "Peak output token throughput (tok/s):" => {
                self.peak_output_throughput = Some(self.decimal(&row)?);
            }
            "Peak concurrent requests:" => self.bucket_peak = Some(self.decimal(&row)?),
            "Total token throughput (tok/s):" | "Total Token throughput (tok/s):" => {
                self.total_token_throughput = Some(self.decimal(&row)?);
            }
            _ => match latency_label(label) {
                Some((stat, metric)) => {
                    let value = self.decimal(&row)?;
                    let idx = match self.latency.iter().position(|l| l.metric == metric) {
                        Some(idx) => idx,
                        None => {
                            self.latency.push(LatencySummary {
                                metric: metric.to_owned(),
                                mean_ms: None,
                                median_ms: None,
                                percentiles: Vec::new(),
                            });
                            self.latency.len() - 1
                        }
                    };
                    if let Some(summary) = self.latency.get_mut(idx) {
                        match stat {
                            Stat::Mean => summary.mean_ms = Some(value),
                            Stat::Median => summary.median_ms = Some(value),
                            Stat::Percentile(p) => summary.percentiles.push((p.to_owned(), value)),
                        }
                    }
                }
                None => self.other.push(OtherLine {
                    section: self.section.clone(),
                    label: label.to_owned(),
                    value: value.to_owned(),
                    line,
                }),
            },
        }
        Ok(())
    }

    /// A known row's value as a decimal; refuses a second occurrence of the label.
    fn decimal(&mut self, row: &Row<'_>) -> Result<Decimal, SummaryError> {
        // Older versions spell one row `Total Token throughput`: both at once is a duplicate.
        let key = row.label.to_ascii_lowercase();
        if let Some(&first) = self.seen.get(&key) {
            return Err(SummaryError::Duplicate {
                line: row.line,
                label: row.label.to_owned(),
                value: row.value.to_owned(),
                first,
            });
        }
        self.seen.insert(key, row.line);
        Decimal::parse(row.value.as_bytes()).map_err(|reason| SummaryError::NotANumber {
            line: row.line,
            label: row.label.to_owned(),
            value: row.value.to_owned(),
            reason,
        })
    }

    /// A count row: a decimal that is a whole number ≥ 0 (`20`, also `20.0`).
    fn count(&mut self, row: &Row<'_>) -> Result<u64, SummaryError> {
        let d = self.decimal(row)?;
        whole(d).ok_or_else(|| SummaryError::NotWhole {
            line: row.line,
            label: row.label.to_owned(),
            value: row.value.to_owned(),
        })
    }

    fn finish(self, closing_line: usize) -> Result<Summary, SummaryError> {
        let header_line = self.header_line;
        let missing = |label| SummaryError::Missing { header_line, label };
        Ok(Summary {
            header_line,
            closing_line,
            successful: self
                .successful
                .ok_or_else(|| missing("Successful requests:"))?,
            failed: self.failed,
            max_concurrency: self.max_concurrency,
            request_rate: self.request_rate,
            duration_s: self
                .duration_s
                .ok_or_else(|| missing("Benchmark duration (s):"))?,
            total_input_tokens: self
                .total_input_tokens
                .ok_or_else(|| missing("Total input tokens:"))?,
            total_generated_tokens: self.total_generated_tokens,
            request_throughput: self.request_throughput,
            request_goodput: self.request_goodput,
            output_throughput: self.output_throughput,
            peak_output_throughput: self.peak_output_throughput,
            successful_client_second_bucket_peak: self.bucket_peak,
            total_token_throughput: self.total_token_throughput,
            latency: self.latency,
            other: self.other,
        })
    }
}

/// One `label: value` row.
struct Row<'a> {
    line: usize,
    label: &'a str,
    value: &'a str,
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::test_support::*;
    use super::*;

    const V023_STDOUT: &[u8] =
        include_bytes!("../../../../../shared/vllm/stdout_vllm0.23.0_vllm-ascend_run_excerpt.txt");

    fn wrap(rows: &str) -> String {
        format!("Namespace(...)\n{SUMMARY_HEADER}\n{rows}{SUMMARY_CLOSING}\n")
    }

    #[test]
    fn vllm_cpu_stdout_reads_as_printed() {
        let s = parse_summary(CPU_STDOUT).unwrap();
        assert_eq!((s.header_line, s.closing_line), (9, 40));
        assert_eq!(s.successful, 20);
        assert_eq!(s.failed, Some(0));
        assert_eq!(s.max_concurrency, None);
        assert_eq!(s.request_rate, None);
        assert_eq!(s.duration_s, d("4.79"));
        assert_eq!(s.total_input_tokens, 2279);
        assert_eq!(s.total_generated_tokens, Some(330));
        assert_eq!(s.request_throughput, Some(d("4.18")));
        assert_eq!(s.peak_output_throughput, Some(d("191.00")));
        assert_eq!(s.successful_client_second_bucket_peak, Some(d("11.00")));
        assert_eq!(s.total_token_throughput, Some(d("544.91")));
        let metrics: Vec<&str> = s.latency.iter().map(|l| l.metric.as_str()).collect();
        assert_eq!(metrics, ["TTFT", "TPOT", "ITL", "E2EL"]);
        let itl = s.latency.iter().find(|l| l.metric == "ITL").unwrap();
        assert_eq!(itl.mean_ms, Some(d("2.05")));
        assert_eq!(itl.median_ms, Some(d("1.61")));
        assert_eq!(
            itl.percentiles,
            [("50".to_owned(), d("1.61")), ("99".to_owned(), d("7.80"))]
        );
        assert_eq!(s.other, []);
    }

    #[test]
    fn truncated_stdout_fails_replay() {
        let text = std::str::from_utf8(CPU_STDOUT).unwrap();
        let closing = text.rfind(SUMMARY_CLOSING).unwrap();
        let mid_row = text.find("P99 E2EL (ms):").unwrap() + 20;
        for cut in [
            closing,
            closing + 25,
            mid_row,
            text.find(SUMMARY_HEADER).unwrap() + 60,
        ] {
            assert_eq!(
                parse_summary(&CPU_STDOUT[..cut]),
                Err(SummaryError::Truncated { line: 9 }),
                "cut at byte {cut}"
            );
        }
        // The closing line without its newline is whole.
        assert!(parse_summary(&CPU_STDOUT[..closing + 50]).is_ok());
    }

    #[test]
    fn v0_23_stdout_keeps_spec_decode_rows_in_other() {
        let s = parse_summary(V023_STDOUT).unwrap();
        assert_eq!(s.successful, 1000);
        assert_eq!(s.max_concurrency, Some(32));
        assert_eq!(s.request_rate, Some(d("5.00")));
        assert_eq!(s.successful_client_second_bucket_peak, Some(d("35.00")));
        assert_eq!(s.latency.len(), 3);
        let other: Vec<(&str, &str, &str)> = s
            .other
            .iter()
            .map(|o| (o.section.as_str(), o.label.as_str(), o.value.as_str()))
            .collect();
        assert_eq!(other.len(), 13);
        assert_eq!(
            other.first(),
            Some(&("Speculative Decoding", "Acceptance rate (%):", "44.33"))
        );
        assert!(other.contains(&("Speculative Decoding", "Per-position acceptance (%):", "")));
        assert!(other.contains(&("Speculative Decoding", "Position 6:", "18.53")));
    }

    #[test]
    fn older_stdout_with_capital_t_and_no_failed_row_reads() {
        let rows = [
            format!("{:<40} {:<10}", "Successful requests:", 32),
            format!("{:<40} {:<10.2}", "Benchmark duration (s):", 150.87),
            format!("{:<40} {:<10}", "Total input tokens:", 65536),
            format!("{:<40} {:<10.2}", "Total Token throughput (tok/s):", 868.8),
            format!("{:-^50}", "Accuracy"),
            format!("{:<40} {:<10.2}", "Accuracy Rate (%):", 91.5),
        ];
        let s = parse_summary(wrap(&(rows.join("\n") + "\n")).as_bytes()).unwrap();
        assert_eq!(s.failed, None);
        assert_eq!(s.total_token_throughput, Some(d("868.80")));
        assert_eq!(s.other.len(), 1);
        assert_eq!(
            s.other.first().map(|o| o.section.as_str()),
            Some("Accuracy")
        );
    }

    #[test]
    fn stdout_without_header_is_no_summary() {
        assert_eq!(parse_summary(b""), Err(SummaryError::NoSummary));
        let cut = std::str::from_utf8(CPU_STDOUT)
            .unwrap()
            .find(SUMMARY_HEADER)
            .unwrap();
        assert_eq!(
            parse_summary(&CPU_STDOUT[..cut]),
            Err(SummaryError::NoSummary)
        );
    }

    #[test]
    fn two_summary_blocks_are_refused() {
        let mut both = CPU_STDOUT.to_vec();
        both.extend_from_slice(PREFIX_STDOUT);
        assert_eq!(
            parse_summary(&both),
            Err(SummaryError::TwoSummaries {
                first: 9,
                second: 40 + 9
            })
        );
    }

    #[test]
    fn count_rows_must_be_whole() {
        let stdout = wrap("Successful requests:                     20.5      \n");
        let err = parse_summary(stdout.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            SummaryError::NotWhole {
                line: 3,
                label: "Successful requests:".to_owned(),
                value: "20.5".to_owned()
            }
        );
        assert_eq!(
            err.to_string(),
            "line 3: `Successful requests:` has value \"20.5\", not a whole number"
        );
    }

    #[test]
    fn errors_name_line_label_and_raw_value() {
        let text = std::str::from_utf8(CPU_STDOUT).unwrap();
        let bad = text.replacen("4.79      ", "4,79      ", 1);
        assert_eq!(
            parse_summary(bad.as_bytes()).unwrap_err().to_string(),
            "line 12: `Benchmark duration (s):` has value \"4,79\", not a decimal (NotNumeric)"
        );
        let no_duration = text.replacen("Benchmark duration (s):", "Benchmark time (s):", 1);
        assert_eq!(
            parse_summary(no_duration.as_bytes()),
            Err(SummaryError::Missing {
                header_line: 9,
                label: "Benchmark duration (s):"
            })
        );
    }

    #[test]
    fn a_known_row_twice_is_refused() {
        let text = std::str::from_utf8(CPU_STDOUT).unwrap();
        let twice = text.replacen(
            "Total token throughput (tok/s):          544.91    \n",
            "Total token throughput (tok/s):          544.91    \n\
             Total Token throughput (tok/s):          544.92    \n",
            1,
        );
        assert_eq!(
            parse_summary(twice.as_bytes()),
            Err(SummaryError::Duplicate {
                line: 20,
                label: "Total Token throughput (tok/s):".to_owned(),
                value: "544.92".to_owned(),
                first: 19
            })
        );
        let p99 = "P99 ITL (ms):                            7.80      \n";
        let twice = text.replacen(p99, &format!("{p99}{p99}"), 1);
        assert!(matches!(
            parse_summary(twice.as_bytes()),
            Err(SummaryError::Duplicate {
                line: 35,
                first: 34,
                ..
            })
        ));
    }

    /// One generated run's printed values.
    #[derive(Debug, Clone)]
    struct Printed {
        successful: u64,
        failed: Option<u64>,
        max_concurrency: Option<u64>,
        request_rate: Option<f64>,
        duration_s: f64,
        total_input_tokens: u64,
        total_generated_tokens: Option<u64>,
        throughputs: [Option<f64>; 5],
        capital_t: bool,
        latency: Vec<PrintedLatency>,
        spec_decode: Option<(f64, u64)>,
    }

    /// `(metric index, mean, median, [(percentile index, value)])`.
    type PrintedLatency = (usize, f64, f64, Vec<(usize, f64)>);

    const METRICS: [(&str, &str); 4] = [
        ("TTFT", "Time to First Token"),
        ("TPOT", "Time per Output Token (excl. 1st token)"),
        ("ITL", "Inter-token Latency"),
        ("E2EL", "End-to-end Latency"),
    ];
    const PERCENTILES: [&str; 5] = ["25", "50", "90", "99", "99.9"];

    fn printed() -> impl Strategy<Value = Printed> {
        let float = || 0.0f64..1e9;
        let count = || 0u64..10_000_000_000;
        let latency = proptest::sample::subsequence(vec![0usize, 1, 2, 3], 0..=4).prop_flat_map(
            move |metrics| {
                let n = metrics.len();
                (
                    Just(metrics),
                    proptest::collection::vec(
                        (
                            0.0f64..1e6,
                            0.0f64..1e6,
                            proptest::sample::subsequence(vec![0usize, 1, 2, 3, 4], 0..=5),
                            proptest::collection::vec(0.0f64..1e6, 5),
                        ),
                        n,
                    ),
                )
                    .prop_map(|(metrics, stats)| {
                        metrics
                            .into_iter()
                            .zip(stats)
                            .map(|(m, (mean, median, ps, values))| {
                                let ps = ps.into_iter().zip(values).collect();
                                (m, mean, median, ps)
                            })
                            .collect::<Vec<_>>()
                    })
            },
        );
        (
            (
                count(),
                proptest::option::of(count()),
                proptest::option::of(1u64..100_000),
            ),
            (proptest::option::of(0.01f64..1e4), float(), count()),
            proptest::option::of(count()),
            proptest::array::uniform5(proptest::option::of(float())),
            any::<bool>(),
            latency,
            proptest::option::of((0.0f64..100.0, count())),
        )
            .prop_map(
                |(
                    (successful, failed, max_concurrency),
                    (request_rate, duration_s, total_input_tokens),
                    total_generated_tokens,
                    throughputs,
                    capital_t,
                    latency,
                    spec_decode,
                )| Printed {
                    successful,
                    failed,
                    max_concurrency,
                    request_rate,
                    duration_s,
                    total_input_tokens,
                    total_generated_tokens,
                    throughputs,
                    capital_t,
                    latency,
                    spec_decode,
                },
            )
    }

    /// Prints `p` the way vLLM does: `{:<40} {:<10}` for counts, `{:<40} {:<10.2f}` for floats.
    fn render(p: &Printed) -> String {
        let mut out = String::from("Starting main benchmark run...\n");
        out.push_str(&format!("{:=^50}\n", " Serving Benchmark Result "));
        let int = |out: &mut String, label: &str, v: u64| {
            out.push_str(&format!("{label:<40} {v:<10}\n"));
        };
        let float = |out: &mut String, label: &str, v: f64| {
            out.push_str(&format!("{label:<40} {v:<10.2}\n"));
        };
        int(&mut out, "Successful requests:", p.successful);
        if let Some(v) = p.failed {
            int(&mut out, "Failed requests:", v);
        }
        if let Some(v) = p.max_concurrency {
            int(&mut out, "Maximum request concurrency:", v);
        }
        if let Some(v) = p.request_rate {
            float(&mut out, "Request rate configured (RPS):", v);
        }
        float(&mut out, "Benchmark duration (s):", p.duration_s);
        int(&mut out, "Total input tokens:", p.total_input_tokens);
        if let Some(v) = p.total_generated_tokens {
            int(&mut out, "Total generated tokens:", v);
        }
        let total = if p.capital_t {
            "Total Token throughput (tok/s):"
        } else {
            "Total token throughput (tok/s):"
        };
        let labels = [
            "Request throughput (req/s):",
            "Output token throughput (tok/s):",
            "Peak output token throughput (tok/s):",
            "Peak concurrent requests:",
            total,
        ];
        for (label, v) in labels.iter().zip(p.throughputs) {
            if let Some(v) = v {
                float(&mut out, label, v);
            }
        }
        for (m, mean, median, ps) in &p.latency {
            let (metric, header) = METRICS[*m];
            out.push_str(&format!("{header:-^50}\n"));
            float(&mut out, &format!("Mean {metric} (ms):"), *mean);
            float(&mut out, &format!("Median {metric} (ms):"), *median);
            for (pi, v) in ps {
                float(
                    &mut out,
                    &format!("P{} {metric} (ms):", PERCENTILES[*pi]),
                    *v,
                );
            }
        }
        if let Some((rate, drafts)) = p.spec_decode {
            out.push_str(&format!("{:-^50}\n", "Speculative Decoding"));
            float(&mut out, "Acceptance rate (%):", rate);
            int(&mut out, "Drafts:", drafts);
        }
        out.push_str(&"=".repeat(50));
        out.push('\n');
        out
    }

    fn two_places(v: f64) -> Decimal {
        d(&format!("{v:.2}"))
    }

    proptest! {
        #[test]
        fn parse_summary_never_panics(
            head in any::<bool>(),
            body in proptest::collection::vec(any::<u8>(), 0..400),
            tail in any::<bool>(),
        ) {
            let mut input = Vec::new();
            if head {
                input.extend_from_slice(SUMMARY_HEADER.as_bytes());
                input.push(b'\n');
            }
            input.extend_from_slice(&body);
            if tail {
                input.extend_from_slice(b"\n==================================================\n");
            }
            if let Ok(s) = parse_summary(&input) {
                prop_assert!(s.header_line < s.closing_line);
                prop_assert!(s.other.iter().all(|o| (s.header_line..s.closing_line).contains(&o.line)));
            }
        }

        #[test]
        fn parse_summary_survives_edits_of_a_real_stdout(
            at in 0usize..1900,
            bytes in proptest::collection::vec(any::<u8>(), 0..8),
        ) {
            let mut input = CPU_STDOUT.to_vec();
            let at = at.min(input.len());
            input.splice(at..at, bytes);
            let _ = parse_summary(&input);
        }

        #[test]
        fn a_rendered_summary_parses_back(p in printed()) {
            let s = parse_summary(render(&p).as_bytes()).unwrap();
            prop_assert_eq!((s.header_line, s.successful), (2, p.successful));
            prop_assert_eq!(s.failed, p.failed);
            prop_assert_eq!(s.max_concurrency, p.max_concurrency);
            prop_assert_eq!(s.request_rate, p.request_rate.map(two_places));
            prop_assert_eq!(s.duration_s, two_places(p.duration_s));
            prop_assert_eq!(s.total_input_tokens, p.total_input_tokens);
            prop_assert_eq!(s.total_generated_tokens, p.total_generated_tokens);
            let [rt, ot, pot, peak, tt] = p.throughputs.map(|v| v.map(two_places));
            prop_assert_eq!(s.request_throughput, rt);
            prop_assert_eq!(s.output_throughput, ot);
            prop_assert_eq!(s.peak_output_throughput, pot);
            prop_assert_eq!(s.successful_client_second_bucket_peak, peak);
            prop_assert_eq!(s.total_token_throughput, tt);
            prop_assert_eq!(s.latency.len(), p.latency.len());
            for (got, (m, mean, median, ps)) in s.latency.iter().zip(&p.latency) {
                prop_assert_eq!(got.metric.as_str(), METRICS[*m].0);
                prop_assert_eq!(got.mean_ms, Some(two_places(*mean)));
                prop_assert_eq!(got.median_ms, Some(two_places(*median)));
                let want: Vec<(String, Decimal)> = ps
                    .iter()
                    .map(|(pi, v)| (PERCENTILES[*pi].to_owned(), two_places(*v)))
                    .collect();
                prop_assert_eq!(&got.percentiles, &want);
            }
            prop_assert_eq!(s.other.len(), if p.spec_decode.is_some() { 2 } else { 0 });
        }
    }
}
