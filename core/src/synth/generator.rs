//! The streaming generator: a validated [`SynthSpec`] in, the file's bytes out, window by
//! window, in chunks the caller sizes.

use super::counts::CountLaw;
use super::rng::SplitMix64;
use super::{
    Layout, MAX_MEAN_PER_WINDOW, MAX_SPAN_MS, MAX_TOKEN_P95, MAX_TOKENS, MAX_WINDOW_MS,
    MAX_WINDOWS, PREFIX_POOL, Stop, SynthError, SynthSpec,
};
use crate::stats::Percentiles;

/// The standard normal's 95th percentile: `σ = ln(p95/p50) / Z95` fits a log-normal.
const Z95: f64 = 1.644_853_626_951_472_2;

/// The highest D accepted: beyond it nearly every window is empty and the rest hold floods.
const MAX_BURSTINESS: f64 = 1_000.0;

/// The highest failure share accepted: the rest must still be a trace.
const MAX_FAILURE_SHARE: f64 = 0.9;

/// Tokens per Mooncake hash-id block.
const BLOCK_TOKENS: u32 = 512;

/// Shares of BurstGPT rows by model and log type (roughly BurstGPT_1's).
const GPT4_SHARE: f64 = 0.2;
const API_LOG_SHARE: f64 = 0.1;

const BURSTGPT_HEADER: &[u8] =
    b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";

/// What has been written so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SynthStats {
    /// Data rows written (the header is not a row), failure rows included.
    pub rows: u64,
    /// Rows that are requests (what `inspect` emits).
    pub requests: u64,
    /// Failure rows (0 request and 0 response tokens; `inspect` drops them).
    pub failure_rows: u64,
    /// Requests that reuse an earlier request's leading blocks (Mooncake).
    pub prefix_sharing: u64,
    /// Bytes written, header included.
    pub bytes: u64,
}

/// A log-normal fitted to a p50 and a p95, drawn as whole tokens.
#[derive(Debug, Clone, Copy)]
struct TokenLaw {
    median: f64,
    sigma: f64,
}

impl TokenLaw {
    fn fit(target: Percentiles) -> TokenLaw {
        TokenLaw {
            median: target.p50,
            sigma: (target.p95 / target.p50).ln() / Z95,
        }
    }

    fn draw(self, z: f64) -> u32 {
        let v = (self.median * (self.sigma * z).exp()).round();
        v.clamp(1.0, f64::from(MAX_TOKENS)) as u32
    }
}

/// Streams a synthetic trace: build with [`Synthesizer::new`], pull bytes with
/// [`Synthesizer::next_chunk`] until it returns `false`.
#[derive(Debug, Clone)]
pub struct Synthesizer {
    spec: SynthSpec,
    law: CountLaw,
    /// Failure rows per window (a Poisson mean).
    failure_mean: f64,
    input: TokenLaw,
    output: TokenLaw,
    arrivals: SplitMix64,
    tokens: SplitMix64,
    attributes: SplitMix64,
    prefix: SplitMix64,
    /// The next window to fill.
    window: u64,
    /// Windows `0..window_cap` may be filled.
    window_cap: u64,
    /// Arrivals at or after this are not written (duration stop).
    end_ms: Option<u64>,
    /// The first request has been placed at the start of its window.
    aligned: bool,
    started: bool,
    done: bool,
    /// One window's arrivals: `offset_ms << 1 | is_failure`, sorted before writing.
    keys: Vec<u64>,
    /// Block ids of recent requests, a ring of [`PREFIX_POOL`] (Mooncake with sharing).
    pool: Vec<Vec<u64>>,
    pool_next: usize,
    /// The current request's block ids.
    ids: Vec<u64>,
    next_block: u64,
    stats: SynthStats,
}

fn invalid(parameter: &'static str, detail: String) -> SynthError {
    SynthError::Invalid { parameter, detail }
}

fn check_tokens(parameter: &'static str, target: Percentiles) -> Result<(), SynthError> {
    let Percentiles { p50, p95 } = target;
    if !(p50.is_finite() && p50 >= 1.0) {
        return Err(invalid(
            parameter,
            format!("p50 must be a number of tokens ≥ 1, got {p50}"),
        ));
    }
    // A median above the largest p95 can be no one's p95's fault.
    if p50 > MAX_TOKEN_P95 {
        return Err(invalid(
            parameter,
            format!(
                "p50 must be at most {MAX_TOKEN_P95} tokens (the p95 cannot be below it), got {p50}"
            ),
        ));
    }
    if !(p95.is_finite() && p95 >= p50 && p95 <= MAX_TOKEN_P95) {
        return Err(invalid(
            parameter,
            format!("p95 must be within p50 ({p50}) ..= {MAX_TOKEN_P95}, got {p95}"),
        ));
    }
    Ok(())
}

impl Synthesizer {
    /// Validates `spec` and prepares the streams.
    pub fn new(spec: &SynthSpec) -> Result<Synthesizer, SynthError> {
        let spec = *spec;
        if !(spec.rate_rps.is_finite() && spec.rate_rps > 0.0) {
            return Err(invalid(
                "rate",
                format!(
                    "must be a finite number of requests per second > 0, got {}",
                    spec.rate_rps
                ),
            ));
        }
        if !(1..=MAX_WINDOW_MS).contains(&spec.window_ms) {
            return Err(invalid(
                "window",
                format!(
                    "must be 1 ms ..= {MAX_WINDOW_MS} ms, got {} ms",
                    spec.window_ms
                ),
            ));
        }
        if !(spec.burstiness.is_finite() && (0.0..=MAX_BURSTINESS).contains(&spec.burstiness)) {
            return Err(invalid(
                "burstiness",
                format!(
                    "D must be within 0 ..= {MAX_BURSTINESS}, got {}",
                    spec.burstiness
                ),
            ));
        }
        check_tokens("input tokens", spec.input_tokens)?;
        check_tokens("output tokens", spec.output_tokens)?;
        if !(spec.failure_share.is_finite()
            && (0.0..=MAX_FAILURE_SHARE).contains(&spec.failure_share))
        {
            return Err(invalid(
                "failure share",
                format!(
                    "must be within 0 ..= {MAX_FAILURE_SHARE}, got {}",
                    spec.failure_share
                ),
            ));
        }
        if !(spec.prefix_share.is_finite() && (0.0..=1.0).contains(&spec.prefix_share)) {
            return Err(invalid(
                "prefix share",
                format!("must be within 0 ..= 1, got {}", spec.prefix_share),
            ));
        }
        match spec.layout {
            Layout::Burstgpt if spec.prefix_share > 0.0 => {
                return Err(invalid(
                    "prefix share",
                    "applies to the Mooncake layout only: BurstGPT carries no prefix identity"
                        .to_owned(),
                ));
            }
            Layout::Mooncake if spec.failure_share > 0.0 => {
                return Err(invalid(
                    "failure share",
                    "applies to the BurstGPT layout only: Mooncake has no failure marker"
                        .to_owned(),
                ));
            }
            _ => {}
        }
        let mean = spec.mean_per_window();
        let rows_per_window = mean / (1.0 - spec.failure_share);
        if rows_per_window > MAX_MEAN_PER_WINDOW {
            return Err(invalid(
                "rate",
                format!(
                    "{rows_per_window} rows per window on average is over {MAX_MEAN_PER_WINDOW}: lower the rate or the window"
                ),
            ));
        }
        let law = CountLaw::new(mean, spec.burstiness)?;
        let w = spec.window_ms;
        let (window_cap, end_ms) = match spec.stop {
            Stop::Rows(0) | Stop::DurationMs(0) => {
                return Err(invalid(
                    "stop",
                    "must be at least one row or 1 ms".to_owned(),
                ));
            }
            Stop::Rows(rows) => {
                let expected_windows = rows as f64 / rows_per_window;
                if expected_windows > MAX_WINDOWS as f64
                    || expected_windows * w as f64 > MAX_SPAN_MS as f64
                {
                    return Err(invalid(
                        "rows",
                        format!(
                            "{rows} rows at {rows_per_window} rows per {w} ms window would take about {expected_windows:.0} windows; at most {MAX_WINDOWS} windows and {MAX_SPAN_MS} ms: raise the rate or write fewer rows"
                        ),
                    ));
                }
                // A row-bounded trace ends when its rows are written; the cap only bounds a
                // pathological run of empty windows (16× the most a valid spec expects).
                let cap = (16 * MAX_WINDOWS).min(8 * MAX_SPAN_MS / w);
                (cap, None)
            }
            Stop::DurationMs(ms) => {
                let windows = ms.div_ceil(w);
                if windows > MAX_WINDOWS || ms > MAX_SPAN_MS {
                    return Err(invalid(
                        "duration",
                        format!(
                            "{ms} ms is {windows} windows of {w} ms; at most {MAX_WINDOWS} windows and {MAX_SPAN_MS} ms"
                        ),
                    ));
                }
                (windows, Some(ms))
            }
        };
        let mut master = SplitMix64::new(spec.seed);
        Ok(Synthesizer {
            spec,
            law,
            failure_mean: mean * spec.failure_share / (1.0 - spec.failure_share),
            input: TokenLaw::fit(spec.input_tokens),
            output: TokenLaw::fit(spec.output_tokens),
            arrivals: SplitMix64::new(master.next_u64()),
            tokens: SplitMix64::new(master.next_u64()),
            attributes: SplitMix64::new(master.next_u64()),
            prefix: SplitMix64::new(master.next_u64()),
            window: 0,
            window_cap,
            end_ms,
            aligned: false,
            started: false,
            done: false,
            keys: Vec::new(),
            pool: Vec::new(),
            pool_next: 0,
            ids: Vec::new(),
            next_block: 0,
            stats: SynthStats::default(),
        })
    }

    /// The spec being generated.
    pub fn spec(&self) -> &SynthSpec {
        &self.spec
    }

    /// The name of the per-window count law the burstiness target chose (`poisson`,
    /// `gamma_poisson` or `paced_poisson_mixture`).
    pub fn count_law(&self) -> &'static str {
        self.law.name()
    }

    /// What has been written so far.
    pub fn stats(&self) -> SynthStats {
        self.stats
    }

    /// Appends whole windows to `out` until at least `min_bytes` were added or the trace
    /// ends; returns `false` once the trace is complete. The bytes do not depend on how the
    /// caller sizes its chunks.
    pub fn next_chunk(&mut self, out: &mut Vec<u8>, min_bytes: usize) -> bool {
        let start = out.len();
        if !self.started {
            self.started = true;
            if self.spec.layout == Layout::Burstgpt {
                out.extend_from_slice(BURSTGPT_HEADER);
            }
        }
        while !self.done && out.len() - start < min_bytes {
            self.fill_window(out);
        }
        self.stats.bytes += (out.len() - start) as u64;
        !self.done
    }

    /// Draws the next window's arrivals and writes its rows.
    fn fill_window(&mut self, out: &mut Vec<u8>) {
        if self.window >= self.window_cap {
            self.done = true;
            return;
        }
        let w = self.spec.window_ms;
        let start_ms = self.window * w;
        self.window += 1;
        let requests = self.law.sample(&mut self.arrivals);
        let failures = self.arrivals.poisson(self.failure_mean);
        if requests == 0 && failures == 0 {
            return;
        }
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        for i in 0..requests {
            // The first request of the trace opens its window, so the windows `inspect`
            // counts from the first arrival are exactly these.
            let offset = if !self.aligned && i == 0 {
                0
            } else {
                self.arrivals.below(w)
            };
            keys.push(offset << 1);
        }
        self.aligned |= requests > 0;
        for _ in 0..failures {
            keys.push(self.arrivals.below(w) << 1 | 1);
        }
        keys.sort_unstable();
        for &key in &keys {
            let t_ms = start_ms + (key >> 1);
            if self.end_ms.is_some_and(|end| t_ms >= end) {
                break;
            }
            if key & 1 == 1 {
                self.write_failure(out, t_ms);
            } else {
                self.write_request(out, t_ms);
            }
            self.stats.rows += 1;
            if self.spec.stop == Stop::Rows(self.stats.rows) {
                self.done = true;
                break;
            }
        }
        self.keys = keys;
    }

    fn write_request(&mut self, out: &mut Vec<u8>, t_ms: u64) {
        let (z_in, z_out) = self.tokens.normal_pair();
        let input = self.input.draw(z_in);
        let output = self.output.draw(z_out);
        self.stats.requests += 1;
        match self.spec.layout {
            Layout::Burstgpt => self.write_burstgpt(out, t_ms, input, output),
            Layout::Mooncake => self.write_mooncake(out, t_ms, input, output),
        }
    }

    fn write_failure(&mut self, out: &mut Vec<u8>, t_ms: u64) {
        self.stats.failure_rows += 1;
        // Only the BurstGPT layout has failure rows (validated).
        self.write_burstgpt(out, t_ms, 0, 0);
    }

    fn write_burstgpt(&mut self, out: &mut Vec<u8>, t_ms: u64, input: u32, output: u32) {
        let bits = self.attributes.next_u64();
        let model: &[u8] = if unit(bits as u32) < GPT4_SHARE {
            b"GPT-4"
        } else {
            b"ChatGPT"
        };
        let log_type: &[u8] = if unit((bits >> 32) as u32) < API_LOG_SHARE {
            b"API log"
        } else {
            b"Conversation log"
        };
        push_u64(out, t_ms / 1000);
        let ms = t_ms % 1000;
        out.extend_from_slice(&[
            b'.',
            b'0' + (ms / 100) as u8,
            b'0' + (ms / 10 % 10) as u8,
            b'0' + (ms % 10) as u8,
            b',',
        ]);
        out.extend_from_slice(model);
        out.push(b',');
        push_u64(out, u64::from(input));
        out.push(b',');
        push_u64(out, u64::from(output));
        out.push(b',');
        push_u64(out, u64::from(input) + u64::from(output));
        out.push(b',');
        out.extend_from_slice(log_type);
        out.push(b'\n');
    }

    fn write_mooncake(&mut self, out: &mut Vec<u8>, t_ms: u64, input: u32, output: u32) {
        let blocks = input.div_ceil(BLOCK_TOKENS) as usize;
        self.ids.clear();
        if self.spec.prefix_share > 0.0 {
            let share = self.prefix.next_f64() < self.spec.prefix_share;
            if share && !self.pool.is_empty() {
                let idx = self.prefix.below(self.pool.len() as u64) as usize;
                if let Some(parent) = self.pool.get(idx) {
                    let shared = parent.len().min(blocks);
                    self.ids.extend(parent.iter().take(shared));
                    self.stats.prefix_sharing += 1;
                }
            }
        }
        while self.ids.len() < blocks {
            self.ids.push(self.next_block);
            self.next_block += 1;
        }
        out.extend_from_slice(b"{\"timestamp\": ");
        push_u64(out, t_ms);
        out.extend_from_slice(b", \"input_length\": ");
        push_u64(out, u64::from(input));
        out.extend_from_slice(b", \"output_length\": ");
        push_u64(out, u64::from(output));
        out.extend_from_slice(b", \"hash_ids\": [");
        for (i, &id) in self.ids.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            push_u64(out, id);
        }
        out.extend_from_slice(b"]}\n");
        if self.spec.prefix_share > 0.0 {
            // Keep this request as a possible parent, reusing the evicted entry's allocation.
            if self.pool.len() < PREFIX_POOL {
                self.pool.push(self.ids.clone());
            } else if let Some(slot) = self.pool.get_mut(self.pool_next) {
                std::mem::swap(slot, &mut self.ids);
                self.pool_next = (self.pool_next + 1) % PREFIX_POOL;
            }
        }
    }
}

/// 32 random bits as a fraction in `[0, 1)`.
fn unit(bits: u32) -> f64 {
    f64::from(bits) / 4_294_967_296.0
}

/// Appends `v` in decimal.
fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let start = out.len();
    loop {
        out.push(b'0' + (v % 10) as u8);
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if let Some(digits) = out.get_mut(start..) {
        digits.reverse();
    }
}

/// The whole file for `spec` in memory: for small traces (the web page's sample, tests). Large
/// traces stream through [`Synthesizer::next_chunk`] instead.
pub fn generate(spec: &SynthSpec) -> Result<Vec<u8>, SynthError> {
    let mut synth = Synthesizer::new(spec)?;
    let mut out = Vec::new();
    while synth.next_chunk(&mut out, usize::MAX) {}
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::generate;

    #[test]
    fn push_u64_writes_decimal() {
        for v in [0, 7, 10, 999, 1_000_000, u64::MAX] {
            let mut out = b"x".to_vec();
            push_u64(&mut out, v);
            assert_eq!(out, format!("x{v}").into_bytes());
        }
    }

    #[test]
    fn the_default_spec_writes_its_rows_and_its_header() {
        let bytes = generate(&SynthSpec::DEFAULT).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type")
        );
        assert_eq!(lines.count(), 2_000);
        // The first request opens the first window at a whole second.
        let first_request = text
            .lines()
            .skip(1)
            .find(|l| !l.contains(",0,0,0,"))
            .unwrap();
        let stamp = first_request.split(',').next().unwrap();
        assert!(stamp.ends_with(".000"), "{first_request}");
    }

    #[test]
    fn bytes_do_not_depend_on_chunk_size() {
        let spec = SynthSpec {
            layout: Layout::Mooncake,
            failure_share: 0.0,
            prefix_share: 0.5,
            ..SynthSpec::DEFAULT
        };
        let whole = generate(&spec).unwrap();
        let mut synth = Synthesizer::new(&spec).unwrap();
        let mut chunked = Vec::new();
        let mut chunk = Vec::new();
        while synth.next_chunk(&mut chunk, 100) {
            chunked.extend_from_slice(&chunk);
            chunk.clear();
        }
        chunked.extend_from_slice(&chunk);
        assert_eq!(whole, chunked);
        assert_eq!(synth.stats().bytes, whole.len() as u64);
        assert_eq!(synth.stats().rows, 2_000);
    }
}
