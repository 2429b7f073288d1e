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
measure() { # prints "best_seconds max_rss_kb all_seconds"
  for i in $(seq "$RUNS"); do /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -n 1; done |
    awk 'NR==1||$1<t{t=$1} $2>m{m=$2} {all=all (NR>1?",":"") $1} END{print t, m, all}'
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# GPUPROF_BENCH_OLD=path/to/older/gpuprof: its compare is timed in the same
# rounds, alternating with this one (the machine's load changes by the second)
if [ -n "${GPUPROF_BENCH_OLD:-}" ]; then
  pair=$(for i in $(seq "$RUNS"); do
    o=$( { /usr/bin/time -f "%e" "$GPUPROF_BENCH_OLD" compare "$BIG" "$BIG" >/dev/null; } 2>&1 | tail -n 1)
    n=$( { /usr/bin/time -f "%e" "$GP" compare "$BIG" "$BIG" >/dev/null; } 2>&1 | tail -n 1)
    echo "$o $n"
  done | awk '{print "    round " NR ": older " $1 " s, this " $2 " s"; if(NR==1||$1<bo)bo=$1; if(NR==1||$2<bn)bn=$2} END{print "    best: older " bo " s, this " bn " s"}')
fi
read -r t_imp r_imp a_imp < <(measure "$GP" summary "$BIG")
read -r t_cmp r_cmp a_cmp < <(measure "$GP" compare "$BIG" "$BIG")
read -r t_cmj r_cmj a_cmj < <(measure "$GP" compare --json "$BIG" "$BIG")
{
  echo "compare benchmark (bench/compare.sh) $(date -u '+%Y-%m-%d %H:%M UTC'), git $(git rev-parse --short HEAD)"
  echo "machine: $(nproc) cores, load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after (shared with other jobs)"
  echo "trace: $((size / 1000000)) MB plain JSON (df_index_resolver tiled), compared with itself (two imports)"
  echo "best of $RUNS runs (all runs in brackets, s):"
  echo "  import alone (summary) : ${t_imp} s, peak RSS $((r_imp / 1024)) MB [${a_imp}]"
  echo "  compare (text)         : ${t_cmp} s, peak RSS $((r_cmp / 1024)) MB [${a_cmp}]"
  echo "  compare --json         : ${t_cmj} s, peak RSS $((r_cmj / 1024)) MB [${a_cmj}]"
  awk -v t="$t_cmp" 'BEGIN{print "  goal <= 5 s: " (t <= 5 ? "met" : "NOT met")}'
  if [ -n "${GPUPROF_BENCH_OLD:-}" ]; then
    echo "  compare (text), alternating with ${GPUPROF_BENCH_OLD_LABEL:-$GPUPROF_BENCH_OLD}:"
    echo "$pair"
  fi
} | tee "$OUT"
