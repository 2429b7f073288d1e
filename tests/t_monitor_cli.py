#!/usr/bin/env python3
"""tests/t_monitor_cli.py: the device-monitor commands end to end: devices,
health, monitor (JSON/CSV lines) and session start/stop/list/show, against
the NVML stand-in, the fake nvidia-smi and the real (GPU-less) host."""
import json
import os
import subprocess
import sys
import tempfile
import time
from gp_testutil import check, failures, set_verbose

set_verbose()

GP = os.environ.get("GPUPROF_BIN")
SRC = os.environ.get("GPUPROF_SOURCE_DIR")
BUILD = os.environ.get("GPUPROF_BUILD_DIR")
if not GP or not SRC or not BUILD:
    print("skip: GPUPROF_BIN / GPUPROF_SOURCE_DIR / GPUPROF_BUILD_DIR not set")
    sys.exit(77)
DATA = os.path.join(SRC, "tests", "data", "monitor")
FAKE = os.path.join(BUILD, "tests", "libfake_nvml.so")
if not os.path.exists(FAKE):
    print("skip: %s not built" % FAKE)
    sys.exit(77)

def run(args, env_extra=None, timeout=60):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("GPUPROF_") and k not in ("GPUPROF_BIN", "GPUPROF_SOURCE_DIR",
                                                  "GPUPROF_BUILD_DIR"):
            del env[k]
    env.update({"GPUPROF_NVML_LIB": "/nonexistent/libnvidia-ml.so.1",
                "GPUPROF_NVIDIA_SMI": "/nonexistent/nvidia-smi"})
    env.update(env_extra or {})
    p = subprocess.run([GP] + args, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


nvml = {"GPUPROF_NVML_LIB": FAKE, "FAKE_NVML_SCENARIO": os.path.join(DATA, "nvml_basic.scn")}
smi = {"GPUPROF_NVML_LIB": FAKE, "FAKE_NVML_SCENARIO": os.path.join(DATA, "nvml_mismatch.scn"),
       "GPUPROF_NVIDIA_SMI": os.path.join(DATA, "fake-nvidia-smi")}

# no GPU: says so, shows the other devices, exits 0
rc, out, err = run(["devices"])
check(rc == 0, "devices without a GPU exits 0 (%d: %s)" % (rc, err.strip()))
check("No GPU found" in out and "libnvidia-ml.so.1" in out, "devices says there is no GPU")
check(" host " in out, "devices lists the host")
rc, out, err = run(["devices", "--json"])
doc = json.loads(out)
check(doc["gpu_count"] == 0 and doc["health"] == "unavailable", "devices --json: no GPU")
check(any(d["backend"] == "host" for d in doc["devices"]), "devices --json lists the host")

# NVML stand-in
rc, out, err = run(["devices", "--json"], nvml)
doc = json.loads(out)
check(rc == 0 and doc["gpu_count"] == 2, "two GPUs through NVML")
g0 = [d for d in doc["devices"] if d["backend"] == "nvml"][0]
check(g0["name"] == "NVIDIA H100 80GB HBM3" and g0["cuda_version"] == "12.4", "GPU 0 identity")
check(g0["sample"]["fan_pct"] is None, "unsupported field is null in JSON")
check(g0["sample"]["mem_total_bytes"] == 85899345920, "memory total")
check(len(g0["processes"]) == 2 and g0["processes"][0]["util_pct"] == 50, "processes")
rc, out, err = run(["devices"], nvml)
check(rc == 0 and "NVIDIA H100 80GB HBM3" in out and "No GPU" not in out, "devices table")

# health: fallback to nvidia-smi
rc, out, err = run(["health", "--json"], smi)
doc = json.loads(out)
check(rc == 0 and doc["overall"] == "degraded", "health: degraded with nvidia-smi fallback")
b = {x["backend"]: x for x in doc["backends"]}
check("driver/library version mismatch, using nvidia-smi" in b["nvidia-smi"]["reason"],
      "health names the reason")
rc, out, err = run(["health", "--exit-code"], smi)
check(rc == 1 and "degraded" in out, "health --exit-code: 1 when degraded")
rc, out, err = run(["health", "--exit-code"])
check(rc == 3 and "unavailable" in out, "health --exit-code: 3 without GPU")

# monitor lines
rc, out, err = run(["monitor", "--count", "3", "--interval", "0.05"], nvml)
lines = [json.loads(l) for l in out.splitlines()]
lines = [l for l in lines if "type" not in l]  # alert records are checked in t_prometheus.py
ndev = len({l["device"] for l in lines})
check(rc == 0 and len(lines) == 3 * ndev and ndev >= 2, "monitor: one JSON line per device and tick")
check([l["util_pct"] for l in lines if l["device"] == 0] == [10, 50, 95], "monitor: values over ticks")
# the GPU processes are in every line, as in devices --json (one writer)
p0 = [l["processes"] for l in lines if l["device"] == 0]
check(len(p0) == 3 and all(len(x) == 2 and x[0]["util_pct"] == 50 for x in p0)
      and all("processes" in l for l in lines), "monitor: processes in each JSON line: %s" % p0[:1])
rc, out, err = run(["monitor", "--count", "2", "--interval", "0.05", "--csv", "--gpus-only"], nvml)
rows = out.splitlines()
check(rc == 0 and rows[0].startswith("wall_ns,tick,device,name,backend,present,util_pct"),
      "monitor --csv header")
check(len(rows) == 1 + 2 * 2, "monitor --csv --gpus-only rows")
rc, out, err = run(["monitor", "--interval", "0.001"])
check(rc == 2 and "--interval expects seconds from 0.01" in err, "monitor rejects a too-short interval")

# configuration errors name the line
with tempfile.TemporaryDirectory() as tmp:
    cfg = os.path.join(tmp, "gpuprof.yaml")
    with open(cfg, "w") as f:
        f.write("history_size: 30\nmax_snapshots: -3\n")
    rc, out, err = run(["devices", "--config", cfg])
    check(rc == 2 and (cfg + ":2:16: max_snapshots") in err, "bad config: FILE:LINE:COLUMN")
    # issue 15 item 16: layers checked together (file + --set)
    with open(cfg, "w") as f:
        f.write("gpu_profiler:\n  temperature_critical_threshold: 85\n")
    rc, out, err = run(["devices", "--config", cfg, "--set", "temperature_warning_threshold=86"])
    check(rc == 2 and "temperature_warning_threshold (86) is above" in err,
          "warning above critical across layers: %d %s" % (rc, err))
    rc, out, err = run(["devices", "--set", "level=basic"])
    check(rc == 2 and "'level' is not supported" in err, "item 15: --set level refused: %s" % err)
    rc, out, err = run(["devices"], {"GPUPROF_MODE": "production"})
    check(rc == 2 and "$GPUPROF_MODE: 'mode' is not supported" in err,
          "item 15: GPUPROF_MODE refused: %s" % err)
    rc, out, err = run(["devices"], {"GPUPROF_MAX_SNAPSHOTS": "x"})
    check(rc == 2 and "$GPUPROF_MAX_SNAPSHOTS" in err, "bad environment variable")

    # sessions
    outdir = os.path.join(tmp, "out")
    env = dict(nvml, GPUPROF_OUTPUT_DIR=outdir, GPUPROF_MAX_PROFILING_SESSIONS="2")
    rc, out, err = run(["session", "start", "train1", "--description", "first run",
                        "--interval", "0.02"], env)
    check(rc == 0 and "session train1 started" in out, "session start (%s)" % err.strip())
    rc, out, err = run(["session", "start", "train1"], env)
    check(rc == 1 and "already running" in err, "a running session cannot start twice")
    time.sleep(0.3)
    rc, out, err = run(["session", "snapshot", "train1"], env)
    check(rc == 0, "session snapshot")
    time.sleep(0.2)
    rc, out, err = run(["session", "list", "--json"], env)
    doc = json.loads(out)
    check([s["state"] for s in doc["sessions"]] == ["running"], "session list: running")
    # issue 15 item 7: a running session shows how long it has run, not "-"
    d0 = doc["sessions"][0].get("duration_s")
    check(isinstance(d0, (int, float)) and 0.3 <= d0 < 600, "running duration so far: %r" % d0)
    rc, out, err = run(["session", "list"], env)
    check(rc == 0 and "so far" in out and "\t-" not in out and " - " not in out,
          "session list text for a running session: %r" % out)
    rc, out, err = run(["session", "stop", "train1"], env)
    check(rc == 0 and "train1.json" in out, "session stop")
    rc, out, err = run(["session", "show", "train1"], env)
    check(rc == 0 and out.startswith("Session train1: first run\n"), "show: text summary title")
    check("GPUs 2, snapshots 1" in out and "max temperature 85 C" in out, "show: text totals")
    check("NVIDIA H100 80GB HBM3" in out and "Util avg %" in out, "show: device table")
    check("[high_temperature]" in out and "Alerts:" in out, "show: alerts and suggestions")
    rc, out, err = run(["session", "show", "train1", "--json"], env)
    rep = json.loads(out)
    check(rep["session"] == "train1" and rep["description"] == "first run", "report identity")
    check(rep["totals"]["samples"] >= 5 and rep["totals"]["gpus"] == 2, "report totals")
    check(rep["totals"]["snapshots"] == 1, "report has the requested snapshot")
    check(rep["max_temperature_c"] == 85, "report max temperature")
    check(any(s["kind"] == "high_temperature" for s in rep["suggestions"]), "report suggestions")
    events = open(os.path.join(outdir, "events.jsonl")).read()
    check('"type":"session_started"' in events and '"type":"data_generated"' in events,
          "event log has session events")
    check('"kind":"device_lost"' in events, "event log has the lost GPU")
    for name in ("train2", "train3"):
        run(["session", "start", name, "--interval", "0.02"], env)
        time.sleep(0.1)
        run(["session", "stop", name], env)
        time.sleep(0.05)
    rc, out, err = run(["session", "list", "--json"], env)
    names = [s["name"] for s in json.loads(out)["sessions"]]
    check(names == ["train2", "train3"], "retention keeps the newest 2 sessions: %s" % names)
    rc, out, err = run(["session", "show", "nosuch"], env)
    check(rc == 1 and "no such report" in err, "show of an unknown session")
    rc, out, err = run(["session", "start", "../evil"], env)
    check(rc == 2, "session names are checked")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all checks passed")
