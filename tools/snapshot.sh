#!/usr/bin/env bash
# Prints what loadproof says about a fixed set of inputs, so two builds can be diffed byte for
# byte: every `--json` output and every text report, for the real traces in ../shared, the
# real vLLM captures imported as receipts, the given receipts, plans, comparisons, playbook
# matches and the example playbook. A refactor that claims "no behaviour change" runs it with
# the binary before and after and diffs the two directories.
#
#   tools/snapshot.sh BIN OUT_DIR [RECEIPT...]
#
# Receipts are inputs (firing is not deterministic); everything computed from them must be.
# Paths in outputs are relative to a scratch copy under OUT_DIR, so two runs compare equal.
set -uo pipefail
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="$2"
shift 2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$(cd "${LOADPROOF_SHARED:-$root/../shared}" && pwd -P)"
# One fixed scratch path: plans record their source's absolute path.
scratch="${TMPDIR:-/tmp}/loadproof-snapshot"
rm -rf "$out" "$scratch"
mkdir -p "$out" "$scratch/work"
out="$(cd "$out" && pwd)"
cd "$scratch/work"
n=0
# run NAME ARGS...: stdout, stderr and the exit code of one command, under NAME.
run() {
  local name="$1"
  shift
  n=$((n + 1))
  "$bin" "$@" > "$out/$name.out" 2> "$out/$name.err"
  echo $? > "$out/$name.code"
}

traces=(
  "$shared/traces/burstgpt/BurstGPT_1.first400.csv"
  "$shared/traces/burstgpt/BurstGPT_3.first400.csv"
  "$shared/traces/mooncake/conversation_trace.jsonl"
  "$shared/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv"
  "$shared/traces/ragpulse/0_trace.first400.jsonl"
)
for t in "${traces[@]}"; do
  b=$(basename "$t")
  cp "$t" "$b"
  run "inspect-$b" trace inspect "$b"
  run "inspect-$b.json" trace inspect "$b" --json
  run "inspect-$b-w10" trace inspect "$b" --json --window 10 --start 5 --duration 3000 --max-rows 100
done
run inspect-model trace inspect BurstGPT_1.first400.csv --model ChatGPT --log-type "Conversation log" --json
run inspect-model-refused trace inspect conversation_trace.jsonl --model ChatGPT
run inspect-missing trace inspect nope.csv

run synth trace synth --out synth.csv
run synth-mooncake trace synth --out synth.jsonl --layout mooncake --rows 300 --prefix-share 0.3 --burstiness 3
for f in synth.csv synth.csv.synth.json synth.jsonl synth.jsonl.synth.json; do
  cp "$f" "$out/file-$f"
done
run inspect-synth trace inspect synth.csv --json

run plan plan synth.csv --out plan --max-requests 200 --time-scale 20
run plan-json plan synth.jsonl --out plan-m --json --chunk-size 512
run plan-mooncake plan conversation_trace.jsonl --out plan-mc --max-requests 50 --model m --tokenizer t --base-url http://127.0.0.1:9
run plan-check plan check plan --json
run plan-check-text plan check plan-mc
run plan-bad plan BurstGPT_1.first400.csv --out plan-bad --chunk-size 7
for d in plan plan-m plan-mc; do
  for f in "$d"/*; do cp "$f" "$out/file-$d-$(basename "$f")"; done
done

# Real vLLM captures imported as receipts.
for r in vllm-cpu vllm-cpu-prefix; do
  d="$shared/vllm/real-runs/$r"
  run "import-$r" receipt import --stdout "$d/bench_stdout.txt" --stderr "$d/bench_stderr.txt" \
    --exit-code 0 --result "$d/result.json" --metrics-before "$d/metrics_before.txt" \
    --metrics-after "$d/metrics_after.txt" --trace "$d/trace.jsonl" --model tiny-llama \
    --chunk-size 16 --sec-multiplier 0.001 --base-url http://127.0.0.1:8000 --out "$r.json"
done
receipts=(vllm-cpu.json vllm-cpu-prefix.json)
i=0
for r in "$@"; do
  i=$((i + 1))
  cp "$r" "given$i.json"
  receipts+=("given$i.json")
done
for r in "${receipts[@]}"; do
  # Imports stamp their own time; keep only what is computed from the inputs.
  run "verify-$r" receipt verify "$r"
  run "audit-$r" receipt audit "$r"
  run "audit-$r.json" receipt audit "$r" --json
  run "qualify-$r" receipt qualify "$r" --json
  run "capture-$r" receipt capture-check "$r"
  run "match-$r" playbook match "$root/fixtures/playbook/examples.json" --receipt "$r" \
    --model sim --model-revision x --gpu-sku y --engine vllm --engine-version 1 --json
done
if [ ${#receipts[@]} -ge 4 ]; then
  run compare receipt compare given1.json given2.json
  run compare-json receipt compare given1.json given2.json --json
  run row playbook row --baseline given1.json given1.json --treatment given2.json given2.json \
    --knob decode_step_ms=2 --id r1 --playbook pb.json
  [ -f pb.json ] && cp pb.json "$out/file-pb.json"
fi

run match-trace playbook match "$root/fixtures/playbook/examples.json" --trace BurstGPT_1.first400.csv \
  --model m --model-revision r --gpu-sku g --engine vllm --engine-version 0.32.0 --json
run match-trace-text playbook match "$root/fixtures/playbook/examples.json" --trace conversation_trace.jsonl \
  --model m --model-revision r --gpu-sku g --engine vllm --engine-version 0.32.0
cp "$out/inspect-synth.out" inspect-synth.json
run match-regime playbook match "$root/fixtures/playbook/examples.json" --regime inspect-synth.json \
  --model m --model-revision r --gpu-sku g --engine vllm --engine-version 0.32.0 --concurrency 8 --knob a=b
run examples playbook examples --out examples.json --shared "$shared"
[ -f examples.json ] && cp examples.json "$out/file-examples.json"
run help --help
for c in trace plan fire receipt sim gate playbook; do run "help-$c" "$c" --help; done
echo "$n commands" > "$out/COUNT"
rm -rf "$scratch"
