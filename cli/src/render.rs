//! Human-readable rendering of core's reports. Numbers print at full precision: a reader must
//! be able to find the same value in `--json`.

use std::io::{self, Write};

use loadproof_core::InspectReport;

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "undefined".to_owned(), |x| x.to_string())
}

/// The text report of `loadproof trace inspect`.
pub fn inspect_text(r: &InspectReport, out: &mut impl Write) -> io::Result<()> {
    let m = &r.meta;
    writeln!(out, "{}  [{}: {}]", r.source, m.format, m.layout)?;
    writeln!(out, "  sha256   {}  ({} bytes)", m.source_sha256, m.bytes)?;
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
