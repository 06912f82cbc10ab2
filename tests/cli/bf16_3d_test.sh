#!/usr/bin/env bash
# 3d under --precision bf16 on 4 ranks (scheme_3d.c): which transfers carry bf16 rows and which
# stay fp32, measured from the metrics of the same run at both precisions.
#  - SAGE (3 layers, grids 1x2x2 and 1x1x4): the forward self-term moves (GEMM operands) travel as bf16, so every rank's forward
#    bytes drop by exactly half those moves' ring volume, computed here from the grid's blocks
#    (awk, independently of the scheme); backward (fp32 partial sums, exact moves) is unchanged.
#  - GIN with --residual (3 layers, 1x2x2): its moved rows are added in fp32 ((1 + eps) D, the residual), so they
#    move exactly, and the losses equal the serial bf16 run's (within 1e-5; Cora's sums are
#    exact and they are equal bit for bit, where rounding the moved rows was off by ~1e-4).
#  - GIN without it: the same, with the hidden activations stored as bf16 (H16) on both sides:
#    the Linear outputs a GIN layer adds to its aggregation are the rounded ones on 3d as on one
#    process (where 3d kept them in fp32, the losses were ~1e-3 apart).
# usage: bf16_3d_test.sh MPIEXEC FULLGRAPH DATA(cora)
set -u
MPIEXEC=$1 FG=$2 DATA=$3
export OMP_NUM_THREADS=1 # 4 ranks on the suite's slots (PROCESSORS 4)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 pass=0
N=2708 WIDTHS="1433 16 16 7" EPOCHS=2 # sage --layers 3

# train OUT ARGS...: 4-rank 3d run, metrics into $T/OUT.jsonl
train() {
  local out=$1
  shift
  timeout 120 "$MPIEXEC" -n 4 --oversubscribe "$FG" train "$DATA" --scheme 3d --epochs $EPOCHS \
    --quiet --metrics "$T/$out.jsonl" "$@" > "$T/$out.log" 2>&1 || {
    echo "FAIL: training $out ($*)"
    cat "$T/$out.log"
    fail=$((fail + 1))
    return 1
  }
}
# total PHASE FILE: the phase's bytes sent per epoch summed over the 4 ranks (mean times 4), epoch 1
total() {
  grep -o "\"$1\": {\"bytes_sent_max\": [0-9]*, \"bytes_sent_mean\": [0-9.]*" "$T/$2.jsonl" |
    head -1 | grep -o '[0-9.]*$' | awk '{ printf "%.0f", $1 * 4 }'
}
# moved GRID: every rank's forward self-term move bytes per epoch summed, fp32 minus bf16: each
# layer's all-reduce along a of its n_out x w_in rows, 2 n f esz (G-1)/G bytes (fg_group.h),
# twice an epoch (training and evaluation forward)
moved() {
  echo "$1" | awk -v n=$N -v widths="$WIDTHS" -F x '{
    L = split(widths, w, " ") - 1; g[0] = $1; g[1] = $2; g[2] = $3; sum = 0
    for (r = 0; r < g[0] * g[1] * g[2]; r++) {
      q[1] = r % g[1]; q[0] = int(r / g[1]) % g[0]; q[2] = int(r / (g[1] * g[0]))
      for (l = 0; l < L; l++) {
        a = (3 - l % 3) % 3; b = (a + 1) % 3; c = (a + 2) % 3
        if (g[a] == 1) continue
        nout = int(n / g[c]) + (q[c] < n % g[c]); win = int(w[l + 1] / g[b]) + (q[b] < w[l + 1] % g[b])
        for (e = 4; e >= 2; e -= 2) {
          v = int(2 * nout * win * e * (g[a] - 1) / g[a])
          sum += (e == 4 ? 2 : -2) * v
        }
      }
    }
    printf "%.0f", sum }'
}

# (grids with X = 1: layer 0 would otherwise all-reduce Cora's 1433 feature columns)
for grid in 1x2x2 1x1x4; do
  train sage32 --grid $grid --model sage --layers 3 || continue
  train sage16 --grid $grid --model sage --layers 3 --precision bf16 || continue
  f32=$(total forward sage32) f16=$(total forward sage16)
  b32=$(total backward sage32) b16=$(total backward sage16)
  want=$(moved $grid)
  if [ -z "$f32" ] || [ -z "$f16" ] || [ $((f32 - f16)) != "$want" ] || [ "$want" -le 0 ] ||
     [ "$b32" != "$b16" ]; then
    echo "FAIL: sage $grid: forward $f32 -> $f16 bytes (want a drop of $want), backward $b32 -> $b16"
    fail=$((fail + 1))
  else
    echo "sage $grid: forward $f32 -> $f16 bytes (half the moves: -$want), backward $b32 both"
    pass=$((pass + 1))
  fi
done

EPOCHS=4
# gin_same NAME OPTS: 3d 1x2x2 and serial bf16 losses of GIN with OPTS within 1e-5
gin_same() {
  local name=$1 opts=$2
  # shellcheck disable=SC2086
  if train "$name" --grid 1x2x2 $opts &&
     timeout 120 "$FG" train "$DATA" $opts --epochs $EPOCHS --quiet --metrics "$T/${name}s.jsonl" \
       > "$T/${name}s.log" 2>&1; then
    grep -o '"loss": [0-9.e+-]*' "$T/$name.jsonl" | grep -o '[0-9.e+-]*$' > "$T/a"
    grep -o '"loss": [0-9.e+-]*' "$T/${name}s.jsonl" | grep -o '[0-9.e+-]*$' > "$T/b"
    if [ "$(wc -l < "$T/a")" -ne 4 ] || ! paste "$T/a" "$T/b" | awk '{
         d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5 * ($2 < 0 ? -$2 : $2)) bad = 1 }
         END { exit bad }'; then
      echo "FAIL: $opts: 3d 1x2x2 losses $(tr '\n' ' ' < "$T/a") vs serial $(tr '\n' ' ' < "$T/b")"
      fail=$((fail + 1))
    else
      echo "$opts: 3d 1x2x2 = serial within 1e-5: $(tr '\n' ' ' < "$T/a")"
      pass=$((pass + 1))
    fi
  else
    echo "FAIL: gin training ($opts)"
    cat "$T/${name}s.log" 2>/dev/null
    fail=$((fail + 1))
  fi
}
gin_same gin16r "--model gin --residual --layers 3 --precision bf16"
gin_same gin16 "--model gin --layers 3 --precision bf16"
echo "bf16_3d: $pass passed, $fail failed"
[ $fail -eq 0 ]
