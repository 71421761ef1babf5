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
for template in sim vllm; do
  ensure_receipt "$template" "$REQUESTS" "$SECONDS_"
  [[ -n "$RECEIPT" ]] || continue
  echo "== $template-sized /metrics scrapes"
  python3 "$ROOT/bench/audit_time.py" "$BIN" "$RECEIPT" "$RUNS"
done
