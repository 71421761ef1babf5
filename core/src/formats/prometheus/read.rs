//! [`parse`] and [`scan`]: the two passes that turn a scrape's bytes into an [`Exposition`].
//!
//! Declarations first; then every sample, placed in its family (or skipped unallocated by a
//! scan); then the checks that need a family's samples: a histogram bucket's `le`, a repeated
//! series.

use std::collections::HashMap;

use super::comments::{Decl, declare, parse_comment, unescape_help};
use super::error::{ExpositionError, ExpositionErrorKind};
use super::exposition::{Exposition, Family, Sample, family_name_of};
use super::lines::{Cursor, lines, snippet};
use super::metric_type::{MetricType, Resolution, resolve};
use super::samples::{Scratch, sample_name, sample_rest};
use super::value::SampleValue;

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
///
/// [`counter_delta`]: super::counter_delta
pub fn scan(bytes: &[u8], sample_names: &[&str]) -> Result<Exposition, ExpositionError> {
    read(bytes, Some(sample_names))
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
    use std::cmp::Ordering;

    use super::super::test_support::*;
    use super::super::{counter_delta, histogram_delta};
    use super::*;
    use crate::decimal::Decimal;

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
