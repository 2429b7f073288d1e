#!/usr/bin/env bash
# torch.compile log benchmark (issue 13): concatenates the shared multi-rank
# TORCH_TRACE logs until the file is >= 200 MB, then measures
# `gpuprof compile --json` on it (MB/s and peak RSS) against reading the same
# bytes with `cat > /dev/null` and `wc -l` in the same run. Goals: >= 500 MB/s,
# peak RSS <= 0.5 x the log.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
GP="$BUILD/gpuprof"
TT=${GPUPROF_TORCH_TRACE:-../shared/torch_trace}
BIG=bench/work/torch_trace_big.log
OUT=bench/results/compile.txt
RUNS=${GPUPROF_BENCH_RUNS:-3}
MIN=${GPUPROF_BENCH_MIN_BYTES:-200000000}
if [ ! -d "$TT/multi_rank_logs" ]; then echo "compile: SKIP: $TT/multi_rank_logs not found"; exit 0; fi
mkdir -p bench/work bench/results
if [ ! -f "$BIG" ] || [ "$(stat -c %s "$BIG")" -lt "$MIN" ]; then
  : >"$BIG"
  while [ "$(stat -c %s "$BIG")" -lt "$MIN" ]; do
    for f in "$TT"/multi_rank_logs/*.log; do
      cat "$f" >>"$BIG"
      # the logs end without a newline: keep each log's last line whole
      [ -n "$(tail -c 1 "$f")" ] && printf '\n' >>"$BIG"
    done
  done
fi
size=$(stat -c %s "$BIG")
cat "$BIG" >/dev/null # warm the page cache
best() { sort -n | head -n 1; }
# each run: "elapsed cpu(user+sys) maxrss_kb"; best elapsed and best CPU time kept
# (on a loaded machine the elapsed time includes waiting for a core)
measure() { for i in $(seq "$RUNS"); do /usr/bin/time -f "%e %U %S %M" "$@" 2>&1 >/dev/null | tail -n 1; done | awk '{print $1, $2 + $3, $4}'; }
r_cat=$(measure cat "$BIG")
r_wc=$(measure wc -l "$BIG")
res=$(measure "$GP" compile --json "$BIG")
res2=$(measure "$GP" compile --json --no-payloads "$BIG")
t_cat=$(echo "$r_cat" | awk '{print $1}' | best); c_cat=$(echo "$r_cat" | awk '{print $2}' | best)
t_wc=$(echo "$r_wc" | awk '{print $1}' | best); c_wc=$(echo "$r_wc" | awk '{print $2}' | best)
t_gp=$(echo "$res" | awk '{print $1}' | best); c_gp=$(echo "$res" | awk '{print $2}' | best)
t_np=$(echo "$res2" | awk '{print $1}' | best); c_np=$(echo "$res2" | awk '{print $2}' | best)
rss_kb=$(echo "$res" | awk '{print $3}' | sort -n | tail -n 1)
compiles=$("$GP" compile --json "$BIG" | python3 -c 'import json,sys; print(json.load(sys.stdin)["logs"][0]["totals"]["compiles"])')
python3 - "$size" "$t_cat" "$t_wc" "$t_gp" "$rss_kb" "$t_np" "$compiles" "$OUT" "$(git rev-parse --short HEAD)" \
  "$c_cat" "$c_wc" "$c_gp" "$c_np" <<'PY'
import sys, time, os
size, t_cat, t_wc, t_gp, rss_kb, t_np, compiles, out, rev, c_cat, c_wc, c_gp, c_np = sys.argv[1:]
size = int(size)
t_cat, t_wc, t_gp, t_np, rss = float(t_cat), float(t_wc), float(t_gp), float(t_np), int(rss_kb) * 1024
c_cat, c_wc, c_gp, c_np = float(c_cat), float(c_wc), float(c_gp), float(c_np)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
load = open("/proc/loadavg").read().split()[0]
mb = lambda b, t: b / 1e6 / t if t > 0 else float("inf")
lines = [
    "torch.compile log benchmark (bench/compile.sh) %s, git %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rev),
    "machine: %d cores, %s, load %s" % (os.cpu_count(), cpu, load),
    "log: %.1f MB, the 4 shared multi-rank logs concatenated (%s compilation_metrics records)" % (size / 1e6, compiles),
    "best of %d runs; elapsed (wall) and CPU (user + sys) time" % int(os.environ.get("GPUPROF_BENCH_RUNS", "3")),
    "  cat > /dev/null              : %6.2f s wall %6.0f MB/s | %5.2f s CPU %6.0f MB/s" % (t_cat, mb(size, t_cat), c_cat, mb(size, c_cat)),
    "  wc -l                        : %6.2f s wall %6.0f MB/s | %5.2f s CPU %6.0f MB/s" % (t_wc, mb(size, t_wc), c_wc, mb(size, c_wc)),
    "  gpuprof compile --json       : %6.2f s wall %6.0f MB/s | %5.2f s CPU %6.0f MB/s" % (t_gp, mb(size, t_gp), c_gp, mb(size, c_gp)),
    "  ... --no-payloads            : %6.2f s wall %6.0f MB/s | %5.2f s CPU %6.0f MB/s" % (t_np, mb(size, t_np), c_np, mb(size, c_np)),
    "  gpuprof / cat                : %.2fx the wall time, %.2fx the CPU time" % (t_gp / t_cat if t_cat else 0, c_gp / c_cat if c_cat else 0),
    "  peak RSS                     : %6.1f MB = %.4f x the log (goal <= 0.5)" % (rss / 1e6, rss / size),
    "  goal >= 500 MB/s             : %s wall, %s CPU" % ("met" if mb(size, t_gp) >= 500 else "NOT met",
                                                        "met" if mb(size, c_gp) >= 500 else "NOT met"),
]
text = "\n".join(lines) + "\n"
sys.stdout.write(text)
open(out, "w").write(text)
PY
