//! `loadproof playbook publish --single-file OUT.html`: the site as one HTML file that opens
//! from disk with no network — the artefact people email — and the service worker a served
//! site registers to reload offline.
//!
//! The page holds the app's stylesheets (as `<style>`), its wasm-bindgen glue and its wasm (as
//! base64, the glue imported from a `blob:` URL and the module instantiated from bytes), and the
//! site's files (`playbook.json`, `receipts.json`, `receipts/NAME`) in core's
//! `site::single_file` form, which the page reads where a served site would fetch them.
//! Everything inlined is base64 or checked CSS, so no byte of a playbook or a receipt can close
//! the element it sits in.
//!
//! The same care as `--out`: the file must be absent, or a page this command wrote that still
//! verifies (its last line names the sha256 of everything above it); a link, another file, or
//! an edited page is refused and left as it was. The page is written beside the target under a
//! new name and renamed into place. A page over `--max-single-file-bytes` is refused before
//! anything is written. Receipts pass the same checks as a site's (`bundled_receipts`: no
//! bearer token).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use loadproof_core::receipt::sha256_hex;
use loadproof_core::site::single_file::{SITE_FILES_ID, encode_base64, files_json, script_safe};
use loadproof_core::site::{SITE_PLAYBOOK, SITE_RECEIPTS, SiteReceipts, is_site_path};

use crate::input::BadInput;
use loadproof_core::site::SiteReceipt;

/// What goes into the page.
pub(super) struct Inputs<'a> {
    /// The built app (`dist/`).
    pub app: &'a Path,
    /// The playbook's bytes, as read (and validated) by `publish`.
    pub playbook: &'a [u8],
    /// The receipts and their bytes, checked as a site's are (`publish`'s `bundled_receipts`).
    pub receipts: Vec<(&'a SiteReceipt, &'a [u8])>,
    /// The cap on the page's size.
    pub max_bytes: u64,
}

/// The last line of every page this writes: the sha256 of every byte before it follows.
const SEAL: &str = "<!-- loadproof single-file sha256:";

/// Writes the page to `target`; returns its size.
pub(super) fn write(inputs: &Inputs<'_>, target: &Path) -> Result<u64> {
    check_target(target, inputs.max_bytes)?;
    let over_cap = |size: String| -> anyhow::Error {
        BadInput(format!(
            "{}: the single file would be {size} bytes, over the cap of {} (--max-single-file-bytes); bundle fewer or smaller receipts, raise the cap, or publish a site with --out",
            target.display(),
            inputs.max_bytes
        ))
        .into()
    };
    // The playbook and receipts alone, as base64, bound the page from below: a page that
    // cannot fit is refused before anything is encoded (encoding takes several copies).
    let floor: u64 = std::iter::once(inputs.playbook.len())
        .chain(inputs.receipts.iter().map(|(_, bytes)| bytes.len()))
        .map(|n| (n as u64).div_ceil(3).saturating_mul(4))
        .fold(0, u64::saturating_add);
    if floor > inputs.max_bytes {
        return Err(over_cap(format!("at least {floor}")));
    }
    let page = page(inputs)?;
    let size = page.len() as u64;
    if size > inputs.max_bytes {
        return Err(over_cap(size.to_string()));
    }
    let staged = staging_file(target)?;
    if let Err(e) = std::fs::write(&staged, &page) {
        let _ = std::fs::remove_file(&staged);
        return Err(e).with_context(|| format!("writing {}", staged.display()));
    }
    std::fs::rename(&staged, target).with_context(|| {
        let _ = std::fs::remove_file(&staged);
        format!("moving {} to {}", staged.display(), target.display())
    })?;
    Ok(size)
}

/// True when `bytes` is a page [`write`] made, unedited since.
fn is_ours(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let Some(at) = text.rfind(SEAL) else {
        return false;
    };
    let (body, seal) = text.split_at(at);
    seal.strip_prefix(SEAL)
        .and_then(|rest| rest.strip_suffix(" -->\n"))
        .is_some_and(|digest| digest == sha256_hex(body.as_bytes()))
}

/// Refuses a target that is a link, not a regular file, larger than the cap (no page this
/// writes is: it is refused unread), or a file publish did not write (or that was edited since).
fn check_target(target: &Path, max_bytes: u64) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(target) else {
        return Ok(());
    };
    let refuse = |why: &str| -> Result<()> {
        Err(BadInput(format!(
            "{}: {why}; publish replaces only a single file it wrote and nobody edited since: nothing was changed",
            target.display()
        ))
        .into())
    };
    if meta.file_type().is_symlink() {
        return refuse("is a link");
    }
    if !meta.is_file() {
        return refuse("exists and is not a regular file");
    }
    if meta.len() > max_bytes {
        return refuse(
            "exists and is larger than the cap, so not a page publish wrote under it (not read)",
        );
    }
    let bytes = std::fs::read(target).with_context(|| format!("reading {}", target.display()))?;
    if !is_ours(&bytes) {
        return refuse("exists and is not a page publish wrote, or was edited since");
    }
    Ok(())
}

/// A new file beside `target` to write the page into (never one that already exists).
fn staging_file(target: &Path) -> Result<PathBuf> {
    let name = target
        .file_name()
        .ok_or_else(|| BadInput(format!("{}: not a file name", target.display())))?;
    let parent = target.parent().filter(|p| !p.as_os_str().is_empty());
    for n in 0..1000 {
        let staged = format!(
            ".{}.publish-{}-{n}",
            name.to_string_lossy(),
            std::process::id()
        );
        let path = parent.map_or_else(|| PathBuf::from(&staged), |p| p.join(&staged));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
    Err(BadInput(format!(
        "{}: no free name beside it to write the page in",
        target.display()
    ))
    .into())
}

/// The `href` of every `<link>` in `html` whose `rel` is `rel`, in order.
fn link_hrefs(html: &str, rel: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("<link") {
        let tag_and_more = &rest[at..];
        let end = tag_and_more.find('>').unwrap_or(tag_and_more.len());
        let tag = &tag_and_more[..end];
        if attribute(tag, "rel").as_deref() == Some(rel)
            && let Some(href) = attribute(tag, "href")
        {
            out.push(href);
        }
        rest = &tag_and_more[end..];
    }
    out
}

/// The quoted value of `name=` in one tag.
fn attribute(tag: &str, name: &str) -> Option<String> {
    for quote in ['"', '\''] {
        let key = format!(" {name}={quote}");
        if let Some(at) = tag.find(&key) {
            let value = &tag[at + key.len()..];
            return value.find(quote).map(|end| value[..end].to_owned());
        }
    }
    None
}

/// Reads an asset the app's index.html names: a relative path inside the app directory.
fn asset(app: &Path, href: &str) -> Result<Vec<u8>> {
    let rel = href.trim_start_matches("./");
    if !is_site_path(rel) || rel.contains(['?', '#']) {
        return Err(BadInput(format!(
            "{}: index.html names {href:?}, not a file inside the app",
            app.display()
        ))
        .into());
    }
    let root =
        std::fs::canonicalize(app).with_context(|| format!("resolving {}", app.display()))?;
    let path = std::fs::canonicalize(app.join(rel))
        .with_context(|| format!("resolving {}", app.join(rel).display()))?;
    if !path.starts_with(&root) || !path.is_file() {
        return Err(BadInput(format!(
            "{}: {href:?} is not a file inside the app directory",
            app.display()
        ))
        .into());
    }
    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
}

/// The whole page, its seal last.
fn page(inputs: &Inputs<'_>) -> Result<String> {
    let index_path = inputs.app.join("index.html");
    let index = std::fs::read_to_string(&index_path)
        .with_context(|| format!("reading {}", index_path.display()))?;
    let one = |rel: &str, what: &str| -> Result<String> {
        let found = link_hrefs(&index, rel);
        match found.as_slice() {
            [href] => Ok(href.clone()),
            _ => Err(BadInput(format!(
                "{}: expected one <link rel=\"{rel}\"> naming the app's {what}, found {}; build it with bash web/build.sh",
                index_path.display(),
                found.len()
            ))
            .into()),
        }
    };
    let glue = asset(inputs.app, &one("modulepreload", "JavaScript")?)?;
    let wasm = asset(inputs.app, &one("preload", "wasm")?)?;
    let mut styles = String::new();
    for href in link_hrefs(&index, "stylesheet") {
        let css = String::from_utf8(asset(inputs.app, &href)?)
            .map_err(|_| BadInput(format!("{href}: a stylesheet that is not UTF-8")))?;
        if css.to_ascii_lowercase().contains("</style") {
            return Err(BadInput(format!(
                "{href}: a stylesheet holding \"</style\" cannot be inlined"
            ))
            .into());
        }
        styles.push_str("<style>\n");
        styles.push_str(&css);
        styles.push_str("\n</style>\n");
    }
    let title = index
        .split_once("<title>")
        .and_then(|(_, rest)| rest.split_once("</title>"))
        .map_or("loadproof", |(title, _)| title);

    let mut files = BTreeMap::new();
    files.insert(SITE_PLAYBOOK.to_owned(), inputs.playbook.to_vec());
    let index_json = SiteReceipts::new(inputs.receipts.iter().map(|(e, _)| (*e).clone()).collect());
    files.insert(SITE_RECEIPTS.to_owned(), index_json.to_json().into_bytes());
    for (entry, bytes) in &inputs.receipts {
        files.insert(entry.path.clone(), bytes.to_vec());
    }

    let mut html = String::new();
    html.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n");
    html.push_str(&format!(
        "<title>{title}</title>\n<link rel=\"icon\" href=\"data:,\" />\n"
    ));
    html.push_str(&styles);
    html.push_str("</head>\n<body>\n<noscript>loadproof's page runs its analysis as WebAssembly: please enable JavaScript. Files never leave this machine.</noscript>\n");
    html.push_str(&format!(
        "<script type=\"application/json\" id=\"{SITE_FILES_ID}\">{}</script>\n",
        files_json(&files)
    ));
    html.push_str(&format!(
        "<script type=\"text/plain\" id=\"loadproof-glue\">{}</script>\n",
        encode_base64(&glue)
    ));
    html.push_str(&format!(
        "<script type=\"text/plain\" id=\"loadproof-wasm\">{}</script>\n",
        encode_base64(&wasm)
    ));
    html.push_str(BOOTSTRAP);
    html.push_str("</body>\n</html>\n");
    let digest = sha256_hex(html.as_bytes());
    html.push_str(&format!("{SEAL}{digest} -->\n"));
    Ok(html)
}

/// Starts the app from the page itself: the glue imported from a `blob:` URL, the wasm
/// instantiated from bytes. (No audit worker: from `file://` none can start; the page's
/// thread does the work.)
const BOOTSTRAP: &str = r#"<script type="module">
const bytes = (id) => {
  const text = atob(document.getElementById(id).textContent);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
};
const glue = URL.createObjectURL(new Blob([bytes('loadproof-glue')], { type: 'text/javascript' }));
const bindings = await import(glue);
const wasm = await bindings.default({ module_or_path: bytes('loadproof-wasm') });
window.wasmBindings = bindings;
dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
</script>
"#;

/// `sw.js` for a site whose files are `manifest` (`sha256  path` lines, as `site.sha256`):
/// its cache is named by their digest, so a republished site is a new cache and the old one
/// is dropped; it caches those files and the site's own index only, answers from that cache
/// first, and lets every other request through untouched.
pub(super) fn service_worker(manifest: &[String]) -> String {
    let version = sha256_hex(manifest.concat().as_bytes());
    let mut files = vec!["./".to_owned()];
    files.extend(manifest.iter().filter_map(|line| {
        line.trim_end()
            .split_once("  ")
            .map(|(_, name)| name.to_owned())
    }));
    let files = script_safe(&serde_json::to_string(&files).unwrap_or_else(|_| "[]".into()));
    format!(
        r#"// loadproof's service worker (written by `loadproof playbook publish`): the site reloads
// offline. It caches this site's own files only, under the digest of their contents.
// Caches are the origin's, shared by every site on it: each is named by this site's scope too,
// so a site drops only its own older caches, never another site's on the same origin.
const PREFIX = 'loadproof ' + self.registration.scope + ' ';
const VERSION = PREFIX + '{version}';
const FILES = {files}.map((p) => p.split('/').map(encodeURIComponent).join('/'));
self.addEventListener('install', (event) => {{
  // `reload`: the bytes the server holds now, never an HTTP cache's copy of a previous publish.
  const fresh = FILES.map((p) => new Request(p, {{ cache: 'reload' }}));
  event.waitUntil(caches.open(VERSION).then((c) => c.addAll(fresh)).then(() => self.skipWaiting()));
}});
self.addEventListener('activate', (event) => {{
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith(PREFIX) && k !== VERSION).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
}});
self.addEventListener('fetch', (event) => {{
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(caches.open(VERSION)
    .then((c) => c.match(request, {{ ignoreSearch: true }}))
    .then((hit) => hit || fetch(request)));
}});
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sites_worker_drops_only_its_own_older_caches() {
        let js = service_worker(&["ab  index.html\n".to_owned()]);
        assert!(js.contains("const PREFIX = 'loadproof ' + self.registration.scope + ' ';"));
        assert!(js.contains("k.startsWith(PREFIX) && k !== VERSION"));
        assert!(!js.contains("startsWith('loadproof-')"));
    }

    #[test]
    fn a_republished_sites_worker_caches_the_bytes_now_served_not_the_http_caches() {
        let js = service_worker(&["ab  index.html\n".to_owned()]);
        assert!(js.contains("new Request(p, { cache: 'reload' })"));
        assert!(js.contains("c.addAll(fresh)"));
    }

    #[test]
    fn only_an_unedited_page_of_ours_reads_as_ours() {
        let body = "<!doctype html><p>x</p>\n";
        let page = format!("{body}{SEAL}{} -->\n", sha256_hex(body.as_bytes()));
        assert!(is_ours(page.as_bytes()));
        assert!(!is_ours(page.replace("<p>x", "<p>y").as_bytes()));
        assert!(!is_ours(body.as_bytes()));
        assert!(!is_ours(b"\xff\xfe"));
        assert!(!is_ours(format!("{page}more").as_bytes()));
    }

    #[test]
    fn links_are_found_by_rel_in_order() {
        let html = r#"<link rel="stylesheet" href="./a.css"/><link rel='modulepreload' href='./g.js'><link rel="preload" href="./m.wasm" as="fetch"><link rel="stylesheet" href="./b.css">"#;
        assert_eq!(link_hrefs(html, "stylesheet"), ["./a.css", "./b.css"]);
        assert_eq!(link_hrefs(html, "modulepreload"), ["./g.js"]);
        assert_eq!(link_hrefs(html, "preload"), ["./m.wasm"]);
    }

    #[test]
    fn the_worker_caches_the_listed_files_under_their_digest() {
        let manifest = vec![
            "ab  index.html\n".to_owned(),
            "cd  receipts/a b.json\n".to_owned(),
        ];
        let sw = service_worker(&manifest);
        assert!(
            sw.contains(r#"["./","index.html","receipts/a b.json"]"#),
            "{sw}"
        );
        assert!(sw.contains(&format!(
            "const VERSION = PREFIX + '{}';",
            sha256_hex(b"ab  index.html\ncd  receipts/a b.json\n")
        )));
        let other = service_worker(&["ef  index.html\n".to_owned()]);
        let version = |js: &str| {
            js.lines()
                .find(|l| l.starts_with("const VERSION"))
                .map(str::to_owned)
        };
        assert_ne!(version(&sw), version(&other));
    }
}
