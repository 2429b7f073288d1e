#!/usr/bin/env bash
# bench/sustained.sh: libgpuprof in sustained use (issue 18): 10 M pairs per
# thread on 1 and 2 threads, literal names, cold buffers, one process per
# figure; each sink against the two-TSC-read floor measured in the same
# rounds (alternating, ROUNDS rounds, median). `busy` is the control for
# the stream sinks: the aggregate sink with an unrelated busy thread on the
# other core (bench_sustained.c). Three ratios per sink:
#   wall: wall time of the slowest recording thread (what a quiet machine
#         shows; on a shared machine it includes time other programs took);
#   rec CPU: CPU time of the recording threads (their own cost);
#   all CPU: CPU time of the whole process during the run, drain thread and
#         the final results call included, / (threads x pairs).
# drain ev/s: events the drain thread moved out of the buffers per second of
# its own CPU time (default: into the in-memory trace; stream: into the file;
# store: into the run store, the store writer thread's CPU time counted too;
# two events per range, one store row per range).
# BASELINE=older/bench_sustained adds a same-rounds comparison with another
# build (see below). Writes bench/results/sustained.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
B=$BUILD/bench/bench_sustained
PAIRS=${PAIRS:-10000000}
ROUNDS=${ROUNDS:-5}
MODES="floor default aggregate busy stream store keep"
STREAM=${TMPDIR:-/tmp}/gp_bench_stream.json
STORE=${TMPDIR:-/tmp}/gp_bench_stream.db
med() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "build: $BUILD (Release); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "$PAIRS begin/end pairs per thread, literal name, no warm-up; median of $ROUNDS alternating rounds"
  echo "ratios = ns per pair / ns of two TSC reads per pair (floor) in the same rounds: wall | recording threads' CPU | whole process CPU"
  for nt in 1 2; do
    declare -A ns cpu all rss drn last
    for m in $MODES; do ns[$m]=""; cpu[$m]=""; all[$m]=""; rss[$m]=""; drn[$m]=""; done
    ghz=""
    for r in $(seq "$ROUNDS"); do
      ghz+="$("$B" clock | field ghz) "
      for m in $MODES; do
        f=$STREAM; [ "$m" = store ] && f=$STORE
        out=$("$B" "$m" "$nt" "$PAIRS" "$f")
        ns[$m]+="$(echo "$out" | field ns_per_pair) "
        cpu[$m]+="$(echo "$out" | field cpu_ns_per_pair) "
        all[$m]+="$(echo "$out" | field all_cpu_ns_per_pair) "
        rss[$m]+="$(echo "$out" | field peak_rss_mb) "
        drn[$m]+="$(echo "$out" | field drain_events_per_s) "
        last[$m]="$out"
      done
    done
    f=$(echo "${ns[floor]}" | med)
    fc=$(echo "${cpu[floor]}" | med)
    fa=$(echo "${all[floor]}" | med)
    for m in $MODES; do
      v=$(echo "${ns[$m]}" | med)
      c=$(echo "${cpu[$m]}" | med)
      a=$(echo "${all[$m]}" | med)
      d=$(echo "${drn[$m]}" | med)
      mx=$(echo "${rss[$m]}" | tr ' ' '\n' | sed '/^$/d' | sort -g | tail -1)
      printf "threads=%d %-9s wall %7.2f ns/pair %5.2fx | rec CPU %6.2f ns %5.2fx | all CPU %6.2f ns %5.2fx | drain %8.3g ev/s | peak RSS %6.1f MB (max) | %s\n" \
        "$nt" "$m" "$v" "$(echo "$v / $f" | bc -l)" "$c" "$(echo "$c / $fc" | bc -l)" \
        "$a" "$(echo "$a / $fa" | bc -l)" "$d" "$mx" \
        "$(echo "${last[$m]}" | grep -o 'kept=.*')"
    done
    # the host's speed changes between rounds (docs/api.md, "Sustained
    # cost"): per round, each sink's recording CPU against the floor of the
    # same round, and how many rounds are within the goal (1.3x)
    # the core's speed at the start of each round (bench_sustained clock:
    # dependent adds per ns): the floor does not move with it, the sinks do
    echo "threads=$nt core clock per round (GHz, dependent adds): $ghz"
    for m in default aggregate busy stream store; do
      python3 - "$nt" "$m" ${cpu[floor]} -- ${cpu[$m]} <<'PY'
import sys
nt, m, a = sys.argv[1], sys.argv[2], sys.argv[3:]
i = a.index("--")
r = [float(x) / float(f) for x, f in zip(a[i + 1:], a[:i])]
print("threads=%s %-9s per round (rec CPU / floor): %s; within 1.3x: %d of %d rounds"
      % (nt, m, " ".join("%.2f" % x for x in r), sum(x <= 1.3 for x in r), len(r)))
PY
    done
    # the stream sinks against the busy control of the same round: what
    # their recording threads pay beyond what any busy thread on the other
    # core costs them on this host (docs/api.md, "A busy neighbour")
    for m in stream store; do
      python3 - "$nt" "$m" ${cpu[busy]} -- ${cpu[$m]} <<'PY'
import sys
nt, m, a = sys.argv[1], sys.argv[2], sys.argv[3:]
i = a.index("--")
r = [float(x) / float(f) for x, f in zip(a[i + 1:], a[:i])]
print("threads=%s %-9s per round (rec CPU / busy control): %s; median %.2fx"
      % (nt, m, " ".join("%.2f" % x for x in r), sorted(r)[len(r) // 2]))
PY
    done
  done
  # BASELINE=path/to/an/older/bench_sustained: the same program built from
  # another commit, run in the same alternating rounds as this one (1 thread,
  # default and aggregate sinks), so that a change is measured against what
  # it replaced on the same machine at the same moments
  if [ -n "${BASELINE:-}" ]; then
    echo "-- against BASELINE=$BASELINE (1 thread, $ROUNDS alternating rounds, rec CPU ns per pair)"
    declare -A bo bn
    for m in default aggregate; do bo[$m]=""; bn[$m]=""; done
    for r in $(seq "$ROUNDS"); do
      for m in default aggregate; do
        bo[$m]+="$("$BASELINE" "$m" 1 "$PAIRS" "$STREAM" | field cpu_ns_per_pair) "
        bn[$m]+="$("$B" "$m" 1 "$PAIRS" "$STREAM" | field cpu_ns_per_pair) "
      done
    done
    for m in default aggregate; do
      o=$(echo "${bo[$m]}" | med)
      n=$(echo "${bn[$m]}" | med)
      printf "%-9s baseline %6.2f ns  this build %6.2f ns  = %.2fx the baseline's time (median of rounds)\n" \
        "$m" "$o" "$n" "$(echo "$n / $o" | bc -l)"
    done
  fi
  # how much of a recording path's work this CPU hides under the two reads
  # (docs/api.md, "Sustained cost"): where it hides little, every
  # instruction of the path shows in the ratios above
  "$BUILD/bench/bench_tsc_overlap" 2000000 5
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee bench/results/sustained.txt
rm -f "$STREAM" "$STORE" "$STORE-wal" "$STORE-shm"
