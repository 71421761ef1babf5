#!/usr/bin/env bash
# Side-by-side benchmark of `loadproof trace inspect` on a 5,000,000-row BurstGPT_1 CSV against
# polars and Python's csv module (same statistics, checked to agree). See bench/README.md.
#
# Usage: bench/trace_inspect.sh [--runs N] [--rows N] [--enforce-targets]
# Env:   BENCH_NO_BUILD=1 uses target/release/loadproof as it is (default: `cargo build --release`
#        first, a no-op when it is up to date, so the numbers are never of a stale binary).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/bench"
RUNS=3
ROWS=5000000
SEED=42
RATE=5
FAILURE_SHARE=0.07
EXTRA=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    --enforce-targets) EXTRA+=(--enforce-targets); shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

source "$ROOT/bench/lib.sh"

# 1. Tools and the release binary (and polars, the peer).
ensure_gnu_time
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import polars' >/dev/null 2>&1; then
  say "installing polars"
  "$PYTHON" -m pip install -q polars
fi
ensure_bin

# 2. The data: one cached file shared by the bench scripts.
ensure_data "$ROWS" "$SEED" "$RATE" "$FAILURE_SHARE"

# 3. Time the three, check they agree, print the table.
say "timing loadproof, polars, python csv (best of $RUNS)"
exec "$PYTHON" "$BENCH/compare.py" --file "$DATA" --loadproof "$BIN" --runs "$RUNS" "${EXTRA[@]}"
