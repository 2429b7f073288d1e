#!/usr/bin/env python3
"""--redact: sanitization for sharing (issue 16).

A trace whose process, thread and range names and file name carry a user
name, home folders, the host name, file paths, environment values and
secrets is written by `gpuprof export`, `report`, `timeline` (JSON and
HTML), `flame` and `memory` with --redact: none of these may survive, while
kernel and operator names stay. The redacted export must analyze to the
same figures as the plain export (`gpuprof summary --json`: every number of
every category and operator, `gpuprof memory --json` peaks). --redact-keep
keeps what it names; the config default (GPUPROF_REDACT) applies and
--no-redact overrides it; an unknown category is an error (exit 2)."""
import json, os, re, socket, subprocess, sys, tempfile, time
from gp_testutil import BIN, SRC, check, failures

USER = "alicexq"
HOST = socket.gethostname().split(".")[0]
SECRET = "hf_Zq9redactshareABCDEFGHIJKLMNOP"


def gp(args, env, rc=0):
    r = subprocess.run([BIN] + args, capture_output=True, text=True, env=env)
    if rc is not None:
        check(r.returncode == rc, "gpuprof %s: rc %d want %d: %s" % (" ".join(args[:2]), r.returncode, rc,
                                                                    r.stderr.strip()[:300]))
    return r


def leaks(text):
    """The sensitive strings found in text."""
    found = []
    for w in (USER, HOST):
        if re.search(r"(?<![A-Za-z0-9_.-])%s(?![A-Za-z0-9_.-])" % re.escape(w), text):
            found.append(w)
    for s in ("/home/", "/Users/", "set1.bin", "epoch7.pt", SECRET, "s3cretvalue", "projx/train.py", "Users\\",
              "win.py"):
        if s in text:
            found.append(s)
    return found


def figures(summary_json):
    t = json.loads(summary_json)["traces"][0]
    cats = sorted((c["category"], c["count"], c["total_ns"]) for c in t["categories"])
    ops = sorted((c["category"], o["count"], o["total_ns"], o["min_ns"], o["max_ns"], o["p50_ns"])
                 for c in t["categories"] for o in c["ops"])
    return t["span_ns"], t["slices"], cats, ops


def serve_redact(tmp, path, env):
    """gpuprof serve --redact: the trace list, the API bodies and the pages
    carry nothing sensitive and the same figures as without --redact; the
    runs of a store lose the user's paths in their command line."""
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode:
        print("note: this build has no serve; serve --redact is not checked")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from serve_util import Server
    db = os.path.join(tmp, "runs.db")
    gp(["run", "-q", "--no-summary", "--no-cuda", "--no-opencl", "-o", db, "--", "/bin/echo",
        "/home/%s/data/set1.bin" % USER, "HF_TOKEN=" + SECRET], env)
    bodies = {}
    for red in (False, True, "config"):  # plain, --redact, the configuration's default
        s = Server(["--quiet", "--store", db, path] + (["--redact"] if red is True else []),
                   env=dict(env, GPUPROF_REDACT="true") if red == "config" else env)
        try:
            st, _, b = s.get("/api/traces")
            traces = json.loads(b)["traces"]
            tid = [t["id"] for t in traces if t["kind"] == "file"][0]
            got = {"traces": b.decode()}
            for u in ("/api/runs", "/api/summary?trace=%s" % tid, "/api/profiler/timeline?trace=%s" % tid,
                      "/view/report?trace=%s" % tid, "/view/flame?trace=%s" % tid,
                      "/view/timeline?trace=%s" % tid, "/view/memory?trace=%s" % tid):
                st, _, b = s.get(u)
                check(st == 200, "serve%s %s: status %d" % (" --redact" if red else "", u, st))
                got[u.split("?")[0]] = b.decode("utf-8", "replace")
        finally:
            s.stop()
        bodies[red] = got
    check(leaks(bodies[False]["/api/profiler/timeline"]), "plain serve shows the sensitive strings (meaningful)")
    for red in (True, "config"):
        for u, text in bodies[red].items():
            check(not leaks(text), "serve (redact: %s) %s still shows %s" % (red, u, leaks(text)))
    # the Prometheus exposition of serve --monitor --redact names no host
    fake = os.path.join(os.environ.get("GPUPROF_BUILD_DIR", "build"), "tests", "libfake_nvml.so")
    if os.path.exists(fake):
        menv = dict(env, GPUPROF_NVML_LIB=fake, GPUPROF_NVIDIA_SMI="/nonexistent/nvidia-smi",
                    FAKE_NVML_SCENARIO=os.path.join(SRC, "tests", "data", "monitor", "nvml_basic.scn"))
        s = Server(["--quiet", "--monitor", "--redact"], env=menv)
        try:
            text = ""
            for _ in range(100):
                st, _, b = s.get("/metrics")
                text = b.decode()
                if st == 200 and "hostname=" in text:
                    break
                time.sleep(0.1)
            check('hostname="<host>"' in text and not leaks(text), "serve --monitor --redact: /metrics "
                  "hostname label redacted (%s)" % leaks(text))
        finally:
            s.stop()
    a = figures(bodies[False]["/api/summary"])
    b = figures(bodies[True]["/api/summary"])
    check(a == b, "serve --redact: other figures\n%r\n%r" % (a, b))


def main():
    tmp = tempfile.mkdtemp(prefix="gp_redact_")
    home = "/home/%s/projx" % USER
    with open(os.path.join(SRC, "tests", "data", "small_kineto.json")) as f:
        tr = json.load(f)
    for e in tr["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name" and e.get("pid") != 0:
            e["args"]["name"] = "python3 %s/train.py --data /home/%s/data/set1.bin HF_TOKEN=%s on %s" % (
                home, USER, SECRET, HOST)
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            e["args"]["name"] = "worker of %s at %s, C:\\Users\\%s\\projx\\win.py" % (USER, HOST, USER)
        if e.get("cat") == "user_annotation":
            e["name"] = "save %s/ckpt/epoch7.pt DB_PASSWORD=s3cretvalue" % home
        if e.get("cat") == "cpu_op":  # args: shapes stay, free text is sanitized
            e["args"]["Input Dims"] = [[4, 128, 7], [], [1024]]
            e["args"]["Input type"] = ["float", "", "c10::BFloat16"]
            e["args"]["Call stack"] = "%s/train.py(12): forward;/home/%s/x.py(3): f" % (home, USER)
    path = os.path.join(tmp, "%s_%s_trace.json" % (USER, HOST))
    with open(path, "w") as f:
        json.dump(tr, f)
    env = dict(os.environ, USER=USER)
    for k in ("GPUPROF_CONFIG", "GPUPROF_REDACT", "GPUPROF_REDACT_KEEP"):
        env.pop(k, None)
    plain = os.path.join(tmp, "plain.json")
    gp(["export", path, "-o", plain], env)
    check(leaks(open(plain).read()), "the plain export carries the sensitive strings (test is meaningful)")
    red = os.path.join(tmp, "red.json")
    gp(["export", "--redact", path, "-o", red], env)
    outs = {"export": open(red).read()}
    for name, args in (("report", ["report", "--redact", path, "-o"]),
                       ("timeline.html", ["timeline", "--redact", path, "-o"]),
                       ("timeline.json", ["timeline", "--redact", path, "-o"]),
                       ("flame", ["flame", "--redact", path, "-o"]),
                       ("memory", ["memory", "--redact", path, "-o"])):
        out = os.path.join(tmp, name if "." in name else name + ".html")
        gp(args + [out], env)
        outs[name] = open(out).read()
    folded = os.path.join(tmp, "plain.folded")
    gp(["flame", plain, "-o", folded], env)
    out = os.path.join(tmp, "flame_folded.html")
    gp(["flame", "--redact", folded, "-o", out], env)
    outs["flame from folded"] = open(out).read()
    for name, text in outs.items():
        check(not leaks(text), "%s --redact still shows %s" % (name, leaks(text)))
        check("ampere_sgemm_128x64_tn" in text or name == "memory", "%s: kernel names kept" % name)
    check("<path:" in outs["export"] and "<user>" in outs["export"] and "<host>" in outs["export"],
          "replacements visible in the export")
    check("DB_PASSWORD=<redacted>" in outs["export"], "env value redacted")
    # args: shapes and types stay byte for byte, paths in them go
    def cpu_args(doc):
        return [e["args"] for e in doc["traceEvents"] if e.get("cat") == "cpu_op"]
    pa, ra = cpu_args(json.loads(open(plain).read())), cpu_args(json.loads(outs["export"]))
    check(len(pa) == len(ra) and len(pa) > 0 and all(
        a.get("Input Dims") == b.get("Input Dims") == [[4, 128, 7], [], [1024]] and a.get("Input type") == b.get("Input type")
        and a.get("External id") == b.get("External id") for a, b in zip(pa, ra)),
          "--redact keeps the args' shapes, types and ids")
    check(ra and all("Call stack" in b and "<path:" in b["Call stack"] for b in ra),
          "--redact sanitizes the args' free text: %r" % (ra[:1],))
    serve_redact(tmp, path, env)
    # same figures
    a = figures(gp(["summary", "--json", plain], env).stdout)
    b = figures(gp(["summary", "--json", red], env).stdout)
    check(a == b, "redacted export analyzes to other figures:\n%r\n%r" % (a, b))
    ma = json.loads(gp(["memory", "--json", plain], env).stdout)["traces"][0]["devices"]
    mb = json.loads(gp(["memory", "--json", red], env).stdout)["traces"][0]["devices"]
    check([d["peak_allocated_bytes"] for d in ma] == [d["peak_allocated_bytes"] for d in mb], "memory peaks")
    # allow list, config default, override, bad list
    keep = os.path.join(tmp, "keep.json")
    gp(["export", "--redact-keep", "host,user", path, "-o", keep], env)
    k = open(keep).read()
    check(HOST in k and USER in k and "/home/" not in k and SECRET not in k, "--redact-keep host,user")
    cfg = os.path.join(tmp, "cfg.json")
    gp(["export", path, "-o", cfg], dict(env, GPUPROF_REDACT="true"))
    check(not leaks(open(cfg).read()), "config default redact applies")
    gp(["export", "--no-redact", path, "-o", cfg], dict(env, GPUPROF_REDACT="true"))
    check(leaks(open(cfg).read()), "--no-redact overrides the config")
    r = gp(["export", "--redact-keep", "nope", path, "-o", cfg], env, rc=2)
    check("unknown category" in r.stderr, "bad --redact-keep: %r" % r.stderr)
    if failures:
        sys.exit(1)
    print("ok")


main()
