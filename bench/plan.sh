#!/usr/bin/env bash
# Side-by-side benchmark of `loadproof plan` (write vLLM's timed_trace JSONL from a trace, re-read
# it from disk, compare) on a 5,000,000-row BurstGPT_1 CSV against the Python peer: the
# predecessor's replay pipeline re-implemented from its spec (bench/plan_peer.py; not the
# predecessor's own code). Both must agree. See bench/README.md.
#
# Usage: bench/plan.sh [--runs N] [--rows N] [--keep]
# Env:   BENCH_NO_BUILD=1 uses target/release/loadproof as it is (default: `cargo build --release`
#        first, a no-op when it is up to date, so the numbers are never of a stale binary).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
RUNS=3
ROWS=5000000
# The generator's parameters and stamp are trace_inspect.sh's: both benches share one file.
SEED=42
RATE=5
FAILURE_SHARE=0.07
EXTRA=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    --keep) EXTRA+=(--keep); shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

source "$ROOT/bench/lib.sh"

# 1. Tools and the release binary.
ensure_gnu_time
PYTHON="${PYTHON:-python3}"
ensure_bin

# 2. The data: one cached file shared by the bench scripts.
ensure_data "$ROWS" "$SEED" "$RATE" "$FAILURE_SHARE"

# 3. Time both, check they agree, print the table.
say "timing loadproof plan and the Python peer (re-implemented from the spec), best of $RUNS"
exec "$PYTHON" "$BENCH/plan_compare.py" --file "$DATA" --loadproof "$BIN" --runs "$RUNS" "${EXTRA[@]}"
