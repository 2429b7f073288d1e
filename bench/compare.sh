#!/usr/bin/env bash
# Compare benchmark (issue 8): `gpuprof compare BIG BIG` on the >= 1 GB tiled
# trace of bench/ingest.sh (both sides imported, in parallel, then compared)
# against one import alone (`gpuprof summary`). Goal: <= 5 s.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
GP="$BUILD/gpuprof"
TRACES=${GPUPROF_TRACES:-../shared/traces}
SRC="$TRACES/df_index_resolver/df_index_resolver.json.gz"
BIG=bench/work/tiled.json
OUT=bench/results/compare.txt
RUNS=${GPUPROF_BENCH_RUNS:-3}
if [ ! -f "$SRC" ] && [ ! -f "$BIG" ]; then echo "compare: SKIP: $SRC not found"; exit 0; fi
mkdir -p bench/work bench/results
if [ ! -f "$BIG" ] || [ "$(stat -L -c %s "$BIG")" -lt 1000000000 ]; then
  python3 bench/tile_trace.py "$SRC" "$BIG" --min-bytes 1100000000
fi
size=$(stat -L -c %s "$BIG")
cat "$BIG" >/dev/null # warm the page cache
measure() { # prints "best_seconds max_rss_kb"
  for i in $(seq "$RUNS"); do /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -n 1; done |
    awk 'NR==1||$1<t{t=$1} $2>m{m=$2} END{print t, m}'
}
read -r t_imp r_imp < <(measure "$GP" summary "$BIG")
read -r t_cmp r_cmp < <(measure "$GP" compare "$BIG" "$BIG")
read -r t_cmj r_cmj < <(measure "$GP" compare --json "$BIG" "$BIG")
{
  echo "compare benchmark (bench/compare.sh) $(date -u '+%Y-%m-%d %H:%M UTC'), git $(git rev-parse --short HEAD)"
  echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (shared with other jobs)"
  echo "trace: $((size / 1000000)) MB plain JSON (df_index_resolver tiled), compared with itself (two imports)"
  echo "  import alone (summary) : ${t_imp} s, peak RSS $((r_imp / 1024)) MB"
  echo "  compare (text)         : ${t_cmp} s, peak RSS $((r_cmp / 1024)) MB"
  echo "  compare --json         : ${t_cmj} s, peak RSS $((r_cmj / 1024)) MB"
  awk -v t="$t_cmp" 'BEGIN{print "  goal <= 5 s: " (t <= 5 ? "met" : "NOT met")}'
} | tee "$OUT"
