#!/usr/bin/env python3
"""t_analyze_hta.py: `gpuprof analyze --compat hta --json` must agree with
HTA 0.6.1's reference numbers (expected.hta.json) on every shared trace:
integer-microsecond figures exactly, percentages within 0.01, top-kernel
sums exactly. Every key and row present in the reference is checked."""
import json
import os
import subprocess
import sys

BIN = os.environ.get("GPUPROF_BIN", "gpuprof")
SRC = os.environ.get("GPUPROF_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
TRACES = os.environ.get("GPUPROF_TRACES", os.path.join(SRC, "..", "shared", "traces"))

# rows of each list are matched on these keys
ROW_KEYS = {
    "temporal_breakdown": ("rank",),
    "kernel_type_breakdown": ("type",),
    "top_kernels": ("rank", "type", "name"),
    "comm_comp_overlap": ("rank",),
    "idle_breakdown": ("rank", "stream"),
    "launch_stats": ("rank",),
    "queue_length": ("rank", "stream"),
}


def close(key, exp, got):
    if exp is None or got is None:
        return exp is None and got is None
    if isinstance(exp, str):
        return exp == got
    if key.endswith("pct"):
        return abs(exp - got) <= 0.01 + 1e-9
    if key.startswith("mean") or key.startswith("std"):
        return abs(exp - got) <= 1e-6 * max(1.0, abs(exp))
    return exp == got  # integer-valued figures (us, counts): exact


def compare(folder, exp, got):
    errs = []
    for sect, want in exp.items():
        if sect == "reference":
            continue
        if sect not in got:
            errs.append(f"{sect}: missing")
            continue
        have = got[sect]
        if sect == "ranks":
            if sorted(want) != sorted(have):
                errs.append(f"ranks: expected {want}, got {have}")
            continue
        keys = ROW_KEYS[sect]
        index = {tuple(r.get(k) for k in keys): r for r in have}
        for row in want:
            k = tuple(row.get(x) for x in keys)
            g = index.get(k)
            if g is None:
                errs.append(f"{sect}{k}: row missing")
                continue
            for f, v in row.items():
                if f in keys:
                    continue
                if f not in g or not close(f, v, g[f]):
                    errs.append(f"{sect}{k}.{f}: expected {v}, got {g.get(f)}")
        # rows we report that HTA does not: only zero-length overlap states
        # (their presence depends on HTA's unstable sort order at ties)
        wanted = {tuple(r.get(x) for x in keys) for r in want}
        for k, g in index.items():
            if k in wanted:
                continue
            if sect == "kernel_type_breakdown" and g["us"] == 0:
                continue
            if sect in ("temporal_breakdown", "comm_comp_overlap", "launch_stats"):
                errs.append(f"{sect}{k}: unexpected row")
            elif sect in ("kernel_type_breakdown", "top_kernels", "idle_breakdown", "queue_length"):
                errs.append(f"{sect}{k}: unexpected row")
    return errs


def main():
    if not os.path.isdir(TRACES):
        print(f"SKIP: shared traces not found at {TRACES}")
        return 77
    folders = sorted(d for d in os.listdir(TRACES)
                     if os.path.isfile(os.path.join(TRACES, d, "expected.hta.json")))
    if not folders:
        print(f"SKIP: no expected.hta.json under {TRACES}")
        return 77
    failed = 0
    for d in folders:
        path = os.path.join(TRACES, d)
        exp = json.load(open(os.path.join(path, "expected.hta.json")))
        p = subprocess.run([BIN, "analyze", "--compat", "hta", "--json", path],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {d}: exit {p.returncode}: {p.stderr.strip()}")
            failed += 1
            continue
        errs = compare(d, exp, json.loads(p.stdout))
        if errs:
            failed += 1
            print(f"FAIL {d}: {len(errs)} difference(s)")
            for e in errs[:40]:
                print("   ", e)
        else:
            print(f"ok   {d}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
