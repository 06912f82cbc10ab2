/* fuzz_npz.c -- libFuzzer target: .npz archives (zip container, .npy members, both layouts). */
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fg_raw r;
  fuzz_init();
  if (fg_read_npz_mem(data, size, "fuzz.npz", (int)(size % 3), &r) == FG_OK) fuzz_check_raw(&r);
  else fuzz_check_empty(&r);
  fg_raw_free(&r);
  return 0;
}
