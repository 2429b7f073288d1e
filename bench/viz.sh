#!/usr/bin/env bash
# Visualisation benchmark (issue 7): flame graph HTML and folded output from
# 1 M folded stacks (goal <= 3 s each), and the timeline HTML of the >= 1 GB
# tiled trace against importing the same trace (`gpuprof summary`; goal
# <= 2x). Writes bench/results/viz.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
GP="$BUILD/gpuprof"
TRACES=${GPUPROF_TRACES:-../shared/traces}
OUT=bench/results/viz.txt
W=bench/work
mkdir -p "$W" bench/results
FOLDED=$W/stacks_1m.folded
[ -f "$FOLDED" ] || python3 bench/gen_folded.py "$FOLDED" 1000000
t() { /usr/bin/time -f "%e %M %U %S" "$@" 2>&1 >/dev/null | tail -n 1; }
best() { sort -n | head -n 1; }
RUNS=${GPUPROF_BENCH_RUNS:-3}
run3() { for i in $(seq "$RUNS"); do t "$@"; done | best; }
# baselines on the same bytes, measured in the same loop: reading the file
# (page cache) and sorting its lines, so that a loaded machine shows as a ratio
cat "$FOLDED" >/dev/null
fc=$(run3 cat "$FOLDED")
fs=$(run3 env LC_ALL=C sort --parallel=1 -S 1G "$FOLDED")
fh=$(run3 "$GP" flame "$FOLDED" -o "$W/flame_1m.html")
ff=$(run3 "$GP" flame "$FOLDED" -o "$W/flame_1m.folded")
BIG=$W/tiled.json
SRC="$TRACES/df_index_resolver/df_index_resolver.json.gz"
if [ ! -f "$BIG" ] && [ -f "$SRC" ]; then
  python3 bench/tile_trace.py "$SRC" "$BIG" --min-bytes 1100000000
fi
ti="" ; th=""
if [ -f "$BIG" ]; then
  cat "$BIG" >/dev/null
  ti=$(run3 "$GP" summary "$BIG")
  th=$(run3 "$GP" timeline "$BIG" -o "$W/tiled_timeline.html")
fi
python3 - "$OUT" "$FOLDED" "$fh" "$ff" "$W/flame_1m.html" "$BIG" "$ti" "$th" "$W/tiled_timeline.html" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$fc" "$fs" "$BUILD" <<'PY'
import os, sys, time
out, folded, fh, ff, fhtml, big, ti, th, thtml, rev, fc, fs, build = sys.argv[1:]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
lines = sum(1 for _ in open(folded))
L = ["visualisation benchmark (bench/viz.sh) %s, git %s, build %s (best of %s runs)" % (
         time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rev, build, os.environ.get("GPUPROF_BENCH_RUNS", "3")),
     "machine: %d cores, %s; load average at the end %s (the machine is shared: wall times"
     " under load exceed CPU times)" % (os.cpu_count(), cpu, open("/proc/loadavg").read().split()[0]),
     "flame from %d folded stacks (%.1f MB, bench/gen_folded.py):" % (lines, os.path.getsize(folded) / 1e6)]
def cpu_s(v):
    s, kb, u, sy = v.split()
    return float(u) + float(sy)
base = {}
for what, v in (("  baseline: cat FILE      ", fc), ("  baseline: LC_ALL=C sort ", fs)):
    s, kb, u, sy = v.split()
    base[what] = float(s)
    L.append("%s %6.2f s wall, %5.2f s CPU (user+sys)  peak RSS %5.0f MB" % (what, float(s), cpu_s(v), int(kb) / 1024))
srt = base["  baseline: LC_ALL=C sort "]
for what, v in (("  -> .html                ", fh), ("  -> .folded              ", ff)):
    s, kb, u, sy = v.split()
    L.append("%s %6.2f s wall, %5.2f s CPU (user+sys)  peak RSS %5.0f MB  %.2fx sort's wall  (goal <= 3 s: %s)" % (
        what, float(s), cpu_s(v), int(kb) / 1024, float(s) / srt if srt else 0,
        "met" if float(s) <= 3 else "NOT met (wall)"))
L.append("  html page: %.1f MB" % (os.path.getsize(fhtml) / 1e6))
if ti:
    si, ki, ui, _ = ti.split()
    sh, kh, uh, _ = th.split()
    L.append("timeline HTML of %s (%.2f GB):" % (big, os.path.getsize(big) / 1e9))
    L.append("  import (gpuprof summary) %6.2f s wall, %5.2f s user  peak RSS %5.0f MB" % (
        float(si), float(ui), int(ki) / 1024))
    L.append("  timeline -o .html        %6.2f s wall, %5.2f s user  peak RSS %5.0f MB  ratio %.2fx (goal <= 2x: %s)" % (
        float(sh), float(uh), int(kh) / 1024, float(sh) / float(si), "met" if float(sh) <= 2 * float(si) else "NOT met"))
    L.append("  html page: %.1f MB (goal < 50 MB: %s)" % (os.path.getsize(thtml) / 1e6,
                                                         "met" if os.path.getsize(thtml) < 50e6 else "NOT met"))
else:
    L.append("timeline: SKIP (no tiled trace; needs %s)" % "../shared/traces/df_index_resolver")
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
