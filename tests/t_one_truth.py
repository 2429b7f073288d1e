#!/usr/bin/env python3
"""Issue 15, figures that disagreed or misled (items 1-4), on small traces
whose expected figures are computed here independently:
 1. nested time is counted once: self time per operation, bottlenecks ranked
    by self time, report figures and category pie from self time;
 2. CPU active has one definition (cpu_op, runtime, driver) in analyze,
    timeline and report alike;
 3. flame --min-duration keeps the weight of top-level frames in "(other)";
 4. Kineto's "est. achieved occupancy %" = 0 is unknown: no low-occupancy
    advice for it."""
import json, os, re, subprocess, sys, tempfile
from gp_testutil import BIN, check, failures


def gp(*args):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120)


tmp = tempfile.mkdtemp(prefix="gp_truth_")


def write(name, events, extra=None):
    doc = {"schemaVersion": 1, "traceEvents": events}
    doc.update(extra or {})
    p = os.path.join(tmp, name)
    with open(p, "w") as f:
        json.dump(doc, f)
    return p


def X(cat, name, ts, dur, pid=1, tid=1, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


# ---- 1. one call chain on one thread: ProfilerStep > a > b > c, plus a kernel
chain = [X("user_annotation", "ProfilerStep#1", 0, 1000),
         X("cpu_op", "aten::a", 0, 900),
         X("cpu_op", "aten::b", 100, 700),
         X("cpu_op", "aten::c", 200, 500),
         X("cuda_runtime", "cudaLaunchKernel", 300, 50, args={"correlation": 5}),
         X("kernel", "k", 400, 300, pid=0, tid=7,
           args={"device": 0, "stream": 7, "correlation": 5})]
p1 = write("chain.json", chain)
# self times (us): step 100, a 200, b 200, c 450 (500 - launch 50), launch 50, kernel 300
want_self = {"ProfilerStep#1": 100, "aten::a": 200, "aten::b": 200, "aten::c": 450,
             "cudaLaunchKernel": 50, "k": 300}
r = gp("summary", "--json", p1)
check(r.returncode == 0, "1 summary: %s" % r.stderr)
js = json.loads(r.stdout) if r.returncode == 0 else {"traces": [{"categories": []}]}
tr = js["traces"][0]
rows = {o["name"]: o for c in tr["categories"] for o in c["ops"]}
for name, us in want_self.items():
    got = rows.get(name, {}).get("self_ns")
    check(got == us * 1000, "1 self time of %s: %r, want %d ns" % (name, got, us * 1000))
cpu_pct = sum(o.get("self_pct", 0) for o in rows.values() if o["name"] != "k")
check(cpu_pct <= 100.0 + 1e-9, "1 self shares of one thread add up to %.2f %% (<= 100)" % cpu_pct)
bn = [b["name"] for b in tr.get("bottlenecks", [])]
check(bn[:3] == ["aten::c", "k", "aten::a"] or bn[:3] == ["aten::c", "k", "aten::b"],
      "1 bottlenecks by self time: %r" % bn)
rh = os.path.join(tmp, "r.html")
r = gp("report", "-o", rh, p1)
check(r.returncode == 0, "1 report: %s" % r.stderr)
html = open(rh).read() if os.path.exists(rh) else ""
# the busy time of all operations = sum of self times (1.3 ms), never the
# inclusive 2.65 ms of the nested chain
m = re.search(r'id="r0-total">([^<]+)</div><div class="k">self time \(all ops', html)
check(m and m.group(1) == "1300.000 us", "1 report shows the self-time total 1300.000 us: %r"
      % (m and m.group(1)))
check("2650.000 us" not in html, "1 report does not add nested inclusive times (2650.000 us)")

# ---- 2. CPU active: cpu_op + runtime + driver, not annotations
# step annotation [0, 1000] us; ops [0, 900]; kernel [400, 700]
want_cpu = 900_000
want_overlap = 300_000
r = gp("analyze", "--json", "--only", "timeline", p1)
if r.returncode != 0:
    r = gp("analyze", "--json", p1)
check(r.returncode == 0, "2 analyze: %s" % r.stderr)
try:
    ts = json.loads(r.stdout)["timeline_stats"][0]
    check(ts["cpu_active_us"] == want_cpu / 1000 and ts["overlap_us"] == want_overlap / 1000,
          "2 analyze timeline_stats cpu %r overlap %r" % (ts["cpu_active_us"], ts["overlap_us"]))
except (ValueError, KeyError, IndexError) as e:
    check(False, "2 analyze JSON: %s" % e)
for cmd in ("timeline", "report"):
    out = os.path.join(tmp, "%s.html" % cmd)
    r = gp(cmd, "-o", out, p1)
    check(r.returncode == 0, "2 %s: %s" % (cmd, r.stderr))
    page = open(out).read() if os.path.exists(out) else ""
    fig = re.search(r'-cpu">([^<]+)</div><div class="k">CPU active', page)
    check(fig and fig.group(1) == "900.000 us", "2 %s CPU active %r, want 900.000 us"
          % (cmd, fig and fig.group(1)))
    ov = re.search(r'-overlap">([^<]+)</div>', page)
    check(ov and ov.group(1) == "300.000 us", "2 %s overlap %r, want 300.000 us"
          % (cmd, ov and ov.group(1)))

# ---- 3. flame --min-duration: short top-level frames go to "(other)"
ev = [X("cpu_op", "long", 0, 10000, tid=1), X("cpu_op", "short", 0, 20, tid=2),
      X("kernel", "tiny", 100, 30, pid=0, tid=9, args={"device": 0, "stream": 9})]
p3 = write("flame.json", ev)
fo = os.path.join(tmp, "f.folded")
r = gp("flame", "--min-duration", "1ms", "-o", fo, p3)
check(r.returncode == 0, "3 flame: %s" % r.stderr)
total = 0
other = 0
for line in open(fo) if os.path.exists(fo) else []:
    stack, w = line.rsplit(" ", 1)
    total += int(w)
    if stack.split(";")[0] == "(other)":
        other += int(w)
check(total == (10000 + 20 + 30) * 1000, "3 folded total %d keeps every frame's weight" % total)
check(other == 50 * 1000, "3 (other) holds the folded top-level frames: %d" % other)

# ---- 4. occupancy 0 (Kineto: not computed) is unknown
ev = [X("kernel", "big_gemm_smem", 0, 9000, pid=0, tid=7,
        args={"device": 0, "stream": 7, "grid": [216, 1, 1], "block": [256, 1, 1],
              "est. achieved occupancy %": 0}),
      X("kernel", "low_occ", 9000, 1000, pid=0, tid=7,
        args={"device": 0, "stream": 7, "grid": [216, 1, 1], "block": [256, 1, 1],
              "est. achieved occupancy %": 5})]
p4 = write("occ.json", ev, {"deviceProperties": [{"id": 0, "name": "A100", "numSms": 108}]})
r = gp("advise", "--json", p4)
check(r.returncode == 0, "4 advise: %s" % r.stderr)
try:
    adv = json.loads(r.stdout)
    occ = [a for a in adv["traces"][0]["advice"] if a.get("id") == "low-occupancy"]
    text = json.dumps(occ)
    check(occ and "big_gemm_smem" not in text and "low_occ" in text,
          "4 low-occupancy names low_occ only: %s" % text[:300])
except ValueError as e:
    check(False, "4 advise JSON: %s" % e)

# ---- 6 (part). queue length at equal timestamps: the default mode counts
# the dequeue (kernel start) first; --compat hta orders the launch first, as
# HTA 0.6.1's queue length does (launches come first in the frame it sorts)
ev = [X("cuda_runtime", "cudaLaunchKernel", 0, 5, args={"correlation": 1}),
      X("kernel", "kA", 10, 10, pid=0, tid=7, args={"device": 0, "stream": 7, "correlation": 1}),
      X("cuda_runtime", "cudaLaunchKernel", 10, 5, args={"correlation": 2}),
      X("kernel", "kB", 30, 10, pid=0, tid=7, args={"device": 0, "stream": 7, "correlation": 2})]
p6 = write("queue.json", ev)
for mode, want in (([], 1), (["--compat", "hta"], 2)):
    r = gp("analyze", "--json", *(mode + [p6]))
    try:
        q = json.loads(r.stdout)["queue_length"][0]
        check(q["max"] == want, "6 queue max %r in %s, want %d" % (q["max"], mode or "default", want))
    except (ValueError, KeyError, IndexError) as e:
        check(False, "6 analyze JSON: %s %s" % (e, r.stderr[:200]))

# ---- 8. compare: a named file without events is an error; an empty side
# never passes the gate
base = os.path.join(os.environ.get("GPUPROF_SOURCE_DIR", "."), "tests", "data",
                    "small_kineto.json")
for nm, text in (("foo.json", '{"foo": 1}'), ("arr.json", "[]"),
                 ("noev.json", '{"traceEvents": []}')):
    pth = os.path.join(tmp, nm)
    open(pth, "w").write(text)
    for cmd in (["compare", "--fail-on-regression", base, pth],
                ["compare", "--fail-on-regression", pth, base], ["summary", pth],
                ["flame", "-o", os.path.join(tmp, "x.folded"), pth], ["compile", pth],
                ["analyze", pth], ["memory", pth], ["advise", pth],
                ["timeline", "-o", os.path.join(tmp, "x.html"), pth]):
        r = gp(*cmd)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and nm in r.stderr,
              "8 %s %s: exit %d %r" % (cmd[0], nm, r.returncode, r.stderr[:200]))
# a folder side whose traces hold no operation (only counters) fails the gate
empty_dir = os.path.join(tmp, "emptyside")
os.mkdir(empty_dir)
for i in range(2):
    with open(os.path.join(empty_dir, "r%d.json" % i), "w") as f:
        json.dump({"traceEvents": [{"ph": "C", "name": "c", "pid": 1, "tid": 1, "ts": i,
                                    "args": {"v": 1}}]}, f)
r = gp("compare", "--fail-on-regression", base, empty_dir)
check(r.returncode == 1 and "has no operations" in r.stderr,
      "8 compare against a side without operations: exit %d %r" % (r.returncode, r.stderr[:200]))

# ---- 14. one behaviour for empty input, gzip trailing garbage, a UTF-8 BOM
import gzip
raw = open(base, "rb").read()
bom = os.path.join(tmp, "bom.json")
open(bom, "wb").write(b"\xef\xbb\xbf" + raw)
gzg = os.path.join(tmp, "g.json.gz")
open(gzg, "wb").write(gzip.compress(raw) + b"garbage\n")
emp = os.path.join(tmp, "empty.json")
open(emp, "wb").write(b"")
bomf = os.path.join(tmp, "bom.folded")
open(bomf, "wb").write(b"\xef\xbb\xbfa;b 3\n")
outs = {"flame": ["-o", os.path.join(tmp, "o.folded")], "timeline": ["-o", os.path.join(tmp, "o.html")],
        "report": ["-o", os.path.join(tmp, "o2.html")], "memory": ["--json"], "summary": [],
        "analyze": [], "advise": []}
for cmd, extra in outs.items():
    r = gp(cmd, *(extra + [bom]))
    check(r.returncode == 0, "14 %s reads a JSON trace with a UTF-8 BOM: %d %s"
          % (cmd, r.returncode, r.stderr[:200]))
    for bad, what in ((gzg, "trailing garbage"), (emp, "")):
        r = gp(cmd, *(extra + [bad]))
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and what in r.stderr,
              "14 %s refuses %s: exit %d %r" % (cmd, os.path.basename(bad), r.returncode,
                                                r.stderr[:200]))
r = gp("compare", bom, gzg)
check(r.returncode == 2 and "trailing garbage" in r.stderr, "14 compare refuses gzip garbage")
r = gp("flame", "-o", os.path.join(tmp, "b.folded"), bomf)
folded = open(os.path.join(tmp, "b.folded"), "rb").read() if r.returncode == 0 else b""
check(folded == b"a;b 3\n", "14 a folded file's BOM is not part of the first frame: %r" % folded)

# a TORCH_TRACE log (compile) with a UTF-8 BOM reads as the same log without it
tlog = os.path.join(os.environ.get("GPUPROF_SOURCE_DIR", "."), "tests", "data",
                    "torch_trace_small.log")
tbom = os.path.join(tmp, "bom_trace.log")
open(tbom, "wb").write(b"\xef\xbb\xbf" + open(tlog, "rb").read())
ra, rb = gp("compile", "--json", tlog), gp("compile", "--json", tbom)
check(ra.returncode == 0 and rb.returncode == 0 and
      rb.stderr.replace(tbom, "LOG") == ra.stderr.replace(tlog, "LOG"),
      "14 compile of a log with a BOM: %d %r" % (rb.returncode, rb.stderr[:200]))
try:
    la, lb = json.loads(ra.stdout)["logs"][0], json.loads(rb.stdout)["logs"][0]
    diff = sorted(k for k in la if k not in ("file", "bytes") and la[k] != lb.get(k))
    check(not diff and lb["bytes"] == la["bytes"] + 3,
          "14 compile: a BOM changes %r" % diff)
except (ValueError, KeyError, IndexError) as e:
    check(False, "14 compile JSON: %s" % e)

# ---- 7. smaller: stream -1 as written by Kineto (4294967295); no negative
# fragmentation without a reserved figure; --interval errors name the
# option; a missing -o is said
ev = [X("cuda_runtime", "cudaMemcpyAsync", 0, 10, args={"correlation": 9}),
      X("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 20, 30, pid=0, tid=4294967295,
        args={"device": 0, "stream": 4294967295, "correlation": 9, "bytes": 1024}),
      {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
       "ts": 5, "args": {"Device Type": 0, "Device Id": -1, "Addr": 1, "Bytes": 4096,
                         "Total Allocated": 4096, "Total Reserved": 0}}]
p7 = write("stream.json", ev)
rh7 = os.path.join(tmp, "r7.html")
r = gp("report", "-o", rh7, p7)
page = open(rh7).read() if r.returncode == 0 else ""
check("4294967295" not in page and "stream -1" in page,
      "7 report shows stream -1, never 4294967295")
r = gp("memory", "--json", p7)
try:
    d = json.loads(r.stdout)["traces"][0]["devices"][0]
    check(d.get("fragmentation_at_peak_bytes") is None and d.get("peak_reserved_bytes") is None,
          "7 no reserved figure: fragmentation unknown, not %r" % d.get("fragmentation_at_peak_bytes"))
except (ValueError, KeyError, IndexError) as e:
    check(False, "7 memory JSON: %s %s" % (e, r.stderr))
for cmd in ("monitor", "session"):
    args = [cmd, "--interval", "0.001", "--count", "1"] if cmd == "monitor" else \
        [cmd, "list", "--interval", "0.001"]
    r = gp(*args)
    check(r.returncode == 2 and "--interval expects seconds" in r.stderr and
          "monitoring_interval_seconds" not in r.stderr,
          "7 %s --interval error names the option: %r" % (cmd, r.stderr[:200]))
for cmd in ("flame", "timeline", "report"):
    r = gp(cmd, p7)
    check(r.returncode == 2 and r.stderr.startswith("gpuprof %s: -o OUT is missing" % cmd),
          "7 %s without -o says so: %r" % (cmd, r.stderr[:120]))

# ---- 7. advice evidence values carry their unit, the same in text, JSON and HTML
import glob, html as htmlmod
adv_traces = [p4, p1] + sorted(glob.glob(os.path.join(
    os.environ.get("GPUPROF_SOURCE_DIR", "."), "..", "shared", "traces", "*", "*.json.gz")))
suffix = {"ns": r"\d (ns|us|ms|s)$", "ms": r"\d (ns|us|ms|s)$", "bytes": r"\d (B|KiB|MiB|GiB|TiB)$",
          "pct": r"(\d|0\.01) %$", "count": r"^\d+$", None: r"^-?[\d.]+(e[-+]\d+)?$"}
nvalues = 0
for tp in adv_traces:
    rj = gp("advise", "--json", tp)
    rt = gp("advise", tp)
    rh = os.path.join(tmp, "adv.html")
    rr = gp("report", "-o", rh, tp)
    if rj.returncode or rt.returncode or rr.returncode:
        check(False, "7 advise/report of %s: %s %s" % (tp, rj.stderr, rr.stderr))
        continue
    text_vals = re.findall(r"^    - .*, value (.+)$", rt.stdout, re.M)
    page = open(rh).read()
    html_vals = [htmlmod.unescape(v) for v in re.findall(
        r'<tr><td class="l">[^<]*</td><td>\d+</td><td[^>]*>[^<]*</td><td>([^<]*)</td></tr>', page)]
    json_vals = []
    for a in json.loads(rj.stdout)["traces"][0]["advice"]:
        for e in a["evidence"]:
            if e["value"] is not None:
                check("value_unit" in e and e["value_unit"] in suffix,
                      "7 %s: evidence value_unit %r" % (tp, e.get("value_unit")))
                json_vals.append((e["value"], e.get("value_unit")))
    check(len(text_vals) == len(json_vals), "7 %s: %d text values, %d JSON values"
          % (tp, len(text_vals), len(json_vals)))
    for (v, u), tv in zip(json_vals, text_vals):
        nvalues += 1
        check(re.search(suffix.get(u, "^$"), tv) is not None,
              "7 %s: value %r (%s) shown as %r" % (os.path.basename(tp), v, u, tv))
        if u == "count":
            check(tv == "%d" % round(v), "7 count %r shown as %r" % (v, tv))
        if u == "pct" and abs(v) >= 0.01:
            check(tv == "%.2f %%" % v, "7 pct %r shown as %r" % (v, tv))
    check([v for v in html_vals if v != "N/A"] == text_vals,
          "7 %s: report evidence values %r differ from advise's %r"
          % (os.path.basename(tp), html_vals[:5], text_vals[:5]))
check(nvalues >= 2, "7 advice evidence values were checked (%d)" % nvalues)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
