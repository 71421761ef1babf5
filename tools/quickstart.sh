#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build the CLI and the web app, run the main
# job on the bundled default (a deterministic SYNTHETIC trace in BurstGPT_1's layout, generated
# here, never a copied published file: inspect it, plan its vLLM replay (first 200 requests,
# 20x faster) and re-check the plan, fire it at `loadproof sim` with the native client under
# the sim's lease, verify the receipt and audit it),
# inspect a real trace from ../shared when it is there,
# then serve the web app on 127.0.0.1 until Ctrl-C.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PATH="$HOME/.cargo/bin:$root/tools/node_modules/.bin:$PATH"
PORT="${PORT:-8080}"
out="$root/target/quickstart"
mkdir -p "$out"

bash tools/install.sh
cargo build --locked --release -p loadproof_cli
bash web/build.sh
lp="$root/target/release/loadproof"

printf '\n== main job: synthesize the bundled default trace and inspect it ==\n'
"$lp" trace synth --out "$out/synthetic-burstgpt.csv"
"$lp" trace inspect "$out/synthetic-burstgpt.csv"
"$lp" trace inspect "$out/synthetic-burstgpt.csv" --json > "$out/synthetic-burstgpt.inspect.json"

printf '\n== main job: plan its replay (timed_trace + vllm bench serve argv), proven on disk ==\n'
"$lp" plan "$out/synthetic-burstgpt.csv" --out "$out/plan" --max-requests 200 --time-scale 20
"$lp" plan check "$out/plan"

printf '\n== main job: fire the plan at `loadproof sim` (a local simulator) with the native client ==\n'
"$lp" sim --port 0 2> "$out/sim.log" &
sim_pid=$!
trap 'kill "$sim_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "listening on" "$out/sim.log" 2>/dev/null && break; sleep 0.1; done
sim_url="$(sed -n 's/^loadproof sim listening on \(http[^ ]*\).*/\1/p' "$out/sim.log")"
# --acquire-lease: the sim grants an exclusive window bound to its subject and route, which is
# what lets the audit call the window isolated.
"$lp" fire "$out/plan" --endpoint "$sim_url" --engine native --acquire-lease 600 \
  --out "$out/receipt.json"
"$lp" receipt verify "$out/receipt.json"
printf '\n== main job: audit the receipt (every number recomputed from its raw evidence) ==\n'
"$lp" receipt audit "$out/receipt.json"
"$lp" receipt qualify "$out/receipt.json" >/dev/null \
  && echo "receipt qualify: exit 0 (qualified, of loadproof sim, a simulator)" \
  || echo "receipt qualify: exit $? (unqualified: see the refusals above)"
kill "$sim_pid" 2>/dev/null || true

real="$root/../shared/traces/burstgpt/BurstGPT_1.first400.csv"
if [ -f "$real" ]; then
  printf '\n== a real trace: BurstGPT_1 (first 400 rows, from ../shared) ==\n'
  "$lp" trace inspect "$real"
fi

printf '\n== main job: publish the example playbook with the web app (a static site) ==\n'
"$lp" playbook publish fixtures/playbook/examples.json --out "$out/site" --app "$root/dist"
(cd "$out/site" && sha256sum --quiet -c site.sha256 && echo "site.sha256: every file verifies")

printf '\n== web app ==\nserving %s at http://127.0.0.1:%s/  (Ctrl-C to stop)\n' "$out/site" "$PORT"
printf 'Trace view: drop a trace file, or press "Load the synthetic sample".\n'
printf 'Playbook view: http://127.0.0.1:%s/#/playbook (the example rows; drop a live trace to match it).\n' "$PORT"
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$out/site"
