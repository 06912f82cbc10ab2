/* fuzz_check.h -- shared by the fuzz targets: what a reader's successful result must satisfy.
 * A violation traps, so libFuzzer reports it like a crash. */
#ifndef FG_FUZZ_CHECK_H
#define FG_FUZZ_CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "io/fg_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(c) \
  do {                 \
    if (!(c)) __builtin_trap(); \
  } while (0)

/* Readers cap buffers sized from unverifiable declarations (libFuzzer's malloc limit would
 * report them as crashes). */
static inline void fuzz_init(void) {
  static int done = 0;
  if (!done) {
    fg_io_set_alloc_limit((int64_t)64 << 20);
    done = 1;
  }
}

static inline void fuzz_check_raw(const fg_raw *r) {
  FUZZ_ASSERT(r->num_nodes > 0 && r->num_nodes <= INT64_C(2147483647));
  FUZZ_ASSERT(r->num_edges >= 0);
  FUZZ_ASSERT(r->num_edges == 0 || (r->src && r->dst));
  for (int64_t e = 0; e < r->num_edges; e++) {
    FUZZ_ASSERT(r->src[e] >= 0 && r->src[e] < r->num_nodes);
    FUZZ_ASSERT(r->dst[e] >= 0 && r->dst[e] < r->num_nodes);
  }
  FUZZ_ASSERT((r->features != NULL) == (r->num_features > 0));
  if (r->features)
    for (int64_t i = 0; i < r->num_nodes * r->num_features; i++)
      FUZZ_ASSERT(isfinite(r->features[i]));
  if (r->labels) {
    for (int64_t i = 0; i < r->num_nodes; i++)
      FUZZ_ASSERT(r->labels[i] >= -1 && r->labels[i] < r->num_classes);
  } else {
    FUZZ_ASSERT(r->num_classes == 0);
  }
  if (r->split)
    for (int64_t i = 0; i < r->num_nodes; i++) {
      FUZZ_ASSERT(r->split[i] >= FG_SPLIT_NONE && r->split[i] <= FG_SPLIT_TEST);
      FUZZ_ASSERT(r->split[i] == FG_SPLIT_NONE || (r->labels && r->labels[i] >= 0));
    }
}

static inline void fuzz_check_empty(const fg_raw *r) {
  FUZZ_ASSERT(!r->src && !r->dst && !r->features && !r->labels && !r->split);
}

#endif
