#!/usr/bin/env python3
"""hta_oracle.py DIR: runs HTA 0.6.1 (../shared/hta, on Debian's python3 with
python3-pandas/numpy/plotly/networkx) on the trace files of DIR and prints one
JSON object: for each analysis (temporal breakdown, kernel type and kernel
breakdown, idle time, launch statistics, queue length, memory bandwidth)
its frames as sorted records, or "error: ..." when HTA raises (HTA's own
answer on a trace without the data). Used by t_export_hta.py and
bench/export_hta.sh to compare HTA on a trace and on gpuprof's export."""
import json
import logging
import math
import os
import sys
import warnings

warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)


def canon(x):
    """A comparable, JSON-able form of a DataFrame / dict / scalar."""
    import pandas as pd

    if x is None:
        return None
    if isinstance(x, pd.DataFrame):
        df = x.reset_index()
        recs = []
        for r in df.to_dict(orient="records"):
            recs.append({str(k): canon(v) for k, v in r.items()})
        return sorted(recs, key=lambda r: json.dumps(r, sort_keys=True))
    if isinstance(x, pd.Series):
        return canon(x.to_frame())
    if isinstance(x, dict):
        return {str(k): canon(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [canon(v) for v in x]
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        return round(x, 6)
    if isinstance(x, (int, str, bool)):
        return x
    return str(x)


def run(name, fn, out):
    try:
        out[name] = canon(fn())
    except Exception as e:  # HTA's answer on a trace without the data
        out[name] = "error: %s" % type(e).__name__


def main():
    d = sys.argv[1]
    from hta.trace_analysis import TraceAnalysis

    a = TraceAnalysis(trace_dir=d)
    out = {}
    run("temporal_breakdown", lambda: a.get_temporal_breakdown(visualize=False), out)
    run("kernel_breakdown", lambda: a.get_gpu_kernel_breakdown(visualize=False), out)
    run("idle_time", lambda: a.get_idle_time_breakdown(visualize=False, show_idle_interval_stats=True), out)
    run("launch_stats", lambda: a.get_cuda_kernel_launch_stats(visualize=False), out)
    run("queue_length", lambda: a.get_queue_length_summary(), out)
    run("memory_bandwidth", lambda: a.get_memory_bw_summary(), out)
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
