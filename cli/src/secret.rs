//! Secrets (an API key, a lease token) come from environment variables named on the command
//! line, never from flag values: argv lands in `ps`, shell history and receipts. A secret is
//! read once, checked to fit an HTTP header, and from then on only ever travels in a header
//! marked sensitive; no message names its value.

use hyper::header::HeaderValue;

use crate::input::BadInput;

/// The value of environment variable `name` (named by `flag`), non-empty and sendable as
/// `Authorization: Bearer <value>`.
pub fn from_env(flag: &str, name: &str) -> Result<String, BadInput> {
    checked(flag, name, std::env::var(name))
}

fn checked(
    flag: &str,
    name: &str,
    read: Result<String, std::env::VarError>,
) -> Result<String, BadInput> {
    let value = read.map_err(|e| {
        BadInput(match e {
            std::env::VarError::NotPresent => {
                format!("{flag} {name}: the environment variable {name} is not set")
            }
            std::env::VarError::NotUnicode(_) => {
                format!("{flag} {name}: the environment variable {name} is not UTF-8")
            }
        })
    })?;
    if value.trim().is_empty() {
        return Err(BadInput(format!(
            "{flag} {name}: the environment variable {name} is empty"
        )));
    }
    bearer(&value).map_err(|_| {
        BadInput(format!(
            "{flag} {name}: the value of {name} has characters an HTTP header cannot carry"
        ))
    })?;
    Ok(value)
}

/// `Bearer <secret>` as a header value marked sensitive (hyper never logs it). The error names
/// nothing of the secret.
pub fn bearer(secret: &str) -> Result<HeaderValue, ()> {
    raw(&format!("Bearer {secret}"))
}

/// `secret` as a header value marked sensitive.
pub fn raw(secret: &str) -> Result<HeaderValue, ()> {
    let mut value = HeaderValue::from_str(secret).map_err(|_| ())?;
    value.set_sensitive(true);
    Ok(value)
}

/// The header a lease token travels in when `Authorization` carries an API key (the gate and
/// the sim accept it there too; the gate removes it before forwarding).
pub const LEASE_HEADER: &str = "x-loadproof-lease-token";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_in_the_environment_is_never_in_an_error() {
        let name = "SERVER_KEY";
        let why = checked("--api-key-env", name, Ok("s3cr3t\nvalue".to_owned()))
            .unwrap_err()
            .0;
        assert!(!why.contains("s3cr3t"), "{why}");
        assert!(why.contains(name), "{why}");
        let why = checked("--api-key-env", name, Ok("  ".to_owned()))
            .unwrap_err()
            .0;
        assert!(why.contains("is empty"), "{why}");
        let why = checked("--api-key-env", name, Err(std::env::VarError::NotPresent))
            .unwrap_err()
            .0;
        assert!(why.contains("is not set"), "{why}");
        assert_eq!(
            checked("--api-key-env", name, Ok("k-1".to_owned())).unwrap(),
            "k-1"
        );
        assert!(bearer("k-1").unwrap().is_sensitive());
    }
}
