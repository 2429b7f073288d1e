#!/usr/bin/env python3
"""t_analyze_shard.py (issue 19, part 5): `gpuprof analyze --shard I/N` parts
combined by `gpuprof merge` give byte for byte the output of one
`gpuprof analyze` of all the files (JSON and text, default and --compat hta),
for every shard count from 1 to more shards than files, on every shared
multi-rank folder, on a folder of all the shared traces together, and on
synthetic folders (bench/gen_ranks.py --variety: ranks numbered by
distributedInfo, file name or position, two files claiming one rank, ranks
with one ProfilerStep name or none -- the compat step filter then depends on
the other ranks, also across parts --, fractional timestamps, a kernel name
that is not UTF-8, a .gz rank, an empty trace, a JSON file that is no trace).
Errors (overlapping, missing or foreign shards, other options or inputs,
corrupt parts, bad --shard) are one line and exit 2. (The RSS bound is
tests/test_analyze_stream.c: a child of this Python process would inherit
its peak RSS through exec.)"""
import os
import shutil
import subprocess
import sys
import tempfile
from gp_testutil import BIN, SRC, TRACES, check, failures

GEN = os.path.join(SRC, "bench", "gen_ranks.py")


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True)


def ok(*args):
    p = run(*args)
    if p.returncode != 0:
        raise SystemExit("FAIL: gpuprof %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                           p.stderr.decode(errors="replace")))
    return p.stdout


def parts(tmp, folder, n, mode):
    out = []
    for i in range(n):
        path = os.path.join(tmp, "part-%d-of-%d.json" % (i, n))
        ok("analyze", *mode, "--shard", "%d/%d" % (i, n), "-o", path, folder)
        out.append(path)
    return out


def nfiles(folder):
    return len([f for f in os.listdir(folder) if f.endswith(".json") or f.endswith(".json.gz")])


def same_as_single(tmp, folder, counts, text=True):
    for mode in ([], ["--compat", "hta"]):
        single = ok("analyze", "--json", *mode, folder)
        single_txt = ok("analyze", *mode, folder) if text else None
        for n in counts:
            ps = parts(tmp, folder, n, mode)
            merged = ok("merge", "--json", *reversed(ps))  # order of the parts is free
            check(merged == single, "%s %s: merge of %d parts differs from the single run's JSON"
                  % (folder, mode, n))
            if text and n == counts[-1]:
                check(ok("merge", *ps) == single_txt,
                      "%s %s: merge of %d parts differs from the single run's text" %
                      (folder, mode, n))
            for p in ps:
                os.unlink(p)


def error(what, args, needle):
    p = run(*args)
    err = p.stderr.decode(errors="replace")
    lines = err.strip().split("\n")
    check(p.returncode == 2, "%s: exit %d, not 2 (%s)" % (what, p.returncode, err.strip()))
    check(len(lines) == 1 and lines[0].startswith("gpuprof: ") and needle in lines[0],
          "%s: expected one line with %r, got %r" % (what, needle, err))
    check(p.stdout == b"", "%s: wrote to stdout" % what)


def errors(tmp, folder, other):
    p3 = parts(tmp, folder, 3, [])
    error("overlapping shards", ["merge", p3[0], p3[1], p3[1], p3[2]], "overlapping")
    error("missing shard", ["merge", p3[0], p3[2]], "shard 1/3 is missing")
    p2 = parts(tmp, folder, 2, [])
    error("shard counts", ["merge", p3[0], p3[1], p3[2], p2[0]], "shards")
    top = os.path.join(tmp, "top5.json")
    ok("analyze", "--top", "5", "--shard", "1/3", "-o", top, folder)
    error("other options", ["merge", p3[0], top, p3[2]], "other analyze options")
    hta = os.path.join(tmp, "hta.json")
    ok("analyze", "--compat", "hta", "--shard", "1/3", "-o", hta, folder)
    error("other mode", ["merge", p3[0], hta, p3[2]], "other analyze options")
    foreign = os.path.join(tmp, "foreign.json")
    ok("analyze", "--shard", "1/3", "-o", foreign, other)
    error("other inputs", ["merge", p3[0], foreign, p3[2]], "other input files")
    # "DIR/" names the same files as "DIR" (it expanded to "DIR//x.json",
    # so its parts were refused as made from other input files)
    slash = os.path.join(tmp, "slash.json")
    ok("analyze", "--shard", "1/3", "-o", slash, folder.rstrip("/") + "//")
    ok("merge", p3[0], slash, p3[2])
    os.unlink(slash)
    # a relative and an absolute path to one folder (shard jobs started in
    # other working directories) name the same files: each part carries the
    # resolved paths, which merge compares (before: "other input files")
    rel = os.path.join(tmp, "relative.json")
    r = subprocess.run([BIN, "analyze", "--shard", "1/3", "-o", rel,
                        os.path.relpath(folder, os.path.dirname(folder))],
                       cwd=os.path.dirname(folder), capture_output=True)
    assert r.returncode == 0, r.stderr
    ok("merge", p3[0], rel, p3[2])
    os.unlink(rel)
    text = open(p3[1], "rb").read()
    cases = {
        "truncated": text[: len(text) // 2],
        "empty": b"",
        "not json": b"hello",
        "other json": b'{"traceEvents": []}',
        "version": text.replace(b'"version":1', b'"version":99', 1),
        "mangled field": text.replace(b'"tb.valid":', b'"tb.valid":"x",' + b'"_":', 1),
        "missing table": text.replace(b'"queue":[', b'"queue_":[', 1),
        "fraction": text.replace(b'"rank_hint":', b'"rank_hint":0.5,"_":', 1),
        "range": text.replace(b'"first":', b'"first":1000,"_":', 1),
    }
    check(b'"tb.valid":' in text and b'"queue":[' in text, "part lacks expected keys")
    for what, body in cases.items():
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "wb") as f:
            f.write(body)
        error("corrupt part (%s)" % what, ["merge", p3[0], bad, p3[2]], bad)
    # a version that is no number is said so (it was "format version 0")
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "wb") as f:
        f.write(text.replace(b'"version":1', b'"version":"1"', 1))
    error("string version", ["merge", p3[0], bad, p3[2]], '"version" is not a number')
    error("no such part", ["merge", os.path.join(tmp, "nope.json")], "nope.json")
    # parts compressed for the trip between machines (gzip, several members
    # too) and a part on a pipe merge as the plain files do
    import gzip
    gz = p3[1] + ".gz"
    with open(gz, "wb") as f:
        f.write(gzip.compress(text[: len(text) // 3]) + gzip.compress(text[len(text) // 3:]))
    check(ok("merge", "--json", p3[0], gz, p3[2]) == ok("merge", "--json", *p3),
          "a gzip part (two members) merges as the plain one")
    with open(p3[2], "rb") as f:
        pp = subprocess.run([BIN, "merge", "--json", p3[0], p3[1], "/dev/stdin"], input=f.read(),
                            capture_output=True)
    check(pp.returncode == 0 and pp.stdout == ok("merge", "--json", *p3),
          "a part on a pipe merges as the file: exit %d %r" % (pp.returncode, pp.stderr[:200]))
    with open(gz, "wb") as f:
        f.write(gzip.compress(text)[:-40])
    error("truncated gzip part", ["merge", p3[0], gz, p3[2]], gz)
    os.unlink(gz)
    for bad in ("3/3", "a/b", "-1/2", "1", "1/0", "0/2x"):
        error("--shard %s" % bad, ["analyze", "--shard", bad, folder], "--shard")
    for p in p3 + p2:
        os.unlink(p)


def outputs_in_place(tmp, folder):
    """-o replaces a regular file whole (a failed write leaves it), but a
    FIFO or a symbolic link is written through, never replaced by a file
    (before, -o /dev/null run as root turned /dev/null into a file)."""
    want = ok("analyze", "--json", folder)
    fifo = os.path.join(tmp, "out.fifo")
    os.mkfifo(fifo)
    got = {}

    def read():
        with open(fifo, "rb") as f:
            got["b"] = f.read()
    import threading
    th = threading.Thread(target=read, daemon=True)  # never left blocking the exit
    th.start()
    ok("analyze", "--json", "-o", fifo, folder)
    th.join(20)
    check(os.path.exists(fifo) and not os.path.isfile(fifo) and got.get("b") == want,
          "analyze -o FIFO: written through, still a FIFO")
    target = os.path.join(tmp, "target.json")
    link = os.path.join(tmp, "out.link")
    with open(target, "w") as f:
        f.write("old")
    os.symlink(target, link)
    ok("analyze", "--json", "-o", link, folder)
    check(os.path.islink(link) and open(target, "rb").read() == want,
          "analyze -o LINK: written through the link, still a link")
    # a regular file is replaced by rename: a file opened before keeps the
    # old bytes; nothing is left beside it
    reg = os.path.join(tmp, "reg.json")
    with open(reg, "w") as f:
        f.write("old")
    with open(reg, "rb") as before:
        ok("analyze", "--json", "-o", reg, folder)
        check(before.read() == b"old" and open(reg, "rb").read() == want,
              "analyze -o FILE: replaced whole")
    check(not [x for x in os.listdir(tmp) if ".tmp" in x], "no temporary file left")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        syn = os.path.join(tmp, "syn")
        subprocess.run([sys.executable, GEN, syn, "--ranks", "30", "--mb", "0.15", "--variety"],
                       check=True)
        n = nfiles(syn)
        same_as_single(tmp, syn, [1, 2, 3, 7, n, n + 3])
        # compat step filter decided across ranks: one name each, different
        # (3, 10: on) or equal (3, 17: off), with a rank without steps (4)
        for name, members in (("s_on", ["rank_0003.json", "rank_0010.json"]),
                              ("s_off", ["rank_0003.json", "rank_0017.json", "rank_0004.json.gz"]),
                              ("s_one", ["rank_0003.json"])):
            d = os.path.join(tmp, name)
            os.mkdir(d)
            for m in members:
                shutil.copy(os.path.join(syn, m), d)
            same_as_single(tmp, d, [1, 2, 3])
        outputs_in_place(tmp, os.path.join(tmp, "s_one"))
        on = ok("analyze", "--compat", "hta", os.path.join(tmp, "s_on")).decode()
        off = ok("analyze", "--compat", "hta", os.path.join(tmp, "s_off")).decode()
        check(on.count("events after the last ProfilerStep dropped") == 2,
              "two ranks with different single step names: filter not applied")
        check("events after the last ProfilerStep dropped" not in off,
              "ranks with one equal step name: filter applied")
        errors(tmp, syn, os.path.join(tmp, "s_off"))
        # a rank number given to two files is said on stderr, by analyze and
        # by merge alike (the report keeps both files as ranks); none for a
        # folder whose ranks are distinct
        dup = "host_0002_trace.json" in os.listdir(syn)  # its position is another's rank
        for args in (["analyze", syn], ["analyze", os.path.join(tmp, "s_off")]):
            p = run(*args)
            err = p.stderr.decode(errors="replace")
            want = dup and args[1] == syn
            check(p.returncode == 0 and (("is given to more than one file" in err
                                          and "host_0002_trace.json" in err) == want)
                  and (want or err == ""),
                  "%s: duplicate rank note %s expected: %r" % (args, "is" if want else "not", err))
        ps = parts(tmp, syn, 2, [])
        p = run("merge", *ps)
        check(p.returncode == 0 and "is given to more than one file (%s"
              % os.path.join(syn, "host_0002_trace.json") in p.stderr.decode(errors="replace"),
              "merge: duplicate rank note")
        for x in ps:
            os.unlink(x)
        if os.path.isdir(TRACES):
            every = os.path.join(tmp, "every")
            os.mkdir(every)
            for sub in sorted(os.listdir(TRACES)):
                full = os.path.join(TRACES, sub)
                if not os.path.isdir(full):
                    continue
                for f in sorted(os.listdir(full)):
                    if f.endswith(".json.gz") or f.endswith(".json"):
                        os.symlink(os.path.join(full, f), os.path.join(every, sub + "_" + f))
                if sum(f.endswith(".json.gz") for f in os.listdir(full)) > 1:
                    same_as_single(tmp, full, [1, 2, 3])
            same_as_single(tmp, every, [2, 5], text=True)
        else:
            print("shared traces not found (%s): the shared folders are skipped" % TRACES)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
