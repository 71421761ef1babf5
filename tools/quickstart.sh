#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build the CLI and the web app, run the main
# job on the bundled default (a deterministic SYNTHETIC trace in BurstGPT_1's layout, generated
# here, never a copied published file: inspect it, plan its vLLM replay (first 200 requests,
# 20x faster) and re-check the plan, fire it at `loadproof sim` (over https with a throwaway CA,
# an API key from the environment, and a simulated DCGM GPU exporter) with the native client
# under the sim's lease — two arms, the sim's decode step 1 vs 2 ms, restarted between them — verify the baseline receipt,
# audit it and compare the arms), fire the same plan with NVIDIA AIPerf as the load generator when
# tools/peers/install.sh has installed it (its own records audited the same way), publish the
# example playbook and the receipts as a site, read a gzipped gateway export through a declared
# mapping, inspect real traces (BurstGPT, RAGPulse) from ../shared when they are there,
# then serve the web app on 127.0.0.1 until Ctrl-C.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PATH="$HOME/.cargo/bin:$root/tools/node_modules/.bin:$PATH"
PORT="${PORT:-8080}"   # SERVE=0 runs the job and stops before serving
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
# Two arms of one experiment: the same plan fired at the same URL under the sim's lease, the sim
# restarted between them with a slower decode step (its knob `decode_step_ms`, 1 vs 2 ms: a
# simulator setting, stated as a knob; nothing waits for admission in either arm, so both can
# qualify). The URL is part of the protocol, so both arms use one port.
# The sim serves https:// with a throwaway CA (written to sim-ca.pem, trusted with --ca-cert),
# requires an API key on /v1 as vLLM started with --api-key does (the key travels only in an
# environment variable, never in argv or the receipt), and serves a clearly SIMULATED DCGM
# exporter (its GPU model read back as gpu_sku, its telemetry kept as series).
LOADPROOF_SIM_KEY="quickstart-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export LOADPROOF_SIM_KEY
# One private CA and one server certificate for every fire (openssl): the CA's sha256 is part of
# the protocol, so the four fires below are one protocol only if they trust one CA.
tls="$out/tls"
rm -rf "$tls"; mkdir -p "$tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=loadproof quick start CA (throwaway)" -keyout "$tls/ca.key" -out "$out/sim-ca.pem" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
  -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$tls/server.ext"
openssl x509 -req -in "$tls/server.csr" -CA "$out/sim-ca.pem" -CAkey "$tls/ca.key" -CAcreateserial \
  -days 2 -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
# The sim signs every lease it grants and every /metrics body it serves with a key of its own
# (issue 19): a reviewer who trusts its public half (--trust sim.key.pub) sees the window as the
# lessor's word; one who does not sees it as self-attested. Like everything about the sim, the
# key is labelled simulator.
rm -f "$out/sim.key" "$out/sim.key.pub"
"$lp" key new --out "$out/sim.key" --comment "loadproof sim of the quick start (a simulator)" > /dev/null
# The firing client signs each receipt's seal with its own key: nothing can be added to or
# dropped from the stream afterwards without breaking that signature.
rm -f "$out/client.key" "$out/client.key.pub"
"$lp" key new --out "$out/client.key" --comment "the quick start's firing client" > /dev/null
sim_pid=""
trap 'kill $sim_pid 2>/dev/null || true' EXIT
start_sim() { # $1 = decode step ms, $2 = port (0: any free one); sets sim_pid and sim_url
  local log="$out/sim-$1.log"
  "$lp" sim --port "$2" --decode-step-ms "$1" --prefill-tokens-per-s 100000000 \
    --decode-ms-per-seq 0 --tls-cert "$tls/server.pem" --tls-key "$tls/server.key" \
    --api-key-env LOADPROOF_SIM_KEY --signing-key "$out/sim.key" > /dev/null 2> "$log" &
  sim_pid=$!
  for _ in $(seq 100); do grep -q "listening on" "$log" 2>/dev/null && break; sleep 0.1; done
  sim_url="$(sed -n 's/^loadproof sim listening on \(http[^ ]*\).*/\1/p' "$log")"
}
# Fires the plan once at a fresh sim with decode step $1 ms, writing receipt $2. On a busy 2-core
# machine the client can fall behind its schedule: past the fire's own bound the run is invalid
# (exit 1), past the audit's tighter bound the receipt does not qualify. Either way the arm is
# fired again, up to three times, so the playbook row below is built from qualified arms; each
# refusal is printed, and a last one stays in the receipt for the audit to name.
fire_arm() {
  local try rc
  for try in 1 2 3; do
    start_sim "$1" "$port"
    rc=0
    rm -f "$out/qualify.log"
    "$lp" fire "$out/plan" --endpoint "$sim_url" --engine native --acquire-lease 600 \
      --ca-cert "$out/sim-ca.pem" --api-key-env LOADPROOF_SIM_KEY --dcgm-url "$sim_url/dcgm/metrics" \
      --knob "decode_step_ms=$1" --signing-key "$out/client.key" --out "$2" || rc=$?
    kill "$sim_pid"; wait "$sim_pid" 2>/dev/null || true
    port="${sim_url##*:}"
    if [ "$rc" = 0 ] && "$lp" receipt qualify "$2" > "$out/qualify.log" 2>&1; then return 0; fi
    echo "$(basename "$2") (try $try): fire exit $rc; $(grep -m1 -E 'QUALIFIED' "$out/qualify.log" 2>/dev/null || echo 'not audited: the run was invalid')"
  done
  [ -f "$2" ] || { echo "no receipt written for $(basename "$2")" >&2; exit 1; }
}
port=0
fire_arm 1 "$out/baseline.receipt"
fire_arm 2 "$out/treatment.receipt"
"$lp" receipt verify "$out/baseline.receipt"
printf '\n== main job: the receipt is a record stream, written as the run happened ==\n'
# zstd-compressed records (scrapes as line deltas), chained and sealed; any block comes out as
# the exact bytes received, so its sha256sum is the digest the receipt records.
echo "baseline.receipt: $(stat -c %s "$out/baseline.receipt") bytes; as one v1 JSON document:"
"$lp" receipt upgrade "$out/baseline.receipt" --form json --out "$out/baseline.v1.json"
if grep -qF "$LOADPROOF_SIM_KEY" "$out/baseline.v1.json" "$out/baseline.receipt"; then
  echo "the API key is in the receipt" >&2; exit 1
fi
echo "the API key appears nowhere in the receipt (sent to the sim, never written)"
echo "metrics/0 extracted: $("$lp" receipt extract "$out/baseline.receipt" metrics/0 | sha256sum | cut -c1-64)"
"$lp" receipt verify "$out/baseline.receipt" | grep -F ' metrics/0 '
printf '\n== main job: audit the receipt (every number recomputed from its raw evidence) ==\n'
"$lp" receipt audit "$out/baseline.receipt"
"$lp" receipt qualify "$out/baseline.receipt" >/dev/null \
  && echo "receipt qualify: exit 0 (qualified, of loadproof sim, a simulator)" \
  || echo "receipt qualify: exit $? (unqualified: see the refusals above)"
printf '\n== main job: signed by the lessor (the sim), verified against the key a reviewer trusts ==\n'
echo "trusting $(cut -d' ' -f1-2 "$out/sim.key.pub" | cut -c1-40)… (sim.key.pub):"
"$lp" receipt audit "$out/baseline.receipt" --trust "$out/sim.key.pub" | grep -E '^(ATTESTATION|SEALED BY|QUALIFIED|UNQUALIFIED)'
"$lp" receipt qualify "$out/baseline.receipt" --trust "$out/sim.key.pub" >/dev/null \
  && echo "receipt qualify --trust sim.key.pub: exit 0 (signed by the sim's key)" \
  || echo "receipt qualify --trust sim.key.pub: exit $?"
printf '\n== main job: compare the two arms (one receipt each: an observation, not a measured effect) ==\n'
"$lp" receipt compare "$out/baseline.receipt" "$out/treatment.receipt" \
  || echo "receipt compare: exit $? (not comparable: see the reasons above)"

printf '\n== main job: a measured playbook row (two arms x two repeats at the sim) ==\n'
# One receipt per arm is an observation; a playbook row needs repeats. Fire each arm once more
# (same plan, URL, CA and knobs) and build the row from the four qualified receipts: it is
# MEASURED, of loadproof sim (a simulator, and the row says so through its engine), and it
# applies to the baseline receipt's own traffic at distance 0, beside the illustrative examples.
fire_arm 1 "$out/baseline-2.receipt"
fire_arm 2 "$out/treatment-2.receipt"
cp fixtures/playbook/examples.json "$out/playbook.json"
if "$lp" playbook row --id quickstart-sim-decode-step-2ms --playbook "$out/playbook.json" \
  --baseline "$out/baseline.receipt" "$out/baseline-2.receipt" \
  --treatment "$out/treatment.receipt" "$out/treatment-2.receipt" --knob decode_step_ms=2 \
  --note "Measured by the quick start against loadproof sim (a simulator, not a GPU): the sim's decode step 1 ms vs 2 ms."; then
  # Ask the matcher about the baseline receipt's own traffic, stating the measured row's identity
  # (what the receipts established): the row applies; every illustrative example is refused by name.
  mapfile -d '' -t query < <(python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))["rows"][-1]["identity"]
args = ["--model", i["model"], "--model-revision", i["model_revision"], "--gpu-sku", i["gpu_sku"],
        "--engine", i["engine"], "--engine-version", i["engine_version"],
        "--concurrency", "uncapped" if i["concurrency"] == "uncapped" else str(i["concurrency"]["max"])]
for k, v in sorted(i["knobs"].items()):
    args += ["--knob", f"{k}={v}"]
sys.stdout.write("".join(a + "\0" for a in args))' "$out/playbook.json")
  "$lp" playbook match "$out/playbook.json" --receipt "$out/baseline.receipt" "${query[@]}" \
    || echo "playbook match: exit $? (no row applies: see the reasons above)"
else
  # Refused loudly (the reason is above): the site then holds the illustrative examples only.
  echo "NO MEASURED ROW: playbook row refused the arms (see above); publishing the examples only"
fi

receipts=(--receipt "$out/baseline.receipt" --receipt "$out/treatment.receipt")
rm -f "$out/aiperf.receipt"
if lab_env="$(bash tools/vllm-lab/serve.sh env 2>/dev/null)" \
  && peers_env="$(bash tools/peers/install.sh env 2>/dev/null)"; then
  printf '\n== main job: the same plan fired by NVIDIA AIPerf (a load generator you may already use) ==\n'
  # AIPerf is given the plan as its own fixed-schedule Mooncake input and runs as a child under
  # the same lease, TLS trust and API key; its per-request export is the evidence the audit
  # reads. It may well fall behind the plan's schedule on 2 cores: the audit says so.
  eval "$lab_env"; eval "$peers_env"
  start_sim 1 "${sim_url##*:}"
  "$lp" fire "$out/plan" --endpoint "$sim_url" --engine aiperf --python "$PEERS_AIPERF_PYTHON" \
    --tokenizer "$VLLM_LAB_TOKENIZER" --acquire-lease 600 --ca-cert "$out/sim-ca.pem" \
    --api-key-env LOADPROOF_SIM_KEY --dcgm-url "$sim_url/dcgm/metrics" --knob decode_step_ms=1 \
    --out "$out/aiperf.receipt"
  kill "$sim_pid"; wait "$sim_pid" 2>/dev/null || true
  "$lp" receipt audit "$out/aiperf.receipt" | grep -E '^(execution|ledger|arrival|  [+-] (implementation|arrival|counter_agreement)|QUALIFIED|UNQUALIFIED)' || true
  receipts+=(--receipt "$out/aiperf.receipt")
else
  printf '\n(AIPerf and GuideLLM as engines: run tools/vllm-lab/install.sh and tools/peers/install.sh, then this again)\n'
fi

real="$root/../shared/traces/burstgpt/BurstGPT_1.first400.csv"
if [ -f "$real" ]; then
  printf '\n== a real trace: BurstGPT_1 (first 400 rows, from ../shared) ==\n'
  "$lp" trace inspect "$real"
fi

printf '\n== your own log: a gateway export read through a declared mapping (gzipped, its own column names) ==\n'
# The synthetic trace re-exported as a gateway would write it: other column names, a status
# column, nginx-style stamps (`01/Mar/2026:01:02:03.456 +0100`, the same instants), gzipped. A
# mapping names the columns and the stamps' layout once; the trace read through it is the
# synthetic trace's, regime for regime.
awk -F, 'NR == 1 { print "status,llm,received_at,prompt,completion"; next }
  { s = int($1); f = $1 - s; h = int(s / 3600) + 1; m = int((s % 3600) / 60);
    printf "200,%s,01/Mar/2026:%02d:%02d:%02d.%03d +0100,%s,%s\n", $2, h, m, s % 60, int(f * 1000 + 0.5), $3, $4 }' \
  "$out/synthetic-burstgpt.csv" | gzip -9 > "$out/gateway.csv.gz"
cat > "$out/gateway.schema.json" <<'JSON'
{
  "schema": "loadproof.trace-schema/v1",
  "name": "gateway export",
  "arrival": {"field": "received_at", "unit": "datetime", "format": "%d/%b/%Y:%H:%M:%S.%f %z", "zone": "UTC"},
  "input_tokens": "prompt",
  "output_tokens": "completion",
  "filters": {"model": "llm", "status": "status"}
}
JSON
"$lp" trace inspect "$out/gateway.csv.gz" --schema "$out/gateway.schema.json" --where status=200
"$lp" trace inspect "$out/gateway.csv.gz" --schema "$out/gateway.schema.json" --json > "$out/gateway.inspect.json"
python3 - "$out/synthetic-burstgpt.inspect.json" "$out/gateway.inspect.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
same = a["regime"] == b["regime"] and a["emitted"] == b["emitted"]
print(f"read through the mapping: {b['emitted']} requests, regime {'EQUAL to' if same else 'DIFFERENT from'} the synthetic trace's; mapping sha256 {b['schema_sha256'][:16]}…, file sha256 {b['compression']['file_sha256'][:16]}… (gzip)")
sys.exit(0 if same else 1)
PY

ragpulse="$root/../shared/traces/ragpulse/0_trace.first400.jsonl"
if [ -f "$ragpulse" ]; then
  printf '\n== a real RAG trace: RAGPulse (first 400 rows, its companion files beside it, from ../shared) ==\n'
  "$lp" trace inspect "$ragpulse"
  # Its blocks have their own lengths, which vLLM's timed_trace cannot carry: the plan writes
  # them as blocks.jsonl, and the native client builds every prompt from it, block for block.
  printf '\n== RAGPulse replayed block for block: the plan writes blocks.jsonl, the native client fires it ==\n'
  "$lp" plan "$ragpulse" --out "$out/ragpulse-plan" --max-requests 40 --time-scale 1000 \
    | grep -E '^(plan|blocks|          for --engine native)'
  start_sim 1 0
  "$lp" fire "$out/ragpulse-plan" --endpoint "$sim_url" --engine native --acquire-lease 600 \
    --ca-cert "$out/sim-ca.pem" --api-key-env LOADPROOF_SIM_KEY --out "$out/ragpulse.receipt" || true
  kill "$sim_pid"; wait "$sim_pid" 2>/dev/null || true
  "$lp" receipt audit "$out/ragpulse.receipt" | grep -E '^(ledger|  [+-] counter_agreement|QUALIFIED|UNQUALIFIED)' || true
  receipts+=(--receipt "$out/ragpulse.receipt")
fi

printf '\n== main job: publish the playbook (the measured row and the examples) with the web app (a static site) ==\n'
"$lp" playbook publish "$out/playbook.json" --out "$out/site" --app "$root/dist" \
  "${receipts[@]}"
(cd "$out/site" && sha256sum --quiet -c site.sha256 && echo "site.sha256: every file verifies")

if [ "${SERVE:-1}" = 0 ]; then
  # tools/test.sh runs the whole job this way and checks the site in a browser (web/e2e/site.mjs).
  printf '\nSERVE=0: not serving; the site is %s\n' "$out/site"
  exit 0
fi
printf '\n== web app ==\nserving %s at http://127.0.0.1:%s/  (Ctrl-C to stop)\n' "$out/site" "$PORT"
printf 'Trace view: drop a trace file, or press "Load the synthetic sample".\n'
printf 'Receipt view: http://127.0.0.1:%s/#/receipt (the baseline receipt, audited in the page; drop any receipt).\n' "$PORT"
printf 'Compare view: http://127.0.0.1:%s/#/compare (baseline vs treatment side by side).\n' "$PORT"
printf 'Playbook view: http://127.0.0.1:%s/#/playbook (the example rows; drop a live trace or a receipt to match it).\n' "$PORT"
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$out/site"
