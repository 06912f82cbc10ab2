/* reorder.c -- vertex orders for locality of one process's SpMM (--reorder): applied once
 * before training by the serial scheme, invisible in outputs (rows keep their original ids in
 * global_ids, which key dropout masks and outputs).
 *
 *   degree  nodes by decreasing in-use count (how many nonzeros gather the node's row, its
 *           column count), ties by id: the rows gathered most share pages and cache sets
 *   rcm     reverse Cuthill-McKee: breadth-first from a least-connected unvisited node,
 *           neighbours by increasing degree, the whole order reversed; nonzeros gather near
 *           the diagonal on graphs with locality (meshes, road and collaboration networks)
 *   auto    the one of none, degree and rcm whose SpMM gathers hit a simulated cache of 4 KiB
 *           blocks most often; none when X fits in the cache. Neither order wins everywhere: degree
 *           gathers a power-law graph's hubs from a few pages, rcm keeps the band of a mesh,
 *           and both scatter an input whose ids already carry locality.
 */
#include <stdio.h>
#include <string.h>

#include "graph/fg_graph.h"

static const char *const kReorderNames[] = {"none", "degree", "rcm", "auto"};

fg_status fg_reorder_parse(const char *name, fg_reorder_kind *out) {
  fg_status st = FG_OK;
  const int k = name ? fg_name_index(name, kReorderNames, 4) : FG_REORDER_NONE;
  FG_REQUIRE(k >= 0, FG_ERR_INVALID_ARG,
             "unknown --reorder '%s' (available: auto, none, degree, rcm)", name);
  *out = (fg_reorder_kind)k;
cleanup:
  return st;
}

const char *fg_reorder_name(fg_reorder_kind kind) {
  return kind >= FG_REORDER_NONE && kind <= FG_REORDER_AUTO ? kReorderNames[kind] : "?";
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
    case FG_REORDER_AUTO:
      FG_FAIL(FG_ERR_INVALID_ARG, "fg_reorder_compute: auto is chosen by fg_reorder_auto");
    default:
      FG_FAIL(FG_ERR_INVALID_ARG, "unknown reorder kind %d", (int)kind);
  }
cleanup:
  free(count);
  return st;
}

fg_status fg_reorder_hit_rate(const fg_csr *A, const int64_t *perm, int64_t cache_rows,
                              int64_t block_rows, double *hit) {
  enum { WAYS = 8 };
  fg_status st = FG_OK;
  const int64_t n = A->nrows, total = A->nnz;
  const int64_t nsets = FG_MAX(cache_rows / block_rows / WAYS, 1);
  const int64_t per = total <= FG_REORDER_SIM_ACCESSES
                          ? total
                          : FG_REORDER_SIM_ACCESSES / FG_REORDER_SIM_WINDOWS;
  uint32_t *inv = NULL, *tags = NULL; /* tags: WAYS per set, most recently used first */
  int64_t pos = 0, hits = 0, seen = 0;
  *hit = 0.0;
  FG_REQUIRE(n < ((int64_t)1 << 32) - 1, FG_ERR_UNSUPPORTED, "--reorder: %lld nodes is too many",
             (long long)n);
  FG_ALLOC(tags, nsets * WAYS);
  for (int64_t i = 0; i < nsets * WAYS; i++) tags[i] = UINT32_MAX;
  if (perm) {
    FG_ALLOC(inv, n > 0 ? n : 1);
    for (int64_t k = 0; k < n; k++) inv[perm[k]] = (uint32_t)k;
  }
  for (int64_t k = 0; k < n; k++) {
    const int64_t u = perm ? perm[k] : k;
    const int64_t b = A->rowptr[u], e = A->rowptr[u + 1];
    /* sampled: a row is simulated when it starts in the first `per` nonzeros of a window */
    const int64_t w = total > per ? pos * FG_REORDER_SIM_WINDOWS / total : 0;
    const int skip = total > per && pos - total * w / FG_REORDER_SIM_WINDOWS >= per;
    pos += e - b;
    if (skip) continue;
    for (int64_t j = b; j < e; j++) {
      const uint32_t row = inv ? inv[A->col[j]] : (uint32_t)A->col[j];
      const uint32_t id = (uint32_t)(row / (uint64_t)block_rows); /* its block */
      uint32_t *t = tags + (int64_t)(id % (uint64_t)nsets) * WAYS;
      int p = 0;
      while (p < WAYS && t[p] != id) p++;
      if (p < WAYS)
        hits++;
      else
        p = WAYS - 1;
      for (; p > 0; p--) t[p] = t[p - 1];
      t[0] = id;
      seen++;
    }
  }
  *hit = seen > 0 ? (double)hits / (double)seen : 0.0;
cleanup:
  free(inv);
  free(tags);
  return st;
}

int fg_reorder_auto_simulates(int64_t n, int64_t row_bytes, int64_t cache_bytes) {
  return (double)n * (double)row_bytes > (double)cache_bytes;
}

fg_status fg_reorder_auto(const fg_csr *A, int64_t row_bytes, int64_t cache_bytes,
                          int64_t *perm, fg_reorder_choice *out) {
  fg_status st = FG_OK;
  const int64_t n = A->nrows;
  int64_t *other = NULL;
  *out = (fg_reorder_choice){
      .kind = FG_REORDER_NONE, .cache_bytes = cache_bytes, .row_bytes = row_bytes};
  FG_REQUIRE(row_bytes > 0 && cache_bytes > 0, FG_ERR_INVALID_ARG,
             "--reorder auto: rows of %lld bytes, a cache of %lld bytes", (long long)row_bytes,
             (long long)cache_bytes);
  if (fg_reorder_auto_simulates(n, row_bytes, cache_bytes)) {
    const int64_t rows = FG_MAX(cache_bytes / row_bytes, 1);
    const int64_t block = FG_MAX(FG_REORDER_BLOCK_BYTES / row_bytes, 1);
    out->simulated = 1;
    FG_ALLOC(other, n > 0 ? n : 1);
    FG_CHECK(fg_reorder_hit_rate(A, NULL, rows, block, &out->hit[FG_REORDER_NONE]));
    FG_CHECK(fg_reorder_compute(A, FG_REORDER_DEGREE, perm));
    FG_CHECK(fg_reorder_hit_rate(A, perm, rows, block, &out->hit[FG_REORDER_DEGREE]));
    FG_CHECK(fg_reorder_compute(A, FG_REORDER_RCM, other));
    FG_CHECK(fg_reorder_hit_rate(A, other, rows, block, &out->hit[FG_REORDER_RCM]));
    {
      const fg_reorder_kind best =
          out->hit[FG_REORDER_RCM] > out->hit[FG_REORDER_DEGREE] ? FG_REORDER_RCM
                                                                 : FG_REORDER_DEGREE;
      const double miss_none = 1.0 - out->hit[FG_REORDER_NONE];
      if (1.0 - out->hit[best] <= (1.0 - FG_REORDER_MIN_GAIN) * miss_none && miss_none > 0.0)
        out->kind = best;
    }
    if (out->kind == FG_REORDER_RCM) memcpy(perm, other, (size_t)n * sizeof *perm);
  }
  if (out->kind == FG_REORDER_NONE)
    for (int64_t i = 0; i < n; i++) perm[i] = i;
cleanup:
  free(other);
  return st;
}

void fg_reorder_describe(const fg_reorder_choice *c, char *buf, size_t len) {
  if (!c->simulated)
    snprintf(buf, len,
             "--reorder auto: none (the %lld-byte rows of X fit in a %lld MiB cache)",
             (long long)c->row_bytes, (long long)(c->cache_bytes >> 20));
  else
    snprintf(buf, len,
             "--reorder auto: %s (simulated hits of a %lld MiB cache of 4 KiB blocks, "
             "%lld-byte rows: "
             "none %.0f%%, degree %.0f%%, rcm %.0f%%)",
             fg_reorder_name(c->kind), (long long)(c->cache_bytes >> 20),
             (long long)c->row_bytes, 100.0 * c->hit[0], 100.0 * c->hit[1], 100.0 * c->hit[2]);
}
