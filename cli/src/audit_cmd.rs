//! `loadproof receipt audit|capture-check|qualify`: one audit (core), three answers.
//!
//! `audit` prints everything and exits 0 whatever it found; `capture-check` answers only "was a
//! raw observation captured"; `qualify` only "does it qualify". Keeping them apart is the
//! point: a caller that checks the capture's exit code cannot mistake it for a qualification.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use loadproof_core::audit::{self, Audit, LatencyFacts};
use loadproof_core::receipt::Receipt;

use crate::args::{AuditArgs, PolicyArgs};
use crate::input::{read_policy, read_receipt};
use crate::render::{escape_controls, printable};

/// Reads and audits a receipt against the reviewer's policy; an unreadable file, a
/// non-receipt or a bad policy is bad input (exit 2).
pub fn load(path: &Path, policy: &PolicyArgs) -> Result<(Receipt, Audit)> {
    let policy = read_policy(policy.file.as_deref(), &policy.trust)?;
    let (_, receipt) = read_receipt(path)?;
    let audit = audit::audit_with(&receipt, &policy);
    Ok((receipt, audit))
}

fn json(audit: &Audit, out: &mut impl Write) -> Result<()> {
    out.write_all(audit.to_json().as_bytes())?;
    Ok(())
}

/// `loadproof receipt audit`.
pub fn audit(args: &AuditArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (receipt, audit) = load(&args.receipt, &args.policy)?;
    if args.json {
        json(&audit, out)?;
    } else {
        render(&args.receipt, &receipt, &printable(&audit), out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `loadproof receipt capture-check`.
pub fn capture_check(args: &AuditArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (_, audit) = load(&args.receipt, &args.policy)?;
    if args.json {
        json(&audit, out)?;
        return Ok(if audit.captured {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    let audit = printable(&audit);
    if audit.captured {
        writeln!(
            out,
            "captured: {} (this says nothing about qualification: `receipt qualify`)",
            audit.execution_gate.reason
        )?;
    } else if !audit.digests_ok {
        writeln!(out, "not captured: evidence fails verification")?;
    } else {
        writeln!(out, "not captured: {}", audit.execution_gate.reason)?;
    }
    Ok(if audit.captured {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `loadproof receipt qualify`.
pub fn qualify(args: &AuditArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (_, audit) = load(&args.receipt, &args.policy)?;
    if args.json {
        json(&audit, out)?;
    } else {
        verdict(&printable(&audit), out)?;
    }
    Ok(if audit.qualified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn verdict(a: &Audit, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", a.verdict())?;
    if !a.qualified {
        for r in &a.refusals {
            writeln!(out, "  * {r}")?;
        }
    }
    Ok(())
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"))
}

fn latency_row(l: &LatencyFacts) -> String {
    format!(
        "    {:<5} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10}",
        l.metric,
        opt(l.count),
        ms(l.mean_ms),
        ms(l.p50_ms),
        ms(l.p90_ms),
        ms(l.p99_ms),
        ms(l.max_ms)
    )
}

/// The human report: every section, every standing, the verdict.
pub fn render(path: &Path, r: &Receipt, a: &Audit, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "receipt {}  (protocol {}{})",
        path.display(),
        escape_controls(&r.protocol.key),
        if a.simulator {
            "; endpoint is loadproof sim, a simulator"
        } else {
            ""
        }
    )?;
    let bad: Vec<_> = a.digests.iter().filter(|d| !d.ok).collect();
    if bad.is_empty() {
        writeln!(
            out,
            "evidence      {} blocks, every digest verifies",
            a.digests.len()
        )?;
    } else {
        writeln!(
            out,
            "evidence      {} of {} blocks FAIL",
            bad.len(),
            a.digests.len()
        )?;
        for d in bad {
            writeln!(
                out,
                "  FAIL {:?}: {}",
                d.block,
                d.error.as_deref().unwrap_or("")
            )?;
        }
    }
    writeln!(
        out,
        "execution     {}: {}",
        if a.execution_gate.read {
            "read"
        } else {
            "unread"
        },
        a.execution_gate.reason
    )?;
    if let Some(l) = &a.ledger {
        let kinds: Vec<String> = l
            .dispositions
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        writeln!(
            out,
            "ledger        {} offered · {} completed · {} failed ({} after tokens) · {}{}",
            opt(l.offered),
            l.completed,
            opt(l.failed),
            opt(l.failed_after_tokens),
            if l.aggregate {
                "aggregate"
            } else {
                "per request"
            },
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" [{}]", kinds.join(", "))
            }
        )?;
    }
    if let Some(c) = &a.client {
        writeln!(
            out,
            "client        output {} tok · input {} tok · {:.3} s ({}) · {} output tok/s",
            c.output_tokens,
            c.input_tokens,
            c.duration_s,
            c.interval,
            c.output_tokens_per_s
                .map_or("— (empty interval)".to_owned(), |r| format!("{r:.2}"))
        )?;
    }
    if !a.latency.is_empty() {
        writeln!(
            out,
            "latency (ms)  {}",
            a.latency.first().map_or("", |l| l.source.as_str())
        )?;
        writeln!(
            out,
            "    {:<5} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "", "count", "mean", "p50", "p90", "p99", "max"
        )?;
        for l in &a.latency {
            writeln!(out, "{}", latency_row(l))?;
        }
    }
    if let Some(t) = &a.itl_tail {
        writeln!(
            out,
            "itl tail      observed p99 {:.3} ms = {} the median; cause {} ({})",
            t.p99_ms,
            t.ratio
                .map_or("— (median 0) ×".to_owned(), |r| format!("{r:.1}×")),
            t.cause,
            t.why
        )?;
    }
    if let Some(c) = &a.concurrency {
        writeln!(
            out,
            "concurrency   exact client peak {} · successful-client second-bucket peak {} · cap {} — {}",
            opt(c.exact_client_peak),
            opt(c.successful_client_second_bucket_peak),
            opt(c.declared_cap),
            c.note
        )?;
    }
    if let Some(ar) = &a.arrival {
        writeln!(
            out,
            "arrival       {}: {}{}",
            if ar.observed { "observed" } else { "declared" },
            ar.source,
            match (ar.lag_p50_ms, ar.lag_p99_ms, ar.lag_max_ms) {
                (Some(p50), Some(p99), Some(max)) => format!(
                    " · lag p50 {p50:.3} / p99 {p99:.3} / max {max:.3} ms (policy bound {}{})",
                    ms(ar.bound_ms),
                    ar.claimed_bound_ms.map_or(String::new(), |c| format!(
                        "; the receipt's own {c:.3} ms is the claimant's intent"
                    ))
                ),
                _ => String::new(),
            }
        )?;
    }
    writeln!(
        out,
        "engine        generation Δ {} · prompt Δ {} · {}",
        opt(a.engine.generation_tokens_delta),
        opt(a.engine.prompt_tokens_delta),
        if a.engine.continuous {
            a.engine.incarnations.join("; ")
        } else {
            a.engine.reason.clone()
        }
    )?;
    for h in &a.engine.histograms {
        writeln!(
            out,
            "engine hist   {}: {} observations, mean {} ms, p50 ≤ {} ms, p99 ≤ {} ms (bucket bounds; an observation, not a cause)",
            h.family.trim_start_matches("vllm:"),
            h.count,
            ms(h.mean_ms),
            ms(h.p50_le_ms),
            ms(h.p99_le_ms)
        )?;
    }
    for r in &a.engine.replicas {
        writeln!(
            out,
            "replica       {}: generation Δ {} · prompt Δ {} · {} · {} samples, max running {} · max waiting {}",
            r.url,
            opt(r.generation_tokens_delta),
            opt(r.prompt_tokens_delta),
            r.reason,
            r.samples,
            opt(r.max_running),
            opt(r.max_waiting)
        )?;
    }
    for g in a.gpu.iter().flat_map(|g| &g.exporters) {
        let f1 = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"));
        writeln!(
            out,
            "gpu           DCGM at {}: {} GPU(s) {} · util mean {} % / max {} % · memory used ≤ {} MiB · power ≤ {} W · SM clock {} MHz · {} (telemetry beside the counters, never a cause)",
            g.url,
            g.gpus,
            if g.model_names.is_empty() {
                "(no modelName)".to_owned()
            } else {
                g.model_names.join(", ")
            },
            f1(g.mean_util_pct),
            f1(g.max_util_pct),
            f1(g.max_fb_used_mib),
            f1(g.max_power_w),
            g.sm_clock_mhz
                .map_or_else(|| "-".to_owned(), |(lo, hi)| format!("{lo:.0}–{hi:.0}")),
            g.reason
        )?;
    }
    writeln!(out, "foreign work  {}", a.foreign_work.reason)?;
    writeln!(
        out,
        "occupancy     {} · max running {} · max waiting {} · max KV {} · preemptions {}",
        a.occupancy.reason,
        opt(a.occupancy.max_running),
        opt(a.occupancy.max_waiting),
        a.occupancy
            .max_kv_usage
            .map_or_else(|| "-".to_owned(), |v| format!("{v:.3}")),
        opt(a.occupancy.preemptions_delta)
    )?;
    writeln!(
        out,
        "policy        send lag ≤ {} ms · scrape gap ≤ {} ms · a queue across {} scrapes refuses (the reviewer's standards: --policy FILE)",
        a.policy.max_send_lag_ms, a.policy.max_scrape_gap_ms, a.policy.max_waiting_scrapes
    )?;
    writeln!(out, "standings")?;
    for name in audit::STANDINGS {
        if let Some(s) = a.standings.get(name) {
            writeln!(
                out,
                "  {} {:<18} {}",
                if s.positive { "+" } else { "-" },
                name,
                s.reason
            )?;
            if let Some(settle) = &s.settle {
                writeln!(out, "  {:<20} would settle: {settle}", "")?;
            }
        }
    }
    for i in &a.inconsistencies {
        writeln!(out, "INCONSISTENT  {i}")?;
    }
    for c in &a.caveats {
        writeln!(out, "CAVEAT        {c}")?;
    }
    let t = &a.attestation;
    writeln!(
        out,
        "ATTESTATION   {} (scrapes of the lease's route before, during and after the run: {} signed, {} by its lessor's key you trust, of {}; engine scrapes of other URLs: {} of {} so signed; keys trusted: {})",
        t.reason,
        t.scrapes.signed,
        t.scrapes.by_trusted_key,
        t.scrapes.lessor_scrapes,
        t.scrapes.other_by_trusted_key,
        t.scrapes.other_engine_scrapes,
        t.trusted_keys
    )?;
    if let Some(account) = &t.lease_account {
        writeln!(
            out,
            "LESSOR COUNT  {} (key {}{}): {}",
            if account.agrees {
                "agrees"
            } else {
                "CONTRADICTS the client"
            },
            account.key.key_id,
            if account.key.trusted {
                ", which you trust"
            } else {
                ", which you do not trust"
            },
            account.reason
        )?;
    }
    if let Some(k) = &t.seal_key {
        writeln!(
            out,
            "SEALED BY     key {}{}",
            k.key_id,
            match &k.trusted_as {
                Some(name) => format!(", which you trust ({name})"),
                None => ", which you do not trust".to_owned(),
            }
        )?;
    }
    verdict(a, out)
}
