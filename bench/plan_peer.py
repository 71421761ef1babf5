"""The Python peer of `loadproof plan`: the predecessor's replay pipeline, RE-IMPLEMENTED from its
specification (/work/shared/research/python-peer-spec.md), not the predecessor's own code.

Usage: python3 plan_peer.py TRACE.csv OUT_DIR

What it does, section by section of the spec (only what a BurstGPT_1 CSV needs):
  §2   read_burstgpt: csv module, columns found by name, the per-row order of decisions (malformed,
       missing, non-numeric, t0 and monotonicity, filters (none given here), lengths), the finish
       step (span of emitted rows, sha256 of the raw file, the reconciliation invariant).
  §4.1 write_timed_trace: OUT_DIR/timed_trace.jsonl, one `json.dumps` object per request with the
       keys timestamp (seconds, `round(arrival_s, 6)`), input_length, output_length, hash_ids
       (synthesized: ceil(input / 512) fresh ids per request from one counter starting at 0).
  §4.4 read_timed_trace: the Mooncake JSONL reader with time_scale 1.0 on the file just written.
  §5   compare: request_count, arrival_ks (both sides quantized to whole microseconds,
       round-half-even), input_len_ks, output_len_ks, rate_rps, burstiness (index of dispersion at
       1 s bins, each trace with its own span), rel() and the two-sample KS as defined there.

Prints one JSON line on stdout: the counts, token sums, both sides' rate and D, the six
statistics, whether every statistic is within the spec's REPLAY thresholds and whether every one
is exactly 0, and the wall seconds of each phase.

Stdlib only. Requests are `collections.namedtuple` records (the spec says "immutable value type"
without naming one; a namedtuple is the lightest such type, so if anything this flatters the peer).
"""

import bisect
import collections
import csv
import hashlib
import json
import math
import os
import sys
import time

# §1.1 CanonicalRequest, immutable.
CanonicalRequest = collections.namedtuple(
    "CanonicalRequest",
    ["arrival_s", "input_tokens", "output_tokens", "session_id", "prefix_blocks", "source_e2e_latency_s"],
)

BURSTGPT_CORE = ["Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type"]
SYNTHETIC_BLOCK_TOKENS = 512
DEFAULT_BIN_S = 1.0
# §5 REPLAY_THRESHOLDS
REPLAY = {"ks": 0.001, "rate": 1e-6, "burstiness": 1e-6, "count": 0.0}


class Meta:
    """§1.3 TraceMeta, only the fields the pipeline reads."""

    def __init__(self, source, path):
        self.source = source
        self.path = path
        self.sha256 = None
        self.rows_read = 0
        self.rows_emitted = 0
        self.drops = {}
        self.span_s = 0.0
        self.has_prefix_identity = False
        self.prefix_block_tokens = None
        self.notes = []

    def dropped(self):
        return sum(self.drops.values())


class Trace:
    """§1.4: construction enforces the reconciliation invariant."""

    def __init__(self, meta, requests):
        if meta.rows_emitted != len(requests):
            raise ValueError(
                f"TraceMeta.rows_emitted={meta.rows_emitted} disagrees with {len(requests)} requests"
                " — provenance must reconcile"
            )
        if meta.rows_read != meta.rows_emitted + meta.dropped():
            raise ValueError(
                f"rows_read={meta.rows_read} != emitted={meta.rows_emitted} + dropped={meta.dropped()}"
                " — a row went missing unattributed"
            )
        self.meta = meta
        self.requests = requests

    def arrivals(self):
        return [r.arrival_s for r in self.requests]

    def rate_rps(self):
        # §1.4: n (not n − 1) over the span.
        return len(self.requests) / self.meta.span_s if self.meta.span_s > 0 else 0.0


def _drop(drops, reason):
    drops[reason] = drops.get(reason, 0) + 1


def _length_defect(inp, out):
    """§2.1 length check, in the spec's order."""
    if inp < 0 or (out is not None and out < 0):
        return "negative_value"
    if inp == 0:
        return "zero_input_tokens"
    if out == 0:
        return "zero_output_tokens"
    return None


def _file_sha256(path):
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def _finish(meta, requests, path):
    """§2.1 Finish."""
    meta.rows_emitted = len(requests)
    meta.span_s = requests[-1].arrival_s - requests[0].arrival_s if len(requests) >= 2 else 0.0
    meta.sha256, size = _file_sha256(path)
    if any(r.output_tokens is None for r in requests):
        meta.notes.append("some requests carry no output length; replay-as-is is not valid")
    meta.notes.append(f"raw file {size} bytes")
    return Trace(meta, requests)


def read_burstgpt(path, model=None, log_type=None, max_rows=None):
    """§2.2 for the BurstGPT_1/_2 layout (the 8-column layout's optional columns are not needed)."""
    meta = Meta("burstgpt", str(path))
    drops = meta.drops
    requests = []
    append = requests.append
    t0 = None
    last_ts = None
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: empty file, not a BurstGPT CSV")
        header = [h.strip() for h in header]
        missing = [c for c in BURSTGPT_CORE if c not in header]
        if missing:
            raise ValueError(f"{path}: not a BurstGPT CSV — missing column(s) {missing}; header was {header}")
        ncols = len(header)
        i_ts = header.index("Timestamp")
        i_model = header.index("Model")
        i_req = header.index("Request tokens")
        i_resp = header.index("Response tokens")
        i_log = header.index("Log Type")
        extra = [h for h in header if h not in BURSTGPT_CORE and h not in ("Session ID", "Elapsed time")]
        rows_read = 0
        for row in reader:
            if max_rows is not None and rows_read >= max_rows:
                break
            rows_read += 1
            # 1. cell count (a blank line is a zero-cell row: malformed, quirk Q4)
            if len(row) != ncols:
                _drop(drops, "malformed_row")
                continue
            row = [c.strip() for c in row]
            # 2–3. timestamp
            ts_cell = row[i_ts]
            if not ts_cell:
                _drop(drops, "missing_field")
                continue
            try:
                ts = float(ts_cell)
            except ValueError:
                _drop(drops, "non_numeric")
                continue
            # 4. anchor and monotonicity (last_ts advances before the drop decision)
            if t0 is None:
                t0 = ts
            if last_ts is not None and ts < last_ts:
                last_ts = max(last_ts, ts)
                _drop(drops, "non_monotonic_arrival")
                continue
            last_ts = ts if last_ts is None else max(last_ts, ts)
            # 5–6. token cells
            req_cell, resp_cell = row[i_req], row[i_resp]
            if not req_cell or not resp_cell:
                _drop(drops, "missing_field")
                continue
            try:
                inp = int(req_cell)
                out = int(resp_cell)
            except ValueError:
                _drop(drops, "non_numeric")
                continue
            # 7. caller filters precede the length check
            if (model is not None and row[i_model] != model) or (
                log_type is not None and row[i_log] != log_type
            ):
                _drop(drops, "filtered_out")
                continue
            # 8. lengths
            defect = _length_defect(inp, out)
            if defect:
                _drop(drops, defect)
                continue
            # 10. emit (no Session ID / Elapsed time columns in this layout)
            append(CanonicalRequest(ts - t0, inp, out, None, (), None))
    meta.rows_read = rows_read
    meta.notes.append("columns: " + ", ".join(header))
    meta.notes.append("no session identity in this layout (BurstGPT_1/_2)")
    meta.notes.append("BurstGPT carries no prefix identity in any layout")
    if extra:
        meta.notes.append("unrecognized columns ignored: " + ", ".join(extra))
    if model is not None or log_type is not None:
        meta.notes.append(f"filtered: model={model!r} log_type={log_type!r}")
    return _finish(meta, requests, path)


def write_timed_trace(trace, out, block_tokens=None):
    """§4.1: returns the plan's numbers (path, requests, totals, chunk size, synthesized ids)."""
    missing = sum(1 for r in trace.requests if r.output_tokens is None)
    if missing:
        raise ValueError(
            f"{missing} of {len(trace.requests)} requests have no output length; replay-as-is is"
            " undefined for them — use gitm.traffic.parameterize"
        )
    meta = trace.meta
    if block_tokens is None:
        block_tokens = meta.prefix_block_tokens if meta.has_prefix_identity else SYNTHETIC_BLOCK_TOKENS
    if block_tokens <= 0:
        raise ValueError("block_tokens must be positive — ...")
    synthesized = not meta.has_prefix_identity
    counter = 0
    input_total = 0
    output_total = 0
    dumps = json.dumps
    ceil = math.ceil
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        write = f.write
        for i, r in enumerate(trace.requests):
            if synthesized or not r.prefix_blocks:
                k = ceil(r.input_tokens / block_tokens)
                ids = list(range(counter, counter + k))
                counter += k
            else:
                ids = list(r.prefix_blocks)
                if len(ids) * block_tokens < r.input_tokens:
                    raise ValueError(
                        f"request {i}: {len(ids)} blocks x {block_tokens} tokens cannot cover"
                        f" input_tokens={r.input_tokens}. The prompt would be silently truncated"
                    )
            write(
                dumps(
                    {
                        "timestamp": round(r.arrival_s, 6),
                        "input_length": r.input_tokens,
                        "output_length": r.output_tokens,
                        "hash_ids": ids,
                    }
                )
                + "\n"
            )
            input_total += r.input_tokens
            output_total += r.output_tokens or 0
    return {
        "path": str(out),
        "requests": len(trace.requests),
        "span_s": meta.span_s,
        "input_tokens_total": input_total,
        "output_tokens_total": output_total,
        "chunk_hash_size": block_tokens,
        "sec_multiplier": 1.0,
        "self_timed": True,
        "prefix_synthesized": synthesized,
        "synthesized_ids": counter,
    }


def _is_int(v):
    return isinstance(v, int)  # a JSON boolean is a Python bool, an int: accepted (quirk Q3)


def read_mooncake(path, block_tokens=512, max_rows=None, time_scale=0.001, source="mooncake"):
    """§2.3, which §4.4's read_timed_trace calls with time_scale 1.0."""
    meta = Meta(source, str(path))
    drops = meta.drops
    requests = []
    append = requests.append
    t0 = None
    last_ts = None
    rows_read = 0
    loads = json.loads
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue  # blank JSONL lines are skipped and not counted
            if max_rows is not None and rows_read >= max_rows:
                break
            rows_read += 1
            try:
                obj = loads(line)
            except ValueError:
                _drop(drops, "malformed_row")
                continue
            if not isinstance(obj, dict):
                _drop(drops, "malformed_row")
                continue
            if "timestamp" not in obj:
                _drop(drops, "missing_field")
                continue
            try:
                ts = float(obj["timestamp"])
            except (TypeError, ValueError):
                _drop(drops, "non_numeric")
                continue
            if t0 is None:
                t0 = ts
            if last_ts is not None and ts < last_ts:
                last_ts = max(last_ts, ts)
                _drop(drops, "non_monotonic_arrival")
                continue
            last_ts = ts if last_ts is None else max(last_ts, ts)
            if "input_length" not in obj or "output_length" not in obj:
                _drop(drops, "missing_field")
                continue
            try:
                inp = int(obj["input_length"])
                out = int(obj["output_length"])
            except (TypeError, ValueError):
                _drop(drops, "non_numeric")
                continue
            defect = _length_defect(inp, out)
            if defect:
                _drop(drops, defect)
                continue
            hash_ids = obj.get("hash_ids") or []
            if not isinstance(hash_ids, list) or not all(_is_int(h) for h in hash_ids):
                _drop(drops, "malformed_row")
                continue
            append(CanonicalRequest((ts - t0) * time_scale, inp, out, None, tuple(hash_ids), None))
    meta.rows_read = rows_read
    meta.has_prefix_identity = any(r.prefix_blocks for r in requests)
    meta.prefix_block_tokens = block_tokens if meta.has_prefix_identity else None
    meta.notes.append(f"hash_ids read as {block_tokens}-token cache blocks")
    return _finish(meta, requests, path)


def read_timed_trace(path, source="timed_trace"):
    """§4.4."""
    return read_mooncake(path, time_scale=1.0, source=source)


def rel(a, b):
    """§5."""
    if a != 0:
        return abs(a - b) / abs(a)
    return 0.0 if b == 0 else 1.0


def ks(a, b):
    """§5: two-sample KS, both right-continuous ECDFs evaluated at every value of the concatenated
    samples (each distinct value once: the same maximum), maximum absolute difference; 1.0 if
    either sample is empty."""
    if not a or not b:
        return 1.0
    a = sorted(a)
    b = sorted(b)
    na, nb = len(a), len(b)
    br = bisect.bisect_right
    d = 0.0
    for x in set(a).union(b):
        diff = abs(br(a, x) / na - br(b, x) / nb)
        if diff > d:
            d = diff
    return d


def index_of_dispersion(arrivals, bin_s, span_s):
    """§3.2: population variance / mean of per-bin counts, bins from arrival 0, ceil(span/bin) of
    them, the last clamping (quirk Q1), empty bins counted."""
    if span_s <= 0 or len(arrivals) < 2:
        return 1.0
    nbins = max(math.ceil(span_s / bin_s), 1)
    if nbins < 2:
        return 1.0
    counts = [0] * nbins
    last = nbins - 1
    for t in arrivals:
        k = int(t // bin_s)
        counts[k if k < last else last] += 1
    mean = math.fsum(counts) / nbins
    if mean == 0:
        return 1.0
    var = math.fsum((c - mean) ** 2 for c in counts) / nbins
    return var / mean


def _micro(xs):
    # round-half-even of x / 1e-6 (Python's round)
    return [round(x / 1e-6) for x in xs]


def compare(source, replayed, bin_s=DEFAULT_BIN_S):
    """§5 with REPLAY_THRESHOLDS (arrival times checked)."""
    n_s, n_r = len(source.requests), len(replayed.requests)
    d_s = index_of_dispersion(source.arrivals(), bin_s, source.meta.span_s)
    d_r = index_of_dispersion(replayed.arrivals(), bin_s, replayed.meta.span_s)
    checks = {
        "request_count": (rel(n_s, n_r), REPLAY["count"]),
        "arrival_ks": (ks(_micro(source.arrivals()), _micro(replayed.arrivals())), REPLAY["ks"]),
        "input_len_ks": (
            ks([r.input_tokens for r in source.requests], [r.input_tokens for r in replayed.requests]),
            REPLAY["ks"],
        ),
        "output_len_ks": (
            ks(
                [r.output_tokens for r in source.requests if r.output_tokens is not None],
                [r.output_tokens for r in replayed.requests if r.output_tokens is not None],
            ),
            REPLAY["ks"],
        ),
        "rate_rps": (rel(source.rate_rps(), replayed.rate_rps()), REPLAY["rate"]),
        "burstiness": (rel(d_s, d_r), REPLAY["burstiness"]),
    }
    return checks, d_s, d_r


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    src_path, out_dir = argv[1], argv[2]
    os.makedirs(out_dir, exist_ok=True)
    out_path = os.path.join(out_dir, "timed_trace.jsonl")
    phases = {}

    t = time.perf_counter()
    source = read_burstgpt(src_path)
    phases["read_source"] = time.perf_counter() - t

    t = time.perf_counter()
    plan = write_timed_trace(source, out_path)
    phases["write_timed_trace"] = time.perf_counter() - t

    t = time.perf_counter()
    replayed = read_timed_trace(out_path)
    phases["read_back"] = time.perf_counter() - t

    t = time.perf_counter()
    checks, d_s, d_r = compare(source, replayed)
    phases["compare"] = time.perf_counter() - t

    result = {
        "peer": "python re-implementation of the predecessor's spec (not its own code)",
        "source_sha256": source.meta.sha256,
        "rows_read": source.meta.rows_read,
        "emitted": len(source.requests),
        "drops": source.meta.drops,
        "lines_written": plan["requests"],
        "lines_read_back": len(replayed.requests),
        "file_bytes": os.path.getsize(out_path),
        "synthesized_ids": plan["synthesized_ids"],
        "input_tokens_total": plan["input_tokens_total"],
        "output_tokens_total": plan["output_tokens_total"],
        "readback_input_tokens_total": sum(r.input_tokens for r in replayed.requests),
        "readback_output_tokens_total": sum(r.output_tokens for r in replayed.requests),
        "span_s": source.meta.span_s,
        "rate_rps": source.rate_rps(),
        "readback_rate_rps": replayed.rate_rps(),
        "burstiness": d_s,
        "readback_burstiness": d_r,
        "statistics": {name: stat for name, (stat, _) in checks.items()},
        "pass": all(stat <= thr for stat, thr in checks.values()),
        "all_zero": all(stat == 0 for stat, _ in checks.values()),
        "phases_s": {k: round(v, 3) for k, v in phases.items()},
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
