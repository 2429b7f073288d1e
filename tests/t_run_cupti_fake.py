#!/usr/bin/env python3
"""The CUPTI injection library end to end without a GPU: a stand-in libcupti
(tests/fake_cupti) is dlopen'ed by libgpuprof_cuda_inject.so, which a small
program initializes the way the CUDA driver does (InitializeInjection).
Checks: activity kinds enabled, timestamps taken through the registered
timestamp callback (CLOCK_MONOTONIC, inside the run), the forced flush at
exit, every record kind converted into the store (kernel with grid/block,
launch linked by correlation, pageable copy, memset, stream sync, alloc and
free, CUPTI overhead), CUPTI's dropped records counted in the run."""
import os, sqlite3, subprocess, sys, tempfile, time
from gp_testutil import BIN, check, failures

BUILD = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))
PROG = os.path.join(BUILD, "tests", "cupti_fake_prog")
FAKE = os.path.join(BUILD, "tests", "libfake_cupti.so")
LIB = os.path.join(BUILD, "libgpuprof_cuda_inject.so")


for f in (PROG, FAKE, LIB):
    if not os.path.exists(f):
        print("SKIP: %s not built (needs the CUDA toolkit's headers)" % f)
        sys.exit(77)
tmp = tempfile.mkdtemp(prefix="gp_cupti_fake_")
db = os.path.join(tmp, "c.db")
env = dict(os.environ, GPUPROF_CUPTI_PATH=FAKE)
t0 = time.monotonic_ns()
r = subprocess.run([BIN, "run", "-o", db, "--cuda", "--no-opencl", "--", PROG],
                   capture_output=True, text=True, env=env)
t1 = time.monotonic_ns()
# the fake CUPTI drops 2 records: the run is incomplete, exit 3 (issue 15)
check(r.returncode == 3 and "INCOMPLETE: 2 events dropped" in r.stderr,
      "run: %d %s" % (r.returncode, r.stderr))
check("cudaLaunchKernel" in r.stdout and "saxpy_kernel" in r.stdout, "summary printed")
con = sqlite3.connect(db)
k = con.execute("SELECT name, ts, dur, queued, submit, corr, stream, grid_x, block_x, registers "
                "FROM kernel_v").fetchall()
check(len(k) == 1, "one kernel: %r" % k)
a = con.execute("SELECT name, ts, dur, corr, cat FROM api_v").fetchall()
check(len(a) == 1 and a[0][0] == "cudaLaunchKernel" and a[0][4] == "cuda_runtime",
      "launch: %r" % a)
if k and a:
    check(k[0][0] == "saxpy_kernel" and k[0][7] == 4096 and k[0][8] == 256 and k[0][9] == 16,
          "kernel fields: %r" % (k[0],))
    check(k[0][5] == a[0][3] == 1, "launch and kernel share correlation 1")
    check(k[0][1] - a[0][1] == 5000 and k[0][2] == 20000, "record times kept exactly")
    check(k[0][3] == a[0][1] + 3500 and k[0][4] == a[0][1] + 4000, "queued/submitted")
    check(t0 <= a[0][1] <= t1, "timestamps from the CLOCK_MONOTONIC callback: %d in [%d, %d]"
          % (a[0][1], t0, t1))
c = con.execute("SELECT name, bytes, copy_kind, cat FROM copy_v ORDER BY ts").fetchall()
check(c == [("Memcpy HtoD (Pageable -> Device)", 4 << 20, 1, "gpu_memcpy"),
            ("Memset (Device)", 1 << 20, 6, "gpu_memset")], "copies: %r" % c)
src = con.execute("SELECT src_kind, dst_kind FROM copies WHERE copy_kind = 1").fetchone()
check(src == (1, 3), "pageable -> device memory kinds: %r" % (src,))
m = con.execute("SELECT bytes FROM memory ORDER BY ts").fetchall()
check(m == [(4 << 20,), (-(4 << 20),)], "alloc/free: %r" % m)
sl = con.execute("SELECT s.s, c.s FROM slices x JOIN strings s ON s.proc = x.proc AND "
                 "s.id = x.name JOIN strings c ON c.proc = x.proc AND c.id = x.cat "
                 "ORDER BY x.ts").fetchall()
check(sorted(sl) == [("CUPTI buffer flush", "overhead"), ("cudaStreamSynchronize", "cuda_sync")],
      "sync and overhead: %r" % sl)
dropped = con.execute("SELECT dropped FROM runs").fetchone()[0]
check(dropped == 2, "CUPTI dropped records counted: %r" % dropped)
con.close()
r = subprocess.run([BIN, "analyze", "--json", db], capture_output=True, text=True)
check(r.returncode == 0, "analyze reads the CUDA run: %s" % r.stderr[-300:])
# CUPTI may complete a buffer on its own thread while the program exits: the
# stand-in's thread is inside the completion when the flush returns and the
# exit goes on; the writer must wait for it (records stored, no crash)
db2 = os.path.join(tmp, "late.db")
r = subprocess.run([BIN, "run", "-o", db2, "-q", "--no-summary", "--cuda", "--no-opencl", "--",
                    PROG], capture_output=True, text=True,
                   env=dict(env, FAKE_CUPTI_LATE="1"))
check(r.returncode == 3 and "INCOMPLETE: 2 events dropped" in r.stderr,
      "late completion: the run ends as usual: %d %s" % (r.returncode, r.stderr[-300:]))
if os.path.exists(db2):
    con = sqlite3.connect(db2)
    n = [con.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
         for t in ("kernel_v", "api_v", "copy_v", "memory")]
    con.close()
    check(n == [1, 1, 2, 2], "late completion: every record stored: %r" % n)
else:
    check(False, "late completion: no store written")
# --no-cuda: the injection is not loaded (the program then finds no path)
r = subprocess.run([BIN, "run", "-o", db, "-q", "--no-cuda", "--no-summary", "--", PROG],
                   capture_output=True, text=True, env=env)
check(r.returncode == 2 and "not set" in r.stderr, "no CUDA_INJECTION64_PATH with --no-cuda")
if failures:
    sys.exit(1)
print("ok")
