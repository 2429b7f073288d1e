#!/usr/bin/env python3
"""gpuprof serve: the events' args text is read from the file only when a
timeline export asks for it (the server loads a trace with where each args
object lies, trace/args_source.h). On generated traces (plain, split over
threads; gzip; a folder with a file that holds no trace before the trace):
1. the first summary answers without the args text; the timeline then
   equals `gpuprof timeline -o X.json` byte for byte and the trace's memory
   grows by the text read in;
2. concurrent first timeline requests all get those bytes;
3. a file changed between the load and the first timeline request (in
   place, or replaced; plain and gzip) is loaded again: the timeline and
   the summary then equal the commands' on the new file;
4. with --redact the args read in are sanitized: the timeline equals
   `gpuprof timeline --redact -o X.json`;
5. a run of a store (no args text) gives the command's timeline.
Exit 77 without serve."""
import gzip, json, os, random, shutil, subprocess, sys, tempfile, threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import BIN, Server  # noqa: E402
from gp_testutil import check, failures, set_verbose  # noqa: E402

set_verbose()


def trace_text(seed, n=6000):
    """A Kineto-like trace: ops and kernels with args (strings with braces
    and escapes, nested values), events without args, instants, B/E."""
    r = random.Random(seed)
    ev = ['{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"main"}}']
    for i in range(n):
        ts = 1000 + i * 10
        k = r.randrange(5)
        if k == 0:
            ev.append('{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":2,"ts":%d,"dur":4,'
                      '"args":{"External id":%d,"s":"a}{\\"b\\\\ \\u00e9 %d","Input Dims":[[1,%d],[]],'
                      '"o":{"k":[{"a":1}, {"b":2}]}}}' % (i % 9, ts, i, r.randrange(1 << 30),
                                                          r.randrange(64)))
        elif k == 1:
            ev.append('{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":2,'
                      '"args" : { "correlation" : %d , "stream":7,"grid":[1,1,1]}}'
                      % (i % 5, ts + 1, i))
        elif k == 2:
            ev.append('{"ph":"X","cat":"cpu_op","name":"bare%d","pid":1,"tid":3,"ts":%d,"dur":1}'
                      % (i % 4, ts))
        elif k == 3:
            ev.append('{"ph":"i","s":"t","name":"mark","pid":1,"tid":2,"ts":%d,'
                      '"args":{"note":"n%d","v":%d.5}}' % (ts, r.randrange(1000), i))
        else:
            ev.append('{"ph":"B","name":"range%d","cat":"user_annotation","pid":1,"tid":9,'
                      '"ts":%d},\n{"ph":"E","pid":1,"tid":9,"ts":%d}' % (i, ts, ts + 5))
    return '{"schemaVersion":1,"traceEvents":[\n' + ",\n".join(ev) + "\n]}\n"


# the server and the commands split even these small plain files over
# threads, the same way (B/E pairs cut by a split end in another order)
ENV = dict(os.environ, GPUPROF_SPLIT_MIN_BYTES="4096", GPUPROF_IMPORT_THREADS="3")


def cli(*args):
    r = subprocess.run([BIN] + list(args), capture_output=True, timeout=300, env=ENV)
    return r.returncode, r.stdout


def main():
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode != 0:
        print("SKIP: this gpuprof has no serve command (libmicrohttpd missing at build)")
        return 77
    tmp = tempfile.mkdtemp(prefix="gp_serve_args_")
    plain = os.path.join(tmp, "plain.json")
    gz = os.path.join(tmp, "packed.json.gz")
    folder = os.path.join(tmp, "ranks")
    os.mkdir(folder)
    with open(plain, "w") as f:
        f.write(trace_text(1))
    with gzip.open(gz, "wt") as f:
        f.write(trace_text(2))
    with open(os.path.join(folder, "a_expected.json"), "w") as f:  # no trace: skipped
        f.write('{"expected": {"kernels": 3}}\n')
    with open(os.path.join(folder, "b_rank0.json"), "w") as f:
        f.write(trace_text(3, 2000))
    env = ENV
    out = os.path.join(tmp, "tl.json")

    def timeline_of(p):
        rc, _ = cli("timeline", "-o", out, p)
        with open(out, "rb") as f:
            return rc, f.read()

    s = Server([plain, gz, folder, "--quiet"], env=env)
    try:
        doc = json.loads(s.get("/api/traces")[2])
        ids = {t["name"]: t["id"] for t in doc["traces"]}

        def mem(p):
            d = json.loads(s.get("/api/traces")[2])
            return [t["memory_bytes"] for t in d["traces"] if t["name"] == p][0]

        # 1. summary first, then the timeline
        for p in (plain, gz, folder):
            st, _, b = s.get("/api/summary?trace=" + ids[p])
            check(st == 200 and b == cli("summary", "--json", p)[1],
                  "%s: summary equals the command's" % os.path.basename(p))
            m0 = mem(p)
            rc, want = timeline_of(p)
            st, _, b = s.get("/api/profiler/timeline?trace=" + ids[p])
            check(rc == 0 and st == 200 and b == want and b'"args":{"' in b,
                  "%s: timeline equals `gpuprof timeline -o` (%d vs %d bytes)"
                  % (os.path.basename(p), len(b), len(want)))
            m1 = mem(p)
            check(m1 > m0, "%s: the args text read in counts in memory_bytes (%d -> %d)"
                  % (os.path.basename(p), m0, m1))
            st, _, b2 = s.get("/api/profiler/timeline?trace=" + ids[p])
            check(st == 200 and b2 == want, "%s: the timeline again, same bytes"
                  % os.path.basename(p))
    finally:
        rc, err = s.stop()
        check(rc == 0, "the server stops with status 0 (%s)" % err.strip()[-300:])

    # 2. concurrent first timeline requests (no load before)
    s = Server([plain, gz, "--quiet"], env=env)
    try:
        doc = json.loads(s.get("/api/traces")[2])
        ids = {t["name"]: t["id"] for t in doc["traces"]}
        for p in (plain, gz):
            want = timeline_of(p)[1]
            got = []

            def one():
                got.append(s.get("/api/profiler/timeline?trace=" + ids[p]))
            th = [threading.Thread(target=one) for _ in range(6)]
            for t in th:
                t.start()
            for t in th:
                t.join()
            check(len(got) == 6 and all(st == 200 and b == want for st, _, b in got),
                  "%s: 6 concurrent first timeline requests get the command's bytes"
                  % os.path.basename(p))
    finally:
        rc, err = s.stop()
        check(rc == 0, "the server stops with status 0 (%s)" % err.strip()[-300:])

    # 3. the file changes after the load, before the first timeline request
    s = Server([plain, gz, "--quiet"], env=env)
    try:
        doc = json.loads(s.get("/api/traces")[2])
        ids = {t["name"]: t["id"] for t in doc["traces"]}
        for p, how in ((plain, "in place"), (gz, "replaced")):
            st, _, before = s.get("/api/summary?trace=" + ids[p])
            check(st == 200, "%s: loaded" % os.path.basename(p))
            stt = os.stat(p)
            if how == "in place":  # the same inode, other bytes, a later time
                with open(p, "r+") as f:
                    f.write(trace_text(11))
                    f.truncate()
            else:
                new = p + ".new"
                with gzip.open(new, "wt") as f:
                    f.write(trace_text(12))
                os.replace(new, p)
            os.utime(p, ns=(stt.st_atime_ns, stt.st_mtime_ns + 2000000000))
            # at once: within the second the server would not look at the files
            want = timeline_of(p)[1]
            st, _, b = s.get("/api/profiler/timeline?trace=" + ids[p])
            check(st == 200 and b == want,
                  "%s changed %s after the load: the timeline is the new file's (%d, %d vs %d "
                  "bytes)" % (os.path.basename(p), how, st, len(b), len(want)))
            st, _, after = s.get("/api/summary?trace=" + ids[p])
            check(st == 200 and after != before and after == cli("summary", "--json", p)[1],
                  "%s changed %s: the summary is the new file's" % (os.path.basename(p), how))
        check(s.alive(), "the server is still up")
    finally:
        rc, err = s.stop()
        check(rc == 0, "the server stops with status 0 (%s)" % err.strip()[-300:])

    # 4. --redact: the args read in are sanitized as the command sanitizes them
    sens = os.path.join(tmp, "sensitive.json")
    with open(sens, "w") as f:
        f.write(trace_text(5).replace('"note":"n', '"note":"/srv/private/set1.bin n'))
    s = Server([sens, "--quiet", "--redact"], env=env)
    try:
        i = json.loads(s.get("/api/traces")[2])["traces"][0]["id"]
        s.get("/api/summary?trace=" + i)
        rc, _ = cli("timeline", "--redact", "-o", out, sens)
        with open(out, "rb") as f:
            want = f.read()
        st, _, b = s.get("/api/profiler/timeline?trace=" + i)
        check(rc == 0 and st == 200 and b == want and b"/srv/private" not in b and
              b"/srv/private" in timeline_of(sens)[1],
              "--redact: the timeline equals `gpuprof timeline --redact -o`, the path sanitized")
    finally:
        rc, err = s.stop()
        check(rc == 0, "the server stops with status 0 (%s)" % err.strip()[-300:])

    # 5. a run of a store has no args text to read: its timeline is the command's
    prog = os.path.join(os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN)), "tests",
                        "cl_record_prog")
    db = os.path.join(tmp, "rec.db")
    if os.path.exists(prog) and subprocess.run([prog, "0"], capture_output=True).returncode == 0:
        subprocess.run([BIN, "run", "-o", db, "-q", "--no-summary", "--", prog, "2", "4096"],
                       capture_output=True, timeout=120)
    if os.path.exists(db):
        s = Server(["--quiet", "--store", db], env=env)
        try:
            i = json.loads(s.get("/api/traces")[2])["traces"][0]["id"]
            st, _, b = s.get("/api/profiler/timeline?trace=" + i)
            rc, want = timeline_of(db + ":1")
            check(rc == 0 and st == 200 and b == want, "store run: the timeline equals the command's")
        finally:
            rc, err = s.stop()
            check(rc == 0, "the server stops with status 0 (%s)" % err.strip()[-300:])
    else:
        print("note: no OpenCL recording here; the store run part is skipped")
    shutil.rmtree(tmp, ignore_errors=True)
    print("t_serve_args: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
