#!/usr/bin/env bash
# demo step: the device monitor: `gpuprof devices` and `gpuprof health` (on a
# machine without a GPU they say so and list the OpenCL and host devices),
# then three ticks of `gpuprof monitor` as JSON lines.
# args: GPUPROF_BIN OUTDIR
set -euo pipefail
GP=$1
OUT=$2
echo "== gpuprof devices"
"$GP" devices
echo "== gpuprof health"
"$GP" health
echo "== gpuprof monitor --count 3 --interval 0.2 > $OUT/monitor.jsonl"
"$GP" monitor --count 3 --interval 0.2 >"$OUT/monitor.jsonl"
echo "wrote $OUT/monitor.jsonl ($(wc -l <"$OUT/monitor.jsonl") lines)"
