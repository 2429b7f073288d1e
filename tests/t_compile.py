#!/usr/bin/env python3
"""tests/t_compile.py: `gpuprof compile` against an independent reading of
the same inputs, written from the definitions of issue 13 / docs/compile.md
(not from the C code):

- totals (compiles, frames, recompiles, graph_breaks, failures,
  compile_time_s, fx_graph_cache) of every shared TORCH_TRACE log and of the
  fixture tests/data/torch_trace_small.log;
- the corrupted log: its bad line is reported with its number, the rest is
  analyzed (same totals as the clean log);
- triton_example: one compiled region, one fused kernel replacing 3 ops,
  the Dynamo cache lookup counted with its duration;
- Inductor kernels and the ATen ops they fuse (Original ATen comments);
- ranks, divergence and advice on the multi-rank logs; --timeline;
- bad input (truncated log, binary file, empty folder, text that is not a
  log): one-line errors, exit 2."""
import glob, gzip, json, os, re, shutil, subprocess, sys, tempfile
from gp_testutil import BIN, SRC, SHARED, check, failures, set_verbose

set_verbose()

TT = os.path.join(SHARED, "torch_trace")
FIXTURE = os.path.join(SRC, "tests", "data", "torch_trace_small.log")


def run(*args):
    p = subprocess.run([BIN, "compile", *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


# ---- the independent reading -------------------------------------------------

def envelopes(path):
    """(line number, envelope dict, payload lines) for every parseable
    envelope line; payload lines are the tab-indented lines after it."""
    out = []
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8", "replace").split("\n")
    cur = None
    for i, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if line.startswith("\t"):
            if cur is not None:
                cur[2].append(line[1:])
            continue
        cur = None
        k = line.find("] ")
        if k < 0:
            continue
        try:
            env = json.loads(line[k + 2:])
        except ValueError:
            continue
        cur = (i, env, [])
        out.append(cur)
    return out


def totals(path):
    """The totals with the issue's definitions."""
    t = {"compiles": 0, "frames": 0, "recompiles": 0, "graph_breaks": 0, "failures": 0,
         "compile_time_s": 0.0, "fx_graph_cache": {"hit": 0, "miss": 0, "bypass": 0}}
    frames = set()
    for _, env, _ in envelopes(path):
        if "compilation_metrics" in env:
            m = env["compilation_metrics"]
            t["compiles"] += 1
            frames.add(env.get("frame_id"))
            if (env.get("frame_compile_id") or 0) > 0:
                t["recompiles"] += 1
            t["graph_breaks"] += len(m.get("restart_reasons") or [])
            if m.get("fail_type") is not None:
                t["failures"] += 1
            if m.get("entire_frame_compile_time_s") is not None:
                t["compile_time_s"] += m["entire_frame_compile_time_s"]
            elif m.get("dynamo_cumulative_compile_time_us") is not None:
                t["compile_time_s"] += m["dynamo_cumulative_compile_time_us"] / 1e6
        a = env.get("artifact")
        if isinstance(a, dict):
            for kind in ("hit", "miss", "bypass"):
                if a.get("name") == "fx_graph_cache_" + kind:
                    t["fx_graph_cache"][kind] += 1
    t["frames"] = len(frames)
    return t


def bad_payload_lines(path):
    """Line numbers of JSON payloads (chromium_event, recompile_reasons) that
    do not parse: the envelope's line + the line of the decoder's error."""
    bad = []
    for ln, env, pay in envelopes(path):
        wanted = "chromium_event" in env or (
            isinstance(env.get("artifact"), dict) and env["artifact"].get("name") == "recompile_reasons")
        if not wanted or not pay:
            continue
        try:
            json.loads("\n".join(pay))
        except json.JSONDecodeError as e:
            bad.append(ln + e.lineno)
    return bad


def kernels(path):
    """{compile id: [(kernel, number of ATen ops)]} from inductor_output_code."""
    out = {}
    for _, env, pay in envelopes(path):
        if "inductor_output_code" not in env:
            continue
        cid = "%d/%d" % (env["frame_id"], env["frame_compile_id"])
        if env.get("attempt"):
            cid += "_%d" % env["attempt"]
        ops = None
        for line in pay:
            m = re.search(r"Original ATen: \[(.*?)\]", line)
            if m:
                ops = len([x for x in m.group(1).split(",") if x.strip()])
            m = re.match(r"(\w+) = async_compile\.\w+\(", line)
            if m:
                out.setdefault(cid, []).append((m.group(1), ops))
                ops = None
    return out


def generate_log(seed):
    """A TORCH_TRACE log like newer PyTorch writes: several frames, recompiles
    (recompile_reasons artifacts), restarted attempts (_attempt), failures,
    FX graph and AOT autograd cache artifacts, Inductor output code, metrics
    with entire_frame_compile_time_s, with it null and the
    *_cumulative_compile_time_us, or only the latter, a compiled autograd
    record, V/I/W glog levels."""
    import random
    rnd = random.Random(seed)
    out = []

    def env(d, payload=None):
        if payload is not None:
            d["has_payload"] = "0123abcd"
        out.append("%s1206 15:18:%02d.%06d 4242 torch/_dynamo/utils.py:1288] %s" % (
            rnd.choice("VIW"), rnd.randint(0, 59), rnd.randint(0, 999999), json.dumps(d)))
        if payload is not None:
            out.extend("\t" + l for l in payload.split("\n"))
    env({"str": ["/home/u/train.py", 0]})
    env({"str": ["/home/u/model.py", 1]})
    ts = 1700000000000000
    ops_pool = ["aten.add", "aten.mul", "aten.sin", "aten.cos", "aten.relu", "aten.native_layer_norm",
                "aten._to_copy"]
    for fid in range(rnd.randint(2, 5)):
        for cid in range(rnd.randint(1, 5)):
            nattempt = rnd.randint(0, 2)
            for att in range(nattempt + 1):
                base = {"frame_id": fid, "frame_compile_id": cid, "attempt": att}
                if att == 0:
                    env(dict(base, dynamo_start={"stack": [{"line": 10 + fid, "name": "f%d" % fid,
                                                             "filename": rnd.randint(0, 1)}]}))
                ph = {"name": "dynamo", "ts": ts, "args": {"compile_id": "%d/%d" % (fid, cid)}, "ph": "B",
                      "cat": "dynamo_timed", "tid": 0, "pid": 0}
                env(dict(base, chromium_event={}), json.dumps(ph, indent=1))
                ts += 1000
                if cid > 0 and att == 0:
                    env(dict(base, artifact={"name": "recompile_reasons", "encoding": "json"}),
                        json.dumps(["%d/0: tensor 'x' size mismatch at index 0. expected %d, actual %d" %
                                    (fid, cid, cid + 1)], indent=1))
                if att < nattempt:  # restarted at a graph break: its reason, no metrics
                    env(dict(base, artifact={"name": "dynamo_graph_break_reason", "encoding": "string"}),
                        "Graph Break Reason: generic_jump TensorVariable()")
                    env(dict(base, chromium_event={}), json.dumps(dict(ph, ph="E", ts=ts)))
                    continue
                for k in range(rnd.randint(0, 2)):
                    env(dict(base, artifact={"name": "fx_graph_cache_" + rnd.choice(["hit", "miss", "bypass"]),
                                             "encoding": "json"}), json.dumps({"key": "k"}))
                for k in range(rnd.randint(0, 2)):
                    env(dict(base, artifact={"name": "aotautograd_cache_" + rnd.choice(["hit", "miss", "bypass"]),
                                             "encoding": "json"}), json.dumps({"key": "k"}))
                code = []
                for k in range(rnd.randint(0, 3)):
                    ops = rnd.sample(ops_pool, rnd.randint(1, 4))
                    code.append("# Topologically Sorted Source Nodes: [a], Original ATen: [%s]" % ", ".join(ops))
                    name = "triton_poi_fused_%s_%d" % ("_".join(o.split(".")[1] for o in ops), k)
                    q3 = "'" * 3
                    code += ["%s = async_compile.triton('%s', %s" % (name, name, q3), "@triton.jit",
                             "def %s(in_ptr0, xnumel):" % name, "    pass", q3 + ", device_str='cuda')"]
                if code:
                    env(dict(base, inductor_output_code={"filename": "/tmp/x.py"}), "\n".join(code))
                m = {"co_name": "f%d" % fid, "co_filename": "/home/u/train.py", "co_firstlineno": 5,
                     "guard_count": rnd.randint(1, 9), "fail_type": None, "fail_reason": None,
                     "restart_reasons": ["Graph break due to unsupported builtin math.floor"] * rnd.randint(0, 2)}
                style = rnd.randint(0, 2)
                if style == 0:
                    m["entire_frame_compile_time_s"] = rnd.random() * 3
                elif style == 1:
                    m.update(entire_frame_compile_time_s=None, dynamo_cumulative_compile_time_us=rnd.randint(1, 10**7),
                             aot_autograd_cumulative_compile_time_us=5,
                             inductor_code_gen_cumulative_compile_time_us=3)
                else:
                    m["dynamo_cumulative_compile_time_us"] = rnd.randint(1, 10**7)
                if rnd.random() < 0.2:
                    m.update(fail_type="torch._dynamo.exc.Unsupported", fail_reason="data dependent operator")
                env(dict(base, compilation_metrics=m))
                env(dict(base, chromium_event={}), json.dumps(dict(ph, ph="E", ts=ts)))
                ts += 5000
    env({"compiled_autograd_id": 0, "frame_id": 9, "frame_compile_id": 0, "attempt": 0,
         "compilation_metrics": {"co_name": "bwd", "entire_frame_compile_time_s": 0.25, "restart_reasons": [],
                                 "fail_type": None}})
    return "\n".join(out)


def attempts(path):
    """{compile id: status} from the definitions: a record with metrics is ok
    or failed; an attempt without metrics of a frame/compile that has a later
    attempt was restarted."""
    seen, metrics, fail = {}, set(), {}
    for _, env, _ in envelopes(path):
        if "frame_id" not in env or "compiled_autograd_id" in env or "chromium_event" in env:
            continue  # (phases are joined to their compile id through args.compile_id)
        key = (env["frame_id"], env.get("frame_compile_id"), env.get("attempt") or 0)
        seen[key] = 1
        if "compilation_metrics" in env:
            metrics.add(key)
            fail[key] = env["compilation_metrics"].get("fail_type") is not None
    st = {}
    for k in seen:
        cid = "%d/%d" % (k[0], k[1]) + ("_%d" % k[2] if k[2] else "")
        if k in metrics:
            st[cid] = "failed" if fail[k] else "ok"
        elif any(j[:2] == k[:2] and j[2] > k[2] for j in seen):
            st[cid] = "restarted"
    return st


def aot_cache(path):
    c = {"hit": 0, "miss": 0, "bypass": 0}
    for _, env, _ in envelopes(path):
        a = env.get("artifact")
        if isinstance(a, dict) and str(a.get("name", "")).startswith("aotautograd_cache_"):
            k = a["name"][len("aotautograd_cache_"):]
            if k in c:
                c[k] += 1
    return c


def same_totals(got, want):
    for k in ("compiles", "frames", "recompiles", "graph_breaks", "failures"):
        if got.get(k) != want[k]:
            return "%s: %r != %r" % (k, got.get(k), want[k])
    if abs(got.get("compile_time_s", -1) - want["compile_time_s"]) > 1e-6 * max(1, want["compile_time_s"]):
        return "compile_time_s: %r != %r" % (got.get("compile_time_s"), want["compile_time_s"])
    if got.get("fx_graph_cache") != want["fx_graph_cache"]:
        return "fx_graph_cache: %r != %r" % (got.get("fx_graph_cache"), want["fx_graph_cache"])
    if sorted(got.keys()) != sorted(want.keys()):
        return "keys: %r" % sorted(got.keys())
    return None


def main():
    if not BIN:
        print("skip: GPUPROF_BIN not set")
        return 77
    logs = [FIXTURE]
    gen_dir = tempfile.mkdtemp(prefix="gp_tt_gen_")
    import atexit, shutil
    atexit.register(shutil.rmtree, gen_dir, True)
    for seed in range(1, 6):  # generated logs: newer and older metric names mixed
        p = os.path.join(gen_dir, "gen_%d.log" % seed)
        with open(p, "w") as f:
            f.write(generate_log(seed))
        logs.append(p)
    have_shared = os.path.isdir(TT)
    if have_shared:
        logs += sorted(glob.glob(os.path.join(TT, "*.log")) + glob.glob(os.path.join(TT, "multi_rank_logs", "*.log")))
    else:
        print("note: %s absent: the shared logs are skipped" % TT)

    # totals of every log, one at a time
    for path in logs:
        rc, out, err = run("--json", path)
        name = os.path.relpath(path, SHARED if path.startswith(SHARED) else SRC)
        if rc != 0:
            check(False, "%s: exit 0 (got %d: %s)" % (name, rc, err.strip()))
            continue
        doc = json.loads(out)
        check(len(doc["logs"]) == 1 and doc["logs"][0]["file"] == path, "%s: one log entry, its file" % name)
        lg = doc["logs"][0]
        diff = same_totals(lg["totals"], totals(path))
        check(diff is None, "%s: totals equal the independent computation%s" % (name, "" if diff is None else " (" + diff + ")"))
        check(sum(1 for c in lg["compiles"] if c["status"] in ("ok", "failed")) == lg["totals"]["compiles"],
              "%s: one ok/failed record per compilation_metrics" % name)
        want_k = kernels(path)
        got_k = {}
        for c in lg["compiles"]:
            if c["kernels"]:
                got_k.setdefault(c["id"], []).extend((k["name"], k["fused_ops"]) for k in c["kernels"])
        check(got_k == want_k, "%s: Inductor kernels and their fused ATen op counts (%d ids)" % (name, len(want_k)))
        check(lg.get("aotautograd_cache") == aot_cache(path), "%s: AOT autograd cache counts" % name)
        got_st = {c["id"]: c["status"] for c in lg["compiles"] if not c["id"].startswith("!")}
        want_st = attempts(path)
        check(all(got_st.get(k) == v for k, v in want_st.items()),
              "%s: status of each compile id (restarted attempts, failures): %r" %
              (name, {k: (v, got_st.get(k)) for k, v in want_st.items() if got_st.get(k) != v}))

    # the fixture: restarts, recompile reasons, failure, corrupt envelope, advice
    rc, out, err = run("--json", FIXTURE)
    doc = json.loads(out)
    lg = doc["logs"][0]
    st = {c["id"]: c["status"] for c in lg["compiles"]}
    check(st.get("0/0") == "restarted" and st.get("0/0_1") == "ok", "fixture: attempt 0 restarted, 0/0_1 ok (%r)" % st)
    check(st.get("1/0") == "failed", "fixture: 1/0 failed")
    c01 = [c for c in lg["compiles"] if c["id"] == "0/1"][0]
    check(c01["recompile_reasons"] == ["0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8"],
          "fixture: recompile reason of 0/1")
    check(c01["user_frame"]["file"] == "/src/train.py" and c01["user_frame"]["line"] == 12,
          "fixture: user frame from the interned str table (%r)" % c01["user_frame"])
    with open(FIXTURE) as f:
        flines = f.read().split("\n")
    bad_env = [i for i, l in enumerate(flines, 1) if l.startswith("V") and not _parses(l)]
    check([b["line"] for b in lg["corrupt"]] == bad_env and lg["corrupt_lines"] == len(bad_env),
          "fixture: corrupt envelope line(s) %r reported" % bad_env)
    check(any(":%d:" % bad_env[0] in l for l in err.splitlines()), "fixture: stderr names line %d" % bad_env[0])
    rules = {a["rule"] for a in doc.get("advice", [])}
    for r in ("compile-data-dependent", "compile-dynamic-shapes", "compile-failure", "compile-unsupported"):
        check(r in rules, "fixture: advice %s fires (%r)" % (r, sorted(rules)))
    dd = [a for a in doc["advice"] if a["rule"] == "compile-data-dependent"]
    check(dd and dd[0]["evidence"] and dd[0]["evidence"][0]["compile"].startswith("0/0_1 ")
          and "data dependent" in dd[0]["evidence"][0]["reason"],
          "fixture: data-dependent evidence names compile id, user frame and reason")

    if not have_shared:
        return finish()

    # the corrupted log: bad line reported with its number, the rest analyzed
    corrupt = os.path.join(TT, "simple_corrupted_json.log")
    want_bad = bad_payload_lines(corrupt)
    rc, out, err = run("--json", corrupt)
    doc = json.loads(out)
    check(rc == 0 and want_bad and [b["line"] for b in doc["logs"][0]["corrupt"]] == want_bad,
          "corrupted log: bad line(s) %r reported in JSON" % want_bad)
    check(("simple_corrupted_json.log:%d:" % want_bad[0]) in err, "corrupted log: stderr names line %d" % want_bad[0])
    rc2, out2, _ = run("--json", os.path.join(TT, "simple.log"))
    clean = json.loads(out2)["logs"][0]
    check(doc["logs"][0]["totals"] == clean["totals"] and len(doc["logs"][0]["compiles"]) == len(clean["compiles"]),
          "corrupted log: the rest analyzed (totals of the clean log)")
    check(len(doc["logs"][0]["phases"]) == len(clean["phases"]) - 1,
          "corrupted log: one compile phase lost, the others kept")

    # multi-rank: ranks from the file names, divergence, advice
    rc, out, err = run("--json", os.path.join(TT, "multi_rank_logs"))
    doc = json.loads(out)
    check(rc == 0 and [l["rank"] for l in doc["logs"]] == [0, 1, 2, 3], "multi-rank: ranks 0..3 from the file names")
    what = {d["what"]: d for d in doc.get("divergence", [])}
    check("recompiles" in what and what["recompiles"]["values"] == [l["totals"]["recompiles"] for l in doc["logs"]],
          "multi-rank: recompiles diverge, values per rank")
    check(what.get("recompiles", {}).get("outlier_rank") == 1, "multi-rank: rank 1 is the recompile outlier")
    rules = {a["rule"] for a in doc.get("advice", [])}
    check({"compile-dynamic-shapes", "compile-failure"} <= rules, "multi-rank: dynamic-shape and failure advice (%r)" % sorted(rules))

    # the compile timeline: one X event per closed chromium_event phase
    with tempfile.TemporaryDirectory() as d:
        tl = os.path.join(d, "tl.json")
        src = os.path.join(TT, "simple.log")
        rc, out, err = run("--timeline", tl, src)
        ok = rc == 0 and os.path.exists(tl)
        n_x = 0
        if ok:
            with open(tl) as f:
                n_x = sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") == "X")
        want = 0
        depth = {}
        for _, env, pay in envelopes(src):
            if "chromium_event" in env and pay:
                try:
                    e = json.loads("\n".join(pay))
                except ValueError:
                    continue
                key = (e.get("tid"), e.get("name"))
                if e.get("ph") == "B":
                    depth[key] = depth.get(key, 0) + 1
                elif e.get("ph") == "E" and depth.get(key, 0) > 0:
                    depth[key] -= 1
                    want += 1
        check(ok and n_x == want, "--timeline: %d X events for %d closed phases" % (n_x, want))

    # triton_example: the Kineto side
    tr = os.path.join(SHARED, "traces", "triton_example", "triton_example.json.gz")
    if os.path.exists(tr):
        rc, out, err = run("--json", tr)
        doc = json.loads(out)
        t = doc.get("trace", {})
        with gzip.open(tr, "rt") as f:
            ev = json.load(f)["traceEvents"]
        regions = [e for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("Torch-Compiled Region")]
        lookups = [e for e in ev if e.get("ph") == "X" and e.get("name") == "TorchDynamo Cache Lookup"]
        check(rc == 0 and t.get("region_calls") == len(regions) == 1 and len(t.get("regions", [])) == 1,
              "triton_example: one compiled region")
        check(t.get("cache_lookups") == len(lookups) == 1
              and t.get("cache_lookup_ns") == round(sum(e["dur"] for e in lookups) * 1000),
              "triton_example: cache lookup counted with its duration (%r ns)" % t.get("cache_lookup_ns"))
        fk = t.get("fused_kernels", [])
        check(len(fk) == 1 and fk[0]["name"] == "triton_poi_fused_add_cos_sin_0" and fk[0]["ops_replaced"] == 3
              and t.get("fused_ops") == 3, "triton_example: one fused kernel replacing 3 ops")
        kern = [e for e in ev if e.get("cat") == "kernel"]
        check(t.get("region_gpu_ns") == round(sum(e["dur"] for e in kern) * 1000) and t.get("eager_gpu_ns") == 0,
              "triton_example: the kernel's GPU time is inside the region")
        rc, out, err = run("--json", "--eager", tr, tr)
        sp = json.loads(out).get("speedup", {}) if rc == 0 else {}
        check(rc == 0 and abs(sp.get("step_speedup", 0) - 1.0) < 1e-9, "--eager: a trace against itself has speedup 1")
        # an "eager" run where everything took twice as long: speedup 2 per step and per group
        with tempfile.TemporaryDirectory() as d:
            with gzip.open(tr, "rt") as f:
                doc2 = json.load(f)
            t0 = min(e["ts"] for e in doc2["traceEvents"] if "ts" in e)
            for e in doc2["traceEvents"]:
                if "ts" in e:
                    e["ts"] = t0 + 2 * (e["ts"] - t0)
                if "dur" in e:
                    e["dur"] = 2 * e["dur"]
            slow = os.path.join(d, "eager.json")
            with open(slow, "w") as f:
                json.dump(doc2, f)
            rc, out, err = run("--json", "--eager", slow, tr)
            sp = json.loads(out).get("speedup", {}) if rc == 0 else {}
            groups = {g["group"]: g["speedup"] for g in sp.get("groups", [])}
            check(rc == 0 and abs(sp.get("step_speedup", 0) - 2.0) < 1e-6 and abs(sp.get("gpu_speedup", 0) - 2.0) < 1e-6
                  and groups and all(abs(v - 2.0) < 1e-6 for v in groups.values()),
                  "--eager: twice-as-slow eager run gives speedup 2 per step, GPU and group (%r)" % groups)
    else:
        print("note: triton_example absent: skipped")

    # a gzip-compressed log reads the same
    with tempfile.TemporaryDirectory() as d:
        gz = os.path.join(d, "simple.log.gz")
        with open(os.path.join(TT, "simple.log"), "rb") as f, gzip.open(gz, "wb") as g:
            g.write(f.read())
        rc, out, err = run("--json", gz)
        check(rc == 0 and json.loads(out)["logs"][0]["totals"] == totals(os.path.join(TT, "simple.log")),
              "a .log.gz reads like the plain log")

    # a 5 MB envelope line (longer than the reader's first buffer) is read whole
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "long.log")
        reason = "x" * (5 << 20)
        with open(p, "w") as f:
            f.write('V1120 10:00:00.000000 1 a.py:1] {"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n')
            f.write('V1120 10:00:00.000000 1 a.py:1] ' + json.dumps({"compilation_metrics": {
                "fail_type": "Unsupported", "fail_reason": reason, "dynamo_cumulative_compile_time_us": 5},
                "frame_id": 0, "frame_compile_id": 0, "attempt": 0}) + "\n")
        rc, out, err = run("--json", p)
        c = json.loads(out)["logs"][0]["compiles"] if rc == 0 else []
        check(rc == 0 and len(c) == 1 and c[0]["fail_reason"] == reason, "a 5 MB envelope line is read whole")

    # gpuprof serve --torch-trace: /api/profiler/compile answers the bytes of
    # `gpuprof compile --json` of the same logs (read at each request)
    serve_check()

    # bad input: one-line errors, exit 2
    with tempfile.TemporaryDirectory() as d:
        simple = open(os.path.join(TT, "simple.log"), "rb").read()
        cases = {}
        p = os.path.join(d, "cut_envelope.log")
        cut = simple.index(b'{"compilation_metrics"') + 40
        open(p, "wb").write(simple[:cut])
        cases["truncated log (mid-envelope)"] = p
        p = os.path.join(d, "cut_payload.log")
        lines = simple.split(b"\n")
        open(p, "wb").write(b"\n".join(lines[:6]) + b"\n")
        cases["truncated log (mid-payload)"] = p
        p = os.path.join(d, "binary.log")
        open(p, "wb").write(bytes(range(256)) * 8)
        cases["binary file"] = p
        p = os.path.join(d, "empty")
        os.mkdir(p)
        cases["empty folder"] = p
        p = os.path.join(d, "text.log")
        open(p, "w").write("hello\n" * 100)
        cases["text that is not a log"] = p
        cases["missing file"] = os.path.join(d, "nope.log")
        for what, path in cases.items():
            rc, out, err = run(path)
            lines = err.strip().splitlines()
            check(rc == 2 and len(lines) == 1 and lines[0].startswith("gpuprof: ") and out == "",
                  "bad input, %s: one-line error, exit 2 (rc %d: %r)" % (what, rc, err.strip()[:160]))
    return finish()


def serve_check():
    h = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True)
    if h.returncode != 0 or "--torch-trace" not in h.stdout:
        print("note: gpuprof serve not built: /api/profiler/compile of logs skipped")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.environ["GPUPROF_BIN"] = BIN
    import serve_util
    mr = os.path.join(TT, "multi_rank_logs")
    simple = os.path.join(TT, "simple.log")
    with tempfile.TemporaryDirectory() as d:
        grow = os.path.join(d, "rank_7.log")
        shutil.copy(FIXTURE, grow)
        s = serve_util.Server(["--quiet", "--torch-trace", mr, "--torch-trace", simple, "--torch-trace", grow])
        try:
            st, hd, body = s.get("/api/profiler/compile")
            rc, out, _ = run("--json", mr, simple, grow)
            check(st == 200 and rc == 0 and body.decode() == out and hd.get("content-type", "").startswith(
                "application/json"), "serve: /api/profiler/compile = gpuprof compile --json of the logs (%d)" % st)
            doc = json.loads(body)
            check([l["rank"] for l in doc["logs"]] == [0, 1, 2, 3, None, 7] and doc.get("divergence"),
                  "serve: six logs, ranks and divergence")
            with open(grow, "a") as f:  # a log being written: the next request sees the new record
                f.write('\nV1120 10:00:09.000000 4242 torch/_dynamo/x.py:1] {"compilation_metrics": '
                        '{"co_name": "late", "entire_frame_compile_time_s": 1.0, "fail_type": null, '
                        '"restart_reasons": []}, "frame_id": 7, "frame_compile_id": 0, "attempt": 0}\n')
            st, _, body = s.get("/api/profiler/compile")
            rc, out, _ = run("--json", mr, simple, grow)
            check(st == 200 and body.decode() == out and json.loads(body)["logs"][5]["totals"]["compiles"] ==
                  totals(grow)["compiles"], "serve: a grown log is read again")
            st, _, body = s.get("/api/profiler/compile?x=1")
            check(st == 400, "serve: unknown parameter refused (%d)" % st)
            os.remove(grow)
            st, _, body = s.get("/api/profiler/compile")
            check(st == 422 and b"rank_7.log" in body, "serve: a log gone: 422 naming it (%d %r)" % (st, body[:120]))
        finally:
            s.stop()
    p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--torch-trace", os.path.join(TT, "nope")],
                       capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and "nope" in lines[0],
          "serve: a missing --torch-trace path: one line, exit 2 (%d %r)" % (p.returncode, p.stderr[:200]))


def _parses(line):
    k = line.find("] ")
    try:
        json.loads(line[k + 2:])
        return True
    except ValueError:
        return False


def finish():
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
