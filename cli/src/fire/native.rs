//! The `native` engine: loadproof's own open-loop client, firing the plan's `timed_trace`
//! schedule at `/v1/completions` with the bodies vLLM's `openai` backend sends.
//!
//! **Open loop.** A dedicated dispatcher thread walks the file in order. For each line it
//! builds the body first (prompt tokens from the line's hash-id blocks, see [`prompt`]), then
//! waits for the line's scheduled instant — the schedule's zero plus `timestamp × multiplier`
//! — and hands the request to the tokio runtime. It never waits for a response: a slow server
//! makes requests pile up in flight, never later. The wait is an interruptible OS sleep
//! (`recv_timeout`, an hrtimer with ~50 µs slack) to a margin before the instant, then a
//! short spin; the margin follows how late recent sleeps woke. tokio's own timer is not used for this: it
//! ticks in whole milliseconds, which alone would put dispatch lag near 1 ms.
//!
//! **Each request** runs as a task on the runtime's hyper 1 client (HTTP/1.1 keep-alive pool,
//! `TCP_NODELAY`, `https://` with the run's trust settings), with the run's credential headers
//! (`Authorization: Bearer` for the API key or the lease token, the lease token in its own
//! header when both are in force). `sent_ns` is read in that task just before the request is handed to the
//! client — as vLLM's client reads its `start_time` — so dispatch lag (`sent − scheduled`)
//! includes every delay of the client's own: thread wake-up, body building, task scheduling.
//! The stream is read as vLLM reads it ([`sse`]). Exactly one [`RequestRecord`] per offered
//! request, with one terminal [`Disposition`]: `ok` (`[DONE]` seen), `http`, `transport`,
//! `stream_cut` (the body ended without `[DONE]`), `stream_error`, `timeout`
//! (`--request-timeout`, from the send), `interrupted` (in flight at Ctrl-C after [`GRACE`]),
//! `not_sent` (Ctrl-C before its time).
//!
//! **Times** are monotonic ns on the receipt's clock (the scrapes' clock): `scheduled_ns` is
//! the execution's `started.mono_ns` plus the line's arrival.

mod prompt;
mod sse;
mod summary;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue, USER_AGENT};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use loadproof_core::receipt::{Disposition, Execution, RequestRecord, Stamp, block};

use crate::stream_out::{EVENTS_EVERY, StreamOut};
use tokio::sync::{mpsc, oneshot, watch};

pub use prompt::{GENERATOR, PATH, SIZED_GENERATOR, Schedule, Template, Vocab};
pub use summary::summarize;

use super::scrape::Clock;
use crate::http_client::describe;

/// How long requests in flight when Ctrl-C arrives may still finish before they are
/// abandoned as `interrupted` (a second Ctrl-C abandons them at once).
pub const GRACE: Duration = Duration::from_secs(2);

/// The schedule's zero lies this far after the dispatcher starts, so the first body is built
/// before its time.
const LEAD_NS: i64 = 5_000_000;

/// Bytes of an error response kept in its record.
const ERROR_BODY_BYTES: usize = 1024;

/// What the run needs besides the plan.
pub struct Options {
    /// A request that has not ended this long after its send is a `timeout`.
    pub request_timeout: Duration,
    /// Show a progress bar (stderr is a terminal).
    pub progress: bool,
    /// Sent with every request: the API key and the lease token (values marked sensitive).
    pub credentials: Vec<(HeaderName, HeaderValue)>,
    /// The run's TLS settings.
    pub tls: crate::tls::ClientTls,
    /// The receipt being written as the run happens: the event log is appended to it.
    pub journal: Option<StreamOut>,
}

/// What happened.
pub struct Outcome {
    /// One per offered request, by index.
    pub records: Vec<RequestRecord>,
    /// The event log: one JSON line per record in the order requests ended, then one for each
    /// offered request that never got one (by index) — the bytes appended to the receipt.
    pub log: Vec<u8>,
    /// The schedule's zero.
    pub started: Stamp,
    /// When the last request ended (or was abandoned).
    pub ended: Stamp,
    /// Ctrl-C stopped the run.
    pub interrupted: bool,
}

/// Shared by every request task.
struct Ctx {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    uri: hyper::Uri,
    clock: Clock,
    timeout: Duration,
    cancel: watch::Receiver<bool>,
    records: mpsc::UnboundedSender<RequestRecord>,
    sent: Arc<AtomicU64>,
    credentials: Vec<(HeaderName, HeaderValue)>,
}

/// Connections opened before the schedule's zero for an `https://` endpoint.
pub const WARM_CONNECTIONS: usize = 64;

/// Opens [`WARM_CONNECTIONS`] pooled connections (concurrent `GET /health`, answers ignored)
/// before the schedule starts: over TLS a new connection costs a handshake on both sides, and
/// the first burst of requests each opening one put the client 150 ms behind at 5,000 req/s
/// (1,218 handshakes, measured). Best effort, bounded by 10 s.
async fn warm(ctx: &Arc<Ctx>, endpoint: &str) {
    let Ok(uri) = format!("{endpoint}/health").parse::<hyper::Uri>() else {
        return;
    };
    let opens = (0..WARM_CONNECTIONS).map(|_| {
        let ctx = Arc::clone(ctx);
        let uri = uri.clone();
        async move {
            let mut request = Request::get(uri);
            for (name, value) in &ctx.credentials {
                request = request.header(name, value.clone());
            }
            if let Ok(request) = request.body(Full::new(Bytes::new()))
                && let Ok(response) = ctx.client.request(request).await
            {
                let _ = response.into_body().collect().await;
            }
        }
    });
    let _ = tokio::time::timeout(Duration::from_secs(10), futures_join_all(opens)).await;
}

/// Runs every future to completion, concurrently.
async fn futures_join_all<F: std::future::Future<Output = ()> + Send + 'static>(
    futures: impl Iterator<Item = F>,
) {
    let mut set = tokio::task::JoinSet::new();
    for f in futures {
        set.spawn(f);
    }
    while set.join_next().await.is_some() {}
}

/// One request, ready to go.
struct Job {
    index: u64,
    scheduled_ns: i64,
    prompt_tokens: u32,
    max_tokens: u32,
    body: Bytes,
}

/// Fires `schedule` at `endpoint` (`http://host:port`), open loop, until every request has
/// ended or Ctrl-C (a message on `interrupts`) stops it.
pub async fn run(
    schedule: Arc<Schedule>,
    vocab: Arc<Vocab>,
    template: Arc<Template>,
    endpoint: &str,
    clock: Clock,
    options: &Options,
    interrupts: &mut mpsc::UnboundedReceiver<()>,
) -> Result<Outcome, String> {
    let url = format!("{endpoint}{PATH}");
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let client = Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .build(options.tls.connector(None));
    let journal = options.journal.as_ref();
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let (records_tx, mut records_rx) = mpsc::unbounded_channel();
    let sent = Arc::new(AtomicU64::new(0));
    let ctx = Arc::new(Ctx {
        client,
        uri,
        clock,
        timeout: options.request_timeout,
        cancel: cancel_rx,
        records: records_tx,
        sent: Arc::clone(&sent),
        credentials: options.credentials.clone(),
    });
    if endpoint
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    {
        warm(&ctx, endpoint).await;
    }

    let now = clock.stamp();
    let started = Stamp {
        mono_ns: now.mono_ns + LEAD_NS,
        unix_ns: now.unix_ns + LEAD_NS,
    };
    // The schedule's zero is known now: an unsealed receipt joins send times to it.
    if let Some(j) = journal {
        j.restate(move |f| {
            if let Execution::Native {
                started: s, ended, ..
            } = &mut f.execution
            {
                *s = started;
                *ended = started;
            }
        });
    }
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let (dispatched_tx, dispatched_rx) = oneshot::channel();
    let dispatcher = Dispatcher {
        schedule: Arc::clone(&schedule),
        vocab,
        template,
        started_ns: started.mono_ns,
        handle: tokio::runtime::Handle::current(),
        ctx,
        stop: stop_rx,
    };
    std::thread::Builder::new()
        .name("loadproof-dispatch".to_owned())
        .spawn(move || {
            let n = dispatcher.run();
            let _ = dispatched_tx.send(n);
        })
        .map_err(|e| format!("starting the dispatcher thread: {e}"))?;

    let n = schedule.len();
    let bar = options.progress.then(|| {
        let bar = indicatif::ProgressBar::new(n as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} ended {pos}/{len} [{bar:30}] {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut records: Vec<RequestRecord> = Vec::with_capacity(n);
    let mut failed = 0u64;
    let mut max_lag_ns = 0i64;
    let mut interrupted = false;
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let mut log: Vec<u8> = Vec::with_capacity(n * 200);
    let mut journaled = 0usize;
    let mut append = tokio::time::interval(EVENTS_EVERY);
    loop {
        tokio::select! {
            record = records_rx.recv() => match record {
                Some(r) => {
                    if r.disposition != Disposition::Ok {
                        failed += 1;
                    }
                    if let Some(s) = r.sent_ns {
                        max_lag_ns = max_lag_ns.max(s - r.scheduled_ns);
                    }
                    if serde_json::to_writer(&mut log, &r).is_ok() {
                        log.push(b'\n');
                    }
                    records.push(r);
                }
                None => break,
            },
            _ = append.tick(), if journal.is_some() => {
                if let (Some(j), Some(new)) = (journal, log.get(journaled..)) {
                    j.part(block::EVENTS, new);
                    journaled = log.len();
                }
            }
            Some(()) = interrupts.recv() => {
                if interrupted {
                    let _ = cancel_tx.send(true);
                } else {
                    interrupted = true;
                    let _ = stop_tx.send(());
                    grace = Some(Box::pin(tokio::time::sleep(GRACE)));
                }
            }
            () = async { if let Some(g) = grace.as_mut() { g.await } }, if grace.is_some() => {
                let _ = cancel_tx.send(true);
                grace = None;
            }
            _ = tick.tick(), if bar.is_some() => {
                if let Some(bar) = &bar {
                    bar.set_message(format!(
                        "sent {} · failed {failed} · lag max {:.2} ms",
                        sent.load(Ordering::Relaxed),
                        max_lag_ns as f64 / 1e6
                    ));
                    bar.set_position(records.len() as u64);
                }
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let dispatched = dispatched_rx.await.unwrap_or_else(|_| {
        records
            .iter()
            .map(|r| r.index as usize + 1)
            .max()
            .unwrap_or(0)
    });
    let ended = clock.stamp();
    let ended_ones: std::collections::HashSet<u64> = records.iter().map(|r| r.index).collect();
    let records = complete(
        records,
        &schedule,
        started.mono_ns,
        dispatched,
        interrupted,
        ended.mono_ns,
    );
    for r in records.iter().filter(|r| !ended_ones.contains(&r.index)) {
        if serde_json::to_writer(&mut log, r).is_ok() {
            log.push(b'\n');
        }
    }
    if let (Some(j), Some(new)) = (journal, log.get(journaled..)) {
        j.part(block::EVENTS, new);
    }
    Ok(Outcome {
        log,
        records,
        started,
        ended,
        interrupted,
    })
}

/// Sorts `records` by index and adds one for every offered request that has none: `not_sent`
/// past the dispatcher's stop, and (never expected) a request task that ended without one.
fn complete(
    mut records: Vec<RequestRecord>,
    schedule: &Schedule,
    started_ns: i64,
    dispatched: usize,
    interrupted: bool,
    now_ns: i64,
) -> Vec<RequestRecord> {
    records.sort_by_key(|r| r.index);
    records.dedup_by_key(|r| r.index);
    let mut have = records.iter().map(|r| r.index as usize).peekable();
    let mut missing = Vec::new();
    for i in 0..schedule.len() {
        if have.peek() == Some(&i) {
            have.next();
            continue;
        }
        let disposition = if i >= dispatched {
            Disposition::NotSent {
                reason: if interrupted {
                    "the run was stopped (Ctrl-C) before its scheduled time".to_owned()
                } else {
                    "the dispatcher stopped before its scheduled time".to_owned()
                },
            }
        } else {
            Disposition::Transport {
                error: "the request task ended without a record (a loadproof bug)".to_owned(),
            }
        };
        missing.push(RequestRecord {
            index: i as u64,
            scheduled_ns: started_ns + schedule.arrival_ns.get(i).copied().unwrap_or(0),
            sent_ns: None,
            first_token_ns: None,
            chunks_ns: Vec::new(),
            end_ns: (i < dispatched).then_some(now_ns),
            prompt_tokens: schedule.input_tokens.get(i).copied().unwrap_or(0),
            max_tokens: schedule.output_tokens.get(i).copied().unwrap_or(0),
            usage: None,
            disposition,
        });
    }
    if !missing.is_empty() {
        records.extend(missing);
        records.sort_by_key(|r| r.index);
    }
    records
}

/// Walks the schedule on its own thread.
struct Dispatcher {
    schedule: Arc<Schedule>,
    vocab: Arc<Vocab>,
    template: Arc<Template>,
    started_ns: i64,
    handle: tokio::runtime::Handle,
    ctx: Arc<Ctx>,
    stop: Receiver<()>,
}

impl Dispatcher {
    /// Dispatches every line in order; returns how many were dispatched (all, unless stopped).
    fn run(self) -> usize {
        let mut prompt = Vec::new();
        let mut sleeper = Sleeper::default();
        let s = &self.schedule;
        for i in 0..s.len() {
            let (Some(&arrival), Some(&input), Some(&output)) = (
                s.arrival_ns.get(i),
                s.input_tokens.get(i),
                s.output_tokens.get(i),
            ) else {
                return i;
            };
            // Schedule::read refused short rows, so the prompt is exactly `input` tokens.
            let _ = s.build(&self.vocab, i, input, &mut prompt);
            let body = self.template.body(&prompt, output);
            let scheduled_ns = self.started_ns + arrival;
            if !sleeper.wait_until(self.ctx.clock.instant(scheduled_ns), &self.stop) {
                return i;
            }
            let job = Job {
                index: i as u64,
                scheduled_ns,
                prompt_tokens: prompt.len() as u32,
                max_tokens: output,
                body,
            };
            self.handle.spawn(fire_one(Arc::clone(&self.ctx), job));
        }
        s.len()
    }
}

/// Sleeps to a margin before the instant, then spins. The margin is how late sleeps
/// typically wake (a moving average; ~90 µs on a 2-vCPU VM) plus a little, so the spin is
/// short: a long spin would take a core from the runtime threads and the server that share it.
struct Sleeper {
    /// Moving average of how late a sleep woke, ns.
    oversleep_ns: f64,
}

/// Spin at least this long before an instant.
const MIN_MARGIN_NS: f64 = 30_000.0;
/// And never longer than this.
const MAX_MARGIN_NS: f64 = 250_000.0;

impl Default for Sleeper {
    fn default() -> Sleeper {
        Sleeper {
            oversleep_ns: 60_000.0,
        }
    }
}

impl Sleeper {
    fn margin(&self) -> Duration {
        let ns = (self.oversleep_ns + MIN_MARGIN_NS).min(MAX_MARGIN_NS);
        Duration::from_nanos(ns as u64)
    }

    /// Returns at `target` (or at once when it has passed); `false` when `stop` said stop.
    fn wait_until(&mut self, target: Instant, stop: &Receiver<()>) -> bool {
        loop {
            match stop.try_recv() {
                Ok(()) | Err(TryRecvError::Disconnected) => return false,
                Err(TryRecvError::Empty) => {}
            }
            let now = Instant::now();
            if now >= target {
                return true;
            }
            let margin = self.margin();
            if target - now > margin {
                let wake = target - margin;
                match stop.recv_timeout(wake - now) {
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return false,
                    Err(RecvTimeoutError::Timeout) => {}
                }
                let late = Instant::now().saturating_duration_since(wake).as_nanos() as f64;
                // Tails (a preempted thread) would inflate the average: count them capped.
                self.oversleep_ns += (late.min(MAX_MARGIN_NS) - self.oversleep_ns) / 16.0;
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

async fn fire_one(ctx: Arc<Ctx>, job: Job) {
    let record = exchange(&ctx, job).await;
    let _ = ctx.records.send(record);
}

/// How the exchange stopped.
enum End {
    /// Failed before a stream: `transport` or `http`.
    Early(Disposition),
    /// The body ended (cleanly or not).
    BodyEnded,
    /// `--request-timeout` passed.
    TimedOut,
    /// Abandoned after Ctrl-C.
    Cancelled,
}

async fn exchange(ctx: &Ctx, job: Job) -> RequestRecord {
    let mut record = RequestRecord {
        index: job.index,
        scheduled_ns: job.scheduled_ns,
        sent_ns: None,
        first_token_ns: None,
        chunks_ns: Vec::new(),
        end_ns: None,
        prompt_tokens: job.prompt_tokens,
        max_tokens: job.max_tokens,
        usage: None,
        disposition: Disposition::Ok,
    };
    let mut request = Request::post(ctx.uri.clone())
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .header(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE))
        .header("x-request-id", format!("loadproof-{}", job.index));
    for (name, value) in &ctx.credentials {
        request = request.header(name, value.clone());
    }
    let request = request.body(Full::new(job.body));
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            record.disposition = Disposition::Transport {
                error: format!("building the request: {e}"),
            };
            return record;
        }
    };
    let mut cancel = ctx.cancel.clone();
    let sent = ctx.clock.mono_ns();
    record.sent_ns = Some(sent);
    ctx.sent.fetch_add(1, Ordering::Relaxed);
    let mut progress = sse::Progress::default();
    let end = {
        let talk = talk(ctx, request, &mut progress);
        tokio::select! {
            r = tokio::time::timeout(ctx.timeout, talk) => r.unwrap_or(End::TimedOut),
            Ok(_) = cancel.wait_for(|stop| *stop) => End::Cancelled,
        }
    };
    let now = ctx.clock.mono_ns();
    let chunks = progress.chunks_ns.len() as u64;
    record.first_token_ns = progress.chunks_ns.first().copied();
    record.usage = progress.usage;
    record.chunks_ns = progress.chunks_ns;
    let (disposition, end_ns) = match (end, progress.error, progress.done_ns) {
        (End::Early(d), _, _) => (d, now),
        (_, Some(detail), _) => (Disposition::StreamError { chunks, detail }, now),
        (_, None, Some(done)) => (Disposition::Ok, done),
        (End::BodyEnded, None, None) => (Disposition::StreamCut { chunks }, now),
        (End::TimedOut, None, None) => (
            Disposition::Timeout {
                after_ns: now - sent,
            },
            now,
        ),
        (End::Cancelled, None, None) => (Disposition::Interrupted { chunks }, now),
    };
    record.disposition = disposition;
    record.end_ns = Some(end_ns);
    record
}

const USER_AGENT_VALUE: &str = concat!("loadproof/", env!("CARGO_PKG_VERSION"));

/// Sends the request and reads the response into `p` until the body ends.
async fn talk(ctx: &Ctx, request: Request<Full<Bytes>>, p: &mut sse::Progress) -> End {
    let response = match ctx.client.request(request).await {
        Ok(r) => r,
        Err(e) => {
            return End::Early(Disposition::Transport {
                error: describe(&e),
            });
        }
    };
    let status = response.status();
    let mut body = response.into_body();
    if !status.is_success() {
        let mut kept = Vec::new();
        while kept.len() < ERROR_BODY_BYTES {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        kept.extend_from_slice(data);
                    }
                }
                Some(Err(_)) | None => break,
            }
        }
        kept.truncate(ERROR_BODY_BYTES);
        return End::Early(Disposition::Http {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&kept).into_owned(),
        });
    }
    let mut decoder = sse::Decoder::default();
    loop {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    decoder.push(data, ctx.clock.mono_ns(), p);
                }
            }
            Some(Err(_)) | None => return End::BodyEnded,
        }
    }
}
