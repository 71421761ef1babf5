"""Times `loadproof plan FILE --out DIR --json` against the Python peer (plan_peer.py).

Usage: python3 plan_compare.py --file CSV --loadproof BIN [--runs 3] [--work DIR] [--keep]

The peer is the predecessor's replay pipeline RE-IMPLEMENTED from its specification
(python-peer-spec.md §2, §4.1, §4.4, §5), not the predecessor's own code. Both sides read the
BurstGPT CSV, write vLLM's timed_trace JSONL, re-read it from disk and compare it with the trace.

Each side runs --runs times under `/usr/bin/time -v`, each into a fresh output directory under
--work (default bench/out/plan-work, removed afterwards unless --keep). The table shows the
fastest wall time, the CPU time (user + sys, all threads) of that run and the largest "Maximum
resident set size" over the runs, plus ratios to loadproof.

They must agree on what both compute: the source's sha256, rows read, emitted, drops, lines
written, Σ input and Σ output tokens, the number of synthesized ids, rate and burstiness
(relative 1e-9), and both must pass with every read-back statistic exactly 0. Otherwise a
MISMATCH block is printed and the exit code is 3.
"""

import argparse
import json
import os
import shutil
import sys

from gnu_time import run_timed

HERE = os.path.dirname(os.path.abspath(__file__))
REL_TOL = 1e-9
PEER = "python peer"


def loadproof_values(stdout, rc):
    plan = json.loads(stdout)
    src, regime, tt = plan["source"], plan["regime"], plan["timed_trace"]
    stats = {c["name"]: c["statistic"] for c in plan["fidelity"]["checks"]}
    return {
        "source_sha256": src["sha256"],
        "rows_read": src["rows_read"],
        "emitted": src["emitted"],
        "drops": src["dropped"],
        "lines_written": tt["lines"],
        "input_tokens_total": tt["input_tokens_total"],
        "output_tokens_total": tt["output_tokens_total"],
        "synthesized_ids": tt["synthesized_ids"],
        "rate_rps": regime["rate_rps"],
        "burstiness": regime["burstiness"],
        "statistics": stats,
        "all_zero": rc == 0 and plan["verified"] and all(v == 0 for v in stats.values()),
        "file_bytes": tt["bytes"],
        "timestamp_unit": tt["timestamp_unit"],
        "sec_multiplier": tt["sec_multiplier"],
    }


def peer_values(stdout, rc):
    lines = [line for line in stdout.splitlines() if line.strip()]
    return json.loads(lines[-1])


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--loadproof", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default=os.path.join(HERE, "out", "plan-work"))
    ap.add_argument("--keep", action="store_true", help="keep the last run's output directories")
    args = ap.parse_args()

    lp_dir = os.path.join(args.work, "loadproof")
    peer_dir = os.path.join(args.work, "peer")
    tools = [
        (
            "loadproof",
            [args.loadproof, "plan", args.file, "--out", lp_dir, "--json"],
            lp_dir,
            (0, 1),  # 1 = FAIL, still a JSON plan: reported as a disagreement below
            loadproof_values,
        ),
        (
            PEER,
            [sys.executable, os.path.join(HERE, "plan_peer.py"), args.file, peer_dir],
            peer_dir,
            (0,),
            peer_values,
        ),
    ]
    results = {}
    for name, cmd, out_dir, ok_codes, parse in tools:
        runs, values = [], None
        for i in range(args.runs):
            shutil.rmtree(out_dir, ignore_errors=True)  # every run writes into a fresh directory
            wall, cpu, rss, out, rc = run_timed(cmd, ok_codes)
            values = parse(out, rc)
            runs.append((wall, cpu, rss, i, values))
            extra = ""
            if "phases_s" in values:
                extra = "  phases " + ", ".join(f"{k} {v:.2f} s" for k, v in values["phases_s"].items())
            print(
                f"  {name} run {i + 1}/{args.runs}: {wall:.3f} s wall, {cpu:.2f} s cpu, {rss:.1f} MB{extra}",
                file=sys.stderr,
                flush=True,
            )
        best = min(runs, key=lambda r: r[0])
        results[name] = {"seconds": best[0], "cpu": best[1], "rss_mb": max(r[2] for r in runs), "values": best[4]}
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)

    lp, peer = results["loadproof"], results[PEER]
    lv, pv = lp["values"], peer["values"]
    size_mb = os.path.getsize(args.file) / 1e6
    print()
    print(
        f"file: {args.file} ({size_mb:.1f} MB, {lv['rows_read']:,} rows read, {lv['emitted']:,} planned); "
        f"best of {args.runs}"
    )
    print(
        f"timed_trace.jsonl: loadproof {lv['file_bytes'] / 1e6:.1f} MB (integer {lv['timestamp_unit']}, "
        f"multiplier {lv['sec_multiplier']}), peer {pv['file_bytes'] / 1e6:.1f} MB (seconds, round(x, 6))"
    )
    print()
    print("| tool | seconds (best of {}) | CPU s | peak RSS MB | time ratio | RSS ratio |".format(args.runs))
    print("| --- | --- | --- | --- | --- | --- |")
    for name, r in results.items():
        label = f"{PEER} (re-implemented from the spec)" if name == PEER else name
        print(
            f"| {label} | {r['seconds']:.3f} | {r['cpu']:.2f} | {r['rss_mb']:.1f} | "
            f"{r['seconds'] / lp['seconds']:.2f}x | {r['rss_mb'] / lp['rss_mb']:.2f}x |"
        )
    if "phases_s" in pv:
        print()
        print("peer phases (fastest run): " + ", ".join(f"{k} {v:.2f} s" for k, v in pv["phases_s"].items()))

    mismatches = []
    for key in (
        "source_sha256",
        "rows_read",
        "emitted",
        "drops",
        "lines_written",
        "input_tokens_total",
        "output_tokens_total",
        "synthesized_ids",
    ):
        if lv[key] != pv[key]:
            mismatches.append(f"{key}: loadproof={lv[key]!r} peer={pv[key]!r}")
    if pv["lines_read_back"] != pv["lines_written"]:
        mismatches.append(f"peer read back {pv['lines_read_back']} of {pv['lines_written']} lines")
    for key in ("rate_rps", "burstiness"):
        if not close(lv[key], pv[key]):
            mismatches.append(f"{key}: loadproof={lv[key]!r} peer={pv[key]!r} (relative tolerance {REL_TOL:g})")
    if not lv["all_zero"]:
        mismatches.append(f"loadproof did not pass with every statistic 0: {lv['statistics']}")
    if not pv["all_zero"]:
        mismatches.append(f"peer did not pass with every statistic 0: {pv['statistics']}")

    print()
    if mismatches:
        print("!" * 72)
        print("!!! MISMATCH between loadproof and the peer:")
        for m in mismatches:
            print(f"!!!   {m}")
        print("!" * 72)
        return 3
    print(
        f"agree: sha256 {lv['source_sha256'][:16]}…, {lv['rows_read']:,} read, {lv['emitted']:,} planned, "
        f"drops {lv['drops']}, Σ input {lv['input_tokens_total']:,}, Σ output {lv['output_tokens_total']:,}, "
        f"{lv['synthesized_ids']:,} synthesized ids, rate {lv['rate_rps']:.9f}/s, D {lv['burstiness']:.9f}; "
        f"both PASS with every read-back statistic exactly 0 (loadproof 9 checks, peer 6)"
    )
    print(
        f"loadproof: {lp['seconds']:.2f} s, {lp['rss_mb']:.0f} MB; peer {peer['seconds']:.2f} s "
        f"({peer['seconds'] / lp['seconds']:.1f}x), {peer['rss_mb']:.0f} MB ({peer['rss_mb'] / lp['rss_mb']:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
