#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for SECONDS each, on stable Rust.
#
# Usage: fuzz/run.sh [SECONDS=60] [TARGET...]
# Env:   FUZZ_SANITIZER=address|none (default address; falls back to none if it will not build)
#
# Installs cargo-fuzz when missing. cargo-fuzz passes nightly-only rustc flags (-Z…), so
# RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them. Each target starts from the committed
# seeds in fuzz/seeds/<target> and grows fuzz/corpus/<target> (gitignored). Prints
# `fuzz <target>: <runs> runs, ok` per clean target; exits 1 if any target crashed, leaking,
# timing out or failing an assertion (the input is in fuzz/artifacts/<target>/).
set -euo pipefail

SECS="${1:-60}"
[[ $# -gt 0 ]] && shift
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
ALL=(ingest_burstgpt ingest_mooncake ingest_azure ingest_detect decimal timed_trace plan_round_trip
     prometheus vllm_bench receipt_audit receipt_stream peer_records signed)
if [[ $# -gt 0 ]]; then TARGETS=("$@"); else TARGETS=("${ALL[@]}"); fi
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked || cargo install cargo-fuzz
fi

SAN="${FUZZ_SANITIZER:-address}"
echo "== building fuzz targets (sanitizer $SAN, debug assertions + overflow checks)" >&2
if ! cargo fuzz build -s "$SAN" >&2; then
  if [[ "$SAN" == none ]]; then exit 1; fi
  echo "== build with sanitizer $SAN failed; retrying with --sanitizer none" >&2
  SAN=none
  cargo fuzz build -s none >&2
fi

LOGS="$HERE/target/fuzz-logs"
mkdir -p "$LOGS"
failed=0
for t in "${TARGETS[@]}"; do
  mkdir -p "corpus/$t"
  log="$LOGS/$t.log"
  set +e
  cargo fuzz run -s "$SAN" "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$SECS" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)"
  if [[ -z "$runs" ]]; then
    runs="$(grep -o '^Done [0-9]* runs' "$log" | grep -o '[0-9]*' | tail -1 || true)"
  fi
  if [[ $rc -eq 0 ]]; then
    echo "fuzz $t: ${runs:-?} runs, ok"
  else
    failed=1
    echo "fuzz $t: ${runs:-?} runs, FAILED (exit $rc; log $log)"
    grep -E 'panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer|SUMMARY|Test unit written to' "$log" | head -8 | sed 's/^/    /' || true
  fi
done
exit "$failed"
