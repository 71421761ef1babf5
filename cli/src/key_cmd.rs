//! `loadproof key new`, and the secret key `gate` and `sim` sign with.
//!
//! The seed is 32 bytes of the operating system's random source (`/dev/urandom`); core draws no
//! randomness. The secret key file is created new with mode 0600 and never overwritten: a key
//! replaced by accident is a key every reviewer who trusted it must learn of again.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use loadproof_core::signing::SecretKey;

use crate::args::KeyNewArgs;
use crate::bad_input::BadInput;
use crate::user_file::read_file;

/// The largest secret key file read (one line of ~80 bytes; a bound, not a format).
const MAX_KEY_FILE_BYTES: u64 = 4096;

/// `loadproof key new --out FILE [--comment TEXT]`.
pub fn new(args: &KeyNewArgs, out: &mut dyn Write) -> Result<()> {
    let mut seed = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut seed))
        .context("reading 32 bytes of /dev/urandom for the key's seed")?;
    let secret = SecretKey::from_seed(seed);
    let line = secret.public().to_line(&args.comment);
    if line.contains('\n') || args.comment.chars().any(char::is_control) {
        return Err(BadInput("--comment: one line of printable text".to_owned()).into());
    }
    let public_path = public_path(&args.out);
    for path in [&args.out, &public_path] {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(BadInput(format!(
                "{}: exists; a key is never overwritten (move it away first)",
                path.display()
            ))
            .into());
        }
    }
    write_new(&args.out, secret.to_text().as_bytes(), 0o600)?;
    write_new(&public_path, format!("{line}\n").as_bytes(), 0o644)?;
    eprintln!(
        "loadproof key new: secret key {} (keep it on the lessor's host), public key {} (key {})",
        args.out.display(),
        public_path.display(),
        secret.public().id()
    );
    writeln!(out, "{line}")?;
    Ok(())
}

/// `OUT.pub`.
fn public_path(secret: &Path) -> PathBuf {
    let mut name = secret.as_os_str().to_owned();
    name.push(".pub");
    PathBuf::from(name)
}

fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", path.display()))
}

/// The secret key in `path` (`--signing-key`).
pub fn read_secret(path: &Path) -> Result<SecretKey> {
    let bytes = read_file(path, MAX_KEY_FILE_BYTES, "a secret key")?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| BadInput(format!("{}: not UTF-8 text", path.display())))?;
    Ok(SecretKey::parse(text).map_err(|e| BadInput(format!("{}: {e}", path.display())))?)
}
