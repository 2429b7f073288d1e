#!/usr/bin/env python3
"""bench/gpu/cuda_timer_check.py: issue-4 GPU check. The saxpy kernel of
examples/cuda_saxpy.cu (bench/gpu/cuda_timer_check.cu) timed by libgpuprof's
CUDA-event timer (gp_cuda_begin/_end), compared with
  1. torch.cuda.Event on the very same launches (when torch is importable):
     both timers bracket each launch; run twice, torch's events outside
     libgpuprof's and then inside, so the bias of the nesting shows;
  2. ncu's gpu__time_duration.sum of the same kernel in a separate run of
     the program (when ncu exists; clocks and caches not touched by ncu).
Prints a report (mean/min/max per timer and the differences); there is no
pass/fail goal in issue 4, the differences are reported. Exit status: 0 when
the report was produced, 77 when there is no CUDA device, 1 on a harness
error (a program failed, output could not be parsed)."""
import argparse
import csv
import ctypes
import io
import json
import os
import shutil
import subprocess
import sys


def prog_env(cuda_lib):
    """The stand-alone program's environment: libgpuprof dlopens libcudart, so
    the toolkit's lib64 goes on LD_LIBRARY_PATH (only for it: in the torch
    process, torch's own libcudart is the one to share)."""
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = cuda_lib + (":" + env["LD_LIBRARY_PATH"]
                                         if env.get("LD_LIBRARY_PATH") else "")
    return env


def run_program(prog, n, iters, env):
    """libgpuprof's statistics from the stand-alone program, or None (exit 77)."""
    r = subprocess.run([prog, str(n), str(iters)], capture_output=True, text=True, env=env)
    if r.returncode == 77:
        return None
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (prog, r.returncode, r.stderr.strip()))
    return json.loads(r.stdout.strip().splitlines()[-1])


def with_torch(lib_path, n, iters):
    """Per-launch torch.cuda.Event times and libgpuprof's statistics of the
    same launches, for both nestings. Returns a list of result dicts."""
    import torch  # only here: --help and the other parts work without it

    lib = ctypes.CDLL(lib_path)
    lib.tc_create.restype = ctypes.c_void_p
    lib.tc_error.restype = ctypes.c_char_p
    lib.tc_error.argtypes = [ctypes.c_void_p]
    for f in (lib.tc_begin, lib.tc_end):
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.tc_launch.argtypes = [ctypes.c_int, ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p]
    ll = ctypes.POINTER(ctypes.c_longlong)
    lib.tc_stats.argtypes = [ctypes.c_void_p, ll, ll, ll, ll]
    lib.tc_destroy.argtypes = [ctypes.c_void_p]
    x = torch.ones(n, device="cuda")
    y = torch.zeros(n, device="cuda")
    stream = torch.cuda.current_stream()
    sh = ctypes.c_void_p(stream.cuda_stream)
    for _ in range(10):  # warm-up, untimed
        lib.tc_launch(n, 2.0, x.data_ptr(), y.data_ptr(), sh)
    torch.cuda.synchronize()
    results = []
    for torch_outside in (True, False):
        p = lib.tc_create()
        if not p:
            raise RuntimeError("gp_profiler_create failed")
        events = []
        for _ in range(iters):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            if torch_outside:
                a.record(stream)
            if lib.tc_begin(p, sh):
                raise RuntimeError("gp_cuda_begin: %s" % lib.tc_error(p).decode())
            if not torch_outside:
                a.record(stream)
            if lib.tc_launch(n, 2.0, x.data_ptr(), y.data_ptr(), sh):
                raise RuntimeError("saxpy launch failed")
            if not torch_outside:
                b.record(stream)
            lib.tc_end(p, sh)
            if torch_outside:
                b.record(stream)
            events.append((a, b))
        torch.cuda.synchronize()
        t_ns = [a.elapsed_time(b) * 1e6 for a, b in events]  # ms -> ns
        c, tot, mn, mx = (ctypes.c_longlong() for _ in range(4))
        if lib.tc_stats(p, ctypes.byref(c), ctypes.byref(tot), ctypes.byref(mn), ctypes.byref(mx)):
            raise RuntimeError("no libgpuprof timings: %s" % lib.tc_error(p).decode())
        lib.tc_destroy(p)
        results.append({"nesting": "torch.cuda.Event outside" if torch_outside
                        else "torch.cuda.Event inside",
                        "gp": {"count": c.value, "total_ns": tot.value, "min_ns": mn.value,
                               "max_ns": mx.value},
                        "torch": {"count": len(t_ns), "total_ns": sum(t_ns), "min_ns": min(t_ns),
                                  "max_ns": max(t_ns)}})
    return results


def with_ncu(ncu, prog, n, iters, env):
    """ncu's gpu__time_duration.sum per saxpy launch (ns), in a separate run."""
    cmd = [ncu, "--metrics", "gpu__time_duration.sum", "--csv", "--print-units", "base",
           "--clock-control", "none", "--cache-control", "none", "-k", "saxpy",
           "--launch-skip", "10", "--launch-count", str(iters), prog, str(n), str(iters)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("ncu failed (%d): %s" % (r.returncode, (r.stderr or r.stdout)[-800:]))
    lines = r.stdout.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        raise RuntimeError("no CSV table in ncu's output: %s" % r.stdout[-800:])
    vals, unit = [], None
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        unit = row.get("Metric Unit")
        vals.append(float(row["Metric Value"].replace(",", "")))
    if not vals:
        raise RuntimeError("ncu reported no gpu__time_duration.sum rows")
    scale = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6,
             "ms": 1e6, "second": 1e9, "s": 1e9}.get(unit)
    if scale is None:
        raise RuntimeError("unexpected ncu unit %r" % unit)
    return [v * scale for v in vals], " ".join(cmd)


def pct(a, b):
    return 100.0 * (a - b) / b if b else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prog", required=True, help="the cuda_timer_check program (TC_MAIN build)")
    ap.add_argument("--lib", required=True, help="libtc.so (shared-library build)")
    ap.add_argument("--ncu", default=shutil.which("ncu"), help="ncu path (default: from PATH)")
    ap.add_argument("--cuda-lib", default="/usr/local/cuda/lib64",
                    help="libcudart folder for the stand-alone program (default /usr/local/cuda/lib64)")
    ap.add_argument("--no-torch", action="store_true", help="skip the torch.cuda.Event part")
    ap.add_argument("-n", type=int, default=1 << 24, help="vector length (default 2^24)")
    ap.add_argument("--iters", type=int, default=200, help="timed launches (default 200)")
    a = ap.parse_args()

    print("# issue 4: libgpuprof CUDA-event timer vs torch.cuda.Event and ncu, saxpy n=%d" % a.n)
    try:
        env = prog_env(a.cuda_lib)
        base = run_program(a.prog, a.n, a.iters, env)
        if base is None:
            print("no CUDA device: nothing measured")
            return 77
        gmean = base["total_ns"] / base["count"]
        print("\n## libgpuprof alone (%s, %d launches after 10 untimed)" % (a.prog, base["count"]))
        print("mean %.0f ns  min %d ns  max %d ns" % (gmean, base["min_ns"], base["max_ns"]))

        print("\n## the same launches timed by torch.cuda.Event and libgpuprof")
        if a.no_torch:
            print("skipped (--no-torch)")
        else:
            try:
                import torch  # noqa: F401
                have_torch = True
            except ImportError as e:
                print("skipped: torch not importable (%s)" % e)
                have_torch = False
            if have_torch:
                for r in with_torch(a.lib, a.n, a.iters):
                    g, t = r["gp"], r["torch"]
                    gm, tm = g["total_ns"] / g["count"], t["total_ns"] / t["count"]
                    print("%s: %d launches" % (r["nesting"], g["count"]))
                    print("  libgpuprof  mean %10.0f ns  min %10.0f  max %10.0f"
                          % (gm, g["min_ns"], g["max_ns"]))
                    print("  torch       mean %10.0f ns  min %10.0f  max %10.0f"
                          % (tm, t["min_ns"], t["max_ns"]))
                    print("  difference of the means: %+.0f ns (%+.2f %% of torch's)"
                          % (gm - tm, pct(gm, tm)))

        print("\n## ncu gpu__time_duration.sum (separate run of the program)")
        if not a.ncu:
            print("skipped: ncu not found")
        else:
            try:
                vals, cmd = with_ncu(a.ncu, a.prog, a.n, a.iters, env)
            except RuntimeError as e:  # e.g. no permission for the counters
                print("not done: %s" % e)
                return 0
            nm = sum(vals) / len(vals)
            print("command: %s" % cmd)
            print("ncu         mean %10.0f ns  min %10.0f  max %10.0f  (%d launches)"
                  % (nm, min(vals), max(vals), len(vals)))
            print("libgpuprof  mean %10.0f ns  (run above, without ncu)" % gmean)
            print("difference of the means: %+.0f ns (%+.2f %% of ncu's)" % (gmean - nm,
                                                                           pct(gmean, nm)))
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        print("HARNESS ERROR: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
