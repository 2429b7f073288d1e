#!/usr/bin/env bash
# Prometheus exposition benchmark (issue 12), NVML stand-in with 8 GPUs x
# every field (tests/data/monitor/nvml_8gpu.scn):
#  1. CPU of one full render, of the cached path a scrape takes, and of
#     copying the rendered bytes (the baseline of the same run);
#  2. `gpuprof monitor --prometheus` sampling at 1 Hz with 100 concurrent
#     scrapers at 1 Hz (keep-alive connections, as Prometheus keeps them):
#     the process's CPU share against the same process without scrapers
#     (baseline window of the same length, same run), and the server CPU per
#     scrape (render once per tick included).
# Goals: one scrape <= 50 us CPU; 100 scrapers at 1 Hz < 1 % of one core.
# Writes bench/results/metrics.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
OUT=bench/results/metrics.txt
LIB="$BUILD/tests/libfake_nvml.so"
SCN=tests/data/monitor/nvml_8gpu.scn
SECS=${GP_BENCH_SECS:-20}
ninja -C "$BUILD" bench_metrics fake_nvml gpuprof >/dev/null 2>&1
{
  echo "# gpuprof Prometheus exposition benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "# host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# build: $BUILD; NVML = tests/fake_nvml stand-in, scenario $SCN"
  echo
  echo "## 1. CPU per render / per cached scrape path (in process, 5000 iterations)"
  "$BUILD/bench/bench_metrics" "$LIB" "$SCN" 5000
  echo
  echo "## 2. gpuprof monitor --prometheus --interval 1 --metric-names dcgm: 100 scrapers at 1 Hz, ${SECS} s"
  python3 - "$BUILD/gpuprof" "$LIB" "$SCN" "$SECS" <<'PY'
import http.client, os, socket, subprocess, sys, threading, time
gp, lib, scn, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
env = dict(os.environ, GPUPROF_NVML_LIB=lib, FAKE_NVML_SCENARIO=scn, GPUPROF_NVIDIA_SMI="/nonexistent",
           GPUPROF_ENABLE_OPENCL_MONITORING="false", GPUPROF_ENABLE_EVENT_LOG="false")
p = subprocess.Popen([gp, "monitor", "--prometheus", "127.0.0.1:%d" % port, "--interval", "1",
                      "--metric-names", "dcgm"], env=env, stderr=subprocess.DEVNULL)
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
def conn_ok():
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2); c.request("GET", "/metrics")
        r = c.getresponse(); r.read(); return r.status == 200
    except OSError:
        return False
while not conn_ok(): time.sleep(0.1)
time.sleep(2)
c0, t0 = cpu(), time.monotonic(); time.sleep(secs); c1, t1 = cpu(), time.monotonic()
base = (c1 - c0) / (t1 - t0)
print("baseline (sampling 8 GPUs at 1 Hz, no scraper): %.3f %% of one core" % (100 * base))
def load(gzip):
    stop = [False]; counts = [0] * 100; errors = [0]; sizes = []
    hdr = {"Accept-Encoding": "gzip"} if gzip else {}
    def scraper(i):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        nxt = time.monotonic() + i / 100.0
        while not stop[0]:
            time.sleep(max(0, nxt - time.monotonic())); nxt += 1.0
            try:
                c.request("GET", "/metrics", headers=hdr); r = c.getresponse(); body = r.read()
                if r.status == 200: counts[i] += 1; sizes.append(len(body))
                else: errors[0] += 1
            except OSError:
                errors[0] += 1; c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    ths = [threading.Thread(target=scraper, args=(i,), daemon=True) for i in range(100)]
    for t in ths: t.start()
    time.sleep(2)  # all connected
    n0 = sum(counts); c0, t0 = cpu(), time.monotonic(); time.sleep(secs); c1, t1 = cpu(), time.monotonic(); n1 = sum(counts)
    stop[0] = True
    for t in ths: t.join(timeout=5)
    ld = (c1 - c0) / (t1 - t0); scrapes = n1 - n0
    print("100 scrapers at 1 Hz, %s: %d scrapes in %.1f s (%.1f/s), %d errors, %d bytes each" %
          ("Accept-Encoding: gzip (as Prometheus sends)" if gzip else "no compression",
           scrapes, t1 - t0, scrapes / (t1 - t0), errors[0], sizes[-1] if sizes else 0))
    print("  process CPU %.3f %% of one core; ratio to baseline %.2fx; added by scraping %.3f %% of one core" %
          (100 * ld, ld / base if base > 0 else float("inf"), 100 * (ld - base)))
    print("  server CPU per scrape (HTTP + cached text; one render%s per tick): %.1f us" %
          (" and one gzip" if gzip else "", 1e6 * (c1 - c0 - base * (t1 - t0)) / max(1, scrapes)))
load(True)
load(False)
import shutil
if shutil.which("wrk"):
    c0 = cpu()
    w = subprocess.run(["wrk", "-t1", "-c10", "-d5s", "-H", "Accept-Encoding: gzip",
                        "http://127.0.0.1:%d/metrics" % port], capture_output=True, text=True).stdout
    c1 = cpu()
    n = int(w.split(" requests in")[0].split()[-1])
    print("saturated (wrk, 10 connections, gzip, 5 s): %d requests, %.1f us server CPU per scrape" %
          (n, 1e6 * (c1 - c0) / max(1, n)))
else:
    print("saturated: not measured (wrk not installed)")
p.terminate(); p.wait()
print("(CPU from /proc/PID/stat in clock ticks of %.0f ms: +-%.3f %% of one core per %.0f s window)" %
      (1000.0 / tick, 100 * 2.0 / tick / secs, secs))
PY
} | tee "$OUT"
