#!/usr/bin/env bash
# Total and maximum volume of every order (SA paper, table 2): `fullgraph info --order all` on
# R-MAT scale 18, SNAP ca-AstroPh, chameleon and Cora at P = 4, 8, 16.
# usage: bench/bench_orders.sh [BUILD_DIR] [OUT_DIR]   env: PARTS ("4 8 16"), GRAPHS
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
fg=${1:-$here/build/release}/fullgraph
out=${2:-/tmp/fg-bench-orders}
shared=$here/../shared/data
mkdir -p "$out"
graphs=${GRAPHS:-"rmat18 snap chameleon cora"}
for g in $graphs; do
  case $g in
    rmat18)
      data=$out/rmat18.txt
      [ -f "$data" ] || "$fg" generate rmat --scale 18 --edge-factor 16 --output "$data" ;;
    snap) data=$shared/snap/ca-AstroPh.txt ;;
    chameleon) data=$shared/heterophilous/chameleon.npz ;;
    cora) data=$shared/gnn_benchmark/cora.npz ;;
    *) echo "unknown graph $g" >&2; exit 2 ;;
  esac
  for P in ${PARTS:-4 8 16}; do
    echo "== $g P=$P"
    "$fg" info "$data" --ranks "$P" --order all | sed -n '/^partitions on/,$p'
  done
done
