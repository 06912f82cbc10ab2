#!/usr/bin/env bash
# The installed library: `cmake --install` into a prefix under a temporary directory, then
# examples/train_in_memory.c built against it with pkg-config (shared and --static) and with
# CMake's find_package (shared and static, from the tree moved elsewhere: it must be
# relocatable), each binary run; the man pages rendered; the file list checked.
# usage: install_test.sh BUILD_DIR SOURCE_DIR CC [CMAKE]
set -u
B=$1 SRC=$2 CC=$3 CMAKE=${4:-cmake}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
. "$(dirname "$0")/../expect.sh"

# ASan's runtime must come first in a program that loads the sanitized library, and a consumer
# linked without -fsanitize has no runtime at all: what this test checks is the release layout
if grep -q '^FG_SANITIZE:BOOL=ON' "$B/CMakeCache.txt"; then
  echo "skip: a sanitizer build (FG_SANITIZE) is not for installing"
  exit 77
fi
command -v pkg-config > /dev/null || { echo "skip: no pkg-config"; exit 77; }

check() { # check WHAT command...: the command must succeed
  local what=$1; shift
  if "$@" > "$T/check.log" 2>&1; then
    pass=$((pass + 1))
  else
    echo "FAIL: $what"; tail -8 "$T/check.log" | sed 's/^/    /'
    fail=$((fail + 1))
  fi
}

P=$T/prefix
check "cmake --install" "$CMAKE" --install "$B" --prefix "$P"
LIBDIR=$(cd "$P" && dirname "$(ls -d lib*/pkgconfig lib/*/pkgconfig 2>/dev/null | head -1)")
[ -n "$LIBDIR" ] && [ "$LIBDIR" != . ] || { echo "FAIL: no pkgconfig directory under $P"; exit 1; }

# ---- the file list: exactly these, one man page per command the program lists ----
FG=$P/bin/fullgraph
expect 0 "^fullgraph [0-9]+\.[0-9]+" "$FG" --version
cmds=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$FG" man --list)
ver=$(sed -n 's/^Version: //p' "$P/$LIBDIR/pkgconfig/fullgraph.pc")
{
  echo bin/fullgraph
  echo include/fullgraph.h
  for f in libfullgraph.a libfullgraph.so libfullgraph.so.0 "libfullgraph.so.$ver" \
           pkgconfig/fullgraph.pc cmake/fullgraph/fullgraphConfig.cmake \
           cmake/fullgraph/fullgraphConfigVersion.cmake cmake/fullgraph/fullgraphTargets.cmake \
           cmake/fullgraph/fullgraphStaticTargets.cmake; do
    echo "$LIBDIR/$f"
  done
  echo share/man/man1/fullgraph.1
  for c in $cmds; do echo "share/man/man1/fullgraph-$c.1"; done
} | sort > "$T/want"
# the per-configuration target files (fullgraphTargets-release.cmake, ...) vary with the build type
(cd "$P" && find . -type f -o -type l | sed 's|^\./||' | grep -v 'Targets-[a-z]*\.cmake$' | sort) \
  > "$T/have"
check "installed files (< wanted, > installed)" diff "$T/want" "$T/have"
for c in train info generate plan bench; do
  check "'$c' among the commands with a page" grep -qx "$c" <<<"$cmds"
done
# nothing installed points into the build or source tree
check "no build or source path in the package files" \
  bash -c "! grep -rlF -e '$B' -e '$SRC' '$P/$LIBDIR/pkgconfig' '$P/$LIBDIR/cmake'"

# ---- the man pages render without a warning, and each lists every option of its --help ----
for page in "$P"/share/man/man1/*.1; do
  out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
  check "groff -ww $(basename "$page"): ${out:-clean}" test -z "$out"
  if command -v mandoc > /dev/null; then
    check "mandoc -Tlint $(basename "$page")" mandoc -Tlint -W warning "$page"
  fi
done
for c in $cmds; do
  text=$(MANWIDTH=200 man -l "$P/share/man/man1/fullgraph-$c.1" 2>/dev/null)
  opts=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$FG" "$c" --help |
         grep -oE '^  --[a-z0-9-]+')
  missing=""
  for o in $opts; do grep -qE -- "^ +$o( |$)" <<<"$text" || missing="$missing $o"; done
  check "fullgraph-$c.1 has every option of 'fullgraph $c --help'${missing:+ (missing:$missing)}" \
    test -z "$missing"
done
expect 0 "fullgraph-train - train a GNN" env MANWIDTH=80 man -l "$P/share/man/man1/fullgraph-train.1"
expect 0 "^EXIT STATUS" env MANWIDTH=80 man -l "$P/share/man/man1/fullgraph.1"
expect 2 "unknown command 'nope'" env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  "$FG" man nope

# ---- pkg-config: the shared library, then the static one ----
export PKG_CONFIG_PATH=$P/$LIBDIR/pkgconfig
EX=$SRC/examples/train_in_memory.c
check "pkg-config fullgraph" pkg-config --exists fullgraph
check "pkg-config: cc ... --libs fullgraph" \
  bash -c "'$CC' -O2 -Wall -Wextra -Wshadow -Werror -o '$T/ex_pc' '$EX' \$(pkg-config --cflags --libs fullgraph) -lm"
check "pkg-config build links libfullgraph.so.0" \
  bash -c "readelf -d '$T/ex_pc' | grep -q 'NEEDED.*libfullgraph.so.0'"
expect 0 "test accuracy 0\.[7-9]" env LD_LIBRARY_PATH="$P/$LIBDIR" "$T/ex_pc"
# without the library on the path it does not start (it found the installed one above)
expect 127 "libfullgraph.so.0" "$T/ex_pc"
check "pkg-config --static: cc ... libfullgraph.a" \
  bash -c "'$CC' -O2 -o '$T/ex_pc_static' '$EX' \$(pkg-config --cflags fullgraph) \
           \$(pkg-config --static --libs fullgraph | sed 's/-lfullgraph/-l:libfullgraph.a/') -lm"
check "the --static build needs no libfullgraph.so" \
  bash -c "! readelf -d '$T/ex_pc_static' | grep -q 'NEEDED.*libfullgraph'"
expect 0 "test accuracy 0\.[7-9]" "$T/ex_pc_static"

# ---- CMake: find_package(fullgraph) in the tree moved to another directory ----
mv "$P" "$T/moved"
P=$T/moved
unset PKG_CONFIG_PATH
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)
check "cmake -S examples (find_package)" \
  "$CMAKE" -S "$SRC/examples" -B "$T/ex" "${gen[@]}" -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release
check "cmake --build examples" "$CMAKE" --build "$T/ex"
expect 0 "test accuracy 0\.[7-9]" "$T/ex/train_in_memory"
expect 0 "test accuracy 0\.[7-9]" "$T/ex/train_in_memory_static"
check "the CMake build links the moved tree's libfullgraph.so.0" \
  bash -c "ldd '$T/ex/train_in_memory' | grep -q '$P/$LIBDIR/libfullgraph.so.0'"
expect 0 "^fullgraph [0-9]" "$P/bin/fullgraph" --version
# a version the package is not compatible with is refused
mkdir -p "$T/v"
cat > "$T/v/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(v LANGUAGES C)
find_package(fullgraph 9.0 REQUIRED)
EOF
expect 1 "fullgraph" "$CMAKE" -S "$T/v" -B "$T/v/b" -DCMAKE_PREFIX_PATH="$P"

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
