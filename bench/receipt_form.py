#!/usr/bin/env python3
"""Prints the v1 document and the record stream of one receipt side by side: size, audit wall
time and peak RSS (best of RUNS), and checks the two audits are byte-identical.
Usage: receipt_form.py BIN V1.json STREAM RUNS"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gnu_time import run_timed  # noqa: E402

BIN, V1, STREAM, RUNS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def audit(path):
    runs = [run_timed([BIN, "receipt", "audit", path, "--json"]) for _ in range(RUNS)]
    wall, cpu, rss, out, _ = min(runs, key=lambda r: r[0])
    return wall, cpu, rss, out


t = time.perf_counter()
packed = subprocess.run(["zstd", "-3", "--long=27", "-c", V1], check=True,
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
zstd_s = time.perf_counter() - t
rows = []
outs = []
for name, path in (("v1 JSON document", V1), ("record stream", STREAM)):
    wall, cpu, rss, out = audit(path)
    outs.append(out)
    rows.append((name, os.path.getsize(path), wall, cpu, rss))
print(f"{'form':<20} {'file':>12} {'audit wall':>11} {'cpu':>8} {'peak RSS':>9}")
for name, size, wall, cpu, rss in rows:
    print(f"{name:<20} {size / 1e6:>10.2f}MB {wall * 1e3:>9.0f}ms {cpu * 1e3:>6.0f}ms "
          f"{rss:>7.0f}MB")
print(f"{'zstd -3 --long=27':<20} {len(packed) / 1e6:>10.2f}MB  (of the v1 file, {zstd_s:.2f} s; "
      f"reference only)")
v1, st = rows
print(f"stream / v1: size {st[1] / v1[1]:.4f} ({v1[1] / st[1]:.0f}x smaller), audit time "
      f"{st[2] / v1[2]:.2f}x, RSS {st[4] / v1[4]:.2f}x; audits identical: {outs[0] == outs[1]}")
if outs[0] != outs[1]:
    raise SystemExit("the two forms audit differently")
