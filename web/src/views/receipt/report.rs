//! The receipt view's report: every card about one audited receipt, in reading order — the
//! verdict (and who vouches for it), digests, execution gate, ledger, client, latency, the charts ([`super::figures`]),
//! engine, agreement, standings (with the policy they were judged against), refusals, the
//! claimant's statements and knobs ([`super::statements`]), subject, lease and raw evidence.
//!
//! Each card lays out part of the [`ReceiptModel`]: core's `Audit` verbatim and the receipt's
//! own facts. Nothing here computes what core computes.

use std::sync::Arc;

use leptos::prelude::*;
use loadproof_core::audit::{AccountFacts, AttestationLevel, ScrapeSignatures};
use loadproof_core::receipt::{Encoding, Execution, TlsVerify};

use super::figures::{GpuChart, LatencyCharts, SeriesChart, TimelineChart};
use super::model::{self, ReceiptModel};
use super::over_time::OverTimeCard;
use super::statements::Statements;
use super::summary::{Summary, attestation_meaning, attestation_text, axis_text};
use super::toc::Contents;
use crate::policy::summary;
use crate::widgets::number::{ABSENT, js, js_opt, readable};
use crate::widgets::policy_panel::JudgedBy;
use crate::widgets::readout::{
    Col, dd, int, int_opt, key_values, list, natural_cmp, td, thead, when, yes_no,
};

/// The lessor's signed account of the lease beside the client's: what it admitted, the tokens
/// it counted, the `/metrics` bodies it numbered for the holder and how many the receipt kept,
/// and whether the client's ledger fits it (core's reason, verbatim). Each number as the
/// audit's JSON holds it, in `data-value`.
#[component]
fn LessorAccount(account: AccountFacts, scrapes: ScrapeSignatures) -> impl IntoView {
    let who = match (&account.key.trusted_as, account.key.trusted) {
        (Some(c), true) if !c.is_empty() => {
            format!("key {} ({c}), which you trust", account.key.key_id)
        }
        (_, true) => format!("key {}, which you trust", account.key.key_id),
        _ => format!("key {}, which you do not trust", account.key.key_id),
    };
    let counted = |id: &'static str, label: &'static str, n: Option<u64>| {
        view! {
            <dt>{label}</dt>
            <dd id=id class="num-dd" data-value=n.map(|n| n.to_string())>
                {int_opt(n)}
            </dd>
        }
    };
    let kept = account.scrapes.map(|served| {
        let unkept = if scrapes.unkept > 0 {
            format!(
                "; {} never reached the client ({} scrapes failed)",
                int(scrapes.unkept),
                int(scrapes.failed as u64)
            )
        } else {
            String::new()
        };
        let vouched = if account.vouches_for_scrapes {
            "; every one is in the receipt and chains to this account, so its one signature vouches for them all"
        } else {
            "; each statement's own signature is checked"
        };
        format!(
            "{} numbered, {} of them kept{unkept}{vouched}",
            int(served),
            int(scrapes.numbered as u64)
        )
    });
    view! {
        <details id="receipt-lessor-account" class="lessor-account" data-agrees=account.agrees.to_string()>
            <summary>
                {format!(
                    "The lessor's account of the lease, signed by {who}: {}",
                    if account.agrees { "the client's ledger fits it" } else { "the client's ledger contradicts it" },
                )}
            </summary>
            <dl class="facts">
                {counted("lessor-requests", "requests admitted under the lease", Some(account.requests))}
                {counted("lessor-prompt-tokens", "prompt tokens it counted", account.prompt_tokens)}
                {counted("lessor-completion-tokens", "completion tokens it counted", account.completion_tokens)}
                {counted("lessor-uncounted", "requests whose usage it did not see", account.uncounted_requests)}
                {counted("lessor-scrapes", "/metrics bodies served to the holder", account.scrapes)}
                {kept.map(|k| view! { <dt>"of those"</dt><dd id="lessor-scrapes-kept">{k}</dd> })}
            </dl>
            <p id="lessor-account-reason" class="hint">{account.reason.clone()}</p>
        </details>
    }
}

/// An id-safe version of a block name (`metrics/3` → `metrics-3`).
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Everything about one audited receipt. The banner and the summary are built at once; the
/// other cards one per animation frame after them, and `on_built` runs when the last is in.
/// Built in one go, a 148 MB receipt's report held the page for one 0.5–0.7 s frame.
#[component]
pub fn Report(model: Arc<ReceiptModel>, on_built: Callback<()>) -> impl IntoView {
    let m = model;
    type Card = Box<dyn Fn() -> AnyView + Send + Sync>;
    let card = |f: fn(Arc<ReceiptModel>) -> AnyView| -> Card {
        let m = m.clone();
        Box::new(move || f(m.clone()))
    };
    // (card, whether it draws a chart: its first drawing gets a frame of its own)
    let later: Vec<(Card, bool)> = vec![
        (card(|m| view! { <Digests m=m /> }.into_any()), false),
        (card(|m| view! { <Execution m=m /> }.into_any()), false),
        (card(|m| view! { <Ledger m=m /> }.into_any()), false),
        (card(|m| view! { <Client m=m /> }.into_any()), false),
        (card(|m| view! { <Latency m=m /> }.into_any()), false),
        (card(|m| view! { <LatencyCharts m=m /> }.into_any()), true),
        (card(|m| view! { <OverTimeCard m=m /> }.into_any()), true),
        (card(|m| view! { <TimelineChart m=m /> }.into_any()), true),
        (card(|m| view! { <SeriesChart m=m /> }.into_any()), true),
        (card(|m| view! { <GpuChart m=m /> }.into_any()), true),
    ];
    let rest: Vec<Card> = vec![
        card(|m| view! { <Engine m=m /> }.into_any()),
        card(|m| view! { <Agreement m=m /> }.into_any()),
        card(|m| view! { <Standings m=m /> }.into_any()),
        card(|m| view! { <Refusals m=m /> }.into_any()),
        card(|m| view! { <Statements m=m /> }.into_any()),
        card(|m| view! { <SubjectCard m=m /> }.into_any()),
        card(|m| view! { <LeaseCard m=m /> }.into_any()),
        card(|m| view! { <EvidenceCard m=m /> }.into_any()),
    ];
    let later: Vec<(Card, bool)> = later
        .into_iter()
        .chain(rest.into_iter().map(|c| (c, false)))
        .collect();
    let charts: Vec<bool> = later.iter().map(|(_, chart)| *chart).collect();
    let stage = RwSignal::new(0usize);
    let last = later.len();
    Effect::new(move |_| {
        let k = stage.get();
        crate::ingest::mark(&format!("report-stage-{k}"));
        if k < last {
            // `try_set`: a report replaced before its last card simply stops.
            let next = move || {
                stage.try_set(k + 1);
            };
            // Card k-1 was built in this frame; a chart's first drawing takes the next one.
            if k > 0 && charts.get(k - 1).copied().unwrap_or(false) {
                request_animation_frame(move || request_animation_frame(next));
            } else {
                request_animation_frame(next);
            }
        } else {
            on_built.run(());
        }
    });
    let cards = later
        .into_iter()
        .map(|(build, _)| build)
        .enumerate()
        .map(|(i, build)| {
            let due = Memo::new(move |_| stage.get() > i);
            move || due.get().then(&build)
        })
        .collect_view();
    view! {
        <Contents m=m.clone() />
        <Banner m=m.clone() />
        <Summary m=m />
        {cards}
    }
}

fn banner_class(qualified: bool) -> &'static str {
    if qualified {
        "card wide banner qualified"
    } else {
        "card wide banner unqualified"
    }
}

/// The verdict of a file still being read into its report: the audit arrives ahead of the
/// model, so the reviewer sees the answer and every refusal while the charts are built.
#[component]
pub fn EarlyVerdict(verdict: Arc<model::Verdict>) -> impl IntoView {
    let a = &verdict.audit;
    let class = banner_class(a.qualified);
    view! {
        <section
            id="receipt-early"
            class=class
            data-qualified=a.qualified.to_string()
            aria-labelledby="receipt-early-verdict"
            aria-busy="true"
        >
            <h2 id="receipt-early-verdict" class="verdict">
                {a.verdict()}
            </h2>
            {(!a.qualified)
                .then(|| {
                    view! {
                        <ul id="receipt-early-refusals" class="refusals">
                            {a.refusals.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}
                        </ul>
                    }
                })}
            <p class="hint">
                {format!(
                    "{} ({}): the audit is done; the report is being built.",
                    verdict.source,
                    verdict.file_sha256,
                )}
            </p>
        </section>
    }
}

/// The verdict, first.
#[component]
fn Banner(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let verdict = a.verdict();
    let class = banner_class(a.qualified);
    let attestation = attestation_text(&a.attestation);
    let attestation_level = match a.attestation.level {
        AttestationLevel::Signed => "signed",
        AttestationLevel::SelfAttested => "self_attested",
    };
    let captured = if a.captured {
        "Captured: a raw observation exists (digests verify and client facts were read). Qualification is a separate answer.".to_owned()
    } else if !a.digests_ok {
        "Not captured: evidence fails verification.".to_owned()
    } else {
        format!("Not captured: {}", a.execution_gate.reason)
    };
    view! {
        <section
            id="receipt-banner"
            class=class
            data-qualified=a.qualified.to_string()
            aria-labelledby="receipt-verdict"
        >
            <h2 id="receipt-verdict" class="verdict">
                {verdict}
            </h2>
            <p id="receipt-attestation" class="attestation" data-level=attestation_level>
                <strong id="receipt-attestation-text">{attestation}</strong>
                " "
                <span id="receipt-attestation-meaning" class="hint">
                    {attestation_meaning(&a.attestation)}
                </span>
            </p>
            {a
                .attestation
                .lease_account
                .clone()
                .map(|account| {
                    view! {
                        <LessorAccount account=account scrapes=a.attestation.scrapes.clone() />
                    }
                })}
            {a
                .simulator
                .then(|| {
                    view! {
                        <p id="receipt-simulator" class="synthetic">
                            "The endpoint was loadproof sim, a simulator: these numbers describe the simulator, not a serving engine."
                        </p>
                    }
                })}
            {(!a.caveats.is_empty())
                .then(|| {
                    view! {
                        <ul id="receipt-caveats" class="refusals">
                            {a.caveats.iter().map(|c| view! { <li>{format!("Caveat: {c}")}</li> }).collect_view()}
                        </ul>
                    }
                })}
            {(!a.qualified)
                .then(|| {
                    view! {
                        <ul id="receipt-banner-refusals" class="refusals">
                            {a.refusals.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}
                        </ul>
                    }
                })}
            <p id="receipt-captured" class="hint">
                {captured}
            </p>
            <dl class="facts">
                <dt>"File"</dt>
                <dd id="receipt-source">{m.source.clone()}</dd>
                <dt>"Size, bytes"</dt>
                <dd id="receipt-bytes" title=m.file_bytes.to_string()>
                    {int(m.file_bytes)}
                </dd>
                <dt>"sha256"</dt>
                <dd id="receipt-sha256" class="mono">
                    {m.file_sha256.clone()}
                </dd>
                <dt>"Form"</dt>
                <dd id="receipt-form">{m.form.clone()}</dd>
                <dt>"Protocol key"</dt>
                <dd class="mono">{m.protocol.key.clone()}</dd>
                <dt>"Made by"</dt>
                <dd>
                    {format!(
                        "{} ({}), written {}",
                        m.provenance.generator,
                        m.provenance.source,
                        when(m.provenance.written_unix_ns),
                    )}
                </dd>
            </dl>
        </section>
    }
}

/// Digest verification per evidence block.
#[component]
fn Digests(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let failed: Vec<_> = a.digests.iter().filter(|d| !d.ok).cloned().collect();
    let summary = if failed.is_empty() {
        format!("{} blocks, every digest verifies", a.digests.len())
    } else {
        format!(
            "{} of {} blocks fail verification: {}",
            failed.len(),
            a.digests.len(),
            failed
                .iter()
                .map(|d| d.block.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    // A ten-minute stream holds thousands of blocks: their rows are put in the page when the
    // table is first opened, not with the verdict.
    let opened = RwSignal::new(a.digests.len() <= 8);
    let all = m.clone();
    let rows = move || opened.get().then(|| digest_rows(&all));
    view! {
        <section
            id="receipt-digests"
            class="card wide"
            data-ok=a.digests_ok.to_string()
            aria-labelledby="digests-heading"
        >
            <h2 id="digests-heading">"Evidence digests"</h2>
            <p id="digests-summary" class=if failed.is_empty() { "good" } else { "bad" }>
                {summary}
            </p>
            {(!failed.is_empty())
                .then(|| {
                    view! {
                        <ul id="digest-failures" class="refusals">
                            {failed
                                .iter()
                                .map(|d| {
                                    view! {
                                        <li data-block=d.block.clone()>
                                            <strong>{d.block.clone()}</strong>
                                            ": "
                                            {d.error.clone().unwrap_or_else(|| "fails verification".to_owned())}
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                })}
            <details
                id="digests-every"
                open=a.digests.len() <= 8
                on:toggle=move |_| opened.set(true)
            >
                <summary>{format!("Every block ({})", a.digests.len())}</summary>
                <div class="scroll tall">
                    <table id="digests-table">
                        <caption>
                            "Each evidence block's bytes hashed and compared with the digest the receipt records."
                        </caption>
                        {thead(&[Col::Text("block"), Col::Num("bytes"), Col::Text("sha256 recorded"), Col::Text("check"), Col::Text("error")])}
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </details>
        </section>
    }
}

/// One row per block of the digests table, in natural order (`metrics/2` before
/// `metrics/10`), with the digest the receipt records (abbreviated; whole in the title).
fn digest_rows(m: &ReceiptModel) -> impl IntoView + use<> {
    let recorded: std::collections::BTreeMap<&str, &str> = m
        .blocks
        .iter()
        .filter_map(|b| Some((b.name.as_str(), b.sha256.as_deref()?)))
        .collect();
    let mut digests: Vec<&loadproof_core::audit::BlockCheck> = m.audit.digests.iter().collect();
    digests.sort_by(|a, b| natural_cmp(&a.block, &b.block));
    digests
        .into_iter()
        .map(|d| {
            let sha = recorded.get(d.block.as_str()).copied().unwrap_or_default();
            view! {
                <tr data-block=d.block.clone() data-ok=d.ok.to_string() class:bad=!d.ok>
                    <th scope="row" class="mono">
                        {d.block.clone()}
                    </th>
                    <td class="num" title=d.bytes.to_string()>
                        {int(d.bytes)}
                    </td>
                    <td class="mono" title=sha.to_owned()>{sha.get(..12).unwrap_or(sha).to_owned()}</td>
                    <td class=if d.ok { "good" } else { "bad" }>{if d.ok { "ok" } else { "FAILED" }}</td>
                    <td class="error-cell">{d.error.clone().unwrap_or_default()}</td>
                </tr>
            }
        })
        .collect_view()
}

/// The execution gate and what ran.
#[component]
fn Execution(m: Arc<ReceiptModel>) -> impl IntoView {
    let gate = &m.audit.execution_gate;
    let (kind, facts): (&str, Vec<(&str, String)>) = match &m.execution {
        Execution::Native {
            events,
            offered,
            started,
            ended,
            interrupted,
            lag_bound_ns,
        } => (
            "native client (loadproof's open-loop client)",
            vec![
                ("Event log block", events.clone()),
                ("Offered", int(*offered)),
                ("Started", when(started.unix_ns)),
                (
                    "Ran for, s",
                    readable((ended.mono_ns - started.mono_ns) as f64 / 1e9),
                ),
                (
                    "Interrupted",
                    interrupted.map_or("no".to_owned(), |i| format!("{i:?}")),
                ),
                ("Lag bound, ms", readable(*lag_bound_ns as f64 / 1e6)),
            ],
        ),
        Execution::Ran {
            program,
            exit,
            stdout,
            result,
            started,
            ended,
            interrupted,
            ..
        } => (
            "vllm bench serve (a child process)",
            vec![
                ("Program", program.clone()),
                (
                    "Exit",
                    match (exit.code, exit.signal) {
                        (Some(c), _) => format!("code {c}"),
                        (None, Some(s)) => format!("signal {s}"),
                        (None, None) => "unknown".to_owned(),
                    },
                ),
                ("Stdout block", stdout.clone()),
                (
                    "Result JSON",
                    match result {
                        loadproof_core::receipt::ResultFile::Kept { block } => block.clone(),
                        loadproof_core::receipt::ResultFile::Absent { reason } => {
                            format!("absent: {reason}")
                        }
                    },
                ),
                (
                    "Started",
                    started.map_or(ABSENT.to_owned(), |s| when(s.unix_ns)),
                ),
                (
                    "Ran for, s",
                    started.zip(*ended).map_or(ABSENT.to_owned(), |(a, b)| {
                        readable((b.mono_ns - a.mono_ns) as f64 / 1e9)
                    }),
                ),
                (
                    "Interrupted",
                    interrupted.map_or("no".to_owned(), |i| format!("{i:?}")),
                ),
            ],
        ),
        Execution::NotStarted { cause } => {
            ("the client never started", vec![("Cause", cause.clone())])
        }
        Execution::Unreachable { url, cause } => (
            "the endpoint was unreachable",
            vec![("URL", url.clone()), ("Cause", cause.clone())],
        ),
    };
    view! {
        <section id="receipt-gate" class="card" data-read=gate.read.to_string() aria-labelledby="gate-heading">
            <h2 id="gate-heading">"Execution gate"</h2>
            <p id="gate-verdict" class=if gate.read { "good" } else { "bad" }>
                {if gate.read { "Client facts read: " } else { "Client facts unread: " }}
                {gate.reason.clone()}
            </p>
            <dl>
                <dt>"Client"</dt>
                <dd id="execution-kind">{kind}</dd>
                {facts
                    .into_iter()
                    .map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> })
                    .collect_view()}
            </dl>
        </section>
    }
}

/// The operation ledger.
#[component]
fn Ledger(m: Arc<ReceiptModel>) -> impl IntoView {
    let body = match &m.audit.ledger {
        None => view! { <p class="hint">"No ledger: client facts are unread."</p> }.into_any(),
        Some(l) => {
            let rows = l
                .dispositions
                .iter()
                .map(|(k, v)| {
                    view! {
                        <tr data-kind=k.clone() class:bad=(k != "ok")>
                            <th scope="row">{k.clone()}</th>
                            <td class="num">{int(*v)}</td>
                        </tr>
                    }
                })
                .collect_view();
            let failed = l.failed.unwrap_or(0);
            view! {
                <dl>
                    <dt>"Offered"</dt>
                    <dd id="ledger-offered">{int_opt(l.offered)}</dd>
                    <dt>"Completed"</dt>
                    <dd id="ledger-completed">{int(l.completed)}</dd>
                    <dt>"Failed"</dt>
                    <dd id="ledger-failed" class:bad=(failed > 0)>
                        {int_opt(l.failed)}
                    </dd>
                    <dt>"Failed after streaming tokens"</dt>
                    <dd id="ledger-failed-after-tokens">{int_opt(l.failed_after_tokens)}</dd>
                    <dt>"Closed"</dt>
                    <dd id="ledger-closed">
                        {yes_no(l.closed)}
                        {if l.closed {
                            " (every offered request has one terminal disposition)"
                        } else {
                            ""
                        }}
                    </dd>
                    <dt>"Per request"</dt>
                    <dd>
                        {if l.aggregate { "no: totals only (aggregate)" } else { "yes" }}
                    </dd>
                    <dt>"Source"</dt>
                    <dd>{l.source.clone()}</dd>
                </dl>
                {(!l.dispositions.is_empty())
                    .then(|| {
                        view! {
                            <table id="ledger-dispositions">
                                <caption>"Terminal dispositions"</caption>
                                {thead(&[Col::Text("kind"), Col::Num("requests")])}
                                <tbody>{rows}</tbody>
                            </table>
                        }
                    })}
            }
            .into_any()
        }
    };
    view! {
        <section id="receipt-ledger" class="card" aria-labelledby="ledger-heading">
            <h2 id="ledger-heading">"Ledger"</h2>
            {body}
        </section>
    }
}

/// Client rate, peaks and arrival.
#[component]
fn Client(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let client = match &a.client {
        None => view! {
            <p class="hint">"No client totals: client facts are unread or incomplete."</p>
        }
        .into_any(),
        Some(c) => view! {
            <dl>
                <dt>"Output tokens"</dt>
                <dd id="client-output" title=c.output_tokens.to_string()>{int(c.output_tokens)}</dd>
                <dt>"Input tokens"</dt>
                <dd id="client-input" title=c.input_tokens.to_string()>{int(c.input_tokens)}</dd>
                <dt>"Interval, s"</dt>
                {dd("client-duration", Some(c.duration_s))}
                <dt>"Output tokens/s"</dt>
                {dd("client-rate", c.output_tokens_per_s)}
                <dt>"Interval"</dt>
                <dd>{c.interval.clone()}</dd>
            </dl>
        }
        .into_any(),
    };
    let concurrency = a.concurrency.as_ref().map(|c| {
        view! {
            <h3>"Client peaks"</h3>
            <dl>
                <dt>"Exact peak in flight"</dt>
                <dd id="client-peak">{int_opt(c.exact_client_peak)}</dd>
                <dt>"Whole-second bucket peak"</dt>
                <dd>{int_opt(c.successful_client_second_bucket_peak)}</dd>
                <dt>"Declared cap"</dt>
                <dd>{c.declared_cap.map_or("none".to_owned(), int)}</dd>
            </dl>
            <p class="hint">{c.note.clone()}</p>
        }
    });
    let arrival = a.arrival.as_ref().map(|r| {
        view! {
            <h3>"Arrival"</h3>
            <dl id="client-arrival">
                <dt>"Observed"</dt>
                <dd>{yes_no(r.observed)}</dd>
                <dt>"Sent"</dt>
                <dd>{int(r.sent)}</dd>
                <dt>"Never sent"</dt>
                <dd>{int(r.not_sent)}</dd>
                <dt>"Send lag p50, ms"</dt>
                {dd("arrival-lag-p50", r.lag_p50_ms)}
                <dt>"Send lag p99, ms"</dt>
                {dd("arrival-lag-p99", r.lag_p99_ms)}
                <dt>"Send lag max, ms"</dt>
                {dd("arrival-lag-max", r.lag_max_ms)}
                <dt>"Judged against"</dt>
                <dd id="arrival-judged" title=js(a.policy.max_send_lag_ms)>
                    {format!("send lag ≤ {} ms (", js(a.policy.max_send_lag_ms))}
                    <JudgedBy used=a.policy.clone() />
                    ")"
                </dd>
                {r
                    .claimed_bound_ms
                    .map(|claimed| {
                        view! {
                            <dt>"The receipt's own bound"</dt>
                            <dd id="arrival-claimed" title=js(claimed)>
                                {format!("{} ms: the claimant's intent, not the standard", readable(claimed))}
                            </dd>
                        }
                    })}
                <dt>"Sent early"</dt>
                <dd>{int(r.early)}</dd>
                <dt>"Source"</dt>
                <dd>{r.source.clone()}</dd>
            </dl>
        }
    });
    view! {
        <section id="receipt-client" class="card" aria-labelledby="client-heading">
            <h2 id="client-heading">"Client rate"</h2>
            {client}
            {concurrency}
            {arrival}
        </section>
    }
}

/// The audit's latency distributions.
#[component]
fn Latency(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let rows = a
        .latency
        .iter()
        .map(|l| {
            view! {
                <tr data-metric=l.metric.clone()>
                    <th scope="row">{l.metric.to_uppercase()}</th>
                    <td class="num">{int_opt(l.count)}</td>
                    {td(l.mean_ms)}
                    {td(l.p50_ms)}
                    {td(l.p90_ms)}
                    {td(l.p99_ms)}
                    {td(l.max_ms)}
                    <td class="src">{l.source.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let tail = a.itl_tail.as_ref().map(|t| {
        view! {
            <p id="itl-tail">
                "ITL tail: p99 " <span title=js(t.p99_ms)>{readable(t.p99_ms)}</span> " ms = "
                <span title=js_opt(t.ratio)>{t.ratio.map_or(ABSENT.to_owned(), readable)}</span> "× the median ("
                <span title=js(t.p50_ms)>{readable(t.p50_ms)}</span> " ms); cause "
                {t.cause.clone()} ". " <span class="hint">{t.why.clone()}</span>
            </p>
        }
    });
    view! {
        <section id="receipt-latency" class="card wide" aria-labelledby="latency-heading">
            <h2 id="latency-heading">"Latency as the client observed it"</h2>
            <div class="scroll">
                <table id="latency-table">
                    <caption>"Milliseconds; completed requests only"</caption>
                    {thead(&[Col::Text("metric"), Col::Num("count"), Col::Num("mean"), Col::Num("p50"), Col::Num("p90"), Col::Num("p99"), Col::Num("max"), Col::Text("source")])}
                    <tbody>
                        {if a.latency.is_empty() {
                            view! {
                                <tr>
                                    <td colspan="8" class="hint">
                                        "No latency: client facts are unread."
                                    </td>
                                </tr>
                            }
                                .into_any()
                        } else {
                            rows.into_any()
                        }}
                    </tbody>
                </table>
            </div>
            {tail}
            <p id="latency-samples-source" class="hint">
                "Histograms and CDFs below: " {m.latency.source.clone()}
            </p>
        </section>
    }
}

/// Engine counter deltas and histograms.
#[component]
fn Engine(m: Arc<ReceiptModel>) -> impl IntoView {
    let e = &m.audit.engine;
    let hist = e
        .histograms
        .iter()
        .map(|h| {
            view! {
                <tr>
                    <th scope="row" class="mono">{h.family.clone()}</th>
                    <td class="num">{int(h.count)}</td>
                    {td(h.mean_ms)}
                    {td(h.p50_le_ms)}
                    {td(h.p99_le_ms)}
                </tr>
            }
        })
        .collect_view();
    view! {
        <section id="receipt-engine" class="card" aria-labelledby="engine-heading">
            <h2 id="engine-heading">"Engine counters"</h2>
            <dl>
                <dt>"Generation tokens Δ"</dt>
                <dd id="engine-generation">{int_opt(e.generation_tokens_delta)}</dd>
                <dt>"Prompt tokens Δ"</dt>
                <dd id="engine-prompt">{int_opt(e.prompt_tokens_delta)}</dd>
                <dt>"One incarnation"</dt>
                <dd id="engine-continuous">{yes_no(e.continuous)}</dd>
                <dt>"Read"</dt>
                <dd>{e.reason.clone()}</dd>
            </dl>
            <h3>"Incarnations"</h3>
            {list("engine-incarnations", e.incarnations.clone())}
            {(!e.histograms.is_empty())
                .then(|| {
                    view! {
                        <div class="scroll">
                            <table id="engine-histograms">
                                <caption>
                                    "The engine's own latency histograms over the envelope, ms (bucket bounds: an observation, not a cause)"
                                </caption>
                                {thead(&[Col::Text("family"), Col::Num("count"), Col::Num("mean"), Col::Num("p50 ≤"), Col::Num("p99 ≤")])}
                                <tbody>{hist}</tbody>
                            </table>
                        </div>
                    }
                })}
        </section>
    }
}

/// Engine vs client: agreement or foreign work.
#[component]
fn Agreement(m: Arc<ReceiptModel>) -> impl IntoView {
    let f = &m.audit.foreign_work;
    view! {
        <section
            id="receipt-foreign"
            class="card"
            data-contradiction=f.contradiction.to_string()
            aria-labelledby="foreign-heading"
        >
            <h2 id="foreign-heading">"Agreement and foreign work"</h2>
            <p id="foreign-reason" class:bad=(f.contradiction || f.surplus_tokens.is_some_and(|s| s > 0))>
                {f.reason.clone()}
            </p>
            <dl>
                <dt>"Generation surplus, tokens"</dt>
                <dd id="foreign-surplus">{int_opt(f.surplus_tokens)}</dd>
                <dt>"Prompt surplus, tokens"</dt>
                <dd id="foreign-prompt-surplus">{int_opt(f.prompt_surplus_tokens)}</dd>
                <dt>"Contradiction"</dt>
                <dd>{yes_no(f.contradiction)}</dd>
            </dl>
        </section>
    }
}

/// Every standing.
#[component]
fn Standings(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    let claimed = a
        .arrival
        .as_ref()
        .and_then(|r| r.claimed_bound_ms)
        .map(|c| {
            format!(
                " The receipt's own send-lag bound, {} ms, is the claimant's intent: reported, never used.",
                js(c)
            )
        });
    let items = model::standing_names(a)
        .into_iter()
        .map(|name| {
            let s = a.standings.get(&name).cloned();
            let positive = s.as_ref().is_some_and(|s| s.positive);
            view! {
                <li
                    id=format!("standing-{name}")
                    class=if positive { "standing positive" } else { "standing refused" }
                    data-positive=positive.to_string()
                >
                    <span class=if positive { "badge ok" } else { "badge failed" }>
                        {if positive { "positive" } else { "refused" }}
                    </span>
                    " "
                    <strong>{name.clone()}</strong>
                    <p class="reason">
                        {s.as_ref().map_or("not assessed".to_owned(), |s| s.reason.clone())}
                    </p>
                    {s
                        .and_then(|s| s.settle)
                        .map(|settle| {
                            view! {
                                <p class="settle">
                                    <span class="hint">"Would settle it: "</span>
                                    {settle}
                                </p>
                            }
                        })}
                </li>
            }
        })
        .collect_view();
    view! {
        <section id="receipt-standings" class="card wide" aria-labelledby="standings-heading">
            <h2 id="standings-heading">"Standings"</h2>
            <p class="hint">
                "A claim qualifies only when all eight are positive and nothing refused the receipt."
            </p>
            <p id="standings-policy" class="policy-used">
                "Judged against " <JudgedBy used=a.policy.clone() /> ": " {summary(&a.policy)} "."
                {claimed}
            </p>
            <ul class="standings">{items}</ul>
        </section>
    }
}

/// Refusals and inconsistencies.
#[component]
fn Refusals(m: Arc<ReceiptModel>) -> impl IntoView {
    let a = &m.audit;
    view! {
        <section id="receipt-refusals" class="card wide" aria-labelledby="refusals-heading">
            <h2 id="refusals-heading">"Refusals and inconsistencies"</h2>
            <h3>"Refusals"</h3>
            {list("refusals-list", a.refusals.clone())}
            <h3>"Inconsistencies (evidence contradicting other evidence)"</h3>
            {list("inconsistencies-list", a.inconsistencies.clone())}
            <h3>"Notes in the receipt (the writer's, not facts)"</h3>
            {list("receipt-notes", m.notes.clone())}
        </section>
    }
}

/// What was measured and what was asked.
#[component]
fn SubjectCard(m: Arc<ReceiptModel>) -> impl IntoView {
    let s = &m.subject;
    let p = &m.protocol;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "not stated".to_owned());
    let unstated = p.unstated();
    view! {
        <section id="receipt-subject" class="card" aria-labelledby="subject-heading">
            <h2 id="subject-heading">"Subject and protocol"</h2>
            <dl>
                <dt>"Model"</dt>
                <dd>{axis_text(&s.model)}</dd>
                <dt>"Model revision"</dt>
                <dd>{axis_text(&s.model_revision)}</dd>
                <dt>"GPU"</dt>
                <dd>{axis_text(&s.gpu_sku)}</dd>
                <dt>"Engine"</dt>
                <dd>{axis_text(&s.engine)}</dd>
                <dt>"Engine version"</dt>
                <dd>{axis_text(&s.engine_version)}</dd>
                <dt>"Knobs"</dt>
                <dd>
                    {if s.knobs.is_empty() {
                        "none stated".to_owned()
                    } else {
                        key_values(&s.knobs)
                    }}
                </dd>
                <dt>"Simulator"</dt>
                <dd>{yes_no(s.simulator)}</dd>
            </dl>
            <h3>"Protocol"</h3>
            <dl>
                <dt>"Client"</dt>
                <dd id="protocol-client">{format!("{} {}", p.engine.label(), opt(&p.client_version))}</dd>
                <dt>"Endpoint"</dt>
                <dd>{format!("{}{}", opt(&p.base_url), p.endpoint.clone().unwrap_or_default())}</dd>
                <dt>"TLS"</dt>
                <dd id="protocol-tls">
                    {match &p.tls {
                        None => "not used (plain http://)".to_owned(),
                        Some(t) => match t.verify {
                            TlsVerify::System => "certificates checked against the platform's trust store".to_owned(),
                            TlsVerify::CaCert => format!(
                                "certificates checked against the platform's store and a private CA (sha256 {})",
                                t.ca_sha256.as_deref().unwrap_or("not stated")
                            ),
                            TlsVerify::Insecure => "NOT CHECKED (--insecure): anyone on the network path could have answered".to_owned(),
                        },
                    }}
                </dd>
                <dt>"Model field"</dt>
                <dd>{opt(&p.model)}</dd>
                <dt>"Requests"</dt>
                <dd>{int_opt(p.requests)}</dd>
                <dt>"Time multiplier"</dt>
                <dd>{opt(&p.sec_multiplier)}</dd>
                <dt>"Arrival"</dt>
                <dd>{opt(&p.arrival)}</dd>
                <dt>"Concurrency cap"</dt>
                <dd>
                    {match p.max_concurrency {
                        Some(0) => "uncapped".to_owned(),
                        Some(c) => int(c),
                        None => "not stated".to_owned(),
                    }}
                </dd>
                <dt>"Trace sha256"</dt>
                <dd class="mono">{opt(&p.trace_sha256)}</dd>
                <dt>"Not stated"</dt>
                <dd>
                    {if unstated.is_empty() { "nothing".to_owned() } else { unstated.join(", ") }}
                </dd>
            </dl>
        </section>
    }
}

/// The lease and the client implementation.
#[component]
fn LeaseCard(m: Arc<ReceiptModel>) -> impl IntoView {
    let lease = match (&m.lease.block, &m.lease.lease, &m.lease.problem) {
        (None, _, _) => view! { <p id="lease-none">"No lease: the window's isolation is not established."</p> }.into_any(),
        (Some(_), Some(l), _) => view! {
            <dl id="lease-facts">
                <dt>"Id"</dt>
                <dd class="mono">{l.id.clone()}</dd>
                <dt>"Issuer"</dt>
                <dd>{l.issuer.clone()}</dd>
                <dt>"Holder"</dt>
                <dd>{l.holder.clone()}</dd>
                <dt>"Route"</dt>
                <dd>{l.route.clone()}</dd>
                <dt>"Bound to"</dt>
                <dd>
                    {if l.subject.is_empty() {
                        "nothing (a generic lease)".to_owned()
                    } else {
                        key_values(&l.subject)
                    }}
                </dd>
                <dt>"From"</dt>
                <dd>{when(l.from_unix_ns)}</dd>
                <dt>"Until"</dt>
                <dd>{when(l.until_unix_ns)}</dd>
                <dt>"Exclusion"</dt>
                <dd>{if l.exclusion.is_empty() { "none stated".to_owned() } else { l.exclusion.clone() }}</dd>
            </dl>
        }
            .into_any(),
        (Some(block), None, problem) => view! {
            <p class="bad">
                {format!(
                    "The lease block {block} cannot be read: {}",
                    problem.clone().unwrap_or_default(),
                )}
            </p>
        }
            .into_any(),
    };
    let implementation = match &m.implementation {
        None => view! { <p>"Not stated: the receipt does not say which client produced it."</p> }.into_any(),
        Some(i) => view! {
            <dl id="implementation-facts">
                <dt>"Name"</dt>
                <dd>{i.name.clone()}</dd>
                <dt>"Version"</dt>
                <dd>{i.version.clone().unwrap_or_else(|| "unknown".to_owned())}</dd>
                <dt>"Digest of"</dt>
                <dd class="mono">{i.source.clone().unwrap_or_else(|| ABSENT.to_owned())}</dd>
                <dt>"sha256"</dt>
                <dd class="mono">
                    {i.source_sha256.clone().unwrap_or_else(|| format!("unbound: {}", i.unbound.clone().unwrap_or_default()))}
                </dd>
            </dl>
        }
            .into_any(),
    };
    view! {
        <section id="receipt-lease" class="card" aria-labelledby="lease-heading">
            <h2 id="lease-heading">"Lease"</h2>
            {lease}
            <h3>"Client implementation"</h3>
            {implementation}
        </section>
    }
}

/// Raw evidence, one `<details>` per block; a preview is put in the page when first opened.
/// A stream's scrape bodies (thousands in a long run) sit in one more `<details>`, their items
/// put in the page when it is first opened.
#[component]
fn EvidenceCard(m: Arc<ReceiptModel>) -> impl IntoView {
    let (scrapes, fixed): (Vec<&model::BlockInfo>, Vec<&model::BlockInfo>) =
        m.blocks.iter().partition(|b| is_scrape_body(&b.name));
    let items = fixed.into_iter().cloned().map(evidence_item).collect_view();
    let failed = scrapes.iter().filter(|b| !b.ok).count();
    let bodies = (!scrapes.is_empty()).then(|| {
        let count = scrapes.len();
        let opened = RwSignal::new(false);
        // A ten-minute run holds thousands of scrapes: they are put in the page a page at a
        // time, in the order they were taken (metrics/2 before metrics/10).
        let shown = RwSignal::new(SCRAPES_PER_PAGE);
        let mut ordered: Vec<model::BlockInfo> = scrapes.into_iter().cloned().collect();
        ordered.sort_by(|a, b| natural_cmp(&a.name, &b.name));
        let page = Arc::new(ordered);
        let list = move || {
            opened.get().then(|| {
                page.iter()
                    .take(shown.get())
                    .cloned()
                    .map(evidence_item)
                    .collect_view()
            })
        };
        let more = move || {
            let left = count.saturating_sub(shown.get());
            (opened.get() && left > 0).then(|| {
                view! {
                    <button
                        type="button"
                        id="evidence-scrapes-more"
                        on:click=move |_| shown.update(|n| *n += SCRAPES_PER_PAGE)
                    >
                        {format!(
                            "Show the next {} ({} not shown)",
                            int(left.min(SCRAPES_PER_PAGE) as u64),
                            int(left as u64),
                        )}
                    </button>
                }
            })
        };
        view! {
            <details
                id="evidence-scrapes"
                class="evidence-group"
                data-count=count.to_string()
                data-failed=failed.to_string()
                on:toggle=move |_| opened.set(true)
            >
                <summary class:bad={failed > 0}>
                    {format!(
                        "{} scrape bodies ({})",
                        int(count as u64),
                        if failed == 0 {
                            "every one verifies".to_owned()
                        } else {
                            format!("{failed} fail verification")
                        },
                    )}
                </summary>
                <div class="evidence-list">{list}</div>
                {more}
            </details>
        }
    });
    view! {
        <section id="receipt-evidence" class="card wide" aria-labelledby="evidence-heading">
            <h2 id="evidence-heading">"Raw evidence"</h2>
            <p class="hint">
                "Every block as the receipt holds it, decoded. A block whose digest fails is not shown: its bytes are not the ones recorded."
            </p>
            <div class="evidence-list">{items}</div>
            {bodies}
        </section>
    }
}

/// Scrape bodies put in the page per click.
const SCRAPES_PER_PAGE: usize = 200;

/// A `/metrics` scrape's body (`metrics/<n>`), as opposed to the run's fixed blocks.
fn is_scrape_body(name: &str) -> bool {
    name.strip_prefix("metrics/")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// One block's `<details>`: its summary line, and its preview once opened.
fn evidence_item(b: model::BlockInfo) -> impl IntoView {
    let opened = RwSignal::new(false);
    let status = if b.ok { "ok" } else { "FAILED" };
    let summary = format!(
        "{} — {} bytes, {}, {status}",
        b.name,
        int(b.bytes),
        match (b.encoding, b.packed) {
            (Some(Encoding::Utf8), _) => "text",
            (Some(Encoding::Base64), _) => "base64",
            (None, true) => "a delta of the scrape before",
            (None, false) => "missing",
        }
    );
    let ok = b.ok;
    view! {
        <details
            id=format!("evidence-{}", slug(&b.name))
            class="evidence"
            data-block=b.name.clone()
            data-ok=ok.to_string()
        >
            <summary on:click=move |_| opened.set(true) class:bad=!ok>
                {summary}
            </summary>
            {move || {
                opened
                    .get()
                    .then(|| match (&b.preview, &b.error) {
                        (Some(text), _) => {
                            view! {
                                {b
                                    .truncated
                                    .then(|| {
                                        view! {
                                            <p class="hint">
                                                {format!(
                                                    "The first {} KiB of {} bytes{}.",
                                                    model::PREVIEW_BYTES / 1024,
                                                    int(b.bytes),
                                                    if b.binary { ", invalid UTF-8 shown as �" } else { "" },
                                                )}
                                            </p>
                                        }
                                    })}
                                <pre class="preview">{text.clone()}</pre>
                            }
                                .into_any()
                        }
                        (None, Some(err)) => {
                            view! { <p class="error">{err.clone()}</p> }.into_any()
                        }
                        (None, None) => {
                            if b.preview_omitted {
                                view! {
                                    <p class="hint">
                                        {format!(
                                            "This block verified; its text is not kept in the page (previews stop at {} MiB in all). Read it in the receipt file.",
                                            model::PREVIEW_TOTAL_BYTES / (1024 * 1024),
                                        )}
                                    </p>
                                }
                                    .into_any()
                            } else {
                                view! { <p class="hint">"No preview."</p> }.into_any()
                            }
                        }
                    })
            }}
        </details>
    }
}
