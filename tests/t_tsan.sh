#!/usr/bin/env bash
# tests/t_tsan.sh: builds the libgpuprof 8-thread stress test, the
# thread-exit cases of the churn test and the store writer's threaded cases
# with ThreadSanitizer (recorder + the modules it uses, without the
# optional GPU back-ends) and runs them; any
# data race fails the test.
set -euo pipefail
SRC=${GPUPROF_SOURCE_DIR:?}
OUT=${GPUPROF_BUILD_DIR:-/tmp}/tsan
CC=${TSAN_CC:-}
if [ -z "$CC" ]; then
  if command -v clang >/dev/null; then CC=clang; else CC=cc; fi
fi
mkdir -p "$OUT"
if ! echo 'int main(void){return 0;}' | "$CC" -x c -fsanitize=thread - -o "$OUT/probe" 2>/dev/null; then
  echo "SKIP: $CC cannot build with -fsanitize=thread"; exit 77
fi
# TSan needs a compatible address-space layout; some kernels refuse it
if ! "$OUT/probe" 2>/dev/null; then
  echo "SKIP: ThreadSanitizer binaries do not run on this kernel"; exit 77
fi
# the library's part once, then the tests linked against it
CFLAGS=(-std=c11 -D_GNU_SOURCE -DGP_BUILDING_LIB -DGP_VERSION='"tsan"' -fsanitize=thread -O1 -g
        -I"$SRC/include" -I"$SRC/src" -I"$SRC/tests")
LIBS=(-lsqlite3 -lyaml -lz -lpthread -ldl -lm)
mkdir -p "$OUT/obj"
rm -f "$OUT"/obj/*.o
for f in "$SRC"/src/core/*.c "$SRC"/src/trace/*.c "$SRC/src/analysis/summary.c" \
  "$SRC/src/analysis/calltree.c" \
  "$SRC"/src/record/{recorder,ktimer,memtrack,results,export,measure,stream,entry}.c \
  "$SRC/src/render/chrome.c" "$SRC/src/report/summary.c" "$SRC/src/report/fmt.c" \
  "$SRC"/src/store/{store,store_read,access}.c "$SRC"/src/monitor/config.c; do
  "$CC" "${CFLAGS[@]}" -c "$f" -o "$OUT/obj/$(echo "$f" | tr / _).o" &
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
done
wait
"$CC" "${CFLAGS[@]}" "$SRC/tests/test_libgpuprof_threads.c" "$OUT"/obj/*.o \
  -o "$OUT/test_libgpuprof_threads_tsan" "${LIBS[@]}"
"$CC" "${CFLAGS[@]}" "$SRC/tests/test_libgpuprof_churn.c" "$OUT"/obj/*.o \
  -o "$OUT/test_libgpuprof_churn_tsan" "${LIBS[@]}"
"$CC" "${CFLAGS[@]}" -DGP_TEST_DATA="\"$SRC/tests/data\"" "$SRC/tests/test_store.c" \
  "$OUT"/obj/*.o -o "$OUT/test_store_tsan" "${LIBS[@]}"
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}"
"$OUT/test_libgpuprof_threads_tsan"
# a thread that exits inside a range while another turns recording off
# (the fork case is not run here: TSan does not support a child that starts
# threads after a multi-threaded fork, as the child's drain does)
GP_TEST_ONLY=off_after_thread_exits_inside_a_range "$OUT/test_libgpuprof_churn_tsan"
# the store writer with producers, early takes and its checkpointer thread
for t in store_backlog_commits_early store_checkpoints_while_writing; do
  GP_TEST_ONLY=$t "$OUT/test_store_tsan"
done
