#!/usr/bin/env python3
"""Issue 15 consistency suite: on every shared trace (../shared/traces) and
the own fixture, each figure that two outputs show is equal across them:
  span          summary text/JSON, analyze JSON, timeline HTML, report HTML
  CPU/GPU active, overlap   analyze JSON, timeline HTML, report HTML
  per-op figures (count, self, total; kernel totals)   summary JSON, report table
  memory peak   memory JSON, report HTML
  flame total   flame JSON, folded file (sum of lines), speedscope (busy time)
HTML figures are printed with 3 decimals (durations) or 2 (bytes): they
must equal the exact figure within that rounding. Definitions:
docs/analyze.md, "Definitions shared by every command"."""
import glob, html, json, os, re, subprocess, sys, tempfile
from gp_testutil import BIN, SRC, check, checked, failures

SHARED = os.path.join(SRC, "..", "shared", "traces")
def gp(*args):
    r = subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        check(False, "%s: exit %d %s" % (" ".join(args[:2]), r.returncode, r.stderr[:300]))
    return r


DUR = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
BYTES = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "TiB": 1024 ** 4}


def dur_close(text, ns):
    """text like '12.345 ms' equals ns within the printed rounding."""
    m = re.fullmatch(r"(-?[0-9.]+) (ns|us|ms|s)", text.strip())
    if not m:
        return False
    mul = DUR[m.group(2)]
    return abs(float(m.group(1)) * mul - ns) <= 0.0005 * mul + 0.5


def bytes_close(text, b):
    m = re.fullmatch(r"(-?[0-9.]+) (B|KiB|MiB|GiB|TiB)", text.strip())
    if not m:
        return False
    mul = BYTES[m.group(2)]
    return abs(float(m.group(1)) * mul - b) <= 0.005 * mul + 0.5


def fig(page, fid):
    m = re.search(r'id="%s">([^<]*)</div>' % re.escape(fid), page)
    return html.unescape(m.group(1)) if m else None


traces = sorted(glob.glob(os.path.join(SHARED, "*", "*.json.gz")) +
                glob.glob(os.path.join(SHARED, "*", "*.json")))
traces = [t for t in traces if not t.endswith("expected.hta.json")]
if not traces:
    print("note: ../shared/traces absent: only the own fixture is checked")
traces.append(os.path.join(SRC, "tests", "data", "small_kineto.json"))
tmp = tempfile.mkdtemp(prefix="gp_consist_")

for tr in traces:
    name = os.path.relpath(tr, os.path.join(SRC, ".."))
    # summary (JSON and text)
    sj = json.loads(gp("summary", "--json", "--top", "100000", tr).stdout or "{}")
    s = sj["traces"][0] if sj.get("traces") else {}
    span = s.get("span_ns")
    st = gp("summary", tr).stdout
    m = re.search(r"traced span ([0-9.]+ [mun]?s)", st)
    check(m and dur_close(m.group(1), span), "%s: summary text span %r vs JSON %r"
          % (name, m and m.group(1), span))
    # analyze JSON
    aj = json.loads(gp("analyze", "--json", tr).stdout or "{}")
    tl = (aj.get("timeline_stats") or [{}])[0]
    check(tl.get("span_us") is not None and abs(tl["span_us"] * 1000 - span) < 1,
          "%s: analyze span_us %r vs summary span_ns %r" % (name, tl.get("span_us"), span))
    # timeline and report pages
    th = os.path.join(tmp, "t.html")
    rh = os.path.join(tmp, "r.html")
    gp("timeline", "-o", th, tr)
    gp("report", "-o", rh, tr)
    tpage = open(th).read() if os.path.exists(th) else ""
    rpage = open(rh).read() if os.path.exists(rh) else ""
    for label, page, pre in (("timeline", tpage, "tl"), ("report", rpage, "r0")):
        v = fig(page, pre + "-span")
        check(v and dur_close(v, span), "%s: %s span %r vs %r ns" % (name, label, v, span))
        for key, fid in (("cpu_active_us", "-cpu"), ("gpu_active_us", "-gpu"),
                         ("overlap_us", "-overlap")):
            want = tl.get(key)
            v = fig(page, pre + fid)
            if want is None:  # no GPU work: N/A
                if key != "cpu_active_us":
                    check(v in (None, "N/A"), "%s: %s %s %r, want N/A" % (name, label, key, v))
                continue
            check(v and dur_close(v, want * 1000), "%s: %s %s %r vs analyze %r us"
                  % (name, label, key, v, want))
    # per-operation figures: summary JSON vs the report's table
    ops = {}
    for c in s.get("categories", []):
        for o in c["ops"]:
            ops[(c["category"], o["name"])] = o
    rows = re.findall(r'<tr><td class="l">([a-z_]+)</td><td class="l">(.*?)</td>'
                      r'<td data-v="(\d+)">\d+</td><td data-v="(-?\d+)">[^<]*</td>'
                      r'<td data-v="[0-9.]+">[^<]*</td><td data-v="(\d+)">', rpage)
    check(len(rows) == len(ops), "%s: report lists %d operations, summary %d"
          % (name, len(rows), len(ops)))
    bad = 0
    for cat, nm, cnt, self_ns, tot in rows:
        o = ops.get((cat, html.unescape(nm)))
        if not o or o["count"] != int(cnt) or o["total_ns"] != int(tot) or \
                o["self_ns"] != int(self_ns):
            bad += 1
            if bad <= 3:
                check(False, "%s: report row %s/%s count %s self %s total %s vs summary %r"
                      % (name, cat, html.unescape(nm)[:60], cnt, self_ns, tot,
                         o and (o["count"], o["self_ns"], o["total_ns"])))
    check(bad == 0, "%s: %d report rows differ from summary" % (name, bad))
    ktot = sum(o["total_ns"] for (c, _), o in ops.items() if c == "kernel")
    kcat = [c for c in s.get("categories", []) if c["category"] == "kernel"]
    if kcat:
        check(kcat[0]["total_ns"] == ktot, "%s: kernel total %r vs sum of kernel rows %r"
              % (name, kcat[0]["total_ns"], ktot))
    # memory peak: memory JSON vs report
    mj = json.loads(gp("memory", "--json", "--points", "2", tr).stdout or "{}")
    devs = (mj.get("traces") or [{}])[0].get("devices", [])
    rp = fig(rpage, "r0-mempeak")
    if devs:
        peak = max(d["peak_allocated_bytes"] for d in devs)
        check(rp and bytes_close(rp, peak), "%s: report memory peak %r vs memory JSON %r"
              % (name, rp, peak))
    else:
        check(rp is None, "%s: report shows a memory peak %r without memory events" % (name, rp))
    # flame total: JSON, folded, speedscope
    fj = json.loads(gp("flame", "--json", tr).stdout or "{}")
    fo = os.path.join(tmp, "f.folded")
    gp("flame", "-o", fo, tr)
    folded = 0
    for line in open(fo) if os.path.exists(fo) else []:
        folded += int(line.rsplit(" ", 1)[1])
    check(fj.get("total") == folded and fj.get("root", {}).get("value") == folded,
          "%s: flame JSON total %r vs folded %r" % (name, fj.get("total"), folded))
    sp = os.path.join(tmp, "f.speedscope.json")
    gp("flame", "-o", sp, tr)
    try:
        sd = json.load(open(sp))
        sw = 0  # evented profiles: time with at least one frame open, per profile
        for p in sd.get("profiles", []):
            depth, since = 0, 0
            for e in p.get("events", []):
                if e["type"] == "O":
                    if depth == 0:
                        since = e["at"]
                    depth += 1
                else:
                    depth -= 1
                    if depth == 0:
                        sw += e["at"] - since
        check(sw == folded, "%s: speedscope busy time %r vs folded %r" % (name, sw, folded))
    except (OSError, ValueError) as e:
        check(False, "%s: speedscope: %s" % (name, e))

print("%d traces, %d checks" % (len(traces), checked()))
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
