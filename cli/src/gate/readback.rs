//! The subject a lease is bound to, read back from the upstream when the lease is granted:
//! `model` = the first id of `GET /v1/models`; `engine` from `GET /metrics` (`loadproof sim`
//! when it has `loadproof_sim_info`, else `vllm` when it has `vllm:` families, else no lease);
//! `engine_version` from `GET /version`'s `{"version": ...}` when it answers (a sim's own
//! `loadproof_sim_info{version}` first, as `fire` reads it); `model_revision` and `gpu_sku` from
//! the gateway's flags (a sim states its own; a flag that contradicts it refuses the lease). An
//! axis nobody states is left out: never invented. The scrape is parsed by core's exposition
//! reader, the one the audit reads it with.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use loadproof_core::formats::prometheus as exposition;

use super::proxy::{Client, Upstream};
use crate::http_client::first_model_id;

/// How long each read-back GET may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// What the operator told the gateway about its upstream.
#[derive(Debug, Clone)]
pub struct Stated {
    /// `--model-revision`.
    pub model_revision: Option<String>,
    /// `--gpu-sku`.
    pub gpu_sku: Option<String>,
}

/// An answer to one GET: the status and body, or what went wrong.
type Answer = Result<(u16, Bytes), String>;

/// Reads the upstream's `/v1/models`, `/metrics` and `/version` at once and states the
/// subject, or says why it cannot.
pub async fn subject(
    client: &Client,
    upstream: &Upstream,
    stated: &Stated,
) -> Result<BTreeMap<String, String>, String> {
    let (models, metrics, version) = tokio::join!(
        client.get(upstream, "/v1/models", TIMEOUT),
        client.get(upstream, "/metrics", TIMEOUT),
        client.get(upstream, "/version", TIMEOUT),
    );
    subject_from(upstream.base(), models, metrics, version, stated)
}

/// [`subject`] from the three answers.
fn subject_from(
    upstream: &str,
    models: Answer,
    metrics: Answer,
    version: Answer,
    stated: &Stated,
) -> Result<BTreeMap<String, String>, String> {
    let models = ok_body(upstream, "/v1/models", models)?;
    let model = first_model_id(&models)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
        format!("the upstream's GET {upstream}/v1/models lists no model id: the lease could not name the model")
    })?;
    let metrics = ok_body(upstream, "/metrics", metrics)?;
    let scrape = exposition::parse(&metrics).map_err(|e| {
        format!("the upstream's GET {upstream}/metrics is not Prometheus text: {e}")
    })?;
    let sim_info = scrape
        .samples("loadproof_sim_info")
        .next()
        .map(|s| s.labels.iter().cloned().collect::<BTreeMap<_, _>>());
    let vllm = scrape
        .families()
        .iter()
        .any(|f| f.name.starts_with("vllm:"));
    let engine = match (&sim_info, vllm) {
        (Some(_), _) => "loadproof sim",
        (None, true) => "vllm",
        (None, false) => {
            return Err(format!(
                "the upstream's GET {upstream}/metrics has no vllm: families (and no loadproof_sim_info): the gateway cannot say which engine serves it"
            ));
        }
    };
    let served_version = match version {
        Ok((200, body)) => serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("version")?.as_str().map(str::to_owned))
            .filter(|v| !v.is_empty()),
        _ => None,
    };
    let mut subject = BTreeMap::from([
        ("model".to_owned(), model),
        ("engine".to_owned(), engine.to_owned()),
    ]);
    let sim = |label: &str| sim_info.as_ref().and_then(|l| l.get(label)).cloned();
    if let Some(v) = sim("version").or(served_version) {
        subject.insert("engine_version".to_owned(), v);
    }
    for (axis, flag, label, given) in [
        (
            "model_revision",
            "--model-revision",
            "revision",
            &stated.model_revision,
        ),
        ("gpu_sku", "--gpu-sku", "gpu_sku", &stated.gpu_sku),
    ] {
        let read = sim(label);
        match (given.clone(), read) {
            (Some(g), Some(r)) if g != r => {
                return Err(format!(
                    "the gateway was started with {flag} {g:?} but the upstream's /metrics says {label}={r:?} (loadproof_sim_info): the lease cannot state both"
                ));
            }
            (Some(v), _) | (None, Some(v)) => {
                subject.insert(axis.to_owned(), v);
            }
            (None, None) => {}
        }
    }
    Ok(subject)
}

/// The body of a 200, or why there is none.
fn ok_body(upstream: &str, path: &str, answer: Answer) -> Result<Bytes, String> {
    match answer {
        Ok((200, body)) => Ok(body),
        Ok((status, _)) => Err(format!(
            "the upstream's GET {upstream}{path} answered HTTP {status}"
        )),
        Err(why) => Err(format!("the upstream's GET {upstream}{path} failed: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODELS: &str = r#"{"object":"list","data":[{"id":"Qwen/Qwen3-0.6B","object":"model"}]}"#;
    const VLLM: &str = "# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"Qwen/Qwen3-0.6B\"} 0.0\n";
    const SIM: &str = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"sim\"} 0.0\n# TYPE loadproof_sim_info gauge\nloadproof_sim_info{gpu_sku=\"g\",revision=\"r\",version=\"0.1.0\"} 1.0\n";

    fn ok(body: &str) -> Answer {
        Ok((200, Bytes::from(body.to_owned())))
    }

    fn stated(rev: Option<&str>, gpu: Option<&str>) -> Stated {
        Stated {
            model_revision: rev.map(str::to_owned),
            gpu_sku: gpu.map(str::to_owned),
        }
    }

    fn axes(s: &BTreeMap<String, String>) -> Vec<String> {
        s.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn a_vllm_upstream_is_bound_to_what_it_says_plus_the_flags_given() {
        let s = subject_from(
            "http://u:1",
            ok(MODELS),
            ok(VLLM),
            ok(r#"{"version":"0.32.0"}"#),
            &stated(Some("abc123"), Some("H100")),
        )
        .unwrap();
        assert_eq!(
            axes(&s),
            [
                "engine=vllm",
                "engine_version=0.32.0",
                "gpu_sku=H100",
                "model=Qwen/Qwen3-0.6B",
                "model_revision=abc123"
            ]
        );
    }

    #[test]
    fn an_axis_nobody_states_is_left_out() {
        let s = subject_from(
            "http://u:1",
            ok(MODELS),
            ok(VLLM),
            Ok((404, Bytes::new())),
            &stated(None, None),
        )
        .unwrap();
        assert_eq!(axes(&s), ["engine=vllm", "model=Qwen/Qwen3-0.6B"]);
    }

    #[test]
    fn a_sim_upstream_states_its_own_axes_and_a_contradicting_flag_refuses() {
        let s = subject_from(
            "http://u:1",
            ok(r#"{"data":[{"id":"sim"}]}"#),
            ok(SIM),
            Ok((404, Bytes::new())),
            &stated(Some("r"), None),
        )
        .unwrap();
        assert_eq!(
            axes(&s),
            [
                "engine=loadproof sim",
                "engine_version=0.1.0",
                "gpu_sku=g",
                "model=sim",
                "model_revision=r"
            ]
        );
        let why = subject_from(
            "http://u:1",
            ok(r#"{"data":[{"id":"sim"}]}"#),
            ok(SIM),
            Ok((404, Bytes::new())),
            &stated(None, Some("H100")),
        )
        .unwrap_err();
        assert!(why.contains("--gpu-sku \"H100\""), "{why}");
    }

    #[test]
    fn no_engine_family_no_model_or_no_answer_refuses_with_the_reason() {
        let why = subject_from(
            "http://u:1",
            ok(MODELS),
            ok("# TYPE up gauge\nup 1\n"),
            ok(r#"{"version":"1"}"#),
            &stated(None, None),
        )
        .unwrap_err();
        assert!(why.contains("no vllm: families"), "{why}");
        let why = subject_from(
            "http://u:1",
            ok(r#"{"data":[]}"#),
            ok(VLLM),
            ok("{}"),
            &stated(None, None),
        )
        .unwrap_err();
        assert!(why.contains("lists no model id"), "{why}");
        let why = subject_from(
            "http://u:1",
            ok(MODELS),
            Err("connection refused".into()),
            ok("{}"),
            &stated(None, None),
        )
        .unwrap_err();
        assert!(
            why.contains("GET http://u:1/metrics failed: connection refused"),
            "{why}"
        );
    }
}
