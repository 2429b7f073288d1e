#!/usr/bin/env python3
"""gpuprof run on an OpenCL program (PoCL) that forks without exec after
OpenCL is in use, parent and children enqueueing on the inherited queue:
each process is recorded as its own processes row of the run, with exactly
the kernels and writes it enqueued (none lost, none duplicated), and the run
ends (no deadlock). PoCL's default pthread device cannot run in a forked
child (its worker threads are not inherited), so the program runs on PoCL's
'basic' device."""
import os, sqlite3, subprocess, sys, tempfile
from gp_testutil import BIN, check, failures

BUILD = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))
PROG = os.path.join(BUILD, "tests", "cl_fork_prog")
LAYER = os.path.join(BUILD, "libgpuprof_cl_layer.so")


if not os.path.exists(PROG) or not os.path.exists(LAYER):
    print("SKIP: OpenCL layer or test program not built (%s, %s)" % (PROG, LAYER))
    sys.exit(77)
env = dict(os.environ, POCL_DEVICES="basic")
probe = subprocess.run([PROG, "0"], capture_output=True, text=True, env=env, timeout=120)
if probe.returncode == 77:
    print("SKIP: no OpenCL device: " + probe.stdout.strip())
    sys.exit(77)
if probe.returncode != 0:
    print("SKIP: the program does not run untraced on this OpenCL driver (POCL_DEVICES=basic): "
          "rc %d %s" % (probe.returncode, probe.stderr.strip()))
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="gp_run_fork_")
db = os.path.join(tmp, "fork.db")
CHILDREN = 3
try:
    r = subprocess.run([BIN, "run", "-o", db, "-q", "--no-summary", "--", PROG, str(CHILDREN)],
                       capture_output=True, text=True, env=env, timeout=120)
except subprocess.TimeoutExpired:
    print("FAIL: gpuprof run of a forking program did not end in 120 s (deadlock)")
    sys.exit(1)
check(r.returncode == 0, "gpuprof run exit %d: %s" % (r.returncode, r.stderr))
want = {}
for line in r.stdout.splitlines():
    p = line.split()
    if len(p) == 8 and p[0] == "pid":
        want[int(p[1])] = (int(p[3]), int(p[5]), int(p[7]))
check(len(want) == CHILDREN + 1, "program printed %d processes: %r" % (len(want), r.stdout))

con = sqlite3.connect(db)
procs = con.execute("SELECT id, pid, ppid, run, dropped, end_mono_ns IS NOT NULL FROM processes "
                    "ORDER BY id").fetchall()
check(len(procs) == CHILDREN + 1, "processes rows %d: %r" % (len(procs), procs))
parent_pid = procs[0][1] if procs else None
for pid_row in procs:
    pid = pid_row[1]
    check(pid_row[3] == 1, "process %d under run 1" % pid)
    check(pid_row[4] == 0, "process %d dropped %d" % (pid, pid_row[4]))
    check(pid_row[5] == 1, "process %d end recorded" % pid)
    if pid != parent_pid:
        check(pid_row[2] == parent_pid, "child %d's ppid %d is the parent %r" %
              (pid, pid_row[2], parent_pid))
for pid, (pre, kernels, writes) in sorted(want.items()):
    row = [x for x in procs if x[1] == pid]
    check(len(row) == 1, "process %d recorded once" % pid)
    if not row:
        continue
    proc = row[0][0]
    names = dict(con.execute("SELECT name, count(*) FROM kernel_v WHERE proc = ? GROUP BY name",
                             (proc,)).fetchall())
    exp = {"pre_fork": pre} if pre else {}
    if kernels:
        exp["in_parent" if pid == parent_pid else "in_child"] = kernels
    check(names == exp, "process %d kernels %r, enqueued %r" % (pid, names, exp))
    nw, nbytes = con.execute("SELECT count(*), sum(bytes) FROM copies WHERE proc = ?",
                             (proc,)).fetchone()
    check(nw == writes and nbytes == writes * 4096 * 4,
          "process %d writes %d (%r bytes), enqueued %d" % (pid, nw, nbytes, writes))
    napi = con.execute("SELECT count(*) FROM api_v WHERE proc = ? AND name LIKE 'clEnqueue%'",
                       (proc,)).fetchone()[0]
    check(napi == pre + kernels + writes, "process %d enqueue calls %d" % (pid, napi))
    tids = con.execute("SELECT DISTINCT t.tid FROM api_calls a JOIN tracks t ON t.proc = a.proc "
                       "AND t.id = a.track WHERE a.proc = ?", (proc,)).fetchall()
    check(tids == [(pid,)], "process %d's API calls on its own thread: %r" % (pid, tids))
    ttr = con.execute("SELECT tid FROM tracks WHERE proc = ? AND type = 0", (proc,)).fetchall()
    check(ttr == [(pid,)], "process %d's thread tracks %r (the parent's not repeated)" %
          (pid, ttr))
tot = con.execute("SELECT count(*) FROM kernels").fetchone()[0]
check(tot == sum(v[0] + v[1] for v in want.values()), "no duplicated kernels: %d" % tot)
con.close()
r = subprocess.run([BIN, "summary", "--json", db], capture_output=True, text=True)
check(r.returncode == 0, "summary of the run: %s" % r.stderr)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok: %d processes recorded" % len(want))
