#!/usr/bin/env bash
# The two receipt forms side by side on the same run: the v1 JSON document (every scrape inline
# as text, written at the end) and the record stream (zstd, scrape deltas, written as the run
# happens) that `loadproof receipt upgrade` makes of it. For each: file size, and
# `loadproof receipt audit --json` wall time and peak RSS (best of N under GNU time); the two
# audits must be byte-identical. `zstd -3 --long=27` of the v1 file is printed as the
# general-purpose reference. Receipts come from make_receipt.py (see bench/audit.sh): a
# 10-minute run by default, `--seconds 3600 --requests 60000` for an hour.
#
# `--churn histograms` moves every histogram in every scrape too (make_receipt.py), a harder
# case for the deltas and the audit's re-reading of what changed than the default's counters.
#
# Usage: bench/receipt_form.sh [--runs N] [--requests N] [--seconds S] [--template sim|vllm|both]
#                              [--churn counters|histograms]
# Env:   BENCH_NO_BUILD=1 uses target/release/loadproof as it is.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/bench/lib.sh"
RUNS=3 REQUESTS=10000 SECONDS_=600 TEMPLATES=(sim vllm) CHURN=counters
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --requests) REQUESTS="$2"; shift 2 ;;
    --seconds) SECONDS_="$2"; shift 2 ;;
    --churn) CHURN="$2"; shift 2 ;;
    --template) if [[ $2 == both ]]; then TEMPLATES=(sim vllm); else TEMPLATES=("$2"); fi; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
ensure_gnu_time
ensure_bin
for template in "${TEMPLATES[@]}"; do
  ensure_receipt "$template" "$REQUESTS" "$SECONDS_" "$CHURN"
  [[ -n "$RECEIPT" ]] || continue
  STREAM="${RECEIPT%.json}.receipt.zst"
  if [[ ! -s "$STREAM" || "$STREAM" -ot "$RECEIPT" || "$STREAM" -ot "$BIN" ]]; then
    say "upgrading $RECEIPT to a record stream"
    "$BIN" receipt upgrade "$RECEIPT" --out "$STREAM" >&2
  fi
  echo "== $template-sized /metrics scrapes ($CHURN moving), ${SECONDS_} s, ${REQUESTS} requests"
  python3 "$ROOT/bench/receipt_form.py" "$BIN" "$RECEIPT" "$STREAM" "$RUNS"
done
