#!/usr/bin/env python3
"""Secrets never reach any output (issue 16).

tests/data/secrets.tsv holds >= 40 secret forms (options, headers, URL
credentials, NAME=VALUE, token shapes, PEM keys, connection strings,
environment values). Each argv form is recorded as the arguments of a
program (`gpuprof run -- /bin/true FORM...`), all of them once more inside
one `sh -c` script, and the env forms are set in the recorded program's
environment. Then no secret may appear in: the raw store, its WAL and
shared-memory files (bytes, like `strings`), `gpuprof runs` (text and JSON),
`gpuprof sql` of every table, `gpuprof export`, the report, timeline, flame
and memory pages of the run, `gpuprof summary`, every table by `gpuprof
sql`, what `gpuprof serve` shows (runs, traces, views) and the audit log
(`gpuprof audit`, table and JSONL file). The recorded programs copy the
store's -wal and -shm files while the recorder holds them, so the raw WAL
is checked too. The words around the secrets must survive (the forms are not
simply dropped)."""
import json, os, shlex, subprocess, sys, tempfile
from gp_testutil import BIN, SRC, check, failures


def run(args, env=None, ok=True):
    r = subprocess.run([BIN] + args, capture_output=True, text=True, env=env)
    if ok:
        check(r.returncode == 0, "gpuprof %s: rc %d: %s" % (args[0], r.returncode, r.stderr.strip()[:300]))
    return r.stdout + r.stderr


def serve_outputs(db, env, outputs):
    """What gpuprof serve --store shows of the runs: /api/runs, /api/traces,
    the dashboard and the views of each run."""
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode:
        print("note: this build has no serve; its outputs are not checked")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from serve_util import Server
    s = Server(["--quiet", "--store", db], env=env)
    try:
        for u in ("/", "/api/runs", "/api/traces"):
            st, _, b = s.get(u)
            check(st == 200, "serve %s: %d" % (u, st))
            outputs["serve " + u] = b.decode("utf-8", "replace")
        for t in json.loads(outputs["serve /api/traces"])["traces"]:
            for v in ("/view/report", "/api/summary", "/api/profiler/timeline"):
                st, _, b = s.get("%s?trace=%s" % (v, t["id"]))
                outputs["serve %s %s" % (v, t["id"])] = b.decode("utf-8", "replace")
    finally:
        s.stop()


def main():
    rows = []
    with open(os.path.join(SRC, "tests", "data", "secrets.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            kind, secret, form = line.rstrip("\n").split("\t")
            rows.append((kind, secret, form))
    check(len(rows) >= 40, "corpus has %d forms" % len(rows))
    for k, sec, f in rows:  # a secret not in its form would be checked for nothing
        check(sec in f, "corpus: %r is not in its form %r" % (sec, f))
    tmp = tempfile.mkdtemp(prefix="gp_secrets_")
    db = os.path.join(tmp, "s.db")
    audit = os.path.join(tmp, "audit.jsonl")
    env = dict(os.environ, GPUPROF_AUDIT_FILE=audit)
    # a literal \n in a form stands for a newline (PEM blocks)
    argv_forms = [(s, [w.replace("\\n", "\n") for w in shlex.split(f)]) for k, s, f in rows if k == "argv"]
    for s, words in argv_forms:
        run(["run", "-q", "--no-summary", "--no-cuda", "--no-opencl", "-o", db, "--", "/bin/true"] + words,
            env=env)
    # the recorded programs copy the store's -wal and -shm files while the
    # recorder holds them (a finished run leaves none): the raw WAL is checked
    def grab(tag):
        return "cp %s %s 2>/dev/null; cp %s %s 2>/dev/null" % (
            shlex.quote(db + "-wal"), shlex.quote(os.path.join(tmp, tag + ".wal")),
            shlex.quote(db + "-shm"), shlex.quote(os.path.join(tmp, tag + ".shm")))
    script = grab("script") + " ; " + " ; ".join(": " + shlex.join(w) for _, w in argv_forms)
    run(["run", "-q", "--no-summary", "--no-cuda", "--no-opencl", "-o", db, "--", "sh", "-c", script], env=env)
    env2 = dict(env)
    for k, s, f in rows:
        if k == "env":
            name, _, value = f.partition("=")
            env2[name] = value.replace("\\n", "\n")
    run(["run", "-q", "--no-summary", "--no-cuda", "--no-opencl", "-o", db, "--", "sh", "-c",
         grab("env") + "; : envrun"], env=env2)
    outputs = {}
    outputs["runs"] = run(["runs", db])
    outputs["runs --json"] = run(["runs", "--json", db])
    tables = run(["sql", db, "SELECT name FROM sqlite_master WHERE type = 'table'"]).split()[1:]
    check({"runs", "run_env", "audit", "strings"} <= set(tables), "tables listed: %r" % tables)
    for t in tables:
        outputs["sql " + t] = run(["sql", db, "SELECT * FROM \"%s\"" % t])
    outputs["summary"] = run(["summary", db])
    outputs["summary --json"] = run(["summary", "--json", db])
    outputs["export"] = run(["export", db])
    for name, args in (("report", ["report", db]), ("timeline", ["timeline", db]),
                       ("flame", ["flame", db]), ("memory", ["memory", db])):
        out = os.path.join(tmp, name + ".html")
        r = subprocess.run([BIN] + args + ["-o", out], capture_output=True, text=True, env=env)
        outputs[name] = r.stdout + r.stderr + (open(out, encoding="utf-8", errors="replace").read()
                                               if os.path.exists(out) else "")
    outputs["audit"] = run(["audit", db], env=env)
    if os.path.exists(audit):
        outputs["audit.jsonl"] = open(audit, encoding="utf-8", errors="replace").read()
    else:
        check(False, "the audit JSONL file was not written")
    serve_outputs(db, env, outputs)
    raw = {}
    for suffix in ("", "-wal", "-shm"):
        p = db + suffix
        if os.path.exists(p):
            raw["store" + suffix] = open(p, "rb").read()
    for tag in ("script", "env"):
        for ext in ("wal", "shm"):
            p = os.path.join(tmp, "%s.%s" % (tag, ext))
            if os.path.exists(p):
                raw["%s during the %s run" % (ext, tag)] = open(p, "rb").read()
    check("store" in raw, "store written")
    check("wal during the script run" in raw and b"<redacted>" in raw["wal during the script run"],
          "the WAL was copied while the script run was recorded, with the redacted command in it")
    check("wal during the env run" in raw, "the WAL was copied during the env run")
    for k, s, f in rows:
        for name, text in outputs.items():
            check(s not in text, "%s form %r: secret %r in %s" % (k, f[:60], s, name))
        for name, data in raw.items():
            check(s.encode() not in data, "%s form %r: secret %r in raw %s" % (k, f[:60], s, name))
    # what is not secret survives
    cmds = outputs["sql runs"]
    for keep in ("/bin/true", "KEEPME", "--also-keep", "git.example.com/repo.git", "user=bob",
                 "theme=dark" if False else "Cookie:", "Authorization:", "sh -c", "envrun"):
        check(keep in cmds, "%r kept in the stored commands" % keep)
    check("<redacted>" in cmds and cmds.count("<redacted>") >= 2 * len(argv_forms),
          "every form redacted in both runs (%d markers)" % cmds.count("<redacted>"))
    envtab = outputs["sql run_env"]
    check("GPUPROF_DB_PASSWORD|<redacted>" in envtab, "secret env value redacted by name")
    check("CUDA_PROXY|http://u:<redacted>@proxy:3128" in envtab, "URL password in env redacted")
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok: %d forms, %d outputs, %d raw files" % (len(rows), len(outputs), len(raw)))


main()
