#!/usr/bin/env bash
# Progress on stderr: shown when stderr is a terminal (here a pty made by
# `script`) and the import runs longer than the threshold; never when stderr
# is not a terminal.
set -u
GP=${GPUPROF_BIN:-build/gpuprof}
SRC=${GPUPROF_SOURCE_DIR:-.}
if ! command -v script >/dev/null; then echo "SKIP: script(1) not installed"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$SRC/scripts/gen_trace.py" "$tmp/t.json" --steps 200 --seed 5 || exit 1
pass=0 fail=0
# threshold 0 ms: the first refill already reports
GPUPROF_PROGRESS_AFTER_MS=0 script -qec "$GP summary --top 1 $tmp/t.json >/dev/null" "$tmp/tty.log" >/dev/null 2>&1
if grep -q "importing $tmp/t.json:" "$tmp/tty.log"; then pass=$((pass + 1)); else
  echo "not ok - no progress line on a terminal"; cat "$tmp/tty.log"; fail=$((fail + 1)); fi
GPUPROF_PROGRESS_AFTER_MS=0 "$GP" summary --top 1 "$tmp/t.json" >/dev/null 2>"$tmp/err"
if [ ! -s "$tmp/err" ]; then pass=$((pass + 1)); else
  echo "not ok - progress written to a non-terminal stderr"; fail=$((fail + 1)); fi
echo "t_progress: $pass passed, $fail failed"
[ "$fail" = 0 ]
