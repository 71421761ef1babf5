#!/usr/bin/env bash
# Installs every tool loadproof's build and tests need, skipping what is already present.
# Idempotent: safe to run on every CI run and every quick start. Used by README and .ci/run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cd "$root"

TRUNK_VERSION=0.21.14
# Must equal the wasm-bindgen pinned (=) in the workspace Cargo.toml / Cargo.lock.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/"/,"",$3); print $3}' Cargo.lock 2>/dev/null || true)
WASM_BINDGEN_VERSION=${WASM_BINDGEN_VERSION:-0.2.130}

log() { printf '[install] %s\n' "$*" >&2; }
export PATH="$HOME/.cargo/bin:$PATH"

# 1. Debian packages: headless Chromium + its driver for the browser tests, nginx.
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
# A real load balancer (round robin) in front of a fleet of sims, for the fleet tests.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx-light)
# The quick start's private CA and server certificate (one for all its fires).
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# 2. Rust target for the browser build.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# 3. Trunk (0.22 needs a newer rustc than 1.95).
if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  log "cargo install trunk $TRUNK_VERSION (about 9 minutes on 2 cores)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# 4. wasm-bindgen-cli at exactly the lockfile's wasm-bindgen (not --locked: the registry
#    lacks one of its locked transitive versions).
if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  log "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

# 5. wasm-opt (npm binaryen; Debian's binaryen 108 cannot parse today's wasm) and
#    playwright-core for web/e2e, both pinned by tools/package-lock.json.
if [ ! -x tools/node_modules/.bin/wasm-opt ] || [ ! -f tools/node_modules/playwright-core/package.json ]; then
  log "npm ci in tools/ (binaryen, playwright-core)"
  (cd tools && npm ci --no-audit --no-fund --silent)
fi

# 6. Crates, so Trunk's offline build (cargo --offline) finds them.
cargo fetch --locked >/dev/null 2>&1 || cargo fetch
log "tools ready"
