/* test_dense.c -- GEMM against the reference for each library (OpenBLAS, oneDNN where built
 * in, and the auto rule) at 1 and 2 threads, all transpose combinations, odd and tiny sizes,
 * leading dimensions, beta 0 and 1 and empty dimensions; repeatability (same bits twice) of
 * each library; the library switch; the GEMM backward (dA = G B^T, dB = A^T G) against
 * central differences in double; Glorot init, row normalization and the STREAM triad. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"

/* The libraries this build can force, and auto (the rule's mix). */
static int gemm_libs(fg_gemm_lib *libs) {
  int n = 0;
  libs[n++] = FG_GEMM_OPENBLAS;
  if (fg_gemm_onednn_available()) libs[n++] = FG_GEMM_ONEDNN;
  libs[n++] = FG_GEMM_AUTO;
  return n;
}

static void test_gemm_vs_ref_lib(void) {
  /* m, n, k: odd sizes, the tiny ones of test graphs and 3-7 classes, and long reductions
   * (k in the thousands: the weight gradient over n rows, which a library may split across
   * threads) */
  const int64_t sizes[][3] = {{37, 23, 19}, {1, 1, 1},   {5, 64, 3},    {64, 7, 129},
                              {130, 33, 65}, {3, 7, 200}, {200, 3, 7},   {16, 16, 16},
                              {7, 5, 3000},  {301, 7, 33}, {33, 130, 2100}};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  const float betas[] = {0.0f, 1.0f, 0.5f};
  for (int s = 0; s < nsizes; s++) {
    const int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
    for (int ta = 0; ta < 2; ta++) {
      for (int tb = 0; tb < 2; tb++) {
        /* stored shapes: A is (m x k) or (k x m) when transposed; B (k x n) or (n x k) */
        const int64_t arows = ta ? k : m, acols = ta ? m : k;
        const int64_t brows = tb ? n : k, bcols = tb ? k : n;
        const int64_t lda = acols + 2, ldb = bcols + 1, ldc = n + 3;
        float *A = kt_alloc_f(arows * lda), *B = kt_alloc_f(brows * ldb);
        float *C0 = kt_alloc_f(m * ldc), *Cr = kt_alloc_f(m * ldc), *Ct = kt_alloc_f(m * ldc);
        fg_test_fill(A, arows * lda, 1000 + (uint64_t)s, -1.0f, 1.0f);
        fg_test_fill(B, brows * ldb, 2000 + (uint64_t)s, -1.0f, 1.0f);
        fg_test_fill(C0, m * ldc, 3000 + (uint64_t)s, -1.0f, 1.0f);
        for (int bi = 0; bi < 3; bi++) {
          const float beta = betas[bi], alpha = bi == 2 ? -0.75f : 1.0f;
          memcpy(Cr, C0, (size_t)(m * ldc) * sizeof *Cr);
          memcpy(Ct, C0, (size_t)(m * ldc) * sizeof *Ct);
          if (beta == 0.0f) /* beta == 0 must ignore C, NaN included */
            for (int64_t i = 0; i < m; i++) Ct[i * ldc] = NAN;
          fg_gemm_ref(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, Cr, ldc);
          fg_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, Ct, ldc);
          double worst = 0.0;
          int pad_ok = 1;
          for (int64_t i = 0; i < m; i++) {
            const double d = fg_test_max_rel_diff(Ct + i * ldc, Cr + i * ldc, n);
            worst = d > worst ? d : worst;
            for (int64_t j = n; j < ldc; j++) pad_ok &= Ct[i * ldc + j] == C0[i * ldc + j];
          }
          if (bi == 2)
            printf("  gemm %-8s %c%c m=%-3lld n=%-3lld k=%-4lld alpha -0.75 beta 0.5 max rel diff %.3g\n",
                   fg_gemm_lib_name(fg_gemm_get_lib()), ta ? 'T' : 'N', tb ? 'T' : 'N',
                   (long long)m, (long long)n, (long long)k, worst);
          /* a k-term float sum against the double reference, relative to max(|C|, 1): the
           * error grows with k while |C| of random-sign terms grows as sqrt(k), so the bound
           * grows with k: 1e-5 up to k = 333, 3e-8 k above (observed: up to 2.4e-5 at
           * k = 2100 with oneDNN, which blocks the sum differently from OpenBLAS) */
          const double tol = k * 3e-8 > 1e-5 ? (double)k * 3e-8 : 1e-5;
          EXPECT_MSG(worst <= tol,
                     "gemm %s ta=%d tb=%d %lldx%lldx%lld beta=%g: max rel diff %.3g",
                     fg_gemm_lib_name(fg_gemm_get_lib()), ta, tb, (long long)m, (long long)n,
                     (long long)k, beta, worst);
          EXPECT(pad_ok);
        }
        free(A);
        free(B);
        free(C0);
        free(Cr);
        free(Ct);
      }
    }
  }
}

static void test_gemm_vs_ref(void) {
  fg_gemm_lib libs[3];
  const int nl = gemm_libs(libs);
  const int threads[] = {1, 2};
  for (int t = 0; t < 2; t++) {
    kt_set_threads(threads[t]);
    for (int l = 0; l < nl; l++) {
      printf(" %d thread(s), library %s\n", threads[t], fg_gemm_lib_name(libs[l]));
      EXPECT(fg_gemm_set_lib(libs[l]) == FG_OK && fg_gemm_get_lib() == libs[l]);
      test_gemm_vs_ref_lib();
    }
  }
  kt_set_threads(kt_max_threads());
  EXPECT(fg_gemm_set_lib(FG_GEMM_AUTO) == FG_OK);
}

/* The same product twice gives the same bits, per library, at 1 and 2 threads (the model's
 * runs are bitwise repeatable at a fixed thread count); across thread counts a library may
 * split a reduction differently, so that is printed, not required. Shapes: the three
 * products of a layer of width 128 -> 7 over 5000 rows. */
static void test_gemm_repeatable(void) {
  const int64_t rows = 5000, wi = 128, wo = 7;
  const int64_t shapes[3][5] = {
      {0, 0, rows, wo, wi}, /* H W */
      {1, 0, wi, wo, rows}, /* H^T G: the weight gradient, a 5000-term reduction */
      {0, 1, rows, wi, wo}, /* G W^T */
  };
  float *A = kt_alloc_f(rows * wi), *B = kt_alloc_f(rows * wi);
  float *C1 = kt_alloc_f(rows * wi), *C2 = kt_alloc_f(rows * wi), *Cs = kt_alloc_f(rows * wi);
  fg_test_fill(A, rows * wi, 71, -1.0f, 1.0f);
  fg_test_fill(B, rows * wi, 72, -1.0f, 1.0f);
  fg_gemm_lib libs[3];
  const int nl = gemm_libs(libs);
  for (int l = 0; l < nl; l++) {
    EXPECT(fg_gemm_set_lib(libs[l]) == FG_OK);
    for (int s = 0; s < 3; s++) {
      const int ta = (int)shapes[s][0], tb = (int)shapes[s][1];
      const int64_t m = shapes[s][2], n = shapes[s][3], k = shapes[s][4];
      const int64_t lda = ta ? m : k, ldb = tb ? k : n;
      int same_threads = 1;
      for (int t = 1; t <= 2; t++) {
        kt_set_threads(t);
        fg_gemm(ta, tb, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C1, n);
        fg_gemm(ta, tb, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C2, n);
        EXPECT_MSG(memcmp(C1, C2, (size_t)(m * n) * sizeof *C1) == 0,
                   "gemm %s %c%c %lldx%lldx%lld at %d thread(s): two calls differ",
                   fg_gemm_lib_name(libs[l]), ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m,
                   (long long)n, (long long)k, t);
        if (t == 1)
          memcpy(Cs, C1, (size_t)(m * n) * sizeof *C1);
        else
          same_threads = memcmp(Cs, C1, (size_t)(m * n) * sizeof *C1) == 0;
      }
      printf("  gemm %-8s %c%c %lldx%lldx%lld: repeatable; 1 and 2 threads %s\n",
             fg_gemm_lib_name(libs[l]), ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m,
             (long long)n, (long long)k, same_threads ? "the same bits" : "differ");
    }
  }
  kt_set_threads(kt_max_threads());
  EXPECT(fg_gemm_set_lib(FG_GEMM_AUTO) == FG_OK);
  free(A);
  free(B);
  free(C1);
  free(C2);
  free(Cs);
}

/* The switch: names, errors, and the public spelling. */
static void test_gemm_switch(void) {
  fg_gemm_lib lib = FG_GEMM_AUTO;
  EXPECT(fg_gemm_lib_parse("openblas", &lib) == FG_OK && lib == FG_GEMM_OPENBLAS);
  EXPECT(fg_gemm_lib_parse("onednn", &lib) == FG_OK && lib == FG_GEMM_ONEDNN);
  EXPECT(fg_gemm_lib_parse("auto", &lib) == FG_OK && lib == FG_GEMM_AUTO);
  EXPECT(fg_gemm_lib_parse("mkl", &lib) == FG_ERR_INVALID_ARG);
  EXPECT(strstr(fg_last_error(), "unknown GEMM library 'mkl' (want auto, openblas or onednn)"));
  EXPECT(fg_set_gemm_lib("OpenBLAS") == FG_ERR_INVALID_ARG);
  EXPECT(fg_set_gemm_lib("openblas") == FG_OK && strcmp(fg_gemm_lib_current(), "openblas") == 0);
  EXPECT(strncmp(fg_gemm_info(), "openblas (OpenBLAS ", 19) == 0);
  if (fg_gemm_onednn_available()) {
    EXPECT(fg_set_gemm_lib("onednn") == FG_OK && strcmp(fg_gemm_lib_current(), "onednn") == 0);
    EXPECT(strncmp(fg_gemm_info(), "onednn (oneDNN ", 15) == 0);
  } else {
    EXPECT(fg_set_gemm_lib("onednn") == FG_ERR_UNSUPPORTED);
    EXPECT(strstr(fg_last_error(), "this build has no oneDNN"));
    /* without oneDNN the rule sends nothing there */
    EXPECT(!fg_gemm_rule_onednn(0, 0, 100000, 128, 128));
  }
  if (fg_gemm_onednn_available()) { /* the rule's edges (dense.c) */
    EXPECT(fg_gemm_rule_onednn(0, 0, 1024, 3, 3) && fg_gemm_rule_onednn(1, 0, 3, 3, 1024));
    EXPECT(fg_gemm_rule_onednn(0, 1, 3, 1024, 3));
    EXPECT(!fg_gemm_rule_onednn(0, 0, 1023, 16, 16)); /* 261,888 m n k */
    EXPECT(!fg_gemm_rule_onednn(0, 0, 16, 128, 128)); /* 262,144: not more */
    EXPECT(fg_gemm_rule_onednn(0, 1, 17, 128, 128) && fg_gemm_rule_onednn(1, 1, 128, 17, 128));
    EXPECT(!fg_gemm_rule_onednn(0, 0, 200, 3, 3) && !fg_gemm_rule_onednn(0, 0, 0, 5000, 5000));
  }
  EXPECT(fg_set_gemm_lib("auto") == FG_OK && strcmp(fg_gemm_lib_current(), "auto") == 0);
  printf("  fp32 GEMM: %s\n", fg_gemm_info());
}

static void test_gemm_empty(void) {
  float C[6] = {1, 2, 3, 4, 5, 6}, Cr[6] = {1, 2, 3, 4, 5, 6};
  const float A[1] = {9}, B[1] = {9};
  /* k == 0: C = beta C */
  fg_gemm(0, 0, 2, 3, 0, 1.0f, A, 1, B, 3, 0.5f, C, 3);
  fg_gemm_ref(0, 0, 2, 3, 0, 1.0f, A, 1, B, 3, 0.5f, Cr, 3);
  EXPECT(C[0] == 0.5f && C[5] == 3.0f && memcmp(C, Cr, sizeof C) == 0);
  C[2] = NAN;
  fg_gemm(1, 1, 2, 3, 0, 1.0f, A, 2, B, 1, 0.0f, C, 3);
  int zero = 1;
  for (int i = 0; i < 6; i++) zero &= C[i] == 0.0f;
  EXPECT(zero);
  /* m == 0 or n == 0: nothing touched */
  for (int i = 0; i < 6; i++) C[i] = 7.0f;
  fg_gemm(0, 0, 0, 3, 4, 1.0f, A, 4, B, 3, 0.0f, C, 3);
  fg_gemm(0, 0, 2, 0, 4, 1.0f, A, 4, B, 1, 0.0f, C, 1);
  int same = 1;
  for (int i = 0; i < 6; i++) same &= C[i] == 7.0f;
  EXPECT(same);
}

/* L = sum(G .* (A B)) in double; A (m x k), B (k x n), G (m x n). */
static double gemm_objective(const double *A, const double *B, const float *G, int64_t m,
                             int64_t n, int64_t k) {
  double L = 0.0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double c = 0.0;
      for (int64_t p = 0; p < k; p++) c += A[i * k + p] * B[p * n + j];
      L += (double)G[i * n + j] * c;
    }
  return L;
}

static void test_gemm_backward(void) {
  const int64_t m = 7, n = 5, k = 4;
  float *Af = kt_alloc_f(m * k), *Bf = kt_alloc_f(k * n), *G = kt_alloc_f(m * n);
  float *dA = kt_alloc_f(m * k), *dB = kt_alloc_f(k * n);
  fg_test_fill(Af, m * k, 51, -1.0f, 1.0f);
  fg_test_fill(Bf, k * n, 52, -1.0f, 1.0f);
  fg_test_fill(G, m * n, 53, -1.0f, 1.0f);
  /* the backward of C = A B as the model computes it */
  fg_gemm(0, 1, m, k, n, 1.0f, G, n, Bf, n, 0.0f, dA, k); // dA = G B^T  (m x k)
  fg_gemm(1, 0, k, n, m, 1.0f, Af, k, G, n, 0.0f, dB, n); // dB = A^T G  (k x n)
  double *A = kt_alloc_d(m * k), *B = kt_alloc_d(k * n);
  double *numA = kt_alloc_d(m * k), *numB = kt_alloc_d(k * n);
  for (int64_t i = 0; i < m * k; i++) A[i] = (double)Af[i];
  for (int64_t i = 0; i < k * n; i++) B[i] = (double)Bf[i];
  const double h = 1e-3;
  for (int64_t i = 0; i < m * k; i++) {
    const double x0 = A[i];
    A[i] = x0 + h;
    const double lp = gemm_objective(A, B, G, m, n, k);
    A[i] = x0 - h;
    const double lm = gemm_objective(A, B, G, m, n, k);
    A[i] = x0;
    numA[i] = (lp - lm) / (2.0 * h);
  }
  for (int64_t i = 0; i < k * n; i++) {
    const double x0 = B[i];
    B[i] = x0 + h;
    const double lp = gemm_objective(A, B, G, m, n, k);
    B[i] = x0 - h;
    const double lm = gemm_objective(A, B, G, m, n, k);
    B[i] = x0;
    numB[i] = (lp - lm) / (2.0 * h);
  }
  kt_expect_grad("gemm dA = G B^T", dA, numA, m * k);
  kt_expect_grad("gemm dB = A^T G", dB, numB, k * n);
  free(Af);
  free(Bf);
  free(G);
  free(dA);
  free(dB);
  free(A);
  free(B);
  free(numA);
  free(numB);
}

static void test_glorot(void) {
  const int64_t fi = 50, fo = 30;
  float *W = kt_alloc_f(fi * fo), *W2 = kt_alloc_f(fi * fo), *W3 = kt_alloc_f(fi * fo);
  fg_glorot_init(W, fi, fo, 7, 0);
  fg_glorot_init(W2, fi, fo, 7, 0);
  fg_glorot_init(W3, fi, fo, 7, 1);
  const double a = sqrt(6.0 / (double)(fi + fo));
  double mean = 0.0, sq = 0.0, lo = 0.0, hi = 0.0;
  for (int64_t i = 0; i < fi * fo; i++) {
    mean += W[i];
    sq += (double)W[i] * W[i];
    lo = W[i] < lo ? W[i] : lo;
    hi = W[i] > hi ? W[i] : hi;
  }
  mean /= (double)(fi * fo);
  sq /= (double)(fi * fo);
  EXPECT(lo >= -a && hi <= a && lo < -0.9 * a && hi > 0.9 * a);
  EXPECT(fabs(mean) < 0.05 * a);
  EXPECT(fabs(sq - a * a / 3.0) < 0.1 * a * a / 3.0); /* variance of U(-a, a) */
  EXPECT(memcmp(W, W2, (size_t)(fi * fo) * sizeof *W) == 0);
  EXPECT(memcmp(W, W3, (size_t)(fi * fo) * sizeof *W) != 0);
  /* element (i, j) depends on (i, j) only, not on the matrix shape */
  float *Ws = kt_alloc_f(10 * fo);
  fg_glorot_init(Ws, 10, fo, 7, 0);
  const double as = sqrt(6.0 / (double)(10 + fo));
  EXPECT(fabs((double)Ws[3 * fo + 4] / as - (double)W[3 * fo + 4] / a) < 1e-6);
  free(W);
  free(W2);
  free(W3);
  free(Ws);
}

static void test_row_normalize(void) {
  float x[3 * 4] = {1, 1, 2, 4, 0, 0, 0, 0, 3, 0, 1, 0};
  fg_row_normalize(x, 3, 4);
  EXPECT(x[0] == 0.125f && x[2] == 0.25f && x[3] == 0.5f);
  EXPECT(x[4] == 0.0f && x[7] == 0.0f);
  EXPECT(x[8] == 0.75f && x[10] == 0.25f && x[11] == 0.0f);
  const int64_t rows = 500, cols = 100;
  float *y = kt_alloc_f(rows * cols);
  fg_test_fill(y, rows * cols, 9, 0.0f, 1.0f);
  fg_row_normalize(y, rows, cols);
  double worst = 0.0;
  for (int64_t r = 0; r < rows; r++) {
    double s = 0.0;
    for (int64_t c = 0; c < cols; c++) s += y[r * cols + c];
    worst = fabs(s - 1.0) > worst ? fabs(s - 1.0) : worst;
  }
  EXPECT_MSG(worst < 1e-5, "row sums off by %.3g", worst);
  free(y);
}

static void test_triad(void) {
  const int64_t n = 100003;
  float *a = kt_alloc_f(n), *b = kt_alloc_f(n), *c = kt_alloc_f(n);
  for (int64_t i = 0; i < n; i++) {
    b[i] = (float)i;
    c[i] = (float)(i % 17);
  }
  const double bytes = fg_stream_triad(a, b, c, 0.5f, n);
  EXPECT(bytes == 12.0 * (double)n);
  int ok = 1;
  for (int64_t i = 0; i < n; i++) ok &= a[i] == b[i] + 0.5f * c[i];
  EXPECT(ok);
  free(a);
  free(b);
  free(c);
}

int main(void) {
  test_gemm_switch();
  test_gemm_vs_ref();
  test_gemm_repeatable();
  test_gemm_empty();
  test_gemm_backward();
  test_glorot();
  test_row_normalize();
  test_triad();
  return fg_test_finish("kernels_dense");
}
