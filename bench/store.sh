#!/usr/bin/env bash
# Store benchmark (issues 5, 18): sustained events/s into the SQLite run
# store through the writer thread (launch + kernel rows, multi-row inserts in
# transactions taken every 100 ms or at 200,000 events waiting, the WAL
# copied into the store by the checkpointer thread). The time of each run
# ends when the store is closed (its last checkpoint included). RUNS runs of
# EVENTS events (best and median), then one long run of LONG events with a
# bounded queue (producers wait; 1 M events queued at most), long enough to
# fill the WAL to its 1 GiB bound; also events per CPU second, which does
# not depend on how busy the machine is.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
BIN="$BUILD/bench/bench_store"
OUT=bench/results/store.txt
RUNS=${GPUPROF_BENCH_RUNS:-5}
EVENTS=${GPUPROF_BENCH_STORE_EVENTS:-4000000}
LONG=${GPUPROF_BENCH_STORE_LONG:-40000000}
if [ ! -x "$BIN" ]; then echo "store: SKIP: $BIN not built"; exit 0; fi
mkdir -p bench/results
field() { echo "$1" | awk -v k="$2" '{for (i=1;i<=NF;i++) if ($i==k) print $(i+1)}'; }
lines=(); rates=(); best_cpu=0
for i in $(seq "$RUNS"); do
  line=$( { /usr/bin/time -f "cpu_s %U %S" "$BIN" "$EVENTS" 1; } 2>&1 )
  lines+=("$(echo "$line" | head -n 1)")
  rates+=("$(field "$line" events_per_s)")
  cpu=$(echo "$line" | awk '/^cpu_s/ {printf "%.0f", '"$EVENTS"' / ($2 + $3)}')
  if [ "$cpu" -gt "$best_cpu" ]; then best_cpu=$cpu; fi
done
sorted=$(printf '%s\n' "${rates[@]}" | sort -n)
best=$(echo "$sorted" | tail -n 1)
median=$(echo "$sorted" | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
long=""
if [ "$LONG" -gt 0 ]; then
  long=$( { /usr/bin/time -f "cpu_s %U %S maxrss_kb %M" "$BIN" "$LONG" 1 1000000; } 2>&1 | tr '\n' ' ')
fi
{
  echo "# bench/store.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) git $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for l in "${lines[@]}"; do echo "run: $l"; done
  echo "sustained_events_per_s best $best median $median (of $RUNS runs of $EVENTS events)"
  echo "events_per_cpu_s $best_cpu (producer + writer + checkpointer CPU time, best run)"
  [ -n "$long" ] && echo "long: $long"
  echo "goal: >= 2000000 events/s"
} | tee "$OUT"
