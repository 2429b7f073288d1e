#!/usr/bin/env bash
# bench/nvtx.sh: NVTX push/pop under `gpuprof run --nvtx` against
# libgpuprof's recorded pair in the same process (bench/nvtx_pair.c; CPU time
# of the calling thread, min and median of interleaved rounds) and the
# store's count of what was recorded. Goal (issue 19): NVTX pair <= 1.5x.
# GPUPROF_BENCH_NVTX_OLD_LIB=PATH also runs it with another injection library
# (e.g. one built from an older commit) for a before/after comparison.
# Writes bench/results/nvtx.txt. Usage: bench/nvtx.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
PROG="$BUILD/bench/nvtx_pair"
if [ ! -x "$PROG" ] || [ ! -e "$BUILD/libgpuprof_cuda_inject.so" ]; then
  echo "nvtx: SKIP: $PROG or the injection library not built (needs the CUDA toolkit's headers)"
  exit 0
fi
ROUNDS=${GPUPROF_BENCH_NVTX_ROUNDS:-51}
PAIRS=${GPUPROF_BENCH_NVTX_PAIRS:-20000}
mkdir -p bench/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "# bench/nvtx.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown), load average before $(cut -d' ' -f1-3 /proc/loadavg)"
  "$BUILD/gpuprof" run -q --no-summary --nvtx --no-cuda --no-opencl -o "$tmp/n.db" -- "$PROG" "$ROUNDS" "$PAIRS" 2>&1 \
    || echo "gpuprof run: exit status $? (see above)"
  echo "stored: $(sqlite3 "$tmp/n.db" "SELECT sum(events) || ' events, ' || sum(dropped) || ' dropped' FROM processes") (expected $(( (3 * ROUNDS + 1) * PAIRS + 1 )) NVTX ranges: warm-up, 3 kinds x rounds, probe)"
  if [ -n "${GPUPROF_BENCH_NVTX_OLD_LIB:-}" ]; then
    echo "-- the same with GPUPROF_CUDA_INJECT=$GPUPROF_BENCH_NVTX_OLD_LIB"
    GPUPROF_CUDA_INJECT="$GPUPROF_BENCH_NVTX_OLD_LIB" "$BUILD/gpuprof" run -q --no-summary --nvtx \
      --no-cuda --no-opencl -o "$tmp/o.db" -- "$PROG" "$ROUNDS" "$PAIRS" 2>&1 || echo "exit status $?"
  fi
  echo "load average after $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee bench/results/nvtx.txt
