#!/usr/bin/env bash
# Installs the Debian packages gpuprof needs to build and test. Idempotent:
# silent when everything is present; runs `apt-get update` once otherwise.
set -euo pipefail
# Build/test requirements. Each entry is "package" (checked with dpkg -s).
PKGS=(build-essential cmake ninja-build pkg-config zlib1g-dev libsqlite3-dev
      libyaml-dev  # the monitor's configuration file (src/monitor/config.c)
      ocl-icd-opencl-dev opencl-headers ocl-icd-libopencl1 pocl-opencl-icd clinfo
      python3 time clang libclang-rt-dev
      libgnutls28-dev  # SHA-256 of the audit log (src/store/audit.c)
      libisal-dev  # gzip traces inflated by isa-l (zlib is the fallback when absent)
      clpeak     # tests/t_bench_clpeak.py: gpuprof bench checked against clpeak
      chromium   # headless browser: tests/t_viz_browser.py opens every HTML view
      nodejs     # page-script lint (tests/t_web_lint.sh) and the XSS test's DevTools driver
      libmicrohttpd-dev  # HTTP listeners: gpuprof monitor --prometheus, gpuprof serve
      libgnutls28-dev    # gpuprof serve: TLS
      gnutls-bin wrk     # serve tests: a TLS test certificate (certtool), the load test
      prometheus  # promtool and a real server: tests/t_prometheus.py
      # HTA 0.6.1 (../shared/hta) as the oracle of tests/t_export_roundtrip.py;
      # protoc decodes .pftrace exports in tests/t_export_perfetto.py
      python3-pandas python3-numpy python3-plotly python3-networkx python3-psutil
      protobuf-compiler
      zsh man-db  # tests/t_package.sh: the zsh completion run in zsh, man pages rendered
      )
if [ "${GPUPROF_EXTRA_PKGS:-}" != "" ]; then
  # shellcheck disable=SC2206
  PKGS+=(${GPUPROF_EXTRA_PKGS})
fi
missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    # python3 may come from somewhere other than Debian (pyenv): accept any.
    if [ "$p" = python3 ] && command -v python3 >/dev/null 2>&1; then continue; fi
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
