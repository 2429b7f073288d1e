#!/usr/bin/env bash
# Lints the page scripts and styles embedded into every HTML page
# (src/render/web/): each .js parses (node --check, when node is installed),
# no script uses an HTML sink (innerHTML, outerHTML, insertAdjacentHTML,
# document.write, eval, new Function, string timers), no C source carries
# page script in string literals any more, and the embedded copy in the
# build equals the files (the build step really ran).
set -u
SRC=${GPUPROF_SOURCE_DIR:-.}
BUILD=${GPUPROF_BUILD_DIR:-$SRC/build}
WEB=$SRC/src/render/web
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ls "$WEB"/*.js >/dev/null 2>&1 || { echo "FAIL: no scripts in $WEB"; exit 1; }
# 1. syntax
if command -v node >/dev/null 2>&1; then
  for f in "$WEB"/*.js; do
    node --check "$f" || bad "$f: syntax error"
  done
  # the checker itself: a broken script must be refused
  t=$(mktemp --suffix=.js); echo 'function (' >"$t"
  node --check "$t" 2>/dev/null && bad "node --check accepts a syntax error"
  rm -f "$t"
else
  echo "note: node not installed, syntax check skipped (scripts/install-deps.sh installs nodejs)"
fi
# 2. HTML sinks and code from strings (comments excluded)
sinks='innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(["'"'"']|setInterval\(["'"'"']|\.srcdoc|createContextualFragment|DOMParser'
for f in "$WEB"/*.js; do
  hits=$(perl -0pe 's{/\*.*?\*/}{}gs; s{^\s*//.*$}{}mg' "$f" | grep -nE "$sinks" || true)
  [ -z "$hits" ] || bad "$f uses an HTML sink or code from a string: $hits"
done
# the sink check finds a sink
echo 'x.innerHTML = y;' | grep -qE "$sinks" || bad "sink pattern misses innerHTML"
# 3. no page script left in C string literals
hits=$(grep -rlE 'innerHTML|addEventListener|getElementById' "$SRC"/src --include='*.c' || true)
[ -z "$hits" ] || bad "page script still in C sources: $hits"
# 4. the build embedded the current files
gen=$BUILD/gen/web_assets.c
if [ -f "$gen" ]; then
  for f in "$WEB"/*.js "$WEB"/*.css; do
    n=$(basename "$f")
    grep -q "{\"$n\", a[0-9]*, $(stat -c %s "$f")}" "$gen" || bad "$n not embedded with its current size in $gen"
  done
else
  bad "$gen missing: the embed step did not run"
fi
[ $fail = 0 ] && echo ok
exit $fail
