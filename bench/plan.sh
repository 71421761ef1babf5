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
OUT="$BENCH/out"
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

say() { printf '== %s\n' "$*" >&2; }

# 1. Tools: GNU time (for peak RSS), the release binary. The peer is stdlib-only Python.
if ! /usr/bin/time -v true >/dev/null 2>&1; then
  say "installing GNU time (Debian package 'time')"
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq time >/dev/null
fi
PYTHON="${PYTHON:-python3}"
BIN="$ROOT/target/release/loadproof"
if [[ ! -x "$BIN" || "${BENCH_NO_BUILD:-0}" != 1 ]]; then
  say "building $BIN"
  (cd "$ROOT" && cargo build --release -p loadproof_cli)
fi

# 2. The data: deterministic, generated once and cached (bench/out/ is gitignored), the same file
#    and stamp as bench/trace_inspect.sh.
mkdir -p "$OUT"
DATA="$OUT/burstgpt_${ROWS}.csv"
STAMP="$DATA.stamp"
WANT_STAMP="synth v3 rows=$ROWS seed=$SEED rate=$RATE failure_share=$FAILURE_SHARE"
if [[ ! -s "$DATA" || ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT_STAMP" ]]; then
  say "generating $DATA ($ROWS rows)"
  "$BIN" trace synth --out "$DATA" --rows "$ROWS" --seed "$SEED" --rate "$RATE" \
    --failure-share "$FAILURE_SHARE" >&2
  printf '%s' "$WANT_STAMP" >"$STAMP"
fi
say "data: $DATA ($(stat -c %s "$DATA") bytes)"

# 3. Time both, check they agree, print the table.
say "timing loadproof plan and the Python peer (re-implemented from the spec), best of $RUNS"
exec "$PYTHON" "$BENCH/plan_compare.py" --file "$DATA" --loadproof "$BIN" --runs "$RUNS" "${EXTRA[@]}"
