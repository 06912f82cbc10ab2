#!/usr/bin/env bash
# `fullgraph prepare` and training on a prepared directory: the refusals of prepare's options;
# a directory written whole (manifest last, no temporary left); `info` and `train` reading it
# whole give the direct path's losses for every scheme; under mpirun, 1d, 1d-sa and halo (each
# --aggregation rule, int8 rows, --label-prop) read it per
# rank (P = 2, 4 on 4 blocks, P = 3 on 6; P = 1 reads it whole) with the direct path's losses (within 1e-6;
# bf16 features normalized, bit for bit), each
# rank reading exactly its share of the files, holding its rows' degrees and one other block's
# at once, and rank 0 no more memory than the others; a P
# that does not fit and another --order are refused; the malformed corpus (tests/corpus/
# prepared/) is refused naming the file and the fault.
# usage: prepare_test.sh FULLGRAPH CORPUS DATA MPIEXEC
set -u
FG=$1 CORPUS=$2 DATA=$3 MPIEXEC=$4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 pass=0
. "$(dirname "$0")/../expect.sh" # check_rc, losses, same_losses
# the losses of a metrics file, one a line
MPI="timeout 120 $MPIEXEC --oversubscribe"
EP="--epochs 3 --seed 3"

# ---- prepare's options ----
"$FG" prepare "$DATA" --blocks 4 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "\-\-output DIR is required" "$T/o"; check_rc "no --output: exit 2" $?
"$FG" prepare "$DATA" --output "$T/x" > "$T/o" 2>&1
[ $? = 2 ] && grep -q "\-\-blocks B is required" "$T/o"; check_rc "no --blocks: exit 2" $?
"$FG" prepare "$DATA" --blocks 5000 --output "$T/x" > "$T/o" 2>&1
[ $? = 2 ] && grep -q "must be 1 to 1024" "$T/o"; check_rc "--blocks 5000: exit 2" $?
"$FG" prepare "$DATA" --blocks 2 --order sideways --output "$T/x" > "$T/o" 2>&1
[ $? = 2 ] && grep -q "\-\-order sideways" "$T/o"; check_rc "an unknown order: exit 2" $?
: > "$T/file"
"$FG" prepare "$DATA" --blocks 2 --output "$T/file" > "$T/o" 2>&1
[ $? = 1 ] && grep -q "exists and is not a directory" "$T/o"; check_rc "--output a file: exit 1" $?

# ---- written whole ----
"$FG" prepare "$DATA" --blocks 4 --order random --seed 3 --output "$T/p4" > "$T/o" 2>&1
check_rc "prepare --blocks 4 --order random" $?
[ -f "$T/p4/manifest.fgprep" ] && [ -f "$T/p4/nodes-0003.bin" ] && [ -f "$T/p4/deg-0003.bin" ] &&
  [ -f "$T/p4/adj-0003-0003.bin" ]
check_rc "the manifest, node, degree and block files" $?
[ -z "$(ls -A "$T/p4" | grep '^\.')" ]; check_rc "no temporary file left" $?
"$FG" prepare "$DATA" --blocks 6 --order random --seed 3 --output "$T/p6" > /dev/null 2>&1
check_rc "prepare --blocks 6" $?
"$FG" info "$T/p4" > "$T/info" 2>&1 && grep -q "prepared     4 x 4 blocks in order random (seed 3)" "$T/info"
check_rc "info names the blocks and the order" $?
"$FG" info "$DATA" | grep -v "^dataset" > "$T/i1"
grep -v "^dataset\|^  prepared" "$T/info" > "$T/i2"
cmp -s "$T/i1" "$T/i2"; check_rc "info on the directory = info on the source" $?

# ---- read whole: every scheme gives the direct path's losses ----
# the reference: one process on the source (the schemes equal it within 1e-6, as the scheme
# equivalence test checks), and the direct path with the same order on 2 ranks
"$FG" train "$DATA" $EP --metrics "$T/ref.jsonl" > /dev/null 2>&1
$MPI -n 2 "$FG" train "$DATA" --scheme 1d-sa --order random $EP --metrics "$T/d.jsonl" > /dev/null 2>&1
same_losses "$T/d.jsonl" "$T/ref.jsonl"; check_rc "the direct path on 2 ranks = one process" $?
"$FG" train "$T/p4" $EP --metrics "$T/w.jsonl" > /dev/null 2>&1 && same_losses "$T/w.jsonl" "$T/ref.jsonl"
check_rc "serial: read whole = direct" $?
# (halo reads it per rank below, 3d in prepare3d_test.sh); --save-ids needs the whole dataset
$MPI -n 2 "$FG" train "$T/p4" --scheme 1d-sa $EP --save-ids "$T/ids.npy" --metrics "$T/w.jsonl" \
  > "$T/o" 2>&1 && same_losses "$T/w.jsonl" "$T/ref.jsonl" && ! grep -q "rank 1 read" "$T/o"
check_rc "--save-ids on 2 ranks: read whole on rank 0 = direct" $?
"$FG" train "$T/p4" --directed --epochs 1 > "$T/o" 2>&1
[ $? != 0 ] && grep -q "give --directed to prepare" "$T/o"; check_rc "train DIR --directed refused" $?

# ---- read per rank: 1d and 1d-sa, P = 2, 4 (4 blocks) and 3 (6 blocks) ----
total4=$(cat "$T"/p4/*.bin "$T/p4/manifest.fgprep" | wc -c)
for s in 1d 1d-sa; do
  for P in 2 3 4; do
    dir="$T/p4"
    [ $P = 3 ] && dir="$T/p6"
    $MPI -n $P "$FG" train "$dir" --scheme $s $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1
    st=$?
    [ $st = 0 ] || cat "$T/o"
    [ $st = 0 ] && same_losses "$T/r.jsonl" "$T/ref.jsonl" &&
      { [ $P != 2 ] || same_losses "$T/r.jsonl" "$T/d.jsonl"; }
    check_rc "$s on $P ranks: the direct path's losses" $?
    grep -q "rank $((P - 1)) read" "$T/o"; check_rc "$s on $P ranks: every rank read its own" $?
    [ $s = 1d-sa ] && [ $P = 2 ] && cp "$T/o" "$T/o2"
  done
done
$MPI -n 1 "$FG" train "$T/p4" --scheme 1d $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1 &&
  same_losses "$T/r.jsonl" "$T/ref.jsonl" && ! grep -q "rank 0 read" "$T/o"
check_rc "1d on 1 rank: read whole, the direct path's losses" $?
# the share (check_share WHAT LOG, a run on 2 ranks of the 4 blocks of p4): rank r read its node
# files, its blocks and the degree files its rows reference (all of them, under a random order)
# -- no other byte; and rank 0's peak within 1.1x rank 1's
deg=$(cat "$T"/p4/deg-*.bin | wc -c)
check_share() {
  local r share got p0 p1
  for r in 0 1; do
    share=$(cat "$T/p4/nodes-000$((2 * r)).bin" "$T/p4/nodes-000$((2 * r + 1)).bin" \
                "$T/p4"/adj-000$((2 * r))-*.bin "$T/p4"/adj-000$((2 * r + 1))-*.bin | wc -c)
    share=$((share + deg))
    got=$(sed -n "s/^  rank $r read \([0-9]*\) bytes.*/\1/p" "$2")
    [ "$got" = "$share" ] && [ "$got" -lt "$total4" ]
    check_rc "$1: rank $r read its share ($got bytes of $total4; expected $share)" $?
  done
  p0=$(sed -n 's/^  rank 0 read .*peak resident \([0-9]*\) bytes.*/\1/p' "$2")
  p1=$(sed -n 's/^  rank 1 read .*peak resident \([0-9]*\) bytes.*/\1/p' "$2")
  [ -n "$p0" ] && [ -n "$p1" ] && [ "$p0" -le $((p1 * 11 / 10)) ]
  check_rc "$1: rank 0's peak ($p0) within 1.1 x rank 1's ($p1)" $?
}
cp "$T/o2" "$T/o" # the run of 1d-sa on 2 ranks above
check_share 1d-sa "$T/o"
# the degree tables a rank held at once: its own row blocks' and one other block's (the largest),
# not every node's ($deg bytes)
for r in 0 1; do
  own=$(cat "$T/p4/deg-000$((2 * r)).bin" "$T/p4/deg-000$((2 * r + 1)).bin" | wc -c)
  other=0
  for j in 0 1 2 3; do
    [ $((j / 2)) = $r ] && continue
    sz=$(cat "$T/p4/deg-000$j.bin" | wc -c)
    [ "$sz" -gt "$other" ] && other=$sz
  done
  got=$(sed -n "s/^  rank $r read .*; degree tables \([0-9]*\) bytes at most$/\1/p" "$T/o")
  [ "$got" = $((own + other)) ] && [ "$got" -lt "$deg" ]
  check_rc "rank $r held its rows' degrees and one block's ($got bytes; expected $((own + other)) of $deg)" $?
done
p0=$(sed -n 's/^  rank 0 read .*peak resident \([0-9]*\) bytes.*/\1/p' "$T/o")
# the direct path's rank 0 holds the whole dataset beside its block: more than the per-rank peak
dpeak=$(grep -o '"peak_rss_bytes": [0-9][0-9]*' "$T/d.jsonl" | tail -1 | sed 's/.*: //')
[ -n "$dpeak" ] && [ "$dpeak" -gt "$p0" ]
check_rc "the direct path's peak ($dpeak) is above the per-rank read's rank 0 ($p0)" $?

# ---- read per rank: halo (its vertex partition is 1D's block rows) ----
# each rule at P = 2, 4 (4 blocks) and 3 (6 blocks) = the direct path with the same order;
# quantized rows (int8) only where the directory's blocks group into the direct path's very rows
# (4 blocks of 677 at P = 2, 4; 3 blocks at P = 3): the stochastic rounding is keyed by a row's
# place in its sender's buffer, so 6 blocks taken 2 at a time (904, 902, 902 rows against the
# direct path's 903, 903, 902) are another layout with other, equally valid, roundings
"$FG" prepare "$DATA" --blocks 3 --order random --seed 3 --output "$T/p3" > /dev/null 2>&1
check_rc "prepare --blocks 3" $?
for P in 2 3 4; do
  for a in pre post hybrid int8; do
    dir="$T/p4"
    [ $P = 3 ] && dir="$T/p6"
    opt="--aggregation $a"
    [ $a = int8 ] && opt="--aggregation hybrid --quantize int8" && [ $P = 3 ] && dir="$T/p3"
    $MPI -n $P "$FG" train "$dir" --scheme halo $opt $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1
    st=$?
    [ $st = 0 ] || cat "$T/o"
    $MPI -n $P "$FG" train "$DATA" --scheme halo --order random $opt $EP \
      --metrics "$T/d.jsonl" > /dev/null 2>&1 &&
      [ $st = 0 ] && same_losses "$T/r.jsonl" "$T/d.jsonl" && grep -q "rank $((P - 1)) read" "$T/o"
    check_rc "halo $opt on $P ranks: read per rank = direct" $?
    [ $P = 2 ] && [ $a = hybrid ] && cp "$T/o" "$T/oh" && cp "$T/r.jsonl" "$T/rh.jsonl" &&
      cp "$T/d.jsonl" "$T/dh.jsonl"
  done
done
# the scheme's default order (SuperGCN's metis) gives way to the prepared one, which the run
# record names; a metis directory at P = B is the direct path's default layout, quantized too
grep -q '"order": "random"' "$T/r.jsonl"; check_rc "halo per rank: the record names order random" $?
"$FG" prepare "$DATA" --blocks 2 --order metis --seed 3 --output "$T/m2" > /dev/null 2>&1 &&
  $MPI -n 2 "$FG" train "$T/m2" --scheme halo --quantize int8 $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1 &&
  $MPI -n 2 "$FG" train "$DATA" --scheme halo --quantize int8 $EP --metrics "$T/d.jsonl" > /dev/null 2>&1 &&
  grep -q "rank 1 read" "$T/o" && grep -q '"order": "metis"' "$T/d.jsonl" &&
  same_losses "$T/r.jsonl" "$T/d.jsonl"
check_rc "halo on a metis directory (P = B): per rank = direct with halo's default order" $?
# label propagation picks its label nodes by source index: the node files' ids give the same
$MPI -n 4 "$FG" train "$T/p4" --scheme halo --label-prop 0.5 $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1 &&
  $MPI -n 4 "$FG" train "$DATA" --scheme halo --order random --label-prop 0.5 $EP \
    --metrics "$T/d.jsonl" > /dev/null 2>&1 &&
  grep -q "rank 3 read" "$T/o" && same_losses "$T/r.jsonl" "$T/d.jsonl"
check_rc "halo --label-prop on 4 ranks: per rank = direct" $?
# bf16 features: the per-rank read normalizes and rounds each row as it reads it, as the direct
# path's rank 0 does as it packs it -- the same bits
B16="--precision bf16 --normalize-features --dropout 0.3"
$MPI -n 2 "$FG" train "$T/p4" --scheme 1d-sa $B16 $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1 &&
  $MPI -n 2 "$FG" train "$DATA" --scheme 1d-sa --order random $B16 $EP \
    --metrics "$T/d.jsonl" > /dev/null 2>&1 &&
  grep -q "rank 1 read" "$T/o" && same_losses "$T/r.jsonl" "$T/d.jsonl" 0
check_rc "bf16 normalized features on 2 ranks: per rank = direct, bit for bit" $?
$MPI -n 2 "$FG" train "$T/p4" --scheme halo --order metis --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "prepared in order random; --order metis" "$T/o"
check_rc "halo: a given order other than the directory's refused (exit 2)" $?
# halo reads what 1d-sa reads: its node files, its blocks, the degree files its rows reference
check_share halo "$T/oh"
# the run record's setup: the load's seconds and each rank's peak then (bench/bench_load.sh reads
# them): per rank, rank 0 like rank 1; the direct path's rank 0 above its rank 1 (the dataset)
setup_peaks() { head -1 "$1" | sed -n 's/.*"setup": {"load_seconds": [0-9.e+-]*, "seconds": [0-9.e+-]*, "peak_rss_bytes": \[\([0-9]*\), \([0-9]*\)\]}.*/\1 \2/p'; }
read -r s0 s1 <<EOS
$(setup_peaks "$T/rh.jsonl")
EOS
[ -n "$s1" ] && [ "$s0" -le $((s1 * 11 / 10)) ]
check_rc "halo per rank: the record's setup peaks ($s0, $s1) within 1.1 x" $?
read -r s0 s1 <<EOS
$(setup_peaks "$T/dh.jsonl")
EOS
[ -n "$s1" ] && [ "$s0" -gt $((s1 * 11 / 10)) ]
check_rc "halo direct: the record's setup peaks ($s0, $s1): rank 0 holds the dataset" $?

# multi-label targets, per rank
"$FG" prepare "$CORPUS/ogb/ml_ok" --blocks 2 --order random --seed 3 --output "$T/ml" > /dev/null 2>&1 &&
  $MPI -n 2 "$FG" train "$T/ml" --scheme 1d-sa $EP --metrics "$T/r.jsonl" > "$T/o" 2>&1 &&
  $MPI -n 2 "$FG" train "$CORPUS/ogb/ml_ok" --scheme 1d-sa --order random $EP \
    --metrics "$T/d.jsonl" > /dev/null 2>&1 &&
  grep -q "rank 1 read" "$T/o" && same_losses "$T/r.jsonl" "$T/d.jsonl"
check_rc "multi-label targets on 2 ranks: per-rank read = direct" $?

# ---- refused: a P that does not fit, another order ----
$MPI -n 3 "$FG" train "$T/p4" --scheme 1d --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "has 4 row blocks.*ranks that fit: 1, 2, 4" "$T/o"
check_rc "P = 3 on 4 blocks refused naming 1, 2, 4 (exit 2)" $?
$MPI -n 2 "$FG" train "$T/p4" --scheme 1d --order natural --epochs 1 > "$T/o" 2>&1
[ $? = 2 ] && grep -q "prepared in order random; --order natural" "$T/o"
check_rc "another --order refused (exit 2)" $?
# a checkpoint of a per-rank run carries the source's fingerprint: the direct path resumes it
$MPI -n 2 "$FG" train "$T/p4" --scheme 1d-sa --epochs 2 --seed 3 --checkpoint "$T/c.ckpt" > "$T/o" 2>&1 &&
  $MPI -n 2 "$FG" train "$DATA" --scheme 1d-sa --order random --epochs 3 --seed 3 \
    --resume "$T/c.ckpt" > "$T/o" 2>&1
st=$?
[ $st = 0 ] || cat "$T/o"
check_rc "a per-rank run's checkpoint resumes on the source" $st

# ---- the malformed corpus ----
C="$CORPUS/prepared"
"$FG" info "$C/ok" > /dev/null 2>&1; check_rc "corpus ok reads" $?
while read -r case msg; do
  "$FG" info "$C/$case" > "$T/o" 2>&1
  st=$?
  [ $st = 1 ] && grep -q -- "$msg" "$T/o"
  r=$?
  [ $r = 0 ] || cat "$T/o"
  check_rc "corpus $case: exit 1, '$msg'" $r
done <<'CASES'
bad_magic manifest.fgprep: not a prepared dataset's manifest
bad_version manifest.fgprep: format version 2, but this build reads version 1
bad_crc manifest.fgprep: CRC-32 mismatch
bad_sizes manifest.fgprep: the blocks hold 21 entries, the header says 20
bad_name file 0 of the table is "../../etc/pwd", expected nodes-0000.bin
bad_offsets nodes-0000.bin is listed at 75 bytes, but its rows make 125
truncated_block adj-0000-0000.bin: 20 bytes, but the manifest lists 60 (truncated)
crc_block adj-0001-0001.bin: CRC-32 mismatch
missing_block adj-0000-0001.bin: cannot open
crc_nodes nodes-0001.bin: CRC-32 mismatch
CASES
# per rank too: a damaged block is named by the rank that reads it
cp -r "$T/p4" "$T/bad"
printf 'x' | dd of="$T/bad/adj-0003-0002.bin" bs=1 seek=40 conv=notrunc 2>/dev/null
$MPI -n 2 "$FG" train "$T/bad" --scheme 1d --epochs 1 > "$T/o" 2>&1
[ $? != 0 ] && grep -q "adj-0003-0002.bin: CRC-32 mismatch" "$T/o"
check_rc "per rank: a damaged block refused naming it" $?

echo "prepare_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
