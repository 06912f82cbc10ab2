/* fuzz_scipy.c -- libFuzzer target: scipy.sparse .npz archives (format, shape, data, indptr +
 * indices or row + col) through fg_read_scipy_sparse_mem, the reader GraphSAINT's adj_full.npz
 * and Reddit's graph share. */
#include "fuzz_check.h"
#include "io/fg_io_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fg_raw r;
  fuzz_init();
  if (fg_read_scipy_sparse_mem(data, size, "fuzz.npz", 0.0, &r) == FG_OK) {
    FUZZ_ASSERT(r.directed == 1 && !r.features && !r.labels && !r.split);
    fuzz_check_raw(&r);
  } else {
    fuzz_check_empty(&r);
  }
  fg_raw_free(&r);
  return 0;
}
