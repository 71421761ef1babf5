#!/usr/bin/env python3
"""Times `loadproof receipt audit RECEIPT --json` (best of RUNS under GNU time) and prints it
against the 300 ms target, with what the audit found. Usage: audit_time.py BIN RECEIPT RUNS"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gnu_time import run_timed  # noqa: E402

BIN, RECEIPT, RUNS = sys.argv[1], sys.argv[2], int(sys.argv[3])
TARGET_MS = 300
runs = [run_timed([BIN, "receipt", "audit", RECEIPT, "--json"]) for _ in range(RUNS)]
wall, cpu, rss, out, _ = min(runs, key=lambda r: r[0])
audit = json.loads(out)
size = os.path.getsize(RECEIPT)
print(f"receipt: {size / 1e6:.1f} MB, {audit['ledger']['offered']} requests, "
      f"{audit['occupancy']['samples']} during-run scrapes, qualified={audit['qualified']}")
print(f"{'tool':<34} {'wall':>8} {'cpu':>8} {'peak RSS':>10}")
print(f"{'loadproof receipt audit --json':<34} {wall * 1e3:>6.0f}ms {cpu * 1e3:>6.0f}ms {rss:>8.0f}MB")
print(f"target < {TARGET_MS} ms: {'MET' if wall * 1e3 < TARGET_MS else 'MISSED'} (best of {RUNS})")
