#!/usr/bin/env bash
# Lossless-export verification over EVERY shared trace (issue 17): runs
# tests/t_export_roundtrip.py with HTA on all folders (as the test does by
# default) and writes its output to bench/results/export_hta.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=bench/results/export_hta.txt
mkdir -p bench/results
all=$(ls -d ../shared/traces/*/ 2>/dev/null | xargs -n1 basename | paste -sd, -)
if [ -z "$all" ]; then echo "export_hta: SKIP: ../shared/traces not found"; exit 0; fi
start=$(date +%s)
set +e
GPUPROF_BIN="$BUILD/gpuprof" GPUPROF_SOURCE_DIR=. GPUPROF_BUILD_DIR="$BUILD" \
  GPUPROF_HTA_TRACES="$all" python3 tests/t_export_roundtrip.py >"$OUT.tmp" 2>&1
rc=$?
set -e
{
  echo "export/HTA round trip over all shared traces (bench/export_hta.sh) $(date -u '+%Y-%m-%d %H:%M UTC'), git $(git rev-parse --short HEAD)"
  echo "folders: $all"
  cat "$OUT.tmp"
  echo "exit status: $rc ($(( $(date +%s) - start )) s)"
} >"$OUT"
rm -f "$OUT.tmp"
cat "$OUT"
exit $rc
