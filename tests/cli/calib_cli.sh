#!/usr/bin/env bash
# calib_cli.sh FULLGRAPH DEMO_DATA MPIEXEC -- a calibration file's text reaches the terminal only
# through fg_printable: `plan --calibration` and `train --calibration` refuse files with escape
# sequences, bad values and duplicates with the line (and the key) named, and nothing they print
# holds a control byte other than the newline.
set -u
FG=$1 DEMO=$2 MPIEXEC=${3:-mpiexec}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

. "$(dirname "$0")/../expect.sh"

# clean FILE: no byte below 0x20 but the newline, no DEL, no C1 control as a raw byte (0x80-0x9f
# only occur inside UTF-8 sequences, here the ellipsis's 0x80)
clean() {
  local left
  left=$(LC_ALL=C tr -d '\n\040-\176\240-\377\200' < "$1" | wc -c)
  [ "$left" -eq 0 ]
}

# refuses WHAT NEEDLE command...: exit 1, NEEDLE (a fixed string) on stderr, stdout and stderr
# clean
refuses() {
  local what=$1 needle=$2; shift 2
  timeout 120 "$@" > "$T/out" 2> "$T/err" < /dev/null
  local rc=$?
  if [ $rc -ne 1 ]; then
    echo "FAIL: $what: exit $rc, expected 1"; tail -3 "$T/err" | cat -v | sed 's/^/    /'
    fail=$((fail + 1))
  elif ! grep -qF -- "$needle" "$T/err"; then
    echo "FAIL: $what: stderr lacks '$needle':"; cat -v "$T/err" | tail -3 | sed 's/^/    /'
    fail=$((fail + 1))
  elif ! clean "$T/err" || ! clean "$T/out"; then
    echo "FAIL: $what: control bytes reach the terminal:"; cat -v "$T/err" | tail -3 | sed 's/^/    /'
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

# a file 'bench --calibrate' could have written, then damaged on its third line
head3() { printf '# fullgraph calibration\nversion 1\n'; }
{ head3; printf '\033[2J\033[H\033]0;owned\007gemm_flops 2e10\n'; } > "$T/key.txt"
{ head3; printf 'stream_bytes 1e10\033[31m\n'; } > "$T/value.txt"
{ head3; printf 'spmm_nnz 1e-9 \033[1A\033[K\233 \177\n'; } > "$T/line.txt"
{ head3; printf 'gemm_flops -5e9\n'; } > "$T/negative.txt"
{ head3; printf 'beta_inter nan\n'; } > "$T/nan.txt"
{ head3; printf 'cache_bytes 0\n'; } > "$T/zero.txt"
{ head3; printf 'alpha_intra 1e-6\nalpha_intra 2e-6\n'; } > "$T/twice.txt"

refuses "plan, escapes in a key" "key.txt: line 3: unknown key '\\x1b[2J\\x1b[H\\x1b]0;owned\\x07gemm_flops'" \
  "$FG" plan "$DEMO" --ranks 2 --calibration "$T/key.txt"
refuses "plan, escapes in a value" "value.txt: line 3: stream_bytes: '1e10\\x1b[31m' is not a number" \
  "$FG" plan "$DEMO" --ranks 2 --calibration "$T/value.txt"
refuses "plan, escapes in a line" "line.txt: line 3: expected 'key value', got 'spmm_nnz 1e-9 \\x1b[1A\\x1b[K\\x9b \\x7f'" \
  "$FG" plan "$DEMO" --ranks 2 --calibration "$T/line.txt"
refuses "plan, negative rate" "negative.txt: line 3: gemm_flops -5e+09 is out of range: it must be a rate per second in [1, 1e+18]" \
  "$FG" plan "$DEMO" --ranks 2 --calibration "$T/negative.txt"
refuses "plan, NaN" "nan.txt: line 3: beta_inter" \
  "$FG" plan "$DEMO" --ranks 2 --calibration "$T/nan.txt"
refuses "plan, zero cache" "zero.txt: line 3: cache_bytes 0 is out of range" \
  "$FG" plan "$DEMO" --ranks 2 --calibration "$T/zero.txt"
refuses "plan, a key twice" "twice.txt: line 4: alpha_intra given twice (also on line 3)" \
  "$FG" plan "$DEMO" --ranks 2 --calibration "$T/twice.txt"
# the trainer reads the file for --scheme auto, on rank 0; every rank stops with the message
refuses "train, escapes in a key" "key.txt: line 3: unknown key '\\x1b[2J" \
  "$FG" train "$DEMO" --scheme auto --calibration "$T/key.txt" --epochs 1 --no-progress
refuses "train on 2 ranks, escapes in a line" "line.txt: line 3: expected 'key value'" \
  "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DEMO" --scheme auto --calibration "$T/line.txt" \
  --epochs 1 --no-progress
# a good file still works, and its coefficients are used
{ head3; printf 'gemm_flops 3e10\nthreads 2\n'; } > "$T/good.txt"
expect 0 "coefficients: $T/good.txt" "$FG" plan "$DEMO" --ranks 2 --calibration "$T/good.txt"

echo "calib_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
