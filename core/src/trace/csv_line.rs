//! Splitting one CSV line into cells.
//!
//! Trace CSVs are line-oriented: one record per physical line, so line numbers in errors are
//! exact and a blank line can be told apart from a row. Quoted cells (RFC 4180, `""` for a
//! quote) are honoured within a line; a quote left open at the end of the line makes the row
//! malformed rather than silently swallowing the next one.

use super::DropReason;
use super::row::Defect;
use super::swar::equal;

/// Cells of one line, borrowed from the line when it has no quotes.
#[derive(Debug, Default)]
pub(crate) struct Cells {
    ends: Vec<(usize, usize)>,
    scratch: Vec<u8>,
    quoted: bool,
}

/// The line had a quote that was never closed, or text after a closing quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadQuoting;

impl Cells {
    /// Splits `line` (without its line terminator) on commas.
    pub(crate) fn split(&mut self, line: &[u8]) -> Result<(), BadQuoting> {
        self.ends.clear();
        if self.split_unquoted(line) {
            self.quoted = false;
            return Ok(());
        }
        self.ends.clear();
        self.quoted = true;
        self.scratch.clear();
        let mut iter = line.iter().copied().peekable();
        loop {
            let start = self.scratch.len();
            // Leading spaces before a quote are allowed and dropped.
            while iter.peek() == Some(&b' ') {
                iter.next();
            }
            if iter.peek() == Some(&b'"') {
                iter.next();
                loop {
                    match iter.next() {
                        None => return Err(BadQuoting),
                        Some(b'"') => {
                            if iter.peek() == Some(&b'"') {
                                iter.next();
                                self.scratch.push(b'"');
                            } else {
                                break;
                            }
                        }
                        Some(b) => self.scratch.push(b),
                    }
                }
                while iter.peek() == Some(&b' ') {
                    iter.next();
                }
                match iter.next() {
                    None => {
                        self.ends.push((start, self.scratch.len()));
                        return Ok(());
                    }
                    Some(b',') => self.ends.push((start, self.scratch.len())),
                    Some(_) => return Err(BadQuoting),
                }
            } else {
                loop {
                    match iter.next() {
                        None => {
                            self.ends.push((start, self.scratch.len()));
                            return Ok(());
                        }
                        Some(b',') => {
                            self.ends.push((start, self.scratch.len()));
                            break;
                        }
                        Some(b'"') => return Err(BadQuoting),
                        Some(b) => self.scratch.push(b),
                    }
                }
            }
        }
    }

    /// Splits a line without quotes on its commas; false (cells unset) at the first quote.
    ///
    /// Trace lines are short (tens of bytes): a SIMD search per comma costs more in setup
    /// than it skips, so eight bytes are tested at a time in a `u64` (SWAR: a byte equal to
    /// `,` or `"` sets its top bit in the mask, exactly, with no false positives), which runs
    /// as well in wasm32 as natively.
    fn split_unquoted(&mut self, line: &[u8]) -> bool {
        let mut start = 0;
        let mut chunks = line.chunks_exact(8);
        let mut base = 0;
        for chunk in &mut chunks {
            let mut word_bytes = [0u8; 8];
            word_bytes.copy_from_slice(chunk);
            let word = u64::from_le_bytes(word_bytes);
            if equal(word, b'"') != 0 {
                return false;
            }
            let mut commas = equal(word, b',');
            while commas != 0 {
                let idx = base + (commas.trailing_zeros() / 8) as usize;
                self.ends.push((start, idx));
                start = idx + 1;
                commas &= commas - 1;
            }
            base += 8;
        }
        for (i, &b) in chunks.remainder().iter().enumerate() {
            if b == b',' {
                self.ends.push((start, base + i));
                start = base + i + 1;
            } else if b == b'"' {
                return false;
            }
        }
        self.ends.push((start, line.len()));
        true
    }

    /// Splits `line` as a data row of a header with `n_cols` columns: a quoting error or a
    /// different number of cells is a malformed row.
    pub(crate) fn split_row(&mut self, line: &[u8], n_cols: usize) -> Result<(), Defect> {
        if self.split(line).is_err() {
            return Err(Defect::new(
                DropReason::MalformedRow,
                None,
                "unterminated or misplaced quote",
            ));
        }
        if self.len() != n_cols {
            return Err(Defect::new(
                DropReason::MalformedRow,
                None,
                format!("{} cells, the header has {n_cols}", self.len()),
            ));
        }
        Ok(())
    }

    /// Number of cells.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Cell `idx`, untrimmed; empty when out of range.
    pub(crate) fn get<'a>(&'a self, line: &'a [u8], idx: usize) -> &'a [u8] {
        let Some(&(start, end)) = self.ends.get(idx) else {
            return &[];
        };
        let source = if self.quoted { &self.scratch } else { line };
        source.get(start..end).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(line: &str) -> Result<Vec<String>, BadQuoting> {
        let mut c = Cells::default();
        c.split(line.as_bytes())?;
        Ok((0..c.len())
            .map(|i| String::from_utf8_lossy(c.get(line.as_bytes(), i)).into_owned())
            .collect())
    }

    #[test]
    fn plain_cells_split_on_commas() {
        assert_eq!(cells("a,b,,c").unwrap(), ["a", "b", "", "c"]);
        assert_eq!(cells("").unwrap(), [""]);
        assert_eq!(cells("a,").unwrap(), ["a", ""]);
    }

    #[test]
    fn quoted_cells_keep_commas_and_unescape_quotes() {
        assert_eq!(
            cells(r#""a,b","say ""hi""",c"#).unwrap(),
            ["a,b", r#"say "hi""#, "c"]
        );
        assert_eq!(cells(r#"x,"""#).unwrap(), ["x", ""]);
    }

    #[test]
    fn an_open_quote_makes_the_line_malformed() {
        assert_eq!(cells(r#"a,"b"#), Err(BadQuoting));
        assert_eq!(cells(r#"a,"b"c"#), Err(BadQuoting));
        assert_eq!(cells(r#"a,b"c"#), Err(BadQuoting));
    }

    /// The byte-at-a-time reading [`Cells::split_unquoted`] must equal.
    fn scalar_split(line: &[u8]) -> Option<Vec<(usize, usize)>> {
        let mut ends = Vec::new();
        let mut start = 0;
        for (idx, &b) in line.iter().enumerate() {
            match b {
                b',' => {
                    ends.push((start, idx));
                    start = idx + 1;
                }
                b'"' => return None,
                _ => {}
            }
        }
        ends.push((start, line.len()));
        Some(ends)
    }

    proptest::proptest! {
        #[test]
        fn eight_bytes_at_a_time_split_as_one_at_a_time(line in proptest::collection::vec(proptest::prop_oneof![
            proptest::strategy::Just(b','), proptest::strategy::Just(b'"'), proptest::prelude::any::<u8>()
        ], 0..70)) {
            let mut c = Cells::default();
            let split = c.split_unquoted(&line).then(|| c.ends.clone());
            proptest::prop_assert_eq!(split, scalar_split(&line));
        }

        #[test]
        fn split_never_panics_and_stays_in_bounds(line in ".{0,80}") {
            let mut c = Cells::default();
            if c.split(line.as_bytes()).is_ok() {
                for i in 0..c.len() + 1 {
                    let _ = c.get(line.as_bytes(), i);
                }
            }
        }
    }
}
