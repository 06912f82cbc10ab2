#!/bin/bash
# load_limits.sh FULLGRAPH CORPUS DEMO -- hostile inputs against the loader's memory rule: each must
# end with exit 1 and a message naming the file, what loading it needs and the limit, at once
# and in little memory (or, for a header the loader sets aside, load what the lines hold).
# Every run is confined to a 2 GB address space, so a loader that tried what a file declares
# fails its allocations (and these expectations) instead of exhausting the machine; with
# /usr/bin/time the peak resident memory of each hostile run is checked too.
FG=$1
CORPUS=$2
DEMO=$3
. "$(dirname "$0")/../expect.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/fg_limits_XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

vm_kb=2000000
if (ulimit -v $vm_kb && "$FG" --version) >/dev/null 2>&1; then
  B=(bash -c "ulimit -v $vm_kb; exec \"\$@\"" bounded)
else # AddressSanitizer reserves terabytes of shadow memory: no address-space bound there
  echo "note: $FG does not run under ulimit -v $vm_kb; running unbounded"
  B=()
fi

# peak_below KB ARGS...: the run's maximum resident set stays under KB kilobytes (plus 64 MB in
# a sanitizer build, whose shadow memory and quarantine are not the loader's: the budget's rule
# is the same, the process around it bigger)
slack=0
if ldd "$FG" 2>/dev/null | grep -q 'libasan'; then slack=64000; fi
peak_below() {
  local cap=$(($1 + slack)) kb; shift
  [ -x /usr/bin/time ] || return 0
  kb=$(/usr/bin/time -f "%M" "${B[@]}" "$@" 2>&1 >/dev/null </dev/null | tail -1)
  if [ -n "$kb" ] && [ "$kb" -lt "$cap" ] 2>/dev/null; then
    pass=$((pass + 1))
  else
    echo "FAIL: '$*' peaked at ${kb:-?} kB, expected under $cap kB"
    fail=$((fail + 1))
  fi
}

# ---- a SNAP header far beyond its lines: 2^31 - 2 nodes over two edges -----------------------
huge=$CORPUS/snap/nodes_huge.txt
expect 0 "the header's '# Nodes: 2147483646' was set aside: 2 edge lines name at most 4 nodes" \
  "${B[@]}" "$FG" info "$huge"
expect 0 "^ +nodes +3$" "${B[@]}" "$FG" info "$huge"
expect 1 "nodes_huge.txt: the header declares 2147483646 nodes \(kept by --keep-ids\), for 2 edges: loading needs about 1.20 TB \(the graph 25.8 GB, .*\) but .* is available \(MemAvailable; --mem-limit sets another limit\)" \
  "${B[@]}" "$FG" info "$huge" --keep-ids
expect 1 "loading needs about 1.20 TB .* but --mem-limit is 1.00 GB" \
  "${B[@]}" "$FG" train "$huge" --keep-ids --mem-limit 1G --epochs 1
peak_below 200000 "$FG" info "$huge" --keep-ids

# ---- a 20M-node header: refused under --mem-limit before anything of it is allocated ----------
printf '# Nodes: 20000000\n0 1\n1 2\n' >"$T/h20m.txt"
expect 1 "h20m.txt: the header declares 20000000 nodes \(kept by --keep-ids\), for 2 edges: loading needs about 11.2 GB .* but --mem-limit is 1.00 GB" \
  "${B[@]}" "$FG" train "$T/h20m.txt" --keep-ids --mem-limit 1G --epochs 1
peak_below 200000 "$FG" train "$T/h20m.txt" --keep-ids --mem-limit 1G --epochs 1
expect 0 "best epoch 1" "${B[@]}" "$FG" train "$T/h20m.txt" --mem-limit 1G --epochs 1

# ---- a gzip stream that inflates to 200 MB of edges from ~200 kB: its growth is bounded ------
yes '1 2' | head -c 4000000 | gzip -9 >"$T/chunk.gz"
for _ in $(seq 50); do cat "$T/chunk.gz"; done >"$T/bomb.txt.gz"
expect 1 "bomb.txt.gz: line 1600001: the 1600001 edges read so far need about 64.0 MB to load \(40 bytes an edge: the edge list and the graph build\), but --mem-limit is 64.0 MB \(the size of gzip data is known only at its end" \
  "${B[@]}" "$FG" train "$T/bomb.txt.gz" --mem-limit 64M --epochs 1
peak_below 150000 "$FG" train "$T/bomb.txt.gz" --mem-limit 64M --epochs 1

# ---- sizes declared beyond the file: Matrix Market ---------------------------------------------
expect 1 "nnz_huge.mtx: line 2 declares 1000000000 entries, but the file's 68 bytes can hold at most 17" \
  "${B[@]}" "$FG" info "$CORPUS/mtx/nnz_huge.mtx"
printf '%%%%MatrixMarket matrix coordinate pattern general\n2147483647 2147483647 1\n1 2\n' \
  >"$T/rows.mtx"
expect 1 "rows.mtx: the size line declares 2147483647 nodes, for 1 edges: loading needs about" \
  "${B[@]}" "$FG" info "$T/rows.mtx"
peak_below 200000 "$FG" info "$T/rows.mtx"

# ---- --mem-limit covers loading: the OGB reader stops in Cora's feature table ----------------
expect 1 "raw/node-feat.csv.gz: line [0-9]+: the [0-9]+ rows read so far need about .* but --mem-limit is 2.00 MB" \
  "${B[@]}" "$FG" train "$DEMO" --mem-limit 2M --epochs 1

# ---- labels whose class ids are mostly unused ---------------------------------------------------
expect 1 "label_sparse/raw/node-label.csv: line 6: label 99999 makes 100000 classes \(0..99999\), but only 4 distinct labels occur among the 6 labelled nodes.*Relabel the classes 0..K-1" \
  "${B[@]}" "$FG" train "$CORPUS/ogb/label_sparse" --epochs 1
expect 1 "sparse_label.npz\[node_labels.npy\]: element 5: label 99999 makes 100000 classes" \
  "${B[@]}" "$FG" train "$CORPUS/npz/sparse_label.npz" --epochs 1
expect 0 "32 classes|classes +32" "${B[@]}" "$FG" info "$CORPUS/ogb/label_32_ok"

echo "load_limits: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
