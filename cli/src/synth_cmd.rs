//! `loadproof trace synth`: write a synthetic trace with a target regime, read the written
//! bytes back through core, and record target against realised in `FILE.synth.json`.
//!
//! Generation runs on a second thread and hands over 4 MiB chunks; this thread writes each
//! chunk, hashes it and pushes it into core's `Ingester`, so the realised regime is computed
//! from exactly the bytes on disk without reading them again. The generator's memory stays
//! bounded by one chunk (and one window); the read-back holds the ingested columns, as
//! `trace inspect` would (about 16 bytes per row).

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use loadproof_core::stats::Percentiles;
use loadproof_core::synth::{
    Layout, Stop, SynthError, SynthRecord, SynthSpec, SynthStats, Synthesizer,
};
use loadproof_core::trace::Sha256Stream;
use loadproof_core::{CallerFilter, Format, IngestOptions, Ingester, Limits, Trace};

use crate::args::SynthArgs;
use crate::input::{BadInput, sidecar_path};

/// Bytes per chunk handed from the generating thread to the writing one.
const CHUNK_BYTES: usize = 4 << 20;
/// Chunks in flight between the two threads.
const POOL: usize = 4;
/// Row-bounded traces at least this long get a progress bar on a terminal.
const PROGRESS_MIN_ROWS: u64 = 1_000_000;

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn bad(message: String) -> anyhow::Error {
    BadInput(message).into()
}

/// `secs` as whole milliseconds ≥ 1, or a usage error naming `flag`.
fn whole_ms(flag: &str, secs: f64) -> Result<u64> {
    let ms = (secs * 1e3).round();
    if !(secs.is_finite() && (1.0..=1e15).contains(&ms) && (secs * 1e3 - ms).abs() <= 1e-6) {
        return Err(bad(format!(
            "--{flag} must be a whole number of milliseconds ≥ 0.001 s (timestamps are written in milliseconds), got {secs}"
        )));
    }
    Ok(ms as u64)
}

/// The spec the flags ask for; the generator validates the ranges.
fn spec_of(args: &SynthArgs) -> Result<SynthSpec> {
    let default = SynthSpec::DEFAULT;
    let layout = match args.layout.as_str() {
        "mooncake" => Layout::Mooncake,
        _ => Layout::Burstgpt,
    };
    let stop = match (args.rows, args.duration) {
        (Some(rows), _) => Stop::Rows(rows),
        (None, Some(secs)) => {
            if !(secs.is_finite() && secs >= 0.001) {
                return Err(bad(format!(
                    "--duration must be a number of seconds ≥ 0.001, got {secs}"
                )));
            }
            Stop::DurationMs((secs * 1e3).round() as u64)
        }
        (None, None) => default.stop,
    };
    let tokens = |p50: Option<f64>, p95: Option<f64>, fallback: Percentiles| match (p50, p95) {
        (Some(p50), Some(p95)) => Percentiles { p50, p95 },
        _ => fallback,
    };
    Ok(SynthSpec {
        layout,
        stop,
        seed: args.seed,
        rate_rps: args.rate,
        burstiness: args.burstiness,
        window_ms: whole_ms("window", args.window)?,
        input_tokens: tokens(args.input_p50, args.input_p95, default.input_tokens),
        output_tokens: tokens(args.output_p50, args.output_p95, default.output_tokens),
        failure_share: args.failure_share.unwrap_or(match layout {
            Layout::Burstgpt => default.failure_share,
            Layout::Mooncake => 0.0,
        }),
        prefix_share: args.prefix_share.unwrap_or(0.0),
    })
}

/// A generator error in the words of the flags.
fn flag_error(err: &SynthError) -> anyhow::Error {
    let flag = match err {
        SynthError::Invalid { parameter, .. } => match *parameter {
            "rate" => "--rate",
            "window" => "--window",
            "burstiness" => "--burstiness",
            "input tokens" => "--input-p50/--input-p95",
            "output tokens" => "--output-p50/--output-p95",
            "failure share" => "--failure-share",
            "prefix share" => "--prefix-share",
            "rows" => "--rows",
            "duration" => "--duration",
            _ => "--rows/--duration",
        },
        _ => "--burstiness",
    };
    // Core names its parameter first ("rate: …"); the flag replaces it.
    let text = err.to_string();
    let detail = text.split_once(": ").map_or(text.as_str(), |(_, d)| d);
    bad(format!("trace synth {flag}: {detail}"))
}

/// The command line that regenerates `spec` into `out`.
fn command_line(out: &str, spec: &SynthSpec) -> String {
    let mut c = format!(
        "loadproof trace synth --out {out} --layout {}",
        spec.layout.name()
    );
    match spec.stop {
        Stop::Rows(rows) => c.push_str(&format!(" --rows {rows}")),
        Stop::DurationMs(ms) => c.push_str(&format!(" --duration {}", ms as f64 / 1e3)),
    }
    c.push_str(&format!(
        " --seed {} --rate {} --burstiness {} --window {} --input-p50 {} --input-p95 {} --output-p50 {} --output-p95 {}",
        spec.seed,
        spec.rate_rps,
        spec.burstiness,
        spec.window_ms as f64 / 1e3,
        spec.input_tokens.p50,
        spec.input_tokens.p95,
        spec.output_tokens.p50,
        spec.output_tokens.p95,
    ));
    match spec.layout {
        Layout::Burstgpt => c.push_str(&format!(" --failure-share {}", spec.failure_share)),
        Layout::Mooncake => c.push_str(&format!(" --prefix-share {}", spec.prefix_share)),
    }
    c
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `bytes` to `path` through a temporary file beside it, so a reader never sees half.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = with_suffix(path, ".tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
}

/// What the writing thread produced.
struct Written {
    stats: SynthStats,
    sha256: String,
    /// The trace core read back from the written bytes, or why it could not.
    read_back: Result<Trace, String>,
}

/// Generates on a second thread; writes, hashes and ingests every chunk on this one.
fn write_trace(synth: Synthesizer, path: &Path) -> Result<Written> {
    let spec = *synth.spec();
    let tmp = with_suffix(path, ".tmp");
    let mut file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let bar = match spec.stop {
        Stop::Rows(rows) if rows >= PROGRESS_MIN_ROWS && std::io::stderr().is_terminal() => {
            let bar = indicatif::ProgressBar::new(rows);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} writing {pos}/{len} rows [{bar:30}] {per_sec}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            Some(bar)
        }
        _ => None,
    };
    let (filled_tx, filled_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(POOL);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let producer = std::thread::spawn(move || {
        let mut synth = synth;
        loop {
            let mut buf = empty_rx
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(CHUNK_BYTES + (64 << 10)));
            buf.clear();
            let more = synth.next_chunk(&mut buf, CHUNK_BYTES);
            // The writer stopped on an error it reports itself.
            if filled_tx.send(buf).is_err() || !more {
                break;
            }
        }
        synth.stats()
    });
    let format = match spec.layout {
        Layout::Burstgpt => Format::Burstgpt,
        Layout::Mooncake => Format::Mooncake,
    };
    let mut ingester = Some(Ingester::new_unhashed(IngestOptions {
        format: Some(format),
        filter: CallerFilter::default(),
        limits: Limits::STANDARD,
        block_lengths: None,
        schema: None,
    }));
    let mut ingest_error = None;
    let mut sha = Sha256Stream::default();
    for chunk in filled_rx {
        file.write_all(&chunk)
            .with_context(|| format!("writing {}", tmp.display()))?;
        sha.update(&chunk);
        if let Some(ing) = &mut ingester
            && let Err(e) = ing.push(&chunk)
        {
            ingest_error = Some(e.to_string());
            ingester = None;
        }
        if let (Some(bar), Some(ing)) = (&bar, &ingester) {
            bar.set_position(ing.rows_read());
        }
        // The generator may have finished; a buffer it never takes back is only an allocation.
        let _ = empty_tx.send(chunk);
    }
    let stats = producer
        .join()
        .map_err(|_| anyhow!("the generating thread panicked"))?;
    file.flush()
        .with_context(|| format!("writing {}", tmp.display()))?;
    drop(file);
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let digest = sha.finalize();
    let read_back = match (ingester, ingest_error) {
        (Some(ing), None) => ing.finish_with_sha256(digest).map_err(|e| e.to_string()),
        (_, Some(e)) => Err(e),
        (None, None) => Err("the read-back stopped".to_owned()),
    };
    Ok(Written {
        stats,
        sha256: hex(&digest),
        read_back,
    })
}

/// The one-paragraph summary printed on stderr.
fn summary(path: &Path, sidecar: &Path, record: &SynthRecord, stats: &SynthStats) -> String {
    let layout = match record.spec.layout {
        Layout::Burstgpt => "BurstGPT_1 CSV layout",
        Layout::Mooncake => "Mooncake JSONL layout",
    };
    let failures = if stats.failure_rows > 0 {
        format!(" + {} failure rows", stats.failure_rows)
    } else {
        String::new()
    };
    let t = &record.target;
    let mut s = format!(
        "wrote {}: {} synthetic rows in {layout} ({} requests{failures}), {} bytes, sha256 {}; sidecar {}. Generator v{}, seed {}, {} window counts. Target → realised at {} s windows: ",
        path.display(),
        stats.rows,
        stats.requests,
        stats.bytes,
        record.sha256,
        sidecar.display(),
        record.generator_version,
        record.spec.seed,
        record.spec.count_law,
        t.window_s,
    );
    match &record.realised {
        Some(r) => {
            let g = &r.regime;
            let opt =
                |v: Option<f64>| v.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.4}"));
            s.push_str(&format!(
                "rate {} → {} req/s, D {} → {}, input p50/p95 {}/{} → {}/{}, output p50/p95 {}/{} → {}/{}",
                t.rate_rps,
                opt(g.rate_rps),
                t.burstiness,
                opt(g.burstiness),
                t.input_tokens.p50,
                t.input_tokens.p95,
                g.input_tokens.p50,
                g.input_tokens.p95,
                t.output_tokens.p50,
                t.output_tokens.p95,
                g.output_tokens.p50,
                g.output_tokens.p95,
            ));
            if record.spec.layout == Layout::Burstgpt {
                s.push_str(&format!(
                    ", failure share {} → {:.4}",
                    record.spec.failure_share, r.failure_share
                ));
            }
            if let Some(p) = r.prefix_share {
                s.push_str(&format!(
                    ", prefix share {} → {p:.4}",
                    record.spec.prefix_share
                ));
            }
            s.push('.');
        }
        None => s.push_str(&format!(
            "no realised regime ({}).",
            record.realised_error.as_deref().unwrap_or("unknown")
        )),
    }
    s
}

/// `loadproof trace synth`. Prints nothing on stdout: the result is the file.
pub fn synth(args: &SynthArgs, _out: &mut impl Write) -> Result<()> {
    let spec = spec_of(args)?;
    let synth = Synthesizer::new(&spec).map_err(|e| flag_error(&e))?;
    let path = args.out.as_path();
    let sidecar = sidecar_path(path);
    // A sidecar left from an earlier run must never vouch for the new bytes, even briefly.
    match std::fs::remove_file(&sidecar) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("removing {}", sidecar.display())),
    }
    let written = write_trace(synth, path)?;
    let name = file_name(path);
    let record = SynthRecord::new(
        &spec,
        &name,
        &command_line(&name, &spec),
        &written.sha256,
        written.stats.bytes,
        written.read_back.as_ref().map_err(Clone::clone),
    );
    write_atomically(&sidecar, format!("{}\n", record.to_json()).as_bytes())?;
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{}", summary(path, &sidecar, &record, &written.stats));
    }
    Ok(())
}
