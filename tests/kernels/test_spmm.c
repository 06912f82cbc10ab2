/* test_spmm.c -- tuned SpMM against the reference (many widths, leading dimensions, val NULL
 * or not, empty rows, a near-dense row), accumulate mode, bitwise determinism across runs and
 * thread counts, every tile and tail path bit for bit against the reference, the row-chunked
 * SpMM bit for bit against the whole call, CSR transpose, and the SpMM backward (dX = A^T G)
 * against central differences in double. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"

static const int64_t kWidths[] = {1, 3, 16, 17, 64, 100, 128, 129};
#define NWIDTHS ((int)(sizeof kWidths / sizeof kWidths[0]))
#define PAD_SENTINEL 12345.0f

/* Y (nrows x f, leading dimension ldy) with the padding columns set to a sentinel. */
static float *make_y(int64_t nrows, int64_t ldy, int64_t f, float fill) {
  float *Y = kt_alloc_f(nrows * ldy);
  for (int64_t i = 0; i < nrows * ldy; i++) Y[i] = (i % ldy) < f ? fill : PAD_SENTINEL;
  return Y;
}

static int padding_intact(const float *Y, int64_t nrows, int64_t ldy, int64_t f) {
  for (int64_t r = 0; r < nrows; r++)
    for (int64_t j = f; j < ldy; j++)
      if (Y[r * ldy + j] != PAD_SENTINEL) return 0;
  return 1;
}

/* Largest relative difference over the f used columns of two (nrows x ld) arrays. */
static double diff_cols(const float *a, const float *b, int64_t nrows, int64_t ld, int64_t f) {
  double worst = 0.0;
  for (int64_t r = 0; r < nrows; r++) {
    const double d = fg_test_max_rel_diff(a + r * ld, b + r * ld, f);
    if (d > worst) worst = d;
  }
  return worst;
}

static void test_tuned_vs_ref(int with_val) {
  fg_csr A;
  kt_random_csr(&A, 300, 250, 6.0, 11 + (uint64_t)with_val, with_val);
  int64_t maxrow = 0, empty = 0;
  for (int64_t r = 0; r < A.nrows; r++) {
    const int64_t d = A.rowptr[r + 1] - A.rowptr[r];
    maxrow = d > maxrow ? d : maxrow;
    empty += d == 0;
  }
  EXPECT(maxrow > 150 && empty > 10); /* the generator gives what the test claims to cover */
  for (int w = 0; w < NWIDTHS; w++) {
    const int64_t f = kWidths[w], ldx = f + 3, ldy = f + 2;
    float *X = kt_alloc_f(A.ncols * ldx);
    fg_test_fill(X, A.ncols * ldx, 100 + (uint64_t)f, -1.0f, 1.0f);
    float *Yr = make_y(A.nrows, ldy, f, 7.0f), *Yt = make_y(A.nrows, ldy, f, 7.0f);
    fg_spmm_ref(&A, X, ldx, Yr, ldy, f);
    fg_spmm(&A, X, ldx, Yt, ldy, f);
    const double d = diff_cols(Yt, Yr, A.nrows, ldy, f);
    printf("  spmm  val=%d f=%-3lld max rel diff tuned vs ref %.3g\n", with_val, (long long)f, d);
    EXPECT_MSG(d <= 1e-5, "spmm f=%lld val=%d: max rel diff %.3g", (long long)f, with_val, d);
    EXPECT(padding_intact(Yt, A.nrows, ldy, f));

    /* accumulate: Y0 + A X */
    float *Ya = make_y(A.nrows, ldy, f, 0.0f);
    for (int64_t r = 0; r < A.nrows; r++)
      for (int64_t j = 0; j < f; j++) Ya[r * ldy + j] = (float)(r % 5) - 2.0f + 0.25f * (float)j;
    float *Ye = make_y(A.nrows, ldy, f, 0.0f);
    for (int64_t r = 0; r < A.nrows; r++)
      for (int64_t j = 0; j < f; j++) Ye[r * ldy + j] = Ya[r * ldy + j] + Yr[r * ldy + j];
    fg_spmm_acc(&A, X, ldx, Ya, ldy, f);
    const double da = diff_cols(Ya, Ye, A.nrows, ldy, f);
    printf("  spmm_acc val=%d f=%-3lld max rel diff vs Y0 + ref %.3g\n", with_val, (long long)f,
           da);
    EXPECT_MSG(da <= 1e-5, "spmm_acc f=%lld val=%d: max rel diff %.3g", (long long)f, with_val,
               da);
    EXPECT(padding_intact(Ya, A.nrows, ldy, f));

    /* both against an exact dense product in double */
    double *D = kt_csr_dense(&A), worst = 0.0;
    for (int64_t r = 0; r < A.nrows; r++) {
      for (int64_t j = 0; j < f; j++) {
        double s = 0.0;
        for (int64_t c = 0; c < A.ncols; c++) s += D[r * A.ncols + c] * (double)X[c * ldx + j];
        const double e = fabs(s - (double)Yt[r * ldy + j]) / (fabs(s) > 1.0 ? fabs(s) : 1.0);
        worst = e > worst ? e : worst;
      }
    }
    EXPECT_MSG(worst <= 1e-5, "spmm f=%lld: differs from a dense double product by %.3g",
               (long long)f, worst);
    free(D);
    free(X);
    free(Yr);
    free(Yt);
    free(Ya);
    free(Ye);
  }
  fg_csr_free(&A);
  EXPECT(A.rowptr == NULL && A.col == NULL && A.val == NULL && A.nrows == 0 && A.nnz == 0);
}

/* Same input twice gives bitwise the same output, and so do different thread counts (each row
 * belongs to one thread and is summed in nonzero order). */
static void test_determinism(void) {
  fg_csr A;
  kt_random_csr(&A, 2000, 1500, 9.0, 21, 1);
  const int64_t f = 129;
  float *X = kt_alloc_f(A.ncols * f);
  fg_test_fill(X, A.ncols * f, 5, -1.0f, 1.0f);
  float *Y1 = kt_alloc_f(A.nrows * f), *Y2 = kt_alloc_f(A.nrows * f);
  float *Yr = kt_alloc_f(A.nrows * f);
  const size_t bytes = (size_t)(A.nrows * f) * sizeof(float);
  fg_spmm_ref(&A, X, f, Yr, f, f);
  fg_spmm(&A, X, f, Y1, f, f);
  fg_spmm(&A, X, f, Y2, f, f);
  EXPECT_MSG(memcmp(Y1, Y2, bytes) == 0, "spmm: two runs differ");
  printf("  spmm 2000x1500 nnz=%lld f=129: max rel diff tuned vs ref %.3g (bitwise equal: %s)\n",
         (long long)A.nnz, fg_test_max_rel_diff(Y1, Yr, A.nrows * f),
         memcmp(Y1, Yr, bytes) == 0 ? "yes" : "no");
  EXPECT(fg_test_max_rel_diff(Y1, Yr, A.nrows * f) <= 1e-5);
  const int saved = kt_max_threads();
  const int counts[] = {1, 2, 3, 7};
  for (int i = 0; i < 4; i++) {
    kt_set_threads(counts[i]);
    memset(Y2, 0xff, bytes);
    fg_spmm(&A, X, f, Y2, f, f);
    EXPECT_MSG(memcmp(Y1, Y2, bytes) == 0, "spmm with %d threads differs", counts[i]);
  }
  kt_set_threads(saved);
  fg_csr_free(&A);
  free(X);
  free(Y1);
  free(Y2);
  free(Yr);
}

/* The tuned kernel's paths one by one against the reference, bit for bit (it sums each row's
 * products in nonzero order with a separate multiply and add, as the reference does): every
 * width up to two vectors and the edges of one and two 128-column tiles (full vectors, a masked
 * last vector, several tiles with a narrow last one), leading dimensions with padding, values
 * and all-ones, overwrite and accumulate, 1 to 7 threads (rows cut by nonzeros, prefetches
 * that run past a thread's last row). */
static void test_tiles_bitwise(void) {
  static const int64_t widths[] = {1,  2,  3,  5,   7,   8,   9,   12,  15,  16,  17,  24, 31,
                                   32, 33, 47, 48,  63,  64,  65,  100, 112, 127, 128, 129,
                                   130, 143, 144, 200, 255, 256, 257, 300};
  const int nw = (int)(sizeof widths / sizeof widths[0]);
  const int saved = kt_max_threads();
  int mismatches = 0, padding_bad = 0;
  for (int with_val = 0; with_val < 2; with_val++) {
    fg_csr A;
    kt_random_csr(&A, 257, 190, 11.0, 61 + (uint64_t)with_val, with_val);
    for (int w = 0; w < nw; w++) {
      const int64_t f = widths[w], ldx = f + f % 3, ldy = f + 1 + f % 2;
      float *X = kt_alloc_f(A.ncols * ldx);
      float *Yr = make_y(A.nrows, ldy, f, 0.0f), *Yt = make_y(A.nrows, ldy, f, 3.0f);
      float *Y0 = make_y(A.nrows, ldy, f, 0.0f), *Ya = make_y(A.nrows, ldy, f, 0.0f);
      fg_test_fill(X, A.ncols * ldx, 300 + (uint64_t)f, -2.0f, 2.0f);
      fg_test_fill(Y0, A.nrows * ldy, 400 + (uint64_t)f, -1.0f, 1.0f);
      for (int64_t r = 0; r < A.nrows; r++)
        for (int64_t j = f; j < ldy; j++) Y0[r * ldy + j] = PAD_SENTINEL;
      fg_spmm_ref(&A, X, ldx, Yr, ldy, f);
      for (int t = 1; t <= 7; t += 2) {
        kt_set_threads(t);
        memset(Yt, 0x7f, (size_t)(A.nrows * ldy) * sizeof *Yt);
        for (int64_t r = 0; r < A.nrows; r++)
          for (int64_t j = f; j < ldy; j++) Yt[r * ldy + j] = PAD_SENTINEL;
        memcpy(Ya, Y0, (size_t)(A.nrows * ldy) * sizeof *Ya);
        fg_spmm(&A, X, ldx, Yt, ldy, f);
        fg_spmm_acc(&A, X, ldx, Ya, ldy, f);
        for (int64_t r = 0; r < A.nrows; r++) {
          for (int64_t j = 0; j < f; j++) {
            const float want_acc = Yr[r * ldy + j] + Y0[r * ldy + j];
            if (memcmp(&Yt[r * ldy + j], &Yr[r * ldy + j], sizeof(float)) != 0 ||
                memcmp(&Ya[r * ldy + j], &want_acc, sizeof(float)) != 0) {
              if (mismatches++ < 5)
                fprintf(stderr, "  f=%lld val=%d threads=%d row %lld col %lld: %.9g vs %.9g\n",
                        (long long)f, with_val, t, (long long)r, (long long)j,
                        Yt[r * ldy + j], Yr[r * ldy + j]);
            }
          }
        }
        padding_bad += !padding_intact(Yt, A.nrows, ldy, f) || !padding_intact(Ya, A.nrows, ldy, f);
      }
      free(X);
      free(Yr);
      free(Yt);
      free(Y0);
      free(Ya);
    }
    fg_csr_free(&A);
  }
  kt_set_threads(saved);
  printf("  spmm tiles: %d widths x values/ones x 4 thread counts, bitwise mismatches %d\n", nw,
         mismatches);
  EXPECT_MSG(mismatches == 0, "tuned SpMM differs from the reference bit for bit (%d entries)",
             mismatches);
  EXPECT_MSG(padding_bad == 0, "tuned SpMM wrote outside the f used columns (%d cases)",
             padding_bad);
}

/* What the chunked SpMM's callback sees: how often it was called, and after how many calls it
 * asks to stop (0: never). */
typedef struct chunk_probe {
  int calls, stop_after;
} chunk_probe;

static int chunk_between(void *arg) {
  chunk_probe *p = arg;
  p->calls++;
  return p->stop_after > 0 && p->calls >= p->stop_after;
}

/* fg_spmm_chunked against fg_spmm / fg_spmm_acc bit for bit (padding included): chunks of one
 * row, of sizes that divide neither the rows nor the nonzeros (37 and 1000 cost units; the
 * near-full row 128 alone outweighs a 37-unit chunk), one chunk, a callback that stops the
 * chunking early,
 * no callback; widths on and off the tile edges; 1, 2 and 3 threads. Chunks of one cost unit
 * (4f bytes) are one row each, so the callback runs exactly nrows - 1 times. */
static void test_chunked(void) {
  static const int64_t widths[] = {1, 17, 64, 129};
  static const int64_t units[] = {1, 37, 1000, 1 << 30};
  const int saved = kt_max_threads();
  int mismatches = 0, bad_calls = 0, cases = 0;
  for (int with_val = 0; with_val < 2; with_val++) {
    fg_csr A;
    kt_random_csr(&A, 257, 190, 11.0, 71 + (uint64_t)with_val, with_val);
    for (int w = 0; w < 4; w++) {
      const int64_t f = widths[w], ldx = f + 1, ldy = f + 2;
      const size_t ybytes = (size_t)(A.nrows * ldy) * sizeof(float);
      float *X = kt_alloc_f(A.ncols * ldx);
      float *Y0 = make_y(A.nrows, ldy, f, 0.0f), *Yw = kt_alloc_f(A.nrows * ldy);
      float *Yc = kt_alloc_f(A.nrows * ldy);
      fg_test_fill(X, A.ncols * ldx, 500 + (uint64_t)f, -2.0f, 2.0f);
      fg_test_fill(Y0, A.nrows * ldy, 600 + (uint64_t)f, -1.0f, 1.0f);
      for (int64_t r = 0; r < A.nrows; r++)
        for (int64_t j = f; j < ldy; j++) Y0[r * ldy + j] = PAD_SENTINEL;
      for (int acc = 0; acc < 2; acc++) {
        memcpy(Yw, Y0, ybytes); /* the whole call, the reference here */
        if (acc)
          fg_spmm_acc(&A, X, ldx, Yw, ldy, f);
        else
          fg_spmm(&A, X, ldx, Yw, ldy, f);
        for (int t = 1; t <= 3; t++) {
          kt_set_threads(t);
          for (int u = 0; u < 4; u++) {
            for (int stop = 0; stop < 3; stop++) { /* never, after 3 calls, no callback */
              chunk_probe probe = {0, stop == 1 ? 3 : 0};
              const int64_t calls_want = stop == 2 ? 0
                                         : u == 0  ? (stop == 1 ? 3 : A.nrows - 1)
                                                   : -1; /* -1: not known here */
              memcpy(Yc, Y0, ybytes);
              fg_spmm_chunked(&A, X, ldx, Yc, ldy, f, acc, units[u] * 4 * f,
                              stop == 2 ? NULL : chunk_between, &probe);
              cases++;
              if (memcmp(Yc, Yw, ybytes) != 0 && mismatches++ < 5)
                fprintf(stderr, "  chunked f=%lld val=%d acc=%d threads=%d units=%lld stop=%d "
                        "differs from the whole call\n", (long long)f, with_val, acc, t,
                        (long long)units[u], stop);
              if ((calls_want >= 0 && probe.calls != calls_want) ||
                  (u == 3 && probe.calls != 0) || (stop == 2 && probe.calls != 0) ||
                  (u > 0 && u < 3 && stop == 0 && probe.calls < 1)) {
                if (bad_calls++ < 5)
                  fprintf(stderr, "  chunked f=%lld units=%lld stop=%d: %d callback calls\n",
                          (long long)f, (long long)units[u], stop, probe.calls);
              }
            }
          }
        }
      }
      free(X);
      free(Y0);
      free(Yw);
      free(Yc);
    }
    fg_csr_free(&A);
  }
  kt_set_threads(saved);
  printf("  spmm chunked: %d cases, bitwise mismatches %d, wrong callback counts %d\n", cases,
         mismatches, bad_calls);
  EXPECT_MSG(mismatches == 0, "chunked SpMM differs from the whole call (%d cases)", mismatches);
  EXPECT_MSG(bad_calls == 0, "chunked SpMM called back the wrong number of times (%d cases)",
             bad_calls);
}

static void test_degenerate(void) {
  /* f == 0 and nrows == 0 touch nothing */
  fg_csr A;
  kt_random_csr(&A, 20, 10, 3.0, 3, 1);
  float X[10 * 4], Y[20 * 4];
  for (int i = 0; i < 40; i++) X[i] = 1.0f;
  for (int i = 0; i < 80; i++) Y[i] = -3.0f;
  fg_spmm(&A, X, 4, Y, 4, 0);
  fg_spmm_acc(&A, X, 4, Y, 4, 0);
  fg_spmm_ref(&A, X, 4, Y, 4, 0);
  int untouched = 1;
  for (int i = 0; i < 80; i++) untouched &= Y[i] == -3.0f;
  EXPECT(untouched);
  int64_t rp0 = 0;
  fg_csr E = {.nrows = 0, .ncols = 10, .nnz = 0, .rowptr = &rp0, .col = NULL, .val = NULL};
  fg_spmm(&E, X, 4, Y, 4, 4);
  fg_spmm_acc(&E, X, 4, Y, 4, 4);
  for (int i = 0; i < 80; i++) untouched &= Y[i] == -3.0f;
  EXPECT(untouched);
  /* an all-empty matrix gives zeros (and += leaves Y alone) */
  int64_t rpz[4] = {0, 0, 0, 0};
  fg_csr Z = {.nrows = 3, .ncols = 10, .nnz = 0, .rowptr = rpz, .col = NULL, .val = NULL};
  fg_spmm(&Z, X, 4, Y, 4, 4);
  int zeros = 1;
  for (int i = 0; i < 12; i++) zeros &= Y[i] == 0.0f;
  EXPECT(zeros && Y[12] == -3.0f);
  fg_csr_free(&A);
}

static void test_transpose(void) {
  for (int with_val = 0; with_val < 2; with_val++) {
    fg_csr A, T = {0}, TT = {0};
    kt_random_csr(&A, 60, 45, 5.0, 31, with_val);
    EXPECT_OK(fg_csr_transpose(&A, &T));
    EXPECT(T.nrows == A.ncols && T.ncols == A.nrows && T.nnz == A.nnz);
    EXPECT((T.val != NULL) == (with_val != 0));
    double *DA = kt_csr_dense(&A), *DT = kt_csr_dense(&T);
    int same = 1, sorted = 1;
    for (int64_t r = 0; r < A.nrows; r++)
      for (int64_t c = 0; c < A.ncols; c++) same &= DA[r * A.ncols + c] == DT[c * A.nrows + r];
    for (int64_t r = 0; r < T.nrows; r++)
      for (int64_t k = T.rowptr[r] + 1; k < T.rowptr[r + 1]; k++) sorted &= T.col[k - 1] < T.col[k];
    EXPECT(same);
    EXPECT(sorted);
    EXPECT_OK(fg_csr_transpose(&T, &TT));
    EXPECT(TT.nnz == A.nnz &&
           memcmp(TT.rowptr, A.rowptr, (size_t)(A.nrows + 1) * sizeof *A.rowptr) == 0 &&
           memcmp(TT.col, A.col, (size_t)A.nnz * sizeof *A.col) == 0);
    if (with_val) EXPECT(memcmp(TT.val, A.val, (size_t)A.nnz * sizeof *A.val) == 0);
    free(DA);
    free(DT);
    fg_csr_free(&A);
    fg_csr_free(&T);
    fg_csr_free(&TT);
  }
  /* a column id out of range is an error with a message, not a crash */
  int64_t rp[3] = {0, 2, 3};
  int32_t col[3] = {0, 4, 9};
  fg_csr bad = {.nrows = 2, .ncols = 5, .nnz = 3, .rowptr = rp, .col = col, .val = NULL};
  fg_csr out = {0};
  EXPECT(fg_csr_transpose(&bad, &out) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("column 9 out of range"));
  EXPECT(out.rowptr == NULL);
  int64_t rp2[3] = {0, 3, 2};
  bad.rowptr = rp2;
  bad.nnz = 2;
  EXPECT(fg_csr_transpose(&bad, &out) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("rowptr decreases"));
  fg_csr_free(NULL); /* NULL-safe */
}

/* L(X) = sum(G .* (A X)), evaluated in double. */
static double spmm_objective(const double *DA, int64_t nrows, int64_t ncols, const double *X,
                             const float *G, int64_t f) {
  double L = 0.0;
  for (int64_t r = 0; r < nrows; r++)
    for (int64_t j = 0; j < f; j++) {
      double y = 0.0;
      for (int64_t c = 0; c < ncols; c++) y += DA[r * ncols + c] * X[c * f + j];
      L += (double)G[r * f + j] * y;
    }
  return L;
}

static void test_backward(int with_val) {
  fg_csr A, AT = {0};
  kt_random_csr(&A, 13, 9, 3.0, 41 + (uint64_t)with_val, with_val); /* not square */
  const int64_t f = 5;
  float *Xf = kt_alloc_f(A.ncols * f), *G = kt_alloc_f(A.nrows * f);
  float *dX = kt_alloc_f(A.ncols * f);
  fg_test_fill(Xf, A.ncols * f, 42, -1.0f, 1.0f);
  fg_test_fill(G, A.nrows * f, 43, -1.0f, 1.0f);
  EXPECT_OK(fg_csr_transpose(&A, &AT));
  fg_spmm(&AT, G, f, dX, f, f); /* the backward pass: dX = A^T G */
  double *DA = kt_csr_dense(&A), *X = kt_alloc_d(A.ncols * f), *num = kt_alloc_d(A.ncols * f);
  for (int64_t i = 0; i < A.ncols * f; i++) X[i] = (double)Xf[i];
  const double h = 1e-3;
  for (int64_t i = 0; i < A.ncols * f; i++) {
    const double x0 = X[i];
    X[i] = x0 + h;
    const double lp = spmm_objective(DA, A.nrows, A.ncols, X, G, f);
    X[i] = x0 - h;
    const double lm = spmm_objective(DA, A.nrows, A.ncols, X, G, f);
    X[i] = x0;
    num[i] = (lp - lm) / (2.0 * h);
  }
  kt_expect_grad(with_val ? "spmm dX = A^T G (values)" : "spmm dX = A^T G (ones)", dX, num,
                 A.ncols * f);
  free(DA);
  free(X);
  free(num);
  free(Xf);
  free(G);
  free(dX);
  fg_csr_free(&A);
  fg_csr_free(&AT);
}

int main(void) {
  test_tuned_vs_ref(0);
  test_tuned_vs_ref(1);
  test_determinism();
  test_tiles_bitwise();
  test_chunked();
  test_degenerate();
  test_transpose();
  test_backward(0);
  test_backward(1);
  return fg_test_finish("kernels_spmm");
}
