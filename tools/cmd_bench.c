/* cmd_bench.c -- `fullgraph bench stream`, `fullgraph bench gemm`, `fullgraph bench spmm` and
 * `fullgraph bench --calibrate`: machine measurements for benchmarks and the performance
 * model. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const bench_precision_choices[] = {"fp32", "bf16", NULL};

/* One shape of --shapes, "TT:MxNxK" (TT: n or t for A, then for B) at s; the end of it in *end.
 * 0 on success, -1 when it is malformed (the outputs then hold nothing to use). */
static int parse_shape(const char *s, const char **end, int *ta, int *tb, int64_t dims[3]) {
  if ((s[0] != 'n' && s[0] != 't') || (s[1] != 'n' && s[1] != 't') || s[2] != ':') return -1;
  *ta = s[0] == 't';
  *tb = s[1] == 't';
  s += 3;
  for (int i = 0; i < 3; i++) {
    char *e = NULL;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    const long long v = strtoll(s, &e, 10);
    /* a dimension within CBLAS's int */
    if (errno || v < 1 || v > INT_MAX || (i < 2 && *e != 'x')) return -1;
    dims[i] = v;
    s = i < 2 ? e + 1 : e;
  }
  if (*s != '\0' && *s != ',') return -1;
  *end = s;
  return 0;
}

/* `bench gemm --shapes LIST`: one line a shape, "gemm TT MxNxK: S s, G GFLOP/s" (bf16: "gemm
 * bf16 TT MxNxK (PATH): ..."). bf16 has the two products training runs: nn, the layer product
 * (A bf16, B fp32 weights), and tn, the weight gradient (A and B bf16). */
static int bench_gemm(const char *shapes, int reps, int bf16) {
  const char *s = shapes;
  if (!shapes || !*shapes) {
    fprintf(stderr, "fullgraph bench gemm: --shapes is required (e.g. nn:262144x128x128,"
                    "tn:128x128x262144)\n");
    return CLI_USAGE;
  }
  for (const char *p = shapes;;) { /* check every shape before timing any */
    int ta, tb;
    int64_t d[3];
    const char *e;
    if (parse_shape(p, &e, &ta, &tb, d) != 0 || (double)d[0] * (double)d[2] > INT_MAX ||
        (double)d[2] * (double)d[1] > INT_MAX || (double)d[0] * (double)d[1] > INT_MAX) {
      fprintf(stderr, "fullgraph bench gemm: bad shape in --shapes at '%.40s': want TT:MxNxK, "
                      "TT one of nn nt tn tt, M N K positive, each operand under 2^31 "
                      "elements\n", p);
      return CLI_USAGE;
    }
    if (bf16 && tb) {
      fprintf(stderr, "fullgraph bench gemm: --precision bf16 has shapes nn (the layer product) "
                      "and tn (the weight gradient) only, not '%.2s'\n", p);
      return CLI_USAGE;
    }
    if (!*e) break;
    p = e + 1;
  }
  for (;;) {
    int ta, tb;
    int64_t d[3];
    const char *e;
    (void)parse_shape(s, &e, &ta, &tb, d);
    const double t = bf16 ? fg_bench_gemm_bf16(ta, d[0], d[1], d[2], reps)
                          : fg_bench_gemm(ta, tb, d[0], d[1], d[2], reps);
    if (t < 0) {
      fprintf(stderr, "fullgraph bench gemm: error: %s %lldx%lldx%lld: %s\n",
              bf16 ? "the bf16 GEMM" : "cannot allocate the operands of", (long long)d[0],
              (long long)d[1], (long long)d[2],
              bf16 && *fg_last_error() ? fg_last_error() : "out of memory");
      return CLI_FAILED;
    }
    if (bf16)
      printf("gemm bf16 %c%c %lldx%lldx%lld (%s): %.6e s, %.2f GFLOP/s\n", ta ? 't' : 'n', 'n',
             (long long)d[0], (long long)d[1], (long long)d[2], fg_bf16_path_current(), t,
             2.0 * (double)d[0] * (double)d[1] * (double)d[2] / t / 1e9);
    else
      printf("gemm %c%c %lldx%lldx%lld: %.6e s, %.2f GFLOP/s\n", ta ? 't' : 'n', tb ? 't' : 'n',
             (long long)d[0], (long long)d[1], (long long)d[2], t,
             2.0 * (double)d[0] * (double)d[1] * (double)d[2] / t / 1e9);
    if (!*e) break;
    s = e + 1;
  }
  return CLI_OK;
}

/* `bench spmm DATA`: the thread counts of --thread-counts ("1,2,16"; NULL: the current one),
 * then the kernel's table (fg_bench_spmm). */
static int bench_spmm(const char *data, const char *counts, int64_t width, int reps,
                      int gemm_between) {
  int threads[64], n = 0;
  fg_load_config lc = fg_load_config_default();
  fg_dataset *ds = NULL;
  fg_status st;
  if (width < 1 || reps < 1) {
    fprintf(stderr, "fullgraph bench spmm: --width and --reps must be positive\n");
    return CLI_USAGE;
  }
  if (counts) { /* (none: one row at the current thread count) */
    for (const char *p = counts;;) {
      char *e = NULL;
      errno = 0;
      const long v = strtol(p, &e, 10);
      if (e == p || errno || (*e != ',' && *e != '\0') || n == 64 || v < 1 ||
          v > fg_max_threads_allowed()) {
        fprintf(stderr, "fullgraph bench spmm: bad --thread-counts at '%.20s': want up to 64 "
                        "counts in [1, %d], comma-separated\n", p, fg_max_threads_allowed());
        return CLI_USAGE;
      }
      threads[n++] = (int)v;
      if (!*e) break;
      p = e + 1;
    }
  }
  st = fg_dataset_load(data, &lc, &ds);
  if (st == FG_OK) st = fg_bench_spmm(ds, width, threads, n, reps, gemm_between, stdout);
  fg_dataset_destroy(&ds);
  cli_report(0, "bench spmm", st);
  return st == FG_OK ? CLI_OK : CLI_FAILED;
}

/* --bf16-path PATH for `fullgraph WHAT`: CLI_OK, or the exit code after naming the problem (an
 * unknown path is a usage error; native on a CPU or build without it, a failure). */
static int bench_set_bf16_path(const char *path, const char *what, int rank) {
  const fg_status st = fg_set_bf16_path(path);
  if (st == FG_OK) return CLI_OK;
  if (rank == 0) fprintf(stderr, "fullgraph %s: --bf16-path: %s\n", what, fg_last_error());
  return st == FG_ERR_INVALID_ARG ? CLI_USAGE : CLI_FAILED;
}

int cmd_bench(int argc, char **argv, int rank) {
  int npos = 0, rc, reps = 10, threads = INT_MIN, calibrate = 0, rpn = 0, width = 128;
  int gemm_between = 0;
  double mfloats = 32.0;
  const char *pos[2], *output = "fullgraph-calibration.txt", *shapes = NULL, *counts = NULL;
  const char *bf16_path = NULL;
  int precision = 0; /* bench_precision_choices */
  const cli_opt opts[] = {
      {"--size", OPT_DOUBLE, &mfloats, "M", "millions of floats per array (default 32: 384 MB moved a run)", NULL},
      {"--reps", OPT_INT, &reps, "R", "repetitions; the best is reported (spmm: the best and the median) (default 10)", NULL},
      {"--shapes", OPT_STRING, &shapes, "LIST", "gemm: TT:MxNxK,... (TT: nn, nt, tn or tt: op(A) M x K, op(B) K x N)", NULL},
      {"--precision", OPT_CHOICE, &precision, "P", "gemm: fp32 (default, sgemm) or bf16 (bf16 inputs, fp32 accumulation; shapes nn and tn)", bench_precision_choices},
      {"--bf16-path", OPT_STRING, &bf16_path, "PATH", "gemm --precision bf16, spmm's bf16 GEMM (--gemm-between) and --calibrate's bf16 rate: native (oneDNN bf16 matmul) or convert (bf16 -> fp32, sgemm); default native where available", NULL},
      {"--threads", OPT_INT, &threads, "N", "OpenMP threads, at least 1 (default: OMP_NUM_THREADS or all cores)", NULL},
      {"--width", OPT_INT, &width, "F", "spmm: columns of the dense matrix (default 128)", NULL},
      {"--thread-counts", OPT_STRING, &counts, "LIST", "spmm: a row for each of these thread counts, e.g. 1,2,4,16 (default: --threads)", NULL},
      {"--gemm-between", OPT_FLAG, &gemm_between, NULL, "spmm: an untimed n x F x F GEMM of the same precision before each SpMM, as in training", NULL},
      {"--calibrate", OPT_FLAG, &calibrate, NULL, "fit the performance model (run under mpirun with the job's ranks)", NULL},
      {"--output", OPT_STRING, &output, "FILE", "--calibrate: where to write (default fullgraph-calibration.txt)", NULL},
      {"--ranks-per-node", OPT_INT, &rpn, "R", "--calibrate: ranks per node, to measure across nodes (default: one node)", NULL},
  };
  const cli_command cmd = {"bench", "bench stream [--size M] [--reps R] | bench gemm --shapes LIST [--reps R] [--precision fp32|bf16] [--bf16-path native|convert] | bench spmm DATA [--width F] [--thread-counts LIST] [--gemm-between] [--reps R] [--bf16-path native|convert] | bench --calibrate [--output FILE] [--bf16-path native|convert]",
                           "Measure the STREAM triad bandwidth a = b + s*c (what memory-bound kernels\n"
                           "such as the SpMM are compared with), the time of one sgemm of each shape\n"
                           "given (the best of R calls: what bench/bench_single.sh's epoch bound\n"
                           "uses; --precision bf16: the bf16 kernels' GEMM on the path\n"
                           "--bf16-path or FULLGRAPH_BF16_PATH names), the aggregation kernel on a\n"
                           "dataset's GCN operator in fp32 and on bf16 rows, interleaved (spmm: best\n"
                           "and median seconds, effective GB/s, bf16 over fp32, by thread count),\n"
                           "or with --calibrate, time SpMMs of\n"
                           "several shapes, GEMMs (fp32 and bf16) and all-reduces on every rank at once and fit the\n"
                           "coefficients of the performance model that `fullgraph plan`, --grid auto\n"
                           "and --scheme auto use.",
                           opts, (int)(sizeof opts / sizeof opts[0]), 0, 2};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  /* --precision fp32 parses to the default: whether it was given at all decides where it
   * belongs (the option's value alone cannot say) */
  int precision_given = 0;
  for (int i = 1; i < argc; i++)
    precision_given |= strncmp(argv[i], "--precision", 11) == 0 &&
                       (argv[i][11] == '\0' || argv[i][11] == '=');
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
    if (precision_given || shapes) {
      if (rank == 0)
        fprintf(stderr, "fullgraph bench: --calibrate measures fp32 and bf16 GEMMs itself; "
                        "%s belongs to bench gemm\n", shapes ? "--shapes" : "--precision");
      return CLI_USAGE;
    }
    if (bf16_path) { /* the path the bf16 rate is measured on */
      rc = bench_set_bf16_path(bf16_path, "bench --calibrate", rank);
      if (rc != CLI_OK) return rc;
    }
    st = fg_calibrate(MPI_COMM_WORLD, rpn, &cal, rank == 0 ? stdout : NULL);
    if (st == FG_OK && rank == 0) st = fg_calibration_write(output, &cal);
    st = fg_agree(MPI_COMM_WORLD, st);
    if (st == FG_OK && rank == 0) printf("wrote %s\n", output);
    cli_report(rank, "bench", st);
    return st == FG_OK ? CLI_OK : CLI_FAILED;
  }
  if (npos == 0) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: missing benchmark (stream, gemm, spmm, or --calibrate)\n");
    return CLI_USAGE;
  }
  if (strcmp(pos[0], "stream") != 0 && strcmp(pos[0], "gemm") != 0 &&
      strcmp(pos[0], "spmm") != 0) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: unknown benchmark '%s' (available: stream, gemm, spmm)\n", pos[0]);
    return CLI_USAGE;
  }
  if ((npos == 2) != (strcmp(pos[0], "spmm") == 0)) {
    if (rank == 0)
      fprintf(stderr, "fullgraph bench: %s\n", npos == 2 ? "only spmm takes a dataset"
                                                         : "bench spmm needs a dataset: bench spmm DATA");
    return CLI_USAGE;
  }
  if (strcmp(pos[0], "spmm") != 0 && (counts || gemm_between || width != 128)) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: --width, --thread-counts and --gemm-between belong to bench spmm\n");
    return CLI_USAGE;
  }
  if (strcmp(pos[0], "spmm") == 0) {
    if (precision_given || shapes) {
      if (rank == 0) fprintf(stderr, "fullgraph bench spmm: it times both precisions; %s belongs to bench gemm\n", shapes ? "--shapes" : "--precision");
      return CLI_USAGE;
    }
    if (bf16_path) {
      rc = bench_set_bf16_path(bf16_path, "bench spmm", rank);
      if (rc != CLI_OK) return rc;
    }
    return rank == 0 ? bench_spmm(pos[1], counts, width, reps, gemm_between) : CLI_OK;
  }
  if (strcmp(pos[0], "gemm") == 0) {
    if (reps < 1) {
      if (rank == 0) fprintf(stderr, "fullgraph bench: --reps must be positive\n");
      return CLI_USAGE;
    }
    const int bf16 = precision == 1;
    if (bf16_path && !bf16) {
      if (rank == 0) fprintf(stderr, "fullgraph bench gemm: --bf16-path needs --precision bf16\n");
      return CLI_USAGE;
    }
    if (bf16_path) {
      rc = bench_set_bf16_path(bf16_path, "bench gemm", rank);
      if (rc != CLI_OK) return rc;
    }
    return rank == 0 ? bench_gemm(shapes, reps, bf16) : CLI_OK;
  }
  if (precision_given || bf16_path) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: --precision and --bf16-path belong to bench gemm\n");
    return CLI_USAGE;
  }
  if (shapes) {
    if (rank == 0) fprintf(stderr, "fullgraph bench: --shapes belongs to bench gemm\n");
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
