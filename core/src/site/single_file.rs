//! The site's files inside one HTML page (`loadproof playbook publish --single-file`): one
//! element, [`SITE_FILES_ID`], holds a JSON object from each site path (`playbook.json`,
//! `receipts.json`, `receipts/NAME`) to its bytes in base64, so the page reads them where a
//! served site would fetch them.
//!
//! Every value is base64 (only `A-Z a-z 0-9 + / =`), and every `<`, `>` and `&` in the JSON
//! (only in keys) is written as a `\u` escape: no byte of a playbook or a receipt can close
//! the `<script>` element it sits in, whatever it holds. The CLI writes this and the page
//! reads it; both go through this module.

use std::collections::BTreeMap;

use super::SiteError;

/// The id of the `<script type="application/json">` element that holds the site's files.
pub const SITE_FILES_ID: &str = "loadproof-site-files";

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 §4).
pub fn encode_base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                let idx = ((n >> shift) & 63) as usize;
                out.push(char::from(ALPHABET.get(idx).copied().unwrap_or(b'A')));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes [`encode_base64`]'s output; `None` for any other character, a misplaced `=` or a
/// length that is not a multiple of 4.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let n_chunks = bytes.len() / 4;
    for (chunk_idx, chunk) in bytes.chunks(4).enumerate() {
        let last = chunk_idx + 1 == n_chunks;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if i >= 4 - pad => 0,
                _ => return None,
            };
            n = (n << 6) | u32::from(v);
        }
        let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(three.get(..3 - pad)?);
    }
    Some(out)
}

/// The element's text: `{"path":"base64",…}` in path order, safe inside `<script>`.
pub fn files_json(files: &BTreeMap<String, Vec<u8>>) -> String {
    let encoded: BTreeMap<&str, String> = files
        .iter()
        .map(|(path, bytes)| (path.as_str(), encode_base64(bytes)))
        .collect();
    script_safe(&serde_json::to_string(&encoded).unwrap_or_default())
}

/// Reads the element's text back into each path's bytes.
pub fn read_files_json(text: &str) -> Result<BTreeMap<String, Vec<u8>>, SiteError> {
    let encoded: BTreeMap<String, String> =
        serde_json::from_str(text).map_err(|e| SiteError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
    encoded
        .into_iter()
        .map(|(path, b64)| match decode_base64(&b64) {
            Some(bytes) => Ok((path, bytes)),
            None => Err(SiteError::Name { name: path }),
        })
        .collect()
}

/// JSON text with `<`, `>` and `&` escaped (they occur only inside strings, where `\u003c`
/// means the same), so it can sit inside any HTML element unchanged in meaning.
pub fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length_and_matches_rfc_4648() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode_base64(plain.as_bytes()), coded);
            assert_eq!(decode_base64(coded).unwrap(), plain.as_bytes());
        }
        let all: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for n in 0..all.len() {
            assert_eq!(decode_base64(&encode_base64(&all[..n])).unwrap(), &all[..n]);
        }
    }

    #[test]
    fn malformed_base64_is_refused_never_a_panic() {
        for bad in [
            "Z", "Zg=", "Z===", "Zg==Zg==", "Zm9<", "====", "Zm=v", "é123",
        ] {
            assert_eq!(decode_base64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn no_file_can_close_the_script_element_it_is_inlined_in() {
        let mut files = BTreeMap::new();
        files.insert(
            "playbook.json".to_owned(),
            b"</script><script>alert(1)</script>".to_vec(),
        );
        files.insert("receipts/<b>&.json".to_owned(), b"{}".to_vec());
        let text = files_json(&files);
        assert!(!text.to_ascii_lowercase().contains("</script"));
        assert!(!text.contains(['<', '>', '&']), "{text}");
        assert_eq!(read_files_json(&text).unwrap(), files);
    }
}
