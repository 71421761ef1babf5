//! The gateway's own `/metrics` lines, appended to the upstream's body (whose bytes are kept
//! as they came): `loadproof_gate_info{upstream,version[,model_revision][,gpu_sku][,upstream_tls]}` (what the
//! gateway's operator states about the upstream), `loadproof_gate_lease_active{lease_id}` (the
//! lease that holds, the gateway's leases' `readback`) and `loadproof_gate_lease_refused_total`,
//! each with `# HELP` and `# TYPE`. An OpenMetrics body's closing `# EOF` stays last.

use std::fmt::Write as _;

/// What the gateway says about itself in a scrape.
pub struct GateLines<'a> {
    /// `http://HOST:PORT` it forwards to.
    pub upstream: &'a str,
    /// loadproof's version.
    pub version: &'a str,
    /// `--model-revision`, as the operator states it.
    pub model_revision: Option<&'a str>,
    /// `--gpu-sku`, as the operator states it.
    pub gpu_sku: Option<&'a str>,
    /// The id of the lease that holds now.
    pub lease_active: Option<&'a str>,
    /// Requests refused with 423 so far.
    pub lease_refused: u64,
    /// How the gateway checks an `https://` upstream's certificate (`system`, `ca_cert`,
    /// `insecure`); `None` for a plain `http://` upstream.
    pub upstream_tls: Option<&'a str>,
}

/// The upstream's `body` followed by the gateway's lines (a newline first when the body does
/// not end with one; before a closing `# EOF`).
pub fn append(body: &[u8], lines: &GateLines<'_>) -> Vec<u8> {
    let ours = render(lines);
    let (head, eof) = match body
        .strip_suffix(b"# EOF\n")
        .or(body.strip_suffix(b"# EOF"))
    {
        Some(head) if head.is_empty() || head.ends_with(b"\n") => (head, &b"# EOF\n"[..]),
        _ => (body, &b""[..]),
    };
    let mut out = Vec::with_capacity(body.len() + ours.len() + 1);
    out.extend_from_slice(head);
    if !head.is_empty() && !head.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(ours.as_bytes());
    out.extend_from_slice(eof);
    out
}

fn render(lines: &GateLines<'_>) -> String {
    let mut out = String::new();
    let stated: String = [
        ("gpu_sku", lines.gpu_sku),
        ("model_revision", lines.model_revision),
        ("upstream_tls", lines.upstream_tls),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k}=\"{}\",", escape_label(v))))
    .collect();
    let _ = writeln!(
        out,
        "# HELP loadproof_gate_info This server is reached through loadproof gate, a lease-enforcing proxy: its upstream, its version and what its operator states about the upstream.\n\
         # TYPE loadproof_gate_info gauge\n\
         loadproof_gate_info{{{stated}upstream=\"{}\",version=\"{}\"}} 1",
        escape_label(lines.upstream),
        escape_label(lines.version)
    );
    let _ = writeln!(
        out,
        "# HELP loadproof_gate_lease_active 1 with the lease's id while a lease granted by the gateway's POST /loadproof/lease holds, else 0 with an empty id.\n\
         # TYPE loadproof_gate_lease_active gauge\n\
         loadproof_gate_lease_active{{lease_id=\"{}\"}} {}",
        escape_label(lines.lease_active.unwrap_or("")),
        u8::from(lines.lease_active.is_some())
    );
    let _ = writeln!(
        out,
        "# HELP loadproof_gate_lease_refused_total Requests the gateway refused with 423 because a lease held and they lacked its token.\n\
         # TYPE loadproof_gate_lease_refused_total counter\n\
         loadproof_gate_lease_refused_total {}",
        lines.lease_refused
    );
    out
}

/// A label value as the text format writes it: `\`, `"` and newline escaped.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadproof_core::formats::prometheus as exposition;

    const LINES: GateLines<'static> = GateLines {
        upstream: "http://127.0.0.1:8000",
        version: "0.1.0",
        model_revision: Some("rev \"1\""),
        gpu_sku: None,
        lease_active: Some("gate-lease-1-7"),
        lease_refused: 3,
        upstream_tls: None,
    };

    #[test]
    fn the_upstream_bytes_come_first_untouched_and_the_whole_parses() {
        let upstream = b"# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 0.0\n";
        let out = append(upstream, &LINES);
        assert!(out.starts_with(upstream));
        let parsed = exposition::parse(&out).unwrap();
        let refused = parsed.total("loadproof_gate_lease_refused_total").unwrap();
        assert_eq!(refused.map(|d| d.to_f64()), Some(3.0));
        let info = parsed.samples("loadproof_gate_info").next().unwrap();
        assert_eq!(info.label("upstream"), Some("http://127.0.0.1:8000"));
        assert_eq!(info.label("model_revision"), Some("rev \"1\""));
        assert_eq!(
            info.label("gpu_sku"),
            None,
            "a value nobody stated is left out"
        );
        let lease = parsed
            .samples("loadproof_gate_lease_active")
            .next()
            .unwrap();
        assert_eq!(lease.label("lease_id"), Some("gate-lease-1-7"));
        assert_eq!(
            parsed
                .total("loadproof_gate_lease_active")
                .unwrap()
                .map(|d| d.to_f64()),
            Some(1.0)
        );
    }

    #[test]
    fn a_body_without_a_final_newline_gets_one_and_eof_stays_last() {
        let out = append(b"a 1", &LINES);
        assert!(out.starts_with(b"a 1\n# HELP loadproof_gate_info"));
        let out = append(b"a_total 1\n# EOF\n", &LINES);
        assert!(out.starts_with(b"a_total 1\n# HELP loadproof_gate_info"));
        assert!(out.ends_with(b"loadproof_gate_lease_refused_total 3\n# EOF\n"));
    }
}
