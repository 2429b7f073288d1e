#!/usr/bin/env python3
"""tests/t_compare.py: `gpuprof compare` end to end. Builds trace pairs from
scripts/gen_trace.py output (different seeds = run-to-run noise everywhere)
and edits one kernel's durations: +20 % -> exactly that kernel is a
REGRESSION; +2 % -> NO_CHANGE; too few samples -> "~"; renamed kernel ->
NEW + REMOVED; a trace against itself -> no regression; folders of repeated
runs (per-run totals); and the CI gate's exit codes (0, 1, 2)."""
import gzip, json, os, subprocess, sys, tempfile
from gp_testutil import BIN, SRC, check, failures, set_verbose

set_verbose()

GEN = os.path.join(SRC, "scripts", "gen_trace.py")
SGEMM = "ampere_sgemm_128x64_tn"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def gen(path, seed, steps=8):
    subprocess.run([sys.executable, GEN, path, "--seed", str(seed), "--steps", str(steps)], check=True)


def edit(src, dst, fn):
    """Rewrites the trace src into dst, calling fn(event) on each event."""
    with open(src) as f:
        doc = json.load(f)
    for e in doc["traceEvents"]:
        fn(e)
    with open(dst, "w") as f:
        json.dump(doc, f)


def scale(name, factor):
    def fn(e):
        if e.get("name") == name and e.get("ph") == "X":
            e["dur"] = round(e["dur"] * factor, 3)
    return fn


def rename(old, new):
    def fn(e):
        if e.get("name") == old:
            e["name"] = new
    return fn


def compare(*args):
    p = subprocess.run([BIN, "compare", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def compare_json(*args):
    rc, out, err = compare("--json", *args)
    if rc not in (0, 1):
        print(err)
        return rc, None
    return rc, json.loads(out)


def verdicts(doc, verdict):
    return sorted((o["category"], o["name"]) for o in doc["operations"] if o["verdict"] == verdict)


def main():
    if not BIN:
        print("GPUPROF_BIN not set")
        return 77
    d = tempfile.mkdtemp(prefix="gp_t_compare_")
    base, other = os.path.join(d, "base.json"), os.path.join(d, "other.json")
    gen(base, 7)
    gen(other, 8)

    # a trace compared with itself: nothing changes
    rc, doc = compare_json("--fail-on-regression", base, base)
    check(rc == 0 and doc["summary"]["regressions"] == 0 and doc["summary"]["improvements"] == 0,
          "self comparison: 0 regressions, exit 0")
    check(doc["summary"]["no_change"] == len(doc["operations"]), "self comparison: every op NO_CHANGE")
    check(abs(doc["summary"]["geomean_ratio"] - 1.0) < 1e-12, "self comparison: geometric mean 1")

    # noise only (another seed): no false alarm
    rc, doc = compare_json("--fail-on-regression", base, other)
    check(rc == 0 and doc["summary"]["regressions"] == 0, "noise only: 0 regressions, exit 0")

    # one kernel 20 % slower, noise elsewhere: exactly that kernel regresses
    slow = os.path.join(d, "slow20.json")
    edit(other, slow, scale(SGEMM, 1.20))
    rc, doc = compare_json(base, slow)
    check(rc == 0, "without --fail-on-regression a regression exits 0")
    check(verdicts(doc, "REGRESSION") == [("kernel", SGEMM)],
          "20%% slower kernel: exactly it is a REGRESSION (got %s)" % verdicts(doc, "REGRESSION"))
    row = [o for o in doc["operations"] if o["name"] == SGEMM][0]
    check(15 < row["change_pct"] < 25 and row["p_value"] < 0.05, "20%% kernel: change %.1f%%, p %.2g"
          % (row["change_pct"], row["p_value"]))
    check(doc["top_regressions"][0]["name"] == SGEMM, "20% kernel: first in top_regressions")
    rc, out, _ = compare("--fail-on-regression", base, slow)
    check(rc == 1, "--fail-on-regression exits 1 on a regression (got %d)" % rc)
    check("Regressions (1)" in out and SGEMM in out, "text output names the regression")

    # 2 % slower: below the threshold -> NO_CHANGE
    slow2 = os.path.join(d, "slow2.json")
    edit(other, slow2, scale(SGEMM, 1.02))
    rc, doc = compare_json("--fail-on-regression", base, slow2)
    row = [o for o in doc["operations"] if o["name"] == SGEMM][0]
    check(row["verdict"] == "NO_CHANGE" and rc == 0 and doc["summary"]["regressions"] == 0,
          "2%% slower kernel: NO_CHANGE (change %.2f%%), exit 0" % row["change_pct"])
    # the same 2 % on identical noise is significant but still below the threshold
    # (40 steps: 246 instances per side give the test enough power)
    long_base, same2 = os.path.join(d, "long_base.json"), os.path.join(d, "same2.json")
    gen(long_base, 7, steps=40)
    edit(long_base, same2, scale(SGEMM, 1.02))
    rc, doc = compare_json(long_base, same2)
    row = [o for o in doc["operations"] if o["name"] == SGEMM][0]
    check(row["verdict"] == "NO_CHANGE" and row["p_value"] < 0.05,
          "2%% shift on identical noise: significant (p %.2g) yet NO_CHANGE" % row["p_value"])
    rc, doc = compare_json("--threshold", "1", long_base, same2)
    check(verdicts(doc, "REGRESSION") == [("kernel", SGEMM)], "--threshold 1 turns the 2% shift into a REGRESSION")

    # too few samples: the NCCL kernel runs once per step; 3 steps -> 3 vs 3
    fb, fo, fs = (os.path.join(d, n) for n in ("few_base.json", "few_other.json", "few_slow.json"))
    gen(fb, 7, steps=2)
    gen(fo, 8, steps=2)
    edit(fo, fs, scale(NCCL, 1.20))
    rc, doc = compare_json("--fail-on-regression", fb, fs)
    row = [o for o in doc["operations"] if o["name"] == NCCL][0]
    check(row["verdict"] == "~" and row["few_samples"] and rc == 0,
          "20%% slower with 3 samples per side: ~ (p %.2g), flagged few_samples, exit 0" % row["p_value"])
    rc, out, _ = compare(fb, fs)
    check("fewer than 9 samples" in out, "text output warns about few samples")

    # new and removed operations
    ren = os.path.join(d, "renamed.json")
    edit(other, ren, rename(SGEMM, "ampere_sgemm_256x128_nn"))
    rc, doc = compare_json(base, ren)
    check(verdicts(doc, "NEW") == [("kernel", "ampere_sgemm_256x128_nn")], "renamed kernel: NEW detected")
    check(verdicts(doc, "REMOVED") == [("kernel", SGEMM)], "renamed kernel: REMOVED detected")

    # --min-time ignores small operations (the memset: 3 us x 9 per run)
    rc, doc = compare_json("--min-time", "1ms", base, slow)
    check(doc["summary"]["ignored"] > 0 and verdicts(doc, "REGRESSION") == [("kernel", SGEMM)],
          "--min-time 1ms: small ops IGNORED, the sgemm regression kept")

    # folders of repeated runs: per-run totals
    for name, seeds, factor in (("runs_base", range(10, 19), 1.0), ("runs_slow", range(20, 29), 1.2),
                                ("few_runs_base", range(30, 33), 1.0), ("few_runs_slow", range(40, 43), 1.2)):
        os.mkdir(os.path.join(d, name))
        for s in seeds:
            p = os.path.join(d, name, "run%d.json" % s)
            gen(p, s, steps=1)
            if factor != 1.0:
                edit(p, p, scale(SGEMM, factor))
    rc, doc = compare_json(os.path.join(d, "runs_base"), os.path.join(d, "runs_slow"))
    check(doc["test"]["samples"] == "per_run_totals" and doc["baseline"]["runs"] == 9,
          "folders: 9 runs per side, per-run totals")
    check(verdicts(doc, "REGRESSION") == [("kernel", SGEMM)],
          "folders: exactly the slowed kernel regresses (got %s)" % verdicts(doc, "REGRESSION"))
    rc, doc = compare_json("--fail-on-regression", os.path.join(d, "few_runs_base"), os.path.join(d, "few_runs_slow"))
    row = [o for o in doc["operations"] if o["name"] == SGEMM][0]
    check(row["verdict"] == "~" and row["few_samples"] and rc == 0,
          "folders: 3 vs 3 runs, 20%% slower: ~ (p %.2g), exit 0" % row["p_value"])
    # a side file without events in the baseline folder (expected.hta.json
    # beside the runs) is no run, and does not shift runs between the sides
    with open(os.path.join(d, "few_runs_base", "expected.hta.json"), "w") as f:
        json.dump({"kernel_breakdown": {}}, f)
    rc, out, err = compare("--json", os.path.join(d, "few_runs_base"), os.path.join(d, "few_runs_slow"))
    doc = json.loads(out)
    check(doc["baseline"]["runs"] == 3 and doc["current"]["runs"] == 3 and "expected.hta.json" in err,
          "folders: a side file in BASE is left out, 3 vs 3 runs (got %d vs %d)"
          % (doc["baseline"]["runs"], doc["current"]["runs"]))
    # without the Holm correction, noise in the 2-call runtime ops can pass alpha
    rc, doc = compare_json("--correction", "none", os.path.join(d, "runs_base"), os.path.join(d, "runs_slow"))
    check(doc["test"]["correction"] == "none" and ("kernel", SGEMM) in verdicts(doc, "REGRESSION"),
          "--correction none: the slowed kernel still regresses (others: %s)" % verdicts(doc, "REGRESSION"))

    # bad input: exit 2 with a one-line message
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write('{"traceEvents": [ {"ph": "X", "ts": 1, ')
    rc, out, err = compare("--fail-on-regression", base, bad)
    check(rc == 2 and "bad.json" in err, "malformed CURRENT: exit 2 naming the file")
    rc, out, err = compare("--fail-on-regression", os.path.join(d, "missing.json"), base)
    check(rc == 2, "missing BASE: exit 2")
    rc, out, err = compare(base)
    check(rc == 2, "one path only: exit 2")
    rc, out, err = compare("--alpha", "2", base, base)
    check(rc == 2, "--alpha out of range: exit 2")
    rc, out, err = compare("--mode", "runs", base, base)
    check(rc == 2, "--mode runs with one run per side: exit 2")

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("all compare checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
