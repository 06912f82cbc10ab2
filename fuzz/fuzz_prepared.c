/* fuzz_prepared.c -- libFuzzer target: a prepared dataset's manifest (fg_prep_manifest_parse).
 * Each input is read as given (the CRC-32 refuses nearly every mutation) and again with its
 * last 4 bytes made the right CRC-32, so that the checks behind the checksum are reached. What
 * it accepts must hold up: boundaries from 0 to n, block counts summing to nnz, a file table of
 * exactly this layout's names (no path leaves the directory) and sizes, and its encoding is the
 * input's bytes. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_check.h"
#include "io/fg_prepared.h"

#define FIX_MAX ((size_t)1 << 20)

static void read_one(const unsigned char *buf, size_t len) {
  fg_prep_manifest m;
  unsigned char *enc = NULL;
  size_t elen = 0;
  int64_t sum = 0;
  fg_status st = fg_prep_manifest_parse(buf, len, "fuzz.fgprep", &m);
  if (st != FG_OK) {
    FUZZ_ASSERT(st == FG_ERR_FORMAT || st == FG_ERR_NOMEM);
    return;
  }
  FUZZ_ASSERT(m.B >= 1 && m.offs[0] == 0 && m.offs[m.B] == m.n);
  for (int64_t i = 0; i < m.B; i++) FUZZ_ASSERT(m.offs[i] <= m.offs[i + 1]);
  for (int64_t b = 0; b < m.B * m.B; b++) sum += m.block_nnz[b];
  FUZZ_ASSERT(sum == m.nnz);
  for (int64_t k = 0; k < m.nfiles; k++) {
    FUZZ_ASSERT(memchr(m.files[k].name, '\0', FG_PREP_NAME_BYTES) != NULL);
    FUZZ_ASSERT(!strchr(m.files[k].name, '/'));
  }
  FUZZ_ASSERT(fg_prep_manifest_encode(&m, &enc, &elen) == FG_OK);
  FUZZ_ASSERT(elen == len && memcmp(enc, buf, len) == 0);
  free(enc);
  fg_prep_manifest_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_init();
  read_one(data, size);
  if (size >= 8 && size <= FIX_MAX) {
    unsigned char *fixed = malloc(size);
    if (!fixed) return 0;
    memcpy(fixed, data, size);
    const uLong c = crc32(0L, fixed, (uInt)(size - 4));
    for (int k = 0; k < 4; k++) fixed[size - 4 + k] = (unsigned char)(c >> (8 * k));
    read_one(fixed, size);
    free(fixed);
  }
  return 0;
}
