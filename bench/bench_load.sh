#!/bin/sh
# bench_load.sh -- loading at scale (issue 19 item 5): the direct path (rank 0 reads DATA, lays
# it out and scatters it) against a prepared directory read per rank (`fullgraph prepare`), at
# P = 1, 2, 4, 8 ranks (oversubscribed on a small machine), on R-MAT graphs and a real SNAP
# graph: load time, and the peak memory of rank 0 and of the busiest other rank, beside the
# dataset's size.
#
# usage: bench/bench_load.sh [OUTDIR]        (default bench/out/load)
# environment:
#   FULLGRAPH   the program (build/release/fullgraph)
#   MPIEXEC     mpiexec (Open MPI: the per-rank wrapper reads OMPI_COMM_WORLD_RANK)
#   GRAPHS      "rmat20 rmat22 snap": rmatS = `fullgraph generate rmat --scale S` (edge factor
#               16, written to OUTDIR/rmatS.txt once); snap = SNAP below; any other word a path
#   SNAP        ../shared/data/snap/ca-AstroPh.txt (the largest graph in ../shared/data)
#   RANKS       "1 2 4 8";  BLOCKS 8 (the prepared directory's row blocks: every P must divide it)
#   SCHEME      1d-sa (the scheme of every run; any scheme that reads per rank: 1d, 1d-sa,
#               1.5d, halo)
#   PATHS       "direct prepared"
#   RUN_TIMEOUT seconds after which one run is killed (timeout(1); default 3600)
#   REUSE       1: a run whose metrics and rank 0's time file are in OUTDIR already is not run
#               again (its row is rebuilt from them); default 0
# Every run: `train DATA --scheme SCHEME --order random --seed 0 --epochs 1 --threads 1` (the
# direct path) or `train DIR --scheme SCHEME --epochs 1 --threads 1` (DIR prepared once with
# `--blocks BLOCKS --order random --seed 0`: the same layout and losses). Graph-only inputs get
# train's default generated inputs (128 features, 32 degree-quantile classes), as the other
# bench scripts' R-MAT runs; prepare generates the same ones. One epoch: train has no load-only
# mode (--epochs is at least 1).
#
# Writes OUTDIR/bench_load.md (a markdown table), OUTDIR/<run>.json (metrics), <run>.log and
# <run>.time.R (/usr/bin/time of rank R).
#
# Columns: D MB = the dataset: the prepared directory's bytes (features, labels, split, node
# ids, degrees, the pattern as B x B CSR blocks) -- what the ranks hold between them once loaded;
# load s = the run record's setup.load_seconds (rank 0's read of DATA; for a prepared directory
# its manifest) + setup.seconds (layout, distribution or each rank's reads, model; slowest rank);
# r0 MB / other MB = setup.peak_rss_bytes of rank 0 and the largest of the other ranks (each
# process's peak resident memory when the setup is done, before the epoch allocates: the load's
# memory, process baseline included); r0/other = their ratio (the goal: at most 1.25); max/(D/P)
# = the busiest rank's setup peak over its 1/P share of D (the goal: about 1 plus the baseline);
# read/(D/P) = a prepared directory read per rank: the busiest rank's peak right after its reads
# (the log's "rank R read N bytes, peak resident M bytes"), before the scheme builds its own
# structures, over D/P;
# run r0 / other MB = /usr/bin/time's maximum resident size over the whole run (the epoch too);
# prepare s = the wall seconds of `fullgraph prepare` (once a graph).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/bench/out/load}
fg=${FULLGRAPH:-$here/build/release/fullgraph}
mpiexec=${MPIEXEC:-mpiexec}
graphs=${GRAPHS:-"rmat20 rmat22 snap"}
snap=${SNAP:-$here/../shared/data/snap/ca-AstroPh.txt}
ranks=${RANKS:-"1 2 4 8"}
blocks=${BLOCKS:-8}
scheme=${SCHEME:-1d-sa}
paths=${PATHS:-"direct prepared"}
tmo=${RUN_TIMEOUT:-3600}
reuse=${REUSE:-0}
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
table=$out/bench_load.md
# each rank under /usr/bin/time, its report in OUTDIR/<run>.time.<rank>
wrap='exec /usr/bin/time -f "%e %M" -o "$0.${OMPI_COMM_WORLD_RANK:-0}" "$@"'

# rec FILE KEY: a number of the run record's "setup" object
rec() { head -1 "$1" | sed -n "s/.*\"setup\": {[^}]*\"$2\": \([0-9.e+-]*\).*/\1/p"; }
# peaks FILE: setup.peak_rss_bytes, one a line (rank order)
peaks() { head -1 "$1" | sed -n 's/.*"setup": {[^}]*"peak_rss_bytes": \[\([0-9, ]*\)\].*/\1/p' | tr ',' '\n' | tr -d ' '; }
mb() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1e6 }'; }

{
  echo "machine: $(getconf _NPROCESSORS_ONLN) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1e6}' /proc/meminfo)"
  echo "scheme $scheme, order random, $blocks blocks, 1 epoch, 1 thread a rank"
  echo
  echo "| graph | nodes | entries | D MB | prepare s | P | path | load s | r0 MB | other MB | r0/other | max/(D/P) | read/(D/P) | run r0 MB | run other MB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$table"

for g in $graphs; do
  case $g in
    rmat*)
      s=${g#rmat}
      data=$out/$g.txt
      if [ ! -f "$data" ]; then
        echo "+ $fg generate rmat --scale $s --edge-factor 16 --output $data" >&2
        "$fg" generate rmat --scale "$s" --edge-factor 16 --output "$data"
      fi ;;
    snap)
      data=$snap
      if [ ! -f "$data" ]; then echo "skip snap: $data not found" >&2; continue; fi ;;
    *) data=$g ;;
  esac
  name=$(basename "$data" | sed 's/\..*//')
  dir=$out/$name.prep$blocks
  prep_s=-
  if [ ! -f "$dir/manifest.fgprep" ]; then
    echo "+ $fg prepare $data --blocks $blocks --order random --seed 0 --output $dir" >&2
    t0=$(date +%s.%N)
    "$fg" prepare "$data" --blocks "$blocks" --order random --seed 0 --output "$dir" >"$out/$name.prepare.log" 2>&1
    prep_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "$prep_s" >"$out/$name.prepare.s"
  elif [ -f "$out/$name.prepare.s" ]; then
    prep_s=$(cat "$out/$name.prepare.s")
  fi
  dbytes=$(cat "$dir"/*.bin | wc -c)
  "$fg" info "$dir" >"$out/$name.info" 2>&1 || true
  sizes=$(sed -n 's/^  nodes *\([0-9]*\).*/\1/p' "$out/$name.info" | head -1)
  ents=$(sed -n 's/^  adjacency *\([0-9]*\) stored.*/\1/p' "$out/$name.info" | head -1)
  for P in $ranks; do
    for path in $paths; do
      tag=$name-p$P-$path
      if [ "$path" = direct ]; then
        set -- "$data" --order random --seed 0
      else
        set -- "$dir" --seed 0
      fi
      st=0
      if [ "$reuse" = 1 ] && [ -s "$out/$tag.json" ] && [ -s "$out/$tag.time.0" ]; then
        echo "== $tag (reused)" >&2
      else
        echo "== $tag" >&2
        rm -f "$out/$tag".time.*
        timeout "$tmo" "$mpiexec" -n "$P" --oversubscribe sh -c "$wrap" "$out/$tag.time" \
          "$fg" train "$@" --scheme "$scheme" --epochs 1 --threads 1 --no-progress \
          --metrics "$out/$tag.json" >"$out/$tag.log" 2>&1 || st=$?
      fi
      if [ "$st" != 0 ]; then
        echo "| $name | | | | | $P | $path | failed (exit $st, $tag.log) | | | | | | | |" >>"$table"
        continue
      fi
      m=$out/$tag.json
      load=$(awk -v a="$(rec "$m" load_seconds)" -v b="$(rec "$m" seconds)" 'BEGIN { printf "%.1f", a + b }')
      peaks "$m" >"$out/$tag.peaks"
      r0=$(head -1 "$out/$tag.peaks")
      oth=$(tail -n +2 "$out/$tag.peaks" | sort -n | tail -1)
      mx=$(sort -n "$out/$tag.peaks" | tail -1)
      ratio=-
      [ -n "$oth" ] && ratio=$(awk -v a="$r0" -v b="$oth" 'BEGIN { printf "%.2f", a / b }')
      share=$(awk -v a="$mx" -v d="$dbytes" -v p="$P" 'BEGIN { printf "%.2f", a / (d / p) }')
      rd=$(sed -n 's/^  rank [0-9]* read [0-9]* bytes, peak resident \([0-9]*\) bytes.*/\1/p' "$out/$tag.log" | sort -n | tail -1)
      rshare=-
      [ -n "$rd" ] && rshare=$(awk -v a="$rd" -v d="$dbytes" -v p="$P" 'BEGIN { printf "%.2f", a / (d / p) }')
      run0=$(awk '{ print $2 * 1024 }' "$out/$tag.time.0")
      runo=-
      for r in $(seq 1 $((P - 1))); do
        v=$(awk '{ print $2 * 1024 }' "$out/$tag.time.$r")
        if [ "$runo" = - ] || [ "$v" -gt "$runo" ]; then runo=$v; fi
      done
      echo "| $name | $sizes | $ents | $(mb "$dbytes") | $prep_s | $P | $path | $load | $(mb "$r0") | $([ -n "$oth" ] && mb "$oth" || echo -) | $ratio | $share | $rshare | $(mb "$run0") | $([ "$runo" = - ] && echo - || mb "$runo") |" >>"$table"
    done
  done
done
cat "$table"
