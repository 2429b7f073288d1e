#!/usr/bin/env bash
# demo step: libgpuprof examples (instrumented CPU program, OpenCL SAXPY on
# the first OpenCL device) and `gpuprof summary` on their exported JSON.
set -euo pipefail
GP=$1
OUT=$2
B=$(dirname "$GP")
if [ ! -x "$B/example_instrumented" ]; then
  echo "== libgpuprof examples not built (GP_BUILD_EXAMPLES=OFF), skipping"
  exit 0
fi
echo "== $B/example_instrumented $OUT/instrumented.json $OUT/instrumented.trace.json"
"$B/example_instrumented" "$OUT/instrumented.json" "$OUT/instrumented.trace.json"
echo
echo "== gpuprof summary $OUT/instrumented.json --top 5"
"$GP" summary "$OUT/instrumented.json" --top 5
if [ -x "$B/example_opencl_saxpy" ]; then
  echo
  echo "== $B/example_opencl_saxpy 1048576 $OUT/opencl_saxpy.json"
  rc=0
  "$B/example_opencl_saxpy" 1048576 "$OUT/opencl_saxpy.json" || rc=$?
  if [ $rc -eq 0 ]; then
    echo
    echo "== gpuprof summary $OUT/opencl_saxpy.json"
    "$GP" summary "$OUT/opencl_saxpy.json"
  elif [ $rc -ne 77 ]; then
    exit $rc
  fi
fi
