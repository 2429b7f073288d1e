#!/usr/bin/env bash
# demo step (issue 5): `gpuprof run` records the unmodified OpenCL SAXPY
# example (PoCL on a CPU-only machine) — or the CUDA example when an NVIDIA
# GPU is present — into demo-out/recorded.db, prints its summary, lists the
# runs, queries the store and exports a Perfetto-loadable timeline.
# args: GPUPROF_BIN OUTDIR
set -euo pipefail
GP=$1
OUT=$2
B=$(dirname "$GP")
DB="$OUT/recorded.db"
rm -f "$DB" "$DB-wal" "$DB-shm"
if [ -x "$B/example_cuda_saxpy" ] && [ -e /dev/nvidiactl ]; then
  PROG=("$B/example_cuda_saxpy")
elif [ -x "$B/example_opencl_saxpy" ]; then
  PROG=("$B/example_opencl_saxpy" 1048576 "$OUT/opencl_saxpy_self.json")
elif [ -x "$B/tests/cl_record_prog" ]; then
  PROG=("$B/tests/cl_record_prog" 10 1048576)
else
  echo "== gpuprof run: no example program built, skipping"
  exit 0
fi
echo "== gpuprof run -o $DB -- ${PROG[*]}"
rc=0
"$GP" run -o "$DB" -- "${PROG[@]}" || rc=$?
if [ $rc -eq 77 ]; then
  echo "(no usable OpenCL/CUDA device: nothing recorded)"
  exit 0
elif [ $rc -ne 0 ]; then
  exit $rc
fi
echo
echo "== gpuprof runs $DB"
"$GP" runs "$DB"
echo
echo "== gpuprof sql $DB \"SELECT name, count(*) AS n, sum(dur) AS total_ns FROM kernel_v GROUP BY name\""
"$GP" sql "$DB" "SELECT name, count(*) AS n, sum(dur) AS total_ns FROM kernel_v GROUP BY name"
echo
echo "== gpuprof export $DB --format chrome -o $OUT/recorded.perfetto.json"
"$GP" export "$DB" --format chrome -o "$OUT/recorded.perfetto.json"
