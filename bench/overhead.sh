#!/usr/bin/env bash
# bench/overhead.sh: runs bench_overhead (libgpuprof hot-path cost) and writes
# bench/results/overhead.txt with the date and the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
mkdir -p bench/results
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
  echo "build: $BUILD (Release); load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$BUILD/bench/bench_overhead"
} | tee bench/results/overhead.txt
