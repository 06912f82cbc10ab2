/* test_bf16.c -- the bf16 kernels (src/kernels/bf16.c):
 *  - fp32 -> bf16 gives the stated bits on chosen values (ties both ways, carries into the
 *    exponent, overflow to inf, inf, quiet and signalling NaNs, denormals, -0) on both paths,
 *    agrees with an independent nearest-even rounding on random normal values, and the two
 *    paths agree bit for bit on random bit patterns; bf16 -> fp32 is exact on all 65536 values;
 *  - each GEMM shape, on each path, at 1 and 2 threads, odd sizes, padded leading dimensions,
 *    with and without accumulation, is within the fp32 accumulation bound of a double
 *    reference on the same bf16-rounded inputs, and native and convert within twice that of
 *    each other; each path repeats itself bit for bit;
 *  - the SpMM on bf16 rows equals its reference and fg_spmm on the widened rows bit for bit, and
 *    its bf16-out form is those sums rounded, bit for bit; the row-chunked form equals the whole
 *    call bit for bit and calls back as often as its chunks say.
 *
 * The GEMM tolerance. Every product of two bf16 values is exact in fp32 (8 + 8 significant
 * bits), so the only error is the fp32 summation of the k products plus, when accumulating,
 * the old C: t = k + 1 terms in some order. Any order of recursive or blocked summation of t
 * terms errs by at most (t - 1) u / (1 - (t - 1) u) * S with u = 2^-24 and S the sum of the
 * terms' magnitudes (Higham, Accuracy and Stability, 4.2); the reference (a double sum rounded
 * once) adds u |C| <= u S. So |C - C_ref| <= (k + 2) 2^-24 S, checked per entry with S computed
 * here. A rounding broken to truncation errs by up to 2^-8 relative on each weight, far above
 * this (the test was run against such a break and fails).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"
#include "kernels/fg_bf16.h"

static float f_of(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}
static uint32_t u_of(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

/* the paths this machine can run: convert always, native where available */
static int npaths(void) { return fg_bf16_native_available() ? 2 : 1; }
static fg_bf16_path path_at(int i) { return i == 0 ? FG_BF16_CONVERT : FG_BF16_NATIVE; }

/* ---- conversions ------------------------------------------------------------------------ */

static void test_chosen_values(void) {
  static const struct {
    uint32_t in;
    uint16_t out;
    const char *what;
  } cases[] = {
      {0x3f800000u, 0x3f80, "1.0"},
      {0x3f808000u, 0x3f80, "tie, even below: stays"},
      {0x3f818000u, 0x3f82, "tie, odd below: up to even"},
      {0x3f808001u, 0x3f81, "just above the tie: up"},
      {0x3f807fffu, 0x3f80, "just below the tie: down"},
      {0xbf818000u, 0xbf82, "negative tie: magnitude up to even"},
      {0x3f80ffffu, 0x3f81, "up"},
      {0x3fff8000u, 0x4000, "tie with a carry into the exponent"},
      {0x7f7f7fffu, 0x7f7f, "below the largest bf16's tie"},
      {0x7f7f8000u, 0x7f80, "the largest bf16's tie: overflows to inf"},
      {0x7f7fffffu, 0x7f80, "largest fp32: inf"},
      {0xff7fffffu, 0xff80, "most negative fp32: -inf"},
      {0x7f800000u, 0x7f80, "inf"},
      {0xff800000u, 0xff80, "-inf"},
      {0x7fc00000u, 0x7fc0, "quiet NaN"},
      {0xffc00000u, 0xffc0, "negative quiet NaN"},
      {0x7f800001u, 0x7fc0, "signalling NaN, payload in the low bits only: still a NaN"},
      {0xff800001u, 0xffc0, "negative signalling NaN"},
      {0x7fa00000u, 0x7fe0, "signalling NaN with a high payload: kept, made quiet"},
      {0x7fc0ffffu, 0x7fc0, "quiet NaN: low payload cut, not rounded"},
      {0x00000000u, 0x0000, "+0"},
      {0x80000000u, 0x8000, "-0"},
      {0x00000001u, 0x0000, "smallest denormal: +0"},
      {0x807fffffu, 0x8000, "largest negative denormal: -0 (not rounded up to a normal)"},
      {0x00400000u, 0x0000, "denormal: +0"},
      {0x00800000u, 0x0080, "smallest normal"},
      {0x00808000u, 0x0080, "tie at the smallest normal"},
      {0x00818000u, 0x0082, "tie up at the smallest normal"},
  };
  const int n = (int)(sizeof cases / sizeof cases[0]);
  float in[sizeof cases / sizeof cases[0]];
  fg_bf16 out[sizeof cases / sizeof cases[0]];
  for (int i = 0; i < n; i++) {
    in[i] = f_of(cases[i].in);
    EXPECT_MSG(fg_bf16_from_float(in[i]) == cases[i].out, "%s: %08x -> %04x, want %04x",
               cases[i].what, cases[i].in, fg_bf16_from_float(in[i]), cases[i].out);
  }
  for (int p = 0; p < npaths(); p++) {
    EXPECT_OK(fg_bf16_set_path(path_at(p)));
    memset(out, 0xa5, sizeof out);
    fg_bf16_from_f32(out, in, n);
    for (int i = 0; i < n; i++)
      EXPECT_MSG(out[i] == cases[i].out, "%s path, %s: %08x -> %04x, want %04x",
                 fg_bf16_path_name(path_at(p)), cases[i].what, cases[i].in, out[i],
                 cases[i].out);
  }
}

/* nearest bf16 to a normal finite x by exact comparison in double, ties to the even one */
static uint16_t nearest_even(float x) {
  const uint32_t u = u_of(x);
  const uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
  const double dl = fabs((double)x - (double)fg_bf16_to_float(lo));
  /* hi past the largest bf16 stands for 2^128 (inf is what rounding there gives) */
  const double vh = (hi & 0x7fff) == 0x7f80 ? copysign(ldexp(1.0, 128), (double)x)
                                            : (double)fg_bf16_to_float(hi);
  const double dh = fabs((double)x - vh);
  if (dl < dh) return lo;
  if (dh < dl) return hi;
  return (lo & 1) ? hi : lo;
}

static void test_random_values(void) {
  enum { N = 200003 }; /* odd: the vector tail runs */
  float *x = kt_alloc_f(N);
  fg_bf16 *a = malloc(sizeof(fg_bf16) * N), *b = malloc(sizeof(fg_bf16) * N);
  if (!a || !b) exit(2);
  for (int64_t i = 0; i < N; i++) {
    const uint64_t r = (uint64_t)(kt_u(5, (uint64_t)i, 0) * 4294967296.0);
    x[i] = f_of((uint32_t)r); /* every class: normals, denormals, NaNs, infs */
  }
  int bad = 0;
  for (int64_t i = 0; i < N && bad < 5; i++) {
    const uint32_t u = u_of(x[i]), e = u & 0x7f800000u;
    if (e == 0 || e == 0x7f800000u) continue;
    if (fg_bf16_from_float(x[i]) != nearest_even(x[i])) {
      bad++;
      EXPECT_MSG(0, "%08x -> %04x, nearest even is %04x", u, fg_bf16_from_float(x[i]),
                 nearest_even(x[i]));
    }
  }
  for (int t = 1; t <= 2; t++) {
    kt_set_threads(t);
    EXPECT_OK(fg_bf16_set_path(FG_BF16_CONVERT));
    fg_bf16_from_f32(a, x, N);
    if (fg_bf16_native_available()) EXPECT_OK(fg_bf16_set_path(FG_BF16_NATIVE));
    fg_bf16_from_f32(b, x, N);
    int64_t diff = 0, first = -1;
    for (int64_t i = 0; i < N; i++)
      if (a[i] != b[i] || a[i] != fg_bf16_from_float(x[i])) {
        diff++;
        if (first < 0) first = i;
      }
    EXPECT_MSG(diff == 0, "%d threads: %lld of %d conversions differ between the paths or from "
               "the scalar rule (first %08x: %04x vs %04x)", t, (long long)diff, N,
               first >= 0 ? u_of(x[first]) : 0u, first >= 0 ? a[first] : 0,
               first >= 0 ? b[first] : 0);
  }
  /* bf16 -> fp32 is exact: every one of the 65536 values comes back (a denormal to a signed
   * zero, a NaN as a NaN, as the rule says) */
  fg_bf16 all[65536], back[65536];
  float wide[65536];
  for (int i = 0; i < 65536; i++) all[i] = (fg_bf16)i;
  fg_bf16_to_f32(wide, all, 65536);
  fg_bf16_from_f32(back, wide, 65536);
  int64_t wrong = 0;
  for (int i = 0; i < 65536; i++) {
    const int exp = (i >> 7) & 0xff, man = i & 0x7f;
    uint16_t want = (uint16_t)i;
    if (exp == 0) want = (uint16_t)(i & 0x8000);
    if (exp == 0xff && man) want = (uint16_t)(i | 0x40);
    if (u_of(wide[i]) != (uint32_t)i << 16 || back[i] != want) wrong++;
  }
  EXPECT_MSG(wrong == 0, "%lld of 65536 bf16 values did not widen exactly or round-trip",
             (long long)wrong);
  free(x);
  free(a);
  free(b);
}

/* ---- GEMMs -------------------------------------------------------------------------------- */

static void fill_bf16(fg_bf16 *x, int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < ld; c++)
      x[r * ld + c] = c < cols ? fg_bf16_from_float(
                                     (float)(2.0 * kt_u(seed, (uint64_t)r, (uint64_t)c) - 1.0))
                               : 0x7fc0; /* padding: NaN, must never be read */
}

/* worst |got - ref| / ((k + 2) 2^-24 S) over rows x cols; > 1 fails. S per entry from the
 * magnitudes: sum_p |a_ip| |b_pj| (+ |C_old|) computed by the caller into S. */
static double worst_ratio(const float *got, int64_t ldg, const float *ref, int64_t ldr,
                          const double *S, int64_t rows, int64_t cols, int64_t k) {
  double worst = 0.0;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      const double tol = (double)(k + 2) * ldexp(1.0, -24) * S[i * cols + j] + 1e-30;
      const double d = fabs((double)got[i * ldg + j] - (double)ref[i * ldr + j]);
      const double q = d != d ? INFINITY : d / tol;
      if (q > worst) worst = q;
    }
  return worst;
}

static void test_gemm_shape(int wgrad, int64_t n, int64_t k, int64_t m, int accumulate) {
  /* padded leading dimensions: lda = k + 3 etc., the padding NaN */
  const int64_t lda = k + 3, ldw = m + 2, ldc = m + 5;
  const int64_t crow = wgrad ? k : n;                 /* rows of the output */
  fg_bf16 *A = malloc(sizeof(fg_bf16) * (size_t)(n * lda + 1));
  fg_bf16 *G = malloc(sizeof(fg_bf16) * (size_t)(n * ldw + 1));
  float *W = kt_alloc_f(k * ldw), *C0 = kt_alloc_f(crow * ldc), *R = kt_alloc_f(crow * ldc);
  float *got[2] = {kt_alloc_f(crow * ldc), kt_alloc_f(crow * ldc)};
  double *S = kt_alloc_d(crow * m);
  if (!A || !G) exit(2);
  fill_bf16(A, n, k, lda, 100 + (uint64_t)n);
  fill_bf16(G, n, m, ldw, 200 + (uint64_t)m);
  for (int64_t p = 0; p < k; p++)
    for (int64_t j = 0; j < ldw; j++)
      W[p * ldw + j] = j < m ? (float)(2.0 * kt_u(300, (uint64_t)p, (uint64_t)j) - 1.0) : NAN;
  for (int64_t i = 0; i < crow * ldc; i++)
    C0[i] = (i % ldc) < m ? (float)(kt_u(400, (uint64_t)i, 0) - 0.5) : 7.0f; /* 7: padding */
  /* the reference and the magnitudes S */
  memcpy(R, C0, sizeof(float) * (size_t)(crow * ldc));
  if (wgrad)
    fg_bf16_gemm_wgrad_ref(n, k, m, A, lda, G, ldw, R, ldc, accumulate);
  else
    fg_bf16_gemm_tall_ref(n, k, m, A, lda, W, ldw, R, ldc, accumulate);
  for (int64_t i = 0; i < crow; i++)
    for (int64_t j = 0; j < m; j++) {
      double s = accumulate ? fabs((double)C0[i * ldc + j]) : 0.0;
      if (wgrad)
        for (int64_t r = 0; r < n; r++)
          s += fabs((double)fg_bf16_to_float(A[r * lda + i]) * fg_bf16_to_float(G[r * ldw + j]));
      else
        for (int64_t p = 0; p < k; p++)
          s += fabs((double)fg_bf16_to_float(A[i * lda + p]) *
                    fg_bf16_to_float(fg_bf16_from_float(W[p * ldw + j])));
      S[i * m + j] = s;
    }
  const char *name = wgrad ? "wgrad" : "tall";
  for (int t = 1; t <= 2; t++) {
    kt_set_threads(t);
    for (int p = 0; p < npaths(); p++) {
      EXPECT_OK(fg_bf16_set_path(path_at(p)));
      float *out = got[p];
      memcpy(out, C0, sizeof(float) * (size_t)(crow * ldc));
      if (wgrad)
        EXPECT_OK(fg_bf16_gemm_wgrad(n, k, m, A, lda, G, ldw, out, ldc, accumulate));
      else
        EXPECT_OK(fg_bf16_gemm_tall(n, k, m, A, lda, W, ldw, out, ldc, accumulate));
      const double q = worst_ratio(out, ldc, R, ldc, S, crow, m, wgrad ? n : k);
      EXPECT_MSG(q <= 1.0, "%s n=%lld k=%lld m=%lld acc=%d, %s path, %d threads: error %.3g "
                 "times the bound", name, (long long)n, (long long)k, (long long)m, accumulate,
                 fg_bf16_path_name(path_at(p)), t, q);
      int pad_ok = 1;
      for (int64_t i = 0; i < crow; i++)
        for (int64_t j = m; j < ldc; j++) pad_ok &= out[i * ldc + j] == 7.0f;
      EXPECT_MSG(pad_ok, "%s: the output's padding columns were written", name);
      /* bitwise repeatable: run again into a fresh copy */
      float *again = kt_alloc_f(crow * ldc);
      memcpy(again, C0, sizeof(float) * (size_t)(crow * ldc));
      if (wgrad)
        EXPECT_OK(fg_bf16_gemm_wgrad(n, k, m, A, lda, G, ldw, again, ldc, accumulate));
      else
        EXPECT_OK(fg_bf16_gemm_tall(n, k, m, A, lda, W, ldw, again, ldc, accumulate));
      EXPECT_MSG(memcmp(again, out, sizeof(float) * (size_t)(crow * ldc)) == 0,
                 "%s n=%lld k=%lld m=%lld, %s path: a second run differs", name, (long long)n,
                 (long long)k, (long long)m, fg_bf16_path_name(path_at(p)));
      free(again);
    }
    if (npaths() == 2) { /* native and convert within twice the bound of each other */
      double *S2 = kt_alloc_d(crow * m);
      for (int64_t i = 0; i < crow * m; i++) S2[i] = 2.0 * S[i];
      const double q = worst_ratio(got[0], ldc, got[1], ldc, S2, crow, m, wgrad ? n : k);
      EXPECT_MSG(q <= 1.0, "%s n=%lld k=%lld m=%lld: native and convert differ by %.3g times "
                 "twice the bound", name, (long long)n, (long long)k, (long long)m, q);
      free(S2);
    }
  }
  free(A);
  free(G);
  free(W);
  free(C0);
  free(R);
  free(got[0]);
  free(got[1]);
  free(S);
}

static void test_gemms(void) {
  static const int64_t sizes[][3] = {{1, 3, 3},    {17, 3, 3},    {17, 64, 16},
                                     {1, 1, 1},    {5, 1, 33},    {1000, 67, 33},
                                     {300, 128, 3}, {4100, 32, 17}, {2, 602, 5}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int wgrad = 0; wgrad < 2; wgrad++)
      for (int acc = 0; acc < 2; acc++)
        test_gemm_shape(wgrad, sizes[s][0], sizes[s][1], sizes[s][2], acc);
  /* empty products: k == 0 (tall) and n == 0 (wgrad) give zeros, or leave C when accumulating */
  const fg_bf16 one = 0x3f80;
  for (int p = 0; p < npaths(); p++) {
    float C[6] = {1, 2, 3, 4, 5, 6};
    EXPECT_OK(fg_bf16_set_path(path_at(p)));
    EXPECT_OK(fg_bf16_gemm_tall(2, 0, 3, &one, 1, C, 3, C, 3, 1));
    EXPECT(C[0] == 1 && C[5] == 6);
    EXPECT_OK(fg_bf16_gemm_wgrad(0, 2, 3, &one, 2, &one, 3, C, 3, 0));
    EXPECT(C[0] == 0 && C[5] == 0);
  }
}

/* A sink that checks fg_bf16_gemm_tall_rows' blocks: consecutive from row 0, each row the
 * expected fp32 product's (want, ldw) bit for bit */
typedef struct rows_check {
  const float *want;
  int64_t ldw, m, next;
  int ok, calls;
} rows_check;

static void check_rows(void *ctx, int64_t r0, int64_t rows, float *blk) {
  rows_check *rc = ctx;
  rc->calls++;
  rc->ok &= r0 == rc->next && rows > 0;
  for (int64_t i = 0; i < rows; i++)
    rc->ok &= memcmp(blk + i * rc->m, rc->want + (r0 + i) * rc->ldw,
                     sizeof(float) * (size_t)rc->m) == 0;
  rc->next = r0 + rows;
}

/* The products on fp32 operands (fg_bf16_gemm_tall_f32 / _wgrad_f32: rounded a block of rows at
 * a time inside the call; _wgrad_hf, A bf16 and G fp32; _tall_f32_16, stored as bf16) against rounding the whole operand first and calling the bf16
 * product: the same bits on the convert path; on the native path, which sums the rows of a
 * weight gradient block by block, within twice the accumulation bound. n spans three of the
 * blocks of 4096 rows, or two of a wide layer's shorter blocks; the operands' padding columns
 * are NaN and must never be read; the values
 * are arbitrary fp32 (they round), with denormals and halfway cases among them. */
static void test_gemm_f32_shape(int wgrad, int64_t n, int64_t k, int64_t m, int accumulate) {
  const int64_t lda = k + 3, ldg = m + 1, ldw = m + 2, ldc = m + 5;
  const int64_t crow = wgrad ? k : n;
  float *A = kt_alloc_f(n * lda), *G = kt_alloc_f(n * ldg), *W = kt_alloc_f(k * ldw);
  float *C0 = kt_alloc_f(crow * ldc), *want = kt_alloc_f(crow * ldc), *got = kt_alloc_f(crow * ldc);
  fg_bf16 *A16 = malloc(sizeof(fg_bf16) * (size_t)(n * k + 1));
  fg_bf16 *G16 = malloc(sizeof(fg_bf16) * (size_t)(n * m + 1));
  double *S = kt_alloc_d(crow * m);
  if (!A16 || !G16) exit(2);
  for (int64_t r = 0; r < n; r++) {
    for (int64_t c = 0; c < lda; c++) {
      float v = (float)(4.0 * kt_u(500, (uint64_t)r, (uint64_t)c) - 2.0);
      if ((r + c) % 97 == 0) v = f_of(0x00000123u + (uint32_t)c); /* a denormal: rounds to 0 */
      if ((r + c) % 89 == 0) v = f_of(0x3f808000u);                 /* halfway: ties to even */
      A[r * lda + c] = c < k ? v : NAN;
    }
    for (int64_t c = 0; c < ldg; c++)
      G[r * ldg + c] = c < m ? (float)(kt_u(600, (uint64_t)r, (uint64_t)c) - 0.5) : NAN;
    for (int64_t c = 0; c < k; c++) A16[r * k + c] = fg_bf16_from_float(A[r * lda + c]);
    for (int64_t c = 0; c < m; c++) G16[r * m + c] = fg_bf16_from_float(G[r * ldg + c]);
  }
  for (int64_t p = 0; p < k; p++)
    for (int64_t j = 0; j < ldw; j++)
      W[p * ldw + j] = j < m ? (float)(2.0 * kt_u(700, (uint64_t)p, (uint64_t)j) - 1.0) : NAN;
  for (int64_t i = 0; i < crow * ldc; i++)
    C0[i] = (i % ldc) < m ? (float)(kt_u(800, (uint64_t)i, 0) - 0.5) : 7.0f;
  for (int64_t i = 0; i < crow; i++)
    for (int64_t j = 0; j < m; j++) {
      double sum = accumulate ? fabs((double)C0[i * ldc + j]) : 0.0;
      if (wgrad)
        for (int64_t r = 0; r < n; r++)
          sum += fabs((double)fg_bf16_to_float(A16[r * k + i]) * fg_bf16_to_float(G16[r * m + j]));
      else
        for (int64_t p = 0; p < k; p++)
          sum += fabs((double)fg_bf16_to_float(A16[i * k + p]) *
                      fg_bf16_to_float(fg_bf16_from_float(W[p * ldw + j])));
      S[i * m + j] = 2.0 * sum;
    }
  for (int p = 0; p < npaths(); p++) {
    EXPECT_OK(fg_bf16_set_path(path_at(p)));
    memcpy(want, C0, sizeof(float) * (size_t)(crow * ldc));
    memcpy(got, C0, sizeof(float) * (size_t)(crow * ldc));
    if (wgrad) {
      EXPECT_OK(fg_bf16_gemm_wgrad(n, k, m, A16, k, G16, m, want, ldc, accumulate));
      EXPECT_OK(fg_bf16_gemm_wgrad_f32(n, k, m, A, lda, G, ldg, got, ldc, accumulate));
      /* one operand stored as bf16, the other fp32: hf, A bf16 (the model's S16 products);
       * fh, G bf16 (the weight gradient of a dZ stored so) */
      float *mixed = kt_alloc_f(crow * ldc);
      for (int fh = 0; fh < 2; fh++) {
        const char *name = fh ? "wgrad_fh" : "wgrad_hf";
        memcpy(mixed, C0, sizeof(float) * (size_t)(crow * ldc));
        if (fh)
          EXPECT_OK(fg_bf16_gemm_wgrad_fh(n, k, m, A, lda, G16, m, mixed, ldc, accumulate));
        else
          EXPECT_OK(fg_bf16_gemm_wgrad_hf(n, k, m, A16, k, G, ldg, mixed, ldc, accumulate));
        if (path_at(p) == FG_BF16_CONVERT)
          EXPECT_MSG(memcmp(mixed, want, sizeof(float) * (size_t)(crow * ldc)) == 0,
                     "%s n=%lld acc=%d: not the bits of the rounded operands'", name,
                     (long long)n, accumulate);
        EXPECT_MSG(worst_ratio(mixed, ldc, want, ldc, S, crow, m, n) <= 1.0,
                   "%s n=%lld, %s path: past twice the bound", name, (long long)n,
                   fg_bf16_path_name(path_at(p)));
      }
      free(mixed);
    } else {
      EXPECT_OK(fg_bf16_gemm_tall(n, k, m, A16, k, W, ldw, want, ldc, accumulate));
      EXPECT_OK(fg_bf16_gemm_tall_f32(n, k, m, A, lda, W, ldw, got, ldc, accumulate));
    }
    if (path_at(p) == FG_BF16_CONVERT)
      EXPECT_MSG(memcmp(got, want, sizeof(float) * (size_t)(crow * ldc)) == 0,
                 "%s_f32 n=%lld k=%lld m=%lld acc=%d: not the bits of the rounded operands'",
                 wgrad ? "wgrad" : "tall", (long long)n, (long long)k, (long long)m, accumulate);
    const double q = worst_ratio(got, ldc, want, ldc, S, crow, m, wgrad ? n : k);
    EXPECT_MSG(q <= 1.0, "%s_f32 n=%lld, %s path: %.3g times twice the bound",
               wgrad ? "wgrad" : "tall", (long long)n, fg_bf16_path_name(path_at(p)), q);
    int pad_ok = 1;
    for (int64_t i = 0; i < crow; i++)
      for (int64_t j = m; j < ldc; j++) pad_ok &= got[i * ldc + j] == 7.0f;
    EXPECT_MSG(pad_ok, "%s_f32: the output's padding columns were written", wgrad ? "wgrad" : "tall");
    if (!wgrad && !accumulate) {
      /* stored as bf16 (fg_bf16_gemm_tall_f32_16): the fp32 product rounded, bit for bit on
       * either path (the same row blocks), its padding (0x7777) never written */
      fg_bf16 *g16 = malloc(sizeof(fg_bf16) * (size_t)(crow * ldc));
      int same = 1;
      if (!g16) exit(2);
      for (int64_t i = 0; i < crow * ldc; i++) g16[i] = 0x7777;
      EXPECT_OK(fg_bf16_gemm_tall_f32_16(n, k, m, A, lda, W, ldw, g16, ldc));
      for (int64_t i = 0; i < crow; i++)
        for (int64_t j = 0; j < ldc; j++)
          same &= g16[i * ldc + j] == (j < m ? fg_bf16_from_float(got[i * ldc + j]) : 0x7777);
      /* and packed (ldc = m: one rounding call a block, the model's case) */
      for (int64_t i = 0; i < n * m; i++) g16[i] = 0x7777;
      EXPECT_OK(fg_bf16_gemm_tall_f32_16(n, k, m, A, lda, W, ldw, g16, m));
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++)
          same &= g16[i * m + j] == fg_bf16_from_float(got[i * ldc + j]);
      /* A stored as bf16 (fg_bf16_gemm_tall_16): fg_bf16_gemm_tall's product rounded, bit for
       * bit on the convert path, within a bf16 rounding of it past the bound on the native */
      for (int64_t i = 0; i < n * m; i++) g16[i] = 0x7777;
      EXPECT_OK(fg_bf16_gemm_tall_16(n, k, m, A16, k, W, ldw, g16, m));
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
          const float w16 = fg_bf16_to_float(g16[i * m + j]), wv = want[i * ldc + j];
          if (path_at(p) == FG_BF16_CONVERT)
            same &= g16[i * m + j] == fg_bf16_from_float(wv);
          else
            same &= fabs((double)w16 - wv) <= S[i * m + j] + fabs((double)wv) / 128.0;
        }
      EXPECT_MSG(same, "tall_f32_16 n=%lld k=%lld m=%lld, %s path: not the fp32 product rounded",
                 (long long)n, (long long)k, (long long)m, fg_bf16_path_name(path_at(p)));
      /* handed to a sink (fg_bf16_gemm_tall_rows): consecutive blocks from row 0 to n, the
       * fp32 product's rows bit for bit (the blocks tall_f32_16 rounds) */
      {
        rows_check rc = {got, ldc, m, 0, 1, 0};
        EXPECT_OK(fg_bf16_gemm_tall_rows(n, k, m, NULL, A, lda, W, ldw, check_rows, &rc));
        EXPECT_MSG(rc.ok && rc.next == n && rc.calls >= (n > 4096 ? 2 : 1),
                   "tall_rows n=%lld k=%lld m=%lld, %s path: %d calls to row %lld, ok %d",
                   (long long)n, (long long)k, (long long)m, fg_bf16_path_name(path_at(p)),
                   rc.calls, (long long)rc.next, rc.ok);
      }
      free(g16);
    }
  }
  free(A);
  free(G);
  free(W);
  free(C0);
  free(want);
  free(got);
  free(A16);
  free(G16);
  free(S);
}

static void test_gemm_f32(void) {
  for (int wgrad = 0; wgrad < 2; wgrad++)
    for (int acc = 0; acc < 2; acc++) {
      test_gemm_f32_shape(wgrad, 9000, 40, 24, acc);
      test_gemm_f32_shape(wgrad, 5, 3, 2, acc);
      test_gemm_f32_shape(wgrad, 3500, 1100, 16, acc); /* a wide layer: blocks of 1879 rows
                                                           (convert; native: 2048 a thread) */
    }
  /* a call's scratch: its row blocks of fp32 and the weights: 4096 rows where k + m <= 512,
   * fewer (8 MiB of operands, at least 256 rows) for a wide layer, at most n */
  const fg_bf16_path was = fg_bf16_get_path();
  EXPECT_OK(fg_bf16_set_path(FG_BF16_CONVERT));
  for (int t = 1; t <= 16; t *= 4) {
    kt_set_threads(t);
    EXPECT(fg_bf16_gemm_scratch_bytes(9000, 40, 24) == 4 * (4096 * 64 + 40 * 24));
    EXPECT(fg_bf16_gemm_scratch_bytes(100, 40, 24) == 4 * (100 * 64 + 40 * 24));
    EXPECT(fg_bf16_gemm_scratch_bytes(9000, 2000, 48) == 4 * (1024 * 2048 + 2000 * 48));
    EXPECT(fg_bf16_gemm_scratch_bytes(9000, 20000, 480) == 4 * (256 * 20480 + 20000 * 480));
  }
  /* the native path's blocks have at least 2048 rows a thread (at most n, and within 64 MiB
   * counted as fp32) */
  if (fg_bf16_native_available()) {
    EXPECT_OK(fg_bf16_set_path(FG_BF16_NATIVE));
    for (int t = 1; t <= 16; t *= 4) {
      kt_set_threads(t);
      const int64_t per = 2048 * (int64_t)fg_max_threads(); /* (1 without OpenMP) */
      EXPECT(fg_bf16_gemm_scratch_bytes(9000, 40, 24) ==
             4 * (FG_MIN(9000, FG_MAX(4096, per)) * 64 + 40 * 24));
      EXPECT(fg_bf16_gemm_scratch_bytes(9000, 2000, 48) ==
             4 * (FG_MIN(9000, FG_MAX(1024, FG_MIN(per, (64 << 20) / (4 * 2048)))) * 2048 +
                  2000 * 48));
      /* a very wide layer: the 819 rows 64 MiB holds, not 2048 a thread */
      EXPECT(fg_bf16_gemm_scratch_bytes(9000, 20000, 480) ==
             4 * (FG_MAX(256, FG_MIN(per, (64 << 20) / (4 * 20480))) * 20480 + 20000 * 480));
    }
  }
  EXPECT_OK(fg_bf16_set_path(was));
  kt_set_threads(1);
}

/* ---- SpMM ---------------------------------------------------------------------------------- */

static void test_spmm(void) {
  /* every vector count of a tile (16 and 8 lanes: AVX-512 and AVX2), full and partial last
   * vectors, and two or three tiles a row */
  const int64_t fs[] = {1, 3, 8, 16, 17, 24, 32, 40, 64, 72, 88, 100, 113, 120, 128, 131, 300};
  for (int with_val = 0; with_val < 2; with_val++) {
    fg_csr A;
    kt_random_csr(&A, 257, 190, 11.0, 91 + (uint64_t)with_val, with_val);
    for (size_t fi = 0; fi < sizeof fs / sizeof fs[0]; fi++) {
      const int64_t f = fs[fi], ldx = f + 1, ldy = f + 2;
      fg_bf16 *X = malloc(sizeof(fg_bf16) * (size_t)(A.ncols * ldx));
      float *Xf = kt_alloc_f(A.ncols * ldx), *Y0 = kt_alloc_f(A.nrows * ldy);
      float *R = kt_alloc_f(A.nrows * ldy), *Y = kt_alloc_f(A.nrows * ldy);
      float *F = kt_alloc_f(A.nrows * ldy);
      if (!X) exit(2);
      fill_bf16(X, A.ncols, f, ldx, 500 + (uint64_t)f);
      fg_bf16_to_f32(Xf, X, A.ncols * ldx);
      for (int64_t i = 0; i < A.nrows * ldy; i++) Y0[i] = (float)(kt_u(600, (uint64_t)i, 0) - 0.5);
      for (int acc = 0; acc < 2; acc++) {
        memcpy(R, Y0, sizeof(float) * (size_t)(A.nrows * ldy));
        fg_spmm_bf16_ref(&A, X, ldx, R, ldy, f, acc);
        memcpy(F, Y0, sizeof(float) * (size_t)(A.nrows * ldy));
        if (acc)
          fg_spmm_acc(&A, Xf, ldx, F, ldy, f);
        else
          fg_spmm(&A, Xf, ldx, F, ldy, f);
        for (int t = 1; t <= 2; t++) {
          kt_set_threads(t);
          memcpy(Y, Y0, sizeof(float) * (size_t)(A.nrows * ldy));
          fg_spmm_bf16(&A, X, ldx, Y, ldy, f, acc);
          EXPECT_MSG(memcmp(Y, R, sizeof(float) * (size_t)(A.nrows * ldy)) == 0,
                     "spmm bf16 f=%lld val=%d acc=%d, %d threads: differs from the reference",
                     (long long)f, with_val, acc, t);
          EXPECT_MSG(memcmp(Y, F, sizeof(float) * (size_t)(A.nrows * ldy)) == 0,
                     "spmm bf16 f=%lld val=%d acc=%d, %d threads: differs from fg_spmm on the "
                     "widened rows", (long long)f, with_val, acc, t);
        }
        if (acc) continue;
        /* bf16 out: each fp32 sum (R) rounded once, padding columns untouched */
        fg_bf16 *Yb = malloc(sizeof(fg_bf16) * (size_t)(A.nrows * ldy));
        fg_bf16 *Rb = malloc(sizeof(fg_bf16) * (size_t)(A.nrows * ldy));
        if (!Yb || !Rb) exit(2);
        memset(Rb, 0xa5, sizeof(fg_bf16) * (size_t)(A.nrows * ldy));
        fg_spmm_bf16_out_ref(&A, X, ldx, Rb, ldy, f);
        for (int t = 1; t <= 2; t++) {
          kt_set_threads(t);
          memset(Yb, 0xa5, sizeof(fg_bf16) * (size_t)(A.nrows * ldy));
          fg_spmm_bf16_out(&A, X, ldx, Yb, ldy, f);
          int64_t bad = 0;
          for (int64_t r = 0; r < A.nrows; r++)
            for (int64_t j = 0; j < ldy; j++) {
              const fg_bf16 want = j < f ? fg_bf16_from_float(R[r * ldy + j]) : 0xa5a5;
              bad += Yb[r * ldy + j] != want || Rb[r * ldy + j] != want;
            }
          EXPECT_MSG(bad == 0, "spmm bf16 out f=%lld val=%d, %d threads: %lld entries are not "
                     "the rounded fp32 sums", (long long)f, with_val, t, (long long)bad);
        }
        free(Yb);
        free(Rb);
      }
      free(X);
      free(Xf);
      free(Y0);
      free(R);
      free(Y);
      free(F);
    }
    fg_csr_free(&A);
  }
}

/* What the chunked SpMM's callback sees: its calls, and after how many it asks to stop (0:
 * never). */
typedef struct chunk_probe {
  int calls, stop_after;
} chunk_probe;

static int chunk_between(void *arg) {
  chunk_probe *p = arg;
  p->calls++;
  return p->stop_after > 0 && p->calls >= p->stop_after;
}

/* fg_spmm_bf16_chunked against fg_spmm_bf16 bit for bit (padding included): chunks of one row
 * (one cost unit, 2f bytes: the callback runs exactly nrows - 1 times, or 3 when it stops after
 * 3), of 37 and 1000 units (dividing neither rows nor nonzeros), one chunk (no call), no
 * callback; widths on and off the tiles' edges; with and without values and accumulation; 1
 * and 3 threads. */
static void test_spmm_chunked(void) {
  static const int64_t widths[] = {1, 17, 64, 129};
  static const int64_t units[] = {1, 37, 1000, 1 << 30};
  const int saved = kt_max_threads();
  int mismatches = 0, bad_calls = 0, cases = 0;
  for (int with_val = 0; with_val < 2; with_val++) {
    fg_csr A;
    kt_random_csr(&A, 257, 190, 11.0, 73 + (uint64_t)with_val, with_val);
    for (int w = 0; w < 4; w++) {
      const int64_t f = widths[w], ldx = f + 1, ldy = f + 2;
      const size_t ybytes = sizeof(float) * (size_t)(A.nrows * ldy);
      fg_bf16 *X = malloc(sizeof(fg_bf16) * (size_t)(A.ncols * ldx));
      float *Y0 = kt_alloc_f(A.nrows * ldy), *Yw = kt_alloc_f(A.nrows * ldy);
      float *Yc = kt_alloc_f(A.nrows * ldy);
      if (!X) exit(2);
      fill_bf16(X, A.ncols, f, ldx, 700 + (uint64_t)f);
      for (int64_t i = 0; i < A.nrows * ldy; i++) Y0[i] = (float)(kt_u(800, (uint64_t)i, 0) - 0.5);
      for (int acc = 0; acc < 2; acc++) {
        memcpy(Yw, Y0, ybytes);
        fg_spmm_bf16(&A, X, ldx, Yw, ldy, f, acc);
        for (int t = 1; t <= 3; t += 2) {
          kt_set_threads(t);
          for (int u = 0; u < 4; u++)
            for (int stop = 0; stop < 3; stop++) { /* never, after 3 calls, no callback */
              chunk_probe probe = {0, stop == 1 ? 3 : 0};
              const int64_t want = stop == 2 || u == 3 ? 0
                                   : u == 0            ? (stop == 1 ? 3 : A.nrows - 1)
                                                       : -1; /* -1: at least one */
              memcpy(Yc, Y0, ybytes);
              fg_spmm_bf16_chunked(&A, X, ldx, Yc, ldy, f, acc, units[u] * 2 * f,
                                   stop == 2 ? NULL : chunk_between, &probe);
              cases++;
              if (memcmp(Yc, Yw, ybytes) != 0 && mismatches++ < 5)
                fprintf(stderr, "  bf16 chunked f=%lld val=%d acc=%d threads=%d units=%lld "
                        "stop=%d differs from the whole call\n", (long long)f, with_val, acc,
                        t, (long long)units[u], stop);
              if ((want >= 0 && probe.calls != want) || (want < 0 && probe.calls < 1)) {
                if (bad_calls++ < 5)
                  fprintf(stderr, "  bf16 chunked f=%lld units=%lld stop=%d: %d callback calls\n",
                          (long long)f, (long long)units[u], stop, probe.calls);
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
  printf("  spmm bf16 chunked: %d cases, bitwise mismatches %d, wrong callback counts %d\n",
         cases, mismatches, bad_calls);
  EXPECT_MSG(mismatches == 0, "chunked bf16 SpMM differs from the whole call (%d cases)",
             mismatches);
  EXPECT_MSG(bad_calls == 0, "chunked bf16 SpMM called back the wrong number of times (%d cases)",
             bad_calls);
}

/* ---- path switch --------------------------------------------------------------------------- */

static void test_path_switch(void) {
  fg_bf16_path p;
  EXPECT(fg_bf16_path_parse("native", &p) == FG_OK && p == FG_BF16_NATIVE);
  EXPECT(fg_bf16_path_parse("convert", &p) == FG_OK && p == FG_BF16_CONVERT);
  EXPECT(fg_bf16_path_parse("fast", &p) == FG_ERR_INVALID_ARG && fg_test_error_contains("fast"));
  EXPECT_OK(fg_bf16_set_path(FG_BF16_CONVERT));
  EXPECT(fg_bf16_get_path() == FG_BF16_CONVERT);
  if (fg_bf16_native_available()) {
    EXPECT_OK(fg_bf16_set_path(FG_BF16_NATIVE));
    EXPECT(fg_bf16_get_path() == FG_BF16_NATIVE);
    EXPECT(strncmp(fg_bf16_describe(), "native", 6) == 0);
  } else {
    EXPECT(fg_bf16_set_path(FG_BF16_NATIVE) == FG_ERR_UNSUPPORTED &&
           fg_test_error_contains("unavailable"));
    EXPECT(fg_bf16_get_path() == FG_BF16_CONVERT);
    EXPECT(strncmp(fg_bf16_describe(), "convert", 7) == 0);
  }
  printf("bf16 path: %s\n", fg_bf16_describe());
}

/* fg_axpy_bf16 against fg_axpy on the widened copy: the same bits, at 1 and 3 threads, over
 * every class of value (NaNs, infinities, denormals among them) and an odd length. */
static void test_axpy16(void) {
  enum { N = 100003 };
  float *x = kt_alloc_f(N), *y0 = kt_alloc_f(N), *y1 = kt_alloc_f(N), *y2 = kt_alloc_f(N);
  fg_bf16 *h = malloc(sizeof(fg_bf16) * N);
  const int saved = kt_max_threads();
  if (!h) exit(2);
  for (int64_t i = 0; i < N; i++) {
    h[i] = (fg_bf16)(kt_u(7, (uint64_t)i, 0) * 65536.0);
    y0[i] = (float)kt_u(8, (uint64_t)i, 0) * 4.0f - 2.0f;
  }
  fg_bf16_to_f32(x, h, N);
  memcpy(y1, y0, sizeof(float) * N);
  fg_axpy(y1, 1.25f, x, N);
  for (int t = 1; t <= 3; t += 2) {
    kt_set_threads(t);
    memcpy(y2, y0, sizeof(float) * N);
    fg_axpy_bf16(y2, 1.25f, h, N);
    EXPECT_MSG(memcmp(y1, y2, sizeof(float) * N) == 0,
               "fg_axpy_bf16 differs from fg_axpy on the widened copy (%d threads)", t);
  }
  kt_set_threads(saved);
  free(x);
  free(y0);
  free(y1);
  free(y2);
  free(h);
}

int main(void) {
  test_path_switch();
  test_chosen_values();
  test_random_values();
  test_gemms();
  test_gemm_f32();
  test_spmm();
  test_spmm_chunked();
  test_axpy16();
  fg_bf16_release();
  return fg_test_finish("kernels_bf16");
}
