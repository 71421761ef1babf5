//! The simulated engine of `loadproof sim`: a continuous-batching scheduler in one task.
//!
//! The model, deliberately simple (it is a load target for demos and tests, not a
//! performance model of vLLM):
//!
//! 1. A request arrives with `prompt_tokens` and `max_tokens` and joins a FIFO queue.
//! 2. The engine runs in **steps**. At the start of a step it admits queued requests in
//!    arrival order while a slot is free (`--max-num-seqs`) and the KV cache has room for the
//!    head of the queue (`prompt_tokens + max_tokens` reserved for its whole life, out of
//!    `--kv-capacity-tokens`); the first request that does not fit blocks the ones behind it
//!    (FCFS, no preemption, so `vllm:num_preemptions_total` stays 0).
//! 3. A step lasts `Σ prompt_tokens admitted in it / --prefill-tokens-per-s` (prefill is done
//!    in the step a request is admitted) `+ --decode-step-ms + --decode-ms-per-seq × running`.
//! 4. At the end of a step every running sequence emits one token (a newly admitted one
//!    emits its first token, like vLLM's prefill step). A sequence leaves the batch after its
//!    `max_tokens`-th token (always: every request behaves as `ignore_eos`), and frees its slot
//!    and KV reservation.
//! 5. The next step starts when the previous one ends if anything is running or queued;
//!    otherwise the engine sleeps until a request arrives (no CPU burnt when idle).
//!
//! Time is virtual while the engine is busy: step k+1 starts at step k's computed end, not at
//! the instant the timer fired, so tokio's millisecond timer granularity adds jitter (< 1 ms
//! per token) but no drift. If the process falls more than [`MAX_LAG`] behind (CPU
//! starvation), the virtual clock is reset to now. Given the arrival instants, everything —
//! admission, step lengths, token times and every metric — is deterministic.
//!
//! Metrics use the same virtual times: TTFT = first token − arrival, ITL = gap between a
//! request's consecutive tokens, queue time = admission − arrival, e2e = last token − arrival.
//! A request whose client goes away is dropped at the next step boundary and counted as
//! `finished_reason="abort"`, like vLLM; a faulted request (see `faults.rs`) is not counted as
//! finished at all.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::metrics::EngineMetrics;

/// How far behind its virtual clock the engine may fall before it resets the clock to now.
pub const MAX_LAG: Duration = Duration::from_millis(250);

/// The engine's knobs (validated by the caller: positive, finite).
#[derive(Debug, Clone)]
pub struct ModelConfig {
    /// Running sequences at most (`--max-num-seqs`).
    pub max_num_seqs: usize,
    /// Prefill speed (`--prefill-tokens-per-s`).
    pub prefill_tokens_per_s: f64,
    /// Fixed cost of a decode step, seconds (`--decode-step-ms` / 1000).
    pub decode_step_secs: f64,
    /// Extra cost of a decode step per running sequence, seconds.
    pub decode_secs_per_seq: f64,
    /// KV capacity in tokens (`--kv-capacity-tokens`).
    pub kv_capacity_tokens: u64,
}

/// One request handed to the engine.
#[derive(Debug)]
pub struct Submission {
    /// Prompt length in tokens.
    pub prompt_tokens: u64,
    /// Tokens the request asked for (its KV reservation is `prompt_tokens + max_tokens`).
    pub max_tokens: u64,
    /// Tokens to stream before the sequence leaves: `max_tokens`, or fewer under a fault.
    pub stop_after: u64,
    /// A fault was injected: never counted as finished.
    pub faulted: bool,
    /// When the server accepted the request.
    pub arrival: Instant,
    /// One `()` per token; dropped when the sequence leaves the engine.
    pub tokens: mpsc::UnboundedSender<()>,
}

/// The sending side handlers use to submit requests.
pub type EngineHandle = mpsc::UnboundedSender<Submission>;

struct Seq {
    sub: Submission,
    admitted: Instant,
    emitted: u64,
    last_token: Instant,
    client_gone: bool,
}

/// Runs the engine until every [`EngineHandle`] is dropped.
pub async fn run(
    cfg: ModelConfig,
    mut rx: mpsc::UnboundedReceiver<Submission>,
    metrics: Arc<Mutex<EngineMetrics>>,
) {
    let mut waiting: VecDeque<Submission> = VecDeque::new();
    let mut running: Vec<Seq> = Vec::new();
    let mut kv_used: u64 = 0;
    // The virtual start of the next step while busy; None when idle.
    let mut clock: Option<Instant> = None;

    loop {
        if running.is_empty() && waiting.is_empty() {
            clock = None;
            match rx.recv().await {
                Some(sub) => waiting.push_back(sub),
                None => return,
            }
        }
        while let Ok(sub) = rx.try_recv() {
            waiting.push_back(sub);
        }

        let now = Instant::now();
        let step_start = match clock {
            Some(t) if now.saturating_duration_since(t) <= MAX_LAG => t,
            _ => now,
        };

        // Admission, FCFS. Requests whose client already left are dropped as aborted.
        let mut prefill_tokens: u64 = 0;
        let mut aborted_in_queue: Vec<Submission> = Vec::new();
        while let Some(head) = waiting.front() {
            if head.tokens.is_closed() {
                if let Some(sub) = waiting.pop_front() {
                    aborted_in_queue.push(sub);
                }
                continue;
            }
            let reserve = head.prompt_tokens.saturating_add(head.max_tokens);
            if running.len() >= cfg.max_num_seqs
                || kv_used.saturating_add(reserve) > cfg.kv_capacity_tokens
            {
                break;
            }
            let Some(sub) = waiting.pop_front() else {
                break;
            };
            kv_used += reserve;
            prefill_tokens += sub.prompt_tokens;
            running.push(Seq {
                sub,
                admitted: step_start,
                emitted: 0,
                last_token: step_start,
                client_gone: false,
            });
        }

        {
            let mut m = lock(&metrics);
            for sub in &aborted_in_queue {
                let waited = secs(step_start, sub.arrival);
                m.finished_abort += 1;
                m.queue.observe(waited);
                m.e2e.observe(waited);
            }
            m.running = running.len() as u64;
            m.waiting = (waiting.len() + rx.len()) as u64;
            m.kv_used_tokens = kv_used;
        }
        drop(aborted_in_queue);
        if running.is_empty() {
            continue;
        }

        let step_secs = prefill_tokens as f64 / cfg.prefill_tokens_per_s
            + cfg.decode_step_secs
            + cfg.decode_secs_per_seq * running.len() as f64;
        let step_end = step_start + Duration::from_secs_f64(step_secs);
        tokio::time::sleep_until(tokio::time::Instant::from_std(step_end)).await;

        // Every running sequence emits one token at the step's end.
        let mut m = lock(&metrics);
        m.prompt_tokens += prefill_tokens;
        for seq in &mut running {
            if seq.emitted >= seq.sub.stop_after {
                continue;
            }
            if seq.sub.tokens.send(()).is_err() {
                seq.client_gone = true;
                continue;
            }
            seq.emitted += 1;
            m.generation_tokens += 1;
            if seq.emitted == 1 {
                m.ttft.observe(secs(step_end, seq.sub.arrival));
            } else {
                m.itl.observe(secs(step_end, seq.last_token));
            }
            seq.last_token = step_end;
        }
        running.retain(|seq| {
            let done = seq.client_gone || seq.emitted >= seq.sub.stop_after;
            if !done {
                return true;
            }
            kv_used -= seq.sub.prompt_tokens.saturating_add(seq.sub.max_tokens);
            if !seq.sub.faulted {
                let queued = secs(seq.admitted, seq.sub.arrival);
                if seq.client_gone {
                    m.finished_abort += 1;
                    m.e2e.observe(secs(step_end, seq.sub.arrival));
                } else {
                    m.finished_length += 1;
                    m.e2e.observe(secs(seq.last_token, seq.sub.arrival));
                }
                m.queue.observe(queued);
            }
            false
        });
        m.running = running.len() as u64;
        m.waiting = (waiting.len() + rx.len()) as u64;
        m.kv_used_tokens = kv_used;
        drop(m);
        clock = Some(step_end);
    }
}

/// `later − earlier` in seconds, 0 if `later` is not later.
fn secs(later: Instant, earlier: Instant) -> f64 {
    later.saturating_duration_since(earlier).as_secs_f64()
}

/// Locks the metrics; a poisoned lock (a panic elsewhere, a bug) still yields the data.
pub fn lock(metrics: &Mutex<EngineMetrics>) -> std::sync::MutexGuard<'_, EngineMetrics> {
    metrics
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
