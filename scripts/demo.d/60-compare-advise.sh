#!/usr/bin/env bash
# demo step: `gpuprof compare` (a run with one kernel 20 % slower against the
# demo trace, as a CI gate) and `gpuprof advise` on the demo trace.
# args: GPUPROF_BIN OUTDIR
set -euo pipefail
GP=$1
OUT=$2
python3 scripts/gen_trace.py "$OUT/train_trace_run2.json" --steps 8 --seed 8
python3 - "$OUT/train_trace_run2.json" "$OUT/train_trace_slow.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for e in doc["traceEvents"]:  # one kernel 20 % slower, the rest is run-to-run noise
    if e.get("name") == "ampere_sgemm_128x64_tn" and e.get("ph") == "X":
        e["dur"] = round(e["dur"] * 1.2, 3)
json.dump(doc, open(sys.argv[2], "w"))
PY
echo "== gpuprof compare $OUT/train_trace.json.gz $OUT/train_trace_run2.json (noise only)"
"$GP" compare --top 5 "$OUT/train_trace.json.gz" "$OUT/train_trace_run2.json"
echo
echo "== gpuprof compare --fail-on-regression $OUT/train_trace.json.gz $OUT/train_trace_slow.json"
rc=0
"$GP" compare --top 5 --fail-on-regression "$OUT/train_trace.json.gz" "$OUT/train_trace_slow.json" || rc=$?
echo "exit status $rc (1 = regression found: the CI gate would fail)"
echo
echo "== gpuprof advise $OUT/train_trace.json.gz"
"$GP" advise "$OUT/train_trace.json.gz"
"$GP" advise --json "$OUT/train_trace.json.gz" >"$OUT/advise.json"
echo "wrote $OUT/advise.json"
