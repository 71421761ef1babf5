//! Who vouches for the window: the lease as its lessor signed it, checked against the keys the
//! reviewer trusts.
//!
//! Without a signature every fact about the window is the claimant's to type (the lease, the
//! gauge in the scrapes, the subject): such a receipt is *self-attested*, and says so. With the
//! lessor's signature over the exact lease bytes the receipt holds, and the lessor's key among
//! those the reviewer trusts ([`super::Policy::trusted_keys`]), the lease is the lessor's word,
//! not the claimant's: *signed*. A signature that does not verify, or that covers another
//! lease, is not a weaker attestation but a tampered receipt: an inconsistency, refused.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::receipt::stream::SealStatement;
use crate::receipt::{
    LEASE_ACCOUNT_SCHEMA_V1, Lease, LeaseAccount, Phase, Receipt, SCRAPE_STATEMENT_SCHEMA_V1,
    ScrapeChain, ScrapeOutcome, ScrapeStatement, block, origin, signed_block_of,
};
use crate::signing::{PublicKey, Signed, TrustSet, Unverified};

/// How well the window's evidence is vouched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The lease is signed by a key the reviewer trusts.
    Signed,
    /// Nothing the reviewer trusts vouches for it: the claimant's word.
    SelfAttested,
}

/// The attestation of one audited receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// [`Level::Signed`] or [`Level::SelfAttested`].
    pub level: Level,
    /// Why, in one line.
    pub reason: String,
    /// The lease's signature, when the receipt holds one that verifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_key: Option<SignerFacts>,
    /// The lessor's statements of the `/metrics` bodies it served during the run.
    pub scrapes: ScrapeSignatures,
    /// Who signed the record stream's seal (the firing client, given a key), when it is
    /// signed and the signature holds: no record added, dropped or changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal_key: Option<SignerFacts>,
    /// The lessor's signed account of the lease at its release, held to the client's ledger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_account: Option<AccountFacts>,
    /// How many keys the reviewer trusted (0: every receipt is self-attested).
    pub trusted_keys: usize,
}

/// The lessor's count of the lease against the client's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountFacts {
    /// Who signed it.
    pub key: SignerFacts,
    /// Requests the lessor admitted under the lease.
    pub requests: u64,
    /// Prompt tokens the lessor counted in the responses whose usage it saw (absent: a v1
    /// account, which counted no tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens of the same responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Admitted requests whose usage the lessor did not see: while not 0, its token sums are
    /// a lower bound for the lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncounted_requests: Option<u64>,
    /// `/metrics` bodies the lessor says it served to the holder under the lease (the receipt
    /// must hold every one of their numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrapes: Option<u64>,
    /// The digest chaining those statements ([`ScrapeChain`]), which this account's signature
    /// vouches for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_chain: Option<String>,
    /// True when every one of those statements is in the receipt and chains to it: its one
    /// signature then stands for them all (theirs are not checked one by one).
    #[serde(default, skip_serializing_if = "is_false")]
    pub vouches_for_scrapes: bool,
    /// True when the client's ledger fits it: no more completed than admitted, no more
    /// admitted than offered, and no token count of one side the other contradicts.
    pub agrees: bool,
    /// One line: the two counts side by side.
    pub reason: String,
}

/// How many of the run's engine scrapes its lessor's signed statements vouch for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScrapeSignatures {
    /// Engine scrapes of the route the lease protects (the lessor's own `/metrics`), before,
    /// during and after the run: the bodies the window, subject and counters are read from
    /// (the counters' deltas run from the before- to the after-scrape).
    pub lessor_scrapes: usize,
    /// Of those, how many carry a statement that holds (verifies, names the body's digest and
    /// this lease, served inside it, after the previous one of its URL).
    pub signed: usize,
    /// Of those, how many are signed by the key that signed the lease, when the reviewer
    /// trusts it.
    pub by_trusted_key: usize,
    /// Engine scrapes of other URLs (replicas the lease does not protect): their counters are
    /// summed with the route's, so each must be the lessor's word too for the receipt to read
    /// signed.
    #[serde(default)]
    pub other_engine_scrapes: usize,
    /// Of those, how many carry a statement that holds by the lease's trusted signer.
    #[serde(default)]
    pub other_by_trusted_key: usize,
    /// Scrapes whose statement carries the lessor's number for a body served to the lease's
    /// holder (their numbers run from 0 with none missing, up to the count its account states,
    /// or the receipt is refused naming the missing ones).
    #[serde(default)]
    pub numbered: usize,
    /// Scrapes of the route that failed in the receipt (no body reached the client).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: usize,
    /// Numbers the lessor gave bodies the receipt does not hold, no more than the route's
    /// failed scrapes: bodies served whose answer never reached the client (a timeout), not a
    /// drop. What they showed is unknown, and the audit reads them so (the occupancy standing
    /// takes each to have shown a queue beside one it saw).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unkept: u64,
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The key behind a verified signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignerFacts {
    /// [`crate::signing::PublicKey::id`].
    pub key_id: String,
    /// The key as a public key line (what a reviewer would add to trust it).
    pub key: String,
    /// True when the reviewer trusts it.
    pub trusted: bool,
    /// The comment the reviewer's key file gives it, when trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_as: Option<String>,
}

/// The settle line of a standing refused for want of a trusted signature.
pub const SIGNED_SETTLE: &str = "fire through a lessor that signs its leases (`loadproof gate --signing-key`, `loadproof sim --signing-key`) and trust its public key (`--trust KEYFILE`)";

/// Reads the lease's signature and the lessor's statements of its scrapes: the attestation,
/// and the inconsistencies of signatures present that do not hold (tampering, not a weaker
/// attestation).
pub fn read(
    receipt: &Receipt,
    block_bytes: &super::client::BlockReader<'_>,
    trust: &TrustSet,
    ledger: Option<&super::LedgerFacts>,
    client: Option<&super::ClientFacts>,
) -> (Attestation, Vec<String>) {
    let (mut attestation, forged) = lease_signature(receipt, block_bytes, trust);
    let mut inconsistencies: Vec<String> = forged.into_iter().collect();
    let lease = receipt
        .lease
        .as_deref()
        .and_then(|name| block_bytes(name).ok())
        .and_then(|bytes| Lease::from_json(&bytes).ok());
    let signer = attestation
        .lease_key
        .as_ref()
        .and_then(|k| PublicKey::parse_line(&k.key).ok())
        .map(|(key, _)| key);
    match lease_account(receipt, block_bytes, trust, lease.as_ref(), ledger, client) {
        Ok(account) => attestation.lease_account = account,
        Err(problem) => inconsistencies.push(problem),
    }
    // Only the lessor accounts for its lease: an account under another key (the claimant's,
    // standing in for one that contradicted the client) is not its word.
    let account_key = attestation
        .lease_account
        .as_ref()
        .and_then(|a| PublicKey::parse_line(&a.key.key).ok())
        .map(|(key, _)| key);
    if let (Some(account_key), Some(signer)) = (account_key, signer)
        && account_key != signer
    {
        inconsistencies.push(format!(
            "{}: the account of the lease is signed by key {}, not by the lease's signer {}: only the lessor accounts for its lease",
            block::LEASE_ACCOUNT_SIGNED,
            account_key.id(),
            signer.id()
        ));
    }
    let vouched = match (&attestation.lease_account, &lease, &signer) {
        (Some(account), Some(lease), Some(signer)) => {
            vouched_statements(receipt, block_bytes, lease, signer, account)
        }
        _ => BTreeMap::new(),
    };
    if let Some(account) = attestation.lease_account.as_mut() {
        account.vouches_for_scrapes = !vouched.is_empty();
    }
    let (scrapes, during, (numbers, route_order), scrape_problems) = scrape_statements(
        receipt,
        block_bytes,
        trust,
        lease.as_ref(),
        signer.as_ref(),
        vouched,
    );
    inconsistencies.extend(scrape_problems);
    attestation.scrapes = scrapes;
    match seal_signature(receipt, trust) {
        Ok(key) => attestation.seal_key = key,
        Err(problem) => inconsistencies.push(problem),
    }
    if let Some(lease) = &lease {
        let served = attestation.lease_account.as_ref().and_then(|a| a.scrapes);
        let (unkept, problems) = numbering(&numbers, &route_order, served, &lease.id);
        attestation.scrapes.unkept = unkept;
        inconsistencies.extend(problems);
    }
    if attestation.level == Level::Signed {
        let s = &attestation.scrapes;
        if during == 0 {
            attestation.level = Level::SelfAttested;
            attestation.reason = "self-attested: the lease is signed, but no scrape of its route was taken while requests were in flight, so nothing the lessor signed says what it served".to_owned();
        } else if s.by_trusted_key < s.lessor_scrapes {
            attestation.level = Level::SelfAttested;
            attestation.reason = format!(
                "self-attested: the lease is signed, but {} of the {} scrapes of its route (before, during and after the run) carry no statement its lessor's key signed",
                s.lessor_scrapes - s.by_trusted_key,
                s.lessor_scrapes
            );
        } else if s.numbered > 0 && (account_key.is_none() || account_key != signer) {
            // A lessor that numbers its scrapes answers every release with its account; a
            // receipt without it leaves what the lessor admitted and counted unread (an
            // account that contradicted the client, dropped), and nothing bounds the numbers.
            attestation.level = Level::SelfAttested;
            let missing = match account_key {
                Some(other) => format!("is signed by key {}, not by its lessor", other.id()),
                None => "is not in the receipt".to_owned(),
            };
            attestation.reason = format!(
                "self-attested: the lease is signed and its lessor numbered the scrapes it served, but the account of the lease ({}) {missing}: what the lessor admitted and counted under the lease is unread (a release that failed in transit leaves none: re-run)",
                block::LEASE_ACCOUNT_SIGNED
            );
        } else if s.other_by_trusted_key < s.other_engine_scrapes {
            attestation.level = Level::SelfAttested;
            attestation.reason = format!(
                "self-attested: the lease is signed, but {} of the {} engine scrapes of URLs outside its route carry no statement its lessor's key signed, and their counters are summed with the route's",
                s.other_engine_scrapes - s.other_by_trusted_key,
                s.other_engine_scrapes
            );
        } else {
            attestation.reason = format!(
                "{}, as is every one of the {} scrapes of its route before, during and after the run",
                attestation.reason, s.lessor_scrapes
            );
        }
    }
    if attestation.scrapes.unkept > 0 {
        attestation.reason = format!(
            "{}; {} /metrics bodies the lessor served to the holder never reached the client ({} scrapes of its route failed): what they showed is unknown",
            attestation.reason, attestation.scrapes.unkept, attestation.scrapes.failed
        );
    }
    (attestation, inconsistencies)
}

/// The lessor's numbers of the bodies it served the holder, as the receipt keeps them: number →
/// the statement's block, and the route's scrapes in the receipt's order (a number kept, or
/// `None` for a scrape that failed), which says where each failure could have been served.
type Numbering = (BTreeMap<u64, String>, Vec<Option<u64>>);

/// The lessor's statements of the scrape bodies: counted, and every one present held to the
/// body it sits beside, the receipt's lease and that lease's window, and to the statement of
/// the previous scrape of its URL (served after it: one statement is one serving, never reused
/// for a second scrape or moved before another). Returns the counts, how many of the route's
/// engine scrapes were taken during the run, the lessor's numbers of the bodies it served to
/// the holder (number → the statement's block) with the route's scrapes in order (a number
/// kept, or `None` for a scrape that failed), and the problems.
///
/// A statement in `vouched` (block → its bytes) is taken as the lease signer's without
/// checking its own signature: the lessor's signed account chains to it.
fn scrape_statements(
    receipt: &Receipt,
    block_bytes: &super::client::BlockReader<'_>,
    trust: &TrustSet,
    lease: Option<&Lease>,
    signer: Option<&PublicKey>,
    mut vouched: BTreeMap<String, Vec<u8>>,
) -> (ScrapeSignatures, usize, Numbering, Vec<String>) {
    let mut out = ScrapeSignatures::default();
    let mut during = 0;
    let mut numbers: BTreeMap<u64, String> = BTreeMap::new();
    let mut route_order: Vec<Option<u64>> = Vec::new();
    let mut problems = Vec::new();
    let mut last_served: BTreeMap<&str, (i64, String)> = BTreeMap::new();
    let mut clock_anchor: Option<ClockAnchor> = None;
    // The URL (and block) of the first route scrape the lessor's statement naming the lease
    // sits beside: the lessor serves the holder one sequence of bodies at one URL.
    let mut route_url: Option<(&str, String)> = None;
    let route = lease.and_then(|l| origin(&l.route));
    for scrape in &receipt.scrapes {
        let ScrapeOutcome::Response { body, .. } = &scrape.outcome else {
            if lease.is_some()
                && scrape.exporter.is_engine()
                && route.is_some()
                && origin(&scrape.url) == route
            {
                out.failed += 1;
                route_order.push(None);
            }
            continue;
        };
        // Every engine body is read for counters (summed over URLs), the subject and the
        // lessor's gauge; a DCGM exporter's is telemetry the lessor does not serve.
        let engine = lease.is_some() && scrape.exporter.is_engine();
        let on_route = engine && route.is_some() && origin(&scrape.url) == route;
        if on_route {
            out.lessor_scrapes += 1;
            if scrape.phase == Phase::During {
                during += 1;
            }
        } else if engine {
            out.other_engine_scrapes += 1;
        }
        let name = signed_block_of(body);
        if !receipt.has_block(&name) {
            continue;
        }
        let (key, statement_bytes) = match (vouched.remove(&name), signer) {
            (Some(bytes), Some(signer)) => (*signer, bytes),
            _ => match block_bytes(&name).map(|b| Signed::from_json(&b)) {
                Ok(Ok(signed)) => (*signed.key(), signed.statement().to_vec()),
                Ok(Err(e)) => {
                    problems.push(format!("{name}: {e}"));
                    continue;
                }
                // A block that fails its digest is refused with the digests already.
                Err(_) => continue,
            },
        };
        let Some(statement) = ScrapeStatement::from_bytes(&statement_bytes) else {
            problems.push(format!(
                "{name}: key {} signed something that is not a scrape statement",
                key.id()
            ));
            continue;
        };
        if Some(statement.body_sha256.as_str()) != receipt.recorded_sha256(body) {
            problems.push(format!(
                "{name}: the lessor's statement names body sha256 {}, but {body} holds another: the body was swapped after it was served",
                statement.body_sha256
            ));
            continue;
        }
        let mut holds = true;
        if let Some(lease) = lease {
            let other = statement.lease_id.as_deref().filter(|id| *id != lease.id);
            if let Some(other) = other {
                problems.push(format!(
                    "{name}: the statement was made under lease {other}, not this receipt's lease {}: replayed from another lease",
                    lease.id
                ));
                continue;
            }
            // `fire` presents the lease's token on every scrape of its route, so the lessor
            // numbers each body it serves the run under the lease. A v2 statement of the route
            // naming the lease but no number went to someone else: a second scraper, or a
            // client withholding the token so that the bodies it leaves out leave no gap.
            if on_route
                && statement.schema != SCRAPE_STATEMENT_SCHEMA_V1
                && statement.lease_id.is_some()
                && statement.seq.is_none()
            {
                problems.push(format!(
                    "{name}: served under lease {} to someone other than the lease's holder (the lessor numbered it for no one), yet kept as the run's scrape of its route: a scrape taken without the lease's token escapes the lessor's numbering",
                    lease.id
                ));
                continue;
            }
            let inside = statement.lease_id.is_some()
                && statement.served_unix_ns >= lease.from_unix_ns
                && statement.served_unix_ns <= lease.until_unix_ns;
            if scrape.phase == Phase::During && !inside {
                problems.push(format!(
                    "{name}: served at {} Unix ns with {} holding, outside lease {} ({}..{}), yet recorded while requests were in flight",
                    statement.served_unix_ns,
                    statement.lease_id.as_deref().unwrap_or("no lease"),
                    lease.id,
                    lease.from_unix_ns,
                    lease.until_unix_ns
                ));
                continue;
            }
            // A boundary scrape served outside the lease is genuine but not the lessor's word
            // about this lease: it does not count as signed.
            holds = inside;
        }
        if let Some((previous, previous_name)) = last_served.get(scrape.url.as_str())
            && statement.served_unix_ns <= *previous
        {
            problems.push(format!(
                "{name}: served at {} Unix ns on the lessor's clock, not after {previous_name} ({previous}) recorded before it at {}: a statement reused for another scrape, or scrapes reordered",
                statement.served_unix_ns, scrape.url
            ));
            continue;
        }
        last_served.insert(&scrape.url, (statement.served_unix_ns, name.clone()));
        if signer.is_none_or(|k| *k == key)
            && let Some(problem) = held_to_the_lessors_clock(
                &mut clock_anchor,
                scrape,
                &name,
                statement.served_unix_ns,
            )
        {
            problems.push(problem);
            continue;
        }
        // The lessor serves its `/metrics` at its route, and only its own statements carry its
        // numbers. Its statement naming this lease beside a scrape of anything else (another
        // engine URL, whose counters are summed with the route's; a GPU exporter, whose body
        // is never read for a queue) is a route body moved there, numbered or not (a second
        // scraper without the token gets unnumbered ones). A number under another key (the
        // claimant's) fills no gap.
        let lessors = signer.is_none_or(|k| *k == key);
        if lessors && lease.is_some() && statement.lease_id.is_some() && !on_route {
            problems.push(format!(
                "{name}: a body the lessor served at its route under lease {}{}, kept as a scrape of {} ({}): a body moved outside its route",
                statement.lease_id.as_deref().unwrap_or_default(),
                statement
                    .seq
                    .map_or(String::new(), |seq| format!(" (numbered {seq})")),
                scrape.url,
                if scrape.exporter.is_engine() {
                    "an engine URL outside the route"
                } else {
                    "a GPU exporter"
                }
            ));
            continue;
        }
        // The route is an origin, but the engine's counters are summed per URL: the lessor's
        // bodies kept under a second URL of its origin (`/metrics?b`) make a replica of the
        // route's own bodies, whose work counts twice (the adversarial review's finding).
        if lessors && lease.is_some() && statement.lease_id.is_some() {
            match &route_url {
                Some((first_url, first_name)) if *first_url != scrape.url.as_str() => {
                    problems.push(format!(
                        "{name}: a body the lessor served at its route under lease {}{}, kept as a scrape of {}, a second URL of its origin beside {first_url} ({first_name}): the lessor serves the holder's bodies at one URL, and the engine's counters are summed per URL, so its work would count twice",
                        statement.lease_id.as_deref().unwrap_or_default(),
                        statement
                            .seq
                            .map_or(String::new(), |seq| format!(" (numbered {seq})")),
                        scrape.url,
                    ));
                    continue;
                }
                Some(_) => {}
                None => route_url = Some((scrape.url.as_str(), name.clone())),
            }
        }
        if let (Some(seq), Some(_), true) = (statement.seq, lease, lessors) {
            if let Some(first) = numbers.get(&seq) {
                problems.push(format!(
                    "{name}: numbered {seq} by the lessor, as {first} is: one body served to the holder, kept for two scrapes"
                ));
                continue;
            }
            numbers.insert(seq, name.clone());
            route_order.push(Some(seq));
            out.numbered += 1;
        }
        let by_trusted = holds && trust.comment(&key).is_some() && signer.is_none_or(|k| *k == key);
        if on_route && holds {
            out.signed += 1;
            if by_trusted {
                out.by_trusted_key += 1;
            }
        } else if engine && by_trusted {
            out.other_by_trusted_key += 1;
        }
    }
    (out, during, (numbers, route_order), problems)
}

/// The receipt's first scrape signed by the lessor: its name, the lessor's clock when it served
/// it, and the receipt's monotonic times of its request and completion. One for the receipt,
/// not one per URL: the lessor has one clock and the firing machine one, so scrapes spread
/// over URLs (each alone at its own) are held to it too.
struct ClockAnchor {
    name: String,
    served_unix_ns: i64,
    requested_ns: i64,
    completed_ns: i64,
}

/// How far the lessor's clock may run from the firing machine's between two scrapes: a fixed
/// allowance (the time a request takes to reach the lessor is inside the receipt's interval
/// already; this covers scheduling) and 1 % of the interval (clock rates: NTP slews at most
/// 0.05 %).
const CLOCK_SLACK_NS: i128 = 250_000_000;

/// Holds a scrape's time on the lessor's clock to the receipt's. The claimant writes every
/// time in the receipt (the client's log, the scrapes' stamps); the lessor's clock in its
/// statements is the one it does not. Between the first scrape the lessor signed and each later one,
/// the lessor served them as far apart as the receipt's request and completion times allow
/// (the lessor served each between its request and its answer), or the receipt's times were
/// rewritten: a run replayed slowly and written as fast claims a throughput the engine never
/// had (the adversarial review's finding). Some problem when it does not fit.
fn held_to_the_lessors_clock(
    first: &mut Option<ClockAnchor>,
    scrape: &crate::receipt::Scrape,
    name: &str,
    served_unix_ns: i64,
) -> Option<String> {
    // A scrape without a completion time (a receipt with it left out, so that nothing
    // bounds the interval) is held to its request time alone: the tighter bound.
    let requested = scrape.requested?;
    let completed = scrape.completed_mono_ns.unwrap_or(requested.mono_ns);
    let Some(anchor) = first.as_ref() else {
        *first = Some(ClockAnchor {
            name: name.to_owned(),
            served_unix_ns,
            requested_ns: requested.mono_ns,
            completed_ns: completed,
        });
        return None;
    };
    let lessor = i128::from(served_unix_ns) - i128::from(anchor.served_unix_ns);
    let shortest = i128::from(requested.mono_ns) - i128::from(anchor.completed_ns);
    let longest = i128::from(completed) - i128::from(anchor.requested_ns);
    let slack = CLOCK_SLACK_NS + lessor.abs() / 100;
    if lessor <= longest.saturating_add(slack) && lessor >= shortest.saturating_sub(slack) {
        return None;
    }
    let ms = |ns: i128| ns as f64 / 1e6;
    Some(format!(
        "{name}: served {:.3} ms after {} on the lessor's clock, but the receipt records the two scrapes {:.3} to {:.3} ms apart: the receipt's times were rewritten (the lessor's clock is the one the claimant does not write)",
        ms(lessor),
        anchor.name,
        ms(shortest),
        ms(longest)
    ))
}

/// The scrape statements the lessor's signed account vouches for (block → the statement's
/// bytes): every statement it numbered under the lease, all of them in the receipt, whose
/// bytes in number order chain to the account's [`ScrapeChain`] head. Their own signatures
/// need no checking: the account's, checked, covers their exact bytes. Empty unless the
/// account is the lease signer's and every number is present and the chain holds — anything
/// less and each statement is verified on its own (a receipt with a timed-out scrape, one
/// whose account never came).
fn vouched_statements(
    receipt: &Receipt,
    block_bytes: &super::client::BlockReader<'_>,
    lease: &Lease,
    signer: &PublicKey,
    account: &AccountFacts,
) -> BTreeMap<String, Vec<u8>> {
    let none = BTreeMap::new;
    let (Some(count), Some(head)) = (account.scrapes, account.scrape_chain.as_deref()) else {
        return none();
    };
    let account_key = PublicKey::parse_line(&account.key.key).ok().map(|(k, _)| k);
    if account_key.as_ref() != Some(signer) || count == 0 {
        return none();
    }
    let mut by_seq: BTreeMap<u64, (String, Vec<u8>, [u8; 64])> = BTreeMap::new();
    let route = origin(&lease.route);
    for scrape in &receipt.scrapes {
        let ScrapeOutcome::Response { body, .. } = &scrape.outcome else {
            continue;
        };
        // Only the route's engine scrapes carry the lessor's numbers.
        if route.is_none() || origin(&scrape.url) != route || !scrape.exporter.is_engine() {
            continue;
        }
        let name = signed_block_of(body);
        if !receipt.has_block(&name) {
            continue;
        }
        let Ok(bytes) = block_bytes(&name) else {
            continue;
        };
        let Ok(envelope) = Unverified::from_json(&bytes) else {
            continue;
        };
        // The account vouches for the bytes, not for the envelope: one naming another key
        // (the lessor's statement re-signed by the claimant) is that key's word, and is
        // verified as such, as it would be without the account.
        if envelope.key() != signer {
            continue;
        }
        let Some(statement) = ScrapeStatement::from_bytes(envelope.statement()) else {
            continue;
        };
        let (Some(seq), Some(id)) = (statement.seq, statement.lease_id.as_deref()) else {
            continue;
        };
        if id != lease.id {
            continue;
        }
        // One number on two scrapes: the per-statement checks name it.
        let entry = (
            name,
            envelope.statement().to_vec(),
            envelope.signature_bytes(),
        );
        if by_seq.insert(seq, entry).is_some() {
            return none();
        }
    }
    let complete = u64::try_from(by_seq.len()).is_ok_and(|n| n == count)
        && by_seq.keys().next_back() == Some(&(count - 1));
    if !complete {
        return none();
    }
    let mut chain = ScrapeChain::default();
    for (_, bytes, signature) in by_seq.values() {
        chain.push(bytes, signature);
    }
    if chain.hex() != head {
        return none();
    }
    by_seq
        .into_values()
        .map(|(name, bytes, _)| (name, bytes))
        .collect()
}

/// The lessor's numbering of the bodies it served to the holder, held to the receipt: every
/// number from 0 up to the count its account states (or, without one, to the highest number
/// kept) must be in it. A missing number is a body the lessor served whose answer never
/// reached the client — a failed scrape of the route, in the receipt where that body was
/// served ([`unkept_numbers`]), stands for one, and they are returned as unkept — or else a
/// signed scrape dropped from the receipt, named as such.
fn numbering(
    numbers: &BTreeMap<u64, String>,
    route_order: &[Option<u64>],
    served: Option<u64>,
    lease_id: &str,
) -> (u64, Vec<String>) {
    let highest = numbers.keys().next_back().map(|n| n.saturating_add(1));
    let expected = served.or(highest).unwrap_or(0);
    let mut problems = Vec::new();
    // The numbers are distinct, so the missing ones below `expected` are as many as
    // `expected` minus those kept below it: listed up to a few, counted beyond.
    let below = u64::try_from(numbers.range(..expected).count()).unwrap_or(u64::MAX);
    let missing_count = expected.saturating_sub(below);
    let failed = route_order.iter().filter(|o| o.is_none()).count();
    let explained = unkept_numbers(route_order, numbers, expected);
    let explained_count = u64::try_from(explained.len()).unwrap_or(u64::MAX);
    let mut unkept = 0;
    if missing_count > 0 && missing_count <= explained_count {
        unkept = missing_count;
    } else if missing_count > 0 {
        // Listed: the missing numbers no failed scrape stands for (the dropped ones).
        let dropped_count = missing_count.saturating_sub(explained_count);
        let mut missing = Vec::new();
        let mut n = 0;
        while n < expected && missing.len() < MISSING_LISTED {
            if !numbers.contains_key(&n) && !explained.contains(&n) {
                missing.push(n.to_string());
            }
            n += 1;
        }
        let more = dropped_count.saturating_sub(u64::try_from(missing.len()).unwrap_or(0));
        let listed = if more > 0 {
            format!("{} and {more} more", missing.join(", "))
        } else {
            missing.join(", ")
        };
        let of = match served {
            Some(served) => format!(
                "the lessor's account says it served {served} /metrics bodies to the holder of lease {lease_id} (numbered 0 to {})",
                served.saturating_sub(1)
            ),
            None => format!(
                "the lessor numbered the /metrics bodies it served to the holder of lease {lease_id} up to {}",
                expected.saturating_sub(1)
            ),
        };
        let failures = match failed {
            0 => "and no scrape of its route failed".to_owned(),
            n => format!(
                "and the {n} failed scrape(s) of its route stand for none of them (a failed scrape stands only for a number between those of the kept scrapes recorded either side of it)"
            ),
        };
        problems.push(format!(
            "{of}, but the receipt holds no signed scrape numbered {listed}, {failures}: signed scrapes were dropped from the receipt"
        ));
    }
    if let Some(served) = served
        && let Some((beyond, name)) = numbers.range(served..).next()
    {
        problems.push(format!(
            "{name} is numbered {beyond}, but the lessor's account of lease {lease_id} says it served only {served} /metrics bodies to the holder: a statement from outside this lease's account"
        ));
    }
    (unkept, problems)
}

/// The missing numbers (below `expected`) the route's failed scrapes can stand for. `fire`
/// takes a URL's scrapes one after another, in the receipt's order, and the lessor numbers
/// them as it serves them, so a failed scrape's body (if the lessor served it at all) got a
/// number above the kept scrape recorded before it and below the one recorded after it (from
/// 0 before the first, up to `expected` after the last): each failure stands for one missing
/// number in that span, never one elsewhere. A failed scrape added before the run does not
/// excuse a body dropped from its middle (the adversarial review's finding).
fn unkept_numbers(
    route_order: &[Option<u64>],
    numbers: &BTreeMap<u64, String>,
    expected: u64,
) -> BTreeSet<u64> {
    let mut explained = BTreeSet::new();
    // Up to `failures` missing numbers in `from..to` not yet stood for. Each step either
    // takes a number or passes one kept or already taken, so the walk is as long as the
    // receipt's statements and failures, whatever the numbers.
    let take = |from: u64, to: u64, failures: usize, explained: &mut BTreeSet<u64>| {
        let (mut n, mut taken) = (from, 0);
        while n < to.min(expected) && taken < failures {
            if !numbers.contains_key(&n) && explained.insert(n) {
                taken += 1;
            }
            n += 1;
        }
    };
    let (mut from, mut failures) = (0u64, 0usize);
    for entry in route_order {
        match entry {
            None => failures += 1,
            Some(seq) => {
                take(from, *seq, failures, &mut explained);
                (from, failures) = (seq.saturating_add(1), 0);
            }
        }
    }
    take(from, expected, failures, &mut explained);
    explained
}

/// How many missing numbers an inconsistency lists before it only counts the rest.
const MISSING_LISTED: usize = 10;

/// The record stream's seal signature: who signed it, or why it does not hold.
fn seal_signature(receipt: &Receipt, trust: &TrustSet) -> Result<Option<SignerFacts>, String> {
    let Some(status) = receipt.stream.as_ref() else {
        return Ok(None);
    };
    let Some(sig) = status.seal_signature.as_ref() else {
        return Ok(None);
    };
    let signed = Signed::from_json(sig.envelope.as_bytes())
        .map_err(|e| format!("the seal's signature: {e}"))?;
    let key = signed.key();
    let Some(statement) = SealStatement::from_bytes(signed.statement()) else {
        return Err(format!(
            "the seal's signature: key {} signed something that is not a seal statement",
            key.id()
        ));
    };
    if statement.run != status.run || statement.seal != sig.seal_sha256 {
        return Err(format!(
            "the seal's signature (key {}) names another stream (run {}, seal {}; this one: run {}, seal {}): records were added, dropped or changed after it was signed",
            key.id(),
            statement.run,
            statement.seal,
            status.run,
            sig.seal_sha256
        ));
    }
    let trusted_as = trust.comment(key).map(str::to_owned);
    Ok(Some(SignerFacts {
        key_id: key.id(),
        key: key.to_line(""),
        trusted: trusted_as.is_some(),
        trusted_as,
    }))
}

/// The lessor's signed account of the lease, held to the lease and to the client's ledger.
fn lease_account(
    receipt: &Receipt,
    block_bytes: &super::client::BlockReader<'_>,
    trust: &TrustSet,
    lease: Option<&Lease>,
    ledger: Option<&super::LedgerFacts>,
    client: Option<&super::ClientFacts>,
) -> Result<Option<AccountFacts>, String> {
    let name = block::LEASE_ACCOUNT_SIGNED;
    if !receipt.has_block(name) {
        return Ok(None);
    }
    let Ok(bytes) = block_bytes(name) else {
        // A block that fails its digest is refused with the digests already.
        return Ok(None);
    };
    let signed = Signed::from_json(&bytes).map_err(|e| format!("{name}: {e}"))?;
    let key = signed.key();
    let account = LeaseAccount::from_bytes(signed.statement()).ok_or_else(|| {
        format!(
            "{name}: key {} signed something that is not a lease account",
            key.id()
        )
    })?;
    if let Some(lease) = lease
        && account.lease_id != lease.id
    {
        return Err(format!(
            "{name}: the account is of lease {}, not this receipt's lease {}: replayed from another lease",
            account.lease_id, lease.id
        ));
    }
    let trusted_as = trust.comment(key).map(str::to_owned);
    let facts = SignerFacts {
        key_id: key.id(),
        key: key.to_line(""),
        trusted: trusted_as.is_some(),
        trusted_as,
    };
    let (mut agrees, mut reason) = match ledger {
        Some(l) => {
            let completed = l.completed;
            let offered = l.offered;
            if account.requests < completed {
                (
                    false,
                    format!(
                        "the lessor admitted {} requests under lease {}, but the client says {completed} completed under it",
                        account.requests, account.lease_id
                    ),
                )
            } else if offered.is_some_and(|o| account.requests > o) {
                (
                    false,
                    format!(
                        "the lessor admitted {} requests under lease {}, more than the {} the client offered: someone else used its token",
                        account.requests,
                        account.lease_id,
                        offered.unwrap_or_default()
                    ),
                )
            } else {
                (
                    true,
                    format!(
                        "the lessor admitted {} requests under lease {}; the client offered {} and completed {completed}",
                        account.requests,
                        account.lease_id,
                        offered.map_or("an unknown number".to_owned(), |o| o.to_string())
                    ),
                )
            }
        }
        None => (
            true,
            format!(
                "the lessor admitted {} requests under lease {}; the client's ledger is not read",
                account.requests, account.lease_id
            ),
        ),
    };
    if agrees {
        let (tokens_agree, said) = token_account(&account, ledger, client);
        agrees = tokens_agree;
        reason = if tokens_agree {
            format!("{reason}; {said}")
        } else {
            said
        };
    }
    let tokens = account.tokens();
    Ok(Some(AccountFacts {
        key: facts,
        requests: account.requests,
        prompt_tokens: tokens.map(|t| t.prompt_tokens),
        completion_tokens: tokens.map(|t| t.completion_tokens),
        uncounted_requests: tokens.map(|t| t.uncounted_requests),
        scrapes: account.scrapes,
        scrape_chain: account.scrape_chain.clone(),
        vouches_for_scrapes: false,
        agrees,
        reason,
    }))
}

/// The lessor's token sums held to the client's (both over what completed): whether they fit,
/// and one line saying so.
///
/// The lessor counts only responses whose usage it saw, so its sums are exact when it missed
/// none and a lower bound otherwise; the client's cover its completed requests. Fewer tokens
/// than the client's when the lessor missed no response means the client claims tokens the
/// lessor never forwarded; more than the client's when every request the client offered closed
/// without a failure means work under the lease's token that the client does not account for.
fn token_account(
    account: &LeaseAccount,
    ledger: Option<&super::LedgerFacts>,
    client: Option<&super::ClientFacts>,
) -> (bool, String) {
    let Some(t) = account.tokens() else {
        return (
            true,
            format!("its account ({}) counts no tokens", LEASE_ACCOUNT_SCHEMA_V1),
        );
    };
    let counted = format!(
        "the lessor counted {} prompt / {} completion tokens under lease {}{}",
        t.prompt_tokens,
        t.completion_tokens,
        account.lease_id,
        if t.uncounted_requests == 0 {
            String::new()
        } else {
            format!(
                " ({} admitted request(s) without usage it saw: a lower bound)",
                t.uncounted_requests
            )
        }
    );
    let Some(c) = client else {
        return (true, format!("{counted}; the client's tokens are not read"));
    };
    let against = format!(
        "the client's ledger says {} input / {} output tokens completed",
        c.input_tokens, c.output_tokens
    );
    let fewer = t.prompt_tokens < c.input_tokens || t.completion_tokens < c.output_tokens;
    let more = t.prompt_tokens > c.input_tokens || t.completion_tokens > c.output_tokens;
    let clean = ledger.is_some_and(|l| l.closed && l.failed == Some(0));
    if fewer && t.uncounted_requests == 0 {
        (
            false,
            format!(
                "{counted}, but {against}: the client claims tokens the lessor never forwarded"
            ),
        )
    } else if more && clean {
        (
            false,
            format!(
                "{counted}, more than {against} with no request failed: work under the lease's token the client does not account for"
            ),
        )
    } else {
        (true, format!("{counted}; {against}"))
    }
}

/// The lease's own signature.
fn lease_signature(
    receipt: &Receipt,
    block_bytes: &super::client::BlockReader<'_>,
    trust: &TrustSet,
) -> (Attestation, Option<String>) {
    let trusted_keys = trust.lines().len();
    let self_attested = |reason: String, key: Option<SignerFacts>| Attestation {
        level: Level::SelfAttested,
        reason,
        lease_key: key,
        scrapes: ScrapeSignatures::default(),
        seal_key: None,
        lease_account: None,
        trusted_keys,
    };
    if !receipt.has_block(block::LEASE_SIGNED) {
        let why = if receipt.lease.is_some() {
            "self-attested: the lease is not signed by its lessor"
        } else {
            "self-attested: no lease, so nothing a lessor signed"
        };
        return (self_attested(why.to_owned(), None), None);
    }
    let signed = match block_bytes(block::LEASE_SIGNED) {
        Ok(bytes) => Signed::from_json(&bytes),
        Err(why) => {
            return (
                self_attested(
                    format!("self-attested: the signed lease cannot be read: {why}"),
                    None,
                ),
                None,
            );
        }
    };
    let signed = match signed {
        Ok(s) => s,
        Err(e) => {
            return (
                self_attested(
                    format!("self-attested: the lease's signature is refused: {e}"),
                    None,
                ),
                Some(format!("{}: {e}", block::LEASE_SIGNED)),
            );
        }
    };
    let lease_name = receipt.lease.as_deref().unwrap_or(block::LEASE);
    let same = block_bytes(lease_name).is_ok_and(|b| b.as_ref() == signed.statement());
    let key = signed.key();
    let trusted_as = trust.comment(key).map(str::to_owned);
    let facts = SignerFacts {
        key_id: key.id(),
        key: key.to_line(""),
        trusted: trusted_as.is_some(),
        trusted_as: trusted_as.clone(),
    };
    if !same {
        return (
            self_attested(
                format!(
                    "self-attested: key {} signed another lease than the one this receipt holds",
                    key.id()
                ),
                Some(facts),
            ),
            Some(format!(
                "{} is signed by key {} over other bytes than the receipt's lease ({lease_name}): the lease was edited or swapped after signing",
                block::LEASE_SIGNED,
                key.id()
            )),
        );
    }
    match trusted_as {
        Some(name) => (
            Attestation {
                level: Level::Signed,
                reason: format!(
                    "signed: the lease is signed by key {}{}, which you trust",
                    key.id(),
                    if name.is_empty() {
                        String::new()
                    } else {
                        format!(" ({name})")
                    }
                ),
                lease_key: Some(facts),
                scrapes: ScrapeSignatures::default(),
                seal_key: None,
                lease_account: None,
                trusted_keys,
            },
            None,
        ),
        None => (
            self_attested(
                format!(
                    "self-attested: the lease is signed by key {}, which is not among the {trusted_keys} key(s) you trust",
                    key.id()
                ),
                Some(facts),
            ),
            None,
        ),
    }
}
