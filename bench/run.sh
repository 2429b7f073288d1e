#!/usr/bin/env bash
# make bench: runs every bench/*.sh benchmark script (except this one) with
# the Release build folder as argument. Each writes bench/results/<name>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
mkdir -p bench/results bench/work
for s in bench/*.sh; do
  [ "$(basename "$s")" = run.sh ] && continue
  echo "== $s"
  bash "$s" "$BUILD"
done
