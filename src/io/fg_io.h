/* fg_io.h -- readers and writers. A reader fills an fg_raw with what the file holds, checked
 * (counts against declared sizes, index ranges, widths, labels, splits, NaN/Inf) and nothing
 * more: turning edges into a prepared graph is graph/'s job. Every failure message names the
 * file, the line or byte offset, and what was wrong, e.g.
 *   "data/raw/edge.csv.gz: line 17: node id 9001 out of range [0, 2708)".
 */
#ifndef FG_IO_H
#define FG_IO_H

#include <stdint.h>
#include <stdio.h>

#include "core/fg_core.h"

enum { FG_SPLIT_NONE = -1, FG_SPLIT_TRAIN = 0, FG_SPLIT_VALID = 1, FG_SPLIT_TEST = 2 };

typedef struct fg_raw {
  int64_t num_nodes;       /* declared, or inferred as max id + 1 (then ids_inferred = 1) */
  int64_t num_edges;       /* entries in src/dst as read (duplicates possible) */
  int64_t *src, *dst;      /* (num_edges) 0-based node ids in [0, num_nodes) */
  int directed;            /* 1 if the file says the edges are directed */
  int64_t num_features;    /* 0 if the file has no features */
  float *features;         /* (num_nodes x num_features) row-major, finite */
  int32_t *labels;         /* (num_nodes), -1 = unlabelled; NULL if no labels (or targets) */
  int64_t num_classes;     /* max label + 1 (0 if no labels, and when targets != NULL) */
  int64_t num_tasks;       /* T >= 1 when the labels are multi-label (several columns); 0: the
                              labels are one class id per node (labels / num_classes) */
  int8_t *targets;         /* (num_nodes x num_tasks) row-major, 1 positive, 0 negative,
                              -1 missing (a NaN or empty field in the file); NULL when T = 0.
                              When set, labels == NULL and num_classes == 0. */
  int8_t *split;           /* (num_nodes) FG_SPLIT_*; NULL if the file has no split */
  int ids_inferred;        /* 1: nothing declared the node count (an edge list without a usable
                              "# Nodes: N" comment): ids may be sparse, see fg_raw_renumber */
  int64_t id_span;         /* max id + 1 as read (after fg_raw_renumber too) */
  int64_t declared_nodes;  /* SNAP: N of a "# Nodes: N" comment (0: none), used or not */
  int64_t *ids;            /* after fg_raw_renumber: ids[i] = the file's id of node i;
                              NULL while node i is id i */
} fg_raw;

void fg_raw_free(fg_raw *r);

/* The class ids of a file's labels must be mostly used: with C = largest label + 1 classes
 * (every node carries C logits), a reader refuses labels where more than half of 0..C-1 never
 * occur, unless C <= FG_CLASSES_ALWAYS_OK (small label sets are taken as they are). One stray
 * label of 99999 would otherwise make 100,000 classes of which three are used. The message
 * names the file, the first node with the largest label (by_line: as "line i + 1", the line of
 * a one-label-per-line file; else "element i"), the counts, and how to relabel. */
#define FG_CLASSES_ALWAYS_OK 32
fg_status fg_raw_check_classes(const fg_raw *r, const char *name, int by_line);
/* Its check from the counts (a reader whose labels are held in pieces): C classes, the
 * distinct labels and labelled nodes, at the first node (0-based) labelled C - 1. */
fg_status fg_check_class_use(const char *name, int by_line, int64_t C, int64_t distinct,
                             int64_t labelled, int64_t at);

/* For an edge list whose node count was inferred (ids_inferred): keep only the ids that occur
 * in an edge, renumbered 0..k-1 in increasing order of the file's id, so that a sparse id space
 * (SNAP's ca-AstroPh: 18,772 nodes with ids up to 133,279) does not turn into nodes that are not
 * in the graph. Sets r->ids (the file's id of each node) when anything moved; a file whose ids are
 * already 0..k-1 is left as it is. No-op when the count was declared. O(edges + max id / 8). */
fg_status fg_raw_renumber(fg_raw *r);

/* OGB node-property raw layout under dir (raw/…, split/<name>/…), .csv or .csv.gz.
 * split_name NULL: the only folder under split/ (error if several). The binary raw layout
 * (ogbn-papers100M) is taken when raw/data.npz exists: raw/data.npz (edge_index 2 x E,
 * num_nodes_list, num_edges_list, node_feat N x F float16/32/64 optional; other node_* and edge_*
 * members ignored), raw/node-label.npz (node_label: N or N x 1 class ids, NaN or -1 unlabelled;
 * N x T with T > 1: multi-label targets, NaN or -1 missing), split/<name>/ as for csv. */
fg_status fg_read_ogb(const char *dir, const char *split_name, fg_raw *out);
/* GraphSAINT's directory layout: adj_full.npz (scipy.sparse, N x N), feats.npy (N x F),
 * class_map.json (every node id -> a class, or -> a list of 0/1: multi-label targets),
 * role.json ({"tr": [...], "va": [...], "te": [...]}). adj_train.npz is ignored. */
fg_status fg_read_saint(const char *dir, fg_raw *out);
/* NumPy .npz: CSR layout (adj_*, attr_*, labels), dense layout (node_features, edges,
 * node_labels, train/val/test_masks with split column split_index), or a scipy.sparse matrix
 * as save_npz writes it (format, shape, ...: the graph alone, fg_read_scipy_sparse_mem). */
fg_status fg_read_npz(const char *path, int split_index, fg_raw *out);
/* The PyG/DGL Reddit pair in dir: reddit_data.npz (feature: N x F, any numeric dtype, float16
 * widened; label: N integers; node_types: N, 1 train, 2 valid, 3 test) and reddit_graph.npz (a
 * scipy.sparse N x N adjacency, csr/csc/coo, whose pattern is the graph). */
fg_status fg_read_reddit(const char *dir, fg_raw *out);
/* 1 when dir holds reddit_data.npz or reddit_graph.npz (the other is then required). */
int fg_is_reddit_dir(const char *dir);
/* NumPy .npy holding an integer edge array (E x 2). */
fg_status fg_read_npy_edges(const char *path, fg_raw *out);
/* Matrix Market coordinate (pattern/real/integer; general/symmetric), plain or gzip. */
fg_status fg_read_mtx(const char *path, fg_raw *out);
/* SNAP edge list: "u v" per line, '#' or '%' comments, plain or gzip. A comment of SNAP's
 * "# Nodes: N Edges: M" form declares N nodes when every id is below N (so isolated nodes a
 * generator meant are kept); otherwise num_nodes = max id + 1 and ids_inferred = 1. */
fg_status fg_read_snap(const char *path, fg_raw *out);

/* Arrays in memory (fg_dataset_from_arrays): every element checked as the readers check a
 * file's, messages naming "arrays: src[k]" and the like, then copied (the budget weighs the
 * copies). */
fg_status fg_read_arrays(const fg_arrays *a, fg_raw *out);

/* The same readers over a memory buffer (for fuzzing); name is used in messages. */
fg_status fg_read_npz_mem(const void *buf, size_t len, const char *name, int split_index,
                          fg_raw *out);
fg_status fg_read_npy_edges_mem(const void *buf, size_t len, const char *name, fg_raw *out);
/* The Reddit pair from its two archives in memory; messages name dir/reddit_data.npz and
 * dir/reddit_graph.npz. */
fg_status fg_read_reddit_mem(const void *data, size_t data_len, const void *graph,
                             size_t graph_len, const char *dir, fg_raw *out);
fg_status fg_read_mtx_mem(const void *buf, size_t len, const char *name, fg_raw *out);
fg_status fg_read_snap_mem(const void *buf, size_t len, const char *name, fg_raw *out);
/* A piece of a plain SNAP file that starts at a line's beginning and ends at one (parallel
 * `prepare`: each rank parses its byte range): the same checks, messages numbering the file's
 * lines (the piece's first line is line first_line + 1), no edge needed. ids are not
 * renumbered; id_span and declared_nodes are the piece's. */
fg_status fg_read_snap_piece(const void *buf, size_t len, const char *name, int64_t first_line,
                             fg_raw *out);
/* The OGB csv layout in pieces (parallel `prepare`), each buf[0, len) a piece of a plain file
 * cut at line starts with first_line lines before it (= the rows before it: every line of these
 * tables is a row); last: the file's last piece, which checks the row total. The serial
 * reader's checks and messages. fg_csv_first_fields: the fields of buf's first line (0 for no
 * line), which fixes a table's width (node-feat) or its kind (node-label: > 1 is T targets). */
int64_t fg_csv_first_fields(const void *buf, size_t len);
/* raw/num-node-list and raw/num-edge-list of dir. */
fg_status fg_read_ogb_counts(const char *dir, int64_t *nodes, int64_t *edges);
/* edge.csv: *rows pairs (src, dst) of node ids in [0, num_nodes). */
fg_status fg_read_ogb_edge_piece(const void *buf, size_t len, const char *name,
                                 int64_t first_line, int last, int64_t num_nodes,
                                 int64_t num_edges, int64_t **src, int64_t **dst, int64_t *rows);
/* node-feat.csv: *rows rows of width floats. */
fg_status fg_read_ogb_feat_piece(const void *buf, size_t len, const char *name,
                                 int64_t first_line, int last, int64_t num_nodes, int64_t width,
                                 float **features, int64_t *rows);
/* node-label.csv: class ids (tasks 0; *max_label the piece's largest, -1 for none) or
 * (tasks > 0) *rows x tasks targets. */
fg_status fg_read_ogb_label_piece(const void *buf, size_t len, const char *name,
                                  int64_t first_line, int last, int64_t num_nodes,
                                  int64_t tasks, int32_t **labels, int64_t *max_label,
                                  int8_t **targets, int64_t *rows);
/* The split fg_read_ogb would read (split_name or the only one; *split NULL for none) over n
 * nodes: labelled (n, or NULL without a label file) >= 0 where a node has a label; multi: the
 * labels are targets (for the message). */
fg_status fg_read_ogb_split(const char *dir, const char *split_name, int64_t n,
                            int32_t *labelled, int multi, int8_t **split);
/* GraphSAINT's class_map.json and role.json over n nodes (messages name "class_map.json" and
 * "role.json"): labels or targets, and the split. */
fg_status fg_read_saint_maps_mem(const void *class_map, size_t cm_len, const void *role,
                                 size_t role_len, int64_t n, fg_raw *out);
/* OGB's binary raw/data.npz and raw/node-label.npz (label NULL: none), without a split; name
 * is the dataset folder as messages name it. */
fg_status fg_read_ogb_npz_mem(const void *data, size_t data_len, const void *label,
                              size_t label_len, const char *name, fg_raw *out);
/* One OGB csv table (for fuzzing the csv parser): rows of `width` numbers. */
fg_status fg_read_csv_mem(const void *buf, size_t len, const char *name, int64_t width,
                          int64_t expect_rows, double **values, int64_t *rows);

/* ---- output files (io_atomic.c) ------------------------------------------------------------
 * Every writer of the project's output files (checkpoints, .npy arrays, edge lists) goes
 * through these, so that a failed write never destroys what the path held:
 *   - a regular file (or a new one) is written to a temporary file beside it (".NAME.tmp.PID.K"),
 *     which commit flushes, fsyncs and renames over the path, then fsyncs the directory; a
 *     failure anywhere removes the temporary and leaves the previous file untouched (a symbolic
 *     link to a regular file keeps the link and has its target replaced);
 *   - an existing path that is not a regular file or a directory (a device such as /dev/null
 *     or /dev/full, a fifo) is written through, in place, never renamed over; every write,
 *     flush and close is checked ("/dev/full: write error: No space left on device");
 *   - a directory, a name ending in '/' and an empty name are refused (FG_ERR_IO, naming the
 *     path; FG_ERR_INVALID_ARG for the empty name), and nothing is created.
 *
 *   fg_out o;
 *   FG_CHECK(fg_out_open(&o, path));
 *   ... fwrite(..., o.f) (check each) ... on a failure: fg_out_abort(&o)
 *   FG_CHECK(fg_out_commit(&o));   (commit aborts by itself when it fails)
 */
typedef struct fg_out {
  FILE *f;          /* write here */
  const char *path; /* the path as given (messages; not owned) */
  char *target;     /* the regular file replaced (path, or a link's target) */
  char *tmp;        /* the temporary beside it; NULL when writing through */
  int through;      /* 1: path is a device, fifo or socket, written in place */
} fg_out;

/* What fg_out_open refuses before it creates anything: an empty name, a directory. A caller
 * that writes at the end of a long run checks its paths with this first. */
fg_status fg_out_check(const char *path);
fg_status fg_out_open(fg_out *o, const char *path);
/* Flush, sync, close, and (not through) rename over the path and sync its directory. On a
 * failure the temporary is removed (fg_out_abort) and the message names the path. */
fg_status fg_out_commit(fg_out *o);
/* Close and remove the temporary; the path keeps what it held. Safe on a reset fg_out. */
void fg_out_abort(fg_out *o);

/* Write a 2-D float32 array as NumPy .npy (v1.0 header, little-endian, C order). */
fg_status fg_npy_write_f32(const char *path, const float *data, int64_t rows, int64_t cols);
/* Write a 1-D int64 array as .npy v1.0 ('<i8', shape (n,)). */
fg_status fg_npy_write_i64(const char *path, const int64_t *data, int64_t n);
/* Write an edge list as SNAP text ("u v" lines), gzip if path ends in .gz. */
fg_status fg_write_snap(const char *path, const int64_t *src, const int64_t *dst, int64_t m,
                        const char *comment);

/* The memory a reader may use. Every reader checks what it is about to hold against the limit
 * before it allocates: arrays sized from a declaration (the dense N x F features of a CSR .npz,
 * a deflated member's size), an edge list or table as it grows (a gzip stream's size is known
 * only at its end, so its growth is what is bounded), a long line, a whole file read into memory.
 * Exceeding it fails with FG_ERR_MEMLIMIT, naming the file, where it stopped and the limit.
 * edge_bytes is what each edge held will cost the whole load at its peak (at least the reader's
 * 16 bytes; fg_dataset_load adds the graph build's), so that a reader stops as soon as the
 * edges read so far cannot be loaded, not only when they fill the limit themselves. The budget
 * is per thread; fg_dataset_load sets it for the time of a load from fg_load_config.mem_limit. */
typedef struct fg_io_budget {
  double limit;      /* bytes a reader may hold; 0 = no limit (the default) */
  double edge_bytes; /* bytes an edge costs the load at its peak (< 16 counts as 16) */
  char what[192];    /* how messages name the limit, e.g. "--mem-limit is 1.00 GB" */
} fg_io_budget;
void fg_io_set_budget(const fg_io_budget *b); /* NULL: no limit */
void fg_io_get_budget(fg_io_budget *b);
/* Shorthand for fuzz targets and tests: a limit of `bytes` (0 = none), 16 bytes an edge. */
void fg_io_set_alloc_limit(int64_t bytes);

#endif /* FG_IO_H */
