#!/usr/bin/env bash
# Firing fidelity, one run, same endpoint (`loadproof sim` with fast model knobs): uniform
# schedules at 200, 1000 and 5000 req/s fired by `vllm bench serve` (the vLLM lab's real client,
# via `loadproof fire --engine vllm`) and by loadproof's native engine. Prints achieved rate and
# dispatch-lag p50/p99/max per client and the ratio. See bench/README.md.
#
# Usage: bench/fire.sh [RATE:SECONDS ...]   (default 200:10 1000:10 5000:5)
# Env:   BENCH_NO_BUILD=1 uses target/release/loadproof as it is.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/target/release/loadproof"
if [[ ! -x "$BIN" || "${BENCH_NO_BUILD:-0}" != 1 ]]; then
  (cd "$ROOT" && cargo build --release -p loadproof_cli >&2)
fi
bash "$ROOT/tools/vllm-lab/install.sh" >&2
eval "$(bash "$ROOT/tools/vllm-lab/serve.sh" env)"
WORK="$ROOT/bench/out/fire"
rm -rf "$WORK" && mkdir -p "$WORK"
exec python3 "$ROOT/bench/fire_compare.py" "$BIN" "$WORK" "$@"
