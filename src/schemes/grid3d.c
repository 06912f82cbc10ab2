/* grid3d.c -- the geometry of the 3D scheme that the performance model shares: process grids,
 * the random and double permutations, and the balance of adjacency shards. See fg_grid3d.h. */
#include <limits.h>
#include <string.h>

#include "core/fg_rng.h"
#include "graph/fg_order.h"
#include "schemes/fg_grid3d.h"

/* ---- grids ---------------------------------------------------------------------------------- */

fg_status fg_grid_parse(const char *s, int P, int g[3]) {
  fg_status st = FG_OK;
  const char *p = s;
  FG_REQUIRE(s != NULL, FG_ERR_INVALID_ARG, "--grid: no value");
  for (int d = 0; d < 3; d++) {
    long v = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9' && v <= INT_MAX / 10) {
      v = v * 10 + (*p - '0');
      p++;
      digits++;
    }
    FG_REQUIRE(digits > 0 && v >= 1 && v <= 1 << 20, FG_ERR_INVALID_ARG,
               "--grid '%s': expected XxYxZ with three positive integers, like 2x2x1", s);
    g[d] = (int)v;
    if (d < 2) {
      FG_REQUIRE(*p == 'x', FG_ERR_INVALID_ARG,
                 "--grid '%s': expected XxYxZ with three positive integers, like 2x2x1", s);
      p++;
    }
  }
  FG_REQUIRE(*p == '\0', FG_ERR_INVALID_ARG,
             "--grid '%s': unexpected '%s' after XxYxZ", s, p);
  FG_REQUIRE(P <= 0 || (int64_t)g[0] * g[1] * g[2] == P, FG_ERR_INVALID_ARG,
             "--grid %dx%dx%d has %lld ranks, but the job has %d", g[0], g[1], g[2],
             (long long)g[0] * g[1] * g[2], P);
cleanup:
  return st;
}

int fg_grid_enumerate(int P, int (*out)[3], int max) {
  int n = 0;
  for (int x = 1; x <= P; x++) {
    if (P % x) continue;
    for (int y = 1; y <= P / x; y++) {
      if ((P / x) % y) continue;
      if (n < max) {
        out[n][0] = x;
        out[n][1] = y;
        out[n][2] = P / x / y;
      }
      n++;
    }
  }
  return n;
}

/* ---- permutations --------------------------------------------------------------------------- */

fg_status fg_perm_kind_from(const char *order, int double_perm, fg_perm_kind *out) {
  fg_status st = FG_OK;
  if (double_perm) {
    FG_REQUIRE(!order || strcmp(order, "natural") == 0 || strcmp(order, "random") == 0,
               FG_ERR_INVALID_ARG,
               "--double-perm draws its own random permutations; it does not combine with "
               "--order %s", order);
    *out = FG_PERM_DOUBLE;
  } else if (!order || strcmp(order, "natural") == 0) {
    *out = FG_PERM_NONE;
  } else if (strcmp(order, "random") == 0) {
    *out = FG_PERM_SINGLE;
  } else {
    FG_FAIL(FG_ERR_INVALID_ARG,
            "--scheme 3d: --order %s is not available (3d shards the adjacency matrix in 2D: "
            "use natural, random, or --double-perm)", order);
  }
cleanup:
  return st;
}

const char *fg_perm_kind_name(fg_perm_kind k) {
  return k == FG_PERM_NONE ? "no" : k == FG_PERM_SINGLE ? "single" : "double";
}

void fg_perm3d_build(int64_t n, fg_perm_kind kind, uint64_t seed, int64_t *pi0, int64_t *pi1) {
  if (kind == FG_PERM_NONE) {
    for (int64_t k = 0; k < n; k++) pi0[k] = pi1[k] = k;
  } else if (kind == FG_PERM_SINGLE) {
    fg_order_random(n, seed, 0, pi0);
    memcpy(pi1, pi0, (size_t)n * sizeof *pi1);
  } else {
    fg_order_random(n, seed, 0, pi1); /* P_r: rows of layer 0 */
    fg_order_random(n, seed, 1, pi0); /* P_c: columns of layer 0, the input order */
  }
}

fg_status fg_block_nnz(const fg_csr *M, int gr, int gc, int64_t *cnt) {
  fg_status st = FG_OK;
  FG_REQUIRE(gr >= 1 && gc >= 1, FG_ERR_INVALID_ARG, "shards: %d x %d blocks", gr, gc);
  memset(cnt, 0, (size_t)gr * (size_t)gc * sizeof *cnt);
  for (int i = 0; i < gr; i++) {
    int64_t *row = cnt + (int64_t)i * gc;
    for (int64_t u = fg_block_start(M->nrows, gr, i); u < fg_block_start(M->nrows, gr, i + 1);
         u++)
      for (int64_t k = M->rowptr[u]; k < M->rowptr[u + 1]; k++)
        row[fg_block_of(M->ncols, gc, M->col[k])]++;
  }
cleanup:
  return st;
}

/* max / mean of the block counts of M */
static fg_status block_ratio(const fg_csr *M, int gr, int gc, double *out) {
  fg_status st = FG_OK;
  int64_t *cnt = NULL, mx = 0, tot = 0;
  FG_ALLOC(cnt, (int64_t)gr * gc);
  FG_CHECK(fg_block_nnz(M, gr, gc, cnt));
  for (int64_t i = 0; i < (int64_t)gr * gc; i++) {
    mx = FG_MAX(mx, cnt[i]);
    tot += cnt[i];
  }
  *out = tot > 0 ? (double)mx / ((double)tot / ((double)gr * gc)) : 1.0;
cleanup:
  free(cnt);
  return st;
}

fg_status fg_shard_balance_compute(const fg_csr *A, int gr, int gc, uint64_t seed, double out[3]) {
  fg_status st = FG_OK;
  int64_t *p0 = NULL, *p1 = NULL, *inv0 = NULL, *inv1 = NULL;
  fg_csr M;
  const int64_t n = A->nrows;
  double r0 = 0.0, r1 = 0.0;
  memset(&M, 0, sizeof M);
  FG_REQUIRE(A->nrows == A->ncols, FG_ERR_INVALID_ARG, "shards: matrix is %lld x %lld",
             (long long)A->nrows, (long long)A->ncols);
  FG_ALLOC(p0, n > 0 ? n : 1);
  FG_ALLOC(p1, n > 0 ? n : 1);
  FG_ALLOC(inv0, n > 0 ? n : 1);
  FG_ALLOC(inv1, n > 0 ? n : 1);
  FG_CHECK(block_ratio(A, gr, gc, &out[0]));
  fg_perm3d_build(n, FG_PERM_SINGLE, seed, p0, p1);
  fg_order_invert(p0, n, inv0);
  FG_CHECK(fg_csr_permute(A, p0, inv0, &M));
  FG_CHECK(block_ratio(&M, gr, gc, &out[1]));
  fg_csr_free(&M);
  fg_perm3d_build(n, FG_PERM_DOUBLE, seed, p0, p1);
  fg_order_invert(p0, n, inv0);
  fg_order_invert(p1, n, inv1);
  /* layer 0: rows in pi1 = P_r, columns in pi0 = P_c; layer 1 the other way round */
  FG_CHECK(fg_csr_permute(A, p1, inv0, &M));
  FG_CHECK(block_ratio(&M, gr, gc, &r0));
  fg_csr_free(&M);
  FG_CHECK(fg_csr_permute(A, p0, inv1, &M));
  FG_CHECK(block_ratio(&M, gr, gc, &r1));
  out[2] = FG_MAX(r0, r1);
cleanup:
  fg_csr_free(&M);
  free(p0);
  free(p1);
  free(inv0);
  free(inv1);
  return st;
}

fg_status fg_shard_balance(const fg_dataset *ds, int rows, int cols, uint64_t seed,
                           double out[3]) {
  fg_status st = FG_OK;
  FG_REQUIRE(ds && out, FG_ERR_INVALID_ARG, "fg_shard_balance: NULL argument");
  FG_REQUIRE(rows >= 1 && cols >= 1 && rows <= 1 << 16 && cols <= 1 << 16, FG_ERR_INVALID_ARG,
             "--shards %dx%d: both counts must be in [1, 65536]", rows, cols);
  FG_CHECK(fg_shard_balance_compute(&ds->adj, rows, cols, seed, out));
cleanup:
  return st;
}

