#!/usr/bin/env bash
# Audit speed: `loadproof receipt audit --json` on a 10,000-request native receipt with a /metrics
# scrape every 250 ms over 10 minutes (≈ 2,400 scrapes of the simulator's real /metrics text),
# best of N runs under GNU time. Target: < 300 ms. No peer exists (the predecessor had no audit),
# so the line printed is loadproof against the target, for simulator-sized scrapes (≈ 13 KB)
# and for real vLLM 0.32 scrapes (≈ 50 KB, from ../shared). See bench/README.md.
#
# Usage: bench/audit.sh [--runs N] [--requests N] [--seconds S]
# Env:   BENCH_NO_BUILD=1 uses target/release/loadproof as it is.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/bench/lib.sh"
RUNS=3 REQUESTS=10000 SECONDS_=600
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --requests) REQUESTS="$2"; shift 2 ;;
    --seconds) SECONDS_="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
ensure_gnu_time
ensure_bin
OUT="$ROOT/bench/out/audit"
mkdir -p "$OUT"
say "taking a /metrics template from loadproof sim"
PORT=18299
"$BIN" sim --port "$PORT" >/dev/null 2>&1 &
SIM=$!
trap 'kill $SIM 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/metrics" >"$OUT/template-sim.txt" && break; sleep 0.1; done
kill $SIM 2>/dev/null || true
# The same receipt shape with real vLLM 0.32's /metrics text (≈ 50 KB a scrape, 4× the sim's).
REAL="$ROOT/../shared/vllm/real-runs/vllm-cpu/metrics_after.txt"

for template in sim vllm; do
  if [[ $template == sim ]]; then T="$OUT/template-sim.txt"; else T="$REAL"; fi
  [[ -f "$T" ]] || { say "no $T: skipping the $template-sized receipt"; continue; }
  RECEIPT="$OUT/receipt_${template}_${REQUESTS}_${SECONDS_}.json"
  STAMP="$RECEIPT.stamp"
  WANT="make_receipt v1 $REQUESTS $SECONDS_ $(sha256sum "$ROOT/bench/make_receipt.py" "$T" | cut -c1-16 | tr '\n' ' ')"
  if [[ ! -s "$RECEIPT" || ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT" ]]; then
    say "writing $RECEIPT ($template-sized scrapes)"
    python3 "$ROOT/bench/make_receipt.py" "$T" "$RECEIPT" "$REQUESTS" "$SECONDS_"
    printf '%s' "$WANT" >"$STAMP"
  fi
  echo "== $template-sized /metrics scrapes"
  python3 "$ROOT/bench/audit_time.py" "$BIN" "$RECEIPT" "$RUNS"
done
