#!/usr/bin/env bash
# tests/t_libgpuprof_examples.sh: runs the libgpuprof examples (instrumented
# CPU program, OpenCL SAXPY on PoCL, CUDA SAXPY when built) and reads their
# exported JSON back with `gpuprof summary`.
set -euo pipefail
B=${GPUPROF_BUILD_DIR:?}
GP=${GPUPROF_BIN:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$B/example_instrumented" ] || { echo "SKIP: examples not built"; exit 77; }

t_start=$(date +%s%N)
"$B/example_instrumented" "$T/inst.json" "$T/inst_trace.json" >"$T/inst.out"
t_end=$(date +%s%N)
grep -q "train_step" "$T/inst.out" || fail "instrumented: no train_step row"
grep -q "Top 5 bottlenecks by self time" "$T/inst.out" || fail "instrumented: no bottlenecks"
"$GP" summary "$T/inst.json" >"$T/sum.out"
for name in train_step preprocess worker_step "sort_floats(v, 2000)" load_batch infer_big; do
  grep -qF "$name" "$T/sum.out" || fail "gpuprof summary lacks $name"
done
grep -q "Annotations: 80 calls, 7 distinct" "$T/sum.out" || fail "unexpected range count: $(grep Annotations "$T/sum.out")"
"$GP" summary --json "$T/inst_trace.json" >/dev/null || fail "trace export not readable"
# one Chrome writer (issue 17): gp_export_trace, gp_export_json and
# `gpuprof export` / `timeline -o X.json` of their files agree on
# baseTimeNanoseconds and the events; the base is the run's wall clock
"$GP" export "$T/inst_trace.json" -o "$T/re_trace.json" 2>/dev/null || fail "export of gp_export_trace file"
"$GP" timeline "$T/inst_trace.json" -o "$T/tl_trace.json" 2>/dev/null || fail "timeline of gp_export_trace file"
"$GP" export "$T/inst.json" -o "$T/re_json.json" 2>/dev/null || fail "export of gp_export_json file"
python3 - "$T" "$t_start" "$t_end" <<'PY' || fail "gp_export_trace and gpuprof export disagree"
import json, sys
t, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
docs = {n: json.load(open("%s/%s" % (t, n))) for n in ("inst_trace.json", "re_trace.json", "tl_trace.json",
                                                       "inst.json", "re_json.json")}
base = {n: d.get("baseTimeNanoseconds") for n, d in docs.items()}
assert len(set(base.values())) == 1 and None not in base.values(), base
ev = lambda d: sorted(json.dumps(e, sort_keys=True) for e in d["traceEvents"])
assert ev(docs["inst_trace.json"]) == ev(docs["re_trace.json"]) == ev(docs["tl_trace.json"]), "events differ"
assert ev(docs["inst.json"]) == ev(docs["re_json.json"]), "events of gp_export_json differ"
b = base["inst_trace.json"]
first = min(b + round(e["ts"] * 1000) for e in docs["inst_trace.json"]["traceEvents"] if e.get("ph") == "X")
assert t0 <= first <= t1, (t0, first, t1)
PY

if [ -x "$B/example_opencl_saxpy" ]; then
  set +e
  "$B/example_opencl_saxpy" 65536 "$T/cl.json" >"$T/cl.out" 2>&1
  rc=$?
  set -e
  if [ $rc -eq 77 ]; then
    echo "note: $(cat "$T/cl.out")"
  else
    [ $rc -eq 0 ] || { cat "$T/cl.out"; fail "opencl_saxpy exit $rc"; }
    grep -q "0 wrong results" "$T/cl.out" || fail "opencl_saxpy: wrong results"
    grep -q "TOTAL *13" "$T/cl.out" || fail "opencl_saxpy: kernel report lacks TOTAL 13"
    grep -q "x *\[65536\] *float32" "$T/cl.out" || fail "opencl_saxpy: memory report"
    "$GP" summary "$T/cl.json" >"$T/clsum.out"
    grep -q "GPU kernels: 13 calls, 4 distinct" "$T/clsum.out" || fail "summary of OpenCL export"
  fi
fi
if [ -x "$B/example_cuda_saxpy" ]; then
  set +e
  "$B/example_cuda_saxpy" 1048576 5 "$T/cu.json" >"$T/cu.out" 2>&1
  rc=$?
  set -e
  cat "$T/cu.out"
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "cuda_saxpy exit $rc"
fi
echo "examples: ok"
