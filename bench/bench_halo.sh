#!/bin/sh
# bench_halo.sh -- the halo scheme (SuperGCN, issue 17): bytes per epoch and epoch time for
# --aggregation pre|post|hybrid x --quantize none|int8|int4|int2 at P = 2, 4, 8, beside 1d-sa on
# the same (metis) layout, on the R-MAT scale-18 benchmark graph and a SNAP graph; and test
# accuracy of float32 against int2 halo exchanges on datasets with splits.
#
# usage: bench/bench_halo.sh [OUTDIR]        (default bench/out/halo)
# environment:
#   FULLGRAPH   the program (build/release/fullgraph)
#   MPIEXEC     mpiexec; MPIFLAGS its options ("--oversubscribe")
#   BIND        none (default: --bind-to none) or cores (Open MPI: --map-by slot:PE=T --bind-to
#               core, each rank on its own T cores)
#   CORES       cores to share among the ranks: each of P ranks runs CORES/P threads (nproc)
#   PARTS       "bytes accuracy" (both); either alone
#   RUN_TIMEOUT seconds after which one training run is killed (timeout(1); unset: none)
#   -- bytes and time --
#   EPOCHS      5 (epoch 1 is left out of the time means)
#   RANKS       "2 4 8"
#   GRAPHS      "rmat18 snap"; any other word is read as a path
#   RMAT        the R-MAT scale-18 edge list (OUTDIR/rmat18.txt.gz, generated when missing)
#   SNAP        ../shared/data/snap/ca-AstroPh.txt
#   MODELS      "wide default": wide = GCN --hidden 256 --layers 3 (SuperGCN's width),
#               default = the default GCN (--hidden 16 --layers 2)
#   AGGS        "pre post hybrid";  QUANTS "none int8 int4 int2";  BASE "1d-sa" ("" to skip)
#   -- accuracy --
#   SEEDS       10 (seeds 0..SEEDS-1, the same for every column)
#   ACC_RANKS   4;  ACC_EPOCHS 200
#   ACC_ONLY    only the datasets whose name starts with this (cora, chameleon, minesweeper)
#   ACC_OPTS    options added after every dataset's own (the last of a repeated option wins),
#               e.g. "--hidden 256 --layers 3 --norm layer --residual --dropout 0.2"
#   SHARED      ../shared/data
#   LABEL_PROP  unset: the "int2 + label-prop" column says "not yet built"; RATE: that column
#               runs halo int2 with --label-prop RATE
# Writes OUTDIR/bench_halo.md (markdown tables), OUTDIR/<run>.json (metrics of every timed run)
# and OUTDIR/<run>.log.
#
# Columns of the bytes table (all per epoch; an epoch = training forward + backward + the
# evaluation forward): epoch s = wall seconds of an epoch (max over ranks, mean over epochs
# 2..EPOCHS); comm s = time in MPI calls, waiting included; exch MB = bytes of the aggregation
# exchanges (the metrics' "forward" and "backward" phases) summed over all ranks, and of it
# param MB = the quantization parameters (8 bytes a quantized row), so data = exch - param;
# / pre = exch MB over halo pre/none's at the same graph, model and P (so hybrid / pre and
# (hybrid + int2) / pre are read off it); max MB = the busiest rank's bytes sent, everything
# included (exchanges, the gradient all-reduce, the metric reductions); all MB = the same summed
# over ranks.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/bench/out/halo}
fg=${FULLGRAPH:-$here/build/release/fullgraph}
mpiexec=${MPIEXEC:-mpiexec}
mpiflags=${MPIFLAGS:-"--oversubscribe"}
bind=${BIND:-none}
cores=${CORES:-$(getconf _NPROCESSORS_ONLN)}
parts=${PARTS:-"bytes accuracy"}
epochs=${EPOCHS:-5}
ranks=${RANKS:-"2 4 8"}
graphs=${GRAPHS:-"rmat18 snap"}
shared=${SHARED:-$here/../shared/data}
snap=${SNAP:-$shared/snap/ca-AstroPh.txt}
models=${MODELS:-"wide default"}
aggs=${AGGS:-"pre post hybrid"}
quants=${QUANTS:-"none int8 int4 int2"}
base=${BASE-1d-sa}
seeds=${SEEDS:-10}
acc_ranks=${ACC_RANKS:-4}
acc_epochs=${ACC_EPOCHS:-200}
acc_opts=${ACC_OPTS:-}
acc_only=${ACC_ONLY:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
run_to=""
[ -z "${RUN_TIMEOUT:-}" ] || run_to="timeout $RUN_TIMEOUT"
mkdir -p "$out"
table=$out/bench_halo.md

threads_for() { t=$((cores / $1)); [ "$t" -ge 1 ] || t=1; echo "$t"; }
# mpiexec's options for ranks of $1 threads
mpi_opts() {
  case $bind in
    cores) echo "$mpiflags --map-by slot:PE=$1 --bind-to core" ;;
    *) echo "$mpiflags --bind-to none" ;;
  esac
}

model_flags() {
  case $1 in
    wide) echo "--hidden 256 --layers 3" ;;
    default) echo "" ;;
    *) echo "$1" | tr ',' ' ' ;;
  esac
}

# field FILE KEY: a metrics field's mean over the epochs (bench/lib.sh)
. "$here/bench/lib.sh"

# a key of one phase of the "comm" object, on the last epoch line (bytes do not change by epoch)
phase() {
  awk -v ph="$2" -v key="$3" 'index($0, "{\"epoch\":") == 1 {
      i = index($0, "\"" ph "\": {")
      if (i == 0) { v = "-"; next }
      s = substr($0, i); sub(/}.*/, "", s)
      j = index(s, "\"" key "\": ")
      if (j == 0) { v = "-"; next }
      v = substr(s, j + length(key) + 4); sub(/[,}].*/, "", v)
    }
    END { print (v == "") ? "-" : v }' "$1"
}

echo "machine: $(getconf _NPROCESSORS_ONLN) cores," \
  "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //');" \
  "$(date -u '+%F %H:%M UTC')"
echo "fullgraph: $("$fg" --version 2>/dev/null | head -1)"
echo "mpi: $("$mpiexec" --version 2>&1 | head -1); $mpiexec -n P $(mpi_opts T); $cores cores shared: T = CORES/P threads a rank"
: >"$table"

# ---------------------------------------------------------------- bytes and epoch time
case " $parts " in *" bytes "*)
{
  echo "| graph | model | P | threads | scheme | aggregation | quantize | epoch s | comm s | exch MB | param MB | / pre | max MB | all MB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >>"$table"

for g in $graphs; do
  case $g in
    rmat18)
      data=${RMAT:-$out/rmat18.txt.gz}
      if [ ! -f "$data" ]; then
        echo "+ $fg generate rmat --scale 18 --edge-factor 16 --output $data"
        "$fg" generate rmat --scale 18 --edge-factor 16 --output "$data"
      fi
      name=rmat18 ;;
    snap)
      data=$snap
      if [ ! -f "$data" ]; then echo "skip snap: $data not found"; continue; fi
      name=$(basename "$data" | sed 's/\..*//') ;;
    *) data=$g; name=$(basename "$data" | sed 's/\..*//') ;;
  esac
  for model in $models; do
    mflags=$(model_flags "$model")
    for P in $ranks; do
      T=$(threads_for "$P")
      mo=$(mpi_opts "$T")
      runs=""
      [ -z "$base" ] || runs="$base:-:-"
      for a in $aggs; do for q in $quants; do runs="$runs halo:$a:$q"; done; done
      pre=""
      for run in $runs; do
        scheme=${run%%:*}; rest=${run#*:}; agg=${rest%%:*}; q=${rest#*:}
        flags="--scheme $scheme --order metis"
        [ "$scheme" != halo ] || flags="$flags --aggregation $agg --quantize $q"
        tag=$name-$model-p$P-$scheme
        [ "$scheme" != halo ] || tag=$tag-$agg-$q
        m=$out/$tag.json
        rm -f "$m"
        echo "+ $mpiexec -n $P $mo $fg train $data $flags $mflags --epochs $epochs --threads $T --quiet --no-progress --metrics $tag.json"
        # shellcheck disable=SC2086
        if ! $run_to "$mpiexec" -n "$P" $mo "$fg" train "$data" $flags $mflags --epochs "$epochs" \
            --threads "$T" --quiet --no-progress --metrics "$m" </dev/null >"$out/$tag.log" 2>&1 ||
           [ ! -s "$m" ]; then
          echo "  failed: see $out/$tag.log"; tail -3 "$out/$tag.log" | sed 's/^/  /'
          echo "| $name | $model | $P | $T | $scheme | $agg | $q | failed | | | | | | |" >>"$table"
          continue
        fi
        ep=$(field "$m" seconds)
        co=$(field "$m" seconds_comm)
        bmax=$(field "$m" bytes_sent_max)
        bmean=$(field "$m" bytes_sent_mean)
        fw=$(phase "$m" forward bytes_sent_mean)
        bw=$(phase "$m" backward bytes_sent_mean)
        fwp=$(phase "$m" forward param_bytes_sent_mean)
        bwp=$(phase "$m" backward param_bytes_sent_mean)
        exch=$(awk -v a="$fw" -v b="$bw" -v P="$P" 'BEGIN { printf "%.0f", (a + b) * P }')
        par=$(awk -v a="$fwp" -v b="$bwp" -v P="$P" 'BEGIN { printf "%.0f", (a + b) * P }')
        [ "$scheme:$agg:$q" != "halo:pre:none" ] || pre=$exch
        awk -v g="$name" -v mo="$model" -v P="$P" -v T="$T" -v s="$scheme" -v a="$agg" \
            -v q="$q" -v ep="$ep" -v co="$co" -v ex="$exch" -v pa="$par" -v pre="$pre" \
            -v bmax="$bmax" -v bmean="$bmean" 'BEGIN {
          r = (pre == "" || pre == 0) ? "-" : sprintf("%.3f", ex / pre)
          printf "| %s | %s | %s | %s | %s | %s | %s | %.3f | %.3f | %.2f | %.2f | %s | %.2f | %.2f |\n",
                 g, mo, P, T, s, a, q, ep, co, ex / 1e6, pa / 1e6, r, bmax / 1e6, bmean * P / 1e6 }' \
          >>"$table"
      done
    done
  done
done
echo >>"$table"
;; esac

# ---------------------------------------------------------------- accuracy
case " $parts " in *" accuracy "*)
# name | path | options (as bench/quality.sh: Kipf's GCN; chameleon and minesweeper at width 64)
acc_sets="cora (planetoid split)|$here/data/cora|--normalize-features --hidden 16
chameleon (split 0)|$shared/heterophilous/chameleon.npz|--hidden 64
minesweeper (split 0)|$shared/heterophilous/minesweeper.npz|--hidden 64"
T=$(threads_for "$acc_ranks")
mo=$(mpi_opts "$T")
lp=${LABEL_PROP:-}
{
  echo "| dataset | options | serial | halo none, P = $acc_ranks | halo int2, P = $acc_ranks | int2 + label-prop${lp:+ $lp}, P = $acc_ranks |"
  echo "|---|---|---|---|---|---|"
} >>"$table"
acc() { sed -n 's/^test accuracy \([0-9.]*\) .*/\1/p'; }
# mean ± std (sample) in percent of the numbers in a file
stats() {
  awk '{ x[NR] = $1 * 100; s += x[NR] } END {
    if (NR == 0) { print "-"; exit }
    m = s / NR; v = 0
    for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2
    printf "%.1f ± %.1f (%d)\n", m, (NR > 1) ? sqrt(v / (NR - 1)) : 0, NR }' "$1"
}
echo "$acc_sets" | while IFS='|' read -r dname path opts; do
  case $dname in "$acc_only"*) ;; *) continue ;; esac
  if [ ! -e "$path" ]; then echo "skip $dname: $path not found"; continue; fi
  opts="$opts${acc_opts:+ $acc_opts}"
  key=$(echo "$dname $acc_opts" | sed 's/ (.*)//; s/[^A-Za-z0-9]\{1,\}/-/g')
  for c in serial none int2 lp; do : >"$out/acc-$key-$c.txt"; done
  seed=0
  while [ "$seed" -lt "$seeds" ]; do
    common="--seed $seed --epochs $acc_epochs --quiet --no-progress $opts"
    echo "+ $fg train $path $common --scheme serial --threads $cores"
    # shellcheck disable=SC2086
    "$fg" train "$path" $common --scheme serial --threads "$cores" </dev/null | acc >>"$out/acc-$key-serial.txt"
    for q in none int2; do
      echo "+ $mpiexec -n $acc_ranks $mo $fg train $path $common --scheme halo --quantize $q --threads $T"
      # shellcheck disable=SC2086
      "$mpiexec" -n "$acc_ranks" $mo "$fg" train "$path" $common --scheme halo \
        --quantize "$q" --threads "$T" </dev/null | acc >>"$out/acc-$key-$q.txt"
    done
    if [ -n "$lp" ]; then
      echo "+ $mpiexec -n $acc_ranks $mo $fg train $path $common --scheme halo --quantize int2 --label-prop $lp --threads $T"
      # shellcheck disable=SC2086
      "$mpiexec" -n "$acc_ranks" $mo "$fg" train "$path" $common --scheme halo \
        --quantize int2 --label-prop "$lp" --threads "$T" </dev/null | acc >>"$out/acc-$key-lp.txt"
    fi
    seed=$((seed + 1))
  done
  lpcol="not yet built"
  [ -z "$lp" ] || lpcol=$(stats "$out/acc-$key-lp.txt")
  echo "| $dname | $opts | $(stats "$out/acc-$key-serial.txt") | $(stats "$out/acc-$key-none.txt") | $(stats "$out/acc-$key-int2.txt") | $lpcol |" >>"$table"
done
echo >>"$table"
echo "accuracy: test accuracy at the best-validation epoch, %, mean ± sample std over seeds 0..$((seeds - 1)) (runs counted in brackets)" >>"$table"
;; esac

cat "$table"
