//! `/metrics` scrapes before, during (on an interval) and after a run. Every scrape is kept —
//! a failed one as a failure with its error — with the client's clock at request and response.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use loadproof_core::receipt::{
    Evidence, Exporter, Phase, SCRAPE_SIGNED_HEADER, Scrape, ScrapeOutcome, Stamp, block,
    signed_block_of,
};
use loadproof_core::signing::Signed;

use super::http::{Answer, Http};
use crate::stream_out::StreamOut;

/// Where scrapes go besides the list: block names numbered across the before, during and
/// after phases (one counter, so a name is final the moment a body is kept), and the receipt
/// being written, when the run writes one as it goes.
#[derive(Clone, Default)]
pub struct Sink {
    next: Arc<AtomicUsize>,
    journal: Option<StreamOut>,
    lease: Option<Arc<ScrapeLease>>,
}

impl Sink {
    /// Scrapes appended to `journal` as they are taken.
    pub fn to(journal: Option<StreamOut>) -> Sink {
        Sink {
            next: Arc::default(),
            journal,
            lease: None,
        }
    }

    /// Scrapes of the lease's route taken as its holder (see [`ScrapeLease`]).
    pub fn leased(mut self, lease: Option<Arc<ScrapeLease>>) -> Sink {
        self.lease = lease;
        self
    }
}

/// The lease a run holds, as its scrapes present it: the lessor numbers the `/metrics` bodies
/// it serves to the holder and states the count at release, so a signed scrape dropped from the
/// receipt is named. Only engine scrapes of the lease's route carry the token (a replica's or a
/// GPU exporter's `/metrics` elsewhere never sees it). No `Debug`: it holds the token.
pub struct ScrapeLease {
    /// The origin of the lease's route.
    pub origin: String,
    /// The lease's bearer token.
    pub token: String,
}

/// One URL to scrape and what it exports.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL.
    pub url: String,
    /// An engine (a replica) or a GPU exporter.
    pub exporter: Exporter,
}

/// How long one scrape may take before it counts as failed.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(10);

/// The run's clock: monotonic from `zero`, with the wall clock read beside it.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    zero: Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Clock {
        Clock {
            zero: Instant::now(),
        }
    }

    /// Monotonic ns since zero.
    pub fn mono_ns(&self) -> i64 {
        i64::try_from(self.zero.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    /// The instant `mono_ns` after zero (zero itself for negative values).
    pub fn instant(&self, mono_ns: i64) -> Instant {
        self.zero + Duration::from_nanos(u64::try_from(mono_ns).unwrap_or(0))
    }

    /// Now, both ways.
    pub fn stamp(&self) -> Stamp {
        Stamp {
            mono_ns: self.mono_ns(),
            unix_ns: crate::receipt_cmd::unix_ns_now(),
        }
    }
}

/// Scrapes and the evidence blocks holding their bodies.
#[derive(Default)]
pub struct Scrapes {
    /// In order.
    pub list: Vec<Scrape>,
    /// `metrics/<n>` → body.
    pub blocks: BTreeMap<String, Evidence>,
    sink: Sink,
}

impl Scrapes {
    /// No scrapes yet; each one taken goes to `sink` too.
    pub fn new(sink: Sink) -> Scrapes {
        Scrapes {
            list: Vec::new(),
            blocks: BTreeMap::new(),
            sink,
        }
    }

    /// Scrapes every URL once, in order, for `phase`.
    pub async fn take(&mut self, http: &Http, clock: &Clock, urls: &[Target], phase: Phase) {
        for Target { url, exporter } in urls {
            let requested = clock.stamp();
            let token = self
                .sink
                .lease
                .as_deref()
                .filter(|l| {
                    exporter.is_engine()
                        && loadproof_core::receipt::origin(url).as_deref() == Some(&l.origin)
                })
                .map(|l| l.token.as_str());
            let result = http.get_leased(url, SCRAPE_TIMEOUT, token).await;
            let completed = clock.mono_ns();
            let (outcome, body) = match result {
                Ok(Answer {
                    status,
                    headers,
                    body,
                }) => {
                    let n = self.sink.next.fetch_add(1, Ordering::Relaxed);
                    let name = format!("{}{n}", block::METRICS_PREFIX);
                    self.blocks.insert(name.clone(), Evidence::of(&body));
                    // The lessor's signed statement of this body, kept beside it: the same
                    // signed bytes, with the statement as text when it verifies (a long run
                    // keeps thousands, and base64 hides their repeats from zstd), else as it
                    // came, for the audit to name.
                    if let Some(signed) = headers.get(SCRAPE_SIGNED_HEADER) {
                        let signed_name = signed_block_of(&name);
                        let kept = match Signed::from_json(signed.as_bytes()) {
                            Ok(verified) => verified.to_text_json().into_bytes(),
                            Err(_) => signed.as_bytes().to_vec(),
                        };
                        if let Some(journal) = &self.sink.journal {
                            journal.block(&signed_name, &kept);
                        }
                        self.blocks.insert(signed_name, Evidence::of(&kept));
                    }
                    let outcome = ScrapeOutcome::Response {
                        status: Some(status),
                        body: name,
                    };
                    (outcome, body)
                }
                Err(error) => {
                    self.sink.next.fetch_add(1, Ordering::Relaxed);
                    (ScrapeOutcome::Failed { error }, Vec::new())
                }
            };
            let scrape = Scrape {
                url: url.clone(),
                phase,
                requested: Some(requested),
                completed_mono_ns: Some(completed),
                outcome,
                exporter: *exporter,
            };
            if let Some(journal) = &self.sink.journal {
                journal.scrape(&scrape, &body);
            }
            self.list.push(scrape);
        }
    }

    /// The first body an engine URL answered, for the subject the writer states
    /// (`loadproof_sim_info`, vLLM's families): the endpoint's own origin first, else the first
    /// replica's. The audit hears every replica and refuses the subject if any differs.
    pub fn first_body(&self, endpoint: &str) -> Option<&str> {
        let ours = loadproof_core::receipt::origin(endpoint);
        let body = |s: &Scrape| match &s.outcome {
            ScrapeOutcome::Response {
                status: Some(200),
                body,
            } => self.blocks.get(body).map(|e| e.content.as_str()),
            _ => None,
        };
        let engine = || self.list.iter().filter(|s| s.exporter == Exporter::Engine);
        engine()
            .filter(|s| ours.is_some() && loadproof_core::receipt::origin(&s.url) == ours)
            .find_map(body)
            .or_else(|| engine().find_map(body))
    }

    /// The GPU model the first readable scrape of each DCGM exporter names, with its URL.
    pub fn dcgm_models(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for s in self.list.iter().filter(|s| s.exporter == Exporter::Dcgm) {
            if out.iter().any(|(url, _)| *url == s.url) {
                continue;
            }
            let ScrapeOutcome::Response { body, .. } = &s.outcome else {
                continue;
            };
            let Some(text) = self.blocks.get(body).map(|e| e.content.as_str()) else {
                continue;
            };
            let Ok(m) = loadproof_core::formats::prometheus::parse(text.as_bytes()) else {
                continue;
            };
            let Ok(gpus) = loadproof_core::formats::dcgm::read(&m) else {
                continue;
            };
            if let [one] = loadproof_core::formats::dcgm::model_names(&gpus).as_slice() {
                out.push((s.url.clone(), one.clone()));
            }
        }
        out
    }
}

/// Scrapes on `interval` until `stop` fires; returns what it took. Ticks that fall behind are
/// skipped, not bunched: a slow endpoint gets fewer scrapes, each one kept.
pub async fn during(
    http: Http,
    clock: Clock,
    urls: Vec<Target>,
    interval: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
    sink: Sink,
) -> Scrapes {
    let mut scrapes = Scrapes::new(sink);
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    ticker.tick().await; // the first tick is immediate: the before-scrape just happened
    loop {
        tokio::select! {
            _ = ticker.tick() => scrapes.take(&http, &clock, &urls, Phase::During).await,
            _ = stop.changed() => break,
        }
    }
    scrapes
}

impl Scrapes {
    /// Appends `other`'s scrapes (taken later, through the same [`Sink`], so already named).
    pub fn extend(&mut self, other: Scrapes) {
        self.list.extend(other.list);
        self.blocks.extend(other.blocks);
    }
}
