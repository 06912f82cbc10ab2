/* io_scipy.c -- scipy.sparse matrices as scipy.sparse.save_npz writes them (csr, csc, coo; the
 * pattern is the graph), and the PyG/DGL Reddit pair built on them: reddit_data.npz (feature,
 * label, node_types) beside reddit_graph.npz (the adjacency). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "io/fg_io_internal.h"

/* scipy writes index arrays as int32, or int64 when a matrix needs it: nothing else is taken. */
static fg_status index_dtype(const fg_npy *a, const char *label) {
  fg_status st = FG_OK;
  FG_REQUIRE(a->kind == 'i' && (a->itemsize == 4 || a->itemsize == 8), FG_ERR_FORMAT,
             "%s: expected int32 or int64 indices (as scipy.sparse writes them), got dtype '%s'",
             label, a->descr);
  FG_REQUIRE(a->ndim == 1, FG_ERR_FORMAT, "%s: expected a 1-D array, got %d dimension(s)",
             label, a->ndim);
cleanup:
  return st;
}

/* Element k of a 1-D int32/int64 index array, in [0, bound), or a message naming it. */
static fg_status index_at(const fg_npy *a, int64_t k, int64_t bound, const char *label,
                          const char *what, int64_t *v) {
  fg_status st = FG_OK;
  int ok;
  *v = fg_npy_int_at(a, k, &ok);
  FG_REQUIRE(*v >= 0 && *v < bound, FG_ERR_FORMAT,
             "%s: element %lld: %s %lld out of range [0, %lld)", label, (long long)k, what,
             (long long)*v, (long long)bound);
cleanup:
  return st;
}

/* The edges' arrays (nnz each) against the budget, then allocated into r. */
static fg_status alloc_edges(fg_npz *c, int64_t nnz, const char *label, fg_raw *r) {
  fg_status st = FG_OK;
  char what[96];
  snprintf(what, sizeof what, "the edge list of its %lld entries, and their graph build",
           (long long)nnz);
  FG_CHECK(fg_npz_hold(c, (double)nnz * fg_io_edge_bytes(), label, what));
  FG_ALLOC(r->src, FG_MAX(nnz, 1));
  FG_ALLOC(r->dst, FG_MAX(nnz, 1));
  r->num_edges = nnz;
cleanup:
  return st;
}

/* csr: row i holds columns indices[indptr[i] .. indptr[i + 1]); csc: column j holds rows
 * indices[indptr[j] .. indptr[j + 1]). Either way one edge row -> column per entry. */
static fg_status compressed(fg_npz *c, int64_t n, int by_column, fg_raw *r) {
  fg_status st = FG_OK;
  fg_npy ptr, ind;
  const char *lptr = NULL, *lind = NULL;
  int64_t *ip = NULL;
  FG_CHECK(fg_npz_get(c, "indptr", 1, &ptr, &lptr));
  FG_CHECK(index_dtype(&ptr, lptr));
  FG_REQUIRE(ptr.count == n + 1, FG_ERR_FORMAT,
             "%s: expected %lld elements (%s + 1), got %lld", lptr, (long long)n + 1,
             by_column ? "columns" : "rows", (long long)ptr.count);
  FG_CHECK(fg_npz_get(c, "indices", 1, &ind, &lind));
  FG_CHECK(index_dtype(&ind, lind));
  const int64_t nnz = ind.count;
  FG_CHECK(fg_npz_ints(c, &ptr, lptr, &ip));
  FG_CHECK(fg_check_indptr(ip, n, nnz, lptr));
  FG_CHECK(alloc_edges(c, nnz, lind, r));
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = ip[i]; k < ip[i + 1]; k++) {
      int64_t v;
      FG_CHECK(index_at(&ind, k, n, lind, by_column ? "row" : "column", &v));
      r->src[k] = by_column ? v : i;
      r->dst[k] = by_column ? i : v;
    }
cleanup:
  if (ip) fg_npz_release(c, 8.0 * (double)(n + 1));
  free(ip);
  return st;
}

/* coo: entry k is (row[k], col[k]). */
static fg_status coordinates(fg_npz *c, int64_t n, fg_raw *r) {
  fg_status st = FG_OK;
  fg_npy row, col;
  const char *lrow = NULL, *lcol = NULL;
  FG_CHECK(fg_npz_get(c, "row", 1, &row, &lrow));
  FG_CHECK(index_dtype(&row, lrow));
  FG_CHECK(fg_npz_get(c, "col", 1, &col, &lcol));
  FG_CHECK(index_dtype(&col, lcol));
  FG_REQUIRE(col.count == row.count, FG_ERR_FORMAT,
             "%s: %lld elements, but row.npy has %lld (one of each per entry)", lcol,
             (long long)col.count, (long long)row.count);
  const int64_t nnz = row.count;
  FG_CHECK(alloc_edges(c, nnz, lrow, r));
  for (int64_t k = 0; k < nnz; k++) {
    FG_CHECK(index_at(&row, k, n, lrow, "row", &r->src[k]));
    FG_CHECK(index_at(&col, k, n, lcol, "column", &r->dst[k]));
  }
cleanup:
  return st;
}

fg_status fg_npz_scipy_sparse(fg_npz *c, fg_raw *out) {
  fg_status st = FG_OK;
  fg_raw r;
  fg_npy a;
  const char *label = NULL;
  char fmt[16];
  int64_t *sh = NULL;
  memset(&r, 0, sizeof r);
  memset(out, 0, sizeof *out);

  FG_CHECK(fg_npz_get_text(c, "format", fmt, sizeof fmt, &a, &label));
  const int csr = strcmp(fmt, "csr") == 0, csc = strcmp(fmt, "csc") == 0,
            coo = strcmp(fmt, "coo") == 0;
  if (!csr && !csc && !coo) {
    char shown[64];
    FG_FAIL(FG_ERR_UNSUPPORTED, "%s: format '%s' is not supported (csr, csc or coo; convert "
            "with .tocsr() before scipy.sparse.save_npz)", label,
            fg_printable(fmt, strlen(fmt), shown, sizeof shown));
  }

  FG_CHECK(fg_npz_get(c, "shape", 1, &a, &label));
  FG_REQUIRE(a.ndim == 1 && a.count == 2 && (a.kind == 'i' || a.kind == 'u'), FG_ERR_FORMAT,
             "%s: expected 2 integers, got %lld element(s) of dtype '%s'", label,
             (long long)a.count, a.descr);
  FG_CHECK(fg_npz_ints(c, &a, label, &sh));
  FG_REQUIRE(sh[0] == sh[1], FG_ERR_FORMAT,
             "%s: the matrix is %lld x %lld, not square (an adjacency matrix is N x N)", label,
             (long long)sh[0], (long long)sh[1]);
  FG_REQUIRE(sh[0] > 0 && sh[0] <= FG_IO_MAX_NODES, FG_ERR_FORMAT,
             "%s: number of nodes %lld out of range [1, %lld]", label, (long long)sh[0],
             (long long)FG_IO_MAX_NODES);
  const int64_t n = sh[0];
  r.num_nodes = n;
  r.id_span = n;
  r.directed = 1;

  if (coo) FG_CHECK(coordinates(c, n, &r));
  else FG_CHECK(compressed(c, n, csc, &r));

  /* the values are not read (the pattern is the graph), but they must be there, one an entry:
   * only the header of a deflated data.npy is inflated (Reddit's holds 114 million values) */
  FG_CHECK(fg_npz_get_header(c, "data", 1, &a, &label));
  FG_REQUIRE(a.ndim == 1 && a.count == r.num_edges, FG_ERR_FORMAT,
             "%s: expected %lld elements (one per entry), got %lld in %d dimension(s)", label,
             (long long)r.num_edges, (long long)a.count, a.ndim);
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  if (sh) fg_npz_release(c, 16.0);
  free(sh);
  fg_raw_free(&r);
  return st;
}

fg_status fg_read_scipy_sparse_mem(const void *buf, size_t len, const char *name, double held,
                                   fg_raw *out) {
  fg_status st = FG_OK;
  fg_npz *c = NULL;
  memset(out, 0, sizeof *out);
  FG_CHECK(fg_npz_open(buf, len, name, held, &c));
  if (!fg_npz_has(c, "format") || !fg_npz_has(c, "shape")) {
    char list[1024];
    fg_npz_member_list(c, list, sizeof list);
    FG_FAIL(FG_ERR_FORMAT, "%s: member %s.npy is missing (not a scipy.sparse .npz: expected "
            "format, shape, data and indptr/indices or row/col); members: %s", fg_npz_path(c),
            fg_npz_has(c, "format") ? "shape" : "format", list);
  }
  FG_CHECK(fg_npz_scipy_sparse(c, out));
cleanup:
  fg_npz_close(c);
  return st;
}

/* ---- the Reddit pair ------------------------------------------------------------------------- */

/* Multi-label targets from an (n, T) label array (the contract in fg_io.h): integers or bools
 * 1 positive, 0 negative, -1 missing; floats 1.0, 0.0, NaN missing. Anything else is refused,
 * naming the node and task. */
static fg_status reddit_targets(fg_npz *c, const fg_npy *a, const char *label, int64_t n,
                                fg_raw *r) {
  fg_status st = FG_OK;
  const int64_t T = a->shape[1];
  FG_REQUIRE(a->shape[0] == n, FG_ERR_FORMAT, "%s: %lld label rows for %lld nodes", label,
             (long long)a->shape[0], (long long)n);
  FG_REQUIRE(T >= 1 && T <= FG_IO_MAX_CLASSES, FG_ERR_FORMAT,
             "%s: %lld label columns (tasks) out of range [1, %lld]", label, (long long)T,
             (long long)FG_IO_MAX_CLASSES);
  FG_CHECK(fg_npz_hold(c, (double)n * (double)T, label, "the multi-label targets"));
  FG_ALLOC(r->targets, n * T);
  for (int64_t k = 0; k < n * T; k++) {
    int8_t v;
    if (a->kind == 'f') {
      const double x = fg_npy_real_at(a, k);
      FG_REQUIRE(x != x || x == 0.0 || x == 1.0, FG_ERR_FORMAT,
                 "%s: node %lld, task %lld: target %g is not 1, 0 or NaN (missing)", label,
                 (long long)(k / T), (long long)(k % T), x);
      v = x != x ? -1 : (int8_t)x;
    } else {
      int ok;
      const int64_t x = fg_npy_int_at(a, k, &ok);
      FG_REQUIRE(ok, FG_ERR_FORMAT,
                 "%s: node %lld, task %lld: target %llu is not 1, 0 or -1 (missing)", label,
                 (long long)(k / T), (long long)(k % T), (unsigned long long)x);
      FG_REQUIRE(x >= -1 && x <= 1, FG_ERR_FORMAT,
                 "%s: node %lld, task %lld: target %lld is not 1, 0 or -1 (missing)", label,
                 (long long)(k / T), (long long)(k % T), (long long)x);
      v = (int8_t)x;
    }
    r->targets[k] = v;
  }
  r->num_tasks = T;
cleanup:
  return st;
}

/* Whether node i has a label: a class id, or for multi-label some target not missing. */
static int reddit_labelled(const fg_raw *r, int64_t i) {
  if (r->labels) return r->labels[i] >= 0;
  for (int64_t t = 0; t < r->num_tasks; t++)
    if (r->targets[i * r->num_tasks + t] >= 0) return 1;
  return 0;
}

/* reddit_data.npz's arrays for the n nodes of the graph already in r: feature (n x F, any
 * numeric dtype, float16 included), label (n integers, -1 unlabelled; or n x T binary targets,
 * multi-label, as in the fg_raw contract), node_types (n: 1 train, 2 valid, 3 test, as PyG's
 * and DGL's loaders read them; 0, in none of their masks, is a node in no split). Other members
 * are ignored. */
static fg_status reddit_data(fg_npz *c, const char *graph_name, fg_raw *r) {
  fg_status st = FG_OK;
  fg_npy feat, lab, types;
  const char *lf = NULL, *ll = NULL, *lt = NULL;
  const int64_t n = r->num_nodes;
  FG_CHECK(fg_npz_get(c, "feature", 1, &feat, &lf));
  FG_CHECK(fg_npz_get(c, "label", 1, &lab, &ll));
  FG_CHECK(fg_npz_get(c, "node_types", 1, &types, &lt));
  FG_REQUIRE(feat.ndim == 2, FG_ERR_FORMAT, "%s: expected shape (N, F), got %d dimension(s)", lf,
             feat.ndim);
  FG_REQUIRE(feat.shape[0] == n, FG_ERR_FORMAT,
             "%s: %lld feature rows, but the adjacency in %s is %lld x %lld", lf,
             (long long)feat.shape[0], graph_name, (long long)n, (long long)n);
  FG_REQUIRE(feat.shape[1] > 0, FG_ERR_FORMAT, "%s: the features have no columns (shape (%lld, "
             "0))", lf, (long long)n);
  FG_REQUIRE(lab.ndim == 1 || lab.ndim == 2, FG_ERR_FORMAT,
             "%s: expected shape (%lld,) (a class per node) or (%lld, T) (T binary tasks), got "
             "%d dimension(s)", ll, (long long)n, (long long)n, lab.ndim);
  FG_REQUIRE(types.ndim == 1 && types.shape[0] == n, FG_ERR_FORMAT,
             "%s: expected shape (%lld,), got %d dimension(s) with %lld elements", lt,
             (long long)n, types.ndim, (long long)types.count);
  FG_REQUIRE(types.kind == 'i' || types.kind == 'u', FG_ERR_FORMAT,
             "%s: expected integer node types (1 train, 2 valid, 3 test), got dtype '%s'", lt,
             types.descr);

  FG_CHECK(fg_npz_hold_dense(c, lf, n, feat.shape[1]));
  FG_ALLOC(r->features, feat.count);
  FG_CHECK(fg_npy_to_f32(&feat, lf, r->features));
  r->num_features = feat.shape[1];
  if (lab.ndim == 1) FG_CHECK(fg_npz_labels(c, &lab, ll, n, r));
  else FG_CHECK(reddit_targets(c, &lab, ll, n, r));

  FG_CHECK(fg_npz_hold(c, (double)n, lt, "the split"));
  FG_ALLOC(r->split, n);
  for (int64_t i = 0; i < n; i++) {
    int ok;
    const int64_t t = fg_npy_int_at(&types, i, &ok);
    FG_REQUIRE(ok, FG_ERR_FORMAT, "%s: element %lld: node type %llu is not 1 (train), 2 "
               "(valid), 3 (test) or 0 (in no split)", lt, (long long)i, (unsigned long long)t);
    FG_REQUIRE(t >= 0 && t <= 3, FG_ERR_FORMAT,
               "%s: element %lld: node type %lld is not 1 (train), 2 (valid), 3 (test) or 0 (in "
               "no split)", lt, (long long)i, (long long)t);
    if (t == 0) { /* in none of PyG's masks (split == 1, 2, 3) */
      r->split[i] = FG_SPLIT_NONE;
      continue;
    }
    FG_REQUIRE(reddit_labelled(r, i), FG_ERR_FORMAT,
               "%s: element %lld: node %lld is in the %s split but has no label (%s in label.npy)",
               lt, (long long)i, (long long)i, t == 1 ? "train" : t == 2 ? "valid" : "test",
               r->labels ? "-1" : "every target missing");
    r->split[i] = (int8_t)(t - 1); /* FG_SPLIT_TRAIN, _VALID, _TEST */
  }
cleanup:
  return st;
}

/* The pair from two buffers: the graph first (held_graph: bytes held besides, such as the other
 * archive), then the data archive beside the edges (held_data besides them). */
static fg_status reddit_read(const void *dbuf, size_t dlen, const char *dname, const void *gbuf,
                             size_t glen, const char *gname, double held_graph,
                             double held_data, fg_raw *out) {
  fg_status st = FG_OK;
  fg_raw r;
  fg_npz *c = NULL;
  memset(&r, 0, sizeof r);
  FG_CHECK(fg_read_scipy_sparse_mem(gbuf, glen, gname, held_graph, &r));
  FG_CHECK(fg_npz_open(dbuf, dlen, dname, held_data + (double)r.num_edges * fg_io_edge_bytes(),
                       &c));
  FG_CHECK(reddit_data(c, gname, &r));
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  fg_npz_close(c);
  fg_raw_free(&r);
  return st;
}

fg_status fg_read_reddit_mem(const void *data, size_t data_len, const void *graph,
                             size_t graph_len, const char *dir, fg_raw *out) {
  fg_status st = FG_OK;
  char dname[1024], gname[1024];
  memset(out, 0, sizeof *out);
  FG_REQUIRE(data && graph, FG_ERR_INVALID_ARG, "fg_read_reddit_mem: a buffer is NULL");
  snprintf(dname, sizeof dname, "%s/reddit_data.npz", dir ? dir : "(buffer)");
  snprintf(gname, sizeof gname, "%s/reddit_graph.npz", dir ? dir : "(buffer)");
  FG_CHECK(reddit_read(data, data_len, dname, graph, graph_len, gname, (double)data_len,
                       (double)graph_len, out));
cleanup:
  return st;
}

int fg_is_reddit_dir(const char *dir) {
  char p[4096];
  struct stat sb;
  for (int k = 0; k < 2; k++) {
    snprintf(p, sizeof p, "%s/%s", dir, k ? "reddit_graph.npz" : "reddit_data.npz");
    if (stat(p, &sb) == 0) return 1;
  }
  return 0;
}

fg_status fg_read_reddit(const char *dir, fg_raw *out) {
  fg_status st = FG_OK;
  char dname[4096], gname[4096];
  unsigned char *buf = NULL;
  size_t len = 0;
  fg_raw r;
  fg_npz *c = NULL;
  struct stat sb;
  memset(&r, 0, sizeof r);
  memset(out, 0, sizeof *out);
  FG_REQUIRE(dir, FG_ERR_INVALID_ARG, "fg_read_reddit: path is NULL");
  snprintf(dname, sizeof dname, "%s/reddit_data.npz", dir);
  snprintf(gname, sizeof gname, "%s/reddit_graph.npz", dir);
  for (int k = 0; k < 2; k++)
    FG_REQUIRE(stat(k ? gname : dname, &sb) == 0, FG_ERR_IO,
               "%s: missing %s (a Reddit dataset is reddit_data.npz and reddit_graph.npz, side by "
               "side)", dir, k ? "reddit_graph.npz" : "reddit_data.npz");
  /* one archive in memory at a time: the graph, then the features beside its edges */
  FG_CHECK(fg_file_slurp(gname, &buf, &len));
  FG_CHECK(fg_read_scipy_sparse_mem(buf, len, gname, 0.0, &r));
  free(buf);
  buf = NULL;
  FG_CHECK(fg_file_slurp(dname, &buf, &len));
  FG_CHECK(fg_npz_open(buf, len, dname, (double)r.num_edges * fg_io_edge_bytes(), &c));
  FG_CHECK(reddit_data(c, gname, &r));
  *out = r;
  memset(&r, 0, sizeof r);
cleanup:
  fg_npz_close(c);
  free(buf);
  fg_raw_free(&r);
  return st;
}
