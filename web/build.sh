#!/usr/bin/env bash
# Release build of the browser app: root index.html -> dist/, with Trunk 0.21.14 offline,
# wasm-opt from tools/node_modules (npm binaryen 132; tools/install.sh installs it).
# Prints the gzip -9 size of the wasm + JS bundle last, for CI to record (target <= 1.5 MB).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PATH="$root/tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"

# Trunk's offline mode runs cargo with --offline: make sure every crate is present.
cargo fetch --locked >/dev/null
trunk build --release --locked

shopt -s nullglob
files=(dist/*.wasm dist/*.js)
if [ ${#files[@]} -eq 0 ]; then
  echo "web/build.sh: no .wasm/.js in dist/" >&2
  exit 1
fi
total=0
for f in "${files[@]}"; do
  raw=$(wc -c <"$f")
  gz=$(gzip -9 -c "$f" | wc -c)
  total=$((total + gz))
  printf '%-48s %10d bytes, %10d gzipped\n' "$f" "$raw" "$gz"
done
printf 'bundle (wasm+js) gzip -9: %d bytes\n' "$total"
