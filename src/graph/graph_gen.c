/* graph_gen.c -- generated features, degree-quantile labels, random splits and Graph500
 * R-MAT edges. Every draw is a pure function of (seed, purpose, ids) through fg_rng, so the
 * results do not depend on thread counts, call order or how a graph is later distributed. */
#include <math.h>
#include <string.h>

#include "core/fg_rng.h"
#include "graph/fg_graph.h"
#include "kernels/fg_kernel_util.h"

/* Threads for a loop of `work` draws: at least 4096 draws each. */
#define GEN_MIN_DRAWS 4096

/* ---- features ---------------------------------------------------------------------------- */

void fg_generate_feature_rows(int64_t v0, int64_t rows, int64_t f, uint64_t seed, float *x) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(fg_kernel_tasks(rows * f, GEN_MIN_DRAWS))
#endif
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < f; j++)
      x[r * f + j] = 2.0f * fg_rng_uniform(seed, FG_RNG_FEATURES, (uint64_t)(v0 + r), (uint64_t)j,
                                           0, 0) - 1.0f;
}

fg_status fg_generate_features(int64_t n, int64_t f, uint64_t seed, float **out) {
  fg_status st = FG_OK;
  float *x = NULL; /* (n, f) */
  FG_REQUIRE(out != NULL, FG_ERR_INVALID_ARG, "fg_generate_features: output is NULL");
  *out = NULL;
  FG_REQUIRE(n >= 0, FG_ERR_INVALID_ARG, "negative node count %lld", (long long)n);
  FG_REQUIRE(f > 0, FG_ERR_INVALID_ARG, "feature width must be positive, got %lld", (long long)f);
  FG_REQUIRE(n == 0 || f <= INT64_MAX / 4 / n, FG_ERR_INVALID_ARG,
             "%lld x %lld features overflow", (long long)n, (long long)f);
  x = fg_malloc_huge((size_t)(n * f) * sizeof *x); /* layer 0 gathers from it: huge pages */
  FG_REQUIRE(x != NULL, FG_ERR_NOMEM, "out of memory for %lld x %lld features", (long long)n,
             (long long)f);
  fg_generate_feature_rows(0, n, f, seed, x);
  *out = x;
  x = NULL;
cleanup:
  free(x);
  return st;
}

/* ---- labels from degree quantiles ---------------------------------------------------------- */

typedef struct hashed_node {
  uint64_t h;
  int64_t v;
} hashed_node;

static int cmp_hashed_node(const void *pa, const void *pb) {
  const hashed_node *a = pa, *b = pb;
  if (a->h != b->h) return a->h < b->h ? -1 : 1;
  return (a->v > b->v) - (a->v < b->v);
}

uint64_t fg_generate_label_key(uint64_t seed, int64_t v) {
  return fg_rng_u64(seed, FG_RNG_LABELS, (uint64_t)v, 0, 0, 0);
}

fg_status fg_generate_labels(const fg_csr *A, int64_t classes, uint64_t seed, int32_t **out) {
  fg_status st = FG_OK;
  int32_t *labels = NULL; /* (n) */
  int64_t *start = NULL;  /* (maxdeg + 2) first rank of each degree */
  int64_t *order = NULL;  /* (n) nodes by degree, then id */
  hashed_node *group = NULL;

  FG_REQUIRE(out != NULL, FG_ERR_INVALID_ARG, "fg_generate_labels: output is NULL");
  *out = NULL;
  FG_REQUIRE(A != NULL && A->nrows >= 0 && (A->nrows == 0 || A->rowptr != NULL), FG_ERR_INVALID_ARG,
             "fg_generate_labels: graph is not initialized");
  FG_REQUIRE(classes >= 1 && classes <= INT32_MAX, FG_ERR_INVALID_ARG,
             "number of classes must be in [1, 2^31), got %lld", (long long)classes);
  const int64_t n = A->nrows;
  FG_REQUIRE(n <= INT32_MAX, FG_ERR_UNSUPPORTED, "graph has %lld nodes; at most 2^31 - 1",
             (long long)n);
  FG_ALLOC(labels, n);

  /* counting sort of the nodes by degree (stored entries per row) */
  int64_t maxdeg = 0;
  for (int64_t v = 0; v < n; v++) maxdeg = FG_MAX(maxdeg, A->rowptr[v + 1] - A->rowptr[v]);
  FG_CALLOC(start, maxdeg + 2);
  FG_ALLOC(order, n);
  for (int64_t v = 0; v < n; v++) start[A->rowptr[v + 1] - A->rowptr[v] + 1]++;
  for (int64_t d = 0; d <= maxdeg; d++) start[d + 1] += start[d];
  for (int64_t v = 0; v < n; v++) order[start[A->rowptr[v + 1] - A->rowptr[v]]++] = v;
  /* start[d] is now the end of degree d's ranks, i.e. the start of degree d + 1 */

  /* class(rank) = floor(C * rank / n). Only a degree group that straddles a class boundary
   * needs its nodes ordered by hashed id. */
  int64_t g0 = 0;
  for (int64_t d = 0; d <= maxdeg; d++) {
    const int64_t g1 = start[d];
    if (g1 == g0) continue;
    const int64_t c0 = classes * g0 / n, c1 = classes * (g1 - 1) / n;
    if (c0 == c1) {
      for (int64_t r = g0; r < g1; r++) labels[order[r]] = (int32_t)c0;
    } else {
      FG_ALLOC(group, g1 - g0);
      for (int64_t r = g0; r < g1; r++) {
        const int64_t v = order[r];
        group[r - g0].v = v;
        group[r - g0].h = fg_generate_label_key(seed, v);
      }
      qsort(group, (size_t)(g1 - g0), sizeof *group, cmp_hashed_node);
      for (int64_t r = g0; r < g1; r++) labels[group[r - g0].v] = (int32_t)(classes * r / n);
      free(group);
      group = NULL;
    }
    g0 = g1;
  }

  *out = labels;
  labels = NULL;
cleanup:
  free(labels);
  free(start);
  free(order);
  free(group);
  return st;
}

/* ---- splits ------------------------------------------------------------------------------ */

void fg_generate_split_rows(int64_t v0, int64_t rows, const int32_t *labels, double train_frac,
                            double valid_frac, uint64_t seed, int8_t *split) {
  const double tv = train_frac + valid_frac;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(fg_kernel_tasks(rows, GEN_MIN_DRAWS))
#endif
  for (int64_t r = 0; r < rows; r++) {
    if (labels && labels[r] < 0) {
      split[r] = FG_SPLIT_NONE;
      continue;
    }
    const double u = fg_rng_uniform_d(seed, FG_RNG_SPLIT, (uint64_t)(v0 + r), 0, 0, 0);
    split[r] = u < train_frac ? FG_SPLIT_TRAIN : u < tv ? FG_SPLIT_VALID : FG_SPLIT_TEST;
  }
}

fg_status fg_generate_split(int64_t n, const int32_t *labels, double train_frac, double valid_frac,
                            uint64_t seed, int8_t **out) {
  fg_status st = FG_OK;
  int8_t *split = NULL; /* (n) */
  FG_REQUIRE(out != NULL, FG_ERR_INVALID_ARG, "fg_generate_split: output is NULL");
  *out = NULL;
  FG_REQUIRE(n >= 0, FG_ERR_INVALID_ARG, "negative node count %lld", (long long)n);
  FG_REQUIRE(train_frac >= 0.0 && train_frac <= 1.0, FG_ERR_INVALID_ARG,
             "train fraction must be in [0, 1], got %g", train_frac);
  FG_REQUIRE(valid_frac >= 0.0 && valid_frac <= 1.0, FG_ERR_INVALID_ARG,
             "validation fraction must be in [0, 1], got %g", valid_frac);
  FG_REQUIRE(train_frac + valid_frac <= 1.0 + 1e-9, FG_ERR_INVALID_ARG,
             "train + validation fractions must not exceed 1, got %g + %g", train_frac, valid_frac);
  FG_ALLOC(split, n);
  fg_generate_split_rows(0, n, labels, train_frac, valid_frac, seed, split);
  *out = split;
  split = NULL;
cleanup:
  free(split);
  return st;
}

/* ---- R-MAT -------------------------------------------------------------------------------- */

/* Quadrant thresholds in units of 2^-16: a = 0.57, a + b = 0.76, a + b + c = 0.95. Each
 * 64-bit draw (seed, FG_RNG_RMAT, edge, group) decides 4 levels, 16 bits each. */
#define RMAT_T_A 37356u   /* round(0.57 * 65536) */
#define RMAT_T_AB 49807u  /* round(0.76 * 65536) */
#define RMAT_T_ABC 62259u /* round(0.95 * 65536) */
#define RMAT_LEVELS_PER_DRAW 4

/* The keys of the id scrambling come from draws no edge uses (edge index UINT64_MAX). */
static uint64_t rmat_key(uint64_t seed, uint64_t k) {
  return fg_rng_u64(seed, FG_RNG_RMAT, UINT64_MAX, k, 0, 0);
}

uint64_t fg_rmat_scramble(uint64_t x, int scale, uint64_t seed) {
  const uint64_t mask = scale >= 64 ? UINT64_MAX : (((uint64_t)1 << scale) - 1);
  const int sh = scale / 2 + 1; /* x ^ (x >> sh) is invertible for sh >= 1 */
  for (uint64_t round = 0; round < 2; round++) {
    x = (x * (rmat_key(seed, 2 * round) | 1u)) & mask; /* odd multiplier: bijective */
    x ^= rmat_key(seed, 2 * round + 1) & mask;
    x ^= x >> sh; /* carries high bits down */
  }
  return x & mask;
}

fg_status fg_rmat_edges(int scale, int64_t edge_factor, uint64_t seed, int64_t **src, int64_t **dst,
                        int64_t *m) {
  fg_status st = FG_OK;
  int64_t *s = NULL, *d = NULL; /* (edges) */
  FG_REQUIRE(src && dst && m, FG_ERR_INVALID_ARG, "fg_rmat_edges: output is NULL");
  *src = *dst = NULL;
  *m = 0;
  FG_REQUIRE(scale >= 1 && scale <= 30, FG_ERR_INVALID_ARG,
             "R-MAT scale must be in [1, 30], got %d", scale);
  FG_REQUIRE(edge_factor >= 1 && edge_factor <= ((int64_t)1 << 36) >> scale, FG_ERR_INVALID_ARG,
             "R-MAT edge factor %lld is out of range [1, 2^%d]", (long long)edge_factor,
             36 - scale);
  const int64_t edges = edge_factor << scale;
  FG_ALLOC(s, edges);
  FG_ALLOC(d, edges);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(fg_kernel_tasks(edges, GEN_MIN_DRAWS))
#endif
  for (int64_t e = 0; e < edges; e++) {
    uint64_t u = 0, v = 0, r = 0;
    for (int level = 0; level < scale; level++) {
      if (level % RMAT_LEVELS_PER_DRAW == 0)
        r = fg_rng_u64(seed, FG_RNG_RMAT, (uint64_t)e, (uint64_t)(level / RMAT_LEVELS_PER_DRAW), 0,
                       0);
      const uint32_t x = (uint32_t)(r & 0xffffu);
      r >>= 16;
      /* quadrant a: (0,0), b: (0,1), c: (1,0), d: (1,1) */
      const uint64_t bu = x >= RMAT_T_AB;
      const uint64_t bv = (x >= RMAT_T_A && x < RMAT_T_AB) || x >= RMAT_T_ABC;
      u = u << 1 | bu;
      v = v << 1 | bv;
    }
    s[e] = (int64_t)fg_rmat_scramble(u, scale, seed);
    d[e] = (int64_t)fg_rmat_scramble(v, scale, seed);
  }
  *src = s;
  *dst = d;
  *m = edges;
  s = d = NULL;
cleanup:
  free(s);
  free(d);
  return st;
}
