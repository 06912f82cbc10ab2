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
