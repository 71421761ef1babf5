//! Real endpoints: `https://` with a throwaway CA made here (the sim and the gate serving TLS
//! themselves, the client trusting the CA, or nothing with `--insecure`), and API keys that come
//! from the environment and appear in no artifact.

mod common;

use std::path::{Path, PathBuf};
use std::process::Child;

use base64::Engine as _;
use common::*;

/// A CA and a server certificate for `127.0.0.1` / `localhost` signed by it, as PEM files in
/// `dir`: (ca.pem, server.pem, server.key).
fn throwaway_ca(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "loadproof throwaway test CA");
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let params =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let paths = (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    );
    std::fs::write(&paths.0, ca.pem()).unwrap();
    std::fs::write(&paths.1, cert.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    paths
}

/// `loadproof gate` with `env`, killed on drop.
struct Gate {
    child: Child,
    url: String,
}

impl Gate {
    fn start(upstream: &str, extra: &[&str], env: &[(&str, &str)]) -> Gate {
        let args: Vec<&str> = ["gate", "--upstream", upstream, "--port", "0"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let (child, url) = spawn_server_env(
            &args,
            env,
            "loadproof gate listening on ",
            &format!(" (forwarding to {upstream})"),
        );
        Gate { child, url }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_tls_endpoint_with_a_private_ca_fires_audits_and_records_how_certificates_were_checked() {
    let _turn = turn();
    let dir = planned_dir("tls", 12);
    let (ca, cert, key) = throwaway_ca(&dir);
    let mut extra: Vec<&str> = FAST.to_vec();
    extra.extend(["--tls-cert", s(&cert), "--tls-key", s(&key)]);
    let sim = Sim::start(&extra);
    assert!(sim.url.starts_with("https://127.0.0.1:"), "{}", sim.url);
    let plan = dir.join("plan");

    // Trusting the private CA: a capture that qualifies, its protocol naming the CA's sha256.
    let out = dir.join("ca.receipt");
    until_qualified(&out, || {
        let r = run(&fire_args(
            &plan,
            &sim.url,
            &out,
            &["--ca-cert", s(&ca), "--acquire-lease", "60"],
        ));
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    });
    let audit = audit_json(&out);
    assert_eq!(audit["qualified"], true, "{audit:#}");
    assert!(audit.get("caveats").is_none(), "{audit:#}");
    let receipt = receipt_json(&dir, &out);
    let tls = &receipt["protocol"]["tls"];
    assert_eq!(tls["verify"], "ca_cert");
    assert_eq!(
        tls["ca_sha256"],
        hex_sha256(&std::fs::read(&ca).unwrap()).as_str()
    );
    assert!(receipt["lease"].is_string(), "the lease is kept");

    // Trusting only the platform's store: the throwaway CA is nobody's, so the endpoint is
    // unreachable, and the receipt says which certificate check failed.
    let out = dir.join("system.receipt");
    let r = run(&fire_args(&plan, &sim.url, &out, &[]));
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let receipt = receipt_json(&dir, &out);
    assert_eq!(receipt["execution"]["kind"], "unreachable", "{receipt:#}");
    let cause = receipt["execution"]["cause"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        cause.contains("certificate") || cause.contains("UnknownIssuer"),
        "{receipt:#}"
    );

    // --insecure: the run goes through, the protocol says nothing was checked, and the audit
    // names it as a caveat on the verdict.
    let out = dir.join("insecure.receipt");
    until_qualified(&out, || {
        let r = run(&fire_args(
            &plan,
            &sim.url,
            &out,
            &["--insecure", "--acquire-lease", "60"],
        ));
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    });
    let receipt = receipt_json(&dir, &out);
    assert_eq!(receipt["protocol"]["tls"]["verify"], "insecure");
    let audit = audit_json(&out);
    let caveats = audit["caveats"].as_array().unwrap();
    assert!(
        caveats[0].as_str().unwrap().contains("--insecure"),
        "{caveats:?}"
    );
    let text = run(&["receipt", "audit", s(&out)]);
    let text = stdout(&text);
    assert!(text.contains("CAVEAT"), "{text}");
    assert!(text.contains("(1 caveat)"), "{text}");
}

/// The receipt as its v1 JSON document (`receipt upgrade --form json`).
fn receipt_json(dir: &Path, receipt: &Path) -> serde_json::Value {
    let json = dir.join(format!(
        "{}.json",
        receipt.file_name().unwrap().to_string_lossy()
    ));
    let r = run(&[
        "receipt",
        "upgrade",
        s(receipt),
        "--out",
        s(&json),
        "--form",
        "json",
    ]);
    if r.status.code() != Some(0) {
        // An unreachable receipt is sealed and verifies; anything else is the test's failure.
        panic!("{}", stderr(&r));
    }
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

/// Every place a secret could hide in what a run leaves behind: the file as written, its
/// decompressed stream, its v1 JSON form, and every evidence block decoded.
fn artifact_bytes(dir: &Path, receipt: &Path) -> Vec<(String, Vec<u8>)> {
    let raw = std::fs::read(receipt).unwrap();
    let mut out = vec![(format!("{}", receipt.display()), raw.clone())];
    if let Ok(plain) = zstd::decode_all(raw.as_slice()) {
        out.push(("the decompressed stream".to_owned(), plain));
    }
    let json = receipt_json(dir, receipt);
    out.push(("the v1 JSON form".to_owned(), json.to_string().into_bytes()));
    for (name, block) in json["evidence"].as_object().unwrap() {
        let content = block["content"].as_str().unwrap();
        let bytes = if block["encoding"] == "base64" {
            base64::engine::general_purpose::STANDARD
                .decode(content)
                .unwrap()
        } else {
            content.as_bytes().to_vec()
        };
        out.push((format!("evidence block {name}"), bytes));
    }
    out
}

fn assert_nowhere(secret: &str, places: &[(String, Vec<u8>)]) {
    for (place, bytes) in places {
        assert!(
            memchr::memmem::find(bytes, secret.as_bytes()).is_none(),
            "the secret is in {place}"
        );
    }
}

#[test]
fn an_api_key_from_the_environment_is_sent_and_appears_in_no_artifact() {
    let _turn = turn();
    const KEY: &str = "sk-loadproof-test-7f3a9c0e51";
    const GATE_KEY: &str = "sk-loadproof-upstream-42b8d1";
    let dir = planned_dir("api-key", 12);
    let plan = dir.join("plan");
    let mut extra: Vec<&str> = FAST.to_vec();
    extra.extend(["--api-key-env", "SIM_SERVER_KEY"]);
    let sim = Sim::start_env(&extra, &[("SIM_SERVER_KEY", KEY)]);

    // Without the key, vLLM's rule: /v1/models is 401, the endpoint unreachable (a receipt).
    let out = dir.join("nokey.receipt");
    let r = run(&fire_args(&plan, &sim.url, &out, &[]));
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    assert!(stderr(&r).contains("HTTP 401"), "{}", stderr(&r));

    // A key named by a flag but not in the environment: bad input, nothing written.
    let out = dir.join("unset.receipt");
    let r = run(&fire_args(
        &plan,
        &sim.url,
        &out,
        &["--api-key-env", "NOT_SET_ANYWHERE"],
    ));
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("NOT_SET_ANYWHERE is not set"),
        "{}",
        stderr(&r)
    );
    assert!(!out.exists());

    // With the key and a lease at once: the key in Authorization, the lease token in its own
    // header; the run qualifies and the key is nowhere.
    let out = dir.join("key.receipt");
    let mut outputs = Vec::new();
    until_qualified(&out, || {
        let r = run_env(
            &fire_args(
                &plan,
                &sim.url,
                &out,
                &["--api-key-env", "MY_SERVER_KEY", "--acquire-lease", "60"],
            ),
            &[("MY_SERVER_KEY", KEY)],
        );
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
        outputs.push(("fire's stdout".to_owned(), r.stdout));
        outputs.push(("fire's stderr".to_owned(), r.stderr));
    });
    let audit = run(&["receipt", "audit", s(&out), "--json"]);
    outputs.push(("the audit".to_owned(), audit.stdout));
    let mut places = artifact_bytes(&dir, &out);
    places.extend(outputs);
    assert_nowhere(KEY, &places);
    let receipt = receipt_json(&dir, &out);
    assert!(
        receipt["lease"].is_string(),
        "a lease was held beside the key"
    );

    // --engine vllm cannot carry both secrets without putting one in argv: refused up front.
    let out = dir.join("vllm.receipt");
    let r = run_env(
        &[
            "fire",
            s(&plan),
            "--endpoint",
            &sim.url,
            "--engine",
            "vllm",
            "--python",
            "/nonexistent/python",
            "--api-key-env",
            "MY_SERVER_KEY",
            "--acquire-lease",
            "60",
            "--out",
            s(&out),
        ],
        &[("MY_SERVER_KEY", KEY)],
    );
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(
        stderr(&r).contains("--upstream-api-key-env"),
        "{}",
        stderr(&r)
    );
    assert!(!stderr(&r).contains(KEY));

    // A gate holding the upstream's key (the operator's), the client holding only its lease:
    // the sim behind it sees the key, the client never had it.
    let gate = Gate::start(
        &sim.url,
        &["--upstream-api-key-env", "GATE_UPSTREAM_KEY"],
        &[("GATE_UPSTREAM_KEY", KEY), ("UNRELATED", GATE_KEY)],
    );
    let out = dir.join("gate.receipt");
    until_qualified(&out, || {
        let r = run(&fire_args(
            &plan,
            &gate.url,
            &out,
            &["--acquire-lease", "60"],
        ));
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    });
    assert_nowhere(KEY, &artifact_bytes(&dir, &out));
}

#[test]
fn a_gate_serves_tls_and_forwards_to_a_tls_upstream() {
    let _turn = turn();
    let dir = planned_dir("tls-gate", 12);
    let (ca, cert, key) = throwaway_ca(&dir);
    let mut extra: Vec<&str> = FAST.to_vec();
    extra.extend(["--tls-cert", s(&cert), "--tls-key", s(&key)]);
    let sim = Sim::start(&extra);
    // A gate that does not trust the CA cannot reach its upstream: 502, the endpoint
    // unreachable (a receipt that says so, exit 1).
    let untrusting = Gate::start(&sim.url, &[], &[]);
    let out = dir.join("untrusting.receipt");
    let r = run(&fire_args(
        &dir.join("plan"),
        &untrusting.url,
        &out,
        &["--acquire-lease", "60"],
    ));
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    assert!(stderr(&r).contains("HTTP 502"), "{}", stderr(&r));
    drop(untrusting);

    let gate = Gate::start(
        &sim.url,
        &[
            "--ca-cert",
            s(&ca),
            "--tls-cert",
            s(&cert),
            "--tls-key",
            s(&key),
        ],
        &[],
    );
    assert!(gate.url.starts_with("https://"), "{}", gate.url);
    let out = dir.join("gate.receipt");
    until_qualified(&out, || {
        let r = run(&fire_args(
            &dir.join("plan"),
            &gate.url,
            &out,
            &["--ca-cert", s(&ca), "--acquire-lease", "60"],
        ));
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    });
    let receipt = receipt_json(&dir, &out);
    let lease_block = &receipt["evidence"]["window/lease.json"]["content"];
    let lease: serde_json::Value = serde_json::from_str(lease_block.as_str().unwrap()).unwrap();
    assert_eq!(lease["route"], gate.url.as_str(), "{lease:#}");
}

/// Adversarial pass, finding 10: `--endpoint http://user:password@host` fired, and the password
/// was written into the receipt nine times.
#[test]
fn a_secret_userinfo_in_endpoint_is_refused() {
    let dir = planned_dir("userinfo", 2);
    let out = dir.join("r.receipt");
    let plan = dir.join("plan");
    for (flag, url) in [
        ("--endpoint", "http://user:hunter2@127.0.0.1:9"),
        ("--metrics-url", "http://user:hunter2@127.0.0.1:9/metrics"),
        ("--dcgm-url", "http://user:hunter2@127.0.0.1:9/metrics"),
    ] {
        let mut args = vec!["fire", s(&plan), "--engine", "native", "--out", s(&out)];
        if flag == "--endpoint" {
            args.extend(["--endpoint", url]);
        } else {
            args.extend(["--endpoint", "http://127.0.0.1:9", flag, url]);
        }
        let r = run(&args);
        assert_eq!(r.status.code(), Some(2), "{flag}: {}", stderr(&r));
        assert!(stderr(&r).contains("credentials in the URL are refused"));
        assert!(!stderr(&r).contains("hunter2"));
        assert!(!out.exists());
    }
}

/// Adversarial pass, findings 3 and 9: a gate that does not check its https upstream was
/// recorded nowhere, and an upper-case `HTTPS://` endpoint used TLS but recorded none.
#[test]
fn a_caveat_gate_insecure_upstream_is_named_and_an_upper_case_scheme_is_recorded() {
    let _turn = turn();
    let dir = planned_dir("gate-insecure", 12);
    let (_ca, cert, key) = throwaway_ca(&dir);
    let mut extra: Vec<&str> = FAST.to_vec();
    extra.extend(["--tls-cert", s(&cert), "--tls-key", s(&key)]);
    let sim = Sim::start(&extra);
    let gate = Gate::start(&sim.url, &["--insecure"], &[]);
    let out = dir.join("gate.receipt");
    let r = run(&fire_args(
        &dir.join("plan"),
        &gate.url,
        &out,
        &["--acquire-lease", "60"],
    ));
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let audit = audit_json(&out);
    let caveats = audit["caveats"].as_array().expect("a caveat");
    assert!(
        caveats.iter().any(|c| c
            .as_str()
            .unwrap()
            .contains("did not check its upstream's TLS certificate")),
        "{caveats:?}"
    );

    let upper = sim.url.replace("https://", "HTTPS://");
    let out = dir.join("upper.receipt");
    let r = run(&fire_args(&dir.join("plan"), &upper, &out, &["--insecure"]));
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert_eq!(
        receipt_json(&dir, &out)["protocol"]["tls"]["verify"],
        "insecure"
    );
}

/// Adversarial pass, finding 11: a scraped URL answering 300 MB pushed fire to 3.4 GB. A body
/// over the cap is a failed scrape, by name.
#[test]
fn a_scrape_body_over_the_cap_is_unread_not_oom() {
    use std::io::{Read as _, Write as _};
    let _turn = turn();
    let dir = planned_dir("huge-body", 6);
    let sim = Sim::start(&FAST);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let huge = format!("http://{}/metrics", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            std::thread::spawn(move || {
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                let size: usize = 80 << 20;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {size}\r\nconnection: close\r\n\r\n"
                );
                let chunk = vec![b'#'; 1 << 20];
                for _ in 0..80 {
                    if stream.write_all(&chunk).is_err() {
                        break;
                    }
                }
            });
        }
    });
    let out = dir.join("r.receipt");
    let r = run(&fire_args(
        &dir.join("plan"),
        &sim.url,
        &out,
        &["--dcgm-url", &huge],
    ));
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let audit = audit_json(&out);
    let e = &audit["gpu"]["exporters"][0];
    assert_eq!(e["readable"], 0, "{e:#}");
    assert!(
        e["reason"].as_str().unwrap().contains("larger than 64 MiB"),
        "{e:#}"
    );
}
