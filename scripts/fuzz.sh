#!/usr/bin/env bash
# Builds the importer's libFuzzer target (clang, ASan+UBSan) and runs it for
# a bounded number of iterations, seeded from tests/data and from the first
# bytes of the shared real traces (when present). Exit status != 0 on a crash.
# Usage: scripts/fuzz.sh [RUNS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-${GPUPROF_FUZZ_RUNS:-300000}}
SECS=${2:-${GPUPROF_FUZZ_SECONDS:-120}}
if ! command -v clang >/dev/null; then
  echo "fuzz: SKIP: clang not installed"
  exit 0
fi
out=build-fuzz
mkdir -p "$out/corpus" "$out/seeds"
srcs=$(ls src/core/*.c src/trace/*.c src/analysis/summary.c)
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -D_GNU_SOURCE -DGP_VERSION='"fuzz"' -Iinclude -Isrc \
  $srcs tests/fuzz/fuzz_import.c -lz -lm -lpthread -o "$out/fuzz_import"
# seeds: own fixtures, small hand-written shapes, heads of real traces
cp tests/data/*.json "$out/seeds/" 2>/dev/null || true
printf '[{"ph":"X","ts":1.5,"dur":2,"name":"a","args":{"grid":[1,2,3]}},\n' >"$out/seeds/array.json"
printf '{"traceEvents":[{"ph":"B","ts":1},{"ph":"E","ts":2},{"ph":"C","name":"c","ts":3,"args":{"v":1}}],"baseTimeNanoseconds":1}' >"$out/seeds/be.json"
traces=${GPUPROF_TRACES:-../shared/traces}
if [ -d "$traces" ]; then
  for f in "$traces"/*/*.json.gz; do
    n=$(basename "$(dirname "$f")")
    zcat "$f" | head -c 6000 >"$out/seeds/$n.head.json" || true
    zcat "$f" | tail -c 3000 >"$out/seeds/$n.tail.json" || true
  done
  for small in triton_example legacy_inference; do
    cp "$traces/$small"/*.json.gz "$out/seeds/$small.json.gz" 2>/dev/null || true
  done
else
  echo "fuzz: note: no shared traces at $traces; seeding from tests/data only"
fi
echo "fuzz: running fuzz_import for at most $RUNS runs / $SECS s"
"$out/fuzz_import" -runs="$RUNS" -max_total_time="$SECS" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" "$out/seeds" 2>"$out/fuzz.log" || {
  tail -n 40 "$out/fuzz.log"
  echo "fuzz: FAILED (see $out/fuzz.log)"
  exit 1
}
grep -E "stat::number_of_executed_units|Done" "$out/fuzz.log" | tail -n 2
echo "fuzz: 1 passed, 0 failed"
