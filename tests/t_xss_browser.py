#!/usr/bin/env python3
"""Stored-XSS test of every HTML page gpuprof writes (issue 16).

A Kineto-style trace is generated whose every name field (process, thread,
CPU op, runtime call, kernel, copy, annotation, device name, the file name
itself) carries one of the payloads of tests/data/xss_payloads.txt. The
flame graph (from the trace, with and without a payload search in the URL,
and from folded stacks), the timeline (full and aggregated), the memory page
and the report are opened in headless Chromium driven over the DevTools
protocol (tests/xss_cdp.js): a real mouse move over and a click on every
interactive element, a grid of hovers over canvases, a payload typed into
every text input. A payload that runs sets window.__xss (alert and friends
are hooked to do the same); the DOM is also searched for injected elements
and on* attributes. The payloads must reach the page as text (checked: they
show up in tooltips and the page text), so the test cannot pass by losing
the names. A deliberately vulnerable control page must be detected.
Exit 77 when Chromium or node is missing."""
import json, os, re, shutil, subprocess, sys, tempfile
from gp_testutil import BIN, SRC, check, failures


def which(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def payloads():
    with open(os.path.join(SRC, "tests", "data", "xss_payloads.txt"), encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def make_trace(pl):
    """One step per payload: a CPU op on a thread named by a payload, a user
    annotation, a launch (runtime call) with a kernel, a copy, and memory
    allocations under the op (so leak tables show op names)."""
    t0 = 1700000000000000.0
    ev = [{"name": "process_name", "ph": "M", "ts": t0, "pid": 100, "tid": 0, "args": {"name": pl[0]}},
          {"name": "thread_name", "ph": "M", "ts": t0, "pid": 100, "tid": 101, "args": {"name": pl[1]}},
          {"name": "thread_name", "ph": "M", "ts": t0, "pid": 100, "tid": 102, "args": {"name": pl[2]}},
          {"name": "process_name", "ph": "M", "ts": t0, "pid": 0, "tid": 0, "args": {"name": pl[3]}},
          {"name": "thread_name", "ph": "M", "ts": t0, "pid": 0, "tid": 7, "args": {"name": pl[4]}}]
    ts, alloc = t0 + 10, 0
    for i, p in enumerate(pl):
        tid = 101 + (i % 2)
        corr = 1000 + i
        ev.append({"ph": "X", "cat": "user_annotation", "name": p, "pid": 100, "tid": tid, "ts": ts,
                   "dur": 120.0, "args": {"External id": 5000 + i}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": p, "pid": 100, "tid": tid, "ts": ts + 1,
                   "dur": 100.0, "args": {"External id": i + 1, "Input Dims": [[4, 4]],
                                          "Input type": [p]}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": p if i % 3 else "cudaLaunchKernel",
                   "pid": 100, "tid": tid, "ts": ts + 5, "dur": 10.0,
                   "args": {"External id": i + 1, "correlation": corr, "cbid": 211}})
        ev.append({"ph": "X", "cat": "kernel", "name": p, "pid": 0, "tid": 7, "ts": ts + 20, "dur": 60.0,
                   "args": {"External id": i + 1, "device": 0, "stream": 7, "correlation": corr,
                            "grid": [1, 1, 1], "block": [32, 1, 1]}})
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy " + p, "pid": 0, "tid": 7,
                   "ts": ts + 85, "dur": 10.0,
                   "args": {"device": 0, "stream": 7, "correlation": corr + 100000, "bytes": 4096}})
        alloc += 1 << 20
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 100,
                   "tid": tid, "ts": ts + 2,
                   "args": {"Device Type": 1, "Device Id": 0, "Addr": 0x7f0000000000 + i * (1 << 20),
                            "Bytes": 1 << 20, "Total Allocated": alloc, "Total Reserved": 1 << 30}})
        ts += 130
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": pl[5]}],
            "distributedInfo": {"backend": pl[6], "rank": 0, "world_size": 1}, "traceEvents": ev}


def gp(*args):
    r = subprocess.run([BIN] + list(args), capture_output=True, text=True)
    check(r.returncode == 0, "gpuprof %s: rc %d %s" % (" ".join(args[:1]), r.returncode, r.stderr.strip()))
    return r.stdout


def main():
    chrome = which("chromium", "chromium-browser", "google-chrome")
    node = which("node", "nodejs")
    if not chrome or not node:
        print("SKIP: chromium or node not installed (scripts/install-deps.sh installs both)")
        sys.exit(77)
    r = subprocess.run([node, "--experimental-websocket", "-e", "process.exit(typeof WebSocket==='function'?0:1)"])
    if r.returncode:
        print("SKIP: this node has no built-in WebSocket (needs node >= 20)")
        sys.exit(77)
    pl = payloads()
    check(len(pl) >= 40, "payload corpus has %d entries" % len(pl))
    tmp = tempfile.mkdtemp(prefix="gp_xss_")
    # the file name carries a payload too (it becomes the page title)
    trace = os.path.join(tmp, "<img src=x onerror=window.__xss=1>.json")
    with open(trace, "w") as f:
        json.dump(make_trace(pl), f)
    pages = []
    def page(name, *args, frag=""):
        out = os.path.join(tmp, name + ".html")
        gp(*args, "-o", out)
        pages.append(out + frag)
    page("flame", "flame", trace)
    pages.append(pages[-1] + "#search=" + "%3Cimg%20src%3Dx%20onerror%3Dwindow.__xss%3D1%3E")
    folded = os.path.join(tmp, "x.folded")
    gp("flame", trace, "-o", folded)
    page("flame_folded", "flame", folded)
    page("timeline", "timeline", trace)
    page("timeline_agg", "timeline", trace, "--max-slices", "150")
    page("memory", "memory", trace)
    page("report", "report", trace)
    # the torch.compile page of a log whose function name, restart reason and
    # recompile reason carry payloads
    fixture = os.path.join(SRC, "tests", "data", "torch_trace_small.log")
    if os.path.exists(fixture):
        X = "<img src=x onerror=window.__xss=1><script>window.__xss=1</script>"
        with open(fixture) as f:
            text = f.read()
        text = text.replace('"co_name": "step"', '"co_name": %s' % json.dumps("step" + X))
        text = text.replace("generic_jump TensorVariable()", "generic_jump " + X)
        text = text.replace("size mismatch", "size mismatch " + X)
        log = os.path.join(tmp, "hostile_compile.log")
        with open(log, "w") as f:
            f.write(text)
        page("compile", "compile", log)
    # the pages `gpuprof serve` renders: the dashboard (trace names, run
    # command lines, bottleneck names after a click on "Summary") and the
    # views of a trace and of a recorded run
    server, ids = None, []
    r = subprocess.run([BIN, "serve", "--help"], capture_output=True)
    if r.returncode == 0:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from serve_util import Server
        db = os.path.join(tmp, "runs.db")
        gp("run", "-q", "--no-summary", "--no-cuda", "--no-opencl", "-o", db, "--", "/bin/echo", *pl[:8])
        server = Server(["--quiet", "--store", db, trace])
        base = "http://127.0.0.1:%d" % server.port
        st, _, b = server.get("/api/traces")
        kinds = {t["kind"]: t["id"] for t in json.loads(b)["traces"]}
        check(sorted(kinds) == ["file", "store-run"], "serve lists the trace and the run: %r" % kinds)
        ids = [kinds.get("file"), kinds.get("store-run")]
        pages.append(base + "/")
        for v in ("report", "flame", "timeline", "memory"):  # the run has no events: not viewed
            pages.append("%s/view/%s?trace=%s" % (base, v, ids[0]))
    else:
        print("note: this build has no serve; the dashboard is not checked")
    # statically: trace data sits only in JSON data blocks, which cannot be
    # left early (no "</", "<!--"), carry no raw U+2028/U+2029 and parse
    for pg in pages:
        if pg.startswith("http"):
            continue
        with open(pg.split("#")[0], encoding="utf-8") as f:
            html = f.read()
        # script elements as an HTML parser splits them: from a start tag to
        # the first "</script" (a payload ending one early leaves a JSON
        # block that does not parse, or markup in a code block)
        blocks, code, pos = [], [], 0
        low = html.lower()
        while True:
            i = low.find("<script", pos)
            if i < 0:
                break
            gt = html.index(">", i)
            end = low.find("</script", gt)
            (blocks if 'type="application/json"' in html[i:gt] else code).append(html[gt + 1:end])
            pos = end + 8
        name = os.path.basename(pg)
        check(blocks and all("<!--" not in b and "</" not in b and "\u2028" not in b and "\u2029" not in b
                             for b in blocks), "%s: JSON blocks escape </, <!-- and U+2028/2029" % name)
        for b in blocks:
            try:
                json.loads(b)
            except ValueError as e:
                check(False, "%s: a JSON block does not parse: %s" % (name, e))
        check(not any("__xss" in c for c in code), "%s: no payload inside a code <script>" % name)
        check("\\u2028" in html or name.startswith(("compile", "memory")), "%s: the U+2028 payload is in the page (escaped)" % name)
    # the control: a page that puts a hovered element's data-t into innerHTML
    ctl = os.path.join(tmp, "control.html")
    with open(ctl, "w") as f:
        f.write('<!DOCTYPE html><html><body><div id="tip" class="tip"></div><svg width="400" height="200">'
                '<rect x="10" y="10" width="300" height="150" fill="red" data-t="&lt;img src=x '
                'onerror=window.__xss=1&gt;"/></svg><script>document.querySelector("svg").addEventListener('
                '"mousemove",function(e){var t=e.target.getAttribute("data-t");if(t)document.getElementById('
                '"tip").innerHTML=t;});document.body.setAttribute("data-ready","1");</script></body></html>')
    try:
        r = subprocess.run([node, "--experimental-websocket", os.path.join(SRC, "tests", "xss_cdp.js"), chrome, ctl]
                           + pages, capture_output=True, text=True, timeout=1500)
    finally:
        if server:
            server.stop()
    check(r.returncode == 0, "xss_cdp.js failed: %s" % r.stderr.strip()[-500:])
    res = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    check(len(res) == len(pages) + 1, "results for %d of %d pages" % (len(res), len(pages) + 1))
    for x in res:
        name = os.path.basename(x["page"])
        if x["page"].startswith("http"):
            name = "serve:" + (x["page"].split("/", 3)[3] or "dashboard")
        print("%s: %d elements, %d hovers, %d clicks, payload in tip %d times, xss=%s, injected=%d %s" % (
            name, x["n"], x["hovers"], x["clicks"], x["tipPayload"], x["xss"], x["injected"],
            x["injectedSample"]))
        if x["page"] == ctl:
            check(x["xss"] or x["injected"], "the control page's injected script was not detected")
            continue
        check(x["ready"], "%s: page script did not finish" % name)
        check(x["xss"] == 0, "%s: a payload ran (window.__xss=%s)" % (name, x["xss"]))
        check(x["injected"] == 0, "%s: injected elements/attributes %s" % (name, x["injectedSample"]))
        check(x["exceptions"] == 0, "%s: %d script exceptions" % (name, x["exceptions"]))
        check(x["hovers"] >= 3 and x["clicks"] >= 3, "%s: too few interactions" % name)
        check(x["textPayload"], "%s: the payloads do not appear as text" % name)
        # the dashboard has no tooltips; the compile page's tooltips name
        # phases, not the (hostile) functions
        no_tip = "memory" in name or name in ("serve:dashboard", "compile.html")
        if not no_tip:
            check(x["tipPayload"] > 0, "%s: no tooltip showed a payload as text" % name)
    shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        sys.exit(1)
    print("ok")


main()
