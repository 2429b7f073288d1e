#!/usr/bin/env bash
# Device-monitor benchmark (issue 6): CPU time per full sample per device with
# the NVML stand-in, and the CPU share of `gpuprof monitor` at 10 Hz (JSON
# lines to /dev/null). Writes bench/results/monitor.txt.
# Goals: <= 100 us per sample per device, <= 0.5 % of one core at 10 Hz.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
OUT=bench/results/monitor.txt
LIB="$BUILD/tests/libfake_nvml.so"
SCN=tests/data/monitor/nvml_basic.scn
ninja -C "$BUILD" bench_monitor fake_nvml >/dev/null
{
  echo "# gpuprof device monitor benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "# host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  echo "# build: $BUILD (Release); NVML = tests/fake_nvml stand-in, scenario $SCN (2 GPUs)"
  echo
  echo "## CPU time per full sample per device (all fields, processes, alerts, 1 session)"
  "$BUILD/bench/bench_monitor" "$LIB" "$SCN" 20000
  echo
  echo "## CPU share of 'gpuprof monitor --interval 0.1 --count 100' (10 Hz, 10 s, piped)"
  for devs in "nvml stand-in + host + OpenCL" "host + OpenCL only"; do
    if [ "$devs" = "host + OpenCL only" ]; then lib=/nonexistent; else lib="$LIB"; fi
    python3 - "$BUILD/gpuprof" "$lib" "$SCN" "$devs" <<'PY'
import os, resource, subprocess, sys, time
gp, lib, scn, label = sys.argv[1:5]
env = dict(os.environ, GPUPROF_NVML_LIB=lib, FAKE_NVML_SCENARIO=scn, GPUPROF_NVIDIA_SMI="/nonexistent")
t0 = time.monotonic()
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
subprocess.run([gp, "monitor", "--interval", "0.1", "--count", "100"], env=env,
               stdout=subprocess.DEVNULL, check=True)
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
wall = time.monotonic() - t0
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print("%-32s wall %.2f s  CPU %.3f s  share %.3f %% of one core (includes start-up)"
      % (label, wall, cpu, 100 * cpu / wall))
PY
  done
  echo
  echo "## H100 comparison against nvidia-smi: not run (no NVIDIA GPU on the benchmark machine)"
} | tee "$OUT"
