"""Baseline: the statistics of `loadproof trace inspect` with polars.

Usage: python3 polars_inspect.py FILE   (BurstGPT CSV; prints one JSON line, see inspect_stats.py)

Reads the whole CSV with `pl.read_csv` (all columns, types inferred, as a user would), then
computes the same numbers with polars expressions; only the sha256 is hashlib.
"""

import os
import sys

import polars as pl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_stats import WINDOW_NS, dispersion, emit, sha256_file  # noqa: E402


def main(path):
    df = pl.read_csv(path)
    ts = pl.col("Timestamp")
    if df.schema["Timestamp"].is_integer():
        ts_ns = ts.cast(pl.Int64) * 1_000_000_000
    else:
        ts_ns = (ts.cast(pl.Float64) * 1e9).round().cast(pl.Int64)
    kept = df.filter((pl.col("Request tokens") > 0) & (pl.col("Response tokens") > 0)).select(
        ts_ns.alias("t"),
        pl.col("Request tokens").alias("i"),
        pl.col("Response tokens").alias("o"),
    )
    n = kept.height
    if n and not kept["t"].is_sorted():
        raise SystemExit("polars: arrivals not in order; baseline assumes a sorted file")
    t0 = kept["t"][0] if n else 0
    rel = kept.select(((pl.col("t") - t0) // WINDOW_NS).alias("k"))
    span_ns = (kept["t"][-1] - t0) if n else 0
    sum_sq = int(rel.group_by("k").len().select((pl.col("len").cast(pl.Int64) ** 2).sum()).item() or 0)
    q = kept.select(
        pl.col("i").quantile(0.50, "linear").alias("i50"),
        pl.col("i").quantile(0.95, "linear").alias("i95"),
        pl.col("o").quantile(0.50, "linear").alias("o50"),
        pl.col("o").quantile(0.95, "linear").alias("o95"),
    ).row(0, named=True)
    emit(
        "polars",
        emitted=n,
        rate_rps=(n / (span_ns / 1e9)) if span_ns > 0 else None,
        burstiness=dispersion(n, span_ns, sum_sq),
        input_p50=q["i50"],
        input_p95=q["i95"],
        output_p50=q["o50"],
        output_p95=q["o95"],
        sha256=sha256_file(path),
    )


if __name__ == "__main__":
    main(sys.argv[1])
