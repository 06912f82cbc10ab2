#!/bin/sh
# bad_input.sh MPIEXEC FULLGRAPH -- a malformed input or option seen by rank 0 must end a
# 3-rank job nonzero, with the message, well within the timeout (a hang fails the test).
mpiexec=$1
fg=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/fg_bad_XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
fails=0

# expect_fail WHAT NEEDLE ARGS...: nonzero exit within 60 s, NEEDLE on stderr
expect_fail() {
  what=$1
  needle=$2
  shift 2
  timeout 60 "$mpiexec" -n 3 --oversubscribe "$fg" "$@" >"$dir/out" 2>"$dir/err"
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "FAIL: $what: exit status 0"
    fails=$((fails + 1))
  elif [ $rc -eq 124 ]; then
    echo "FAIL: $what: still running after 60 s (a rank hangs)"
    fails=$((fails + 1))
  elif ! grep -q -- "$needle" "$dir/err"; then
    echo "FAIL: $what: exit $rc but stderr lacks '$needle':"
    cat "$dir/err"
    fails=$((fails + 1))
  else
    echo "ok: $what (exit $rc): $(grep -- "$needle" "$dir/err" | head -1)"
  fi
}

printf '0 1\n1 2\n2 x3\n' >"$dir/bad.txt"
expect_fail "malformed edge list" "bad.txt: line 3" train "$dir/bad.txt" --epochs 2 --scheme 1d-sa
printf '0 1\n1 2\n2 3\n3 0\n' >"$dir/good.txt"
expect_fail "unknown order" "unknown order 'bogus'" train "$dir/good.txt" --epochs 2 --order bogus
expect_fail "unknown scheme" "unknown scheme 'x'" train "$dir/good.txt" --epochs 2 --scheme x
expect_fail "serial on 3 ranks" "runs on 1 process, but 3 were started" train "$dir/good.txt" --scheme serial
expect_fail "info with a malformed file" "bad.txt: line 3" info "$dir/bad.txt" --ranks 3
# the memory budget per process, for each kind of scheme (the estimate needs the dataset, which
# only rank 0 has: every rank must still stop with the message); 20M lets Cora load (--mem-limit
# bounds loading too) and refuses the run; --hidden 512 makes every configuration's share exceed
# it for auto
demo=$(dirname "$0")/../../data/cora
for s in 1d 1d-sa "3d --grid 1x3x1"; do
  # shellcheck disable=SC2086
  expect_fail "memory limit, $s" "on rank 0 (${s%% *}.*but --mem-limit is 20.0 MB per process" \
    train "$demo" --epochs 2 --scheme $s --mem-limit 20M
done
expect_fail "memory limit, auto" "no configuration of 3 ranks fits in memory" \
  train "$demo" --epochs 2 --scheme auto --mem-limit 20M --hidden 512
if timeout 60 "$mpiexec" -n 3 --oversubscribe "$fg" train "$demo" --epochs 1 --quiet \
  --scheme 1d-sa --mem-limit 4G >"$dir/out" 2>"$dir/err"; then
  echo "ok: a run within --mem-limit 4G trains"
else
  echo "FAIL: a run within --mem-limit 4G: $(cat "$dir/err")"
  fails=$((fails + 1))
fi
[ $fails -eq 0 ] || exit 1
echo "bad_input: all expectations met"
