//! Which client implementation fired, bound by a digest: loadproof's own executable for the
//! native engine, the installed `vllm/benchmarks/serve.py` for `vllm bench serve`. A file that
//! cannot be found or read leaves the implementation unbound, with why.

use std::io::Read;
use std::path::{Path, PathBuf};

use loadproof_core::receipt::Implementation;
use loadproof_core::trace::Sha256Stream;

/// The native engine's name in a receipt.
pub const NATIVE: &str = "loadproof native";
/// The vllm engine's name in a receipt.
pub const VLLM: &str = "vllm bench serve";

/// Lowercase hex sha256 of the file at `path`, read in 1 MiB pieces.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut sha = Sha256Stream::default();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sha.update(buf.get(..n).unwrap_or_default());
    }
    Ok(sha.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// `name` at `version`, bound to the file `source` when it was found and can be read; else
/// unbound, saying why.
pub fn bind(
    name: &str,
    version: Option<String>,
    source: Result<PathBuf, String>,
) -> Implementation {
    let (source, source_sha256, unbound) = match source {
        Err(why) => (None, None, Some(why)),
        Ok(path) => match file_sha256(&path) {
            Ok(sha) => (Some(path.display().to_string()), Some(sha), None),
            Err(e) => (
                Some(path.display().to_string()),
                None,
                Some(format!("{}: {e}", path.display())),
            ),
        },
    };
    Implementation {
        name: name.to_owned(),
        version,
        source,
        source_sha256,
        unbound,
    }
}

/// The native client: this very executable.
pub fn native() -> Implementation {
    bind(
        NATIVE,
        Some(env!("CARGO_PKG_VERSION").to_owned()),
        std::env::current_exe()
            .map_err(|e| format!("the running executable's path is not known: {e}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_bound_by_its_sha256_and_a_missing_one_says_why() {
        let path = std::env::temp_dir().join(format!("loadproof-impl-{}", std::process::id()));
        std::fs::write(&path, b"abc").unwrap();
        let bound = bind(VLLM, None, Ok(path.clone()));
        assert_eq!(
            bound.source_sha256.as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(bound.unbound, None);
        std::fs::remove_file(&path).unwrap();
        let gone = bind(VLLM, None, Ok(path));
        assert_eq!(gone.source_sha256, None);
        assert!(gone.unbound.is_some());
        let unknown = bind(VLLM, None, Err("not found".to_owned()));
        assert_eq!(
            (unknown.source, unknown.unbound.as_deref()),
            (None, Some("not found"))
        );
    }
}
