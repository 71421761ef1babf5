//! The layer under every line parser: line splitting, byte classes, a cursor, snippets.
//!
//! The text is checked to be UTF-8 once, before any line is read; everything here cuts it after
//! ASCII bytes only, so the comment and sample parsers slice it without re-validating and
//! without a panic path.

/// Lines split on `\n`, with their 0-based index; a last line without `\n` counts.
pub(super) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
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
pub(super) const NAME_START: u8 = 2;
pub(super) const NAME_CHAR: u8 = 4;
pub(super) const LABEL_START: u8 = 8;
pub(super) const LABEL_CHAR: u8 = 16;

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

pub(super) fn is_blank(b: u8) -> bool {
    class(b) & BLANK != 0
}

/// A position in one line. The input was checked to be UTF-8 once; every cut made here falls
/// after an ASCII byte or at the end, so slicing the `str` never fails in practice (and would
/// yield `""`, not a panic, if it did).
pub(super) struct Cursor<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(text: &'a str) -> Cursor<'a> {
        Cursor { text, pos: 0 }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    pub(super) fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    pub(super) fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or_default()
    }

    pub(super) fn skip_blanks(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.pos += 1;
        }
    }

    /// Consumes `b` when it is next.
    pub(super) fn eat(&mut self, b: u8) -> bool {
        let next = self.peek() == Some(b);
        if next {
            self.pos += 1;
        }
        next
    }

    /// The run of bytes of class `more`, if the first is of class `first` (else `""`).
    pub(super) fn take(&mut self, first: u8, more: u8) -> &'a str {
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
    pub(super) fn token(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|b| !is_blank(b)) {
            self.pos += 1;
        }
        self.slice(start, self.pos)
    }
}

/// Input text for a message: at most 40 characters.
pub(super) fn snippet(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars.by_ref().take(40).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;

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
}
