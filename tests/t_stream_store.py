#!/usr/bin/env python3
"""tests/t_stream_store.py: libgpuprof's stream sink into the run store
(issue 18) through the CLI, with tests/progs/stream_store_prog.c (nested
ranges on two threads, slow ranges, a counter, a tracked buffer; the same
profiler also writes gp_export_json):
- the store's run is listed by `gpuprof runs` (complete, exit 0, its events
  equal to the rows counted with sqlite3 independently);
- `gpuprof summary` of the run gives the export's per-name counts, totals,
  min and max exactly (ranges streamed as events plus those rolled over into
  range_stats), and the file stream of a second run gives its own export's;
- `gpuprof timeline` of the run draws exactly the streamed slices (count and
  duration sum per name as sqlite3 reads them from the slices table);
- `gpuprof report` of the run is written and shows the counts;
- the default profiler configured by GPUPROF_SINK=stream GPUPROF_STREAM=X.db
  finishes its run at exit;
- three programs streaming into one store at once: every row of every event
  table is in exactly one event_rows range of its own process, and each
  run's summary is its own program's export;
- three `gpuprof run` starting at once on one new store (20 times): every run
  starts, ends complete and says nothing;
- a .db path holding something else is refused, not overwritten."""
import json, os, sqlite3, subprocess, sys, tempfile

from gp_testutil import BIN, BUILD, check, check_event_rows, finish, gp_ok, set_verbose

set_verbose()
PROG = os.path.join(BUILD, "tests", "stream_store_prog")


gp = gp_ok  # a step the rest of the test needs: exits on failure


def prog(stream, export, pairs, env=None, extra=()):
    r = subprocess.run([PROG, stream, export, str(pairs)] + list(extra), capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        sys.exit("stream_store_prog: exit %d: %s %s" % (r.returncode, r.stdout, r.stderr))


def ops(path):
    s = json.loads(gp("summary", "--json", path))["traces"][0]
    return {o["name"]: o for c in s["categories"] for o in c["ops"]}


def same_ops(a, b, what):
    check(set(a) == set(b), "%s: same operations %s" % (what, sorted(a)))
    for name in sorted(set(a) & set(b)):
        for k in ("count", "total_ns", "min_ns", "max_ns"):
            check(a[name][k] == b[name][k],
                  "%s: %s %s %s == %s" % (what, name, k, a[name][k], b[name][k]))


tmp = tempfile.mkdtemp()
PAIRS = 300000

# ---- store stream against the same profiler's export
db, exp = os.path.join(tmp, "s.db"), os.path.join(tmp, "e.json")
prog(db, exp, PAIRS)
runs = json.loads(gp("runs", "--json", db))["runs"]
check(len(runs) == 1, "gpuprof runs lists one run")
run = runs[0]
check(run["state"] == "complete" and run["exit_status"] == 0, "the run is complete, exit 0")
con = sqlite3.connect(db)
n_slices = con.execute("SELECT count(*) FROM slices").fetchone()[0]
n_other = sum(con.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
              for t in ("kernels", "counters", "memory"))
check(run["events"] == n_slices + n_other,
      "runs' events %d == rows in the store %d" % (run["events"], n_slices + n_other))
n_stats = con.execute("SELECT count(*) FROM range_stats").fetchone()[0]
print("# %d ranges streamed as slices, %d range_stats rows" % (n_slices, n_stats))
sq = {name: (n, tot) for name, n, tot in con.execute(
    "SELECT s.s, count(*), sum(r.dur) FROM slices r JOIN strings s ON s.proc = r.proc AND "
    "s.id = r.name GROUP BY s.s")}
con.close()
so, eo = ops(db), ops(exp)
same_ops(so, eo, "store vs export")
check(so["outer"]["count"] == 2 * PAIRS and so["slow"]["count"] == 5, "counts are the program's")

# ---- timeline of the run: exactly the streamed slices
tl = os.path.join(tmp, "t.json")
gp("timeline", db, "-o", tl)
ev = json.load(open(tl))["traceEvents"]
tsum = {}
for e in ev:
    if e.get("ph") == "X":
        n, d = tsum.get(e["name"], (0, 0))
        tsum[e["name"]] = (n + 1, d + round(e["dur"] * 1000))
for name, (n, tot) in sorted(sq.items()):
    tn, td = tsum.get(name, (0, 0))
    check(tn == n, "timeline: %s drawn %d == slices rows %d" % (name, tn, n))
    check(abs(td - tot) <= n, "timeline: %s durations %d ~ slices sum %d (us rounding)" %
          (name, td, tot))

# ---- report of the run
rep = os.path.join(tmp, "r.html")
gp("report", db, "-o", rep)
html = open(rep).read()
check(str(2 * PAIRS) in html, "report shows the count %d" % (2 * PAIRS))

# ---- file stream against its export (a second run)
js, exp2 = os.path.join(tmp, "s.json"), os.path.join(tmp, "e2.json")
prog(js, exp2, PAIRS)
same_ops(ops(js), ops(exp2), "file stream vs export")

# ---- the default profiler from the environment, finished at exit
db2, exp3 = os.path.join(tmp, "d.db"), os.path.join(tmp, "e3.json")
env = dict(os.environ, GPUPROF_SINK="stream", GPUPROF_STREAM=db2)
prog("-", exp3, 20000, env)
runs = json.loads(gp("runs", "--json", db2))["runs"]
check(len(runs) == 1 and runs[0]["state"] == "complete",
      "default profiler: run complete at exit (%s)" % (runs[0]["state"] if runs else None))
same_ops(ops(db2), ops(exp3), "default profiler store vs export")

# ---- the aggregate sink's export of a program that records ranges only:
# statistics, no event; a trace all the same (exact counts), which every
# command reads (it was refused as "the trace holds no events")
exp5 = os.path.join(tmp, "agg.json")
prog("-", exp5, 20000, dict(os.environ, GPUPROF_SINK="aggregate"), ["ranges-only"])
ao = ops(exp5)
check(ao.get("outer", {}).get("count") == 40000 and ao.get("inner", {}).get("count") == 40000
      and ao.get("slow", {}).get("count") == 5,
      "aggregate export: summary counts outer/inner/slow %s" %
      {k: v["count"] for k, v in ao.items()})
check(all(v.get("aggregated") == v["count"] for v in ao.values()),
      "aggregate export: every call known as statistics")
for cmd in (["advise"], ["analyze"], ["memory"], ["report", "-o", os.path.join(tmp, "agg.html")]):
    r = subprocess.run([BIN] + cmd + [exp5], capture_output=True, text=True)
    check(r.returncode == 0, "aggregate export: gpuprof %s exit 0 (%d: %s)" %
          (cmd[0], r.returncode, r.stderr.strip()))

# ---- gp_default() with a configuration it cannot follow: one line on
# stderr, and the default sink records (the program keeps its profiler: a
# NULL from gp_default would crash its first range)
for env_extra, says, then in (
        ({"GPUPROF_SINK": "stream", "GPUPROF_STREAM": os.path.join(tmp, "no", "x.json")},
         "GPUPROF_STREAM", "recording with the default sink"),
        ({"GPUPROF_SINK": "stream"}, "GPUPROF_STREAM=FILE", "recording with the default sink"),
        ({"GPUPROF_SINK": "bogus"}, "GPUPROF_SINK=bogus", "recording with the default sink"),
        ({"GPUPROF_KEEP_MAX": "12x"}, "GPUPROF_KEEP_MAX=12x", "default cap applies")):
    exp6 = os.path.join(tmp, "cfg.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPROF_")}
    env.update(env_extra)
    r = subprocess.run([PROG, "-", exp6, "2000"], capture_output=True, text=True, env=env)
    lines = [l for l in r.stderr.splitlines() if l.startswith("gpuprof:")]
    check(r.returncode == 0 and len(lines) == 1 and says in lines[0] and then in lines[0],
          "%s: exit %d, one line naming it: %s" % (env_extra, r.returncode, r.stderr.strip()))
    if r.returncode == 0:
        co = ops(exp6)
        check(co.get("outer", {}).get("count") == 4000,
              "%s: the default sink recorded every range" % env_extra)

# ---- three programs streaming into one store at once: their commits
# interleave, so each process's rows are several event_rows ranges; every
# row is in exactly one range of its own process, and each run's summary
# is its own export's (docs/store.md, "Which rows are a process's")
shared = os.path.join(tmp, "shared.db")
procs = []
for i in range(3):
    e = os.path.join(tmp, "c%d.json" % i)
    procs.append((subprocess.Popen([PROG, shared, e, "150000"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True), e))
for p, _ in procs:
    _, err = p.communicate(timeout=600)
    check(p.returncode == 0, "concurrent stream_store_prog: exit %d %s" % (p.returncode, err))
con = sqlite3.connect(shared)
nranges = con.execute("SELECT count(*) FROM event_rows WHERE tbl = 4").fetchone()[0]
nprocs = con.execute("SELECT count(*) FROM processes").fetchone()[0]
con.close()
print("# concurrent writers: %d processes, %d slices ranges" % (nprocs, nranges))
check_event_rows(shared, "concurrent writers")
runs = json.loads(gp("runs", "--json", shared))["runs"]
check(len(runs) == 3, "concurrent writers: three runs")
for r in runs:  # writers wait for each other's commits: nothing dropped
    check(r["state"] == "complete" and r["dropped"] == 0,
          "concurrent writers: run %d %s, dropped %r" % (r["id"], r["state"], r["dropped"]))
exports = {}
for _, e in procs:
    exports[e] = ops(e)
for r in runs:  # each run is one program's: match by the export with equal ops
    so = ops("%s:%d" % (shared, r["id"]))
    match = [e for e, eo in exports.items() if all(
        so.get(n, {}).get(k) == eo[n][k] for n in eo for k in ("count", "total_ns", "min_ns",
                                                                 "max_ns")) and set(so) == set(eo)]
    check(len(match) == 1, "concurrent writers: run %d equals exactly one program's export (%d)"
          % (r["id"], len(match)))

# ---- a new store opened by three processes at once, 20 times: the first
# open's switch to WAL answered BUSY at once (a run failed: "database is
# locked"), and a reader's probe fell through to an immutable open without
# the WAL ("no such table: meta"); every run now starts and ends complete
bad = []
for k in range(20):
    fresh = os.path.join(tmp, "new%d.db" % k)
    ps = [subprocess.Popen([BIN, "run", "-q", "--no-summary", "-o", fresh, "--", "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
          for _ in range(3)]
    for p in ps:
        _, err = p.communicate(timeout=120)
        if p.returncode != 0 or err.strip():
            bad.append((k, p.returncode, err.strip()))
    runs = json.loads(gp("runs", "--json", fresh))["runs"]
    if len(runs) != 3 or any(r["state"] != "complete" for r in runs):
        bad.append((k, [r["state"] for r in runs]))
check(not bad, "three runs starting on one new store, 20 times: %s" % bad[:3])

# ---- a .db path that is not a store: the profiler is not created, the file
# is left as it was (not overwritten as a trace)
bad = os.path.join(tmp, "notes.db")
open(bad, "w").write("my notes\n")
r = subprocess.run([PROG, bad, os.path.join(tmp, "e4.json"), "10"], capture_output=True, text=True)
check(r.returncode != 0 and open(bad).read() == "my notes\n",
      "a non-SQLite .db is refused and kept (exit %d)" % r.returncode)

sys.exit(finish())
