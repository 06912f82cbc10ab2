/* fuzz_check.h -- shared by the fuzz targets: what a reader's successful result must satisfy.
 * A violation traps, so libFuzzer reports it like a crash. */
#ifndef FG_FUZZ_CHECK_H
#define FG_FUZZ_CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fg_core.h"
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
  fg_error_clear(); /* a failure must set its own message, not leave the last input's */
  if (!done) {
    fg_io_set_alloc_limit((int64_t)64 << 20);
    done = 1;
  }
}

/* Multi-label: node i has a target that is not missing. */
static inline int fuzz_has_target(const fg_raw *r, int64_t i) {
  for (int64_t t = 0; r->targets && t < r->num_tasks; t++)
    if (r->targets[i * r->num_tasks + t] >= 0) return 1;
  return 0;
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
      FUZZ_ASSERT(r->split[i] == FG_SPLIT_NONE || (r->labels && r->labels[i] >= 0) ||
                  fuzz_has_target(r, i));
    }
}

/* A refusal's message is what the CLI prints: it must be valid UTF-8 without control characters
 * (C0, DEL, C1), so that no input can put terminal escape sequences on the screen (file text goes
 * through fg_printable). Call it after a failed read. */
static inline void fuzz_check_message(void) {
  const unsigned char *m = (const unsigned char *)fg_last_error();
  FUZZ_ASSERT(m[0] != '\0');
  for (size_t i = 0; m[i];) {
    unsigned cp = m[i], more = 0;
    if (cp >= 0xf0 && cp < 0xf5) more = 3, cp &= 0x07;
    else if (cp >= 0xe0 && cp < 0xf0) more = 2, cp &= 0x0f;
    else if (cp >= 0xc2 && cp < 0xe0) more = 1, cp &= 0x1f;
    else FUZZ_ASSERT(cp < 0x80);
    for (unsigned k = 1; k <= more; k++) {
      FUZZ_ASSERT((m[i + k] & 0xc0) == 0x80);
      cp = cp << 6 | (m[i + k] & 0x3fu);
    }
    FUZZ_ASSERT(cp >= 0x20 && !(cp >= 0x7f && cp < 0xa0));
    i += 1 + more;
  }
}

static inline void fuzz_check_empty(const fg_raw *r) {
  FUZZ_ASSERT(!r->src && !r->dst && !r->features && !r->labels && !r->split);
  fuzz_check_message();
}

#endif
