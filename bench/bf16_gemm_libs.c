/* bf16_gemm_libs.c -- the measurement behind the bf16 GEMM choice in src/kernels/bf16.c
 * (docs/benchmarks.md, "bf16 GEMM: which library"). Not part of the build: bench/bf16_gemm_libs.sh
 * compiles it against OpenBLAS, oneDNN (libdnnl-dev) and LIBXSMM (libxsmm-dev) and runs it.
 *
 * For each n, k, m it times the two products training runs, both with fp32 accumulation:
 *   tall   C[n x m]  = A[n x k] W[k x m]     (A bf16 activations, W fp32 converted once)
 *   wgrad  dW[k x m] = A^T[k x n] G[n x m]   (A, G bf16)
 * by each candidate:
 *   blas32   OpenBLAS cblas_sgemm on fp32 copies of the operands (the reference rate)
 *   dnnl32   oneDNN dnnl_sgemm on the same fp32 operands
 *   convert  bf16 -> fp32 in row chunks of CHUNK rows, then OpenBLAS sgemm per chunk
 *   cvdnnl   the same with oneDNN's dnnl_sgemm per chunk
 *   dnnlbf   oneDNN's bf16 matmul primitive (created once per shape, outside the timing;
 *            its creation time is printed too)
 *   xsmmbf   LIBXSMM 1.17's bf16-in/fp32-out JIT kernel (libxsmm_bsmmdispatch) over blocks of
 *            XB rows, W packed once into its VNNI pair layout (tall only: wgrad would need A
 *            transposed and G repacked, two full copies, before a single flop)
 * and prints one line per shape: GFLOP/s of each (best of several runs), 2 n k m flops.
 */
#include <cblas.h>
#include <libxsmm.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK 4096
#define XB 64

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint16_t to_bf16(float f) { /* round to nearest even; inputs here are finite */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void cvt_rows(float *dst, const uint16_t *src, int64_t count) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; i++) dst[i] = from_bf16(src[i]);
}

#define DN(call)                                                        \
  do {                                                                  \
    dnnl_status_t st_ = (call);                                         \
    if (st_ != dnnl_success) {                                          \
      fprintf(stderr, "oneDNN error %d at %s:%d\n", (int)st_, __FILE__, __LINE__); \
      exit(1);                                                          \
    }                                                                   \
  } while (0)

static dnnl_engine_t eng;
static dnnl_stream_t strm;

typedef struct {
  dnnl_primitive_t prim;
  dnnl_memory_desc_t src, wei, dst;
  double create_s;
  const char *impl;
} mm_prim;

/* dst[M x N] fp32 = src[M x K] bf16 * wei[K x N] bf16 with src given by strides (so A^T is a
 * strided view of A) */
static mm_prim mm_create(int64_t M, int64_t N, int64_t K, int64_t src_s0, int64_t src_s1) {
  mm_prim p;
  const double t0 = now();
  dnnl_dims_t sd = {M, K}, ss = {src_s0, src_s1}, wd = {K, N}, ws = {N, 1}, dd = {M, N},
              ds = {N, 1};
  DN(dnnl_memory_desc_init_by_strides(&p.src, 2, sd, dnnl_bf16, ss));
  DN(dnnl_memory_desc_init_by_strides(&p.wei, 2, wd, dnnl_bf16, ws));
  DN(dnnl_memory_desc_init_by_strides(&p.dst, 2, dd, dnnl_f32, ds));
  dnnl_matmul_desc_t md;
  DN(dnnl_matmul_desc_init(&md, &p.src, &p.wei, NULL, &p.dst));
  dnnl_primitive_desc_t pd;
  DN(dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL));
  DN(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &p.impl));
  DN(dnnl_primitive_create(&p.prim, pd));
  p.create_s = now() - t0;
  return p;
}

static void mm_run(mm_prim *p, const void *src, const void *wei, float *dst) {
  dnnl_memory_t ms, mw, md;
  DN(dnnl_memory_create(&ms, &p->src, eng, (void *)src));
  DN(dnnl_memory_create(&mw, &p->wei, eng, (void *)wei));
  DN(dnnl_memory_create(&md, &p->dst, eng, dst));
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, md}};
  DN(dnnl_primitive_execute(p->prim, strm, 3, args));
  DN(dnnl_stream_wait(strm));
  dnnl_memory_destroy(ms);
  dnnl_memory_destroy(mw);
  dnnl_memory_destroy(md);
}

typedef struct {
  int64_t n, k, m;
  const float *A32, *W32, *G32;
  const uint16_t *A, *G;
  float *C, *dW;
  float *buf_a, *buf_g; /* CHUNK x max(k, m) fp32 each */
  uint16_t *Wb;         /* k x m bf16 */
  uint16_t *Wv;         /* VNNI pairs */
  mm_prim tall, wgrad;
  libxsmm_bsmmfunction xk;
} bench_case;

enum { BLAS32, DNNL32, CONVERT, DNNLBF, XSMMBF, CONVDNNL, NCAND };
static const char *cand_name[NCAND] = {"blas32", "dnnl32", "convert", "dnnlbf", "xsmmbf",
                                       "cvdnnl"};

static void run_tall(bench_case *b, int c) {
  const int64_t n = b->n, k = b->k, m = b->m;
  switch (c) {
  case BLAS32:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)m, (int)k, 1.0f, b->A32,
                (int)k, b->W32, (int)m, 0.0f, b->C, (int)m);
    break;
  case DNNL32:
    DN(dnnl_sgemm('N', 'N', n, m, k, 1.0f, b->A32, k, b->W32, m, 0.0f, b->C, m));
    break;
  case CONVERT:
    for (int64_t r0 = 0; r0 < n; r0 += CHUNK) {
      const int64_t rows = n - r0 < CHUNK ? n - r0 : CHUNK;
      cvt_rows(b->buf_a, b->A + r0 * k, rows * k);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)m, (int)k, 1.0f,
                  b->buf_a, (int)k, b->W32, (int)m, 0.0f, b->C + r0 * m, (int)m);
    }
    break;
  case CONVDNNL:
    for (int64_t r0 = 0; r0 < n; r0 += CHUNK) {
      const int64_t rows = n - r0 < CHUNK ? n - r0 : CHUNK;
      cvt_rows(b->buf_a, b->A + r0 * k, rows * k);
      DN(dnnl_sgemm('N', 'N', rows, m, k, 1.0f, b->buf_a, k, b->W32, m, 0.0f, b->C + r0 * m, m));
    }
    break;
  case DNNLBF: {
    /* W fp32 -> bf16 once per call, as the kernel will */
    for (int64_t i = 0; i < k * m; i++) b->Wb[i] = to_bf16(b->W32[i]);
    mm_run(&b->tall, b->A, b->Wb, b->C);
    break;
  }
  case XSMMBF: {
    for (int64_t p = 0; p < k; p++)
      for (int64_t j = 0; j < m; j++) b->Wv[(p / 2) * m * 2 + j * 2 + (p % 2)] = to_bf16(b->W32[p * m + j]);
    const int64_t nb = n / XB; /* the bench uses n divisible by XB */
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nb; i++)
      b->xk((const libxsmm_bfloat16 *)b->Wv, (const libxsmm_bfloat16 *)(b->A + i * XB * k),
            b->C + i * XB * m);
    break;
  }
  }
}

static void run_wgrad(bench_case *b, int c) {
  const int64_t n = b->n, k = b->k, m = b->m;
  switch (c) {
  case BLAS32:
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)k, (int)m, (int)n, 1.0f, b->A32,
                (int)k, b->G32, (int)m, 0.0f, b->dW, (int)m);
    break;
  case DNNL32:
    DN(dnnl_sgemm('T', 'N', k, m, n, 1.0f, b->A32, k, b->G32, m, 0.0f, b->dW, m));
    break;
  case CONVERT:
    for (int64_t r0 = 0; r0 < n; r0 += CHUNK) {
      const int64_t rows = n - r0 < CHUNK ? n - r0 : CHUNK;
      cvt_rows(b->buf_a, b->A + r0 * k, rows * k);
      cvt_rows(b->buf_g, b->G + r0 * m, rows * m);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)k, (int)m, (int)rows, 1.0f,
                  b->buf_a, (int)k, b->buf_g, (int)m, r0 == 0 ? 0.0f : 1.0f, b->dW, (int)m);
    }
    break;
  case DNNLBF:
    mm_run(&b->wgrad, b->A, b->G, b->dW);
    break;
  case CONVDNNL:
    for (int64_t r0 = 0; r0 < n; r0 += CHUNK) {
      const int64_t rows = n - r0 < CHUNK ? n - r0 : CHUNK;
      cvt_rows(b->buf_a, b->A + r0 * k, rows * k);
      cvt_rows(b->buf_g, b->G + r0 * m, rows * m);
      DN(dnnl_sgemm('T', 'N', k, m, rows, 1.0f, b->buf_a, k, b->buf_g, m, r0 == 0 ? 0.0f : 1.0f,
                    b->dW, m));
    }
    break;
  default:
    break;
  }
}

static double best_rate(bench_case *b, int wgrad, int c) {
  const double flops = 2.0 * (double)b->n * (double)b->k * (double)b->m;
  double best = 1e30, spent = 0.0;
  wgrad ? run_wgrad(b, c) : run_tall(b, c); /* warm-up */
  for (int rep = 0; rep < 20 && (rep < 3 || spent < 0.3); rep++) {
    const double t0 = now();
    wgrad ? run_wgrad(b, c) : run_tall(b, c);
    const double t = now() - t0;
    spent += t;
    if (t < best) best = t;
  }
  return flops / best * 1e-9;
}

int main(int argc, char **argv) {
  int64_t ns[2] = {10000, 100000};
  int64_t ws[5] = {32, 64, 128, 256, 602};
  int nn = 2, nw = 5;
  if (argc > 1 && strcmp(argv[1], "--quick") == 0) nn = 1;
  DN(dnnl_engine_create(&eng, dnnl_cpu, 0));
  DN(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
  libxsmm_init();
  printf("# threads %d, LIBXSMM target %s, oneDNN %d.%d.%d\n", omp_get_max_threads(),
         libxsmm_get_target_arch(), dnnl_version()->major, dnnl_version()->minor,
         dnnl_version()->patch);
  printf("# GFLOP/s (2 n k m flops over the best of >= 3 timed runs)\n");
  printf("%-6s %7s %4s %4s | %7s %7s %7s %7s %7s | create_ms impl | %7s\n", "shape", "n", "k",
         "m", cand_name[0], cand_name[1], cand_name[2], cand_name[3], cand_name[4], cand_name[5]);
  const int64_t nmax = 100000, wmax = 602;
  float *A32 = malloc(sizeof(float) * nmax * wmax), *G32 = malloc(sizeof(float) * nmax * wmax);
  float *W32 = malloc(sizeof(float) * wmax * wmax), *C = malloc(sizeof(float) * nmax * wmax);
  float *dW = malloc(sizeof(float) * wmax * wmax);
  uint16_t *A = malloc(2 * nmax * wmax), *G = malloc(2 * nmax * wmax);
  float *buf_a = malloc(sizeof(float) * CHUNK * wmax), *buf_g = malloc(sizeof(float) * CHUNK * wmax);
  uint16_t *Wb = malloc(2 * wmax * wmax), *Wv = malloc(2 * wmax * wmax);
  srand(1);
  for (int64_t i = 0; i < nmax * wmax; i++) {
    A[i] = to_bf16((float)rand() / RAND_MAX - 0.5f);
    G[i] = to_bf16((float)rand() / RAND_MAX - 0.5f);
  }
  for (int64_t i = 0; i < wmax * wmax; i++) W32[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int in = 0; in < nn; in++)
    for (int ik = 0; ik < nw; ik++)
      for (int im = 0; im < nw; im++) {
        bench_case b = {0};
        b.n = ns[in];
        b.k = ws[ik];
        b.m = ws[im];
        for (int64_t i = 0; i < b.n * b.k; i++) A32[i] = from_bf16(A[i]);
        for (int64_t i = 0; i < b.n * b.m; i++) G32[i] = from_bf16(G[i]);
        b.A32 = A32, b.G32 = G32, b.W32 = W32, b.A = A, b.G = G, b.C = C, b.dW = dW;
        b.buf_a = buf_a, b.buf_g = buf_g, b.Wb = Wb, b.Wv = Wv;
        b.tall = mm_create(b.n, b.m, b.k, b.k, 1);
        b.wgrad = mm_create(b.k, b.m, b.n, 1, b.k); /* src = A^T: element (p, i) at i k + p */
        const float beta = 0.0f;
        const int flags = LIBXSMM_GEMM_FLAG_VNNI_A;
        const libxsmm_blasint lda = b.m, ldb = b.k, ldc = b.m;
        b.xk = libxsmm_bsmmdispatch(b.m, XB, b.k, &lda, &ldb, &ldc, NULL, &beta, &flags, NULL);
        for (int wg = 0; wg < 2; wg++) {
          double r[NCAND];
          for (int c = 0; c < NCAND; c++) {
            r[c] = 0.0;
            if (c == XSMMBF && (wg || !b.xk)) continue;
            r[c] = best_rate(&b, wg, c);
          }
          const mm_prim *p = wg ? &b.wgrad : &b.tall;
          printf("%-6s %7lld %4lld %4lld | %7.1f %7.1f %7.1f %7.1f %7.1f | %8.2f %s | %7.1f\n",
                 wg ? "wgrad" : "tall", (long long)b.n, (long long)b.k, (long long)b.m, r[0],
                 r[1], r[2], r[3], r[4], 1e3 * p->create_s, p->impl, r[5]);
          fflush(stdout);
        }
        dnnl_primitive_destroy(b.tall.prim);
        dnnl_primitive_destroy(b.wgrad.prim);
      }
  libxsmm_finalize();
  return 0;
}
