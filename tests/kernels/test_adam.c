/* test_adam.c -- Adam against hand-computed steps (PyTorch semantics, bias correction, L2
 * weight decay) and the tuned step against the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"

typedef void (*adam_fn)(float *, const float *, float *, float *, int64_t, fg_adam_params, float,
                        int64_t);

static void test_hand(adam_fn step, const char *name) {
  const fg_adam_params p = {.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
  /* element 0: gradient +1 then -1, no decay.
   *   t=1: m = 0.1, v = 0.001, mhat = 1, vhat = 1: param 1 -> 1 - 0.1 = 0.9
   *   t=2: m = 0.09 - 0.1 = -0.01, v = 0.000999 + 0.001 = 0.001999,
   *        mhat = -0.01 / 0.19, vhat = 0.001999 / 0.001999 = 1: param 0.9 + 0.1 / 19
   * element 1: param 2, gradient 0.5, weight decay 0.25 -> g = 1 at t=1: param 2 - 0.1 = 1.9
   * element 2: gradient 0 and param 0: nothing moves (0 / (0 + eps) = 0) */
  /* (float 1 - 0.999 is 0.00099998713: the moments carry ~1e-5 relative rounding) */
  float param[3] = {1.0f, 2.0f, 0.0f}, m[3] = {0}, v[3] = {0};
  float g1[3] = {1.0f, 0.5f, 0.0f};
  /* element 0 alone without decay, elements 1 and 2 together with decay 0.25 */
  step(param, g1, m, v, 1, p, 0.0f, 1);
  step(param + 1, g1 + 1, m + 1, v + 1, 2, p, 0.25f, 1);
  EXPECT_MSG(fabs(param[0] - 0.9) < 1e-6, "%s t=1: param %.9g", name, param[0]);
  EXPECT_MSG(fabs(m[0] - 0.1) < 1e-6 && fabs(v[0] - 0.001) < 1e-7, "%s t=1: m %.9g v %.9g", name,
             m[0], v[0]);
  EXPECT_MSG(fabs(param[1] - 1.9) < 1e-6, "%s decay: param %.9g", name, param[1]);
  EXPECT(param[2] == 0.0f && m[2] == 0.0f && v[2] == 0.0f);
  const float g2 = -1.0f;
  step(param, &g2, m, v, 1, p, 0.0f, 2);
  EXPECT_MSG(fabs(m[0] + 0.01) < 1e-6 && fabs(v[0] - 0.001999) < 1e-7, "%s t=2: m %.9g v %.9g",
             name, m[0], v[0]);
  EXPECT_MSG(fabs(param[0] - (0.9 + 0.1 / 19.0)) < 1e-6, "%s t=2: param %.9g, expected %.9g",
             name, param[0], 0.9 + 0.1 / 19.0);

  /* a constant gradient: mhat = g and vhat = g^2 at every step, so each step moves the param
   * by lr * g / (|g| + eps) */
  float q = 0.0f, mq = 0.0f, vq = 0.0f;
  const float gq = 0.02f;
  const fg_adam_params p2 = {.lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-3f};
  for (int64_t t = 1; t <= 5; t++) step(&q, &gq, &mq, &vq, 1, p2, 0.0f, t);
  const double expect = -5.0 * 0.01 * 0.02 / (0.02 + 1e-3);
  EXPECT_MSG(fabs(q - expect) < 1e-6, "%s constant gradient: %.9g, expected %.9g", name, q,
             expect);
}

static void test_tuned_vs_ref(void) {
  const int64_t n = 100003;
  float *w1 = kt_alloc_f(n), *w2 = kt_alloc_f(n), *g = kt_alloc_f(n);
  float *m1 = kt_alloc_f(n), *m2 = kt_alloc_f(n), *v1 = kt_alloc_f(n), *v2 = kt_alloc_f(n);
  fg_test_fill(w1, n, 1, -1.0f, 1.0f);
  memcpy(w2, w1, (size_t)n * sizeof *w1);
  memset(m1, 0, (size_t)n * sizeof *m1);
  memset(m2, 0, (size_t)n * sizeof *m2);
  memset(v1, 0, (size_t)n * sizeof *v1);
  memset(v2, 0, (size_t)n * sizeof *v2);
  const fg_adam_params p = {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
  for (int64_t t = 1; t <= 4; t++) {
    fg_test_fill(g, n, 10 + (uint64_t)t, -0.1f, 0.1f);
    fg_adam_step(w1, g, m1, v1, n, p, 5e-4f, t);
    fg_adam_step_ref(w2, g, m2, v2, n, p, 5e-4f, t);
  }
  const double d = fg_test_max_rel_diff(w1, w2, n);
  printf("  adam 4 steps: max rel diff tuned vs ref %.3g\n", d);
  EXPECT(d <= 1e-6);
  EXPECT(fg_test_max_rel_diff(m1, m2, n) <= 1e-6 && fg_test_max_rel_diff(v1, v2, n) <= 1e-6);
  free(w1);
  free(w2);
  free(g);
  free(m1);
  free(m2);
  free(v1);
  free(v2);
}

int main(void) {
  test_hand(fg_adam_step_ref, "ref");
  test_hand(fg_adam_step, "tuned");
  test_tuned_vs_ref();
  return fg_test_finish("kernels_adam");
}
