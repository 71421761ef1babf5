#!/usr/bin/env bash
# Scale benchmark: `loadproof trace inspect --json` on a 30,000,000-row Azure 2024-layout CSV
# (1.22 GB, mixed `…00.001163+00:00` / `…00+00:00` stamps, written by bench/make_azure.py,
# seeded), plain and gzipped, one parser and two (the halves), best of N. See bench/README.md.
#
# Usage: bench/azure_scale.sh [--runs N] [--rows N]
# Env:   BENCH_NO_BUILD=1 uses target/release/loadproof as it is.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS=3
ROWS=30000000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --rows) ROWS="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

source "$ROOT/bench/lib.sh"
ensure_gnu_time
ensure_bin

DATA="$ROOT/bench/out/azure_${ROWS}.csv"
if [[ ! -s "$DATA" ]]; then
  say "writing $DATA ($ROWS rows; about 4.5 s per million rows)"
  python3 "$ROOT/bench/make_azure.py" "$ROWS" "$DATA.tmp" && mv "$DATA.tmp" "$DATA"
fi
if [[ ! -s "$DATA.gz" || "$DATA.gz" -ot "$DATA" ]]; then
  say "gzip -6 of it"
  gzip -6 -c "$DATA" > "$DATA.gz.tmp" && mv "$DATA.gz.tmp" "$DATA.gz"
fi

# best FILE HALVES_MIN: prints "seconds cpu peak_MB" of the fastest of $RUNS runs.
best() {
  local file="$1" min="$2" best="" line
  for _ in $(seq "$RUNS"); do
    line=$(LOADPROOF_HALVES_MIN_BYTES="$min" /usr/bin/time -f '%e %U %S %M' "$BIN" trace inspect "$file" --json 2>&1 >/dev/null | tail -1)
    read -r e u s m <<<"$line"
    line=$(awk -v e="$e" -v u="$u" -v s="$s" -v m="$m" 'BEGIN { printf "%.2f %.2f %.0f", e, u + s, m / 1024 }')
    if [[ -z "$best" || "${line%% *}" < "${best%% *}" ]]; then best="$line"; fi
  done
  echo "$best"
}

say "timing (best of $RUNS)"
whole=$(best "$DATA" 1000000000000000)
halves=$(best "$DATA" 67108864)
gz=$(best "$DATA.gz" 67108864)
gunzip_s=$(/usr/bin/time -f '%e' gzip -dc "$DATA.gz" 2>&1 >/dev/null | tail -1)
a=$("$BIN" trace inspect "$DATA" --json | sha256sum | cut -c1-16)
b=$(LOADPROOF_HALVES_MIN_BYTES=1000000000000000 "$BIN" trace inspect "$DATA" --json | sha256sum | cut -c1-16)
printf '%-28s %8s %8s %10s\n' "run" "seconds" "cpu s" "peak MB"
printf '%-28s %8s %8s %10s\n' "one parser" $whole
printf '%-28s %8s %8s %10s\n' "two halves (default)" $halves
printf '%-28s %8s %8s %10s\n' "gzip -6 input" $gz
printf '%-28s %8s\n' "gzip -dc alone" "$gunzip_s"
[[ "$a" == "$b" ]] && echo "one parser and two halves print the same --json ($a…)" || { echo "the --json differs between one parser and two halves" >&2; exit 1; }
t="${halves%% *}"
awk -v t="$t" 'BEGIN { exit !(t <= 2.0) }' && echo "target (≤ 2 s): MET (${t} s)" || echo "target (≤ 2 s): not met (${t} s)"
