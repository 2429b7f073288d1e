"""What every Python test shares: the paths CTest passes in the environment,
one check() with its list of failures, skip() and finish().

CTest sets GPUPROF_BIN, GPUPROF_SOURCE_DIR and GPUPROF_BUILD_DIR
(tests/CMakeLists.txt); the defaults let a test run by hand from the
repository root after `make build`. Real data is found in ../shared beside the
checkout (traces also through $GPUPROF_TRACES); a test that needs it prints
why it skips (exit 77, CTest's SKIP_RETURN_CODE)."""
import os
import subprocess
import sys

BIN = os.environ.get("GPUPROF_BIN") or "build/gpuprof"
SRC = os.environ.get("GPUPROF_SOURCE_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BUILD = os.environ.get("GPUPROF_BUILD_DIR") or os.path.join(SRC, "build")
SHARED = os.path.join(SRC, "..", "shared")
TRACES = os.environ.get("GPUPROF_TRACES") or os.path.join(SHARED, "traces")

failures = []  # messages of the failed checks, in order
_state = {"checked": 0, "verbose": False}


def set_verbose(on=True):
    """Also print a line for every check that passes."""
    _state["verbose"] = on


def check(cond, msg):
    """Records one check: a failure is printed and kept in `failures`."""
    _state["checked"] += 1
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)
    elif _state["verbose"]:
        print("ok:  ", msg)
    return bool(cond)


def checked():
    """How many checks ran so far."""
    return _state["checked"]


def skip(reason):
    """Ends the test as skipped (CTest's SKIP_RETURN_CODE 77) with its reason."""
    print("SKIP:", reason)
    sys.exit(77)


def gp(*args, timeout=300, **kw):
    """Runs `gpuprof ARGS...` and returns the CompletedProcess (text output)."""
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=timeout, **kw)


def gp_ok(*args):
    """Runs `gpuprof ARGS...` and returns its stdout; a non-zero exit ends the
    test with the command's output (for steps the rest of the test needs)."""
    r = subprocess.run([BIN] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        sys.exit("gpuprof %s: exit %d" % (" ".join(args), r.returncode))
    return r.stdout


def finish():
    """The exit status of the test: prints the count of checks and failures."""
    print("%d check(s), %d failure(s)" % (checked(), len(failures)))
    return 1 if failures else 0
