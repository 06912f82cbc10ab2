# expect.sh -- the assertion the shell tests share; source it, then count with $pass / $fail.
#
# expect CODE PATTERN command...: run the command (no input, 120 s at most) and check that it
# exits with CODE and that its stdout+stderr match the extended regex PATTERN; prints the tail
# of the output on a failure.
pass=${pass:-0}
fail=${fail:-0}

expect() {
  local code=$1 pattern=$2; shift 2
  local out rc
  out=$(timeout 120 "$@" 2>&1 < /dev/null); rc=$?
  if [ "$rc" != "$code" ]; then
    echo "FAIL: '$*' exited $rc, expected $code"; echo "$out" | tail -5 | sed 's/^/    /'
    fail=$((fail + 1)); return
  fi
  if ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: '$*' output lacks /$pattern/"; echo "$out" | tail -5 | sed 's/^/    /'
    fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}

# check_rc NAME STATUS: count a check whose condition ran just before (pass its $?), printing
# "ok: NAME" or "FAIL: NAME".
check_rc() {
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok: $1"; else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

# losses METRICS.jsonl: each epoch's "loss", one a line.
losses() { grep -o '"loss": [-0-9.e+]*' "$1" | sed 's/"loss": //'; }

# same_losses A B [TOL]: the same number of epochs (at least one) and each loss of A within TOL
# (default 1e-6) of B's, relative to max(1, |b|).
same_losses() {
  local tol=${3:-1e-6}
  paste <(losses "$1") <(losses "$2") |
    awk -v tol="$tol" 'NF != 2 {bad = 1} {d = $1 - $2; if (d < 0) d = -d; m = $2 < 0 ? -$2 : $2;
                       if (m < 1) m = 1; if (d / m > tol) bad = 1; n++} END {exit bad || n == 0}'
}
