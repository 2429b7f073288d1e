#!/usr/bin/env python3
"""gpuprof serve in a real browser: headless Chromium driven over the
DevTools protocol (tests/serve_cdp.js, no npm package) opens the dashboard
with a bearer token in the address (#token=...), clicks into a trace, and the
figures the page shows (slices, traced span, bottleneck names and totals)
must equal /api/summary's for that trace; the report view opens through the
dashboard's link (authorized by its cookie) and renders; the console stays
silent (no error, no CSP violation, no exception). Exit 77 when Chromium,
node or the shared traces are missing."""
import json, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import BIN, Server  # noqa: E402
from gp_testutil import SRC, TRACES, check, failures, set_verbose  # noqa: E402

set_verbose()

TOKEN = "br0wser-t0ken-0123456789abcdef"


def which(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def main():
    chrome = which("chromium", "chromium-browser", "google-chrome")
    node = which("node", "nodejs")
    if not chrome or not node:
        print("SKIP: chromium or node not installed (scripts/install-deps.sh installs both)")
        return 77
    if subprocess.run([node, "--experimental-websocket", "-e",
                       "process.exit(typeof WebSocket==='function'?0:1)"]).returncode:
        print("SKIP: this node has no built-in WebSocket (needs node >= 20)")
        return 77
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode != 0:
        print("SKIP: this gpuprof has no serve command")
        return 77
    if not os.path.isdir(TRACES):
        print("SKIP: shared traces not found at %s" % TRACES)
        return 77
    tmp = tempfile.mkdtemp(prefix="gp_serve_browser_")
    tok = os.path.join(tmp, "tokens")
    with open(tok, "w") as f:
        f.write(TOKEN + " read\n")
    os.chmod(tok, 0o600)
    alex = os.path.join(TRACES, "alexnet")
    other = os.path.join(TRACES, "triton_example", "triton_example.json.gz")
    env = dict(os.environ, GPUPROF_NVML_LIB="/nonexistent", GPUPROF_NVIDIA_SMI="/nonexistent")
    s = Server([alex, other, "--token-file", tok, "--quiet"], env=env)
    try:
        auth = {"Authorization": "Bearer " + TOKEN}
        ids = {t["name"]: t["id"] for t in json.loads(s.get("/api/traces", headers=auth)[2])["traces"]}
        tid = ids[alex]
        r = subprocess.run([node, "--experimental-websocket", os.path.join(SRC, "tests", "serve_cdp.js"),
                            chrome, "http://127.0.0.1:%d" % s.port, tid, TOKEN],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, "serve_cdp.js ran (%s)" % r.stderr.strip()[-400:])
        page = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else {}
        st, _, b = s.get("/api/summary?trace=%s&top=5" % tid, headers=auth)
        api = json.loads(b)["traces"][0]
        check(page.get("traces") == 2, "the dashboard lists the 2 traces")
        check(page.get("figures") == {"slices": api["slices"], "span_ns": api["span_ns"]},
              "figures on the page equal /api/summary's (%s vs slices %d, span %d)"
              % (page.get("figures"), api["slices"], api["span_ns"]))
        want = [{"name": x["name"], "total_ns": x["total_ns"]} for x in api["bottlenecks"]]
        check(page.get("bottlenecks") == want and len(want) > 0,
              "bottleneck names and totals on the page equal the API's (%d rows)" % len(want))
        check(sorted(page.get("views") or []) == sorted(
            "/view/%s?trace=%s" % (v, tid) for v in ("report", "flame", "timeline", "memory")),
            "the trace links to its four views")
        check(bool(page.get("reportReady")) and "gpuprof" in (page.get("reportTitle") or ""),
              "the report view renders (title %r)" % page.get("reportTitle"))
        check(page.get("devices", 0) >= 1, "the devices panel lists the host")
        check(page.get("console") == [], "the console stays silent: %s" % page.get("console"))
    finally:
        s.stop()
    # the live panel: --monitor with the NVML stand-in, and a store's runs
    build = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))
    fake = os.path.join(build, "tests", "libfake_nvml.so")
    if os.path.exists(fake):
        db = os.path.join(tmp, "runs.db")
        for _ in range(2):
            subprocess.run([BIN, "run", "-q", "--no-summary", "-o", db, "--", "true"],
                           capture_output=True, timeout=60)
        env = dict(os.environ, GPUPROF_NVML_LIB=fake, GPUPROF_NVIDIA_SMI="/nonexistent",
                   FAKE_NVML_SCENARIO=os.path.join(SRC, "tests", "data", "monitor",
                                                   "nvml_basic.scn"),
                   GPUPROF_MONITORING_INTERVAL_SECONDS="0.5", GPUPROF_OUTPUT_DIR=tmp)
        s = Server([other, "--monitor", "--store", db, "--quiet"], env=env)
        try:
            r = subprocess.run([node, "--experimental-websocket",
                                os.path.join(SRC, "tests", "serve_cdp_live.js"), chrome,
                                "http://127.0.0.1:%d" % s.port],
                               capture_output=True, text=True, timeout=300)
            check(r.returncode == 0, "serve_cdp_live.js ran (%s)" % r.stderr.strip()[-400:])
            page = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else {}
            api = json.loads(s.get("/api/devices")[2])
            want = [[d["index"], d["backend"], d["name"]] for d in api["devices"]]
            got = [x[:3] for x in page.get("devicesAfter") or []]
            check(got == want and any(b == "nvml" for _, b, _ in got),
                  "--monitor: the devices panel lists /api/devices' devices (GPUs of the "
                  "stand-in): %s" % got)
            nv = [x for x in page.get("devicesAfter") or [] if x[1] == "nvml"]
            # the stand-in's GPU 1 is lost after two samples: its row says N/A
            lost = {d["index"] for d in api["devices"] if d["backend"] == "nvml" and not d["sample"]}
            check(nv and any(x[3] != "N/A" and float(x[3]) >= 0 for x in nv) and
                  all(x[3] == "N/A" for x in nv if x[0] in lost),
                  "--monitor: GPU utilization shown (N/A for a lost GPU): %s" % nv)
            check(page.get("refreshed") is True, "--monitor: the panel is polled (re-rendered)")
            runs = [x["id"] for x in json.loads(s.get("/api/runs")[2])["runs"]]
            check(page.get("runs") == runs and len(runs) == 2,
                  "the runs panel lists the store's runs %s" % page.get("runs"))
            check(page.get("console") == [], "live page: the console stays silent: %s"
                  % page.get("console"))
        finally:
            s.stop()
    else:
        print("note: no NVML stand-in built; the live devices panel is not checked")
    shutil.rmtree(tmp, ignore_errors=True)
    print("t_serve_browser: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
