/* hash.c -- fg_hash64 (defined in fg_hash.h): 1 MiB chunks hashed independently, four lanes of
 * multiply-rotate a chunk, the chunks' values combined in order. */
#include <stdlib.h>
#include <string.h>

#include "core/fg_hash.h"

#define K1 UINT64_C(0x9e3779b97f4a7c15)
#define K2 UINT64_C(0xbf58476d1ce4e5b9)
#define K3 UINT64_C(0x94d049bb133111eb)
#define FG_MIN_SIZE(a, b) ((a) < (b) ? (a) : (b))

static inline uint64_t rotl(uint64_t x, unsigned r) {
  return (x << r) | (x >> ((64u - r) & 63u));
}

static inline uint64_t mix(uint64_t x) {
  x ^= x >> 31;
  x *= K2;
  x ^= x >> 29;
  x *= K3;
  x ^= x >> 32;
  return x;
}

/* 8 bytes as a little-endian word, whatever the host's order */
static inline uint64_t word_le(const unsigned char *p) {
  const uint16_t one = 1;
  uint64_t w;
  memcpy(&w, p, 8);
  if (*(const unsigned char *)&one != 1) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = v << 8 | p[k];
    w = v;
  }
  return w;
}

static inline uint64_t lane(uint64_t a, uint64_t w) { return rotl(a + w * K2, 29) * K1; }

/* chunk(c, i) of fg_hash.h over p[0, n), n <= FG_HASH_CHUNK */
static uint64_t chunk_hash(const unsigned char *p, size_t n, uint64_t i) {
  uint64_t a[4], h = (uint64_t)n;
  size_t off = 0;
  int j = 0;
  for (int k = 0; k < 4; k++) a[k] = mix(i * 4 + (uint64_t)k + 1) * K1;
  for (; off + 32 <= n; off += 32) {
    a[0] = lane(a[0], word_le(p + off));
    a[1] = lane(a[1], word_le(p + off + 8));
    a[2] = lane(a[2], word_le(p + off + 16));
    a[3] = lane(a[3], word_le(p + off + 24));
  }
  for (; off + 8 <= n; off += 8, j++) a[j] = lane(a[j], word_le(p + off));
  if (off < n) {
    unsigned char last[8] = {0};
    memcpy(last, p + off, n - off);
    a[j] = lane(a[j], word_le(last));
  }
  for (int k = 0; k < 4; k++) h = mix(h ^ rotl(a[k], 16u * (unsigned)k)) * K1;
  return h;
}

uint64_t fg_hash64_chunk(const void *p, size_t n, uint64_t i) { return chunk_hash(p, n, i); }

uint64_t fg_hash64_fold(uint64_t seed, size_t total, const uint64_t *v, size_t count) {
  uint64_t h = mix(seed ^ (uint64_t)total ^ K1);
  for (size_t i = 0; i < count; i++) h = mix(h + v[i]) * K2;
  return mix(h);
}

uint64_t fg_hash64(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data;
  const size_t chunks = (n + FG_HASH_CHUNK - 1) / FG_HASH_CHUNK;
  uint64_t h = mix(seed ^ (uint64_t)n ^ K1);
  uint64_t *v = chunks > 1 ? malloc(chunks * sizeof *v) : NULL;
  if (v) {
    /* the chunks in parallel, combined below in their order: the same for any thread count */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (size_t i = 0; i < chunks; i++) {
      const size_t off = i * FG_HASH_CHUNK;
      v[i] = chunk_hash(p + off, FG_MIN_SIZE(FG_HASH_CHUNK, n - off), (uint64_t)i);
    }
    for (size_t i = 0; i < chunks; i++) h = mix(h + v[i]) * K2;
    free(v);
  } else {
    /* one chunk, or no memory for the table: one after the other, the same value */
    for (size_t i = 0; i < chunks; i++) {
      const size_t off = i * FG_HASH_CHUNK;
      h = mix(h + chunk_hash(p + off, FG_MIN_SIZE(FG_HASH_CHUNK, n - off), (uint64_t)i)) * K2;
    }
  }
  return mix(h);
}
