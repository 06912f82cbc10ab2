/* calibrate.c -- fg_calibrate: measure SpMMs of several shapes, GEMMs, the STREAM triad and
 * ring all-reduces on this machine (on every rank at once) and fit the performance model's
 * coefficients by least squares. See fg_plan.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/fg_rng.h"
#include "dist/fg_dist.h"
#include "kernels/fg_bf16.h"
#include "kernels/fg_kernels.h"
#include "plan/fg_plan.h"

/* Size of the level-`want` cache of cpu0 from sysfs (bytes), or fallback when unknown. */
static double cache_level_bytes(int want, double fallback) {
  for (int i = 0; i < 8; i++) {
    char path[128], buf[64];
    FILE *f;
    int level = 0;
    double size = 0.0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    if (!(f = fopen(path, "r"))) continue;
    if (fscanf(f, "%d", &level) != 1) level = 0;
    fclose(f);
    if (level != want) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = fopen(path, "r"))) continue;
    if (fgets(buf, sizeof buf, f)) {
      char unit = 0;
      if (sscanf(buf, "%lf%c", &size, &unit) >= 1)
        size *= unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : 1.0;
    }
    fclose(f);
    if (size > 0) return size;
  }
  return fallback;
}

/* dense operands of a sample stay below this (per rank) */
#define CAL_MAX_DENSE_BYTES ((int64_t)160 << 20)
#define CAL_MAX_SAMPLES 128

/* A rows x cols matrix with deg uniformly drawn columns per row (sorted, repeats allowed). */
static fg_status random_csr(int64_t rows, int64_t cols, int deg, uint64_t seed, fg_csr *A) {
  fg_status st = FG_OK;
  memset(A, 0, sizeof *A);
  A->nrows = rows;
  A->ncols = cols;
  A->nnz = rows * deg;
  FG_ALLOC(A->rowptr, rows + 1);
  FG_ALLOC(A->col, A->nnz > 0 ? A->nnz : 1);
  FG_ALLOC(A->val, A->nnz > 0 ? A->nnz : 1);
  for (int64_t r = 0; r <= rows; r++) A->rowptr[r] = r * deg;
  for (int64_t r = 0; r < rows; r++) {
    int32_t *c = A->col + r * deg;
    for (int k = 0; k < deg; k++) {
      int32_t v = (int32_t)(fg_rng_u64(seed, FG_RNG_FEATURES, (uint64_t)r, (uint64_t)k, 7, 0) %
                            (uint64_t)cols);
      int j = k;
      while (j > 0 && c[j - 1] > v) {
        c[j] = c[j - 1];
        j--;
      }
      c[j] = v;
      A->val[r * deg + k] = 1.0f / (float)deg;
    }
  }
cleanup:
  if (st != FG_OK) fg_csr_free(A);
  return st;
}

static float *dense(int64_t n) {
  float *x = fg_malloc_aligned((size_t)(n > 0 ? n : 1) * sizeof(float));
  if (x)
    for (int64_t i = 0; i < n; i++) x[i] = 0.25f + (float)(i % 7) * 0.125f;
  return x;
}

/* Seconds of Y = A X (f columns): a warm-up, then the mean of a few back-to-back runs. Every
 * rank runs at once, so a job with more ranks than cores sees its contention (the caller takes
 * the slowest rank's). */
static double time_spmm(const fg_csr *A, const float *X, float *Y, int64_t f) {
  double once, t0 = fg_now();
  int reps;
  fg_spmm(A, X, f, Y, f, f);
  once = fg_now() - t0;
  reps = once > 0.05 ? 2 : once > 0.01 ? 3 : once > 0.001 ? 6 : 12;
  t0 = fg_now();
  for (int r = 0; r < reps; r++) fg_spmm(A, X, f, Y, f, f);
  return (fg_now() - t0) / reps;
}

/* ---- the SpMM samples -------------------------------------------------------------------------- */

static fg_status calibrate_spmm(MPI_Comm comm, int me, fg_calibration *out, FILE *log) {
  fg_status st = FG_OK;
  static const int64_t rows_list[] = {2048, 16384, 65536};
  static const int64_t cols_list[] = {2048, 32768, 262144, 1048576};
  static const int deg_list[] = {4, 24};
  static const int64_t f_list[] = {2, 8, 32, 128};
  double X[CAL_MAX_SAMPLES * 6], y[CAL_MAX_SAMPLES], wgt[CAL_MAX_SAMPLES], r2;
  int m = 0;
  fg_csr A;
  float *xd = NULL, *yd = NULL;
  memset(&A, 0, sizeof A);
  for (size_t ri = 0; ri < sizeof rows_list / sizeof rows_list[0]; ri++) {
    for (size_t ci = 0; ci < sizeof cols_list / sizeof cols_list[0]; ci++) {
      for (size_t di = 0; di < sizeof deg_list / sizeof deg_list[0]; di++) {
        const int64_t rows = rows_list[ri], cols = cols_list[ci];
        st = random_csr(rows, cols, deg_list[di], 17 + ri * 31 + ci * 7 + di, &A);
        FG_CHECK(fg_agree(comm, st));
        for (size_t fi = 0; fi < sizeof f_list / sizeof f_list[0]; fi++) {
          const int64_t f = f_list[fi];
          double t;
          if ((cols + rows) * f * 4 > CAL_MAX_DENSE_BYTES || m >= CAL_MAX_SAMPLES) continue;
          xd = dense(cols * f);
          yd = dense(rows * f);
          st = xd && yd ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
          FG_CHECK(fg_agree(comm, st));
          FG_CHECK_MPI(MPI_Barrier(comm));
          t = time_spmm(&A, xd, yd, f);
          FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm));
          X[m * 6 + 0] = (double)A.nnz * (double)f;
          X[m * 6 + 1] = (double)A.nnz *
                         fg_cost_spmm_lines(out->cache_bytes, (double)cols, (double)f);
          X[m * 6 + 2] = (double)A.nnz * fg_cost_spmm_lines(out->llc_bytes, (double)cols, (double)f);
          X[m * 6 + 3] = (double)A.nnz;
          X[m * 6 + 4] = (double)rows * (double)f;
          X[m * 6 + 5] = (double)cols * (double)f;
          y[m] = t;
          wgt[m] = 1.0 / (t * t); /* relative error */
          m++;
          fg_free_aligned(xd);
          fg_free_aligned(yd);
          xd = yd = NULL;
        }
        fg_csr_free(&A);
      }
    }
  }
  r2 = fg_nnls_fit(X, y, wgt, m, 6, out->spmm);
  if (me == 0 && log) {
    fprintf(log, "SpMM: %d shapes (every rank at once; the slowest rank's time), caches %.0f KB "
                 "and %.0f KB per rank\n", m, out->cache_bytes / 1024.0, out->llc_bytes / 1024.0);
    fprintf(log, "  %9s %9s %9s %5s %12s %12s\n", "rows", "cols", "nnz", "f", "measured s",
            "model s");
    for (int i = 0; i < m; i++) {
      double pred = 0.0;
      const double f = X[i * 6 + 0] / X[i * 6 + 3];
      for (int j = 0; j < 6; j++) pred += X[i * 6 + j] * out->spmm[j];
      fprintf(log, "  %9.0f %9.0f %9.0f %5.0f %12.6f %12.6f\n", X[i * 6 + 4] / f,
              X[i * 6 + 5] / f, X[i * 6 + 3], f, y[i], pred);
    }
    fprintf(log, "  fit: %.3g nnz f + %.3g nnz lines + %.3g nnz llc-lines + %.3g nnz + %.3g rows f"
                 " + %.3g cols f seconds (weighted R^2 %.3f)\n",
            out->spmm[0], out->spmm[1], out->spmm[2], out->spmm[3], out->spmm[4], out->spmm[5],
            r2);
  }
cleanup:
  fg_csr_free(&A);
  fg_free_aligned(xd);
  fg_free_aligned(yd);
  return st;
}

/* ---- GEMM and STREAM ------------------------------------------------------------------------------ */

/* One of training's products in bf16 as the model runs it (model.c's bf16_gemm): the fp32
 * activation operands rounded block by block inside oneDNN's or the convert path's product,
 * fp32 sums. */
static fg_status bf16_product(int ta, int64_t M, int64_t N, int64_t K, const float *a,
                              const float *b, float *c) {
  if (!ta) return fg_bf16_gemm_tall_f32(M, K, N, a, K, b, N, c, N, 0);
  return fg_bf16_gemm_wgrad_f32(K, M, N, a, M, b, N, c, N, 0);
}

static fg_status calibrate_dense(MPI_Comm comm, int me, fg_calibration *out, FILE *log) {
  fg_status st = FG_OK;
  /* (M, N, K, trans_a): the shapes of training's H W, dQ Wᵀ and Hᵀ dQ */
  static const int64_t shapes[][4] = {{32768, 16, 128, 0}, {32768, 128, 16, 0},
                                      {65536, 32, 32, 0},  {8192, 128, 128, 0},
                                      {128, 16, 32768, 1}, {64, 64, 65536, 1}};
  /* the elementwise passes' rows x cols */
  const int64_t rows = 65536, cols = 32;
  double flops = 0.0, secs[2] = {0.0, 0.0}, bw, t0, t[2];
  int64_t cnt, cor;
  float *a = NULL, *b = NULL, *c = NULL;
  int32_t *labels = NULL;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const int64_t M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
    const int ta = (int)shapes[i][3];
    double mean[2];
    a = dense(M * K);
    b = dense(K * N);
    c = dense(M * N);
    st = a && b && c ? FG_OK
             : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
    FG_CHECK(fg_agree(comm, st));
    FG_CHECK_MPI(MPI_Barrier(comm));
    fg_gemm(ta, 0, M, N, K, 1.0f, a, ta ? M : K, b, N, 0.0f, c, N);
    t0 = fg_now();
    for (int r = 0; r < 3; r++) fg_gemm(ta, 0, M, N, K, 1.0f, a, ta ? M : K, b, N, 0.0f, c, N);
    mean[0] = (fg_now() - t0) / 3;
    /* bf16, after an untimed call (oneDNN creates its kernel for the shape there) */
    st = bf16_product(ta, M, N, K, a, b, c);
    FG_CHECK(fg_agree(comm, st));
    FG_CHECK_MPI(MPI_Barrier(comm));
    t0 = fg_now();
    for (int r = 0; r < 3 && st == FG_OK; r++) st = bf16_product(ta, M, N, K, a, b, c);
    mean[1] = (fg_now() - t0) / 3;
    FG_CHECK(fg_agree(comm, st));
    FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, mean, 2, MPI_DOUBLE, MPI_MAX, comm));
    flops += 2.0 * (double)M * (double)N * (double)K;
    secs[0] += mean[0];
    secs[1] += mean[1];
    fg_free_aligned(a);
    fg_free_aligned(b);
    fg_free_aligned(c);
    a = b = c = NULL;
  }
  out->gemm_flops = secs[0] > 0 ? flops / secs[0] : 1e10;
  out->gemm_flops_bf16 = secs[1] > 0 ? flops / secs[1] : 1e10;
  /* elementwise passes the model counts per element: dropout (a hash per four) and the
   * softmax cross-entropy (an exp each) */
  labels = fg_malloc_array((size_t)rows, sizeof *labels);
  a = dense(rows * cols);
  b = dense(rows * cols);
  st = a && b && labels ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_agree(comm, st));
  for (int64_t i = 0; i < rows; i++) labels[i] = (int32_t)(i % cols);
  FG_CHECK_MPI(MPI_Barrier(comm));
  fg_dropout_forward(b, a, rows, cols, 0.5f, 1, 1, 0, NULL);
  t0 = fg_now();
  for (int r = 0; r < 3; r++) fg_dropout_forward(b, a, rows, cols, 0.5f, 1, (uint64_t)r, 0, NULL);
  t[0] = (fg_now() - t0) / 3 / (double)(rows * cols);
  t0 = fg_now();
  /* one loss pass writes dlogits too: two exps per element */
  for (int r = 0; r < 3; r++) fg_softmax_xent(a, rows, cols, labels, NULL, 1.0f, b, &cnt, &cor);
  t[1] = (fg_now() - t0) / 3 / (double)(rows * cols) / 2;
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, comm));
  out->dropout_elem = t[0];
  out->softmax_elem = t[1];
  FG_CHECK_MPI(MPI_Barrier(comm));
  bw = fg_bench_stream_triad((int64_t)4 << 20, 4);
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &bw, 1, MPI_DOUBLE, MPI_MIN, comm));
  FG_REQUIRE(bw > 0, FG_ERR_NOMEM, "calibration: out of memory for the STREAM triad");
  out->stream_bytes = bw;
  if (me == 0 && log)
    fprintf(log, "GEMM: %.2f Gflop/s per rank, %.2f in bf16 (%s path); STREAM triad: %.2f GB/s "
                 "per rank; dropout %.2f ns and softmax %.2f ns per element\n",
            out->gemm_flops / 1e9, out->gemm_flops_bf16 / 1e9,
            fg_bf16_path_name(fg_bf16_get_path()), out->stream_bytes / 1e9, out->dropout_elem * 1e9,
            out->softmax_elem * 1e9);
cleanup:
  fg_free_aligned(a);
  fg_free_aligned(b);
  fg_free_aligned(c);
  free(labels);
  return st;
}

/* ---- collectives --------------------------------------------------------------------------------- */

/* All-reduces of several sizes over groups of G ranks: rank `color` groups (MPI_UNDEFINED: sit
 * out); rank 0 (in a group) gets samples (steps, bytes term, seconds). */
static fg_status time_groups(MPI_Comm comm, int color, int key, int G, double *X, double *y,
                             double *w, int *m) {
  fg_status st = FG_OK;
  static const int64_t sizes[] = {8 << 10, 256 << 10, 4 << 20};
  MPI_Comm g = MPI_COMM_NULL;
  float *buf = NULL;
  int me;
  FG_CHECK_MPI(MPI_Comm_rank(comm, &me));
  FG_CHECK_MPI(MPI_Comm_split(comm, color, key, &g));
  buf = dense(sizes[2] / 4);
  st = buf ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_agree(comm, st));
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    double best = 1e30;
    FG_CHECK_MPI(MPI_Barrier(comm));
    if (g != MPI_COMM_NULL) {
      for (int r = 0; r < 6; r++) {
        double t0;
        FG_CHECK_MPI(MPI_Barrier(g));
        t0 = fg_now();
        FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, (int)(sizes[s] / 4), MPI_FLOAT, MPI_SUM, g));
        if (r > 0) best = FG_MIN(best, fg_now() - t0);
      }
      FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &best, 1, MPI_DOUBLE, MPI_MAX, g));
    }
    if (me == 0 && *m < CAL_MAX_SAMPLES) {
      X[*m * 2 + 0] = 2.0 * (G - 1);
      X[*m * 2 + 1] = 2.0 * (double)sizes[s] * (G - 1) / G;
      y[*m] = best;
      w[*m] = 1.0 / (best * best);
      (*m)++;
    }
  }
cleanup:
  if (g != MPI_COMM_NULL) MPI_Comm_free(&g);
  fg_free_aligned(buf);
  return st;
}

static fg_status calibrate_comm(MPI_Comm comm, int me, int P, int rpn, fg_calibration *out,
                                FILE *log) {
  fg_status st = FG_OK;
  double X[CAL_MAX_SAMPLES * 2], y[CAL_MAX_SAMPLES], w[CAL_MAX_SAMPLES], coef[2];
  int m = 0;
  const int node = rpn > 0 && rpn < P ? rpn : P; /* ranks of the first node */
  if (P == 1) {
    if (log)
      fprintf(log, "collectives: one rank, nothing to measure (built-in alpha and beta kept)\n");
    return FG_OK;
  }
  /* inside a node: groups of G consecutive ranks, G = 2, 4, ..., and the whole node */
  for (int G = 2; G <= node; G = G * 2 > node && G < node ? node : G * 2) {
    const int color = me / G < node / G && me < node ? me / G : MPI_UNDEFINED;
    FG_CHECK(time_groups(comm, color, me, G, X, y, w, &m));
    if (G == node) break;
  }
  fg_nnls_fit(X, y, w, m, 2, coef);
  if (coef[0] > 0 || coef[1] > 0) {
    out->alpha_intra = coef[0];
    out->beta_intra = coef[1];
  }
  if (me == 0 && log) {
    fprintf(log, "all-reduce inside a node (groups of 2..%d ranks):\n", node);
    for (int i = 0; i < m; i++)
      fprintf(log, "  G %3.0f  %9.0f bytes  measured %10.6f s  model %10.6f s\n",
              X[i * 2] / 2 + 1, X[i * 2 + 1] * (X[i * 2] / 2 + 1) / X[i * 2], y[i],
              X[i * 2] * out->alpha_intra + X[i * 2 + 1] * out->beta_intra);
    fprintf(log, "  alpha %.3g s per step, beta %.3g s per byte (%.2f GB/s)\n", out->alpha_intra,
            out->beta_intra, out->beta_intra > 0 ? 1e-9 / out->beta_intra : 0.0);
  }
  if (rpn > 0 && P > rpn) {
    /* across nodes: one group per local rank, of one rank per node, all at once */
    const int nodes = P / rpn;
    m = 0;
    FG_CHECK(time_groups(comm, me < nodes * rpn ? me % rpn : MPI_UNDEFINED, me, nodes, X, y, w,
                         &m));
    fg_nnls_fit(X, y, w, m, 2, coef);
    /* every link carried min(rpn, ...) groups at once: the model multiplies beta back */
    if (coef[0] > 0 || coef[1] > 0) {
      out->alpha_inter = coef[0];
      out->beta_inter = coef[1] / rpn;
    }
    if (me == 0 && log)
      fprintf(log, "all-reduce across %d nodes: alpha %.3g s, beta %.3g s per byte per link\n",
              nodes, out->alpha_inter, out->beta_inter);
  } else if (me == 0 && log) {
    fprintf(log, "across nodes: not measured (one node); built-in alpha_inter and beta_inter "
                 "kept\n");
  }
cleanup:
  return st;
}

fg_status fg_calibrate(MPI_Comm comm, int ranks_per_node, fg_calibration *out, FILE *log) {
  fg_status st = FG_OK;
  fg_calibration c = fg_calibration_default();
  int me = 0, P = 1;
  FG_CHECK_MPI(MPI_Comm_rank(comm, &me));
  FG_CHECK_MPI(MPI_Comm_size(comm, &P));
  FG_REQUIRE(ranks_per_node >= 0, FG_ERR_INVALID_ARG, "--ranks-per-node must be >= 0, got %d",
             ranks_per_node);
  if (me == 0 && log)
    fprintf(log, "calibrating on %d rank(s) x %d thread(s)\n", P, fg_max_threads());
  c.cache_bytes = cache_level_bytes(2, 1048576.0) * fg_max_threads();
  /* the last-level cache is shared by the ranks of a node */
  const int on_node = ranks_per_node > 0 ? FG_MIN(ranks_per_node, P) : P;
  c.llc_bytes = FG_MAX(c.cache_bytes, cache_level_bytes(3, 8.0 * 1048576.0) / on_node);
  FG_CHECK(calibrate_spmm(comm, me, &c, log));
  FG_CHECK(calibrate_dense(comm, me, &c, log));
  FG_CHECK(calibrate_comm(comm, me, P, ranks_per_node, &c, log));
  c.threads = fg_max_threads();
  c.ranks = P;
  c.ranks_per_node = ranks_per_node;
  /* everyone returns rank 0's fit */
  FG_CHECK_MPI(MPI_Bcast(&c, (int)sizeof c, MPI_BYTE, 0, comm));
  *out = c;
cleanup:
  return st;
}
