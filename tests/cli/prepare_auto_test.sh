#!/usr/bin/env bash
# `train DIR --scheme auto` on a prepared directory under mpirun: the performance model ranks the
# layouts the blocks form from the manifest alone, and every rank then reads only its own blocks.
# Cora in 12 blocks (order random): at P = 2, 3, 4 the log names the scheme the model picked,
# every rank reports its read and rank 0 reads no more than its share (not the whole directory),
# and the losses equal the direct path's with the picked scheme (its grid or --replicate) and
# the directory's order; options that leave one candidate (--agg-blocks: 3d, --replicate: 1.5d)
# go through the same path. Refused with exit 2 before any load: P = 5 (no layout of 5 ranks
# divides 12 blocks; the message names the rank counts that fit) and another --order.
# usage: prepare_auto_test.sh FULLGRAPH DATA MPIEXEC
set -u
FG=$1 DATA=$2 MPIEXEC=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 pass=0
. "$(dirname "$0")/../expect.sh" # check_rc, same_losses
MPI="timeout 120 $MPIEXEC --oversubscribe"
EP="--epochs 3 --seed 3"

"$FG" prepare "$DATA" --blocks 12 --order random --seed 3 --output "$T/p" > /dev/null 2>&1
check_rc "prepare --blocks 12 --order random" $?
total=$(cat "$T"/p/*.bin "$T/p/manifest.fgprep" | wc -c)

# auto P [OPTIONS...]: the per-rank run, its pick, each rank's read, and the direct path
auto() {
  local P=$1 st pick scheme extra got
  shift
  $MPI -n "$P" "$FG" train "$T/p" --scheme auto "$@" $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1
  st=$?
  [ $st = 0 ] || cat "$T/o"
  check_rc "auto $* on $P ranks: exit 0" $st
  pick=$(sed -n 's/^performance model: //p' "$T/o")
  [ -n "$pick" ]; check_rc "auto $* on $P ranks: the model's pick is printed ($pick)" $?
  # "3d grid 2x1x2", "1.5d, --replicate 2" or a name
  scheme=${pick%%[ ,]*}
  extra=""
  case "$pick" in
    *" grid "*) extra="--grid ${pick##* grid }" ;;
    *"--replicate "*) extra="--replicate ${pick##*--replicate }" ;;
  esac
  # every rank read its own. A 1D layout's rank 0 reads its block row's share, 1/K of the
  # node files (which dominate) for K = P / c block rows, with room for the degree files; a
  # grid's rank 0 no more than the busiest other rank (a grid of X = 1 reads every node file
  # for its slice of the feature columns)
  grep -q "^  rank $((P - 1)) read" "$T/o"
  check_rc "auto $* on $P ranks: rank $((P - 1)) read its own blocks" $?
  got=$(sed -n 's/^  rank 0 read \([0-9]*\) bytes.*/\1/p' "$T/o")
  most=$(sed -n 's/^  rank [1-9][0-9]* read \([0-9]*\) bytes.*/\1/p' "$T/o" | sort -n | tail -1)
  K=$P
  case "$pick" in *"--replicate "*) K=$((P / ${pick##*--replicate })) ;; esac
  if [ "$scheme" = 3d ]; then
    [ -n "$got" ] && [ -n "$most" ] && [ "$got" -le $((most * 11 / 10)) ]
  else
    [ -n "$got" ] && [ "$got" -lt $((total * 3 / (2 * K))) ]
  fi
  check_rc "auto $* on $P ranks: rank 0 read ${got:-?} of $total bytes (others at most ${most:-?})" $?
  # shellcheck disable=SC2086 # $extra is two words or none
  $MPI -n "$P" "$FG" train "$DATA" --scheme "$scheme" $extra --order random "$@" $EP \
    --metrics "$T/d.jsonl" > "$T/od" 2>&1 || cat "$T/od"
  same_losses "$T/r.jsonl" "$T/d.jsonl"
  check_rc "auto $* on $P ranks = the direct path with --scheme $scheme $extra --order random" $?
}

auto 2
auto 3
auto 4
auto 4 --agg-blocks 2 # 3d's option: its grid picked among those whose dimensions divide 12
auto 4 --replicate 2  # 1.5d's: 2 block rows of 6 blocks on 2 replicas each

# ---- refused before any load (exit 2) ----
$MPI -n 5 "$FG" train "$T/p" --scheme auto --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "has 12 row blocks: --scheme auto finds no layout of 5 ranks" "$T/o" &&
  grep -q "rank counts up to 64 that fit: 1, 2, 3, 4, 6, 8, 9, 12," "$T/o" &&
  ! grep -q "^  rank 0 read" "$T/o"
check_rc "auto on 5 ranks refused naming the rank counts that fit (exit 2)" $?
$MPI -n 2 "$FG" train "$T/p" --scheme auto --order natural --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "prepared in order random; --order natural" "$T/o"
check_rc "auto with another --order refused naming both (exit 2)" $?

echo "prepare_auto_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
