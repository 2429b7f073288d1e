#!/usr/bin/env python3
"""bench/monitor_vs_smi.py GPUPROF_BIN [NVIDIA_SMI]: on a machine with an
NVIDIA GPU, compares what `gpuprof devices --json` reports through NVML with
`nvidia-smi --query-gpu` taken right after it (static fields must be equal,
dynamic ones within the tolerances below), and times a loop of nvidia-smi
queries against gpuprof's per-sample cost. Prints a report; exit 1 when a
field disagrees, 77 when there is no GPU."""
import json
import os
import resource
import shutil
import subprocess
import sys
import time

gp = sys.argv[1]
smi = sys.argv[2] if len(sys.argv) > 2 else shutil.which("nvidia-smi")
if not smi:
    print("no nvidia-smi: nothing to compare")
    sys.exit(77)

# gpuprof key, nvidia-smi field, kind: "eq" (static), or absolute tolerance
# and unit conversion of the nvidia-smi value (nounits)
FIELDS = [
    ("name", "name", "eq", None),
    ("uuid", "uuid", "eq", None),
    ("pci_bus_id", "pci.bus_id", "eq", None),
    ("driver_version", "driver_version", "eq", None),
    ("mem_total_bytes", "memory.total", 1.0 * 2**20, 2**20),       # MiB rounding
    ("mem_used_bytes", "memory.used", 512.0 * 2**20, 2**20),       # moves with load
    ("util_pct", "utilization.gpu", 15.0, 1),
    ("temp_c", "temperature.gpu", 2.0, 1),
    ("power_w", "power.draw", 25.0, 1),
    ("power_limit_w", "enforced.power.limit", 0.5, 1),
    ("clock_sm_mhz", "clocks.sm", 100.0, 1),
    ("clock_mem_mhz", "clocks.mem", 20.0, 1),
    ("pstate", "pstate", 1.0, "P"),
    ("mig_enabled", "mig.mode.current", 0.0, "enabled"),
]


def smi_query(fields):
    out = subprocess.run([smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=True).stdout
    return [[c.strip() for c in line.split(",")] for line in out.splitlines() if line.strip()]


# keep the fields this driver knows (older drivers lack some)
FIELDS = [f for f in FIELDS if subprocess.run(
    [smi, "--query-gpu=" + f[1], "--format=csv,noheader,nounits"],
    capture_output=True).returncode == 0]
env = dict(os.environ)
doc = json.loads(subprocess.run([gp, "devices", "--json", "--set", "enable_opencl_monitoring=false"],
                                capture_output=True, text=True, check=True, env=env).stdout)
rows = smi_query([f[1] for f in FIELDS])
gpus = [d for d in doc["devices"] if d["backend"] in ("nvml", "nvidia-smi")]
if not gpus:
    print("gpuprof found no NVIDIA GPU")
    sys.exit(77)
bad = 0
print("# gpuprof devices --json vs nvidia-smi --query-gpu (taken right after)")
for d, row in zip(gpus, rows):
    print("## GPU %s (%s, backend %s)" % (row[1], d["name"], d["backend"]))
    for (key, field, tol, conv), sv in zip(FIELDS, row):
        gv = d.get(key) if tol == "eq" else (d["sample"] or {}).get(key)
        if tol == "eq":
            ok = str(gv) == sv or (key == "pci_bus_id" and str(gv).upper() == sv.upper())
            print("%-16s %-28s %-40s %s" % (key, sv, gv, "equal" if ok else "DIFFERENT"))
        else:
            if sv.startswith("[") or sv in ("N/A", ""):
                ok = gv is None
                print("%-16s %-28s %-40s %s" % (key, sv, gv, "both N/A" if ok else "N/A MISMATCH"))
            else:
                if conv == "P":
                    s = float(sv[1:])
                elif conv == "enabled":
                    s = 1.0 if sv == "Enabled" else 0.0
                else:
                    s = float(sv) * conv
                ok = gv is not None and abs(gv - s) <= tol
                print("%-16s %-28s %-40s %s (tolerance %g)" % (key, sv, gv, "ok" if ok else "OFF", tol))
        bad += not ok
# speed: a loop of nvidia-smi queries
n = 20
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.monotonic()
for _ in range(n):
    smi_query([f[1] for f in FIELDS if f[2] != "eq"])
wall = (time.monotonic() - t0) / n
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) / n
print("\n# nvidia-smi --query-gpu loop: %.1f ms wall, %.1f ms CPU per query (%d GPUs)"
      % (wall * 1e3, cpu * 1e3, len(rows)))
print("%d field(s) disagree" % bad)
sys.exit(1 if bad else 0)
