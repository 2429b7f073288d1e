#!/usr/bin/env bash
# capture-outputs.sh BIN OUTDIR [STOREDIR]: runs every result-writing command
# (text and --json) on the shared traces and on a recorded store and writes
# each output to OUTDIR/NAME.out (stdout) and its exit status. Used to check
# that a refactor of the result writers changes no byte: capture before and
# after, then `diff -r`.
set -u
BIN=$(readlink -f "$1"); OUT=$2; SDIR=${3:-}
T=${GPUPROF_SHARED:-$(dirname "$0")/../../shared}/traces
mkdir -p "$OUT"
n=0
cap() { # name args...
  local name=$1; shift
  "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo "rc=$?" >>"$OUT/$name.out"
  n=$((n+1))
}
for d in alexnet amd_mi250 cpu_only nccl_data sampled_2rank triton_example ns_resolution; do
  [ -d "$T/$d" ] || continue
  f=$(ls "$T/$d"/*.json.gz | head -1)
  cap "summary.$d" "$BIN" summary "$T/$d"
  cap "summary_json.$d" "$BIN" summary --json "$T/$d"
  cap "summary_opt.$d" "$BIN" summary --top 3 --bottlenecks 2 --category kernel,cpu_op "$f"
  cap "analyze.$d" "$BIN" analyze "$T/$d"
  cap "analyze_json.$d" "$BIN" analyze --json "$T/$d"
  cap "analyze_hta.$d" "$BIN" analyze --compat hta --json "$T/$d"
  cap "advise.$d" "$BIN" advise "$T/$d"
  cap "advise_json.$d" "$BIN" advise --json "$T/$d"
  cap "memory.$d" "$BIN" memory "$f"
  cap "memory_json.$d" "$BIN" memory --json --points 50 "$f"
  cap "flame_json.$d" "$BIN" flame --json "$f"
  cap "flame_json_opt.$d" "$BIN" flame --json --min-duration 50us --max-depth 4 "$f"

done
A=$T/sampled_2rank/sampled_rank-0.json.gz; B=$T/sampled_2rank/sampled_rank-1.json.gz
cap compare "$BIN" compare "$A" "$B"
cap compare_all "$BIN" compare --all --top 3 "$A" "$B"
cap compare_json "$BIN" compare --json "$A" "$B"
cap compare_json2 "$BIN" compare --json --category kernel "$T/alexnet" "$T/triton_example"
if [ -n "$SDIR" ] && [ -f "$SDIR/rec.db" ]; then
  cap runs "$BIN" runs "$SDIR/rec.db"
  cap runs_json "$BIN" runs --json "$SDIR/rec.db"
  cap history "$BIN" history "$SDIR/rec.db"
  cap history_json "$BIN" history --json "$SDIR/rec.db"
  cap history_op "$BIN" history --op scale "$SDIR/rec.db"
  cap history_op_json "$BIN" history --json --op scale "$SDIR/rec.db"
  cap summary_store "$BIN" summary "$SDIR/rec.db"
fi
D=$(dirname "$BIN")/tests; DATA=$(dirname "$0")/../tests/data/monitor
if [ -f "$D/../tests/libfake_nvml.so" ] || [ -f "$(dirname "$BIN")/tests/libfake_nvml.so" ]; then
  export GPUPROF_NVML_LIB=$(dirname "$BIN")/tests/libfake_nvml.so FAKE_NVML_SCENARIO=$DATA/nvml_basic.scn
  export GPUPROF_NVIDIA_SMI=/nonexistent
  cap devices_json "$BIN" devices --json
  cap health_json "$BIN" health --json
  if [ -n "$SDIR" ] && [ -f "$SDIR/out/s1.json" ]; then
    export GPUPROF_OUTPUT_DIR=$SDIR/out
    cap session_show "$BIN" session show s1
    cap session_show_json "$BIN" session show s1 --json
    cap session_list_json "$BIN" session list --json
  fi
fi
echo "captured $n outputs in $OUT"
