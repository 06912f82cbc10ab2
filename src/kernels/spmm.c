/* spmm.c -- Y = A X for a CSR matrix A and a dense row-major X: the propagation step of a GCN.
 *
 * The tuned kernel gives every row to exactly one thread and sums a row's products in the
 * order of its nonzeros with a separate multiply and add, exactly as the reference does, so
 * its result equals the reference bit for bit and does not depend on the thread count. No
 * atomics: a thread writes only its own rows.
 *
 * - Rows are cut into per-thread ranges of equal cost (nonzeros + rows, so that runs of empty
 *   rows count too) by a binary search on rowptr, not into ranges of equal row count: R-MAT
 *   and social graphs put most nonzeros in a few rows.
 * - Feature columns go in tiles of FG_SPMM_TILE floats (128 with AVX-512: eight 64-byte
 *   vectors, one cache line each) whose accumulators stay in vector registers while the row's
 *   nonzeros stream by; every gathered row segment is whole cache lines read once.
 * - The last vector of a tile is loaded and stored under a mask, so a width that is not a
 *   multiple of the vector length costs one partial vector, not a scalar pass per column.
 * - The rows of X that later nonzeros will gather are prefetched across row boundaries within
 *   the thread's range, FG_SPMM_PREFETCH_L1_BYTES of gathered rows ahead (a distance in
 *   nonzeros that grows as the tile narrows), optionally with a farther stage into L2. A random
 *   gather is latency-bound otherwise. The distance is in bytes because what has to be covered
 *   is memory latency at a given traffic: 8 nonzeros ahead was too close for a 512-byte row and
 *   48 too close for a 128-byte one (docs/benchmarks.md).
 * Three implementations of the same tile: AVX-512 (__AVX512F__), AVX2 (__AVX2__), and
 * portable C that the compiler vectorizes as it can.
 */
#include <string.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

/* multiply-adds below which another thread does not pay for itself */
#define FG_SPMM_MIN_TASK_WORK 16384
/* How far ahead, in bytes of gathered rows, the rows of X are prefetched into L2 and into L1;
 * 0 turns a stage off. A tile's distance in nonzeros is these bytes over its row segment's
 * bytes, so a narrow SpMM looks as far ahead in memory traffic as a wide one. Build-time knobs
 * (-D...), chosen by the interleaved sweep in docs/benchmarks.md. */
#ifndef FG_SPMM_PREFETCH_L2_BYTES
#define FG_SPMM_PREFETCH_L2_BYTES 0
#endif
#ifndef FG_SPMM_PREFETCH_L1_BYTES
#define FG_SPMM_PREFETCH_L1_BYTES 12288
#endif

void fg_spmm_ref(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f) {
  for (int64_t r = 0; r < A->nrows; r++) {
    float *y = Y + r * ldy; // (f)
    for (int64_t j = 0; j < f; j++) y[j] = 0.0f;
    for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) {
      const float a = A->val ? A->val[k] : 1.0f;
      const float *x = X + (int64_t)A->col[k] * ldx; // (f)
      for (int64_t j = 0; j < f; j++) y[j] += a * x[j];
    }
  }
}

double fg_spmm_min_bytes(const fg_csr *A, int64_t f, double esz, double out_esz) {
  return (double)A->nnz * 8.0 + (double)A->nnz * (double)f * esz +
         (double)A->nrows * (double)f * out_esz;
}

#if defined(__GNUC__)
#define FG_INLINE static inline __attribute__((always_inline))
#else
#define FG_INLINE static inline
#endif

/* What one tile call needs: the matrix arrays, X offset to the tile's first column, and the
 * end of the thread's nonzeros (prefetches stop there). */
typedef struct spmm_args {
  const int64_t *rowptr;
  const int32_t *col;
  const float *val; /* NULL: all ones */
  const float *X;
  int64_t ldx;
  int64_t kend;
  /* prefetch distances in nonzeros, at least 1; a stage is off when its *_BYTES knob is 0 */
  int64_t ahead_l2, ahead_l1;
} spmm_args;

/* Prefetch the first `lines` cache lines of the X rows that nonzeros k + ahead_l2 (into L2:
 * __builtin_prefetch's locality 2) and k + ahead_l1 (into L1: locality 3) gather. */
FG_INLINE void spmm_prefetch(const spmm_args *g, int64_t k, int lines) {
#if defined(__GNUC__)
  if (FG_SPMM_PREFETCH_L2_BYTES > 0 && k + g->ahead_l2 < g->kend) {
    const char *p = (const char *)(g->X + (int64_t)g->col[k + g->ahead_l2] * g->ldx);
    for (int i = 0; i < lines; i++) __builtin_prefetch(p + 64 * i, 0, 2);
  }
  if (FG_SPMM_PREFETCH_L1_BYTES > 0 && k + g->ahead_l1 < g->kend) {
    const char *p = (const char *)(g->X + (int64_t)g->col[k + g->ahead_l1] * g->ldx);
    for (int i = 0; i < lines; i++) __builtin_prefetch(p + 64 * i, 0, 3);
  }
#endif
}

/* One case of a switch on the tile's vector count: the tile with nv and has_val constant. */
#define FG_SPMM_TILE_CASE(n)                                                             \
  case n:                                                                              \
    if (g->val)                                                                        \
      spmm_tile(g, r0, r1, Y, ldy, accumulate, n, tail, 1);                            \
    else                                                                               \
      spmm_tile(g, r0, r1, Y, ldy, accumulate, n, tail, 0);                            \
    break;

#if defined(__AVX512F__)
/* ---- AVX-512: 16 floats a vector, tiles of up to 8 vectors ----------------------------- */
#define FG_SPMM_VL 16
#define FG_SPMM_TILE 128
typedef __m512 spmm_vec;
typedef __mmask16 spmm_tail; /* the lanes of a tile's last vector */
#define SPMM_ZERO _mm512_setzero_ps
#define SPMM_SET1 _mm512_set1_ps
#define SPMM_ADD _mm512_add_ps
#define SPMM_MUL _mm512_mul_ps

/* The first rem lanes, 1 <= rem <= FG_SPMM_VL. */
static inline spmm_tail spmm_tail_of(int rem) {
  return (__mmask16)(rem == 16 ? 0xffffu : (1u << rem) - 1u);
}

/* Load or store a whole vector (full != 0) or the lanes of tail. */
FG_INLINE spmm_vec spmm_load(const float *p, int full, spmm_tail tail) {
  return _mm512_maskz_loadu_ps(full ? (__mmask16)0xffff : tail, p);
}
FG_INLINE void spmm_store(float *p, int full, spmm_tail tail, spmm_vec v) {
  _mm512_mask_storeu_ps(p, full ? (__mmask16)0xffff : tail, v);
}

#elif defined(__AVX2__)
/* ---- AVX2: 8 floats a vector, tiles of up to 8 vectors --------------------------------- */
#define FG_SPMM_VL 8
#define FG_SPMM_TILE 64
typedef __m256 spmm_vec;
typedef __m256i spmm_tail;
#define SPMM_ZERO _mm256_setzero_ps
#define SPMM_SET1 _mm256_set1_ps
#define SPMM_ADD _mm256_add_ps
#define SPMM_MUL _mm256_mul_ps

static inline spmm_tail spmm_tail_of(int rem) { /* lane < rem */
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

FG_INLINE spmm_vec spmm_load(const float *p, int full, spmm_tail tail) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, tail);
}
FG_INLINE void spmm_store(float *p, int full, spmm_tail tail, spmm_vec v) {
  if (full)
    _mm256_storeu_ps(p, v);
  else
    _mm256_maskstore_ps(p, tail, v);
}
#endif

#if defined(__AVX512F__) || defined(__AVX2__)
/* Rows [r0, r1) of Y, columns [0, FG_SPMM_VL (nv - 1) + the lanes of tail): = (or +=) A times
 * the same columns of X; nv vectors, the last under the mask `tail`. nv and has_val are
 * constants after inlining, so the accumulators live in registers and the loop has no branch
 * on A->val. */
FG_INLINE void spmm_tile(const spmm_args *g, int64_t r0, int64_t r1, float *Y, int64_t ldy,
                         int accumulate, const int nv, spmm_tail tail, const int has_val) {
  for (int64_t r = r0; r < r1; r++) {
    float *y = Y + r * ldy;
    spmm_vec acc[8];
    for (int i = 0; i < nv; i++) acc[i] = SPMM_ZERO();
    for (int64_t k = g->rowptr[r]; k < g->rowptr[r + 1]; k++) {
      const float *x = g->X + (int64_t)g->col[k] * g->ldx;
      spmm_prefetch(g, k, (FG_SPMM_VL * nv + 15) / 16); /* the cache lines of nv vectors */
      const spmm_vec a = SPMM_SET1(has_val ? g->val[k] : 1.0f);
      for (int i = 0; i < nv; i++) {
        const spmm_vec xi = spmm_load(x + FG_SPMM_VL * i, i + 1 < nv, tail);
        acc[i] = SPMM_ADD(acc[i], has_val ? SPMM_MUL(a, xi) : xi);
      }
    }
    for (int i = 0; i < nv; i++) {
      float *yi = y + FG_SPMM_VL * i;
      if (accumulate) acc[i] = SPMM_ADD(acc[i], spmm_load(yi, i + 1 < nv, tail));
      spmm_store(yi, i + 1 < nv, tail, acc[i]);
    }
  }
}

/* Rows [r0, r1), columns [0, w) of the tile, 1 <= w <= FG_SPMM_TILE (Y offset to the tile). */
static void spmm_tile_any(const spmm_args *g, int64_t r0, int64_t r1, float *Y, int64_t ldy,
                          int accumulate, int64_t w) {
  const int nv = (int)((w + FG_SPMM_VL - 1) / FG_SPMM_VL);
  const spmm_tail tail = spmm_tail_of((int)(w - FG_SPMM_VL * (nv - 1)));
  switch (nv) {
    FG_SPMM_TILE_CASE(1)
    FG_SPMM_TILE_CASE(2)
    FG_SPMM_TILE_CASE(3)
    FG_SPMM_TILE_CASE(4)
    FG_SPMM_TILE_CASE(5)
    FG_SPMM_TILE_CASE(6)
    FG_SPMM_TILE_CASE(7)
    default: FG_SPMM_TILE_CASE(8)
  }
}

#else
/* ---- portable C: a tile of up to 64 floats in a local array ------------------------------ */
#define FG_SPMM_TILE 64

static void spmm_tile_any(const spmm_args *g, int64_t r0, int64_t r1, float *Y, int64_t ldy,
                          int accumulate, int64_t w) {
  for (int64_t r = r0; r < r1; r++) {
    float *y = Y + r * ldy; // (w)
    float acc[FG_SPMM_TILE];
    for (int64_t j = 0; j < w; j++) acc[j] = 0.0f;
    for (int64_t k = g->rowptr[r]; k < g->rowptr[r + 1]; k++) {
      const float *x = g->X + (int64_t)g->col[k] * g->ldx; // (w)
      spmm_prefetch(g, k, (int)((w + 15) / 16));
      if (g->val) {
        const float a = g->val[k];
        for (int64_t j = 0; j < w; j++) acc[j] += a * x[j];
      } else {
        for (int64_t j = 0; j < w; j++) acc[j] += x[j];
      }
    }
    for (int64_t j = 0; j < w; j++) y[j] = accumulate ? acc[j] + y[j] : acc[j];
  }
}
#endif

/* Rows [r0, r1) of Y = A X (accumulate == 0) or Y += A X (accumulate != 0), tile by tile;
 * prefetches look at the nonzeros before kend (>= rowptr[r1]). */
static void spmm_rows(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy,
                      int64_t f, int64_t r0, int64_t r1, int accumulate, int64_t kend) {
  for (int64_t j0 = 0; j0 < f; j0 += FG_SPMM_TILE) {
    const int64_t w = FG_MIN(f - j0, (int64_t)FG_SPMM_TILE);
    const int64_t seg = (w * (int64_t)sizeof(float) + 63) / 64 * 64; /* bytes a gather reads */
    const spmm_args g = {A->rowptr, A->col, A->val, X + j0, ldx, kend,
                         FG_MAX(FG_SPMM_PREFETCH_L2_BYTES / seg, 1),
                         FG_MAX(FG_SPMM_PREFETCH_L1_BYTES / seg, 1)};
    spmm_tile_any(&g, r0, r1, Y + j0, ldy, accumulate, w);
  }
}

/* kmax (>= A->rowptr[nrows]): how far the last thread's prefetches may look. A row chunk of a
 * larger matrix (fg_spmm_chunked) passes the whole matrix's end, so that the chunk's last rows
 * prefetch the next chunk's first gathers, as one call would: otherwise every chunk would start
 * with a prefetch distance of unprefetched gathers (~4 us a chunk at f = 16, measured). */
static void spmm_driver(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy,
                        int64_t f, int accumulate, int64_t kmax) {
  const int64_t nrows = A->nrows;
  if (nrows <= 0 || f <= 0) return;
  assert(ldx >= f && ldy >= f);
  assert(A->rowptr[nrows] >= A->rowptr[0]);
  const int64_t total = fg_spmm_row_cost(A->rowptr, nrows);
  const int ntasks = fg_kernel_tasks(total * f, FG_SPMM_MIN_TASK_WORK);
  FG_OMP_TASKS(ntasks)
  for (int t = 0; t < ntasks; t++) {
    const int64_t r0 = fg_spmm_find_row(A->rowptr, nrows, fg_task_start(total, t, ntasks));
    const int64_t r1 = fg_spmm_find_row(A->rowptr, nrows, fg_task_start(total, t + 1, ntasks));
    if (r0 < r1)
      spmm_rows(A, X, ldx, Y, ldy, f, r0, r1, accumulate,
                t + 1 == ntasks ? kmax : A->rowptr[r1]);
  }
}

void fg_spmm(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f) {
  spmm_driver(A, X, ldx, Y, ldy, f, 0, A->nrows > 0 ? A->rowptr[A->nrows] : 0);
}

void fg_spmm_acc(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f) {
  spmm_driver(A, X, ldx, Y, ldy, f, 1, A->nrows > 0 ? A->rowptr[A->nrows] : 0);
}

void fg_spmm_in_chunks(const fg_csr *A, int64_t step,
                       void (*run)(void *arg, const fg_csr *rows, int64_t r0), void *arg,
                       int (*between)(void *ctx), void *ctx) {
  const int64_t nrows = A->nrows;
  int64_t r0 = 0;
  while (r0 < nrows) {
    /* the first row past the chunk's cost (cost is strictly increasing: at least one row) */
    const int64_t r1 = between ? fg_spmm_find_row(A->rowptr, nrows,
                                                  fg_spmm_row_cost(A->rowptr, r0) + step)
                               : nrows;
    const fg_csr rows = {r1 - r0, A->ncols, A->rowptr[r1] - A->rowptr[r0], A->rowptr + r0,
                         A->col, A->val};
    run(arg, &rows, r0);
    r0 = r1;
    if (r0 < nrows && between && between(ctx)) between = NULL;
  }
}

typedef struct spmm_chunk_args {
  const float *X;
  float *Y;
  int64_t ldx, ldy, f, nnz; /* nnz: the whole matrix's, for the driver's thread split */
  int accumulate;
} spmm_chunk_args;

static void spmm_chunk(void *arg, const fg_csr *rows, int64_t r0) {
  const spmm_chunk_args *a = arg;
  spmm_driver(rows, a->X, a->ldx, a->Y + r0 * a->ldy, a->ldy, a->f, a->accumulate, a->nnz);
}

void fg_spmm_chunked(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy,
                     int64_t f, int accumulate, int64_t chunk_bytes, int (*between)(void *ctx),
                     void *ctx) {
  /* a chunk's cost in fg_spmm_row_cost units (a nonzero or a row: 4f bytes each), at least 1 */
  spmm_chunk_args a = {X, Y, ldx, ldy, f, 0, accumulate};
  if (A->nrows <= 0 || f <= 0) return;
  a.nnz = A->rowptr[A->nrows];
  fg_spmm_in_chunks(A, FG_MAX(chunk_bytes / (4 * f), 1), spmm_chunk, &a, between, ctx);
}
