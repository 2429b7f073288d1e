#!/usr/bin/env bash
# demo step (issue 8): `gpuprof history` over six recorded runs of the OpenCL
# SAXPY example (PoCL on a CPU-only machine), the last three with a 4x larger
# vector: the saxpy kernel steps up at run 4.
# args: GPUPROF_BIN OUTDIR
set -euo pipefail
GP=$1
OUT=$2
B=$(dirname "$GP")
DB="$OUT/history.db"
if [ ! -x "$B/example_opencl_saxpy" ]; then
  echo "== gpuprof history: the OpenCL example is not built, skipping"
  exit 0
fi
rm -f "$DB" "$DB-wal" "$DB-shm"
echo "== gpuprof run -o $DB (6 runs of example_opencl_saxpy: 262144 elements x3, then 1048576 x3)"
for n in 262144 262144 262144 1048576 1048576 1048576; do
  rc=0
  "$GP" run -o "$DB" -- "$B/example_opencl_saxpy" "$n" "$OUT/history_saxpy_self.json" >/dev/null || rc=$?
  if [ $rc -eq 77 ]; then
    echo "(no usable OpenCL device: nothing recorded)"
    exit 0
  elif [ $rc -ne 0 ]; then
    exit $rc
  fi
done
echo "== gpuprof history $DB"
"$GP" history --top 5 "$DB"
echo
echo "== gpuprof history --op saxpy $DB"
"$GP" history --op saxpy "$DB"
"$GP" history --op saxpy --json "$DB" >"$OUT/history_saxpy.json"
echo "wrote $OUT/history_saxpy.json"
