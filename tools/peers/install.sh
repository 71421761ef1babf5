#!/usr/bin/env bash
# Install the peer load generators loadproof fires as engines: NVIDIA AIPerf and GuideLLM,
# each in its own venv (their pins conflict with each other and with vLLM's), from PyPI only.
# Idempotent; when the marker matches it prints "peers: already installed" and exits at once.
#
#   LOADPROOF_PEERS  install dir (default $HOME/.cache/loadproof/peers; outside the repo)
#   LOADPROOF_LAB    the vLLM lab (default $HOME/.cache/loadproof/vllm-lab): its uv and uv cache
#                    are reused (same filesystem: torch is hardlinked, not downloaded again)
#   LAB_PYTHON       a Python 3.11 interpreter to base the venvs on (default: found on PATH)
#
# Layout: aiperf/ (venv, `aiperf` 0.13.x), guidellm/ (venv, `guidellm` 0.8.x, torch pinned to
# the lab's), installed.txt (marker, written last). `eval "$(bash tools/peers/install.sh env)"`
# prints PEERS_AIPERF_PYTHON / PEERS_GUIDELLM_PYTHON.
set -euo pipefail

PEERS="${LOADPROOF_PEERS:-$HOME/.cache/loadproof/peers}"
LAB="${LOADPROOF_LAB:-$HOME/.cache/loadproof/vllm-lab}"
AIPERF_VERSION=0.13.0
GUIDELLM_VERSION=0.8.1
TORCH=2.13.0                   # the vLLM lab's torch: one wheel in the shared uv cache
UV_VERSION=0.13.9
SPEC="aiperf=$AIPERF_VERSION guidellm=$GUIDELLM_VERSION torch=$TORCH uv=$UV_VERSION"
MARKER="$PEERS/installed.txt"

log() { printf 'peers: %s\n' "$*" >&2; }
die() { printf 'peers: ERROR: %s\n' "$*" >&2; exit 1; }

installed() {
  [ -f "$MARKER" ] && [ "$(sed -n 's/^spec: //p' "$MARKER")" = "$SPEC" ] \
    && [ -x "$PEERS/aiperf/bin/aiperf" ] && [ -x "$PEERS/guidellm/bin/guidellm" ]
}

if [ "${1:-}" = env ]; then
  installed || { printf 'echo "peers: not installed in %s; run tools/peers/install.sh" >&2; false\n' "$PEERS"; exit 1; }
  printf "export PEERS_AIPERF_PYTHON='%s'\nexport PEERS_GUIDELLM_PYTHON='%s'\n" \
    "$PEERS/aiperf/bin/python" "$PEERS/guidellm/bin/python"
  exit 0
fi

if installed; then
  log "already installed ($PEERS)"
  exit 0
fi

mkdir -p "$PEERS"
exec 9>"$PEERS/.install.lock"
flock 9
rm -f "$MARKER"
started=$(date +%s)

. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../lib/python.sh"
BASE_PY="$(find_python)" || die "no Python 3.11 found (set LAB_PYTHON=/path/to/python3.11)"

# uv: the lab's when it has the pinned one, else our own.
UV="$LAB/uv/bin/uv"
if ! uv_is "$UV" "$UV_VERSION"; then
  ensure_uv "$PEERS/uv" "$UV_VERSION" "$BASE_PY"
  UV="$PEERS/uv/bin/uv"
fi
if [ -d "$LAB/uv-cache" ]; then
  export UV_CACHE_DIR="$LAB/uv-cache"
else
  export UV_CACHE_DIR="$PEERS/uv-cache"
fi
export UV_PYTHON_DOWNLOADS=never UV_NO_PROGRESS=1

venv() {
  local dir="$1"
  if ! { [ -x "$dir/bin/python" ] && "$dir/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; }; then
    rm -rf "$dir"
    "$UV" venv --quiet -p "$BASE_PY" "$dir"
  fi
}

t0=$(date +%s)
venv "$PEERS/aiperf"
log "uv pip install aiperf==$AIPERF_VERSION"
"$UV" pip install --quiet --python "$PEERS/aiperf/bin/python" "aiperf==$AIPERF_VERSION"
log "aiperf ready in $(( $(date +%s) - t0 ))s"

t0=$(date +%s)
venv "$PEERS/guidellm"
overrides="$PEERS/guidellm-overrides.txt"
echo "torch==$TORCH" >"$overrides"
log "uv pip install guidellm==$GUIDELLM_VERSION (torch==$TORCH, shared with the vLLM lab's cache)"
"$UV" pip install --quiet --python "$PEERS/guidellm/bin/python" "guidellm==$GUIDELLM_VERSION" \
  --override "$overrides"
log "guidellm ready in $(( $(date +%s) - t0 ))s"

versions="$(for t in aiperf guidellm; do
  "$PEERS/$t/bin/python" -c "import importlib.metadata as m; print('$t=' + m.version('$t'), end=' ')"
done)"
{
  echo "spec: $SPEC"
  echo "versions: $versions"
  echo "installed_at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
log "versions: $versions"
log "installed in $(( $(date +%s) - started ))s ($(du -sh "$PEERS" 2>/dev/null | cut -f1) in $PEERS)"
