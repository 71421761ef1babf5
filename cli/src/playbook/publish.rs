//! `loadproof playbook publish`: a playbook as a static site. The built web app, the playbook
//! byte for byte (after core validates it), any bundled receipts with their index, and
//! `site.sha256` over every file, staged beside SITE_DIR and renamed into place so a failed
//! publish leaves nothing half written.
//!
//! Nothing of the user's is lost: SITE_DIR must be absent, empty, or a site this command wrote
//! whose `site.sha256` still verifies and lists every file in it (anything else there — an
//! edited file, an extra file, a link — is refused and left alone). A link in the app
//! directory is never followed out of it. A receipt whose lease block still holds its bearer
//! token is refused unless `--redact-lease-tokens` takes the token out first.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use loadproof_core::playbook::Playbook;
use loadproof_core::receipt::sha256_hex;
use loadproof_core::site::{
    SITE_MANIFEST, SITE_PLAYBOOK, SITE_RECEIPT_DIR, SITE_RECEIPTS, SITE_WORKER, SiteReceipt,
    SiteReceipts,
};

use super::refused;
use crate::args::PlaybookPublishArgs;
use crate::input::{BadInput, read_receipt};

/// A receipt to bundle: its bytes, read and checked before anything is written.
struct Bundled {
    entry: SiteReceipt,
    bytes: Vec<u8>,
    qualified: bool,
}

/// Reads every `--receipt`: each must be a receipt (it need not qualify: the page shows why
/// not), hold no bearer token (or be redacted), and no two may share a file name (the site
/// keeps names, so a reader sees which is which).
fn bundled_receipts(paths: &[PathBuf], redact: bool) -> Result<Vec<Bundled>> {
    let mut out: Vec<Bundled> = Vec::new();
    for path in paths {
        let (mut bytes, mut receipt) = read_receipt(path)?;
        let token = receipt.lease_token().map_err(|why| {
            BadInput(format!(
                "{}: its lease block cannot be read ({why}), so publish cannot tell whether it holds the lease's bearer token; not published",
                path.display()
            ))
        })?;
        if let Some(token) = token {
            if !redact {
                return Err(BadInput(format!(
                    "{}: its lease block holds the lease's bearer token (a receipt written before leases named only token_sha256); a published site would hand it to anyone. Pass --redact-lease-tokens to publish it with the token replaced by its sha256",
                    path.display()
                ))
                .into());
            }
            receipt = receipt.redact_lease_token();
            let text = receipt.to_json() + "\n";
            if memchr::memmem::find(text.as_bytes(), token.as_bytes()).is_some() {
                return Err(BadInput(format!(
                    "{}: the lease token appears outside its lease block too; not published",
                    path.display()
                ))
                .into());
            }
            bytes = text.into_bytes();
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let entry = SiteReceipt::bundled(&name, &bytes).map_err(|_| {
            BadInput(format!(
                "{}: not a file name a site can keep",
                path.display()
            ))
        })?;
        if out.iter().any(|b| b.entry.name == name) {
            return Err(BadInput(format!(
                "{}: a second receipt named {name:?}; bundled receipts keep their file names, so rename one",
                path.display()
            ))
            .into());
        }
        let qualified = loadproof_core::audit::audit(&receipt).qualified;
        out.push(Bundled {
            entry,
            bytes,
            qualified,
        });
    }
    Ok(out)
}

/// Writes `receipts/NAME` for each and the index the page reads.
/// The index is written even when empty, so the page finds one (no 404) on every site.
fn write_bundled(site: &Path, bundled: &[Bundled]) -> Result<()> {
    let dir = site.join(SITE_RECEIPT_DIR);
    if !bundled.is_empty() {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    for b in bundled {
        let path = dir.join(&b.entry.name);
        std::fs::write(&path, &b.bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    let index = SiteReceipts::new(bundled.iter().map(|b| b.entry.clone()).collect());
    let path = site.join(SITE_RECEIPTS);
    std::fs::write(&path, index.to_json()).with_context(|| format!("writing {}", path.display()))
}

/// `loadproof playbook publish`.
pub fn publish(args: &PlaybookPublishArgs, out: &mut impl Write) -> Result<ExitCode> {
    let path = &args.playbook;
    let bytes = crate::input::read_file(path, crate::input::MAX_DOCUMENT_BYTES, "a playbook")?;
    let book = match Playbook::from_json(&bytes) {
        Ok(book) => book,
        Err(e) => return refused("publish", format!("{}: {e}", path.display())),
    };
    let index = args.app.join("index.html");
    if !index.is_file() {
        return Err(BadInput(format!(
            "{}: no built web app there (no index.html); build it with bash web/build.sh",
            args.app.display()
        ))
        .into());
    }
    let html =
        std::fs::read_to_string(&index).with_context(|| format!("reading {}", index.display()))?;
    if let Some(url) = root_absolute_url(&html) {
        return Err(BadInput(format!(
            "{}: loads {url:?} from the server's root, so the site would only work at /; rebuild it with bash web/build.sh (Trunk.toml sets public_url = \"./\")",
            index.display()
        ))
        .into());
    }
    let bundled = bundled_receipts(&args.receipts, args.redact_lease_tokens)?;
    let site_dir = match (&args.out, &args.single_file) {
        (Some(dir), None) => dir,
        (_, Some(file)) => {
            let written = super::single_file::write(
                &super::single_file::Inputs {
                    app: &args.app,
                    playbook: &bytes,
                    receipts: bundled
                        .iter()
                        .map(|b| (&b.entry, b.bytes.as_slice()))
                        .collect(),
                    max_bytes: args.max_single_file_bytes,
                },
                file,
            )?;
            writeln!(
                out,
                "published {} row(s) and {} receipt(s) as one file, {} ({written} bytes): open it from disk, no server or network needed",
                book.rows().len(),
                bundled.len(),
                file.display()
            )?;
            report_bundled(&bundled, out)?;
            return Ok(ExitCode::SUCCESS);
        }
        (None, None) => {
            return Err(
                BadInput("publish needs --out SITE_DIR or --single-file OUT.html".into()).into(),
            );
        }
    };
    check_site_dir(site_dir)?;

    // Build beside the target and rename into place, so a failed publish leaves nothing half
    // written and a re-publish never mixes two apps' files.
    let staging = staging_dir(site_dir)?;
    let result = (|| -> Result<usize> {
        copy_tree(&args.app, &staging)?;
        let playbook_path = staging.join(SITE_PLAYBOOK);
        std::fs::write(&playbook_path, &bytes)
            .with_context(|| format!("writing {}", playbook_path.display()))?;
        write_bundled(&staging, &bundled)?;
        // The service worker caches exactly the files listed so far, under their digest.
        let listed = site_manifest(&staging)?;
        let worker = staging.join(SITE_WORKER);
        std::fs::write(&worker, super::single_file::service_worker(&listed))
            .with_context(|| format!("writing {}", worker.display()))?;
        let manifest = site_manifest(&staging)?;
        let manifest_path = staging.join(SITE_MANIFEST);
        std::fs::write(&manifest_path, manifest.join(""))
            .with_context(|| format!("writing {}", manifest_path.display()))?;
        Ok(manifest.len())
    })();
    let n_files = match result {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    if site_dir.exists() {
        std::fs::remove_dir_all(site_dir)
            .with_context(|| format!("replacing {}", site_dir.display()))?;
    }
    std::fs::rename(&staging, site_dir)
        .with_context(|| format!("moving {} to {}", staging.display(), site_dir.display()))?;
    let illustrative = book
        .rows()
        .iter()
        .filter(|r| r.evidence() == loadproof_core::playbook::Evidence::Illustrative)
        .count();
    writeln!(
        out,
        "published {} row(s) ({} measured, {illustrative} illustrative) to {}: {n_files} files listed in {SITE_MANIFEST}",
        book.rows().len(),
        book.rows().len() - illustrative,
        site_dir.display()
    )?;
    report_bundled(&bundled, out)?;
    writeln!(
        out,
        "serve it with any static file server (e.g. python3 -m http.server -d {}) and open …/#/playbook; check it with (cd {} && sha256sum -c {SITE_MANIFEST})",
        site_dir.display(),
        site_dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// One line per bundled receipt: its place and whether it qualifies.
fn report_bundled(bundled: &[Bundled], out: &mut impl Write) -> Result<()> {
    for b in bundled {
        writeln!(
            out,
            "bundled receipt {SITE_RECEIPT_DIR}/{} ({}; the Receipt view shows why)",
            b.entry.name,
            if b.qualified {
                "qualified"
            } else {
                "unqualified"
            }
        )?;
    }
    Ok(())
}

/// The first URL in `html` that points at the server's root (`"/x.js"`, `'/x.wasm'`,
/// `//host/x`), if any: such a page works only when served at `/`.
fn root_absolute_url(html: &str) -> Option<String> {
    for quote in ['"', '\''] {
        let opening = format!("{quote}/");
        let mut rest = html;
        while let Some(at) = rest.find(&opening) {
            let after = &rest[at + 1..];
            let end = after.find(quote).unwrap_or(after.len());
            let url = &after[..end];
            // A lone "/" inside text (e.g. a closing tag written in a string) is not a URL.
            if url.len() > 1 && !url.contains(char::is_whitespace) {
                return Some(url.to_owned());
            }
            rest = &after[end.min(after.len())..];
        }
    }
    None
}

/// Refuses a SITE_DIR that is a file or a link, or a non-empty directory that is not, provably,
/// a site this command wrote: its `site.sha256` must verify and list every file in it.
fn check_site_dir(dir: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return Ok(());
    };
    if !meta.is_dir() {
        return Err(BadInput(format!(
            "{}: exists and is not a directory (publish replaces only a directory it wrote)",
            dir.display()
        ))
        .into());
    }
    let mut entries =
        std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    if entries.next().is_none() {
        return Ok(());
    }
    let refuse = |why: String| -> Result<()> {
        Err(BadInput(format!(
            "{}: not empty and not provably a site publish wrote ({why}); refusing to replace it: nothing was changed",
            dir.display()
        ))
        .into())
    };
    let manifest = dir.join(SITE_MANIFEST);
    let text = match std::fs::read_to_string(&manifest) {
        Ok(text) => text,
        Err(_) => return refuse(format!("no readable {SITE_MANIFEST}")),
    };
    let mut listed = std::collections::BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let Some((sha, name)) = line.split_once("  ") else {
            return refuse(format!(
                "{SITE_MANIFEST} line {} is not `sha256  path`",
                i + 1
            ));
        };
        listed.insert(name.to_owned(), sha.to_owned());
    }
    let present = site_files(dir)?;
    // A directory with no listed file under it (say, one made inside the site) is not ours.
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let entry = entry.with_context(|| format!("reading {}", d.display()))?;
            if entry.file_type().is_ok_and(|k| k.is_dir()) {
                let path = entry.path();
                let rel = path.strip_prefix(dir).unwrap_or(&path);
                let prefix = format!(
                    "{}/",
                    rel.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/")
                );
                if !listed.keys().any(|name| name.starts_with(&prefix)) {
                    return refuse(format!("{prefix} holds nothing its {SITE_MANIFEST} lists"));
                }
                stack.push(path);
            }
        }
    }
    for (name, path) in &present {
        if name == SITE_MANIFEST {
            continue;
        }
        let Some(sha) = listed.get(name) else {
            return refuse(format!("{name} is not in its {SITE_MANIFEST}"));
        };
        let kind = std::fs::symlink_metadata(path)
            .with_context(|| format!("reading {}", path.display()))?;
        if !kind.is_file() {
            return refuse(format!("{name} is not a regular file"));
        }
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        if sha256_hex(&bytes) != *sha {
            return refuse(format!("{name} changed since it was published"));
        }
    }
    Ok(())
}

/// Every file and link under `dir`, by its `/`-separated relative name (directories walked,
/// links never followed).
fn site_files(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let entry = entry.with_context(|| format!("reading {}", d.display()))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .with_context(|| format!("reading {}", path.display()))?;
            if kind.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.push((name, path));
        }
    }
    files.sort();
    Ok(files)
}

/// A hidden sibling of `out` to build the site in, created here and new: a directory that
/// happens to have that name already is someone else's and is never touched.
fn staging_dir(out: &Path) -> Result<PathBuf> {
    let name = out
        .file_name()
        .ok_or_else(|| BadInput(format!("{}: not a directory name", out.display())))?;
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(parent) = parent {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    for n in 0..1000 {
        let staged = format!(
            ".{}.publish-{}-{n}",
            name.to_string_lossy(),
            std::process::id()
        );
        let path = match parent {
            Some(p) => p.join(staged),
            None => PathBuf::from(staged),
        };
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
    Err(BadInput(format!(
        "{}: no free name beside it to stage the site in",
        out.display()
    ))
    .into())
}

/// Copies every regular file under `from` to `to` (directories recreated), leaving out a
/// playbook or manifest the app directory may hold: the site's own are written after. A link
/// is copied as the file it names only when that file is inside `from`; a link out of it, or
/// to a directory, is refused (a site must not carry what the app directory does not hold).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let top = from;
    let root =
        std::fs::canonicalize(from).with_context(|| format!("resolving {}", from.display()))?;
    let mut stack = vec![from.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?
        {
            let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
            let source = entry.path();
            let rel = source.strip_prefix(top).unwrap_or(&source);
            if rel == Path::new(SITE_PLAYBOOK)
                || rel == Path::new(SITE_MANIFEST)
                || rel == Path::new(SITE_WORKER)
                || rel == Path::new(SITE_RECEIPTS)
                || rel.starts_with(SITE_RECEIPT_DIR)
            {
                continue;
            }
            let target = to.join(rel);
            let kind = entry
                .file_type()
                .with_context(|| format!("reading {}", source.display()))?;
            if kind.is_symlink() {
                let resolved = std::fs::canonicalize(&source)
                    .with_context(|| format!("resolving the link {}", source.display()))?;
                if !resolved.starts_with(&root) || !resolved.is_file() {
                    return Err(BadInput(format!(
                        "{}: a link to {}, {}; publish copies only files inside the app directory",
                        source.display(),
                        resolved.display(),
                        if resolved.starts_with(&root) {
                            "not a file"
                        } else {
                            "outside the app directory"
                        }
                    ))
                    .into());
                }
                std::fs::copy(&resolved, &target).with_context(|| {
                    format!("copying {} to {}", resolved.display(), target.display())
                })?;
            } else if kind.is_dir() {
                std::fs::create_dir_all(&target)
                    .with_context(|| format!("creating {}", target.display()))?;
                stack.push(source);
            } else if !kind.is_file() {
                return Err(BadInput(
                    crate::input::not_a_regular_file(&source)
                        .unwrap_or_else(|| format!("{}: not a regular file", source.display())),
                )
                .into());
            } else {
                std::fs::copy(&source, &target).with_context(|| {
                    format!("copying {} to {}", source.display(), target.display())
                })?;
            }
        }
    }
    Ok(())
}

/// `sha256  path\n` for every file under `dir` (paths relative, `/`-separated, sorted by
/// bytes), as `sha256sum` writes them.
fn site_manifest(dir: &Path) -> Result<Vec<String>> {
    let files = site_files(dir)?;
    if let Some((_, path)) = files.iter().find(|(name, _)| name.contains(['\n', '\\'])) {
        return Err(BadInput(format!(
            "{}: a file name with a newline or backslash cannot be listed in {SITE_MANIFEST}",
            path.display()
        ))
        .into());
    }
    files
        .into_iter()
        .map(|(name, path)| {
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            Ok(format!("{}  {name}\n", sha256_hex(&bytes)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adversarial pass: a directory already named like the staging directory was deleted.
    #[test]
    fn the_staging_directory_is_new_and_never_someone_elses() {
        let dir = std::env::temp_dir().join(format!("loadproof-staging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let theirs = dir.join(format!(".site.publish-{}-0", std::process::id()));
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
        let staged = staging_dir(&dir.join("site")).unwrap();
        assert_ne!(staged, theirs);
        assert!(staged.is_dir());
        assert_eq!(
            std::fs::read_to_string(theirs.join("notes.txt")).unwrap(),
            "mine"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
