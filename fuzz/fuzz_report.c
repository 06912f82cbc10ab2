/* fuzz_report.c -- libFuzzer target: `fullgraph report`'s JSON parser (tools/report_json.c) on
 * one line, and what the page does with a parsed line's text and numbers (tools/report_svg.c):
 * every string escaped for XML holds no markup or control byte, every tick set is ascending,
 * round and covers its range. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(c) \
  do {                 \
    if (!(c)) __builtin_trap(); \
  } while (0)

static void check_text(const char *s, size_t n) {
  rs_buf b = {0};
  rs_text_n(&b, s, n);
  FUZZ_ASSERT(!b.failed);
  for (size_t i = 0; i < b.len; i++) {
    const unsigned char c = (unsigned char)b.data[i];
    FUZZ_ASSERT(c >= 0x20 && c != 0x7f && c != '<' && c != '>' && c != '"' && c != '\'');
  }
  rs_free(&b);
}

static void check_ticks(double lo, double hi) {
  double t[RS_MAX_TICKS], a, z;
  const int n = rs_nice_ticks(lo, hi, 6, 0, t, &a, &z);
  FUZZ_ASSERT(n >= 1 && n <= RS_MAX_TICKS);
  for (int k = 1; k < n; k++) FUZZ_ASSERT(t[k] > t[k - 1]);
  /* the ticks cover the range, up to the rounding rs_nice_ticks allows (1e-9 of a step: a value
   * a hair below a round tick starts the axis at that tick) */
  if (hi > lo && isfinite(hi - lo)) {
    const double tol = n > 1 ? 1e-6 * (t[1] - t[0]) : 0;
    FUZZ_ASSERT(a <= lo + tol && z >= hi - tol && a == t[0] && z >= t[n - 1] - tol);
  }
}

static void walk(const rj_value *v, int depth, double *prev) {
  FUZZ_ASSERT(depth <= RJ_MAX_DEPTH + 1);
  switch (v->kind) {
    case RJ_STRING: check_text(v->string, v->len); break;
    case RJ_NUMBER:
      FUZZ_ASSERT(isfinite(v->number));
      /* a range from two numbers the file holds, as a chart would get them (kept moderate:
       * the charts' values are seconds, bytes, accuracies) */
      if (fabs(v->number) < 1e15 && fabs(*prev) < 1e15)
        check_ticks(fmin(*prev, v->number), fmax(*prev, v->number));
      *prev = v->number;
      break;
    case RJ_ARRAY:
    case RJ_OBJECT:
      for (size_t k = 0; k < v->len; k++) {
        if (v->kind == RJ_OBJECT) check_text(v->keys[k], strlen(v->keys[k]));
        walk(&v->items[k], depth + 1, prev);
      }
      break;
    default: break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rj_value v;
  rj_error err;
  double prev = 0;
  if (rj_parse((const char *)data, size, &v, &err) != 0) {
    FUZZ_ASSERT(err.offset <= size && err.msg[0] != '\0');
    check_text(err.msg, strlen(err.msg));
    return 0;
  }
  walk(&v, 0, &prev);
  rj_free(&v);
  return 0;
}
