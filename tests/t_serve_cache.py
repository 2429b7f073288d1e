#!/usr/bin/env python3
"""gpuprof serve: the trace cache bounded by --cache-mb and the load progress
of /api/traces, on the real binary.

1. LRU: a first server with an unbounded budget tells each trace's memory
   once it answered a summary; a second server gets the smallest budget (in
   MiB) that holds the largest trace, and a sequence of requests; after each
   request the set of loaded traces must be the one a least-recently-used
   cache of that budget holds (computed here from the sizes), the cache's
   bytes stay within the budget, and at least one trace was dropped and read
   again with the same answer. A trace larger than the budget on its own is
   answered, then dropped without dropping the others.
2. Progress: a generated trace of ~120 MB; while its first request loads it,
   /api/traces (polled on another connection) shows state "loading" with a
   percent that grows from 0 and stays below 100, then "ready" at 100.
Exit 77 without serve (the LRU part needs the shared traces)."""
import http.client, json, math, os, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import BIN, Server  # noqa: E402
import subprocess  # noqa: E402
from gp_testutil import SRC, TRACES, check, failures, set_verbose  # noqa: E402

set_verbose()

MIB = 1 << 20


def listing(s):
    d = json.loads(s.get("/api/traces")[2])
    return {t["name"]: t for t in d["traces"]}, d


def lru():
    names = [os.path.join(TRACES, n) for n in ("alexnet", "sampled_2rank", "amd_mi250", "cpu_only")]
    names = [n for n in names if os.path.exists(n)]
    if len(names) < 3:
        print("note: fewer than 3 shared traces; LRU part skipped")
        return
    # the memory of each trace once it answered its summary
    big = Server(names + ["--quiet", "--cache-mb", "100000"])
    try:
        t, _ = listing(big)
        ids = {n: t[n]["id"] for n in names}
        want = {}
        for n in names:
            st, _, b = big.get("/api/summary?trace=" + ids[n])
            want[n] = b
            check(st == 200, "summary of %s" % os.path.basename(n))
        t, _ = listing(big)
        size = {n: t[n]["memory_bytes"] for n in names}
    finally:
        big.stop()
    check(all(v > 0 for v in size.values()), "every loaded trace counts its memory %s" % size)
    order = sorted(names, key=lambda n: size[n])
    largest = order[-1]
    # the budget holds the largest alone; the others are read around it
    budget_mb = math.ceil(size[largest] / MIB)
    limit = budget_mb * MIB
    small = [n for n in order[:-1]]
    seq = small + [largest] + small[:1] + small + small[::-1]
    s = Server(names + ["--quiet", "--cache-mb", str(budget_mb)])
    try:
        t, _ = listing(s)
        ids = {n: t[n]["id"] for n in names}
        held, dropped = [], 0  # held: most recent last
        for n in seq:
            st, _, b = s.get("/api/summary?trace=" + ids[n])
            check(st == 200 and b == want[n], "cache %d MiB: summary of %s answers the same bytes"
                  % (budget_mb, os.path.basename(n)))
            # the model: n used last; the least recently used out until it fits
            if n in held:
                held.remove(n)
            held.append(n)
            while sum(size[x] for x in held) > limit and len(held) > 1:
                held.pop(0)
                dropped += 1
            t, d = listing(s)
            ready = sorted(x for x in names if t[x]["state"] == "ready")
            check(ready == sorted(held) and d["cache_bytes"] <= d["cache_limit_bytes"] == limit,
                  "after %s: loaded %s (model %s), %d of %d bytes"
                  % (os.path.basename(n), [os.path.basename(x) for x in ready],
                     [os.path.basename(x) for x in sorted(held)], d["cache_bytes"], limit))
        check(dropped > 0, "the sequence dropped traces (%d times) and read them again" % dropped)
    finally:
        s.stop()
    # a budget below one trace: the largest is answered and dropped, the
    # smallest stays
    lo = order[0]
    budget_mb = math.ceil(size[lo] / MIB)
    if size[largest] > budget_mb * MIB:
        s = Server(names + ["--quiet", "--cache-mb", str(budget_mb)])
        try:
            t, _ = listing(s)
            s.get("/api/summary?trace=" + t[lo]["id"])
            st, _, b = s.get("/api/summary?trace=" + t[largest]["id"])
            t, _ = listing(s)
            check(st == 200 and b == want[largest] and t[largest]["state"] == "unloaded" and
                  t[lo]["state"] == "ready",
                  "a trace larger than the budget is answered and dropped, the others stay")
        finally:
            s.stop()


def progress():
    tmp = tempfile.mkdtemp(prefix="gp_serve_cache_")
    path = os.path.join(tmp, "big.json")
    # ~120 MB of complete events (one kernel and one op per step)
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n')
        chunk = []
        for i in range(400000):
            ts = i * 10
            chunk.append('{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":4,'
                         '"args":{"stream":7,"grid":[1,1,1],"block":[128,1,1],"pad":"%s"}},\n'
                         '{"ph":"X","cat":"cpu_op","name":"aten::op","pid":1,"tid":1,"ts":%d,'
                         '"dur":5,"args":{"pad":"%s"}}' % (i % 97, ts, "x" * 60, ts, "y" * 60))
            if len(chunk) == 5000:
                f.write(",\n".join(chunk) + ",\n")
                chunk = []
        f.write(",\n".join(chunk) + "\n]}\n")
    s = Server([path, "--quiet"])
    seen = []
    try:
        t, _ = listing(s)
        tid = t[path]["id"]
        check(t[path]["state"] == "unloaded" and t[path]["percent"] == 0 and
              t[path]["bytes"] == os.path.getsize(path), "before use: unloaded, 0 %, its bytes")
        done = []

        def first():
            done.append(s.get("/api/summary?trace=" + tid, timeout=600)[0])
        th = threading.Thread(target=first)
        th.start()
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        while th.is_alive():
            c.request("GET", "/api/traces")
            d = json.loads(c.getresponse().read())
            x = d["traces"][0]
            seen.append((x["state"], x["percent"]))
            time.sleep(0.002)
        th.join()
        c.close()
        t, _ = listing(s)
        loading = [p for st, p in seen if st == "loading"]
        print("  %d polls, %d while loading, percents %s" % (len(seen), len(loading),
                                                           sorted(set(loading))[:20]))
        check(done == [200] and t[path]["state"] == "ready" and t[path]["percent"] == 100,
              "after the first request: ready, 100 %")
        check(loading and all(0 <= p <= 99 for p in loading) and loading == sorted(loading),
              "while loading: percent from 0, growing, below 100")
        check(any(0 < p < 100 for p in loading), "while loading: a percent between 0 and 100")
    finally:
        s.stop()
        os.unlink(path)
        os.rmdir(tmp)


def main():
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode != 0:
        print("SKIP: this gpuprof has no serve command (libmicrohttpd missing at build)")
        return 77
    if os.path.isdir(TRACES):
        lru()
    else:
        print("note: shared traces not found at %s: the LRU part is skipped" % TRACES)
    progress()
    print("t_serve_cache: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
