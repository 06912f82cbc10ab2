/* fg_core.h -- internal foundations: status propagation, allocation, timers, logging.
 * Every fallible internal function returns fg_status and keeps one `cleanup:` label:
 *
 *   fg_status f(...) {
 *     fg_status st = FG_OK;
 *     float *buf = NULL;
 *     FG_REQUIRE(n > 0, FG_ERR_INVALID_ARG, "n must be positive, got %d", n);
 *     FG_ALLOC(buf, n);
 *     FG_CHECK(g(buf));
 *   cleanup:
 *     free(buf);
 *     return st;
 *   }
 */
#ifndef FG_CORE_H
#define FG_CORE_H

#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fullgraph.h"

#if defined(__GNUC__)
#define FG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FG_PRINTF(a, b)
#endif

/* Record a failure: message (printf-style) and where it was raised. Returns code. */
fg_status fg_error_set(fg_status code, const char *file, int line, const char *fmt, ...)
    FG_PRINTF(4, 5);
/* Append a file:line to the trace of the current failure (on propagation). */
void fg_error_trace(const char *file, int line);
/* Forget the last failure. */
void fg_error_clear(void);
/* Replace the message (used when ranks agree on one rank's message). */
void fg_error_adopt(fg_status code, const char *msg);
/* 1 if the current message came from fg_error_adopt (0 after fg_error_set or clear). */
int fg_error_is_adopted(void);

/* Bytes read from a file, made safe to quote in a message: s[0, n) copied into out[cap] with
 * printable ASCII (0x20..0x7e) kept, a backslash written "\\" and every other byte (control
 * bytes such as ESC, DEL, NUL, anything non-ASCII) written "\xNN", so no file can put terminal
 * escape sequences on the user's screen. If that does not fit in cap - 1 bytes, the text is cut
 * after a whole character and ends in "…" (3 bytes, so within cap). Always NUL-terminates
 * (cap > 0); returns out. Every reader quotes file content through this (directly or through
 * io/'s fg_token_text). */
const char *fg_printable(const char *s, size_t n, char *out, size_t cap);

#define FG_FAIL(code, ...)                                          \
  do {                                                              \
    st = fg_error_set((code), __FILE__, __LINE__, __VA_ARGS__);     \
    goto cleanup;                                                   \
  } while (0)

#define FG_REQUIRE(cond, code, ...)      \
  do {                                   \
    if (!(cond)) FG_FAIL(code, __VA_ARGS__); \
  } while (0)

#define FG_CHECK(call)                       \
  do {                                       \
    st = (call);                             \
    if (st != FG_OK) {                       \
      fg_error_trace(__FILE__, __LINE__);    \
      goto cleanup;                          \
    }                                        \
  } while (0)

/* Allocate n elements of *ptr's type, checking for overflow and failure. */
void *fg_malloc_array(size_t n, size_t size);
void *fg_calloc_array(size_t n, size_t size);
#define FG_ALLOC_WITH(fn, ptr, n)                                                     \
  do {                                                                                \
    (ptr) = fn((size_t)(n), sizeof(*(ptr)));                                          \
    if (!(ptr) && (size_t)(n) > 0)                                                    \
      FG_FAIL(FG_ERR_NOMEM, "out of memory allocating %zu x %zu bytes", (size_t)(n),  \
              sizeof(*(ptr)));                                                        \
  } while (0)
#define FG_ALLOC(ptr, n) FG_ALLOC_WITH(fg_malloc_array, ptr, n)
#define FG_CALLOC(ptr, n) FG_ALLOC_WITH(fg_calloc_array, ptr, n)

/* Cache-line aligned allocation for dense matrices; free with fg_free_aligned. */
void *fg_malloc_aligned(size_t bytes);
void fg_free_aligned(void *p);
/* A dense matrix the SpMM gathers rows from at random: from 8 MiB up aligned to 2 MiB and
 * offered transparent huge pages (madvise; with 4 KiB pages nearly every gather misses the
 * TLB), smaller ones cache-line aligned. NULL when out of memory; release with free(). */
void *fg_malloc_huge(size_t bytes);

/* Bytes of last-level cache one process can count on for its SpMM's gathers: the L3 size the
 * C library reports, at most FG_CACHE_MAX_BYTES (a virtual machine reports its host's whole
 * L3, 512 MiB on the benchmark machine, while one core complex shares 32 MiB), and
 * FG_CACHE_MAX_BYTES when nothing is reported. */
#define FG_CACHE_MAX_BYTES ((int64_t)32 << 20)
int64_t fg_cache_bytes(void);

/* Wall-clock seconds (monotonic). */
double fg_now(void);

/* Peak resident set size of this process in bytes (0 if unknown). */
int64_t fg_peak_rss_bytes(void);

/* "1.23 GB" / "456 MB" / "789 kB" / "12 B" into buf (powers of 1000). */
const char *fg_format_bytes(double bytes, char *buf, size_t len);
/* (fg_available_memory, MemAvailable of /proc/meminfo, is public: fullgraph.h.) */

/* Number of OpenMP threads a parallel region would use (1 without OpenMP). */
int fg_max_threads(void);
/* Forget a stop request (fg_request_stop) once fg_train has acted on it. */
void fg_stop_clear(void);

/* The balanced cut of n items into `parts` contiguous blocks, the first n % parts of them one
 * item longer: where block i starts (i in [0, parts]), its size, and the block of item k. Every
 * layout, task split and grid of the project cuts this way. */
static inline int64_t fg_block_start(int64_t n, int64_t parts, int64_t i) {
  return (n / parts) * i + (i < n % parts ? i : n % parts);
}
static inline int64_t fg_block_size(int64_t n, int64_t parts, int64_t i) {
  return fg_block_start(n, parts, i + 1) - fg_block_start(n, parts, i);
}
static inline int fg_block_of(int64_t n, int64_t parts, int64_t k) {
  const int64_t q = n / parts, r = n % parts;
  return k < r * (q + 1) ? (int)(k / (q + 1)) : (int)(r + (k - r * (q + 1)) / q);
}

/* A row maximum and the column it is in: what a row reduction over a column split carries
 * (MPI_FLOAT_INT's layout; dist/ reduces it with MPI_MAXLOC, kernels/ computes it). */
typedef struct fg_maxloc {
  float val;
  int idx;
} fg_maxloc;

#define FG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FG_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif /* FG_CORE_H */
