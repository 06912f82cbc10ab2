#!/usr/bin/env bash
# 3d on a prepared directory under mpirun: every rank reads its own shards. On grids 2x1x1,
# 1x2x2, 2x2x1 (4 blocks) and 3x1x1 (6 blocks) the losses equal the direct path's with the same
# order (train SOURCE --scheme 3d --order random: the single permutation of the seed, which is
# `prepare --order random`'s order; test_prepared_3d proves the shards bit for bit) and one
# process's, within 1e-6; learned features, label propagation (the input rows' labels) and
# multi-label targets the direct path's; each rank of 2x2x1 reads exactly the files (and
# node-file sections) its pieces need, and rank 0 no more memory than the others; a grid whose
# dimensions do not divide B, --grid auto on a rank count no grid of the blocks has, --double-perm
# and another --order are refused (exit 2) naming what fits; --grid auto picks from the manifest's
# block counts the grid `plan DIR` and the direct path pick (4 blocks: exact counts), with that
# grid's losses; a damaged block or truncated node file (exit 1) naming the file; `plan DIR` ranks only the layouts the blocks form.
# usage: prepare3d_test.sh FULLGRAPH DATA MPIEXEC CORPUS
set -u
FG=$1 DATA=$2 MPIEXEC=$3 CORPUS=$4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 pass=0
. "$(dirname "$0")/../expect.sh" # check_rc, losses, same_losses
size() { cat "$@" | wc -c; }
MPI="timeout 120 $MPIEXEC --oversubscribe"
EP="--epochs 3 --seed 3"

"$FG" prepare "$DATA" --blocks 4 --order random --seed 3 --output "$T/p4" > /dev/null 2>&1
check_rc "prepare --blocks 4 --order random" $?
"$FG" prepare "$DATA" --blocks 6 --order random --seed 3 --output "$T/p6" > /dev/null 2>&1
check_rc "prepare --blocks 6 --order random" $?
"$FG" train "$DATA" $EP --metrics "$T/ref.jsonl" > /dev/null 2>&1
check_rc "one process on the source" $?

# ---- per rank = the direct path with the same order = one process ----
"$FG" prepare "$CORPUS/ogb/ml_ok" --blocks 2 --order random --seed 3 --output "$T/ml" > /dev/null 2>&1
check_rc "prepare a multi-label dataset --blocks 2" $?
for case in "2 2x1x1 p4" "4 1x2x2 p4" "4 2x2x1 p4" "3 3x1x1 p6" "4 2x2x1 p4 --learn-features" \
            "2 2x1x1 p4 --label-prop 0.5" "2 1x2x1 ml"; do
  set -- $case
  P=$1 G=$2 dir="$T/$3"
  shift 3
  $MPI -n $P "$FG" train "$dir" --scheme 3d --grid $G "$@" $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1
  st=$?
  [ $st = 0 ] || cat "$T/o"
  src="$DATA"
  [ "$dir" = "$T/ml" ] && src="$CORPUS/ogb/ml_ok"
  $MPI -n $P "$FG" train "$src" --scheme 3d --grid $G --order random "$@" $EP \
    --metrics "$T/d.jsonl" > /dev/null 2>&1
  # learned features are 3d's own parameters, label propagation is not the one-process
  # default: the direct 3d path is their reference
  [ $st = 0 ] && same_losses "$T/r.jsonl" "$T/d.jsonl" &&
    { [ $# != 0 ] || [ "$src" != "$DATA" ] || same_losses "$T/r.jsonl" "$T/ref.jsonl"; }
  r=$?
  also=""
  [ $# = 0 ] && [ "$src" = "$DATA" ] && also=" and one process's"
  check_rc "3d $G $* per rank: the direct path's losses (--order random)$also" $r
  grep -q "rank $((P - 1)) read" "$T/o" && grep -q "the prepared order (random, read per rank)" "$T/o"
  check_rc "3d $G $*: every rank read its own, in the prepared order" $?
  [ "$G" = 2x2x1 ] && [ $# = 0 ] && cp "$T/o" "$T/o221"
done

# ---- the share of 2x2x1 on 4 blocks (rank r = 2x + y; 2 layers): the blocks of shard 0 (every
# row block, column blocks of X block x) and of shard 1 (row blocks of Y block y, every column
# block); every degree file for each shard (a random order references them all), but one side
# of a shard held: shard 0 holds X's 2 degree files (its narrower side) and reads the 2 others,
# shard 1 holds Y's (read again unless y = x) and reads the 2 others again; node files 2x, 2x+1 whole
# (its feature rows); of the two others the ids of every row (the Z slice is all rows: 677 x 8
# bytes each) and, when y != x, the labels and split of the Y block's rows (677 x 5 each) ----
total=$(size "$T"/p4/*.bin)
for r in 0 1 2 3; do
  x=$((r / 2)) y=$((r % 2))
  files=""
  for i in 0 1 2 3; do
    for j in 0 1 2 3; do
      if [ $((j / 2)) = $x ] || [ $((i / 2)) = $y ]; then
        [ -f "$T/p4/adj-000$i-000$j.bin" ] && files="$files $T/p4/adj-000$i-000$j.bin"
      fi
    done
  done
  share=$(size $files "$T"/p4/deg-*.bin "$T/p4/nodes-000$((2 * x)).bin" "$T/p4/nodes-000$((2 * x + 1)).bin")
  share=$((share + 2 * 677 * 8))
  [ $y != $x ] && share=$((share + 2 * 677 * 5))
  if [ $y = $x ]; then # shard 1 again: the degree files outside X
    for j in 0 1 2 3; do [ $((j / 2)) != $x ] && share=$((share + $(size "$T/p4/deg-000$j.bin"))); done
  else
    share=$((share + $(size "$T"/p4/deg-*.bin)))
  fi
  got=$(sed -n "s/^  rank $r read \([0-9]*\) bytes.*/\1/p" "$T/o221")
  [ "$got" = "$share" ] && [ "$got" -lt "$total" ]
  check_rc "2x2x1 rank $r read its share ($got bytes of $total; expected $share)" $?
done
# the degree tables held at once: a shard's held side (2 blocks) and one block of the other, 677
# rows each, not every node's
dpk=$((3 * $(size "$T/p4/deg-0000.bin")))
for r in 0 1 2 3; do
  got=$(sed -n "s/^  rank $r read .*; degree tables \([0-9]*\) bytes at most$/\1/p" "$T/o221")
  [ "$got" = "$dpk" ] && [ "$got" -lt "$(size "$T"/p4/deg-*.bin)" ]
  check_rc "2x2x1 rank $r held 2 + 1 blocks' degrees at once ($got bytes; expected $dpk)" $?
done
peaks=$(sed -n 's/^  rank [0-9] read .*peak resident \([0-9]*\) bytes.*/\1/p' "$T/o221")
p0=$(echo "$peaks" | head -1)
pmin=$(echo "$peaks" | sort -n | head -1)
[ -n "$p0" ] && [ -n "$pmin" ] && [ "$p0" -le $((pmin * 11 / 10)) ]
check_rc "2x2x1: rank 0's peak ($p0) within 1.1 x the least of the others ($pmin)" $?

# ---- refused before anything is read (exit 2) ----
$MPI -n 4 "$FG" train "$T/p6" --scheme 3d --grid 4x1x1 --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "has 6 row blocks: 3d's grid 4x1x1 needs each dimension to divide them (grids of 4 ranks that fit: 1x2x2, 2x1x2, 2x2x1); or prepare it again with --blocks a multiple of 4" "$T/o" &&
  ! grep -q "rank 0 read" "$T/o"
check_rc "grid 4x1x1 on 6 blocks refused naming the grids that fit" $?
$MPI -n 3 "$FG" train "$T/p4" --scheme 3d --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "has 4 row blocks: no 3d grid of 3 ranks has every dimension dividing them (rank counts up to 64 that fit: 1, 2, 4, 8, 16, 32, 64)" "$T/o" &&
  ! grep -q "rank 0 read" "$T/o"
check_rc "--grid auto on 3 ranks of 4 blocks refused naming the rank counts that fit" $?
$MPI -n 2 "$FG" train "$T/p4" --scheme 3d --double-perm --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "drop --double-perm" "$T/o"
check_rc "--grid auto with --double-perm refused" $?
$MPI -n 2 "$FG" train "$T/p4" --scheme 3d --grid 2x1x1 --double-perm --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "drop --double-perm (prepare --order random is the single random permutation)" "$T/o"
check_rc "--double-perm refused naming the alternative" $?
$MPI -n 2 "$FG" train "$T/p4" --scheme 3d --grid 2x1x1 --order natural --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "prepared in order random; --order natural" "$T/o"
check_rc "another --order refused" $?

# a damaged block is named by the rank that reads it; a missing node file by the rank that
# reads only a section of it (2x2x1: ranks 0 and 1 read ids of nodes-0003 by pread)
cp -r "$T/p4" "$T/bad"
printf 'x' | dd of="$T/bad/adj-0003-0002.bin" bs=1 seek=40 conv=notrunc 2>/dev/null
$MPI -n 2 "$FG" train "$T/bad" --scheme 3d --grid 2x1x1 --epochs 1 > "$T/o" 2>&1
[ $? = 1 ] && grep -q "adj-0003-0002.bin: CRC-32 mismatch" "$T/o"
check_rc "per rank: a damaged block refused naming it (exit 1)" $?
cp "$T/p4/adj-0003-0002.bin" "$T/bad/"
head -c 100 "$T/p4/nodes-0003.bin" > "$T/bad/nodes-0003.bin"
$MPI -n 4 "$FG" train "$T/bad" --scheme 3d --grid 2x2x1 --epochs 1 > "$T/o" 2>&1
[ $? = 1 ] && grep -q "nodes-0003.bin: 100 bytes, but the manifest lists .* (truncated)" "$T/o"
check_rc "per rank: a truncated node file refused naming it (exit 1)" $?

# ---- the planner sees the blocks ----
"$FG" plan "$T/p6" --ranks 4 > "$T/o" 2>&1
st=$?
[ $st = 0 ] && grep -q "^prepared: 6 x 6 blocks; ranked only the layouts they form" "$T/o" &&
  [ "$(awk '$2 == "3d"' "$T/o" | wc -l)" = 3 ] && grep -q " 3d .* 1x2x2 " "$T/o" &&
  grep -q " 3d .* 2x1x2 " "$T/o" && grep -q " 3d .* 2x2x1 " "$T/o" &&
  ! grep -q " 1d-sa " "$T/o" && ! grep -q " 1d " "$T/o" && ! grep -q " halo " "$T/o"
check_rc "plan on 6 blocks, 4 ranks: 3d's 3 grids that fit, no 1d, 1d-sa or halo" $?
"$FG" plan "$T/p4" --ranks 4 > "$T/o" 2>&1
[ $? = 0 ] && [ "$(awk '$2 == "3d"' "$T/o" | wc -l)" = 6 ] && grep -q " 1d-sa " "$T/o"
check_rc "plan on 4 blocks, 4 ranks: every grid and 1d-sa" $?
# its 3d shards are counted in the prepared order: 2x2x1's largest is the run's
run_max=$(sed -n 's/.*largest shard \([0-9]*\) nonzeros.*/\1/p' "$T/o221")
plan_max=$(awk '$2 == "3d" && $3 == "2x2x1" {print $10}' "$T/o")
[ -n "$run_max" ] && [ "$run_max" = "$plan_max" ]
check_rc "plan's largest 2x2x1 shard ($plan_max) is the per-rank run's ($run_max)" $?
"$FG" plan "$T/p4" --ranks 3 --schemes 3d > "$T/o" 2>&1
[ $? = 0 ] && grep -q "no layout of 3 ranks can be formed from the 4 prepared blocks" "$T/o"
check_rc "plan on 4 blocks, 3 ranks, 3d: none, said so" $?

# ---- --grid auto per rank: the performance model ranks the grids the blocks form from the
# manifest's block counts, before any block is read. 4 divides Cora's 2708 nodes, so every cut of
# a grid dimension dividing 4 falls on a block boundary and the counts are exact: the grid is
# the one `plan DIR` ranks first and the one the direct path picks with the same order, the
# prediction the direct path's, the losses those of that grid named ----
best=$("$FG" plan "$T/p4" --ranks 4 --schemes 3d 2>&1 | sed -n 's/^best: --scheme 3d --grid \([0-9x]*\) .*/\1/p')
$MPI -n 4 "$FG" train "$DATA" --scheme 3d --grid auto --order random $EP \
  --metrics "$T/d.jsonl" > "$T/od" 2>&1
direct=$(sed -n 's/.*performance model: 3d grid \([0-9]*x[0-9]*x[0-9]*\).*/\1/p' "$T/od")
$MPI -n 4 "$FG" train "$T/p4" --scheme 3d $EP --metrics "$T/a.jsonl" > "$T/o" 2>&1
st=$?
auto=$(sed -n 's/.*performance model: 3d grid \([0-9]*x[0-9]*x[0-9]*\).*/\1/p' "$T/o")
[ $st = 0 ] && [ -n "$best" ] && [ "$auto" = "$best" ] && [ "$auto" = "$direct" ] &&
  grep -q "grid $auto, the prepared order (random, read per rank)" "$T/o" && grep -q "rank 3 read" "$T/o"
check_rc "4 blocks, 4 ranks, --grid auto per rank: $auto (plan DIR's best $best, the direct path's $direct)" $?
pd=$(grep -o '"predicted": {[^}]*}' "$T/d.jsonl")
pa=$(grep -o '"predicted": {[^}]*}' "$T/a.jsonl")
[ -n "$pa" ] && [ "$pa" = "$pd" ]
check_rc "--grid auto per rank: the direct path's prediction ($pa)" $?
$MPI -n 4 "$FG" train "$T/p4" --scheme 3d --grid "${auto:-1x1x4}" $EP --metrics "$T/e.jsonl" > /dev/null 2>&1
[ $? = 0 ] && same_losses "$T/a.jsonl" "$T/e.jsonl" && same_losses "$T/a.jsonl" "$T/d.jsonl"
check_rc "--grid auto per rank: the losses of --grid $auto named and of the direct path" $?
# 6 blocks: the cuts of 2 (1354) straddle the blocks (452 rows but the last four 451): the counts
# are an estimate; the grid is one the blocks form, and trains as named
best=$("$FG" plan "$T/p6" --ranks 4 --schemes 3d 2>&1 | sed -n 's/^best: --scheme 3d --grid \([0-9x]*\) .*/\1/p')
$MPI -n 4 "$FG" train "$T/p6" --scheme 3d $EP --metrics "$T/a.jsonl" > "$T/o" 2>&1
st=$?
auto=$(sed -n 's/.*performance model: 3d grid \([0-9]*x[0-9]*x[0-9]*\).*/\1/p' "$T/o")
$MPI -n 4 "$FG" train "$T/p6" --scheme 3d --grid "${auto:-1x1x4}" $EP --metrics "$T/e.jsonl" > /dev/null 2>&1
[ $st = 0 ] && case "$auto" in 1x2x2 | 2x1x2 | 2x2x1) true ;; *) false ;; esac &&
  same_losses "$T/a.jsonl" "$T/e.jsonl"
check_rc "6 blocks, 4 ranks, --grid auto per rank: $auto, a grid they form (plan DIR's best: $best), its losses" $?

echo "prepare3d_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
