//! Human-readable rendering of core's reports. Numbers print at full precision: a reader must
//! be able to find the same value in `--json`.

use std::io::{self, Write};
use std::path::Path;

use loadproof_core::InspectReport;
use loadproof_core::plan::{Fidelity, PLAN_FILE, PlanDoc};
use loadproof_core::trace::SegmentReport;

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "undefined".to_owned(), |x| x.to_string())
}

/// RAGPulse's segments: how each one's ids recur across requests (what a prefix cache could
/// reuse), and the tokens the trace leaves undescribed.
fn segments_text(seg: &SegmentReport, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "  segments (ids seen again in a later request could be served from a prefix cache):"
    )?;
    writeln!(
        out,
        "    {:<14} {:>7} {:>8} {:>9} {:>14} {:>11} {:>16}",
        "segment", "rows", "ids", "distinct", "repeated", "tokens", "repeated tokens"
    )?;
    let tokens = |v: Option<u64>| v.map_or_else(|| "unknown".to_owned(), |t| t.to_string());
    for s in &seg.segments {
        let share = if s.ids > 0 {
            format!(" ({:.0}%)", 100.0 * s.repeated_ids as f64 / s.ids as f64)
        } else {
            String::new()
        };
        writeln!(
            out,
            "    {:<14} {:>7} {:>8} {:>9} {:>14} {:>11} {:>16}",
            s.segment,
            s.rows,
            s.ids,
            s.distinct_ids,
            format!("{}{share}", s.repeated_ids),
            tokens(s.tokens),
            tokens(s.repeated_tokens)
        )?;
    }
    match seg.undescribed_tokens {
        Some([lo, mid, hi]) => writeln!(
            out,
            "    per prompt, input_length minus its segments: min {lo}, median {mid}, max {hi} tokens the trace does not describe"
        )?,
        None => writeln!(
            out,
            "    token lengths unknown: the companion files were not beside the trace"
        )?,
    }
    Ok(())
}

/// The text report of `loadproof trace inspect`.
pub fn inspect_text(r: &InspectReport, out: &mut impl Write) -> io::Result<()> {
    let m = &r.meta;
    writeln!(out, "{}  [{}: {}]", r.source, m.format, m.layout)?;
    writeln!(out, "  sha256   {}  ({} bytes)", m.source_sha256, m.bytes)?;
    if let Some(sha) = &m.schema_sha256 {
        writeln!(
            out,
            "  mapping  sha256 {sha}  (the trace as read = these bytes through it)"
        )?;
    }
    if let Some(c) = &m.compression {
        // The content's digest above is what a plan names; this one finds the file as given.
        writeln!(
            out,
            "  file     {}  ({} bytes, {}; the sha256 above is of its decompressed content)",
            c.file_sha256, c.file_bytes, c.codec
        )?;
    }
    writeln!(
        out,
        "  rows     {} read = {} emitted + {} dropped + {} filtered{}",
        m.rows_read,
        m.emitted,
        r.dropped_total,
        r.filtered_total,
        if m.blank_lines > 0 {
            format!("  ({} blank lines skipped)", m.blank_lines)
        } else {
            String::new()
        }
    )?;
    if !m.dropped.is_empty() {
        writeln!(out, "  dropped (defects in the data):")?;
        for (reason, count) in &m.dropped {
            writeln!(out, "    {:<24} {count}", reason.name())?;
            for ex in m.drop_examples.get(reason).into_iter().flatten() {
                writeln!(out, "      e.g. {ex}")?;
            }
        }
    }
    if !m.filtered.is_empty() {
        writeln!(out, "  filtered (at your request):")?;
        for (reason, count) in &m.filtered {
            writeln!(out, "    {:<24} {count}", reason.name())?;
        }
    }
    if let Some(seg) = &m.segments {
        segments_text(seg, out)?;
    }
    match (&r.regime, &r.regime_error) {
        (Some(g), _) => {
            writeln!(out, "  regime (window {} s):", g.window_s)?;
            writeln!(
                out,
                "    requests             {} over {} s",
                g.requests, g.span_s
            )?;
            writeln!(out, "    rate_rps             {}", opt(g.rate_rps))?;
            writeln!(
                out,
                "    burstiness (D)       {}  over {} windows",
                opt(g.burstiness),
                g.windows
            )?;
            let resolution = g.timestamp_resolution_s.map_or_else(
                || "undefined (one timestamp)".to_owned(),
                |r| format!("{r} s"),
            );
            writeln!(
                out,
                "    timestamp resolution {resolution}  ({} distinct timestamps in the source)",
                g.distinct_timestamps
            )?;
            writeln!(
                out,
                "    input tokens         p50 {}  p95 {}",
                g.input_tokens.p50, g.input_tokens.p95
            )?;
            writeln!(
                out,
                "    output tokens        p50 {}  p95 {}",
                g.output_tokens.p50, g.output_tokens.p95
            )?;
            writeln!(out, "    io_ratio             {}", g.io_ratio)?;
            if let Some(s) = g.session_share {
                writeln!(out, "    session share        {s}")?;
            }
            for w in &g.warnings {
                writeln!(out, "  warning: {w}")?;
            }
        }
        (None, Some(e)) => writeln!(out, "  regime: {e}")?,
        (None, None) => {}
    }
    for note in &m.notes {
        writeln!(out, "  note: {note}")?;
    }
    Ok(())
}

/// Quotes `arg` for a POSIX shell when it needs it.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:,=@+%".contains(&b));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

fn json_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The fidelity table: each statistic side by side, then the verdict.
pub fn fidelity_text(f: &Fidelity, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "  {:<17} {:>22} {:>22} {:>12}  result",
        "check", "source", "file", "statistic"
    )?;
    for c in &f.checks {
        writeln!(
            out,
            "  {:<17} {:>22} {:>22} {:>12}  {}",
            c.name,
            json_cell(&c.source),
            json_cell(&c.replay),
            c.statistic,
            if c.pass { "pass" } else { "FAIL" }
        )?;
    }
    if f.pass {
        writeln!(
            out,
            "PASS — every statistic is exactly 0: the file vLLM will read says what the trace says"
        )
    } else {
        writeln!(
            out,
            "FAIL — the file vLLM would read differs from the trace:"
        )?;
        for c in f.failures() {
            writeln!(out, "  * {}: {}", c.name, c.detail)?;
        }
        Ok(())
    }
}

/// The text summary of `loadproof plan`.
pub fn plan_text(doc: &PlanDoc, dir: &Path, out: &mut impl Write) -> io::Result<()> {
    let s = &doc.source;
    let t = &doc.timed_trace;
    let r = &doc.regime;
    writeln!(
        out,
        "plan      {}  ({PLAN_FILE}, {}{})",
        dir.display(),
        t.file,
        doc.sized_blocks
            .as_ref()
            .map(|b| format!(", {}", b.file))
            .unwrap_or_default()
    )?;
    writeln!(out, "source    {}  [{}: {}]", s.path, s.format, s.layout)?;
    writeln!(out, "          sha256 {}  ({} bytes)", s.sha256, s.bytes)?;
    let dropped: u64 = s.dropped.values().sum();
    let filtered: u64 = s.filtered.values().sum();
    let named = |m: Vec<(String, u64)>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(
        out,
        "          {} rows read = {} planned + {dropped} dropped{} + {filtered} filtered{}",
        s.rows_read,
        s.emitted,
        if dropped > 0 {
            format!(
                " ({})",
                named(s.dropped.iter().map(|(k, v)| (k.to_string(), *v)).collect())
            )
        } else {
            String::new()
        },
        if filtered > 0 {
            format!(
                " ({})",
                named(
                    s.filtered
                        .iter()
                        .map(|(k, v)| (k.to_string(), *v))
                        .collect()
                )
            )
        } else {
            String::new()
        },
    )?;
    writeln!(
        out,
        "replay    {} requests over {} s: rate {} req/s, burstiness D {} at {} s windows",
        r.requests,
        r.span_s,
        opt(r.rate_rps),
        opt(r.burstiness),
        r.window_s
    )?;
    writeln!(
        out,
        "          input p50 {} p95 {}, output p50 {} p95 {}; Σ input {} tokens, Σ output {}",
        r.input_tokens.p50,
        r.input_tokens.p95,
        r.output_tokens.p50,
        r.output_tokens.p95,
        t.input_tokens_total,
        t.output_tokens_total
    )?;
    writeln!(
        out,
        "file      {}  {} lines, {} bytes, sha256 {}",
        t.file, t.lines, t.bytes, t.sha256
    )?;
    writeln!(
        out,
        "          chunk {} tokens ({:?}); prefix {}",
        t.chunk_size,
        t.chunk_size_origin,
        if t.prefix_synthesized {
            format!(
                "SYNTHESIZED for {} of {} requests ({} fresh ids)",
                t.synthesized_rows, t.lines, t.synthesized_ids
            )
        } else {
            format!("from the source ({} ids)", t.source_ids)
        }
    )?;
    if let Some(b) = &doc.sized_blocks {
        writeln!(
            out,
            "blocks    {}  {} lines, {} blocks ({} distinct) of {} tokens, {} tokens undescribed, sha256 {}",
            b.file,
            b.lines,
            b.blocks,
            b.distinct_blocks,
            b.block_tokens,
            b.undescribed_tokens,
            b.sha256
        )?;
        writeln!(
            out,
            "          for --engine native: each prompt built block for block at the blocks' own lengths (the recorded sharing replayed)"
        )?;
    }
    for warning in &r.warnings {
        writeln!(out, "warning   {warning}")?;
    }
    for note in &doc.notes {
        writeln!(out, "note      {note}")?;
    }
    writeln!(out, "read-back ({} re-read from disk)", t.file)?;
    fidelity_text(&doc.fidelity, out)?;
    let b = &doc.bench;
    let env: Vec<String> = b.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let argv: Vec<String> = b.argv.iter().map(|a| shell_quote(a)).collect();
    writeln!(
        out,
        "run it    cd {} && {} {}",
        shell_quote(&dir.display().to_string()),
        env.join(" "),
        argv.join(" ")
    )?;
    if !b.placeholders.is_empty() {
        writeln!(
            out,
            "          fill in {} first (or give them to `plan`; `loadproof fire` fills them in); needs vLLM ≥ {}",
            b.placeholders.join(", "),
            b.min_vllm
        )?;
    }
    Ok(())
}

/// `s` with every control character (a newline, a carriage return, an escape sequence) written
/// as an escape: a value read from a receipt can print as one line of text, never as a forged
/// line or a terminal command that hides the verdict.
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(s.chars().flat_map(char::escape_default).collect())
}

/// A report (an audit, a comparison) with every string it carries passed through
/// [`escape_controls`], for a terminal: the JSON output keeps the exact values.
pub fn printable<T>(a: &T) -> T
where
    T: serde::Serialize + serde::de::DeserializeOwned + Clone,
{
    fn clean(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => {
                if let std::borrow::Cow::Owned(e) = escape_controls(s) {
                    *s = e;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(clean),
            serde_json::Value::Object(map) => map.values_mut().for_each(clean),
            _ => {}
        }
    }
    let Ok(mut v) = serde_json::to_value(a) else {
        return a.clone();
    };
    clean(&mut v);
    serde_json::from_value(v).unwrap_or_else(|_| a.clone())
}

#[cfg(test)]
mod control_tests {
    use super::*;

    #[test]
    fn a_rendering_control_characters_in_receipt_values_are_escaped() {
        let forged = "H100\n  + window  isolated: lease gate-lease-1 (spoofed line)\u{1b}[8m";
        let shown = escape_controls(forged);
        assert!(
            !shown.contains('\n') && !shown.contains('\u{1b}'),
            "{shown}"
        );
        assert!(shown.contains("H100\\n  + window"), "{shown}");
        assert_eq!(escape_controls("plain · ünïcode"), "plain · ünïcode");
    }
}
