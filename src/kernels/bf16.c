/* bf16.c -- bfloat16 conversions, the two bf16 GEMMs training runs and the SpMM on bf16 rows
 * (fg_bf16.h says what each computes and the rounding rule).
 *
 * Which library runs the GEMMs (docs/benchmarks.md, "bf16 GEMM: which library", has the table
 * and the command). Measured on the benchmark machine (AMD EPYC Zen 5, 2 threads) for n in
 * {10^4, 10^5} and k, m in {32, 64, 128, 256, 602}:
 *   - oneDNN 2.6's bf16 matmul (its brgemm avx512_core_bf16 kernels) ran the tall product at
 *     3.2-20x the convert path (bf16 -> fp32, then OpenBLAS sgemm; median 6x) and 1.1-3.4x
 *     oneDNN's own fp32 sgemm on fp32 operands, the weight gradient at 2.1-9.2x convert and
 *     0.6-2.5x (median 1.3x) oneDNN fp32: the fastest bf16 candidate on every shape;
 *   - LIBXSMM 1.17's bf16 kernel (libxsmm_bsmmdispatch, VNNI-packed weights) ran the tall
 *     product at 0.7-1.5x oneDNN bf16 (median 1.17x) but takes no transposed operand, so the
 *     weight gradient would first copy A transposed and G into VNNI pairs: a second
 *     dependency for ~15% on one of the two shapes. Not linked.
 *   - OpenBLAS 0.3.21 (Debian 12) exports no bf16 GEMM (cblas_sbgemm), and its fp32 sgemm ran
 *     at 1/5.8-1/1.5 of oneDNN's dnnl_sgemm (median 1/3) on these shapes: it picks its 256-bit
 *     Haswell kernels on Zen 5.
 * The fixed rule: on the native path both shapes go to oneDNN's bf16 matmul at every width;
 * the convert path exists for CPUs without bf16 dot products and builds without oneDNN, and
 * for the tests to compare the native path with. No timing is done at run time. On a Sapphire
 * Rapids machine at 16 threads, convert beat native in a sweep of 4096-row products, but at
 * the epoch (with the native row blocks below) native was faster on every graph measured but
 * one (Cora at 16 threads, by 8 %), so no shape is sent to convert.
 *
 * oneDNN is optional at build time (FG_HAVE_DNNL): a build without it has the convert path
 * only. A primitive is created per shape (0.3-12 ms measured: more than a whole 10^4 x 32 x 32
 * product) and cached here, keyed by the shape, the leading dimensions, accumulate and the
 * thread count.
 */
#include <stdio.h>
#include <stdlib.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef FG_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include "kernels/fg_bf16.h"
#include "kernels/fg_kernel_util.h"

/* ---- conversions ------------------------------------------------------------------------ */

/* Elements a conversion task gets at least (a fork costs more than converting fewer). */
#define FG_BF16_CVT_BLOCK 16384

static void bf16_from_f32_portable(fg_bf16 *dst, const float *src, int64_t n) {
  FG_OMP_SIMD
  for (int64_t i = 0; i < n; i++) dst[i] = fg_bf16_from_float(src[i]);
}

#if defined(__AVX512BF16__) && defined(__AVX512VL__) && defined(__AVX512BW__)
#define FG_BF16_HAVE_CVT_INSN 1
/* vcvtneps2bf16: round to nearest even, denormal inputs read as zero, NaN made quiet: the
 * rule of fg_bf16_from_float (tests compare the two on every special case). */
static void bf16_from_f32_insn(fg_bf16 *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
    _mm256_storeu_si256((__m256i *)(dst + i), (__m256i)h);
  }
  if (i < n) {
    const __mmask16 tail = (__mmask16)((1u << (n - i)) - 1u);
    const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(tail, src + i));
    _mm256_mask_storeu_epi16(dst + i, tail, (__m256i)h);
  }
}
#else
#define FG_BF16_HAVE_CVT_INSN 0
#endif

/* whether conversions use the instruction: built for it and on the native path (the portable
 * C gives the same bits; the convert path runs it so that the tests reach it) */
static int cvt_native(void) {
  return FG_BF16_HAVE_CVT_INSN && fg_bf16_get_path() == FG_BF16_NATIVE;
}

/* dst[0..n) = bf16(src[0..n)) on the calling thread */
static void bf16_from_f32_serial(fg_bf16 *dst, const float *src, int64_t n, int native) {
#if FG_BF16_HAVE_CVT_INSN
  if (native) {
    bf16_from_f32_insn(dst, src, n);
    return;
  }
#endif
  (void)native;
  bf16_from_f32_portable(dst, src, n);
}

void fg_bf16_from_f32(fg_bf16 *dst, const float *src, int64_t n) {
  if (n <= 0) return;
  const int native = cvt_native();
  const int64_t nblocks = (n + FG_BF16_CVT_BLOCK - 1) / FG_BF16_CVT_BLOCK;
  const int ntasks = fg_kernel_tasks(nblocks, 2);
  /* A short vector (a row of a send buffer, a block's row) skips the parallel construct
   * entirely: even one that runs on one thread costs about a microsecond, which a loop of
   * conversions of a row each paid per row. */
  if (ntasks == 1) {
    bf16_from_f32_serial(dst, src, n, native);
    return;
  }
  FG_OMP_TASKS(ntasks)
  for (int t = 0; t < ntasks; t++) {
    const int64_t b0 = fg_task_start(nblocks, t, ntasks),
                  b1 = fg_task_start(nblocks, t + 1, ntasks);
    const int64_t i0 = b0 * FG_BF16_CVT_BLOCK, i1 = FG_MIN(n, b1 * FG_BF16_CVT_BLOCK);
    bf16_from_f32_serial(dst + i0, src + i0, i1 - i0, native);
  }
}

/* dst's rows (ldd) = src's rows (lds) rounded to bf16: one pass over the rows, in parallel
 * where they hold enough elements (FG_PAR_MIN_ELEMS) */
static void bf16_from_f32_rows(fg_bf16 *dst, int64_t ldd, const float *src, int64_t lds,
                               int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  if (ldd == cols && lds == cols) {
    fg_bf16_from_f32(dst, src, rows * cols);
    return;
  }
  const int native = cvt_native();
  FG_OMP_FOR(rows * cols)
  for (int64_t i = 0; i < rows; i++)
    bf16_from_f32_serial(dst + i * ldd, src + i * lds, cols, native);
}

void fg_bf16_to_f32(float *dst, const fg_bf16 *src, int64_t n) {
  if (n <= 0) return;
  FG_OMP_FOR_SIMD(n)
  for (int64_t i = 0; i < n; i++) dst[i] = fg_bf16_to_float(src[i]);
}

void fg_axpy_bf16(float *y, float a, const fg_bf16 *x, int64_t n) {
  if (n <= 0) return;
  FG_OMP_FOR_SIMD(n)
  for (int64_t i = 0; i < n; i++) y[i] += a * fg_bf16_to_float(x[i]);
}

/* ---- path ------------------------------------------------------------------------------- */

static int g_path = -1; /* fg_bf16_path, -1 until the first fg_bf16_get_path */

int fg_bf16_native_available(void) {
#ifdef FG_HAVE_DNNL
  const unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
  return (isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) == (unsigned)dnnl_cpu_isa_avx512_core_bf16;
#else
  return 0;
#endif
}

const char *fg_bf16_path_name(fg_bf16_path path) {
  return path == FG_BF16_NATIVE ? "native" : "convert";
}

fg_status fg_bf16_path_parse(const char *name, fg_bf16_path *path) {
  fg_status st = FG_OK;
  if (name && strcmp(name, "native") == 0)
    *path = FG_BF16_NATIVE;
  else if (name && strcmp(name, "convert") == 0)
    *path = FG_BF16_CONVERT;
  else
    FG_FAIL(FG_ERR_INVALID_ARG, "unknown bf16 path '%s' (want native or convert)",
            name ? name : "(null)");
cleanup:
  return st;
}

fg_status fg_precision_parse(const char *name, int *bf16) {
  fg_status st = FG_OK;
  if (!name || strcmp(name, "fp32") == 0)
    *bf16 = 0;
  else if (strcmp(name, "bf16") == 0)
    *bf16 = 1;
  else
    FG_FAIL(FG_ERR_INVALID_ARG, "--precision: unknown precision '%s' (want fp32 or bf16)", name);
cleanup:
  return st;
}

/* Why native is unavailable, for messages. */
static const char *bf16_native_missing(void) {
#ifdef FG_HAVE_DNNL
  return "this CPU has no bf16 dot products (oneDNN's ISA lacks avx512_core_bf16)";
#else
  return "this build has no oneDNN (libdnnl-dev; configure with FG_WITH_DNNL=ON)";
#endif
}

fg_status fg_bf16_set_path(fg_bf16_path path) {
  fg_status st = FG_OK;
  FG_REQUIRE(path == FG_BF16_NATIVE || path == FG_BF16_CONVERT, FG_ERR_INVALID_ARG,
             "bf16 path %d is neither native nor convert", (int)path);
  FG_REQUIRE(path == FG_BF16_CONVERT || fg_bf16_native_available(), FG_ERR_UNSUPPORTED,
             "bf16 path native is unavailable: %s", bf16_native_missing());
  g_path = (int)path;
cleanup:
  return st;
}

fg_bf16_path fg_bf16_get_path(void) {
  if (g_path >= 0) return (fg_bf16_path)g_path;
  fg_bf16_path path = fg_bf16_native_available() ? FG_BF16_NATIVE : FG_BF16_CONVERT;
  const char *env = getenv("FULLGRAPH_BF16_PATH");
  if (env && *env) {
    fg_bf16_path want;
    if (fg_bf16_path_parse(env, &want) != FG_OK)
      fprintf(stderr, "fullgraph: warning: FULLGRAPH_BF16_PATH=%s ignored (want native or "
                      "convert)\n", env);
    else if (want == FG_BF16_NATIVE && !fg_bf16_native_available())
      fprintf(stderr, "fullgraph: warning: FULLGRAPH_BF16_PATH=native ignored: %s\n",
              bf16_native_missing());
    else
      path = want;
    fg_error_clear();
  }
  g_path = (int)path;
  return path;
}

const char *fg_bf16_describe(void) {
  static char buf[160];
#ifdef FG_HAVE_DNNL
  const dnnl_version_t *v = dnnl_version();
  if (fg_bf16_native_available())
    snprintf(buf, sizeof buf, "native (oneDNN %d.%d.%d bf16 matmul, avx512_core_bf16)", v->major,
             v->minor, v->patch);
  else
    snprintf(buf, sizeof buf, "convert (oneDNN %d.%d.%d built in, but %s)", v->major, v->minor,
             v->patch, bf16_native_missing());
#else
  snprintf(buf, sizeof buf, "convert (bf16 -> fp32, OpenBLAS sgemm; %s)", bf16_native_missing());
#endif
  return buf;
}

/* the public names (fullgraph.h) */
fg_status fg_set_bf16_path(const char *name) {
  fg_status st = FG_OK;
  fg_bf16_path path;
  FG_CHECK(fg_bf16_path_parse(name, &path));
  FG_CHECK(fg_bf16_set_path(path));
cleanup:
  return st;
}
const char *fg_bf16_path_current(void) { return fg_bf16_path_name(fg_bf16_get_path()); }
const char *fg_bf16_info(void) { return fg_bf16_describe(); }

/* ---- references ------------------------------------------------------------------------- */

void fg_bf16_gemm_tall_ref(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                           const float *W, int64_t ldw, float *C, int64_t ldc, int accumulate) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      double s = accumulate ? (double)C[i * ldc + j] : 0.0;
      for (int64_t p = 0; p < k; p++)
        s += (double)fg_bf16_to_float(A[i * lda + p]) *
             (double)fg_bf16_to_float(fg_bf16_from_float(W[p * ldw + j]));
      C[i * ldc + j] = (float)s;
    }
}

void fg_bf16_gemm_wgrad_ref(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                            const fg_bf16 *G, int64_t ldg, float *dW, int64_t ldw,
                            int accumulate) {
  for (int64_t p = 0; p < k; p++)
    for (int64_t j = 0; j < m; j++) {
      double s = accumulate ? (double)dW[p * ldw + j] : 0.0;
      for (int64_t i = 0; i < n; i++)
        s += (double)fg_bf16_to_float(A[i * lda + p]) * (double)fg_bf16_to_float(G[i * ldg + j]);
      dW[p * ldw + j] = (float)s;
    }
}

/* ---- GEMMs: shared edges ---------------------------------------------------------------- */

/* rows x cols of C (ldc) when the product is empty (k == 0 or n == 0 for the reduction):
 * zeros, or nothing when accumulating. */
static void bf16_zero_or_keep(float *C, int64_t ldc, int64_t rows, int64_t cols, int accumulate) {
  if (accumulate) return;
  for (int64_t i = 0; i < rows; i++) memset(C + i * ldc, 0, sizeof(float) * (size_t)cols);
}

/* ---- operands: bf16 as stored, or fp32 rounded as it is read ---------------------------- */

/* An activation operand (rows of ld elements): bf16 (h), or fp32 (f) that every product reads
 * rounded to bf16 a block of rows at a time, so no rounded copy of the whole matrix is made. */
typedef struct bf16_src {
  const fg_bf16 *h;
  const float *f;
  int64_t ld;
} bf16_src;

/* Rows a product takes at a time from an fp32 operand (both paths) and from any operand on
 * the convert path: sgemm's rate holds from a few thousand rows (the reduction's inner
 * dimension is these rows), so 4096 of them where a block of both fp32 operands fits in 8 MiB
 * (k + m <= 512: every hidden width up to 256), fewer for a wide input layer (Cora's 1433
 * features, chameleon's 2325), down to 256: a block of n rows would otherwise be a whole fp32
 * copy of a small graph's widest operand, more than bf16 saves elsewhere. */
#define FG_BF16_BLOCK_ROWS 4096
#define FG_BF16_BLOCK_MIN_ROWS 256
#define FG_BF16_BLOCK_BYTES (8 << 20)
/* On the native path a block has at least this many rows a thread (at most n): oneDNN's bf16
 * matmul runs a 4096-row block at 16 threads (256 rows a thread) at 0.3-0.5x the rate of
 * the same product on 18772 or 65536 rows, and at or below fp32's (Sapphire Rapids,
 * docs/benchmarks.md, "Native bf16 on Sapphire Rapids again"); with blocks of 2048 rows a thread,
 * ca-AstroPh's bf16 epoch at 16 threads took half the time. At 2 threads this is the 4096
 * rows above. The staging it costs is bf16 (2 bytes an element) and grows with the threads. */
#ifndef FG_BF16_NATIVE_ROWS_PER_THREAD
#define FG_BF16_NATIVE_ROWS_PER_THREAD 2048
#endif
/* ... within this many bytes of block (counted as fp32, as fg_bf16_gemm_scratch_bytes counts
 * it: 64 MiB, 65536 rows at k + m = 256), so that a very wide layer at many threads does not
 * stage gigabytes */
#define FG_BF16_NATIVE_BLOCK_BYTES (64 << 20)

static int64_t block_rows(int64_t n, int64_t k, int64_t m) {
  const int64_t fit = FG_BF16_BLOCK_BYTES / (4 * FG_MAX(k + m, 1));
  int64_t rows = FG_MAX(FG_MIN(fit, (int64_t)FG_BF16_BLOCK_ROWS), (int64_t)FG_BF16_BLOCK_MIN_ROWS);
  if (fg_bf16_get_path() == FG_BF16_NATIVE) {
    const int64_t cap = FG_BF16_NATIVE_BLOCK_BYTES / (4 * FG_MAX(k + m, 1));
    rows = FG_MAX(rows, FG_MIN((int64_t)FG_BF16_NATIVE_ROWS_PER_THREAD * fg_max_threads(), cap));
  }
  return FG_MIN(n, rows);
}

int64_t fg_bf16_gemm_scratch_bytes(int64_t n, int64_t k, int64_t m) {
  return 4 * (block_rows(n, k, m) * (k + m) + k * m);
}

/* dst[rows x cols] (ld cols) = rows r0.. of a as fp32 values of bf16 (widened, or rounded and
 * widened), rows in parallel. */
static void src_rows_f32(float *dst, bf16_src a, int64_t r0, int64_t rows, int64_t cols) {
  FG_OMP_FOR(rows * cols)
  for (int64_t i = 0; i < rows; i++) {
    float *d = dst + i * cols; // (cols)
    if (a.h) {
      const fg_bf16 *s = a.h + (r0 + i) * a.ld; // (cols)
      FG_OMP_SIMD
      for (int64_t j = 0; j < cols; j++) d[j] = fg_bf16_to_float(s[j]);
    } else {
      const float *s = a.f + (r0 + i) * a.ld; // (cols)
      FG_OMP_SIMD
      for (int64_t j = 0; j < cols; j++) d[j] = fg_bf16_to_float(fg_bf16_from_float(s[j]));
    }
  }
}

/* ---- convert path: bf16 -> fp32 row blocks, then the fp32 sgemm ------------------------- */

/* The weights W[k x m] (ldw) as a product multiplies by them, packed (k x m) and made once
 * per product (a blocked product's blocks share them): rounded to bf16 (native path, h) or
 * rounded to bf16 and widened back (convert path, f). */
typedef struct bf16_weights {
  fg_bf16 *h;
  float *f;
} bf16_weights;

static fg_status bf16_weights_make(bf16_weights *w, const float *W, int64_t ldw, int64_t k,
                                   int64_t m) {
  fg_status st = FG_OK;
  w->h = NULL;
  w->f = NULL;
  FG_ALLOC(w->h, k * m);
  bf16_from_f32_rows(w->h, m, W, ldw, k, m);
  if (fg_bf16_get_path() != FG_BF16_NATIVE) { /* (the fp32 form only) */
    FG_ALLOC(w->f, k * m);
    fg_bf16_to_f32(w->f, w->h, k * m);
    free(w->h);
    w->h = NULL;
  }
cleanup:
  return st;
}

static void bf16_weights_free(bf16_weights *w) {
  free(w->h);
  free(w->f);
  w->h = NULL;
  w->f = NULL;
}

static fg_status bf16_tall_convert(int64_t n, int64_t k, int64_t m, bf16_src A, const float *wf,
                                   float *C, int64_t ldc, int accumulate) {
  fg_status st = FG_OK;
  float *buf = NULL;
  const int64_t block = block_rows(n, k, m);
  FG_ALLOC(buf, block * k);
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t rows = FG_MIN(block, n - r0);
    src_rows_f32(buf, A, r0, rows, k); /* buf[rows x k] */
    fg_gemm(0, 0, rows, m, k, 1.0f, buf, k, wf, m, accumulate ? 1.0f : 0.0f, C + r0 * ldc, ldc);
  }
cleanup:
  free(buf);
  return st;
}

static fg_status bf16_wgrad_convert(int64_t n, int64_t k, int64_t m, bf16_src A, bf16_src G,
                                    float *dW, int64_t ldw, int accumulate) {
  fg_status st = FG_OK;
  float *ba = NULL, *bg = NULL;
  const int64_t block = block_rows(n, k, m);
  FG_ALLOC(ba, block * k);
  FG_ALLOC(bg, block * m);
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t rows = FG_MIN(block, n - r0);
    src_rows_f32(ba, A, r0, rows, k); /* ba[rows x k] */
    src_rows_f32(bg, G, r0, rows, m); /* bg[rows x m] */
    /* dW (+)= ba^T bg; the blocks add up in row order */
    fg_gemm(1, 0, k, m, rows, 1.0f, ba, k, bg, m, (accumulate || r0 > 0) ? 1.0f : 0.0f, dW, ldw);
  }
cleanup:
  free(ba);
  free(bg);
  return st;
}

/* ---- native path: oneDNN's bf16 matmul, primitives cached per shape ---------------------- */

#ifdef FG_HAVE_DNNL
/* dst[M x N] fp32 (ldd) (+)= src[M x K] bf16 * wei[K x N] bf16 (ldw), src given by two strides
 * so that A^T is a view of A. */
typedef struct bf16_mm_key {
  int64_t M, N, K, src_s0, src_s1, ldw, ldd;
  int accumulate;
  int threads; /* a primitive's blocking is chosen for the threads it was created with */
} bf16_mm_key;

typedef struct bf16_mm {
  bf16_mm_key key;
  dnnl_primitive_t prim;
  dnnl_memory_desc_t src, wei, dst;
} bf16_mm;

/* Training runs a handful of shapes a layer: the forward and backward products, and for an
 * fp32 operand longer than a block the block's shape, the last block's, and (weight gradients)
 * the first block's without accumulation. With oldest-first replacement a model needing more
 * keys than slots would miss on every call (0.3-12 ms each), so 128 entries: 3 layers of SAGE
 * take about 33, and each costs a primitive's few kilobytes. */
#define FG_BF16_CACHE 128
static bf16_mm g_cache[FG_BF16_CACHE];
static int g_cache_used, g_cache_next;
static dnnl_engine_t g_engine;
static dnnl_stream_t g_stream;

static fg_status bf16_dnnl(dnnl_status_t s, const char *what) {
  if (s == dnnl_success) return FG_OK;
  return fg_error_set(s == dnnl_out_of_memory ? FG_ERR_NOMEM : FG_ERR_UNSUPPORTED, __FILE__,
                      __LINE__, "oneDNN %s failed (dnnl_status %d)", what, (int)s);
}
#define FG_DNNL(call, what) FG_CHECK(bf16_dnnl((call), (what)))

static fg_status bf16_mm_create(const bf16_mm_key *key, bf16_mm *mm) {
  fg_status st = FG_OK;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t ops = NULL;
  if (!g_engine) {
    FG_DNNL(dnnl_engine_create(&g_engine, dnnl_cpu, 0), "engine creation");
    FG_DNNL(dnnl_stream_create(&g_stream, g_engine, dnnl_stream_default_flags), "stream creation");
  }
  dnnl_dims_t sd = {key->M, key->K}, ss = {key->src_s0, key->src_s1};
  dnnl_dims_t wd = {key->K, key->N}, ws = {key->ldw, 1};
  dnnl_dims_t dd = {key->M, key->N}, ds = {key->ldd, 1};
  mm->key = *key;
  FG_DNNL(dnnl_memory_desc_init_by_strides(&mm->src, 2, sd, dnnl_bf16, ss), "memory desc");
  FG_DNNL(dnnl_memory_desc_init_by_strides(&mm->wei, 2, wd, dnnl_bf16, ws), "memory desc");
  FG_DNNL(dnnl_memory_desc_init_by_strides(&mm->dst, 2, dd, dnnl_f32, ds), "memory desc");
  dnnl_matmul_desc_t desc;
  FG_DNNL(dnnl_matmul_desc_init(&desc, &mm->src, &mm->wei, NULL, &mm->dst), "matmul desc");
  FG_DNNL(dnnl_primitive_attr_create(&attr), "attribute creation");
  if (key->accumulate) { /* dst = product + 1.0 dst */
    FG_DNNL(dnnl_post_ops_create(&ops), "post-op creation");
    FG_DNNL(dnnl_post_ops_append_sum(ops, 1.0f), "sum post-op");
    FG_DNNL(dnnl_primitive_attr_set_post_ops(attr, ops), "post-op attribute");
  }
  FG_DNNL(dnnl_primitive_desc_create(&pd, &desc, attr, g_engine, NULL), "matmul primitive desc");
  FG_DNNL(dnnl_primitive_create(&mm->prim, pd), "matmul primitive creation");
cleanup:
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (ops) dnnl_post_ops_destroy(ops);
  return st;
}

static fg_status bf16_mm_run(const bf16_mm_key *key, const void *src, const void *wei,
                             float *dst) {
  fg_status st = FG_OK;
  dnnl_memory_t ms = NULL, mw = NULL, md = NULL;
  bf16_mm *mm = NULL;
  for (int i = 0; i < g_cache_used && !mm; i++) {
    const bf16_mm_key *c = &g_cache[i].key;
    if (c->M == key->M && c->N == key->N && c->K == key->K && c->src_s0 == key->src_s0 &&
        c->src_s1 == key->src_s1 && c->ldw == key->ldw && c->ldd == key->ldd &&
        c->accumulate == key->accumulate && c->threads == key->threads)
      mm = &g_cache[i];
  }
  if (!mm) {
    bf16_mm fresh;
    memset(&fresh, 0, sizeof fresh);
    FG_CHECK(bf16_mm_create(key, &fresh));
    int slot = g_cache_used;
    if (g_cache_used < FG_BF16_CACHE) {
      g_cache_used++;
    } else { /* full: replace the oldest */
      slot = g_cache_next;
      g_cache_next = (g_cache_next + 1) % FG_BF16_CACHE;
      dnnl_primitive_destroy(g_cache[slot].prim);
    }
    g_cache[slot] = fresh;
    mm = &g_cache[slot];
  }
  FG_DNNL(dnnl_memory_create(&ms, &mm->src, g_engine, (void *)(uintptr_t)src), "memory");
  FG_DNNL(dnnl_memory_create(&mw, &mm->wei, g_engine, (void *)(uintptr_t)wei), "memory");
  FG_DNNL(dnnl_memory_create(&md, &mm->dst, g_engine, dst), "memory");
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, md}};
  FG_DNNL(dnnl_primitive_execute(mm->prim, g_stream, 3, args), "matmul");
  FG_DNNL(dnnl_stream_wait(g_stream), "stream wait");
cleanup:
  if (ms) dnnl_memory_destroy(ms);
  if (mw) dnnl_memory_destroy(mw);
  if (md) dnnl_memory_destroy(md);
  return st;
}

void fg_bf16_release(void) {
  for (int i = 0; i < g_cache_used; i++) dnnl_primitive_destroy(g_cache[i].prim);
  g_cache_used = g_cache_next = 0;
  if (g_stream) dnnl_stream_destroy(g_stream);
  if (g_engine) dnnl_engine_destroy(g_engine);
  g_stream = NULL;
  g_engine = NULL;
}

/* Rows r0.. of a as bf16: the stored rows themselves (*ld = a.ld), or rounded into buf. */
static const fg_bf16 *src_rows_bf16(bf16_src a, int64_t r0, int64_t rows, int64_t cols,
                                    fg_bf16 *buf, int64_t *ld) {
  if (a.h) {
    *ld = a.ld;
    return a.h + r0 * a.ld;
  }
  bf16_from_f32_rows(buf, cols, a.f + r0 * a.ld, a.ld, rows, cols);
  *ld = cols;
  return buf;
}

/* An output with padded rows (ldc > m) is made in a packed stand-in and copied: oneDNN picks
 * another kernel for another destination stride, and on some CPUs (Zen 5) that kernel sums
 * in another order, so a product's bits would depend on where it is stored. */
static void rows_copy(float *dst, int64_t ldd, const float *src, int64_t lds, int64_t rows,
                      int64_t cols) {
  FG_OMP_FOR(rows * cols)
  for (int64_t i = 0; i < rows; i++)
    memcpy(dst + i * ldd, src + i * lds, sizeof(float) * (size_t)cols);
}

static fg_status bf16_tall_native(int64_t n, int64_t k, int64_t m, bf16_src A,
                                  const fg_bf16 *wb, float *C, int64_t ldc, int accumulate) {
  fg_status st = FG_OK;
  fg_bf16 *buf = NULL; /* (block x k) */
  float *cb = NULL;    /* (block x m): the packed stand-in of a padded C */
  const int64_t block = A.h ? n : block_rows(n, k, m);
  if (!A.h) FG_ALLOC(buf, block * k);
  if (ldc != m) FG_ALLOC(cb, block * m);
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t rows = FG_MIN(block, n - r0);
    int64_t lda = 0;
    const fg_bf16 *a = src_rows_bf16(A, r0, rows, k, buf, &lda);
    const bf16_mm_key key = {rows, m, k, lda, 1, m, m, accumulate != 0, fg_max_threads()};
    if (cb && accumulate) rows_copy(cb, m, C + r0 * ldc, ldc, rows, m);
    FG_CHECK(bf16_mm_run(&key, a, wb, cb ? cb : C + r0 * ldc));
    if (cb) rows_copy(C + r0 * ldc, ldc, cb, m, rows, m);
  }
cleanup:
  free(buf);
  free(cb);
  return st;
}

static fg_status bf16_wgrad_native(int64_t n, int64_t k, int64_t m, bf16_src A, bf16_src G,
                                   float *dW, int64_t ldw, int accumulate) {
  fg_status st = FG_OK;
  fg_bf16 *ba = NULL, *bg = NULL; /* (block x k), (block x m) for fp32 operands */
  const int64_t block = A.h && G.h ? n : block_rows(n, k, m);
  if (!A.h) FG_ALLOC(ba, block * k);
  if (!G.h) FG_ALLOC(bg, block * m);
  for (int64_t r0 = 0; r0 < n; r0 += block) { /* the blocks add up in row order */
    const int64_t rows = FG_MIN(block, n - r0);
    int64_t lda = 0, ldg = 0;
    const fg_bf16 *a = src_rows_bf16(A, r0, rows, k, ba, &lda);
    const fg_bf16 *g = src_rows_bf16(G, r0, rows, m, bg, &ldg);
    /* src = a^T [k x rows]: element (p, i) is a[i lda + p] */
    const bf16_mm_key key = {k,   m,   rows, 1, lda, ldg, ldw, accumulate || r0 > 0,
                             fg_max_threads()};
    FG_CHECK(bf16_mm_run(&key, a, g, dW));
  }
cleanup:
  free(ba);
  free(bg);
  return st;
}
#else
void fg_bf16_release(void) {}
#endif

/* ---- GEMM entry points ------------------------------------------------------------------- */

#ifdef _OPENMP
#define FG_BF16_NOT_IN_PARALLEL() assert(!omp_in_parallel())
#else
#define FG_BF16_NOT_IN_PARALLEL() ((void)0)
#endif

/* C (+)= A w on prepared weights (n, m, k > 0) */
static fg_status bf16_tall_w(int64_t n, int64_t k, int64_t m, bf16_src A, const bf16_weights *w,
                             float *C, int64_t ldc, int accumulate) {
#ifdef FG_HAVE_DNNL
  if (!w->f) return bf16_tall_native(n, k, m, A, w->h, C, ldc, accumulate);
#endif
  return bf16_tall_convert(n, k, m, A, w->f, C, ldc, accumulate);
}

static fg_status bf16_tall(int64_t n, int64_t k, int64_t m, bf16_src A, const float *W,
                           int64_t ldw, float *C, int64_t ldc, int accumulate) {
  fg_status st = FG_OK;
  bf16_weights w = {NULL, NULL};
  assert(n >= 0 && k >= 0 && m >= 0 && A.ld >= k && ldw >= m && ldc >= m);
  FG_BF16_NOT_IN_PARALLEL();
  if (n == 0 || m == 0) return FG_OK;
  if (k == 0) {
    bf16_zero_or_keep(C, ldc, n, m, accumulate);
    return FG_OK;
  }
  FG_CHECK(bf16_weights_make(&w, W, ldw, k, m));
  st = bf16_tall_w(n, k, m, A, &w, C, ldc, accumulate);
cleanup:
  bf16_weights_free(&w);
  return st;
}

static fg_status bf16_wgrad(int64_t n, int64_t k, int64_t m, bf16_src A, bf16_src G, float *dW,
                            int64_t ldw, int accumulate) {
  assert(n >= 0 && k >= 0 && m >= 0 && A.ld >= k && G.ld >= m && ldw >= m);
  FG_BF16_NOT_IN_PARALLEL();
  if (k == 0 || m == 0) return FG_OK;
  if (n == 0) {
    bf16_zero_or_keep(dW, ldw, k, m, accumulate);
    return FG_OK;
  }
#ifdef FG_HAVE_DNNL
  if (fg_bf16_get_path() == FG_BF16_NATIVE)
    return bf16_wgrad_native(n, k, m, A, G, dW, ldw, accumulate);
#endif
  return bf16_wgrad_convert(n, k, m, A, G, dW, ldw, accumulate);
}

fg_status fg_bf16_gemm_tall(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                            const float *W, int64_t ldw, float *C, int64_t ldc, int accumulate) {
  const bf16_src a = {A, NULL, lda};
  return bf16_tall(n, k, m, a, W, ldw, C, ldc, accumulate);
}

fg_status fg_bf16_gemm_wgrad(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                             const fg_bf16 *G, int64_t ldg, float *dW, int64_t ldw,
                             int accumulate) {
  const bf16_src a = {A, NULL, lda}, g = {G, NULL, ldg};
  return bf16_wgrad(n, k, m, a, g, dW, ldw, accumulate);
}

fg_status fg_bf16_gemm_wgrad_hf(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                                const float *G, int64_t ldg, float *dW, int64_t ldw,
                                int accumulate) {
  const bf16_src a = {A, NULL, lda}, g = {NULL, G, ldg};
  return bf16_wgrad(n, k, m, a, g, dW, ldw, accumulate);
}

fg_status fg_bf16_gemm_tall_f32(int64_t n, int64_t k, int64_t m, const float *A, int64_t lda,
                                const float *W, int64_t ldw, float *C, int64_t ldc,
                                int accumulate) {
  const bf16_src a = {NULL, A, lda};
  return bf16_tall(n, k, m, a, W, ldw, C, ldc, accumulate);
}

fg_status fg_bf16_gemm_wgrad_f32(int64_t n, int64_t k, int64_t m, const float *A, int64_t lda,
                                 const float *G, int64_t ldg, float *dW, int64_t ldw,
                                 int accumulate) {
  const bf16_src a = {NULL, A, lda}, g = {NULL, G, ldg};
  return bf16_wgrad(n, k, m, a, g, dW, ldw, accumulate);
}

fg_status fg_bf16_gemm_wgrad_fh(int64_t n, int64_t k, int64_t m, const float *A, int64_t lda,
                                const fg_bf16 *G, int64_t ldg, float *dW, int64_t ldw,
                                int accumulate) {
  const bf16_src a = {NULL, A, lda}, g = {G, NULL, ldg};
  return bf16_wgrad(n, k, m, a, g, dW, ldw, accumulate);
}

/* A W (+ A2 W2 where W2 is not NULL) a block of rows at a time, each block's fp32 product as
 * bf16_tall computes it on the convert path (the same row blocks; the second product added
 * onto the first as bf16_tall accumulates), handed to sink in row order. */
static fg_status bf16_tall_rows(int64_t n, int64_t k, int64_t m, bf16_src A, const float *W,
                                int64_t ldw, bf16_src A2, const float *W2, int64_t ldw2,
                                fg_rows_sink sink, void *ctx) {
  fg_status st = FG_OK;
  float *blk = NULL; /* (block x m): a block of the fp32 product */
  bf16_weights w = {NULL, NULL}, w2 = {NULL, NULL};
  const int64_t block = block_rows(n, k, m);
  FG_BF16_NOT_IN_PARALLEL();
  if (n == 0 || m == 0) return FG_OK;
  FG_ALLOC(blk, block * m);
  if (k > 0) FG_CHECK(bf16_weights_make(&w, W, ldw, k, m));
  if (k > 0 && W2) FG_CHECK(bf16_weights_make(&w2, W2, ldw2, k, m));
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t rows = FG_MIN(block, n - r0);
    const bf16_src a = {A.h ? A.h + r0 * A.ld : NULL, A.f ? A.f + r0 * A.ld : NULL, A.ld};
    const bf16_src a2 = {A2.h ? A2.h + r0 * A2.ld : NULL, A2.f ? A2.f + r0 * A2.ld : NULL,
                         A2.ld};
    if (k == 0) {
      bf16_zero_or_keep(blk, m, rows, m, 0);
    } else {
      FG_CHECK(bf16_tall_w(rows, k, m, a, &w, blk, m, 0));
      if (W2) FG_CHECK(bf16_tall_w(rows, k, m, a2, &w2, blk, m, 1));
    }
    sink(ctx, r0, rows, blk);
  }
cleanup:
  bf16_weights_free(&w);
  bf16_weights_free(&w2);
  free(blk);
  return st;
}

/* fg_rows_sink that rounds a block into C (bf16, ldc) */
typedef struct round_sink {
  fg_bf16 *C;
  int64_t ldc, m;
} round_sink;

static void round_rows(void *ctx, int64_t r0, int64_t rows, float *blk) {
  const round_sink *a = ctx;
  bf16_from_f32_rows(a->C + r0 * a->ldc, a->ldc, blk, a->m, rows, a->m);
}

/* C (bf16) = A W: each block's fp32 product rounded as it is stored. */
static fg_status bf16_tall_16(int64_t n, int64_t k, int64_t m, bf16_src A, const float *W,
                              int64_t ldw, fg_bf16 *C, int64_t ldc) {
  round_sink a = {C, ldc, m};
  const bf16_src none = {NULL, NULL, 0};
  assert(ldc >= m);
  return bf16_tall_rows(n, k, m, A, W, ldw, none, NULL, 0, round_rows, &a);
}

fg_status fg_bf16_gemm_tall_f32_16(int64_t n, int64_t k, int64_t m, const float *A, int64_t lda,
                                   const float *W, int64_t ldw, fg_bf16 *C, int64_t ldc) {
  const bf16_src a = {NULL, A, lda};
  return bf16_tall_16(n, k, m, a, W, ldw, C, ldc);
}

fg_status fg_bf16_gemm_tall_16(int64_t n, int64_t k, int64_t m, const fg_bf16 *A, int64_t lda,
                               const float *W, int64_t ldw, fg_bf16 *C, int64_t ldc) {
  const bf16_src a = {A, NULL, lda};
  return bf16_tall_16(n, k, m, a, W, ldw, C, ldc);
}

fg_status fg_bf16_gemm_tall_rows(int64_t n, int64_t k, int64_t m, const fg_bf16 *A,
                                 const float *Af, int64_t lda, const float *W, int64_t ldw,
                                 fg_rows_sink sink, void *ctx) {
  const bf16_src a = {A, A ? NULL : Af, lda}, none = {NULL, NULL, 0};
  assert((A != NULL) != (Af != NULL));
  return bf16_tall_rows(n, k, m, a, W, ldw, none, NULL, 0, sink, ctx);
}

fg_status fg_bf16_gemm_tall_rows2(int64_t n, int64_t k, int64_t m, const fg_bf16 *A,
                                  const float *Af, int64_t lda, const float *W, int64_t ldw,
                                  const fg_bf16 *A2, const float *A2f, int64_t lda2,
                                  const float *W2, int64_t ldw2, fg_rows_sink sink, void *ctx) {
  const bf16_src a = {A, A ? NULL : Af, lda}, a2 = {A2, A2 ? NULL : A2f, lda2};
  assert((A != NULL) != (Af != NULL) && (A2 != NULL) != (A2f != NULL) && W2);
  return bf16_tall_rows(n, k, m, a, W, ldw, a2, W2, ldw2, sink, ctx);
}

int64_t fg_bf16_gemm_block_rows(int64_t n, int64_t k, int64_t m) { return block_rows(n, k, m); }

/* ---- SpMM on bf16 rows -------------------------------------------------------------------- */

void fg_spmm_bf16_ref(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, int64_t ldy,
                      int64_t f, int accumulate) {
  for (int64_t r = 0; r < A->nrows; r++) {
    float *y = Y + r * ldy; // (f)
    for (int64_t j = 0; j < f; j++) {
      float acc = 0.0f;
      for (int64_t e = A->rowptr[r]; e < A->rowptr[r + 1]; e++) {
        const float a = A->val ? A->val[e] : 1.0f;
        acc += a * fg_bf16_to_float(X[(int64_t)A->col[e] * ldx + j]);
      }
      y[j] = accumulate ? acc + y[j] : acc;
    }
  }
}

void fg_spmm_bf16_out_ref(const fg_csr *A, const fg_bf16 *X, int64_t ldx, fg_bf16 *Y,
                          int64_t ldy, int64_t f) {
  for (int64_t r = 0; r < A->nrows; r++)
    for (int64_t j = 0; j < f; j++) {
      float acc = 0.0f;
      for (int64_t e = A->rowptr[r]; e < A->rowptr[r + 1]; e++)
        acc += (A->val ? A->val[e] : 1.0f) * fg_bf16_to_float(X[(int64_t)A->col[e] * ldx + j]);
      Y[r * ldy + j] = fg_bf16_from_float(acc);
    }
}

/* multiply-adds below which another thread does not pay for itself (as fg_spmm's) */
#define FG_SPMM_BF16_MIN_TASK_WORK 16384
/* rows of X prefetched this many bytes of gathers ahead (fg_spmm's L1 distance) */
#ifndef FG_SPMM_BF16_PREFETCH_BYTES
#define FG_SPMM_BF16_PREFETCH_BYTES 12288
#endif


#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
/* Columns a tile keeps in registers: 8 vectors of 16 fp32 accumulators (the bf16 source
 * segment is 256 bytes, four cache lines). */
#define FG_SPMM_BF16_TILE 128
#define FG_SPMM_BF16_VL 16 /* fp32 lanes a vector */

/* 32 bf16 at p (n of them, 1..32; lanes past n: 0) widened exactly to fp32 without a shuffle:
 * as 16 dwords, each holds two columns, so the even columns are the dwords shifted up by 16
 * and the odd ones the dwords with the low half cleared (the AVX2 tile's trick, twice as
 * wide). *even gets columns 0, 2, ..., 30, *odd columns 1, 3, ..., 31. */
static inline void bf16_load32_split(const fg_bf16 *p, int n, __m512 *even, __m512 *odd) {
  const __mmask32 mask = n == 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << n) - 1u);
  const __m512i v = _mm512_maskz_loadu_epi16(mask, p);
  *even = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  *odd = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xffff0000u)));
}

/* Columns 0..15 (*lo) and 16..31 (*hi) in order from the even and odd columns' vectors. */
static inline void bf16_interleave32(__m512 even, __m512 odd, __m512 *lo, __m512 *hi) {
  const __m512 a = _mm512_unpacklo_ps(even, odd); /* columns 0-3 | 8-11 | 16-19 | 24-27 */
  const __m512 b = _mm512_unpackhi_ps(even, odd); /* columns 4-7 | 12-15 | 20-23 | 28-31 */
  const __m512i ilo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i ihi =
      _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  *lo = _mm512_permutex2var_ps(a, ilo, b);
  *hi = _mm512_permutex2var_ps(a, ihi, b);
}

/* The lanes of mask of v rounded to bf16 at p (the instruction where the build has it, else
 * the scalar rule: the same bits). */
static inline void bf16_store16(fg_bf16 *p, __mmask16 mask, __m512 v) {
#if FG_BF16_HAVE_CVT_INSN
  _mm256_mask_storeu_epi16(p, mask, (__m256i)_mm512_cvtneps_pbh(v));
#else
  float tmp[16];
  _mm512_storeu_ps(tmp, v);
  for (int l = 0; l < 16; l++)
    if ((mask >> l) & 1) p[l] = fg_bf16_from_float(tmp[l]);
#endif
}

/* Rows [r0, r1), w columns (1 <= w <= tile) starting at X and at the output's tile: Y (fp32),
 * or Yb (bf16, rounded; then not accumulating) when Yb != NULL; nv vectors, the last of
 * them holding rem lanes (the mask `tail`). The gathers read 32 columns a load into even and
 * odd accumulators (bf16_load32_split), put back in column order once a row; each column's
 * sum takes the same products in the same order, so the bits are the plain loop's. nv and
 * has_val are constants after inlining. */
static inline __attribute__((always_inline)) void
bf16_tile(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, fg_bf16 *Yb, int64_t ldy,
          int64_t r0, int64_t r1, int accumulate, const int nv, int rem, const int has_val,
          int64_t ahead, int64_t kend) {
  const __mmask16 tail = (__mmask16)(rem == 16 ? 0xffffu : (1u << rem) - 1u);
  const int64_t *rowptr = A->rowptr;
  const int32_t *col = A->col;
  const float *val = A->val;
  const int np = (nv + 1) / 2;                           /* 32-column groups */
  const int last = 16 * (nv - 1) + rem - 32 * (np - 1); /* columns of the last group */
  for (int64_t r = r0; r < r1; r++) {
    __m512 acc[8], ev[4], od[4];
    for (int q = 0; q < np; q++) ev[q] = od[q] = _mm512_setzero_ps();
    for (int64_t e = rowptr[r]; e < rowptr[r + 1]; e++) {
      const fg_bf16 *x = X + (int64_t)col[e] * ldx;
      if (e + ahead < kend) {
        const char *p = (const char *)(X + (int64_t)col[e + ahead] * ldx);
        for (int l = 0; l < np; l++) __builtin_prefetch(p + 64 * l, 0, 3);
      }
      const __m512 a = _mm512_set1_ps(has_val ? val[e] : 1.0f);
      for (int q = 0; q < np; q++) {
        __m512 xe, xo;
        bf16_load32_split(x + 32 * q, q + 1 < np ? 32 : last, &xe, &xo);
        ev[q] = _mm512_add_ps(ev[q], has_val ? _mm512_mul_ps(a, xe) : xe);
        od[q] = _mm512_add_ps(od[q], has_val ? _mm512_mul_ps(a, xo) : xo);
      }
    }
    for (int q = 0; q < np; q++) {
      __m512 lo, hi;
      bf16_interleave32(ev[q], od[q], &lo, &hi);
      acc[2 * q] = lo;
      if (2 * q + 1 < nv) acc[2 * q + 1] = hi;
    }
    if (Yb) {
      fg_bf16 *yb = Yb + r * ldy;
      for (int i = 0; i < nv; i++)
        bf16_store16(yb + 16 * i, i + 1 < nv ? (__mmask16)0xffff : tail, acc[i]);
      continue;
    }
    float *y = Y + r * ldy;
    for (int i = 0; i < nv; i++) {
      const __mmask16 mk = i + 1 < nv ? (__mmask16)0xffff : tail;
      if (accumulate) acc[i] = _mm512_add_ps(acc[i], _mm512_maskz_loadu_ps(mk, y + 16 * i));
      _mm512_mask_storeu_ps(y + 16 * i, mk, acc[i]);
    }
  }
}

#elif defined(__AVX2__)
/* ---- AVX2: 8 vectors of 8 fp32 accumulators (a bf16 segment of 128 bytes, two lines) ------ */
#define FG_SPMM_BF16_TILE 64
#define FG_SPMM_BF16_VL 8

/* 16 bf16 at p (n of them, 1..16; lanes past n: 0; 16 and 8 are one load) widened exactly to
 * fp32 without a shuffle: as 8 dwords, each holds two columns, so the even columns are the
 * dwords shifted up by 16 and the odd ones the dwords with the low half cleared. *even gets
 * columns 0, 2, ..., 14, *odd columns 1, 3, ..., 15 (bf16_interleave puts them in order). */
static inline void bf16_load16_split(const fg_bf16 *p, int n, __m256 *even, __m256 *odd) {
  __m256i v;
  if (n == 16) {
    v = _mm256_loadu_si256((const __m256i *)(const void *)p);
  } else if (n == 8) {
    v = _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p));
  } else {
    fg_bf16 tmp[16] = {0};
    memcpy(tmp, p, sizeof(fg_bf16) * (size_t)n);
    v = _mm256_loadu_si256((const __m256i *)(const void *)tmp);
  }
  *even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  *odd = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32((int)0xffff0000u)));
}

/* Columns 0..7 (*lo) and 8..15 (*hi) in order from the even and odd columns' vectors. */
static inline void bf16_interleave(__m256 even, __m256 odd, __m256 *lo, __m256 *hi) {
  const __m256 a = _mm256_unpacklo_ps(even, odd); /* columns 0-3 | 8-11 */
  const __m256 b = _mm256_unpackhi_ps(even, odd); /* columns 4-7 | 12-15 */
  *lo = _mm256_permute2f128_ps(a, b, 0x20);
  *hi = _mm256_permute2f128_ps(a, b, 0x31);
}

/* Rows [r0, r1), w columns (1 <= w <= 64): bf16_tile's contract with 8-lane vectors, the last
 * of nv holding `rem` lanes (loads and stores under lane_mask). The gathers read 16 columns a
 * load into even and odd accumulators (bf16_load16_split: two integer operations a load instead
 * of two widening shuffles and two shifts), put back in column order once a row; each column's
 * sum takes the same products in the same order, so the bits are the plain loop's. nv and
 * has_val are constants after inlining. */
static inline __attribute__((always_inline)) void
bf16_tile(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, fg_bf16 *Yb, int64_t ldy,
          int64_t r0, int64_t r1, int accumulate, const int nv, int rem, const int has_val,
          int64_t ahead, int64_t kend) {
  const int64_t *rowptr = A->rowptr;
  const int32_t *col = A->col;
  const float *val = A->val;
  const __m256i lane_mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const int np = (nv + 1) / 2;                          /* 16-column groups */
  const int last = 8 * (nv - 1) + rem - 16 * (np - 1); /* columns of the last group */
  for (int64_t r = r0; r < r1; r++) {
    __m256 acc[8], ev[4], od[4];
    for (int q = 0; q < np; q++) ev[q] = od[q] = _mm256_setzero_ps();
    for (int64_t e = rowptr[r]; e < rowptr[r + 1]; e++) {
      const fg_bf16 *x = X + (int64_t)col[e] * ldx;
      if (e + ahead < kend) {
        const char *p = (const char *)(X + (int64_t)col[e + ahead] * ldx);
        for (int l = 0; l < (nv + 3) / 4; l++) __builtin_prefetch(p + 64 * l, 0, 3);
      }
      const __m256 a = _mm256_set1_ps(has_val ? val[e] : 1.0f);
      for (int q = 0; q < np; q++) {
        __m256 xe, xo;
        bf16_load16_split(x + 16 * q, q + 1 < np ? 16 : last, &xe, &xo);
        ev[q] = _mm256_add_ps(ev[q], has_val ? _mm256_mul_ps(a, xe) : xe);
        od[q] = _mm256_add_ps(od[q], has_val ? _mm256_mul_ps(a, xo) : xo);
      }
    }
    for (int q = 0; q < np; q++) {
      __m256 lo, hi;
      bf16_interleave(ev[q], od[q], &lo, &hi);
      acc[2 * q] = lo;
      if (2 * q + 1 < nv) acc[2 * q + 1] = hi;
    }
    if (Yb) {
      fg_bf16 *yb = Yb + r * ldy;
      for (int i = 0; i < nv; i++) {
        float tmp[8];
        _mm256_storeu_ps(tmp, acc[i]);
        for (int l = 0; l < (i + 1 < nv ? 8 : rem); l++) yb[8 * i + l] = fg_bf16_from_float(tmp[l]);
      }
      continue;
    }
    float *y = Y + r * ldy;
    for (int i = 0; i < nv; i++) {
      if (i + 1 < nv || rem == 8) {
        if (accumulate) acc[i] = _mm256_add_ps(acc[i], _mm256_loadu_ps(y + 8 * i));
        _mm256_storeu_ps(y + 8 * i, acc[i]);
      } else {
        if (accumulate) acc[i] = _mm256_add_ps(acc[i], _mm256_maskload_ps(y + 8 * i, lane_mask));
        _mm256_maskstore_ps(y + 8 * i, lane_mask, acc[i]);
      }
    }
  }
}

#else
/* ---- portable C: a tile of up to 64 columns in a local array ----------------------------- */
#define FG_SPMM_BF16_TILE 64

static void bf16_tile_any(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, fg_bf16 *Yb,
                          int64_t ldy, int64_t r0, int64_t r1, int accumulate, int64_t w,
                          int64_t kend) {
  (void)kend;
  for (int64_t r = r0; r < r1; r++) {
    float acc[FG_SPMM_BF16_TILE];
    for (int64_t j = 0; j < w; j++) acc[j] = 0.0f;
    for (int64_t e = A->rowptr[r]; e < A->rowptr[r + 1]; e++) {
      const fg_bf16 *x = X + (int64_t)A->col[e] * ldx; // (w)
      const float a = A->val ? A->val[e] : 1.0f;
      for (int64_t j = 0; j < w; j++) acc[j] += a * fg_bf16_to_float(x[j]);
    }
    if (Yb) {
      fg_bf16 *yb = Yb + r * ldy; // (w)
      for (int64_t j = 0; j < w; j++) yb[j] = fg_bf16_from_float(acc[j]);
      continue;
    }
    float *y = Y + r * ldy; // (w)
    for (int64_t j = 0; j < w; j++) y[j] = accumulate ? acc[j] + y[j] : acc[j];
  }
}
#endif

#if defined(FG_SPMM_BF16_VL)
/* One tile call: nv vectors of FG_SPMM_BF16_VL lanes, the last holding rem, and whether A has
 * values, made constants by a switch so the accumulators stay in registers. */
#define FG_BF16_TILE_CASE(n)                                                                \
  case n:                                                                                   \
    if (A->val)                                                                             \
      bf16_tile(A, X, ldx, Y, Yb, ldy, r0, r1, accumulate, n, rem, 1, ahead, kend);         \
    else                                                                                    \
      bf16_tile(A, X, ldx, Y, Yb, ldy, r0, r1, accumulate, n, rem, 0, ahead, kend);         \
    break;

static void bf16_tile_any(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, fg_bf16 *Yb,
                          int64_t ldy, int64_t r0, int64_t r1, int accumulate, int64_t w,
                          int64_t kend) {
  const int nv = (int)((w + FG_SPMM_BF16_VL - 1) / FG_SPMM_BF16_VL);
  const int rem = (int)(w - FG_SPMM_BF16_VL * (nv - 1));
  const int64_t ahead = FG_MAX(FG_SPMM_BF16_PREFETCH_BYTES / (((2 * w + 63) / 64) * 64), 1);
  switch (nv) {
    FG_BF16_TILE_CASE(1)
    FG_BF16_TILE_CASE(2)
    FG_BF16_TILE_CASE(3)
    FG_BF16_TILE_CASE(4)
    FG_BF16_TILE_CASE(5)
    FG_BF16_TILE_CASE(6)
    FG_BF16_TILE_CASE(7)
    default: FG_BF16_TILE_CASE(8)
  }
}
#endif

/* Y (fp32) or Yb (bf16) = (or +=, fp32 only) A X. kmax (>= A->rowptr[nrows]): how far the last
 * task's prefetches may look -- a row chunk of a larger matrix (fg_spmm_bf16_chunked) passes the
 * whole matrix's end, so that its last rows prefetch the next chunk's first gathers. */
static void spmm_bf16_driver(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y,
                             fg_bf16 *Yb, int64_t ldy, int64_t f, int accumulate, int64_t kmax) {
  const int64_t nrows = A->nrows;
  if (nrows <= 0 || f <= 0) return;
  assert(ldx >= f && ldy >= f);
  const int64_t total = fg_spmm_row_cost(A->rowptr, nrows);
  const int ntasks = fg_kernel_tasks(total * f, FG_SPMM_BF16_MIN_TASK_WORK);
  FG_OMP_TASKS(ntasks)
  for (int t = 0; t < ntasks; t++) {
    const int64_t r0 = fg_spmm_find_row(A->rowptr, nrows, fg_task_start(total, t, ntasks));
    const int64_t r1 = fg_spmm_find_row(A->rowptr, nrows, fg_task_start(total, t + 1, ntasks));
    for (int64_t j0 = 0; j0 < f && r0 < r1; j0 += FG_SPMM_BF16_TILE) {
      const int64_t w = FG_MIN(f - j0, (int64_t)FG_SPMM_BF16_TILE);
      bf16_tile_any(A, X + j0, ldx, Y ? Y + j0 : NULL, Yb ? Yb + j0 : NULL, ldy, r0, r1,
                    accumulate, w, t + 1 == ntasks ? kmax : A->rowptr[r1]);
    }
  }
}

void fg_spmm_bf16(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, int64_t ldy,
                  int64_t f, int accumulate) {
  spmm_bf16_driver(A, X, ldx, Y, NULL, ldy, f, accumulate,
                   A->nrows > 0 ? A->rowptr[A->nrows] : 0);
}

typedef struct spmm_bf16_chunk_args {
  const fg_bf16 *X;
  float *Y;
  int64_t ldx, ldy, f, nnz; /* nnz: the whole matrix's, for the driver's thread split */
  int accumulate;
} spmm_bf16_chunk_args;

static void spmm_bf16_chunk(void *arg, const fg_csr *rows, int64_t r0) {
  const spmm_bf16_chunk_args *a = arg;
  spmm_bf16_driver(rows, a->X, a->ldx, a->Y + r0 * a->ldy, NULL, a->ldy, a->f, a->accumulate,
                   a->nnz);
}

void fg_spmm_bf16_chunked(const fg_csr *A, const fg_bf16 *X, int64_t ldx, float *Y, int64_t ldy,
                          int64_t f, int accumulate, int64_t chunk_bytes,
                          int (*between)(void *ctx), void *ctx) {
  /* a chunk's cost in fg_spmm_row_cost units (a nonzero or a row), each taken as the 2f bytes a
   * nonzero gathers, at least 1 */
  spmm_bf16_chunk_args a = {X, Y, ldx, ldy, f, 0, accumulate};
  if (A->nrows <= 0 || f <= 0) return;
  a.nnz = A->rowptr[A->nrows];
  fg_spmm_in_chunks(A, FG_MAX(chunk_bytes / (2 * f), 1), spmm_bf16_chunk, &a, between, ctx);
}

void fg_spmm_bf16_out(const fg_csr *A, const fg_bf16 *X, int64_t ldx, fg_bf16 *Y, int64_t ldy,
                      int64_t f) {
  spmm_bf16_driver(A, X, ldx, NULL, Y, ldy, f, 0, A->nrows > 0 ? A->rowptr[A->nrows] : 0);
}
