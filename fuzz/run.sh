#!/bin/sh
# fuzz/run.sh [seconds] -- builds the libFuzzer targets if needed (cmake --preset fuzz, in
# build/fuzz or $FG_FUZZ_BUILD) and runs each for the given time (default 20 s), seeded with
# the committed corpus (tests/corpus). New inputs go to <build>/fuzz-work/<target>, crash
# reproducers to <build>/fuzz-artifacts/. Exits nonzero if any target finds a crash.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-20}
build=${FG_FUZZ_BUILD:-$root/build/fuzz}
targets="npz npy mtx snap csv checkpoint"

if [ ! -f "$build/build.ninja" ]; then
  (cd "$root" && cmake --preset fuzz -B "$build") || exit 2
fi
cmake --build "$build" --target $(for t in $targets; do printf 'fuzz_%s ' "$t"; done) || exit 2

seeds() {
  case $1 in
    npz) echo "$root/tests/corpus/npz" ;;
    npy) echo "$root/tests/corpus/npy" ;;
    mtx) echo "$root/tests/corpus/mtx" ;;
    snap) echo "$root/tests/corpus/snap" ;;
    csv) echo "$root/tests/corpus/csv $root/tests/corpus/ogb" ;;
    checkpoint) echo "$root/tests/corpus/ckpt" ;;
  esac
}

# UBSan reports must stop the run (the library is built with recoverable checks).
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
failed=""
mkdir -p "$build/fuzz-artifacts"
for t in $targets; do
  work="$build/fuzz-work/$t"
  mkdir -p "$work"
  dict=""
  [ -f "$root/fuzz/$t.dict" ] && dict="-dict=$root/fuzz/$t.dict"
  echo "== fuzz_$t for ${secs}s"
  # shellcheck disable=SC2046
  if ! "$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 $dict \
      -artifact_prefix="$build/fuzz-artifacts/$t-" "$work" $(seeds "$t") \
      > "$build/fuzz-artifacts/$t.log" 2>&1; then
    failed="$failed $t"
    tail -n 40 "$build/fuzz-artifacts/$t.log"
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/fuzz-artifacts/$t.log" \
      | tr '\n' ' '
    echo
  fi
done
if [ -n "$failed" ]; then
  echo "fuzz: crashes in:$failed (reproducers in $build/fuzz-artifacts)"
  exit 1
fi
echo "fuzz: no crashes"
