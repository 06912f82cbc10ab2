/* cmd_bench.c -- `fullgraph bench stream`: machine measurements for benchmarks. */
#include <string.h>

#include "cli.h"

int cmd_bench(int argc, char **argv, int rank) {
  int npos = 0, rc, reps = 10, threads = 0;
  double mfloats = 32.0;
  const char *pos[1];
  const cli_opt opts[] = {
      {"--size", OPT_DOUBLE, &mfloats, "M", "millions of floats per array (default 32: 384 MB moved a run)", NULL},
      {"--reps", OPT_INT, &reps, "R", "repetitions; the best is reported (default 10)", NULL},
      {"--threads", OPT_INT, &threads, "N", "OpenMP threads", NULL},
  };
  const cli_command cmd = {"bench", "bench stream [--size M] [--reps R]",
                           "Measure the STREAM triad bandwidth a = b + s*c (what memory-bound kernels\n"
                           "such as the SpMM are compared with).",
                           opts, (int)(sizeof opts / sizeof opts[0]), 1, 1};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  if (strcmp(pos[0], "stream") != 0) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: unknown benchmark '%s' (available: stream)\n", pos[0]);
    return CLI_USAGE;
  }
  if (mfloats <= 0 || reps < 1) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: --size and --reps must be positive\n");
    return CLI_USAGE;
  }
  if (threads > 0) fg_set_threads(threads);
  if (rank == 0) {
    double bw = fg_bench_stream_triad((int64_t)(mfloats * 1e6), reps);
    if (bw < 0) {
      fprintf(stderr, "fullgraph bench: error: cannot allocate 3 x %.0f MB\n", mfloats * 4);
      return CLI_FAILED;
    }
    printf("stream triad: %.2f GB/s\n", bw / 1e9);
  }
  return CLI_OK;
}
