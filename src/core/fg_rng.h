/* fg_rng.h -- counter-based random numbers.
 *
 * Every draw is a pure function of (seed, purpose, a, b, c, d): no generator state, so a
 * graph split over any number of ranks or threads draws exactly the same numbers.
 * Convention for (a, b, c, d) per purpose:
 *   FG_RNG_INIT      (layer, row, col, 0)
 *   FG_RNG_DROPOUT   (epoch, layer, global node id, col)
 *   FG_RNG_FEATURES  (global node id, col, 0, 0)
 *   FG_RNG_LABELS    (global node id, 0, 0, 0)
 *   FG_RNG_SPLIT     (global node id, 0, 0, 0)
 *   FG_RNG_RMAT      (edge index, level, 0, 0)
 *   FG_RNG_PERMUTE   (index, round, 0, 0)
 */
#ifndef FG_RNG_H
#define FG_RNG_H

#include <stdint.h>

enum {
  FG_RNG_INIT = 1,
  FG_RNG_DROPOUT = 2,
  FG_RNG_FEATURES = 3,
  FG_RNG_LABELS = 4,
  FG_RNG_SPLIT = 5,
  FG_RNG_RMAT = 6,
  FG_RNG_PERMUTE = 7,
  FG_RNG_QUANTIZE = 8,
  FG_RNG_LABEL_PROP = 9
};

static inline uint64_t fg_mix64(uint64_t z) {
  /* the splitmix64 finalizer: a bijection with full avalanche */
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The draw is a chain of mixes; the prefix over (seed, purpose, a, b, c) can be hoisted out of
 * an inner loop over d: fg_rng_u64(s, p, a, b, c, d) == fg_rng_last(fg_rng_prefix(s, p, a, b, c), d). */
static inline uint64_t fg_rng_prefix(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b,
                                     uint64_t c) {
  uint64_t h = fg_mix64(seed + 0x9e3779b97f4a7c15ULL * (purpose + 1));
  h = fg_mix64(h ^ (a + 0x632be59bd9b4e019ULL));
  h = fg_mix64(h ^ (b + 0x8cb92ba72f3d8dd7ULL));
  return fg_mix64(h ^ (c + 0xd6e8feb86659fd93ULL));
}

static inline uint64_t fg_rng_last(uint64_t prefix, uint64_t d) {
  return fg_mix64(prefix ^ (d + 0xa0761d6478bd642fULL));
}

static inline uint64_t fg_rng_u64(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b,
                                  uint64_t c, uint64_t d) {
  return fg_rng_last(fg_rng_prefix(seed, purpose, a, b, c), d);
}

/* Dropout masks. Element (gid, col) of layer `layer` in `epoch` is kept when the 16-bit field
 * col % 4 of fg_rng_u64(seed, FG_RNG_DROPOUT, epoch, layer, gid, col / 4) is at least
 * fg_dropout_threshold(p): one draw serves four columns. The keep probability is
 * 1 - floor(65536 p) / 65536, within 1.6e-5 of 1 - p. */
static inline uint32_t fg_dropout_threshold(float p) {
  return (uint32_t)((double)p * 65536.0);
}

static inline uint64_t fg_dropout_row_key(uint64_t seed, uint64_t epoch, uint64_t layer,
                                          uint64_t gid) {
  return fg_rng_prefix(seed, FG_RNG_DROPOUT, epoch, layer, gid);
}

static inline int fg_dropout_keep(uint64_t row_key, uint64_t col, uint32_t threshold) {
  const uint64_t h = fg_rng_last(row_key, col >> 2);
  return ((h >> (16 * (col & 3))) & 0xffffu) >= threshold;
}

/* Uniform in [0, 1) with 24 random bits (exact in float). */
static inline float fg_rng_uniform(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b,
                                   uint64_t c, uint64_t d) {
  return (float)(fg_rng_u64(seed, purpose, a, b, c, d) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double fg_rng_uniform_d(uint64_t seed, uint64_t purpose, uint64_t a, uint64_t b,
                                      uint64_t c, uint64_t d) {
  return (double)(fg_rng_u64(seed, purpose, a, b, c, d) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* FG_RNG_H */
