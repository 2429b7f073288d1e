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
# several ranks: a folder of rank files is analyzed in parallel; the ranks are
# ordered by compute time and outliers flagged (stragglers)
mkdir -p "$OUT/ranks"
GEN="$(dirname "$0")/../gen_trace.py"
for r in 0 1 2 3; do python3 "$GEN" --steps 4 --seed $((r + 1)) --rank "$r" "$OUT/ranks/rank$r.json"; done
echo "== gpuprof analyze $OUT/ranks (stragglers section)"
"$GP" analyze "$OUT/ranks" | sed -n '/^ranks by GPU compute time/,/^$/p'
