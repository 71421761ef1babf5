//! `loadproof plan …`: write a replay plan directory and prove it against the bytes on disk.
//!
//! The check always re-reads the file from disk — the bytes vLLM will read — never the buffer
//! that was written. Exit codes: 0 PASS, 1 the check failed (the plan is written but marked
//! `verified: false`), 2 bad input.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use loadproof_core::plan::{
    BenchTarget, Check, Fidelity, PLAN_FILE, Plan, PlanDoc, PlanOptions, ReadBack,
    TIMED_TRACE_FILE, TimeScale, TimedTraceReader, check_document, sized_blocks,
};
use loadproof_core::{IngestOptions, Limits};

use crate::args::{PlanArgs, PlanCheckArgs};
use crate::input::{
    BadInput, ingest_file, read_full, read_plan_doc, slice_options, synthetic_note, window_of,
};
use crate::output::write_atomically;
use crate::render;

/// `loadproof plan TRACE --out DIR`.
pub fn plan(args: &PlanArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (Some(trace_path), Some(dir)) = (&args.trace, &args.out) else {
        return Err(BadInput("plan needs TRACE and --out DIR".to_owned()).into());
    };
    let time_scale = TimeScale::parse(&args.time_scale).map_err(|e| BadInput(e.to_string()))?;
    let ingest = slice_options(&args.slice)?;
    let options = PlanOptions {
        chunk_size: args.chunk_size,
        time_scale,
        window: window_of(args.window)?,
        target: BenchTarget {
            model: args.model.clone(),
            tokenizer: args.tokenizer.clone(),
            base_url: args.base_url.clone(),
        },
        filter: ingest.filter.clone(),
    };
    let trace = ingest_file(trace_path, ingest)?;
    let plan = Plan::new(trace, options)
        .map_err(|e| BadInput(format!("{}: {e}", trace_path.display())))?;

    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file_path = dir.join(TIMED_TRACE_FILE);
    write_atomically(&file_path, |w| Ok(plan.write_timed_trace(w)?))?;
    let bench = plan.bench_command();
    let reader = plan
        .reader(&bench)
        .map_err(|e| anyhow::anyhow!("the plan's own argv: {e}"))?;
    let (back, read_error) = read_back(&file_path, reader)?;
    let mut fidelity = plan.verify(&back, &bench);
    if let Some(e) = &read_error {
        fidelity = failed_read(fidelity, &file_path, e);
    }
    // Blocks at their own lengths (RAGPulse), written beside the file and proven the same way:
    // re-read from disk.
    let sized = match plan.trace().requests().sized {
        Some(_) => {
            let path = dir.join(sized_blocks::SIZED_BLOCKS_FILE);
            write_atomically(&path, |w| Ok(sized_blocks::write(plan.trace(), w)?))?;
            Some(fs::read(&path).with_context(|| format!("reading back {}", path.display()))?)
        }
        None => None,
    };
    if let Some(check) = sized_blocks::check(plan.trace(), sized.as_deref()) {
        let mut checks = fidelity.checks;
        checks.push(check);
        fidelity = Fidelity::of(checks);
    }
    // The source is recorded by absolute path so `plan check` works from any directory.
    let source = fs::canonicalize(trace_path).unwrap_or_else(|_| trace_path.clone());
    let mut doc = plan.document(&source.to_string_lossy(), &back, bench, fidelity);
    doc.sized_blocks = sized
        .as_deref()
        .and_then(|bytes| sized_blocks::summary(plan.trace(), bytes));
    if let Some(note) = synthetic_note(trace_path, &doc.source.sha256) {
        doc.notes.insert(0, format!("source {note}"));
    }
    write_atomically(&dir.join(PLAN_FILE), |w| {
        Ok(w.write_all((doc.to_json() + "\n").as_bytes())?)
    })?;
    if args.json {
        writeln!(out, "{}", doc.to_json())?;
    } else {
        render::plan_text(&doc, dir, out)?;
    }
    Ok(exit_for(&doc.fidelity))
}

/// `loadproof plan check DIR`.
pub fn check(args: &PlanCheckArgs, out: &mut impl Write) -> Result<ExitCode> {
    let doc_path = args.dir.join(PLAN_FILE);
    let (_, doc) = read_plan_doc(&doc_path)?;
    let source = args
        .trace
        .clone()
        .unwrap_or_else(|| PathBuf::from(&doc.source.path));
    if let Some(why) = crate::input::not_a_regular_file(&source) {
        return Err(BadInput(format!("{}: the source trace {why}", doc_path.display())).into());
    }
    if !source.exists() {
        return Err(BadInput(format!(
            "{}: the source trace {} is not there; pass --trace FILE",
            doc_path.display(),
            source.display()
        ))
        .into());
    }
    let options = doc.options().ok_or_else(|| {
        BadInput(format!(
            "{}: window_s {} is not a usable window",
            doc_path.display(),
            doc.window_s
        ))
    })?;
    let schema = crate::input::read_schema(args.schema.as_deref())?;
    match (&doc.source.schema_sha256, &schema) {
        (Some(want), Some(got)) if want != got.sha256() => {
            return Err(BadInput(format!(
                "{}: the source was planned through a mapping with sha256 {want}; --schema {} has sha256 {}",
                doc_path.display(),
                args.schema.as_deref().unwrap_or(Path::new("")).display(),
                got.sha256()
            ))
            .into());
        }
        (Some(want), None) => {
            return Err(BadInput(format!(
                "{}: the source was planned through a mapping (sha256 {want}); pass it with --schema FILE",
                doc_path.display()
            ))
            .into());
        }
        (None, Some(_)) => {
            return Err(BadInput(format!(
                "{}: the source was planned as {}, not through a mapping; drop --schema",
                doc_path.display(),
                doc.source.format
            ))
            .into());
        }
        _ => {}
    }
    let ingest = IngestOptions {
        format: Some(doc.source.format),
        filter: doc.slice.filter(),
        limits: Limits::STANDARD,
        block_lengths: None,
        schema,
    };
    let trace = ingest_file(&source, ingest)?;
    let companions = trace
        .meta()
        .segments
        .as_ref()
        .map(|s| s.companions.clone())
        .unwrap_or_default();
    if companions != doc.source.companions {
        return Err(BadInput(format!(
            "{}: the source was planned with companion files {:?}; beside {} now are {:?}",
            doc_path.display(),
            doc.source.companions,
            source.display(),
            companions
        ))
        .into());
    }
    let source_sha = trace.meta().source_sha256.clone();
    let verdict = match verify_directory(&args.dir, &doc, trace, options) {
        Ok((verdict, back)) => {
            if !args.json {
                writeln!(out, "{}  (plan check)", args.dir.display())?;
                writeln!(out, "  source   {}  sha256 {source_sha}", source.display())?;
                writeln!(
                    out,
                    "  file     {}  sha256 {}",
                    doc.timed_trace.file, back.sha256
                )?;
            }
            verdict
        }
        // A plan directory that cannot even be re-read is a failed check, named, not bad usage.
        Err((name, detail)) => {
            let mut checks = vec![Check::agreement(name, &[detail], "")];
            let sha_problem = (source_sha != doc.source.sha256).then(|| {
                format!(
                    "the source now hashes to {source_sha}, plan.json names {}",
                    doc.source.sha256
                )
            });
            checks.push(Check::agreement(
                "source_sha256",
                &sha_problem.into_iter().collect::<Vec<_>>(),
                "the source is the file the plan was made from",
            ));
            if !args.json {
                writeln!(out, "{}  (plan check)", args.dir.display())?;
            }
            Fidelity::of(checks)
        }
    };
    if args.json {
        let json = serde_json::to_string_pretty(&verdict).context("serializing the verdict")?;
        writeln!(out, "{json}")?;
    } else {
        render::fidelity_text(&verdict, out)?;
    }
    Ok(exit_for(&verdict))
}

/// Rebuilds the plan from the re-read source and reads DIR's file as `doc`'s argv tells vLLM
/// to. `Err((check, detail))` when the directory cannot be re-read that far.
fn verify_directory(
    dir: &Path,
    doc: &PlanDoc,
    trace: loadproof_core::Trace,
    options: PlanOptions,
) -> std::result::Result<(Fidelity, ReadBack), (&'static str, String)> {
    let rebuilt = Plan::new(trace, options)
        .map_err(|e| ("source_plans", format!("the source no longer plans: {e}")))?;
    // The file name comes from plan.json: a bare name only, never a path out of DIR.
    let name = Path::new(&doc.timed_trace.file);
    if name.file_name() != Some(name.as_os_str()) {
        return Err((
            "file_readable",
            format!(
                "timed_trace.file {:?} is not a file name inside the plan directory",
                doc.timed_trace.file
            ),
        ));
    }
    let file_path = dir.join(name);
    let reader = rebuilt.reader(&doc.bench).map_err(|e| {
        (
            "argv_agrees",
            format!("vLLM could not read the file with this argv: {e}"),
        )
    })?;
    let (back, read_error) =
        read_back(&file_path, reader).map_err(|e| ("file_readable", format!("{e:#}")))?;
    // Read only when plan.json names it, by a bare name inside DIR.
    let sized = match &doc.sized_blocks {
        Some(entry) => {
            let name = Path::new(&entry.file);
            if name.file_name() != Some(name.as_os_str()) {
                return Err((
                    "sized_blocks",
                    format!(
                        "sized_blocks.file {:?} is not a file name inside the plan directory",
                        entry.file
                    ),
                ));
            }
            Some(
                fs::read(dir.join(name))
                    .map_err(|e| ("sized_blocks", format!("{}: {e}", dir.join(name).display())))?,
            )
        }
        None => None,
    };
    let mut verdict = check_document(doc, &rebuilt, &back, sized.as_deref());
    if let Some(e) = &read_error {
        verdict = failed_read(verdict, &file_path, e);
    }
    Ok((verdict, back))
}

fn exit_for(f: &Fidelity) -> ExitCode {
    if f.pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A file vLLM would choke on fails the plan, named; it is not a usage error.
fn failed_read(f: Fidelity, path: &Path, e: &str) -> Fidelity {
    let mut checks = f.checks;
    checks.push(Check::agreement(
        "file_readable",
        &[format!("{}: {e}", path.display())],
        "",
    ));
    Fidelity::of(checks)
}

/// Streams `path` through `reader`. A line vLLM would reject ends the read early: what was
/// read so far is returned with the error, so the verdict can show both.
fn read_back(path: &Path, mut reader: TimedTraceReader<'_>) -> Result<(ReadBack, Option<String>)> {
    let mut file = crate::input::open_file(path)?;
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = read_full(&mut file, &mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        reader.push(buf.get(..n).unwrap_or_default());
    }
    match reader.finish() {
        Ok(back) => Ok((back, None)),
        Err(e) => Ok((ReadBack::default(), Some(e.to_string()))),
    }
}
