/* bench.c -- machine measurements: the STREAM triad that benchmarks and the calibration
 * compare against (fg_bench_stream_triad in the public header). */
#include <string.h>

#include "kernels/fg_kernels.h"

double fg_bench_stream_triad(int64_t n, int reps) {
  float *a = fg_malloc_aligned((size_t)n * sizeof(float));
  float *b = fg_malloc_aligned((size_t)n * sizeof(float));
  float *c = fg_malloc_aligned((size_t)n * sizeof(float));
  double best = -1.0;
  if (a && b && c) {
    memset(a, 0, (size_t)n * sizeof(float));
    memset(b, 0, (size_t)n * sizeof(float));
    memset(c, 0, (size_t)n * sizeof(float));
    for (int r = 0; r < (reps > 0 ? reps : 1); r++) {
      double t0 = fg_now(), bytes = fg_stream_triad(a, b, c, 3.0f, n), t = fg_now() - t0;
      if (t > 0 && bytes / t > best) best = bytes / t;
    }
  }
  fg_free_aligned(a);
  fg_free_aligned(b);
  fg_free_aligned(c);
  return best;
}
