#!/usr/bin/env python3
"""tests/t_lib_views.py: summary, memory, advise and report on a libgpuprof
export with CPU ranges, GPU ranges (gp_range_begin_ex), OpenCL kernel timers
(PoCL) and tracked buffers (tests/progs/lib_views_prog.c), checked against
what the program measured and tracked itself: every count, each range's
total between the program's own inner and outer measurements (+-0.1 % for
the TSC calibration), the tracked
peak and the bytes never freed to the byte; the seed's rules fire on the
ranges and buffers built to trigger them (and not on the others); every
panel of the report has data. Skips (77) without an OpenCL device."""
import json, os, re, subprocess, sys, tempfile
from gp_testutil import check, failures, gp_ok, set_verbose

set_verbose()

BIN = os.environ["GPUPROF_BIN"]
BUILD = os.environ["GPUPROF_BUILD_DIR"]
PROG = os.path.join(BUILD, "tests", "lib_views_prog")


gp = gp_ok  # a step the rest of the test needs: exits on failure


tmp = tempfile.mkdtemp()
out, facts_path = os.path.join(tmp, "lv.json"), os.path.join(tmp, "facts.json")
r = subprocess.run([PROG, out, facts_path], capture_output=True, text=True)
if r.returncode == 77:
    print("SKIP:", r.stdout.strip())
    sys.exit(77)
if r.returncode != 0:
    sys.exit("lib_views_prog: exit %d: %s %s" % (r.returncode, r.stdout, r.stderr))
facts = json.load(open(facts_path))

# ---- summary: counts exact, totals between the program's own measurements
s = json.loads(gp("summary", "--json", out))["traces"][0]
ops = {}
for c in s["categories"]:
    for o in c["ops"]:
        ops[(c["category"], o["name"])] = o
for name, f in facts["ranges"].items():
    o = ops.get(("annotation", name))
    check(o is not None, "summary has range %s" % name)
    if not o:
        continue
    check(o["count"] == f["count"], "%s: count %d == %d" % (name, o["count"], f["count"]))
    # the library's clock is the TSC calibrated against CLOCK_MONOTONIC over
    # 20 ms: its durations may differ from the program's by that rate's error
    # (0.1 % allowed)
    lo, hi = f["inner_ns"] * (1 - 1e-3), f["outer_ns"] * (1 + 1e-3)
    check(lo <= o["total_ns"] <= hi,
          "%s: total %d within the program's [%d, %d] (+-0.1 %%)" % (name, o["total_ns"], f["inner_ns"], f["outer_ns"]))
for name, n in facts["kernels"].items():
    o = ops.get(("kernel", name))
    check(o is not None and o["count"] == n, "summary has kernel %s x %d" % (name, n))
bn = [b["name"] for b in s.get("bottlenecks", [])]
check("cpu_big" in bn, "summary bottlenecks include the library range cpu_big: %s" % bn)
text = gp("summary", out)
check("Top" in text and "cpu_big" in text.split("bottlenecks")[-1], "summary text lists cpu_big as a bottleneck")

# ---- memory: the tracked buffers, to the byte
m = json.loads(gp("memory", "--json", out))["traces"][0]
check(len(m["devices"]) == 1, "memory: one device (the tracker)")
d = m["devices"][0] if m["devices"] else {}
check(d.get("peak_allocated_bytes") == facts["peak_bytes"],
      "memory: peak %s == %d" % (d.get("peak_allocated_bytes"), facts["peak_bytes"]))
check(d.get("leaked_bytes") == facts["never_freed_bytes"] and d.get("leaked_allocations") == 1,
      "memory: never freed %s bytes in %s allocation(s)" % (d.get("leaked_bytes"), d.get("leaked_allocations")))
check(d.get("allocations") == 2 and d.get("frees") == 1, "memory: 2 allocations, 1 free")
# the tracker's events are on the calling thread's track: the never-freed
# buffer is grouped under the range it was tracked in (they were all on the
# process's track, under "no enclosing operation")
lops = [(x.get("op"), x.get("bytes")) for x in d.get("leaks_by_op", [])]
check(lops == [("step", facts["never_freed_bytes"])], "memory: the leak is grouped under step: %s" % lops)
check("(no enclosing operation)" not in gp("memory", out), "memory text: no leak without its operation")
check("profile_memory=True" not in gp("memory", out), "memory text does not ask for profile_memory")

# ---- advise: the seed's rules on their triggers
adv = {a["id"]: a for a in json.loads(gp("advise", "--json", out))["traces"][0]["advice"]}


def evidence(rule):
    return {e["name"]: e for e in adv.get(rule, {}).get("evidence", [])}


ev = evidence("small-gpu-op")
check("gpu_small" in ev and ev["gpu_small"]["count"] == facts["ranges"]["gpu_small"]["count"],
      "small-gpu-op: gpu_small (GPU range) x %d" % facts["ranges"]["gpu_small"]["count"])
check("fill" in ev, "small-gpu-op: the kernel timer fill")
check("cpu_small" not in ev and "cpu_big" not in ev, "small-gpu-op: no CPU range")
ev = evidence("batch-calls")
check("gpu_small" in ev and ev["gpu_small"]["count"] == 12, "batch-calls: 12 gpu_small back to back")
ev = evidence("large-cpu-op")
check(list(ev) == ["cpu_big"], "large-cpu-op: only cpu_big (> 10 ms): %s" % list(ev))
ev = evidence("cache-calls")
check(list(ev) == ["cpu_small"] and ev["cpu_small"]["count"] == 150,
      "cache-calls: only cpu_small x 150: %s" % list(ev))
ev = evidence("large-memory")
check(len(ev) == 1 and list(ev.values())[0]["value"] == facts["peak_bytes"],
      "large-memory: the tracked peak %d" % facts["peak_bytes"])
# a threshold above the peak silences it (the trigger, not the presence of memory)
adv2 = json.loads(gp("advise", "--json", "--set", "large-memory.min_mb=152", out))["traces"][0]["advice"]
check("large-memory" not in [a["id"] for a in adv2], "large-memory silent at min_mb=152 (peak 151 MiB)")
adv3 = json.loads(gp("advise", "--json", "--set", "cache-calls.min_calls=151", out))["traces"][0]["advice"]
check("cache-calls" not in [a["id"] for a in adv3], "cache-calls silent at min_calls=151")

# ---- report: every panel has data
html_path = os.path.join(tmp, "lv.html")
gp("report", out, "-o", html_path)
h = open(html_path).read()
rd = json.loads(re.search(r'<script type="application/json" id="r0-data"[^>]*>(.*?)</script>', h, re.S).group(1))
md = json.loads(re.search(r'<script type="application/json" id="r0-memdata"[^>]*>(.*?)</script>', h, re.S).group(1))
check(len(rd["pie"]) >= 2, "report: pie has %d slices" % len(rd["pie"]))
labels = lambda k: [x["label"].split(" [")[0] for x in rd[k]]
for k in ("avg", "calls"):
    check({"cpu_big", "cpu_small", "gpu_small", "fill"} <= set(labels(k)), "report %s: ranges and kernels: %s" % (k, labels(k)))
stack = {x["label"]: x["parts"] for x in rd["stack"]}
check(stack.get("cpu_big", [0])[0] > 0 and stack.get("gpu_small", [0, 0])[1] > 0,
      "report CPU/GPU bars: cpu_big CPU time, gpu_small GPU time: %s" % stack)
# a range with timed work: its host time as CPU, the timings' device time
# as GPU kernel and transfer time (the transfer was never filled before)
up = stack.get("upload", [0, 0, 0])
check(up[0] > 0 and up[1] == 0 and up[2] == facts["upload_transfer_ns"],
      "report CPU/GPU bars: upload's transfer time is the write's device time %s ns: %s"
      % (facts["upload_transfer_ns"], up))
stp = stack.get("step", [0, 0, 0])
check(stp[0] > 0 and stp[1] > 0 and stp[2] == 0, "report CPU/GPU bars: step's kernels as GPU time: %s" % stp)
check(len(rd["tl"]["rows"]) >= 2, "report timeline: thread and GPU rows")
check(md["devices"] and md["devices"][0]["peak"] == facts["peak_bytes"], "report memory chart: tracked peak")
tb = re.search(r'class="bottlenecks">(.*?)</table>', h, re.S).group(1)
check("cpu_big" in tb, "report bottleneck table lists cpu_big")

if failures:
    sys.exit("%d failure(s)" % len(failures))
print("lib views: ok")
