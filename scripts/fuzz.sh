#!/usr/bin/env bash
# Builds gpuprof's libFuzzer targets (clang, ASan+UBSan) and runs each for a
# bounded number of iterations / seconds: the trace importer (seeded from
# tests/data and the heads/tails of the shared real traces), the folded-stacks
# reader, the monitor's YAML config reader, the small JSON reader and the
# TORCH_TRACE log reader (seeded from tests/data and the shared logs).
# Exit status != 0 on a crash, a leak or a broken error contract.
# Usage: scripts/fuzz.sh [RUNS] [SECONDS]   (per target; the importer gets
# the full budget, the others a third of it)
# import_simd compares the importer's stage-1 scanning paths (trace/jscan.c)
# with the byte-wise reference on the same inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-${GPUPROF_FUZZ_RUNS:-300000}}
SECS=${2:-${GPUPROF_FUZZ_SECONDS:-90}}
if ! command -v clang >/dev/null; then
  echo "fuzz: SKIP: clang not installed"
  exit 0
fi
out=build-fuzz
mkdir -p "$out/obj" "$out/seeds" "$out/seeds-folded" "$out/seeds-config" "$out/seeds-jdom" \
  "$out/seeds-router" "$out/seeds-torch_trace"
CFLAGS=(-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link
        -D_GNU_SOURCE -DGP_VERSION='"fuzz"' -DGP_HAVE_SQLITE=1 -Iinclude -Isrc)
LIBS=(-lz -lm -lpthread -ldl -lsqlite3 -lyaml) # config.c reads YAML with libyaml
if [ -f /usr/include/isa-l/igzip_lib.h ]; then # gzip input through isa-l, as in the build
  CFLAGS+=(-DGP_HAVE_ISAL=1)
  LIBS+=(-lisal)
fi
# one object archive of the library (no CLI, no optional back-ends)
srcs=$(ls src/core/*.c src/trace/*.c src/analysis/*.c src/monitor/*.c src/render/*.c \
          src/report/*.c src/store/*.c src/serve/router.c src/serve/metrics.c \
          src/bench/keys.c 2>/dev/null)
# the page scripts and styles, embedded as in the CMake build (cmake/web_embed.cmake)
cmake -DOUT="$out/web_assets.c" -DFILES="$(ls src/render/web/*.js src/render/web/*.css | tr '\n' ';')" \
  -P cmake/web_embed.cmake
srcs="$srcs $out/web_assets.c"
jobs_max=$(nproc)
# a header newer than the archive: rebuild every object
if [ -f "$out/libfz.a" ] && [ -n "$(find include src -name '*.h' -newer "$out/libfz.a" | head -n 1)" ]; then
  rm -f "$out"/obj/*.o
fi
objs=()
for src in $srcs; do
  o="$out/obj/$(echo "$src" | tr / _).o"
  objs+=("$o")
  [ "$o" -nt "$src" ] && continue
  clang "${CFLAGS[@]}" -c "$src" -o "$o" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
done
wait
rm -f "$out/libfz.a"
ar rcs "$out/libfz.a" "${objs[@]}" # only this source list's objects, never a stale one
for t in import import_simd folded config jdom torch_trace router; do
  clang "${CFLAGS[@]}" -fsanitize=fuzzer tests/fuzz/fuzz_$t.c "$out/libfz.a" "${LIBS[@]}" \
    -o "$out/fuzz_$t"
done
# seeds
cp tests/data/*.json "$out/seeds/" 2>/dev/null || true
printf '[{"ph":"X","ts":1.5,"dur":2,"name":"a","args":{"grid":[1,2,3]}},\n' >"$out/seeds/array.json"
printf '{"traceEvents":[],"gpuprof":{"version":"x","memory":{"current_bytes":5,"peak_bytes":9,"buffers":[{"name":"w","dtype":"f32","bytes":4},7,{"name":"b"}]}}}' >"$out/seeds/gpuprof_export.json"
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
printf 'main;foo;bar 10\nmain;foo 3\n# comment\n\nmain;baz 1.5\n' >"$out/seeds-folded/a.folded"
printf 'python;torch::mm;cudaLaunchKernel;gemm 1234\n' >"$out/seeds-folded/b.folded"
printf 'gpu_profiler:\n  monitoring:\n    interval_seconds: 0.5\n  thresholds:\n    temperature_warning: 80 # c\n  enable_alerts: "true"\n' >"$out/seeds-config/a.yaml"
cp tests/data/monitor/*.yaml "$out/seeds-config/" 2>/dev/null || true
printf '{"a":[1,2.5e3,"x\\u00e9",true,null,{"b":{}}],"c":-0.0}' >"$out/seeds-jdom/a.json"
printf '/api/summary?trace=0a1b2c3d&top=5&category=kernel,cpu_op' >"$out/seeds-router/a"
printf '/api/compare?base=00000001&current=00000002&min_time=1.5ms&alpha=0.01' >"$out/seeds-router/b"
printf '/%%2e%%2e/api/../x?a=%%zz&a=1&+=%%00' >"$out/seeds-router/c"
printf '/files/report.js' >"$out/seeds-router/d"
cp tests/data/torch_trace_small.log "$out/seeds-torch_trace/"
tt=${GPUPROF_TORCH_TRACE:-../shared/torch_trace}
if [ -d "$tt" ]; then
  for f in "$tt"/*.log; do
    head -c 20000 "$f" >"$out/seeds-torch_trace/$(basename "$f").head" || true
  done
fi
status=0
run() { # target, seconds, runs, corpus dirs...
  local t=$1 secs=$2 runs=$3
  shift 3
  mkdir -p "$out/corpus-$t"
  echo "fuzz: $t: at most $runs runs / $secs s"
  if "$out/fuzz_$t" -runs="$runs" -max_total_time="$secs" -max_len=65536 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/$t-" \
      "$out/corpus-$t" "$@" 2>"$out/fuzz_$t.log"; then
    grep -E "stat::number_of_executed_units" "$out/fuzz_$t.log" | tail -n 1
  else
    tail -n 40 "$out/fuzz_$t.log"
    echo "fuzz: $t FAILED (see $out/fuzz_$t.log)"
    status=1
  fi
}
run import "$SECS" "$RUNS" "$out/seeds"
run import_simd $((SECS / 3 + 1)) "$RUNS" "$out/seeds"
run folded $((SECS / 3 + 1)) "$RUNS" "$out/seeds-folded"
run config $((SECS / 3 + 1)) "$RUNS" "$out/seeds-config"
run jdom $((SECS / 3 + 1)) "$RUNS" "$out/seeds-jdom"
run router $((SECS / 3 + 1)) "$RUNS" "$out/seeds-router"
run torch_trace $((SECS / 3 + 1)) "$RUNS" "$out/seeds-torch_trace"
if [ "$status" = 0 ]; then echo "fuzz: 7 passed, 0 failed"; else echo "fuzz: FAILED"; fi
exit "$status"
