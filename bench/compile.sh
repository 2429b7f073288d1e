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
t_cat=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e" cat "$BIG" 2>&1 >/dev/null; done | best)
t_wc=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e" wc -l "$BIG" 2>&1 >/dev/null; done | best)
res=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e %M" "$GP" compile --json "$BIG" 2>&1 >/dev/null | tail -n 1; done)
t_gp=$(echo "$res" | awk '{print $1}' | best)
rss_kb=$(echo "$res" | awk '{print $2}' | sort -n | tail -n 1)
res2=$(for i in $(seq "$RUNS"); do /usr/bin/time -f "%e %M" "$GP" compile --json --no-payloads "$BIG" 2>&1 >/dev/null | tail -n 1; done)
t_np=$(echo "$res2" | awk '{print $1}' | best)
compiles=$("$GP" compile --json "$BIG" | python3 -c 'import json,sys; print(json.load(sys.stdin)["logs"][0]["totals"]["compiles"])')
python3 - "$size" "$t_cat" "$t_wc" "$t_gp" "$rss_kb" "$t_np" "$compiles" "$OUT" "$(git rev-parse --short HEAD)" <<'PY'
import sys, time, os
size, t_cat, t_wc, t_gp, rss_kb, t_np, compiles, out, rev = sys.argv[1:]
size = int(size)
t_cat, t_wc, t_gp, t_np, rss = float(t_cat), float(t_wc), float(t_gp), float(t_np), int(rss_kb) * 1024
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
load = open("/proc/loadavg").read().split()[0]
mb = lambda b, t: b / 1e6 / t if t > 0 else float("inf")
lines = [
    "torch.compile log benchmark (bench/compile.sh) %s, git %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rev),
    "machine: %d cores, %s, load %s" % (os.cpu_count(), cpu, load),
    "log: %.1f MB, the 4 shared multi-rank logs concatenated (%s compilation_metrics records)" % (size / 1e6, compiles),
    "  cat > /dev/null              : %6.2f s  %7.0f MB/s  (ceiling)" % (t_cat, mb(size, t_cat)),
    "  wc -l                        : %6.2f s  %7.0f MB/s" % (t_wc, mb(size, t_wc)),
    "  gpuprof compile --json       : %6.2f s  %7.0f MB/s  = %.2fx of wc -l's time" % (t_gp, mb(size, t_gp), t_gp / t_wc if t_wc else 0),
    "  ... --no-payloads            : %6.2f s  %7.0f MB/s" % (t_np, mb(size, t_np)),
    "  peak RSS                     : %6.1f MB = %.4f x the log (goal <= 0.5)" % (rss / 1e6, rss / size),
    "  goal >= 500 MB/s             : %s" % ("met" if mb(size, t_gp) >= 500 else "NOT met"),
]
text = "\n".join(lines) + "\n"
sys.stdout.write(text)
open(out, "w").write(text)
PY
