/* dense.c -- dense matrix kernels: GEMM (OpenBLAS's CBLAS or oneDNN's dnnl_sgemm, by a fixed
 * rule on the shape: see "which library" below), Glorot init, row normalization and the STREAM
 * triad used to measure memory bandwidth. */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef FG_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include "core/fg_rng.h"
#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

const char *fg_blas_corename(void) {
  const char *name = openblas_get_corename();
  return name ? name : "unknown";
}

/* ---- GEMM: which library ---------------------------------------------------------------
 *
 * fg_gemm sends a product to oneDNN's dnnl_sgemm when one of m, n, k is at least 1024 (a
 * product over a graph's rows) or it has more than 2^19 flops (m n k > 2^18 = 262,144), and
 * to OpenBLAS's cblas_sgemm otherwise, whatever the transposes. Measured on the benchmark
 * machine (AMD EPYC Zen 5, 2 threads, Debian 12's OpenBLAS 0.3.21 on its Haswell kernels,
 * oneDNN 2.6.3; bench/fp32_gemm_rule.sh, 3 interleaved rounds, best of 15 calls; table and
 * reading in docs/benchmarks.md "fp32 GEMM: OpenBLAS or oneDNN") over the three products
 * training runs (nn H W, tn Hᵀ G, nt G Wᵀ) for n in {16, 200, 2708, 20000, 100000} rows and
 * widths {3, 7, 16, 32, 128} on each side, 375 shapes:
 *   - the 240 shapes the rule sends to oneDNN ran at 2.5x (first quartile), 5.2x (median),
 *     up to 20-87x OpenBLAS's speed: most on the narrow tall products (n x 3..32) where the
 *     Haswell kernels do worst; 1.0-24x (median 4.1x) with a width of 128 (and 1.5-5.8x,
 *     median 3x, at n = 10^4..10^5 and widths 32-602 in the bf16 library table). Slower on
 *     five, all with both widths <= 7 (2708 x 3 x 3 at 0.69x: 7.8 against 5.4 us; 100000 x 3
 *     x 3 at 0.81x), and on four single ~8 ms best times that were scheduler slices of the
 *     loaded host (rerun, both libraries gave 8-12 ms on all four): not rates;
 *   - on the 135 it sends to OpenBLAS (n = 16 and 200 rows, a call of 0.1-11 us) oneDNN's
 *     fixed cost (0.3 us, ~5 us where it forks its threads) made it slower on 83, by up to
 *     5.5 us (200 x 3 x 3: 5.7 against 0.6 us), and it won 52 by 0.3-8.7 us (115 us lost
 *     against 57 us, all shapes summed). Tests' tiny graphs live here.
 * A fixed rule, not a timing at run time: the same shapes go to the same library on every
 * run, so runs repeat bit for bit at a fixed thread count (each library does; tests/kernels
 * checks it). Across thread counts either library may split a reduction differently.
 * FULLGRAPH_GEMM=openblas|onednn or fg_set_gemm_lib forces one library for every product;
 * a build without oneDNN (FG_WITH_DNNL=OFF, no libdnnl-dev) runs OpenBLAS only.
 */

/* The rule's two thresholds: a dimension this long, or more than this many m n k. */
#define FG_GEMM_ONEDNN_MIN_DIM 1024
#define FG_GEMM_ONEDNN_MIN_MNK 262144

static int g_gemm_lib = -1; /* fg_gemm_lib, -1 until the first fg_gemm_get_lib */

const char *fg_gemm_lib_name(fg_gemm_lib lib) {
  return lib == FG_GEMM_OPENBLAS ? "openblas" : lib == FG_GEMM_ONEDNN ? "onednn" : "auto";
}

fg_status fg_gemm_lib_parse(const char *name, fg_gemm_lib *lib) {
  fg_status st = FG_OK;
  if (name && strcmp(name, "auto") == 0)
    *lib = FG_GEMM_AUTO;
  else if (name && strcmp(name, "openblas") == 0)
    *lib = FG_GEMM_OPENBLAS;
  else if (name && strcmp(name, "onednn") == 0)
    *lib = FG_GEMM_ONEDNN;
  else
    FG_FAIL(FG_ERR_INVALID_ARG, "unknown GEMM library '%s' (want auto, openblas or onednn)",
            name ? name : "(null)");
cleanup:
  return st;
}

int fg_gemm_onednn_available(void) {
#ifdef FG_HAVE_DNNL
  return 1;
#else
  return 0;
#endif
}

fg_status fg_gemm_set_lib(fg_gemm_lib lib) {
  fg_status st = FG_OK;
  FG_REQUIRE(lib == FG_GEMM_AUTO || lib == FG_GEMM_OPENBLAS || lib == FG_GEMM_ONEDNN,
             FG_ERR_INVALID_ARG, "GEMM library %d is none of auto, openblas, onednn", (int)lib);
  FG_REQUIRE(lib != FG_GEMM_ONEDNN || fg_gemm_onednn_available(), FG_ERR_UNSUPPORTED,
             "GEMM library onednn is unavailable: this build has no oneDNN (libdnnl-dev; "
             "configure with FG_WITH_DNNL=ON)");
  g_gemm_lib = (int)lib;
cleanup:
  return st;
}

fg_gemm_lib fg_gemm_get_lib(void) {
  if (g_gemm_lib >= 0) return (fg_gemm_lib)g_gemm_lib;
  fg_gemm_lib lib = FG_GEMM_AUTO;
  const char *env = getenv("FULLGRAPH_GEMM");
  if (env && *env) {
    fg_gemm_lib want = FG_GEMM_AUTO;
    if (fg_gemm_lib_parse(env, &want) != FG_OK)
      fprintf(stderr, "fullgraph: warning: FULLGRAPH_GEMM=%s ignored (want auto, openblas or "
                      "onednn)\n", env);
    else if (want == FG_GEMM_ONEDNN && !fg_gemm_onednn_available())
      fprintf(stderr, "fullgraph: warning: FULLGRAPH_GEMM=onednn ignored: this build has no "
                      "oneDNN\n");
    else
      lib = want;
    fg_error_clear();
  }
  g_gemm_lib = (int)lib;
  return lib;
}

int fg_gemm_rule_onednn(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k) {
  (void)trans_a; /* nn, tn and nt measured alike: one rule for all */
  (void)trans_b;
  if (!fg_gemm_onednn_available() || m <= 0 || n <= 0 || k <= 0) return 0;
  if (m >= FG_GEMM_ONEDNN_MIN_DIM || n >= FG_GEMM_ONEDNN_MIN_DIM || k >= FG_GEMM_ONEDNN_MIN_DIM)
    return 1;
  /* m n k in double: no overflow */
  return (double)m * (double)n * (double)k > (double)FG_GEMM_ONEDNN_MIN_MNK;
}

#ifdef FG_HAVE_DNNL
/* Whether this call goes to oneDNN: the forced library, or the rule under auto. */
static int gemm_use_onednn(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k) {
  switch (fg_gemm_get_lib()) {
  case FG_GEMM_OPENBLAS: return 0;
  case FG_GEMM_ONEDNN: return fg_gemm_onednn_available();
  default: return fg_gemm_rule_onednn(trans_a, trans_b, m, n, k);
  }
}
#endif

const char *fg_gemm_describe(void) {
  static char buf[200];
  const fg_gemm_lib lib = fg_gemm_get_lib();
#ifdef FG_HAVE_DNNL
  const dnnl_version_t *v = dnnl_version();
  if (lib == FG_GEMM_AUTO)
    snprintf(buf, sizeof buf, "auto (oneDNN %d.%d.%d dnnl_sgemm or OpenBLAS %s, by shape)",
             v->major, v->minor, v->patch, fg_blas_corename());
  else if (lib == FG_GEMM_ONEDNN)
    snprintf(buf, sizeof buf, "onednn (oneDNN %d.%d.%d dnnl_sgemm, forced)", v->major, v->minor,
             v->patch);
  else
    snprintf(buf, sizeof buf, "openblas (OpenBLAS %s, forced)", fg_blas_corename());
#else
  snprintf(buf, sizeof buf, "%s (OpenBLAS %s; this build has no oneDNN)", fg_gemm_lib_name(lib),
           fg_blas_corename());
#endif
  return buf;
}

/* the public names (fullgraph.h) */
fg_status fg_set_gemm_lib(const char *name) {
  fg_status st = FG_OK;
  fg_gemm_lib lib = FG_GEMM_AUTO;
  FG_CHECK(fg_gemm_lib_parse(name, &lib));
  FG_CHECK(fg_gemm_set_lib(lib));
cleanup:
  return st;
}
const char *fg_gemm_lib_current(void) { return fg_gemm_lib_name(fg_gemm_get_lib()); }
const char *fg_gemm_info(void) { return fg_gemm_describe(); }

/* ---- GEMM ------------------------------------------------------------------------ */

void fg_gemm_ref(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                 int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++) {
      double s = 0.0;
      for (int64_t p = 0; p < k; p++) {
        const float a = trans_a ? A[p * lda + i] : A[i * lda + p]; // op(A)[i][p]
        const float b = trans_b ? B[j * ldb + p] : B[p * ldb + j]; // op(B)[p][j]
        s += (double)a * (double)b;
      }
      const double old = beta == 0.0f ? 0.0 : (double)beta * (double)C[i * ldc + j];
      C[i * ldc + j] = (float)((double)alpha * s + old);
    }
  }
}

void fg_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
             int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    /* op(A) op(B) is zero: C = beta C, and beta == 0 clears C even where it held NaN */
    for (int64_t i = 0; i < m; i++) {
      float *c = C + i * ldc; // (n)
      for (int64_t j = 0; j < n; j++) c[j] = beta == 0.0f ? 0.0f : c[j] * beta;
    }
    return;
  }
  assert(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX);
  assert(lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX);
  assert(ldc >= n);
  assert(lda >= (trans_a ? m : k) && ldb >= (trans_b ? k : n));
#ifdef FG_HAVE_DNNL
  /* dnnl_sgemm is row-major, as fg_gemm; its threads are OpenMP's (Debian's build), so
   * fg_set_threads governs them as it does OpenBLAS's OpenMP flavour. A failure (which valid
   * arguments never give) falls back to OpenBLAS rather than leaving C unwritten. */
  if (gemm_use_onednn(trans_a, trans_b, m, n, k) &&
      dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, A, lda, B, ldb, beta, C,
                 ldc) == dnnl_success)
    return;
#else
  (void)fg_gemm_get_lib(); /* reads FULLGRAPH_GEMM at the first call, so a bad value is named */
#endif
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, A, (int)lda, B,
              (int)ldb, beta, C, (int)ldc);
}

/* ---- initialization and normalization -------------------------------------------- */

void fg_glorot_init_piece(float *out, int64_t fan_in, int64_t fan_out, int64_t row0,
                          int64_t col0, int64_t cols, int64_t e0, int64_t len, uint64_t seed,
                          uint64_t layer) {
  const double a = sqrt(6.0 / (double)(fan_in + fan_out));
  if (len <= 0 || cols <= 0) return;
  FG_OMP_FOR(len)
  for (int64_t k = 0; k < len; k++) {
    const int64_t e = e0 + k, i = row0 + e / cols, j = col0 + e % cols;
    const double u = fg_rng_uniform_d(seed, FG_RNG_INIT, layer, (uint64_t)i, (uint64_t)j, 0);
    out[k] = (float)((2.0 * u - 1.0) * a);
  }
}

void fg_glorot_init(float *W, int64_t fan_in, int64_t fan_out, uint64_t seed, uint64_t layer) {
  fg_glorot_init_piece(W, fan_in, fan_out, 0, 0, fan_out, 0, fan_in * fan_out, seed, layer);
}

void fg_row_normalize(float *x, int64_t rows, int64_t cols) {
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) {
    float *row = x + r * cols; // (cols)
    double s = 0.0;
    for (int64_t j = 0; j < cols; j++) s += (double)row[j];
    if (s == 0.0) continue;
    for (int64_t j = 0; j < cols; j++) row[j] = (float)((double)row[j] / s);
  }
}

/* ---- bandwidth probe ---------------------------------------------------------------- */

double fg_stream_triad(float *a, const float *b, const float *c, float s, int64_t n) {
  FG_PRAGMA(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
  return 3.0 * (double)sizeof(float) * (double)(n > 0 ? n : 0);
}
