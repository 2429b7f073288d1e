#!/usr/bin/env python3
"""gpuprof flame: folded output parsed the way flamegraph.pl parses it sums to
the trace's total computed independently here from the raw JSON; speedscope
files satisfy the required structure of speedscope's file-format schema;
options keep the total; folded stacks are accepted as input."""
import glob, gzip, json, os, subprocess, sys, tempfile
from decimal import Decimal, ROUND_HALF_UP
from gp_testutil import BIN, SRC, TRACES, check, failures

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "cuda_sync",
            "gpu_user_annotation", "opencl"}
GPU_WORK = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "opencl"}


def run(*args):
    r = subprocess.run([BIN] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("gpuprof %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr))
    return r


def ns(v):
    return int((Decimal(str(v)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def independent_total(events):
    """Busy time of every CPU thread (union of its slices) + every GPU work slice."""
    per_track = {}
    gpu = 0
    for e in events:
        if e.get("ph") != "X" or "dur" not in e or "ts" not in e:
            continue
        cat = e.get("cat", "")
        if cat == "Trace":
            continue
        d = ns(e["dur"])
        if d < 0:
            continue
        if cat in GPU_WORK:
            gpu += d
        elif cat not in GPU_CATS:
            per_track.setdefault((str(e.get("pid")), str(e.get("tid"))), []).append((ns(e["ts"]), d))
    cpu = 0
    for iv in per_track.values():
        iv.sort(key=lambda x: (x[0], -x[1]))
        end = None
        for ts, d in iv:
            if end is None or ts >= end:
                cpu += d
                end = ts + d
    return cpu + gpu


def parse_folded(path):
    """flamegraph.pl: the count is the last whitespace-separated field."""
    total, lines = 0, 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, cnt = line.rsplit(" ", 1)
            check(stack and cnt.isdigit(), "folded line malformed: %r" % line[:80])
            total += int(cnt)
            lines += 1
    return total, lines


def check_speedscope(path):
    with open(path) as f:
        doc = json.load(f)
    check(doc.get("$schema") == "https://www.speedscope.app/file-format-schema.json", "$schema")
    frames = doc.get("shared", {}).get("frames")
    check(isinstance(frames, list) and all(isinstance(fr.get("name"), str) for fr in frames),
          "shared.frames[].name")
    profs = doc.get("profiles")
    check(isinstance(profs, list) and profs, "profiles non-empty")
    units = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
    for p in profs:
        check(p.get("type") in ("evented", "sampled"), "profile type")
        check(isinstance(p.get("name"), str), "profile name")
        check(p.get("unit") in units, "profile unit %r" % p.get("unit"))
        check(isinstance(p.get("startValue"), (int, float)) and isinstance(p.get("endValue"), (int, float)),
              "start/endValue")
        if p["type"] == "evented":
            stack, last = [], p["startValue"]
            for ev in p["events"]:
                check(ev["type"] in ("O", "C") and isinstance(ev["at"], (int, float)), "event shape")
                check(0 <= ev["frame"] < len(frames), "frame index in range")
                check(ev["at"] >= last, "events ordered in time")
                last = ev["at"]
                if ev["type"] == "O":
                    stack.append(ev["frame"])
                else:
                    check(stack and stack[-1] == ev["frame"], "close matches the innermost open")
                    if stack:
                        stack.pop()
            check(not stack, "every opened frame is closed in %s" % p["name"])
            check(last <= p["endValue"], "events within endValue")
        else:
            check(len(p["samples"]) == len(p["weights"]), "samples/weights same length")
            for s in p["samples"]:
                check(all(0 <= i < len(frames) for i in s), "sample frame index in range")
    return doc


def main():
    if not os.path.isdir(TRACES):
        print("SKIP: shared traces not found at %s" % TRACES)
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="gp_flame_")
    files = sorted(glob.glob(os.path.join(TRACES, "*", "*.json.gz")))
    for path in files:
        name = os.path.basename(os.path.dirname(path)) + "_" + os.path.basename(path)[:20]
        folded = os.path.join(tmp, name + ".folded")
        run("flame", path, "-o", folded)
        total, lines = parse_folded(folded)
        events = load(path)
        if any(e.get("ph") in ("B", "E") for e in events):
            print("note: %s has B/E events; total check skipped" % name)
        else:
            want = independent_total(events)
            check(total == want, "%s: folded total %d != independent %d" % (name, total, want))
            print("%s: folded total %d ns over %d lines (independent %d)" % (name, total, lines, want))
        # JSON and speedscope views of the same tree
        js = json.loads(run("flame", path, "--json").stdout)
        check(js["total"] == total and js["root"]["value"] == total, "%s: --json total" % name)
        ss = os.path.join(tmp, name + ".speedscope.json")
        run("flame", path, "-o", ss)
        check_speedscope(ss)
        # options never lose weight
        pruned = os.path.join(tmp, name + ".pruned.folded")
        run("flame", path, "-o", pruned, "--min-duration", "50us", "--max-depth", "4",
            "--group-small-kernels", "20us")
        t2, _ = parse_folded(pruned)
        check(t2 == total, "%s: pruned total %d != %d" % (name, t2, total))
        with open(pruned) as f:
            depth = max((l.rsplit(" ", 1)[0].count(";") + 1 for l in f if l.strip()), default=0)
        check(depth <= 4, "%s: --max-depth 4 gave depth %d" % (name, depth))
        # folded in -> folded out keeps every stack's weight
        again = os.path.join(tmp, name + ".again.folded")
        run("flame", folded, "-o", again)
        with open(folded) as a, open(again) as b:
            check(sorted(a.read().split("\n")) == sorted(b.read().split("\n")),
                  "%s: folded round trip differs" % name)
    # GPU kernels are attached under their launch on the generated trace
    gen = os.path.join(tmp, "gen.json.gz")
    subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gen_trace.py"), gen, "--steps", "2"],
                   check=True)
    out = os.path.join(tmp, "gen.folded")
    run("flame", gen, "-o", out)
    with open(out) as f:
        text = f.read()
    check(";aten::addmm;cudaLaunchKernel;ampere_sgemm_128x64_tn " in text,
          "kernel under aten::linear;aten::addmm;cudaLaunchKernel")
    js = json.loads(run("flame", gen, "--json").stdout)
    check(js["gpu_unattributed"] == 0 and js["gpu_attached"] > 0, "every generated kernel attached")
    grp = json.loads(run("flame", gen, "--json", "--group-small-kernels", "1ms").stdout)
    check("[small GPU work]" in json.dumps(grp), "--group-small-kernels makes a group frame")
    # folded input gives a sampled speedscope profile
    run("flame", out, "-o", os.path.join(tmp, "s.speedscope.json"))
    doc = check_speedscope(os.path.join(tmp, "s.speedscope.json"))
    check(doc["profiles"][0]["type"] == "sampled", "folded input -> sampled profile")
    # bad folded input is reported with file and line
    bad = os.path.join(tmp, "bad.folded")
    with open(bad, "w") as f:
        f.write("a;b 3\nc;d x\n")
    r = subprocess.run([BIN, "flame", bad, "-o", os.path.join(tmp, "x.html")], capture_output=True, text=True)
    check(r.returncode == 2 and "bad.folded:2:" in r.stderr, "bad folded: %r" % r.stderr)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok: %d traces" % len(files))


main()
