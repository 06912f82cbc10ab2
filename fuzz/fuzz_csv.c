/* fuzz_csv.c -- libFuzzer target: the OGB csv table parser (plain or gzip), with the width
 * free (-1) and fixed by the input's first byte. */
#include <stdlib.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double *v = NULL;
  int64_t rows = -1;
  fuzz_init();
  int64_t width = size > 0 && data[0] < 8 ? data[0] + 1 : -1;
  fg_status st = fg_read_csv_mem(data, size, "fuzz.csv", width, -1, &v, &rows);
  if (st == FG_OK) {
    FUZZ_ASSERT(rows >= 0 && (rows == 0 || v != NULL));
    if (width > 0)
      for (int64_t i = 0; i < rows * width; i++) FUZZ_ASSERT(isfinite(v[i]));
  } else {
    FUZZ_ASSERT(v == NULL);
    fuzz_check_message();
  }
  free(v);
  return 0;
}
