#!/usr/bin/env bash
# Parallel `prepare` of the OGB csv layout parsed in byte ranges (raw/edge.csv, node-feat.csv,
# node-label.csv plain): Cora's OGB re-encoding unpacked to plain csv. At P = 1 (--parallel), 2,
# 3, 4 the natural order's directory is byte for byte the serial one, and random's at P = 2 and
# 3; the same without features, labels and split (generated), and with multi-label targets; a
# malformed feature line and a short edge table are refused on every rank with the serial
# reader's one message naming the file and line (exit 1, no manifest, no hang).
# usage: pprep_ogb_test.sh FULLGRAPH OGBDIR MPIEXEC   (OGBDIR: data/cora, gzip csv)
set -u
FG=$1 OGB=$2 MPIEXEC=$3
[ -d "$OGB/raw" ] || { echo "skip: $OGB is absent"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 pass=0
check() { # check NAME CONDITION-EXIT-STATUS
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok: $1"; else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
MPI="timeout 120 $MPIEXEC --oversubscribe"

# plain csv copies of the gzip files: D (all), G (no features, labels, split), M (targets)
unpack() { # unpack DIR: every .csv.gz of $OGB as .csv under DIR
  (cd "$OGB" && find . -name '*.csv.gz') | while read -r f; do
    mkdir -p "$1/$(dirname "$f")"
    gzip -dc "$OGB/$f" > "$1/${f%.gz}"
  done
}
unpack "$T/D"
unpack "$T/G"
rm -rf "$T/G/raw/node-feat.csv" "$T/G/raw/node-label.csv" "$T/G/split"
unpack "$T/M"
# three 0/1 targets from the class (one missing where the class is 6): a multi-label file
awk '{printf "%d,%d,%s\n", ($1 % 2), ($1 >= 3), ($1 == 6 ? "" : ($1 < 2))}' "$T/D/raw/node-label.csv" \
  > "$T/M/raw/node-label.csv"

same() { # same NAME DIR ORDER-ARGS PS: serial vs parallel at each P, byte for byte
  local name=$1 dir=$2 args=$3
  "$FG" prepare "$dir" --blocks 4 $args --output "$T/s" > "$T/o" 2>&1
  check "$name: serial prepare" $?
  for P in $4; do
    rm -rf "$T/p"
    $MPI -n $P "$FG" prepare "$dir" --blocks 4 $args --parallel --output "$T/p" > "$T/op" 2>&1
    check "$name: P=$P: parallel prepare" $?
    grep -q "input parsed in parallel" "$T/op"
    check "$name: P=$P: the csv tables were parsed in parallel" $?
    diff -r "$T/s" "$T/p" > /dev/null
    check "$name: P=$P: the directory equals the serial one, byte for byte" $?
  done
  rm -rf "$T/s" "$T/p"
}
same "cora csv, natural" "$T/D" "" "1 2 3 4"
same "cora csv, random" "$T/D" "--order random --seed 3" "2 3"
same "generated features, labels, split" "$T/G" "" "3"
same "multi-label targets" "$T/M" "" "2 3"

# refusals: the serial reader's message, once, on every rank's exit; no manifest
refused() { # refused NAME DIR MESSAGE-REGEX
  "$FG" prepare "$2" --blocks 4 --output "$T/b" > "$T/os" 2>&1
  [ $? = 1 ] && grep -q "$3" "$T/os"
  check "$1: serial prepare refuses it" $?
  for P in 3 4; do
    $MPI -n $P "$FG" prepare "$2" --blocks 4 --output "$T/b" > "$T/o" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "$3" "$T/o" && [ "$(grep -c 'error:' "$T/o")" = 1 ] &&
      [ ! -f "$T/b/manifest.fgprep" ]
    check "$1: P=$P: exit 1, one message naming the file and line, no manifest" $?
  done
}
cp -r "$T/D" "$T/B"
sed -i '2000s/^0,/zz,/' "$T/B/raw/node-feat.csv"
refused "a malformed feature line" "$T/B" "B/raw/node-feat.csv: line 2000, column 1: 'zz' is not a number"
cp -r "$T/D" "$T/E"
sed -i '$d' "$T/E/raw/edge.csv"
refused "an edge table a row short" "$T/E" "E/raw/edge.csv: 5277 rows, expected 5278"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
