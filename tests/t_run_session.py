#!/usr/bin/env python3
"""tests/t_run_session.py: the session result of `gpuprof run` (issue 18):
the same computation as libgpuprof's gp_session_end (analysis/session_result.c)
and the same writers (report/session_result.c), printed after the summary
and written by --session-json. Checked against values computed here
independently from the store with sqlite3:
- OpenCL on PoCL (tests/progs/cl_record_prog.c): total time = the run's
  duration; GPU time and launches = sum and count of the kernels rows; the
  top kernels (name, count, total) = GROUP BY over the kernels rows; the
  bottlenecks = the top 10 by self time computed here (per track, a slice's
  duration minus its children's, clipped); CPU time positive and at most
  the wall time x CPUs; the recommendations = `gpuprof advise` findings.
- CUDA through the stand-ins (tests/fake_cupti): the same checks, and the
  device memory peak and the bytes left allocated from the memory rows.
Skips (77) when neither can run here."""
import json, os, sqlite3, subprocess, sys, tempfile

from gp_testutil import BIN, BUILD, check, finish, set_verbose, skip

set_verbose()
ran = 0


def self_times(rows):
    """rows: (track, name, ts, dur). Per-name (count, total, self): self =
    duration minus the nested slices' durations on the same track (a child
    is clipped to its parent)."""
    out = {}
    by_track = {}
    for tr, name, ts, dur in rows:
        by_track.setdefault(tr, []).append((ts, -dur, name))
    for tr, sl in by_track.items():
        sl.sort()
        stack = []  # [end, name, dur, child]
        def close(e):
            end, name, dur, child = e
            c, tot, se = out.get(name, (0, 0, 0))
            out[name] = (c + 1, tot + dur, se + max(0, dur - child))
        for ts, ndur, name in sl:
            dur = -ndur
            while stack and stack[-1][0] <= ts:
                close(stack.pop())
            if stack:
                stack[-1][3] += min(ts + dur, stack[-1][0]) - ts
            stack.append([ts + dur, name, dur, 0])
        while stack:
            close(stack.pop())
    return out


def check_run(label, db, sess_path, stdout):
    global ran
    ran += 1
    s = json.load(open(sess_path))
    con = sqlite3.connect(db)
    check(s["schema"] == "gpuprof-session-1" and s["name"] == "run 1", "%s: schema and name" % label)
    dur = con.execute("SELECT duration_ns FROM runs WHERE id = 1").fetchone()[0]
    check(s["total_ns"] == dur, "%s: total %d == runs.duration_ns %d" % (label, s["total_ns"], dur))
    ncpu = os.cpu_count() or 1
    check(0 < s["cpu_ns"] <= dur * ncpu, "%s: CPU time %d in (0, %d]" % (label, s["cpu_ns"], dur * ncpu))
    kn, ksum = con.execute("SELECT count(*), coalesce(sum(dur), 0) FROM kernels").fetchone()
    check(s["kernel_launches"] == kn and s["gpu_ns"] == (ksum if kn else None),
          "%s: GPU time %s over %d launches == kernels rows %d over %d" %
          (label, s["gpu_ns"], s["kernel_launches"], ksum, kn))
    want_k = con.execute("SELECT s.s, count(*), sum(k.dur) AS t FROM kernels k JOIN strings s ON "
                         "s.proc = k.proc AND s.id = k.name GROUP BY s.s ORDER BY t DESC, s.s "
                         "LIMIT 10").fetchall()
    got_k = [(k["name"], k["count"], k["total_ns"]) for k in s["kernels"]]
    check(got_k == [tuple(r) for r in want_k], "%s: top kernels %r == %r" % (label, got_k, want_k))
    rows = []
    for table in ("api_calls", "kernels", "copies", "slices"):
        rows += con.execute("SELECT t.proc * 100000 + t.id, s.s, x.ts, x.dur FROM %s x JOIN "
                            "strings s ON s.proc = x.proc AND s.id = x.name JOIN tracks t ON "
                            "t.proc = x.proc AND t.id = x.track" % table).fetchall()
    st = self_times(rows)
    want_b = sorted(st.items(), key=lambda kv: (-kv[1][2], -kv[1][1], kv[0]))[:10]
    got_b = {b["name"]: (b["count"], b["total_ns"], b["self_ns"]) for b in s["bottlenecks"]}
    check(len(s["bottlenecks"]) == len(want_b), "%s: %d bottlenecks == %d" %
          (label, len(s["bottlenecks"]), len(want_b)))
    for name, v in want_b:
        check(got_b.get(name) == v, "%s: bottleneck %s (count, total, self) %r == %r" %
              (label, name, got_b.get(name), v))
    selfs = [b["self_ns"] for b in s["bottlenecks"]]
    check(selfs == sorted(selfs, reverse=True), "%s: bottlenecks by self time" % label)
    mem = con.execute("SELECT proc, device, ts, bytes FROM memory ORDER BY rowid").fetchall()
    if mem:
        cur, peak = {}, {}
        for proc, dev, ts, b in mem:
            k = (proc, dev)
            cur[k] = cur.get(k, 0) + b
            peak[k] = max(peak.get(k, 0), cur[k])
        check(s["mem_peak_bytes"] == max(peak.values()),
              "%s: memory peak %s == %d" % (label, s["mem_peak_bytes"], max(peak.values())))
        check(s["mem_allocated_bytes"] == sum(cur.values()),
              "%s: allocated at end %s == %d" % (label, s["mem_allocated_bytes"], sum(cur.values())))
    else:
        check(s["mem_peak_bytes"] is None, "%s: no memory rows, no memory figures" % label)
    check(s["mem_reserved_bytes"] is None, "%s: reserved unknown in a run" % label)
    con.close()
    adv = json.loads(subprocess.run([BIN, "advise", "--json", db], capture_output=True,
                                    text=True).stdout)["traces"][0]["advice"]
    want_r = ["[%s] %s: %s; %s" % (a["priority"], a["id"], a["finding"], a["hint"]) for a in adv]
    check(s["recommendations"] == want_r, "%s: recommendations == gpuprof advise (%d)" %
          (label, len(want_r)))
    check("Session run 1" in stdout and "bottlenecks (self time" in stdout,
          "%s: the session result printed after the summary" % label)
    for k in s["kernels"]:
        check(k["name"] in stdout.split("Session run 1", 1)[-1], "%s: printed kernel %s" % (label, k["name"]))


tmp = tempfile.mkdtemp(prefix="gp_run_session_")

# ---- OpenCL (PoCL)
CL = os.path.join(BUILD, "tests", "cl_record_prog")
probe = subprocess.run([BIN, "devices", "--json"], capture_output=True, text=True)
has_cl = os.path.exists(CL) and '"opencl"' in probe.stdout
if has_cl:
    db, sj = os.path.join(tmp, "cl.db"), os.path.join(tmp, "cl.json")
    r = subprocess.run([BIN, "run", "-o", db, "--session-json", sj, "--", CL, "5", "65536"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "opencl run: exit %d %s" % (r.returncode, r.stderr[-300:]))
    if r.returncode == 0:
        check_run("opencl", db, sj, r.stdout)
else:
    print("note: OpenCL part skipped (no OpenCL device or program)")

# ---- CUDA through the stand-ins
PROG = os.path.join(BUILD, "tests", "cupti_fake_prog")
FAKE = os.path.join(BUILD, "tests", "libfake_cupti.so")
LIB = os.path.join(BUILD, "libgpuprof_cuda_inject.so")
if all(os.path.exists(f) for f in (PROG, FAKE, LIB)):
    db, sj = os.path.join(tmp, "cu.db"), os.path.join(tmp, "cu.json")
    env = dict(os.environ, GPUPROF_CUPTI_PATH=FAKE)
    r = subprocess.run([BIN, "run", "-o", db, "--cuda", "--no-opencl", "--allow-incomplete",
                        "--session-json", sj, "--", PROG], capture_output=True, text=True, env=env)
    check(r.returncode == 0, "cuda run: exit %d %s" % (r.returncode, r.stderr[-300:]))
    if r.returncode == 0:
        check_run("cuda", db, sj, r.stdout)
else:
    print("note: CUDA part skipped (stand-ins not built)")

# ---- --no-summary --session-json: nothing printed, the JSON written
if has_cl:
    db, sj = os.path.join(tmp, "q.db"), os.path.join(tmp, "q.json")
    r = subprocess.run([BIN, "run", "-o", db, "-q", "--no-summary", "--session-json", sj, "--",
                        CL, "2", "4096"], capture_output=True, text=True)
    check(r.returncode == 0 and "Session" not in r.stdout and os.path.exists(sj),
          "--no-summary --session-json: JSON only")
    # a session JSON that cannot be written: one-line message, non-zero exit
    r = subprocess.run([BIN, "run", "-o", db, "-q", "--session-json", "/nonexistent/x.json",
                        "--", CL, "2", "4096"], capture_output=True, text=True)
    check(r.returncode != 0 and "/nonexistent/x.json" in r.stderr,
          "unwritable --session-json: exit %d, %r" % (r.returncode, r.stderr.strip()[-120:]))

if not ran:
    skip("neither OpenCL nor the CUDA stand-ins can run here")
sys.exit(finish())
