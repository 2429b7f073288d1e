#!/usr/bin/env python3
"""gpuprof timeline -o X.json on every shared trace: the Chrome JSON is
valid, keeps every complete slice and [memory] event of the source (the
lossless writer; t_export_roundtrip.py checks it in full). Also checks the
HTML viewer's size bound on a generated trace."""
import glob, gzip, json, os, subprocess, sys, tempfile
from decimal import Decimal
from gp_testutil import BIN, SRC, TRACES, check, failures


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def check_trace(src, out):
    r = subprocess.run([BIN, "timeline", src, "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, "%s: exit %d %s" % (src, r.returncode, r.stderr))
    with open(out) as f:
        doc = json.load(f, parse_float=Decimal)
    ev = doc["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X"]
    source = load(src)
    want = sum(1 for e in source if e.get("ph") == "X" and "dur" in e and "ts" in e)
    check(len(xs) == want, "%s: %d slices written, %d in the source" % (src, len(xs), want))
    tracks = {(e["pid"], e["tid"]) for e in xs}
    flows = {e["id"] for e in ev if e["ph"] in ("s", "f") and "id" in e}
    mem = sum(1 for e in source if e.get("name") == "[memory]" and e.get("ph") in ("i", "I"))
    cnt = sum(1 for e in ev if e["ph"] == "i" and e["name"] == "[memory]")
    check(cnt == mem, "%s: %d [memory] events written for %d" % (src, cnt, mem))
    print("%s: %d slices on %d tracks, %d flows, %d memory samples" % (os.path.basename(src), len(xs),
                                                                      len(tracks), len(flows), cnt))


def main():
    tmp = tempfile.mkdtemp(prefix="gp_tl_")
    gen = os.path.join(tmp, "gen.json")
    subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gen_trace.py"), gen, "--steps", "30"],
                   check=True)
    check_trace(gen, os.path.join(tmp, "gen.tl.json"))
    # the HTML viewer aggregates beyond --max-slices: the page stays bounded
    full = os.path.join(tmp, "full.html")
    small = os.path.join(tmp, "small.html")
    subprocess.run([BIN, "timeline", gen, "-o", full], check=True, capture_output=True)
    r = subprocess.run([BIN, "timeline", gen, "-o", small, "--max-slices", "500"], check=True,
                       capture_output=True, text=True)
    check("aggregated" in open(small).read() and "short slices in" in r.stderr,
          "aggregation reported: %s" % r.stderr)
    check(os.path.getsize(small) < os.path.getsize(full), "aggregated page is smaller")
    files = sorted(glob.glob(os.path.join(TRACES, "*", "*.json.gz")))
    if not files:
        print("note: shared traces not found under %s; only the generated trace was checked" % TRACES)
    for i, path in enumerate(files):
        check_trace(path, os.path.join(tmp, "t%d.json" % i))
    if failures:
        sys.exit(1)
    print("ok")


main()
