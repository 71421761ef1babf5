#!/usr/bin/env python3
"""Firing fidelity: `vllm bench serve` against loadproof's native engine, same endpoint.

For each rate, writes a uniform schedule (constant gaps), plans it with `loadproof plan`,
starts `loadproof sim` with fast model knobs (so the server is not the bottleneck), fires the
plan with `loadproof fire --engine vllm` (the real bench client from the vLLM lab) and with
`--engine native` (and each again over https, the sim serving a throwaway CA's certificate and
the client trusting it with --ca-cert), and reads the receipts:

  * achieved rate = (requests sent - 1) / (last send - first send), the clients' own send times;
  * dispatch lag = send time - scheduled time, p50 / p99 / max. For the native engine both are
    on one clock (absolute lag). vLLM's result JSON only has send times on its own perf_counter
    (`start_times`), so its lag is measured relative to its first send (which therefore reads 0):
    if anything this flatters vLLM.

Usage: fire_compare.py LOADPROOF_BIN WORK_DIR RATE:SECONDS... (default 200:10 1000:10 5000:5)
Needs VLLM_LAB_PYTHON (tools/vllm-lab) for the vllm engine. Prints a markdown table.
"""

import json
import os
import subprocess
import sys


def pct(sorted_values, q):
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def uniform_trace(path, rate, seconds):
    n = int(rate * seconds)
    gap_us = 1_000_000 / rate
    with open(path, "w") as f:
        for i in range(n):
            ms = i * gap_us / 1000
            ts = f"{ms:.3f}".rstrip("0").rstrip(".")
            f.write(f'{{"timestamp": {ts}, "input_length": 8, "output_length": 4, "hash_ids": [{i}]}}\n')
    return n


def start_sim(lp, tls_ca=None):
    tls = ["--tls-self-signed", tls_ca] if tls_ca else []
    sim = subprocess.Popen([lp, "sim", "--port", "0", "--model", "sim", "--prefill-tokens-per-s", "100000000",
                            "--decode-ms-per-seq", "0", "--max-num-seqs", "4096", *tls],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = sim.stderr.readline().strip()
    url = line.removeprefix("loadproof sim listening on ").removesuffix(" (simulator, not vLLM)")
    return sim, url


def load_receipt(lp, path):
    """A receipt as the v1 JSON document, whichever form it was written in."""
    with open(path, "rb") as f:
        head = f.read(1)
    if head == b"{":
        return json.load(open(path))
    as_json = path + ".v1.json"
    subprocess.run([lp, "receipt", "upgrade", path, "--form", "json", "--out", as_json], check=True,
                   stdout=subprocess.DEVNULL)
    return json.load(open(as_json))


def lags_vllm(receipt, plan_dir):
    result = json.loads(receipt["evidence"]["bench/result.json"]["content"])
    sends = result["start_times"]
    doc = json.load(open(os.path.join(plan_dir, "plan.json")))
    mult = float(doc["timed_trace"]["sec_multiplier"])
    planned = [json.loads(l)["timestamp"] * mult for l in open(os.path.join(plan_dir, "timed_trace.jsonl"))]
    lags = [(s - sends[0]) - (p - planned[0]) for s, p in zip(sends, planned)]
    ok = result["completed"]
    return sorted(lags), sends[0], sends[-1], len(sends), ok


def lags_native(receipt):
    events = [json.loads(l) for l in receipt["evidence"]["native/events.jsonl"]["content"].splitlines() if l]
    sent = [e for e in events if e.get("sent_ns") is not None]
    lags = sorted((e["sent_ns"] - e["scheduled_ns"]) / 1e9 for e in sent)
    first = min(e["sent_ns"] for e in sent) / 1e9
    last = max(e["sent_ns"] for e in sent) / 1e9
    ok = sum(1 for e in events if e["disposition"]["kind"] == "ok")
    return lags, first, last, len(sent), ok


def main():
    lp, work = sys.argv[1], sys.argv[2]
    specs = sys.argv[3:] or ["200:10", "1000:10", "5000:5"]
    python = os.environ.get("VLLM_LAB_PYTHON")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TORCHINDUCTOR_CACHE_DIR": os.path.join(work, "inductor-cache")}
    os.makedirs(work, exist_ok=True)
    rows = []
    for spec in specs:
        rate, seconds = (float(x) for x in spec.split(":"))
        trace = os.path.join(work, f"uniform_{int(rate)}.jsonl")
        n = uniform_trace(trace, rate, seconds)
        plan_dir = os.path.join(work, f"plan_{int(rate)}")
        tok = ["--tokenizer", os.environ["VLLM_LAB_TOKENIZER"]] if os.environ.get("VLLM_LAB_TOKENIZER") else []
        subprocess.run([lp, "plan", trace, "--out", plan_dir, "--model", "sim", *tok], check=True,
                       stdout=subprocess.DEVNULL)
        # native: the receipt written as a record stream while it fires (the default);
        # native-json: the v1 document written at the end — the cost of writing as it goes.
        # native-https / vllm-https: the same over TLS (the sim's throwaway CA, --ca-cert).
        engines = (["vllm", "vllm-https"] if python else []) + ["native", "native-json", "native-https"]
        for engine in engines:
            ca = os.path.join(work, f"ca_{int(rate)}_{engine}.pem") if engine.endswith("-https") else None
            sim, url = start_sim(lp, ca)
            try:
                receipt_path = os.path.join(work, f"receipt_{int(rate)}_{engine}.json")
                client = engine.removesuffix("-json").removesuffix("-https")
                extra = ["--python", python] if client == "vllm" else []
                if engine == "native-json":
                    extra = ["--form", "json"]
                if ca:
                    extra += ["--ca-cert", ca]
                res = subprocess.run([lp, "fire", plan_dir, "--endpoint", url, "--engine", client,
                                      "--out", receipt_path, *extra], env=env, capture_output=True, text=True)
                if not os.path.exists(receipt_path):
                    print(f"  {engine}: no receipt (fire exit {res.returncode}): {res.stderr.strip()[-300:]}",
                          file=sys.stderr)
                    continue
                receipt = load_receipt(lp, receipt_path)
                if client == "vllm":
                    lags, first, last, sent, ok = lags_vllm(receipt, plan_dir)
                else:
                    lags, first, last, sent, ok = lags_native(receipt)
                achieved = (sent - 1) / (last - first) if last > first else float("nan")
                rows.append((rate, engine, n, sent, ok, achieved, pct(lags, 0.5) * 1e3, pct(lags, 0.99) * 1e3,
                             lags[-1] * 1e3, res.returncode))
                print(f"  {engine:12} @ {rate:6.0f} req/s: achieved {achieved:9.2f}, lag p50 {pct(lags, .5) * 1e3:7.3f} ms "
                      f"p99 {pct(lags, .99) * 1e3:7.3f} ms max {lags[-1] * 1e3:8.3f} ms, ok {ok}/{n}, fire exit {res.returncode}",
                      file=sys.stderr)
            finally:
                sim.terminate()
                sim.wait(timeout=10)
    print("| target req/s | client | requests | sent | ok | achieved req/s | lag p50 ms | lag p99 ms | lag max ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for rate, engine, n, sent, ok, achieved, p50, p99, mx, rc in rows:
        name = {"vllm": "vllm bench serve", "vllm-https": "vllm bench serve, https",
                "native": "loadproof native (stream receipt)",
                "native-json": "loadproof native (v1 document)",
                "native-https": "loadproof native, https (stream receipt)"}[engine]
        print(f"| {rate:.0f} | {name} | {n} | {sent} | {ok} | {achieved:.1f} | {p50:.3f} | {p99:.3f} | {mx:.3f} |")
    by = {(r[0], r[1]): r for r in rows}
    for rate in sorted({r[0] for r in rows}):
        v, nat = by.get((rate, "vllm")), by.get((rate, "native"))
        if v and nat and nat[7] > 0:
            print(f"\n{rate:.0f} req/s: lag p99 vllm/native = {v[7] / nat[7]:.1f}x; achieved vllm {v[5]:.1f} vs native {nat[5]:.1f}")
        tls = by.get((rate, "native-https"))
        if tls and nat and nat[7] > 0:
            print(f"{rate:.0f} req/s: native lag p99 over https {tls[7]:.3f} ms vs plain http {nat[7]:.3f} ms "
                  f"({tls[7] / nat[7]:.2f}x); achieved {tls[5]:.1f} vs {nat[5]:.1f} req/s")
        doc = by.get((rate, "native-json"))
        if doc and nat:
            print(f"{rate:.0f} req/s: native lag p99 with the receipt streamed {nat[7]:.3f} ms vs written at the end "
                  f"{doc[7]:.3f} ms; max {nat[8]:.3f} vs {doc[8]:.3f} ms")


if __name__ == "__main__":
    main()
