#!/usr/bin/env bash
# demo step: the visual outputs (issue 7) of the demo trace: flame graph
# (HTML, folded, speedscope), timeline (HTML, Perfetto JSON), memory page and
# the HTML report, all in OUTDIR; screenshots too when chromium is installed.
# args: GPUPROF_BIN OUTDIR
set -euo pipefail
GP=$1
OUT=$2
T="$OUT/train_trace.json.gz"
echo "== gpuprof flame / timeline / memory / report $T"
"$GP" flame "$T" -o "$OUT/flame.html"
"$GP" flame "$T" -o "$OUT/stacks.folded"
"$GP" flame "$T" -o "$OUT/profile.speedscope.json"
"$GP" timeline "$T" -o "$OUT/timeline.html"
"$GP" timeline "$T" -o "$OUT/trace.perfetto.json"
"$GP" memory "$T" >"$OUT/memory.txt"
head -n 12 "$OUT/memory.txt"
"$GP" memory "$T" -o "$OUT/memory.html"
"$GP" report "$T" -o "$OUT/report.html"
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
  for v in flame timeline memory report; do
    prof=$(mktemp -d)
    timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$prof" --hide-scrollbars --window-size=1400,1000 \
      --virtual-time-budget=3000 --screenshot="$OUT/$v.png" "file://$(realpath "$OUT/$v.html")" \
      >/dev/null 2>&1 || echo "screenshot of $v.html failed"
    rm -rf "$prof"
  done
  echo "screenshots: $OUT/{flame,timeline,memory,report}.png"
fi
echo "open $OUT/report.html, $OUT/flame.html, $OUT/timeline.html, $OUT/memory.html in a browser;"
echo "$OUT/trace.perfetto.json in ui.perfetto.dev; $OUT/profile.speedscope.json in speedscope.app"
