#!/usr/bin/env python3
"""gpuprof run --nvtx: the injection library (InitializeInjectionNvtx2, no
GPU needed) records NVTX push/pop ranges with correct nesting and durations,
start/end ranges ended on another thread, marks, named domains with
registered strings, and thread names, into the store; summary reads them.
Then the per-thread buffers under load (issue 19): several threads (exiting
before the program) crossing chunk boundaries with names written into one
reused buffer, on the TSC and the CLOCK_MONOTONIC paths: every event
stored once, nothing dropped, each name the text at push time, nesting kept,
times inside the CLOCK_MONOTONIC interval the program printed; and a fork:
the child records as a process of its own; ranges 5 ms apart over a second
lie within 2 us of the CLOCK_MONOTONIC reads around them."""
import bisect, os, sqlite3, subprocess, sys, tempfile
from gp_testutil import BIN, check, failures

BUILD = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))
PROG = os.path.join(BUILD, "tests", "nvtx_prog")
LIB = os.path.join(BUILD, "libgpuprof_cuda_inject.so")


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
# export keeps the marks (issue 15 item 7): Chrome JSON instants, Perfetto track events
import json
ej = os.path.join(tmp, "n.json")
r = subprocess.run([BIN, "export", "-o", ej, db], capture_output=True, text=True)
check(r.returncode == 0, "export: %s" % r.stderr)
if r.returncode == 0:
    ev = json.load(open(ej))["traceEvents"]
    got = [e for e in ev if e.get("name") == "checkpoint" and e.get("ph") == "i"]
    check(len(got) == N, "export keeps the %d marks: %d" % (N, len(got)))
ep = os.path.join(tmp, "n.pftrace")
r = subprocess.run([BIN, "export", "--format", "perfetto", "-o", ep, db], capture_output=True,
                   text=True)
check(r.returncode == 0 and ("%d instants" % N) in r.stderr,
      "perfetto export keeps the marks: %s" % r.stderr)
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

NAMES = "SELECT s.s, x.ts, x.dur, x.track, x.proc FROM slices x JOIN strings s ON s.proc = " \
        "x.proc AND s.id = x.name"


def stress(clock, T=4, P=3000):
    dbs = os.path.join(tmp, "stress_%s_%d_%d.db" % (clock, T, P))
    env = dict(os.environ)
    if clock == "monotonic":
        env["GPUPROF_CLOCK"] = "monotonic"
    r = subprocess.run([BIN, "run", "-o", dbs, "--nvtx", "--no-opencl", "--no-cuda", "-q",
                        "--no-summary", "--", PROG, "stress", str(T), str(P)],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0, "%s: stress run: %d %s" % (clock, r.returncode, r.stderr))
    vals = dict(l.split() for l in r.stdout.splitlines() if l.startswith("mono_"))
    before, after = int(vals["mono_before"]), int(vals["mono_after"])
    c = sqlite3.connect(dbs)
    dropped = c.execute("SELECT sum(dropped) FROM processes").fetchone()[0]
    check(dropped == 0, "%s: nothing dropped: %s" % (clock, dropped))
    rows = c.execute(NAMES).fetchall()
    outer = [x for x in rows if x[0] == "stress outer"]
    dyn = [x for x in rows if x[0].startswith("dyn ")]
    check(len(outer) == T * P and len(dyn) == T * P,
          "%s: every pair stored once: %d outer, %d inner" % (clock, len(outer), len(dyn)))
    marks = c.execute("SELECT count(*) FROM instants i JOIN strings s ON s.proc = i.proc AND "
                      "s.id = i.name WHERE s.s = 'stressdom::reg'").fetchone()[0]
    check(marks == T * P // 100, "%s: domain marks with a registered string: %d" % (clock, marks))
    check(all(before <= x[1] and x[1] + x[2] <= after for x in rows),
          "%s: times on CLOCK_MONOTONIC inside [%d, %d]: %r" %
          (clock, before, after, [x for x in rows if not before <= x[1] <= after][:3]))
    by_track = {}
    for x in dyn:
        by_track.setdefault(x[3], []).append(x)
    check(len(by_track) == T, "%s: one track per thread: %d" % (clock, len(by_track)))
    starts = {}
    for o in outer:
        starts.setdefault(o[3], []).append((o[1], o[1] + o[2]))
    bad_name = bad_nest = 0
    for tr, xs in by_track.items():
        xs.sort(key=lambda x: x[1])
        k = xs[0][0].split()[1]
        for i, x in enumerate(xs):  # the buffer's text at push time: dyn K i%3, in order
            if x[0] != "dyn %s %d" % (k, i % 3):
                bad_name += 1
        os_ = sorted(starts.get(tr, []))
        for x in xs:
            j = bisect.bisect_right(os_, (x[1], float("inf"))) - 1
            if j < 0 or not (os_[j][0] <= x[1] and x[1] + x[2] <= os_[j][1]):
                bad_nest += 1
    check(bad_name == 0, "%s: names follow the reused buffer's text: %d wrong" % (clock, bad_name))
    check(bad_nest == 0, "%s: inner ranges nested in their outer range: %d not" % (clock, bad_nest))
    c.close()


stress("tsc")
stress("monotonic")
# a burst of 600,000 ranges from one thread (about 600 chunks): all stored,
# none dropped
stress("tsc", 1, 300000)


def clock_probes(clock, n=200):
    """each range inside the CLOCK_MONOTONIC times read around it, to 2 us,
    over ~1.2 s (many drain passes and TSC anchors)"""
    dbc = os.path.join(tmp, "clock_%s.db" % clock)
    env = dict(os.environ)
    if clock == "monotonic":
        env["GPUPROF_CLOCK"] = "monotonic"
    r = subprocess.run([BIN, "run", "-o", dbc, "--nvtx", "--no-opencl", "--no-cuda", "-q",
                        "--no-summary", "--", PROG, "clock", str(n)], capture_output=True,
                       text=True, env=env)
    check(r.returncode == 0, "%s: clock run: %d %s" % (clock, r.returncode, r.stderr))
    probes = [tuple(map(int, l.split()[1:])) for l in r.stdout.splitlines()
              if l.startswith("probe ")]
    c = sqlite3.connect(dbc)
    rows = sorted((x[1], x[2]) for x in c.execute(NAMES).fetchall() if x[0] == "clock probe")
    c.close()
    check(len(rows) == n == len(probes), "%s: %d probes, %d ranges" % (clock, len(probes), len(rows)))
    tol = 2000
    bad = [(p, r) for p, r in zip(probes, rows)
           if not (p[0] - tol <= r[0] and r[0] + r[1] <= p[1] + tol and r[1] >= 50000)]
    check(not bad, "%s: ranges on CLOCK_MONOTONIC within 2 us of the reads around them: %d off, "
          "e.g. %r" % (clock, len(bad), bad[:2]))


clock_probes("tsc")
clock_probes("monotonic")

dbf = os.path.join(tmp, "fork.db")
r = subprocess.run([BIN, "run", "-o", dbf, "--nvtx", "--no-opencl", "--no-cuda", "-q",
                    "--no-summary", "--", PROG, "fork"], capture_output=True, text=True)
check(r.returncode == 0, "fork run: %d %s" % (r.returncode, r.stderr))
c = sqlite3.connect(dbf)
procs = c.execute("SELECT id, pid FROM processes ORDER BY id").fetchall()
check(len(procs) == 2, "fork: two processes: %r" % procs)
rows = c.execute(NAMES).fetchall()
child = [x for x in rows if x[0] == "child range"]
check(len(child) == 5 and all(x[2] >= 20000 for x in child), "fork: the child's ranges: %r" % child)
check(len({x[4] for x in child}) == 1 and child and child[0][4] != procs[0][0],
      "fork: the child's ranges under the child's process")
check(sum(1 for x in rows if x[0] == "parent after fork" and x[4] == procs[0][0]) == 1,
      "fork: the parent goes on recording")
check(sorted(x[4] for x in rows if x[0] == "across fork") == [p[0] for p in procs],
      "fork: the range open across fork ends once in each process")
c.close()


def run_mode(mode):
    """runs nvtx_prog MODE; returns (stdout, connection)"""
    dbm = os.path.join(tmp, "%s.db" % mode)
    r = subprocess.run([BIN, "run", "-o", dbm, "--nvtx", "--no-opencl", "--no-cuda", "-q",
                        "--no-summary", "--", PROG, mode], capture_output=True, text=True)
    check(r.returncode == 0, "%s run: %d %s" % (mode, r.returncode, r.stderr))
    return r.stdout, sqlite3.connect(dbm), dbm


def by_name(c):
    out = {}
    for x in c.execute(NAMES).fetchall():
        out.setdefault(x[0], []).append(x)
    return out


def ends(x):
    return x[1] + x[2]


def one(n):
    """the only range named n in g (a placeholder when there is not one)"""
    return g[n][0] if len(g.get(n, [])) == 1 else (n, 0, 0, None, None)


# one push/pop stack per thread per domain (NVTX: "nesting is maintained per
# thread per domain"): a pop ends the newest range of its own domain, and the
# levels returned are those of the domain's stack
out, c, domdb = run_mode("domains")
lv = [l for l in out.splitlines() if l.startswith("levels ")]
check(lv == ["levels 0 0 1 1 0 0 1 1 0 0 1 0 1 0 0 0"], "domains: levels returned: %r" % lv)
g = by_name(c)
A, B, A2 = one("A"), one("D::B"), one("A2")
check(A[1] < B[1] < ends(A) < ends(B), "domains: A and D::B overlap, A ends first: %r %r" % (A, B))
check(A[1] < A2[1] and ends(A2) <= ends(A), "domains: A2 inside A")
O, X, I = one("D::outer"), one("E::x"), one("D::inner")
check(O[1] < X[1] < I[1] < ends(X) < ends(I) <= ends(O),
      "domains: E::x ends inside D::inner, both inside D::outer: %r %r %r" % (O, X, I))
check("nulldom" in g, "domains: the NULL domain is the default one (no prefix): %r" % sorted(g))
# each named domain's ranges on a track of its own beside the thread's (as
# Nsight Systems draws a row per domain): ranges of two domains overlap
# without nesting, which one track clipped in the nesting views (self time,
# flame graph). Before, all were on the thread's track.
trk = {r[0]: r[1:] for r in c.execute("SELECT id, type, tid, device, name FROM tracks")}
tk = lambda n: trk.get(one(n)[3], (None, None, None, None))
check(tk("A")[0] == 0 and tk("A2") == tk("A") and tk("nulldom") == tk("A"),
      "domains: the default domain on the thread's track: %r" % trk)
check(tk("D::B")[0] == 2 and tk("D::B")[3] == "D" and tk("D::outer") == tk("D::B")
      and tk("D::inner") == tk("D::B"), "domains: D's ranges on D's track: %r" % trk)
check(tk("E::x")[0] == 2 and tk("E::x")[3] == "E", "domains: E's range on E's track: %r" % trk)
check(tk("A")[1] == tk("D::B")[1] == tk("E::x")[1], "domains: all of the same thread: %r" % trk)
c.close()
# the nesting views: D::outer's self time is its length less D::inner's
# only (E::x, of another domain, is not its child), A's less A2's only
r = subprocess.run([BIN, "summary", "--json", domdb], capture_output=True, text=True)
check(r.returncode == 0, "domains: summary: %s" % r.stderr)
selfs = {}
for row in json.loads(r.stdout or "{}").get("traces", [{}])[0].get("bottlenecks", []):
    selfs[row.get("name")] = row.get("self_ns")
check(selfs.get("D::outer") == O[2] - I[2] and selfs.get("E::x") == X[2]
      and selfs.get("A") == A[2] - A2[2] and selfs.get("D::B") == B[2],
      "domains: self times per domain: %r (outer %d inner %d x %d)" % (selfs, O[2], I[2], X[2]))

# the wide-character variants, as UTF-8; a W push is a push
out, c, _ = run_mode("wide")
check("wide level 1" in out, "wide: nvtxRangePushW returns its level: %r" % out)
g = by_name(c)
W = "wide \u00e9\u4e2d\U0001F600"
for outer, inner in (("outer A", W), ("outer B", "wideEx")):
    o, i = one(outer), one(inner)
    check(o[1] < i[1] and ends(i) < ends(o) and ends(o) - ends(i) >= 100_000,
          "wide: %r ends before %r, by the spin between the pops: %r %r" % (inner, outer, o, i))
for n in ("startW", "wbuf 0", "wbuf 1", "wbuf 2", "wdom\u00fc::wmsg"):
    check(len(g.get(n, [])) == 1, "wide: range %r: %r" % (n, sorted(g)))
marks = sorted(x[0] for x in c.execute(
    "SELECT s.s FROM instants i JOIN strings s ON s.proc = i.proc AND s.id = i.name"))
check(marks == sorted(["markW", "b\ufffd\ufffd\ufffd!", "wdom\u00fc::wreg"]),
      "wide: marks (invalid code points as U+FFFD): %r" % marks)
tn = c.execute("SELECT name FROM tracks WHERE type = 0").fetchall()
check(tn == [("wide thread \u00e9",)], "wide: nvtxNameOsThreadW: %r" % tn)
dn = c.execute("SELECT name FROM tracks WHERE type = 2").fetchall()
check(dn == [("wdom\u00fc",)], "wide: the domain's track is named by its name: %r" % dn)
c.close()

# domain names are kept whole, however long
out, c, ldb = run_mode("longdom")
g = by_name(c)
want = ["dom::" + "x" * 1000 + k for k in "AB"]
longd = ["y" * 500 + k + "::r" for k in "12"]
check(sorted(g) == want + longd,
      "longdom: whole names: %r" % [(n[:8], len(n)) for n in sorted(g)])
# two domains whose names differ past 300 bytes: a track each, named whole
r = subprocess.run([BIN, "export", ldb], capture_output=True, text=True)
tids = {e.get("tid") for e in json.loads(r.stdout or "{}").get("traceEvents", [])
        if e.get("name") in longd}
check(len(tids) == 2 and all(str(t).endswith("NVTX domain " + "y" * 500 + k)
                             for t, k in zip(sorted(tids), "12")),
      "longdom: a track per long domain: %r" % [str(t)[-20:] for t in sorted(tids)])
m = c.execute("SELECT s.s FROM instants i JOIN strings s ON s.proc = i.proc AND "
              "s.id = i.name").fetchall()
check(m == [(want[1],)], "longdom: a long registered string whole")
c.close()

# start/end ranges open at a fork and ended in the child: on a track of the
# child's (the forking thread's new one when it started the range, else the
# ending thread's), so summary and export keep them
out, c, dbm = run_mode("forkstart")
procs = [p for (p,) in c.execute("SELECT id FROM processes ORDER BY id")]
rows = c.execute(NAMES).fetchall()
orphans = c.execute("SELECT count(*) FROM slices x LEFT JOIN tracks t ON t.proc = x.proc AND "
                    "t.id = x.track WHERE t.id IS NULL").fetchone()[0]
check(len(procs) == 2 and orphans == 0, "forkstart: every slice on a track of its process: %d "
      "not (%r)" % (orphans, rows))
if len(procs) == 2:
    ch = {x[0]: x for x in rows if x[4] == procs[1]}
    check(sorted(ch) == ["child ender", "child main", "started by a thread", "started by main"],
          "forkstart: the child's slices: %r" % sorted(ch))
    if len(ch) == 4:
        check(ch["started by main"][3] == ch["child main"][3],
              "forkstart: a range the forking thread started on its track in the child")
        check(ch["started by a thread"][3] == ch["child ender"][3],
              "forkstart: a range another thread started on the ending thread's track")
    for n in ("started by main", "started by a thread"):
        check(sorted(x[4] for x in rows if x[0] == n) == procs, "forkstart: %r ends in both" % n)
r = subprocess.run([BIN, "summary", "--json", dbm], capture_output=True, text=True)
check(r.returncode == 0 and json.loads(r.stdout)["traces"][0]["slices"] == len(rows) == 8,
      "forkstart: summary reads all %d slices: %s" % (len(rows), r.stdout[:200]))
ej = os.path.join(tmp, "forkstart.json")
r = subprocess.run([BIN, "export", "-o", ej, dbm], capture_output=True, text=True)
check(r.returncode == 0 and sum(1 for e in json.load(open(ej))["traceEvents"]
                                if e.get("ph") == "X") == len(rows),
      "forkstart: export keeps all %d slices" % len(rows))
c.close()

# a thread still inside an NVTX call when the program exits (issue 19 check):
# the injection's destructor stops and frees the store writer; the call must
# not use it afterwards (it crashed the program with SIGSEGV), and what was
# recorded before the exit is stored
dbl = os.path.join(tmp, "lateexit.db")
r = subprocess.run([BIN, "run", "-o", dbl, "--nvtx", "--no-opencl", "--no-cuda", "-q",
                    "--no-summary", "--", PROG, "lateexit"], capture_output=True, text=True,
                   timeout=60)
check(r.returncode == 0 and "late call finished" in r.stderr,
      "lateexit: the program exits normally: %d %s" % (r.returncode, r.stderr))
c = sqlite3.connect(dbl)
got = [n for (n,) in c.execute("SELECT s.s FROM slices x JOIN strings s ON s.proc = x.proc AND "
                               "s.id = x.name")]
check(got == ["before exit"], "lateexit: the range before the exit stored: %r" % got)
c.close()

# NVTX in an exit handler that runs after the injection's atexit handler
# (as a C++ static object's destructor does): recorded (it was lost)
out, c, _ = run_mode("atexit")
got = sorted(n for (n,) in c.execute("SELECT s.s FROM slices x JOIN strings s ON s.proc = x.proc "
                                     "AND s.id = x.name"))
marks = [n for (n,) in c.execute("SELECT s.s FROM instants x JOIN strings s ON s.proc = x.proc "
                                 "AND s.id = x.name")]
check(got == ["in exit handler", "in main"] and marks == ["exit mark"],
      "atexit: the exit handler's range and mark stored: %r %r" % (got, marks))
c.close()

# a domain created again by name is the same domain (one push/pop stack
# per thread for the name, whichever handle or library pushes or pops),
# and creating it 100,000 times more holds nothing new
out, c, _ = run_mode("samedomain")
check("same 1 1 1" in out and "differs" not in out, "samedomain: one handle per name: %r" % out)
check("levels 0 1 1 0 -1" in out, "samedomain: one stack: %r" % out)
g = by_name(c)
O, I = one("S::outer"), one("S::inner")
check(O[1] < I[1] and ends(I) < ends(O) and ends(O) - ends(I) >= 1_000_000,
      "samedomain: S::inner inside S::outer, popped first: %r %r" % (O, I))
c.close()

# many start/end ranges open at once, ended in a random order, then first
# started first ended: each end closes its own start (a table by id; the
# ends used to scan the open ranges)
N = 3000
dbs = os.path.join(tmp, "manystart.db")
r = subprocess.run([BIN, "run", "-o", dbs, "--nvtx", "--no-opencl", "--no-cuda", "-q",
                    "--no-summary", "--", PROG, "manystart", str(N)], capture_output=True, text=True)
check(r.returncode == 0, "manystart run: %d %s" % (r.returncode, r.stderr))
order = [int(v) for l in r.stdout.splitlines() if l.startswith("order ") for v in l.split()[1:]]
c = sqlite3.connect(dbs)
rows = c.execute(NAMES).fetchall()
c.close()
rr = {x[0]: x for x in rows if x[0].startswith("r")}
check(len(rr) == N and len(order) == N, "manystart: %d ranges r*, %d ends" % (len(rr), len(order)))
if len(rr) == N and len(order) == N:
    starts = [rr["r%d" % i][1] for i in range(N)]
    check(starts == sorted(starts), "manystart: r0 .. r%d start in order" % (N - 1))
    by_end = [int(x[0][1:]) for x in sorted(rr.values(), key=lambda x: (ends(x), order.index(int(x[0][1:]))))]
    check(by_end == order, "manystart: each end closed its own start (end order %r... vs %r...)"
          % (by_end[:8], order[:8]))
fifo = sorted((x for x in rows if x[0] == "fifo"), key=lambda x: x[1])
check(len(fifo) == N, "manystart: %d fifo ranges (want %d)" % (len(fifo), N))
check([ends(x) for x in fifo] == sorted(ends(x) for x in fifo),
      "manystart: fifo ranges end in the order they started")
check(len(rows) == 2 * N, "manystart: a second end and an unknown id add nothing: %d rows" % len(rows))

if failures:
    sys.exit(1)
print("ok")
