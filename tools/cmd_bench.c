/* cmd_bench.c -- `fullgraph bench stream` and `fullgraph bench --calibrate`: machine
 * measurements for benchmarks and the performance model. */
#include <limits.h>
#include <string.h>

#include "cli.h"

int cmd_bench(int argc, char **argv, int rank) {
  int npos = 0, rc, reps = 10, threads = INT_MIN, calibrate = 0, rpn = 0;
  double mfloats = 32.0;
  const char *pos[1], *output = "fullgraph-calibration.txt";
  const cli_opt opts[] = {
      {"--size", OPT_DOUBLE, &mfloats, "M", "millions of floats per array (default 32: 384 MB moved a run)", NULL},
      {"--reps", OPT_INT, &reps, "R", "repetitions; the best is reported (default 10)", NULL},
      {"--threads", OPT_INT, &threads, "N", "OpenMP threads, at least 1 (default: OMP_NUM_THREADS or all cores)", NULL},
      {"--calibrate", OPT_FLAG, &calibrate, NULL, "fit the performance model (run under mpirun with the job's ranks)", NULL},
      {"--output", OPT_STRING, &output, "FILE", "--calibrate: where to write (default fullgraph-calibration.txt)", NULL},
      {"--ranks-per-node", OPT_INT, &rpn, "R", "--calibrate: ranks per node, to measure across nodes (default: one node)", NULL},
  };
  const cli_command cmd = {"bench", "bench stream [--size M] [--reps R] | bench --calibrate [--output FILE]",
                           "Measure the STREAM triad bandwidth a = b + s*c (what memory-bound kernels\n"
                           "such as the SpMM are compared with), or with --calibrate, time SpMMs of\n"
                           "several shapes, GEMMs and all-reduces on every rank at once and fit the\n"
                           "coefficients of the performance model that `fullgraph plan`, --grid auto\n"
                           "and --scheme auto use.",
                           opts, (int)(sizeof opts / sizeof opts[0]), 0, 1};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  const int threads_set = threads != INT_MIN;
  if (threads_set && cli_check_threads("bench", threads, rank == 0) != CLI_OK) return CLI_USAGE;
  if (threads_set) fg_set_threads(threads);
  if (calibrate) {
    fg_calibration cal;
    fg_status st;
    if (npos > 0 || rpn < 0) {
      if (rank == 0)
        fprintf(stderr, "fullgraph bench: --calibrate takes no benchmark name%s\n",
                rpn < 0 ? " and --ranks-per-node must be >= 0" : "");
      return CLI_USAGE;
    }
    st = fg_calibrate(MPI_COMM_WORLD, rpn, &cal, rank == 0 ? stdout : NULL);
    if (st == FG_OK && rank == 0) st = fg_calibration_write(output, &cal);
    st = fg_agree(MPI_COMM_WORLD, st);
    if (st == FG_OK && rank == 0) printf("wrote %s\n", output);
    cli_report(rank, "bench", st);
    return st == FG_OK ? CLI_OK : CLI_FAILED;
  }
  if (npos == 0) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: missing benchmark (stream, or --calibrate)\n");
    return CLI_USAGE;
  }
  if (strcmp(pos[0], "stream") != 0) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: unknown benchmark '%s' (available: stream)\n", pos[0]);
    return CLI_USAGE;
  }
  if (mfloats <= 0 || reps < 1) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: --size and --reps must be positive\n");
    return CLI_USAGE;
  }
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
