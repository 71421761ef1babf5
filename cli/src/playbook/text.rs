//! How a playbook's rows and queries read in the terminal: the identity and regime lines that
//! `row`, `match` and `examples` all print, with their numbers rounded for reading.

use loadproof_core::playbook::{Identity, RegimeAxes, knobs_line};

/// A number for reading: four significant digits or so, trailing zeros dropped.
pub(super) fn num(v: f64) -> String {
    let decimals = if v.abs() >= 100.0 {
        1
    } else if v.abs() >= 1.0 {
        3
    } else {
        4
    };
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// An identity in two lines: model, revision, GPU and engine; then source, concurrency, knobs.
pub(super) fn identity_lines(id: &Identity) -> [String; 2] {
    [
        format!(
            "model {} @ {} · gpu {} · engine {} {}",
            id.model, id.model_revision, id.gpu_sku, id.engine, id.engine_version
        ),
        format!(
            "{} · concurrency {} · knobs {}",
            id.source_kind,
            id.concurrency,
            knobs_line(&id.knobs)
        ),
    ]
}

/// A regime in one line: rate, burstiness at its window, token percentiles.
pub(super) fn regime_line(r: &RegimeAxes) -> String {
    format!(
        "rate {} req/s · D {} @ {} s · input p50 {} p95 {} · output p50 {} p95 {}",
        num(r.rate_rps),
        num(r.burstiness),
        num(r.window_s),
        num(r.input_p50),
        num(r.input_p95),
        num(r.output_p50),
        num(r.output_p95)
    )
}
