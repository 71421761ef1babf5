//! vLLM's `timed_trace` JSONL: the exact bytes `vllm bench serve --dataset-name timed_trace`
//! reads, written and read back here.
//!
//! vLLM reads the file with `readlines()`, `json.loads` per line, in file order; multiplies
//! `timestamp` by `--timed-trace-sec-multiplier` to get seconds from the benchmark start; uses
//! `input_length` as a token count (must be an integer), `output_length` as `max_tokens`, and
//! expands each of `hash_ids` into `--timed-trace-chunk-hash-size` tokens. A blank line is a
//! JSON error there, so it is an error here too.
//!
//! Timestamps are written as integers in the coarsest unit that holds every arrival exactly
//! (s, ms, µs or ns), and the multiplier in the argv names that unit: nothing is rounded.
//! The reader ([`TimedTraceReader`]) is strict and exact — it interprets timestamps with the
//! multiplier *from the argv* and compares every row with what the plan meant to write — so a
//! file or argv edited after planning shows up as a failed check, not as a different replay.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

use super::blocks::{MAX_LINE_BYTES, RowBlocks};
use crate::decimal::Decimal;
use crate::trace::Trace;

/// The unit the `timestamp` field is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeUnit {
    /// Seconds (`--timed-trace-sec-multiplier 1`).
    S,
    /// Milliseconds (`0.001`).
    Ms,
    /// Microseconds (`0.000001`).
    Us,
    /// Nanoseconds (`0.000000001`).
    Ns,
}

impl TimeUnit {
    /// Coarsest first.
    pub const ALL: [TimeUnit; 4] = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns];

    /// Nanoseconds per unit.
    pub fn ns(self) -> i64 {
        match self {
            TimeUnit::S => 1_000_000_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::Us => 1_000,
            TimeUnit::Ns => 1,
        }
    }

    /// The `--timed-trace-sec-multiplier` value that turns this unit into seconds.
    pub fn multiplier(self) -> &'static str {
        match self {
            TimeUnit::S => "1",
            TimeUnit::Ms => "0.001",
            TimeUnit::Us => "0.000001",
            TimeUnit::Ns => "0.000000001",
        }
    }

    /// The unit a `--timed-trace-sec-multiplier` value denotes, compared by value (`1e-3` is
    /// milliseconds); `None` for any other multiplier.
    pub fn from_multiplier(text: &str) -> Option<TimeUnit> {
        let (num, den) = Decimal::parse(text.as_bytes()).ok()?.as_fraction()?;
        let ns = num.checked_mul(1_000_000_000)?;
        (ns % den == 0)
            .then(|| ns / den)
            .and_then(|ns| TimeUnit::ALL.into_iter().find(|u| u.ns() as u128 == ns))
    }

    /// The coarsest unit in which every arrival is a whole number.
    pub fn coarsest_exact(arrivals_ns: &[i64]) -> TimeUnit {
        TimeUnit::ALL
            .into_iter()
            .find(|u| arrivals_ns.iter().all(|t| t % u.ns() == 0))
            .unwrap_or(TimeUnit::Ns)
    }
}

/// Appends one line: `{"timestamp": …, "input_length": …, "output_length": …, "hash_ids": […]}`
/// with Python's default `json.dumps` separators, as Mooncake's own files are written.
pub fn write_line(
    out: &mut Vec<u8>,
    timestamp: i64,
    input: u32,
    output: u32,
    ids: impl Iterator<Item = u64>,
) {
    let mut num = itoa::Buffer::new();
    out.extend_from_slice(b"{\"timestamp\": ");
    out.extend_from_slice(num.format(timestamp).as_bytes());
    out.extend_from_slice(b", \"input_length\": ");
    out.extend_from_slice(num.format(input).as_bytes());
    out.extend_from_slice(b", \"output_length\": ");
    out.extend_from_slice(num.format(output).as_bytes());
    out.extend_from_slice(b", \"hash_ids\": [");
    for (k, id) in ids.enumerate() {
        if k > 0 {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(num.format(id).as_bytes());
    }
    out.extend_from_slice(b"]}\n");
}

/// A line of the file that vLLM's reader would reject, or that cannot be read exactly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}{}: {detail}", field.map(|f| format!(", field {f:?}")).unwrap_or_default())]
pub struct TimedTraceError {
    /// Line in the file, from 1.
    pub line: u64,
    /// The field at fault, when one is.
    pub field: Option<&'static str>,
    /// What is wrong.
    pub detail: String,
}

/// The first row where the file says something other than the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowDifference {
    /// Line in the file, from 1.
    pub line: u64,
    /// The differing field (`timestamp`, `input_length`, `output_length`, `hash_ids`, or
    /// `line` for a row the plan does not have / a planned row the file lacks).
    pub field: String,
    /// What the plan holds.
    pub planned: String,
    /// What the file holds.
    pub file: String,
}

/// What was read back from a `timed_trace` file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadBack {
    /// sha256 of every byte read, lowercase hex.
    pub sha256: String,
    /// Bytes read.
    pub bytes: u64,
    /// Lines (= requests vLLM will build).
    pub lines: u64,
    /// Arrivals in nanoseconds from the benchmark start, as vLLM computes them
    /// (`timestamp × multiplier`), in file order.
    pub arrival_ns: Vec<i64>,
    /// `input_length` per line.
    pub input_tokens: Vec<u32>,
    /// `output_length` per line.
    pub output_tokens: Vec<u32>,
    /// Ids in all `hash_ids` lists.
    pub ids: u64,
    /// Lines whose ids × chunk cover fewer tokens than `input_length`.
    pub short_rows: u64,
    /// The first such line.
    pub first_short_line: Option<u64>,
    /// Lines that differ from the plan (rows missing from the file count too).
    pub rows_differing: u64,
    /// The first difference.
    pub first_difference: Option<RowDifference>,
    /// Fields vLLM ignores that the plan never writes.
    pub unknown_fields: BTreeSet<String>,
}

/// What a reader compares each line with: the planned trace and its blocks.
struct Expected<'p> {
    trace: &'p Trace,
    blocks: Box<dyn Iterator<Item = RowBlocks<'p>> + 'p>,
}

/// A `--timed-trace-sec-multiplier` vLLM could not use: the file cannot be read as it would be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--timed-trace-sec-multiplier {multiplier:?} is not a positive number")]
pub struct MultiplierError {
    /// The multiplier as written in the argv.
    pub multiplier: String,
}

/// Reads a `timed_trace` file pushed in chunks of any size, as vLLM will read it.
pub struct TimedTraceReader<'p> {
    multiplier: Decimal,
    chunk: u64,
    expected: Option<Expected<'p>>,
    carry: Vec<u8>,
    hasher: Sha256,
    out: ReadBack,
    error: Option<TimedTraceError>,
}

/// The shape loadproof writes; anything else goes through the slow, field-naming path.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FastLine {
    timestamp: u64,
    input_length: u32,
    output_length: u32,
    hash_ids: Vec<u64>,
}

/// One parsed line.
struct Line {
    arrival_ns: i64,
    input: u32,
    output: u32,
    ids: Vec<u64>,
}

impl<'p> TimedTraceReader<'p> {
    /// A reader interpreting timestamps with `multiplier` (the argv's
    /// `--timed-trace-sec-multiplier`) and checking tiling against `chunk`.
    pub fn new(multiplier: &str, chunk: u32) -> Result<TimedTraceReader<'p>, MultiplierError> {
        let text = multiplier;
        let multiplier = Decimal::parse(text.as_bytes())
            .ok()
            .filter(|d| !d.is_negative() && !d.is_zero())
            .ok_or_else(|| MultiplierError {
                multiplier: text.to_owned(),
            })?;
        Ok(TimedTraceReader {
            multiplier,
            chunk: u64::from(chunk),
            expected: None,
            carry: Vec::new(),
            hasher: Sha256::new(),
            out: ReadBack::default(),
            error: None,
        })
    }

    /// Also compares every line with `trace`'s rows and `blocks`' ids.
    pub fn expecting(
        mut self,
        trace: &'p Trace,
        blocks: impl Iterator<Item = RowBlocks<'p>> + 'p,
    ) -> TimedTraceReader<'p> {
        self.expected = Some(Expected {
            trace,
            blocks: Box::new(blocks),
        });
        self
    }

    /// Feeds the next bytes of the file.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.hasher.update(bytes);
        self.out.bytes += bytes.len() as u64;
        if self.error.is_some() {
            return;
        }
        while let Some(pos) = memchr::memchr(b'\n', bytes) {
            let (head, rest) = bytes.split_at(pos);
            bytes = rest.get(1..).unwrap_or_default();
            // The limit applies to whole lines, however the bytes were pushed.
            if self.carry.len() + head.len() > MAX_LINE_BYTES {
                return self.fail(None, format!("line longer than {MAX_LINE_BYTES} bytes"));
            }
            if self.carry.is_empty() {
                self.line(head);
            } else {
                let mut line = std::mem::take(&mut self.carry);
                line.extend_from_slice(head);
                self.line(&line);
            }
            if self.error.is_some() {
                return;
            }
        }
        if self.carry.len() + bytes.len() > MAX_LINE_BYTES {
            return self.fail(None, format!("line longer than {MAX_LINE_BYTES} bytes"));
        }
        self.carry.extend_from_slice(bytes);
    }

    /// Ends the file; the final line may lack its newline.
    pub fn finish(mut self) -> Result<ReadBack, TimedTraceError> {
        self.out.sha256 = crate::trace::hex(&self.hasher.finalize_reset());
        if self.error.is_none() && !self.carry.is_empty() {
            let line = std::mem::take(&mut self.carry);
            self.line(&line);
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        if let Some(exp) = &mut self.expected {
            let missing = exp.trace.len() as u64 - self.out.lines.min(exp.trace.len() as u64);
            if missing > 0 {
                self.out.rows_differing += missing;
                let line = self.out.lines + 1;
                self.out
                    .first_difference
                    .get_or_insert_with(|| RowDifference {
                        line,
                        field: "line".to_owned(),
                        planned: format!("{missing} more rows"),
                        file: "end of file".to_owned(),
                    });
            }
        }
        Ok(self.out)
    }

    fn fail(&mut self, field: Option<&'static str>, detail: String) {
        self.error.get_or_insert(TimedTraceError {
            line: self.out.lines + 1,
            field,
            detail,
        });
    }

    fn line(&mut self, raw: &[u8]) {
        let text = raw.trim_ascii();
        if text.is_empty() {
            return self.fail(
                None,
                "blank line: vLLM's reader calls json.loads on every line and fails here"
                    .to_owned(),
            );
        }
        // The shape loadproof writes parses without an allocation per field; anything else
        // (other spacing, key order, extra fields, errors) goes through serde and names the field.
        let parsed = match exact_shape(text) {
            Some(fast) => self.fast(fast),
            None => match serde_json::from_slice::<FastLine>(text) {
                Ok(fast) => self.fast(fast),
                Err(_) => self.slow(text),
            },
        };
        match parsed {
            Ok(line) => self.record(line),
            Err((field, detail)) => self.fail(field, detail),
        }
    }

    fn arrival(&self, ts: Decimal, shown: &dyn std::fmt::Display) -> Result<i64, String> {
        ts.checked_mul(self.multiplier)
            .and_then(|d| d.scaled_i64(9).ok())
            .ok_or_else(|| format!("{shown} × the multiplier does not fit in nanoseconds"))
    }

    fn fast(&self, l: FastLine) -> Result<Line, (Option<&'static str>, String)> {
        let ts = Decimal::from_u64(l.timestamp);
        let arrival_ns = self
            .arrival(ts, &l.timestamp)
            .map_err(|e| (Some("timestamp"), e))?;
        Ok(Line {
            arrival_ns,
            input: l.input_length,
            output: l.output_length,
            ids: l.hash_ids,
        })
    }

    fn slow(&mut self, text: &[u8]) -> Result<Line, (Option<&'static str>, String)> {
        let map: Map<String, Value> =
            serde_json::from_slice(text).map_err(|e| (None, format!("not a JSON object: {e}")))?;
        let ts = match map.get("timestamp") {
            Some(Value::Number(n)) => n,
            Some(_) => return Err((Some("timestamp"), "not a JSON number".to_owned())),
            None => {
                return Err((
                    Some("timestamp"),
                    "absent: vLLM raises ValueError".to_owned(),
                ));
            }
        };
        let decimal = Decimal::parse(ts.to_string().as_bytes())
            .ok()
            .filter(|d| !d.is_negative())
            .ok_or_else(|| {
                (
                    Some("timestamp"),
                    format!("{ts} is negative or unreadable: vLLM sends such a request at once"),
                )
            })?;
        let arrival_ns = self
            .arrival(decimal, ts)
            .map_err(|e| (Some("timestamp"), e))?;
        let input = whole(&map, "input_length")?;
        let output = whole(&map, "output_length")?;
        let ids = match map.get("hash_ids") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(Value::as_u64)
                .collect::<Option<Vec<u64>>>()
                .ok_or((
                    Some("hash_ids"),
                    "ids must be non-negative integers".to_owned(),
                ))?,
            Some(_) => return Err((Some("hash_ids"), "not a list".to_owned())),
        };
        for key in map.keys() {
            if !matches!(
                key.as_str(),
                "timestamp" | "input_length" | "output_length" | "hash_ids"
            ) {
                self.out.unknown_fields.insert(key.clone());
            }
        }
        Ok(Line {
            arrival_ns,
            input,
            output,
            ids,
        })
    }

    fn record(&mut self, l: Line) {
        let line_no = self.out.lines + 1;
        self.out.ids += l.ids.len() as u64;
        if (l.ids.len() as u64).saturating_mul(self.chunk) < u64::from(l.input) {
            self.out.short_rows += 1;
            self.out.first_short_line.get_or_insert(line_no);
        }
        if let Some(exp) = &mut self.expected {
            let idx = self.out.lines as usize;
            let req = exp.trace.requests();
            let planned = req
                .arrival_ns
                .get(idx)
                .zip(req.input_tokens.get(idx))
                .zip(req.output_tokens.get(idx))
                .zip(exp.blocks.next());
            let difference = match planned {
                None => Some(("line", "no such row".to_owned(), "a row".to_owned())),
                Some((((&t, &i), &o), blocks)) => {
                    if t != l.arrival_ns {
                        Some((
                            "timestamp",
                            format!("{t} ns"),
                            format!("{} ns", l.arrival_ns),
                        ))
                    } else if i != l.input {
                        Some(("input_length", i.to_string(), l.input.to_string()))
                    } else if o != l.output {
                        Some(("output_length", o.to_string(), l.output.to_string()))
                    } else if !blocks.ids().eq(l.ids.iter().copied()) {
                        Some((
                            "hash_ids",
                            format!("{} ids", blocks.len()),
                            format!("{} ids, not the planned ones", l.ids.len()),
                        ))
                    } else {
                        None
                    }
                }
            };
            if let Some((field, planned, file)) = difference {
                self.out.rows_differing += 1;
                self.out.first_difference.get_or_insert(RowDifference {
                    line: line_no,
                    field: field.to_owned(),
                    planned,
                    file,
                });
            }
        }
        self.out.lines += 1;
        self.out.arrival_ns.push(l.arrival_ns);
        self.out.input_tokens.push(l.input);
        self.out.output_tokens.push(l.output);
    }
}

/// Parses exactly `{"timestamp": T, "input_length": I, "output_length": O, "hash_ids": [A, B]}`
/// with JSON integers (no leading zeros, no sign) — what [`write_line`] writes — or `None`.
fn exact_shape(line: &[u8]) -> Option<FastLine> {
    fn digits(s: &mut &[u8]) -> Option<u64> {
        let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
        let (num, rest) = s.split_at(n);
        if n == 0 || (n > 1 && num.first() == Some(&b'0')) {
            return None;
        }
        let mut v: u64 = 0;
        for &b in num {
            v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        }
        *s = rest;
        Some(v)
    }
    fn lit(s: &mut &[u8], l: &[u8]) -> Option<()> {
        *s = s.strip_prefix(l)?;
        Some(())
    }
    let mut rest = line;
    let s = &mut rest;
    lit(s, b"{\"timestamp\": ")?;
    let timestamp = digits(s)?;
    lit(s, b", \"input_length\": ")?;
    let input_length = u32::try_from(digits(s)?).ok()?;
    lit(s, b", \"output_length\": ")?;
    let output_length = u32::try_from(digits(s)?).ok()?;
    lit(s, b", \"hash_ids\": [")?;
    let mut hash_ids = Vec::new();
    if s.first() != Some(&b']') {
        hash_ids.push(digits(s)?);
        while lit(s, b", ").is_some() {
            hash_ids.push(digits(s)?);
        }
    }
    lit(s, b"]}")?;
    s.is_empty().then_some(FastLine {
        timestamp,
        input_length,
        output_length,
        hash_ids,
    })
}

/// A whole, non-negative 32-bit count: what vLLM's `random.choices(k=…)` and `max_tokens` take.
fn whole(
    map: &Map<String, Value>,
    field: &'static str,
) -> Result<u32, (Option<&'static str>, String)> {
    match map.get(field) {
        None => Err((Some(field), "absent: vLLM raises ValueError".to_owned())),
        Some(Value::Number(n)) => as_u32(n).ok_or_else(|| {
            (
                Some(field),
                format!("{n} is not a whole token count vLLM can use"),
            )
        }),
        Some(_) => Err((Some(field), "not a JSON integer".to_owned())),
    }
}

fn as_u32(n: &Number) -> Option<u32> {
    n.as_u64().and_then(|v| u32::try_from(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], multiplier: &str, chunk: u32) -> Result<ReadBack, TimedTraceError> {
        let mut r = TimedTraceReader::new(multiplier, chunk).unwrap();
        for piece in bytes.chunks(7) {
            r.push(piece);
        }
        r.finish()
    }

    #[test]
    fn written_lines_read_back_exactly() {
        let mut out = Vec::new();
        write_line(&mut out, 129, 164, 32, [1000u64, 1001].into_iter());
        write_line(&mut out, 0, 1, 1, std::iter::empty());
        assert_eq!(
            out,
            b"{\"timestamp\": 129, \"input_length\": 164, \"output_length\": 32, \"hash_ids\": [1000, 1001]}\n{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": []}\n"
        );
        let back = read(&out, "0.001", 16).unwrap();
        assert_eq!(back.arrival_ns, vec![129_000_000, 0]);
        assert_eq!(back.input_tokens, vec![164, 1]);
        assert_eq!(back.short_rows, 2);
        assert_eq!(back.first_short_line, Some(1));
    }

    #[test]
    fn a_blank_line_is_an_error_as_in_vllm() {
        let err = read(
            b"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n\n",
            "1",
            16,
        )
        .unwrap_err();
        assert_eq!(err.line, 2);
    }

    #[test]
    fn fields_are_named_in_errors() {
        let err = read(
            b"{\"timestamp\": 0, \"input_length\": 1.5, \"output_length\": 1}\n",
            "1",
            16,
        )
        .unwrap_err();
        assert_eq!((err.line, err.field), (1, Some("input_length")));
        let err = read(b"{\"input_length\": 1, \"output_length\": 1}", "1", 16).unwrap_err();
        assert_eq!(err.field, Some("timestamp"));
    }

    #[test]
    fn decimal_timestamps_and_extra_fields_are_read_exactly() {
        let back = read(
            b"{\"timestamp\": 1.5, \"input_length\": 4, \"output_length\": 2, \"hash_ids\": [3], \"x\": 1}",
            "0.001",
            16,
        )
        .unwrap();
        assert_eq!(back.arrival_ns, vec![1_500_000]);
        assert!(back.unknown_fields.contains("x"));
    }

    proptest::proptest! {
        /// The byte parser and serde agree on every line, ours or not.
        #[test]
        fn the_exact_shape_parser_agrees_with_serde(
            t in 0u64.., i in 0u32.., o in 0u32.., ids in proptest::collection::vec(0u64.., 0..5),
            junk in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
            cut in 0usize..120,
        ) {
            let mut line = Vec::new();
            write_line(&mut line, i64::try_from(t >> 1).unwrap(), i, o, ids.iter().copied());
            line.pop();
            let fast = exact_shape(&line).map(|f| (f.timestamp, f.input_length, f.output_length, f.hash_ids));
            let serde = serde_json::from_slice::<FastLine>(&line).ok().map(|f| (f.timestamp, f.input_length, f.output_length, f.hash_ids));
            proptest::prop_assert!(fast.is_some());
            proptest::prop_assert_eq!(&fast, &serde);
            // Damaged lines: the byte parser never accepts what serde rejects, nor disagrees.
            let mut damaged = line.clone();
            let at = cut.min(damaged.len());
            damaged.splice(at..at, junk);
            if let Some(f) = exact_shape(&damaged) {
                let s = serde_json::from_slice::<FastLine>(&damaged).ok();
                proptest::prop_assert_eq!(Some((f.timestamp, f.input_length, f.output_length, f.hash_ids)), s.map(|f| (f.timestamp, f.input_length, f.output_length, f.hash_ids)));
            }
        }
    }

    #[test]
    fn leading_zeros_are_not_json() {
        assert!(
            exact_shape(
                b"{\"timestamp\": 01, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": []}"
            )
            .is_none()
        );
        assert!(exact_shape(b"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0, 10]}").is_some());
    }

    #[test]
    fn the_coarsest_exact_unit_is_chosen() {
        assert_eq!(TimeUnit::coarsest_exact(&[0, 3_000_000_000]), TimeUnit::S);
        assert_eq!(TimeUnit::coarsest_exact(&[0, 129_000_000]), TimeUnit::Ms);
        assert_eq!(TimeUnit::coarsest_exact(&[0, 100]), TimeUnit::Ns);
    }
}
