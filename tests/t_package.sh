#!/usr/bin/env bash
# Packaging (issue 17): consumers build and run against staged installs
# (DESTDIR) with the /usr/local and /usr prefixes, through pkg-config and the
# CMake package; on /usr the files are laid out as on Debian (multiarch
# libdir, from a tree configured with CMAKE_INSTALL_PREFIX=/usr). Man pages
# and bash/zsh completions are installed; the man page of a command is its
# --help text. The CPack .deb installs with dpkg (into a private dpkg root
# by default, `dpkg --root --unpack`: no change to the machine;
# GPUPROF_DEB_REAL_INSTALL=1 as root, set by .ci/run, does a real `dpkg -i`,
# runs the installed gpuprof and a consumer, and removes the package),
# gpuprof --version runs, a consumer builds.
set -euo pipefail
BUILD=${GPUPROF_BUILD_DIR:-build}
SRC=${GPUPROF_SOURCE_DIR:-.}
BUILD=$(cd "$BUILD" && pwd)
SRC=$(cd "$SRC" && pwd)
for t in cmake pkg-config cc; do
  command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
[ -f "$BUILD/libgpuprof.so" ] || { echo "SKIP: $BUILD/libgpuprof.so not built"; exit 77; }
if grep -q "^GP_SANITIZE:BOOL=ON" "$BUILD/CMakeCache.txt" 2>/dev/null; then
  echo "SKIP: sanitizer build: an uninstrumented consumer cannot link its libgpuprof.so"; exit 77
fi
T=$(mktemp -d /tmp/gp_pkg_XXXXXX)
cleanup() {
  if [ "${REAL_INSTALLED:-0}" = 1 ]; then dpkg -P gpuprof >/dev/null 2>&1 || true; fi
  rm -rf "$T"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir -p "$T/consumer"
cat >"$T/consumer/main.c" <<'C'
#include <gpuprof/gpuprof.h>
#include <stdio.h>
int main(void)
{
    gp_profiler *p = gp_profiler_create(NULL);
    if (!p) return 1;
    gp_range_begin(p, "consumer");
    gp_range_end(p);
    gp_profiler_destroy(p);
    puts("consumer ok");
    return 0;
}
C
cat >"$T/consumer/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(gpuprof REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE gpuprof::gpuprof)
C

# consumer checks against a root R with prefix P (R$P holds the install)
consume() {
  local label=$1 root=$2 prefix=$3 libdir=$4
  local pc="$root$prefix/$libdir/pkgconfig"
  [ -f "$pc/gpuprof.pc" ] || { bad "$label: no $pc/gpuprof.pc"; return; }
  local cflags libs
  cflags=$(PKG_CONFIG_PATH="$pc" PKG_CONFIG_LIBDIR="$pc" pkg-config --cflags gpuprof)
  libs=$(PKG_CONFIG_PATH="$pc" PKG_CONFIG_LIBDIR="$pc" pkg-config --libs gpuprof)
  local inc=${cflags#-I}
  inc=$(realpath -m "${inc%% *}")
  [ "$inc" = "$root$prefix/include" ] || bad "$label: pkg-config --cflags: $cflags ($inc)"
  if cc $cflags "$T/consumer/main.c" $libs -o "$T/c_pc" 2>"$T/err"; then
    LD_LIBRARY_PATH="$root$prefix/$libdir" "$T/c_pc" | grep -q "consumer ok" ||
      bad "$label: pkg-config consumer does not run"
  else
    bad "$label: pkg-config consumer build: $(head -3 "$T/err")"
  fi
  rm -rf "$T/cb"
  if cmake -S "$T/consumer" -B "$T/cb" -DCMAKE_PREFIX_PATH="$root$prefix" >"$T/err" 2>&1 &&
    cmake --build "$T/cb" >>"$T/err" 2>&1; then
    LD_LIBRARY_PATH="$root$prefix/$libdir" "$T/cb/consumer" | grep -q "consumer ok" ||
      bad "$label: CMake consumer does not run"
  else
    bad "$label: CMake consumer build: $(grep -m3 -i error "$T/err")"
  fi
  echo "$label: pkg-config and CMake consumers built and ran"
}

# 1. /usr/local: the build's own prefix
DESTDIR="$T/stage_local" cmake --install "$BUILD" --prefix /usr/local >/dev/null
consume "/usr/local" "$T/stage_local" /usr/local lib
for f in share/man/man1/gpuprof.1 share/man/man1/gpuprof-export.1 \
  share/bash-completion/completions/gpuprof share/zsh/site-functions/_gpuprof; do
  [ -f "$T/stage_local/usr/local/$f" ] || bad "/usr/local: $f not installed"
done
# the man page is the --help text (one source)
if command -v man >/dev/null; then
  want=$("$BUILD/gpuprof" export --help | head -1 | tr -s ' ')
  MANWIDTH=200 man -l "$T/stage_local/usr/local/share/man/man1/gpuprof-export.1" 2>/dev/null |
    tr -s ' ' | grep -qF "${want# }" || bad "gpuprof-export.1 does not hold 'gpuprof export --help'"
fi
# every subcommand of `gpuprof --help` has its man page holding its whole
# --help text, and the completions offer it and every option its --help lists
CMDS=$("$BUILD/gpuprof" --help | awk '/^commands:/{f=1;next} f && /^  [a-z]/{print $1}')
[ "$(echo "$CMDS" | wc -w)" -ge 10 ] || bad "gpuprof --help lists $(echo "$CMDS" | wc -w) commands"
MAN1="$T/stage_local/usr/local/share/man/man1"
if command -v man >/dev/null; then
  for c in "" $CMDS; do
    page="$MAN1/gpuprof${c:+-$c}.1"
    [ -f "$page" ] || { bad "no man page $page"; continue; }
    "$BUILD/gpuprof" $c --help >"$T/help.txt" 2>&1 || true
    MANWIDTH=250 man -l "$page" >"$T/man.txt" 2>/dev/null
    python3 - "$T/help.txt" "$T/man.txt" <<'PY' || bad "man page of 'gpuprof $c' lacks lines of its --help"
import sys
help_lines = [" ".join(l.split()) for l in open(sys.argv[1]) if l.strip()]
man = "\n".join(" ".join(l.split()) for l in open(sys.argv[2]))
missing = [l for l in help_lines if l not in man]
if missing or not help_lines:
    print("missing:", missing[:3])
    sys.exit(1)
PY
  done
fi
BASHC="$T/stage_local/usr/local/share/bash-completion/completions/gpuprof"
ZSHC="$T/stage_local/usr/local/share/zsh/site-functions/_gpuprof"
for c in $CMDS; do
  opts=$("$BUILD/gpuprof" $c --help 2>&1 | { grep -oE '(^|[][ ,|])--[a-z][a-z0-9-]*' || true; } | sed 's/^[][ ,|]*//' | sort -u | tr '\n' ' ')
  got=$(bash -c "source '$BASHC'; COMP_WORDS=(gpuprof $c --); COMP_CWORD=2; _gpuprof; echo \"\${COMPREPLY[*]}\"")
  for o in $opts; do
    case " $got " in *" $o "*) ;; *) bad "bash completion of 'gpuprof $c --' lacks $o" ;; esac
  done
  if command -v zsh >/dev/null; then
    zgot=$(zsh -f -c "_arguments() { print -l -- \"\$@\" }; _files() { :; }; _describe() { :; };
      source '$ZSHC'; words=(gpuprof $c --); CURRENT=3; _gpuprof" 2>&1 | tr '\n' ' ')
    for o in $opts; do
      case " $zgot " in *" $o "*) ;; *) bad "zsh completion of 'gpuprof $c' lacks $o" ;; esac
    done
  fi
done
if command -v zsh >/dev/null; then
  zsh -n "$ZSHC" || bad "zsh completion: syntax"
  zcmds=$(zsh -f -c "_describe() { print -l -- \"\${(@P)2}\" }; _arguments() { :; };
    source '$ZSHC'; words=(gpuprof ''); CURRENT=2; _gpuprof" | cut -d: -f1 | tr '\n' ' ')
  [ "$zcmds" = "$(echo $CMDS) " ] || bad "zsh completion offers '$zcmds', --help lists '$(echo $CMDS)'"
else
  echo "note: zsh not installed: zsh completion only checked for presence"
fi
bash -c "source '$T/stage_local/usr/local/share/bash-completion/completions/gpuprof';
  COMP_WORDS=(gpuprof exp); COMP_CWORD=1; _gpuprof; [ \"\${COMPREPLY[*]}\" = export ] &&
  COMP_WORDS=(gpuprof export --for); COMP_CWORD=2; _gpuprof; [ \"\${COMPREPLY[*]}\" = --format ]" ||
  bad "bash completion of 'gpuprof exp' / 'export --for'"

# 2. /usr as on Debian: `cmake --install` of a tree configured with prefix
# /usr (multiarch libdir, its own install rules and package files), holding
# the build's binaries (no second build; RPATH handling off in that tree, as
# the build's binaries carry the build's RPATH)
cmake -S "$SRC" -B "$T/usrcfg" -G Ninja -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_SKIP_RPATH=ON >/dev/null 2>&1 ||
  bad "configure with prefix /usr"
LIBDIR=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$T/usrcfg/CMakeCache.txt")
echo "/usr: libdir $LIBDIR"
S="$T/stage_usr"
cp -P "$BUILD"/*.so* "$BUILD/gpuprof" "$T/usrcfg/"
cp -r "$BUILD/gen-docs" "$T/usrcfg/"
DESTDIR="$S" cmake --install "$T/usrcfg" >"$T/install_usr.log" 2>&1 ||
  bad "cmake --install of the /usr tree: $(tail -3 "$T/install_usr.log")"
for f in bin/gpuprof "$LIBDIR/libgpuprof.so" "$LIBDIR/pkgconfig/gpuprof.pc" \
  "$LIBDIR/cmake/gpuprof/gpuprofConfig.cmake" include/gpuprof/gpuprof.h share/man/man1/gpuprof.1 \
  share/bash-completion/completions/gpuprof share/zsh/vendor-completions/_gpuprof; do
  [ -e "$S/usr/$f" ] || bad "/usr: $f not installed"
done
consume "/usr" "$S" /usr "$LIBDIR"

# 3. the Debian package
if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null; then
  # as `make deb` does: CPack's DEB generator on the tree configured with prefix /usr
  (cd "$T/usrcfg" && cpack -G DEB -B "$T/deb" >"$T/cpack.log" 2>&1) ||
    bad "cpack -G DEB: $(tail -3 "$T/cpack.log")"
  DEB=$(ls "$T"/deb/packages/*.deb "$T"/deb/*.deb 2>/dev/null | head -1 || true)
  [ -n "$DEB" ] || bad "cpack made no .deb: $(tail -3 "$T/cpack.log")"
  if [ -n "$DEB" ]; then
    dpkg-deb -c "$DEB" >"$T/contents"
    grep -q "usr/bin/gpuprof$" "$T/contents" || bad "package lacks usr/bin/gpuprof"
    grep -q "usr/share/man/man1/gpuprof.1" "$T/contents" || bad "package lacks the man page"
    grep -q "usr/$LIBDIR/libgpuprof.so" "$T/contents" || bad "package lacks usr/$LIBDIR/libgpuprof.so (multiarch)"
    grep -q "usr/$LIBDIR/pkgconfig/gpuprof.pc" "$T/contents" || bad "package lacks usr/$LIBDIR/pkgconfig/gpuprof.pc"
    dpkg-deb -f "$DEB" Depends | grep -q libc6 || bad "package Depends lacks libc6"
    if [ "${GPUPROF_DEB_REAL_INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ]; then
      dpkg -i "$DEB" >/dev/null && REAL_INSTALLED=1 || bad "dpkg -i $DEB"
      R=""
    else
      R="$T/root"
      mkdir -p "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/info"
      touch "$R/var/lib/dpkg/status" "$R/var/lib/dpkg/available"
      # unpack with dpkg into the private root (its configure step only runs
      # ldconfig, which needs the real system: GPUPROF_DEB_REAL_INSTALL=1)
      dpkg --root="$R" --force-depends --force-not-root --unpack "$DEB" >"$T/dpkg.log" 2>&1 ||
        bad "dpkg --root --unpack: $(tail -3 "$T/dpkg.log")"
      grep -q "^Package: gpuprof" "$R/var/lib/dpkg/status" || bad "dpkg database lacks gpuprof"
    fi
    "$R/usr/bin/gpuprof" --version | grep -q "gpuprof" || bad "installed gpuprof --version"
    # the package's libdir: where its gpuprof.pc is (not whatever /usr holds)
    PLIB=$(sed -n 's|.* \./usr/\(.*\)/pkgconfig/gpuprof\.pc$|\1|p' "$T/contents" | head -1)
    consume "deb" "$R" /usr "$PLIB"
    if [ "${REAL_INSTALLED:-0}" = 1 ]; then
      dpkg -P gpuprof >/dev/null && REAL_INSTALLED=0 || bad "dpkg -P gpuprof"
      [ ! -e /usr/bin/gpuprof ] || bad "/usr/bin/gpuprof left after dpkg -P"
    fi
    echo "deb: $(basename "$DEB") installs, runs, consumers build"
  fi
else
  echo "note: cpack/dpkg-deb not available: package check skipped"
fi
exit $fail
