//! [`Rescan`]: [`scan`] over a series of scrapes of one URL, reading only what changed.
//!
//! Consecutive `/metrics` bodies of one server are the same lines in the same order with some
//! values moved: a ten-minute run is thousands of 50 KB bodies that differ in a few hundred
//! bytes each. A full scan checks every line of every body; most of that work repeats the
//! last body's. A `Rescan` keeps the last body it read and its result, and when the next body
//! has the same lines except some samples' values (and timestamps) — same name, same label
//! set, same position — it checks just those lines and updates the values in place.
//!
//! **Same answer as [`scan`], always.** Everything a scan decides beyond one line's value — the
//! declarations, which family a sample belongs to, a type conflict, a repeated label or
//! series, a bucket's `le` — depends only on comments, names and label sets, which the fast
//! path requires unchanged byte for byte; a value and a timestamp are checked per line, as the
//! scan checks them. Any other difference (a line added or removed, a comment, a new series, a
//! line that does not read) falls back to a full scan, which also gives the exact error.

use std::collections::HashMap;

use super::error::ExpositionError;
use super::exposition::Exposition;
use super::lines::Cursor;
use super::read::scan;
use super::samples::{Scratch, sample_labels, sample_name, sample_value};

/// A [`scan`] for `sample_names` that remembers its last body (see the module docs).
#[derive(Debug)]
pub struct Rescan {
    names: Vec<String>,
    last: Option<Last>,
    /// Line cuts of the body being read (kept to reuse the allocation).
    cuts: Vec<(usize, usize)>,
    empty: Exposition,
    /// Bodies read by the fast path.
    updates: u64,
}

#[derive(Debug)]
struct Last {
    body: Vec<u8>,
    /// Each line as `start..end` of `body`, without its `\n`.
    cuts: Vec<(usize, usize)>,
    read: Exposition,
    /// 0-based line → (family, sample) of each kept sample.
    kept: HashMap<usize, (usize, usize)>,
}

/// Each line of `body` as `start..end`, without its `\n`; a last line without one counts.
fn cut_lines(body: &[u8], out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut start = 0usize;
    for nl in memchr::memchr_iter(b'\n', body) {
        out.push((start, nl));
        start = nl + 1;
    }
    if start < body.len() {
        out.push((start, body.len()));
    }
}

fn line_of(body: &[u8], (start, end): (usize, usize)) -> &[u8] {
    body.get(start..end).unwrap_or_default()
}

/// A sample line's name and label set as written (trailing blanks cut), and its value and
/// timestamp; `None` for a comment, a blank line, or a line that does not read.
fn sample_line(raw: &[u8]) -> Option<(&[u8], super::value::SampleValue, Option<i64>)> {
    let text = std::str::from_utf8(raw).ok()?;
    let text = text.strip_suffix('\r').unwrap_or(text);
    let mut c = Cursor::new(text);
    c.skip_blanks();
    if c.peek()? == b'#' {
        return None;
    }
    let start = c.pos;
    let name = sample_name(&mut c, 0).ok()?;
    let mut labels: Scratch<'_> = Vec::new();
    sample_labels(&mut c, name, 0, &mut labels, true).ok()?;
    let series = text.get(start..c.pos)?.trim_end_matches([' ', '\t']);
    let (value, timestamp) = sample_value(&mut c, name, 0).ok()?;
    Some((series.as_bytes(), value, timestamp))
}

impl Rescan {
    /// A rescan keeping the families of `sample_names` (as [`scan`] does).
    pub fn new(sample_names: &[&str]) -> Rescan {
        Rescan {
            names: sample_names.iter().map(|n| (*n).to_owned()).collect(),
            last: None,
            cuts: Vec::new(),
            empty: Exposition {
                families: Vec::new(),
                by_name: Vec::new(),
            },
            updates: 0,
        }
    }

    /// What [`scan`] gives for `body` and the names given to [`Rescan::new`].
    pub fn scan(&mut self, body: &[u8]) -> Result<&Exposition, ExpositionError> {
        if !self.update(body) {
            self.last = None;
            let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
            let read = scan(body, &names)?;
            let mut kept = HashMap::new();
            for (f, family) in read.families.iter().enumerate() {
                for (i, sample) in family.samples.iter().enumerate() {
                    kept.insert(sample.line.saturating_sub(1), (f, i));
                }
            }
            let mut cuts = Vec::new();
            cut_lines(body, &mut cuts);
            self.last = Some(Last {
                body: body.to_vec(),
                cuts,
                read,
                kept,
            });
        }
        match &self.last {
            Some(last) => Ok(&last.read),
            // Both paths above leave a result.
            None => scan(&[], &[]).map(|_| &self.empty),
        }
    }

    /// The fast path: true when `body` is the last body with only sample values changed, and
    /// the remembered result now describes it.
    fn update(&mut self, body: &[u8]) -> bool {
        let Some(last) = self.last.as_mut() else {
            return false;
        };
        cut_lines(body, &mut self.cuts);
        if self.cuts.len() != last.cuts.len() {
            return false;
        }
        let mut changes = Vec::new();
        for (j, (&new, &old)) in self.cuts.iter().zip(&last.cuts).enumerate() {
            let (new, old) = (line_of(body, new), line_of(&last.body, old));
            if new == old {
                continue;
            }
            let (Some((series, value, timestamp)), Some((old_series, _, _))) =
                (sample_line(new), sample_line(old))
            else {
                return false;
            };
            if series != old_series {
                return false;
            }
            changes.push((j, value, timestamp));
        }
        for (j, value, timestamp) in changes {
            if let Some(&(f, i)) = last.kept.get(&j)
                && let Some(sample) = last
                    .read
                    .families
                    .get_mut(f)
                    .and_then(|family| family.samples.get_mut(i))
            {
                sample.value = value;
                sample.timestamp_ms = timestamp;
            }
        }
        last.body.clear();
        last.body.extend_from_slice(body);
        std::mem::swap(&mut last.cuts, &mut self.cuts);
        self.updates += 1;
        true
    }

    /// Bodies read by the fast path so far (the rest were scanned in full).
    pub fn updates(&self) -> u64 {
        self.updates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NAMES: [&str; 3] = ["a_total", "h_bucket", "g"];
    const BODY: &str = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 5\na_total{x=\"2\"} 6\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3.5\nh_count 2\n# TYPE other gauge\nother 9\ng 1 1700000000000\n";

    fn same(r: &mut Rescan, body: &str) {
        let want = scan(body.as_bytes(), &NAMES);
        let got = r.scan(body.as_bytes()).cloned();
        assert_eq!(got, want, "{body}");
    }

    #[test]
    fn a_body_with_moved_values_reads_as_a_full_scan_does() {
        let mut r = Rescan::new(&NAMES);
        same(&mut r, BODY);
        same(
            &mut r,
            &BODY.replace("} 5", "} 7").replace("other 9", "other 10"),
        );
        same(&mut r, &BODY.replace("g 1 17", "g 2 18"));
        same(&mut r, &BODY.replace("h_count 2", "h_count 2.0"));
        assert_eq!(r.updates(), 3);
    }

    /// Every value of a real vLLM scrape moved (as under load), line by line.
    #[test]
    fn a_real_vllm_scrape_with_every_value_moved_reads_as_a_full_scan_does() {
        let names = ["vllm:generation_tokens_total", "vllm:num_requests_running"];
        let text = std::str::from_utf8(super::super::test_support::CPU_AFTER).unwrap();
        let mut r = Rescan::new(&names);
        assert_eq!(
            r.scan(text.as_bytes()).cloned(),
            scan(text.as_bytes(), &names)
        );
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for step in 1..=3 {
            for line in lines.iter_mut().filter(|l| !l.starts_with('#')) {
                if let Some(cut) = line.rfind(' ') {
                    line.replace_range(cut + 1.., &format!("{step}.5"));
                }
            }
            let body = lines.join("\n") + "\n";
            assert_eq!(
                r.scan(body.as_bytes()).cloned(),
                scan(body.as_bytes(), &names)
            );
        }
        assert_eq!(r.updates(), 3);
    }

    #[test]
    fn any_other_change_is_read_in_full_with_the_full_error() {
        let mut r = Rescan::new(&NAMES);
        same(&mut r, BODY);
        // A value that does not read, a changed label, a duplicated series, a comment.
        same(&mut r, &BODY.replace("} 5", "} five"));
        same(&mut r, BODY);
        same(&mut r, &BODY.replace("x=\"2\"", "x=\"1\""));
        same(
            &mut r,
            &BODY.replace("# HELP a_total A.", "# HELP a_total B."),
        );
        same(
            &mut r,
            &BODY.replace("# TYPE other gauge", "# TYPE other counter"),
        );
        same(&mut r, &BODY.replace("other 9", "h_bucket{le=\"x\"} 9"));
        same(&mut r, &BODY.replace("le=\"1\"", "le=\"2\""));
        same(&mut r, &format!("{BODY}extra 1\n"));
        same(&mut r, &BODY.replace("g 1 1700000000000", "g 1 17x"));
        same(&mut r, BODY);
    }

    proptest! {
        #[test]
        fn a_rescan_is_a_scan(edits in proptest::collection::vec((0usize..12, "[ -~]{0,12}"), 0..6)) {
            let mut r = Rescan::new(&NAMES);
            same(&mut r, BODY);
            let mut lines: Vec<String> = BODY.lines().map(str::to_owned).collect();
            for (at, text) in edits {
                if let Some(line) = lines.get_mut(at) {
                    // Keep the series, change what follows it (or the whole line).
                    match line.rfind(' ') {
                        Some(cut) if at % 2 == 0 => line.replace_range(cut + 1.., &text),
                        _ => *line = text,
                    }
                }
                let body = lines.join("\n") + "\n";
                same(&mut r, &body);
            }
        }
    }
}
