#!/usr/bin/env bash
# Bad input through the CLI: truncated files at many offsets, garbage,
# wrong types, missing files: one line "FILE:LINE:COL: ..." (or "FILE: ...")
# on stderr and exit status 2; never a crash or a hang.
set -u
GP=${GPUPROF_BIN:-build/gpuprof}
SRC=${GPUPROF_SOURCE_DIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # name, expected-exit, file-prefix, command...
  local name=$1 want=$2 prefix=$3
  shift 3
  timeout 20 "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" != "$want" ] || { [ "$want" = 2 ] && { [ "$lines" != 1 ] || ! grep -q "^gpuprof: $prefix" "$tmp/err"; }; }; then
    echo "not ok - $name: exit $rc, stderr: $(head -c 300 "$tmp/err")"
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}
fx="$SRC/tests/data/small_kineto.json"
size=$(stat -c %s "$fx")
# 60 truncation points spread over the file, plus the first and last bytes
for i in $(seq 0 59) ; do
  cut=$(( (size * i) / 60 + i ))
  head -c "$cut" "$fx" >"$tmp/cut.json"
  want="$tmp/cut.json:[0-9]*:[0-9]*: "
  # an empty file is a document without events (docs/trace-import.md)
  [ "$cut" = 0 ] && want="$tmp/cut.json: not a trace"
  check "truncated at $cut" 2 "$want" "$GP" summary "$tmp/cut.json"
done
head -c $((size - 1)) "$fx" >"$tmp/cut.json"
check "missing last byte" 2 "$tmp/cut.json:[0-9]*:[0-9]*: " "$GP" summary "$tmp/cut.json"
# truncated gzip
gzip -c "$fx" | head -c 5000 >"$tmp/cut.json.gz"
check "truncated gzip" 2 "$tmp/cut.json.gz" "$GP" summary "$tmp/cut.json.gz"
# garbage
head -c 4096 /dev/urandom >"$tmp/garbage.json"
check "random bytes" 2 "$tmp/garbage.json" "$GP" summary "$tmp/garbage.json"
printf '<html>not a trace</html>' >"$tmp/html.json"
check "html" 2 "$tmp/html.json:1:1: " "$GP" summary "$tmp/html.json"
# wrong types and absurd values
printf '{"traceEvents": [{"ph": "X", "ts": [1], "dur": 3}]}' >"$tmp/t1.json"
check "ts array" 2 "$tmp/t1.json:1:" "$GP" summary "$tmp/t1.json"
printf '{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1e300}]}' >"$tmp/t2.json"
check "dur huge" 2 "$tmp/t2.json:1:" "$GP" summary "$tmp/t2.json"
printf '{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2, "args": 7}]}' >"$tmp/t3.json"
check "args number" 2 "$tmp/t3.json:1:" "$GP" summary "$tmp/t3.json"
printf '{"traceEvents": "nope"}' >"$tmp/t4.json"
check "traceEvents string" 2 "$tmp/t4.json:1:" "$GP" summary "$tmp/t4.json"
# missing file, empty folder, bad option
check "missing file" 2 "/nonexistent" "$GP" summary /nonexistent/trace.json
mkdir "$tmp/empty"
check "empty folder" 2 "$tmp/empty" "$GP" summary "$tmp/empty"
check "bad --top" 2 "--top" "$GP" summary --top x "$fx"
# counts and shards are digits only (strtol would take "", " 2" and "+2")
for v in "" " 2" "+2" "2x" "-1"; do
  check "bad --top '$v'" 2 "--top" "$GP" summary --top "$v" "$fx"
  check "bad --workers '$v'" 2 "--workers" "$GP" analyze --workers "$v" "$fx"
done
for v in " 1/3" "+1/3" "1/+3" "1/ 3" "1/3 " "3/3" "1/0" "/3" "1/"; do
  check "bad --shard '$v'" 2 "--shard" "$GP" analyze --shard "$v" "$fx"
done
check "good --shard" 0 "" "$GP" analyze --shard 0/2 -o "$tmp/part0.json" "$fx"
check "bad --category" 2 "unknown category 'nope'" "$GP" summary --category kernel,nope "$fx"
# the good file still works, and an unterminated bare array is accepted
check "good file" 0 "" "$GP" summary "$fx"
printf '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},\n' >"$tmp/unterminated.json"
check "unterminated array" 0 "" "$GP" summary "$tmp/unterminated.json"
# a folder: JSON files without an event array (expected.hta.json) are not traces
mkdir "$tmp/folder"
cp "$fx" "$tmp/folder/rank-0.json"
printf '{"reference": "not a trace", "ranks": [0]}' >"$tmp/folder/expected.hta.json"
n=$("$GP" summary --json "$tmp/folder" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["traces"]))')
if [ "$n" = 1 ]; then pass=$((pass + 1)); else echo "not ok - folder: $n traces, expected 1"; fail=$((fail + 1)); fi
rm "$tmp/folder/rank-0.json"
check "folder without traces" 2 "$tmp/folder" "$GP" summary "$tmp/folder"
echo "t_cli_errors: $pass passed, $fail failed"
[ "$fail" = 0 ]
