#!/usr/bin/env python3
"""A trace read from a pipe (`/dev/stdin`, a shell's `<(...)`, a FIFO) is
read as the same file on disk is (docs/trace-import.md, "Accepted input"):
a .json.gz is recognised by its magic bytes (they were once looked for with
pread, which a pipe refuses, and the gzip bytes were parsed as JSON); an
error names the same line and column (a pipe cannot be read again to count
them: they were once reported at line 1, or as "not a trace" because the
second read found the pipe empty); a pipe with only JSON whitespace reads as
a blank file does."""
import gzip, json, os, subprocess, sys, tempfile, threading
from gp_testutil import BIN, SRC, check, finish

tmp = tempfile.mkdtemp(prefix="gp_pipe_")
base = open(os.path.join(SRC, "tests", "data", "small_kineto.json"), "rb").read()


def gp(args, data=None):
    try:
        return subprocess.run([os.path.abspath(BIN)] + args, input=data, capture_output=True,
                              timeout=60, cwd=tmp)
    except subprocess.TimeoutExpired:  # export once opened a FIFO again after the export
        return subprocess.CompletedProcess(args, -1, b"", b"timed out")


def from_file(cmd, data, name="t.json"):
    with open(os.path.join(tmp, name), "wb") as f:
        f.write(data)
    p = gp(cmd + [name])
    return p.returncode, p.stdout.replace(name.encode(), b"SRC"), p.stderr.replace(name.encode(), b"SRC")


def from_stdin(cmd, data):
    p = gp(cmd + ["/dev/stdin"], data)
    return p.returncode, p.stdout.replace(b"/dev/stdin", b"SRC"), p.stderr.replace(b"/dev/stdin", b"SRC")


def from_fifo(cmd, data):
    path = os.path.join(tmp, "fifo")
    if os.path.exists(path):
        os.unlink(path)
    os.mkfifo(path)

    def writer():
        with open(path, "wb") as f:
            try:
                f.write(data)
            except BrokenPipeError:
                pass

    th = threading.Thread(target=writer, daemon=True)
    th.start()
    p = gp(cmd + ["fifo"])
    if th.is_alive():  # the reader never opened the FIFO: let the writer go
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    th.join(5)
    return p.returncode, p.stdout.replace(b"fifo", b"SRC"), p.stderr.replace(b"fifo", b"SRC")


# a multi-line trace and the same with an error on a late line
doc = json.loads(base)
pretty = json.dumps(doc, indent=1).encode()
at = pretty.rindex(b'"ts": ') + 6
broken = pretty[:at] + b"x" + pretty[at + 1:]
line = pretty[:at].count(b"\n") + 1
cases = {
    "plain": pretty,
    "gzip": gzip.compress(pretty),
    "gzip -1, two members": gzip.compress(pretty[:100], 1) + gzip.compress(pretty[100:], 1),
    "error on line %d" % line: broken,
    "error on line %d, gzip" % line: gzip.compress(broken),
    "cut short": pretty[:len(pretty) * 2 // 3],
    "blank": b" \n\t\r\n",
    "byte order mark and blank": b"\xef\xbb\xbf\n ",
    "empty": b"",
    "blank, gzip": gzip.compress(b"\n\n"),
    "one byte": b"x",
}
for cmd in (["summary"], ["summary", "--json"], ["analyze", "--json"], ["export"]):
    for what, data in cases.items():
        want = from_file(cmd, data)
        for how, fn in (("stdin", from_stdin), ("FIFO", from_fifo)):
            got = fn(cmd, data)
            check(got == want, "%s of %s through %s: %r, a file gives %r" %
                  (" ".join(cmd), what, how, (got[0], got[2][:200]), (want[0], want[2][:200])))
# /dev/null (a device, not a pipe: it said "1:1: unexpected end of file"),
# and stdin redirected from it, read as the empty file does
for cmd in (["summary"], ["analyze", "--json"]):
    want = from_file(cmd, b"")
    for dev, stdin in (("/dev/null", None), ("/dev/stdin", subprocess.DEVNULL)):
        p = subprocess.run([BIN] + cmd + [dev], stdin=stdin, capture_output=True, timeout=60, cwd=tmp)
        got = (p.returncode, p.stdout.replace(dev.encode(), b"SRC"), p.stderr.replace(dev.encode(), b"SRC"))
        check(got == want, "%s of %s%s: %r, an empty file gives %r" %
              (" ".join(cmd), dev, " < /dev/null" if stdin else "", got, want))
# the error really names the late line (not line 1)
rc, _, err = from_stdin(["summary"], broken)
check(rc == 2 and (b"SRC:%d:" % line) in err, "error through stdin names line %d: %r" % (line, err))
rc, _, err = from_stdin(["summary"], gzip.compress(pretty))
check(rc == 0, "a .json.gz through stdin is read: %r" % err)
sys.exit(finish())
