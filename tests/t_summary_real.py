#!/usr/bin/env python3
"""Every shared real trace imports, and `gpuprof summary --json` gives for
every kernel (and memcpy/memset, CPU op) name the count and total time that
an independent computation over the raw JSON events gives, to the ns."""
import collections, decimal, gzip, json, os, subprocess, sys

GP = os.environ.get("GPUPROF_BIN", "build/gpuprof")
src = os.environ.get("GPUPROF_SOURCE_DIR", ".")
traces = os.environ.get("GPUPROF_TRACES") or os.path.join(src, "..", "shared", "traces")
if not os.path.isdir(traces):
    print("SKIP: no shared traces at %s (set GPUPROF_TRACES)" % traces)
    sys.exit(77)

GROUPS = {"kernel": {"kernel", "Kernel"}, "memory": {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"},
          "cpu_op": {"cpu_op", "operator", "Operator"}}


def to_ns(v):
    d = decimal.Decimal(v) * 1000
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def expected(path):
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = {g: collections.defaultdict(lambda: [0, 0]) for g in GROUPS}
    for e in evs:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        for g, cats in GROUPS.items():
            if e.get("cat") in cats:
                r = out[g][e.get("name", "")]
                r[0] += 1
                r[1] += to_ns(e["dur"])
    return out


passed = failed = 0
for folder in sorted(os.listdir(traces)):
    d = os.path.join(traces, folder)
    if not os.path.isdir(d):
        continue
    for fn in sorted(os.listdir(d)):
        if not (fn.endswith(".json") or fn.endswith(".json.gz")) or fn.startswith("expected"):
            continue
        path = os.path.join(d, fn)
        r = subprocess.run([GP, "summary", "--json", path], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL %s: exit %d: %s" % (path, r.returncode, r.stderr.strip()))
            failed += 1
            continue
        got = json.loads(r.stdout)["traces"][0]
        gotmap = {c["category"]: {o["name"]: (o["count"], o["total_ns"]) for o in c["ops"]}
                  for c in got["categories"]}
        exp = expected(path)
        bad = []
        for g in GROUPS:
            e = {k: tuple(v) for k, v in exp[g].items()}
            gm = gotmap.get(g, {})
            if e != gm:
                for k in set(e) | set(gm):
                    if e.get(k) != gm.get(k):
                        bad.append("%s %r: expected %s, got %s" % (g, k[:60], e.get(k), gm.get(k)))
        if bad:
            failed += 1
            print("FAIL %s:\n  %s" % (path, "\n  ".join(bad[:10])))
        else:
            passed += 1
            n = sum(len(v) for v in exp.values())
            print("ok %s (%d names checked)" % (os.path.relpath(path, traces), n))
print("t_summary_real: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
