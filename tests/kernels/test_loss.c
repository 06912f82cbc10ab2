/* test_loss.c -- masked softmax cross-entropy: tuned vs reference, a hand-computed case, the
 * gradient w.r.t. the logits against central differences in double, and bitwise determinism
 * (twice, and with dlogits NULL); the classes cut into column blocks as a grid scheme holds
 * them, combined, against the whole row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"

/* scale * sum over selected rows of (logsumexp(z) - z[label]), in double. */
static double xent_objective(const double *z, int64_t rows, int64_t classes,
                             const int32_t *labels, const uint8_t *select, double scale) {
  double L = 0.0;
  for (int64_t r = 0; r < rows; r++) {
    if ((select && !select[r]) || labels[r] < 0) continue;
    double mx = z[r * classes];
    for (int64_t c = 1; c < classes; c++) mx = z[r * classes + c] > mx ? z[r * classes + c] : mx;
    double s = 0.0;
    for (int64_t c = 0; c < classes; c++) s += exp(z[r * classes + c] - mx);
    L += scale * (mx + log(s) - z[r * classes + labels[r]]);
  }
  return L;
}

static void make_problem(int64_t rows, int64_t classes, uint64_t seed, float *logits,
                         int32_t *labels, uint8_t *select) {
  fg_test_fill(logits, rows * classes, seed, -4.0f, 4.0f);
  for (int64_t r = 0; r < rows; r++) {
    labels[r] = (int32_t)(kt_u(seed, (uint64_t)r, 1) * (double)classes);
    if (r % 11 == 5) labels[r] = -1; /* unlabeled */
    select[r] = kt_u(seed, (uint64_t)r, 2) < 0.6;
  }
}

static void test_hand(void) {
  /* row 0: logits (0, ln 3), label 1: p = 3/4, loss = ln(4/3), correct
   * row 1: logits (2, 2), label 1: p = 1/2, loss = ln 2, argmax ties to class 0: wrong
   * row 2: not selected; row 3: label -1 */
  const float z[8] = {0.0f, (float)log(3.0), 2.0f, 2.0f, 9.0f, 1.0f, 5.0f, 1.0f};
  const int32_t labels[4] = {1, 1, 0, -1};
  const uint8_t select[4] = {1, 1, 0, 1};
  float dz[8];
  int64_t count = -1, correct = -1;
  const double loss = fg_softmax_xent(z, 4, 2, labels, select, 0.5f, dz, &count, &correct);
  EXPECT(count == 2 && correct == 1);
  EXPECT_MSG(fabs(loss - (log(4.0 / 3.0) + log(2.0))) < 1e-6, "loss %.9f", loss);
  EXPECT(fabsf(dz[0] - 0.5f * 0.25f) < 1e-6f && fabsf(dz[1] - 0.5f * (0.75f - 1.0f)) < 1e-6f);
  EXPECT(fabsf(dz[2] - 0.25f) < 1e-6f && fabsf(dz[3] + 0.25f) < 1e-6f);
  EXPECT(dz[4] == 0.0f && dz[5] == 0.0f && dz[6] == 0.0f && dz[7] == 0.0f);
  /* large logits do not overflow */
  const float big[3] = {1000.0f, 0.0f, -1000.0f};
  const int32_t l0 = 0;
  const double lb = fg_softmax_xent(big, 1, 3, &l0, NULL, 1.0f, NULL, &count, &correct);
  EXPECT(isfinite(lb) && lb >= 0.0 && lb < 1e-6 && count == 1 && correct == 1);
}

static void test_vs_ref_and_determinism(void) {
  const int64_t rows = 5003, classes = 7;
  float *z = kt_alloc_f(rows * classes), *dt = kt_alloc_f(rows * classes);
  float *dr = kt_alloc_f(rows * classes), *d2 = kt_alloc_f(rows * classes);
  int32_t *labels = malloc((size_t)rows * sizeof *labels);
  uint8_t *select = malloc((size_t)rows);
  if (!labels || !select) exit(2);
  make_problem(rows, classes, 111, z, labels, select);
  for (int64_t i = 0; i < rows * classes; i++) dt[i] = dr[i] = 99.0f; /* must be overwritten */
  int64_t ct, cr, okt, okr;
  const double lt = fg_softmax_xent(z, rows, classes, labels, select, 0.01f, dt, &ct, &okt);
  const double lr = fg_softmax_xent_ref(z, rows, classes, labels, select, 0.01f, dr, &cr, &okr);
  const double dd = fg_test_max_rel_diff(dt, dr, rows * classes);
  printf("  softmax_xent loss tuned %.12g ref %.12g (rel diff %.3g), dlogits max rel diff %.3g\n",
         lt, lr, fabs(lt - lr) / fabs(lr), dd);
  EXPECT(ct == cr && okt == okr && ct > 0 && okt > 0 && okt < ct);
  EXPECT(fabs(lt - lr) <= 1e-12 * fabs(lr));
  EXPECT(dd <= 1e-6);
  /* bitwise repeatable, with or without the gradient */
  int64_t c2, ok2;
  const double l2 = fg_softmax_xent(z, rows, classes, labels, select, 0.01f, d2, &c2, &ok2);
  EXPECT(memcmp(&l2, &lt, sizeof l2) == 0 && c2 == ct && ok2 == okt);
  EXPECT(memcmp(d2, dt, (size_t)(rows * classes) * sizeof *d2) == 0);
  const double l3 = fg_softmax_xent(z, rows, classes, labels, select, 0.01f, NULL, NULL, NULL);
  EXPECT(memcmp(&l3, &lt, sizeof l3) == 0);
  /* select == NULL selects every labeled row */
  const double la = fg_softmax_xent(z, rows, classes, labels, NULL, 1.0f, NULL, &c2, NULL);
  const double lar = fg_softmax_xent_ref(z, rows, classes, labels, NULL, 1.0f, NULL, &cr, NULL);
  EXPECT(c2 == cr && c2 == rows - (rows + 5) / 11 && fabs(la - lar) <= 1e-12 * fabs(lar));
  free(z);
  free(dt);
  free(dr);
  free(d2);
  free(labels);
  free(select);
}

static void test_gradient(void) {
  const int64_t rows = 9, classes = 5;
  const float scale = 1.0f / 3.0f;
  float *zf = kt_alloc_f(rows * classes), *dz = kt_alloc_f(rows * classes);
  float *dzr = kt_alloc_f(rows * classes);
  int32_t labels[9];
  uint8_t select[9];
  make_problem(rows, classes, 222, zf, labels, select);
  select[0] = 1;
  labels[0] = 2;
  select[1] = 0;
  const double loss = fg_softmax_xent(zf, rows, classes, labels, select, scale, dz, NULL, NULL);
  fg_softmax_xent_ref(zf, rows, classes, labels, select, scale, dzr, NULL, NULL);
  double *z = kt_alloc_d(rows * classes), *num = kt_alloc_d(rows * classes);
  for (int64_t i = 0; i < rows * classes; i++) z[i] = (double)zf[i];
  EXPECT(fabs(loss * scale - xent_objective(z, rows, classes, labels, select, scale)) < 1e-9);
  const double h = 1e-5;
  for (int64_t i = 0; i < rows * classes; i++) {
    const double z0 = z[i];
    z[i] = z0 + h;
    const double lp = xent_objective(z, rows, classes, labels, select, scale);
    z[i] = z0 - h;
    const double lm = xent_objective(z, rows, classes, labels, select, scale);
    z[i] = z0;
    num[i] = (lp - lm) / (2.0 * h);
  }
  kt_expect_grad("softmax xent dlogits", dz, num, rows * classes);
  kt_expect_grad("softmax xent dlogits (ref)", dzr, num, rows * classes);
  free(zf);
  free(dz);
  free(dzr);
  free(z);
  free(num);
}

/* The logits' classes cut into column blocks, as a grid scheme holds them: each block's row
 * maxima combined as MPI_MAXLOC does (larger value; the lower column on a tie), the exp sums
 * added, and each block's finish gives its columns of the gradient and the loss of the rows
 * whose label it holds: together the whole-row reference. */
static void test_column_blocks(void) {
  const int64_t rows = 301, classes = 13;
  const int64_t cuts[][4] = {{0, 5, 9, 13}, {0, 1, 12, 13}, {0, 0, 6, 13}};
  float *z = kt_alloc_f(rows * classes), *dr = kt_alloc_f(rows * classes);
  float *dz = kt_alloc_f(rows * classes), *blk = kt_alloc_f(rows * classes);
  float *dblk = kt_alloc_f(rows * classes);
  int32_t *labels = malloc((size_t)rows * sizeof *labels);
  uint8_t *select = malloc((size_t)rows);
  fg_maxloc *mx = malloc((size_t)rows * sizeof *mx), *part = malloc((size_t)rows * sizeof *part);
  double *sum = malloc((size_t)rows * sizeof *sum), *psum = malloc((size_t)rows * sizeof *psum);
  int64_t cr = 0, okr = 0, tie = 0;
  double lr;
  if (!labels || !select || !mx || !part || !sum || !psum) exit(2);
  make_problem(rows, classes, 77, z, labels, select);
  while (!select[tie]) tie++; /* a selected row with a tie across two blocks: column 2 wins */
  z[tie * classes + 2] = z[tie * classes + 9] = 50.0f;
  lr = fg_softmax_xent_ref(z, rows, classes, labels, select, 0.25f, dr, &cr, &okr);
  for (size_t ci = 0; ci < sizeof cuts / sizeof cuts[0]; ci++) {
    double loss = 0.0, worst = 0.0;
    int64_t count = 0, correct = 0;
    for (int pass = 0; pass < 3; pass++) {
      for (int b = 0; b < 3; b++) {
        const int64_t c0 = cuts[ci][b], w = cuts[ci][b + 1] - c0;
        int64_t n = 0, ok = 0;
        for (int64_t r = 0; r < rows; r++)
          memcpy(blk + r * w, z + r * classes + c0, (size_t)w * sizeof *z);
        if (pass == 0) {
          fg_xent_block_max(blk, rows, w, c0, select, part);
          for (int64_t r = 0; r < rows; r++)
            if (b == 0 || part[r].val > mx[r].val ||
                (part[r].val == mx[r].val && part[r].idx < mx[r].idx))
              mx[r] = part[r];
        } else if (pass == 1) {
          fg_xent_block_expsum(blk, rows, w, mx, select, psum);
          for (int64_t r = 0; r < rows; r++) sum[r] = (b == 0 ? 0.0 : sum[r]) + psum[r];
        } else {
          loss += fg_xent_block_finish(blk, rows, w, c0, labels, select, mx, sum, 0.25f, dblk, 1,
                                       &n, &ok);
          count += n;
          correct += ok;
          for (int64_t r = 0; r < rows; r++)
            memcpy(dz + r * classes + c0, dblk + r * w, (size_t)w * sizeof *dz);
        }
      }
    }
    for (int64_t i = 0; i < rows * classes; i++)
      worst = fmax(worst, fabs((double)dz[i] - (double)dr[i]));
    printf("  column blocks %lld|%lld|%lld: loss %.12g (reference %.12g), dlogits max diff "
           "%.2e\n", (long long)cuts[ci][1], (long long)cuts[ci][2], (long long)cuts[ci][3],
           loss, lr, worst);
    EXPECT(count == cr && correct == okr);
    EXPECT(fabs(loss - lr) <= 1e-12 * fabs(lr));
    EXPECT(worst <= 1e-7);
    EXPECT(mx[tie].idx == 2);
  }
  free(z);
  free(dr);
  free(dz);
  free(blk);
  free(dblk);
  free(labels);
  free(select);
  free(mx);
  free(part);
  free(sum);
  free(psum);
}

int main(void) {
  test_hand();
  test_vs_ref_and_determinism();
  test_gradient();
  test_column_blocks();
  return fg_test_finish("kernels_loss");
}
