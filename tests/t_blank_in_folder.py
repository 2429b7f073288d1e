#!/usr/bin/env python3
"""An empty file, or one holding only JSON whitespace (after inflating a
.json.gz; a UTF-8 byte order mark aside), in a folder of traces is left out
like other files without events (docs/trace-import.md): every command that
takes a folder gives the same output as for the folder without it. Named
directly, such a file is refused with one line and exit 2. A file with real
content cut short still fails, in a folder too, and so does a .json.gz whose
blank content has a damaged trailer."""
import gzip, os, shutil, subprocess, sys, tempfile
from gp_testutil import BIN, SRC, check, finish

tmp = tempfile.mkdtemp(prefix="gp_blank_")
base = os.path.join(SRC, "tests", "data", "small_kineto.json")


def gp(*args):
    return subprocess.run([os.path.abspath(BIN)] + list(args), capture_output=True, text=True, timeout=300,
                          cwd=tmp)


def folder(name, traces, extra):
    d = os.path.join(tmp, name)
    os.mkdir(d)
    for i in range(traces):
        shutil.copy(base, os.path.join(d, "r%d.json" % i))
    for fn, data in extra.items():
        with open(os.path.join(d, fn), "wb") as f:
            f.write(data)
    return name


blanks = {
    "empty.json": b"",
    "ws.json": b" \n\t\r\n  ",
    "bom.json": b"\xef\xbb\xbf\n",
    "egz.json.gz": gzip.compress(b""),
    "wsgz.json.gz": gzip.compress(b"\n \n"),
    "zero.json.gz": b"",  # a .json.gz name, no bytes at all
}

# ---- every command that takes a folder: the same output with and without
for traces in (1, 2):
    ref = folder("ref%d" % traces, traces, {})
    blk = folder("blk%d" % traces, traces, blanks)
    cmds = [["summary", "--json"], ["analyze", "--json"], ["advise"], ["memory", "--json"],
            ["flame", "-o", "OUT.folded"], ["report", "-o", "OUT.html"], ["summary"],
            ["analyze"]]
    if traces == 1:  # one trace only
        cmds += [["export"], ["timeline", "-o", "OUT.html"]]
    for cmd in cmds:
        outs = []
        for d in (ref, blk):
            args = [a.replace("OUT", d + "_out") for a in cmd]
            r = gp(*(args + [d]))
            check(r.returncode == 0, "%s on %s: exit %d %r" % (cmd[0], d, r.returncode,
                                                               r.stderr[:300]))
            text = r.stdout
            for a in args:
                if a.startswith(d + "_out") and r.returncode == 0:
                    with open(os.path.join(tmp, a), encoding="utf-8", errors="replace") as f:
                        text = f.read()
            outs.append(text.replace(d, "DIR"))
        check(outs[0] == outs[1] and outs[0],
              "%s: a folder with empty/whitespace files gives the same output (%d trace(s))"
              % (" ".join(cmd), traces))
    # compare, each side a folder with the blank files
    for args in (["--json", ref, blk], ["--json", blk, ref], ["--json", blk, blk]):
        r = gp("compare", *args)
        want = gp("compare", *[a if a != blk else ref for a in args])
        norm = lambda t: t.replace(blk, "DIR").replace(ref, "DIR")
        check(r.returncode == 0 and want.returncode == 0 and norm(r.stdout) == norm(want.stdout),
              "compare %s: exit %d %r" % (" ".join(args), r.returncode, r.stderr[:300]))

# ---- named directly: refused with one line naming the file
blk = "blk1"
for fn in blanks:
    p = os.path.join(blk, fn)
    for cmd in (["summary"], ["analyze"], ["advise"], ["memory"], ["export"],
                ["flame", "-o", "x.folded"], ["timeline", "-o", "x.html"],
                ["report", "-o", "x.html"], ["compare", "ref1"]):
        r = gp(*(cmd + [p]))
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and p in lines[0],
              "%s %s named directly: exit %d %r" % (cmd[0], fn, r.returncode, r.stderr[:300]))

# ---- real content cut short, or a damaged blank .json.gz: still an error in a folder
bad_crc = bytearray(gzip.compress(b" \n"))
bad_crc[-8] ^= 1
fails = {
    "trunc.json": (b'  {"traceEvents": [', "trunc.json:1:"),
    "ws_trunc.json": (b'\n\n [', "ws_trunc.json:3:"),
    "nul.json": (b" \x00 ", "nul.json"),
    "halfbom.json": (b"\xef\xbb", "halfbom.json"),
    "crc.json.gz": (bytes(bad_crc), "incorrect data check"),
    "cut.json.gz": (gzip.compress(b"  \n")[:-3], "truncated gzip stream"),
    "trunc.json.gz": (gzip.compress(b'\n{"traceEvents": [{"ph":'), "trunc.json.gz:2:"),
}
for fn, (data, what) in fails.items():
    d = folder("fail_" + fn.replace(".", "_"), 1, dict(blanks, **{fn: data}))
    for cmd in (["summary"], ["analyze"], ["advise"], ["memory"], ["flame", "-o", "y.folded"],
                ["timeline", "-o", "y.html"], ["report", "-o", "y.html"], ["compare", "ref1"]):
        r = gp(*(cmd + [d]))
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and what in lines[0],
              "%s on a folder with %s: exit %d %r" % (cmd[0], fn, r.returncode, r.stderr[:300]))

shutil.rmtree(tmp)
sys.exit(finish())
