#!/usr/bin/env bash
# Device-monitor benchmark (issue 6): CPU time per full sample per device with
# the NVML stand-in, and the CPU share of `gpuprof monitor` at 10 Hz (JSON
# lines to /dev/null). Writes bench/results/monitor.txt; on a machine with
# nvidia-smi also bench/results/monitor_vs_nvidia_smi.txt (bench/monitor_vs_smi.py).
# Goals: <= 100 us per sample per device, <= 0.5 % of one core at 10 Hz.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
OUT=bench/results/monitor.txt
LIB="$BUILD/tests/libfake_nvml.so"
SCN=tests/data/monitor/nvml_bench.scn
ninja -C "$BUILD" bench_monitor fake_nvml gpuprof >/dev/null 2>&1
{
  echo "# gpuprof device monitor benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "# host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  echo "# build: $BUILD (Release); NVML = tests/fake_nvml stand-in, scenario $SCN (2 GPUs)"
  echo
  echo "## CPU time per full sample per device (all fields, processes, alerts, 1 session)"
  "$BUILD/bench/bench_monitor" "$LIB" "$SCN" 20000
  echo
  echo "## CPU share of 'gpuprof monitor --interval 0.1' at 10 Hz, JSON lines to /dev/null"
  echo "## (steady state: CPU and wall of a 101-tick run minus those of a 1-tick run)"
  for devs in "nvml stand-in + host + OpenCL" "host + OpenCL only"; do
    if [ "$devs" = "host + OpenCL only" ]; then lib=/nonexistent; else lib="$LIB"; fi
    python3 - "$BUILD/gpuprof" "$lib" "$SCN" "$devs" <<'PY'
import os, resource, subprocess, sys, time
gp, lib, scn, label = sys.argv[1:5]
env = dict(os.environ, GPUPROF_NVML_LIB=lib, FAKE_NVML_SCENARIO=scn, GPUPROF_NVIDIA_SMI="/nonexistent")
def measure(count):
    t0 = time.monotonic()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([gp, "monitor", "--interval", "0.1", "--count", str(count)], env=env,
                   stdout=subprocess.DEVNULL, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic() - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
w1, c1 = measure(1)
w, c = measure(101)
print("%-32s 101 ticks: wall %.2f s CPU %.3f s (start-up run: %.3f s CPU); steady share %.3f %% of one core"
      % (label, w, c, c1, 100 * (c - c1) / (w - w1)))
PY
  done
  echo
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "## against nvidia-smi on this machine's GPUs: bench/results/monitor_vs_nvidia_smi.txt"
  else
    echo "## comparison with nvidia-smi: not run (no nvidia-smi / NVIDIA GPU on this machine)"
  fi
} | tee "$OUT"
if command -v nvidia-smi >/dev/null 2>&1; then
  python3 bench/monitor_vs_smi.py "$BUILD/gpuprof" | tee bench/results/monitor_vs_nvidia_smi.txt || true
fi
