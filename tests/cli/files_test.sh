#!/usr/bin/env bash
# files_test.sh FULLGRAPH DEMO_DATA MPIEXEC -- the files a run writes and reads: a device is
# written through and stays a device (a full one fails the run with its error), a directory or
# an empty name is refused before training and leaves nothing behind, --resume takes regular
# files only, and a checkpoint resumes only on its own dataset and options (at any P).
set -u
FG=$1 DEMO=$2 MPIEXEC=${3:-mpiexec}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

. "$(dirname "$0")/../expect.sh"
src=$(cd "$(dirname "$0")/../.." && pwd) # the sources (a git checkout, or not)

cd "$T" || exit 1
train=("$FG" train "$DEMO" --quiet)
# check WHAT COMMAND...: a plain assertion, counted like expect's
check() {
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}

# a full device (made here when root can, so /dev is never at stake; else /dev/full itself)
full=/dev/full
mknod "$T/full" c 1 7 2>/dev/null && full=$T/full
expect 1 "full: write error: No space left on device" "${train[@]}" --epochs 1 --checkpoint "$full"
expect 1 "full: write error: No space left on device" "${train[@]}" --epochs 1 \
  --save-predictions "$full"
check "the full device is still a device" test -c "$full"
if mknod "$T/null" c 1 3 2>/dev/null; then
  expect 0 "test accuracy" "${train[@]}" --epochs 1 --checkpoint "$T/null" \
    --save-embeddings "$T/null"
  check "the null device is still a device" test -c "$T/null"
fi

# a directory, a name ending in '/', an empty name: refused before the first epoch, by name,
# and nothing is created (no stray temporary here or in the directory)
mkdir "$T/dir"
expect 2 "--checkpoint .*dir: is a directory; name a file in it, or end the name with '/' for a sharded checkpoint" "${train[@]}" --epochs 1 --checkpoint "$T/dir"
expect 1 "--checkpoint .*nodir/ck/: directory .*nodir: No such file or directory" "${train[@]}" \
  --epochs 1 --checkpoint "$T/nodir/ck/"
expect 2 "--checkpoint: the path is empty" "${train[@]}" --epochs 1 --checkpoint ""
expect 1 "new/: directory .*new: No such file or directory" "${train[@]}" --epochs 1 --save-predictions "$T/new/"
expect 1 "--save-embeddings .*nodir/e.npy: directory .*nodir: No such file or directory" "${train[@]}" \
  --epochs 1 --save-embeddings "$T/nodir/e.npy"
check "nothing left behind" \
  test -z "$(ls -A "$T/dir")$(ls -A "$T" | grep -v -x -e dir -e full -e null)"
out=$("$FG" train "$DEMO" --epochs 1 --checkpoint "$T/dir" 2>&1)
check "refused before the first epoch" test -n "${out##*epoch    1*}"

# --resume of what is not a regular file, nor a directory holding a manifest
expect 2 "--resume .*dir: a directory without a manifest, not a checkpoint" "${train[@]}" --epochs 2 --resume "$T/dir"
expect 2 "--resume .*dir/: a directory without a manifest, not a checkpoint" "${train[@]}" --epochs 2 --resume "$T/dir/"
mkfifo "$T/fifo"
expect 1 "fifo: not a regular file" "${train[@]}" --epochs 2 --resume "$T/fifo"
rm -f "$T/fifo"

# a checkpoint knows its run: another dataset of the same shape (Cora with its labels in
# reverse order), other loading options, other training options are refused by name; the
# same run resumes, also on 2 ranks with another scheme
expect 0 "test accuracy" "${train[@]}" --epochs 2 --checkpoint "$T/c.ckpt"
cp -r "$DEMO" "$T/cora2"
gzip -dc "$DEMO/raw/node-label.csv.gz" | tac | gzip -n > "$T/cora2/raw/node-label.csv.gz"
expect 1 "c.ckpt: the checkpoint was made on another dataset of the same sizes: the labels" \
  "$FG" train "$T/cora2" --epochs 3 --resume "$T/c.ckpt"
expect 1 "13264 adjacency entries, 1433 features and 7 classes; this run.s has 2708, 10556," \
  "${train[@]}" --epochs 3 --resume "$T/c.ckpt" --no-self-loops
expect 1 "c.ckpt: --dropout 0.5 in the checkpoint, 0.3 in this run" \
  "${train[@]}" --epochs 3 --resume "$T/c.ckpt" --dropout 0.3
expect 1 "--weight-decay-layers first in the checkpoint, all in this run" \
  "${train[@]}" --epochs 3 --resume "$T/c.ckpt" --weight-decay-layers all
expect 1 "made without --normalize-features, this run is with it" \
  "${train[@]}" --epochs 3 --resume "$T/c.ckpt" --normalize-features
expect 0 "epoch    3" "$FG" train "$DEMO" --epochs 3 --resume "$T/c.ckpt"
expect 0 "epoch    3" "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DEMO" --epochs 3 \
  --resume "$T/c.ckpt" --scheme 1d

# provenance: --version names the commit the build was made from (in a git checkout); the run
# record heads the metrics, its "command" is the argv given (quotes and backslashes escaped),
# and every .npy written to a file has NAME.npy.json holding the same record; a device none
if [ -e "$src/.git" ] && git -C "$src" rev-parse -q --verify HEAD > /dev/null 2>&1; then
  expect 0 "^commit [0-9a-f]{40}( \(dirty\))?$" "$FG" --version
  commit=$("$FG" --version | sed -n 's/^commit \([0-9a-f]*\).*/\1/p')
  check "the commit --version names is in the repository" git -C "$src" cat-file -e "$commit^{commit}"
else
  expect 0 "^commit unknown$" "$FG" --version
fi
expect 0 "^build: openmp (on|off), metis (on|off), zoltan (on|off)$" "$FG" --version
mkdir "$T/prov"
args=("$FG" train "$DEMO" --epochs 1 --quiet --lr 0.02 --metrics "$T/prov/m \"q\" 1.jsonl"
      --save-predictions "$T/prov/p.npy" --save-ids "$T/prov/i.npy" --save-split "$T/prov/s.npy")
[ -c "$T/null" ] && args+=(--save-embeddings "$T/null")
expect 0 "test accuracy" "${args[@]}"
want=""
for a in "${args[@]}"; do
  a=${a//\\/\\\\}; a=${a//\"/\\\"}
  want+="${want:+, }\"$a\""
done
first=$(head -n 1 "$T/prov/m \"q\" 1.jsonl")
check "the metrics begin with the run record" test "${first:0:25}" = '{"run": {"start_epoch": 0'
check "the run record's command is the argv" grep -qF "\"command\": [$want]" <<<"$first"
check "--lr 0.02 in the record's options" grep -qF '"lr": 0.02,' <<<"$first"
for f in p i s; do
  check "$f.npy's sidecar holds the run record" test "$(cat "$T/prov/$f.npy.json")" = "$first"
done
check "a device gets no sidecar" test ! -e "$T/null.json"

echo "files: $pass passed, $fail failed"
[ "$fail" = 0 ]
