/* fuzz_reddit.c -- libFuzzer target: the Reddit pair through fg_read_reddit_mem. An input is
 * reddit_data.npz followed by reddit_graph.npz (tests/corpus/reddit_fuzz holds such
 * concatenations): the first archive ends after its first end-of-central-directory record and
 * its comment; the rest, possibly empty, is the graph. */
#include <string.h>

#include "fuzz_check.h"

static size_t first_archive_end(const uint8_t *d, size_t n) {
  for (size_t i = 0; i + 22 <= n; i++)
    if (memcmp(d + i, "PK\x05\x06", 4) == 0) {
      size_t end = i + 22 + (size_t)(d[i + 20] | d[i + 21] << 8);
      return end <= n ? end : n;
    }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fg_raw r;
  fuzz_init();
  const size_t cut = first_archive_end(data, size);
  if (fg_read_reddit_mem(data, cut, data + cut, size - cut, "fuzz", &r) == FG_OK) {
    FUZZ_ASSERT(r.features && r.split && (r.labels != NULL) != (r.targets != NULL));
    for (int64_t k = 0; r.targets && k < r.num_nodes * r.num_tasks; k++)
      FUZZ_ASSERT(r.targets[k] >= -1 && r.targets[k] <= 1);
    fuzz_check_raw(&r);
  } else {
    fuzz_check_empty(&r);
  }
  fg_raw_free(&r);
  return 0;
}
