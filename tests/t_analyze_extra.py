#!/usr/bin/env python3
"""t_analyze_extra.py: the analyze keys beyond HTA's (stragglers, timeline_stats,
steps, memory_bandwidth) end to end: a hand-built 4-rank folder where rank 2 is
slow must flag rank 2 and only it; sampled_2rank orders its two ranks without
flagging either; timeline and copy figures equal a reference computed here from
the JSON; on every shared trace the timeline and step figures add up and the
bandwidth equals bytes / time; --compat hta on times within a microsecond of
the int64 limit equals the same trace shifted down (no overflow)."""
import json
import os
import subprocess
import sys
import tempfile
from gp_testutil import BIN, SRC, TRACES, check, failures


def analyze(*args):
    p = subprocess.run([BIN, "analyze", "--json", *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: analyze {args}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def rank_trace(rank, kernel_us):
    """Two ProfilerSteps; per step 10 launches of a gemm of kernel_us, 100 us apart."""
    ev, corr = [], 0
    for step in range(2):
        t0 = step * 2000
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                   "pid": 1, "tid": 1, "ts": t0, "dur": 2000})
        for k in range(10):
            corr += 1
            ts = t0 + 10 + 150 * k
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": ts, "dur": 5, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                       "ts": ts + 20, "dur": kernel_us,
                       "args": {"stream": 7, "correlation": corr, "device": 0}})
        ev.append({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0,
                   "tid": 8, "ts": t0 + 1600, "dur": 300, "args": {"stream": 8, "device": 0}})
    return {"distributedInfo": {"rank": rank, "world_size": 4}, "traceEvents": ev}


def four_ranks():
    with tempfile.TemporaryDirectory() as d:
        for r, us in enumerate([100, 102, 140, 99]):
            with open(os.path.join(d, f"rank{r}.json"), "w") as f:
                json.dump(rank_trace(r, us), f)
        j = analyze(d)
        sg = {x["rank"]: x for x in j["stragglers"]}
        check(sorted(sg) == [0, 1, 2, 3], f"4 ranks: stragglers rows {sorted(sg)}")
        check(sg[2]["straggler"] and sg[2]["outlier"], "4 ranks: rank 2 not flagged")
        check(sg[2]["by_compute"] == 1, "4 ranks: rank 2 not first by compute")
        check(all(not sg[r]["outlier"] for r in (0, 1, 3)), "4 ranks: a normal rank flagged")
        check(sg[2]["compute_us"] == 2 * 10 * 140, f"4 ranks: rank 2 compute {sg[2]['compute_us']}")
        # a huge threshold flags nobody
        j2 = analyze("--straggler-z", "1000", d)
        check(not any(x["outlier"] for x in j2["stragglers"]), "--straggler-z 1000 still flags")
        # the text report says the same
        p = subprocess.run([BIN, "analyze", d], capture_output=True, text=True)
        lines = p.stdout.splitlines()
        flagged = [l for l in lines if l.rstrip().endswith("STRAGGLER")]
        check(p.returncode == 0 and len(flagged) == 1 and flagged[0].split()[0] == "2",
              f"4 ranks text: straggler rows {flagged}")
        for want in ("CPU/GPU timeline: span", "steps (ProfilerStep#N", "ranks by GPU compute time"):
            check(any(l.startswith(want) for l in lines), f"4 ranks text: no '{want}'")
        bad = subprocess.run([BIN, "analyze", "--straggler-z", "-1", d], capture_output=True,
                             text=True)
        check(bad.returncode == 2 and "--straggler-z" in bad.stderr,
              f"--straggler-z -1: exit {bad.returncode} {bad.stderr.strip()}")
        st = [s for s in j["steps"] if s["rank"] == 2]
        # 10 gemms by launch + the nccl kernel (no launch) by its own start
        check(len(st) == 2 and all(s["kernels"] == 11 for s in st), f"4 ranks: steps {st}")
        check(all(s["gpu_busy_us"] == 1400 + 300 for s in st), f"4 ranks: step busy {st}")
        check(all(s["compute_us"] == 1400 for s in st), f"4 ranks: step compute {st}")


def sampled_2rank():
    path = os.path.join(TRACES, "sampled_2rank")
    if not os.path.isdir(path):
        print(f"note: {path} missing, 2-rank check skipped")
        return
    j = analyze(path)
    sg = sorted(j["stragglers"], key=lambda x: x["by_compute"])
    check(len(sg) == 2, "sampled_2rank: 2 straggler rows")
    tb = {x["rank"]: x for x in j["temporal_breakdown"]}
    check(sg[0]["compute_us"] >= sg[1]["compute_us"], "sampled_2rank: order by compute")
    check(all(abs(tb[x["rank"]]["compute_us"] - x["compute_us"]) < 1e-6 for x in sg),
          "sampled_2rank: compute differs from temporal_breakdown")
    # two ranks: robust z is +-0.6745, never an outlier
    check(all(not x["outlier"] and abs(abs(x["compute_z"]) - 0.6745) < 1e-9 for x in sg),
          f"sampled_2rank: z {sg}")


def invariants():
    if not os.path.isdir(TRACES):
        print(f"note: {TRACES} missing, invariant checks skipped")
        return
    for d in sorted(os.listdir(TRACES)):
        path = os.path.join(TRACES, d)
        if not os.path.isdir(path):
            continue
        j = analyze(path)
        for t in j["timeline_stats"]:
            if t["gpu_active_us"] is None:
                parts = t["cpu_active_us"] + t["idle_us"]
            else:
                parts = t["cpu_only_us"] + t["gpu_only_us"] + t["overlap_us"] + t["idle_us"]
                check(t["overlap_us"] <= min(t["cpu_active_us"], t["gpu_active_us"]) + 1e-6,
                      f"{d}: overlap > activity")
            check(abs(parts - t["span_us"]) < 1e-3, f"{d}: timeline parts {parts} != span {t}")
        for s in j["steps"]:
            if s["gpu_span_us"] is not None:
                check(abs(s["gpu_busy_us"] + s["gpu_idle_us"] - s["gpu_span_us"]) < 1e-3,
                      f"{d}: step busy+idle != span {s}")
                check(s["compute_us"] <= s["gpu_busy_us"] + 1e-6, f"{d}: step compute > busy")
        for w in j["memory_bandwidth"]:
            check(w["sized"] <= w["count"], f"{d}: sized > count")
            if w["gbps"] is not None:
                check(w["gbps_max"] >= w["gbps_p50"] > 0, f"{d}: bandwidth distribution {w}")
        kinds = {w["kind"] for w in j["memory_bandwidth"]}
        check(kinds <= {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "Memset", "unknown"},
              f"{d}: kinds {kinds}")


def load(path):
    import glob
    import gzip
    from decimal import Decimal
    f = [x for x in glob.glob(os.path.join(path, "*.json*")) if "expected" not in x][0]
    raw = gzip.open(f).read() if f.endswith(".gz") else open(f, "rb").read()
    return f, json.loads(raw, parse_float=Decimal)  # exact ns digits


def union(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def reference():
    """timeline_stats and memory_bandwidth recomputed here from the JSON."""
    from decimal import Decimal
    ns = lambda x: int((Decimal(x) * 1000).to_integral_value())
    for d in ("ns_resolution", "nccl_data", "legacy_inference", "sampled_2rank"):
        path = os.path.join(TRACES, d)
        if not os.path.isdir(path):
            continue
        f, j = load(path)
        cpu, gpu, copies = [], [], {}
        for e in j["traceEvents"]:
            if e.get("ph") != "X" or "dur" not in e:
                continue
            a = ns(e["ts"])
            b = a + ns(e["dur"])
            cat = e.get("cat")
            if cat in ("gpu_memcpy", "gpu_memset", "Memcpy", "Memset"):
                nm = e["name"]
                kind = "Memset" if "Memset" in cat or "emset" in nm else next(
                    (k for k in ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP") if k in nm), "unknown")
                c = copies.setdefault(kind, [0, 0, 0])
                c[0] += 1
                c[1] += int(e.get("args", {}).get("bytes", 0))
                c[2] += b - a
            if b <= a:
                continue
            if cat in ("cpu_op", "cuda_runtime", "cuda_driver", "Operator", "Runtime"):
                cpu.append((a, b))
            if cat in ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"):
                gpu.append((a, b))
        C, G = union(cpu), union(gpu)
        ov, i, k = 0, 0, 0
        while i < len(C) and k < len(G):
            ov += max(0, min(C[i][1], G[k][1]) - max(C[i][0], G[k][0]))
            if C[i][1] < G[k][1]:
                i += 1
            else:
                k += 1
        r = analyze(f)
        t = r["timeline_stats"][0]
        want = (sum(b - a for a, b in C), sum(b - a for a, b in G), ov)
        got = tuple(round(t[k] * 1000) for k in ("cpu_active_us", "gpu_active_us", "overlap_us"))
        check(want == got, f"{d}: timeline cpu/gpu/overlap ns {got}, reference {want}")
        bw = {w["kind"]: w for w in r["memory_bandwidth"]}
        check(sorted(bw) == sorted(copies), f"{d}: copy kinds {sorted(bw)} vs {sorted(copies)}")
        for kind, (cnt, byt, tns) in copies.items():
            w = bw.get(kind, {})
            check(w.get("count") == cnt and w.get("bytes") == byt and
                  round(w.get("time_us", -1) * 1000) == tns, f"{d}: {kind} {w} vs {cnt} {byt} {tns}")


def near_int64_limit():
    """--compat hta rounds times up to whole microseconds; a time within one
    of the int64 limit (valid: it fits int64 ns) rounded past it, and
    b * 1000 overflowed (UB: the sanitizer build aborted). The figures must
    equal those of the same trace 2e14 us earlier (the same double spacing,
    2, so HTA's float rounding is the same)."""
    top = 9223372036854775

    def trace(shift):
        ev = [("cpu_op", "op", 1, 1, top - 9, 1, "1", None),
              ("cuda_runtime", "cudaLaunchKernel", 1, 1, top - 8, 2, "0.5", 1),
              ("kernel", "k1", 0, 7, top - 2, 4, "1.3", 1),
              ("cuda_runtime", "cudaLaunchKernel", 1, 1, top - 3, 2, "0.5", 2),
              ("kernel", "k2", 0, 7, top, 3, "0.4", 2)]
        out = []
        for cat, name, pid, tid, us, frac, dur, corr in ev:
            args = {"correlation": corr, "External id": corr} if corr else {"External id": 1}
            if cat == "kernel":
                args.update({"device": 0, "stream": 7})
            # written by hand: a Python float cannot hold these timestamps
            out.append('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%d.%d,'
                       '"dur":%s,"args":%s}' % (cat, name, pid, tid, us - shift, frac, dur,
                                                json.dumps(args)))
        return '{"traceEvents":[' + ",".join(out) + "]}"

    with tempfile.TemporaryDirectory() as tmp:
        got = []
        for shift in (0, 2 * 10**14):
            d = os.path.join(tmp, str(shift))
            os.mkdir(d)
            with open(os.path.join(d, "t.json"), "w") as f:
                f.write(trace(shift))
            p = subprocess.run([BIN, "analyze", "--compat", "hta", "--json", "t.json"], cwd=d,
                               capture_output=True, text=True)
            check(p.returncode == 0 and not p.stderr,
                  f"near the int64 limit, shift {shift}: exit {p.returncode}: {p.stderr[-300:]}")
            got.append(p.stdout)
        check(got[0] == got[1] and '"k2"' in got[0],
              "near the int64 limit: --compat hta figures differ from the shifted trace's")
        # a duration within a microsecond of the limit: the double of its end
        # rounds past it, so its rounded end does not fit (it keeps its
        # exact times, which do)
        long = os.path.join(tmp, "long.json")
        with open(long, "w") as f:
            f.write('{"traceEvents":['
                    '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0.5,"dur":1},'
                    '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,'
                    '"dur":9223372036854774.5,"args":{"stream":7,"device":0}}]}')
        p = subprocess.run([BIN, "analyze", "--compat", "hta", "--json", long],
                           capture_output=True, text=True)
        check(p.returncode == 0 and not p.stderr and '"kernel_span_us":9223372036854774' in p.stdout,
              f"duration near the int64 limit: exit {p.returncode}: {p.stderr[-300:]}")
        # CPU and GPU each active over half of a span near the limit: the
        # idle time summed cpu + gpu first, which overflowed
        halves = os.path.join(tmp, "halves.json")
        with open(halves, "w") as f:
            f.write('{"traceEvents":['
                    '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,'
                    '"dur":5000000000000000},'
                    '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4000000000000000,'
                    '"dur":5000000000000000,"args":{"stream":7,"device":0}}]}')
        p = subprocess.run([BIN, "analyze", "--json", halves], capture_output=True, text=True)
        ts = json.loads(p.stdout)["timeline_stats"][0] if p.returncode == 0 else {}
        check(p.returncode == 0 and not p.stderr and ts.get("idle_us") == 0 and
              ts.get("overlap_us") == 1e15,
              f"CPU and GPU over half a span near the limit: exit {p.returncode}: {ts} "
              f"{p.stderr[-300:]}")
        # three kernels and three copies each about 146 years long, each on
        # a stream of its own: the per-name and bandwidth totals saturate at
        # the int64 limit instead of wrapping (analyze --json printed
        # top_kernels sum_us -4646744073709552 and copy bytes
        # -6446744073709551616; UB, the sanitizer build aborted)
        century = os.path.join(tmp, "century.json")
        ev = []
        for i in range(3):
            ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7 + i, "ts": 1,
                       "dur": 4600000000000000, "args": {"device": 0, "stream": 7 + i}})
            ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0,
                       "tid": 17 + i, "ts": 1, "dur": 4600000000000000,
                       "args": {"device": 0, "stream": 17 + i, "bytes": 4000000000000000000}})
            # nested CPU ops (the flame graph subtracts children from parents)
            ev.append({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 0, "tid": 1, "ts": 1 + i,
                       "dur": 4600000000000000})
        with open(century, "w") as f:
            json.dump({"traceEvents": ev}, f)

        def negatives(x, path=""):
            if isinstance(x, dict):
                return [n for k, v in x.items() for n in negatives(v, path + "." + k)]
            if isinstance(x, list):
                return [n for i, v in enumerate(x) for n in negatives(v, "%s[%d]" % (path, i))]
            return [(path, x)] if isinstance(x, (int, float)) and x < 0 else []

        for cmd in (["summary", "--json"], ["analyze", "--json"], ["flame", "--json"]):
            p = subprocess.run([BIN, *cmd, century], capture_output=True, text=True)
            neg = negatives(json.loads(p.stdout)) if p.returncode == 0 else []
            check(p.returncode == 0 and not p.stderr and not neg,
                  f"century-long events, {' '.join(cmd)}: exit {p.returncode}: {neg[:5]} "
                  f"{p.stderr[-300:]}")
        # the flame graph's other outputs: speedscope weights, folded counts
        ss = os.path.join(tmp, "century.speedscope.json")
        fo = os.path.join(tmp, "century.folded")
        p = subprocess.run([BIN, "flame", century, "-o", ss], capture_output=True, text=True)
        neg = negatives(json.load(open(ss))) if p.returncode == 0 else ["exit"]
        check(not neg, f"century-long events, flame speedscope: {neg[:5]} {p.stderr[-300:]}")
        p = subprocess.run([BIN, "flame", century, "-o", fo], capture_output=True, text=True)
        neg = [l for l in open(fo).read().splitlines() if int(l.rsplit(" ", 1)[1]) < 0] \
            if p.returncode == 0 else ["exit"]
        check(not neg and "total -" not in p.stderr,
              f"century-long events, flame folded: {neg[:5]} {p.stderr[-300:]}")


def main():
    four_ranks()
    near_int64_limit()
    reference()
    sampled_2rank()
    invariants()
    df = os.path.join(TRACES, "df_index_resolver")
    if os.path.isdir(df):  # figures checked by hand against the trace (see docs/analyze.md)
        j = analyze(df)
        dtod = [w for w in j["memory_bandwidth"] if w["kind"] == "DtoD"][0]
        check(dtod["count"] == 2040 and dtod["bytes"] == 5892787600, f"df: DtoD {dtod}")
        check(abs(dtod["gbps"] - dtod["bytes"] / (dtod["time_us"] * 1000)) < 1e-9, "df: gbps")
        check(len(j["steps"]) == 5, f"df: {len(j['steps'])} steps")
        txt = subprocess.run([BIN, "analyze", df], capture_output=True, text=True).stdout
        row = [l.split() for l in txt.splitlines() if l.startswith("DtoD ")]
        check(any(r[1] == "2040" for r in row), f"df text: DtoD row {row}")
    for f in failures:
        print("FAIL", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
