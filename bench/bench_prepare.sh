#!/usr/bin/env bash
# `fullgraph prepare` serial against `mpirun -n P fullgraph prepare` (P = 2, 4): wall time (the
# report line's seconds, from before the input is read to after the manifest), edge cut
# (entries outside the diagonal blocks) and peak resident memory of rank 0 and of the largest
# other rank (/usr/bin/time), for the orders natural and metis. One thread per process.
# usage: bench/bench_prepare.sh DATA [B] [FULLGRAPH]   (prints a Markdown table)
set -u
DATA=$1 B=${2:-8} FG=${3:-build/release/fullgraph}
. "$(dirname "$0")/../scripts/env.sh"
export OMP_NUM_THREADS=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "| order | processes | input | partitioner | seconds | edge cut | largest row block (rows, entries) | peak RSS rank 0 | peak RSS other ranks (max) |"
echo "|---|---|---|---|---|---|---|---|---|"
for order in natural metis; do
  for P in 1 2 4; do
    rm -rf "$T/out" "$T"/rss*
    if [ $P = 1 ]; then
      /usr/bin/time -f "rss %M" -o "$T/rss0" "$FG" prepare "$DATA" --blocks "$B" --order $order \
        --output "$T/out" > "$T/log" 2>&1 || { cat "$T/log"; exit 1; }
      cat "$T/rss0" > "$T/rss"
    else
      mpirun -n $P sh -c '/usr/bin/time -f "rss %M" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$T/rss" \
        "$FG" prepare "$DATA" --blocks "$B" --order $order --output "$T/out" > "$T/log" 2>&1 ||
        { cat "$T/log"; exit 1; }
      cat "$T/rss".* > "$T/rss"
      cp "$T/rss.0" "$T/rss0"
    fi
    line=$(grep "^prepare report" "$T/log")
    how=$(echo "$line" | sed -n 's/.*(\(serial\|input [a-z ]*\)).*/\1/p')
    part=$(echo "$line" | sed -n 's/.*partitioner \(.*\): [0-9]* entries.*/\1/p')
    secs=$(echo "$line" | sed -n 's/.*; \([0-9.]*\) s$/\1/p')
    cut=$(echo "$line" | sed -n 's/.*edge cut \([0-9]* ([0-9.]*%)\).*/\1/p')
    blk=$(echo "$line" | sed -n 's/.*largest row block \([0-9]*\) rows, \([0-9]*\) entries.*/\1, \2/p')
    r0=$(sed -n 's/rss //p' "$T/rss0")
    other=$( (cat "$T"/rss.[1-9]* 2> /dev/null || true) | sed -n 's/rss //p' | sort -n | tail -1)
    echo "| $order | $P | $how | $part | $secs | $cut | $blk | $((r0 / 1024)) MB | ${other:+$((other / 1024)) MB} |"
  done
done
