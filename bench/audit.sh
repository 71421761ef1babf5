#!/usr/bin/env bash
# Audit speed: `loadproof receipt audit --json` on a 10,000-request native receipt with a /metrics
# scrape every 250 ms over 10 minutes (≈ 2,400 scrapes of the simulator's real /metrics text),
# best of N runs under GNU time. Target: < 300 ms. No peer exists (the predecessor had no audit),
# so the line printed is loadproof against the target. See bench/README.md.
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
RECEIPT="$OUT/receipt_${REQUESTS}_${SECONDS_}.json"
STAMP="$RECEIPT.stamp"
WANT="make_receipt v1 $REQUESTS $SECONDS_ $(sha256sum "$ROOT/bench/make_receipt.py" | cut -c1-16) $("$BIN" --version)"
if [[ ! -s "$RECEIPT" || ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT" ]]; then
  say "taking a /metrics template from loadproof sim"
  PORT=18299
  "$BIN" sim --port "$PORT" >/dev/null 2>&1 &
  SIM=$!
  trap 'kill $SIM 2>/dev/null || true' EXIT
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/metrics" >"$OUT/template.txt" && break; sleep 0.1; done
  kill $SIM 2>/dev/null || true
  say "writing $RECEIPT"
  python3 "$ROOT/bench/make_receipt.py" "$OUT/template.txt" "$RECEIPT" "$REQUESTS" "$SECONDS_"
  printf '%s' "$WANT" >"$STAMP"
fi
say "receipt: $RECEIPT ($(stat -c %s "$RECEIPT") bytes)"
"$BIN" receipt qualify "$RECEIPT" | head -3 || true
python3 "$ROOT/bench/audit_time.py" "$BIN" "$RECEIPT" "$RUNS"
