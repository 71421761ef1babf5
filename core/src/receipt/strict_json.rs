//! A receipt's JSON read without ambiguity: a key twice in one object is refused by name.
//!
//! serde (and most JSON readers) keep the last of two equal keys. A receipt is evidence, so a
//! reader that would see `"output_tokens_per_s": 1e9` where another sees the honest number, or
//! two blocks under one name, must not be able to disagree with this one about what the file
//! says: [`first_duplicate_key`] walks the whole document once and names the first repeated
//! key by its path. Nesting depth is bounded by serde_json's own recursion limit.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The path (`$.evidence["metrics/0"]`, `$.scrapes[3].url`) of the first key that appears twice
/// in one object, or `None`; `Err` when the bytes are not JSON.
pub fn first_duplicate_key(bytes: &[u8]) -> Result<Option<String>, serde_json::Error> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Walk {
        path: "$".to_owned(),
        found: &mut found,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(found)
}

struct Walk<'a> {
    path: String,
    found: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let seed = Walk {
                path: format!("{}[{i}]", self.path),
                found: &mut *self.found,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                format!("{}.{key}", self.path)
            } else {
                format!("{}[{key:?}]", self.path)
            };
            if !seen.insert(key) && self.found.is_none() {
                *self.found = Some(path.clone());
            }
            map.next_value_seed(Walk {
                path,
                found: &mut *self.found,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_twice_in_one_object_is_named_by_its_path() {
        assert_eq!(
            first_duplicate_key(br#"{"a":1,"b":{"c":[1,{"d":1}]}}"#).unwrap(),
            None
        );
        assert_eq!(
            first_duplicate_key(br#"{"a":1,"b":[{"c":1},{"c":2,"c":3}]}"#).unwrap(),
            Some("$.b[1].c".to_owned())
        );
        assert_eq!(
            first_duplicate_key(br#"{"evidence":{"metrics/0":{},"metrics/0":{}}}"#).unwrap(),
            Some(r#"$.evidence["metrics/0"]"#.to_owned())
        );
        assert!(first_duplicate_key(b"{").is_err());
        assert!(first_duplicate_key(b"{} x").is_err());
    }
}
