#!/usr/bin/env bash
# Many-ranks benchmark (issue 19, part 5): GPUPROF_RANKS synthetic rank
# traces (default 256) of GPUPROF_RANK_MB megabytes each (default 40),
# written by bench/gen_ranks.py on tmpfs (/dev/shm: these machines evict the
# page cache at once, so files on disk would measure the disk) and removed at
# the end. Measures, in the same run:
#   * the peak RSS of `gpuprof analyze --json --workers W FOLDER` (W =
#     GPUPROF_WORKERS, default one per core) against the peak RSS of
#     analyzing the largest rank alone (--workers 1): goal ratio
#     peak / (W x one rank) <= 2 (also shown against the largest file size);
#   * `--shard I/N` (GPUPROF_BENCH_SHARDS, default 4, run one after the other)
#     + `gpuprof merge`: output identical to the single run (cmp) and the
#     merge's own peak RSS;
#   * wall and CPU time (user + system) of each, with the load average.
# Usage: bench/ranks.sh [BUILD]   (e.g. GPUPROF_RANKS=16 GPUPROF_RANK_MB=4
# bench/ranks.sh build for a quick check at reduced scale)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
GP="$BUILD/gpuprof"
RANKS=${GPUPROF_RANKS:-256}
MB=${GPUPROF_RANK_MB:-40}
W=${GPUPROF_WORKERS:-$(nproc)}
SHARDS=${GPUPROF_BENCH_SHARDS:-4}
OUT=${GPUPROF_BENCH_OUT:-bench/results/ranks.txt}
TMP=${GPUPROF_BENCH_TMP:-/dev/shm/gpuprof-ranks-$(id -u)}
if [ ! -x "$GP" ]; then echo "ranks: SKIP: $GP not built"; exit 0; fi
need=$(python3 -c "print(int($RANKS * $MB * 1.1e6))")
avail=$(df -B1 --output=avail "$(dirname "$TMP")" | tail -n 1)
if [ "$avail" -lt "$need" ]; then
  echo "ranks: SKIP: $(dirname "$TMP") has $avail bytes free, $need needed"; exit 0
fi
rm -rf "$TMP"
mkdir -p "$TMP/ranks" bench/results
trap 'rm -rf "$TMP"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
python3 bench/gen_ranks.py "$TMP/ranks" --ranks "$RANKS" --mb "$MB"
total=$(du -sb "$TMP/ranks" | cut -f1)
largest=$(ls -S "$TMP/ranks" | head -n 1)
lbytes=$(stat -c %s "$TMP/ranks/$largest")
# wall s, user s, sys s, peak RSS KB of a command (time's own RSS is small:
# a child inherits its parent's peak RSS through exec)
measure() { /usr/bin/time -f "%e %U %S %M" "$@" 2>&1 >/dev/null | tail -n 1; }
{
  echo "many-ranks benchmark (bench/ranks.sh) $(date -u '+%Y-%m-%d %H:%M UTC'), git $(git rev-parse --short HEAD)"
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "ranks: $RANKS synthetic files on tmpfs, $total bytes in all, largest $lbytes bytes; workers $W"
  echo "load average before: $(load)"
  read -r t1 u1 s1 r1 < <(measure "$GP" analyze --json --workers 1 "$TMP/ranks/$largest")
  echo "largest rank alone (--workers 1): wall $t1 s, CPU $(echo "$u1 + $s1" | bc) s, peak RSS $r1 KB"
  read -r t2 u2 s2 r2 < <(measure "$GP" analyze --json --workers "$W" "$TMP/ranks")
  echo "all ranks (--workers $W): wall $t2 s, CPU $(echo "$u2 + $s2" | bc) s, peak RSS $r2 KB"
  python3 - "$r1" "$r2" "$W" "$lbytes" "$total" "$RANKS" <<'PY'
import sys
one, peak, w, lbytes, total, n = (int(x) for x in sys.argv[1:])
ratio = peak / (w * one)
print("peak RSS / (workers x largest rank alone) = %.2f (goal <= 2: %s)" % (
    ratio, "met" if ratio <= 2 else "NOT met"))
print("peak RSS / (workers x largest rank's file) = %.3f; / all files = %.4f; "
      "/ (%d x largest rank alone, i.e. every rank held) = %.3f" % (
          peak * 1024 / (w * lbytes), peak * 1024 / total, n, peak / (n * one)))
PY
  "$GP" analyze --json --workers "$W" "$TMP/ranks" >"$TMP/single.json"
  pc=0; pu=0; pr=0
  for ((i = 0; i < SHARDS; i++)); do
    read -r t u s r < <(measure "$GP" analyze --workers "$W" --shard "$i/$SHARDS" -o "$TMP/part$i.json" "$TMP/ranks")
    pc=$(echo "$pc + $u + $s" | bc); [ "$r" -gt "$pr" ] && pr=$r
  done
  read -r tm um sm rm_ < <(measure "$GP" merge --json -o "$TMP/merged.json" "$TMP"/part*.json)
  echo "--shard I/$SHARDS x $SHARDS: CPU $pc s in all, largest peak RSS $pr KB; merge: wall $tm s, CPU $(echo "$um + $sm" | bc) s, peak RSS $rm_ KB, parts $(cat "$TMP"/part*.json | wc -c) bytes"
  if cmp -s "$TMP/single.json" "$TMP/merged.json"; then
    echo "merge output identical to the single run: yes"
  else
    echo "merge output identical to the single run: NO"
  fi
  echo "load average after: $(load)"
} | tee "$OUT"
