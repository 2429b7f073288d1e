#!/usr/bin/env python3
"""The store as an interface (schema version 5, docs/store.md):
- tests/data/store_v1.db (written by the build before schema 2) is migrated
  when a command opens it: schema_version 5, migrated_from_1, a table another
  tool added survives with its rows, the recorded events are untouched;
- tests/data/store_v2.db (written by the schema-2 build: an OpenCL run and a
  fake-CUPTI CUDA run) is migrated to 5: every table's rows and every
  schema-2 view read the same as before (read here from the file before
  any gpuprof opened it), api_calls.kind is filled from each call's process
  source and category (resolved here independently), v_api_calls resolves it
  through api_kinds, and summary reads the same before and after;
- tests/data/store_v3.db (written by the schema-3 build: a libgpuprof store
  stream and an OpenCL run) is migrated to 5: every table and view reads the
  same, slices.inline_child_ns is added (NULL), and both runs read;
- tests/data/store_v4.db (written by the schema-4 build: an OpenCL run whose
  program forked three children recording at once, so their rows interleave,
  and a libgpuprof store stream) is migrated to 5: every table and view reads
  the same, the (proc, ts) indexes are gone, event_rows holds exactly the
  maximal stretches of consecutive rowids of each process (computed here
  independently), and each run's summary is the same as before;
- in every store (migrated, new, and after VACUUM) event_rows covers every
  row of every event table exactly once, with a range of the row's process;
- the lookup tables hold the documented ids and names, and the v_* views
  agree with the raw tables (names resolved through strings, kinds through
  the lookups, *_ns columns equal ts/dur/ts+dur);
- per-run queries through the views go processes(run) -> event_rows ->
  rowid range (EXPLAIN QUERY PLAN: no scan of an event table, no automatic
  index, also for a whole view);
- a store of a newer schema is refused with exit 2;
- a new store is created at version 5, its API calls with their kind."""
import json, os, re, shutil, sqlite3, subprocess, sys, tempfile
from gp_testutil import BIN, EVENT_TABLES, SRC, check, check_event_rows, failures

FIXTURE = os.path.join(SRC, "tests", "data", "store_v1.db")
FIXTURE2 = os.path.join(SRC, "tests", "data", "store_v2.db")
FIXTURE3 = os.path.join(SRC, "tests", "data", "store_v3.db")
FIXTURE4 = os.path.join(SRC, "tests", "data", "store_v4.db")
VERSION = "5"
# api_kinds: id -> (name, source, category of its calls)
API_KINDS = {0: ("unknown", None, None), 1: ("cuda_runtime", "cuda", "cuda_runtime"),
             2: ("cuda_driver", "cuda", "cuda_driver"), 3: ("opencl", "opencl", "runtime")}



# Lookup rows a later gpuprof adds to an older store when it opens it (a new
# enumerated value of schema 5, additive like the lookup tables themselves):
# track type 2, a named NVTX domain's track. Every other row reads the same.
LOOKUP_ADDED = {"track_types": [(2, "nvtx_domain")]}


def with_added(table, rows):
    add = [r for r in LOOKUP_ADDED.get(table, []) if r not in rows]
    return sorted(rows + add, key=repr) if add else rows


def q(db, sql, *a):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, a).fetchall()
    finally:
        con.close()


def islands(db, table):
    """The maximal stretches of consecutive rowids of one process in table:
    {(proc, first, last)}, computed here from the rows."""
    out, cur = set(), None
    for rowid, proc in q(db, "SELECT rowid, proc FROM %s ORDER BY rowid" % table):
        if cur and cur[0] == proc and cur[2] + 1 == rowid:
            cur[2] = rowid
        else:
            if cur: out.add(tuple(cur))
            cur = [proc, rowid, rowid]
    if cur: out.add(tuple(cur))
    return out


def check_plans(db, what):
    """A view selected for one run goes processes(run) -> event_rows ->
    the table's rowid range; a whole view never scans an event table row
    by row against an automatic index."""
    for view, alias in (("v_kernels", "k"), ("v_copies", "c"), ("v_api_calls", "a"),
                        ("v_ranges", "r"), ("v_nvtx_ranges", "r"), ("v_marks", "i"),
                        ("v_counters", "c"), ("v_memory", "m"), ("kernel_v", "k"),
                        ("copy_v", "c"), ("api_v", "a")):
        for where in (" WHERE run = 1", ""):
            plan = " | ".join(r[-1] for r in q(db, "EXPLAIN QUERY PLAN SELECT * FROM %s%s" %
                                               (view, where)))
            good = ("SEARCH %s USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)" % alias in plan
                    and "SEARCH er USING PRIMARY KEY (proc=? AND tbl=?)" in plan
                    and "AUTOMATIC" not in plan and "SCAN %s " % alias not in plan + " ")
            if where:
                good = good and re.search(r"SEARCH p USING (COVERING )?INDEX processes_run "
                                          r"\(run=\?\)", plan) is not None
            check(good, "%s: %s%s plan: %s" % (what, view, where, plan))


def open_fixture(tmp, fixture, version):
    """A copy of a fixture store of the given schema version, and what it
    holds before any gpuprof opens it: (path, tables, views, columns of)."""
    db = os.path.join(tmp, "v%s.db" % version)
    shutil.copy(fixture, db)
    check(q(db, "SELECT value FROM meta WHERE key='schema_version'") == [(version,)],
          "v%s fixture is schema version %s" % (version, version))
    tables = [r[0] for r in q(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name "
                                  "NOT IN ('meta', 'sqlite_sequence')")]
    views = [r[0] for r in q(db, "SELECT name FROM sqlite_master WHERE type = 'view'")]
    return db, tables, views, lambda t: [c[1] for c in q(db, "PRAGMA table_info(%s)" % t)]


def summaries(db, runs):
    """`gpuprof summary --json` of each run of db: [(exit status, stdout, stderr)]."""
    out = []
    for run in runs:
        r = subprocess.run([BIN, "summary", "--json", "%s:%d" % (db, run)], capture_output=True,
                           text=True)
        out.append((r.returncode, r.stdout, r.stderr))
    return out


def check_v4(tmp):
    """The schema 4 -> 5 migration of a store the schema-4 build wrote."""
    db, tables, views, cols = open_fixture(tmp, FIXTURE4, "4")
    tcols = {t: cols(t) for t in tables}
    before = {t: sorted(q(db, "SELECT rowid, %s FROM %s" % (", ".join(tcols[t]), t)), key=repr)
              for t in tables if t in EVENT_TABLES.values()}
    vbefore = {v: (cols(v), sorted(q(db, "SELECT * FROM %s" % v), key=repr)) for v in views}
    want = {t: islands(db, t) for t in EVENT_TABLES.values()}
    multi = [t for t, isl in want.items() if len(isl) > len({p for p, _, _ in isl})]
    check("api_calls" in multi and "kernels" in multi,
          "v4 fixture: a process's calls and kernels are interleaved with another's: %s" % multi)
    runs = [r[0] for r in q(db, "SELECT id FROM runs ORDER BY id")]
    check(len(runs) == 2 and len(q(db, "SELECT id FROM processes WHERE run = 1")) == 4,
          "v4 fixture: two runs, the first with four processes")
    outs = []
    for run, (rc, out, err) in zip(runs, summaries(db, runs)):
        check(rc == 0 and len(out) > 2, "v4 store run %d reads: %s" % (run, err))
        outs.append(out)
    check(q(db, "SELECT value FROM meta WHERE key='schema_version'") == [(VERSION,)],
          "v4 store migrated to " + VERSION)
    check(len(q(db, "SELECT value FROM meta WHERE key='migrated_from_4'")) == 1,
          "migrated_from_4 recorded")
    for t, rows in before.items():  # the same rows at the same rowids
        after = sorted(q(db, "SELECT rowid, %s FROM %s" % (", ".join(tcols[t]), t)), key=repr)
        check(after == rows, "v4 -> %s: table %s reads the same" % (VERSION, t))
    check(q(db, "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%_proc_ts'")
          == [], "the (proc, ts) indexes are dropped")
    for tbl, t in EVENT_TABLES.items():
        got = set(q(db, "SELECT proc, first_rowid, last_rowid FROM event_rows WHERE tbl = ?", tbl))
        check(got == want[t], "v4 -> 5: event_rows of %s: %s vs %s" %
              (t, sorted(got)[:4], sorted(want[t])[:4]))
    check_event_rows(db, "v4 migrated")
    for v, (vc, rows) in vbefore.items():
        after = sorted(q(db, "SELECT %s FROM %s" % (", ".join(vc), v)), key=repr)
        check(after == rows, "v4 -> %s: view %s reads the same" % (VERSION, v))
    for run, out, (rc, again, _) in zip(runs, outs, summaries(db, runs)):
        check(rc == 0 and again == out, "v4 store run %d: summary equal again" % run)
    # a new run recorded into the migrated store (libgpuprof's store stream)
    # is read as its program's own export, and the ranges still cover every row
    prog = os.path.join(os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN)), "tests",
                        "stream_store_prog")
    if os.path.exists(prog):
        exp = os.path.join(tmp, "v4new.json")
        r = subprocess.run([prog, db, exp, "20000"], capture_output=True, text=True)
        check(r.returncode == 0, "a run into the migrated v4 store: %s" % r.stderr)
        check_event_rows(db, "v4 migrated, then a run recorded")
        new_run = q(db, "SELECT max(id) FROM runs")[0][0]
        a = subprocess.run([BIN, "summary", "--json", "%s:%d" % (db, new_run)],
                           capture_output=True, text=True)
        b = subprocess.run([BIN, "summary", "--json", exp], capture_output=True, text=True)
        ops = lambda t: sorted((o["name"], o["count"], o["total_ns"], o["min_ns"], o["max_ns"])
                               for c in json.loads(t)["traces"][0]["categories"]
                               for o in c["ops"])
        check(a.returncode == 0 and b.returncode == 0 and ops(a.stdout) == ops(b.stdout),
              "the new run in the migrated store reads as its export")
        for run, out, (rc, again, _) in zip(runs, outs, summaries(db, runs)):  # unchanged
            check(rc == 0 and again == out, "v4 run %d unchanged by a new run" % run)
    else:
        print("note: stream_store_prog not built: run into the migrated store skipped")
    # a schema-4 store gpuprof cannot write is read as it is (no event_rows:
    # the run's rows by proc): the same summaries
    if os.geteuid() == 0 and shutil.which("setpriv"):
        rodir = os.path.join(tmp, "ro4")
        os.mkdir(rodir)
        ro = os.path.join(rodir, "v4.db")
        shutil.copy(FIXTURE4, ro)
        os.chmod(ro, 0o444)
        os.chmod(tmp, 0o755)
        for run, out in zip(runs, outs):
            r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BIN,
                                "summary", "--json", "%s:%d" % (ro, run)], capture_output=True,
                               text=True)
            check(r.returncode == 0 and r.stdout.replace(ro, db) == out,
                  "read-only v4 store run %d: summary equal (%s)" % (run, r.stderr.strip()))
        check(q(ro, "SELECT value FROM meta WHERE key='schema_version'") == [("4",)],
              "the read-only v4 store stays at version 4")
    else:
        print("note: not root or no setpriv: read-only v4 store check skipped")
    # VACUUM keeps the rowids event_rows names (SQLite copies these tables
    # with their rowids): the same ranges, rows and summaries after it
    vac = os.path.join(tmp, "v4vac.db")
    shutil.copy(db, vac)
    con = sqlite3.connect(vac)
    con.execute("VACUUM")
    con.close()
    check_event_rows(vac, "v4 migrated, after VACUUM")
    for run, out, (rc, again, _) in zip(runs, outs, summaries(vac, runs)):
        check(rc == 0 and again.replace(vac, db) == out, "after VACUUM: run %d summary equal" % run)


def check_v2(tmp):
    """The schema 2 -> 5 migration of a store the schema-2 build wrote."""
    db, tables, views, cols = open_fixture(tmp, FIXTURE2, "2")
    check("api_calls" in tables and "v_api_calls" in views and "api_kinds" not in tables,
          "v2 fixture has the schema-2 tables and views")
    tcols = {t: cols(t) for t in tables}
    before = {t: sorted(q(db, "SELECT %s FROM %s" % (", ".join(tcols[t]), t)), key=repr)
              for t in tables}
    vbefore = {v: (cols(v), sorted(q(db, "SELECT * FROM %s" % v), key=repr)) for v in views}
    # the kind each call should get: its process's source and category string
    want_kind = sorted(
        (a, next((k for k, v in API_KINDS.items() if v[1] == src and v[2] == cat), 0))
        for a, src, cat in q(db, "SELECT a.rowid, p.source, s.s FROM api_calls a JOIN processes "
                                 "p ON p.id = a.proc JOIN strings s ON s.proc = a.proc AND "
                                 "s.id = a.cat"))
    check({k for _, k in want_kind} == {1, 3}, "v2 fixture has OpenCL and CUDA runtime calls")
    s1 = subprocess.run([BIN, "summary", "--json", db], capture_output=True, text=True)
    check(s1.returncode == 0, "summary on the v2 store: %s" % s1.stderr)
    check(q(db, "SELECT value FROM meta WHERE key='schema_version'") == [(VERSION,)],
          "v2 store migrated to " + VERSION)
    check(len(q(db, "SELECT value FROM meta WHERE key='migrated_from_2'")) == 1,
          "migrated_from_2 recorded")
    for t in tables:  # every row of every table reads the same (the old columns)
        after = sorted(q(db, "SELECT %s FROM %s" % (", ".join(tcols[t]), t)), key=repr)
        check(after == with_added(t, before[t]), "v2 -> %s: table %s reads the same" % (VERSION, t))
    check(cols("api_calls")[-1] == "kind", "api_calls.kind added")
    got_kind = sorted(q(db, "SELECT rowid, kind FROM api_calls"))
    check(got_kind == want_kind, "api_calls.kind: %s vs %s" % (got_kind[:3], want_kind[:3]))
    for v, (vc, rows) in vbefore.items():  # the schema-2 views read the same
        after = sorted(q(db, "SELECT %s FROM %s" % (", ".join(vc), v)), key=repr)
        check(after == rows, "v2 -> %s: view %s reads the same" % (VERSION, v))
    names = {k: v[0] for k, v in API_KINDS.items()}
    vk = sorted(q(db, "SELECT kind, count(*) FROM v_api_calls GROUP BY kind"))
    wk = sorted((names[k], n) for k, n in __import__("collections").Counter(
        k for _, k in want_kind).items())
    check(vk == wk, "v_api_calls.kind: %s vs %s" % (vk, wk))
    s2 = subprocess.run([BIN, "summary", "--json", db], capture_output=True, text=True)
    check(s2.returncode == 0 and s2.stdout == s1.stdout, "v2 store: summary equal after migration")
    for run in (1, 2):
        r = subprocess.run([BIN, "summary", "--json", "%s:%d" % (db, run)], capture_output=True,
                           text=True)
        check(r.returncode == 0 and len(r.stdout) > 2, "v2 store run %d reads: %s" % (run, r.stderr))


def check_v3(tmp):
    """The schema 3 -> 5 migration of a store the schema-3 build wrote."""
    db, tables, views, cols = open_fixture(tmp, FIXTURE3, "3")
    check("inline_child_ns" not in cols("slices") and "range_stats" in tables,
          "v3 fixture has the schema-3 slices and range_stats")
    check(q(db, "SELECT count(*) FROM slices")[0][0] > 0 and
          q(db, "SELECT count(*) FROM api_calls")[0][0] > 0, "v3 fixture has ranges and API calls")
    tcols = {t: cols(t) for t in tables}
    before = {t: sorted(q(db, "SELECT %s FROM %s" % (", ".join(tcols[t]), t)), key=repr)
              for t in tables}
    vbefore = {v: (cols(v), sorted(q(db, "SELECT * FROM %s" % v), key=repr)) for v in views}
    runs = [r[0] for r in q(db, "SELECT id FROM runs ORDER BY id")]
    outs = []
    for run, (rc, out, err) in zip(runs, summaries(db, runs)):
        check(rc == 0 and len(out) > 2, "v3 store run %d reads: %s" % (run, err))
        outs.append(out)
    check(len(runs) == 2, "v3 fixture has two runs: %s" % runs)
    check(q(db, "SELECT value FROM meta WHERE key='schema_version'") == [(VERSION,)],
          "v3 store migrated to " + VERSION)
    check(len(q(db, "SELECT value FROM meta WHERE key='migrated_from_3'")) == 1,
          "migrated_from_3 recorded")
    for t in tables:
        after = sorted(q(db, "SELECT %s FROM %s" % (", ".join(tcols[t]), t)), key=repr)
        check(after == with_added(t, before[t]), "v3 -> %s: table %s reads the same" % (VERSION, t))
    check(cols("slices")[-1] == "inline_child_ns", "slices.inline_child_ns added")
    check(q(db, "SELECT count(*) FROM slices WHERE inline_child_ns IS NOT NULL") == [(0,)],
          "inline_child_ns is NULL in the rows written before")
    for v, (vc, rows) in vbefore.items():
        after = sorted(q(db, "SELECT %s FROM %s" % (", ".join(vc), v)), key=repr)
        check(after == rows, "v3 -> %s: view %s reads the same" % (VERSION, v))
    for run, out, (rc, again, _) in zip(runs, outs, summaries(db, runs)):
        check(rc == 0 and again == out, "v3 store run %d: summary equal again" % run)


def main():
    tmp = tempfile.mkdtemp(prefix="gp_store_")
    db = os.path.join(tmp, "old.db")
    shutil.copy(FIXTURE, db)
    check(q(db, "SELECT value FROM meta WHERE key='schema_version'") == [("1",)],
          "fixture is schema version 1")
    raw_kernels = q(db, "SELECT * FROM kernels ORDER BY ts")
    raw_copies = q(db, "SELECT * FROM copies ORDER BY ts")
    # a table another tool added to the version-1 store
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE IF NOT EXISTS other_tool(run INTEGER, note TEXT)")
    con.execute("INSERT INTO other_tool VALUES(1, 'kept')")
    con.commit()
    con.close()
    before = subprocess.run([BIN, "summary", "--json", db], capture_output=True, text=True)
    check(before.returncode == 0, "summary on the v1 store: %s" % before.stderr)
    check(q(db, "SELECT value FROM meta WHERE key='schema_version'") == [(VERSION,)],
          "migrated to schema version " + VERSION)
    check(len(q(db, "SELECT value FROM meta WHERE key='migrated_from_1'")) == 1,
          "migrated_from_1 recorded")
    check(q(db, "SELECT * FROM other_tool") == [(1, "kept")], "another tool's table survives")
    check(q(db, "SELECT * FROM kernels ORDER BY ts") == raw_kernels, "kernels untouched")
    check(q(db, "SELECT * FROM copies ORDER BY ts") == raw_copies, "copies untouched")
    again = subprocess.run([BIN, "summary", "--json", db], capture_output=True, text=True)
    check(again.returncode == 0 and again.stdout == before.stdout,
          "summary equal before and after the migration")
    # lookup tables
    check(q(db, "SELECT id, name FROM copy_kinds ORDER BY id") ==
          [(0, "unknown"), (1, "HtoD"), (2, "DtoH"), (3, "DtoD"), (4, "HtoH"), (5, "PtoP"),
           (6, "Memset")], "copy_kinds")
    check(q(db, "SELECT id, name FROM memory_kinds ORDER BY id") ==
          [(0, "unknown"), (1, "pageable"), (2, "pinned"), (3, "device"), (4, "managed"),
           (5, "array")], "memory_kinds")
    check(q(db, "SELECT id, name FROM track_types ORDER BY id") ==
          [(0, "thread"), (1, "queue"), (2, "nvtx_domain")], "track_types")
    check(len(q(db, "SELECT * FROM event_types")) == 7, "event_types")
    check(q(db, "SELECT id, name, source, category FROM api_kinds ORDER BY id") ==
          [(k,) + v for k, v in sorted(API_KINDS.items())], "api_kinds")
    # views against the raw tables, resolved here independently
    strings = {(p, i): s for p, i, s in q(db, "SELECT proc, id, s FROM strings")}
    run_of = {i: r for i, r in q(db, "SELECT id, run FROM processes")}
    want = sorted((run_of[k[0]], strings[(k[0], k[2])], k[3], k[4], k[3] + k[4]) for k in raw_kernels)
    got = sorted(q(db, "SELECT run, name, start_ns, dur_ns, end_ns FROM v_kernels"))
    check(len(want) > 0 and got == want, "v_kernels: %d rows vs %d" % (len(got), len(want)))
    ck = ["unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "Memset"]
    mk = ["unknown", "pageable", "pinned", "device", "managed", "array"]
    want = sorted((strings[(c[0], c[3])], c[4], c[12], ck[c[13]], mk[c[14]], mk[c[15]])
                  for c in raw_copies)
    got = sorted(q(db, "SELECT name, start_ns, bytes, copy_kind, src_kind, dst_kind FROM v_copies"))
    check(len(want) > 0 and got == want, "v_copies: %s vs %s" % (got[:2], want[:2]))
    napi = q(db, "SELECT count(*) FROM api_calls")[0][0]
    check(q(db, "SELECT count(*) FROM v_api_calls WHERE name IS NOT NULL AND tid IS NOT NULL")
          == [(napi,)], "v_api_calls resolves every call's name and thread id")
    check(q(db, "SELECT DISTINCT kind FROM v_api_calls") == [("opencl",)],
          "v1 OpenCL calls migrated to kind opencl")
    for v in ("v_ranges", "v_nvtx_ranges", "v_marks", "v_counters", "v_memory", "v_tracks"):
        check(len(q(db, "SELECT * FROM %s LIMIT 1" % v)) >= 0, v)
    cols = [c[1] for v in ("v_kernels", "v_copies", "v_api_calls", "v_ranges", "v_marks",
                           "v_counters", "v_memory") for c in q(db, "PRAGMA table_info(%s)" % v)]
    timecols = [c for c in cols if c in ("ts", "dur", "start", "end", "queued", "submit")]
    check(not timecols, "every view time column ends in _ns: %s" % timecols)
    # docs/store.md documents every table and view of the (migrated) store,
    # column by column: each column is named near the table's first mention
    doc = open(os.path.join(SRC, "docs", "store.md")).read()
    for name, typ in q(db, "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
                       "AND name NOT LIKE 'sqlite_%' AND name != 'other_tool'"):
        at = doc.find("`" + name)
        cols = [c[1] for c in q(db, "PRAGMA table_info(%s)" % name)]
        near = doc[at:at + 2500] if at >= 0 else ""
        m = re.match(r"`%s` \| `(\w+)` where" % name, near)
        if m:  # "v_nvtx_ranges | `v_ranges` where ...": the columns of that view
            near = doc[doc.find("`" + m.group(1)):][:2500]
        if name.startswith("v_") and "All have `run`, `proc`, `pid`" in doc:
            cols = [c for c in cols if c not in ("run", "proc", "pid")]

        def named(c):
            g = re.match(r"(grid|block)_[xyz]$", c)
            return re.search(r"\b%s\b" % c, near) or (g and (g.group(1) + "_x..z") in near)
        undoc = [c for c in cols if not named(c)]
        check(at >= 0 and not undoc, "docs/store.md: %s %s undocumented columns %s" % (typ, name, undoc))
    # per-run queries go through event_rows; every row is covered
    check_plans(db, "v1 migrated")
    check_event_rows(db, "v1 migrated")
    # a newer schema is refused
    new = os.path.join(tmp, "newer.db")
    shutil.copy(db, new)
    con = sqlite3.connect(new)
    con.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    con.commit()
    con.close()
    r = subprocess.run([BIN, "summary", new], capture_output=True, text=True)
    check(r.returncode == 2 and "99" in r.stderr, "newer store refused: %d %s" % (r.returncode,
                                                                                  r.stderr))
    # a new store is at the current version (its writer creates the schema)
    prog = os.path.join(os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN)), "tests",
                        "cl_record_prog")
    if os.path.exists(prog) and subprocess.run([prog, "0"], capture_output=True).returncode != 77:
        fresh = os.path.join(tmp, "fresh.db")
        r = subprocess.run([BIN, "run", "-o", fresh, "--", prog, "1", "1024"], capture_output=True,
                           text=True)
        check(r.returncode == 0, "run: %s" % r.stderr)
        check(q(fresh, "SELECT value FROM meta WHERE key='schema_version'") == [(VERSION,)],
              "a new store is version " + VERSION)
        check(q(fresh, "SELECT DISTINCT kind FROM v_api_calls") == [("opencl",)],
              "a new store's OpenCL calls have kind opencl: %s" %
              q(fresh, "SELECT DISTINCT kind FROM v_api_calls"))
        check(q(fresh, "SELECT count(*) FROM v_kernels")[0][0] > 0, "new store: v_kernels rows")
        check_event_rows(fresh, "new store")
        check_plans(fresh, "new store")
    else:
        print("note: no OpenCL device/program: new-store check skipped")
    check_v2(tmp)
    check_v3(tmp)
    check_v4(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
