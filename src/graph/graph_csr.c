/* graph_csr.c -- CSR patterns from edge lists, the symmetry test, GCN normalization and
 * degree statistics.
 *
 * fg_csr_from_edges is a two-level bucket sort so that it runs in parallel without atomics
 * and with little memory beyond the result:
 *   1. every part (a contiguous range of edges and of nodes) counts its entries per coarse
 *      bucket of rows (at most FG_CSR_MAX_BUCKETS buckets, 2^shift rows each);
 *   2. a prefix sum over (bucket, part) gives every part its own write cursor per bucket;
 *   3. every part scatters its entries as (row << 32 | col) keys into its cursors;
 *   4. every bucket, on its own, counting-sorts its keys by row into the column array, sorts
 *      each row's columns, drops duplicates, and records the row lengths;
 *   5. a prefix sum gives rowptr and the buckets' column runs are moved together.
 * Peak memory: 12 bytes per entry (keys + columns) plus the row pointers. The result does
 * not depend on the number of threads.
 */
#include <math.h>
#include <string.h>

#include "graph/fg_graph.h"
#include "kernels/fg_kernel_util.h"

#define FG_CSR_MAX_BUCKETS 16384
#define FG_CSR_MIN_WORK_PER_PART 65536

/* ---- sorting 32-bit columns ------------------------------------------------------------ */

static void swap_i32(int32_t *a, int32_t *b) {
  const int32_t t = *a;
  *a = *b;
  *b = t;
}

static void sort_insertion_i32(int32_t *a, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    int32_t x = a[i];
    int64_t j = i - 1;
    while (j >= 0 && a[j] > x) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = x;
  }
}

static void sift_down_i32(int32_t *a, int64_t n, int64_t i) {
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= n) return;
    if (c + 1 < n && a[c + 1] > a[c]) c++;
    if (a[i] >= a[c]) return;
    swap_i32(&a[i], &a[c]);
    i = c;
  }
}

static void sort_heap_i32(int32_t *a, int64_t n) {
  for (int64_t i = n / 2 - 1; i >= 0; i--) sift_down_i32(a, n, i);
  for (int64_t end = n - 1; end > 0; end--) {
    swap_i32(&a[0], &a[end]);
    sift_down_i32(a, end, 0);
  }
}

static int32_t median3_i32(int32_t x, int32_t y, int32_t z) {
  if (x > y) swap_i32(&x, &y);
  if (y > z) y = z;
  return x > y ? x : y;
}

/* Introsort with a three-way partition (rows of a graph without dedup may repeat a column
 * many times); heapsort past the depth limit, insertion sort for short ranges. */
static void sort_intro_i32(int32_t *a, int64_t n, int depth) {
  while (n > 24) {
    if (depth-- <= 0) {
      sort_heap_i32(a, n);
      return;
    }
    int32_t p = median3_i32(a[0], a[n / 2], a[n - 1]);
    int64_t lt = 0, i = 0, gt = n;
    while (i < gt) {
      if (a[i] < p) {
        swap_i32(&a[lt++], &a[i++]);
      } else if (a[i] > p) {
        swap_i32(&a[--gt], &a[i]);
      } else {
        i++;
      }
    }
    /* [0, lt) < p, [lt, gt) == p (not empty), [gt, n) > p: recurse on the smaller side */
    if (lt < n - gt) {
      sort_intro_i32(a, lt, depth);
      a += gt;
      n -= gt;
    } else {
      sort_intro_i32(a + gt, n - gt, depth);
      n = lt;
    }
  }
  sort_insertion_i32(a, n);
}

static void sort_i32(int32_t *a, int64_t n) {
  int depth = 0;
  for (int64_t k = n; k > 1; k >>= 1) depth += 2;
  sort_intro_i32(a, n, depth);
}

/* ---- building --------------------------------------------------------------------------- */

/* Entry (r, c) of a part: one more in row r's bucket, h[r >> shift], which counts the part's
 * entries per bucket (keys NULL) or is its write cursor there for the key r << 32 | c. */
static inline void put_entry(int64_t *h, uint64_t *keys, int shift, int64_t r, int64_t c) {
  const int64_t at = h[r >> shift]++;
  if (keys) keys[at] = (uint64_t)r << 32 | (uint64_t)c;
}

/* Steps 1 and 3 for part p (a block of the m edges and of the n nodes): its entries through
 * put_entry. Returns the part's first edge with a node id outside [0, n), or -1. */
static int64_t bucket_part(const int64_t *src, const int64_t *dst, int64_t m, int64_t n,
                           int64_t parts, int64_t p, int shift, int undirected, int self_loops,
                           int64_t *h, uint64_t *keys) {
  const int64_t e1 = fg_block_start(m, parts, p + 1);
  for (int64_t e = fg_block_start(m, parts, p); e < e1; e++) {
    const int64_t s = src[e], d = dst[e];
    if (s < 0 || s >= n || d < 0 || d >= n) return e;
    if (s != d || !self_loops) put_entry(h, keys, shift, d, s);
    if (s != d && undirected) put_entry(h, keys, shift, s, d);
  }
  if (self_loops) {
    const int64_t v1 = fg_block_start(n, parts, p + 1);
    for (int64_t v = fg_block_start(n, parts, p); v < v1; v++) put_entry(h, keys, shift, v, v);
  }
  return -1;
}

fg_status fg_csr_from_edges(int64_t n, const int64_t *src, const int64_t *dst, int64_t m,
                            int undirected, int dedup, int self_loops, fg_csr *out) {
  fg_status st = FG_OK;
  int64_t *rowptr = NULL; /* (n + 1) */
  int32_t *col = NULL;    /* (total entries before dedup) */
  uint64_t *keys = NULL;  /* (total entries) row << 32 | col, grouped by bucket */
  int64_t *cursor = NULL; /* (parts x nb) counts, then write cursors */
  int64_t *bstart = NULL; /* (nb + 1) first key of each bucket */
  int64_t *bad = NULL;    /* (parts) first out-of-range edge of each part, or -1 */
  int64_t *bpart = NULL;  /* (parts + 1) buckets of each sorting part */
  int64_t *ucount = NULL; /* (nb) entries of each bucket after dedup */

  FG_REQUIRE(out != NULL, FG_ERR_INVALID_ARG, "fg_csr_from_edges: output is NULL");
  memset(out, 0, sizeof *out);
  FG_REQUIRE(n >= 0 && n <= INT32_MAX, FG_ERR_UNSUPPORTED,
             "graph has %lld nodes; at most 2^31 - 1 are supported (32-bit column ids)",
             (long long)n);
  FG_REQUIRE(m >= 0, FG_ERR_INVALID_ARG, "negative edge count %lld", (long long)m);
  FG_REQUIRE(m == 0 || (src != NULL && dst != NULL), FG_ERR_INVALID_ARG,
             "edge arrays are NULL but %lld edges were announced", (long long)m);
  if (undirected) dedup = 1;
  self_loops = self_loops != 0;

  int shift = 0;
  while (((n + ((int64_t)1 << shift) - 1) >> shift) > FG_CSR_MAX_BUCKETS) shift++;
  const int64_t nb = n == 0 ? 0 : ((n - 1) >> shift) + 1;
  const int64_t parts = fg_kernel_tasks(m + n, FG_CSR_MIN_WORK_PER_PART);

  FG_ALLOC(rowptr, n + 1);
  FG_CALLOC(cursor, parts * nb);
  FG_ALLOC(bstart, nb + 1);
  FG_ALLOC(bad, parts);

  /* 1. count entries per (part, bucket), checking every id */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (int64_t p = 0; p < parts; p++)
    bad[p] =
        bucket_part(src, dst, m, n, parts, p, shift, undirected, self_loops, cursor + p * nb, NULL);
  for (int64_t p = 0; p < parts; p++) {
    const int64_t e = bad[p];
    FG_REQUIRE(e < 0, FG_ERR_INVALID_ARG,
               "edge %lld (%lld -> %lld): node id %lld out of range [0, %lld)", (long long)e,
               (long long)src[e], (long long)dst[e],
               (long long)(src[e] < 0 || src[e] >= n ? src[e] : dst[e]), (long long)n);
  }

  /* 2. bucket starts and per-part cursors */
  int64_t total = 0;
  for (int64_t b = 0; b < nb; b++) {
    bstart[b] = total;
    for (int64_t p = 0; p < parts; p++) {
      const int64_t c = cursor[p * nb + b];
      cursor[p * nb + b] = total;
      total += c;
    }
  }
  bstart[nb] = total;
  FG_ALLOC(keys, total);
  FG_ALLOC(col, total);

  /* 3. scatter the keys */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (int64_t p = 0; p < parts; p++)
    bucket_part(src, dst, m, n, parts, p, shift, undirected, self_loops, cursor + p * nb, keys);
  free(cursor);
  cursor = NULL;

  /* 4. sort every bucket; buckets are cut into parts of about equal key counts */
  FG_ALLOC(bpart, parts + 1);
  FG_ALLOC(ucount, nb);
  {
    int64_t b = 0;
    for (int64_t q = 0; q < parts; q++) {
      const int64_t target = fg_block_start(total, parts, q);
      while (b < nb && bstart[b] < target) b++;
      bpart[q] = b;
    }
    bpart[parts] = nb;
  }
  rowptr[0] = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (int64_t q = 0; q < parts; q++) {
    for (int64_t b = bpart[q]; b < bpart[q + 1]; b++) {
      const int64_t r0 = b << shift, r1 = FG_MIN(n, (b + 1) << shift);
      const int64_t k0 = bstart[b], k1 = bstart[b + 1];
      /* counting sort by row: rowptr[r + 1] first counts row r, then is its write cursor,
       * and ends as the end of row r */
      for (int64_t r = r0; r < r1; r++) rowptr[r + 1] = 0;
      for (int64_t k = k0; k < k1; k++) rowptr[(int64_t)(keys[k] >> 32) + 1]++;
      int64_t run = k0;
      for (int64_t r = r0; r < r1; r++) {
        const int64_t c = rowptr[r + 1];
        rowptr[r + 1] = run;
        run += c;
      }
      for (int64_t k = k0; k < k1; k++) {
        const int64_t r = (int64_t)(keys[k] >> 32);
        col[rowptr[r + 1]++] = (int32_t)(keys[k] & 0xffffffffu);
      }
      /* sort each row, drop duplicates, pack the bucket's rows at k0; rowptr[r + 1] ends as
       * the length of row r */
      int64_t start = k0, wpos = k0;
      for (int64_t r = r0; r < r1; r++) {
        const int64_t end = rowptr[r + 1];
        const int64_t len = end - start;
        if (len <= 16)
          sort_insertion_i32(col + start, len);
        else
          sort_i32(col + start, len);
        const int64_t w0 = wpos;
        for (int64_t k = start; k < end; k++) {
          if (dedup && wpos > w0 && col[wpos - 1] == col[k]) continue;
          col[wpos++] = col[k];
        }
        rowptr[r + 1] = wpos - w0;
        start = end;
      }
      ucount[b] = wpos - k0;
    }
  }
  free(keys);
  keys = NULL;

  /* 5. row pointers and packing the buckets together (moves go left, in order) */
  for (int64_t r = 0; r < n; r++) rowptr[r + 1] += rowptr[r];
  for (int64_t b = 0; b < nb; b++) {
    const int64_t from = bstart[b], to = rowptr[b << shift];
    if (from != to && ucount[b] > 0) memmove(col + to, col + from, (size_t)ucount[b] * sizeof *col);
  }
  const int64_t nnz = rowptr[n];
  if (nnz == 0) {
    free(col);
    col = NULL;
  } else if (nnz < total) {
    int32_t *shrunk = realloc(col, (size_t)nnz * sizeof *col);
    if (shrunk) col = shrunk;
  }

  *out = (fg_csr){.nrows = n, .ncols = n, .nnz = nnz, .rowptr = rowptr, .col = col};
  rowptr = NULL;
  col = NULL;

cleanup:
  free(rowptr);
  free(col);
  free(keys);
  free(cursor);
  free(bstart);
  free(bad);
  free(bpart);
  free(ucount);
  return st;
}

/* ---- symmetry ---------------------------------------------------------------------------- */

/* A pattern with sorted rows equals its transpose iff, visiting rows i in increasing order,
 * each entry (i, j) meets i as the next unvisited column of row j: row j's columns are
 * sorted, and the rows i that point to j come in increasing order. One pass, one cursor per
 * row, duplicates counted. (A binary search per entry was several times slower on skewed
 * graphs: most entries point into long rows.) */
int fg_csr_is_symmetric(const fg_csr *A) {
  if (!A || A->nrows != A->ncols) return 0;
  const int64_t n = A->nrows;
  if (n == 0) return 1;
  if (!A->rowptr) return 0;
  const int64_t *rp = A->rowptr;
  const int32_t *ci = A->col;
  int64_t *cursor = fg_malloc_array((size_t)n, sizeof *cursor); /* (n) next entry per row */
  if (!cursor) return 0;
  memcpy(cursor, rp, (size_t)n * sizeof *cursor);
  int ok = 1;
  for (int64_t i = 0; i < n && ok; i++) {
    for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
      const int32_t j = ci[k];
      if (j < 0 || j >= n || cursor[j] >= rp[j + 1] || ci[cursor[j]] != i ||
          (A->val && A->val[k] != A->val[cursor[j]])) {
        ok = 0;
        break;
      }
      cursor[j]++;
    }
  }
  free(cursor);
  return ok;
}

/* ---- the aggregation operator --------------------------------------------------------- */

int fg_name_index(const char *name, const char *const *names, int count) {
  for (int k = 0; name && k < count; k++)
    if (strcmp(name, names[k]) == 0) return k;
  return -1;
}

static const char *const kAdjNames[] = {"sym", "mean", "sum"};

const char *fg_adj_norm_name(fg_adj_norm norm) {
  return norm >= FG_ADJ_SYM && norm <= FG_ADJ_SUM ? kAdjNames[norm] : "?";
}

int fg_adj_norm_parse(const char *name, fg_adj_norm *out) {
  const int k = fg_name_index(name, kAdjNames, 3);
  if (k >= 0) *out = (fg_adj_norm)k;
  return k >= 0;
}

fg_status fg_adj_operator(const fg_csr *pattern, fg_adj_spec spec, fg_csr *out) {
  fg_status st = FG_OK;
  const int64_t n = pattern->nrows;
  fg_csr B = {.nrows = n, .ncols = pattern->ncols};
  memset(out, 0, sizeof *out);
  FG_ALLOC(B.rowptr, n + 1);
  FG_ALLOC(B.col, FG_MAX(pattern->nnz, 1));
  B.rowptr[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t k = pattern->rowptr[i]; k < pattern->rowptr[i + 1]; k++)
      if (!spec.no_self_loops || pattern->col[k] != i) B.col[B.nnz++] = pattern->col[k];
    B.rowptr[i + 1] = B.nnz;
  }
  FG_CHECK(fg_adj_normalize(&B, spec.norm));
  *out = B;
  memset(&B, 0, sizeof B);
cleanup:
  fg_csr_free(&B);
  return st;
}

fg_status fg_adj_normalize(fg_csr *A, fg_adj_norm norm) {
  fg_status st = FG_OK;
  int64_t *colcount = NULL; /* (ncols) entries per column */
  float *val = NULL;

  FG_REQUIRE(A != NULL, FG_ERR_INVALID_ARG, "fg_adj_normalize: matrix is NULL");
  FG_REQUIRE(A->nrows >= 0 && A->ncols >= 0 && A->nnz >= 0 && A->rowptr != NULL, FG_ERR_INVALID_ARG,
             "fg_adj_normalize: matrix is not initialized");
  const int64_t nr = A->nrows, nc = A->ncols;
  const int64_t *rp = A->rowptr;
  const int32_t *ci = A->col;
  FG_REQUIRE(rp[nr] == A->nnz, FG_ERR_INTERNAL, "CSR rowptr[%lld] = %lld but nnz = %lld",
             (long long)nr, (long long)rp[nr], (long long)A->nnz);

  FG_CALLOC(colcount, nc);
  for (int64_t k = 0; k < A->nnz; k++) {
    FG_REQUIRE(ci[k] >= 0 && ci[k] < nc, FG_ERR_INTERNAL,
               "CSR entry %lld: column %d out of range [0, %lld)", (long long)k, (int)ci[k],
               (long long)nc);
    colcount[ci[k]]++;
  }
  val = A->val;
  if (!val) FG_ALLOC(val, A->nnz);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (int64_t i = 0; i < nr; i++) {
    const double rdeg = (double)(rp[i + 1] - rp[i]);
    for (int64_t k = rp[i]; k < rp[i + 1]; k++)
      val[k] = norm == FG_ADJ_SUM    ? 1.0f
               : norm == FG_ADJ_MEAN ? (float)(1.0 / rdeg)
                                     : (float)(1.0 / sqrt(rdeg * (double)colcount[ci[k]]));
  }
  A->val = val;
  val = NULL;

cleanup:
  if (A && val != A->val) free(val);
  free(colcount);
  return st;
}

/* ---- degree statistics ---------------------------------------------------------------------- */

void fg_degree_stats_compute(const fg_csr *A, fg_degree_stats *s) {
  int64_t *hist = NULL; /* (max + 1) nodes per degree */
  if (!s) return;
  memset(s, 0, sizeof *s);
  if (!A || A->nrows <= 0 || !A->rowptr) return;
  const int64_t n = A->nrows;
  int64_t mn = INT64_MAX, mx = 0, isolated = 0;
  double sum = 0.0, sumsq = 0.0;
  for (int64_t i = 0; i < n; i++) {
    int64_t d = 0;
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) d += A->col[k] != i;
    mn = FG_MIN(mn, d);
    mx = FG_MAX(mx, d);
    isolated += d == 0;
    sum += (double)d;
    sumsq += (double)d * (double)d;
  }
  const double mean = sum / (double)n, var = sumsq / (double)n - mean * mean;
  const double sd = var > 0.0 ? sqrt(var) : 0.0;
  *s = (fg_degree_stats){.min = mn, .max = mx, .mean = mean, .stddev = sd, .isolated = isolated};

  /* nearest-rank percentiles from a histogram of degrees */
  hist = fg_calloc_array((size_t)mx + 1, sizeof *hist);
  if (!hist) {
    s->p50 = s->p90 = s->p99 = -1;
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t d = 0;
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) d += A->col[k] != i;
    hist[d]++;
  }
  const int pct[3] = {50, 90, 99};
  int64_t *res[3] = {&s->p50, &s->p90, &s->p99};
  for (int t = 0; t < 3; t++) {
    /* smallest d with at least ceil(pct * n / 100) nodes of degree <= d */
    const int64_t need = (pct[t] * n + 99) / 100;
    int64_t seen = 0, d = 0;
    while (d < mx && seen + hist[d] < need) seen += hist[d++];
    *res[t] = d;
  }
  free(hist);
}
