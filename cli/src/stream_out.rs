//! Writing a record-stream receipt while the run happens.
//!
//! Records go through core's [`RecordWriter`] (numbering, chain, scrape deltas) into one zstd
//! frame on disk. **Flush policy:** every record is flushed to the operating system as it is
//! appended (one zstd block per record, so a `kill -9` loses at most the record being
//! written), the file is fsync'd at most every [`SYNC_EVERY`] and at the seal (a power loss
//! loses at most that much). The native event log is appended in parts, every
//! [`EVENTS_EVERY`] (see `fire::native`).
//!
//! Writing never stops the run: a write error is kept and reported at the seal, where the
//! command fails loudly instead of claiming a receipt it did not write.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use loadproof_core::receipt::stream::{Fields, RecordWriter};
use loadproof_core::receipt::{Receipt, Scrape};

/// How often the file is fsync'd while records are appended.
pub const SYNC_EVERY: Duration = Duration::from_secs(5);
/// How often the native client's finished requests are appended as one part of its event log.
pub const EVENTS_EVERY: Duration = Duration::from_millis(500);
/// zstd level: the records are small after the scrape deltas, so a strong level costs little.
const LEVEL: i32 = 9;

struct Inner {
    /// The fields as last stated (the opening's, then each restatement's).
    fields: Fields,
    writer: Option<RecordWriter>,
    zstd: Option<zstd::stream::write::Encoder<'static, File>>,
    last_sync: Instant,
    error: Option<String>,
}

/// A receipt being written as a record stream; shared by the tasks that capture evidence.
#[derive(Clone)]
pub struct StreamOut {
    path: PathBuf,
    /// The run's zero (the instant `at_mono_ns` counts from).
    zero: Instant,
    inner: Arc<Mutex<Inner>>,
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

impl StreamOut {
    /// Creates (or replaces) `path` and appends the open record.
    pub fn create(path: &Path, fields: &Fields, at_mono_ns: i64) -> Result<StreamOut> {
        let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut zstd = zstd::stream::write::Encoder::new(file, LEVEL)
            .with_context(|| format!("starting zstd for {}", path.display()))?;
        // The chain covers integrity; a frame checksum would only be readable at the end.
        zstd.include_checksum(false)
            .and_then(|()| zstd.include_contentsize(false))
            .with_context(|| format!("configuring zstd for {}", path.display()))?;
        let (writer, bytes) = RecordWriter::open(&run_id(), fields, at_mono_ns);
        let zero = Instant::now()
            .checked_sub(Duration::from_nanos(u64::try_from(at_mono_ns).unwrap_or(0)))
            .unwrap_or_else(Instant::now);
        let out = StreamOut {
            path: path.to_path_buf(),
            zero,
            inner: Arc::new(Mutex::new(Inner {
                fields: fields.clone(),
                writer: Some(writer),
                zstd: Some(zstd),
                last_sync: Instant::now(),
                error: None,
            })),
        };
        out.append(|_, _| bytes);
        Ok(out)
    }

    /// Now on the run's clock, ns.
    fn clock_ns(&self) -> i64 {
        i64::try_from(self.zero.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    /// Restates the fields (`change` applied to the last statement): an update record.
    pub fn restate(&self, change: impl FnOnce(&mut Fields)) {
        let fields = {
            let Ok(mut inner) = self.inner.lock() else {
                return;
            };
            change(&mut inner.fields);
            inner.fields.clone()
        };
        self.append(|w, at| w.update(&fields, at));
    }

    /// Appends what `make` returns (given the writer and the time, read under the lock so
    /// records are stamped in the order they are appended) and flushes it to the OS.
    fn append(&self, make: impl FnOnce(&mut RecordWriter, i64) -> Vec<u8>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let inner = &mut *inner;
        let (Some(writer), Some(zstd)) = (inner.writer.as_mut(), inner.zstd.as_mut()) else {
            return;
        };
        let bytes = make(writer, self.clock_ns());
        let result = zstd.write_all(&bytes).and_then(|()| zstd.flush());
        let result = result.and_then(|()| {
            if inner.last_sync.elapsed() >= SYNC_EVERY {
                inner.last_sync = Instant::now();
                zstd.get_ref().sync_data()
            } else {
                Ok(())
            }
        });
        if let Err(e) = result
            && inner.error.is_none()
        {
            inner.error = Some(e.to_string());
        }
    }

    /// A whole evidence block.
    pub fn block(&self, name: &str, raw: &[u8]) {
        self.append(|w, at| w.block(name, raw, at));
    }

    /// The next part of a growing block.
    pub fn part(&self, name: &str, raw: &[u8]) {
        if !raw.is_empty() {
            self.append(|w, at| w.part(name, raw, at));
        }
    }

    /// The next part of a growing block, even an empty one (a block that exists from the
    /// start of a run, before it has bytes).
    pub fn part_even_empty(&self, name: &str, raw: &[u8]) {
        self.append(|w, at| w.part(name, raw, at));
    }

    /// One scrape and its body.
    pub fn scrape(&self, scrape: &Scrape, body: &[u8]) {
        self.append(|w, at| w.scrape(scrape, body, at));
    }

    /// Appends every block of `receipt` not yet written and the seal, closes the frame and
    /// syncs the file. Fails when any write during the run failed.
    pub fn seal(&self, receipt: &Receipt) -> Result<()> {
        let at_mono_ns = self.clock_ns();
        let mut inner = self
            .inner
            .lock()
            .map_err(|_| anyhow!("{}: a writer thread panicked", self.path.display()))?;
        let writer = inner.writer.take();
        let zstd = inner.zstd.take();
        if let Some(error) = inner.error.take() {
            return Err(anyhow!(
                "writing {}: {error} (the receipt on disk stops before that record)",
                self.path.display()
            ));
        }
        let (Some(writer), Some(mut zstd)) = (writer, zstd) else {
            return Err(anyhow!("{}: sealed twice", self.path.display()));
        };
        let bytes = writer.seal(receipt, at_mono_ns);
        zstd.write_all(&bytes)
            .and_then(|()| zstd.finish())
            .and_then(|file| file.sync_all())
            .with_context(|| format!("sealing {}", self.path.display()))
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
