//! What a published site holds beside the app: the file names `playbook publish` writes and the
//! page fetches, and the index of bundled receipts (`loadproof.site-receipts/v1`).
//!
//! One writer (the CLI) and two readers (the Receipt and Compare views) share this module, so
//! they agree on the schema and on the one rule a listed path must follow: a relative path on
//! the site itself. A page that followed `https://…`, `/…`, `..` or a drive-letter path from
//! an index would fetch what the site did not publish.

pub mod single_file;

use serde::{Deserialize, Serialize};

use crate::receipt::sha256_hex;

/// The manifest of a published site: every other file's sha256, `sha256sum -c` format.
pub const SITE_MANIFEST: &str = "site.sha256";
/// The playbook inside a published site.
pub const SITE_PLAYBOOK: &str = "playbook.json";
/// The index of the receipts bundled with a site.
pub const SITE_RECEIPTS: &str = "receipts.json";
/// Where bundled receipts sit in a site.
pub const SITE_RECEIPT_DIR: &str = "receipts";
/// The service worker a published site serves, so it reloads offline: versioned by the
/// site's content, caching only the site's own files.
pub const SITE_WORKER: &str = "sw.js";
/// Schema identity of [`SiteReceipts`].
pub const SITE_RECEIPTS_SCHEMA: &str = "loadproof.site-receipts/v1";

/// `receipts.json`: the receipts a site bundles, in the order given to `publish`.
///
/// Fields are declared in the order their keys sort, which is the order the file has always
/// been written in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteReceipts {
    /// One entry per bundled receipt.
    pub receipts: Vec<SiteReceipt>,
    /// [`SITE_RECEIPTS_SCHEMA`].
    pub schema: String,
}

/// One receipt a site bundles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteReceipt {
    /// Its size.
    pub bytes: u64,
    /// The name it is listed under (its file name).
    pub name: String,
    /// Its path relative to the page.
    pub path: String,
    /// sha256 of its bytes, lowercase hex.
    pub sha256: String,
}

/// Why an index, or a name for one, is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SiteError {
    /// Not JSON of the index's shape.
    #[error("line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What JSON said.
        message: String,
    },
    /// Another schema.
    #[error("schema {found:?} is not {SITE_RECEIPTS_SCHEMA:?}")]
    Schema {
        /// The schema the file names.
        found: String,
    },
    /// A listed path that would leave the site.
    #[error("receipt {name:?}: path {path:?} is not a relative path on this site")]
    Path {
        /// The entry's name.
        name: String,
        /// Its path.
        path: String,
    },
    /// A file name a site cannot keep.
    #[error("{name:?} is not a file name a site can keep")]
    Name {
        /// The name.
        name: String,
    },
}

/// Whether `path` stays on the site: non-empty, relative, no `..` segment, and nothing a
/// browser or a file system could read as another origin, root or drive (`:`, `\`).
pub fn is_site_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains([':', '\\', '\n', '\r'])
        && !path.split('/').any(|part| part == "..")
}

impl SiteReceipts {
    /// An index of `receipts`.
    pub fn new(receipts: Vec<SiteReceipt>) -> SiteReceipts {
        SiteReceipts {
            receipts,
            schema: SITE_RECEIPTS_SCHEMA.to_owned(),
        }
    }

    /// Reads `receipts.json`; refuses another schema or any path that leaves the site.
    pub fn from_json(bytes: &[u8]) -> Result<SiteReceipts, SiteError> {
        let index: SiteReceipts = serde_json::from_slice(bytes).map_err(|e| SiteError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        if index.schema != SITE_RECEIPTS_SCHEMA {
            return Err(SiteError::Schema {
                found: index.schema,
            });
        }
        if let Some(r) = index.receipts.iter().find(|r| !is_site_path(&r.path)) {
            return Err(SiteError::Path {
                name: r.name.clone(),
                path: r.path.clone(),
            });
        }
        Ok(index)
    }

    /// The file as `publish` writes it: pretty JSON and a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

impl SiteReceipt {
    /// The entry for a receipt kept as `receipts/NAME`: the name must be one path segment that
    /// [`is_site_path`] accepts.
    pub fn bundled(name: &str, bytes: &[u8]) -> Result<SiteReceipt, SiteError> {
        if name.contains('/') || name == "." || !is_site_path(name) {
            return Err(SiteError::Name {
                name: name.to_owned(),
            });
        }
        Ok(SiteReceipt {
            bytes: bytes.len() as u64,
            name: name.to_owned(),
            path: format!("{SITE_RECEIPT_DIR}/{name}"),
            sha256: sha256_hex(bytes),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_path_must_stay_on_the_site() {
        let ok = br#"{"schema":"loadproof.site-receipts/v1","receipts":[{"name":"a.json","path":"receipts/a.json","sha256":"00","bytes":3}]}"#;
        let index = SiteReceipts::from_json(ok).unwrap();
        assert_eq!(index.receipts[0].path, "receipts/a.json");
        for bad in [
            "https://x/a.json",
            "/a.json",
            "../a.json",
            "receipts/../../a",
            "//x/a",
            "",
            "c:a.json",
            "receipts\\\\a.json",
        ] {
            let json = format!(
                r#"{{"schema":"loadproof.site-receipts/v1","receipts":[{{"name":"a","path":"{bad}","sha256":"00","bytes":3}}]}}"#
            );
            assert!(
                matches!(
                    SiteReceipts::from_json(json.as_bytes()),
                    Err(SiteError::Path { .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            SiteReceipts::from_json(br#"{"schema":"x","receipts":[]}"#),
            Err(SiteError::Schema { .. })
        ));
    }

    #[test]
    fn the_writer_refuses_a_name_the_readers_would_refuse() {
        for bad in ["", ".", "..", "a/b.json", "a:b.json", "a\\b.json", "a\nb"] {
            assert!(SiteReceipt::bundled(bad, b"{}").is_err(), "{bad:?}");
        }
        let entry = SiteReceipt::bundled("baseline.json", b"{}").unwrap();
        assert_eq!(entry.path, "receipts/baseline.json");
        let index = SiteReceipts::new(vec![entry]);
        assert_eq!(
            SiteReceipts::from_json(index.to_json().as_bytes()),
            Ok(index)
        );
    }

    #[test]
    fn the_index_is_written_with_sorted_keys() {
        let index = SiteReceipts::new(vec![SiteReceipt::bundled("a.json", b"xyz").unwrap()]);
        let expected = serde_json::to_string_pretty(&serde_json::json!({
            "schema": SITE_RECEIPTS_SCHEMA,
            "receipts": [{"name": "a.json", "path": "receipts/a.json", "sha256": sha256_hex(b"xyz"), "bytes": 3}],
        }))
        .unwrap()
            + "\n";
        assert_eq!(index.to_json(), expected);
    }
}
