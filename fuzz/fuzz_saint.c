/* fuzz_saint.c -- libFuzzer target: GraphSAINT's class_map.json and role.json (the strict JSON
 * reader, class ids and 0/1 lists, role lists) over 6 nodes. An input with a NUL byte is
 * class_map, NUL, role; without one (the corpus's files) the whole input is tried as both. */
#include <string.h>

#include "fuzz_check.h"

/* A successful read: labels or targets (not both), every node labelled (class_map names every
 * node), a split of roles whose nodes are labelled. */
static void check_maps(const fg_raw *r) {
  FUZZ_ASSERT(r->num_nodes == 6 && !r->src && !r->features);
  FUZZ_ASSERT((r->labels != NULL) != (r->targets != NULL));
  if (r->labels) {
    FUZZ_ASSERT(r->num_tasks == 0 && r->num_classes > 0);
    for (int64_t i = 0; i < 6; i++)
      FUZZ_ASSERT(r->labels[i] >= 0 && r->labels[i] < r->num_classes);
  } else {
    FUZZ_ASSERT(r->num_tasks > 0 && r->num_classes == 0);
    for (int64_t i = 0; i < 6 * r->num_tasks; i++)
      FUZZ_ASSERT(r->targets[i] == 0 || r->targets[i] == 1);
  }
  FUZZ_ASSERT(r->split != NULL);
  for (int64_t i = 0; i < 6; i++)
    FUZZ_ASSERT(r->split[i] >= FG_SPLIT_NONE && r->split[i] <= FG_SPLIT_TEST);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fg_raw r;
  fuzz_init();
  const uint8_t *nul = memchr(data, 0, size);
  const size_t cm_len = nul ? (size_t)(nul - data) : size;
  const uint8_t *role = nul ? nul + 1 : data;
  const size_t role_len = nul ? size - cm_len - 1 : size;
  if (fg_read_saint_maps_mem(data, cm_len, role, role_len, 6, &r) == FG_OK) {
    check_maps(&r);
  } else {
    FUZZ_ASSERT(!r.labels && !r.targets && !r.split);
    fuzz_check_message();
  }
  fg_raw_free(&r);
  return 0;
}
