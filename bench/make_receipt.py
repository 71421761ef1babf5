#!/usr/bin/env python3
"""Writes a large native-engine receipt for bench/audit.sh: REQUESTS requests over SECONDS
seconds, a /metrics scrape every 250 ms (bodies are the simulator's real /metrics text with the
counters and gauges moved to match), a lease, and a bound implementation — a receipt that
audits *qualified*, so the bench times the whole audit, not an early refusal.

CHURN `counters` (the default) moves the five counters and gauges the audit reads, so
consecutive scrapes differ in a few lines; `histograms` also moves every vLLM histogram's
buckets, count and sum with the requests completed (about half of a vLLM scrape's lines change
every scrape: heavier than a real server at this rate, where a quiet histogram stays put).

Usage: make_receipt.py TEMPLATE_METRICS OUT.json [REQUESTS] [SECONDS] [CHURN]
"""
import bisect
import hashlib
import json
import random
import re
import sys

template = open(sys.argv[1]).read()
out_path = sys.argv[2]
requests = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
seconds = int(sys.argv[4]) if len(sys.argv) > 4 else 600
churn = sys.argv[5] if len(sys.argv) > 5 else "counters"
assert churn in ("counters", "histograms"), churn
MS = 1_000_000
T0 = 1_800_000_000_000_000_000
URL = "http://127.0.0.1:8000"
rng = random.Random(7)

model = re.search(r'model_name="([^"]*)"', template).group(1)
start = re.search(r"^process_start_time_seconds (\S+)$", template, re.M).group(1)
engine = "loadproof sim" if "loadproof_sim_info" in template else "vllm"
version = re.search(r'loadproof_sim_info{[^}]*version="([^"]*)"', template)
version = version.group(1) if version else "0.32.0"


def ev(raw: bytes):
    return {"sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw), "encoding": "utf8",
            "content": raw.decode()}


# Requests: uniform schedule, 100-token prompts, 20-80 output tokens, 10 ms steps.
records = []
span_ns = seconds * 1000 * MS
for i in range(requests):
    sched = i * span_ns // requests
    sent = sched + rng.randrange(20_000, 200_000)
    out = rng.randrange(20, 80)
    first = sent + 15 * MS
    chunks = [first + k * 10 * MS for k in range(out)]
    end = chunks[-1] + MS
    records.append({"index": i, "scheduled_ns": sched, "sent_ns": sent, "first_token_ns": first,
                    "chunks_ns": chunks, "end_ns": end, "prompt_tokens": 100, "max_tokens": out,
                    "usage": {"prompt_tokens": 100, "completion_tokens": out},
                    "disposition": {"kind": "ok"}})
run_end = max(r["end_ns"] for r in records) + MS
# Per-scrape counters by bisection over sorted ends and sends.
ends = sorted((r["end_ns"], r["usage"]["completion_tokens"]) for r in records)
sends = sorted(r["sent_ns"] for r in records)
prefix = [0]
for _, n in ends:
    prefix.append(prefix[-1] + n)


# Histogram sample lines of the template: (line index, series, which, le).
template_lines = template.split("\n")
histogram_lines = []
for i, line in enumerate(template_lines):
    m = re.match(r"^((vllm:[A-Za-z0-9_:]+)_(bucket|count|sum)(\{[^}]*\})?) \S+$", line)
    if m:
        le = re.search(r'le="([^"]*)"', line)
        le = float(le.group(1)) if le and le.group(1) != "+Inf" else float("inf")
        histogram_lines.append((i, m.group(1), m.group(3), le))


def histograms_moved(k):
    """The template with every histogram at k observations (a fixed, monotone shape)."""
    lines = list(template_lines)
    for i, series, which, le in histogram_lines:
        if which == "bucket":
            value = k if le == float("inf") else (k * le) // (le + 1.0)
        elif which == "count":
            value = k
        else:
            value = round(k * 0.123, 3)
        lines[i] = f"{series} {value}"
    return "\n".join(lines)


def body_fast(t_ns):
    k = bisect.bisect_right(ends, (t_ns, 10**9))
    gen = prefix[k] + 1000
    prompt = 100 * k + 5000
    running = bisect.bisect_right(sends, t_ns) - k
    text = histograms_moved(k) if churn == "histograms" else template
    for name, value in (("vllm:generation_tokens_total", f"{gen}.0"),
                        ("vllm:prompt_tokens_total", f"{prompt}.0"),
                        ("vllm:num_requests_running", f"{running}.0"),
                        ("vllm:num_requests_waiting", "0.0"),
                        ("vllm:num_preemptions_total", "0.0")):
        text = re.sub(rf"^({re.escape(name)}(?:{{[^}}]*}})?) \S+$", rf"\g<1> {value}", text,
                      flags=re.M)
    return text.encode()


evidence = {}
log = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode()
evidence["native/events.jsonl"] = ev(log)
scrapes = []


def scrape(phase, t_ns):
    name = f"metrics/{len(scrapes)}"
    evidence[name] = ev(body_fast(t_ns))
    scrapes.append({"url": f"{URL}/metrics", "phase": phase,
                    "requested": {"mono_ns": t_ns, "unix_ns": T0 + t_ns},
                    "completed_mono_ns": t_ns + MS,
                    "outcome": {"kind": "response", "status": 200, "body": name}})


scrape("before", -MS)
t = 250 * MS
while t < run_end:
    scrape("during", t)
    t += 250 * MS
scrape("after", run_end + MS)

lease = {"schema": "loadproof.lease/v1", "id": "bench-lease", "issuer": "bench/make_receipt.py",
         "holder": "bench", "route": URL,
         "subject": {"model": model, "engine": engine},
         "from_unix_ns": T0 - 10 * MS, "until_unix_ns": T0 + run_end + 10_000 * MS,
         "exclusion": "requests without the lease token are refused with 423", "token": "x"}
evidence["window/lease.json"] = ev(json.dumps(lease).encode())

protocol = {"engine": "native", "client_version": "loadproof bench", "backend": "openai",
            "endpoint": "/v1/completions", "base_url": URL, "model": model, "tokenizer": None,
            "trace_sha256": "0" * 64, "timed_trace_sha256": "1" * 64, "plan_sha256": None,
            "requests": requests, "chunk_size": 512, "sec_multiplier": "0.001",
            "arrival": "self_timed", "ignore_eos": True, "max_concurrency": 0,
            "python_hash_seed": None, "sampling": {}, "argv": ["bench"]}
# The canonical key: sha256 of the compact JSON with sorted keys (what core computes).
canonical = json.dumps(protocol, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
protocol["key"] = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def axis(v):
    return {"standing": "known", "value": v, "source": "bench"}


receipt = {
    "schema": "loadproof.receipt/v1", "protocol": protocol,
    "subject": {"model": axis(model), "model_revision": axis("none (simulator)"),
                "gpu_sku": axis("none (simulator)"), "engine": axis(engine),
                "engine_version": axis(version),
                "knobs": {}, "simulator": engine == "loadproof sim"},
    "provenance": {"source": "fire", "generator": "bench/make_receipt.py", "command": [],
                   "caller": {}, "written_unix_ns": T0},
    "execution": {"kind": "native", "events": "native/events.jsonl", "offered": requests,
                  "started": {"mono_ns": 0, "unix_ns": T0},
                  "ended": {"mono_ns": run_end, "unix_ns": T0 + run_end},
                  "interrupted": None, "lag_bound_ns": 5 * MS},
    "scrapes": scrapes, "evidence": evidence, "notes": [], "lease": "window/lease.json",
    "implementation": {"name": "loadproof native", "version": "bench", "source": "bench",
                       "source_sha256": "ab" * 32, "unbound": None},
}
with open(out_path, "w") as f:
    json.dump(receipt, f)
print(f"{out_path}: {requests} requests, {len(scrapes)} scrapes, "
      f"{sum(e['bytes'] for e in evidence.values())} evidence bytes", file=sys.stderr)
