//! `#` lines: the `# HELP` and `# TYPE` declarations, and the table of families they declare.
//!
//! Read in the reader's first pass, before any sample, which is why a declaration may follow
//! the samples it types. Any other comment is skipped.

use std::collections::HashMap;

use super::error::{ExpositionError, ExpositionErrorKind};
use super::lines::{Cursor, NAME_CHAR, NAME_START, is_blank, snippet};
use super::metric_type::MetricType;

/// A `# HELP` or `# TYPE` line.
pub(super) enum DeclLine<'a> {
    /// Name and text, still escaped: unescaped only for a family that is kept.
    Help(&'a str, &'a str),
    Type(&'a str, MetricType),
}

/// Reads a `#` line (the cursor just past the `#`): `Some` for HELP/TYPE, `None` for any other
/// comment.
pub(super) fn parse_comment<'a>(
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
pub(super) fn unescape_help(text: &str) -> String {
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
pub(super) struct Decl<'a> {
    pub(super) name: &'a str,
    pub(super) kind: Option<(MetricType, usize)>,
    pub(super) help: Option<(&'a str, usize)>,
    pub(super) first_line: usize,
}

pub(super) fn declare<'a>(
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

#[cfg(test)]
mod tests {
    use super::super::MetricType;
    use super::super::test_support::*;

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
}
