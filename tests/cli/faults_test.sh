#!/usr/bin/env bash
# Hostile use and faults: options checked before loading (usage errors exit 2), output paths
# checked up front, ranks that disagree on their options, write errors, a stop on SIGTERM or
# SIGUSR1 that checkpoints and resumes to the same losses, metrics without duplicate epochs
# after a resume.
# usage: faults_test.sh MPIEXEC FULLGRAPH DEMO_DATA
set -u
MPIEXEC=$1 FG=$2 DEMO=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
. "$(dirname "$0")/../expect.sh"

# -- every option is checked before the dataset is read: a malformed DATA is never reached, and
#    a usage error exits 2
printf '0 1\n1 two\n' > "$T/bad.txt"
expect 2 "--epochs must be >= 1, got -1" "$FG" train "$T/bad.txt" --epochs -1
expect 2 "--epochs must be >= 1, got 0" "$FG" train "$T/bad.txt" --epochs 0
expect 2 "--hidden must be >= 1" "$FG" train "$T/bad.txt" --hidden 0
expect 2 "--lr must be > 0, got nan" "$FG" train "$T/bad.txt" --lr nan
expect 2 "unknown scheme 'bogus' \(available: serial, 1d, 1d-sa, 1.5d, halo, 3d, auto\)" \
  "$FG" train "$T/bad.txt" --scheme bogus
expect 2 "--grid '0x1x4'" "$FG" train "$T/bad.txt" --scheme 3d --grid 0x1x4
expect 2 "unknown order 'sideways'" "$FG" train "$T/bad.txt" --order sideways
expect 2 "--threads must be in \[1, [0-9]+\] on this machine, got 0" "$FG" train "$T/bad.txt" \
  --threads 0
expect 2 "--threads must be in \[1, [0-9]+\] on this machine, got 100000" "$FG" train \
  "$T/bad.txt" --threads 100000
expect 2 "--threads must be in" "$FG" bench stream --threads 100000
expect 2 "--mem-limit expects a positive size" "$FG" train "$T/bad.txt" --mem-limit 0
expect 2 "--checkpoint-every 5 needs --checkpoint FILE" "$FG" train "$T/bad.txt" \
  --checkpoint-every 5
# the malformed file itself is still reported once the options are fine
expect 1 "bad.txt.*line 2" "$FG" train "$T/bad.txt" --epochs 1

# -- output paths, before loading: a missing directory, a directory, an empty path, two outputs
#    on one file, an output over a dataset's file
expect 1 "--metrics .*nodir/m.jsonl: directory .*nodir: No such file or directory" \
  "$FG" train "$T/bad.txt" --metrics "$T/nodir/m.jsonl"
expect 1 "--save-predictions .*nodir/p.npy: directory" "$FG" train "$T/bad.txt" \
  --save-predictions "$T/nodir/p.npy"
expect 2 "--checkpoint .*: is a directory; name a file in it" "$FG" train "$T/bad.txt" \
  --checkpoint "$T"
expect 2 "--checkpoint: the path is empty" "$FG" train "$T/bad.txt" --checkpoint ""
expect 2 "--resume .*: a directory without a manifest, not a checkpoint" "$FG" train "$T/bad.txt" \
  --resume "$T"
expect 1 "--resume .*nothere.ckpt: No such file" "$FG" train "$T/bad.txt" --resume "$T/nothere.ckpt"
expect 2 "--save-predictions and --save-embeddings name the same file" "$FG" train "$T/bad.txt" \
  --save-predictions "$T/o.npy" --save-embeddings "$T/o.npy"
expect 2 "(--metrics and --save-ids|--save-ids and --metrics) name the same file" "$FG" train "$T/bad.txt" \
  --metrics "$T/o.npy" --save-ids "$T/./o.npy"
expect 2 "DATA and --save-predictions name the same file" "$FG" train "$T/bad.txt" \
  --save-predictions "$T/bad.txt"
cp -r "$DEMO" "$T/demo"
expect 2 "--save-predictions .*raw/edge.csv.gz would overwrite a file of DATA" "$FG" train \
  "$T/demo" --save-predictions "$T/demo/raw/edge.csv.gz"
expect 0 "" cmp "$DEMO/raw/edge.csv.gz" "$T/demo/raw/edge.csv.gz"
ls -A "$T" > "$T/listing"
expect 1 "^$" grep -E "\.tmp|^$" "$T/listing" # nothing was left behind by the refusals

# -- write errors are errors: metrics to a full device
if [ -w /dev/full ]; then
  expect 1 "--metrics /dev/full: write failed: No space left on device" "$FG" train "$DEMO" \
    --epochs 2 --metrics /dev/full
fi

# -- the ranks agree on their options (an MPMD launch can give them different ones)
expect 2 "the ranks disagree on --hidden: rank 0 has '16', rank 1 has '32'" "$MPIEXEC" \
  --oversubscribe -n 1 "$FG" train "$DEMO" --epochs 1 --hidden 16 : -n 1 "$FG" train "$DEMO" \
  --epochs 1 --hidden 32
expect 2 "the ranks disagree on --epochs: rank 0 has '2', rank 2 has '5'" "$MPIEXEC" \
  --oversubscribe -n 2 "$FG" train "$DEMO" --epochs 2 : -n 1 "$FG" train "$DEMO" --epochs 5
expect 2 "the ranks disagree on argument 1" "$MPIEXEC" --oversubscribe -n 1 "$FG" info "$DEMO" \
  : -n 1 "$FG" info "$T/demo/"
expect 2 "rank 1's does not parse" "$MPIEXEC" --oversubscribe -n 1 "$FG" train "$DEMO" \
  --epochs 1 : -n 1 "$FG" train "$DEMO" --epochs one

# -- resuming: --epochs below the checkpoint's is refused; equal reports the checkpoint's figures
"$FG" train "$DEMO" --epochs 4 --checkpoint "$T/c4" --quiet > "$T/c4.out" 2>&1
expect 2 "the checkpoint is at epoch 4, past --epochs 3" "$FG" train "$T/bad.txt" --epochs 3 \
  --resume "$T/c4"
# a damaged checkpoint is refused before the dataset is read (bad.txt is never reached)
head -c 300 "$T/c4" > "$T/c4.cut"
expect 1 "c4.cut" "$FG" train "$T/bad.txt" --epochs 5 --resume "$T/c4.cut"
expect 0 "$(sed 's/[().]/\\&/g' "$T/c4.out")" "$FG" train "$DEMO" --epochs 4 --resume "$T/c4" --quiet

# -- metrics after a resume hold each epoch once: a run resumed from epoch 4 after a later run
#    had gone on to 6 (as a run killed after its last checkpoint leaves the file)
"$FG" train "$DEMO" --epochs 4 --checkpoint "$T/c4m" --metrics "$T/m.jsonl" --quiet > /dev/null
"$FG" train "$DEMO" --epochs 6 --resume "$T/c4m" --checkpoint "$T/c6" --metrics "$T/m.jsonl" \
  --quiet > /dev/null
"$FG" train "$DEMO" --epochs 8 --resume "$T/c4m" --metrics "$T/m.jsonl" --quiet > /dev/null
expect 0 "^8 8 1 1$" sh -c "echo \$(grep -c '\"epoch\"' '$T/m.jsonl') \
  \$(grep -o '\"epoch\": [0-9]*' '$T/m.jsonl' | sort -u | wc -l) \
  \$(grep -c '\"epoch\": 5,' '$T/m.jsonl') \$(grep -c '\"final\"' '$T/m.jsonl')"

# -- stop on a signal: wait for a few epochs, signal, expect exit 75 and a checkpoint; the
#    resumed run's losses are the uninterrupted run's, bit for bit
losses() { grep -o '"loss": [^,]*' "$1"; }
stop_and_resume() { # label signal ranks checkpoint launcher... (checkpoint "c/": sharded)
  local label=$1 sig=$2 n=$3 ck=$4; shift 4
  local dir="$T/$label" rc e pid
  mkdir -p "$dir"
  "$@" train "$DEMO" --epochs 100000 --checkpoint "$dir/$ck" --metrics "$dir/m.jsonl" \
    > "$dir/out" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    [ -f "$dir/m.jsonl" ] && [ "$(wc -l < "$dir/m.jsonl")" -ge 3 ] && break
    sleep 0.1
  done
  kill -"$sig" "$pid"
  wait "$pid"; rc=$?
  if [ "$rc" != 75 ]; then
    echo "FAIL: $label: exit $rc after SIG$sig, expected 75"; tail -5 "$dir/out"
    fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
  e=$(grep -c '"epoch"' "$dir/m.jsonl")
  expect 0 "stopped on request after epoch $e of 100000; resume with --resume" cat "$dir/out"
  expect 0 "" "$@" train "$DEMO" --epochs $((e + 3)) --resume "$dir/$ck" --metrics "$dir/m.jsonl"
  expect 0 "" "$@" train "$DEMO" --epochs $((e + 3)) --metrics "$dir/full.jsonl"
  expect 0 "" cmp <(losses "$dir/m.jsonl") <(losses "$dir/full.jsonl")
}
stop_and_resume one TERM 1 c "$FG"
stop_and_resume mpi USR1 2 c "$MPIEXEC" --oversubscribe -n 2 "$FG"
# the same into a sharded checkpoint: a manifest and one weight shard a rank
stop_and_resume sharded USR1 2 c/ "$MPIEXEC" --oversubscribe -n 2 "$FG"
expect 0 "^manifest shard-0-of-2\.g[0-9]+\.ckpt shard-1-of-2\.g[0-9]+\.ckpt\$" \
  bash -c "ls '$T/sharded/c' | tr '\n' ' ' | sed 's/ \$//'"

echo "faults_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
