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
state() {
  "$BIN" sql "$db" "SELECT type, name, sql FROM sqlite_master ORDER BY name" &&
  for t in runs processes strings tracks meta; do "$BIN" sql "$db" "SELECT * FROM $t"; done
}
before=$(state) || bad "reading the store"
[ "$("$BIN" sql "$db" "SELECT count(*) FROM runs" | tail -1)" = 1 ] || bad "SELECT works"
"$BIN" sql "$db" "PRAGMA table_info(runs)" | grep -q '|command|' || bad "PRAGMA table_info works"
while IFS='|' read -r q want; do
  [ -z "$q" ] && continue
  out=$("$BIN" sql "$db" "$q" 2>&1 >/dev/null); rc=$?
  [ $rc = 2 ] || bad "$q: exit $rc, want 2"
  echo "$out" | grep -q "gpuprof sql is read-only: $want" || bad "$q: message '$out', want '$want'"
  [ "$(echo "$out" | wc -l)" = 1 ] || bad "$q: more than one line"
done <<EOF2
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
EOF2
after=$(state) || bad "reading the store after"
[ "$before" = "$after" ] || bad "the store changed"
for f in copy.db copy2.db other.db; do [ -e "$tmp/$f" ] && bad "$f was written"; done
[ $fail = 0 ] && echo ok
exit $fail
