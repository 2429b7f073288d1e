#!/usr/bin/env bash
# bench/gpu/run_all.sh: the GPU checks of issues 4, 5 and 6 in one command, for
# a machine with an NVIDIA GPU (see docs/gpu-checks.md). Builds gpuprof
# (Release) and the CUDA programs under bench/gpu/, runs every check and writes
# OUTDIR/gpu_<check>.txt (date, GPU, driver/CUDA versions, git revision, then
# the check's report). A check whose tool is missing (nvcc, torch, ncu,
# nvidia-smi) is skipped with the reason. Exit status: 0 when every check ran
# or was skipped, 1 on a harness error (build failed, a script crashed), 2 on
# bad usage. A figure that misses its goal is reported in the file, not an error.
# Usage: bench/gpu/run_all.sh [--dry-run] [--out DIR] [--build DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
DRY=0
OUTDIR=bench/results
BUILD=build-gpu
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA/bin/nvcc}
ARCH=${GPU_ARCH:--arch=native}
PY=${PYTHON:-python3}
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --out) OUTDIR=${2:?--out needs a folder}; shift ;;
    --build) BUILD=${2:?--build needs a folder}; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_all.sh: unknown argument '$1' (--dry-run, --out DIR, --build DIR)" >&2; exit 2 ;;
  esac
  shift
done
G=$BUILD/gpu   # the CUDA programs built here

have() { command -v "$1" >/dev/null 2>&1; }
have_torch() { "$PY" -c 'import torch' >/dev/null 2>&1; }
# what is missing for each tool, as the reason printed when a check is skipped
why_nvcc() { [ -x "$NVCC" ] || echo "nvcc not found at $NVCC"; }
why_smi() { have nvidia-smi || echo "nvidia-smi not found"; }

plan() {
  echo "plan (results in $OUTDIR/, build in $BUILD/):"
  echo "  1. make build BUILD=$BUILD CMAKE_FLAGS=-DCMAKE_BUILD_TYPE=Release"
  echo "  2. $NVCC $ARCH: $G/gpu_workload, $G/cuda_timer_check, $G/libtc.so"
  echo "  3. issue 5: $PY bench/gpu/run_vs_torch.py -> $OUTDIR/gpu_run_vs_torch.txt"
  echo "  4. issue 4: $PY bench/gpu/cuda_timer_check.py -> $OUTDIR/gpu_cuda_timer.txt"
  echo "  5. issue 6: $PY bench/monitor_vs_smi.py + bench_monitor on the real NVML"
  echo "     -> $OUTDIR/gpu_monitor.txt"
  echo "  6. issue 14: $PY bench/gpu/bench_check.py (gpuprof bench vs nvbandwidth/bandwidthTest,"
  echo "     fp32 vs peak) -> $OUTDIR/gpu_bench.txt"
  echo "tools here:"
  echo "  nvcc:       $([ -x "$NVCC" ] && echo "$NVCC" || echo "missing: checks 3 and 4 skipped")"
  echo "  torch:      $(have_torch && echo yes || echo "missing: torch parts of checks 3 and 4 skipped")"
  echo "  ncu:        $(have ncu && command -v ncu || echo "missing: ncu part of check 4 skipped")"
  echo "  nvidia-smi: $(have nvidia-smi && command -v nvidia-smi || echo "missing: check 5 skipped")"
}

header() { # $1: the check's title
  echo "# $1"
  echo "# date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# gpu:      $(nvidia-smi -L 2>/dev/null | tr '\n' ';' | grep . || echo 'none listed (nvidia-smi -L)')"
  echo "# driver:   $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || true)"
  echo "# cuda:     $(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -1 || true)" \
       "(driver); toolkit: $("$NVCC" --version 2>/dev/null | grep -o 'release [0-9.]*' || echo none)"
  echo "# torch:    $("$PY" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || echo none)"
  echo "# git:      $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$( [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && echo ' (modified tracked files)')"
  echo "# host:     $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  local bt
  bt=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
  echo "# build:    $BUILD (CMAKE_BUILD_TYPE ${bt:-empty, i.e. the default RelWithDebInfo})"
  echo
}

# run_check NAME TITLE CMD...: runs CMD, writes OUTDIR/gpu_NAME.txt. CMD's exit
# status: 0 report, 77 skipped (no device), anything else a harness error.
FAILED=0
run_check() {
  local name=$1 title=$2
  shift 2
  local f="$OUTDIR/gpu_$name.txt" rc
  echo "== $title -> $f"
  { header "$title"; "$@" 2>&1; echo "exit status: $?"; } | tee "$f"
  rc=$(tail -1 "$f" | sed 's/exit status: //')
  case "$rc" in
    0) ;;
    77) echo "(skipped: no CUDA device)" ;;
    *) echo "HARNESS ERROR in $name (exit $rc)"; FAILED=1 ;;
  esac
}

skip_check() { # NAME TITLE REASON
  local f="$OUTDIR/gpu_$1.txt"
  echo "== $2: skipped: $3"
  { header "$2"; echo "skipped: $3"; } > "$f"
}

if [ "$DRY" = 1 ]; then
  plan
  exit 0
fi

mkdir -p "$OUTDIR" || exit 1
plan
echo "== building gpuprof (Release) in $BUILD (log: $OUTDIR/gpu_build.log)"
if ! make build BUILD="$BUILD" CMAKE_FLAGS=-DCMAKE_BUILD_TYPE=Release >"$OUTDIR/gpu_build.log" 2>&1; then
  tail -30 "$OUTDIR/gpu_build.log"
  echo "HARNESS ERROR: the build failed"
  exit 1
fi
GP=$BUILD/gpuprof

NVCC_OK=0
if [ -z "$(why_nvcc)" ]; then
  mkdir -p "$G"
  echo "== building the CUDA programs with $NVCC $ARCH"
  if "$NVCC" -O2 $ARCH -I"$CUDA/include" -o "$G/gpu_workload" bench/gpu/gpu_workload.cu -ldl &&
     "$NVCC" -O2 $ARCH -DTC_MAIN -Iinclude -o "$G/cuda_timer_check" bench/gpu/cuda_timer_check.cu \
       -L"$BUILD" -lgpuprof -Xlinker -rpath,"$PWD/$BUILD" &&
     "$NVCC" -O2 $ARCH -shared -Xcompiler -fPIC -Iinclude -o "$G/libtc.so" \
       bench/gpu/cuda_timer_check.cu -L"$BUILD" -lgpuprof -Xlinker -rpath,"$PWD/$BUILD"; then
    NVCC_OK=1
  else
    echo "HARNESS ERROR: nvcc failed"
    FAILED=1
  fi
fi

T5="issue 5: gpuprof run on CUDA vs torch.profiler (bench/gpu/run_vs_torch.py)"
T4="issue 4: libgpuprof CUDA-event timer vs torch.cuda.Event / ncu (bench/gpu/cuda_timer_check.py)"
if [ "$NVCC_OK" = 1 ]; then
  run_check run_vs_torch "$T5" "$PY" bench/gpu/run_vs_torch.py --gpuprof "$GP" --workload "$G/gpu_workload"
  run_check cuda_timer "$T4" "$PY" bench/gpu/cuda_timer_check.py --prog "$G/cuda_timer_check" --lib "$G/libtc.so"
else
  why=$(why_nvcc)
  skip_check run_vs_torch "$T5" "${why:-nvcc failed}"
  skip_check cuda_timer "$T4" "${why:-nvcc failed}"
fi

T6="issue 6: gpuprof devices vs nvidia-smi, sample cost vs an nvidia-smi loop"
monitor_check() {
  echo "## field comparison and nvidia-smi query loop (bench/monitor_vs_smi.py)"
  local log rc
  log=$(mktemp)
  "$PY" bench/monitor_vs_smi.py "$GP" >"$log" 2>&1
  rc=$?
  cat "$log"
  # monitor_vs_smi.py: 0 all fields agree, 1 a field disagrees (reported above), 77 no GPU;
  # a Python traceback (also exit 1) is a harness error
  grep -q '^Traceback' "$log" && rc=99
  rm -f "$log"
  echo "monitor_vs_smi.py exit status: $rc (1 = some field disagrees, see above)"
  echo
  echo "## CPU time per sample per device through the real NVML (bench_monitor)"
  local nvml
  nvml=$(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libnvidia-ml.so.1' | head -1)
  echo "(the labels say 'stand-in': here the library is the real ${nvml:-libnvidia-ml.so.1})"
  "$BUILD/bench/bench_monitor" "${nvml:-libnvidia-ml.so.1}" /dev/null 2000 || return 1
  case "$rc" in 0|1|77) return 0 ;; *) return 1 ;; esac
}
if [ -z "$(why_smi)" ]; then
  run_check monitor "$T6" monitor_check
else
  skip_check monitor "$T6" "$(why_smi)"
fi

T14="issue 14: gpuprof bench vs nvbandwidth / bandwidthTest, fp32 vs peak (bench/gpu/bench_check.py)"
run_check bench "$T14" "$PY" bench/gpu/bench_check.py --gpuprof "$GP"

echo "== results: $(ls "$OUTDIR"/gpu_*.txt 2>/dev/null | tr '\n' ' ')"
exit $FAILED
