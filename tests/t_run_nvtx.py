#!/usr/bin/env python3
"""gpuprof run --nvtx: the injection library (InitializeInjectionNvtx2, no
GPU needed) records NVTX push/pop ranges with correct nesting and durations,
start/end ranges ended on another thread, marks, named domains with
registered strings, and thread names, into the store; summary reads them."""
import os, sqlite3, subprocess, sys, tempfile

BIN = os.environ.get("GPUPROF_BIN", "build/gpuprof")
BUILD = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))
PROG = os.path.join(BUILD, "tests", "nvtx_prog")
LIB = os.path.join(BUILD, "libgpuprof_cuda_inject.so")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


if not os.path.exists(PROG) or not os.path.exists(LIB):
    print("SKIP: injection library / NVTX test program not built (needs the CUDA toolkit's "
          "headers): %s" % LIB)
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="gp_nvtx_")
db = os.path.join(tmp, "n.db")
N = 4
r = subprocess.run([BIN, "run", "-o", db, "--nvtx", "--no-opencl", "--no-cuda", "--", PROG,
                    str(N)], capture_output=True, text=True)
check(r.returncode == 0, "run: %d %s" % (r.returncode, r.stderr))
con = sqlite3.connect(db)
rows = con.execute("SELECT s.s, x.ts, x.dur, x.track, c.s FROM slices x JOIN strings s ON "
                   "s.proc = x.proc AND s.id = x.name JOIN strings c ON c.proc = x.proc AND "
                   "c.id = x.cat ORDER BY x.ts").fetchall()
names = [r[0] for r in rows]
check(names.count("outer") == N and names.count("inner") == N, "push/pop counts: %r" % names)
check(names.count("mylib::registered step") == N, "domain range with registered string")
check(names.count("cross-thread") == 1, "start/end range")
check(all(r[4] == "nvtx" for r in rows), "category nvtx")
outer = [r for r in rows if r[0] == "outer"]
inner = [r for r in rows if r[0] == "inner"]
for o, i in zip(outer, inner):
    check(o[1] <= i[1] and i[1] + i[2] <= o[1] + o[2], "inner nested in outer")
    check(i[2] >= 100_000 and o[2] >= 200_000, "durations cover the spins: %d %d" % (i[2], o[2]))
cross = [r for r in rows if r[0] == "cross-thread"][0]
check(cross[2] >= 200_000, "cross-thread range lasts >= 200 us: %d" % cross[2])
check(cross[3] == outer[0][3], "start/end range on the starting thread's track")
marks = con.execute("SELECT count(*) FROM instants i JOIN strings s ON s.proc = i.proc AND "
                    "s.id = i.name WHERE s.s = 'checkpoint'").fetchone()[0]
check(marks == N, "marks: %d" % marks)
tname = con.execute("SELECT name FROM tracks WHERE id = ?", (outer[0][3],)).fetchone()[0]
check(tname == "main thread", "thread name: %r" % tname)
con.close()
r = subprocess.run([BIN, "summary", "--json", db], capture_output=True, text=True)
check(r.returncode == 0 and '"outer"' in r.stdout, "summary reads the NVTX ranges")
# NVTX off: the program runs unrecorded
db2 = os.path.join(tmp, "off.db")
r = subprocess.run([BIN, "run", "-o", db2, "--no-opencl", "--no-cuda", "-q", "--no-summary",
                    "--", PROG, "1"], capture_output=True, text=True)
check(r.returncode == 0, "run without --nvtx")
n = sqlite3.connect(db2).execute("SELECT count(*) FROM slices").fetchone()[0]
check(n == 0, "no NVTX ranges without --nvtx: %d" % n)
# the Chrome export keeps the marks as instants and the ranges as slices, at
# the store's times (epoch ns = start_wall_ns - start_mono_ns + ts)
import json
from decimal import Decimal
exp = os.path.join(tmp, "n.json")
r = subprocess.run([BIN, "export", db, "-o", exp], capture_output=True, text=True)
check(r.returncode == 0, "export: %s" % r.stderr)
if r.returncode == 0:
    con = sqlite3.connect(db)
    off = con.execute("SELECT start_wall_ns - start_mono_ns FROM runs").fetchone()[0]
    want_marks = sorted(off + t for (t,) in con.execute(
        "SELECT i.ts FROM instants i JOIN strings s ON s.proc = i.proc AND s.id = i.name "
        "WHERE s.s = 'checkpoint'"))
    want_ranges = sorted((n, off + t, d) for n, t, d, _, _ in rows)
    con.close()
    doc = json.load(open(exp), parse_float=Decimal)
    base = int(doc.get("baseTimeNanoseconds", 0))
    ns = lambda v: base + int(Decimal(v) * 1000)
    got_marks = sorted(ns(e["ts"]) for e in doc["traceEvents"] if e.get("ph") in ("i", "I")
                       and e.get("name") == "checkpoint")
    got_ranges = sorted((e["name"], ns(e["ts"]), int(Decimal(e["dur"]) * 1000)) for e in doc["traceEvents"]
                        if e.get("ph") == "X" and e.get("cat") == "nvtx")
    check(got_marks == want_marks, "export: NVTX marks as instants at the store's times (%d of %d)" %
          (len(got_marks), len(want_marks)))
    check(got_ranges == want_ranges, "export: NVTX ranges as slices at the store's times (%d of %d)" %
          (len(got_ranges), len(want_ranges)))
if failures:
    sys.exit(1)
print("ok")
