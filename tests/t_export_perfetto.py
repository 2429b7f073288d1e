#!/usr/bin/env python3
"""`gpuprof export --format perfetto` / `timeline -o X.pftrace` write a
protobuf Trace that Debian's protoc decodes with Perfetto's own proto
(../shared/perfetto/perfetto_trace.proto), and that matches its source:
one SLICE_BEGIN and one SLICE_END per complete slice, begins at the source's
timestamps (ns since the clock snapshot's REALTIME t0) with their names,
BEGIN/END properly nested per track, every flow end of the source on a
slice (terminating_flow_ids) with its start (flow_ids), one INSTANT per
instant, memory counter samples per [memory] event, interned names and
categories defined before use, thread/process names, and the output much
smaller than the JSON. Tracks longer than one unit of the writer's parallel
encoding come out right, and the file is the same bytes on one thread.
Every shared trace (GPUPROF_PERFETTO_TRACES=a,b for a subset) plus
generated ones."""
import codecs, collections, glob, gzip, json, os, re, shutil, subprocess, sys, tempfile
from decimal import Decimal
from gp_testutil import BIN, SRC, TRACES, check, failures

PROTO = os.environ.get("GPUPROF_PERFETTO_PROTO") or os.path.join(SRC, "..", "shared", "perfetto")
# every shared trace (about 40 s); GPUPROF_PERFETTO_TRACES=a,b for a subset
SET = os.environ.get("GPUPROF_PERFETTO_TRACES", "all")


def parse_text(txt):
    """protoc --decode text -> nested dicts (repeated fields as lists)."""
    root = {}
    stack = [root]
    for line in txt.splitlines():
        s = line.strip()
        if not s:
            continue
        if s.endswith("{"):
            name = s[:-1].strip()
            d = {}
            stack[-1].setdefault(name, []).append(d)
            stack.append(d)
        elif s == "}":
            stack.pop()
        else:
            k, v = s.split(":", 1)
            v = v.strip()
            if v.startswith('"'):  # C escapes, octal for non-ASCII bytes
                v = codecs.escape_decode(v[1:-1].encode("ascii"))[0].decode("utf-8", "replace")
            else:
                try:
                    v = int(v)
                except ValueError:
                    pass
            stack[-1].setdefault(k, []).append(v)
    return root


def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default


def check_trace(src, out, label, size_goal=True):
    r = subprocess.run([BIN, "export", src, "--format", "perfetto", "-o", out], capture_output=True,
                       text=True)
    check(r.returncode == 0, "%s: export exit %d %s" % (label, r.returncode, r.stderr))
    if r.returncode:
        return
    with open(out, "rb") as f:
        d = subprocess.run(["protoc", "--proto_path=" + PROTO, "--decode=perfetto.protos.Trace",
                            "perfetto_trace.proto"], stdin=f, capture_output=True, text=True)
    check(d.returncode == 0, "%s: protoc --decode failed: %s" % (label, d.stderr[:300]))
    if d.returncode:
        return
    packets = parse_text(d.stdout).get("packet", [])
    op = gzip.open if src.endswith(".gz") else open
    with op(src, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
    snap = one(packets[0], "clock_snapshot")
    check(snap is not None, "%s: first packet has no clock snapshot" % label)
    clocks = {one(c, "clock_id"): one(c, "timestamp") for c in snap.get("clocks", [])} if snap else {}
    t0 = clocks.get(1, 0) - base  # REALTIME of trace time 0, in the source's ns
    names, cats, ann = {}, {}, {}
    begins, ends, inst = [], 0, 0
    per_track = collections.defaultdict(list)
    flow_out, flow_term = collections.Counter(), collections.Counter()
    counters = 0
    ctr_tracks = collections.Counter()
    tracks = {}
    undefined = 0
    for p in packets:
        for i in p.get("interned_data", []):
            for n in i.get("event_names", []):
                names[one(n, "iid")] = one(n, "name")
            for n in i.get("event_categories", []):
                cats[one(n, "iid")] = one(n, "name")
            for n in i.get("debug_annotation_names", []):
                ann[one(n, "iid")] = one(n, "name")
        for td in p.get("track_descriptor", []):
            tracks[one(td, "uuid")] = td
        te = one(p, "track_event")
        if te is None:
            continue
        ts = one(p, "timestamp")
        typ = one(te, "type")
        uuid = one(te, "track_uuid")
        if typ in ("TYPE_SLICE_BEGIN", "TYPE_INSTANT"):
            nm = names.get(one(te, "name_iid"))
            if nm is None or any(c not in cats for c in te.get("category_iids", [])):
                undefined += 1
            if typ == "TYPE_SLICE_BEGIN":
                begins.append((nm, ts))
                dur_ns = [one(a, "int_value") for a in te.get("debug_annotations", [])
                          if ann.get(one(a, "name_iid")) == "dur_ns"]
                per_track[uuid].append(("B", ts, nm, dur_ns[0] if dur_ns else None))
                for fid in te.get("flow_ids", []):
                    flow_out[fid] += 1
                for fid in te.get("terminating_flow_ids", []):
                    flow_term[fid] += 1
            else:
                inst += 1
        elif typ == "TYPE_SLICE_END":
            ends += 1
            per_track[uuid].append(("E", ts, None, None))
        elif typ == "TYPE_COUNTER":
            counters += 1
            ctr_tracks[uuid] += 1
    check(undefined == 0, "%s: %d events use names/categories not interned before" % (label, undefined))
    xs = [e for e in ev if e.get("ph") == "X" and "dur" in e]
    want = sorted((e.get("name", ""), int(Decimal(e["ts"]) * 1000) - t0) for e in xs)
    check(len(begins) == len(xs) and ends == len(xs),
          "%s: %d begins / %d ends for %d slices" % (label, len(begins), ends, len(xs)))
    check(sorted(begins) == want, "%s: slice names/timestamps differ from the source" % label)
    bad = 0
    spans = []  # (name, begin, original duration) from the BEGIN/END pairs
    for uuid, seq in per_track.items():  # written in nesting order: a stack per track
        stack, last = [], None
        for kind, ts, nm, dur_ns in seq:
            if kind == "B":
                if last is not None and ts < last:
                    bad += 1
                stack.append((ts, nm, dur_ns))
            else:
                if not stack:
                    bad += 1
                else:
                    b, bnm, dur_ns = stack.pop()
                    if ts < b or (dur_ns is not None and ts > b + dur_ns):
                        bad += 1
                    # clipped to its parent: the original duration is dur_ns
                    spans.append((bnm, b, dur_ns if dur_ns is not None else ts - b))
            last = ts
        bad += len(stack)
        check(uuid in tracks, "%s: track %s has no descriptor" % (label, uuid))
    check(bad == 0, "%s: %d nesting violations" % (label, bad))
    want_spans = sorted((e.get("name", ""), int(Decimal(e["ts"]) * 1000) - t0, int(Decimal(e["dur"]) * 1000))
                        for e in xs)
    check(sorted(spans) == want_spans, "%s: slice ends / original durations differ from the source, e.g. %r" %
          (label, next(((a, b) for a, b in zip(sorted(spans), want_spans) if a != b), None)))
    fsrc = collections.Counter(e.get("ph") for e in ev if e.get("ph") in ("s", "f", "t"))
    if fsrc:  # the source's own flows, each end on its slice
        check(sum(flow_term.values()) == fsrc["f"], "%s: %d flow ends written, %d in the source" %
              (label, sum(flow_term.values()), fsrc["f"]))
        check(sum(flow_out.values()) == fsrc["s"] + fsrc["t"],
              "%s: %d flow starts written, %d in the source" %
              (label, sum(flow_out.values()), fsrc["s"] + fsrc["t"]))
    else:  # none: launch -> GPU work by correlation id, both ends present
        launches = collections.Counter(e["args"]["correlation"] for e in xs
                                       if e.get("cat") in ("cuda_runtime", "cuda_driver")
                                       and "correlation" in e.get("args", {}))
        gpu = sum(1 for e in xs if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
                  and launches.get(e.get("args", {}).get("correlation")))
        check(sum(flow_term.values()) == gpu and set(flow_term) <= set(flow_out),
              "%s: %d launch->GPU flows written for %d correlated GPU slices" %
              (label, sum(flow_term.values()), gpu))
    ninst = sum(1 for e in ev if e.get("ph") in ("i", "I") and e.get("name") != "[memory]")
    check(inst == ninst, "%s: %d instants for %d" % (label, inst, ninst))
    nmem = sum(1 for e in ev if e.get("ph") in ("i", "I") and e.get("name") == "[memory]")
    # allocated and reserved per [memory] event, one sample per numeric arg of a C event
    ncs = sum(1 for e in ev if e.get("ph") == "C" for v in (e.get("args") or {}).values()
              if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool))
    tname = lambda u: one(tracks.get(u, {}), "name", "")
    alloc = sum(n for u, n in ctr_tracks.items() if tname(u).startswith("memory ") and tname(u).endswith(" allocated"))
    resv = sum(n for u, n in ctr_tracks.items() if tname(u).startswith("memory ") and tname(u).endswith(" reserved"))
    if label != "generated":
        # allocated for every [memory] event, reserved where the device reports it
        check(alloc == nmem and resv <= nmem and counters - alloc - resv == ncs,
              "%s: %d counter samples (%d allocated, %d reserved) for %d [memory] events and %d counter values" %
              (label, counters, alloc, resv, nmem, ncs))
    else:
        check(counters >= nmem, "%s: %d counter samples for %d [memory] events" % (label, counters, nmem))
    named = sum(1 for td in tracks.values() for th in td.get("thread", []) if "thread_name" in th)
    check(not any(e.get("name") == "thread_name" for e in ev) or named > 0,
          "%s: no thread names" % label)
    raw = sum(len(json.dumps(e, default=str)) for e in ev)
    size = os.path.getsize(out)
    # the size goal is about real traces (Kineto's events carry many args);
    # the synthetic long-track trace has bare events
    check(not size_goal or raw < 100000 or size <= 0.3 * raw, "%s: %d bytes = %.2f x the JSON events" % (label, size, size / raw))
    print("%s: %d slices, %d flow ends, %d instants, %d counter samples, %.2f x JSON size" %
          (label, len(xs), sum(flow_term.values()), inst, counters, size / raw))


def check_store(tmp):
    """A recorded OpenCL run (store) with device sampling: one BEGIN/END per
    API call, kernel and copy, a launch -> GPU-work flow per device command
    with a launching call, one counter sample per sampled value, a track per
    OpenCL queue."""
    import sqlite3
    build = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))
    prog = os.path.join(build, "tests", "cl_record_prog")
    if not os.path.exists(prog) or subprocess.run([prog, "0"], capture_output=True).returncode == 77:
        print("note: no OpenCL program/device: the store check is skipped")
        return
    db = os.path.join(tmp, "cl.db")
    r = subprocess.run([BIN, "run", "-o", db, "--sample-interval", "1", "--", prog, "4", "65536"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "gpuprof run: %s" % r.stderr[-300:])
    out = os.path.join(tmp, "cl.pftrace")
    r = subprocess.run([BIN, "export", db, "--format", "perfetto", "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, "store export: %s" % r.stderr)
    if r.returncode:
        return
    with open(out, "rb") as f:
        d = subprocess.run(["protoc", "--proto_path=" + PROTO, "--decode=perfetto.protos.Trace",
                            "perfetto_trace.proto"], stdin=f, capture_output=True, text=True)
    check(d.returncode == 0, "store: protoc --decode failed: %s" % d.stderr[:300])
    if d.returncode:
        return
    packets = parse_text(d.stdout).get("packet", [])
    con = sqlite3.connect(db)
    n = lambda sql: con.execute(sql).fetchone()[0]
    gpu = n("SELECT (SELECT count(*) FROM kernels) + (SELECT count(*) FROM copies)")
    calls = n("SELECT count(*) FROM api_calls") + n("SELECT count(*) FROM slices")
    linked = n("SELECT (SELECT count(*) FROM kernels k WHERE EXISTS (SELECT 1 FROM api_calls a WHERE "
               "a.proc = k.proc AND a.corr = k.corr)) + (SELECT count(*) FROM copies k WHERE EXISTS "
               "(SELECT 1 FROM api_calls a WHERE a.proc = k.proc AND a.corr = k.corr))")
    samples = n("SELECT count(*) FROM counters")
    queues = n("SELECT count(*) FROM tracks WHERE type = 1")
    con.close()
    tes = [one(p, "track_event") for p in packets if one(p, "track_event")]
    begins = sum(1 for t in tes if one(t, "type") == "TYPE_SLICE_BEGIN")
    ends = sum(1 for t in tes if one(t, "type") == "TYPE_SLICE_END")
    ctr = sum(1 for t in tes if one(t, "type") == "TYPE_COUNTER")
    term = sum(len(t.get("terminating_flow_ids", [])) for t in tes)
    qtracks = sum(1 for p in packets for td in p.get("track_descriptor", [])
                  if one(td, "name", "").startswith("OpenCL queue"))
    check(begins == ends == gpu + calls, "store: %d begins / %d ends for %d events" % (begins, ends, gpu + calls))
    check(term == linked and linked > 0, "store: %d flow ends for %d launched device commands" % (term, linked))
    check(ctr == samples and samples > 0, "store: %d counter samples for %d sampled values" % (ctr, samples))
    check(qtracks == queues and queues > 0, "store: %d queue tracks for %d queues" % (qtracks, queues))
    print("store: %d events, %d flows, %d counter samples, %d queue tracks" % (begins, term, ctr, qtracks))


def long_track_trace(path):
    """One CPU thread and one GPU stream with far more slices than one unit
    of the writer's parallel encoding (16384): nested slices (3 levels, equal
    starts, children outliving their parent: clipped, dur_ns kept) and a
    launch -> kernel flow per group, so that unit boundaries fall inside
    open slices and flows; 9000 distinct long kernel names (over 256 KiB of
    interned names: several interned-data packets)."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]
    t = 0
    for g in range(9000):
        ev.append({"ph": "X", "cat": "cpu_op", "name": "step%d" % (g % 7), "pid": 1, "tid": 1,
                   "ts": t, "dur": 100})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "child", "pid": 1, "tid": 1, "ts": t,
                   "dur": 30})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "grandchild", "pid": 1, "tid": 1,
                   "ts": t + 5, "dur": 10})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t + 40, "dur": 8, "args": {"correlation": g + 1}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "late", "pid": 1, "tid": 1, "ts": t + 80,
                   "dur": 40 if g % 3 else 20})  # 40: outlives its parent
        # a long name per kernel (as templated kernels have): the interned
        # names span several packets of interned data
        ev.append({"ph": "X", "cat": "kernel", "name": "void gemm_kernel<%d, %s>" % (g, "T" * 48),
                   "pid": 0, "tid": 7,
                   "ts": t + 50, "dur": 60 + g % 4,
                   "args": {"correlation": g + 1, "device": 0, "stream": 7}})
        ev.append({"ph": "X", "cat": "kernel", "name": "inner", "pid": 0, "tid": 7,
                   "ts": t + 55, "dur": 10, "args": {"device": 0, "stream": 7}})
        t += 150
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)


def main():
    if shutil.which("protoc") is None:
        print("SKIP: protoc not installed (Debian protobuf-compiler)")
        sys.exit(77)
    if not os.path.exists(os.path.join(PROTO, "perfetto_trace.proto")):
        print("SKIP: perfetto_trace.proto not found under %s" % PROTO)
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="gp_pf_")
    gen = os.path.join(tmp, "gen.json")
    subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gen_trace.py"), gen, "--steps", "20"],
                   check=True)
    check_trace(gen, os.path.join(tmp, "gen.pftrace"), "generated")
    # timeline -o X.pftrace is the same writer
    r = subprocess.run([BIN, "timeline", gen, "-o", os.path.join(tmp, "tl.pftrace")],
                       capture_output=True, text=True)
    check(r.returncode == 0 and open(os.path.join(tmp, "tl.pftrace"), "rb").read() ==
          open(os.path.join(tmp, "gen.pftrace"), "rb").read(), "timeline -o .pftrace differs")
    # the crafted trace of t_export_roundtrip.py: fwd/bwd flows, NVTX marks,
    # a global instant, [memory], a counter, string pid/tid, distributedInfo
    sys.path.insert(0, os.path.join(SRC, "tests"))
    import t_export_roundtrip
    crafted = os.path.join(tmp, "crafted.json")
    doc = t_export_roundtrip.crafted_trace()
    doc["traceEvents"].append({"ph": "C", "name": "power", "pid": 0, "tid": 7, "ts": 50,
                               "args": {"watts": 120.5, "volts": 12}})
    with open(crafted, "w") as f:
        json.dump(doc, f)
    check_trace(crafted, os.path.join(tmp, "crafted.pftrace"), "crafted")
    # tracks longer than one encoding unit; the same bytes on one core
    long = os.path.join(tmp, "long.json")
    long_track_trace(long)
    check_trace(long, os.path.join(tmp, "long.pftrace"), "long tracks", size_goal=False)
    if shutil.which("taskset") and len(os.sched_getaffinity(0)) > 1:
        one = os.path.join(tmp, "long1.pftrace")
        r = subprocess.run(["taskset", "-c", str(min(os.sched_getaffinity(0))), BIN, "export", long,
                            "--format", "perfetto", "-o", one], capture_output=True, text=True)
        check(r.returncode == 0 and open(one, "rb").read() ==
              open(os.path.join(tmp, "long.pftrace"), "rb").read(),
              "the output differs with one thread (%s)" % r.stderr.strip())
    else:
        print("note: one core only or no taskset: the one-thread comparison is skipped")
    check_store(tmp)
    for f in sorted(glob.glob(os.path.join(TRACES, "*", "*.json.gz"))):
        folder = os.path.basename(os.path.dirname(f))
        if SET != "all" and folder not in SET.split(","):
            continue
        check_trace(f, os.path.join(tmp, folder + ".pftrace"), os.path.basename(f))
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
