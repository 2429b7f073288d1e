#!/usr/bin/env python3
"""Access control between real users (issue 16, docs/security.md "Who can
read it"). As root, the test runs gpuprof under two other uids (setpriv):
an owner (uid 1001) and a reader (uid 65534 in the owner's group).

- The owner's store is created 0600: the reader cannot open it (one-line
  error, non-zero exit).
- With share_group the store is 0640: the reader can read it (sql, summary,
  export, audit --verify) but not write it (run -o refused, sql writes
  refused), no audit record lands in it, its bytes are unchanged and no
  -wal/-shm file of the reader's is left beside it, so that the owner can
  still record into its own store afterwards.
Exit 77 when not root or setpriv is missing."""
import hashlib, os, shutil, stat, subprocess, sys, tempfile
from gp_testutil import check, failures, set_verbose

set_verbose()

BIN = os.path.abspath(os.environ.get("GPUPROF_BIN", "build/gpuprof"))
OWNER, READER = 1001, 65534


def as_user(uid, gid, args, env, rc=0):
    cmd = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid, "--clear-groups", BIN] + args
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if rc is not None:
        check(r.returncode == rc, "uid %d: gpuprof %s: rc %d (want %d) %s" % (
            uid, " ".join(args[:2]), r.returncode, rc, r.stderr.strip()[:200]))
    return r


def sha(p):
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: needs root and setpriv to act as other users")
        return 77
    tmp = tempfile.mkdtemp(prefix="gp_access_")
    os.chmod(tmp, 0o1777)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "GPUPROF_AUDIT_FILE": ""}
    rec = ["run", "-q", "--no-summary", "--no-cuda", "--no-opencl", "-o"]

    # owner-only by default: the reader cannot even open it
    priv = os.path.join(tmp, "priv.db")
    as_user(OWNER, OWNER, rec + [priv, "--", "/bin/true"], env)
    check(os.stat(priv).st_uid == OWNER and stat.S_IMODE(os.stat(priv).st_mode) == 0o600,
          "the owner's store is 0600 (%o)" % stat.S_IMODE(os.stat(priv).st_mode))
    r = as_user(READER, OWNER, ["sql", priv, "SELECT count(*) FROM runs"], env, rc=None)
    check(r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1,
          "another user cannot read a 0600 store: rc %d, %r" % (r.returncode, r.stderr.strip()))

    # shared with the group: readable, never writable by the reader
    db = os.path.join(tmp, "shared.db")
    genv = dict(env, GPUPROF_SHARE_GROUP="1")
    as_user(OWNER, OWNER, rec + [db, "--", "/bin/true"], genv)
    check(stat.S_IMODE(os.stat(db).st_mode) == 0o640, "share_group: 0640")
    before = sha(db)
    r = as_user(READER, OWNER, ["sql", db, "SELECT count(*) FROM runs"], env)
    check(r.stdout.split()[-1:] == ["1"], "the reader reads the runs: %r" % r.stdout)
    as_user(READER, OWNER, ["summary", db], env)
    as_user(READER, OWNER, ["audit", "--verify", db], env)
    as_user(READER, OWNER, ["export", db, "-o", os.path.join(tmp, "r.json")], env)
    for q in ("DELETE FROM runs", "DROP TABLE runs", "VACUUM", "PRAGMA journal_mode = DELETE"):
        r = as_user(READER, OWNER, ["sql", db, q], env, rc=2)
        check("read-only" in r.stderr, "%s refused: %r" % (q, r.stderr.strip()))
    r = as_user(READER, OWNER, rec + [db, "--", "/bin/true"], env, rc=2)
    check("another user" in r.stderr, "run -o into another user's store refused: %r" % r.stderr.strip())
    check(sha(db) == before, "the store's bytes are unchanged by the reader")
    left = [f for f in os.listdir(tmp) if f.startswith("shared.db-")]
    check(not left, "the reader left no -wal/-shm file: %s" % left)
    # the owner still writes its store
    as_user(OWNER, OWNER, rec + [db, "--", "/bin/true"], genv)
    r = as_user(OWNER, OWNER, ["sql", db, "SELECT count(*) FROM runs"], env)
    check(r.stdout.split()[-1:] == ["2"], "the owner recorded a second run after the reader: %r" % r.stdout)
    r = as_user(OWNER, OWNER, ["sql", db, "SELECT count(*) FROM audit WHERE uid = %d" % READER], env)
    check(r.stdout.split()[-1:] == ["0"], "no audit record of the reader in the store: %r" % r.stdout)
    shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        return 1
    print("ok")
    return 0


sys.exit(main())
