#!/usr/bin/env python3
"""tests/t_bench_pocl.py: `gpuprof bench` on the OpenCL device (PoCL in CI):
every test gives positive, finite figures with verified outputs (a test the
device cannot run must say which extension it lacks); the JSON keys carry
units; runs are stored, and `history --op bench:...` and `compare` read them
with higher-is-better verdicts; `health --bench` flags a figure below its
baseline. Skips (77) when no OpenCL device can be used."""
import json, math, os, shutil, sqlite3, subprocess, sys, tempfile

GP = os.environ.get("GPUPROF_BIN", "build/gpuprof")


def run(args, ok=(0,)):
    p = subprocess.run([GP] + args, capture_output=True, text=True, timeout=900)
    if p.returncode not in ok:
        print("FAIL: gpuprof %s -> %d\n%s\n%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
        sys.exit(1)
    return p


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


tmp = tempfile.mkdtemp(prefix="gp_bench_")
db = os.path.join(tmp, "b.db")
# every test, a small sweep and short caps (PoCL on shared cores is slow)
p = run(["bench", "--device", "opencl", "--json", "-o", db, "--max-size", "4194304",
         "--time-cap", "0.3"], ok=(0, 1))
out = json.loads(p.stdout)
if not out["devices"]:
    print("SKIP: no OpenCL device: %s" % out.get("no_device"))
    sys.exit(77)
if p.returncode != 0:
    fail("bench exited %d: %s" % (p.returncode, p.stderr))
dev = out["devices"][0]
print("device %s: %s (%s)" % (dev["device"], dev["name"], dev["driver"]))
figs = dev["figures"]
keys = ["h2d_pageable_GBps", "h2d_pinned_GBps", "d2h_pageable_GBps", "d2h_pinned_GBps",
        "d2d_copy_GBps", "global_read_GBps", "global_write_GBps", "global_copy_GBps",
        "fp32_GFLOPS", "fp64_GFLOPS", "fp16_GFLOPS", "int32_GIOPS", "launch_latency_us",
        "sync_latency_us"]
if sorted(figs) != sorted(keys):
    fail("figure keys %s" % sorted(figs))
ran = 0
for k in keys:
    f = figs[k]
    if not f["valid"]:
        # only an extension the device lacks may keep a test from running
        if not f["reason"].startswith("unsupported: the device has no cl_khr_"):
            fail("%s did not run: %s" % (k, f["reason"]))
        print("%-18s not run: %s" % (k, f["reason"]))
        continue
    st = f["stats"]
    for s in ("mean", "median", "min", "max"):
        if not (isinstance(st[s], (int, float)) and math.isfinite(st[s]) and st[s] > 0):
            fail("%s %s = %r" % (k, s, st[s]))
    if not f["verified"]:
        fail("%s not verified" % k)
    if len(st["samples"]) != st["n"] or st["n"] < 5:
        fail("%s: %d samples, n %d" % (k, len(st["samples"]), st["n"]))
    if abs(sum(st["samples"]) / st["n"] - st["mean"]) > 1e-9 * st["mean"]:
        fail("%s: mean is not the mean of the samples" % k)
    if not (st["min"] <= st["median"] <= st["max"]):
        fail("%s: min/median/max out of order" % k)
    if not (st["ci_pct"] <= 2.0 or not st["converged"]):
        fail("%s: converged with CI %g%%" % (k, st["ci_pct"]))
    if f["peak"] is not None or f["pct_of_peak"] is not None:
        fail("%s: OpenCL gives no peak, yet one is reported" % k)
    unit = f["unit"]
    if k.endswith("_GBps") and unit != "GB/s" or k.endswith("_us") and unit != "us":
        fail("%s unit %s" % (k, unit))
    if "sweep" in f:
        sizes = [p["bytes"] for p in f["sweep"]]
        if sizes[0] != 4096 or sizes[-1] != 4194304:
            fail("%s sweep sizes %s" % (k, sizes))
        if f["half_peak_bytes"] not in sizes:
            fail("%s half-peak size %r" % (k, f["half_peak_bytes"]))
    compute = k in ("fp32_GFLOPS", "fp64_GFLOPS", "fp16_GFLOPS", "int32_GIOPS")
    if compute and (f.get("chains_per_work_item") not in (16, 32, 64, 128, 256)
                    or f.get("chains_chosen") != "fastest"):
        fail("%s: chains %r (%r)" % (k, f.get("chains_per_work_item"), f.get("chains_chosen")))
    if not compute and "chains_per_work_item" in f:
        fail("%s: chains reported for a test without chains" % k)
    ran += 1
    print("%-18s %10.3f %-7s  CI %5.2f%%  n %4d  verified%s" % (
        k, st["mean"], unit, st["ci_pct"], st["n"],
        "  %d chains per work-item" % f["chains_per_work_item"] if compute else ""))
if ran < 12:
    fail("only %d tests ran" % ran)

# --chains: the kernel asked for runs (and is verified); a bad value is refused
p = run(["bench", "--device", "opencl", "--only", "fp32,int32", "--chains", "64", "--json",
         "--no-store", "--time-cap", "0.2"])
for k, f in json.loads(p.stdout)["devices"][0]["figures"].items():
    if not (f["valid"] and f["verified"] and f["chains_per_work_item"] == 64
            and f["chains_chosen"] == "--chains"):
        fail("--chains 64: %s %s" % (k, f))
for bad in ("48", "0", "512", "x"):
    p = run(["bench", "--chains", bad, "--no-store"], ok=(2,))
    if len(p.stderr.strip().splitlines()) != 1 or "--chains" not in p.stderr:
        fail("--chains %s: %r" % (bad, p.stderr))

# text output: "peak unknown" where OpenCL cannot know it
p = run(["bench", "--device", "opencl", "--only", "h2d_pinned,launch_latency", "--quick",
         "--max-size", "1048576", "--time-cap", "0.2", "-o", db])
if "peak unknown" not in p.stdout or "stored as run 2" not in p.stdout:
    fail("text output:\n" + p.stdout)

# the stored run: command, host, gpuprof version, device with its driver
con = sqlite3.connect(db)
row = con.execute("SELECT command, host, version, devices FROM runs WHERE id = 1").fetchone()
con.close()
if not (row[0].startswith("gpuprof bench") and row[1] == out["host"]
        and row[2] == out["gpuprof_version"] and dev["name"] in row[3]
        and ("driver " + dev["driver"]) in row[3]):
    fail("stored run: %r" % (row,))

# history and compare of the stored runs
p = run(["history", "--op", "bench:h2d_pinned_GBps", db])
if "higher is better" not in p.stdout or "GB/s" not in p.stdout:
    fail("history:\n" + p.stdout)
p = run(["history", "--json", "--op", "bench:launch_latency_us", db])
h = json.loads(p.stdout)["operation"]
if h["unit"] != "us" or h["higher_is_better"] or len(h["runs"]) != 2:
    fail("history json: %s" % h)

# compare: a copy of run 1 whose bandwidth samples are divided by 1000 and
# whose latency samples are multiplied by 1000 (far beyond the spread of
# the samples, so the change is certain): both must be REGRESSIONs
# (bandwidth: higher is better). No multiple-test correction: with the
# minimum of 5 repetitions a side, exact p = 2/252.
db2 = os.path.join(tmp, "b2.db")
con = sqlite3.connect(db)
con.execute("VACUUM INTO ?", (db2,))  # a consistent copy (the store is in WAL mode)
con.close()
con = sqlite3.connect(db2)
for name, factor in (("bench:h2d_pinned_GBps", 1e-3), ("bench:launch_latency_us", 1e3)):
    con.execute("UPDATE counters SET value = value * ? WHERE proc IN (SELECT id FROM processes "
                "WHERE run = 1) AND name IN (SELECT id FROM strings s WHERE s.proc = "
                "counters.proc AND s.s = ?)", (factor, name))
con.commit()
con.close()
p = run(["compare", "--json", "--correction", "none", db + ":1", db2 + ":1"])
bf = {r["name"]: r for r in json.loads(p.stdout)["bench_figures"]}
for name in ("bench:h2d_pinned_GBps", "bench:launch_latency_us"):
    r = bf[name]
    print("compare %-26s %8.3f -> %8.3f %-5s higher_is_better=%s %s" % (
        name, r["baseline_mean"], r["current_mean"], r["unit"], r["higher_is_better"],
        r["verdict"]))
    if r["verdict"] != "REGRESSION":
        fail("%s: verdict %s" % (name, r["verdict"]))
if not bf["bench:h2d_pinned_GBps"]["higher_is_better"] or \
        bf["bench:launch_latency_us"]["higher_is_better"]:
    fail("direction")
if bf["bench:fp32_GFLOPS"]["verdict"] != "NO_CHANGE":
    fail("an unchanged figure: %s" % bf["bench:fp32_GFLOPS"])
p = run(["compare", "--correction", "none", "--fail-on-regression", db + ":1", db2 + ":1"],
        ok=(1,))
if "Bench figures" not in p.stdout:
    fail("compare text:\n" + p.stdout)
# bench runs have figures, not operations: comparing a run with itself
# passes the regression gate and says nothing about missing operations
p = run(["compare", "--fail-on-regression", db + ":1", db + ":1"])
if p.stderr.strip():
    fail("compare of a bench run with itself: %r" % p.stderr)

# health --bench: a baseline 100x above what the device does must be flagged
con = sqlite3.connect(db)
con.execute("UPDATE counters SET value = value * 100")
con.commit()
con.close()
p = run(["health", "--bench", "--device", "opencl", "--store", db, "--json", "--exit-code",
         "--max-size", "1048576", "--time-cap", "0.2"], ok=(1,))
hj = json.loads(p.stdout)
verd = {f["figure"]: f["verdict"] for f in hj["figures"]}
print("health --bench verdicts: %s" % verd)
if verd.get("h2d_pinned_GBps") != "below_baseline" or hj["flagged"] < 1:
    fail("health did not flag h2d_pinned_GBps: %s" % verd)
if verd.get("launch_latency_us") != "ok":
    fail("a latency far below its baseline is ok: %s" % verd)
# a sweep figure's baseline is the same size's: at a size no stored run
# measured (2 MiB) there is none
p = run(["health", "--bench", "--device", "opencl", "--store", db, "--json", "--max-size",
         "2097152", "--time-cap", "0.2"], ok=(0, 1))
h2 = {f["figure"]: f for f in json.loads(p.stdout)["figures"]}["h2d_pinned_GBps"]
if h2["verdict"] != "no_reference" or h2["baseline"] is not None:
    fail("h2d_pinned at 2 MiB has a baseline: %s" % h2)
# the share is configurable: with the baseline at 10x the device's figures,
# a share of 1 % flags nothing below the baseline (the default 80 % would)
con = sqlite3.connect(db)
con.execute("UPDATE counters SET value = value / 10")
con.commit()
con.close()
p = run(["health", "--bench", "--device", "opencl", "--store", db, "--json", "--exit-code",
         "--min-baseline", "0.01", "--max-size", "1048576", "--time-cap", "0.2"], ok=(0, 1))
hj = json.loads(p.stdout)
verd = {f["figure"]: f["verdict"] for f in hj["figures"]}
print("health --bench --min-baseline 0.01 verdicts: %s" % verd)
if verd.get("h2d_pinned_GBps") != "ok" or hj["min_baseline_share"] != 0.01:
    fail("--min-baseline 0.01 still flags: %s" % hj)
shutil.rmtree(tmp)
print("ok")
