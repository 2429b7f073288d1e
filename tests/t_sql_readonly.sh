#!/usr/bin/env bash
# gpuprof sql is read-only (issue 16): every kind of write is refused with a
# one-line "read-only" error and exit 2, and the store is unchanged after
# all of them (same row counts, same schema, no file written by VACUUM INTO,
# nothing attached). Reads (SELECT, PRAGMA table_info) still work.
set -u
BIN=${GPUPROF_BIN:-build/gpuprof}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
db=$tmp/s.db
"$BIN" run -q --no-summary -o "$db" -- /bin/true || { echo "FAIL: cannot record"; exit 1; }
# every table but the audit log (which records each refusal), in full
state() {
  "$BIN" sql "$db" "SELECT type, name, sql FROM sqlite_master ORDER BY name" &&
  for t in $("$BIN" sql "$db" "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'audit' ORDER BY name" | tail -n +2); do
    "$BIN" sql "$db" "SELECT * FROM \"$t\""
  done
}
naudit() { "$BIN" sql "$db" "SELECT count(*) FROM audit" | tail -1; }
before=$(state) || bad "reading the store"
[ "$("$BIN" sql "$db" "SELECT count(*) FROM runs" | tail -1)" = 1 ] || bad "SELECT works"
"$BIN" sql "$db" "PRAGMA table_info(runs)" | grep -q '|command|' || bad "PRAGMA table_info works"
a0=$(naudit)
cat >"$tmp/writes" <<EOF2
DELETE FROM runs|DELETE from runs
DROP TABLE runs|changing the schema
DROP VIEW kernel_v|changing the schema
UPDATE runs SET command = 'x'|UPDATE of runs
INSERT INTO strings VALUES (999999, 'x')|INSERT into strings
REPLACE INTO meta VALUES ('a', 'b')|INSERT into meta
WITH x AS (SELECT 1) DELETE FROM processes|DELETE from processes
CREATE TABLE t(x)|changing the schema
CREATE TEMP TABLE t(x)|changing the schema
CREATE INDEX i ON runs(command)|changing the schema
ALTER TABLE runs ADD COLUMN z|ALTER TABLE
VACUUM|VACUUM
VACUUM INTO '$tmp/copy.db'|VACUUM
  vacuum main into '$tmp/copy2.db'|VACUUM
ATTACH '$tmp/other.db' AS o|ATTACH
SELECT load_extension('$tmp/x.so')|the function load_extension()
PRAGMA query_only = 0|PRAGMA query_only = 0
PRAGMA journal_mode = DELETE|PRAGMA journal_mode
PRAGMA writable_schema = 1|PRAGMA writable_schema
REINDEX|REINDEX
ANALYZE|changing the schema
SELECT 1; DELETE FROM runs|DELETE from runs
SELECT * FROM runs; DROP TABLE runs|changing the schema
CREATE TEMP TRIGGER tr AFTER INSERT ON runs BEGIN SELECT 1; END|changing the schema
CREATE TEMP VIEW v AS SELECT 1|changing the schema
PRAGMA main.writable_schema = ON|PRAGMA writable_schema
PRAGMA wal_checkpoint(TRUNCATE)|PRAGMA wal_checkpoint
DELETE FROM audit|DELETE from audit
UPDATE audit SET result = 'ok'|UPDATE of audit
EOF2
n=0
while IFS='|' read -r q want; do
  [ -z "$q" ] && continue
  n=$((n + 1))
  out=$("$BIN" sql "$db" "$q" 2>&1 >"$tmp/stdout"); rc=$?
  [ $rc = 2 ] || bad "$q: exit $rc, want 2"
  echo "$out" | grep -q "gpuprof sql is read-only: $want" || bad "$q: message '$out', want '$want'"
  [ "$(echo "$out" | wc -l)" = 1 ] || bad "$q: more than one line"
  [ -s "$tmp/stdout" ] && bad "$q: partial output before the refusal: $(head -c 200 "$tmp/stdout")"
done <"$tmp/writes"
# the audit log records each refused statement (and nothing else changed);
# the sql that counted a0 is a record too
c1=$(naudit)
[ "$c1" = $((a0 + 1 + n)) ] || bad "audit records: $c1, want $((a0 + 1 + n))"
[ "$("$BIN" sql "$db" "SELECT count(*) FROM audit WHERE rowid > $((a0 + 1)) AND rowid <= $((a0 + 1 + n)) AND action = 'sql' AND result LIKE '%read-only%'" | tail -1)" = $n ] ||
  bad "the $n audit records after the count are the refusals"
"$BIN" audit --verify "$db" >/dev/null || bad "audit chain broken"
after=$(state) || bad "reading the store after"
[ "$before" = "$after" ] || bad "the store changed"
for f in copy.db copy2.db other.db; do [ -e "$tmp/$f" ] && bad "$f was written"; done
# byte for byte: another user (whose refusals the store does not record)
# tries every write; the file's SHA-256 stays and no -wal/-shm is left
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$tmp"; chmod 644 "$db"
  before_sha=$(sha256sum <"$db")
  while IFS='|' read -r q want; do
    [ -z "$q" ] && continue
    setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN" sql "$db" "$q" >/dev/null 2>&1
    [ $? = 2 ] || bad "as another user, $q: not refused"
  done <"$tmp/writes"
  [ "$(sha256sum <"$db")" = "$before_sha" ] || bad "the store file changed (SHA-256)"
  ls "$db"-wal "$db"-shm >/dev/null 2>&1 && bad "-wal/-shm files left beside the store"
else
  echo "note: not root or no setpriv: the byte-for-byte check as another user is skipped"
fi
[ $fail = 0 ] && echo ok
exit $fail
