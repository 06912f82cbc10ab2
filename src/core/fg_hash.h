/* fg_hash.h -- a fast 64-bit hash of a byte string, the same on every platform and for every
 * thread count (hash.c). Not cryptographic: it tells datasets apart, it does not resist an
 * adversary who wants two to collide.
 *
 * Definition (all arithmetic mod 2^64; rotl = rotate left; words are 8 bytes read
 * little-endian; K1 = 0x9e3779b97f4a7c15, K2 = 0xbf58476d1ce4e5b9, K3 = 0x94d049bb133111eb):
 *   mix(x):       x ^= x >> 31; x *= K2; x ^= x >> 29; x *= K3; x ^= x >> 32
 *   chunk(c, i):  a piece c of at most FG_HASH_CHUNK bytes, the i-th (from 0): four lanes
 *                 a_j = mix(4 i + j + 1) * K1 (j = 0..3); word k of c (the last 1 to 7 bytes
 *                 zero-padded to a word) updates lane k mod 4: a = rotl(a + w * K2, 29) * K1;
 *                 then h = |c| (bytes); for j = 0..3: h = mix(h ^ rotl(a_j, 16 j)) * K1
 *   fg_hash64(p, n, seed): h = mix(seed ^ n ^ K1); for each chunk i of p (FG_HASH_CHUNK
 *                 bytes each, the last one shorter, none when n = 0):
 *                 h = mix(h + chunk(c_i, i)) * K2; the result is mix(h).
 * The chunks are independent, so they are hashed in parallel (OpenMP) and combined in order. */
#ifndef FG_HASH_H
#define FG_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FG_HASH_CHUNK ((size_t)1 << 20)

uint64_t fg_hash64(const void *p, size_t n, uint64_t seed);
/* The two halves of the definition, for a string held in pieces on several ranks (parallel
 * `prepare`): chunk(c, i) of the i-th chunk's bytes p[0, n), and the result from the chunks'
 * values v[0, count) of a string of total bytes. fg_hash64 is fg_hash64_fold(seed, n, values of
 * its chunks). */
uint64_t fg_hash64_chunk(const void *p, size_t n, uint64_t i);
uint64_t fg_hash64_fold(uint64_t seed, size_t total, const uint64_t *v, size_t count);

#endif /* FG_HASH_H */
