//! Who produced a piece of evidence: Ed25519 keys, statements signed with them, and the keys a
//! reviewer trusts.
//!
//! A receipt is the claimant's file, so everything in it the claimant could have typed — a
//! lease, a scrape body, a count — is their word until a party the reviewer trusts vouches for
//! it. The party that runs the serving host (the lessor: `loadproof gate`, or the simulator)
//! signs what only it sees; the reviewer names the keys they trust; the audit checks the one
//! against the other. This module holds only the mechanics, the same natively and in the page:
//!
//! - [`key`]: a key pair from a 32-byte seed (the CLI draws it), and the one-line text forms of
//!   both halves (`loadproof-ed25519 BASE64 [comment]`, publishable like an SSH public key).
//! - [`signed`]: a [`Signed`] statement — the exact bytes signed, the key, the signature — as
//!   one JSON envelope; verified strictly (no malleable signatures, no weak keys).
//! - [`trust`]: a [`TrustSet`], the reviewer's keys, read from one or more key files.
//!
//! What a statement *says* (a lease, a scrape's digest, the seal of a record stream) is its
//! reader's business; here a statement is bytes.

pub mod key;
pub mod signed;
pub mod trust;

pub use key::{KeyError, PublicKey, SecretKey};
pub use signed::{SIGNED_SCHEMA, Signed, SignedError, Unverified};
pub use trust::{TrustError, TrustSet};
