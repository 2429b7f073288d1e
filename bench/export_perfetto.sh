#!/usr/bin/env bash
# Perfetto export benchmark (issue 17): tiles a real trace into a large plain
# JSON file and measures, in the same run, `gpuprof summary` (the import
# alone, the baseline) against `gpuprof export --format perfetto` (import +
# encoding): MB/s of JSON input and the .pftrace size relative to the JSON
# (and to the Chrome export), wall and CPU time (user + sys, every thread).
# Goals: >= 500 MB/s on 2 cores, <= 0.3x size. On a machine with more
# cores, run it under `taskset -c 0,1` for the 2-core figure.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
GP="$BUILD/gpuprof"
TRACES=${GPUPROF_TRACES:-../shared/traces}
SRC="$TRACES/df_index_resolver/df_index_resolver.json.gz"
MB=${GPUPROF_BENCH_MB:-300}
# the tile lives on tmpfs (these machines evict the page cache at once, so a
# file on disk would measure the disk) and is removed at the end unless
# GPUPROF_BENCH_KEEP=1
TMP=${GPUPROF_BENCH_TMP:-/dev/shm/gpuprof-bench-$(id -u)}
BIG="$TMP/tiled_${MB}.json"
OUT=bench/results/export_perfetto.txt
RUNS=${GPUPROF_BENCH_RUNS:-3}
if [ ! -f "$SRC" ]; then echo "export_perfetto: SKIP: $SRC not found"; exit 0; fi
mkdir -p bench/work bench/results "$TMP"
if [ "${GPUPROF_BENCH_KEEP:-0}" != 1 ]; then trap 'rm -f "$BIG"; rmdir "$TMP" 2>/dev/null || true' EXIT; fi
[ -f "$BIG" ] || python3 bench/tile_trace.py "$SRC" "$BIG" --min-bytes $((MB * 1000000))
size=$(stat -c %s "$BIG")
# "wall cpu" (cpu = user + sys of the whole process, all threads); the two
# commands alternate so that a change of load hits both
timed() { /usr/bin/time -f "%e %U %S" "$@" 2>&1 >/dev/null | tail -n 1 | awk '{print $1, $2 + $3}'; }
load=$(cut -d' ' -f1 /proc/loadavg)
: >bench/work/times_imp
: >bench/work/times_pf
for i in $(seq "$RUNS"); do
    timed "$GP" summary "$BIG" >>bench/work/times_imp
    timed "$GP" export "$BIG" --format perfetto -o bench/work/out.pftrace >>bench/work/times_pf
done
t_js=$(timed "$GP" export "$BIG" -o bench/work/out.json | cut -d' ' -f1)
pf=$(stat -c %s bench/work/out.pftrace)
js=$(stat -c %s bench/work/out.json)
rm -f bench/work/out.json bench/work/out.pftrace
python3 - "$size" bench/work/times_imp bench/work/times_pf "$t_js" "$pf" "$js" "$OUT" "$(git rev-parse --short HEAD)" "$load" <<'PY'
import sys, time, os
size, f_imp, f_pf, t_js, pf, js, out, rev, load = sys.argv[1:]
size, pf, js = int(size), int(pf), int(js)
rows = lambda f: [tuple(map(float, l.split())) for l in open(f) if l.strip()]
imp, pfr = rows(f_imp), rows(f_pf)
t_imp, t_pf = min(w for w, c in imp), min(w for w, c in pfr)  # best wall
c_imp, c_pf = min(c for w, c in imp), min(c for w, c in pfr)  # least CPU time
t_js = float(t_js)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mb = lambda t: size / 1e6 / t if t > 0 else float("inf")
lines = [
    "Perfetto export benchmark (bench/export_perfetto.sh) %s, git %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rev),
    "machine: %d cores, %s (shared with other jobs)" % (os.cpu_count(), cpu),
    "input: %.1f MB plain JSON (df_index_resolver tiled)" % (size / 1e6),
    "runs: %d each, alternating; best wall, least CPU (user+sys, all threads); load before: %s" % (len(imp), load),
    "  gpuprof summary (import alone, baseline) : %6.2f s  %6.0f MB/s  CPU %5.2f s" % (t_imp, mb(t_imp), c_imp),
    "  gpuprof export --format perfetto          : %6.2f s  %6.0f MB/s  CPU %5.2f s" % (t_pf, mb(t_pf), c_pf),
    "    = %.2fx the import's wall time, %.2fx its CPU time" % (t_pf / t_imp, c_pf / c_imp),
    "  gpuprof export --format chrome (lossless) : %6.2f s  %6.0f MB/s" % (t_js, mb(t_js)),
    "  .pftrace size: %.1f MB = %.3f x the input JSON, %.3f x the Chrome export (%.1f MB)" % (pf / 1e6, pf / size, pf / js, js / 1e6),
    "  goal >= 500 MB/s: %s; goal <= 0.3x size: %s" % ("met" if mb(t_pf) >= 500 else "NOT met", "met" if pf <= 0.3 * size else "NOT met"),
]
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
