#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "testutil.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fg_rng.h"
#include "fullgraph.h"

int fg_test_failures = 0;

double fg_test_max_rel_diff(const float *a, const float *b, int64_t n) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double scale = fabs((double)b[i]) > 1.0 ? fabs((double)b[i]) : 1.0;
    double d = fabs((double)a[i] - (double)b[i]) / scale;
    if (d != d) return INFINITY;
    if (d > worst) worst = d;
  }
  return worst;
}

void fg_test_fill(float *x, int64_t n, uint64_t seed, float lo, float hi) {
  for (int64_t i = 0; i < n; i++)
    x[i] = lo + (hi - lo) * fg_rng_uniform(seed, 99, (uint64_t)i, 0, 0, 0);
}

int fg_test_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

void fg_test_skip(const char *why) {
  printf("SKIP: %s\n", why);
  exit(77);
}

int fg_test_finish(const char *name) {
  if (fg_test_failures) {
    fprintf(stderr, "%s: %d expectation(s) failed\n", name, fg_test_failures);
    return 1;
  }
  printf("%s: all expectations met\n", name);
  return 0;
}

int fg_test_error_contains(const char *needle) {
  const char *msg = fg_last_error();
  if (strstr(msg, needle)) return 1;
  fprintf(stderr, "error message \"%s\" does not contain \"%s\"\n", msg, needle);
  return 0;
}

int fg_test_mpi_tmpdir(const char *prefix, char *out, size_t size) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size == 0) return 0;
  if (rank == 0) {
    const char *t = getenv("TMPDIR");
    const int len = snprintf(out, size, "%s/%s.XXXXXX", t && *t ? t : "/tmp", prefix);
    if (len < 0 || (size_t)len >= size || !mkdtemp(out)) out[0] = '\0';
  }
  MPI_Bcast(out, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!out[0] && rank == 0) fprintf(stderr, "cannot make a temporary directory for %s\n", prefix);
  return out[0] != '\0';
}

void fg_test_mpi_done(const char *tmpdir) {
  int rank = 0, mine = fg_test_failures, all = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && tmpdir && *tmpdir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    EXPECT(system(cmd) == 0);
    mine = fg_test_failures;
  }
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = all > 0 && mine == 0 ? 1 : mine;
}
