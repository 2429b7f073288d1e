#!/usr/bin/env bash
# bench/monitor_smi.sh: CPU share of the nvidia-smi fallback at 10 Hz (issue
# 19 part 4; goal <= 1 % of one core) with a stand-in nvidia-smi in C
# (bench/smi_standin.c, 8 GPUs with one process each) whose start-up cost is
# measured first. `gpuprof monitor --interval 0.1` (JSON lines to /dev/null,
# NVML absent so the fallback is used) runs three ways in the same script:
# streaming (one -lms process per query, the default), one process per tick
# (GPUPROF_NVIDIA_SMI_MODE=per-tick, the former behaviour) and without any GPU
# backend (host + OpenCL only, the floor). Steady state: CPU (user+sys of
# gpuprof and every nvidia-smi it started) and wall of a 101-tick run minus
# those of a 1-tick run. Writes bench/results/monitor_smi.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
SMI="$BUILD/bench/smi_standin"
if [ ! -x "$SMI" ] || [ ! -x "$BUILD/gpuprof" ]; then
  echo "monitor_smi: SKIP: $SMI or $BUILD/gpuprof not built"; exit 0
fi
TICKS=${GPUPROF_BENCH_SMI_TICKS:-101}
mkdir -p bench/results
{
  echo "# bench/monitor_smi.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load average before $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "$BUILD/gpuprof" "$SMI" "$TICKS" <<'PY'
import os, resource, subprocess, sys, time
gp, smi, ticks = sys.argv[1], os.path.abspath(sys.argv[2]), int(sys.argv[3])

def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

# the stand-in's start-up: one query, 300 times
n = 300
c0, w0 = children_cpu(), time.monotonic()
for _ in range(n):
    subprocess.run([smi, "--query-gpu=timestamp,index,uuid,utilization.gpu",
                    "--format=csv,noheader,nounits"], stdout=subprocess.DEVNULL, check=True)
c1, w1 = children_cpu(), time.monotonic()
print("stand-in nvidia-smi (8 GPUs, one query): %.3f ms CPU per run, %.3f ms wall per run "
      "(incl. Python's fork+exec) over %d runs" % ((c1 - c0) * 1e3 / n, (w1 - w0) * 1e3 / n, n))

def measure(env, count):
    c0, t0 = children_cpu(), time.monotonic()
    subprocess.run([gp, "monitor", "--interval", "0.1", "--count", str(count), "--json"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - t0, children_cpu() - c0

base = dict(os.environ, GPUPROF_NVML_LIB="/nonexistent/libnvidia-ml.so.1")
modes = [("streamed (-lms, default)", dict(base, GPUPROF_NVIDIA_SMI=smi)),
         ("one process per tick (before)", dict(base, GPUPROF_NVIDIA_SMI=smi,
                                                GPUPROF_NVIDIA_SMI_MODE="per-tick")),
         ("no GPU backend (host + OpenCL)", dict(base, GPUPROF_NVIDIA_SMI="/nonexistent"))]
# check that the fallback really reports the stand-in's GPUs
out = subprocess.run([gp, "monitor", "--interval", "0.1", "--count", "1", "--json", "--gpus-only"],
                     env=modes[0][1], capture_output=True, text=True).stdout
print("fallback devices seen: %d" % out.count('"nvidia-smi"'))
print("gpuprof monitor --interval 0.1 (10 Hz), %d ticks minus 1 tick, CPU of gpuprof + its nvidia-smi:"
      % ticks)
share = {}
for label, env in modes:
    w1, c1 = measure(env, 1)
    w, c = measure(env, ticks)
    share[label] = 100 * (c - c1) / (w - w1)
    print("  %-32s wall %.2f s CPU %.3f s (1-tick run %.3f s CPU): %.3f %% of one core"
          % (label, w, c, c1, share[label]))
s, p, f = (share[m[0]] for m in modes)
print("fallback's own share (minus the floor): streamed %.3f %%, per tick %.3f %% (%.1fx)"
      % (s - f, p - f, (p - f) / (s - f) if s - f > 0 else float("inf")))
print("goal: the streamed fallback at 10 Hz <= 1 %% of one core (whole monitor): %s"
      % ("met" if s <= 1.0 else "not met"))
PY
  echo "load average after $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee bench/results/monitor_smi.txt
