#!/usr/bin/env bash
# tests/t_gpu_harness.sh: the GPU check harnesses under bench/gpu/ (run on a
# GPU machine only) stay runnable: every Python file compiles, every script's
# --help works without torch (an import of torch is made to fail) and without
# a GPU, run_all.sh --dry-run prints the plan, bad usage exits 2, and the ncu
# CSV parsing of cuda_timer_check.py reads a captured-shape table.
set -u
SRC=${GPUPROF_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
G=$SRC/bench/gpu
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a torch that cannot be imported, first on the path
mkdir -p "$tmp/notorch"
echo 'raise ImportError("torch blocked by t_gpu_harness")' >"$tmp/notorch/torch.py"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$tmp/notorch${PYTHONPATH:+:$PYTHONPATH}"
python3 -c 'import torch' 2>/dev/null && bad "the torch blocker does not work"

n=0
for f in "$G"/*.py; do
  n=$((n + 1))
  # what `python3 -m py_compile` does, with the .pyc outside the source tree
  python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
    "$f" "$tmp/c.pyc" 2>"$tmp/err" || bad "py_compile $f: $(cat "$tmp/err")"
  out=$(python3 "$f" --help 2>&1) || bad "$f --help failed: $out"
  case "$out" in *usage:*) ;; *) bad "$f --help printed no usage: $out" ;; esac
done
[ "$n" -ge 2 ] || bad "expected at least 2 Python files under bench/gpu, found $n"

bash -n "$G/run_all.sh" || bad "run_all.sh has a syntax error"
out=$(PYTHON=python3 bash "$G/run_all.sh" --dry-run --out "$tmp/res" --build "$tmp/b" 2>&1)
rc=$?
[ "$rc" = 0 ] || bad "run_all.sh --dry-run exited $rc: $out"
for want in "plan" "issue 4" "issue 5" "issue 6" "gpu_run_vs_torch.txt" "gpu_cuda_timer.txt" \
            "gpu_monitor.txt" "torch:      missing"; do
  case "$out" in *"$want"*) ;; *) bad "run_all.sh --dry-run lacks '$want': $out" ;; esac
done
[ ! -e "$tmp/res" ] && [ ! -e "$tmp/b" ] || bad "--dry-run created the output or build folder"
# without nvidia-smi / ncu on PATH the plan says they are missing
out=$(PATH=/usr/bin:/bin bash "$G/run_all.sh" --dry-run 2>&1)
if ! command -v -p nvidia-smi >/dev/null 2>&1 && [ ! -x /usr/bin/nvidia-smi ]; then
  case "$out" in *"nvidia-smi: missing"*) ;; *) bad "dry run does not report nvidia-smi missing: $out" ;; esac
fi
bash "$G/run_all.sh" --no-such-option >/dev/null 2>&1
[ $? = 2 ] || bad "run_all.sh with an unknown option should exit 2"
out=$(bash "$G/run_all.sh" --help 2>&1) || bad "run_all.sh --help failed"
case "$out" in *Usage:*) ;; *) bad "run_all.sh --help printed no usage" ;; esac

# run_vs_torch.py refuses a loop shorter than the issue's 10,000 kernels
python3 "$G/run_vs_torch.py" --gpuprof x --workload y --kernels 100 >/dev/null 2>&1
[ $? = 2 ] || bad "run_vs_torch.py --kernels 100 should be a usage error"

# ncu CSV parsing (cuda_timer_check.with_ncu) on a table of ncu's shape
cat >"$tmp/ncu" <<'EOF'
#!/bin/sh
echo "==PROF== Connected to process 1234"
echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
echo '"0","1234","prog","127.0.0.1","saxpy(int, float, const float *, float *)","1","7","(256, 1, 1)","(65536, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","52,384"'
echo '"1","1234","prog","127.0.0.1","saxpy(int, float, const float *, float *)","1","7","(256, 1, 1)","(65536, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","51,616"'
EOF
chmod +x "$tmp/ncu"
out=$(cd "$G" && python3 -c '
import sys, cuda_timer_check as c
vals, cmd = c.with_ncu(sys.argv[1], "prog", 1, 2, None)
print(vals)
assert vals == [52384.0, 51616.0], vals
assert "gpu__time_duration.sum" in cmd and "--clock-control none" in cmd, cmd
' "$tmp/ncu" 2>&1) || bad "with_ncu parsing: $out"

[ "$fail" = 0 ] && echo "ok: $n Python scripts compile and answer --help without torch; dry run; ncu parsing"
exit $fail
