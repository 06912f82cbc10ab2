/* optim.c -- Adam with PyTorch semantics (torch.optim.Adam, amsgrad off): L2 weight decay
 * is added to the gradient and the moments are bias-corrected,
 *   g = grad + wd * param;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   param -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
 * The moments are stored in float; the bias corrections and the update are done in double. */
#include <math.h>

#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

void fg_adam_step_ref(float *param, const float *grad, float *m, float *v, int64_t n,
                      fg_adam_params p, float weight_decay, int64_t t) {
  assert(t >= 1);
  const double bc1 = 1.0 - pow((double)p.beta1, (double)t);
  const double bc2 = 1.0 - pow((double)p.beta2, (double)t);
  for (int64_t i = 0; i < n; i++) {
    const float g = grad[i] + weight_decay * param[i];
    m[i] = p.beta1 * m[i] + (1.0f - p.beta1) * g;
    v[i] = p.beta2 * v[i] + (1.0f - p.beta2) * g * g;
    const double mhat = (double)m[i] / bc1;
    const double vhat = (double)v[i] / bc2;
    param[i] = (float)((double)param[i] - (double)p.lr * mhat / (sqrt(vhat) + (double)p.eps));
  }
}

/* The same arithmetic per element as the reference (so the results are bitwise equal), spread
 * over threads. */
void fg_adam_step(float *param, const float *grad, float *m, float *v, int64_t n,
                  fg_adam_params p, float weight_decay, int64_t t) {
  assert(t >= 1);
  const double bc1 = 1.0 - pow((double)p.beta1, (double)t);
  const double bc2 = 1.0 - pow((double)p.beta2, (double)t);
  const float b1 = p.beta1, b2 = p.beta2, c1 = 1.0f - p.beta1, c2 = 1.0f - p.beta2;
  const double lr = (double)p.lr, eps = (double)p.eps;
  FG_OMP_FOR_SIMD(n)
  for (int64_t i = 0; i < n; i++) {
    const float g = grad[i] + weight_decay * param[i];
    const float mi = b1 * m[i] + c1 * g;
    const float vi = b2 * v[i] + c2 * g * g;
    m[i] = mi;
    v[i] = vi;
    param[i] = (float)((double)param[i] - lr * ((double)mi / bc1) / (sqrt((double)vi / bc2) + eps));
  }
}
