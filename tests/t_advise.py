#!/usr/bin/env python3
"""tests/t_advise.py: every `gpuprof advise` rule fires on a trace built to
trigger it and stays silent on a clean trace (long, varied kernels kept
back to back, short launches, no copies, no syncs, memory freed). Also: the
--set / --only / --disable / --list-rules options, bad input, GPU times near
the int64 limit (advise looped there), and sense on
the shared real traces (nccl_data: communication not overlapped)."""
import copy, json, os, subprocess, sys, tempfile
from gp_testutil import BIN, SRC, TRACES, check, failures, set_verbose

set_verbose()


class T:
    """A small Kineto-style trace under construction (times in us)."""

    def __init__(self):
        self.ev = []
        self.corr = 100
        self.cpu_t = 0.0

    def X(self, cat, name, pid, tid, ts, dur, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
        if args:
            e["args"] = args
        self.ev.append(e)

    def kernel(self, name, ts, dur, call_ts=None, call_dur=5.0, stream=7, grid=(216, 1, 1), occ=50.0,
               cat="kernel", call="cudaLaunchKernel", extra=None):
        self.corr += 1
        if call_ts is None:
            call_ts = ts - 20.0
        self.X("cuda_runtime", call, 1, 1, call_ts, call_dur, {"correlation": self.corr})
        args = {"device": 0, "stream": stream, "correlation": self.corr}
        if cat == "kernel":
            args.update({"grid": list(grid), "block": [256, 1, 1], "est. achieved occupancy %": occ})
        if extra:
            args.update(extra)
        self.X(cat, name, 0, stream, ts, dur, args)

    def mem(self, ts, addr, nbytes, total):
        self.ev.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
                        "tid": 1, "ts": ts, "args": {"Device Type": 1, "Device Id": 0, "Addr": addr,
                                                      "Bytes": nbytes, "Total Allocated": total}})

    def counter(self, name, ts, key, value):
        self.ev.append({"ph": "C", "name": name, "pid": 1, "tid": 1, "ts": ts, "args": {key: value}})

    def doc(self):
        return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "A100", "numSms": 108,
                                                          "totalGlobalMem": 85031714816}],
                "traceEvents": self.ev}


def clean():
    """30 kernels of 2 ms, five names in turn, 10 us apart, launched 20 us before."""
    t = T()
    ts = 1000.0
    for i in range(30):
        t.kernel("gemm_%d" % (i % 5), ts, 2000.0)
        ts += 2010.0
    t.end = ts
    t.X("cpu_op", "aten::mm", 1, 1, 500.0, 300.0)
    for i in range(4):  # memory that is freed again
        t.mem(600.0 + i, 0x1000 + i, 1 << 20, (i + 1) << 20)
        t.mem(60000.0 + i, 0x1000 + i, -(1 << 20), (3 - i) << 20)
    return t


def variant(fn):
    t = clean()
    fn(t)
    return t


def shift_after(t, at, by):
    for e in t.ev:
        if e.get("ts", 0) >= at:
            e["ts"] += by


def v_small(t):
    t.kernel("tiny_kernel", t.end + 5.0, 50.0)


def v_large_cpu(t):
    t.X("cpu_op", "aten::nonzero_cpu", 1, 2, 2000.0, 20000.0)


def v_batch(t):
    ts = t.end
    for i in range(12):
        t.kernel("same_kernel", ts, 1500.0)
        ts += 1505.0


def v_large_mem(t):
    t.mem(700.0, 0x9000, 200 << 20, 200 << 20)
    t.mem(50000.0, 0x9000, -(200 << 20), 0)


def v_cache(t):
    for i in range(150):
        t.X("cpu_op", "aten::empty", 1, 3, 100.0 + i * 10, 5.0)


def v_low_util(t):
    t.X("user_annotation", "data loading", 1, 4, t.end + 10.0, 200000.0)


def v_temp(t):
    for i in range(5):
        t.counter("GPU temp", 1000.0 + i * 1000, "celsius", 80 + 3 * i)


def v_mon_util(t):
    for i in range(5):
        t.counter("gpu util", 1000.0 + i * 1000, "pct", 10)


def v_latency(t):
    for i in range(20):
        t.counter("inference latency", 1000.0 + i * 1000, "ms", 250)


def v_sync_memcpy(t):
    t.X("cuda_runtime", "cudaMemcpy", 1, 1, 200.0, 100.0, {"correlation": 5})


def v_pageable(t):
    t.kernel("Memcpy HtoD (Pageable -> Device)", t.end + 5.0, 300.0, cat="gpu_memcpy",
             call="cudaMemcpyAsync", extra={"bytes": 1 << 22})


def v_sync_loop(t):
    for i in range(12):
        t.X("cuda_runtime", "cudaDeviceSynchronize", 1, 5, 100.0 + i * 100, 20.0)


def v_gap(t):
    shift_after(t, 30000.0, 20000.0)


def v_launch_bound(t):
    ts = t.end
    for i in range(120):
        t.kernel("elementwise_%d" % (i % 7), ts, 2.0, call_ts=ts - 10.0, call_dur=6.0)
        ts += 8.0


def v_launch_delay(t):
    for i in range(12):
        t.kernel("delayed_%d" % (i % 3), 5000.0 + i * 2000, 100.0, call_ts=5000.0 + i * 2000 - 600.0,
                 stream=8)


def v_queue(t):
    ts = t.end + 100.0
    for i in range(1100):
        t.kernel("queued_%d" % (i % 3), ts + 2000.0 + i * 20.0, 19.0, call_ts=ts + i * 1.0, call_dur=0.5,
                 stream=9)


def v_comm(t):
    t.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
             t.end + 5.0, 10000.0, stream=20)


def v_occupancy(t):
    for e in t.ev:
        if e.get("cat") == "kernel":
            e["args"]["est. achieved occupancy %"] = 10.0


def v_small_grid(t):
    for e in t.ev:
        if e.get("cat") == "kernel":
            e["args"]["grid"] = [4, 1, 1]


def v_not_freed(t):
    t.mem(650.0, 0x8000, 64 << 20, 68 << 20)


def v_growth(t):
    for s in range(4):
        start = 1000.0 + s * 15000
        t.X("user_annotation", "ProfilerStep#%d" % s, 1, 1, start, 14000.0)
        t.mem(start + 100.0, 0x7000 + s, 10 << 20, (s + 1) * (10 << 20))


RULES = {
    "small-gpu-op": v_small, "large-cpu-op": v_large_cpu, "batch-calls": v_batch,
    "large-memory": v_large_mem, "cache-calls": v_cache, "low-gpu-utilization": v_low_util,
    "high-temperature": v_temp, "monitor-low-utilization": v_mon_util, "slow-inference": v_latency,
    "sync-memcpy": v_sync_memcpy, "pageable-memcpy": v_pageable, "sync-in-loop": v_sync_loop,
    "gpu-gaps": v_gap, "low-utilization-spans": v_gap, "launch-bound-kernels": v_launch_bound,
    "launch-delay-outliers": v_launch_delay, "queue-full": v_queue, "comm-not-overlapped": v_comm,
    "low-occupancy": v_occupancy, "small-grid": v_small_grid, "memory-not-freed": v_not_freed,
    "memory-growth": v_growth,
}


def advise(path, *opts):
    p = subprocess.run([BIN, "advise", "--json", *opts, path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return p.returncode, None, p.stderr
    return 0, json.loads(p.stdout)["traces"][0]["advice"], p.stderr


def write(d, name, t):
    path = os.path.join(d, name + ".json")
    with open(path, "w") as f:
        json.dump(t.doc(), f)
    return path


def main():
    if not BIN:
        print("GPUPROF_BIN not set")
        return 77
    d = tempfile.mkdtemp(prefix="gp_t_advise_")
    listed = subprocess.run([BIN, "advise", "--list-rules"], stdout=subprocess.PIPE, text=True).stdout
    # the torch-compile rules read TORCH_TRACE logs (gpuprof compile; tests/t_compile.py)
    ids = [l.split(" ")[0] for l in listed.splitlines()
           if not l.startswith(" ") and "[torch-compile]" not in l]
    check(sorted(ids) == sorted(RULES), "--list-rules lists exactly the tested rules (%d)" % len(ids))

    rc, adv, err = advise(write(d, "clean", clean()))
    check(rc == 0 and adv == [], "clean trace: no rule fires (got %s)" % (adv and [a["id"] for a in adv]))

    for rule, fn in RULES.items():
        rc, adv, err = advise(write(d, rule, variant(fn)))
        fired = {a["id"]: a for a in adv or []}
        ok = rc == 0 and rule in fired
        if ok:
            a = fired[rule]
            ok = a["priority"] in ("critical", "high", "medium", "low") and a["finding"] and a["hint"]
        check(ok, "%s fires on its trigger trace (fired: %s %s)" % (rule, sorted(fired), err.strip()))

    # thresholds: raising the limit silences the rule; --only / --disable
    g = write(d, "gap", variant(v_gap))
    rc, adv, _ = advise(g, "--set", "gpu-gaps.min_gap_us=50000")
    check("gpu-gaps" not in [a["id"] for a in adv], "--set gpu-gaps.min_gap_us=50000 silences gpu-gaps")
    rc, adv, _ = advise(g, "--only", "gpu-gaps")
    check([a["id"] for a in adv] == ["gpu-gaps"], "--only gpu-gaps")
    rc, adv, _ = advise(g, "--disable", "gpu-gaps,low-utilization-spans")
    check(adv == [], "--disable silences both gap rules")
    rc, adv, _ = advise(write(d, "clean2", clean()), "--set", "small-gpu-op.max_us=5000")
    check([a["id"] for a in adv] == ["small-gpu-op"], "--set small-gpu-op.max_us=5000 makes 2 ms kernels small")
    rc, adv, _ = advise(g, "--min-priority", "critical")
    check(all(a["priority"] == "critical" for a in adv), "--min-priority critical filters")
    for bad in (["--set", "nope.x=1"], ["--set", "gpu-gaps.nope=1"], ["--set", "gpu-gaps.min_gap_us=abc"],
                ["--only", "nope"], ["--min-priority", "urgent"]):
        rc, _, err = advise(g, *bad)
        check(rc == 2 and err.strip(), "bad option %s: exit 2 with a message" % " ".join(bad))
    rc, _, err = advise(os.path.join(d, "missing.json"))
    check(rc == 2, "missing trace: exit 2")

    # GPU work near the int64 limit of ns from the trace start (valid: every
    # time fits): low-utilization-spans stepped its windows with ws += w,
    # which overflowed past the last one and looped (for ~2^64 / w windows)
    far = os.path.join(d, "far.json")
    with open(far, "w") as f:  # by hand: a Python float cannot hold the times
        f.write('{"traceEvents":['
                '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,"dur":5},'
                '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1000,"dur":3,'
                '"args":{"stream":7,"device":0}},'
                '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9223372036852833,'
                '"dur":2.936,"args":{"stream":7,"device":0}}]}')
    try:
        p = subprocess.run([BIN, "advise", "--json", far], capture_output=True, text=True,
                           timeout=120)
        ids = [a["id"] for a in json.loads(p.stdout)["traces"][0]["advice"]] if p.returncode == 0 else []
        check(p.returncode == 0 and "low-utilization-spans" in ids,
              "GPU times near the int64 limit: exit %d, rules %s %s" % (p.returncode, ids, p.stderr[-300:]))
    except subprocess.TimeoutExpired:
        check(False, "GPU times near the int64 limit: advise did not finish (looped)")

    # sense on the shared real traces
    nccl = os.path.join(TRACES, "nccl_data", "nccl_data.json.gz")
    if os.path.exists(nccl):
        rc, adv, _ = advise(nccl)
        ids = [a["id"] for a in adv]
        check("comm-not-overlapped" in ids, "nccl_data: communication not overlapped")
        check("queue-full" not in ids and "memory-growth" not in ids, "nccl_data: no queue/memory-growth alarm")
        cpu = os.path.join(TRACES, "cpu_only")
        for f in os.listdir(cpu):
            if f.endswith(".json.gz"):
                rc, adv, _ = advise(os.path.join(cpu, f))
                ids = [a["id"] for a in adv]
                check(rc == 0 and not any(i in ids for i in ("gpu-gaps", "low-gpu-utilization", "launch-bound-kernels")),
                      "cpu_only: no GPU rule fires (%s)" % ids)
    else:
        print("skip real-trace checks: %s not found" % nccl)

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all advise checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
