//! What the user handed the command, interpreted: flags into core's types, files into a
//! [`Trace`], and [`BadInput`], the error that says the user caused the failure (exit 2).
//!
//! Command files resolve their arguments through here, so a flag means the same thing under
//! every command that takes it and a wrong value is refused in the same words.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{IsTerminal, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use loadproof_core::audit::Policy;
use loadproof_core::plan::PlanDoc;
use loadproof_core::playbook::Concurrency;
use loadproof_core::receipt::{Receipt, key_value};
use loadproof_core::regime::Window;
use loadproof_core::synth;
use loadproof_core::trace::{
    ArrivalGaps, Codec, Sha256Stream, TRACE_SCHEMA_MAX_BYTES, TraceSchema, ZSTD_MAGIC,
};
use loadproof_core::{CallerFilter, Format, IngestOptions, Ingester, Limits, Trace};

use crate::args::{FormatArg, TraceSliceArgs};
use crate::buffers::{Buffers, CHUNK_BYTES, POOL};
pub(crate) use crate::user_file::{not_a_regular_file, open_file, read_file};

/// Files smaller than this finish before a progress bar would be seen.
const PROGRESS_MIN_BYTES: u64 = 32 << 20;

pub use crate::bad_input::BadInput;
pub(crate) use crate::bad_input::read_full;

// ---- Flags ----

pub(crate) fn format_of(arg: FormatArg) -> Format {
    match arg {
        FormatArg::Burstgpt => Format::Burstgpt,
        FormatArg::Mooncake => Format::Mooncake,
        FormatArg::Azure => Format::Azure,
        FormatArg::Ragpulse => Format::Ragpulse,
    }
}

fn secs_to_ns(flag: &str, secs: f64) -> Result<i64> {
    if !(secs.is_finite() && (0.0..9.2e9).contains(&secs)) {
        bail!(BadInput(format!(
            "--{flag} must be a finite number of seconds ≥ 0, got {secs}"
        )));
    }
    Ok((secs * 1e9).round() as i64)
}

/// The caller's slice as an ingestion filter: `--start` and `--duration` in seconds from the
/// first sound row become a `[start, start + duration)` window in nanoseconds.
pub(crate) fn caller_filter(
    model: Option<&str>,
    log_type: Option<&str>,
    start: Option<f64>,
    duration: Option<f64>,
    max_rows: Option<u64>,
) -> Result<CallerFilter> {
    let start_ns = start.map(|s| secs_to_ns("start", s)).transpose()?;
    let end_ns = match duration {
        Some(d) => Some(
            start_ns
                .unwrap_or(0)
                .saturating_add(secs_to_ns("duration", d)?),
        ),
        None => None,
    };
    Ok(CallerFilter {
        model: model.map(str::to_owned),
        log_type: log_type.map(str::to_owned),
        start_ns,
        end_ns,
        max_rows,
        fields: Default::default(),
    })
}

/// The slice flags as core's ingestion options: the forced format or the mapping, the
/// caller's filter, the standard limits.
pub(crate) fn slice_options(slice: &TraceSliceArgs) -> Result<IngestOptions> {
    let mut filter = caller_filter(
        slice.trace_model.as_deref(),
        slice.log_type.as_deref(),
        slice.start,
        slice.duration,
        slice.max_requests,
    )?;
    filter.fields = pairs("where", &slice.where_)?;
    Ok(IngestOptions {
        format: slice.format.map(format_of),
        filter,
        limits: Limits::STANDARD,
        block_lengths: None,
        schema: read_schema(slice.schema.as_deref())?,
    })
}

/// A `--schema FILE` mapping, read and checked; a refusal names the file and the field.
pub(crate) fn read_schema(path: Option<&Path>) -> Result<Option<Arc<TraceSchema>>> {
    let Some(path) = path else { return Ok(None) };
    let bytes = read_file(path, TRACE_SCHEMA_MAX_BYTES as u64, "a trace mapping")?;
    let schema = TraceSchema::from_json(&bytes)
        .map_err(|e| BadInput(format!("{}: not a trace mapping: {e}", path.display())))?;
    Ok(Some(Arc::new(schema)))
}

/// `--window` as a [`Window`], or a usage error.
pub(crate) fn window_of(secs: f64) -> Result<Window> {
    Window::from_secs(secs).ok_or_else(|| {
        BadInput(format!(
            "--window must be a finite number of seconds ≥ 1e-6, got {secs}"
        ))
        .into()
    })
}

/// `KEY=VALUE` pairs into a map; a pair without `=` is bad usage.
pub(crate) fn pairs(flag: &str, items: &[String]) -> Result<BTreeMap<String, String>> {
    items
        .iter()
        .map(|item| match key_value(item) {
            Some((k, v)) => Ok((k.to_owned(), v.to_owned())),
            None => Err(BadInput(format!("--{flag} {item:?} is not KEY=VALUE")).into()),
        })
        .collect()
}

/// `--concurrency N|uncapped`.
pub(crate) fn concurrency_of(text: &str) -> Result<Concurrency> {
    text.parse::<Concurrency>().map_err(|_| {
        BadInput(format!(
            "--concurrency {text:?}: a number of requests > 0, or `uncapped`"
        ))
        .into()
    })
}

// ---- Files ----

/// The largest receipt, plan, policy or playbook read into memory (4 GiB): a receipt holds its
/// evidence inline, and anything larger is refused by name rather than exhausting memory.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 4 << 30;

/// The largest file `receipt import` takes as one evidence block (1 GiB).
pub(crate) const MAX_EVIDENCE_BYTES: u64 = 1 << 30;

// ---- Receipts and plans ----

/// A receipt file: its bytes (their sha256 is the file's digest) and the receipt they hold. A
/// file that cannot be read, or is not a receipt, is the caller's.
pub(crate) fn read_receipt(path: &Path) -> Result<(Vec<u8>, Receipt)> {
    let bytes = read_file(path, MAX_DOCUMENT_BYTES, "a receipt")?;
    let receipt =
        Receipt::from_bytes(&bytes).map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
    Ok((bytes, receipt))
}

/// The reviewer's audit policy from `--policy FILE`, or the default, trusting the keys in
/// every `--trust KEYFILE` besides any the policy names.
pub(crate) fn read_policy(path: Option<&Path>, trust: &[PathBuf]) -> Result<Policy> {
    let mut policy = match path {
        None => Policy::default(),
        Some(path) => {
            let bytes = read_file(path, MAX_DOCUMENT_BYTES, "an audit policy")?;
            Policy::from_json(&bytes).map_err(|e| BadInput(format!("{}: {e}", path.display())))?
        }
    };
    for file in trust {
        let bytes = read_file(file, MAX_DOCUMENT_BYTES, "a file of trusted keys")?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| BadInput(format!("{}: not UTF-8 text", file.display())))?;
        let set = loadproof_core::signing::TrustSet::parse(text)
            .map_err(|e| BadInput(format!("{}: {e}", file.display())))?;
        if set.is_empty() {
            return Err(BadInput(format!("{}: holds no public key", file.display())).into());
        }
        // A key the policy (or an earlier file) already trusts is not listed again: the
        // page's policy panel skips it too, so both print the same `policy`.
        for line in set.lines() {
            let held = policy.trust();
            let known = loadproof_core::signing::PublicKey::parse_line(&line)
                .is_ok_and(|(key, _)| held.comment(&key).is_some());
            if !known {
                policy.trusted_keys.push(line);
            }
        }
    }
    Ok(policy)
}

/// A `plan.json`: its bytes (a receipt keeps them) and the plan they hold.
pub(crate) fn read_plan_doc(path: &Path) -> Result<(Vec<u8>, PlanDoc)> {
    let bytes = read_file(path, MAX_DOCUMENT_BYTES, "a plan")?;
    let doc = serde_json::from_slice(&bytes)
        .map_err(|e| BadInput(format!("{}: not a loadproof plan: {e}", path.display())))?;
    Ok((bytes, doc))
}

// ---- Trace files ----

/// Reads `path` fully through an [`Ingester`], with a progress bar on a TTY stderr. A gzip or
/// zstd file (known by its first bytes, whatever its name) is read through its decompressor:
/// the trace is of the content, with the file as given in [`TraceMeta::compression`].
///
/// [`TraceMeta::compression`]: loadproof_core::TraceMeta::compression
pub fn ingest_file(path: &Path, opts: IngestOptions) -> Result<Trace> {
    ingest_file_with_gaps(path, opts).map(|(trace, _)| trace)
}

/// As [`ingest_file`], with the trace's arrival gaps when they were read while the file was
/// still being hashed (a large plain file, read in halves): `ArrivalGaps::of` the trace, taken
/// on a core that would otherwise wait. `None`: the caller computes them.
pub fn ingest_file_with_gaps(
    path: &Path,
    opts: IngestOptions,
) -> Result<(Trace, Option<ArrivalGaps>)> {
    let opts = crate::companions::with_companions(path, opts)?;
    let mut file = open_file(path)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut head = [0u8; ZSTD_MAGIC.len()];
    let n =
        read_full(&mut file, &mut head).with_context(|| format!("reading {}", path.display()))?;
    file.seek(SeekFrom::Start(0))
        .with_context(|| format!("reading {}", path.display()))?;
    match Codec::sniff(head.get(..n).unwrap_or_default()) {
        Some(codec) => {
            crate::decompress::ingest_compressed(path, file, codec, opts, progress_bar(len))
                .map(|trace| (trace, None))
        }
        None => ingest_plain(path, file, len, opts),
    }
}

/// A progress bar over `len` bytes of the file, when stderr is a terminal and the file is
/// large enough for one to be seen.
fn progress_bar(len: u64) -> Option<indicatif::ProgressBar> {
    (std::io::stderr().is_terminal() && len >= PROGRESS_MIN_BYTES).then(|| {
        let bar = indicatif::ProgressBar::new(len);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} reading {bytes}/{total_bytes} [{bar:30}] {bytes_per_sec} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    })
}

/// An uncompressed trace file: read and hashed on one thread, parsed on this one (in halves
/// when it is large).
fn ingest_plain(
    path: &Path,
    mut file: File,
    len: u64,
    opts: IngestOptions,
) -> Result<(Trace, Option<ArrivalGaps>)> {
    let bar = progress_bar(len);
    // A second thread reads the file and hashes each chunk; this one only parses. Reading and
    // hashing together cost about half of parsing, so the parser never waits on the disk.
    // Buffers cycle between the two threads, so no fresh pages are faulted in per chunk.
    // A large file is parsed in halves (`crate::halves`): this thread gets the bytes up to the
    // cut, a third thread parses the rest, and the reader also takes that rest's xxh3.
    let halves = len >= crate::halves::halves_min_bytes()
        && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let mid = crate::halves::midpoint(len);
    let second = halves.then(|| {
        let (path, opts) = (path.to_path_buf(), opts.clone());
        std::thread::spawn(move || crate::halves::read_second_half(&path, mid, opts))
    });
    let (filled_tx, filled_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(POOL);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || -> std::io::Result<Hashed> {
        let mut sha = Sha256Stream::default();
        let mut after_cut: Option<(u64, xxhash_rust::xxh3::Xxh3)> = None;
        let mut to_parser = Some(filled_tx);
        let mut offset = 0u64;
        let mut buffers = Buffers::new(empty_rx);
        // Past the cut nothing goes to the parser: one buffer serves the rest of the hash.
        let mut spare: Option<Vec<u8>> = None;
        while let Some(mut buf) = spare.take().or_else(|| buffers.next()) {
            // The spare was cut to its last read.
            buf.resize(CHUNK_BYTES, 0);
            let n = read_full(&mut file, &mut buf)?;
            if n == 0 {
                break;
            }
            buf.truncate(n);
            sha.update(&buf);
            let chunk_at = offset;
            offset += n as u64;
            if let Some((_, rest)) = &mut after_cut {
                rest.update(&buf);
                spare = Some(buf);
                continue;
            }
            if halves && let Some(i) = crate::halves::cut_in(&buf, chunk_at, mid) {
                let mut rest = xxhash_rust::xxh3::Xxh3::new();
                rest.update(buf.get(i..).unwrap_or_default());
                after_cut = Some((chunk_at + i as u64, rest));
                buf.truncate(i);
            }
            let Some(tx) = &to_parser else { continue };
            if tx.send(buf).is_err() {
                break; // the parser stopped on an error it reports itself
            }
            if after_cut.is_some() {
                to_parser = None;
            }
        }
        let whole = sha.finalize();
        Ok(match after_cut {
            Some((cut, rest)) => Hashed {
                whole,
                cut: Some((cut, rest.digest128())),
            },
            None => Hashed {
                whole,
                // No newline after the middle: the first half is the whole file.
                cut: halves.then(|| (offset, xxhash_rust::xxh3::Xxh3::new().digest128())),
            },
        })
    });
    let mut ingester = Ingester::new_unhashed(opts);
    for chunk in filled_rx {
        ingester
            .push(&chunk)
            .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        if let Some(bar) = &bar {
            bar.set_position(ingester.bytes_seen());
            bar.set_message(format!("{} rows", ingester.rows_read()));
        }
        // The reader may have finished; a buffer it never takes back is only an allocation.
        let _ = empty_tx.send(chunk);
    }
    let early = match second {
        Some(second) => {
            let half = second
                .join()
                .map_err(|_| anyhow::anyhow!("the second half's thread panicked"))?;
            Some(crate::halves::join_early(path, &mut ingester, half, len)?)
        }
        None => None,
    };
    // Joined early, the rows are all read; if the reader is still hashing the file's end (it
    // waited on this thread through the first half), the gaps are taken now, on a core that
    // would wait, and kept only if the join is (`settle` below). A reader already done leaves
    // them to a second core beside the regime, as for one parser.
    let mut gaps = match early {
        Some(crate::halves::Early::Joined { .. }) if !reader.is_finished() => {
            ingester.arrival_gaps()
        }
        _ => None,
    };
    let hashed = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the reading thread panicked"))?
        .with_context(|| format!("reading {}", path.display()))?;
    if let Some(early) = early {
        let how = crate::halves::settle(path, &mut ingester, early, hashed.cut, len)?;
        if how != Some(crate::halves::SecondRead::Joined) {
            gaps = None;
        }
        if let Some(how) = how
            && std::env::var_os(crate::halves::HALVES_MIN_BYTES_VAR).is_some()
        {
            let cut = hashed.cut.map_or(len, |(cut, _)| cut);
            eprintln!(
                "loadproof: {}: second half {how:?} at byte {cut}",
                path.display()
            );
        }
    }
    let digest = hashed.whole;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let trace = ingester
        .finish_with_sha256(digest)
        .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
    Ok((trace, gaps))
}

/// What the reading thread hashed: the whole file's sha256, and in halves mode the cut and the
/// xxh3-128 of every byte after it.
struct Hashed {
    whole: [u8; 32],
    cut: Option<(u64, u128)>,
}

// ---- Synthetic provenance: the `trace synth` sidecar ----

/// Where the sidecar of `trace` lives: the file name with `.synth.json` appended. `trace
/// synth` writes it there; every reader of a trace looks for it there.
pub fn sidecar_path(trace: &Path) -> PathBuf {
    let mut name = trace.file_name().unwrap_or_default().to_os_string();
    name.push(".synth.json");
    trace.with_file_name(name)
}

/// The note `inspect` adds when `FILE.synth.json` sits beside `file`: "synthetic … sha256
/// verified" when the sidecar's sha256 is the file's content's, a warning that it does NOT
/// match otherwise, and nothing when there is no sidecar. For `t.csv.gz` (or `.zst`) with no
/// sidecar of its own, the sidecar `trace synth` wrote for `t.csv` is read: compressing the
/// trace leaves its sidecar under the old name, and the sidecar names the content's sha256,
/// which a compressed file's trace reports, so the check is the same.
pub(crate) fn synthetic_note(file: &Path, source_sha256: &str) -> Option<String> {
    let own = sidecar_path(file);
    let sidecar = if own.exists() {
        own
    } else {
        match uncompressed_name(file) {
            Some(plain) if sidecar_path(&plain).exists() => sidecar_path(&plain),
            _ => own,
        }
    };
    let name = sidecar
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match std::fs::read_to_string(&sidecar) {
        Ok(text) => Some(
            synth::check_sidecar(&text, &name, source_sha256)
                .note()
                .to_owned(),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(format!(
            "sidecar {name} could not be read ({e}): whether this file is synthetic is unknown"
        )),
    }
}

/// `file` without a trailing `.gz`, `.zst` or `.zstd`, when it has one. Only where to look
/// for a sidecar: whether the file is compressed is read from its bytes.
fn uncompressed_name(file: &Path) -> Option<PathBuf> {
    let ext = file.extension()?.to_str()?;
    ["gz", "zst", "zstd"]
        .contains(&ext)
        .then(|| file.with_extension(""))
}
