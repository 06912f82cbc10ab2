/* test_fingerprint.c -- fg_hash64 and the dataset fingerprint checkpoints record: the hash is
 * the one fg_hash.h defines (checked against a word-by-word reading of that definition, and
 * pinned to fixed values, since checkpoints on disk hold them), does not depend on the thread
 * count, and tells apart inputs that differ in one bit or one byte of length; the fingerprint
 * of Cora is the same for a copy and names the part that differs. */
#include <stdlib.h>
#include <string.h>

#include "core/fg_hash.h"
#include "graph/fg_graph.h"
#include "testutil.h"

/* ---- fg_hash.h's definition, read literally ---- */

static uint64_t ref_rotl(uint64_t x, unsigned r) { return r ? (x << r) | (x >> (64 - r)) : x; }

static uint64_t ref_mix(uint64_t x) {
  x ^= x >> 31;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 29;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 32;
  return x;
}

static uint64_t ref_chunk(const unsigned char *c, size_t len, uint64_t i) {
  const uint64_t K1 = UINT64_C(0x9e3779b97f4a7c15), K2 = UINT64_C(0xbf58476d1ce4e5b9);
  uint64_t a[4], h = len;
  for (int j = 0; j < 4; j++) a[j] = ref_mix(4 * i + (uint64_t)j + 1) * K1;
  for (size_t k = 0; 8 * k < len; k++) {
    uint64_t w = 0;
    for (size_t b = 0; b < 8 && 8 * k + b < len; b++) w |= (uint64_t)c[8 * k + b] << (8 * b);
    a[k % 4] = ref_rotl(a[k % 4] + w * K2, 29) * K1;
  }
  for (int j = 0; j < 4; j++) h = ref_mix(h ^ ref_rotl(a[j], 16u * (unsigned)j)) * K1;
  return h;
}

static uint64_t ref_hash(const unsigned char *p, size_t n, uint64_t seed) {
  uint64_t h = ref_mix(seed ^ n ^ UINT64_C(0x9e3779b97f4a7c15));
  for (size_t off = 0, i = 0; off < n; off += FG_HASH_CHUNK, i++) {
    const size_t len = n - off < FG_HASH_CHUNK ? n - off : FG_HASH_CHUNK;
    h = ref_mix(h + ref_chunk(p + off, len, i)) * UINT64_C(0xbf58476d1ce4e5b9);
  }
  return ref_mix(h);
}

static void test_hash(void) {
  /* three chunks and a ragged end, so the lanes, the tail and the chunk order all count */
  const size_t n = 2 * FG_HASH_CHUNK + 4093;
  unsigned char *p = malloc(n);
  uint64_t h1, h2;
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)((i * 2654435761u) >> 13);
  for (size_t len = 0; len < 80; len++)
    EXPECT_MSG(fg_hash64(p, len, 9) == ref_hash(p, len, 9), "%zu bytes", len);
  EXPECT(fg_hash64(p, n, 5) == ref_hash(p, n, 5));
  EXPECT(fg_hash64(p, FG_HASH_CHUNK, 5) == ref_hash(p, FG_HASH_CHUNK, 5));
  /* the thread count does not matter */
  fg_set_threads(1);
  h1 = fg_hash64(p, n, 1);
  fg_set_threads(2);
  h2 = fg_hash64(p, n, 1);
  EXPECT(h1 == h2);
  /* a bit, a byte of length, the seed, two chunks swapped: all change it */
  p[n - 1] ^= 1;
  EXPECT(fg_hash64(p, n, 1) != h1);
  p[n - 1] ^= 1;
  EXPECT(fg_hash64(p, n - 1, 1) != h1 && fg_hash64(p, n, 2) != h1);
  {
    unsigned char *q = malloc(n);
    memcpy(q, p + FG_HASH_CHUNK, FG_HASH_CHUNK);
    memcpy(q + FG_HASH_CHUNK, p, FG_HASH_CHUNK);
    memcpy(q + 2 * FG_HASH_CHUNK, p + 2 * FG_HASH_CHUNK, n - 2 * FG_HASH_CHUNK);
    EXPECT(fg_hash64(q, n, 1) != h1);
    free(q);
  }
  /* the two halves parallel prepare hashes pieces with: the chunks' values folded in order */
  for (size_t len = 0; len <= n; len += n / 3 + 7) {
    const size_t chunks = (len + FG_HASH_CHUNK - 1) / FG_HASH_CHUNK;
    uint64_t v[8];
    for (size_t c = 0; c < chunks; c++)
      v[c] = fg_hash64_chunk(p + c * FG_HASH_CHUNK,
                             len - c * FG_HASH_CHUNK < FG_HASH_CHUNK ? len - c * FG_HASH_CHUNK
                                                                     : FG_HASH_CHUNK,
                             c);
    EXPECT_MSG(fg_hash64_fold(3, len, v, chunks) == fg_hash64(p, len, 3), "%zu bytes", len);
  }
  /* zero bytes are not nothing */
  memset(p, 0, 16);
  EXPECT(fg_hash64(p, 8, 0) != fg_hash64(p, 0, 0) && fg_hash64(p, 16, 0) != fg_hash64(p, 8, 0));
  /* pinned: checkpoints written by earlier builds hold values of this very function */
  EXPECT_MSG(fg_hash64(NULL, 0, 0) == UINT64_C(0x65d9cbf130f4017c), "%016llx",
             (unsigned long long)fg_hash64(NULL, 0, 0));
  EXPECT_MSG(fg_hash64("fullgraph", 9, 4) == UINT64_C(0x34c41d05c5b143d7), "%016llx",
             (unsigned long long)fg_hash64("fullgraph", 9, 4));
  free(p);
}

static void test_dataset_fingerprint(void) {
  fg_dataset *ds = NULL;
  fg_ds_fingerprint a, b;
  fg_load_config c = fg_load_config_default();
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &c, &ds));
  if (!ds) return;
  fg_dataset_fingerprint(ds, &a);
  EXPECT(a.nodes == 2708 && a.entries == 13264 && a.features == 1433 && a.classes == 7);
  fg_dataset_fingerprint(ds, &b);
  EXPECT(memcmp(&a, &b, sizeof a) == 0);
  /* one label changed: the labels' hash alone moves */
  ds->labels[100] = (ds->labels[100] + 1) % 7;
  fg_dataset_fingerprint(ds, &b);
  EXPECT(b.labels != a.labels && b.graph == a.graph && b.feature_hash == a.feature_hash &&
         b.split == a.split);
  ds->labels[100] = (ds->labels[100] + 6) % 7;
  /* one feature, one split entry, one column id */
  ds->features[5] += 1.0f;
  fg_dataset_fingerprint(ds, &b);
  EXPECT(b.feature_hash != a.feature_hash && b.labels == a.labels);
  ds->features[5] -= 1.0f;
  ds->split[7] = (int8_t)(ds->split[7] == FG_SPLIT_TEST ? FG_SPLIT_TRAIN : FG_SPLIT_TEST);
  fg_dataset_fingerprint(ds, &b);
  EXPECT(b.split != a.split && b.feature_hash == a.feature_hash);
  ds->adj.col[0]++;
  fg_dataset_fingerprint(ds, &b);
  EXPECT(b.graph != a.graph);
  fg_dataset_destroy(&ds);
}

int main(void) {
  test_hash();
  test_dataset_fingerprint();
  return fg_test_finish("test_fingerprint");
}
