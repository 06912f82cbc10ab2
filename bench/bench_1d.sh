#!/bin/sh
# bench_1d.sh -- the 1D schemes: epoch time split into compute / communication / waiting, and
# bytes sent per rank, for each scheme and vertex order at P = 1, 2, 4 ranks (1 thread each),
# on the R-MAT scale-18 benchmark graph and on a SNAP graph.
#
# usage: bench/bench_1d.sh [OUTDIR]        (default bench/out/1d)
# environment: FULLGRAPH (the program; default build/release/fullgraph), MPIEXEC (mpiexec),
#   EPOCHS (4; epoch 1 is left out of the means), RANKS ("1 2 4"),
#   SNAP (../shared/data/snap/ca-AstroPh.txt), GRAPHS ("rmat18 snap")
# Writes OUTDIR/bench_1d.md (a markdown table) and OUTDIR/<run>.json (metrics of every run).
#
# Columns: epoch = wall seconds of an epoch (max over ranks); compute = SpMM + GEMM + other
# local work; comm = time inside MPI calls (aggregation exchanges and the loss, metric and
# gradient reductions) including waiting; wait = the part of comm spent blocked in MPI_Wait
# after the overlapped computation ("-" when the metrics do not report it); MB sent = bytes
# sent per epoch by the busiest rank and on average (everything: aggregations and
# reductions); plan MB = the aggregation bytes of the busiest rank that `fullgraph info`
# computes from the partition alone.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/bench/out/1d}
fg=${FULLGRAPH:-$here/build/release/fullgraph}
mpiexec=${MPIEXEC:-mpiexec}
epochs=${EPOCHS:-4}
ranks=${RANKS:-"1 2 4"}
snap=${SNAP:-$here/../shared/data/snap/ca-AstroPh.txt}
graphs=${GRAPHS:-"rmat18 snap"}
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
table=$out/bench_1d.md

# field FILE KEY: a metrics field's mean over the epochs (bench/lib.sh)
. "$here/bench/lib.sh"

{
  echo "| graph | P | scheme | order | epoch s | compute s | comm s | wait s | MB sent max | MB sent mean | plan MB max |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$table"

for g in $graphs; do
  case $g in
    rmat18)
      data=$out/rmat18.txt
      [ -f "$data" ] || "$fg" generate rmat --scale 18 --edge-factor 16 --output "$data" ;;
    snap)
      data=$snap
      if [ ! -f "$data" ]; then echo "skip snap: $data not found"; continue; fi ;;
    *) data=$g ;;
  esac
  name=$(basename "$data" | sed 's/\..*//')
  for P in $ranks; do
    if [ "$P" -eq 1 ]; then
      runs="serial:natural 1d:natural 1d-sa:natural"
    else
      runs=""
      for o in natural random metis; do runs="$runs 1d:$o 1d+overlap:$o 1d-sa:$o"; done
    fi
    for run in $runs; do
      scheme=${run%%:*}
      order=${run#*:}
      iflags="--scheme ${scheme%+overlap} --order $order"
      flags=$iflags
      case $scheme in *+overlap) flags="$flags --overlap" ;; esac
      tag=$name-p$P-$scheme-$order
      echo "== $tag" >&2
      # shellcheck disable=SC2086
      "$mpiexec" -n "$P" --oversubscribe "$fg" train "$data" $flags --epochs "$epochs" \
        --threads 1 --quiet --no-progress --metrics "$out/$tag.json" >"$out/$tag.log" 2>&1
      planmb=-
      if [ "$scheme" != serial ]; then
        # shellcheck disable=SC2086
        max=$("$fg" info "$data" --ranks "$P" $iflags 2>/dev/null |
          sed -n 's/.*per epoch: .* max \([0-9]*\) and mean.*/\1/p')
        [ -n "$max" ] && planmb=$(awk -v b="$max" 'BEGIN { printf "%.2f", b / 1e6 }')
      fi
      m=$out/$tag.json
      ep=$(field "$m" seconds)
      sp=$(field "$m" seconds_spmm)
      ge=$(field "$m" seconds_gemm)
      ot=$(field "$m" seconds_other)
      co=$(field "$m" seconds_comm)
      wa=$(field "$m" seconds_wait)
      bmax=$(field "$m" bytes_sent_max)
      bmean=$(field "$m" bytes_sent_mean)
      awk -v g="$name" -v P="$P" -v s="$scheme" -v o="$order" -v ep="$ep" -v sp="$sp" \
          -v ge="$ge" -v ot="$ot" -v co="$co" -v wa="$wa" -v bmax="$bmax" -v bmean="$bmean" \
          -v plan="$planmb" 'BEGIN {
        w = (wa == "-") ? "-" : sprintf("%.3f", wa)
        printf "| %s | %s | %s | %s | %.3f | %.3f | %.3f | %s | %.2f | %.2f | %s |\n",
               g, P, s, o, ep, sp + ge + ot, co, w, bmax / 1e6, bmean / 1e6, plan }' >>"$table"
    done
  done
done
cat "$table"
