//! The receipt audit: every fact recomputed from a receipt's raw evidence, every standing with
//! its reason and what would settle it, and one qualification that consumes them all.
//!
//! Nothing here trusts a derived number written in the receipt: [`audit`] verifies every
//! evidence block, reads the client's facts through the execution gate (`client`), the
//! engine's through the scrapes (`engine`), joins them (agreement, foreign work, occupancy),
//! judges each standing (`standing`), and compares what it recomputed with the receipt's
//! `derived` section. Capture and qualification are separate answers: [`Audit::captured`] says
//! a raw observation exists; [`Audit::qualification`] says whether it supports a claim.

mod attestation;
mod client;
mod engine;
mod over_time;
mod peer;
mod policy;
mod standing;
mod subject;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub use attestation::{
    AccountFacts, Attestation, Level as AttestationLevel, ScrapeSignatures, SignerFacts,
};
pub use client::{
    ArrivalFacts, ClientFacts, Concurrency, Gate, ItlTail, LATENCY_METRICS, LatencyFacts,
    LedgerFacts, bench_samples, native_samples, peer_request_records,
};
pub use engine::{
    EngineFacts, GpuExporterFacts, GpuFacts, LeaseReading, OccupancyFacts, ReplicaFacts,
    ScrapeReading, ScrapeValues,
};
pub use over_time::{MAX_SLICES, OverTime, Slice};
pub use policy::{POLICY_SCHEMA, Policy, PolicyError};

/// The `/metrics` sample names the engine audit reads (the page plots the same series).
pub mod metric_names {
    pub use super::engine::{
        GENERATION_TOKENS, KV_USAGE, PREEMPTIONS, PROMPT_TOKENS, RUNNING, WAITING,
    };
}
pub use standing::{Qualification, STANDINGS, Standing};
pub use subject::KnobFacts;

use crate::receipt::{Axis, Execution, Lease, Phase, Receipt, block, origin};

/// Schema identity of [`Audit`] (the `--json` interface).
pub const AUDIT_SCHEMA: &str = "loadproof.audit/v1";

/// One evidence block's verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockCheck {
    /// The block's name.
    pub block: String,
    /// Bytes.
    pub bytes: u64,
    /// True when the bytes hash to the recorded digest.
    pub ok: bool,
    /// Why not.
    pub error: Option<String>,
}

/// Engine generation vs client output: agreement, a surplus (a bound on foreign work), or a
/// contradiction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignWork {
    /// Engine generation delta − client output tokens, when the engine counted more.
    pub surplus_tokens: Option<u64>,
    /// Engine prompt delta − client input tokens, when the engine counted more.
    pub prompt_surplus_tokens: Option<u64>,
    /// True when the client counted more than the engine: never "zero foreign work".
    pub contradiction: bool,
    /// One line.
    pub reason: String,
}

/// Everything the audit found. Field names are a documented interface (`receipt audit --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// [`AUDIT_SCHEMA`].
    pub schema: String,
    /// False for a record-stream receipt whose writer never sealed it (a crash, a kill, a run
    /// still being written): read as far as it got, never qualified, never a clean capture.
    pub sealed: bool,
    /// How far an unsealed stream got: its last complete record, its time, its torn tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsealed: Option<crate::receipt::stream::StreamStatus>,
    /// Every evidence block verified.
    pub digests_ok: bool,
    /// Per block.
    pub digests: Vec<BlockCheck>,
    /// Whether client facts were read, and why (not).
    pub execution_gate: Gate,
    /// The operation ledger.
    pub ledger: Option<LedgerFacts>,
    /// Client token totals over the client's own interval.
    pub client: Option<ClientFacts>,
    /// Latency distributions as observed.
    pub latency: Vec<LatencyFacts>,
    /// The ITL tail, cause unestablished.
    pub itl_tail: Option<ItlTail>,
    /// Client peaks (never engine concurrency).
    pub concurrency: Option<Concurrency>,
    /// Arrival, observed or declared.
    pub arrival: Option<ArrivalFacts>,
    /// Throughput and TTFT/E2E percentiles in equal time slices of the run, from the same
    /// completed requests as `latency` (absent without a per-request population).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_time: Option<OverTime>,
    /// Engine counter deltas.
    pub engine: EngineFacts,
    /// Agreement / foreign work.
    pub foreign_work: ForeignWork,
    /// The occupancy series.
    pub occupancy: OccupancyFacts,
    /// GPU telemetry from the DCGM exporters scraped, when any was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuFacts>,
    /// Every standing by name.
    pub standings: BTreeMap<String, Standing>,
    /// True only when every standing is positive and nothing refused the receipt.
    pub qualified: bool,
    /// Every reason it is not.
    pub refusals: Vec<String>,
    /// Evidence in the receipt that contradicts other evidence or the receipt's own derived
    /// numbers (a tampered or mixed receipt).
    pub inconsistencies: Vec<String>,
    /// True when a raw observation was captured (digests verify and client facts were read).
    pub captured: bool,
    /// True when the endpoint was `loadproof sim`.
    pub simulator: bool,
    /// The reviewer's standards every standing was judged against.
    pub policy: Policy,
    /// Every knob the receipt states, and whether the server's own `/metrics` read it back.
    pub knobs: Vec<KnobFacts>,
    /// What the receipt says that nothing in its evidence establishes: shown as the
    /// claimant's statements, never used to make a standing positive.
    pub statements: Vec<Statement>,
    /// What a reviewer should weigh that no standing decides (TLS certificates not checked):
    /// named on the verdict, never silently equal to the stronger case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
    /// Who vouches for the window: signed by a key the reviewer trusts, or self-attested
    /// (named on the verdict either way).
    pub attestation: Attestation,
}

/// A field of the receipt that only the claimant vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// Where it is in the receipt (`subject.gpu_sku`, `provenance.caller.ticket`).
    pub field: String,
    /// What it says.
    pub value: String,
    /// Why it is only a statement.
    pub why: String,
}

impl Audit {
    /// The bytes `receipt audit --json` writes: pretty JSON and a final newline. One
    /// serializer for the CLI and the page's download, so a reviewer's saved file is the
    /// CLI's output byte for byte.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The qualification, rebuilt through its one constructor.
    pub fn qualification(&self) -> Qualification {
        Qualification::from_standings(&self.standings, &self.receipt_refusals())
    }

    /// The verdict in one line, as `receipt qualify` prints it first and the Receipt view heads
    /// its banner with: `QUALIFIED: every standing is positive` (naming a simulator), or
    /// `UNQUALIFIED: N refusals`.
    pub fn verdict(&self) -> String {
        if self.qualified {
            format!(
                "QUALIFIED{}: every standing is positive{}{}",
                if self.simulator {
                    " (of loadproof sim, a simulator)"
                } else {
                    ""
                },
                match self.caveats.len() {
                    0 => String::new(),
                    1 => " (1 caveat)".to_owned(),
                    n => format!(" ({n} caveats)"),
                },
                match self.attestation.level {
                    AttestationLevel::Signed => ", signed by a key you trust",
                    AttestationLevel::SelfAttested => ", self-attested",
                }
            )
        } else if let Some(s) = &self.unsealed {
            format!(
                "UNQUALIFIED (UNSEALED: its writer stopped at record {}, {:.3} s into the run): {} refusals",
                s.last_seq,
                s.last_mono_ns as f64 / 1e9,
                self.refusals.len()
            )
        } else {
            format!("UNQUALIFIED: {} refusals", self.refusals.len())
        }
    }

    fn receipt_refusals(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(s) = &self.unsealed {
            out.push(format!(
                "unsealed: the writer stopped before sealing the receipt (last complete record {}, {:?}, {:.3} s into the run{}): read as far as it got",
                s.last_seq,
                s.last_kind,
                s.last_mono_ns as f64 / 1e9,
                s.torn_tail
                    .as_ref()
                    .map_or(String::new(), |t| format!("; {} torn bytes after it", t.bytes))
            ));
        }
        for d in self.digests.iter().filter(|d| !d.ok) {
            out.push(format!(
                "evidence: block {:?} fails verification{}",
                d.block,
                d.error
                    .as_deref()
                    .map_or(String::new(), |e| format!(": {e}"))
            ));
        }
        for i in &self.inconsistencies {
            out.push(format!("inconsistent receipt: {i}"));
        }
        if !self.execution_gate.read {
            out.push(format!("execution: {}", self.execution_gate.reason));
        }
        out
    }

    /// The facts a writer stores as `derived` (and the audit compares): the ledger, client,
    /// engine and foreign-work sections.
    pub fn derived(&self) -> serde_json::Value {
        serde_json::json!({
            "ledger": self.ledger,
            "client": self.client,
            "engine": {
                "generation_tokens_delta": self.engine.generation_tokens_delta,
                "prompt_tokens_delta": self.engine.prompt_tokens_delta,
                "continuous": self.engine.continuous,
            },
            "foreign_work": {
                "surplus_tokens": self.foreign_work.surplus_tokens,
                "contradiction": self.foreign_work.contradiction,
            },
        })
    }
}

/// Reads a block whose digest was checked (`bad` names those that failed): an inline block is
/// only decoded; a packed one (not expected here: the scan walks them) is rebuilt and checked.
fn inline_reader<'r>(
    receipt: &'r Receipt,
    bad: &'r BTreeMap<String, String>,
) -> impl Fn(&str) -> Result<std::borrow::Cow<'r, [u8]>, String> + 'r {
    move |name: &str| {
        if let Some(why) = bad.get(name) {
            return Err(why.clone());
        }
        match receipt.evidence.get(name) {
            Some(e) => e.decoded(name).map_err(|e| e.to_string()),
            None if receipt.packed.contains(name) => receipt
                .block(name)
                .map(std::borrow::Cow::Owned)
                .map_err(|e| e.to_string()),
            None => Err(format!("evidence block {name:?} is missing")),
        }
    }
}

/// Audits a receipt against the default [`Policy`].
pub fn audit(receipt: &Receipt) -> Audit {
    audit_with(receipt, &Policy::default())
}

/// Audits a receipt against the reviewer's `policy`: every threshold comes from it, never
/// from the receipt.
pub fn audit_with(receipt: &Receipt, policy: &Policy) -> Audit {
    audit_read(receipt, policy).audit
}

/// An audit and what it read from every scrape on the way: a reader that plots the scrapes
/// (the page) takes these numbers instead of parsing each scrape a second time. Not part of
/// the audit's JSON.
#[derive(Debug, Clone)]
pub struct Audited {
    /// The audit.
    pub audit: Audit,
    /// Every scrape's numbers (or why it is unread), in scrape order.
    pub series: Vec<engine::ScrapeReading>,
}

/// [`audit_with`], keeping the scrapes' numbers ([`Audited`]).
pub fn audit_read(receipt: &Receipt, policy: &Policy) -> Audited {
    audit_read_trusting(receipt, policy, None)
}

/// [`audit_read`] taking the sha256 of packed scrape bodies in `digests` as the caller
/// computed them over the bytes the receipt rebuilds ([`crate::receipt::Packed::walk_trusting`]):
/// the page hashes with WebCrypto. The verdicts are the same as when core hashes.
pub fn audit_read_trusting(
    receipt: &Receipt,
    policy: &Policy,
    digests: Option<&BTreeMap<String, String>>,
) -> Audited {
    let (bad, lessor_family) = inline_digests(receipt);
    let scanned = {
        // Every inline block was hashed once above; reading one afterwards only decodes it.
        let block = inline_reader(receipt, &bad);
        engine::scan(receipt, &block, lessor_family.as_deref(), digests)
    };
    conclude(receipt, policy, bad, scanned)
}

/// An audit whose packed scrape bodies are hashed by the caller *while* it reads them: the
/// page hands each body, as the scan rebuilds it, to WebCrypto (which hashes on a thread of
/// its own) and awaits the digests between steps, instead of rebuilding every body once to
/// hash it and again to read it. What the scan read is provisional: [`Deferred::finish`]
/// takes the caller's digests and returns the audit only when every rebuilt body's digest
/// and length are the ones its record names; otherwise it audits again trusting nothing but
/// those digests ([`audit_read_trusting`]), so a deferred audit is always the audit.
pub struct Deferred<'r> {
    receipt: &'r Receipt,
    policy: &'r Policy,
    bad: BTreeMap<String, String>,
    scanner: engine::Scanner<'r>,
}

impl<'r> Deferred<'r> {
    /// Hashes the inline blocks and readies the scan (no scrape read yet).
    pub fn start(receipt: &'r Receipt, policy: &'r Policy) -> Deferred<'r> {
        let (bad, lessor_family) = inline_digests(receipt);
        Deferred {
            receipt,
            policy,
            bad,
            scanner: engine::Scanner::new(receipt, lessor_family, engine::BodyCheck::Deferred),
        }
    }

    /// True once every scrape is read.
    pub fn done(&self) -> bool {
        self.scanner.done()
    }

    /// Reads up to `scrapes` more scrapes, handing `sink` every packed body rebuilt on the way
    /// (its name and bytes as rebuilt, unchecked) for the caller to hash.
    pub fn step(&mut self, scrapes: usize, sink: &mut dyn FnMut(&str, &[u8])) {
        let block = inline_reader(self.receipt, &self.bad);
        self.scanner.step(&block, scrapes, sink);
    }

    /// The audit, with `digests` the caller's sha256 (lowercase hex, by name) of the bytes
    /// the sink was handed. A body rebuilt here (one no step reached) has no digest from the
    /// caller, so the audit is done again trusting only `digests`, as is any mismatch.
    pub fn finish(self, digests: &BTreeMap<String, String>) -> Audited {
        let Deferred {
            receipt,
            policy,
            bad,
            scanner,
        } = self;
        let (scanned, rebuilt) = {
            let block = inline_reader(receipt, &bad);
            scanner.finish(&block, &mut |_, _| {})
        };
        let confirmed = rebuilt.iter().all(|(name, len)| {
            receipt
                .packed
                .get(name)
                .is_some_and(|b| b.bytes == *len && digests.get(name) == Some(&b.sha256))
        });
        if confirmed {
            conclude(receipt, policy, bad, scanned)
        } else {
            audit_read_trusting(receipt, policy, Some(digests))
        }
    }
}

/// The audit's first step: every inline block hashed (name → why it fails), and the gauge in
/// which the lease's lessor reports it (read from every scrape).
fn inline_digests(receipt: &Receipt) -> (BTreeMap<String, String>, Option<String>) {
    // A block that fails stops every fact that depends on it. Inline blocks are hashed here;
    // packed scrape bodies as the scan rebuilds them, one at a time.
    let bad: BTreeMap<String, String> = receipt
        .verify_inline()
        .into_iter()
        .map(|e| (e.block().to_owned(), e.to_string()))
        .collect();
    let lessor_family = {
        let block = inline_reader(receipt, &bad);
        receipt
            .lease
            .as_deref()
            .and_then(|name| block(name).ok())
            .and_then(|bytes| Lease::from_json(&bytes).ok())
            .and_then(|lease| lease.readback)
    };
    (bad, lessor_family)
}

/// Everything after the scan: the digests table, the facts, the standings, the verdict.
fn conclude(
    receipt: &Receipt,
    policy: &Policy,
    mut bad: BTreeMap<String, String>,
    scanned: engine::Scanned<'_>,
) -> Audited {
    bad.extend(scanned.failures.clone());
    let mut digests: Vec<BlockCheck> = receipt
        .block_names()
        .into_iter()
        .map(|(name, _, bytes)| BlockCheck {
            block: name.to_owned(),
            bytes,
            ok: !bad.contains_key(name),
            error: bad.get(name).cloned(),
        })
        .collect();
    for (name, why) in &bad {
        if !receipt.has_block(name) {
            digests.push(BlockCheck {
                block: name.clone(),
                bytes: 0,
                ok: false,
                error: Some(why.clone()),
            });
        }
    }
    let block = inline_reader(receipt, &bad);

    // 2. Facts.
    let side = client::read(receipt, &block, policy);
    let series = scanned.series.clone();
    let eng = engine::facts(scanned, receipt, side.run_mono_ns, &side.spans_ns);
    let mut inconsistencies = side.inconsistencies.clone();
    if receipt.protocol.canonical_key() != receipt.protocol.key {
        inconsistencies.push(format!(
            "the protocol key {} is not the key of its fields ({}): the protocol was edited",
            receipt.protocol.key,
            receipt.protocol.canonical_key()
        ));
    }
    if let (Some(recorded), Some(plan)) = (
        &receipt.protocol.plan_sha256,
        receipt.recorded_sha256(crate::receipt::block::PLAN),
    ) && plan != recorded
    {
        inconsistencies
            .push("plan.json is not the plan the protocol names (plan_sha256 differs)".to_owned());
    }
    if let Some(why) = capture_inconsistency(receipt, &block) {
        inconsistencies.push(why);
    }
    let reading = subject::read(receipt, &block, &eng);
    inconsistencies.extend(protocol_against_evidence(
        receipt,
        &block,
        &reading.established,
    ));
    let foreign_work = foreign_work(side.client.as_ref(), &eng.engine);
    let simulator = receipt.subject.simulator || reading.simulator();
    let knobs = subject::knob_facts(&receipt.subject.knobs, &reading);
    let statements = statements(receipt, &reading.established, &knobs);

    // 3. Standings.
    let gate = side.gate.clone().unwrap_or(Gate {
        read: false,
        reason: "no execution".to_owned(),
    });
    let mut standings = BTreeMap::new();
    standings.insert(
        "subject".to_owned(),
        subject::standing(&receipt.subject, &reading, &knobs, false),
    );
    standings.insert(
        "implementation".to_owned(),
        implementation_standing(receipt),
    );
    standings.insert(
        "window".to_owned(),
        window_standing(
            receipt,
            &block,
            side.run_unix_ns,
            &foreign_work,
            &eng.leases,
        ),
    );
    standings.insert(
        "arrival".to_owned(),
        arrival_standing(&gate, side.arrival.as_ref(), policy),
    );
    standings.insert(
        "occupancy".to_owned(),
        occupancy_standing(&eng.occupancy, receipt.protocol.max_concurrency, policy),
    );
    standings.insert(
        "counter_agreement".to_owned(),
        agreement_standing(&gate, side.client.as_ref(), &eng.engine, &foreign_work),
    );
    standings.insert("continuity".to_owned(), continuity_standing(&eng.engine));
    standings.insert(
        "ledger".to_owned(),
        ledger_standing(&gate, side.ledger.as_ref()),
    );

    let trust = policy.trust();
    let (attestation, forged) = attestation::read(
        receipt,
        &block,
        &trust,
        side.ledger.as_ref(),
        side.client.as_ref(),
    );
    inconsistencies.extend(forged);
    // The lessor's own count is one more account beside the engine's counters: a
    // contradiction refuses counter agreement.
    if let Some(account) = attestation.lease_account.as_ref().filter(|a| !a.agrees) {
        standings.insert(
            "counter_agreement".to_owned(),
            Standing::refused(
                account.reason.clone(),
                "find where the client's count and the lessor's part (requests or tokens the lessor never forwarded, or foreign traffic under the lease's token); re-run",
            ),
        );
    }
    // A body the lessor served the holder that never reached the client could have shown
    // anything a single scrape refuses occupancy for (running above the cap, foreign
    // requests), and the claimant chooses which body that is: unknown, so not positive.
    if attestation.scrapes.unkept > 0 && standings.get("occupancy").is_some_and(|s| s.positive) {
        standings.insert(
            "occupancy".to_owned(),
            Standing::refused(
                format!(
                    "{} /metrics bodies the lessor served the holder during the lease never reached the client: whether they showed a queue, the engine above the declared cap or foreign requests is unknown",
                    attestation.scrapes.unkept
                ),
                "re-run with every scrape of the route received (a timeout, or a scrape left out of the receipt, leaves what the engine held unknown)",
            ),
        );
    }
    if !trust.is_empty() && attestation.level == AttestationLevel::Signed {
        // Signed: an axis only unsigned answers (/version, /v1/models, a DCGM body) establish
        // is the claimant's to write, so it no longer stands alone.
        standings.insert(
            "subject".to_owned(),
            subject::standing(&receipt.subject, &reading, &knobs, true),
        );
    }
    if !trust.is_empty() && attestation.level != AttestationLevel::Signed {
        // The reviewer named the keys they trust: the claimant's word no longer stands for
        // the window or the subject.
        for name in ["window", "subject"] {
            standings.insert(
                name.to_owned(),
                Standing::refused(attestation.reason.clone(), attestation::SIGNED_SETTLE),
            );
        }
    }
    let caveats = caveats(receipt, &eng.sources);
    let mut out = Audit {
        schema: AUDIT_SCHEMA.to_owned(),
        sealed: receipt.sealed(),
        unsealed: receipt.stream.clone().filter(|s| !s.sealed),
        digests_ok: bad.is_empty(),
        digests,
        captured: receipt.sealed() && bad.is_empty() && gate.read && side.ledger.is_some(),
        execution_gate: gate,
        ledger: side.ledger,
        client: side.client,
        latency: side.latency,
        itl_tail: side.itl_tail,
        concurrency: side.concurrency,
        arrival: side.arrival,
        over_time: side.over_time,
        engine: eng.engine,
        foreign_work,
        occupancy: eng.occupancy,
        gpu: eng.gpu,
        standings,
        qualified: false,
        refusals: Vec::new(),
        inconsistencies,
        simulator,
        policy: policy.clone(),
        knobs,
        statements,
        caveats,
        attestation,
    };
    // 4. Derived numbers in the file are compared, never trusted.
    if let Some(stored) = &receipt.derived {
        let recomputed = out.derived();
        for diff in json_differences("derived", stored, &recomputed) {
            out.inconsistencies.push(diff);
        }
    }
    let q = out.qualification();
    out.qualified = q.is_qualified();
    out.refusals = q.refusals().to_vec();
    Audited { audit: out, series }
}

/// What no standing decides but a reviewer must weigh.
fn caveats(receipt: &Receipt, sources: &[engine::ReadbackSource]) -> Vec<String> {
    let mut out = Vec::new();
    for s in sources {
        if s.readback.upstream_tls.as_deref() == Some("insecure") {
            out.push(format!(
                "the gate answering {} did not check its upstream's TLS certificate (gate --insecure): anyone on the path between the gate and the engine could have answered",
                s.url
            ));
        }
    }
    if let Some(tls) = &receipt.protocol.tls
        && tls.verify == crate::receipt::TlsVerify::Insecure
    {
        out.push(format!(
            "TLS certificates were not checked (fired with --insecure): anyone on the network path to {} could have answered, so every server answer in this receipt rests on that path",
            receipt.protocol.base_url.as_deref().unwrap_or("the endpoint")
        ));
    }
    out
}

/// Paths where two JSON values differ (numbers compare by value).
fn json_differences(path: &str, a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter()
                .flat_map(|k| {
                    json_differences(
                        &format!("{path}.{k}"),
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    )
                })
                .collect()
        }
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => Vec::new(),
        _ if a == b => Vec::new(),
        _ => vec![format!(
            "{path} is {a} in the file, {b} recomputed from the evidence"
        )],
    }
}

fn foreign_work(client: Option<&ClientFacts>, engine: &EngineFacts) -> ForeignWork {
    let (Some(c), Some(e)) = (client, engine.generation_tokens_delta) else {
        return ForeignWork {
            surplus_tokens: None,
            prompt_surplus_tokens: None,
            contradiction: false,
            reason: "unread: needs both client output tokens and an engine generation delta"
                .to_owned(),
        };
    };
    let prompt_surplus = engine
        .prompt_tokens_delta
        .and_then(|p| p.checked_sub(c.input_tokens));
    if c.output_tokens > e {
        return ForeignWork {
            surplus_tokens: None,
            prompt_surplus_tokens: prompt_surplus,
            contradiction: true,
            reason: format!(
                "contradiction: the client counted {} output tokens, the engine generated {e}: the scrapes, the interval or the identity do not match this run (never read as zero foreign work)",
                c.output_tokens
            ),
        };
    }
    let surplus = e - c.output_tokens;
    ForeignWork {
        surplus_tokens: Some(surplus),
        prompt_surplus_tokens: prompt_surplus,
        contradiction: false,
        reason: if surplus == 0 {
            format!("agreement: engine generation delta {e} = client output tokens")
        } else {
            format!(
                "the engine generated {surplus} tokens this client did not receive within the scrape envelope: a bound on foreign work, not its cause"
            )
        },
    }
}

/// `protocol.tls` against what else the receipt says of the run: an `https://` URL with no TLS
/// recorded, a private CA without its digest, a command line that asked for `--insecure` beside
/// a record of checked certificates. (A forger who rewrites the command too is not caught here:
/// how certificates were checked is the firing side's account until the server side signs.)
fn tls_against_evidence(receipt: &Receipt) -> Vec<String> {
    use crate::receipt::TlsVerify;
    let p = &receipt.protocol;
    let https = |u: &str| {
        u.get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    };
    let mut out = Vec::new();
    let used =
        p.base_url.as_deref().is_some_and(https) || receipt.scrapes.iter().any(|s| https(&s.url));
    match &p.tls {
        None if used => out.push(
            "the run used https:// but protocol.tls is absent: how certificates were checked is not stated"
                .to_owned(),
        ),
        Some(t) if t.verify == TlsVerify::CaCert && t.ca_sha256.is_none() => out.push(
            "protocol.tls says a private CA was trusted but names no ca_sha256".to_owned(),
        ),
        _ => {}
    }
    let asked_insecure = receipt.provenance.command.iter().any(|a| a == "--insecure");
    if asked_insecure
        && p.tls
            .as_ref()
            .is_none_or(|t| t.verify != TlsVerify::Insecure)
    {
        out.push(
            "the command line asked for --insecure but protocol.tls does not record it".to_owned(),
        );
    }
    out
}

/// Everything the receipt says that its evidence does not establish.
fn statements(
    receipt: &Receipt,
    readback: &BTreeMap<String, String>,
    knobs: &[KnobFacts],
) -> Vec<Statement> {
    let mut out = Vec::new();
    for (name, axis) in subject::axes(&receipt.subject) {
        let Axis::Known { value, source } = axis else {
            continue;
        };
        if readback.get(name) != Some(value) {
            out.push(Statement {
                field: format!("subject.{name}"),
                value: value.clone(),
                why: format!("stated ({source}); no verified answer of the server establishes it"),
            });
        } else {
            out.push(Statement {
                field: format!("subject.{name}.source"),
                value: source.clone(),
                why: "the writer's note of where the value came from; the value itself is established from the evidence, never from this".to_owned(),
            });
        }
    }
    out.push(Statement {
        field: "subject.simulator".to_owned(),
        value: receipt.subject.simulator.to_string(),
        why:
            "the writer's flag; whether the endpoint is loadproof sim is read from its own /metrics"
                .to_owned(),
    });
    if let Some(tls) = &receipt.protocol.tls {
        out.push(Statement {
            field: "protocol.tls".to_owned(),
            value: serde_json::to_string(tls).unwrap_or_default(),
            why: "how the client checked certificates is the firing side's account; nothing the server signed vouches for it"
                .to_owned(),
        });
    }
    for k in knobs.iter().filter(|k| k.status == "stated") {
        out.push(Statement {
            field: format!("subject.knobs.{}", k.name),
            value: k.stated.clone(),
            why: "no *config_info family of the server names this setting: the claimant's word"
                .to_owned(),
        });
    }
    if let Execution::Native { lag_bound_ns, .. } = &receipt.execution {
        out.push(Statement {
            field: "execution.lag_bound_ns".to_owned(),
            value: lag_bound_ns.to_string(),
            why: "the firing client's own bound: its intent; arrival is judged against the reviewer's policy".to_owned(),
        });
    }
    for (k, v) in &receipt.provenance.caller {
        out.push(Statement {
            field: format!("provenance.caller.{k}"),
            value: v.clone(),
            why: "the caller's note, verbatim".to_owned(),
        });
    }
    out.push(Statement {
        field: "provenance".to_owned(),
        value: format!(
            "{} by {}",
            receipt.provenance.source, receipt.provenance.generator
        ),
        why: "the writer's account of itself (command, clock, generator): context, not evidence"
            .to_owned(),
    });
    out.push(Statement {
        field: "notes".to_owned(),
        value: format!("{} note(s)", receipt.notes.len()),
        why: "the writer's notes: context for a reader, never a fact the audit reads".to_owned(),
    });
    out
}

/// A native run from a plan with blocks at their own lengths (RAGPulse): the protocol names
/// the blocks file the prompts were built from, the receipt embeds it, and the embedded copy
/// is the file the plan fired names and says what plan.json says of it. Any disagreement, and
/// a file named but not embedded, is named.
fn sized_blocks_against_plan(
    receipt: &Receipt,
    plan: &crate::plan::PlanDoc,
    block: &client::BlockReader<'_>,
) -> Vec<String> {
    use crate::plan::sized_blocks;
    let mut out = Vec::new();
    let entry = plan.sized_blocks.as_ref();
    let planned = entry.map(|b| b.sha256.as_str());
    let named = sized_blocks::named_in_argv(&receipt.protocol.argv);
    let embedded = receipt.recorded_sha256(block::SIZED_BLOCKS);
    let native = receipt.protocol.engine == crate::receipt::Engine::Native;
    if entry.is_none()
        && plan.source.format == crate::trace::Format::Ragpulse
        && !plan.source.companions.is_empty()
    {
        out.push(
            "plan.json names no blocks file although its source (RAGPulse read with its companion files) has blocks at their own lengths: the plan was edited, or written by a version that did not write them".to_owned(),
        );
    }
    if let Some(sha) = embedded
        && planned != Some(sha)
    {
        out.push(format!(
            "{} (sha256 {sha}) is not the blocks file the plan fired names ({})",
            block::SIZED_BLOCKS,
            planned.unwrap_or("none")
        ));
    }
    if let Some(sha) = named
        && planned != Some(sha)
    {
        out.push(format!(
            "the protocol says prompts were built from blocks with sha256 {sha}, but the plan fired names {}",
            planned.unwrap_or("none")
        ));
    }
    if native
        && let Some(sha) = planned
        && named != Some(sha)
    {
        out.push(format!(
            "the plan fired has blocks at their own lengths (sha256 {sha}), but the protocol does not say the native client built its prompts from them"
        ));
    }
    if embedded.is_none() && (named.is_some() || (native && planned.is_some())) {
        out.push(format!(
            "the prompts were built from a blocks file the receipt does not embed ({} is absent): what was sent cannot be recomputed",
            block::SIZED_BLOCKS
        ));
    }
    if let (Some(entry), Some(sha)) = (entry, embedded)
        && entry.sha256 == sha
        && let Ok(bytes) = block(block::SIZED_BLOCKS)
    {
        out.extend(sized_blocks_content(receipt, plan, entry, &bytes, block));
    }
    out
}

/// The embedded blocks file says what plan.json says of it: one line per request, its counts,
/// and no line holding more tokens than its request's prompt (read from the embedded
/// schedule, when there is one).
fn sized_blocks_content(
    receipt: &Receipt,
    plan: &crate::plan::PlanDoc,
    entry: &crate::plan::sized_blocks::SizedBlocksFile,
    bytes: &[u8],
    block: &client::BlockReader<'_>,
) -> Vec<String> {
    let name = block::SIZED_BLOCKS;
    let blocks = match crate::plan::sized_blocks::read(bytes) {
        Ok(blocks) => blocks,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let lines = blocks.offsets.len().saturating_sub(1) as u64;
    let tokens = blocks.tokens();
    let mut out = Vec::new();
    if lines != entry.lines || lines != plan.timed_trace.lines {
        out.push(format!(
            "{name} has {lines} lines; plan.json says {} and its schedule has {}",
            entry.lines, plan.timed_trace.lines
        ));
    }
    if blocks.blocks.len() as u64 != entry.blocks || tokens != entry.block_tokens {
        out.push(format!(
            "{name} holds {} blocks of {tokens} tokens; plan.json says {} of {}",
            blocks.blocks.len(),
            entry.blocks,
            entry.block_tokens
        ));
    }
    let schedule = receipt
        .recorded_sha256(block::TIMED_TRACE)
        .filter(|sha| receipt.protocol.timed_trace_sha256.as_deref() == Some(*sha))
        .and_then(|_| block(block::TIMED_TRACE).ok())
        .and_then(|raw| {
            let multiplier = receipt.protocol.sec_multiplier.as_deref().unwrap_or("1");
            crate::plan::read_peer_rows(&raw, multiplier).ok()
        });
    if let Some(rows) = schedule
        && let Some((i, row)) = rows
            .iter()
            .enumerate()
            .find(|(i, row)| blocks.row_tokens(*i) > u64::from(row.input))
    {
        out.push(format!(
            "{name}: line {}: its blocks hold more tokens than the {}-token prompt the schedule plans",
            i + 1,
            row.input
        ));
    }
    out
}

/// The protocol against evidence that does not come from the protocol: the plan fired (its
/// source trace, its request count), the execution (which client ran, how many requests it
/// offered, the argv it ran with) and the server's own name for the model it serves.
fn protocol_against_evidence(
    receipt: &Receipt,
    block: &client::BlockReader<'_>,
    readback: &BTreeMap<String, String>,
) -> Vec<String> {
    let p = &receipt.protocol;
    let mut out = Vec::new();
    let plan = block(block::PLAN)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<crate::plan::PlanDoc>(&bytes).ok());
    if plan.is_none()
        && let Some(sha) = &p.plan_sha256
    {
        out.push(format!(
            "the protocol names a plan (plan_sha256 {sha}) but the receipt's {} is {}: nothing about the plan fired can be checked",
            block::PLAN,
            if receipt.has_block(block::PLAN) {
                "not a plan"
            } else {
                "absent"
            }
        ));
    }
    if let Some(plan) = &plan {
        if let Some(sha) = &p.trace_sha256
            && *sha != plan.source.sha256
        {
            out.push(format!(
                "protocol.trace_sha256 {sha} is not the source of the plan fired ({})",
                plan.source.sha256
            ));
        }
        out.extend(sized_blocks_against_plan(receipt, plan, block));
        if let Some(n) = p.requests
            && n != plan.timed_trace.lines
        {
            out.push(format!(
                "protocol.requests {n} is not the {} requests of the plan fired",
                plan.timed_trace.lines
            ));
        }
    }
    match (&p.engine, &receipt.execution) {
        (crate::receipt::Engine::Native, Execution::Native { offered, .. })
            if p.requests.is_some_and(|n| n != *offered) =>
        {
            out.push(format!(
                "protocol.requests {} is not the {offered} the native client offered",
                p.requests.unwrap_or(0)
            ));
        }
        (crate::receipt::Engine::Native, Execution::Ran { .. }) => {
            out.push("protocol.engine is native but the execution is a bench process".to_owned())
        }
        (engine, Execution::Native { .. }) if engine.is_process() => out.push(format!(
            "protocol.engine is {} but the execution is the native client's",
            match engine {
                crate::receipt::Engine::Aiperf => "aiperf",
                crate::receipt::Engine::Guidellm => "guidellm",
                _ => "vllm_bench_serve",
            }
        )),
        // The program itself (argv[0]) is the resolved console script; its binding is the
        // implementation standing's. Every argument must be the protocol's.
        (crate::receipt::Engine::VllmBenchServe, Execution::Ran { argv, .. })
            if !p.argv.is_empty() && argv.get(1..) != p.argv.get(1..) =>
        {
            out.push("protocol.argv is not the argv the bench process ran with".to_owned());
        }
        _ => {}
    }
    out.extend(tls_against_evidence(receipt));
    out.extend(peer::inputs_against_plan(receipt, block));
    if let (Some(model), Some(served)) = (&p.model, readback.get("model"))
        && model != served
    {
        out.push(format!(
            "protocol.model {model:?} is not the model the server's own /metrics name ({served:?})"
        ));
    }
    out
}

/// The receipt's capture fields against the block that was written with them: an edit after
/// the fact is named; a receipt without the block has its capture in no digest.
fn capture_inconsistency(receipt: &Receipt, block: &client::BlockReader<'_>) -> Option<String> {
    // An unsealed stream's writer never got to its capture block; being unsealed refuses it.
    if !receipt.sealed() {
        return None;
    }
    if !receipt.has_block(block::CAPTURE) {
        return Some(format!(
            "the receipt holds no {} block: its execution, scrapes, implementation and lease fields are in no digest (written before capture blocks, or removed)",
            block::CAPTURE
        ));
    }
    let bytes = block(block::CAPTURE).ok()?; // a failing block is already a refusal
    let Ok(kept) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Some(format!("{} is not JSON", block::CAPTURE));
    };
    let now: serde_json::Value =
        serde_json::from_slice(&receipt.capture_json()).unwrap_or(serde_json::Value::Null);
    let diffs = exact_differences("", &kept, &now);
    (!diffs.is_empty()).then(|| {
        format!(
            "the receipt's capture fields differ from {} (edited after capture): {}{}",
            block::CAPTURE,
            diffs.iter().take(3).cloned().collect::<Vec<_>>().join("; "),
            if diffs.len() > 3 {
                format!("; and {} more", diffs.len() - 3)
            } else {
                String::new()
            }
        )
    })
}

/// Paths where two JSON values differ, exactly (an integer stamp 1 ns off is a difference).
fn exact_differences(path: &str, a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter()
                .flat_map(|k| {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    exact_differences(
                        &p,
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    )
                })
                .collect()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .flat_map(|(i, (u, v))| exact_differences(&format!("{path}[{i}]"), u, v))
            .collect(),
        _ if a == b => Vec::new(),
        _ => vec![format!(
            "{path} is {} in the block, {} in the receipt",
            short(a),
            short(b)
        )],
    }
}

fn short(v: &serde_json::Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 80 {
        return text;
    }
    let head: String = text.chars().take(80).collect();
    format!("{head}…")
}

fn implementation_standing(receipt: &Receipt) -> Standing {
    match &receipt.implementation {
        Some(i) => match (&i.version, &i.source_sha256) {
            (Some(v), Some(d)) => Standing::positive(format!(
                "bound: {} {v}, {} sha256 {d}",
                i.name,
                i.source.as_deref().unwrap_or("source")
            )),
            _ => Standing::refused(
                format!(
                    "unbound: {} {}{}",
                    i.name,
                    i.version.as_deref().unwrap_or("(version unknown)"),
                    i.unbound
                        .as_deref()
                        .map_or(String::new(), |u| format!(": {u}"))
                ),
                "fire with loadproof (it hashes the installed client) or import with --client-source",
            ),
        },
        None => Standing::refused(
            "unbound: the receipt does not say which client implementation produced it",
            "fire with loadproof (it hashes the installed client) or import with --client-source",
        ),
    }
}

const LEASE_SETTLE: &str = "hold a lease from the route's lessor bound to this subject and route for the whole run (`fire --acquire-lease SECONDS`, or `--lease FILE`)";

fn window_standing(
    receipt: &Receipt,
    block: &client::BlockReader<'_>,
    run_unix_ns: Option<(i64, i64)>,
    foreign: &ForeignWork,
    leases: &[LeaseReading],
) -> Standing {
    let Some(name) = &receipt.lease else {
        return Standing::refused(
            "isolation not established: no lease (a statement that nothing else ran is not isolation)",
            LEASE_SETTLE,
        );
    };
    let lease = match block(name).and_then(|b| Lease::from_json(&b).map_err(|e| e.to_string())) {
        Ok(l) => l,
        Err(why) => {
            return Standing::refused(format!("the lease cannot be used: {why}"), LEASE_SETTLE);
        }
    };
    if lease.subject.is_empty() {
        return Standing::refused(
            format!(
                "lease {} is generic (bound to no subject): a generic lease is not isolation",
                lease.id
            ),
            LEASE_SETTLE,
        );
    }
    let s = &receipt.subject;
    for (axis, bound) in &lease.subject {
        let ours = match axis.as_str() {
            "model" => &s.model,
            "model_revision" => &s.model_revision,
            "gpu_sku" => &s.gpu_sku,
            "engine" => &s.engine,
            "engine_version" => &s.engine_version,
            other => {
                return Standing::refused(
                    format!(
                        "lease {} binds an axis this receipt does not carry: {other}",
                        lease.id
                    ),
                    LEASE_SETTLE,
                );
            }
        };
        match ours {
            Axis::Known { value, .. } if value == bound => {}
            Axis::Known { value, .. } => {
                return Standing::refused(
                    format!(
                        "lease {} is for another subject ({axis} {bound:?}, this run's is {value:?}): it does not isolate this window",
                        lease.id
                    ),
                    LEASE_SETTLE,
                );
            }
            Axis::Unknown { .. } => {
                return Standing::refused(
                    format!(
                        "lease {} binds {axis} = {bound:?} but this run's {axis} is unknown",
                        lease.id
                    ),
                    LEASE_SETTLE,
                );
            }
        }
    }
    let route = lease.route.trim_end_matches('/');
    if receipt
        .protocol
        .base_url
        .as_deref()
        .map(|u| u.trim_end_matches('/'))
        != Some(route)
    {
        return Standing::refused(
            format!(
                "lease {} protects {route}, this run fired at {}",
                lease.id,
                receipt
                    .protocol
                    .base_url
                    .as_deref()
                    .unwrap_or("an unstated URL")
            ),
            LEASE_SETTLE,
        );
    }
    if lease.exclusion.trim().is_empty() {
        return Standing::refused(
            format!("lease {} states no exclusion mechanism", lease.id),
            LEASE_SETTLE,
        );
    }
    if let Err(why) = lessor_confirms(&lease, leases) {
        return Standing::refused(why, LESSOR_SETTLE);
    }
    let Some((start, end)) = run_unix_ns else {
        return Standing::refused(
            "the run's interval is not in the receipt: the lease cannot be placed over it",
            LEASE_SETTLE,
        );
    };
    if lease.from_unix_ns > start || lease.until_unix_ns < end {
        return Standing::refused(
            format!(
                "lease {} does not cover the run (lease {}..{}, run {start}..{end} Unix ns)",
                lease.id, lease.from_unix_ns, lease.until_unix_ns
            ),
            LEASE_SETTLE,
        );
    }
    if foreign.surplus_tokens.is_some_and(|s| s > 0) {
        return Standing::refused(
            format!(
                "lease {} held, but the engine counted work this client did not send: the exclusion did not hold",
                lease.id
            ),
            "find and stop the foreign traffic; re-run under the lease",
        );
    }
    Standing::positive(format!(
        "isolated: lease {} from {} bound to {} at {route}, covering the run; exclusion: {}",
        lease.id,
        lease.issuer,
        lease
            .subject
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        lease.exclusion
    ))
}

const LESSOR_SETTLE: &str = "fire at the lessor's route and scrape its /metrics before, during and after the run (loadproof sim and loadproof gate report the lease that holds in the gauge their leases name as readback)";

/// The lessor's own word, from the run's verified scrapes: every scrape that carries the gauge
/// the lease names (`readback`) shows `id` active, and they include a before- and an
/// after-scrape. A lease file is the claimant's copy; only this readback ties it to this run.
fn lessor_confirms(lease: &Lease, leases: &[LeaseReading]) -> Result<(), String> {
    let id = &lease.id;
    let Some(family) = &lease.readback else {
        return Err(format!(
            "lease {id} names no readback gauge: its lessor's own word cannot be checked in the scrapes, so the lease file is only the claimant's statement"
        ));
    };
    // Only the route's own scrapes speak for the lessor: a gauge read from another URL is
    // another server's word about another route.
    let route = origin(&lease.route);
    let readings: Vec<&LeaseReading> = leases
        .iter()
        .filter(|r| route.is_some() && origin(&r.url) == route)
        .collect();
    if readings.is_empty() {
        return Err(format!(
            "lease {id} is not confirmed by its lessor: no readable scrape of its route {} is in this run, so the lease file is only the claimant's statement",
            lease.route
        ));
    }
    for r in &readings {
        let Some(active) = r.active.as_deref() else {
            return Err(format!(
                "the route's /metrics at scrape {} ({:?}, {}) carry no {family}: the lessor named in lease {id} does not serve this route",
                r.scrape, r.phase, r.url
            ));
        };
        if !active.iter().any(|a| a == id) {
            let seen = match active {
                [] => "no lease".to_owned(),
                ids => format!("lease {}", ids.join(", ")),
            };
            return Err(format!(
                "the lessor's {family} at scrape {} ({:?}, {}) shows {seen} active, not lease {id}: the lease did not hold across this run",
                r.scrape, r.phase, r.url
            ));
        }
    }
    for phase in [Phase::Before, Phase::After] {
        if !readings.iter().any(|r| r.phase == phase) {
            return Err(format!(
                "the lessor's readback does not cover the run: no {phase:?} scrape shows lease {id} active"
            ));
        }
    }
    Ok(())
}

fn arrival_standing(gate: &Gate, arrival: Option<&ArrivalFacts>, policy: &Policy) -> Standing {
    let settle = "fire with the native engine (per-request send times against the schedule)";
    let Some(a) = arrival.filter(|_| gate.read) else {
        return Standing::refused(format!("unread: {}", gate.reason), settle);
    };
    if !a.observed {
        return Standing::refused(
            format!("declared, not observed: {}", a.source),
            "retain per-request send times: --save-detailed on vLLM ≥ 0.15 (start_times) or the native engine",
        );
    }
    let bound = policy.max_send_lag_ms;
    let Some(max) = a.lag_max_ms else {
        return Standing::refused(
            format!("observed but not joined to the schedule: {}", a.source),
            settle,
        );
    };
    if a.not_sent > 0 {
        return Standing::refused(
            format!(
                "{} offered requests have no recorded send time (not sent, or sent without a record: a peer tool can lose one)",
                a.not_sent
            ),
            settle,
        );
    }
    if a.early > 0 {
        return Standing::refused(
            format!("{} requests were sent before their scheduled time", a.early),
            "fix the client's clock handling and re-run",
        );
    }
    if max > bound {
        return Standing::refused(
            format!(
                "the client fell behind its schedule: largest send lag {max:.3} ms > the policy's bound {bound:.3} ms{}",
                claimed_bound(a)
            ),
            "re-run on a less loaded client machine, or lower the offered rate",
        );
    }
    Standing::positive(format!(
        "observed: {} sends, lag p50 {:.3} / p99 {:.3} / max {max:.3} ms within the policy's {bound:.3} ms{}",
        a.sent,
        a.lag_p50_ms.unwrap_or(f64::NAN),
        a.lag_p99_ms.unwrap_or(f64::NAN),
        claimed_bound(a)
    ))
}

/// The receipt's own bound, when it states one: the claimant's intent, reported, never used.
fn claimed_bound(a: &ArrivalFacts) -> String {
    a.claimed_bound_ms.map_or(String::new(), |c| {
        format!(" (the receipt's own bound, {c:.3} ms, is the claimant's intent, not the standard)")
    })
}

fn occupancy_standing(o: &OccupancyFacts, cap: Option<u64>, policy: &Policy) -> Standing {
    let max_gap_ms = policy.max_scrape_gap_ms;
    let settle = format!(
        "scrape /metrics during the run (fire does every 250 ms) with no gap over the policy's {max_gap_ms} ms"
    );
    let settle = settle.as_str();
    if o.samples == 0 {
        return Standing::refused(o.reason.clone(), settle);
    }
    if let Some(g) = o.max_gap_ms
        && g > max_gap_ms
    {
        return Standing::refused(
            format!(
                "the series has a {g:.0} ms gap (> the policy's {max_gap_ms} ms): the interval is not covered"
            ),
            settle,
        );
    }
    if o.max_gap_ms.is_none() {
        return Standing::refused(o.reason.clone(), settle);
    }
    if let Some(why) = &o.engine_over_client {
        return Standing::refused(
            format!("foreign requests observed (unattributed): {why}"),
            "isolate the window (a lease with exclusion) and re-run",
        );
    }
    if let (Some(c), Some(r)) = (cap.filter(|c| *c > 0), o.max_running)
        && r > c as f64
    {
        return Standing::refused(
            format!("the engine ran {r} requests, above the declared cap {c}"),
            "isolate the window and re-run",
        );
    }
    match o.preemptions_delta {
        None => {
            return Standing::refused(
                "preemptions unread (vllm:num_preemptions_total absent from a boundary scrape)",
                "scrape an engine that exports vllm:num_preemptions_total",
            );
        }
        Some(p) if p > 0 => {
            return Standing::refused(
                format!("{p} preemptions during the run: the engine ran out of KV capacity"),
                "lower the offered load or raise KV capacity; the rate measured here is of a preempting engine",
            );
        }
        Some(_) => {}
    }
    // A queue seen in two scrapes in a row outlived a whole scrape interval: the engine did not
    // keep up. Waiting in isolated samples is what admission at the next scheduler step looks
    // like to a scrape; it is reported, not promoted to a saturation claim.
    if o.waiting_longest_run >= u64::from(policy.max_waiting_scrapes) {
        return Standing::refused(
            format!(
                "requests waited for admission in {} consecutive scrapes (up to {}): a queue that outlived the scrape interval, so the engine did not keep up with the offered load",
                o.waiting_longest_run,
                o.max_waiting.map_or("-".to_owned(), |w| w.to_string())
            ),
            "lower the offered load; the rate measured here is of a saturated engine",
        );
    }
    if o.waiting_run_with_unread >= u64::from(policy.max_waiting_scrapes) {
        // Unread scrapes in a row need no queue seen beside them: every scrape that saw one
        // may have been turned into a timeout.
        let lead = if o.waiting_samples == 0 {
            "during-run scrapes in a row were not read"
        } else {
            "requests waited for admission beside during-run scrapes that were not read"
        };
        return Standing::refused(
            format!(
                "{lead} ({} unread): with them, {} scrapes in a row may have shown a queue (the policy refuses {}), and what an unread scrape showed is unknown",
                o.unread, o.waiting_run_with_unread, policy.max_waiting_scrapes
            ),
            "re-run with every during-run scrape read (a timeout or a scrape dropped from the receipt leaves the queue's length unknown)",
        );
    }
    let waiting = match o.waiting_samples {
        0 => "no waiting".to_owned(),
        n => format!(
            "waiting > 0 in {n} isolated scrape(s) (up to {}), at most {} in a row, fewer than the policy's {}: admission at the next scheduler step, not a queue",
            o.max_waiting.map_or("-".to_owned(), |w| w.to_string()),
            o.waiting_longest_run,
            policy.max_waiting_scrapes
        ),
    };
    Standing::positive(format!(
        "{}; max running {}, {waiting}, no preemptions, KV usage ≤ {}",
        o.reason,
        o.max_running.map_or("-".to_owned(), |r| r.to_string()),
        o.max_kv_usage.map_or("-".to_owned(), |k| format!("{k:.3}"))
    ))
}

fn agreement_standing(
    gate: &Gate,
    client: Option<&ClientFacts>,
    engine: &EngineFacts,
    foreign: &ForeignWork,
) -> Standing {
    let settle = "readable before and after scrapes of the same incarnation, and client facts";
    if !gate.read {
        return Standing::refused(format!("unread: {}", gate.reason), settle);
    }
    let (Some(c), Some(e)) = (client, engine.generation_tokens_delta) else {
        return Standing::refused(format!("unread: {}", engine.reason), settle);
    };
    if foreign.contradiction {
        return Standing::refused(
            foreign.reason.clone(),
            "check that the scrapes are of this run's server",
        );
    }
    if e != c.output_tokens {
        return Standing::refused(foreign.reason.clone(), "isolate the window and re-run");
    }
    match engine.prompt_tokens_delta {
        Some(p) if p == c.input_tokens => Standing::positive(format!(
            "engine and client agree: generation {e} = output {}, prompt {p} = input {}",
            c.output_tokens, c.input_tokens
        )),
        Some(p) => Standing::refused(
            format!(
                "generation agrees ({e}) but the engine counted {p} prompt tokens, the client {}",
                c.input_tokens
            ),
            "isolate the window and re-run",
        ),
        None => Standing::refused("prompt token delta unread", settle),
    }
}

fn continuity_standing(engine: &EngineFacts) -> Standing {
    if engine.continuous {
        Standing::positive(engine.incarnations.join("; "))
    } else {
        Standing::refused(
            engine.reason.clone(),
            "scrape one server incarnation before, during and after the run",
        )
    }
}

fn ledger_standing(gate: &Gate, ledger: Option<&LedgerFacts>) -> Standing {
    let settle = "a run in which every offered request completes";
    let Some(l) = ledger.filter(|_| gate.read) else {
        return Standing::refused(format!("unread: {}", gate.reason), settle);
    };
    let offered = l.offered.map_or("unstated".to_owned(), |o| o.to_string());
    if !l.closed {
        return Standing::refused(
            format!(
                "not closed: {} completed, {} failed of {offered} offered ({})",
                l.completed,
                l.failed.map_or("unknown".to_owned(), |f| f.to_string()),
                l.source
            ),
            settle,
        );
    }
    match l.failed {
        Some(0) => Standing::positive(format!(
            "closed: {} of {offered} completed, none failed{}",
            l.completed,
            if l.aggregate {
                " (aggregate: closed only because every request succeeded)"
            } else {
                ""
            }
        )),
        Some(f) => Standing::refused(
            format!(
                "{f} of {offered} failed ({} after streaming tokens): a broken service is not a slow one",
                l.failed_after_tokens
                    .map_or("unknown".to_owned(), |n| n.to_string())
            ),
            settle,
        ),
        None => Standing::refused("failures unknown (the summary has no Failed line)", settle),
    }
}

/// True when a receipt's execution is the native client (per-request records exist).
pub fn is_native(receipt: &Receipt) -> bool {
    matches!(receipt.execution, Execution::Native { .. })
}
