#!/usr/bin/env bash
# The whole test suite: what `.ci/run` calls and what the README's second command runs.
# Installs missing tools first (tools/install.sh), then runs, in order:
#   fast tier   fmt, clippy (native + wasm), native unit/integration/property tests,
#               core builds for wasm32, dependency direction, layer order (tools/layers.py),
#               fixture manifest
#   web tier    release web build (bundle size recorded), real-browser tests in headless Chromium
#               (the trace, receipt, compare and playbook views; the quick start's own site)
#   peer tier   real AIPerf and GuideLLM (tools/peers/install.sh) fire plans at the sim; the
#               audit reads their own records (cli/tests/peers.rs, `--ignored` in a plain
#               `cargo test`)
#   slow tier   real vLLM: a real vLLM server (CPU) and the real `vllm bench serve` replay
#               loadproof plans; the server's counters must equal the plans (SLOW=0 skips it
#               locally; CI always runs it)
#   fuzz tier   every cargo-fuzz target for a short time (FUZZ_SECONDS, default 10)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PATH="$HOME/.cargo/bin:$root/tools/node_modules/.bin:$PATH"
export LOADPROOF_SHARED="${LOADPROOF_SHARED:-$(cd "$root/.." && pwd)/shared}"
FUZZ_SECONDS="${FUZZ_SECONDS:-10}"
SLOW="${SLOW:-1}"

tiers=0
started=$(date +%s)
mark=$started
# Each step that returns is a tier that passed (set -e stops the run at the first failure);
# each prints how long the one before it took, so the budget's spending is on the record.
step() {
  local now; now=$(date +%s)
  [ "$tiers" = 0 ] || printf '(tier %d took %ss)\n' "$tiers" "$((now - mark))"
  mark=$now; tiers=$((tiers + 1)); printf '\n==> %s\n' "$*"
}

step "install tools (idempotent)"
bash tools/install.sh

step "the vLLM lab and the peer load generators (idempotent; the peer tier and the receipt view use them)"
bash tools/vllm-lab/install.sh
eval "$(bash tools/vllm-lab/serve.sh env)"
bash tools/peers/install.sh
eval "$(bash tools/peers/install.sh env)"

step "fixture manifest: real traces in ../shared are the pinned bytes"
(cd "$root" && grep -v '^#' fixtures/MANIFEST.sha256 | sed "s#\.\./shared/#$LOADPROOF_SHARED/#" | sha256sum -c -)

step "format"
cargo fmt --all -- --check

step "clippy (native, all targets)"
cargo clippy --locked -p loadproof_core -p loadproof_cli --all-targets -- -D warnings
step "clippy (web, wasm32)"
cargo clippy --locked -p loadproof_web --target wasm32-unknown-unknown -- -D warnings

step "core builds for wasm32-unknown-unknown"
cargo build --locked -p loadproof_core --target wasm32-unknown-unknown

step "dependencies point one way: core pulls in no I/O or UI crate"
if cargo tree --locked -p loadproof_core -e normal --prefix none | grep -E '^(tokio|reqwest|hyper|clap|leptos|web-sys|indicatif) '; then
  echo "core depends on an I/O or UI crate" >&2; exit 1
fi

step "layers point one way: no file-level import cycle; core's modules import only lower layers"
python3 tools/layers.py core/src
python3 tools/layers.py cli/src
python3 tools/layers.py web/src

step "native tests (core, cli, and the web crate's model and formatting units)"
cargo test --locked -p loadproof_core -p loadproof_cli
cargo test --locked -p loadproof_web --lib

step "release CLI"
cargo build --locked --release -p loadproof_cli

step "web app release build (trunk)"
bash web/build.sh

step "browser test (headless Chromium, real traces)"
LOADPROOF_BIN="$root/target/release/loadproof" node web/e2e/trace.mjs

step "browser test (a log read through a mapping built from its header, equal to trace inspect --schema)"
LOADPROOF_BIN="$root/target/release/loadproof" node web/e2e/mapping.mjs

step "browser test (published playbook site, headless Chromium, other hosts blocked)"
LOADPROOF_BIN="$root/target/release/loadproof" node web/e2e/playbook.mjs

step "browser test (receipt view: receipts fired at sim, audited in a worker, tampered block named)"
LOADPROOF_BIN="$root/target/release/loadproof" node web/e2e/receipt.mjs

step "browser test (compare view: two arms fired at sim, equal to receipt compare --json)"
LOADPROOF_BIN="$root/target/release/loadproof" node web/e2e/compare.mjs

step "quick start end to end (SERVE=0) and its site in headless Chromium (every view, offline)"
SERVE=0 bash tools/quickstart.sh > target/quickstart.log 2>&1 || { tail -40 target/quickstart.log; exit 1; }
tail -5 target/quickstart.log
LOADPROOF_BIN="$root/target/release/loadproof" node web/e2e/site.mjs

step "browser test (share: audit download, print, links to bundled receipts, the single file from disk)"
LOADPROOF_BIN="$root/target/release/loadproof" node web/e2e/share.mjs

step "browser test (offline: a published site's views without the network, and a reload)"
LOADPROOF_BIN="$root/target/release/loadproof" node web/e2e/offline.mjs

step "peer tier: real AIPerf and GuideLLM fire plans at the sim; the audit reads their records"
cargo test --locked -p loadproof_cli --test peers -- --ignored --test-threads 1

if [ "$SLOW" != 0 ] || [ -n "${CI:-}" ]; then
  step "slow tier: real vLLM replays loadproof plans (tools/slow/real_vllm.sh)"
  bash tools/slow/real_vllm.sh "$root/target/release/loadproof"
fi

if [ -f fuzz/run.sh ] && [ "$FUZZ_SECONDS" != 0 ]; then
  step "fuzz every parser for ${FUZZ_SECONDS}s each"
  bash fuzz/run.sh "$FUZZ_SECONDS"
fi

printf '(tier %d took %ss)\n' "$tiers" "$(( $(date +%s) - mark ))"
printf '\nall tiers green in %ss\n' "$(( $(date +%s) - started ))"
# The closing count CI reads: every tier above passed (each also printed its own tests).
printf 'tiers: %d passed, 0 failed\n' "$tiers"
