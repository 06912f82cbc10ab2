#!/bin/sh
# bench_15d.sh -- issue 18's comparison: epoch time and bytes of 1d-sa, 1.5d (every valid c) and
# 3d (the performance model's grid) on the same graphs, P and vertex orders, with the planner's
# predicted ranking beside the measured one; at the P the machine cannot run (PINFO), the
# volumes alone, from `fullgraph info`.
#
# usage: bench/bench_15d.sh [OUTDIR]        (default bench/out/15d)
# environment: FULLGRAPH (default build/release/fullgraph), MPIEXEC (mpiexec), EPOCHS (4; epoch 1
#   left out of the means), RANKS ("4 8"), PINFO ("16"), ORDERS ("metis volume"),
#   GRAPHS ("rmat18 snap chameleon minesweeper"), HIDDEN (128)
# Writes OUTDIR/bench_15d.md and OUTDIR/<run>.json (the metrics of every run).
#
# Columns: epoch = wall seconds of an epoch (max over ranks); comm = time inside MPI calls;
# MB sent = bytes sent per epoch by the busiest rank and in all (aggregations, 1.5d's
# all-reduces over the replicas, and the gradient, loss and metric reductions); plan MB = the
# aggregation bytes of the busiest rank from `fullgraph info`; model s and rank = `fullgraph
# plan`'s predicted epoch and its place among these runs (built-in coefficients).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/bench/out/15d}
fg=${FULLGRAPH:-$here/build/release/fullgraph}
mpiexec=${MPIEXEC:-mpiexec}
epochs=${EPOCHS:-4}
ranks=${RANKS:-"4 8"}
pinfo=${PINFO:-"16"}
orders=${ORDERS:-"metis volume"}
graphs=${GRAPHS:-"rmat18 snap chameleon minesweeper"}
hidden=${HIDDEN:-128}
shared=$here/../shared/data
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
table=$out/bench_15d.md
. "$here/bench/lib.sh"

# valid replications c > 1 of P (c divides P, c <= P / c)
reps() { c=2; while [ $((c * c)) -le "$1" ]; do [ $(($1 % c)) -eq 0 ] && printf '%s ' $c; c=$((c + 1)); done; }

# the planner's predicted epoch for one configuration (scheme, c or grid) on P ranks
predict() { # data P order scheme extra
  # shellcheck disable=SC2086
  "$fg" plan "$1" --ranks "$2" --order "$3" --hidden "$hidden" --schemes "$4" $5 2>/dev/null |
    awk -v s="$4" '$2 == s { print $4; exit }'
}

{
  echo "| graph | P | order | scheme | epoch s | comm s | MB sent max | MB sent all | plan MB max | model s |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$table"

for g in $graphs; do
  case $g in
    rmat18)
      data=$out/rmat18.txt
      [ -f "$data" ] || "$fg" generate rmat --scale 18 --edge-factor 16 --output "$data" ;;
    snap) data=$shared/snap/ca-AstroPh.txt ;;
    chameleon|minesweeper) data=$shared/heterophilous/$g.npz ;;
    *) data=$g ;;
  esac
  if [ ! -f "$data" ]; then echo "skip $g: $data not found" >&2; continue; fi
  name=$(basename "$data" | sed 's/\..*//')
  for P in $ranks; do
    for order in $orders; do
      runs="1d-sa"
      for c in $(reps "$P"); do runs="$runs 1.5d:$c"; done
      runs="$runs 3d"
      for run in $runs; do
        scheme=${run%%:*}
        # 3d lays out by its own (random) permutation: one run, with the first order's
        [ "$scheme" = 3d ] && [ "$order" != "${orders%% *}" ] && continue
        flags="--scheme $scheme --order $order"
        pflags=""
        case $run in 1.5d:*) flags="$flags --replicate ${run#*:}"; pflags="--replicate ${run#*:}" ;; esac
        [ "$scheme" = 3d ] && flags="--scheme 3d --order random"
        tag=$name-p$P-$order-$(echo "$run" | tr ':' c)
        echo "== $tag" >&2
        # shellcheck disable=SC2086
        if ! "$mpiexec" -n "$P" --oversubscribe "$fg" train "$data" $flags --hidden "$hidden" \
          --epochs "$epochs" --threads 1 --no-progress --metrics "$out/$tag.json" \
          >"$out/$tag.log" 2>&1; then
          echo "| $name | $P | $order | $run | failed: $(tail -1 "$out/$tag.log") |" >>"$table"
          continue
        fi
        planmb=- model=-
        if [ "$scheme" != 3d ]; then
          # shellcheck disable=SC2086
          max=$("$fg" info "$data" --ranks "$P" $flags --hidden "$hidden" 2>/dev/null |
            sed -n 's/.*per epoch: .* max \([0-9]*\) and mean.*/\1/p')
          [ -n "$max" ] && planmb=$(awk -v b="$max" 'BEGIN { printf "%.2f", b / 1e6 }')
          model=$(predict "$data" "$P" "$order" "$scheme" "$pflags")
        else
          model=$(predict "$data" "$P" random 3d "")
          grid=$(sed -n 's/.*grid \([0-9x]*\).*/\1/p' "$out/$tag.log" | head -1)
          [ -n "$grid" ] && run="3d $grid"
        fi
        m=$out/$tag.json
        awk -v g="$name" -v P="$P" -v o="$order" -v s="$run" -v ep="$(field "$m" seconds)" \
            -v co="$(field "$m" seconds_comm)" -v bmax="$(field "$m" bytes_sent_max)" \
            -v bmean="$(field "$m" bytes_sent_mean)" -v plan="$planmb" -v model="${model:--}" \
            'BEGIN { printf "| %s | %s | %s | %s | %.3f | %.3f | %.2f | %.2f | %s | %s |\n",
                     g, P, o, s, ep, co, bmax / 1e6, bmean * P / 1e6, plan, model }' >>"$table"
      done
    done
  done
  # the P this machine cannot run: aggregation volumes from the partition alone
  for P in $pinfo; do
    for order in $orders; do
      for run in 1d-sa $(for c in $(reps "$P"); do printf '1.5d:%s ' $c; done); do
        scheme=${run%%:*}
        flags="--scheme $scheme --order $order"
        case $run in 1.5d:*) flags="$flags --replicate ${run#*:}" ;; esac
        # shellcheck disable=SC2086
        line=$("$fg" info "$data" --ranks "$P" $flags --hidden "$hidden" 2>/dev/null |
          sed -n 's/.*per epoch: \([0-9]*\) bytes sent in all, max \([0-9]*\) and mean.*/\1 \2/p')
        set -- $line
        awk -v g="$name" -v P="$P" -v o="$order" -v s="$run" -v all="${1:-0}" -v max="${2:-0}" \
          'BEGIN { printf "| %s | %s | %s | %s | (info) | | %.2f | %.2f | %.2f | |\n",
                   g, P, o, s, max / 1e6, all / 1e6, max / 1e6 }' >>"$table"
      done
    done
  done
done
cat "$table"
