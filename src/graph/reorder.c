/* reorder.c -- vertex orders for locality of one process's SpMM (--reorder): applied once
 * before training by the serial scheme, invisible in outputs (rows keep their original ids in
 * global_ids, which key dropout masks and outputs).
 *
 *   degree  nodes by decreasing in-use count (how many nonzeros gather the node's row, its
 *           column count), ties by id: the rows gathered most share pages and cache sets
 *   rcm     reverse Cuthill-McKee: breadth-first from a least-connected unvisited node,
 *           neighbours by increasing degree, the whole order reversed; nonzeros gather near
 *           the diagonal on graphs with locality (meshes, road and collaboration networks)
 */
#include <string.h>

#include "graph/fg_graph.h"

fg_status fg_reorder_parse(const char *name, fg_reorder_kind *out) {
  fg_status st = FG_OK;
  if (!name || strcmp(name, "none") == 0) {
    *out = FG_REORDER_NONE;
  } else if (strcmp(name, "degree") == 0) {
    *out = FG_REORDER_DEGREE;
  } else if (strcmp(name, "rcm") == 0) {
    *out = FG_REORDER_RCM;
  } else {
    FG_FAIL(FG_ERR_INVALID_ARG, "unknown --reorder '%s' (available: none, degree, rcm)", name);
  }
cleanup:
  return st;
}

const char *fg_reorder_name(fg_reorder_kind kind) {
  switch (kind) {
    case FG_REORDER_NONE:
      return "none";
    case FG_REORDER_DEGREE:
      return "degree";
    case FG_REORDER_RCM:
      return "rcm";
  }
  return "?";
}

/* perm = nodes by decreasing key, ties by increasing id (a counting sort: keys are < n + 1). */
static fg_status sort_desc(const int64_t *key, int64_t n, int64_t *perm) {
  fg_status st = FG_OK;
  int64_t *start = NULL, maxk = 0;
  for (int64_t i = 0; i < n; i++) maxk = FG_MAX(maxk, key[i]);
  FG_CALLOC(start, maxk + 2);
  for (int64_t i = 0; i < n; i++) start[maxk - key[i] + 1]++; /* bucket 0 = the largest key */
  for (int64_t b = 0; b <= maxk; b++) start[b + 1] += start[b];
  for (int64_t i = 0; i < n; i++) perm[start[maxk - key[i]]++] = i;
cleanup:
  free(start);
  return st;
}

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static fg_status order_rcm(const fg_csr *A, int64_t *perm) {
  fg_status st = FG_OK;
  const int64_t n = A->nrows;
  uint8_t *seen = NULL;
  uint64_t *keys = NULL; /* (nnz + 1) degree << 32 | id of a node's newly reached neighbours */
  int64_t *by_degree = NULL, *negdeg = NULL, head = 0, tail = 0;
  FG_CALLOC(seen, n > 0 ? n : 1);
  FG_ALLOC(keys, A->nnz + 1);
  FG_ALLOC(by_degree, n > 0 ? n : 1);
  FG_ALLOC(negdeg, n > 0 ? n : 1);
  /* start nodes in increasing degree (then id): sort_desc on (max degree - degree) */
  {
    int64_t maxd = 0;
    for (int64_t i = 0; i < n; i++) maxd = FG_MAX(maxd, A->rowptr[i + 1] - A->rowptr[i]);
    for (int64_t i = 0; i < n; i++) negdeg[i] = maxd - (A->rowptr[i + 1] - A->rowptr[i]);
    FG_CHECK(sort_desc(negdeg, n, by_degree));
  }
  for (int64_t s = 0; s < n; s++) {
    const int64_t root = by_degree[s];
    if (seen[root]) continue;
    seen[root] = 1;
    perm[tail++] = root;
    while (head < tail) {
      const int64_t u = perm[head++];
      int64_t m = 0;
      for (int64_t k = A->rowptr[u]; k < A->rowptr[u + 1]; k++) {
        const int64_t v = A->col[k];
        if (seen[v]) continue;
        seen[v] = 1;
        keys[m++] = ((uint64_t)(A->rowptr[v + 1] - A->rowptr[v]) << 32) | (uint64_t)v;
      }
      qsort(keys, (size_t)m, sizeof *keys, cmp_u64);
      for (int64_t j = 0; j < m; j++) perm[tail++] = (int64_t)(keys[j] & 0xffffffffu);
    }
  }
  /* reverse */
  for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
    const int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
cleanup:
  free(seen);
  free(keys);
  free(by_degree);
  free(negdeg);
  return st;
}

fg_status fg_reorder_compute(const fg_csr *A, fg_reorder_kind kind, int64_t *perm) {
  fg_status st = FG_OK;
  int64_t *count = NULL;
  const int64_t n = A->nrows;
  FG_REQUIRE(A->nrows == A->ncols, FG_ERR_INVALID_ARG, "--reorder: the matrix is %lld x %lld",
             (long long)A->nrows, (long long)A->ncols);
  FG_REQUIRE(n < ((int64_t)1 << 32), FG_ERR_UNSUPPORTED, "--reorder: %lld nodes is too many",
             (long long)n);
  switch (kind) {
    case FG_REORDER_NONE:
      for (int64_t i = 0; i < n; i++) perm[i] = i;
      break;
    case FG_REORDER_DEGREE:
      FG_CALLOC(count, n > 0 ? n : 1);
      for (int64_t k = 0; k < A->nnz; k++) count[A->col[k]]++;
      FG_CHECK(sort_desc(count, n, perm));
      break;
    case FG_REORDER_RCM:
      FG_CHECK(order_rcm(A, perm));
      break;
    default:
      FG_FAIL(FG_ERR_INVALID_ARG, "unknown reorder kind %d", (int)kind);
  }
cleanup:
  free(count);
  return st;
}
