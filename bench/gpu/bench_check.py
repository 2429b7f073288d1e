#!/usr/bin/env python3
"""bench/gpu/bench_check.py: the GPU check of issue 14 (gpuprof bench).
H2D/D2H pinned bandwidth of `gpuprof bench --device cuda0` within 10 % of
nvbandwidth (host_to_device_memcpy_ce / device_to_host_memcpy_ce) or, when
nvbandwidth is absent, of the CUDA samples' bandwidthTest (--memory=pinned);
fp32 throughput >= 80 % of the peak gpuprof derives from the device
attributes (the goal on an H100). Prints every figure and its reference;
exit 0 report written, 77 no CUDA device, 1 harness error.
Usage: bench_check.py --gpuprof BUILD/gpuprof"""
import argparse, json, re, shutil, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--gpuprof", required=True)
a = ap.parse_args()

p = subprocess.run([a.gpuprof, "bench", "--device", "cuda0", "--json", "--no-store",
                    "--only", "h2d_pinned,d2h_pinned,global_read,global_copy,fp32,fp64,int32,"
                    "launch_latency"], capture_output=True, text=True)
try:
    d = json.loads(p.stdout)
except ValueError:
    print("gpuprof bench failed (exit %d): %s" % (p.returncode, p.stderr[-800:]))
    sys.exit(1)
if not d["devices"]:
    print("no CUDA device: %s" % d.get("no_device"))
    sys.exit(77)
dev = d["devices"][0]
print("device: %s (%s)" % (dev["name"], dev["driver"]))
figs = dev["figures"]
for k, f in figs.items():
    if f["valid"]:
        st = f["stats"]
        print("  %-18s %10.2f %-8s CI %.2f%% n %d  %s" % (
            k, st["mean"], f["unit"], st["ci_pct"], st["n"],
            "%.1f%% of peak %.0f" % (f["pct_of_peak"], f["peak"]) if f["peak"] else "peak unknown"))
    else:
        print("  %-18s not run: %s" % (k, f["reason"]))


def ref_nvbandwidth():
    if not shutil.which("nvbandwidth"):
        return None
    out = subprocess.run(["nvbandwidth", "-t", "host_to_device_memcpy_ce",
                          "device_to_host_memcpy_ce"], capture_output=True, text=True).stdout
    # each test prints a matrix; the SUM line gives GB/s for one GPU
    vals = re.findall(r"SUM (\S+) ([0-9.]+)", out)
    got = {name: float(v) for name, v in vals}
    h2d = got.get("host_to_device_memcpy_ce")
    d2h = got.get("device_to_host_memcpy_ce")
    return ("nvbandwidth", h2d, d2h, out)


def ref_bandwidth_test():
    exe = shutil.which("bandwidthTest")
    if not exe:
        return None
    out = subprocess.run([exe, "--memory=pinned"], capture_output=True, text=True).stdout
    sec = re.split(r"(Host to Device|Device to Host|Device to Device)", out)
    res = {}
    for i in range(1, len(sec) - 1, 2):
        m = re.findall(r"^\s*\d+\s+([0-9.]+)\s*$", sec[i + 1], re.M)
        if m:
            res[sec[i]] = float(m[-1])
    return ("bandwidthTest", res.get("Host to Device"), res.get("Device to Host"), out)


ref = ref_nvbandwidth() or ref_bandwidth_test()
if not ref:
    print("H2D/D2H reference: skipped: neither nvbandwidth nor the CUDA samples' bandwidthTest "
          "is installed")
else:
    tool, h2d, d2h, raw = ref
    for key, r in (("h2d_pinned_GBps", h2d), ("d2h_pinned_GBps", d2h)):
        f = figs.get(key, {})
        if r is None or not f.get("valid"):
            print("%s vs %s: not comparable (reference %r)" % (key, tool, r))
            continue
        ours = f["stats"]["mean"]
        print("%s: gpuprof %.2f GB/s, %s %.2f GB/s, ratio %.3f -> %s (goal within 10%%)" % (
            key, ours, tool, r, ours / r, "MET" if abs(ours / r - 1) <= 0.10 else "NOT MET"))
f = figs.get("fp32_GFLOPS", {})
if f.get("valid") and f.get("peak"):
    share = f["stats"]["mean"] / f["peak"]
    print("fp32: %.0f GFLOP/s = %.1f%% of peak %.0f (%s) -> %s (goal >= 80%% on an H100)" % (
        f["stats"]["mean"], 100 * share, f["peak"], f.get("peak_source"),
        "MET" if share >= 0.8 else "NOT MET"))
else:
    print("fp32: no figure or no peak: %s" % f.get("reason", "peak unknown"))
sys.exit(0)
