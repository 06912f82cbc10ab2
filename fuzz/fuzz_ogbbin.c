/* fuzz_ogbbin.c -- libFuzzer target: OGB's binary raw layout, raw/data.npz and
 * raw/node-label.npz (zip container, .npy members, edge_index and counts, float16/32/64
 * features, labels with NaN, multi-label targets). An input starting with a 4-byte little-endian
 * length L that fits is data.npz = the L bytes after it and node-label.npz = the rest (none when
 * empty); any other input (the corpus's data.npz files) is data.npz alone. */
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fg_raw r;
  fuzz_init();
  const uint8_t *d = data, *l = NULL;
  size_t dlen = size, llen = 0;
  if (size >= 4) {
    const size_t L = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
                     (size_t)data[3] << 24;
    if (L <= size - 4) {
      d = data + 4;
      dlen = L;
      l = data + 4 + L;
      llen = size - 4 - L;
      if (llen == 0) l = NULL;
    }
  }
  if (fg_read_ogb_npz_mem(d, dlen, l, llen, "fuzz", &r) == FG_OK) {
    FUZZ_ASSERT(!r.split && (!r.labels || !r.targets));
    if (r.targets) {
      FUZZ_ASSERT(r.num_tasks > 1 && r.num_classes == 0);
      for (int64_t i = 0; i < r.num_nodes * r.num_tasks; i++)
        FUZZ_ASSERT(r.targets[i] >= -1 && r.targets[i] <= 1);
      free(r.targets); /* the rest as any reader's result */
      r.targets = NULL;
      r.num_tasks = 0;
    }
    fuzz_check_raw(&r);
  } else {
    FUZZ_ASSERT(!r.targets);
    fuzz_check_empty(&r);
  }
  fg_raw_free(&r);
  return 0;
}
