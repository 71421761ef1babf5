//! A fleet: a real load balancer (Debian's nginx, round robin) in front of three `loadproof sim`
//! replicas, fired at through the balancer with one `--metrics-url` per replica. The audit sums
//! the replicas' counters, reads each one's incarnation and occupancy, and names the replica in
//! every refusal: a replica restarted mid-run, a replica unreadable, a replica serving another
//! model.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;

/// nginx in the foreground with a config of its own in `dir`, round robin over `replicas`;
/// one process (`master_process off`), so killing it on drop leaves no worker behind. Needs
/// nginx (tools/install.sh installs it).
struct Balancer {
    child: Child,
    url: String,
}

fn nginx() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

impl Balancer {
    fn start(dir: &Path, replicas: &[&str]) -> Balancer {
        let nginx = nginx().expect("nginx is not installed: run tools/install.sh");
        let port = free_port();
        let tmp = dir.join("nginx-tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let servers: String = replicas
            .iter()
            .map(|r| format!("    server {r} max_fails=0;\n"))
            .collect();
        let conf = format!(
            "master_process off;\ndaemon off;\npid {pid};\nerror_log {log} warn;\nevents {{ worker_connections 1024; }}\nhttp {{\n  access_log off;\n  client_body_temp_path {t}/body;\n  proxy_temp_path {t}/proxy;\n  fastcgi_temp_path {t}/fastcgi;\n  uwsgi_temp_path {t}/uwsgi;\n  scgi_temp_path {t}/scgi;\n  upstream fleet {{\n{servers}    keepalive 64;\n  }}\n  server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://fleet;\n      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_buffering off;\n    }}\n  }}\n}}\n",
            pid = s(&dir.join("nginx.pid")),
            log = s(&dir.join("nginx-error.log")),
            t = s(&tmp),
        );
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let mut child = Command::new(nginx)
            .args([
                "-c",
                s(&path),
                "-p",
                s(dir),
                "-e",
                s(&dir.join("nginx-error.log")),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Balancer { child, url };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("nginx did not listen on {port}");
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fires `plan` at `endpoint` with one `--metrics-url` per replica; the exit code.
fn fire(plan: &Path, endpoint: &str, replicas: &[String], out: &Path) -> i32 {
    let mut args = fire_args(plan, endpoint, out, &[]);
    for r in replicas {
        args.extend(["--metrics-url", r.as_str()]);
    }
    let r = run(&args);
    r.status.code().unwrap_or(-1)
}

fn metrics_urls(sims: &[&Sim]) -> Vec<String> {
    sims.iter().map(|s| format!("{}/metrics", s.url)).collect()
}

#[test]
fn a_fleet_behind_a_real_load_balancer_is_audited_as_one_engine_replica_by_replica() {
    let _turn = turn();
    let dir = planned_dir("fleet", 30);
    let plan = dir.join("plan");
    let (a, b, c) = (Sim::start(&FAST), Sim::start(&FAST), Sim::start(&FAST));
    let lb = Balancer::start(&dir, &[&a.addr, &b.addr, &c.addr]);
    let urls = metrics_urls(&[&a, &b, &c]);

    let out = dir.join("fleet.receipt");
    assert_eq!(fire(&plan, &lb.url, &urls, &out), 0);
    let audit = audit_json(&out);
    let replicas = audit["engine"]["replicas"].as_array().unwrap();
    assert_eq!(replicas.len(), 3, "{audit:#}");
    let mut sum = 0;
    for (r, url) in replicas.iter().zip(&urls) {
        assert_eq!(r["url"], url.as_str());
        let served = r["generation_tokens_delta"].as_u64().unwrap();
        assert!(served > 0, "round robin gives every replica work: {r:#}");
        assert!(r["continuous"].as_bool().unwrap());
        sum += served;
    }
    assert_eq!(audit["engine"]["generation_tokens_delta"], sum);
    assert_eq!(
        audit["client"]["output_tokens"], sum,
        "the replicas' counters together are exactly this client's work"
    );
    for name in ["subject", "counter_agreement", "continuity", "occupancy"] {
        let st = &audit["standings"][name];
        assert_eq!(st["positive"], true, "{name}: {st:#}");
    }
    let subject = audit["standings"]["subject"]["reason"].as_str().unwrap();
    for url in &urls {
        assert!(subject.contains(url.as_str()), "{subject}");
    }
    // A balancer grants no lease: the window is not isolated, and says so.
    assert_eq!(audit["standings"]["window"]["positive"], false);
    let text = stdout(&run(&["receipt", "audit", s(&out)]));
    assert_eq!(text.matches("\nreplica ").count(), 3, "{text}");

    // A replica the fire cannot read: named, the deltas unread.
    let dead = format!("http://127.0.0.1:{}/metrics", free_port());
    let mut with_dead = urls.clone();
    with_dead.push(dead.clone());
    let out = dir.join("unreadable.receipt");
    fire(&plan, &lb.url, &with_dead, &out);
    let audit = audit_json(&out);
    let continuity = audit["standings"]["continuity"]["reason"].as_str().unwrap();
    assert!(
        continuity.contains(&format!("{dead}: no readable before-scrape")),
        "{continuity}"
    );
    assert!(audit["engine"]["generation_tokens_delta"].is_null());
}

#[test]
fn a_replica_restarted_mid_run_or_serving_another_model_is_named() {
    let _turn = turn();
    let dir = planned_dir("fleet-faults", 40);
    let plan = dir.join("plan");
    let (a, b) = (Sim::start(&FAST), Sim::start(&FAST));
    let port = free_port();
    let restarted = std::sync::Arc::new(std::sync::Mutex::new(Some(PortSim::start(port, "4096"))));
    let c_addr = format!("127.0.0.1:{port}");
    let lb = Balancer::start(&dir, &[&a.addr, &b.addr, &c_addr]);
    let mut urls = metrics_urls(&[&a, &b]);
    let c_url = format!("http://{c_addr}/metrics");
    urls.push(c_url.clone());

    // The third replica is killed and started again on its port while the run goes on.
    let handle = std::sync::Arc::clone(&restarted);
    let restart = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        let mut slot = handle.lock().unwrap();
        drop(slot.take());
        *slot = Some(PortSim::start(port, "4096"));
    });
    let out = dir.join("restarted.receipt");
    fire(&plan, &lb.url, &urls, &out);
    restart.join().unwrap();
    let audit = audit_json(&out);
    let continuity = &audit["standings"]["continuity"];
    assert_eq!(continuity["positive"], false, "{continuity:#}");
    let why = continuity["reason"].as_str().unwrap();
    assert!(
        why.contains(&format!("{c_url}: the server restarted during the run"))
            || why.contains(&format!("{c_url}: counter reset")),
        "{why}"
    );
    drop(restarted);

    // A replica that serves another model: its /metrics say so, and the subject is refused
    // naming it beside a replica that serves the planned one.
    let other = Sim::start(&[&FAST[..], &["--model", "other-model"]].concat());
    let lb = Balancer::start(&dir, &[&a.addr, &b.addr, &other.addr]);
    let mut urls = metrics_urls(&[&a, &b]);
    let other_url = format!("{}/metrics", other.url);
    urls.push(other_url.clone());
    let out = dir.join("other-model.receipt");
    fire(&plan, &lb.url, &urls, &out);
    let audit = audit_json(&out);
    let subject = &audit["standings"]["subject"];
    assert_eq!(subject["positive"], false, "{subject:#}");
    let why = subject["reason"].as_str().unwrap();
    assert!(
        why.contains(&format!("/metrics at {other_url} says \"other-model\"")),
        "{why}"
    );
}
