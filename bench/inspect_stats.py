"""Shared definitions for the Python baselines of `loadproof trace inspect`.

Both baselines (polars and the csv module) print one JSON object with the keys below, computed
with the definitions loadproof documents in core/src/regime.rs and core/src/stats.rs:

- rows with 0 request or 0 response tokens are dropped;
- arrivals are rebased to the first kept row (integer nanoseconds);
- rate = kept / span, span = last arrival - first arrival;
- D = population variance / mean of the counts in 1 s windows [k, k+1), k = 0..floor(span),
  empty windows counted, computed exactly as (W*sum(c^2) - n^2) / (W*n);
- p50 / p95 by linear interpolation between order statistics (numpy's default, type 7);
- sha256 of every byte of the file.
"""

import hashlib
import json
import sys

WINDOW_NS = 1_000_000_000
KEYS = (
    "emitted",
    "rate_rps",
    "burstiness",
    "input_p50",
    "input_p95",
    "output_p50",
    "output_p95",
    "sha256",
)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 22)
            if not chunk:
                break
            h.update(chunk)
    return h.hexdigest()


def dispersion(n, span_ns, sum_sq):
    """Index of dispersion from the exact integer sums (None for fewer than two windows)."""
    windows = span_ns // WINDOW_NS + 1
    if n == 0 or windows < 2:
        return None
    return (windows * sum_sq - n * n) / (windows * n)


def percentile_linear(sorted_values, q):
    """numpy's linear percentile, with its from-below/from-above lerp."""
    if not sorted_values:
        return 0.0
    h = (len(sorted_values) - 1) * q
    lo = int(h)
    frac = h - lo
    a = float(sorted_values[lo])
    b = float(sorted_values[min(lo + 1, len(sorted_values) - 1)])
    diff = b - a
    return b - diff * (1.0 - frac) if frac >= 0.5 else a + diff * frac


def emit(tool, **values):
    out = {"tool": tool}
    out.update(values)
    missing = [k for k in KEYS if k not in out]
    if missing:
        raise SystemExit(f"{tool}: missing {missing}")
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
