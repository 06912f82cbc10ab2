/* fuzz_mtx.c -- libFuzzer target: Matrix Market files (plain or gzip). */
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fg_raw r;
  fuzz_init();
  if (fg_read_mtx_mem(data, size, "fuzz.mtx", &r) == FG_OK) fuzz_check_raw(&r);
  else fuzz_check_empty(&r);
  fg_raw_free(&r);
  return 0;
}
