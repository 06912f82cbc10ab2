#!/usr/bin/env bash
# device_bundle.sh -- build fullgraph for a lent x86-64 machine this one cannot run code for
# (a bf16 CPU: -march=sapphirerapids by default) and pack what it needs to run there.
#
# usage: bench/device_bundle.sh [MARCH]          (from the repository root)
#
# Writes (all under .dev/, which .git/info/exclude keeps out of git; the device tool carries it):
#   .dev/build-MARCH/        the release build with tests (-DFG_NATIVE=OFF -march=MARCH),
#                            object files deleted and binaries stripped (about 30 MB);
#   .dev/bundle.tar.xz       every shared library the binaries load except glibc's, the C++
#                            runtime and the Open MPI family (the device's own Open MPI runs the
#                            MPI tests: a carried one clashed with its PMIx), about 18 MB;
#   .dev/data/               ../shared/data's files the device checks read (4 MB).
# Then run bench/device_checks.sh there (see its header) with carry [".dev"].
# The man pages are not generated: they run the binary, which needs MARCH's instructions.
set -euo pipefail
MARCH=${1:-sapphirerapids}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
B=.dev/build-$MARCH
mkdir -p "$B"
cmake -S . -B "$B" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DFG_NATIVE=OFF -DFG_BUILD_TESTS=ON \
  -DCMAKE_C_FLAGS="-march=$MARCH -mtune=$MARCH" > "$B.cmake.log"
# everything but the man pages (a binary for MARCH may not run here)
targets=$(cmake --build "$B" --target help | awk '/^\.\.\. / {print $2}' |
          grep -Ev '^(all|clean|depend|edit_cache|rebuild_cache|install|install/.*|list_install_components|test|fullgraph_man|.*\.(o|i|s))$')
# shellcheck disable=SC2086
cmake --build "$B" -j "$(nproc)" --target $targets > "$B.build.log" 2>&1 ||
  { tail -20 "$B.build.log"; exit 1; }
find "$B" -name '*.o' -delete
find "$B" -type f -perm -u+x | while read -r f; do
  file "$f" | grep -q ELF && strip "$f" || true
done
rm -rf .dev/root && mkdir -p .dev/root/lib
for o in "$B/fullgraph" $(find "$B/tests" -type f -perm -u+x | head -5); do ldd "$o"; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    case "$name" in
      libc.so*|libm.so*|libpthread*|libdl.so*|librt.so*|ld-linux*|libresolv*|libstdc++*|libgcc_s*) continue ;;
      libmpi*|libopen-pal*|libopen-rte*|libpmix*|libmca_common*|liboshmem*|libhwloc*|libevent*) continue ;;
      libfabric*|libucp*|libucs*|libuct*|libucm*|libibverbs*|librdmacm*|libpsm*|libnl-*|libefa*) continue ;;
      libmunge*|libnuma*|libudev*) continue ;;
    esac
    cp -L "$path" ".dev/root/lib/$name"
  done
tar -C .dev -cJf .dev/bundle.tar.xz root && rm -rf .dev/root
mkdir -p .dev/data
if [ -d ../shared/data ]; then
  rm -rf .dev/data && cp -r ../shared/data .dev/data && chmod -R u+w .dev/data
fi
du -sh "$B" .dev/bundle.tar.xz .dev/data
echo "carry: [\".dev\"]; on the device: bash bench/device_checks.sh $MARCH"
