#!/usr/bin/env bash
# bench/sustained.sh: libgpuprof in sustained use (issue 18): 10 M pairs per
# thread on 1 and 2 threads, literal names, cold buffers, one process per
# figure; each sink against the two-TSC-read floor measured in the same
# rounds (alternating, ROUNDS rounds, median). Writes bench/results/sustained.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
B=$BUILD/bench/bench_sustained
PAIRS=${PAIRS:-10000000}
ROUNDS=${ROUNDS:-5}
STREAM=${TMPDIR:-/tmp}/gp_bench_stream.json
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "build: $BUILD (Release); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$PAIRS begin/end pairs per thread, literal name, no warm-up; median of $ROUNDS alternating rounds"
  echo "ratio = ns per pair / ns of two TSC reads per pair (floor) in the same rounds"
  for nt in 1 2; do
    declare -A ns rss last
    for m in floor default aggregate stream keep; do ns[$m]=""; rss[$m]=""; done
    for r in $(seq "$ROUNDS"); do
      for m in floor default aggregate stream keep; do
        out=$("$B" "$m" "$nt" "$PAIRS" "$STREAM")
        ns[$m]+="$(echo "$out" | field ns_per_pair) "
        rss[$m]+="$(echo "$out" | field peak_rss_mb) "
        last[$m]="$out"
      done
    done
    f=$(echo ${ns[floor]} | tr ' ' '\n' | med)
    for m in floor default aggregate stream keep; do
      v=$(echo ${ns[$m]} | tr ' ' '\n' | med)
      mx=$(echo ${rss[$m]} | tr ' ' '\n' | sort -g | tail -1)
      printf "threads=%d %-9s %7.2f ns/pair  ratio %.2f  peak RSS %6.1f MB (max of rounds)  %s\n" \
        "$nt" "$m" "$v" "$(echo "$v / $f" | bc -l)" "$mx" \
        "$(echo "${last[$m]}" | grep -o 'kept=.*')"
    done
  done
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee bench/results/sustained.txt
rm -f "$STREAM"
