/* test_io_corpus.c -- every reader against the committed corpus (tests/corpus, made by
 * make_corpus.sh): each broken file must fail with the exact status and a message naming the
 * file and the line or byte offset; each good file must give exactly the expected contents.
 * Path-based readers and their _mem variants are both checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fg_io.h"
#include "io/fg_io_internal.h"
#include "testutil.h"

typedef enum { R_OGB, R_NPZ, R_NPY, R_MTX, R_SNAP, R_CSV, R_REDDIT } reader_kind;

typedef struct corpus_case {
  reader_kind r;
  const char *rel;   /* under FG_CORPUS */
  int arg;           /* npz: split index; csv: width */
  const char *split; /* ogb: split name */
  fg_status want;
  const char *msg;   /* substring of the message (file name and line/offset included) */
} corpus_case;

static const corpus_case cases[] = {
    /* ---- OGB layout ---- */
    {R_OGB, "ogb/no_raw", 0, NULL, FG_ERR_IO, "no_raw: no raw/ folder"},
    {R_OGB, "ogb/missing_edges", 0, NULL, FG_ERR_IO, "missing_edges: missing raw/edge.csv[.gz]"},
    {R_OGB, "ogb/edge_range", 0, NULL, FG_ERR_FORMAT,
     "edge_range/raw/edge.csv: line 5: node id 9 out of range [0, 6)"},
    {R_OGB, "ogb/edge_negative", 0, NULL, FG_ERR_FORMAT,
     "raw/edge.csv: line 3: node id -2 out of range [0, 6)"},
    {R_OGB, "ogb/edge_fewer", 0, NULL, FG_ERR_FORMAT, "raw/edge.csv: 7 rows, expected 9"},
    {R_OGB, "ogb/edge_more", 0, NULL, FG_ERR_FORMAT,
     "raw/edge.csv: line 6: more rows than the 5 expected"},
    {R_OGB, "ogb/edge_truncated", 0, NULL, FG_ERR_FORMAT,
     "raw/edge.csv: line 7, column 2: '(empty)' is not an integer"},
    {R_OGB, "ogb/edge_three_cols", 0, NULL, FG_ERR_FORMAT,
     "raw/edge.csv: line 3: expected 2 values, found 3"},
    {R_OGB, "ogb/edge_one_col", 0, NULL, FG_ERR_FORMAT,
     "raw/edge.csv: line 4: expected 2 values, found 1"},
    {R_OGB, "ogb/edge_junk", 0, NULL, FG_ERR_FORMAT,
     "raw/edge.csv: line 5, column 2: '5x' is not an integer"},
    {R_OGB, "ogb/nul_byte", 0, NULL, FG_ERR_FORMAT, "raw/edge.csv: line 3: contains a NUL byte"},
    {R_OGB, "ogb/nodes_huge", 0, NULL, FG_ERR_FORMAT,
     "raw/num-node-list.csv: line 1: number of nodes 1000000000000 out of range [0, 2147483648)"},
    {R_OGB, "ogb/nodes_zero", 0, NULL, FG_ERR_FORMAT, "num-node-list.csv: the graph has no nodes"},
    {R_OGB, "ogb/nodes_two_graphs", 0, NULL, FG_ERR_UNSUPPORTED,
     "num-node-list.csv: 2 lines (a dataset of several graphs)"},
    {R_OGB, "ogb/declared_huge", 0, NULL, FG_ERR_FORMAT,
     "declared_huge/raw/node-feat.csv: 6 rows, expected 2000000000"},
    {R_OGB, "ogb/declared_huge_labels", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: 6 labels, expected one per node (2000000000)"},
    {R_OGB, "ogb/declared_huge_split", 0, NULL, FG_ERR_FORMAT,
     "train.csv: line 1: node 0 is in the train split but has no label (there is no node-label"},
    {R_OGB, "ogb/feat_width", 0, NULL, FG_ERR_FORMAT,
     "raw/node-feat.csv: line 4: expected 3 values, found 2"},
    {R_OGB, "ogb/feat_nan", 0, NULL, FG_ERR_NUMERIC,
     "raw/node-feat.csv: line 4, column 2: value 'nan' is not finite"},
    {R_OGB, "ogb/feat_inf", 0, NULL, FG_ERR_NUMERIC,
     "raw/node-feat.csv: line 6, column 3: value '1e39' is not finite"},
    {R_OGB, "ogb/feat_junk", 0, NULL, FG_ERR_FORMAT,
     "raw/node-feat.csv: line 3, column 2: '(empty)' is not a number"},
    {R_OGB, "ogb/feat_rows", 0, NULL, FG_ERR_FORMAT, "raw/node-feat.csv: 5 rows, expected 6"},
    {R_OGB, "ogb/label_negative", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: line 4: label -2 out of range"},
    {R_OGB, "ogb/label_fraction", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: line 5: label '1.5' is not an integer"},
    {R_OGB, "ogb/label_huge", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: line 6: label 5000000 out of range"},
    {R_OGB, "ogb/label_sparse", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: line 6: label 99999 makes 100000 classes (0..99999), but only 4 "
     "distinct labels occur among the 6 labelled nodes: more than half of the class ids would "
     "never be used"},
    {R_OGB, "ogb/label_33", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: line 6: label 32 makes 33 classes (0..32), but only 4 distinct"},
    {R_OGB, "ogb/label_32_ok", 0, NULL, FG_OK, NULL},
    {R_OGB, "ogb/label_junk", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: line 3: label 'cat' is not a number"},
    {R_OGB, "ogb/label_two_cols", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: line 3: several label columns (2), but line 1 has one"},
    {R_OGB, "ogb/label_rows", 0, NULL, FG_ERR_FORMAT,
     "raw/node-label.csv: line 7: more labels than the 6 nodes"},
    {R_OGB, "ogb/split_dup", 0, NULL, FG_ERR_FORMAT,
     "split/planetoid/train.csv: line 3: node 0 is already in the train split (listed twice)"},
    {R_OGB, "ogb/split_overlap", 0, NULL, FG_ERR_FORMAT,
     "split/planetoid/test.csv: line 2: node 1 is already in the train split"},
    {R_OGB, "ogb/split_range", 0, NULL, FG_ERR_FORMAT,
     "split/planetoid/valid.csv: line 2: node id 6 out of range [0, 6)"},
    {R_OGB, "ogb/split_unlabelled", 0, NULL, FG_ERR_FORMAT,
     "split/planetoid/valid.csv: line 1: node 2 is in the valid split but has no label"},
    {R_OGB, "ogb/split_no_labels", 0, NULL, FG_ERR_FORMAT,
     "train.csv: line 1: node 0 is in the train split but has no label (there is no node-label"},
    {R_OGB, "ogb/split_missing_file", 0, NULL, FG_ERR_IO,
     "split_missing_file: missing split/planetoid/valid.csv[.gz]"},
    {R_OGB, "ogb/two_splits", 0, NULL, FG_ERR_INVALID_ARG,
     "two_splits/split: several splits (planetoid, random)"},
    {R_OGB, "ogb/two_splits", 0, "nope", FG_ERR_INVALID_ARG,
     "no split named 'nope' (found: planetoid, random)"},
    {R_OGB, "ogb/ok", 0, "nope", FG_ERR_INVALID_ARG, "no split named 'nope' (found: planetoid)"},
    {R_OGB, "ogb/gz_corrupt", 0, NULL, FG_ERR_FORMAT, "raw/edge.csv.gz: corrupt gzip data"},
    {R_OGB, "ogb/gz_truncated", 0, NULL, FG_ERR_FORMAT, "raw/edge.csv.gz: truncated gzip data"},
    {R_OGB, "ogb/ok", 0, NULL, FG_OK, NULL},
    {R_OGB, "ogb/ok_gz", 0, NULL, FG_OK, NULL},
    {R_OGB, "ogb/crlf_ok", 0, NULL, FG_OK, NULL},
    {R_OGB, "ogb/unlabelled_ok", 0, NULL, FG_OK, NULL},
    {R_OGB, "ogb/two_splits", 0, "random", FG_OK, NULL},
    {R_OGB, "ogb/no_split", 0, NULL, FG_OK, NULL},
    {R_OGB, "ogb/no_feat_no_label_split", 0, NULL, FG_OK, NULL},

    /* ---- csv tables ---- */
    {R_CSV, "csv/ok.csv", 3, NULL, FG_OK, NULL},
    {R_CSV, "csv/ok.csv", -1, NULL, FG_OK, NULL},
    {R_CSV, "csv/ok.csv", 4, NULL, FG_ERR_FORMAT, "ok.csv: line 1: expected 4 values, found 3"},
    {R_CSV, "csv/short_row.csv", -1, NULL, FG_ERR_FORMAT,
     "short_row.csv: line 2: expected 3 values, found 2"},
    {R_CSV, "csv/long_row.csv", -1, NULL, FG_ERR_FORMAT,
     "long_row.csv: line 2: expected 3 values, found 4"},
    {R_CSV, "csv/inf.csv", -1, NULL, FG_ERR_NUMERIC,
     "inf.csv: line 2, column 2: value '-inf' is not finite"},
    {R_CSV, "csv/junk.csv", -1, NULL, FG_ERR_FORMAT,
     "junk.csv: line 2, column 2: '0x' is not a number"},

    /* ---- SNAP ---- */
    {R_SNAP, "snap/ok.txt", 0, NULL, FG_OK, NULL},
    {R_SNAP, "snap/ok.txt.gz", 0, NULL, FG_OK, NULL},
    {R_SNAP, "snap/nodes_huge.txt", 0, NULL, FG_OK, NULL},
    {R_SNAP, "snap/junk_line.txt", 0, NULL, FG_ERR_FORMAT,
     "junk_line.txt: line 2: expected two node ids 'u v' but found 'foo'"},
    {R_SNAP, "snap/one_number.txt", 0, NULL, FG_ERR_FORMAT,
     "one_number.txt: line 3: expected two node ids 'u v' but found '(end of line)'"},
    {R_SNAP, "snap/junk_suffix.txt", 0, NULL, FG_ERR_FORMAT,
     "junk_suffix.txt: line 2: expected two node ids 'u v' but found '2x'"},
    {R_SNAP, "snap/commas.txt", 0, NULL, FG_ERR_FORMAT, "commas.txt: line 1: expected two node "
     "ids 'u v' but found '0,1'"},
    {R_SNAP, "snap/negative.txt", 0, NULL, FG_ERR_FORMAT,
     "negative.txt: line 2: negative node id -2"},
    {R_SNAP, "snap/huge_id.txt", 0, NULL, FG_ERR_FORMAT,
     "huge_id.txt: line 2: node id 2147483647 too large (ids must be < 2147483647)"},
    {R_SNAP, "snap/overflow_id.txt", 0, NULL, FG_ERR_FORMAT,
     "overflow_id.txt: line 2: node id 99999999999999999999 too large"},
    {R_SNAP, "snap/empty.txt", 0, NULL, FG_ERR_FORMAT, "empty.txt: no edges found"},
    {R_SNAP, "snap/nul.txt", 0, NULL, FG_ERR_FORMAT, "nul.txt: line 2: contains a NUL byte"},
    {R_SNAP, "snap/corrupt.txt.gz", 0, NULL, FG_ERR_FORMAT, "corrupt.txt.gz: corrupt gzip data"},
    {R_SNAP, "snap/bad_crc.txt.gz", 0, NULL, FG_ERR_FORMAT, "bad_crc.txt.gz: corrupt gzip data"},
    {R_SNAP, "snap/truncated.txt.gz", 0, NULL, FG_ERR_FORMAT,
     "truncated.txt.gz: truncated gzip data"},

    /* ---- Matrix Market ---- */
    {R_MTX, "mtx/ok_symmetric.mtx", 0, NULL, FG_OK, NULL},
    {R_MTX, "mtx/ok_real.mtx", 0, NULL, FG_OK, NULL},
    {R_MTX, "mtx/ok_real.mtx.gz", 0, NULL, FG_OK, NULL},
    {R_MTX, "mtx/ok_integer.mtx", 0, NULL, FG_OK, NULL},
    {R_MTX, "mtx/bad_banner.mtx", 0, NULL, FG_ERR_FORMAT,
     "bad_banner.mtx: line 1: bad banner '%MatrixMarket'"},
    {R_MTX, "mtx/bad_object.mtx", 0, NULL, FG_ERR_FORMAT,
     "bad_object.mtx: line 1: bad banner: object 'tensor'"},
    {R_MTX, "mtx/bad_symmetry.mtx", 0, NULL, FG_ERR_FORMAT,
     "bad_symmetry.mtx: line 1: bad banner: symmetry 'upper'"},
    {R_MTX, "mtx/skew.mtx", 0, NULL, FG_ERR_UNSUPPORTED,
     "skew.mtx: line 1: skew-symmetric matrices are not supported"},
    {R_MTX, "mtx/complex.mtx", 0, NULL, FG_ERR_UNSUPPORTED,
     "complex.mtx: line 1: complex matrices are not supported"},
    {R_MTX, "mtx/array.mtx", 0, NULL, FG_ERR_UNSUPPORTED,
     "array.mtx: line 1: dense 'array' Matrix Market files are not supported"},
    {R_MTX, "mtx/nonsquare.mtx", 0, NULL, FG_ERR_UNSUPPORTED,
     "nonsquare.mtx: line 2: the matrix is 3 x 4"},
    {R_MTX, "mtx/nnz_fewer.mtx", 0, NULL, FG_ERR_FORMAT,
     "nnz_fewer.mtx: 2 entries, but line 2 declares 3"},
    {R_MTX, "mtx/nnz_more.mtx", 0, NULL, FG_ERR_FORMAT,
     "nnz_more.mtx: line 4: more entries than the 1 declared on line 2"},
    {R_MTX, "mtx/index_range.mtx", 0, NULL, FG_ERR_FORMAT,
     "index_range.mtx: line 4: row index 4 out of range [1, 3]"},
    {R_MTX, "mtx/index_zero.mtx", 0, NULL, FG_ERR_FORMAT,
     "index_zero.mtx: line 4: row index 0 out of range [1, 3]"},
    {R_MTX, "mtx/missing_value.mtx", 0, NULL, FG_ERR_FORMAT,
     "missing_value.mtx: line 4: expected a real value but found '(end of line)'"},
    {R_MTX, "mtx/no_size.mtx", 0, NULL, FG_ERR_FORMAT,
     "no_size.mtx: line 3: end of file before the size line"},
    {R_MTX, "mtx/bad_size.mtx", 0, NULL, FG_ERR_FORMAT, "bad_size.mtx: line 2: bad size line"},
    {R_MTX, "mtx/huge_size.mtx", 0, NULL, FG_ERR_FORMAT,
     "huge_size.mtx: line 2: number of nodes 1000000000000 out of range"},
    {R_MTX, "mtx/junk_entry.mtx", 0, NULL, FG_ERR_FORMAT,
     "junk_entry.mtx: line 3: expected 'row column' but found 'x'"},
    {R_MTX, "mtx/empty.mtx", 0, NULL, FG_ERR_FORMAT, "empty.mtx: empty file"},
    {R_MTX, "mtx/nnz_huge.mtx", 0, NULL, FG_ERR_FORMAT,
     "nnz_huge.mtx: line 2 declares 1000000000 entries, but the file's 68 bytes can hold at "
     "most 17 (an entry takes 4 bytes or more)"},
    {R_MTX, "mtx/nnz_huge.mtx.gz", 0, NULL, FG_ERR_FORMAT,
     "nnz_huge.mtx.gz: line 2 declares 1000000000 entries, but 78 bytes of gzip data (which "
     "inflate to at most 81520) can hold at most 20380"},
    {R_MTX, "mtx/truncated.mtx.gz", 0, NULL, FG_ERR_FORMAT,
     "truncated.mtx.gz: truncated gzip data"},

    /* ---- .npy edge arrays ---- */
    {R_NPY, "npy/ok_i64.npy", 0, NULL, FG_OK, NULL},
    {R_NPY, "npy/ok_i4_fortran.npy", 0, NULL, FG_OK, NULL},
    {R_NPY, "npy/ok_v3.npy", 0, NULL, FG_OK, NULL},
    {R_NPY, "npy/ok_u1_v2.npy", 0, NULL, FG_OK, NULL},
    {R_NPY, "npy/bad_magic.npy", 0, NULL, FG_ERR_FORMAT, "bad_magic.npy: byte 0: bad magic"},
    {R_NPY, "npy/trunc_header.npy", 0, NULL, FG_ERR_FORMAT,
     "trunc_header.npy: truncated .npy: header of 118 bytes at offset 10, but the file has 40"},
    {R_NPY, "npy/trunc_data.npy", 0, NULL, FG_ERR_FORMAT,
     "trunc_data.npy: truncated .npy data: shape needs 64 bytes from offset 128, only 59"},
    {R_NPY, "npy/huge_shape.npy", 0, NULL, FG_ERR_FORMAT,
     "huge_shape.npy: truncated .npy data: shape needs 16000000000000 bytes from offset 128"},
    {R_NPY, "npy/overflow_shape.npy", 0, NULL, FG_ERR_FORMAT,
     "overflow_shape.npy: .npy shape overflows"},
    {R_NPY, "npy/trailing.npy", 0, NULL, FG_ERR_FORMAT,
     "trailing.npy: 3 unexpected bytes after the .npy data (which ends at offset 192)"},
    {R_NPY, "npy/version4.npy", 0, NULL, FG_ERR_UNSUPPORTED,
     "version4.npy: byte 6: .npy format version 4.0"},
    {R_NPY, "npy/big_endian.npy", 0, NULL, FG_ERR_UNSUPPORTED,
     "big_endian.npy: big-endian dtype '>i8' is not supported"},
    {R_NPY, "npy/float16.npy", 0, NULL, FG_ERR_FORMAT,
     "float16.npy: an edge array must hold integers, got dtype '<f2'"},
    {R_NPY, "npy/object.npy", 0, NULL, FG_ERR_UNSUPPORTED,
     "object.npy: object arrays (dtype '|O')"},
    {R_NPY, "npy/unicode.npy", 0, NULL, FG_ERR_UNSUPPORTED,
     "unicode.npy: string arrays (dtype '<U3')"},
    {R_NPY, "npy/structured.npy", 0, NULL, FG_ERR_UNSUPPORTED,
     "structured.npy: structured dtypes"},
    {R_NPY, "npy/unknown_key.npy", 0, NULL, FG_ERR_FORMAT,
     "unknown_key.npy: byte 68: bad .npy header: unknown key 'extra'"},
    {R_NPY, "npy/missing_shape.npy", 0, NULL, FG_ERR_FORMAT,
     "missing_shape.npy: bad .npy header: missing 'shape'"},
    {R_NPY, "npy/bad_bool.npy", 0, NULL, FG_ERR_FORMAT,
     "bad_bool.npy: byte 44: bad .npy header: fortran_order must be True or False"},
    {R_NPY, "npy/float_edges.npy", 0, NULL, FG_ERR_FORMAT,
     "float_edges.npy: an edge array must hold integers, got dtype '<f4'"},
    {R_NPY, "npy/shape3.npy", 0, NULL, FG_ERR_FORMAT,
     "shape3.npy: an edge array must have shape (E, 2)"},
    {R_NPY, "npy/negative_id.npy", 0, NULL, FG_ERR_FORMAT,
     "negative_id.npy: edge 1: node id -3 out of range"},
    {R_NPY, "npy/huge_id.npy", 0, NULL, FG_ERR_FORMAT,
     "huge_id.npy: edge 0: node id 2147483647 out of range [0, 2147483647)"},

    /* ---- .npz ---- */
    {R_NPZ, "npz/ok_csr.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "npz/ok_csr_deflate.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "npz/ok_csr_zip64.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "npz/ok_attr_matrix.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "npz/ok_dense.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "npz/ok_dense.npz", 1, NULL, FG_OK, NULL},
    {R_NPZ, "npz/ok_dense_1d.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "npz/ok_dense.npz", 2, NULL, FG_ERR_INVALID_ARG,
     "ok_dense.npz[train_masks.npy]: split index 2 out of range [0, 2)"},
    {R_NPZ, "npz/ok_dense.npz", -1, NULL, FG_ERR_INVALID_ARG, "split index -1 out of range"},
    {R_NPZ, "npz/ok_dense_1d.npz", 1, NULL, FG_ERR_INVALID_ARG,
     "split index 1 out of range [0, 1)"},
    {R_NPZ, "npz/bad_crc.npz", 0, NULL, FG_ERR_FORMAT,
     "bad_crc.npz: member 'adj_indices.npy': CRC-32 mismatch"},
    {R_NPZ, "npz/flipped_stored.npz", 0, NULL, FG_ERR_FORMAT,
     "flipped_stored.npz: member 'adj_indices.npy': CRC-32 mismatch"},
    {R_NPZ, "npz/corrupt_deflate.npz", 0, NULL, FG_ERR_FORMAT,
     "corrupt_deflate.npz: member 'adj_indices.npy': CRC-32 mismatch"},
    {R_NPZ, "npz/bad_deflate_block.npz", 0, NULL, FG_ERR_FORMAT,
     "bad_deflate_block.npz: member 'adj_indices.npy': corrupt deflate data near byte 171"},
    {R_NPZ, "npz/dense_corrupt.npz", 0, NULL, FG_ERR_FORMAT,
     "dense_corrupt.npz: member 'edges.npy': CRC-32 mismatch"},
    {R_NPZ, "npz/method_bzip2.npz", 0, NULL, FG_ERR_UNSUPPORTED,
     "method_bzip2.npz: member 'adj_shape.npy': compression method 12 is not supported"},
    {R_NPZ, "npz/bomb.npz", 0, NULL, FG_ERR_FORMAT,
     "bomb.npz: member 'labels.npy' claims 4294967280 bytes from 73 compressed bytes"},
    {R_NPZ, "npz/missing_shape.npz", 0, NULL, FG_ERR_FORMAT,
     "missing_shape.npz: member adj_shape.npy is missing"},
    {R_NPZ, "npz/missing_test_mask.npz", 0, NULL, FG_ERR_FORMAT,
     "missing_test_mask.npz: member test_masks.npy is missing"},
    {R_NPZ, "npz/unknown_layout.npz", 0, NULL, FG_ERR_FORMAT,
     "unknown_layout.npz: unknown .npz layout (expected adj_indptr/adj_indices/adj_shape or "
     "edges/node_features/node_labels, or scipy.sparse's format/shape/indptr/indices or "
     "format/shape/row/col); members: foo.npy, bar.npy"},
    {R_NPZ, "npz/bad_indptr.npz", 0, NULL, FG_ERR_FORMAT,
     "bad_indptr.npz[adj_indptr.npy]: element 2 (1) is smaller than element 1 (2)"},
    {R_NPZ, "npz/adj_index_range.npz", 0, NULL, FG_ERR_FORMAT,
     "adj_index_range.npz[adj_indices.npy]: element 3: node id 5 out of range [0, 5)"},
    {R_NPZ, "npz/bad_label.npz", 0, NULL, FG_ERR_FORMAT,
     "bad_label.npz[labels.npy]: element 4: label -5 out of range"},
    {R_NPZ, "npz/nan_attr.npz", 0, NULL, FG_ERR_NUMERIC,
     "nan_attr.npz[attr_data.npy]: element 2: value nan is not finite"},
    {R_NPZ, "npz/inf_features.npz", 0, NULL, FG_ERR_NUMERIC,
     "inf_features.npz[node_features.npy]: row 3, column 1: value inf is not finite"},
    {R_NPZ, "npz/edge_range.npz", 0, NULL, FG_ERR_FORMAT,
     "edge_range.npz[edges.npy]: edge 6: node id 6 out of range [0, 6)"},
    {R_NPZ, "npz/split_overlap.npz", 1, NULL, FG_ERR_FORMAT,
     "split_overlap.npz[test_masks.npy]: node 0 of split 1 is also in val_masks"},
    {R_NPZ, "npz/split_overlap.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "npz/sparse_label.npz", 0, NULL, FG_ERR_FORMAT,
     "sparse_label.npz[node_labels.npy]: element 5: label 99999 makes 100000 classes (0..99999), "
     "but only 4 distinct labels occur among the 6 labelled nodes"},
    {R_NPZ, "npz/split_unlabelled.npz", 0, NULL, FG_ERR_FORMAT,
     "split_unlabelled.npz[train_masks.npy]: node 0 of split 0 has no label"},
    {R_NPZ, "npz/mask_shape.npz", 0, NULL, FG_ERR_FORMAT,
     "mask_shape.npz[train_masks.npy]: expected shape (K, 6) or (6,)"},
    {R_NPZ, "npz/huge_attr_shape.npz", 0, NULL, FG_ERR_MEMLIMIT,
     "[attr_shape.npy]: a dense 5 x 1073741824 feature matrix (21474836480 bytes) needs 21.5 GB, "
     "21.5 GB in all with what the read holds (the archive, its inflated members and arrays), "
     "but the reader's limit is 1.07 GB"},
    {R_NPZ, "npz/truncated.npz", 0, NULL, FG_ERR_FORMAT,
     "truncated.npz: not a zip archive (no end-of-central-directory record; truncated?)"},
    {R_NPZ, "npz/not_a_zip.npz", 0, NULL, FG_ERR_FORMAT,
     "not_a_zip.npz: not a zip archive"},

    /* ---- scipy.sparse .npz (scipy/make_scipy.py), read as a graph alone by fg_read_npz ---- */
    {R_NPZ, "scipy/cora_csr.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "scipy/cora_csc.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "scipy/cora_coo.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "scipy/ok_tiny_csr.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "scipy/ok_tiny_csc.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "scipy/ok_tiny_coo.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "scipy/ok_tiny_u3.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "scipy/ok_tiny_i64.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "reddit/ok/reddit_graph.npz", 0, NULL, FG_OK, NULL},
    {R_NPZ, "scipy/bad_format.npz", 0, NULL, FG_ERR_UNSUPPORTED,
     "bad_format.npz[format.npy]: format 'csx' is not supported (csr, csc or coo"},
    {R_NPZ, "scipy/format_dia.npz", 0, NULL, FG_ERR_UNSUPPORTED,
     "format_dia.npz[format.npy]: format 'dia' is not supported"},
    {R_NPZ, "scipy/format_int.npz", 0, NULL, FG_ERR_FORMAT,
     "format_int.npz[format.npy]: expected a string, got dtype '<i8'"},
    {R_NPZ, "scipy/not_square.npz", 0, NULL, FG_ERR_FORMAT,
     "not_square.npz[shape.npy]: the matrix is 5 x 6, not square"},
    {R_NPZ, "scipy/shape_three.npz", 0, NULL, FG_ERR_FORMAT,
     "shape_three.npz[shape.npy]: expected 2 integers, got 3 element(s) of dtype '<i8'"},
    {R_NPZ, "scipy/zero_nodes.npz", 0, NULL, FG_ERR_FORMAT,
     "zero_nodes.npz[shape.npy]: number of nodes 0 out of range [1, 2147483647]"},
    {R_NPZ, "scipy/indptr_length.npz", 0, NULL, FG_ERR_FORMAT,
     "indptr_length.npz[indptr.npy]: expected 6 elements (rows + 1), got 5"},
    {R_NPZ, "scipy/indptr_decreasing.npz", 0, NULL, FG_ERR_FORMAT,
     "indptr_decreasing.npz[indptr.npy]: element 3 (2) is smaller than element 2 (3)"},
    {R_NPZ, "scipy/indptr_end.npz", 0, NULL, FG_ERR_FORMAT,
     "indptr_end.npz[indptr.npy]: last element is 5, expected 6 (the number of indices)"},
    {R_NPZ, "scipy/index_range.npz", 0, NULL, FG_ERR_FORMAT,
     "index_range.npz[indices.npy]: element 4: column 5 out of range [0, 5)"},
    {R_NPZ, "scipy/csc_index_range.npz", 0, NULL, FG_ERR_FORMAT,
     "csc_index_range.npz[indices.npy]: element 3: row -1 out of range [0, 5)"},
    {R_NPZ, "scipy/coo_range.npz", 0, NULL, FG_ERR_FORMAT,
     "coo_range.npz[col.npy]: element 2: column 7 out of range [0, 5)"},
    {R_NPZ, "scipy/coo_lengths.npz", 0, NULL, FG_ERR_FORMAT,
     "coo_lengths.npz[col.npy]: 5 elements, but row.npy has 6"},
    {R_NPZ, "scipy/data_length.npz", 0, NULL, FG_ERR_FORMAT,
     "data_length.npz[data.npy]: expected 6 elements (one per entry), got 5"},
    {R_NPZ, "scipy/data_length_deflated.npz", 0, NULL, FG_ERR_FORMAT,
     "data_length_deflated.npz[data.npy]: expected 6 elements (one per entry), got 5"},
    {R_NPZ, "scipy/missing_indices.npz", 0, NULL, FG_ERR_FORMAT,
     "missing_indices.npz: member indices.npy is missing"},
    {R_NPZ, "scipy/missing_data.npz", 0, NULL, FG_ERR_FORMAT,
     "missing_data.npz: member data.npy is missing"},
    {R_NPZ, "scipy/missing_row.npz", 0, NULL, FG_ERR_FORMAT,
     "missing_row.npz: member row.npy is missing"},
    {R_NPZ, "scipy/index_dtype.npz", 0, NULL, FG_ERR_FORMAT,
     "index_dtype.npz[indices.npy]: expected int32 or int64 indices (as scipy.sparse writes "
     "them), got dtype '<i2'"},
    {R_NPZ, "scipy/trunc_member.npz", 0, NULL, FG_ERR_FORMAT,
     "trunc_member.npz[indices.npy]: truncated .npy data: shape needs 24 bytes from offset 128, "
     "only 18 present"},
    {R_NPZ, "scipy/truncated.npz", 0, NULL, FG_ERR_FORMAT,
     "truncated.npz: not a zip archive (no end-of-central-directory record; truncated?)"},
    {R_NPZ, "reddit/ok/reddit_data.npz", 0, NULL, FG_ERR_FORMAT,
     "ok/reddit_data.npz: the features of a Reddit pair (reddit_data.npz: feature, label, "
     "node_types) without its graph"},

    /* ---- the Reddit pair: a folder each (fg_read_reddit, fg_read_reddit_mem) ---- */
    {R_REDDIT, "reddit/ok", 0, NULL, FG_OK, NULL},
    {R_REDDIT, "reddit/ok_f16", 0, NULL, FG_OK, NULL},
    {R_REDDIT, "reddit/cora", 0, NULL, FG_OK, NULL},
    {R_REDDIT, "reddit/cora_f16", 0, NULL, FG_OK, NULL},
    {R_REDDIT, "reddit/f16_nan", 0, NULL, FG_ERR_NUMERIC,
     "f16_nan/reddit_data.npz[feature.npy]: row 3, column 1: value nan is not finite"},
    {R_REDDIT, "reddit/f16_inf", 0, NULL, FG_ERR_NUMERIC,
     "f16_inf/reddit_data.npz[feature.npy]: row 0, column 2: value -inf is not finite"},
    {R_REDDIT, "reddit/bad_type", 0, NULL, FG_ERR_FORMAT,
     "bad_type/reddit_data.npz[node_types.npy]: element 2: node type 4 is not 1 (train), 2 "
     "(valid), 3 (test) or 0 (in no split)"},
    {R_REDDIT, "reddit/float_types", 0, NULL, FG_ERR_FORMAT,
     "float_types/reddit_data.npz[node_types.npy]: expected integer node types (1 train, 2 "
     "valid, 3 test), got dtype '<f4'"},
    {R_REDDIT, "reddit/rows", 0, NULL, FG_ERR_FORMAT,
     "rows/reddit_data.npz[feature.npy]: 4 feature rows, but the adjacency in "},
    {R_REDDIT, "reddit/no_graph", 0, NULL, FG_ERR_IO, "no_graph: missing reddit_graph.npz"},
    {R_REDDIT, "reddit/no_data", 0, NULL, FG_ERR_IO, "no_data: missing reddit_data.npz"},
    {R_REDDIT, "reddit/no_label", 0, NULL, FG_ERR_FORMAT,
     "no_label/reddit_data.npz: member label.npy is missing"},
    {R_REDDIT, "reddit/unlabelled_split", 0, NULL, FG_ERR_FORMAT,
     "unlabelled_split/reddit_data.npz[node_types.npy]: element 0: node 0 is in the train split "
     "but has no label"},
    {R_REDDIT, "reddit/ok_multilabel", 0, NULL, FG_OK, NULL},
    {R_REDDIT, "reddit/ok_multilabel_nan", 0, NULL, FG_OK, NULL},
    {R_REDDIT, "reddit/multilabel_value", 0, NULL, FG_ERR_FORMAT,
     "multilabel_value/reddit_data.npz[label.npy]: node 2, task 1: target 2 is not 1, 0 or -1 "
     "(missing)"},
    {R_REDDIT, "reddit/multilabel_unlabelled", 0, NULL, FG_ERR_FORMAT,
     "multilabel_unlabelled/reddit_data.npz[node_types.npy]: element 0: node 0 is in the train "
     "split but has no label (every target missing in label.npy)"},
    {R_REDDIT, "reddit/label_3d", 0, NULL, FG_ERR_FORMAT,
     "label_3d/reddit_data.npz[label.npy]: expected shape (5,) (a class per node) or (5, T) (T "
     "binary tasks), got 3 dimension(s)"},
    {R_REDDIT, "reddit/graph_range", 0, NULL, FG_ERR_FORMAT,
     "graph_range/reddit_graph.npz[row.npy]: element 5: row 9 out of range [0, 5)"},
    {R_REDDIT, "reddit/data_not_zip", 0, NULL, FG_ERR_FORMAT,
     "data_not_zip/reddit_data.npz: not a zip archive"},
};

static const char *status_name(fg_status st) { return fg_status_string(st); }

/* ---- expected contents of the good files ----------------------------------------------------- */

static int edges_equal(const fg_raw *r, const int64_t (*e)[2], int64_t m) {
  if (r->num_edges != m || !r->src || !r->dst) return 0;
  for (int64_t i = 0; i < m; i++)
    if (r->src[i] != e[i][0] || r->dst[i] != e[i][1]) return 0;
  return 1;
}

static int split_equal(const fg_raw *r, const int8_t *want) {
  if (!r->split) return 0;
  for (int64_t i = 0; i < r->num_nodes; i++)
    if (r->split[i] != want[i]) return 0;
  return 1;
}

static void check_ogb_base(const char *rel, const fg_raw *r) {
  static const int64_t e[7][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {0, 3}};
  static const float f[6][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.5f, 0.25f, -1},
                                {2, 0.3f, 0}, {-0.0f, 100, 7}};
  EXPECT_MSG(r->num_nodes == 6 && r->directed == 0, "%s", rel);
  EXPECT_MSG(edges_equal(r, e, 7), "%s: edges", rel);
  int has_feat = strstr(rel, "no_feat") == NULL;
  if (has_feat) {
    EXPECT_MSG(r->num_features == 3 && r->features, "%s: features", rel);
    if (r->features && r->num_features == 3)
      EXPECT_MSG(memcmp(r->features, f, sizeof f) == 0, "%s: feature values", rel);
  } else {
    EXPECT_MSG(r->num_features == 0 && !r->features && !r->labels && !r->split &&
                   r->num_classes == 0, "%s", rel);
  }
}

static void check_good(const corpus_case *c, const fg_raw *r) {
  const char *rel = c->rel;
  if (c->r == R_OGB) {
    check_ogb_base(rel, r);
    if (strstr(rel, "no_feat")) return;
    if (strstr(rel, "label_32_ok")) {
      static const int32_t lab[6] = {0, 1, 2, 0, 1, 31};
      EXPECT_MSG(r->labels && memcmp(r->labels, lab, sizeof lab) == 0, "%s labels", rel);
      EXPECT_MSG(r->num_classes == 32, "%s", rel);
      return;
    }
    if (strstr(rel, "unlabelled_ok")) {
      static const int32_t lab[6] = {0, 1, -1, -1, -1, 2};
      static const int8_t sp[6] = {0, 1, -1, -1, -1, 2};
      EXPECT_MSG(r->labels && memcmp(r->labels, lab, sizeof lab) == 0, "%s labels", rel);
      EXPECT_MSG(r->num_classes == 3, "%s", rel);
      EXPECT_MSG(split_equal(r, sp), "%s split", rel);
      return;
    }
    static const int32_t lab[6] = {0, 1, 2, 0, 1, 2};
    EXPECT_MSG(r->labels && memcmp(r->labels, lab, sizeof lab) == 0, "%s labels", rel);
    EXPECT_MSG(r->num_classes == 3, "%s", rel);
    if (strstr(rel, "no_split")) {
      EXPECT_MSG(r->split == NULL, "%s: no split expected", rel);
    } else if (c->split && strcmp(c->split, "random") == 0) {
      static const int8_t sp[6] = {2, 2, 1, 1, 0, 0};
      EXPECT_MSG(split_equal(r, sp), "%s split 'random'", rel);
    } else {
      static const int8_t sp[6] = {0, 0, 1, 1, 2, 2};
      EXPECT_MSG(split_equal(r, sp), "%s split", rel);
    }
  } else if (c->r == R_SNAP && strstr(rel, "nodes_huge")) {
    /* the reader keeps the declared count; fg_dataset_load decides what it is worth */
    static const int64_t e[2][2] = {{0, 1}, {1, 2}};
    EXPECT_MSG(r->num_nodes == 2147483646 && r->declared_nodes == 2147483646 &&
                   !r->ids_inferred && r->id_span == 3 && edges_equal(r, e, 2), "%s", rel);
  } else if (c->r == R_SNAP) {
    static const int64_t e[5][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {10, 3}};
    EXPECT_MSG(r->num_nodes == 11 && r->directed == 1 && edges_equal(r, e, 5), "%s", rel);
    EXPECT_MSG(!r->features && !r->labels && !r->split, "%s", rel);
  } else if (c->r == R_MTX) {
    if (strstr(rel, "symmetric")) {
      static const int64_t e[4][2] = {{1, 0}, {2, 0}, {3, 2}, {3, 3}};
      EXPECT_MSG(r->num_nodes == 4 && r->directed == 0 && edges_equal(r, e, 4), "%s", rel);
    } else if (strstr(rel, "integer")) {
      static const int64_t e[2][2] = {{0, 1}, {2, 2}};
      EXPECT_MSG(r->num_nodes == 3 && r->directed == 1 && edges_equal(r, e, 2), "%s", rel);
    } else {
      static const int64_t e[3][2] = {{0, 1}, {1, 2}, {2, 0}};
      EXPECT_MSG(r->num_nodes == 3 && r->directed == 1 && edges_equal(r, e, 3), "%s", rel);
    }
  } else if (c->r == R_NPY) {
    if (strstr(rel, "u1")) {
      static const int64_t e[3][2] = {{0, 1}, {1, 2}, {2, 0}};
      EXPECT_MSG(r->num_nodes == 3 && edges_equal(r, e, 3), "%s", rel);
    } else {
      static const int64_t e[4][2] = {{0, 1}, {1, 2}, {2, 0}, {7, 3}};
      EXPECT_MSG(r->num_nodes == 8 && edges_equal(r, e, 4), "%s", rel);
    }
    EXPECT_MSG(r->directed == 1 && !r->features && !r->labels && !r->split, "%s", rel);
  } else if (c->r == R_NPZ && strstr(rel, "cora_")) {
    /* Cora's symmetric pattern: both directions of its 5278 edges (test_io_scipy compares the
     * graphs built) */
    EXPECT_MSG(r->num_nodes == 2708 && r->num_edges == 10556 && r->directed == 1, "%s", rel);
    EXPECT_MSG(!r->features && !r->labels && !r->split, "%s: a graph alone", rel);
  } else if (c->r == R_NPZ && (strstr(rel, "scipy/") || strstr(rel, "reddit_graph"))) {
    static const int64_t e[6][2] = {{0, 1}, {0, 2}, {1, 2}, {2, 0}, {3, 4}, {4, 0}};
    static const int64_t ecsc[6][2] = {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {1, 2}, {3, 4}};
    EXPECT_MSG(r->num_nodes == 5 && r->directed == 1 &&
                   edges_equal(r, strstr(rel, "csc") ? ecsc : e, 6), "%s", rel);
    EXPECT_MSG(!r->features && !r->labels && !r->split && r->num_features == 0, "%s", rel);
  } else if (c->r == R_REDDIT && strstr(rel, "cora")) {
    EXPECT_MSG(r->num_nodes == 2708 && r->num_edges == 10556 && r->num_features == 1433 &&
                   r->num_classes == 7 && r->features && r->labels && r->split, "%s", rel);
  } else if (c->r == R_REDDIT) {
    static const int64_t e[6][2] = {{0, 1}, {0, 2}, {1, 2}, {2, 0}, {3, 4}, {4, 0}};
    static const float f32[5][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {0.5f, 0, 2}};
    /* make_scipy.py's halves, widened exactly: subnormals, the largest half, -0 */
    static const float f16[5][3] = {{0x1p-24f, 0x1.998p-4f, -65504.0f},
                                    {1.5f, 0x1p-14f, 0x1.8p-19f},
                                    {-0.0f, 1024.0f, 0x1.55p-2f},
                                    {1, 1, 0},
                                    {0.5f, 0, 2}};
    static const int32_t lab[5] = {0, 1, 2, 1, 0};
    static const int8_t sp[5] = {0, 0, 1, 2, -1};
    EXPECT_MSG(r->num_nodes == 5 && r->directed == 1 && edges_equal(r, e, 6), "%s", rel);
    EXPECT_MSG(r->num_features == 3 && r->features &&
                   memcmp(r->features, strstr(rel, "f16") ? &f16[0][0] : &f32[0][0],
                          sizeof f32) == 0, "%s features", rel);
    if (strstr(rel, "multilabel")) {
      static const int8_t t[5][2] = {{1, 0}, {0, 1}, {1, -1}, {0, -1}, {-1, -1}};
      EXPECT_MSG(!r->labels && r->num_classes == 0 && r->num_tasks == 2 && r->targets &&
                     memcmp(r->targets, t, sizeof t) == 0, "%s targets", rel);
    } else {
      EXPECT_MSG(r->labels && memcmp(r->labels, lab, sizeof lab) == 0 && r->num_classes == 3 &&
                     !r->targets && r->num_tasks == 0, "%s labels", rel);
    }
    EXPECT_MSG(split_equal(r, sp), "%s split", rel);
  } else if (c->r == R_NPZ && strstr(rel, "dense")) {
    static const int64_t e[7][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {0, 3}};
    static const float f[6][2] = {{1, 0}, {0, 1}, {1, 1}, {2, 0}, {0, 2}, {0.25f, -1}};
    static const int32_t lab[6] = {0, 1, 1, 0, 2, 2};
    static const int8_t sp0[6] = {0, 0, 1, 1, 2, 2}, sp1[6] = {1, 1, 2, 2, 0, 0};
    EXPECT_MSG(r->num_nodes == 6 && r->directed == 0 && edges_equal(r, e, 7), "%s", rel);
    EXPECT_MSG(r->num_features == 2 && r->features &&
                   memcmp(r->features, f, sizeof f) == 0, "%s features", rel);
    EXPECT_MSG(r->labels && memcmp(r->labels, lab, sizeof lab) == 0 && r->num_classes == 3,
               "%s labels", rel);
    EXPECT_MSG(split_equal(r, c->arg == 0 ? sp0 : sp1), "%s split %d", rel, c->arg);
  } else if (c->r == R_NPZ && strstr(rel, "split_overlap")) {
    static const int8_t sp0[6] = {0, 0, 1, 1, 2, 2};
    EXPECT_MSG(split_equal(r, sp0), "%s split 0", rel);
  } else if (c->r == R_NPZ) {
    static const int64_t e[6][2] = {{0, 1}, {0, 2}, {1, 2}, {2, 0}, {3, 4}, {4, 0}};
    static const float fcsr[5][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 0}, {0, 1, 2.5f}};
    static const float fdense[5][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {0.5f, 0, 2}};
    static const int32_t lab[5] = {0, 1, 2, 1, 0};
    const float *f = strstr(rel, "attr_matrix") ? &fdense[0][0] : &fcsr[0][0];
    EXPECT_MSG(r->num_nodes == 5 && r->directed == 1 && edges_equal(r, e, 6), "%s", rel);
    EXPECT_MSG(r->num_features == 3 && r->features &&
                   memcmp(r->features, f, sizeof fcsr) == 0, "%s features", rel);
    EXPECT_MSG(r->labels && memcmp(r->labels, lab, sizeof lab) == 0 && r->num_classes == 3,
               "%s labels", rel);
    EXPECT_MSG(r->split == NULL, "%s: no split expected", rel);
  }
}

static void check_csv(const corpus_case *c, const double *v, int64_t rows) {
  static const double want[6] = {1, 2, 3, 4.5, -6, 700};
  EXPECT_MSG(rows == 2 && v && memcmp(v, want, sizeof want) == 0, "%s (width %d)", c->rel,
             c->arg);
}

/* ---- running one case ------------------------------------------------------------------------ */

static void expect_result(const corpus_case *c, const char *how, fg_status st) {
  if (st != c->want) {
    fprintf(stderr, "%s (%s): expected status %s, got %s: %s\n", c->rel, how,
            status_name(c->want), status_name(st), fg_last_error());
    fg_test_failures++;
    return;
  }
  if (c->msg) {
    EXPECT_MSG(fg_test_error_contains(c->msg), "%s (%s)", c->rel, how);
    EXPECT_MSG(fg_test_error_contains(FG_CORPUS), "%s (%s): message must name the file", c->rel,
               how);
  }
}

static fg_status run_path(const corpus_case *c, const char *path, fg_raw *r, double **v,
                          int64_t *rows) {
  switch (c->r) {
    case R_OGB: return fg_read_ogb(path, c->split, r);
    case R_NPZ: return fg_read_npz(path, c->arg, r);
    case R_NPY: return fg_read_npy_edges(path, r);
    case R_MTX: return fg_read_mtx(path, r);
    case R_SNAP: return fg_read_snap(path, r);
    case R_REDDIT: return fg_read_reddit(path, r);
    case R_CSV: break;
  }
  unsigned char *buf = NULL;
  size_t len = 0;
  fg_status st = fg_file_slurp(path, &buf, &len);
  if (st == FG_OK) st = fg_read_csv_mem(buf, len, path, c->arg, 2, v, rows);
  free(buf);
  return st;
}

static fg_status run_mem(const corpus_case *c, const unsigned char *buf, size_t len,
                         const char *path, fg_raw *r, double **v, int64_t *rows) {
  switch (c->r) {
    case R_NPZ: return fg_read_npz_mem(buf, len, path, c->arg, r);
    case R_NPY: return fg_read_npy_edges_mem(buf, len, path, r);
    case R_MTX: return fg_read_mtx_mem(buf, len, path, r);
    case R_SNAP: return fg_read_snap_mem(buf, len, path, r);
    case R_CSV: return fg_read_csv_mem(buf, len, path, c->arg, -1, v, rows);
    case R_OGB:
    case R_REDDIT: break;
  }
  return FG_ERR_INTERNAL;
}

/* The Reddit pair from memory: both archives read into buffers (a case missing one is checked
 * by path only), messages naming the folder's files. */
static void run_reddit_mem(const corpus_case *c, const char *dir) {
  char dpath[1100], gpath[1100];
  unsigned char *d = NULL, *g = NULL;
  size_t dlen = 0, glen = 0;
  fg_raw r;
  snprintf(dpath, sizeof dpath, "%s/reddit_data.npz", dir);
  snprintf(gpath, sizeof gpath, "%s/reddit_graph.npz", dir);
  if (!fg_test_exists(dpath) || !fg_test_exists(gpath)) return;
  if (fg_file_slurp(dpath, &d, &dlen) != FG_OK || fg_file_slurp(gpath, &g, &glen) != FG_OK) {
    fprintf(stderr, "%s: cannot read: %s\n", c->rel, fg_last_error());
    fg_test_failures++;
  } else {
    fg_error_clear();
    fg_status st = fg_read_reddit_mem(d, dlen, g, glen, dir, &r);
    expect_result(c, "memory", st);
    if (st == FG_OK && c->want == FG_OK) check_good(c, &r);
    fg_raw_free(&r);
  }
  free(d);
  free(g);
}

static void run_case(const corpus_case *c) {
  char path[1024];
  fg_raw r;
  double *v = NULL;
  int64_t rows = 0;
  snprintf(path, sizeof path, "%s/%s", FG_CORPUS, c->rel);
  fg_error_clear();
  fg_status st = run_path(c, path, &r, &v, &rows);
  expect_result(c, "path", st);
  if (st == FG_OK && c->want == FG_OK) {
    if (c->r == R_CSV) check_csv(c, v, rows);
    else check_good(c, &r);
  }
  if (st != FG_OK && c->r != R_CSV) /* a failed reader leaves an empty fg_raw */
    EXPECT_MSG(!r.src && !r.dst && !r.features && !r.labels && !r.split && r.num_nodes == 0,
               "%s: output not cleared on failure", c->rel);
  if (c->r != R_CSV) fg_raw_free(&r);
  free(v);
  v = NULL;

  if (c->r == R_OGB) return;
  if (c->r == R_REDDIT) {
    run_reddit_mem(c, path);
    return;
  }
  unsigned char *buf = NULL;
  size_t len = 0;
  if (fg_file_slurp(path, &buf, &len) != FG_OK) {
    fprintf(stderr, "%s: cannot read: %s\n", c->rel, fg_last_error());
    fg_test_failures++;
    return;
  }
  fg_error_clear();
  st = run_mem(c, buf, len, path, &r, &v, &rows);
  expect_result(c, "memory", st);
  if (st == FG_OK && c->want == FG_OK) {
    if (c->r == R_CSV) check_csv(c, v, rows);
    else check_good(c, &r);
  }
  if (c->r != R_CSV) fg_raw_free(&r);
  free(v);
  free(buf);
}

int main(void) {
  if (!fg_test_exists(FG_CORPUS "/ogb/ok/raw")) {
    fprintf(stderr, "corpus missing under %s\n", FG_CORPUS);
    return 1;
  }
  /* Only huge_attr_shape.npz comes near this; every other case needs a few bytes. */
  fg_io_set_alloc_limit((int64_t)1 << 30);
  size_t n = sizeof cases / sizeof cases[0];
  for (size_t i = 0; i < n; i++) run_case(&cases[i]);
  /* csv expect_rows: a mismatch names the counts */
  {
    static const char txt[] = "1,2\n3,4\n";
    double *v = NULL;
    int64_t rows = 0;
    EXPECT(fg_read_csv_mem(txt, sizeof txt - 1, "t.csv", 2, 3, &v, &rows) == FG_ERR_FORMAT);
    EXPECT(fg_test_error_contains("t.csv: 2 rows, expected 3"));
    EXPECT(v == NULL);
    EXPECT(fg_read_csv_mem(txt, sizeof txt - 1, "t.csv", 2, 1, &v, &rows) == FG_ERR_FORMAT);
    EXPECT(fg_test_error_contains("t.csv: line 2: more rows than the 1 expected"));
    EXPECT(fg_read_csv_mem(txt, sizeof txt - 1, "t.csv", 0, 1, &v, &rows) == FG_ERR_INVALID_ARG);
  }
  printf("%zu corpus cases\n", n);
  return fg_test_finish("test_io_corpus");
}
