"""What every Python test shares: the paths CTest passes in the environment,
one check() with its list of failures, skip() and finish().

CTest sets GPUPROF_BIN, GPUPROF_SOURCE_DIR and GPUPROF_BUILD_DIR
(tests/CMakeLists.txt); the defaults let a test run by hand from the
repository root after `make build`. Real data is found in ../shared beside the
checkout (traces also through $GPUPROF_TRACES); a test that needs it prints
why it skips (exit 77, CTest's SKIP_RETURN_CODE)."""
import os
import sqlite3
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


# event_types.id -> event table of the run store (docs/store.md)
EVENT_TABLES = {1: "api_calls", 2: "kernels", 3: "copies", 4: "slices", 5: "instants",
                6: "counters", 7: "memory"}


def check_event_rows(db, what):
    """The store at path db: event_rows covers every row of every event
    table exactly once, with a range of the row's own process (schema 5,
    docs/store.md "Which rows are a process's")."""
    con = sqlite3.connect(db)
    try:
        for tbl, table in EVENT_TABLES.items():
            ranges = sorted(con.execute("SELECT first_rowid, last_rowid, proc FROM event_rows "
                                        "WHERE tbl = ?", (tbl,)).fetchall())
            ok = all(f <= l for f, l, _ in ranges) and all(
                a[1] < b[0] for a, b in zip(ranges, ranges[1:]))
            check(ok, "%s: %s ranges are ordered and do not overlap" % (what, table))
            rows = con.execute("SELECT rowid, proc FROM %s ORDER BY rowid" % table).fetchall()
            i, bad = 0, []
            for rowid, proc in rows:
                while i < len(ranges) and ranges[i][1] < rowid:
                    i += 1
                if not (i < len(ranges) and ranges[i][0] <= rowid and ranges[i][2] == proc):
                    bad.append((rowid, proc))
            check(not bad, "%s: %s rows outside a range of their process: %s" %
                  (what, table, bad[:5]))
            covered = sum(l - f + 1 for f, l, _ in ranges)
            check(covered == len(rows), "%s: %s ranges hold %d rowids for %d rows" %
                  (what, table, covered, len(rows)))
    finally:
        con.close()
