//! The keys a reviewer trusts: one or more public key lines (blank lines and `#` comments
//! allowed), from files the reviewer names (`--trust KEYFILE`) or keys pasted into the page.
//!
//! Trust is the reviewer's, never the receipt's: a receipt may carry any number of signed
//! statements, but a signature counts only when its key is in the reviewer's set.

use super::key::{KeyError, PublicKey};

/// A line of a key file that is not a public key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {error}")]
pub struct TrustError {
    /// 1-based line number.
    pub line: usize,
    /// Why the line is not a key.
    pub error: KeyError,
}

/// The reviewer's trusted keys, each with its comment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustSet {
    keys: Vec<(PublicKey, String)>,
}

impl TrustSet {
    /// Reads every key in `text` (one per line).
    pub fn parse(text: &str) -> Result<TrustSet, TrustError> {
        let mut set = TrustSet::default();
        set.add(text)?;
        Ok(set)
    }

    /// Adds every key in `text` (one per line); a key already held keeps its first comment.
    pub fn add(&mut self, text: &str) -> Result<(), TrustError> {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, comment) =
                PublicKey::parse_line(line).map_err(|error| TrustError { line: i + 1, error })?;
            if self.comment(&key).is_none() {
                self.keys.push((key, comment));
            }
        }
        Ok(())
    }

    /// The comment of `key` when it is trusted (`Some("")` for a trusted key without one).
    pub fn comment(&self, key: &PublicKey) -> Option<&str> {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, c)| c.as_str())
    }

    /// True when no key is trusted.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys as lines, in the order given.
    pub fn lines(&self) -> Vec<String> {
        self.keys.iter().map(|(k, c)| k.to_line(c)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing::SecretKey;

    #[test]
    fn a_key_file_names_the_line_that_is_not_a_key() {
        let a = SecretKey::from_seed([1; 32]).public();
        let b = SecretKey::from_seed([2; 32]).public();
        let text = format!(
            "# the platform team\n{}\n\n{}\n",
            a.to_line("gate"),
            b.to_line("")
        );
        let set = TrustSet::parse(&text).unwrap();
        assert_eq!(set.comment(&a), Some("gate"));
        assert_eq!(set.comment(&b), Some(""));
        assert_eq!(set.lines().len(), 2);
        let e = TrustSet::parse(&format!("{}\nssh-ed25519 AAAA\n", a.to_line(""))).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(TrustSet::default().comment(&a).is_none());
    }
}
