#!/usr/bin/env python3
"""Replay fidelity of four load generators on the same plans: loadproof's native client,
`vllm bench serve`, AIPerf and GuideLLM, each fired by `loadproof fire --engine E` and judged
by `loadproof receipt audit --json` from its own records.

1. Uniform schedules against `loadproof sim` (fast model knobs, so the server is not the
   bottleneck) at each RATE for SECONDS: requests completed and failed, completed per second
   over the tool's own interval (first send -> last end), dispatch lag (send - schedule)
   p50 / p99 / max from each tool's records, and the fire's wall time (start-up included).
   vLLM keeps send times only on its own perf_counter, so its lag is relative to its first
   send (reads 0 for the first request; if anything it flatters vLLM); AIPerf records no
   schedule, so its zero is its least-late credit (see the README).
2. A real trace plan (Mooncake conversation, first TRACE_ROWS rows, chunk 512, sped up
   TRACE_SCALE x) against the sim and, with VLLM_URL set, a real vLLM: prompt tokens the
   engine counted against the plan's (the sim counts a text prompt as ceil(bytes/4), so only
   token-id prompts are exact there; a real vLLM tokenizes what it is sent), output tokens,
   requests completed.

Usage: replay_fidelity.py LOADPROOF_BIN WORK_DIR SHARED_DIR [RATE:SECONDS... | none]
       (default 200:10 1000:4 5000:1; `none` skips part 1)
Env:   VLLM_LAB_PYTHON, VLLM_LAB_TOKENIZER (tools/vllm-lab), PEERS_AIPERF_PYTHON,
       PEERS_GUIDELLM_PYTHON (tools/peers/install.sh env), VLLM_URL (optional), TRACE_ROWS
       (default 200), TRACE_SCALE (default 20), SIM=0 (part 2 at vLLM only). Prints markdown
       tables.
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fire_compare import start_sim, uniform_trace  # noqa: E402

ENGINES = ("native", "vllm", "aiperf", "guidellm")


def engine_args(engine):
    tok = os.environ["VLLM_LAB_TOKENIZER"]
    python = {
        "vllm": os.environ.get("VLLM_LAB_PYTHON"),
        "aiperf": os.environ.get("PEERS_AIPERF_PYTHON"),
        "guidellm": os.environ.get("PEERS_GUIDELLM_PYTHON"),
    }.get(engine)
    if engine != "native" and not python:
        return None
    return ["--engine", engine, "--tokenizer", tok] + (["--python", python] if python else [])


def fire(lp, plan_dir, url, engine, out, env):
    args = engine_args(engine)
    if args is None:
        return None
    started = time.monotonic()
    res = subprocess.run([lp, "fire", plan_dir, "--endpoint", url, "--out", out,
                          "--scrape-interval-ms", "500", *args], env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if not os.path.exists(out):
        print(f"  {engine}: no receipt (exit {res.returncode}): {res.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    a = json.loads(subprocess.run([lp, "receipt", "audit", out, "--json"], capture_output=True,
                                  text=True, check=True).stdout)
    return a, wall, res.returncode


def fmt(x, digits=1):
    return "–" if x is None else f"{x:,.{digits}f}"


def main():
    lp, work, shared = sys.argv[1:4]
    specs = sys.argv[4:] or ["200:10", "1000:4", "5000:1"]
    if specs == ["none"]:
        specs = []
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TORCHINDUCTOR_CACHE_DIR": os.path.join(work, "inductor-cache")}
    os.makedirs(work, exist_ok=True)
    print("| target req/s | client | requests | completed | failed | completed/s | lag p50 ms | lag p99 ms | lag max ms | fire wall s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for spec in specs:
        rate, seconds = (float(x) for x in spec.split(":"))
        trace = os.path.join(work, f"uniform_{int(rate)}.jsonl")
        n = uniform_trace(trace, rate, seconds)
        plan_dir = os.path.join(work, f"plan_{int(rate)}")
        subprocess.run([lp, "plan", trace, "--out", plan_dir, "--model", "sim"], check=True,
                       stdout=subprocess.DEVNULL)
        for engine in ENGINES:
            sim, url = start_sim(lp)
            try:
                got = fire(lp, plan_dir, url, engine, os.path.join(work, f"r_{int(rate)}_{engine}.receipt"), env)
            finally:
                sim.terminate()
                sim.wait(timeout=10)
            if got is None:
                continue
            a, wall, code = got
            ledger, client, arrival = a.get("ledger") or {}, a.get("client") or {}, a.get("arrival") or {}
            per_s = (ledger.get("completed", 0) / client["duration_s"]) if client.get("duration_s") else None
            print(f"| {rate:,.0f} | {engine} | {n:,} | {ledger.get('completed', '–')} | {ledger.get('failed', '–')} "
                  f"| {fmt(per_s)} | {fmt(arrival.get('lag_p50_ms'), 2)} | {fmt(arrival.get('lag_p99_ms'), 2)} "
                  f"| {fmt(arrival.get('lag_max_ms'), 2)} | {wall:.1f} |", flush=True)

    rows = os.environ.get("TRACE_ROWS", "200")
    scale = os.environ.get("TRACE_SCALE", "20")
    mooncake = os.path.join(shared, "traces/mooncake/conversation_trace.jsonl")
    plan_dir = os.path.join(work, "plan_mooncake")
    subprocess.run([lp, "plan", mooncake, "--out", plan_dir, "--max-requests", rows, "--time-scale", scale,
                    "--model", "tiny-llama"], check=True, stdout=subprocess.DEVNULL)
    doc = json.load(open(os.path.join(plan_dir, "plan.json")))
    planned_in = doc["timed_trace"]["input_tokens_total"]
    planned_out = doc["timed_trace"]["output_tokens_total"]
    print()
    print(f"Mooncake conversation, first {rows} rows at {scale}x, chunk 512: the plan asks for "
          f"{planned_in:,} prompt and {planned_out:,} output tokens.")
    print()
    print("| server | client | completed | engine prompt tokens | vs plan | engine output tokens | vs plan | lag p99 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    targets = ([("loadproof sim", None)] if os.environ.get("SIM") != "0" else []) + ([("vLLM (lab)", os.environ["VLLM_URL"])] if os.environ.get("VLLM_URL") else [])
    for server, url in targets:
        for engine in ENGINES:
            sim = None
            if url is None:
                sim, target = subprocess.Popen([lp, "sim", "--port", "0", "--model", "tiny-llama"],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True), None
                line = sim.stderr.readline().strip()
                target = line.removeprefix("loadproof sim listening on ").removesuffix(" (simulator, not vLLM)")
            else:
                target = url
            try:
                got = fire(lp, plan_dir, target, engine, os.path.join(work, f"r_mooncake_{engine}_{server[:4]}.receipt"), env)
            finally:
                if sim:
                    sim.terminate()
                    sim.wait(timeout=10)
            if got is None:
                continue
            a, _, _ = got
            e = a.get("engine") or {}
            p, g = e.get("prompt_tokens_delta"), e.get("generation_tokens_delta")
            print(f"| {server} | {engine} | {(a.get('ledger') or {}).get('completed', '–')} | {fmt(p, 0)} "
                  f"| {('–' if p is None else f'{p - planned_in:+,}')} | {fmt(g, 0)} "
                  f"| {('–' if g is None else f'{g - planned_out:+,}')} | {fmt((a.get('arrival') or {}).get('lag_p99_ms'), 2)} |",
                  flush=True)


if __name__ == "__main__":
    main()
