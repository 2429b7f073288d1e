#!/usr/bin/env bash
# OpenCL recording overhead (issue 5): wall time of a PoCL program doing many
# small enqueues (tests/progs/cl_record_prog: per iteration a 1 KiB write,
# two kernels on 256 work-items, each followed by clFinish, and a read) run
# untraced and under `gpuprof run` (layer + store, no summary), alternating
# in the same script; best of N each, the ratio and the cost per enqueue.
# Usage: bench/run_overhead.sh [BUILD]   (default build-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
PROG="$BUILD/tests/cl_record_prog"
BIN="$BUILD/gpuprof"
OUT=bench/results/run_overhead.txt
RUNS=${GPUPROF_BENCH_RUNS:-7}
ITERS=${GPUPROF_BENCH_RUN_ITERS:-5000}
N=256
if [ ! -x "$PROG" ] || [ ! -x "$BIN" ] || [ ! -e "$BUILD/libgpuprof_cl_layer.so" ]; then
  echo "run_overhead: SKIP: $PROG, $BIN or the OpenCL layer not built"; exit 0
fi
if ! "$PROG" 1 "$N" > /dev/null 2>&1; then echo "run_overhead: SKIP: no OpenCL device"; exit 0; fi
mkdir -p bench/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ns() { date +%s%N; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
best_u=0; best_t=0; all_u=""; all_t=""
for i in $(seq "$RUNS"); do
  t0=$(ns); "$PROG" "$ITERS" "$N" > /dev/null; t1=$(ns)
  u=$(( (t1 - t0) / 1000 ))
  rm -f "$tmp"/r.db*
  t0=$(ns); "$BIN" run -o "$tmp/r.db" -q --no-summary -- "$PROG" "$ITERS" "$N" > /dev/null; t1=$(ns)
  t=$(( (t1 - t0) / 1000 ))
  all_u="$all_u $u"; all_t="$all_t $t"
  if [ "$best_u" -eq 0 ] || [ "$u" -lt "$best_u" ]; then best_u=$u; fi
  if [ "$best_t" -eq 0 ] || [ "$t" -lt "$best_t" ]; then best_t=$t; fi
done
# the fixed part (gpuprof's start, store open, clock calibration, last commit): one iteration
best_u1=0; best_t1=0
for i in $(seq "$RUNS"); do
  t0=$(ns); "$PROG" 1 "$N" > /dev/null; t1=$(ns)
  u=$(( (t1 - t0) / 1000 ))
  rm -f "$tmp"/f.db*
  t0=$(ns); "$BIN" run -o "$tmp/f.db" -q --no-summary -- "$PROG" 1 "$N" > /dev/null; t1=$(ns)
  t=$(( (t1 - t0) / 1000 ))
  if [ "$best_u1" -eq 0 ] || [ "$u" -lt "$best_u1" ]; then best_u1=$u; fi
  if [ "$best_t1" -eq 0 ] || [ "$t" -lt "$best_t1" ]; then best_t1=$t; fi
done
events=$(sqlite3 "$tmp/r.db" "SELECT events || ' events, ' || dropped || ' dropped' FROM processes" 2>/dev/null || echo "?")
enq=$(( 4 * ITERS ))
{
  echo "# bench/run_overhead.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) cores, load average before $load0, after $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "program: cl_record_prog $ITERS $N on $(clinfo -l 2>/dev/null | sed -n 's/.*Device #0: //p' | head -n 1): $enq enqueues (2 kernels, 1 write, 1 read per iteration) + $(( 2 * ITERS )) clFinish"
  echo "untraced_us (each run):$all_u"
  echo "traced_us   (each run):$all_t"
  echo "best untraced_us $best_u"
  echo "best traced_us $best_t (gpuprof run -q --no-summary, incl. its start and the store's last commit; last run stored $events)"
  echo "fixed cost (1 iteration): best untraced_us $best_u1, traced_us $best_t1"
  awk -v u="$best_u" -v t="$best_t" -v e="$enq" -v u1="$best_u1" -v t1="$best_t1" 'BEGIN {
    printf "ratio %.3f (traced / untraced, whole run)\n", t / u
    printf "overhead %.2f us per enqueue (all of it), %.2f us per enqueue without the fixed cost (%.1f ms)\n",
      (t - u) / e, ((t - u) - (t1 - u1)) / (e - 4), (t1 - u1) / 1000 }'
} | tee "$OUT"
