/* testutil.h -- tiny test harness: every failed expectation prints file:line and makes the
 * test exit nonzero; fg_test_skip() exits 77 (ctest reports it as skipped). */
#ifndef FG_TESTUTIL_H
#define FG_TESTUTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

extern int fg_test_failures;

#define EXPECT(cond)                                                             \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #cond); \
      fg_test_failures++;                                                        \
    }                                                                            \
  } while (0)

#define EXPECT_MSG(cond, ...)                                                    \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: expectation failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                              \
      fputc('\n', stderr);                                                       \
      fg_test_failures++;                                                        \
    }                                                                            \
  } while (0)

/* Expect a call to return FG_OK; on failure print the library's message. */
#define EXPECT_OK(call)                                                          \
  do {                                                                           \
    int _st = (call);                                                            \
    if (_st != 0) {                                                              \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
              fg_last_error());                                                  \
      fg_test_failures++;                                                        \
    }                                                                            \
  } while (0)

/* Largest absolute difference between two float arrays, scaled: |a-b| / max(1, |b|). */
double fg_test_max_rel_diff(const float *a, const float *b, int64_t n);
/* Fill with uniform values in [lo, hi) from a fixed seed. */
void fg_test_fill(float *x, int64_t n, uint64_t seed, float lo, float hi);
/* 1 if the directory or file exists. */
int fg_test_exists(const char *path);
/* Print "SKIP: why" and exit 77. */
void fg_test_skip(const char *why);
/* Print the summary line and return the process exit code. */
int fg_test_finish(const char *name);
/* 1 if fg_last_error() contains needle (prints both when it does not). */
int fg_test_error_contains(const char *needle);
/* Collective over MPI_COMM_WORLD: rank 0 makes a fresh directory $TMPDIR/PREFIX.XXXXXX (/tmp
 * without TMPDIR) and every rank gets its name in out (size bytes). 1 on success; 0, with out
 * empty and a message on stderr, when it could not be made. */
int fg_test_mpi_tmpdir(const char *prefix, char *out, size_t size);
/* Collective, at the end of an MPI test: once every rank is done, rank 0 removes tmpdir (NULL or
 * empty: nothing), and a failure on any rank fails every rank's verdict (fg_test_failures). */
void fg_test_mpi_done(const char *tmpdir);

#endif
