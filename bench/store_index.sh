#!/usr/bin/env bash
# Per-run reads benchmark (issue 17; schema 5): a 50-run store
# (tests/data/store_v1.db migrated by gpuprof, then 49 more runs of 20,000
# kernels and 20,000 API calls each, with their event_rows ranges as the
# writer records them); a query on the last run must not scan all runs:
# EXPLAIN QUERY PLAN of the view shows processes(run) -> event_rows -> a
# rowid range, and the query and `gpuprof summary STORE:50` are timed
# against a scan (the same count over the raw table by proc, and the
# summary of a copy without event_rows, which the loader then reads by
# scanning), measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=bench/results/store_index.txt
mkdir -p bench/work bench/results
python3 - "$BUILD/gpuprof" "$OUT" "$(git rev-parse --short HEAD)" <<'PY'
import os, shutil, sqlite3, subprocess, sys, time
gp, out, rev = sys.argv[1:]
db, noidx = "bench/work/store50.db", "bench/work/store50_noidx.db"
for f in (db, noidx):
    for s in ("", "-wal", "-shm"):
        if os.path.exists(f + s): os.remove(f + s)
shutil.copy("tests/data/store_v1.db", db)
subprocess.run([gp, "runs", db], check=True, capture_output=True)  # migrates to schema 5
con = sqlite3.connect(db)
N = 20000
for run in range(2, 51):
    con.execute("INSERT INTO runs SELECT ?, command, start_wall_ns, start_mono_ns, host, pid, devices, "
                "version, exit_status, duration_ns, dropped FROM runs WHERE id = 1", (run,))
    con.execute("INSERT INTO processes SELECT ?, ?, pid, ppid, exe, source, start_mono_ns, start_wall_ns, "
                "end_mono_ns, events, dropped FROM processes WHERE id = 1", (run, run))
    for t in ("strings", "tracks", "devices"):
        cols = [c[1] for c in con.execute("PRAGMA table_info(%s)" % t)]
        sel = ", ".join("?" if c == "proc" else c for c in cols)
        con.execute("INSERT INTO %s SELECT %s FROM %s WHERE proc = 1" % (t, sel, t), (run,))
    k = con.execute("SELECT * FROM kernels WHERE proc = 1 LIMIT 1").fetchone()
    a = con.execute("SELECT * FROM api_calls WHERE proc = 1 LIMIT 1").fetchone()
    con.executemany("INSERT INTO kernels VALUES(%s)" % ",".join("?" * len(k)),
                    ((run,) + k[1:3] + (k[3] + i * 1000,) + k[4:] for i in range(N)))
    con.executemany("INSERT INTO api_calls VALUES(%s)" % ",".join("?" * len(a)),
                    ((run,) + a[1:4] + (a[4] + i * 1000,) + a[5:] for i in range(N)))
    for tbl, t in ((1, "api_calls"), (2, "kernels")):  # what the writer records
        con.execute("INSERT INTO event_rows SELECT ?, proc, min(rowid), max(rowid) FROM %s "
                    "WHERE proc = ?" % t, (tbl, run))
con.commit()
con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
con.close()
shutil.copy(db, noidx)
c2 = sqlite3.connect(noidx)
c2.execute("DROP TABLE event_rows")  # the loader then reads by proc IN (...): a scan
c2.commit(); c2.close()
Q = "SELECT count(*), sum(dur_ns) FROM v_kernels WHERE run = 50"
QS = "SELECT count(*), sum(dur) FROM kernels WHERE proc IN (SELECT id FROM processes WHERE run = 50)"
def plan(path, sql):
    c = sqlite3.connect(path)
    r = " | ".join(x[-1] for x in c.execute("EXPLAIN QUERY PLAN " + sql)); c.close(); return r
def timed(path, sql, reps=20):
    c = sqlite3.connect(path); best = 1e9
    for _ in range(reps):
        t = time.perf_counter(); c.execute(sql).fetchall(); best = min(best, time.perf_counter() - t)
    c.close(); return best
def timed_cmd(args, reps=3):
    best = 1e9
    for _ in range(reps):
        t = time.perf_counter(); subprocess.run(args, check=True, capture_output=True)
        best = min(best, time.perf_counter() - t)
    return best
c3 = sqlite3.connect(db)
same = c3.execute(Q).fetchall() == c3.execute(QS).fetchall()
c3.close()
p_idx, p_scan = plan(db, Q), plan(db, QS)
t_idx, t_scan = timed(db, Q), timed(db, QS)
s_idx = timed_cmd([gp, "summary", db + ":50"])
s_scan = timed_cmd([gp, "summary", noidx + ":50"])
rows = sqlite3.connect(db).execute("SELECT count(*) FROM kernels").fetchone()[0]
lines = [
    "store index benchmark (bench/store_index.sh) %s, git %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rev),
    "store: 50 runs, %d kernel rows, %d API-call rows, %.1f MB" % (rows, rows, os.path.getsize(db) / 1e6),
    "query: " + Q,
    "baseline: " + QS + " (the same count and sum: %s)" % ("yes" if same else "NO"),
    "  plan through event_rows : " + p_idx,
    "  plan of the baseline    : " + p_scan,
    "  last-run query, event_rows : %8.3f ms" % (t_idx * 1e3),
    "  last-run query, scan       : %8.3f ms  -> event_rows takes %.3fx the scan's time" % (t_scan * 1e3, t_idx / t_scan),
    "  gpuprof summary STORE:50 event_rows          : %6.3f s" % s_idx,
    "  gpuprof summary STORE:50 without (scanning)  : %6.3f s  -> %.2fx" % (s_scan, s_idx / s_scan),
    "  scans an event table for one run: %s" % ("no" if "SCAN k" not in p_idx and "AUTOMATIC" not in p_idx else "YES"),
]
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
