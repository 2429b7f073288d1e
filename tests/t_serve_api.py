#!/usr/bin/env python3
"""gpuprof serve: every endpoint against the command that computes the same
result, on the shared real traces. The JSON bodies must be byte-identical to
`gpuprof CMD --json` (summary, kernels = summary --category kernel, hta =
analyze, flame, memory, timeline, advise, compare, runs, health, sessions),
the HTML views byte-identical to the files the commands write (report,
flame, timeline, memory); devices equal `devices --json` except the host's
own load figures, which move between two samples. Also: /api/traces lists
ids, states and 100 % once loaded; a repeated request is answered from the
cache (the same bytes); a file changed on disk is re-read; compile equals
`gpuprof compile --json` on one trace; errors are JSON with their status; sessions started and stopped through
POST /api/sessions. Exit 77 without the shared traces or without serve."""
import json, os, re, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import BIN, Server  # noqa: E402
from gp_testutil import SRC, TRACES, check, failures, set_verbose  # noqa: E402

set_verbose()

BUILD = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))


def cli(*args, env=None):
    r = subprocess.run([BIN] + list(args), capture_output=True, timeout=600, env=env)
    return r.returncode, r.stdout


def main():
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode != 0:
        print("SKIP: this gpuprof has no serve command (libmicrohttpd missing at build)")
        return 77
    if not os.path.isdir(TRACES):
        print("SKIP: shared traces not found at %s" % TRACES)
        return 77
    tmp = tempfile.mkdtemp(prefix="gp_serve_api_")
    alex = os.path.join(TRACES, "alexnet")
    two = os.path.join(TRACES, "sampled_2rank")
    mi = os.path.join(TRACES, "amd_mi250")
    single = os.path.join(tmp, "copy.json.gz")  # a file the test changes later
    shutil.copy(os.path.join(TRACES, "cpu_only",
                             "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), single)
    nccl = os.path.join(TRACES, "nccl_data", "nccl_data.json.gz")
    triton = os.path.join(TRACES, "triton_example", "triton_example.json.gz")
    paths = [alex, two, mi, single, nccl, triton]
    # a store with two runs when the OpenCL test program can record
    store = None
    prog = os.path.join(BUILD, "tests", "cl_record_prog")
    if os.path.exists(prog) and subprocess.run([prog, "0"], capture_output=True).returncode == 0:
        db = os.path.join(tmp, "rec.db")
        for _ in range(2):
            subprocess.run([BIN, "run", "-o", db, "-q", "--no-summary", "--", prog, "2", "4096"],
                           capture_output=True, timeout=120)
        store = db if os.path.exists(db) else None
    if not store:
        print("note: no OpenCL recording here; /api/runs is checked for its 404 only")
    fake = os.path.join(BUILD, "tests", "libfake_nvml.so")
    env = dict(os.environ)
    outdir = os.path.join(tmp, "sessions")
    env.update({"GPUPROF_NVIDIA_SMI": "/nonexistent", "GPUPROF_OUTPUT_DIR": outdir})
    if os.path.exists(fake):
        env.update({"GPUPROF_NVML_LIB": fake, "FAKE_NVML_SCENARIO":
                    os.path.join(SRC, "tests", "data", "monitor", "nvml_basic.scn")})
    else:
        env["GPUPROF_NVML_LIB"] = "/nonexistent/libnvidia-ml.so.1"
    args = paths + (["--store", store] if store else []) + ["--quiet"]
    s = Server(args, env=env)
    try:
        st, h, body = s.get("/api/traces")
        doc = json.loads(body)
        check(st == 200 and h["content-type"] == "application/json", "/api/traces is JSON")
        ids = {t["name"]: t["id"] for t in doc["traces"]}
        check(all(p in ids for p in paths), "every served path has an id")
        check(all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids.values()), "ids are 8 hex digits")
        check(all(t["state"] == "unloaded" for t in doc["traces"]), "nothing loaded before use")
        if store:
            check("%s:1" % store in ids and "%s:2" % store in ids, "each run of the store is a trace")

        def same(path, want, what):
            st, h, got = s.get(path)
            ok = st == 200 and got == want
            if not ok:
                print("  endpoint %s: status %d, %d bytes vs %d" % (path, st, len(got), len(want)))
                for i, (a, b) in enumerate(zip(got, want)):
                    if a != b:
                        print("  first difference at byte %d: %r vs %r" % (i, got[i:i + 80],
                                                                          want[i:i + 80]))
                        break
            check(ok, what)
            return h

        for name, p in (("alexnet", alex), ("sampled_2rank", two), ("amd_mi250", mi),
                        ("nccl", nccl)):
            i = ids[p]
            same("/api/summary?trace=" + i, cli("summary", "--json", p)[1], "summary " + name)
            same("/api/summary?trace=%s&top=3&bottlenecks=2&category=kernel,cpu_op" % i,
                 cli("summary", "--json", "--top", "3", "--bottlenecks", "2", "--category",
                     "kernel,cpu_op", p)[1], "summary with options " + name)
            same("/api/profiler/kernels?trace=%s&top=5" % i,
                 cli("summary", "--json", "--category", "kernel", "--top", "5", p)[1],
                 "kernels " + name)
            same("/api/profiler/hta?trace=" + i, cli("analyze", "--json", p)[1], "hta " + name)
            same("/api/profiler/hta?trace=%s&compat=hta&top=3" % i,
                 cli("analyze", "--json", "--compat", "hta", "--top", "3", p)[1],
                 "hta compat " + name)
            same("/api/profiler/flame?trace=" + i, cli("flame", "--json", p)[1], "flame " + name)
            same("/api/profiler/flame?trace=%s&min_duration=20us&max_depth=5" % i,
                 cli("flame", "--json", "--min-duration", "20us", "--max-depth", "5", p)[1],
                 "flame with options " + name)
            same("/api/profiler/memory?trace=%s&points=100" % i,
                 cli("memory", "--json", "--points", "100", p)[1], "memory " + name)
            same("/api/advise?trace=" + i, cli("advise", "--json", p)[1], "advise " + name)
            same("/api/advise?trace=%s&min_priority=high" % i,
                 cli("advise", "--json", "--min-priority", "high", p)[1], "advise high " + name)
            same("/api/advise?trace=%s&only=small-gpu-op,batch-calls&set=small-gpu-op.max_us=5,"
                 "batch-calls.min_run=3" % i,
                 cli("advise", "--json", "--only", "small-gpu-op,batch-calls", "--set",
                     "small-gpu-op.max_us=5", "--set", "batch-calls.min_run=3", p)[1],
                 "advise only/set " + name)
            same("/api/advise?trace=%s&disable=small-gpu-op,large-memory" % i,
                 cli("advise", "--json", "--disable", "small-gpu-op,large-memory", p)[1],
                 "advise disable " + name)
        # timeline: one trace; the file the command writes
        for p in (single, nccl):
            out = os.path.join(tmp, "tl.json")
            cli("timeline", "-o", out, p)
            same("/api/profiler/timeline?trace=" + ids[p], open(out, "rb").read(),
                 "timeline " + os.path.basename(p))
        st, _, b = s.get("/api/profiler/timeline?trace=" + ids[two])
        check(st == 400 and b"one trace" in b, "timeline of a folder of ranks: 400")
        same("/api/compare?base=%s&current=%s" % (ids[alex], ids[two]),
             cli("compare", "--json", alex, two)[1], "compare folders")
        same("/api/compare?base=%s&current=%s&category=kernel&threshold=10&top=3&correction=none"
             % (ids[single], ids[nccl]),
             cli("compare", "--json", "--category", "kernel", "--threshold", "10", "--top", "3",
                 "--correction", "none", single, nccl)[1], "compare with options")
        # HTML views = the files
        for view, cmd in (("report", ["report"]), ("flame", ["flame"]),
                          ("memory", ["memory"]), ("timeline", ["timeline"])):
            p = single if view == "timeline" else alex
            out = os.path.join(tmp, "v.html")
            cli(*(cmd + ["-o", out, p]))
            h = same("/view/%s?trace=%s" % (view, ids[p]), open(out, "rb").read(),
                     "view %s equals `gpuprof %s -o x.html`" % (view, cmd[0]))
            csp = h.get("content-security-policy", "")
            check(h.get("content-type", "").startswith("text/html") and "sha256-" in csp and
                  "default-src 'none'" in csp and "unsafe-inline" not in csp.split("style-src")[0]
                  and h.get("x-content-type-options") == "nosniff",
                  "view %s: CSP with script hashes, nosniff" % view)
            # again: the kept answer (made once when the page was kept) has the same
            # bytes and the same headers as the computed one
            st2, h2, b2 = s.get("/view/%s?trace=%s" % (view, ids[p]))
            sec = ("content-type", "content-security-policy", "x-content-type-options",
                   "cache-control", "referrer-policy", "x-frame-options", "content-length")
            check(st2 == 200 and b2 == open(out, "rb").read() and
                  all(h2.get(k) == h.get(k) for k in sec) and
                  "access-control-allow-origin" not in h2,
                  "view %s from the cache: same bytes and headers" % view)
            st3, h3, b3 = s.get("/view/%s?trace=%s" % (view, ids[p]), method="HEAD")
            check(st3 == 200 and b3 == b"" and h3.get("content-length") == h.get("content-length"),
                  "view %s: HEAD of a kept page has its length, no body" % view)
        if store:
            same("/api/runs", cli("runs", "--json", store)[1], "runs")
            same("/api/summary?trace=" + ids["%s:2" % store],
                 cli("summary", "--json", "%s:2" % store)[1], "summary of a store run")
        else:
            st, _, b = s.get("/api/runs")
            check(st == 404 and json.loads(b)["status"] == 404, "runs without a store: 404")
        # health and devices (same monitor configuration as the commands)
        same("/api/health", cli("health", "--json", env=env)[1], "health")
        # /api/devices and `devices --json` come from one writer. Two readings of
        # live figures differ by time, so these are set aside: the host backend's
        # sample, every sample's time, and a CPU OpenCL device's clock (PoCL
        # reads the current "cpu MHz" of /proc/cpuinfo where there is no cpufreq
        # maximum, and it moves with frequency scaling). Anything else must be
        # equal; a difference is printed, and the pair is read again up to three
        # times in case a device came or went between the two readings.
        def stable(d):
            for dev in d["devices"]:
                if dev["backend"] == "host":
                    dev["sample"] = None
                elif dev.get("sample"):
                    dev["sample"]["wall_ns"] = 0
                if dev["backend"] == "opencl" and dev.get("kind") == "cpu":
                    dev["max_clock_mhz"] = None
            return d

        def diff(a, b, path=""):
            if isinstance(a, dict) and isinstance(b, dict):
                out = []
                for k in sorted(set(a) | set(b)):
                    out += diff(a.get(k), b.get(k), path + "." + str(k))
                return out
            if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
                out = []
                for i, (x, y) in enumerate(zip(a, b)):
                    out += diff(x, y, "%s[%d]" % (path, i))
                return out
            return [] if a == b else ["%s: %r != %r" % (path or ".", a, b)]

        for attempt in range(3):
            st, _, b = s.get("/api/devices")
            want = stable(json.loads(cli("devices", "--json", env=env)[1]))
            got = stable(json.loads(b)) if st == 200 else None
            d = diff(got, want) if got is not None else ["status %d" % st]
            if not d:
                break
            print("note: /api/devices and devices --json differ (try %d): %s" %
                  (attempt + 1, "; ".join(d[:8])))
        check(not d, "devices (host load figures aside)")
        # traces are now loaded: 100 %, memory counted
        doc = json.loads(s.get("/api/traces")[2])
        t = {x["name"]: x for x in doc["traces"]}
        check(t[alex]["state"] == "ready" and t[alex]["percent"] == 100 and
              t[alex]["memory_bytes"] > 0, "a used trace is ready, 100 %, with its memory")
        # the cache answers again with the same bytes
        a = s.get("/api/profiler/hta?trace=" + ids[two])[2]
        b = s.get("/api/profiler/hta?trace=" + ids[two])[2]
        check(a == b == cli("analyze", "--json", two)[1], "repeated request: same bytes")
        # re-read when the file changes
        before = s.get("/api/summary?trace=" + ids[single])[2]
        time.sleep(1.1)
        shutil.copy(os.path.join(TRACES, "ns_resolution",
                                 "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"), single)
        after = s.get("/api/summary?trace=" + ids[single])[2]
        check(after != before and after == cli("summary", "--json", single)[1],
              "a changed file is read again")
        # errors
        # compile: the torch.compile view of one trace = `gpuprof compile --json TRACE`
        same("/api/profiler/compile?trace=" + ids[triton], cli("compile", "--json", triton)[1],
             "compile triton_example")
        doc = json.loads(s.get("/api/profiler/compile?trace=" + ids[triton])[2])
        check(len(doc["trace"]["regions"]) == 1, "compile: one compiled region in triton_example")
        st, h, b = s.get("/api/profiler/compile?trace=" + ids[two])
        e = json.loads(b)
        check(st == 400 and e["status"] == 400 and "one trace" in e["error"],
              "compile of a folder of ranks: 400 %d %r" % (st, e))
        for path, code in (("/api/summary", 400), ("/api/summary?trace=ffffffff", 404),
                           ("/api/summary?trace=%s&top=-1" % ids[alex], 400),
                           ("/api/summary?trace=%s&bogus=1" % ids[alex], 400),
                           ("/api/summary?trace=%s&category=nope" % ids[alex], 400),
                           ("/api/profiler/hta?trace=%s&compat=xyz" % ids[alex], 400),
                           ("/api/advise?trace=%s&only=nosuch" % ids[alex], 400),
                           ("/api/advise?trace=%s&set=small-gpu-op.max_us=-1" % ids[alex], 400),
                           ("/api/advise?trace=%s&set=small-gpu-op.nope=1" % ids[alex], 400),
                           ("/api/nothing", 404), ("/metrics", 404)):
            st, h, b = s.get(path)
            ok = st == code and h.get("content-type") == "application/json"
            try:
                ok = ok and json.loads(b)["status"] == code and json.loads(b)["error"]
            except ValueError:
                ok = False
            check(ok, "%s -> %d with a JSON error" % (path, code))
        # sessions: POST start/stop, GET list = `session list --json`
        if os.path.exists(fake):
            st, _, b = s.get("/api/sessions", method="POST",
                             body=json.dumps({"action": "start", "name": "web1",
                                              "description": "from the API"}),
                             headers={"Content-Type": "application/json"})
            check(st == 200 and json.loads(b)["name"] == "web1", "POST start a session")
            st, _, b = s.get("/api/sessions", method="POST",
                             body=json.dumps({"action": "start", "name": "web1"}),
                             headers={"Content-Type": "application/json"})
            check(st == 409, "starting a running session: 409")
            time.sleep(0.5)
            st, _, b = s.get("/api/sessions", method="POST",
                             body=json.dumps({"action": "snapshot", "name": "web1"}),
                             headers={"Content-Type": "application/json"})
            check(st == 200 and json.loads(b)["action"] == "snapshot" and
                  "snapshot requested" in json.loads(b)["message"],
                  "POST snapshot of a running session: %d %r" % (st, b[:120]))
            st, _, b = s.get("/api/sessions", method="POST",
                             body=json.dumps({"action": "stop", "name": "web1"}),
                             headers={"Content-Type": "application/json"})
            check(st == 200, "POST stop the session")
            st, _, b = s.get("/api/sessions", method="POST",
                             body=json.dumps({"action": "snapshot", "name": "web1"}),
                             headers={"Content-Type": "application/json"})
            check(st == 409, "POST snapshot of a stopped session: 409 (%d)" % st)
            same("/api/sessions", cli("session", "list", "--json", env=env)[1], "sessions list")
            # session show: GET /api/sessions?name=NAME = `session show NAME --json`
            rc, want = cli("session", "show", "web1", "--json", env=env)
            check(rc == 0 and want.startswith(b"{"), "session show web1 --json works")
            same("/api/sessions?name=web1", want, "session show")
            st, _, b = s.get("/api/sessions?name=nosuch")
            check(st == 404 and json.loads(b)["status"] == 404, "session show of no session: 404")
            st, _, b = s.get("/api/sessions?name=..%2Fx")
            check(st == 400, "session show of a bad name: 400")
            st, _, b = s.get("/api/sessions?name=web1&x=1")
            check(st == 400, "session show with an unknown parameter: 400")
            st, _, b = s.get("/api/sessions", method="POST",
                             body=json.dumps({"action": "start", "name": "../x"}),
                             headers={"Content-Type": "application/json"})
            check(st == 400, "a bad session name: 400")
        check(s.alive(), "the server is still up")
    finally:
        rc, err = s.stop()
    check(rc == 0, "SIGTERM stops the server with status 0 (%s)" % err.strip()[-200:])
    # --monitor: /api/devices comes from the running sampler's latest sample
    if os.path.exists(fake):
        m = Server(["--monitor", "--quiet"], env=dict(env, GPUPROF_MONITORING_INTERVAL_SECONDS="0.1"))
        try:
            for _ in range(50):  # the sampler's first sample
                d = json.loads(m.get("/api/devices")[2])
                if any(x["backend"] == "nvml" and x.get("sample") for x in d["devices"]):
                    break
                time.sleep(0.1)
            walls = []
            for _ in range(2):
                st, _, b = m.get("/api/devices")
                d = json.loads(b)
                gpu = [x for x in d["devices"] if x["backend"] == "nvml"]
                walls.append(gpu[0]["sample"]["wall_ns"] if gpu and gpu[0]["sample"] else None)
                time.sleep(0.6)
            want = json.loads(cli("devices", "--json", env=env)[1])

            def shape(doc):  # the fake GPUs change over ticks (scenario): compare the layout
                return [(x["index"], x["backend"], x["name"], x["uuid"])
                        for x in doc["devices"]], sorted(doc)
            check(st == 200 and walls[0] and walls[1] and walls[1] > walls[0] and
                  shape(d) == shape(want),
                  "--monitor: devices from the sampler, samples move on (%s), same layout as "
                  "`devices --json`" % walls)
            # /metrics: the sampler's Prometheus exposition (docs/fleet.md); as many GPUs
            # as /api/devices lists present
            ngpu = sum(1 for x in d["devices"] if x["backend"] == "nvml" and x.get("sample"))
            st, h, b = m.get("/metrics")
            text = b.decode()
            check(st == 200 and h.get("content-type", "").startswith("text/plain; version=0.0.4")
                  and "# TYPE gpu_device_count gauge" in text and
                  re.search(r"^gpu_device_count %d$" % ngpu, text, re.M) and
                  re.search(r'^gpuprof_gpu_temperature_celsius\{[^}]*uuid="GPU-', text, re.M),
                  "--monitor: GET /metrics is the exposition (%d, %r)" % (st, text[:200]))
            # gzip when asked (Prometheus asks): the same exposition, compressed
            import gzip
            st, h, z = m.get("/metrics", headers={"Accept-Encoding": "gzip"})
            try:
                zt = gzip.decompress(z).decode()
            except (OSError, EOFError):
                zt = ""
            check(st == 200 and h.get("content-encoding") == "gzip" and
                  "accept-encoding" in h.get("vary", "").lower() and
                  re.search(r"^gpu_device_count %d$" % ngpu, zt, re.M) and len(z) < len(b) / 3,
                  "--monitor: GET /metrics in gzip when asked (%d of %d bytes)" % (len(z), len(b)))
            promtool = shutil.which("promtool")
            if promtool:
                r = subprocess.run([promtool, "check", "metrics"], input=b, capture_output=True)
                # the seed's names fail promtool's lint by design (docs/fleet.md); nothing else may
                bad = [l for l in (r.stdout + r.stderr).decode().splitlines()
                       if l.strip() and not re.match(r"^(gpu_device_count|gpu_inference_time_ms|"
                                                     r"gpu_total_memory_mb|gpu_total_memory_used_mb)",
                                                     l.strip())]
                check(not bad, "promtool check metrics on serve's /metrics: %r" % bad[:5])
            # a session started through the API counts in this process's
            # gpu_profiling_sessions_total
            def sessions_total():
                t = m.get("/metrics")[2].decode()
                v = re.search(r"^gpu_profiling_sessions_total (\S+)$", t, re.M)
                return float(v.group(1)) if v else None
            n0 = sessions_total()
            st, _, b = m.get("/api/sessions", method="POST",
                             body=json.dumps({"action": "start", "name": "mon1"}),
                             headers={"Content-Type": "application/json"})
            n1 = None
            for _ in range(50):  # the exposition is rendered again on the next look
                n1 = sessions_total()
                if n1 == (n0 or 0) + 1:
                    break
                time.sleep(0.1)
            check(st == 200 and n0 == 0 and n1 == 1,
                  "--monitor: a session started by POST counts in gpu_profiling_sessions_total "
                  "(%s -> %s)" % (n0, n1))
            m.get("/api/sessions", method="POST",
                  body=json.dumps({"action": "stop", "name": "mon1"}),
                  headers={"Content-Type": "application/json"})
        finally:
            m.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    print("t_serve_api: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
