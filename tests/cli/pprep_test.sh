#!/usr/bin/env bash
# Parallel `prepare` (mpirun -n P fullgraph prepare): at P = 1 (--parallel), 2, 3, 4 the natural
# order's directory is byte for byte the serial one (and random's at P = 3); the metis order
# (PT-Scotch) reads back whole -- every node once, degrees and the source's fingerprint
# recomputed, so the same graph, features, labels and split -- its edge cut is reported and
# within 1.5x serial METIS's, and it trains under mpirun to the serial metis directory's losses;
# a strategy Scotch rejects (FULLGRAPH_SCOTCH_STRAT) stops every rank with one message;
# --blocks out of range is refused (exit 2), and a P that does not divide B is refused by train.
# With SNAP (the list parsed in byte ranges): the same equalities, and a malformed line is
# refused on every rank with one message naming the file and its line (no hang).
# usage: pprep_test.sh FULLGRAPH DATA MPIEXEC cora|snap SNAPFILE
set -u
FG=$1 DATA=$2 MPIEXEC=$3 WHAT=$4 SNAP=${5:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 pass=0
. "$(dirname "$0")/../expect.sh" # check_rc, losses, same_losses
MPI="timeout 120 $MPIEXEC --oversubscribe"
cut_of() { sed -n 's/.*edge cut \([0-9]*\) .*/\1/p' "$1"; }

if [ "$WHAT" = snap ]; then
  [ -f "$SNAP" ] || { echo "skip: $SNAP is absent (../shared/data)"; exit 77; }
  SRC=$SNAP
else
  SRC=$DATA
fi

# ---- natural (and random): the serial directory, byte for byte ----
"$FG" prepare "$SRC" --blocks 4 --output "$T/s" > "$T/o" 2>&1
check_rc "serial prepare" $?
grep -q "^prepare report: 1 rank (serial), partitioner none: .* edge cut [0-9]* " "$T/o"
check_rc "serial prepare reports its edge cut" $?
for P in 1 2 3 4; do
  $MPI -n $P "$FG" prepare "$SRC" --blocks 4 --parallel --output "$T/p$P" > "$T/o$P" 2>&1
  check_rc "P=$P: parallel prepare --order natural" $?
  diff -r "$T/s" "$T/p$P" > /dev/null
  check_rc "P=$P: the directory equals the serial one, byte for byte" $?
done
if [ "$WHAT" = snap ]; then
  grep -q "input parsed in parallel" "$T/o3"; check_rc "the SNAP list was parsed in parallel" $?
else
  grep -q "input read by rank 0" "$T/o3"; check_rc "an OGB directory is read by rank 0" $?
fi
"$FG" prepare "$SRC" --blocks 4 --order random --seed 3 --output "$T/r" > /dev/null 2>&1
$MPI -n 3 "$FG" prepare "$SRC" --blocks 4 --order random --seed 3 --output "$T/r3" > /dev/null 2>&1
check_rc "P=3: parallel prepare --order random" $?
diff -r "$T/r" "$T/r3" > /dev/null; check_rc "P=3: random equals the serial directory" $?

# ---- metis: valid, comparable cut, trains like the serial metis directory ----
"$FG" prepare "$SRC" --blocks 4 --order metis --output "$T/ms" > "$T/oms" 2>&1
check_rc "serial prepare --order metis" $?
"$FG" info "$SRC" | grep -v "^dataset" > "$T/isrc"
for P in 2 4; do
  $MPI -n $P "$FG" prepare "$SRC" --blocks 4 --order metis --output "$T/m$P" > "$T/om$P" 2>&1
  check_rc "P=$P: parallel prepare --order metis" $?
  grep -q "partitioner PT-Scotch (SCOTCH_dgraphPart)" "$T/om$P"
  check_rc "P=$P: PT-Scotch partitioned it" $?
  # read whole, every check of the reader: each node in one row, degrees, the fingerprint
  "$FG" info "$T/m$P" > "$T/im" 2>&1
  check_rc "P=$P: the metis directory reads back whole" $?
  grep -v "^dataset\|^  prepared" "$T/im" | cmp -s - "$T/isrc"
  check_rc "P=$P: info on it = info on the source" $?
  cs=$(cut_of "$T/oms") cp=$(cut_of "$T/om$P") cn=$(cut_of "$T/o$P")
  echo "edge cut: serial METIS $cs, PT-Scotch at P=$P $cp, natural $cn"
  [ -n "$cp" ] && [ "$cp" -le $((cs * 3 / 2)) ] && [ "$cp" -lt "$cn" ]
  check_rc "P=$P: edge cut within 1.5x serial METIS's and below natural's" $?
done
$MPI -n 2 "$FG" train "$T/ms" --epochs 5 --seed 2 --metrics "$T/ls.jsonl" > /dev/null 2>&1
check_rc "train on the serial metis directory" $?
$MPI -n 2 "$FG" train "$T/m2" --epochs 5 --seed 2 --metrics "$T/lp.jsonl" > /dev/null 2>&1
check_rc "train on the parallel metis directory" $?
losses "$T/ls.jsonl" > "$T/la"
losses "$T/lp.jsonl" > "$T/lb"
[ "$(wc -l < "$T/la")" = 5 ] && [ "$(wc -l < "$T/lb")" = 5 ] &&
  paste "$T/la" "$T/lb" | awk '{d = $1 - $2; if (d < 0) d = -d; if (d > 1e-4 * ($2 < 0 ? -$2 : $2)) bad = 1}
                               END {exit bad}'
check_rc "the same losses as the serial metis directory (within 1e-4)" $?

# ---- refusals ----
# a PT-Scotch strategy string Scotch cannot parse: exit 1 on every rank, fullgraph's one message
FULLGRAPH_SCOTCH_STRAT='r{sep=nonsense}' $MPI -n 2 "$FG" prepare "$SRC" --blocks 4 --order metis \
  --output "$T/xs" > "$T/o" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "PT-Scotch failed in building the strategy .*(strategy FULLGRAPH_SCOTCH_STRAT=r{sep=nonsense})" "$T/o" &&
  [ "$(grep -c 'error:' "$T/o")" = 1 ] && [ ! -f "$T/xs/manifest.fgprep" ]
check_rc "FULLGRAPH_SCOTCH_STRAT that Scotch rejects: exit 1, one message, no manifest" $?
$MPI -n 3 "$FG" prepare "$SRC" --blocks 3000 --output "$T/x" > "$T/o" 2>&1
[ $? = 2 ] && grep -q "\-\-blocks 3000: must be 1 to" "$T/o"; check_rc "--blocks 3000: exit 2" $?
$MPI -n 3 "$FG" train "$T/p3" --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "ranks that fit: 1, 2, 4" "$T/o"; check_rc "train on 4 blocks at P = 3: refused naming P = 1, 2, 4" $?

if [ "$WHAT" = snap ]; then
  # a malformed line far into the file, in the last ranks' byte range
  head -150000 "$SRC" > "$T/bad.txt"
  echo "12 x7" >> "$T/bad.txt"
  tail -n +150001 "$SRC" >> "$T/bad.txt"
  $MPI -n 3 "$FG" prepare "$T/bad.txt" --blocks 4 --output "$T/b" > "$T/o" 2>&1
  rc=$?
  [ $rc = 1 ] && grep -q "bad.txt: line 150001: expected two node ids 'u v' but found 'x7'" "$T/o" &&
    [ "$(grep -c 'error:' "$T/o")" = 1 ] && [ ! -f "$T/b/manifest.fgprep" ]
  check_rc "a malformed line: exit 1, one message naming the file and line, no manifest" $?
fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
