//! Splitting one CSV line into cells.
//!
//! Trace CSVs are line-oriented: one record per physical line, so line numbers in errors are
//! exact and a blank line can be told apart from a row. Quoted cells (RFC 4180, `""` for a
//! quote) are honoured within a line; a quote left open at the end of the line makes the row
//! malformed rather than silently swallowing the next one.

use super::DropReason;
use super::row::Defect;

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
        // Trace lines are short (tens of bytes): one scalar pass beats a SIMD search per
        // comma, whose setup costs more than the bytes it skips.
        let mut start = 0;
        let mut saw_quote = false;
        for (idx, &b) in line.iter().enumerate() {
            if b == b',' {
                self.ends.push((start, idx));
                start = idx + 1;
            } else if b == b'"' {
                saw_quote = true;
                break;
            }
        }
        if !saw_quote {
            self.quoted = false;
            self.ends.push((start, line.len()));
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

    proptest::proptest! {
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
