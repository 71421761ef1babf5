//! Ed25519 keys and their text forms.
//!
//! A public key is one line, `loadproof-ed25519 BASE64 [comment]`, so it can be printed,
//! pasted into the page, published on a web page or kept in a file of trusted keys, like an SSH
//! public key. A secret key file is one line, `loadproof-ed25519-secret BASE64`, the 32-byte
//! seed; it never leaves the party that signs. The key's id (the first 16 hex digits of the
//! sha256 of its 32 bytes) names it in reports: short enough to read aloud, long enough that
//! two keys a reviewer holds never share one by accident.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

/// First word of a public key line.
pub const PUBLIC_TAG: &str = "loadproof-ed25519";

/// First word of a secret key file.
pub const SECRET_TAG: &str = "loadproof-ed25519-secret";

/// The longest comment kept on a public key line, in bytes (a name, not a document).
pub const MAX_COMMENT_BYTES: usize = 200;

/// Why text is not a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The line does not start with the expected word.
    #[error("not a loadproof key: expected `{expected} BASE64`, found {found:?}")]
    NotAKey {
        /// The word expected.
        expected: &'static str,
        /// The start of what was found.
        found: String,
    },
    /// The key's bytes are not base64 of 32 bytes.
    #[error("the key is not base64 of 32 bytes: {0}")]
    Encoding(String),
    /// 32 bytes that are not an Ed25519 public key (not a curve point, or a weak one).
    #[error("the 32 bytes are not a usable Ed25519 public key")]
    NotAPoint,
    /// The comment is too long or holds control characters.
    #[error("the key's comment is {0}")]
    Comment(&'static str),
}

/// An Ed25519 public key: what verifies a [`super::Signed`] statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    /// The key from its 32 bytes; refuses bytes that are not a point and the small-order
    /// ("weak") points, which a forger could pick to make one signature verify for many
    /// statements.
    pub fn from_bytes(bytes: &[u8]) -> Result<PublicKey, KeyError> {
        let raw: [u8; 32] = bytes
            .try_into()
            .map_err(|_| KeyError::Encoding(format!("{} bytes, not 32", bytes.len())))?;
        let key = VerifyingKey::from_bytes(&raw).map_err(|_| KeyError::NotAPoint)?;
        if key.is_weak() {
            return Err(KeyError::NotAPoint);
        }
        Ok(PublicKey(key))
    }

    /// The key from its base64 (standard alphabet, padded).
    pub fn from_base64(text: &str) -> Result<PublicKey, KeyError> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|e| KeyError::Encoding(e.to_string()))?;
        PublicKey::from_bytes(&bytes)
    }

    /// Reads one public key line: the key and its comment (empty when none).
    pub fn parse_line(line: &str) -> Result<(PublicKey, String), KeyError> {
        let line = line.trim();
        let mut words = line.splitn(3, char::is_whitespace);
        let tag = words.next().unwrap_or_default();
        if tag != PUBLIC_TAG {
            // A secret key line given where a public one belongs is named, never echoed: its
            // next characters are the seed.
            let found = if tag.contains(SECRET_TAG) {
                format!("{SECRET_TAG} … (a secret key: give its public half, the .pub file)")
            } else {
                shown(tag)
            };
            return Err(KeyError::NotAKey {
                expected: PUBLIC_TAG,
                found,
            });
        }
        let key = PublicKey::from_base64(words.next().unwrap_or_default())?;
        let comment = words.next().unwrap_or_default().trim().to_owned();
        check_comment(&comment)?;
        Ok((key, comment))
    }

    /// The one-line text form, with `comment` after the key when not empty.
    pub fn to_line(&self, comment: &str) -> String {
        let comment = comment.trim();
        if comment.is_empty() {
            format!("{PUBLIC_TAG} {}", self.to_base64())
        } else {
            format!("{PUBLIC_TAG} {} {comment}", self.to_base64())
        }
    }

    /// The 32 bytes in base64.
    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0.as_bytes())
    }

    /// The key's id: the first 16 hex digits of the sha256 of its 32 bytes.
    pub fn id(&self) -> String {
        let digest = Sha256::digest(self.0.as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// Checks `signature` over `message` strictly (`verify_strict`: no malleable encodings).
    pub(super) fn verifies(&self, message: &[u8], signature: &Signature) -> bool {
        self.0.verify_strict(message, signature).is_ok()
    }
}

/// A comment is one short line of printable text.
/// The first word of a line that is not the key expected, as an error names it: whole when
/// short (another tool's tag, `ssh-ed25519`), else only its length. What follows it, and a
/// long first word, may be another secret given by mistake (an age identity, a WireGuard key
/// in bare base64): an error goes to terminals and CI logs, so it is never echoed.
fn shown(word: &str) -> String {
    const SHOWN_CHARS: usize = 20;
    let chars = word.chars().count();
    if chars <= SHOWN_CHARS {
        format!("{word} …")
    } else {
        format!("a word of {chars} characters (not shown: it may be key material)")
    }
}

fn check_comment(comment: &str) -> Result<(), KeyError> {
    if comment.len() > MAX_COMMENT_BYTES {
        return Err(KeyError::Comment("longer than 200 bytes"));
    }
    if comment.chars().any(char::is_control) {
        return Err(KeyError::Comment("holding control characters"));
    }
    Ok(())
}

/// An Ed25519 signing key. Its `Debug` prints only the public half.
#[derive(Clone)]
pub struct SecretKey(SigningKey);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey(public {})", self.public().id())
    }
}

impl SecretKey {
    /// The key whose seed is `seed` (32 bytes from the operating system's random source; core
    /// draws none).
    pub fn from_seed(seed: [u8; 32]) -> SecretKey {
        SecretKey(SigningKey::from_bytes(&seed))
    }

    /// Reads a secret key file: `loadproof-ed25519-secret BASE64` (blank lines and `#`
    /// comments around it allowed).
    pub fn parse(text: &str) -> Result<SecretKey, KeyError> {
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or_default();
        let mut words = line.split_whitespace();
        if words.next() != Some(SECRET_TAG) {
            return Err(KeyError::NotAKey {
                expected: SECRET_TAG,
                found: shown(line.split_whitespace().next().unwrap_or_default()),
            });
        }
        let bytes = STANDARD
            .decode(words.next().unwrap_or_default())
            .map_err(|e| KeyError::Encoding(e.to_string()))?;
        let seed: [u8; 32] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| KeyError::Encoding(format!("{} bytes, not 32", bytes.len())))?;
        Ok(SecretKey::from_seed(seed))
    }

    /// The secret key file's text (one line and a newline).
    pub fn to_text(&self) -> String {
        format!("{SECRET_TAG} {}\n", STANDARD.encode(self.0.to_bytes()))
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// Signs `message` (deterministic: one message, one signature).
    pub(super) fn sign(&self, message: &[u8]) -> Signature {
        self.0.sign(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_reads_back_from_its_own_lines() {
        let secret = SecretKey::from_seed([7; 32]);
        let again = SecretKey::parse(&secret.to_text()).unwrap();
        assert_eq!(again.public(), secret.public());
        let line = secret.public().to_line("sim at lab-3 (simulator)");
        let (public, comment) = PublicKey::parse_line(&line).unwrap();
        assert_eq!(public, secret.public());
        assert_eq!(comment, "sim at lab-3 (simulator)");
        let (_, none) = PublicKey::parse_line(&secret.public().to_line("")).unwrap();
        assert_eq!(none, "");
        assert_eq!(secret.public().id().len(), 16);
        assert!(!format!("{secret:?}").contains(&secret.to_text()[25..40]));
    }

    #[test]
    fn text_that_is_not_a_key_is_refused_by_name() {
        for (text, word) in [
            ("ssh-ed25519 AAAA", "not a loadproof key"),
            ("loadproof-ed25519 !!!", "not base64"),
            ("loadproof-ed25519 AAAA", "not base64 of 32 bytes"),
            ("", "not a loadproof key"),
        ] {
            let e = PublicKey::parse_line(text).unwrap_err().to_string();
            assert!(e.contains(word), "{text:?}: {e}");
        }
        // The identity point is a weak key: refused.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        assert_eq!(PublicKey::from_bytes(&identity), Err(KeyError::NotAPoint));
        let long = format!(
            "{} {}",
            SecretKey::from_seed([1; 32]).public().to_line(""),
            "x".repeat(300)
        );
        assert!(PublicKey::parse_line(&long).is_err());
        assert!(SecretKey::parse("loadproof-ed25519 AAAA").is_err());
    }

    /// Adversarial review: a reviewer who passes the secret file to `--trust` by mistake must
    /// not find part of the seed printed in the error (a terminal, a CI log).
    #[test]
    fn a_secret_key_given_as_a_public_key_is_refused_without_echoing_it() {
        let text = SecretKey::from_seed([3; 32]).to_text();
        let seed = text.split_whitespace().nth(1).unwrap();
        let e = PublicKey::parse_line(&text).unwrap_err().to_string();
        assert!(e.contains("a secret key"), "{e}");
        assert!(!e.contains(&seed[..4]), "{e}");
        let e = super::super::TrustSet::parse(&text)
            .unwrap_err()
            .to_string();
        assert!(!e.contains(&seed[..4]), "{e}");
    }

    /// Adversarial review: the refusal of a line that is not a key named up to its first 40
    /// characters (24 for a secret key file), so any other secret given by mistake — an age
    /// identity, a WireGuard key (bare base64), a loadproof secret behind a byte-order mark —
    /// was printed nearly whole to a terminal or CI log. What may be key material is described,
    /// never echoed.
    #[test]
    fn a_line_that_is_not_a_key_is_refused_without_echoing_what_may_be_a_secret() {
        let loadproof = SecretKey::from_seed([5; 32]).to_text();
        let secrets = [
            "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ9ZSDS"
                .to_owned(),
            "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=".to_owned(),
            format!("\u{feff}{loadproof}"),
        ];
        for secret in &secrets {
            let word = secret.split_whitespace().last().unwrap();
            let material = &word.strip_prefix("AGE-SECRET-KEY-1").unwrap_or(word)[..8];
            let e = PublicKey::parse_line(secret).unwrap_err().to_string();
            assert!(e.contains("not a loadproof key"), "{e}");
            assert!(!e.contains(material), "{e}");
            let e = super::super::TrustSet::parse(secret)
                .unwrap_err()
                .to_string();
            assert!(!e.contains(material), "{e}");
            let e = SecretKey::parse(&format!("{secret}x"))
                .unwrap_err()
                .to_string();
            assert!(!e.contains(material), "{e}");
            let e = SecretKey::parse(&secret.replace("loadproof-ed25519-secret", "x")).map(|_| ());
            assert!(e.is_err_and(|e| !e.to_string().contains(material)));
        }
        // A short first word (another tool's key line) is still named.
        let e = PublicKey::parse_line("ssh-ed25519 AAAAC3Nza")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ssh-ed25519"), "{e}");
        assert!(!e.contains("AAAAC3Nza"), "{e}");
    }
}
