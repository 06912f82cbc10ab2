#!/usr/bin/env bash
# The volume-aware orders from the command line: `info --ranks 4 --order all` prints one line per
# order this build has (Table 2 of the SA paper), `info --order volume` the partition block, and
# 1d-sa trains under mpiexec with --order volume and --order hypergraph (when built).
# usage: orders_cli.sh MPIEXEC FULLGRAPH DATA
set -u
MPIEXEC=$1 FG=$2 DATA=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 pass=0
. "$(dirname "$0")/../expect.sh" # check_rc, losses, same_losses
"$FG" info "$DATA" --ranks 4 --order all > "$T/all" 2>&1
check_rc "info --order all runs" $?
grep -q "^  order  *total  *max send  *max recv" "$T/all"; check_rc "the table's header" $?
have_metis=0 have_zoltan=0
grep -q "^  metis  *[0-9]" "$T/all" && have_metis=1
grep -q "^  hypergraph  *[0-9]" "$T/all" && have_zoltan=1
for o in natural random; do
  grep -q "^  $o  *[0-9]" "$T/all"; check_rc "a line for $o" $?
done
[ $have_metis = 1 ] || grep -q "^  volume  *(not in this build: no METIS)" "$T/all"
check_rc "volume: a line or the note" $?
[ $have_zoltan = 1 ] || grep -q "^  hypergraph  *(not in this build: no Zoltan)" "$T/all"
check_rc "hypergraph: a line or the note" $?
orders=""
[ $have_metis = 1 ] && orders="volume"
[ $have_zoltan = 1 ] && orders="$orders hypergraph"
for o in $orders; do
  "$FG" info "$DATA" --ranks 4 --order $o > "$T/one" 2>&1
  grep -q "partition (order $o, 4 blocks)" "$T/one" && grep -q "max send [0-9]* (" "$T/one"
  check_rc "info --order $o prints the partition block" $?
  timeout 120 "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DATA" --scheme 1d-sa --order $o \
    --epochs 2 --quiet > "$T/out" 2>&1
  st=$?
  [ $st = 0 ] || cat "$T/out"
  check_rc "train --scheme 1d-sa --order $o on 2 ranks" $st
done
if [ $have_zoltan = 0 ]; then
  "$FG" info "$DATA" --ranks 2 --order hypergraph > "$T/no" 2>&1
  [ $? != 0 ] && grep -q "libtrilinos-zoltan-dev" "$T/no"
  check_rc "--order hypergraph refused naming the package" $?
fi
"$FG" info "$DATA" --ranks 2 --scheme 1d --order all > "$T/bad" 2>&1
[ $? != 0 ] && grep -q "drop --scheme" "$T/bad"
check_rc "--order all with --scheme is refused" $?
echo "orders_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
