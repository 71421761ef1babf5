# Shared by the bench scripts (source it): tools, the release binary, the cached 5M-row file.
# Expects ROOT; sets BIN and DATA.

say() { printf '== %s\n' "$*" >&2; }

# GNU time (for peak RSS), installed from Debian when missing.
ensure_gnu_time() {
  if ! /usr/bin/time -v true >/dev/null 2>&1; then
    say "installing GNU time (Debian package 'time')"
    if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi
    "${SUDO[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq time >/dev/null
  fi
}

# The release binary, rebuilt unless BENCH_NO_BUILD=1 (a no-op when up to date, so numbers are
# never of a stale binary).
ensure_bin() {
  BIN="$ROOT/target/release/loadproof"
  if [[ ! -x "$BIN" || "${BENCH_NO_BUILD:-0}" != 1 ]]; then
    say "building $BIN"
    (cd "$ROOT" && cargo build --release -p loadproof_cli >&2)
  fi
}

# ensure_data ROWS SEED RATE FAILURE_SHARE: the deterministic synthetic BurstGPT file, generated
# once into bench/out/ (gitignored) and reused while its stamp (generator parameters) matches.
ensure_data() {
  local rows="$1" seed="$2" rate="$3" failure_share="$4" out="$ROOT/bench/out"
  mkdir -p "$out"
  DATA="$out/burstgpt_${rows}.csv"
  local stamp="$DATA.stamp" want="synth v3 rows=$rows seed=$seed rate=$rate failure_share=$failure_share"
  if [[ ! -s "$DATA" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    say "generating $DATA ($rows rows)"
    "$BIN" trace synth --out "$DATA" --rows "$rows" --seed "$seed" --rate "$rate" \
      --failure-share "$failure_share" >&2
    printf '%s' "$want" >"$stamp"
  fi
  say "data: $DATA ($(stat -c %s "$DATA") bytes)"
}

# ensure_receipt sim|vllm REQUESTS SECONDS [CHURN]: the make_receipt.py receipt (v1 JSON) for that
# /metrics template, written once into bench/out/audit/ and reused while its inputs match; sets
# RECEIPT (empty when the template is unavailable). The sim's template is scraped from a
# `loadproof sim` started here; vLLM's is the real 0.32 scrape in ../shared.
ensure_receipt() {
  local template="$1" requests="$2" seconds="$3" churn="${4:-counters}" out="$ROOT/bench/out/audit" t
  mkdir -p "$out"
  if [[ $template == sim ]]; then
    t="$out/template-sim.txt"
    if [[ ! -s "$t" ]]; then
      say "taking a /metrics template from loadproof sim"
      local port=18299 sim
      "$BIN" sim --port "$port" >/dev/null 2>&1 &
      sim=$!
      for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/metrics" >"$t" && break; sleep 0.1; done
      kill "$sim" 2>/dev/null || true
    fi
  else
    t="$ROOT/../shared/vllm/real-runs/vllm-cpu/metrics_after.txt"
  fi
  RECEIPT=""
  [[ -f "$t" ]] || { say "no $t: skipping the $template-sized receipt"; return 0; }
  local suffix=""
  [[ $churn == counters ]] || suffix="_$churn"
  RECEIPT="$out/receipt_${template}_${requests}_${seconds}${suffix}.json"
  local stamp="$RECEIPT.stamp"
  local want="make_receipt v1 $requests $seconds $churn $(sha256sum "$ROOT/bench/make_receipt.py" "$t" | cut -c1-16 | tr '\n' ' ')"
  if [[ ! -s "$RECEIPT" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    say "writing $RECEIPT ($template-sized scrapes)"
    python3 "$ROOT/bench/make_receipt.py" "$t" "$RECEIPT" "$requests" "$seconds" "$churn"
    printf '%s' "$want" >"$stamp"
  fi
}
