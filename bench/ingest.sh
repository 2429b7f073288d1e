#!/usr/bin/env bash
# Ingest benchmark (issue 2): tiles a real trace into a >= 1 GB plain JSON
# file, then measures `gpuprof summary` on it (MB/s of uncompressed JSON and
# peak RSS) against reading the same bytes with `cat > /dev/null` in the same
# run. Also the .json.gz path on the original trace against `zcat`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
GP="$BUILD/gpuprof"
TRACES=${GPUPROF_TRACES:-../shared/traces}
SRC="$TRACES/df_index_resolver/df_index_resolver.json.gz"
BIG=bench/work/tiled.json
OUT=bench/results/ingest.txt
RUNS=${GPUPROF_BENCH_RUNS:-3}
if [ ! -f "$SRC" ]; then echo "ingest: SKIP: $SRC not found"; exit 0; fi
mkdir -p bench/work bench/results
if [ ! -f "$BIG" ] || [ "$(stat -c %s "$BIG")" -lt 1000000000 ]; then
  python3 bench/tile_trace.py "$SRC" "$BIG" --min-bytes 1100000000
fi
size=$(stat -c %s "$BIG")
cat "$BIG" >/dev/null # warm the page cache
best() { sort -n | head -n 1; }
t_cat=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e" cat "$BIG" 2>&1 >/dev/null; done | best)
res=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e %M" "$GP" summary "$BIG" 2>&1 >/dev/null | tail -n 1; done)
t_gp=$(echo "$res" | awk '{print $1}' | best)
rss_kb=$(echo "$res" | awk '{print $2}' | sort -n | tail -n 1)
gz=$(stat -c %s "$SRC")
raw=$(zcat "$SRC" | wc -c)
t_zcat=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e" sh -c "zcat '$SRC' >/dev/null" 2>&1; done | best)
t_gz=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e" "$GP" summary "$SRC" 2>&1 >/dev/null | tail -n 1; done | best)
python3 - "$size" "$t_cat" "$t_gp" "$rss_kb" "$raw" "$t_zcat" "$t_gz" "$OUT" "$(git rev-parse --short HEAD)" <<'PY'
import sys, time, os, platform
size, t_cat, t_gp, rss_kb, raw, t_zcat, t_gz, out, rev = sys.argv[1:]
size, raw = int(size), int(raw)
t_cat, t_gp, t_zcat, t_gz, rss = float(t_cat), float(t_gp), float(t_zcat), float(t_gz), int(rss_kb) * 1024
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mb = lambda b, t: b / 1e6 / t if t > 0 else float("inf")
lines = [
    "ingest benchmark (bench/ingest.sh) %s, git %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rev),
    "machine: %d cores, %s" % (os.cpu_count(), cpu),
    "tiled trace: %.1f MB plain JSON (df_index_resolver tiled)" % (size / 1e6),
    "  cat > /dev/null         : %6.2f s  %7.0f MB/s  (ceiling)" % (t_cat, mb(size, t_cat)),
    "  gpuprof summary         : %6.2f s  %7.0f MB/s  = %.2fx of cat's time" % (t_gp, mb(size, t_gp), t_gp / t_cat if t_cat else 0),
    "  peak RSS                : %6.0f MB = %.3f x the JSON size (goal <= 0.5)" % (rss / 1e6, rss / size),
    "  goal >= 1000 MB/s       : %s" % ("met" if mb(size, t_gp) >= 1000 else "NOT met"),
    "gzip trace: %.1f MB of JSON inside the .json.gz" % (raw / 1e6),
    "  zcat > /dev/null        : %6.2f s  %7.0f MB/s of JSON" % (t_zcat, mb(raw, t_zcat)),
    "  gpuprof summary .gz     : %6.2f s  %7.0f MB/s of JSON = %.2fx of zcat's time" % (t_gz, mb(raw, t_gz), t_gz / t_zcat if t_zcat else 0),
]
text = "\n".join(lines) + "\n"
sys.stdout.write(text)
open(out, "w").write(text)
PY
