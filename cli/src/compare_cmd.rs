//! `loadproof receipt compare BASELINE TREATMENT`: two receipts audited by core and compared
//! by core (`loadproof_core::compare`), printed as a table or as `--json`.
//!
//! Exit codes: 0 comparable (one protocol, one subject apart from knobs, both qualified, two
//! files — still one observation per arm, which the output says); 1 not comparable (every
//! reason printed); 2 a file unreadable or not a receipt (the message names it).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use loadproof_core::audit::{self, Audit, Policy};
use loadproof_core::compare::{Comparison, MetricChange, Side, compare, metric_label};
use loadproof_core::receipt::{Receipt, sha256_hex};

use crate::args::CompareArgs;
use crate::input::{read_policy, read_receipt};

/// One side read from disk: the receipt, its audit, the file's digest and name.
struct Loaded {
    source: String,
    sha256: String,
    receipt: Receipt,
    audit: Audit,
}

impl Loaded {
    fn read(path: &Path, policy: &Policy) -> Result<Loaded> {
        let (bytes, receipt) = read_receipt(path)?;
        let audit = audit::audit_with(&receipt, policy);
        Ok(Loaded {
            source: path.display().to_string(),
            sha256: sha256_hex(&bytes),
            receipt,
            audit,
        })
    }

    fn side(&self) -> Side<'_> {
        Side {
            source: &self.source,
            file_sha256: &self.sha256,
            protocol: &self.receipt.protocol,
            subject: &self.receipt.subject,
            audit: &self.audit,
        }
    }
}

/// `loadproof receipt compare`.
pub fn compare_cmd(args: &CompareArgs, out: &mut impl Write) -> Result<ExitCode> {
    let policy = read_policy(args.policy.file.as_deref(), &args.policy.trust)?;
    let baseline = Loaded::read(&args.baseline, &policy)?;
    let treatment = Loaded::read(&args.treatment, &policy)?;
    let c = compare(&baseline.side(), &treatment.side());
    if args.json {
        writeln!(out, "{}", c.to_json())?;
    } else {
        render(&crate::render::printable(&c), out)?;
    }
    Ok(if c.comparable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A number as the table shows it: whole numbers without a fraction, others to 3 decimals.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

fn value(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), number)
}

fn signed(v: Option<f64>) -> String {
    match v {
        Some(v) if v > 0.0 => format!("+{}", number(v)),
        Some(v) => number(v),
        None => "-".to_owned(),
    }
}

fn percent(v: Option<f64>) -> String {
    match v {
        Some(0.0) => "0.0%".to_owned(),
        Some(v) => format!("{:+.1}%", v * 100.0),
        None => "-".to_owned(),
    }
}

fn metric_row(m: &MetricChange) -> String {
    format!(
        "  {:<40} {:>14} {:>14} {:>14} {:>9}{}",
        // The reader's name (`TTFT p99 (ms)`); the key is what `--json` carries.
        metric_label(&m.metric).map_or_else(
            || format!("{} ({})", m.metric, m.unit),
            |(name, unit)| format!("{name} ({unit})")
        ),
        value(m.baseline),
        value(m.treatment),
        signed(m.change),
        percent(m.relative_change),
        m.note
            .as_deref()
            .filter(|_| m.baseline.is_some() || m.treatment.is_some())
            .map_or_else(String::new, |n| format!("  ({n})"))
    )
}

/// The human report.
pub fn render(c: &Comparison, out: &mut impl Write) -> Result<()> {
    for (label, s) in [("baseline ", &c.baseline), ("treatment", &c.treatment)] {
        let short: String = s.file_sha256.chars().take(12).collect();
        writeln!(
            out,
            "{label}  {}  (sha256 {short}…)  {}{}",
            s.source,
            if s.qualified {
                "QUALIFIED".to_owned()
            } else {
                format!("UNQUALIFIED ({} refusals)", s.refusals.len())
            },
            if s.simulator {
                ", of loadproof sim, a simulator"
            } else {
                ""
            }
        )?;
        if !s.digests_ok {
            writeln!(
                out,
                "             evidence FAILS verification: {}",
                s.failing_blocks.join(", ")
            )?;
        }
    }
    if c.same_protocol {
        writeln!(out, "protocol   one protocol ({})", c.baseline.protocol_key)?;
    } else {
        writeln!(
            out,
            "protocol   NOT ONE PROTOCOL: {} field(s) differ",
            c.protocol_differences.len()
        )?;
        for d in &c.protocol_differences {
            writeln!(out, "             {d}")?;
        }
    }
    if c.same_subject {
        writeln!(out, "subject    one subject apart from knobs")?;
    } else {
        writeln!(
            out,
            "subject    NOT ONE SUBJECT: {} axis/axes differ",
            c.subject_differences.len()
        )?;
        for d in &c.subject_differences {
            writeln!(out, "             {d}")?;
        }
    }
    if c.knobs_changed.is_empty() {
        writeln!(out, "knobs      none differs (an A/A pair)")?;
    } else {
        for k in &c.knobs_changed {
            writeln!(out, "knobs      changed: {k}")?;
        }
    }
    writeln!(
        out,
        "\n  {:<40} {:>14} {:>14} {:>14} {:>9}",
        "metric (unit)", "baseline", "treatment", "change", "change %"
    )?;
    for m in &c.metrics {
        writeln!(out, "{}", metric_row(m))?;
    }
    writeln!(out)?;
    for n in &c.notes {
        writeln!(out, "note       {n}")?;
    }
    writeln!(out, "caveat     {}", c.caveat)?;
    if c.comparable {
        writeln!(
            out,
            "COMPARABLE: one protocol, one subject apart from knobs, both qualified — an observation (1 receipt per arm), not a measured effect"
        )?;
    } else {
        writeln!(out, "NOT COMPARABLE: {} reason(s)", c.reasons.len())?;
        for r in &c.reasons {
            writeln!(out, "  * {r}")?;
        }
    }
    Ok(())
}
