//! A load generator as a child process: its own process group, both output streams captured
//! whole and appended to the receipt as they arrive, Ctrl-C turned into SIGTERM to the group
//! (SIGKILL after 5 s) and recorded as an interruption. Every process engine (`vllm bench
//! serve`, AIPerf, GuideLLM) runs through [`run`].

use std::path::Path;
use std::process::Stdio;

use loadproof_core::receipt::block;
use tokio::io::AsyncReadExt;

use crate::stream_out::{EVENTS_EVERY, StreamOut};

/// Prefixes of the caller's environment variables no child inherits (GuideLLM's and AIPerf's
/// settings); what loadproof sets for a child is recorded in its execution.
const SCRUBBED: [&str; 2] = ["GUIDELLM__", "AIPERF_"];
/// Variables that make an interpreter run code other than the install whose modules are bound
/// (extra import paths, a startup file, preloaded libraries): no child inherits them.
const SCRUBBED_NAMES: [&str; 7] = [
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "PYTHONINSPECT",
    "LD_PRELOAD",
    "LD_AUDIT",
];

/// Removes from `command`'s environment every inherited variable that could change what the
/// child runs or how it is configured ([`SCRUBBED`], [`SCRUBBED_NAMES`]).
pub fn scrub(command: &mut tokio::process::Command) {
    for (key, _) in std::env::vars_os() {
        if let Some(k) = key.to_str()
            && (SCRUBBED.iter().any(|p| k.starts_with(p)) || SCRUBBED_NAMES.contains(&k))
        {
            command.env_remove(&key);
        }
    }
}

/// Why the client cannot be started: recorded as `Execution::NotStarted`.
pub type NotStarted = String;

/// Runs `code` in `python` (scrubbed as a child is): whether it succeeded, and its stdout's
/// lines, trimmed. How an install is identified without importing it.
pub async fn probe(python: &Path, code: &str) -> Result<(bool, Vec<String>), NotStarted> {
    let mut command = tokio::process::Command::new(python);
    scrub(&mut command);
    let out = command
        .args(["-c", code])
        .output()
        .await
        .map_err(|e| format!("cannot run the interpreter {}: {e}", python.display()))?;
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_owned())
        .collect();
    Ok((out.status.success(), lines))
}

/// The console script `name` beside `python`: the checked install's own, never one from PATH.
pub fn console_script(python: &Path, name: &str) -> Result<std::path::PathBuf, NotStarted> {
    python
        .parent()
        .map(|dir| dir.join(name))
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "no `{name}` console script beside {} (the script of the checked install is the one run, never one from PATH)",
                python.display()
            )
        })
}

/// What the child did.
pub struct Outcome {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Signal that ended it.
    pub signal: Option<i32>,
    /// Every byte of stdout.
    pub stdout: Vec<u8>,
    /// Every byte of stderr.
    pub stderr: Vec<u8>,
    /// True when loadproof killed it (Ctrl-C).
    pub interrupted: bool,
}

/// How long the child's output may stay open after it exited or was killed (a grandchild can
/// hold the pipes): what was read by then is kept.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads a stream into a shared buffer until EOF, so a reader cut off after [`DRAIN_GRACE`]
/// still leaves every byte it got.
fn drain(
    stream: Option<impl tokio::io::AsyncRead + Unpin + Send + 'static>,
    block: &'static str,
    journal: Option<StreamOut>,
) -> (
    std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    tokio::task::JoinHandle<()>,
) {
    let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = buf.clone();
    let task = tokio::spawn(async move {
        let Some(mut stream) = stream else { return };
        // The block exists in the receipt from the start, and grows as the client writes:
        // what was read is appended at most EVENTS_EVERY later (and at the end).
        let mut appended = 0usize;
        let append = |appended: &mut usize, first: bool| {
            let Some(j) = &journal else { return };
            let Ok(b) = sink.lock() else { return };
            if let Some(new) = b.get(*appended..)
                && (first || !new.is_empty())
            {
                j.part_even_empty(block, new);
                *appended = b.len();
            }
        };
        append(&mut appended, true);
        let mut tick = tokio::time::interval(EVENTS_EVERY);
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            tokio::select! {
                read = stream.read(&mut chunk) => match read {
                    Ok(n) if n > 0 => {
                        if let (Ok(mut b), Some(read)) = (sink.lock(), chunk.get(..n)) {
                            b.extend_from_slice(read);
                        }
                    }
                    _ => break,
                },
                _ = tick.tick() => append(&mut appended, false),
            }
        }
        append(&mut appended, false);
    });
    (buf, task)
}

/// Signals the child's whole process group (it leads one): `kill -SIG -PGID`.
fn signal_group(pid: Option<u32>, signal: &str) {
    if let Some(pid) = pid {
        let _ = std::process::Command::new("kill")
            .args([signal, "--", &format!("-{pid}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Runs `argv` (program first) in `cwd` with `env` added, capturing both streams whole.
/// The child leads its own process group; Ctrl-C sends it SIGTERM, then SIGKILL after 5 s, and
/// is reported as an interruption, not an error.
pub async fn run(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    journal: Option<&StreamOut>,
) -> Result<Outcome, NotStarted> {
    let (program, args) = argv.split_first().ok_or_else(|| "empty argv".to_owned())?;
    let mut command = tokio::process::Command::new(program);
    // None of the caller's variables may change a run whose configuration the receipt records.
    scrub(&mut command);
    let mut child = command
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let pid = child.id();
    let (out_buf, out_task) = drain(child.stdout.take(), block::STDOUT, journal.cloned());
    let (err_buf, err_task) = drain(child.stderr.take(), block::STDERR, journal.cloned());
    let mut interrupted = false;
    let status = tokio::select! {
        status = child.wait() => status,
        _ = tokio::signal::ctrl_c() => {
            interrupted = true;
            signal_group(pid, "-TERM");
            match tokio::time::timeout(std::time::Duration::from_secs(5), child.wait()).await {
                Ok(status) => status,
                Err(_) => {
                    signal_group(pid, "-KILL");
                    child.wait().await
                }
            }
        }
    }
    .map_err(|e| format!("waiting for {program}: {e}"))?;
    // Whatever of the group is left must not keep the pipes (and this run) open.
    if interrupted {
        signal_group(pid, "-KILL");
    }
    let (mut out_task, mut err_task) = (out_task, err_task);
    let _ = tokio::time::timeout(DRAIN_GRACE, async {
        let _ = (&mut out_task).await;
        let _ = (&mut err_task).await;
    })
    .await;
    // A reader still blocked (a grandchild holds the pipe) stops here, so nothing is appended
    // to the receipt after the bytes kept below are taken.
    out_task.abort();
    err_task.abort();
    let take = |b: &std::sync::Arc<std::sync::Mutex<Vec<u8>>>| {
        b.lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    };
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    Ok(Outcome {
        code: status.code(),
        signal,
        stdout: take(&out_buf),
        stderr: take(&err_buf),
        interrupted,
    })
}
