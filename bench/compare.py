"""Times `loadproof trace inspect --json` against the polars and csv-module baselines.

Usage: python3 compare.py --file CSV --loadproof BIN [--runs 3]

Each tool runs --runs times under `/usr/bin/time -v`; the table shows the fastest wall time, the
CPU time (user + sys, all threads) of that run, and the largest "Maximum resident set size" over
the runs. The three must agree on the emitted
count, rate, burstiness, percentiles and sha256, or a mismatch is printed and the exit code is 3.
Exit code 4 means loadproof missed its targets (only with --enforce-targets).
"""

import argparse
import json
import os
import sys

from gnu_time import run_timed

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_S = 0.5
TARGET_MB = 150.0
REL_TOL = 1e-9
FLOAT_KEYS = ("rate_rps", "burstiness", "input_p50", "input_p95", "output_p50", "output_p95")


def loadproof_values(stdout):
    report = json.loads(stdout)
    regime = report.get("regime") or {}
    return {
        "emitted": report["emitted"],
        "rate_rps": regime.get("rate_rps"),
        "burstiness": regime.get("burstiness"),
        "input_p50": regime.get("input_tokens", {}).get("p50"),
        "input_p95": regime.get("input_tokens", {}).get("p95"),
        "output_p50": regime.get("output_tokens", {}).get("p50"),
        "output_p95": regime.get("output_tokens", {}).get("p95"),
        "sha256": report["source_sha256"],
    }


def python_values(stdout):
    lines = [line for line in stdout.splitlines() if line.strip()]
    return json.loads(lines[-1])


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b), 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--loadproof", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--enforce-targets", action="store_true")
    args = ap.parse_args()

    tools = [
        ("loadproof", [args.loadproof, "trace", "inspect", args.file, "--json"], loadproof_values),
        ("polars", [sys.executable, os.path.join(HERE, "polars_inspect.py"), args.file], python_values),
        ("python csv", [sys.executable, os.path.join(HERE, "csv_inspect.py"), args.file], python_values),
    ]
    results = {}
    for name, cmd, parse in tools:
        runs, values = [], None
        for i in range(args.runs):
            wall, cpu, rss, out, _ = run_timed(cmd)
            runs.append((wall, cpu, rss))
            values = parse(out)
            print(
                f"  {name} run {i + 1}/{args.runs}: {wall:.3f} s wall, {cpu:.2f} s cpu, {rss:.1f} MB",
                file=sys.stderr,
                flush=True,
            )
        best = min(runs)
        results[name] = {
            "seconds": best[0],
            "cpu": best[1],
            "rss_mb": max(r[2] for r in runs),
            "values": values,
        }

    size_mb = os.path.getsize(args.file) / 1e6
    ref = results["loadproof"]
    print()
    print(f"file: {args.file} ({size_mb:.1f} MB, {ref['values']['emitted']} rows emitted); best of {args.runs}")
    print(f"{'tool':<12} {'seconds':>9} {'cpu s':>7} {'peak RSS MB':>12} {'time ratio':>11} {'RSS ratio':>10}")
    for name, r in results.items():
        print(
            f"{name:<12} {r['seconds']:>9.3f} {r['cpu']:>7.2f} {r['rss_mb']:>12.1f} "
            f"{r['seconds'] / ref['seconds']:>10.2f}x {r['rss_mb'] / ref['rss_mb']:>9.2f}x"
        )

    mismatches = []
    for name, r in results.items():
        if name == "loadproof":
            continue
        for key in ("emitted", "sha256"):
            if r["values"][key] != ref["values"][key]:
                mismatches.append(f"{key}: loadproof={ref['values'][key]!r} {name}={r['values'][key]!r}")
        for key in FLOAT_KEYS:
            if not close(ref["values"][key], r["values"][key]):
                mismatches.append(f"{key}: loadproof={ref['values'][key]!r} {name}={r['values'][key]!r}")
    print()
    if mismatches:
        print("!" * 72)
        print("!!! MISMATCH between loadproof and the baselines:")
        for m in mismatches:
            print(f"!!!   {m}")
        print("!" * 72)
    else:
        v = ref["values"]
        print(
            f"agree: emitted={v['emitted']} rate={v['rate_rps']:.6f}/s D={v['burstiness']:.6f} "
            f"input p50/p95={v['input_p50']}/{v['input_p95']} output p50/p95={v['output_p50']}/{v['output_p95']} "
            f"sha256={v['sha256'][:16]}…"
        )

    pl_, py = results["polars"], results["python csv"]
    print(
        f"loadproof: {ref['seconds']:.2f} s, {ref['rss_mb']:.0f} MB; "
        f"polars {pl_['seconds']:.2f} s ({pl_['seconds'] / ref['seconds']:.1f}x), "
        f"python csv {py['seconds']:.2f} s ({py['seconds'] / ref['seconds']:.1f}x)"
    )
    met = ref["seconds"] <= TARGET_S and ref["rss_mb"] <= TARGET_MB
    print(
        f"target (≤ {TARGET_S} s and ≤ {TARGET_MB:.0f} MB): {'MET' if met else 'MISSED'} "
        f"({ref['seconds']:.2f} s, {ref['rss_mb']:.0f} MB)"
    )
    if mismatches:
        return 3
    if args.enforce_targets and not met:
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
