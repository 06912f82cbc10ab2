#!/bin/sh
# bench_3d.sh -- the 3D (Plexus) scheme against its performance model: for each rank count P,
# calibrate the model on this machine with P ranks (`fullgraph bench --calibrate`), predict
# every 3D grid X x Y x Z = P and the 1D schemes (`fullgraph plan`), train each for a few epochs
# on the R-MAT scale-18 benchmark graph, and compare measured with predicted epoch times: the
# Spearman rank correlation, and where the configuration --grid auto / --scheme auto picks (the
# plan's first) ranks among the measured.
#
# usage: bench/bench_3d.sh [OUTDIR]        (default bench/out/3d)
# environment: FULLGRAPH (default build/release/fullgraph), MPIEXEC (mpiexec), RANKS ("4 8"),
#   EPOCHS (4; epoch 1 is left out of the means), LAYERS (3), HIDDEN (32), DATA (the R-MAT
#   file; generated into OUTDIR when absent), EXTRA (more train/plan flags for every 3d run,
#   e.g. "--double-perm"; the 1D schemes are then left out)
# Writes OUTDIR/bench_3d.md (markdown tables) and OUTDIR/p<P>_<config>.json (metrics).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/bench/out/3d}
fg=${FULLGRAPH:-$here/build/release/fullgraph}
mpiexec=${MPIEXEC:-mpiexec}
ranks=${RANKS:-"4 8"}
epochs=${EPOCHS:-4}
layers=${LAYERS:-3}
hidden=${HIDDEN:-32}
extra=${EXTRA:-}
cores=$(getconf _NPROCESSORS_ONLN)
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
data=${DATA:-$out/rmat18.txt}
[ -f "$data" ] || "$fg" generate rmat --scale 18 --edge-factor 16 --output "$data"
table=$out/bench_3d.md

# mean of a numeric field over the epoch lines of a metrics file, epoch 1 left out
field() {
  awk -v key="$2" 'index($0, "{\"epoch\":") == 1 {
      i = index($0, "\"" key "\": "); if (i == 0) next
      v = substr($0, i + length(key) + 4); sub(/[,}].*/, "", v)
      n++; if (n >= 2) { s += v; m++ }; last = v }
    END { if (n == 0) { print "-"; exit } if (m == 0) { s = last; m = 1 } printf "%.4f\n", s / m }' "$1"
}

{
  echo "Machine: $cores core(s); 1 thread per rank. Graph: $(basename "$data"); GCN with $layers layers, hidden $hidden; $epochs epochs, epoch 1 left out of the means. Extra flags: ${extra:-none}."
  echo
} > "$table"

for P in $ranks; do
  cal=$out/cal_p$P.txt
  "$mpiexec" -n "$P" --oversubscribe "$fg" bench --calibrate --output "$cal" < /dev/null \
    > "$out/cal_p$P.log" 2>&1
  no1d=""
  [ -n "$extra" ] && no1d="--schemes 3d"
  # shellcheck disable=SC2086
  "$fg" plan "$data" --ranks "$P" --calibration "$cal" --layers "$layers" --hidden "$hidden" \
    --mem-per-rank -1 $no1d $extra > "$out/plan_p$P.txt"
  # the ranked configurations: "<pred rank> <scheme> <grid> <predicted s> <pred spmm> <pred comm>"
  awk '$1 ~ /^[0-9]+$/ && NF >= 12 { print $1, $2, $3, $4, $5, $7 }' "$out/plan_p$P.txt" > "$out/ranked_p$P.txt"
  : > "$out/measured_p$P.txt"
  while read -r prank scheme grid pred pspmm pcomm; do
    name=$scheme
    [ "$scheme" = 3d ] && name=3d_$grid
    json=$out/p${P}_$name.json
    if [ "$scheme" = 3d ]; then
      # shellcheck disable=SC2086
      "$mpiexec" -n "$P" --oversubscribe "$fg" train "$data" --scheme 3d --grid "$grid" \
        --layers "$layers" --hidden "$hidden" --epochs "$epochs" --quiet --no-progress \
        --metrics "$json" $extra < /dev/null > "$out/p${P}_$name.log" 2>&1
    else
      "$mpiexec" -n "$P" --oversubscribe "$fg" train "$data" --scheme "$scheme" \
        --layers "$layers" --hidden "$hidden" --epochs "$epochs" --quiet --no-progress \
        --metrics "$json" < /dev/null > "$out/p${P}_$name.log" 2>&1
    fi
    echo "$prank $scheme $grid $pred $pspmm $pcomm $(field "$json" seconds) $(field "$json" seconds_spmm) $(field "$json" seconds_comm)" >> "$out/measured_p$P.txt"
  done < "$out/ranked_p$P.txt"
  # what --scheme auto picks when training (it must be the plan's first)
  pick=auto
  [ -n "$extra" ] && pick=3d
  # shellcheck disable=SC2086
  auto=$("$mpiexec" -n "$P" --oversubscribe "$fg" train "$data" --scheme "$pick" \
    --calibration "$cal" --layers "$layers" --hidden "$hidden" --epochs 1 --no-progress $extra \
    < /dev/null 2>&1 |
    awk '/^performance model:/ { sub(/^performance model: /, ""); print; exit }')
  {
    echo "### P = $P ($( [ "$P" -gt "$cores" ] && echo "more ranks than the $cores cores: oversubscribed" || echo "one rank per core"))"
    echo
    echo "| predicted rank | scheme | grid | predicted s | measured s | measured rank | predicted SpMM s | measured SpMM s | predicted comm s | measured comm s |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    sort -k7,7g "$out/measured_p$P.txt" | awk '{ print $0, NR }' | sort -k1,1n |
      awk '{ printf "| %s | %s | %s | %.4f | %.4f | %s | %.4f | %.4f | %.4f | %.4f |\n", $1, $2, $3, $4, $7, $10, $5, $8, $6, $9 }'
    echo
    # Spearman: Pearson correlation of the ranks (no ties expected among measured times)
    sort -k7,7g "$out/measured_p$P.txt" | awk '{ print $1, NR }' | awk '
      { x[NR] = $1; y[NR] = $2; n = NR }
      END { for (i = 1; i <= n; i++) { mx += x[i]; my += y[i] } mx /= n; my /= n
            for (i = 1; i <= n; i++) { sxy += (x[i]-mx)*(y[i]-my); sxx += (x[i]-mx)^2; syy += (y[i]-my)^2 }
            printf "Spearman rank correlation of predicted and measured epoch times: %.3f (%d configurations)\n", (sxx > 0 && syy > 0) ? sxy / sqrt(sxx * syy) : 0, n }'
    # among the 3D grids only: what --grid auto chooses from
    grep ' 3d ' "$out/measured_p$P.txt" | sort -k4,4g | awk '{ print $0, NR }' | sort -k7,7g |
      awk '{ print $10, NR, $3 }' > "$out/ranks3d_p$P.txt"
    awk '{ x[NR] = $1; y[NR] = $2; n = NR }
      END { for (i = 1; i <= n; i++) { mx += x[i]; my += y[i] } mx /= n; my /= n
            for (i = 1; i <= n; i++) { sxy += (x[i]-mx)*(y[i]-my); sxx += (x[i]-mx)^2; syy += (y[i]-my)^2 }
            printf "\nAmong the %d 3D grids alone: Spearman %.3f; ", n, (sxx > 0 && syy > 0) ? sxy / sqrt(sxx * syy) : 0 }' "$out/ranks3d_p$P.txt"
    awk '$1 == 1 { printf "--grid auto picks %s, measured rank %d of the grids.\n", $3, $2 }' "$out/ranks3d_p$P.txt"
    first=$(awk 'NR == 1 { print $2, $3 }' "$out/ranked_p$P.txt")
    mrank=$(sort -k7,7g "$out/measured_p$P.txt" | awk '$1 == 1 { print NR }')
    echo
    echo "The model's pick ($first; \`train --scheme auto\` printed \"performance model: $auto\") measured rank $mrank of $(wc -l < "$out/measured_p$P.txt")."
    echo
  } >> "$table"
done
cat "$table"
