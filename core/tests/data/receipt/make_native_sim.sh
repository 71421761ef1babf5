#!/usr/bin/env bash
# Regenerates native_sim.json: three Mooncake requests planned and fired with the native
# client at `loadproof sim` under the sim's lease (released at the end), scraped every 250 ms.
# Run from the repository root after `cargo build -p loadproof_cli`:
#   bash core/tests/data/receipt/make_native_sim.sh
# The receipt holds no token (leases name only its sha256); ports and times differ per run, so
# tests read what they need from the file rather than pinning its bytes (the port is 18311
# unless PORT says otherwise: some tests name the URL).
set -euo pipefail
lp="${LOADPROOF_BIN:-target/debug/loadproof}"
out="core/tests/data/receipt/native_sim.json"
work="$(mktemp -d)"
trap 'kill "${sim:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/t.jsonl" <<'JSONL'
{"timestamp": 0, "input_length": 40, "output_length": 4, "hash_ids": [1]}
{"timestamp": 200, "input_length": 60, "output_length": 3, "hash_ids": [1, 2]}
{"timestamp": 400, "input_length": 20, "output_length": 5, "hash_ids": [3]}
JSONL
"$lp" plan "$work/t.jsonl" --out "$work/plan" > /dev/null
"$lp" sim --port "${PORT:-18311}" --decode-step-ms 1 > /dev/null 2> "$work/sim.log" &
sim=$!
for _ in $(seq 100); do grep -q "listening on" "$work/sim.log" 2>/dev/null && break; sleep 0.1; done
url="$(sed -n 's/^loadproof sim listening on \(http[^ ]*\).*/\1/p' "$work/sim.log")"
"$lp" fire "$work/plan" --endpoint "$url" --engine native --acquire-lease 30 \
  --scrape-interval-ms 250 --out "$out" > /dev/null
"$lp" receipt qualify "$out" > /dev/null && echo "wrote $out (qualified)"
