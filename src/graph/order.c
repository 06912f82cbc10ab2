/* order.c -- natural, random and METIS vertex orders for 1D block rows (hypergraph and volume
 * in order_hypergraph.c and order_volume.c); permuting a CSR. */
#include <limits.h>
#include <string.h>

#include "core/fg_rng.h"
#include "graph/fg_graph.h"
#include "graph/fg_order.h"

#ifdef FG_HAVE_METIS
#include <metis.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const kOrderNames[FG_ORDER_COUNT] = {"natural", "random", "metis",
                                                       "hypergraph", "volume"};

int fg_order_available(fg_order_kind kind) {
  switch (kind) {
    case FG_ORDER_NATURAL:
    case FG_ORDER_RANDOM:
      return 1;
    case FG_ORDER_METIS:
    case FG_ORDER_VOLUME: /* refines the metis partition */
#ifdef FG_HAVE_METIS
      return 1;
#else
      return 0;
#endif
    case FG_ORDER_HYPERGRAPH:
#ifdef FG_HAVE_ZOLTAN
      return 1;
#else
      return 0;
#endif
  }
  return 0;
}

/* Why kind cannot be computed by this build (NULL: it can). */
static const char *missing_library(fg_order_kind kind) {
  if (fg_order_available(kind)) return NULL;
  return kind == FG_ORDER_HYPERGRAPH ? "Zoltan (install libtrilinos-zoltan-dev and rebuild)"
                                     : "METIS (install libmetis-dev and rebuild)";
}

fg_status fg_order_parse(const char *name, fg_order_kind *out) {
  fg_status st = FG_OK;
  const int k = name ? fg_name_index(name, kOrderNames, FG_ORDER_COUNT) : FG_ORDER_NATURAL;
  FG_REQUIRE(k >= 0, FG_ERR_INVALID_ARG,
             "unknown order '%s' (available: natural, random, metis, hypergraph, volume)", name);
  FG_REQUIRE(fg_order_available((fg_order_kind)k), FG_ERR_UNSUPPORTED,
             "--order %s: this build has no %s; use --order natural or random%s", name,
             missing_library((fg_order_kind)k),
             fg_order_available(FG_ORDER_METIS) ? ", metis or volume" : "");
  *out = (fg_order_kind)k;
cleanup:
  return st;
}

const char *fg_order_name(fg_order_kind kind) {
  const int k = (int)kind;
  return k >= 0 && k < FG_ORDER_COUNT ? kOrderNames[k] : "?";
}

void fg_order_invert(const int64_t *perm, int64_t n, int64_t *inv) {
  for (int64_t k = 0; k < n; k++) inv[perm[k]] = k;
}

int fg_block_owner(const int64_t *offs, int parts, int64_t k) {
  /* the last r with offs[r] <= k: empty blocks (offs[r] == offs[r+1]) are skipped */
  int lo = 0, hi = parts - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (offs[mid] <= k)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

int64_t fg_block_cut(const fg_csr *B, const int64_t *offs, int parts) {
  int64_t cut = 0;
  for (int r = 0; r < parts; r++) {
    for (int64_t u = offs[r]; u < offs[r + 1]; u++) {
      for (int64_t k = B->rowptr[u]; k < B->rowptr[u + 1]; k++) {
        const int64_t v = B->col[k];
        if (v < offs[r] || v >= offs[r + 1]) cut++;
      }
    }
  }
  return cut;
}

/* Balanced contiguous blocks: the first n % parts blocks get one row more. */
static void balanced_offsets(int64_t n, int parts, int64_t *offs) {
  for (int r = 0; r <= parts; r++) offs[r] = fg_block_start(n, parts, r);
}

void fg_order_random(int64_t n, uint64_t seed, uint64_t round, int64_t *perm) {
  for (int64_t k = 0; k < n; k++) perm[k] = k;
  for (int64_t i = n - 1; i > 0; i--) {
    const uint64_t j = fg_rng_u64(seed, FG_RNG_PERMUTE, (uint64_t)i, round, 0, 0) %
                       (uint64_t)(i + 1);
    const int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

#ifdef FG_HAVE_METIS
/* Symmetrized pattern of A without self loops, as METIS's xadj / adjncy. Rows of A and A^T
 * are sorted, so each row is a merge of two sorted lists. */
static fg_status metis_graph(const fg_csr *A, idx_t **xadj_out, idx_t **adj_out, int64_t *m_out) {
  fg_status st = FG_OK;
  fg_csr T = {0};
  const fg_csr *At = A;
  const int64_t n = A->nrows;
  const int64_t idx_max = sizeof(idx_t) == 4 ? (int64_t)INT32_MAX : INT64_MAX;
  idx_t *xadj = NULL, *adj = NULL;
  int64_t total = 0;
  if (!fg_csr_is_symmetric(A)) {
    FG_CHECK(fg_csr_transpose(A, &T));
    At = &T;
  }
  FG_ALLOC(xadj, n + 1);
  for (int pass = 0; pass < 2; pass++) {
    total = 0;
    for (int64_t u = 0; u < n; u++) {
      int64_t a = A->rowptr[u], ae = A->rowptr[u + 1];
      int64_t b = At->rowptr[u], be = At->rowptr[u + 1];
      if (pass == 1) xadj[u] = (idx_t)total;
      while (a < ae || b < be) {
        int32_t v;
        if (b >= be || (a < ae && A->col[a] < At->col[b])) {
          v = A->col[a++];
        } else if (a >= ae || At->col[b] < A->col[a]) {
          v = At->col[b++];
        } else {
          v = A->col[a++];
          b++;
        }
        if (v == u) continue;
        if (pass == 1) adj[total] = (idx_t)v;
        total++;
      }
    }
    if (pass == 0) {
      FG_REQUIRE(total <= idx_max && n <= idx_max, FG_ERR_UNSUPPORTED,
                 "--order metis: the symmetrized graph has %lld entries, beyond METIS's "
                 "%d-bit indices",
                 (long long)total, (int)(8 * sizeof(idx_t)));
      FG_ALLOC(adj, total > 0 ? total : 1);
    }
  }
  xadj[n] = (idx_t)total;
  *xadj_out = xadj;
  *adj_out = adj;
  *m_out = total;
  xadj = NULL;
  adj = NULL;
cleanup:
  fg_csr_free(&T);
  free(xadj);
  free(adj);
  return st;
}

/* part[v] in [0, parts) from METIS k-way with two balance constraints per node: 1 (rows:
 * features, GEMMs, memory) and its row's entries in A (SpMM work). With rows alone, a
 * power-law graph gets blocks of equal size whose nonzeros differ by 10x or more. */
fg_status fg_order_metis_parts(const fg_csr *A, int parts, uint64_t seed, int32_t *part) {
  fg_status st = FG_OK;
  idx_t *xadj = NULL, *adj = NULL, *where = NULL, *vwgt = NULL;
  idx_t options[METIS_NOPTIONS];
  idx_t nv = (idx_t)A->nrows, ncon = 2, np = (idx_t)parts, objval = 0;
  int64_t m = 0;
  int rc;
  FG_REQUIRE(sizeof(idx_t) == 8 || A->nnz <= (int64_t)INT32_MAX, FG_ERR_UNSUPPORTED,
             "--order metis: %lld entries exceed METIS's 32-bit weights", (long long)A->nnz);
  FG_CHECK(metis_graph(A, &xadj, &adj, &m));
  FG_ALLOC(where, A->nrows > 0 ? A->nrows : 1);
  FG_ALLOC(vwgt, 2 * (A->nrows > 0 ? A->nrows : 1));
  for (int64_t v = 0; v < A->nrows; v++) {
    vwgt[2 * v] = 1;
    vwgt[2 * v + 1] = (idx_t)(A->rowptr[v + 1] - A->rowptr[v]);
  }
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = (idx_t)(seed & 0x3fffffff);
  rc = METIS_PartGraphKway(&nv, &ncon, xadj, adj, vwgt, NULL, NULL, &np, NULL, NULL, options,
                           &objval, where);
  FG_REQUIRE(rc == METIS_OK, rc == METIS_ERROR_MEMORY ? FG_ERR_NOMEM : FG_ERR_INTERNAL,
             "--order metis: METIS_PartGraphKway failed (%s) for %lld nodes, %lld edges, %d parts",
             rc == METIS_ERROR_MEMORY  ? "out of memory"
             : rc == METIS_ERROR_INPUT ? "input error"
                                       : "error",
             (long long)A->nrows, (long long)(m / 2), parts);
  for (int64_t v = 0; v < A->nrows; v++) {
    FG_REQUIRE(where[v] >= 0 && where[v] < np, FG_ERR_INTERNAL,
               "--order metis: METIS put node %lld in part %lld of %d", (long long)v,
               (long long)where[v], parts);
    part[v] = (int32_t)where[v];
  }
cleanup:
  free(xadj);
  free(adj);
  free(where);
  free(vwgt);
  return st;
}
#else
fg_status fg_order_metis_parts(const fg_csr *A, int parts, uint64_t seed, int32_t *part) {
  (void)A, (void)parts, (void)seed, (void)part;
  return fg_error_set(FG_ERR_UNSUPPORTED, __FILE__, __LINE__,
                      "--order metis: this build has no METIS (install libmetis-dev and rebuild)");
}
#endif

static int cmp_i32(const void *a, const void *b);

fg_status fg_order_hg_pins(const fg_csr *A, int64_t **vptr_out, int32_t **pins_out) {
  fg_status st = FG_OK;
  const int64_t n = A->nrows;
  int64_t *vptr = NULL, *mark = NULL; /* mark[j]: last vertex that listed net j */
  int32_t *pins = NULL;
  FG_REQUIRE(n <= INT32_MAX, FG_ERR_UNSUPPORTED, "hypergraph: %lld nodes exceed 32-bit ids",
             (long long)n);
  FG_ALLOC(vptr, n + 1);
  FG_ALLOC(pins, A->nnz + n > 0 ? A->nnz + n : 1);
  FG_ALLOC(mark, n > 0 ? n : 1);
  for (int64_t j = 0; j < n; j++) mark[j] = -1;
  vptr[0] = 0;
  /* rows may hold duplicates (--keep-duplicates) and need not list v: dedupe, add v, sort */
  for (int64_t v = 0; v < n; v++) {
    int64_t e = vptr[v];
    int sorted = 1;
    mark[v] = v;
    pins[e++] = (int32_t)v;
    for (int64_t k = A->rowptr[v]; k < A->rowptr[v + 1]; k++) {
      const int32_t j = A->col[k];
      if (mark[j] == v) continue;
      mark[j] = v;
      if (e > vptr[v] + 1 && pins[e - 1] > j) sorted = 0;
      pins[e++] = j;
    }
    if (sorted) {
      /* v (first) moves past the columns below it: one pass */
      for (int64_t a = vptr[v]; a + 1 < e && pins[a + 1] < (int32_t)v; a++) {
        pins[a] = pins[a + 1];
        pins[a + 1] = (int32_t)v;
      }
    } else {
      qsort(pins + vptr[v], (size_t)(e - vptr[v]), sizeof *pins, cmp_i32);
    }
    vptr[v + 1] = e;
  }
  *vptr_out = vptr;
  *pins_out = pins;
  vptr = NULL;
  pins = NULL;
cleanup:
  free(vptr);
  free(pins);
  free(mark);
  return st;
}

fg_status fg_order_compute(const fg_csr *A, int parts, fg_order_kind kind, uint64_t seed,
                           int64_t *perm, int64_t *offs) {
  fg_status st = FG_OK;
  int32_t *part = NULL;
  int64_t *count = NULL;
  const int64_t n = A->nrows;
  FG_REQUIRE(parts >= 1, FG_ERR_INVALID_ARG, "a layout needs at least one part, got %d", parts);
  FG_REQUIRE(A->nrows == A->ncols, FG_ERR_INVALID_ARG,
             "vertex order: the adjacency matrix is %lld x %lld, not square", (long long)A->nrows,
             (long long)A->ncols);
  FG_REQUIRE(kind >= FG_ORDER_NATURAL && (int)kind < FG_ORDER_COUNT, FG_ERR_INVALID_ARG,
             "vertex order: unknown kind %d", (int)kind);
  FG_REQUIRE(fg_order_available(kind), FG_ERR_UNSUPPORTED, "--order %s: this build has no %s",
             fg_order_name(kind), missing_library(kind));
  /* balanced blocks, also for the partitioners when there is nothing to partition: one part,
   * or at most one node per part (METIS refuses more parts than nodes) */
  balanced_offsets(n, parts, offs);
  if (kind == FG_ORDER_RANDOM) {
    fg_order_random(n, seed, 0, perm);
  } else if (kind == FG_ORDER_NATURAL || parts == 1 || n <= parts) {
    for (int64_t k = 0; k < n; k++) perm[k] = k;
  } else {
    FG_ALLOC(part, n);
    FG_CALLOC(count, parts + 1);
    if (kind == FG_ORDER_HYPERGRAPH) {
      FG_CHECK(fg_order_hypergraph_parts(A, parts, seed, part));
      /* PHG balanced entries only: bring rows and entries each within 5% */
      FG_CHECK(fg_order_rebalance(A, parts, seed, 0.05, part, NULL));
    } else {
      FG_CHECK(fg_order_metis_parts(A, parts, seed, part));
      if (kind == FG_ORDER_VOLUME) FG_CHECK(fg_order_volume_refine(A, parts, seed, part, NULL));
    }
    /* stable counting sort by part: nodes of each part keep their original relative order */
    for (int64_t v = 0; v < n; v++) count[part[v] + 1]++;
    for (int r = 0; r < parts; r++) count[r + 1] += count[r];
    for (int r = 0; r <= parts; r++) offs[r] = count[r];
    for (int64_t v = 0; v < n; v++) perm[count[part[v]]++] = v;
  }
cleanup:
  free(part);
  free(count);
  return st;
}

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

fg_status fg_csr_permute(const fg_csr *A, const int64_t *row_perm, const int64_t *col_inv,
                         fg_csr *out) {
  fg_status st = FG_OK;
  uint64_t *keys = NULL; /* (threads x longest row) column << 32 | value bits, with values */
  int64_t maxlen = 0;
  const int64_t n = A->nrows;
  const int nt = fg_max_threads();
  fg_csr B = {.nrows = n, .ncols = n, .nnz = A->nnz};
  FG_REQUIRE(A->nrows == A->ncols, FG_ERR_INVALID_ARG, "csr permute: matrix is %lld x %lld",
             (long long)A->nrows, (long long)A->ncols);
  FG_ALLOC(B.rowptr, n + 1);
  FG_ALLOC(B.col, A->nnz > 0 ? A->nnz : 1);
  B.rowptr[0] = 0;
  for (int64_t k = 0; k < n; k++) {
    const int64_t u = row_perm[k], len = A->rowptr[u + 1] - A->rowptr[u];
    B.rowptr[k + 1] = B.rowptr[k] + len;
    maxlen = FG_MAX(maxlen, len);
  }
  if (A->val) {
    FG_ALLOC(B.val, A->nnz > 0 ? A->nnz : 1);
    FG_ALLOC(keys, (maxlen > 0 ? maxlen : 1) * nt);
  }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
  for (int64_t k = 0; k < n; k++) {
    const int64_t u = row_perm[k], a0 = A->rowptr[u], len = A->rowptr[u + 1] - a0;
    const int64_t b0 = B.rowptr[k];
    if (A->val) {
#ifdef _OPENMP
      uint64_t *kb = keys + (int64_t)omp_get_thread_num() * maxlen; // (len)
#else
      uint64_t *kb = keys; // (len)
#endif
      for (int64_t e = 0; e < len; e++) {
        uint32_t bits;
        memcpy(&bits, &A->val[a0 + e], sizeof bits);
        kb[e] = ((uint64_t)col_inv[A->col[a0 + e]] << 32) | bits;
      }
      qsort(kb, (size_t)len, sizeof *kb, cmp_u64);
      for (int64_t e = 0; e < len; e++) {
        const uint32_t bits = (uint32_t)(kb[e] & 0xffffffffu);
        B.col[b0 + e] = (int32_t)(kb[e] >> 32);
        memcpy(&B.val[b0 + e], &bits, sizeof bits);
      }
    } else {
      for (int64_t e = 0; e < len; e++) B.col[b0 + e] = (int32_t)col_inv[A->col[a0 + e]];
      qsort(B.col + b0, (size_t)len, sizeof *B.col, cmp_i32);
    }
  }
  *out = B;
  memset(&B, 0, sizeof B);
cleanup:
  free(keys);
  fg_csr_free(&B);
  return st;
}
