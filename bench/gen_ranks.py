#!/usr/bin/env python3
"""Writes a folder of synthetic Kineto rank traces (issue 19, part 5).

    gen_ranks.py OUTDIR --ranks N [--mb MB] [--seed S] [--variety] [--jobs J]

Each rank file holds ProfilerStep#k annotations with CPU ops, CUDA runtime
launches (correlation ids) and the GPU kernels, copies, memsets and NCCL
kernels they launch, about MB megabytes of JSON per rank (default 1).
Durations differ per rank (seeded), and the last rank is a straggler (its
compute kernels take longer), so that the cross-rank tables have content.

--variety (used by tests/t_analyze_shard.py) mixes in the cases whose
handling depends on all the files together: ranks numbered by their file
name or by their position instead of distributedInfo, two files claiming the
same rank, ranks with a single ProfilerStep name or none, fractional
microsecond timestamps, a kernel name that is not valid UTF-8, an .json.gz
rank, a trace without events and a JSON file that is no trace.
"""
import argparse
import gzip
import os
import random
import sys
from multiprocessing import Pool

KERNELS = [
    ("ampere_sgemm_128x64_tn", 1.0),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >", 0.15),
    ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>", 0.8),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >", 0.2),
    ("triton__0d1d2d3de", 0.3),
]


def rank_events(i, n, mb, seed, variety):
    """Yields the JSON text of rank i's events (one string per event)."""
    rnd = random.Random(seed * 1000003 + i)
    slow = 1.6 if i == n - 1 else 1.0
    frac = variety and i % 5 == 2  # fractional microseconds
    steps_mode = "many"
    if variety:
        steps_mode = {3: "one", 4: "none"}.get(i % 7, "many")
    pid, tid, gpid = 1000 + i, 1000 + i, 0
    t = 1700000000000000 + rnd.randrange(0, 500)
    corr = 1
    target = int(mb * 1e6)
    out = 0
    step = 0
    bad_name = variety and i % 6 == 1
    while out < target or step < 2:
        name = "ProfilerStep#%d" % (step if steps_mode == "many" else 7 + (i // 7) % 2)
        ops = []
        s0 = t
        for k in range(40):
            kname, w = KERNELS[rnd.randrange(len(KERNELS))]
            if bad_name and k == 3:
                kname = "bad_\xff_kernel"
            kd = round(w * rnd.uniform(5, 40) * (slow if w >= 0.8 else 1.0), 3)
            ld = round(rnd.uniform(2, 9), 3)
            ts = t + rnd.uniform(0, 3) if frac else t + rnd.randrange(0, 3)
            fmt = "%.3f" if frac else "%d"
            tss = fmt % ts
            ops.append('{"ph":"X","cat":"cpu_op","name":"aten::op%d","pid":%d,"tid":%d,'
                       '"ts":%s,"dur":%.3f,"args":{"External id":%d}}' %
                       (k % 9, pid, tid, tss, ld + 2, corr))
            ops.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":%d,'
                       '"tid":%d,"ts":%s,"dur":%.3f,"args":{"External id":%d,"correlation":%d}}' %
                       (pid, tid, tss, ld, corr, corr))
            gts = ts + ld + rnd.uniform(1, 20)
            ops.append('{"ph":"X","cat":"kernel","name":"%s","pid":%d,"tid":7,"ts":%s,'
                       '"dur":%.3f,"args":{"External id":%d,"device":0,"stream":7,'
                       '"correlation":%d,"grid":[108,1,1],"block":[256,1,1]}}' %
                       (kname, gpid, "%.3f" % gts, kd, corr, corr))
            corr += 1
            if k % 10 == 9:  # a copy, a memset and an all-reduce now and then
                for cat, nm, st, extra in (
                    ("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 8, ',"bytes":4194304'),
                    ("gpu_memset", "Memset (Device)", 8, ',"bytes":4096'),
                    ("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 20, ""),
                ):
                    d = round(rnd.uniform(3, 60), 3)
                    api = "cudaMemcpyAsync" if cat == "gpu_memcpy" else (
                        "cudaMemsetAsync" if cat == "gpu_memset" else "cudaLaunchKernel")
                    ops.append('{"ph":"X","cat":"cuda_runtime","name":"%s","pid":%d,"tid":%d,'
                               '"ts":%s,"dur":3.5,"args":{"External id":%d,"correlation":%d}}' %
                               (api, pid, tid, fmt % (ts + 1), corr, corr))
                    ops.append('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%.3f,'
                               '"dur":%.3f,"args":{"External id":%d,"device":0,"stream":%d,'
                               '"correlation":%d%s}}' %
                               (cat, nm, gpid, st, gts + kd + 1, d, corr, st, corr, extra))
                    corr += 1
            t = gts + kd + rnd.uniform(0, 4)
            t = t if frac else int(t) + 1
        if steps_mode != "none":
            ops.append('{"ph":"X","cat":"user_annotation","name":"%s","pid":%d,"tid":%d,'
                       '"ts":%s,"dur":%.3f,"args":{"External id":0}}' %
                       (name, pid, tid, ("%.3f" if frac else "%d") % s0, t - s0))
        for e in ops:
            out += len(e) + 1
            yield e
        step += 1
        t += rnd.randrange(10, 200)


def write_rank(job):
    outdir, i, n, mb, seed, variety = job
    dist = True
    fname = "rank_%04d.json" % i
    if variety:
        if i % 7 == 1:  # rank from the file name
            dist, fname = False, "worker-rank%d.trace.json" % (i + 100)
        elif i % 7 == 2:  # no rank at all: its position
            dist, fname = False, "host_%04d_trace.json" % i
        elif i % 7 == 5 and i > 5:  # the same rank as file i - 5... by name
            dist, fname = False, "dup_rank%d.json" % (i - 5)
        if i == 4:
            fname += ".gz"
    head = '{"schemaVersion":1,'
    if dist:
        head += '"distributedInfo":{"backend":"nccl","rank":%d,"world_size":%d},' % (i, n)
    path = os.path.join(outdir, fname)
    opener = gzip.open if fname.endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write((head + '"traceEvents":[\n').encode())
        first = True
        buf = []
        for e in rank_events(i, n, mb, seed, variety):
            buf.append(e if first else "," + e)
            first = False
            if len(buf) >= 4096:
                f.write("\n".join(buf).encode("utf-8", "surrogateescape").replace(
                    b"\xc3\xbf", b"\xff"))
                f.write(b"\n")
                buf = []
        if buf:
            f.write("\n".join(buf).encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
        f.write(b'\n],"traceName":"synthetic"}\n')
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variety", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    jobs = [(a.outdir, i, a.ranks, a.mb, a.seed, a.variety) for i in range(a.ranks)]
    if a.jobs > 1:
        with Pool(a.jobs) as p:
            p.map(write_rank, jobs)
    else:
        for j in jobs:
            write_rank(j)
    if a.variety:
        with open(os.path.join(a.outdir, "empty_rank_trace.json"), "w") as f:
            f.write('{"schemaVersion":1,"traceEvents":[]}\n')
        with open(os.path.join(a.outdir, "expected.json"), "w") as f:
            f.write('{"note":"not a trace"}\n')
    return 0


if __name__ == "__main__":
    sys.exit(main())
