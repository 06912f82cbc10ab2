#!/usr/bin/env bash
# The aggregation bytes a training epoch measures (metrics: forward + backward bytes sent by the
# busiest rank) equal what `fullgraph info --ranks P` computes from the partition alone.
# Cora is symmetric, so every rank sends the same in forward and backward and the maxima add.
# usage: volume_cli.sh MPIEXEC FULLGRAPH DATA
set -u
MPIEXEC=$1 FG=$2 DATA=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 pass=0
# (and 1d under bf16 at P = 3: its blocks at 2 bytes an element)
for P in 2 3; do
  for scheme in 1d 1d-sa "1d bf16"; do
    set -- $scheme
    [ $# = 2 ] && [ $P != 3 ] && continue
    for order in natural random; do
      timeout 120 "$MPIEXEC" -n $P --oversubscribe "$FG" train "$DATA" --scheme $1 \
        --order $order --precision ${2:-fp32} --epochs 1 --quiet --metrics "$T/m.jsonl" \
        > "$T/out" 2>&1 || {
        echo "FAIL: training P=$P $scheme $order"; cat "$T/out"; fail=$((fail + 1)); continue; }
      fwd=$(grep -o '"forward": {"bytes_sent_max": [0-9]*' "$T/m.jsonl" | head -1 | grep -o '[0-9]*$')
      bwd=$(grep -o '"backward": {"bytes_sent_max": [0-9]*' "$T/m.jsonl" | head -1 | grep -o '[0-9]*$')
      plan=$("$FG" info "$DATA" --ranks $P --scheme $1 --order $order --precision ${2:-fp32} |
             sed -n 's/.*per epoch: .* max \([0-9]*\) and mean.*/\1/p')
      if [ -z "$fwd" ] || [ -z "$plan" ] || [ $((fwd + bwd)) != "$plan" ]; then
        echo "FAIL: P=$P $scheme $order: measured $fwd + $bwd, info says $plan"
        fail=$((fail + 1))
      else
        echo "P=$P $scheme $order: measured $((fwd + bwd)) bytes = info's $plan"
        pass=$((pass + 1))
      fi
    done
  done
done
# halo: the cover of each cut differs by direction, so the busiest rank of forward need not be
# backward's: compare every rank's total (the mean times P) and, quantized, the parameter bytes
mean() { grep -o "\"$1\": {[^}]*" "$T/m.jsonl" | head -1 | grep -o "\"$2_mean\": [0-9.]*" |
         grep -o '[0-9.]*$'; }
for P in 2 3; do
  for variant in "hybrid none" "pre int2" "post int8" "hybrid int4"; do
    set -- $variant
    timeout 120 "$MPIEXEC" -n $P --oversubscribe "$FG" train "$DATA" --scheme halo \
      --aggregation $1 --quantize $2 --hidden 40 --epochs 1 --quiet --metrics "$T/m.jsonl" \
      > "$T/out" 2>&1 || { echo "FAIL: training P=$P halo $1 $2"; cat "$T/out"; fail=$((fail + 1)); continue; }
    got=$(awk -v p=$P -v a="$(mean forward bytes_sent)" -v b="$(mean backward bytes_sent)" \
          'BEGIN { printf "%.0f", (a + b) * p }')
    gotp=$(awk -v p=$P -v a="$(mean forward param_bytes_sent)" -v b="$(mean backward param_bytes_sent)" \
           'BEGIN { printf "%.0f", (a + b) * p }')
    "$FG" info "$DATA" --ranks $P --scheme halo --aggregation $1 --quantize $2 --hidden 40 > "$T/info"
    plan=$(sed -n 's/.*per epoch: \([0-9]*\) bytes sent in all.*/\1/p' "$T/info")
    planp=$(sed -n 's/.*and \([0-9]*\) parameters.*/\1/p' "$T/info")
    [ -z "$planp" ] && planp=0
    if [ -z "$plan" ] || [ "$got" != "$plan" ] || [ "$gotp" != "$planp" ]; then
      echo "FAIL: P=$P halo $1 $2: measured $got bytes ($gotp parameters), info says $plan ($planp)"
      fail=$((fail + 1))
    else
      echo "P=$P halo $1 $2: measured $got bytes ($gotp parameters) = info's"
      pass=$((pass + 1))
    fi
  done
done
# 1.5d: the halo rows of each replica's share plus the all-reduces over the replicas; every
# rank's total (uneven shares at P = 6: 3 block rows on 2 replicas); under bf16 the rows at 2
# bytes an element, the all-reduces at 4
for PC in "4 2 fp32" "6 2 fp32" "4 2 bf16"; do
  set -- $PC
  timeout 120 "$MPIEXEC" -n $1 --oversubscribe "$FG" train "$DATA" --scheme 1.5d --replicate $2 \
    --order random --precision $3 --epochs 1 --quiet --metrics "$T/m.jsonl" > "$T/out" 2>&1 ||
    { echo "FAIL: training P=$1 1.5d c=$2 $3"; cat "$T/out"; fail=$((fail + 1)); continue; }
  got=$(awk -v p=$1 -v a="$(mean forward bytes_sent)" -v b="$(mean backward bytes_sent)" \
        'BEGIN { printf "%.0f", (a + b) * p }')
  "$FG" info "$DATA" --ranks $1 --scheme 1.5d --replicate $2 --order random --precision $3 \
    > "$T/info"
  plan=$(sed -n 's/.*per epoch: \([0-9]*\) bytes sent in all.*/\1/p' "$T/info")
  if [ -z "$plan" ] || [ "$got" != "$plan" ] || ! grep -q "each on $2 replicas" "$T/info"; then
    echo "FAIL: P=$1 1.5d c=$2 $3: measured $got bytes, info says $plan"; fail=$((fail + 1))
  else
    echo "P=$1 1.5d c=$2 $3: measured $got bytes = info's"; pass=$((pass + 1))
  fi
done
echo "volume_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
