"""Baseline: the statistics of `loadproof trace inspect` in pure Python with the csv module.

Usage: python3 csv_inspect.py FILE   (BurstGPT CSV; prints one JSON line, see inspect_stats.py)
"""

import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_stats import WINDOW_NS, dispersion, emit, percentile_linear, sha256_file  # noqa: E402


def ts_ns(cell):
    cell = cell.strip()
    if "." in cell or "e" in cell or "E" in cell:
        return round(float(cell) * 1e9)
    return int(cell) * 1_000_000_000


def main(path):
    arrivals = []
    inputs = []
    outputs = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = [h.strip() for h in next(reader)]
        ti = header.index("Timestamp")
        ri = header.index("Request tokens")
        oi = header.index("Response tokens")
        for row in reader:
            if not row:
                continue
            i = int(row[ri])
            o = int(row[oi])
            if i == 0 or o == 0:
                continue
            arrivals.append(ts_ns(row[ti]))
            inputs.append(i)
            outputs.append(o)
    n = len(arrivals)
    t0 = arrivals[0] if n else 0
    last = t0
    sum_sq = 0
    current = None
    run = 0
    for t in arrivals:
        if t < last:
            raise SystemExit(f"csv: arrivals not in order ({t} after {last}); baseline assumes a sorted file")
        last = t
        k = (t - t0) // WINDOW_NS
        if k == current:
            run += 1
        else:
            sum_sq += run * run
            current = k
            run = 1
    sum_sq += run * run
    span_ns = last - t0
    inputs.sort()
    outputs.sort()
    emit(
        "python csv",
        emitted=n,
        rate_rps=(n / (span_ns / 1e9)) if span_ns > 0 else None,
        burstiness=dispersion(n, span_ns, sum_sq),
        input_p50=percentile_linear(inputs, 0.50),
        input_p95=percentile_linear(inputs, 0.95),
        output_p50=percentile_linear(outputs, 0.50),
        output_p95=percentile_linear(outputs, 0.95),
        sha256=sha256_file(path),
    )


if __name__ == "__main__":
    main(sys.argv[1])
