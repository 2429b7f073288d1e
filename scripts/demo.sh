#!/usr/bin/env bash
# make demo: generates a realistic training-loop trace and runs gpuprof's
# analysis commands on it. Output files go to demo-out/.
set -euo pipefail
BUILD=${1:-build}
GP="$BUILD/gpuprof"
OUT=demo-out
mkdir -p "$OUT"
python3 scripts/gen_trace.py "$OUT/train_trace.json.gz" --steps 8 --seed 7
echo "== gpuprof summary $OUT/train_trace.json.gz --top 5"
"$GP" summary "$OUT/train_trace.json.gz" --top 5
# Further demo steps are added by scripts/demo.d/*.sh (one per subcommand).
if [ -d scripts/demo.d ]; then
  for s in scripts/demo.d/*.sh; do
    [ -e "$s" ] || continue
    echo
    bash "$s" "$GP" "$OUT"
  done
fi
