#!/usr/bin/env python3
"""tests/t_monitor_tty.py: the full-screen `gpuprof monitor` view on a
pseudo-terminal, with the NVML stand-in: two frames (--count 2) with the
device rows, utilization/memory bars, history line and processes; the cursor
and the terminal modes are restored at exit; 'q' quits a view without
--count."""
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from gp_testutil import check, failures, set_verbose

set_verbose()

GP = os.environ.get("GPUPROF_BIN")
SRC = os.environ.get("GPUPROF_SOURCE_DIR")
BUILD = os.environ.get("GPUPROF_BUILD_DIR")
if not GP or not SRC or not BUILD:
    print("skip: GPUPROF_BIN / GPUPROF_SOURCE_DIR / GPUPROF_BUILD_DIR not set")
    sys.exit(77)
FAKE = os.path.join(BUILD, "tests", "libfake_nvml.so")
if not os.path.exists(FAKE):
    print("skip: %s not built" % FAKE)
    sys.exit(77)
try:
    master, slave = pty.openpty()
except OSError as e:
    print("skip: no pseudo-terminal here (%s)" % e)
    sys.exit(77)
os.close(master)
os.close(slave)

def env():
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("GPUPROF_") or k in ("GPUPROF_BIN", "GPUPROF_SOURCE_DIR",
                                                  "GPUPROF_BUILD_DIR")}
    e.update({"GPUPROF_NVML_LIB": FAKE,
              "FAKE_NVML_SCENARIO": os.path.join(SRC, "tests", "data", "monitor",
                                                 "nvml_basic.scn"),
              "GPUPROF_NVIDIA_SMI": "/nonexistent/nvidia-smi", "TERM": "xterm",
              "GPUPROF_OUTPUT_DIR": os.path.join(BUILD, "t_monitor_tty.out")})
    return e


def run_on_pty(args, keys=None, timeout=30):
    """Runs gpuprof with stdin/stdout/stderr on a 40x120 pty; returns
    (exit code or None on timeout, output bytes, slave termios after exit)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    before = termios.tcgetattr(slave)
    p = subprocess.Popen([GP] + args, stdin=slave, stdout=slave, stderr=slave, env=env(),
                         start_new_session=True)
    out = b""
    deadline = time.time() + timeout
    sent = False
    while time.time() < deadline:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            out += chunk
        if keys and not sent and out.count(b"\x1b[H\x1b[2J") >= 1:
            time.sleep(0.2)
            os.write(master, keys)
            sent = True
        if p.poll() is not None:
            # drain what is left
            while select.select([master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            break
    rc = p.poll()
    if rc is None:
        p.kill()
        p.wait()
    after = termios.tcgetattr(slave)
    os.close(master)
    os.close(slave)
    return rc, out, before, after


rc, out, before, after = run_on_pty(["monitor", "--count", "2", "--interval", "0.1"])
text = out.decode("utf-8", "replace")
check(rc == 0, "monitor --count 2 on a tty exits 0 (rc=%s)" % rc)
check(text.count("\x1b[H\x1b[2J") == 2, "two full-screen frames (clear + home)")
check("gpuprof monitor" in text and "every 0.10 s" in text, "title line with the interval")
check(re.search(r"\x1b\[1m0 NVIDIA H100 80GB HBM3\x1b\[0m", text) is not None,
      "device row 0 (NVML stand-in)")
check(re.search(r"\x1b\[1m1 NVIDIA H100 80GB HBM3\x1b\[0m", text) is not None, "device row 1")
# util bars: 10 % on the first frame, 50 % on the second (scenario values);
# 20-wide bars on a 120-column terminal
bars = re.findall(r"util \[\x1b\[3[123]m([| ]{20})\x1b\[0m\] (\S+)", text)
check(len(bars) >= 4, "util bars drawn for the GPUs on both frames (%d)" % len(bars))
fills = [b[0].count("|") for b in bars]
check(2 in fills and 10 in fills, "bar fill follows the value (10 %% -> 2/20, 50 %% -> 10/20): %s"
      % fills)
check(re.search(r"mem \[\x1b\[3[123]m[| ]{20}\x1b\[0m\]", text) is not None, "memory bar")
check("util history" in text, "history line")
check(re.search(r"pid 1\s", text) is not None, "process row (pid 1 of the scenario)")
check("\x1b[?25l" in text and text.rfind("\x1b[?25h") > text.rfind("\x1b[H\x1b[2J"),
      "cursor hidden, then shown again after the last frame")
check(after[3] == before[3], "terminal local modes (ICANON/ECHO) restored at exit")

# no --count: runs until 'q' is typed
t0 = time.time()
rc, out, before, after = run_on_pty(["monitor", "--interval", "0.2"], keys=b"q", timeout=20)
check(rc == 0 and time.time() - t0 < 15, "'q' quits the live view (rc=%s)" % rc)
check(after[3] == before[3], "terminal modes restored after 'q'")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all checks passed")
