#!/usr/bin/env bash
# Install what fullgraph needs from Debian's packages; does nothing when all are present.
# usage: install-deps.sh [--bench]   --bench: also the PyTorch peer of bench/bench_single.sh
#                                    (python3-torch; never needed to build or test)
# python3-numpy and python3-scipy are for the Python binding's tests (tests/python), which report
# a skip without them, and for regenerating tests/corpus/scipy and reddit (make_scipy.py; the
# files are committed): the library and the CLI never need Python.
set -euo pipefail
pkgs=(gcc make cmake ninja-build pkg-config zlib1g-dev libopenmpi-dev openmpi-bin
      libopenblas-openmp-dev libmetis-dev libtrilinos-zoltan-dev gzip
      libptscotch-dev # PT-Scotch (SCOTCH_dgraphPart): parallel `prepare --order metis`
      libdnnl-dev # oneDNN: the native bf16 GEMMs (optional at build time: convert path without)
      python3 python3-numpy python3-scipy
      libxml2-utils chromium) # xmllint and headless Chromium: the cli_report test
# the cli_install test renders and lints the installed man pages (man -l, groff -ww, mandoc)
pkgs+=(groff-base man-db mandoc)
if [ "${FG_WITH_CLANG:-1}" = 1 ]; then pkgs+=(clang libclang-rt-14-dev); fi
if [ "${1:-}" = --bench ]; then pkgs+=(python3-torch); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
