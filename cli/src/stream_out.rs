//! Writing a record-stream receipt while the run happens.
//!
//! Records go through core's [`RecordWriter`] (numbering, chain, scrape deltas) into one zstd
//! frame on disk, all on one writer thread of their own: the tasks that capture evidence (the
//! scrapes, the native client's collector, vLLM's output drains) only hand bytes over a
//! channel, so hashing and compressing never run on the threads that send requests.
//! **Flush policy:** every record is flushed to the operating system as the writer thread
//! appends it (one zstd block per record, so a `kill -9` loses at most what was still in the
//! channel or being written), the file is fsync'd at most every [`SYNC_EVERY`] and at the seal
//! (a power loss loses at most that much). The native event log is appended in parts, every
//! [`EVENTS_EVERY`] (see `fire::native`). Records are stamped by the writer thread as it takes
//! them, in order, from the run's monotonic clock.
//!
//! Writing never stops the run: a write error is kept and reported at the seal, where the
//! command fails loudly instead of claiming a receipt it did not write.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use loadproof_core::receipt::stream::{Fields, RecordWriter};
use loadproof_core::receipt::{Receipt, Scrape};
use loadproof_core::signing::SecretKey;

/// How often the file is fsync'd while records are appended.
pub const SYNC_EVERY: Duration = Duration::from_secs(5);
/// How often the native client's finished requests are appended as one part of its event log.
pub const EVENTS_EVERY: Duration = Duration::from_millis(500);
/// zstd level: the records are small after the scrape deltas; the writer thread has the time.
const LEVEL: i32 = 9;

/// What the capturing tasks hand to the writer thread.
enum Op {
    Block(String, Vec<u8>),
    Part(String, Vec<u8>),
    Scrape(Box<Scrape>, Vec<u8>),
    Restate(Box<dyn FnOnce(&mut Fields) + Send>),
    Seal(Box<Receipt>, Option<SecretKey>),
}

/// The writer thread's handle: its result is the seal's.
type Writer = std::thread::JoinHandle<Result<(), String>>;

/// A receipt being written as a record stream; a cheap handle shared by the capturing tasks.
#[derive(Clone)]
pub struct StreamOut {
    path: PathBuf,
    ops: Sender<Op>,
    /// The writer thread, joined by the seal for its result.
    thread: Arc<Mutex<Option<Writer>>>,
}

/// A fresh random run id (128 bits, hex), from the OS's randomness via std's hasher seeds
/// mixed with the clock: unique per run, not a secret.
fn run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::with_capacity(32);
    for i in 0..2u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        h.write_u32(std::process::id());
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

/// The writer thread: takes ops in order, appends and flushes each, syncs on the policy; ends
/// at the seal (or when every handle is gone: the file then stays unsealed, as after a crash).
fn write_loop(
    ops: Receiver<Op>,
    mut writer: RecordWriter,
    mut zstd: zstd::stream::write::Encoder<'static, File>,
    mut fields: Fields,
    zero: Instant,
) -> Result<(), String> {
    let now = || i64::try_from(zero.elapsed().as_nanos()).unwrap_or(i64::MAX);
    let mut last_sync = Instant::now();
    let mut error: Option<String> = None;
    while let Ok(op) = ops.recv() {
        let bytes = match op {
            Op::Block(name, raw) => writer.block(&name, &raw, now()),
            Op::Part(name, raw) => writer.part(&name, &raw, now()),
            Op::Scrape(scrape, body) => writer.scrape(&scrape, &body, now()),
            Op::Restate(change) => {
                change(&mut fields);
                writer.update(&fields, now())
            }
            Op::Seal(receipt, key) => {
                if let Some(e) = error {
                    return Err(format!(
                        "{e} (the receipt on disk stops before that record)"
                    ));
                }
                let bytes = writer.seal_signed(&receipt, now(), key.as_ref());
                return zstd
                    .write_all(&bytes)
                    .and_then(|()| zstd.finish())
                    .and_then(|file| file.sync_all())
                    .map_err(|e| e.to_string());
            }
        };
        if error.is_some() {
            continue;
        }
        let written = zstd
            .write_all(&bytes)
            .and_then(|()| zstd.flush())
            .and_then(|()| {
                if last_sync.elapsed() >= SYNC_EVERY {
                    last_sync = Instant::now();
                    zstd.get_ref().sync_data()
                } else {
                    Ok(())
                }
            });
        if let Err(e) = written {
            error = Some(e.to_string());
        }
    }
    Ok(())
}

impl StreamOut {
    /// Creates (or replaces) `path`, appends the open record and starts the writer thread.
    pub fn create(path: &Path, fields: &Fields, at_mono_ns: i64) -> Result<StreamOut> {
        let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut zstd = zstd::stream::write::Encoder::new(file, LEVEL)
            .with_context(|| format!("starting zstd for {}", path.display()))?;
        // The chain covers integrity; a frame checksum would only be readable at the end.
        zstd.include_checksum(false)
            .and_then(|()| zstd.include_contentsize(false))
            .with_context(|| format!("configuring zstd for {}", path.display()))?;
        let (writer, bytes) = RecordWriter::open(&run_id(), fields, at_mono_ns);
        zstd.write_all(&bytes)
            .and_then(|()| zstd.flush())
            .with_context(|| format!("writing {}", path.display()))?;
        let zero = Instant::now()
            .checked_sub(Duration::from_nanos(u64::try_from(at_mono_ns).unwrap_or(0)))
            .unwrap_or_else(Instant::now);
        let (ops, rx) = channel();
        let fields = fields.clone();
        let thread = std::thread::Builder::new()
            .name("loadproof-receipt".to_owned())
            .spawn(move || write_loop(rx, writer, zstd, fields, zero))
            .context("starting the receipt writer thread")?;
        Ok(StreamOut {
            path: path.to_path_buf(),
            ops,
            thread: Arc::new(Mutex::new(Some(thread))),
        })
    }

    /// Hands `op` to the writer thread (a thread that already stopped reports at the seal).
    fn send(&self, op: Op) {
        let _ = self.ops.send(op);
    }

    /// Restates the fields (`change` applied to the last statement): an update record.
    pub fn restate(&self, change: impl FnOnce(&mut Fields) + Send + 'static) {
        self.send(Op::Restate(Box::new(change)));
    }

    /// A whole evidence block.
    pub fn block(&self, name: &str, raw: &[u8]) {
        self.send(Op::Block(name.to_owned(), raw.to_vec()));
    }

    /// The next part of a growing block.
    pub fn part(&self, name: &str, raw: &[u8]) {
        if !raw.is_empty() {
            self.part_even_empty(name, raw);
        }
    }

    /// The next part of a growing block, even an empty one (a block that exists from the
    /// start of a run, before it has bytes).
    pub fn part_even_empty(&self, name: &str, raw: &[u8]) {
        self.send(Op::Part(name.to_owned(), raw.to_vec()));
    }

    /// One scrape and its body.
    pub fn scrape(&self, scrape: &Scrape, body: &[u8]) {
        self.send(Op::Scrape(Box::new(scrape.clone()), body.to_vec()));
    }

    /// Appends every block of `receipt` not yet written and the seal, closes the frame and
    /// syncs the file, after everything handed over before it. Fails when any write during the
    /// run failed. With `key` (`fire --signing-key`) the seal is signed: no record can then be
    /// added, dropped or changed without the signature naming another stream.
    pub fn seal_signed(&self, receipt: &Receipt, key: Option<SecretKey>) -> Result<()> {
        let thread = self
            .thread
            .lock()
            .map_err(|_| anyhow!("{}: the receipt writer was poisoned", self.path.display()))?
            .take()
            .ok_or_else(|| anyhow!("{}: sealed twice", self.path.display()))?;
        self.send(Op::Seal(Box::new(receipt.clone()), key));
        thread
            .join()
            .map_err(|_| {
                anyhow!(
                    "{}: the receipt writer thread panicked",
                    self.path.display()
                )
            })?
            .map_err(|e| anyhow!("writing {}: {e}", self.path.display()))
    }
}

/// Writes `receipt` whole as a sealed record stream (imports, upgrades, a run that never
/// fired): through a temporary file and a rename, like every other whole file.
pub fn write_whole(path: &Path, receipt: &Receipt) -> Result<()> {
    let bytes = loadproof_core::receipt::stream::whole(receipt, &run_id());
    // Never write a stream the reader would refuse or read as another receipt (two scrapes
    // sharing one body block, say): read it back first.
    let back = Receipt::from_bytes(&bytes).map_err(|e| {
        crate::input::BadInput(format!(
            "{}: this receipt cannot be written as a record stream: {e}",
            path.display()
        ))
    })?;
    if !same_receipt(&back, receipt) {
        return Err(crate::input::BadInput(format!(
            "{}: this receipt does not read back whole from a record stream (kept as it is)",
            path.display()
        ))
        .into());
    }
    crate::output::write_atomically(path, |w| {
        let mut z = zstd::stream::write::Encoder::new(w, LEVEL)?;
        z.include_checksum(false)?;
        z.write_all(&bytes)?;
        z.finish()?;
        Ok(())
    })
}

/// The same receipt, block bytes compared as bytes (a v1 file may hold text as base64).
fn same_receipt(a: &Receipt, b: &Receipt) -> bool {
    let (a, b) = (&*a.unpacked(), &*b.unpacked());
    let strip = |r: &Receipt| {
        let mut r = r.clone();
        r.evidence.clear();
        r.stream = None;
        r
    };
    strip(a) == strip(b)
        && a.evidence.len() == b.evidence.len()
        && a.evidence.iter().all(|(name, x)| {
            b.evidence.get(name).is_some_and(|y| {
                x.sha256 == y.sha256
                    && x.bytes == y.bytes
                    && x.decoded(name).ok() == y.decoded(name).ok()
            })
        })
}
