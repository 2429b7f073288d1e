#!/usr/bin/env python3
"""The lossless Chrome/Kineto export (`gpuprof export --format chrome`,
`gpuprof timeline -o X.json`, one writer) round-trips every shared trace:
- `summary --json` and `analyze --compat hta --json` on the export equal the
  same on the original (the file name aside);
- the export keeps every event of the source: X slices (with their original
  ts/dur in exact ns and every args key with its value and JSON type),
  instants, [memory] events, flows of every category, distributedInfo,
  deviceProperties, baseTimeNanoseconds;
- `timeline -o X.json` writes the same bytes as `export`;
- HTA 0.6.1 (../shared/hta, run by tests/hta_oracle.py on Debian's python3)
  gives the same temporal/kernel breakdown, idle time, launch statistics,
  queue length and memory bandwidth on the export as on the original, for a
  time-bounded subset (GPUPROF_HTA_TRACES, default the small folders;
  bench/export_hta.sh runs all of them and commits the result);
- a recorded OpenCL run (PoCL) exports to a trace HTA analyzes with
  non-empty GPU figures."""
import glob, gzip, json, os, shutil, subprocess, sys, tempfile
from decimal import Decimal
from gp_testutil import BIN, SRC, TRACES, check, failures

BUILD = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))
HTA = os.environ.get("GPUPROF_HTA") or os.path.join(SRC, "..", "shared", "hta")
# HTA runs on every shared trace folder unless GPUPROF_HTA_TRACES names a
# subset (HTA takes 1 to 5 s per folder: about a minute for all of them)
HTA_SET = os.environ.get("GPUPROF_HTA_TRACES", "all")


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def gp(*args):
    r = subprocess.run([BIN] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def strip_file(x):
    if isinstance(x, dict):
        return {k: strip_file(v) for k, v in x.items() if k not in ("file", "files", "source")}
    if isinstance(x, list):
        return [strip_file(v) for v in x]
    return x


def ns(v):
    return int(Decimal(v) * 1000)


def ident(v):
    # the model keeps an empty-string pid/tid as 0 (a known, documented loss)
    return "0" if v == "" or v is None else str(v)


def key(e):
    return (e.get("ph"), e.get("cat") or "", e.get("name") or "", ident(e.get("pid")),
            ident(e.get("tid")), ns(e["ts"]) if "ts" in e else 0)


def jargs(e):
    """args as comparable text; numbers keep their JSON spelling (type)."""
    return json.dumps(e.get("args"), sort_keys=True, default=lambda d: "num:" + str(d))


def check_events(src, out, label):
    a, b = load(src), load(out)
    ea = a["traceEvents"] if isinstance(a, dict) else a
    eb = b["traceEvents"]
    # X slices: original ts and dur in ns, args equal key by key with types
    xa = sorted((key(e), ns(e["dur"]), jargs(e))
                for e in ea if e.get("ph") == "X" and "dur" in e)
    xb = sorted((key(e), ns(e["dur"]), jargs(e))
                for e in eb if e.get("ph") == "X")
    check(len(xa) == len(xb), "%s: %d slices, %d exported" % (label, len(xa), len(xb)))
    diff = sum(1 for p, q in zip(xa, xb) if p != q)
    check(diff == 0, "%s: %d slices differ (ts/dur/args), e.g. %r" %
          (label, diff, next(((p, q) for p, q in zip(xa, xb) if p != q), None)))
    for ph, what in (("i", "instants"), ("s", "flow starts"), ("f", "flow ends")):
        ca = sorted(key(e) for e in ea if e.get("ph") in (ph, ph.upper()))
        cb = sorted(key(e) for e in eb if e.get("ph") in (ph, ph.upper()))
        check(ca == cb, "%s: %s differ (%d vs %d)" % (label, what, len(ca), len(cb)))
    if isinstance(a, dict):
        for k in ("distributedInfo", "deviceProperties", "baseTimeNanoseconds"):
            if a.get(k):
                want = a[k]
                if k == "deviceProperties":
                    want = [{x: d[x] for x in DEV_KEYS if x in d} for d in want]
                got = b.get(k)
                if k == "deviceProperties" and got:
                    got = [{x: d[x] for x in DEV_KEYS if x in want[i]} for i, d in enumerate(got)]
                check(got == want, "%s: %s %s vs %s" % (label, k, want, got))
    return len(xb)


DEV_KEYS = ("id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "numSms", "warpSize",
            "maxThreadsPerBlock", "maxThreadsPerMultiprocessor", "regsPerBlock",
            "regsPerMultiprocessor", "sharedMemPerBlock", "sharedMemPerMultiprocessor",
            "sharedMemPerBlockOptin")


def hta_env():
    env = dict(os.environ, PYTHONPATH=HTA)
    return env


def hta_figures(d):
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests", "hta_oracle.py"), d],
                       capture_output=True, text=True, env=hta_env())
    if r.returncode:
        return None, r.stderr.strip().splitlines()[-1:]
    return json.loads(r.stdout), None


def hta_usable():
    if not os.path.isdir(os.path.join(HTA, "hta")):
        return "HTA not found at %s" % HTA
    r = subprocess.run(["/usr/bin/python3", "-c", "import hta.trace_analysis"], env=hta_env(),
                       capture_output=True, text=True)
    if r.returncode:
        return "HTA does not import (python3-pandas/numpy/plotly/networkx/psutil missing?): %s" % (
            r.stderr.strip().splitlines()[-1:])
    return None


def crafted_trace():
    """A Kineto trace with what the shared ones lack or have little of:
    distributedInfo beyond rank (pg_count, pg_config, nccl_version), NVTX
    marks and a global instant, fwd/bwd flows, a [memory] event, a GPU user
    annotation, a Stream Sync longer than its stream's other work, string
    pid/tid, args of every JSON type (nested arrays, bool, null, integers
    beyond 2^53, exponents, escapes), fractional and integer timestamps."""
    ev = []

    def x(**k):
        ev.append(dict(ph="X", **k))
    x(cat="user_annotation", name="ProfilerStep#1", pid=1, tid=11, ts=10.5, dur=1000.25,
      args={"External id": 1, "Record function id": 0, "Ev Idx": 0})
    x(cat="user_annotation", name="ProfilerStep#2", pid=1, tid=11, ts=1100.5, dur=900, args={"External id": 2})
    x(cat="cpu_op", name="aten::mm", pid=1, tid=11, ts=20.001, dur=50.999,
      args={"External id": 3, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"],
            "Concrete Inputs": ["", ""], "Sequence number": 12, "Fwd thread id": 0, "flag": True,
            "none": None, "big": 12345678901234567, "neg": -3, "exp": 1.5e-7, "uni": "\u00e9\"\\\n\u0001"})
    x(cat="cpu_op", name="autograd::engine::evaluate_function: MmBackward0", pid=1, tid=12, ts=1200,
      dur=100, args={"External id": 9, "Sequence number": 12, "Fwd thread id": 11})
    x(cat="cuda_runtime", name="cudaLaunchKernel", pid=1, tid=11, ts=30, dur=5,
      args={"External id": 3, "cbid": 211, "correlation": 77})
    x(cat="kernel", name="ampere_sgemm_32x32", pid=0, tid=7, ts=40, dur=20.123,
      args={"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 77, "registers per thread": 90,
            "shared memory": 8192, "blocks per SM": 0.5, "warps per SM": 2.0, "grid": [1, 2, 3],
            "block": [128, 1, 1], "est. achieved occupancy %": 12, "External id": 3})
    x(cat="cuda_runtime", name="cudaMemcpyAsync", pid=1, tid=11, ts=60, dur=5,
      args={"External id": 4, "cbid": 41, "correlation": 78})
    x(cat="gpu_memcpy", name="Memcpy HtoD (Pageable -> Device)", pid=0, tid=7, ts=70, dur=10,
      args={"device": 0, "context": 1, "stream": 7, "correlation": 78, "bytes": 4096,
            "memory bandwidth (GB/s)": 0.4096, "External id": 4})
    x(cat="cuda_sync", name="Stream Sync", pid=0, tid=7, ts=80, dur=2000,
      args={"device": 0, "stream": 7, "correlation": 79, "event": 1})
    x(cat="gpu_user_annotation", name="nvtx_range_gpu", pid=0, tid=7, ts=39, dur=30, args={"device": 0, "stream": 7})
    x(cat="Trace", name="PyTorch Profiler (0)", pid="Spans", tid="PyTorch Profiler", ts=10.5, dur=2000, args={})
    ev += [
        {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 11, "ts": 25, "s": "t",
         "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": 512, "Addr": 140000000,
                  "Device Id": 0, "Device Type": 1}},
        {"ph": "i", "cat": "user_annotation", "name": "nvtx_mark_A", "pid": 1, "tid": 11, "ts": 26.5, "s": "t",
         "args": {"color": "red"}},
        {"ph": "i", "cat": "user_annotation", "name": "Iteration Start: PyTorch Profiler", "pid": "Spans",
         "tid": "PyTorch Profiler", "ts": 10.5, "s": "g", "args": {}},
        {"ph": "s", "id": 77, "pid": 1, "tid": 11, "ts": 30, "cat": "ac2g", "name": "ac2g"},
        {"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 40, "cat": "ac2g", "name": "ac2g", "bp": "e"},
        {"ph": "s", "id": 12, "pid": 1, "tid": 11, "ts": 20.001, "cat": "fwdbwd", "name": "fwdbwd"},
        {"ph": "f", "id": 12, "pid": 1, "tid": 12, "ts": 1200, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"},
    ]
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_count": 2,
                                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config":
                                               "cuda:nccl", "pg_size": 8, "ranks": [0, 1, 2, 3, 4, 5, 6, 7]}],
                                "nccl_version": "2.18.1"},
            "deviceProperties": [{"id": 0, "name": "NVIDIA A100", "totalGlobalMem": 85000000000, "computeMajor": 8,
                                  "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
                                  "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
                                  "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936, "numSms": 108,
                                  "sharedMemPerBlockOptin": 166912}],
            "traceEvents": ev, "traceName": "crafted.json", "displayTimeUnit": "ms",
            "baseTimeNanoseconds": 1700000000000000000}


def crafted(tmp, hta_why):
    """Every event of the crafted trace comes back identical (an absent args
    written as {} aside), with the top-level members."""
    d = os.path.join(tmp, "crafted")
    os.makedirs(os.path.join(d, "orig"))
    os.makedirs(os.path.join(d, "exp"))
    src = os.path.join(d, "orig", "crafted.json")
    doc = crafted_trace()
    with open(src, "w") as f:
        json.dump(doc, f, indent=1)
    out = os.path.join(d, "exp", "crafted.json")
    rc, _, err = gp("export", src, "-o", out)
    check(rc == 0, "crafted: export exit %d %s" % (rc, err))
    if rc:
        return
    got = load(out)
    for k in ("distributedInfo", "deviceProperties", "baseTimeNanoseconds", "traceName", "displayTimeUnit",
              "schemaVersion"):
        check(json.loads(json.dumps(got.get(k), default=float)) == doc[k],
              "crafted: %s %r vs %r" % (k, got.get(k), doc[k]))
    # "rank": N with a space: HTA's rank regex
    check(open(out).read(300).find('"rank": 3') >= 0, "crafted: distributedInfo rank written for HTA's regex")

    def canon(e):
        e = dict(e)
        if e.get("ph") == "X" and not e.get("args"):
            e.pop("args", None)
        for k in ("ts", "dur"):  # exact ns; the spelling may differ (10.5 / 10.500)
            if k in e:
                e[k] = ns(e[k])
        return json.dumps(e, sort_keys=True, default=str)
    want = sorted(canon(e) for e in load(src)["traceEvents"])
    have = sorted(canon(e) for e in got["traceEvents"] if e.get("ph") != "M")
    missing = [e for e in want if e not in have]
    extra = [e for e in have if e not in want]
    check(not missing and not extra, "crafted: events differ: missing %s extra %s" % (missing[:3], extra[:3]))
    for cmd in (["summary", "--json"], ["analyze", "--compat", "hta", "--json"]):
        r1, o1, _ = gp(*(cmd + [src]))
        r2, o2, _ = gp(*(cmd + [out]))
        check(r1 == r2 == 0 and strip_file(json.loads(o1)) == strip_file(json.loads(o2)),
              "crafted: %s --json differs on the export" % cmd[0])
    if not hta_why:
        want_h, why = hta_figures(os.path.join(d, "orig"))
        got_h, why2 = hta_figures(os.path.join(d, "exp"))
        check(want_h is not None and want_h == got_h, "crafted: HTA figures differ (%s %s)" % (why, why2))
    print("crafted: %d events round-trip" % len(want))


def main():
    tmp = tempfile.mkdtemp(prefix="gp_rt_")
    folders = sorted(os.path.abspath(d) for d in glob.glob(os.path.join(TRACES, "*")) if os.path.isdir(d))
    hta_why = hta_usable()
    if hta_why and os.path.isdir(os.path.join(HTA, "hta")):
        # HTA is there but does not run: scripts/install-deps.sh installs its
        # Debian packages, so this is a broken setup, not a reason to skip
        check(False, "HTA at %s cannot run: %s" % (HTA, hta_why))
    elif hta_why:
        print("note: HTA checks skipped: " + hta_why)
    checked_hta = 0
    if not folders:
        print("note: shared traces not found under %s" % TRACES)
    for d in folders:
        name = os.path.basename(d)
        files = sorted(glob.glob(os.path.join(d, "*.json.gz")))
        if not files:
            continue
        od, ed = os.path.join(tmp, "orig", name), os.path.join(tmp, "exp", name)
        os.makedirs(od)
        os.makedirs(ed)
        for f in files:
            base = os.path.basename(f)[:-len(".json.gz")]
            os.symlink(f, os.path.join(od, os.path.basename(f)))
            out = os.path.join(ed, base + ".json")
            rc, _, err = gp("export", f, "--format", "chrome", "-o", out)
            check(rc == 0, "%s: export exit %d %s" % (f, rc, err))
            if rc:
                continue
            n = check_events(f, out, base)
            for cmd in (["summary", "--json"], ["analyze", "--compat", "hta", "--json"]):
                r1, o1, e1 = gp(*(cmd + [f]))
                r2, o2, e2 = gp(*(cmd + [out]))
                check(r1 == r2 == 0, "%s %s: exit %d/%d %s %s" % (base, cmd[0], r1, r2, e1, e2))
                if r1 == r2 == 0:
                    check(strip_file(json.loads(o1)) == strip_file(json.loads(o2)),
                          "%s: %s --json differs on the export" % (base, cmd[0]))
            print("%s: %d slices round-trip" % (base, n))
        # timeline -o X.json is the same writer
        tl = os.path.join(tmp, name + ".tl.json")
        rc, _, err = gp("timeline", files[0], "-o", tl)
        first = os.path.join(ed, os.path.basename(files[0])[:-len(".json.gz")] + ".json")
        check(rc == 0 and open(tl, "rb").read() == open(first, "rb").read(),
              "%s: timeline -o .json differs from export" % name)
        if hta_why or (HTA_SET != "all" and name not in HTA_SET.split(",")):
            continue
        want, why = hta_figures(od)
        got, why2 = hta_figures(ed)
        check(want is not None and got is not None, "%s: HTA failed: %s %s" % (name, why, why2))
        if want is not None and got is not None:
            for k in want:
                check(want[k] == got.get(k), "%s: HTA %s differs:\n  orig %s\n  exp  %s" %
                      (name, k, json.dumps(want[k])[:400], json.dumps(got.get(k))[:400]))
            checked_hta += 1
            with_figures = sorted(k for k, v in want.items()
                                  if v and not (isinstance(v, str) and v.startswith("error")))
            print("%s: HTA figures equal (%s; %d of %d with figures, the rest HTA's own "
                  "error/empty answer on both)" % (name, ", ".join(sorted(want)), len(with_figures),
                                                   len(want)))
    if not hta_why and HTA_SET == "all":
        want_n = sum(1 for d in folders if glob.glob(os.path.join(d, "*.json.gz")))
        check(checked_hta == want_n, "HTA compared on %d of %d trace folders" % (checked_hta, want_n))
    crafted(tmp, hta_why)
    # a recorded OpenCL run: its store exports to a trace HTA analyzes
    prog = os.path.join(BUILD, "tests", "cl_record_prog")
    layer = os.path.join(BUILD, "libgpuprof_cl_layer.so")
    if not (os.path.exists(prog) and os.path.exists(layer)):
        print("note: OpenCL recording check skipped: %s or %s not built" % (prog, layer))
    elif subprocess.run([prog, "0"], capture_output=True).returncode == 77:
        print("note: OpenCL recording check skipped: no OpenCL device")
    else:
        db = os.path.join(tmp, "cl.db")
        r = subprocess.run([BIN, "run", "-o", db, "--", prog, "4", "65536"], capture_output=True,
                           text=True)
        check(r.returncode == 0, "gpuprof run (OpenCL): exit %d %s" % (r.returncode, r.stderr))
        cd = os.path.join(tmp, "cl")
        os.makedirs(cd)
        out = os.path.join(cd, "cl_run.json")
        rc, _, err = gp("export", db, "-o", out)
        check(rc == 0, "store export: exit %d %s" % (rc, err))
        doc = load(out)
        kern = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
        check(len(kern) > 0 and all("stream" in e["args"] and "device" in e["args"] for e in kern),
              "store export: %d kernels, each with stream and device args" % len(kern))
        if not hta_why:
            got, why = hta_figures(cd)
            check(got is not None, "HTA on the OpenCL export failed: %s" % why)
            if got is not None:
                tb = got["temporal_breakdown"]
                kb = got["kernel_breakdown"]
                check(isinstance(tb, list) and tb and tb[0].get("kernel_time(us)", 0) > 0,
                      "HTA temporal breakdown of the OpenCL run: %s" % json.dumps(tb)[:300])
                check(isinstance(kb, list) and kb[1] and any(r.get("name") == "scale" for r in kb[1]),
                      "HTA kernel breakdown of the OpenCL run names its kernel: %s" %
                      json.dumps(kb)[:300])
                print("OpenCL run: HTA sees %d kernels" % len(kern))
    shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        sys.exit(1)
    if not folders and hta_why:
        print("SKIP: neither shared traces nor HTA available")
        sys.exit(77)


if __name__ == "__main__":
    main()
