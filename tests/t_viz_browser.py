#!/usr/bin/env python3
"""Opens every kind of HTML page gpuprof writes (flame graph from a trace and
from folded stacks, timeline, aggregated timeline, memory, report) in
headless Chromium and checks the rendered DOM for the expected elements and
figures, and that the page logged nothing to the console (errors included).
A deliberately broken page checks that console errors are caught.
Exit 77 when Chromium is not installed."""
import html, json, os, re, shutil, subprocess, sys, tempfile
from decimal import Decimal
from gp_testutil import BIN, SRC, TRACES, check, failures


def find_chromium():
    for n in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        p = shutil.which(n)
        if p:
            return p
    return None


def browse(chrome, path, frag=""):
    """Returns (dom, console lines) of the page after its scripts ran."""
    prof = tempfile.mkdtemp(prefix="gp_chrome_")
    cmd = [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--user-data-dir=" + prof, "--enable-logging=stderr", "--v=0", "--window-size=1400,1000",
           "--virtual-time-budget=5000", "--dump-dom", "file://" + os.path.abspath(path) + frag]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    shutil.rmtree(prof, ignore_errors=True)
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    return r.stdout, console


def text_of(dom, elem_id):
    m = re.search(r'id="%s"[^>]*>([^<]*)<' % re.escape(elem_id), dom)
    return m.group(1) if m else None


def fmt_dur(ns):  # gp_fmt_dur_auto
    a = abs(ns)
    if a < 1e4:
        return "%d ns" % ns
    if a < 1e7:
        return "%.3f us" % (ns / 1e3)
    if a < 1e10:
        return "%.3f ms" % (ns / 1e6)
    return "%.3f s" % (ns / 1e9)


def union_ns(iv):
    iv.sort()
    tot, cur = 0, None
    for s, e in iv:
        if cur is None or s > cur[1]:
            if cur:
                tot += cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    return tot + (cur[1] - cur[0] if cur else 0)


def gpu_active(trace_json):
    with open(trace_json) as f:
        ev = json.load(f, parse_float=Decimal)["traceEvents"]
    iv = [(int(e["ts"] * 1000), int((e["ts"] + e["dur"]) * 1000)) for e in ev
          if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e["dur"] > 0]
    return union_ns(iv)


def gp(*args):
    r = subprocess.run([BIN] + list(args), capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("gpuprof %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def main():
    chrome = find_chromium()
    if not chrome:
        print("SKIP: chromium not installed (scripts/install-deps.sh installs it)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="gp_browser_")
    # the detector itself: a page with a console error must be flagged
    bad = os.path.join(tmp, "bad.html")
    with open(bad, "w") as f:
        f.write("<!DOCTYPE html><html><body><script>null.x;</script></body></html>")
    _, con = browse(chrome, bad)
    check(any("Uncaught" in l for l in con), "console errors are detected: %r" % con)

    gen = os.path.join(tmp, "train.json")  # plain JSON: the test reads it too
    subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gen_trace.py"), gen, "--steps", "6"],
                   check=True)
    pages = {}
    pages["flame"] = os.path.join(tmp, "flame.html")
    gp("flame", gen, "-o", pages["flame"])
    folded = os.path.join(tmp, "x.folded")
    gp("flame", gen, "-o", folded)
    pages["flame_folded"] = os.path.join(tmp, "flame_folded.html")
    gp("flame", folded, "-o", pages["flame_folded"])
    pages["timeline"] = os.path.join(tmp, "timeline.html")
    gp("timeline", gen, "-o", pages["timeline"])
    pages["timeline_agg"] = os.path.join(tmp, "timeline_agg.html")
    gp("timeline", gen, "-o", pages["timeline_agg"], "--max-slices", "300")
    pages["memory"] = os.path.join(tmp, "memory.html")
    gp("memory", gen, "-o", pages["memory"])
    inputs = [gen]
    real = os.path.join(TRACES, "nccl_data", "nccl_data.json.gz")
    if os.path.exists(real):
        inputs.append(real)
    pages["report"] = os.path.join(tmp, "report.html")
    gp("report", *inputs, "-o", pages["report"])

    for name, path in sorted(pages.items()):
        frag = "#search=sgemm" if name == "flame" else ""
        dom, con = browse(chrome, path, frag)
        check(not con, "%s: console output %r" % (name, con[:3]))
        check('data-ready="1"' in dom, "%s: page script did not finish" % name)
        check("http://" not in open(path).read().replace("http://www.w3.org/2000/svg", ""),
              "%s: refers to the network" % name)
        if name.startswith("flame"):
            n = len(re.findall(r'<g class="f" data-i="\d+">', dom))
            check(n > 10, "%s: %d frames drawn" % (name, n))
            check(text_of(dom, "fg-shown") == str(n), "%s: frames-drawn figure" % name)
        if name == "flame":
            m = text_of(dom, "fg-matched") or ""
            check(m.startswith("Matched") and "ampere_sgemm" not in m, "search figure: %r" % m)
            check("#e040fb" in dom, "search highlights frames")
            check("cudaLaunchKernel" in dom, "launch frames drawn")
        if name.startswith("timeline"):
            check("<canvas" in dom and text_of(dom, "tl-cpu") not in (None, "N/A"), "%s: figures" % name)
            want = fmt_dur(gpu_active(gen))
            check(text_of(dom, "tl-gpu") == want, "%s: GPU active %r != independent %r" % (
                name, text_of(dom, "tl-gpu"), want))
            check(" shown)" in (text_of(dom, "tl-range") or ""), "%s: range label" % name)
        if name == "timeline_agg":
            check(text_of(dom, "tl-aggregated") not in (None, "0"), "aggregated figure")
        if name == "memory":
            check(dom.count('class="chart line"') >= 1 and 'class="mark"' in dom, "memory chart + peak")
            mj = json.loads(gp("memory", "--json", gen))["traces"][0]["devices"][0]
            check(text_of(dom, "mem-peak-0") == fmt_bytes(mj["peak_allocated_bytes"]), "memory peak figure")
        if name == "report":
            for cls in ("chart pie", "chart bars", "chart optl", "chart line"):
                check('class="%s"' % cls in dom, "report: %s drawn" % cls)
            check(dom.count('class="chart bars"') >= 3, "report: avg/calls/gpu-cpu bars")
            s = json.loads(gp("summary", "--json", gen))["traces"][0]
            ops = sum(c["count"] for c in s["categories"])
            uniq = sum(len(c["ops"]) for c in s["categories"])
            check(text_of(dom, "r0-ops") == str(ops), "report ops %r != summary %d" % (text_of(dom, "r0-ops"), ops))
            check(text_of(dom, "r0-unique") == str(uniq), "report unique ops")
            rows = re.search(r'<table class="sortable stats">.*?<tbody>(.*?)</tbody>', dom, re.S)
            check(rows and rows.group(1).count("<tr>") == uniq, "report table has every op")
            check("GPU breakdowns" in dom and 'class="launch"' in dom, "analyze breakdowns present")
            if len(inputs) > 1:
                check('id="r1"' in dom and text_of(dom, "r1-gpu") not in (None, "N/A"), "second trace section")
            for i, inp in enumerate(inputs):
                check_advice(dom, "r%d" % i, inp, need=("small-gpu-op",) if i == 0 else ("comm-not-overlapped",))
        print("%s: ok (%d bytes)" % (name, os.path.getsize(path)))

    # A search that comes from a link matches its text literally: a crafted
    # pattern (catastrophic backtracking on a long frame name) must not
    # freeze the page, and a malformed %-escape must not stop its script.
    hostile = os.path.join(tmp, "hostile.folded")
    with open(hostile, "w") as f:
        f.write("main;" + "a" * 40 + "! 100\nmain;(a+)+$ 7\nmain;other 50\n")
    hpage = os.path.join(tmp, "hostile_flame.html")
    gp("flame", hostile, "-o", hpage)
    for frag, want in (("#search=(a%2B)%2B%24", "Matched 1 frames"),
                       ("#search=%E0%A4%A", "Matched 0 frames")):
        try:
            dom, con = browse(chrome, hpage, frag)
        except subprocess.TimeoutExpired:
            dom, con = "", ["page did not finish (frozen)"]
        check(not con, "flame %s: console output %r" % (frag, con[:3]))
        check('data-ready="1"' in dom, "flame %s: page script did not finish" % frag)
        m = text_of(dom, "fg-matched") or ""
        check(m.startswith(want), "flame %s: %r, want %r (literal match)" % (frag, m, want))
    if failures:
        sys.exit(1)
    print("ok")


def check_advice(dom, p, trace, need):
    """The report's advice section of section p shows exactly what
    `gpuprof advise --json` finds on the trace, in its order."""
    want = json.loads(gp("advise", "--json", trace))["traces"][0]["advice"]
    sect = re.search(r'<section class="sect" id="%s">(.*?)</section>' % p, dom, re.S)
    check(sect is not None, "%s: section" % p)
    if not sect:
        return
    sect = sect.group(1)
    check('id="%s-advice"' % p in sect, "%s: advice section present" % p)
    check(text_of(sect, p + "-advice-n") == str(len(want)), "%s: advice count %r != advise's %d" % (
        p, text_of(sect, p + "-advice-n"), len(want)))
    blocks = sect.split('<div class="adv p-')[1:]
    got_ids = [re.match(r'[a-z]+" data-rule="([^"]+)"', b).group(1) for b in blocks]
    check(got_ids == [a["id"] for a in want], "%s: advice rules %r != advise's %r" % (
        p, got_ids, [a["id"] for a in want]))
    for r in need:
        check(r in got_ids, "%s: rule %s fired and shown" % (p, r))
    for b, a in zip(blocks, want):
        def field(cls, pre=""):
            m = re.search(r'<div class="%s">%s(.*?)</div>' % (cls, re.escape(pre)), b, re.S)
            return html.unescape(m.group(1)) if m else None
        check(b.startswith(a["priority"] + '"'), "%s %s: priority %s" % (p, a["id"], a["priority"]))
        check(field("finding") == a["finding"], "%s %s: finding %r" % (p, a["id"], field("finding")))
        check(field("est", "<b>Estimate:</b> ") == a["estimate"], "%s %s: estimate" % (p, a["id"]))
        check(field("hint", "<b>Hint:</b> ") == a["hint"], "%s %s: hint" % (p, a["id"]))
        rows = re.findall(r'<tr><td class="l">(.*?)</td><td>(\d+)</td>', b)
        check([(html.unescape(n), int(c)) for n, c in rows] == [(e["name"], e["count"]) for e in a["evidence"]],
              "%s %s: evidence rows %r" % (p, a["id"], rows[:2]))
    print("%s: %d advice shown as advise finds them (%s)" % (p, len(want), ", ".join(got_ids)))


def fmt_bytes(b):  # gp_fmt_bytes
    u = ["B", "KiB", "MiB", "GiB", "TiB"]
    i, v = 0, float(b)
    while abs(v) >= 1024 and i < 4:
        v /= 1024
        i += 1
    return "%d B" % b if i == 0 else "%.2f %s" % (v, u[i])


main()
