#!/usr/bin/env python3
"""tests/t_monitor_smi_signals.py: `gpuprof monitor` on the nvidia-smi
fallback leaves no nvidia-smi behind: a hangup stops it as SIGTERM does
(exit 0, its streams stopped), and when it is SIGKILLed its nvidia-smi
children die with it (PR_SET_PDEATHSIG), even ones that never answer
(tests/data/monitor/misbehaving-nvidia-smi, MISB_SMI_MODE=hang)."""
import os
import signal
import subprocess
import sys
import tempfile
import time
from gp_testutil import check, finish, set_verbose

set_verbose()

GP = os.environ.get("GPUPROF_BIN")
SRC = os.environ.get("GPUPROF_SOURCE_DIR")
if not GP or not SRC:
    print("skip: GPUPROF_BIN / GPUPROF_SOURCE_DIR not set")
    sys.exit(77)
SMI = os.path.join(SRC, "tests", "data", "monitor", "misbehaving-nvidia-smi")


def alive(pid):
    """True while pid exists and is not a zombie (dead, not yet reaped)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def started(log):
    try:
        with open(log) as f:
            return [(int(l.split()[0]), l) for l in f if l.strip()]
    except OSError:
        return []


def run_and_signal(sig, tmp):
    log = os.path.join(tmp, "smi-%d.log" % sig)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPROF_")}
    env.update({"GPUPROF_NVML_LIB": "/nonexistent/libnvidia-ml.so.1",
                "GPUPROF_NVIDIA_SMI": SMI, "GPUPROF_OUTPUT_DIR": tmp,
                "MISB_SMI_MODE": "hang", "MISB_SMI_LOG": log})
    p = subprocess.Popen([GP, "monitor", "--json", "--gpus-only", "--count", "100000",
                          "--interval", "0.2"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    # wait until both -lms streams run (they hang: no output, never exit)
    for _ in range(600):
        streams = [pid for pid, l in started(log) if " -lms " in l]
        if len(streams) >= 2 and all(alive(s) for s in streams[:2]):
            break
        time.sleep(0.05)
    check(len(streams) >= 2, "signal %d: the two -lms streams started" % sig)
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
        check(False, "signal %d: gpuprof monitor did not stop" % sig)
    err = p.stderr.read()
    p.stderr.close()
    pids = sorted({pid for pid, _ in started(log)})
    left = pids
    for _ in range(200):  # SIGKILLed children go at once; allow for a loaded machine
        left = [q for q in pids if alive(q)]
        if not left:
            break
        time.sleep(0.05)
    for q in left:
        os.kill(q, signal.SIGKILL)
    return rc, err, streams, left


with tempfile.TemporaryDirectory() as tmp:
    rc, err, streams, left = run_and_signal(signal.SIGHUP, tmp)
    check(rc == 0, "SIGHUP: gpuprof monitor stops cleanly (exit %r, stderr %r)" % (rc, err[-300:]))
    check(not left, "SIGHUP: no nvidia-smi left running (alive: %r)" % left)

    rc, err, streams, left = run_and_signal(signal.SIGKILL, tmp)
    check(rc == -signal.SIGKILL, "SIGKILL: gpuprof killed (%r)" % rc)
    check(not left, "SIGKILL: its nvidia-smi children died with it (alive: %r)" % left)

    rc, err, streams, left = run_and_signal(signal.SIGTERM, tmp)
    check(rc == 0, "SIGTERM: gpuprof monitor stops cleanly (exit %r)" % rc)
    check(not left, "SIGTERM: no nvidia-smi left running (alive: %r)" % left)

sys.exit(finish())
