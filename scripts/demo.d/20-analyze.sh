#!/usr/bin/env bash
# demo step: `gpuprof analyze` (HTA-style breakdowns) on the demo trace.
# args: GPUPROF_BIN OUTDIR
set -euo pipefail
GP=$1
OUT=$2
echo "== gpuprof analyze $OUT/train_trace.json.gz"
"$GP" analyze "$OUT/train_trace.json.gz"
echo "== gpuprof analyze --compat hta --json $OUT/train_trace.json.gz > $OUT/analyze.json"
"$GP" analyze --compat hta --json "$OUT/train_trace.json.gz" >"$OUT/analyze.json"
echo "wrote $OUT/analyze.json"
