#!/usr/bin/env bash
# gpuprof serve under load (bounded, loopback only, stops by itself): a
# warm-up, then GPUPROF_LOAD_SECONDS (default 10) of mixed requests with wrk
# (tests/serve_mixed.lua: results of a real trace, the trace list, the
# dashboard) at the highest rate the machine gives: no error and no answer
# other than 200, and the server's RSS does not grow after the warm-up (by
# more than 16 MiB: allocator noise). Reports requests, p50 and p99 (no
# assertion on time). bench/serve.sh runs the 60 s version. Exit 77 without
# wrk, serve or the shared traces.
set -u
GP=${GPUPROF_BIN:-build/gpuprof}
SRC=${GPUPROF_SOURCE_DIR:-.}
TRACES=${GPUPROF_TRACES:-$SRC/../shared/traces}
SECS=${GPUPROF_LOAD_SECONDS:-10}
command -v wrk >/dev/null || { echo "SKIP: wrk not installed (scripts/install-deps.sh)"; exit 77; }
"$GP" serve --help >/dev/null 2>&1 || { echo "SKIP: no serve command in this build"; exit 77; }
T=$TRACES/alexnet
[ -d "$T" ] || { echo "SKIP: shared traces not found at $TRACES"; exit 77; }
tmp=$(mktemp -d)
# In an ASan build freed memory waits in a quarantine (256 MB by default)
# instead of being reused, which would read as growth: the server runs
# without it, as a normal build reuses freed memory (no effect without ASan).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
  "$GP" serve --listen 127.0.0.1:0 --quiet --max-per-ip 64 "$T" 2>"$tmp/log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do grep -q listening "$tmp/log" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$tmp/log")
[ -n "$port" ] || { echo "FAIL: server did not start"; cat "$tmp/log"; exit 1; }
id=$(curl -s "http://127.0.0.1:$port/api/traces" | python3 -c 'import json,sys; print(json.load(sys.stdin)["traces"][0]["id"])')
rss() { awk '/VmRSS/{print $2}' /proc/$pid/status; }
# warm-up: every result computed once, then a short run
GP_TRACE=$id wrk -t2 -c8 -d3s -s "$SRC/tests/serve_mixed.lua" "http://127.0.0.1:$port/" >"$tmp/warm" 2>&1
r0=$(rss)
GP_TRACE=$id wrk -t2 -c16 -d"${SECS}s" --latency -s "$SRC/tests/serve_mixed.lua" \
  "http://127.0.0.1:$port/" >"$tmp/run" 2>&1
r1=$(rss)
res=$(grep RESULT "$tmp/run")
echo "load: ${SECS}s mixed: $res; RSS after warm-up ${r0} kB, after the run ${r1} kB"
grep -E "Requests/sec" "$tmp/run"
fail=0
req=$(echo "$res" | sed -n 's/.*requests=\([0-9]*\).*/\1/p')
bad=$(echo "$res" | sed -n 's/.*non200=\([0-9]*\).*/\1/p')
err=$(echo "$res" | sed -n 's/.*errors=\([0-9]*\).*/\1/p')
[ -n "$req" ] && [ "$req" -gt 0 ] || { echo "FAIL: no request completed"; cat "$tmp/run"; fail=1; }
[ "${bad:-1}" = 0 ] || { echo "FAIL: $bad answers other than 200"; fail=1; }
[ "${err:-1}" = 0 ] || { echo "FAIL: $err socket errors"; fail=1; }
[ $((r1 - r0)) -le 16384 ] || { echo "FAIL: RSS grew by $((r1 - r0)) kB after the warm-up"; fail=1; }
kill -0 $pid 2>/dev/null || { echo "FAIL: the server died"; fail=1; }
[ $fail = 0 ] && echo "t_serve_load: ok"
exit $fail
