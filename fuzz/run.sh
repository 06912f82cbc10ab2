#!/bin/sh
# fuzz/run.sh [--report FILE] [--fresh] [--jobs N] [SECONDS] [TARGET...] -- a fuzzing campaign:
# builds the libFuzzer targets if needed (cmake --preset fuzz, in build/fuzz or $FG_FUZZ_BUILD)
# and runs each TARGET (default: all, see the list below) for SECONDS (default $FG_FUZZ_SECONDS,
# else 15), seeded with the committed corpus (tests/corpus); --jobs N runs N targets at once
# (default 1: one after the other; each target is one process, so N = cores keeps every core
# fuzzing). Prints a summary line per target (executions, exec/s, peak RSS, corpus size and new
# units, coverage, crashes); --report FILE also writes them as a markdown table with the date,
# commit and machine. --fresh empties the targets' working corpora first (otherwise each run
# goes on from the last one's). New inputs go to <build>/fuzz-work/<target>, crash reproducers
# and each target's log to <build>/fuzz-artifacts/. Exits 1 if any target crashed, 2 on a usage
# or build error.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FG_FUZZ_BUILD:-$root/build/fuzz}

# The targets, in campaign order. Adding one: a word here, a line in seeds() below, and its name
# in fuzz/CMakeLists.txt's FG_FUZZ_TARGETS (fuzz/<name>.dict is used when present).
all_targets="npz npy mtx snap csv calibration checkpoint report scipy reddit saint ogbbin prepared"

# seeds TARGET: its seed folders under tests/corpus
seeds() {
  case $1 in
    npz) echo npz ;;
    npy) echo npy ;;
    mtx) echo mtx ;;
    snap) echo snap ;;
    csv) echo csv ogb ;;
    calibration) echo calib ;;
    checkpoint) echo ckpt ;;
    report) echo report ;;
    scipy) echo scipy npz ;;
    reddit) echo reddit_fuzz ;;
    saint) echo saint ;;
    ogbbin) echo ogbbin ;;
    prepared) echo prepared ;;
  esac
}

usage() {
  sed -n '2,13s/^# \{0,1\}//p' "$0" >&2
  echo "targets: $all_targets" >&2
  exit 2
}

report=""
fresh=0
jobs=1
secs=${FG_FUZZ_SECONDS:-15}
targets=""
while [ $# -gt 0 ]; do
  case $1 in
    --report) [ $# -ge 2 ] || usage; report=$2; shift 2 ;;
    --report=*) report=${1#--report=}; shift ;;
    --fresh) fresh=1; shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    -h | --help) usage ;;
    -*) echo "fuzz/run.sh: unknown option '$1'" >&2; usage ;;
    *[!0-9]* | '')
      case " $all_targets " in
        *" $1 "*) targets="$targets $1" ;;
        *) echo "fuzz/run.sh: unknown target '$1'" >&2; usage ;;
      esac
      shift ;;
    *) secs=$1; shift ;;
  esac
done
[ -n "$targets" ] || targets=$all_targets
[ "$secs" -gt 0 ] 2>/dev/null || { echo "fuzz/run.sh: SECONDS must be positive" >&2; exit 2; }
[ "$jobs" -gt 0 ] 2>/dev/null || { echo "fuzz/run.sh: --jobs must be a positive count" >&2; exit 2; }

# what is fuzzed: the commit (and whether src/ or fuzz/ differ from it) when the build starts
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- src fuzz 2>/dev/null || commit="$commit (+ uncommitted changes)"
began=$(date -u '+%Y-%m-%d %H:%M UTC')

if [ ! -f "$build/build.ninja" ]; then
  (cd "$root" && cmake --preset fuzz -B "$build") || exit 2
fi
# shellcheck disable=SC2046
cmake --build "$build" --target $(for t in $targets; do printf 'fuzz_%s ' "$t"; done) || exit 2

# UBSan reports must stop the run (the library is built with recoverable checks).
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
art="$build/fuzz-artifacts"
mkdir -p "$art"

# final_stat NAME LOG: libFuzzer's final statistic stat::NAME, or "-"
final_stat() {
  v=$(sed -n "s/^stat::$1: *\([0-9][0-9]*\).*/\1/p" "$2" | tail -n 1)
  echo "${v:--}"
}
# last_field KEY LOG: the number after "KEY: " on libFuzzer's last status line, or "-"
last_field() {
  v=$(sed -n "s/.* $1: \([0-9][0-9]*\).*/\1/p" "$2" | tail -n 1)
  echo "${v:--}"
}
# artifacts TARGET: how many reproducers (crash, leak, timeout, out-of-memory) it has left
artifacts() {
  find "$art" -maxdepth 1 -type f \( -name "$1-crash-*" -o -name "$1-leak-*" \
    -o -name "$1-timeout-*" -o -name "$1-oom-*" \) | wc -l | tr -d ' '
}

# fuzz_one TARGET: one target's run; its summary line goes to $art/TARGET.row, its report row to
# $art/TARGET.md, and $art/TARGET.failed marks a crash (the lanes below run in subshells)
fuzz_one() {
  t=$1
  work="$build/fuzz-work/$t"
  [ $fresh -eq 1 ] && rm -rf "$work"
  mkdir -p "$work"
  dict=""
  [ -f "$root/fuzz/$t.dict" ] && dict="-dict=$root/fuzz/$t.dict"
  dirs=""
  for s in $(seeds "$t"); do dirs="$dirs $root/tests/corpus/$s"; done
  # shellcheck disable=SC2086
  nseeds=$(find $dirs -type f | wc -l | tr -d ' ')
  before=$(artifacts "$t")
  log="$art/$t.log"
  rm -f "$art/$t.failed"
  echo "== fuzz_$t for ${secs}s ($nseeds seed files)"
  start=$(date +%s)
  # shellcheck disable=SC2086
  "$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 $dict -artifact_prefix="$art/$t-" "$work" $dirs \
    > "$log" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  crashes=$(($(artifacts "$t") - before))
  if [ $rc -ne 0 ]; then
    : > "$art/$t.failed"
    [ "$crashes" -gt 0 ] || crashes=1
  fi
  execs=$(final_stat number_of_executed_units "$log")
  rate=$(final_stat average_exec_per_sec "$log")
  rss=$(final_stat peak_rss_mb "$log")
  new=$(final_stat new_units_added "$log")
  corp=$(last_field corp "$log")
  cov=$(last_field cov "$log")
  printf 'fuzz_%-12s %5ss %11s execs %7s exec/s  peak RSS %5s MB  corpus %5s (%s new)  cov %5s  crashes %s\n' \
    "$t" "$took" "$execs" "$rate" "$rss" "$corp" "$new" "$cov" "$crashes" > "$art/$t.row"
  echo "| $t | $took | $execs | $rate | $rss | $nseeds | $corp | $new | $cov | $crashes |" \
    > "$art/$t.md"
}

# the targets dealt round-robin into $jobs lanes, each lane one after the other
lane=0
while [ $lane -lt "$jobs" ]; do
  (
    i=0
    for t in $targets; do
      [ $((i % jobs)) = $lane ] && fuzz_one "$t"
      i=$((i + 1))
    done
  ) &
  lane=$((lane + 1))
done
wait

# the summaries in campaign order; a crashed target's log tail
rows=""
failed=""
for t in $targets; do
  if [ -f "$art/$t.failed" ]; then
    failed="$failed $t"
    tail -n 40 "$art/$t.log"
  fi
  cat "$art/$t.row"
  rows="$rows$(cat "$art/$t.md")
"
done

if [ -n "$report" ]; then
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
  cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
  ccv=$("${cc:-clang}" --version 2>/dev/null | head -n 1)
  {
    echo "Fuzzing campaign begun $began, commit $commit;"
    echo "$(nproc) cores ($cpu), $(uname -sm); $ccv; ${secs} s per target."
    echo
    echo "| target | seconds | executions | exec/s | peak RSS (MB) | seeds | corpus | new units | coverage (edges) | crashes |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    printf '%s' "$rows"
  } > "$report"
  echo "report written to $report"
fi
if [ -n "$failed" ]; then
  echo "fuzz: crashes in:$failed (reproducers and logs in $art)"
  exit 1
fi
echo "fuzz: no crashes"
