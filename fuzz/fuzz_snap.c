/* fuzz_snap.c -- libFuzzer target: SNAP edge lists (plain or gzip). */
#include <stdlib.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fg_raw r;
  fuzz_init();
  if (fg_read_snap_mem(data, size, "fuzz.txt", &r) == FG_OK) {
    fuzz_check_raw(&r);
    /* renumbering the ids that occur: increasing file ids, every node in some edge (or a
     * refusal by the memory budget, leaving the edges as they were) */
    const int64_t span = r.num_nodes;
    const fg_status rs = fg_raw_renumber(&r);
    FUZZ_ASSERT(rs == FG_OK || (rs == FG_ERR_MEMLIMIT && !r.ids && r.num_nodes == span));
    fuzz_check_raw(&r);
    if (r.ids) {
      FUZZ_ASSERT(r.ids_inferred && r.num_nodes < span && r.id_span == span);
      for (int64_t i = 0; i < r.num_nodes; i++)
        FUZZ_ASSERT(r.ids[i] >= 0 && r.ids[i] < span && (i == 0 || r.ids[i] > r.ids[i - 1]));
      uint8_t *hit = calloc((size_t)r.num_nodes, 1);
      FUZZ_ASSERT(hit != NULL);
      for (int64_t e = 0; e < r.num_edges; e++) hit[r.src[e]] = hit[r.dst[e]] = 1;
      for (int64_t i = 0; i < r.num_nodes; i++) FUZZ_ASSERT(hit[i]);
      free(hit);
    }
  } else {
    fuzz_check_empty(&r);
  }
  fg_raw_free(&r);
  return 0;
}
