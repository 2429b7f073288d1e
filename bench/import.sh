#!/usr/bin/env bash
# Import benchmark (issue 19): a >= 1 GB tile of a real Kineto trace on tmpfs
# (/dev/shm: these machines evict the page cache at once, so a file on disk
# would measure the disk), imported on one thread by every stage-1 scanning
# path this CPU has (trace/jscan.c; "off" is the byte-wise reference), on
# two threads by the default path, and counted by simdjson (the peer, Debian
# libsimdjson-dev, bench-only) from a warm buffer in the same run. The load
# average is written beside the figures: the machine may be shared.
# Usage: bench/import.sh [BUILD]   (GPUPROF_BENCH_RUNS rounds, default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
TRACES=${GPUPROF_TRACES:-../shared/traces}
SRC="$TRACES/df_index_resolver/df_index_resolver.json.gz"
RUNS=${GPUPROF_BENCH_RUNS:-3}
OUT=bench/results/import.txt
TMP=${GPUPROF_BENCH_TMP:-/dev/shm/gpuprof-bench-$USER}
BIG="$TMP/tiled.json"
if [ ! -f "$SRC" ]; then echo "import: SKIP: $SRC not found"; exit 0; fi
if [ ! -x "$BUILD/bench/bench_import" ]; then echo "import: SKIP: $BUILD/bench/bench_import not built"; exit 0; fi
mkdir -p "$TMP" bench/results
if [ ! -f "$BIG" ] || [ "$(stat -c %s "$BIG")" -lt 1000000000 ]; then
  python3 bench/tile_trace.py "$SRC" "$BIG" --min-bytes 1000000000
fi
load() { cut -d' ' -f1-3 /proc/loadavg; }
{
  echo "import benchmark (bench/import.sh) $(date -u '+%Y-%m-%d %H:%M UTC'), git $(git rev-parse --short HEAD)"
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "file: $BIG ($(stat -c %s "$BIG") bytes, tmpfs)"
  echo "load average before: $(load)"
  echo "-- gpuprof import, 1 thread, every scanning path (cpu = process CPU time)"
  "$BUILD/bench/bench_import" "$BIG" "$RUNS" 1
  echo "load average: $(load)"
  echo "-- gpuprof import, 2 threads (split import), default path"
  "$BUILD/bench/bench_import" "$BIG" "$RUNS" 2 "$("$BUILD/bench/bench_import" --default-path)"
  echo "load average: $(load)"
  if [ -f /usr/include/simdjson.h ]; then
    mkdir -p "$BUILD/bench"
    c++ -O2 -std=c++17 bench/simdjson_count.cpp -lsimdjson -o "$BUILD/bench/simdjson_count"
    echo "-- peer: simdjson, warm buffer, 1 thread"
    "$BUILD/bench/simdjson_count" "$BIG" "$RUNS"
  else
    echo "-- peer: simdjson not installed (Debian libsimdjson-dev): skipped"
  fi
  echo "load average after: $(load)"
} | tee "$OUT"
