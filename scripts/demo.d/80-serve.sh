#!/usr/bin/env bash
# demo step: `gpuprof serve` on the demo traces: starts the server on a free
# loopback port, shows a few API answers (each equal to the command's
# --json output), saves the dashboard page, then stops the server. Set
# GPUPROF_DEMO_SERVE_WAIT=SECONDS to keep it running that long for a browser.
# args: GPUPROF_BIN OUTDIR
set -euo pipefail
GP=$1
OUT=$2
if ! "$GP" serve --help >/dev/null 2>&1; then
  echo "== gpuprof serve: not in this build (libmicrohttpd missing)"
  exit 0
fi
paths=("$OUT/train_trace.json.gz")
[ -d "$OUT/ranks" ] && paths+=("$OUT/ranks")
store=()
[ -f "$OUT/history.db" ] && store=(--store "$OUT/history.db")
echo "== gpuprof serve ${paths[*]} ${store[*]} --listen 127.0.0.1:0"
"$GP" serve --quiet --listen 127.0.0.1:0 "${paths[@]}" "${store[@]}" 2>"$OUT/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/serve.log" && break; sleep 0.1; done
head -n 1 "$OUT/serve.log"
base=$(sed -n 's/.*listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)\/.*/\1/p' "$OUT/serve.log")
get() { python3 -c 'import sys,urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' "$1"; }
echo "== GET /api/traces"
get "$base/api/traces" | python3 -c 'import json,sys; [print("  %s %-8s %s" % (t["id"], t["state"], t["name"])) for t in json.load(sys.stdin)["traces"]]'
id=$(get "$base/api/traces" | python3 -c 'import json,sys; print(json.load(sys.stdin)["traces"][0]["id"])')
echo "== GET /api/profiler/kernels?trace=$id&top=3 (= gpuprof summary --json --category kernel --top 3)"
get "$base/api/profiler/kernels?trace=$id&top=3" >"$OUT/serve_kernels.json"
if cmp -s "$OUT/serve_kernels.json" <("$GP" summary --json --category kernel --top 3 "${paths[0]}"); then
  echo "  byte-identical to the command's output"
else
  echo "  DIFFERS from the command's output"
fi
echo "== GET /api/profiler/hta?trace=$id: $(get "$base/api/profiler/hta?trace=$id" | head -c 100)..."
get "$base/" >"$OUT/dashboard.html"
echo "== the dashboard page: $OUT/dashboard.html (open $base/ in a browser while the server runs)"
if [ -n "${GPUPROF_DEMO_SERVE_WAIT:-}" ]; then
  echo "   serving for ${GPUPROF_DEMO_SERVE_WAIT} s at $base/"
  sleep "$GPUPROF_DEMO_SERVE_WAIT"
fi
