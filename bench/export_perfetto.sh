#!/usr/bin/env bash
# Perfetto export benchmark (issue 17): tiles a real trace into a large plain
# JSON file and measures, in the same run, `gpuprof summary` (the import
# alone, the baseline) against `gpuprof export --format perfetto` (import +
# encoding): MB/s of JSON input and the .pftrace size relative to the JSON
# (and to the Chrome export). Goals: >= 500 MB/s on 2 cores, <= 0.3x size.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
GP="$BUILD/gpuprof"
TRACES=${GPUPROF_TRACES:-../shared/traces}
SRC="$TRACES/df_index_resolver/df_index_resolver.json.gz"
MB=${GPUPROF_BENCH_MB:-300}
BIG=bench/work/tiled_${MB}.json
OUT=bench/results/export_perfetto.txt
RUNS=${GPUPROF_BENCH_RUNS:-3}
if [ ! -f "$SRC" ]; then echo "export_perfetto: SKIP: $SRC not found"; exit 0; fi
mkdir -p bench/work bench/results
[ -f "$BIG" ] || python3 bench/tile_trace.py "$SRC" "$BIG" --min-bytes $((MB * 1000000))
size=$(stat -c %s "$BIG")
cat "$BIG" >/dev/null
best() { sort -n | head -n 1; }
t_imp=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e" "$GP" summary "$BIG" 2>&1 >/dev/null | tail -n 1; done | best)
t_pf=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e" "$GP" export "$BIG" --format perfetto -o bench/work/out.pftrace 2>&1 >/dev/null | tail -n 1; done | best)
t_js=$(/usr/bin/time -f "%e" "$GP" export "$BIG" -o bench/work/out.json 2>&1 >/dev/null | tail -n 1)
pf=$(stat -c %s bench/work/out.pftrace)
js=$(stat -c %s bench/work/out.json)
rm -f bench/work/out.json bench/work/out.pftrace
python3 - "$size" "$t_imp" "$t_pf" "$t_js" "$pf" "$js" "$OUT" "$(git rev-parse --short HEAD)" <<'PY'
import sys, time, os
size, t_imp, t_pf, t_js, pf, js, out, rev = sys.argv[1:]
size, pf, js = int(size), int(pf), int(js)
t_imp, t_pf, t_js = float(t_imp), float(t_pf), float(t_js)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mb = lambda t: size / 1e6 / t if t > 0 else float("inf")
lines = [
    "Perfetto export benchmark (bench/export_perfetto.sh) %s, git %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rev),
    "machine: %d cores, %s (shared with other jobs)" % (os.cpu_count(), cpu),
    "input: %.1f MB plain JSON (df_index_resolver tiled)" % (size / 1e6),
    "  gpuprof summary (import alone, baseline) : %6.2f s  %6.0f MB/s" % (t_imp, mb(t_imp)),
    "  gpuprof export --format perfetto          : %6.2f s  %6.0f MB/s = %.2fx the import's time" % (t_pf, mb(t_pf), t_pf / t_imp),
    "  gpuprof export --format chrome (lossless) : %6.2f s  %6.0f MB/s" % (t_js, mb(t_js)),
    "  .pftrace size: %.1f MB = %.3f x the input JSON, %.3f x the Chrome export (%.1f MB)" % (pf / 1e6, pf / size, pf / js, js / 1e6),
    "  goal >= 500 MB/s: %s; goal <= 0.3x size: %s" % ("met" if mb(t_pf) >= 500 else "NOT met", "met" if pf <= 0.3 * size else "NOT met"),
]
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
