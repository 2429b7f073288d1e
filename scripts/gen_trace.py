#!/usr/bin/env python3
"""Generates a realistic PyTorch-profiler (Kineto) style trace: a training
loop of ProfilerStep#N steps, each with forward/backward CPU operators that
launch kernels through cudaLaunchKernel on two CUDA streams, host<->device
copies, memsets, an NCCL all-reduce, cudaDeviceSynchronize, [memory]
alloc/free events and ac2g flows. Deterministic for a given --seed.

usage: gen_trace.py OUT.json[.gz] [--steps N] [--seed S] [--rank R]
"""
import argparse, gzip, json, random

KERNELS = [
    ("ampere_sgemm_128x64_tn", 180.0),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", 9.0),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", 22.0),
    ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>", 45.0),
    ("void at::native::softmax_warp_forward<float, float, float, 10, false>", 14.0),
]
OPS = [("aten::linear", 0, "aten::addmm"), ("aten::add", 1, None), ("aten::sum", 2, None),
       ("aten::batch_norm", 3, "aten::_batch_norm_impl_index"), ("aten::softmax", 4, "aten::_softmax")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rank", type=int, default=0)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    pid, tid = 4242, 4242
    ev = []
    base_us = 1700000000000000  # integer epoch microseconds, as Kineto writes
    t = 0.0  # CPU clock, microseconds since base (float, ns precision)
    gpu_free = {7: 0.0, 13: 0.0}
    corr = 1000
    ext = 1
    flow_id = 1
    addr = 0x7f0000000000
    allocated = 0
    live = []

    def X(cat, name, p, th, ts, dur, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": p, "tid": th,
             "ts": round(base_us + ts, 3), "dur": round(dur, 3)}
        if args:
            e["args"] = args
        ev.append(e)

    def launch(kname, kdur, stream, ext_id, cat="kernel", extra=None, rname="cudaLaunchKernel"):
        nonlocal t, corr
        corr += 1
        rdur = rnd.uniform(3.0, 9.0)
        X("cuda_runtime", rname, pid, tid, t, rdur, {"External id": ext_id, "cbid": 211, "correlation": corr})
        ev.append({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": round(base_us + t, 3), "cat": "ac2g", "name": "ac2g"})
        start = max(t + rnd.uniform(2.0, 6.0), gpu_free[stream] + rnd.uniform(0.5, 2.0))
        d = kdur * rnd.uniform(0.9, 1.1)
        args = {"External id": ext_id, "device": 0, "context": 1, "stream": stream, "correlation": corr}
        if cat == "kernel":
            args.update({"registers per thread": 64, "shared memory": 4096, "grid": [108, 1, 1], "block": [256, 1, 1],
                         "blocks per SM": 1.0, "warps per SM": 8.0, "est. achieved occupancy %": 25})
        if extra:
            args.update(extra)
        X(cat, kname, 0, stream, start, d, args)
        ev.append({"ph": "f", "id": corr, "pid": 0, "tid": stream, "ts": round(base_us + start, 3), "cat": "ac2g", "name": "ac2g", "bp": "e"})
        gpu_free[stream] = start + d
        t += rdur

    def mem(nbytes):
        nonlocal addr, allocated
        if nbytes > 0:
            addr += 1 << 20
            a0 = addr
            live.append((a0, nbytes))
        else:
            a0, n = live.pop(0)
            nbytes = -n
        allocated += nbytes
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid, "tid": tid,
                   "ts": round(base_us + t, 3), "args": {"Device Type": 1, "Device Id": 0, "Addr": a0, "Bytes": nbytes,
                                                        "Total Allocated": allocated, "Total Reserved": 1 << 30}})

    t = 100.0
    for step in range(a.steps + 1):
        step_start = t
        # copy the batch in
        ext += 1
        op_start = t
        t += 2.0
        launch("Memcpy HtoD (Pinned -> Device)", 120.0, 7, ext, cat="gpu_memcpy", extra={"bytes": 4 << 20}, rname="cudaMemcpyAsync")
        X("cpu_op", "aten::copy_", pid, tid, op_start, t - op_start + 1.0, {"External id": ext})
        t += 3.0
        for rep in range(6):
            for name, k, child in OPS:
                ext += 1
                op_start = t
                t += rnd.uniform(4.0, 12.0)
                mem(rnd.choice([1, 2, 4]) << 20)
                if child:
                    c0 = t
                    t += 2.0
                    launch(KERNELS[k][0], KERNELS[k][1], 7 if rep % 3 else 13, ext)
                    t += 2.0
                    X("cpu_op", child, pid, tid, c0, t - c0, {"External id": ext + 100000})
                else:
                    launch(KERNELS[k][0], KERNELS[k][1], 7, ext)
                t += rnd.uniform(2.0, 5.0)
                X("cpu_op", name, pid, tid, op_start, t - op_start, {"External id": ext})
                if len(live) > 12:
                    mem(-1)
        ext += 1
        launch("Memset (Device)", 3.0, 7, ext, cat="gpu_memset", extra={"bytes": 4096}, rname="cudaMemsetAsync")
        ext += 1
        launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 350.0, 13, ext)
        # wait for the GPU
        sync_start = t
        end_gpu = max(gpu_free.values())
        t = max(t + 5.0, end_gpu + 3.0)
        corr_sync = corr + 1
        X("cuda_runtime", "cudaDeviceSynchronize", pid, tid, sync_start, t - sync_start, {"correlation": corr_sync})
        t += 20.0
        X("user_annotation", "ProfilerStep#%d" % step, pid, tid, step_start, t - step_start, {"External id": 0})
        t += 5.0
    ev.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
               "ts": base_us + 50, "dur": round(t, 3)})
    meta = [
        {"name": "process_name", "ph": "M", "ts": base_us, "pid": pid, "tid": 0, "args": {"name": "python3"}},
        {"name": "thread_name", "ph": "M", "ts": base_us, "pid": pid, "tid": tid, "args": {"name": "thread %d (python3)" % tid}},
        {"name": "process_name", "ph": "M", "ts": base_us, "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": base_us, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
    ]
    doc = {"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": a.rank, "world_size": 2},
           "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85031714816,
                                 "computeMajor": 8, "computeMinor": 0, "numSms": 108, "warpSize": 32,
                                 "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
                                 "regsPerBlock": 65536, "regsPerMultiprocessor": 65536,
                                 "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,
                                 "sharedMemPerBlockOptin": 166912}],
           "traceEvents": meta + ev, "traceName": a.out}
    text = json.dumps(doc, indent=1)
    if a.out.endswith(".gz"):
        with gzip.open(a.out, "wt") as f:
            f.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
