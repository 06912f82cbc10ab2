#!/bin/sh
# make_corpus.sh -- regenerates the reader corpus in this folder: small well-formed and broken
# inputs for every reader (tests/io/test_io_corpus.c lists what each must produce). The outputs
# are committed; run this only to change them:  sh tests/corpus/make_corpus.sh
set -eu
cd "$(dirname "$0")"
C=$(pwd)

# Flip the byte at offset $2 of file $1 (xor 0xff) in place.
flip() {
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
half() { head -c $(($(wc -c < "$1") / 2)) "$1"; }

# ---- OGB node-property layout ------------------------------------------------------------
# base: 6 nodes, 7 edges, 3 features, labels 0..2, split planetoid 2/2/2
ogb() {
  d=ogb/$1
  rm -rf "$d"
  mkdir -p "$d/raw" "$d/split/planetoid"
  printf '6\n' > "$d/raw/num-node-list.csv"
  printf '7\n' > "$d/raw/num-edge-list.csv"
  printf '0,1\n1,2\n2,3\n3,4\n4,5\n5,0\n0,3\n' > "$d/raw/edge.csv"
  printf '1,0,0\n0,1,0\n0,0,1\n0.5,0.25,-1\n2,3e-1,0\n-0,1e2,7\n' > "$d/raw/node-feat.csv"
  printf '0\n1\n2\n0\n1\n2\n' > "$d/raw/node-label.csv"
  printf '0\n1\n' > "$d/split/planetoid/train.csv"
  printf '2\n3\n' > "$d/split/planetoid/valid.csv"
  printf '4\n5\n' > "$d/split/planetoid/test.csv"
}
rm -rf ogb
ogb ok
ogb ok_gz
gzip -n -9 ogb/ok_gz/raw/*.csv ogb/ok_gz/split/planetoid/*.csv
ogb no_split
rm -rf ogb/no_split/split
ogb no_feat_no_label_split
rm -rf ogb/no_feat_no_label_split/split ogb/no_feat_no_label_split/raw/node-feat.csv \
       ogb/no_feat_no_label_split/raw/node-label.csv
ogb unlabelled_ok            # -1, empty and nan labels; split nodes are labelled
printf '0\n1\n\n-1\nnan\n2.0\n' > ogb/unlabelled_ok/raw/node-label.csv
printf '0\n' > ogb/unlabelled_ok/split/planetoid/train.csv
printf '1\n' > ogb/unlabelled_ok/split/planetoid/valid.csv
printf '5\n' > ogb/unlabelled_ok/split/planetoid/test.csv
ogb crlf_ok
printf '0,1\r\n1,2\r\n2,3\r\n3,4\r\n4,5\r\n5,0\r\n0,3' > ogb/crlf_ok/raw/edge.csv
ogb two_splits
mkdir -p ogb/two_splits/split/random
cp ogb/two_splits/split/planetoid/*.csv ogb/two_splits/split/random/
printf '5\n4\n' > ogb/two_splits/split/random/train.csv
printf '0\n1\n' > ogb/two_splits/split/random/test.csv
ogb no_raw
rm -rf ogb/no_raw/raw
ogb missing_edges
rm ogb/missing_edges/raw/edge.csv
ogb edge_range
printf '0,1\n1,2\n2,3\n3,4\n4,9\n5,0\n0,3\n' > ogb/edge_range/raw/edge.csv
ogb edge_negative
printf '0,1\n1,2\n-2,3\n3,4\n4,5\n5,0\n0,3\n' > ogb/edge_negative/raw/edge.csv
ogb edge_fewer
printf '9\n' > ogb/edge_fewer/raw/num-edge-list.csv
ogb edge_more
printf '5\n' > ogb/edge_more/raw/num-edge-list.csv
ogb edge_truncated           # cut in the middle of the last line
printf '0,1\n1,2\n2,3\n3,4\n4,5\n5,0\n0,' > ogb/edge_truncated/raw/edge.csv
ogb edge_three_cols
printf '0,1\n1,2\n2,3,7\n3,4\n4,5\n5,0\n0,3\n' > ogb/edge_three_cols/raw/edge.csv
ogb edge_one_col
printf '0,1\n1,2\n2,3\n3\n4,5\n5,0\n0,3\n' > ogb/edge_one_col/raw/edge.csv
ogb edge_junk
printf '0,1\n1,2\n2,3\n3,4\n4,5x\n5,0\n0,3\n' > ogb/edge_junk/raw/edge.csv
ogb nodes_huge
printf '1000000000000\n' > ogb/nodes_huge/raw/num-node-list.csv
ogb nodes_zero
printf '0\n' > ogb/nodes_zero/raw/num-node-list.csv
ogb nodes_two_graphs
printf '3\n3\n' > ogb/nodes_two_graphs/raw/num-node-list.csv
ogb declared_huge            # 2e9 nodes declared, 6 present: fails on counts, allocates nothing big
printf '2000000000\n' > ogb/declared_huge/raw/num-node-list.csv
ogb declared_huge_labels
printf '2000000000\n' > ogb/declared_huge_labels/raw/num-node-list.csv
rm ogb/declared_huge_labels/raw/node-feat.csv
ogb declared_huge_split
printf '2000000000\n' > ogb/declared_huge_split/raw/num-node-list.csv
rm ogb/declared_huge_split/raw/node-feat.csv ogb/declared_huge_split/raw/node-label.csv
ogb feat_width
printf '1,0,0\n0,1,0\n0,0,1\n0.5,0.25\n2,3e-1,0\n-0,1e2,7\n' > ogb/feat_width/raw/node-feat.csv
ogb feat_nan
printf '1,0,0\n0,1,0\n0,0,1\n0.5,nan,-1\n2,3e-1,0\n-0,1e2,7\n' > ogb/feat_nan/raw/node-feat.csv
ogb feat_inf
printf '1,0,0\n0,1,0\n0,0,1\n0.5,0.25,-1\n2,3e-1,0\n-0,1e2,1e39\n' > ogb/feat_inf/raw/node-feat.csv
ogb feat_junk
printf '1,0,0\n0,1,0\n0,,1\n0.5,0.25,-1\n2,3e-1,0\n-0,1e2,7\n' > ogb/feat_junk/raw/node-feat.csv
ogb feat_rows
printf '1,0,0\n0,1,0\n0,0,1\n0.5,0.25,-1\n2,3e-1,0\n' > ogb/feat_rows/raw/node-feat.csv
ogb label_negative
printf '0\n1\n2\n-2\n1\n2\n' > ogb/label_negative/raw/node-label.csv
ogb label_fraction
printf '0\n1\n2\n0\n1.5\n2\n' > ogb/label_fraction/raw/node-label.csv
ogb label_huge
printf '0\n1\n2\n0\n1\n5000000\n' > ogb/label_huge/raw/node-label.csv
ogb label_sparse             # one stray label: 100,000 class ids, of which 4 occur
printf '0\n1\n2\n0\n1\n99999\n' > ogb/label_sparse/raw/node-label.csv
ogb label_33                 # 33 class ids, 4 occur: refused (more than 32, mostly unused)
printf '0\n1\n2\n0\n1\n32\n' > ogb/label_33/raw/node-label.csv
ogb label_32_ok              # 32 class ids, 4 occur: small label sets are taken as they are
printf '0\n1\n2\n0\n1\n31\n' > ogb/label_32_ok/raw/node-label.csv
ogb label_junk
printf '0\n1\ncat\n0\n1\n2\n' > ogb/label_junk/raw/node-label.csv
ogb label_two_cols
printf '0\n1\n2,1\n0\n1\n2\n' > ogb/label_two_cols/raw/node-label.csv
ogb label_rows
printf '0\n1\n2\n0\n1\n2\n1\n' > ogb/label_rows/raw/node-label.csv
ogb split_dup
printf '0\n1\n0\n' > ogb/split_dup/split/planetoid/train.csv
ogb split_overlap
printf '4\n1\n' > ogb/split_overlap/split/planetoid/test.csv
ogb split_range
printf '2\n6\n' > ogb/split_range/split/planetoid/valid.csv
ogb split_unlabelled
printf '0\n1\n\n0\n1\n2\n' > ogb/split_unlabelled/raw/node-label.csv
ogb split_no_labels
rm ogb/split_no_labels/raw/node-label.csv
ogb split_missing_file
rm ogb/split_missing_file/split/planetoid/valid.csv
ogb nul_byte
printf '0,1\n1,2\n2,\0003\n3,4\n4,5\n5,0\n0,3\n' > ogb/nul_byte/raw/edge.csv
# gzip damage on a longer edge file (600 edges) so that the middle is compressed data
for v in gz_corrupt gz_truncated; do
  ogb $v
  awk 'BEGIN { for (i = 0; i < 600; i++) printf "%d,%d\n", i % 6, (i * 7 + 1 + int(i / 6)) % 6 }' \
    > ogb/$v/raw/edge.csv
  printf '600\n' > ogb/$v/raw/num-edge-list.csv
  gzip -n -9 ogb/$v/raw/edge.csv
done
s=$(wc -c < ogb/gz_corrupt/raw/edge.csv.gz)
flip ogb/gz_corrupt/raw/edge.csv.gz $((s / 2))
flip ogb/gz_corrupt/raw/edge.csv.gz $((s / 2 + 1))
half ogb/gz_truncated/raw/edge.csv.gz > ogb/gz_truncated/raw/x && \
  mv ogb/gz_truncated/raw/x ogb/gz_truncated/raw/edge.csv.gz

# multi-label targets (several label columns: --task multilabel): 3 tasks of 0/1, an empty field
# and nan missing; rows of the wrong width, values other than 0/1, a split node with none
ogb ml_ok
printf '1,0,1\n0,,1\n1,1,nan\n0,0,0\n1.0,0,1\nNaN, 1 ,0\n' > ogb/ml_ok/raw/node-label.csv
ogb ml_few_cols
printf '1,0,1\n0,0,1\n1,1,0\n0,1\n1,0,1\n0,1,0\n' > ogb/ml_few_cols/raw/node-label.csv
ogb ml_many_cols
printf '1,0,1\n0,0,1,1\n1,1,0\n0,1,0\n1,0,1\n0,1,0\n' > ogb/ml_many_cols/raw/node-label.csv
ogb ml_value_two
printf '1,0,1\n0,2,1\n1,1,0\n0,1,0\n1,0,1\n0,1,0\n' > ogb/ml_value_two/raw/node-label.csv
ogb ml_junk
printf '1,0,1\n0,0,1\n1,yes,0\n0,1,0\n1,0,1\n0,1,0\n' > ogb/ml_junk/raw/node-label.csv
ogb ml_negative
printf '1,0,1\n0,0,1\n1,1,0\n0,1,0\n1,-1,1\n0,1,0\n' > ogb/ml_negative/raw/node-label.csv
ogb ml_split_missing
printf '1,0,1\n0,0,1\n,nan,\n0,1,0\n1,0,1\n0,1,0\n' > ogb/ml_split_missing/raw/node-label.csv
ogb ml_rows
printf '1,0,1\n0,0,1\n1,1,0\n0,1,0\n1,0,1\n0,1,0\n1,1,1\n' > ogb/ml_rows/raw/node-label.csv

# ---- csv tables (fg_read_csv_mem) --------------------------------------------------------
rm -rf csv && mkdir csv
printf '1,2,3\n4.5,-6,7e2\n' > csv/ok.csv
printf '1,2,3\n4.5,-6\n' > csv/short_row.csv
printf '1,2,3\n4.5,-6,7,8\n' > csv/long_row.csv
printf '1,2,3\n4.5,-inf,7\n' > csv/inf.csv
printf '1,2,3\n4.5,0x,7\n' > csv/junk.csv

# ---- SNAP edge lists -----------------------------------------------------------------------
rm -rf snap && mkdir snap
printf '# Directed graph: test\n# FromNodeId\tToNodeId\n0\t1\n1 2\n\n%% a comment\n  2   3  17 1.5\n3\t0\r\n10 3' \
  > snap/ok.txt
gzip -n -9 -c snap/ok.txt > snap/ok.txt.gz
printf '0 1\nfoo bar\n' > snap/junk_line.txt
printf '0 1\n1 2\n7\n' > snap/one_number.txt
printf '0 1\n1 2x\n' > snap/junk_suffix.txt
printf '0 1\n1 -2\n' > snap/negative.txt
printf '0 1\n1 2147483647\n' > snap/huge_id.txt
printf '0 1\n1 99999999999999999999\n' > snap/overflow_id.txt
printf '0,1\n' > snap/commas.txt
# a header declaring far more nodes than its lines can name (the reader keeps the count; the
# loader sets it aside, or with --keep-ids weighs it against the memory limit)
printf '# Nodes: 2147483646\n0 1\n1 2\n' > snap/nodes_huge.txt
printf '# only comments\n\n' > snap/empty.txt
printf '0 1\n\000\000\000\n' > snap/nul.txt
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%d %d\n", i, (i * 7919) % 3000 }' > snap/big.txt
gzip -n -9 -c snap/big.txt > snap/corrupt.txt.gz
s=$(wc -c < snap/corrupt.txt.gz)
flip snap/corrupt.txt.gz $((s / 2))
flip snap/corrupt.txt.gz $((s / 2 + 3))
gzip -n -9 -c snap/big.txt > snap/full.txt.gz
half snap/full.txt.gz > snap/truncated.txt.gz
rm snap/big.txt snap/full.txt.gz
# a gzip whose compressed data is intact but whose CRC-32 trailer is wrong
gzip -n -9 -c snap/ok.txt > snap/bad_crc.txt.gz
s=$(wc -c < snap/bad_crc.txt.gz)
flip snap/bad_crc.txt.gz $((s - 6))

# ---- Matrix Market -------------------------------------------------------------------------
rm -rf mtx && mkdir mtx
printf '%%%%MatrixMarket matrix coordinate pattern symmetric\n%% comment\n%%\n4 4 4\n2 1\n3 1\n4 3\n4 4\n' \
  > mtx/ok_symmetric.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 0.5\n2 3 -1e3\n3 1 7\n' \
  > mtx/ok_real.mtx
gzip -n -9 -c mtx/ok_real.mtx > mtx/ok_real.mtx.gz
printf '%%%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 5\n3 3 -2\n' \
  > mtx/ok_integer.mtx
printf '%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n' > mtx/bad_banner.mtx
printf '%%%%MatrixMarket tensor coordinate pattern general\n3 3 1\n1 2\n' > mtx/bad_object.mtx
printf '%%%%MatrixMarket matrix coordinate pattern upper\n3 3 1\n1 2\n' > mtx/bad_symmetry.mtx
printf '%%%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 1\n2 1\n' > mtx/skew.mtx
printf '%%%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 2 1 0\n' > mtx/complex.mtx
printf '%%%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n' > mtx/array.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n' > mtx/nonsquare.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n' > mtx/nnz_fewer.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n2 3\n' > mtx/nnz_more.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n4 3\n' > mtx/index_range.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n0 3\n' > mtx/index_zero.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 0.5\n2 3\n' \
  > mtx/missing_value.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n%% no size line\n' > mtx/no_size.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3\n1 2\n' > mtx/bad_size.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n1000000000000 1000000000000 1\n1 2\n' \
  > mtx/huge_size.mtx
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 x\n' > mtx/junk_entry.mtx
# more entries declared than the file's bytes can hold (4 bytes an entry at least)
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 1000000000\n1 2\n' \
  > mtx/nnz_huge.mtx
gzip -n -9 -c mtx/nnz_huge.mtx > mtx/nnz_huge.mtx.gz
printf '' > mtx/empty.mtx
gzip -n -9 -c mtx/ok_symmetric.mtx > mtx/full.mtx.gz
head -c 30 mtx/full.mtx.gz > mtx/truncated.mtx.gz
rm mtx/full.mtx.gz

# ---- calibration files (fg_calibration_parse; tests/plan/test_plan.c) -----------------------
rm -rf calib && mkdir calib
# what `fullgraph bench --calibrate` wrote on the 2-core test VM (1 rank, 1 thread)
cat > calib/ok.txt <<'EOF'
# fullgraph calibration (fullgraph bench --calibrate); seconds and bytes
# SpMM s = spmm_nnz_f nnz f + spmm_nnz_lines nnz lines(cache_bytes)
#   + spmm_nnz_llc_lines nnz lines(llc_bytes) + spmm_nnz nnz + spmm_rows_f rows f
#   + spmm_cols_f cols f, where lines(C) = ceil(f / 16) (1 - C / x) for
#   x = 64 ceil(f / 16) cols > C, else 0
# ring all-reduce of M bytes over G ranks = 2 (G-1) alpha + 2 beta M (G-1)/G
# dropout_elem, softmax_elem: seconds per element of a pass
version 1
spmm_nnz_f 2.96167953e-11
spmm_nnz_lines 2.50043098e-09
spmm_nnz_llc_lines 0
spmm_nnz 1.35243489e-09
spmm_rows_f 8.41470899e-11
spmm_cols_f 5.156509e-13
cache_bytes 2097152
llc_bytes 272629760
gemm_flops 2.34702613e+10
stream_bytes 1.63410144e+10
dropout_elem 1.30267191e-09
softmax_elem 6.80726449e-09
alpha_intra 3e-06
beta_intra 2e-10
alpha_inter 2e-05
beta_inter 1e-10
threads 1
ranks 1
ranks_per_node 0
EOF
printf 'version 1\ngemm_flops 5e10\n' > calib/ok_minimal.txt
printf '# comment\r\n\r\n  version\t1 \r\n\tspmm_nnz   2.5e-9\r\nthreads 4\r\n\n' > calib/ok_crlf.txt
printf 'version 1\n\033[2J\033[31mgemm_flops 1e10\n' > calib/escape_key.txt
printf 'version 1\nstream_bytes \033]0;title\007\n' > calib/escape_value.txt
printf 'version 1\nalpha_intra 1e-6 \033[1A\033[K\233\n' > calib/escape_line.txt
printf 'version 1\nbeta_intra -2\n' > calib/negative.txt
printf 'version 1\ngemm_flops nan\n' > calib/nan.txt
printf 'version 1\nstream_bytes inf\n' > calib/inf.txt
printf 'version 1\ngemm_flops 0\n' > calib/zero_rate.txt
printf 'version 1\nspmm_nnz 1e300\n' > calib/huge.txt
printf 'version 1\nthreads 2.5\n' > calib/fraction.txt
printf 'version 1\nranks 4\nranks 8\n' > calib/duplicate.txt
printf 'spmm_nnz 1e-9\n' > calib/no_version.txt
printf 'version 2\nspmm_nnz 1e-9\n' > calib/version2.txt
printf 'version 1\nwarp_speed 3\n' > calib/unknown_key.txt
printf 'version 1\n' > calib/long_line.txt
head -c 600 /dev/zero | tr '\000' 'x' >> calib/long_line.txt
printf 'version 1\ngemm\000flops 1\n' > calib/nul.txt

# ---- NumPy (.npy, .npz): written by make_corpus.c ------------------------------------------
cc -std=c11 -O1 -o /tmp/fg_make_corpus make_corpus.c -lz
/tmp/fg_make_corpus "$C"
rm -f /tmp/fg_make_corpus
echo "corpus written to $C"
