/* fullgraph.c -- the command-line tool: dispatch to one subcommand per file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Every subcommand: `fullgraph NAME ...` runs it, and the build makes a manual page
 * fullgraph-NAME.1 for each tools/cmd_NAME.c from its option table (`fullgraph man NAME`). */
static const cli_entry commands[] = {
    {"train", cmd_train, "train a GNN on every node and edge of a graph"},
    {"info", cmd_info, "describe a dataset and how training would lay it out"},
    {"generate", cmd_generate, "write a Graph500 R-MAT graph as an edge list"},
    {"prepare", cmd_prepare, "write a dataset as blocks that each rank can read itself"},
    {"plan", cmd_plan, "predict and rank the parallel schemes for P ranks"},
    {"report", cmd_report, "draw metrics files as one HTML page of plots"},
    {"bench", cmd_bench, "measure memory bandwidth or calibrate the performance model"},
};
enum { NCOMMANDS = (int)(sizeof commands / sizeof commands[0]) };

static void usage(FILE *out) {
  fprintf(out,
          "usage: fullgraph <command> [options]\n"
          "       mpirun -n P fullgraph <command> [options]\n\n"
          "Full-graph GNN training: every node, every edge, every epoch.\n\n"
          "commands:\n"
          "  train DATA      train a GCN or GraphSAGE on a dataset, report accuracy\n"
          "  info DATA       sizes, degree statistics, labels and splits of a dataset\n"
          "  generate rmat   write a Graph500 R-MAT graph as an edge list\n"
          "  prepare DATA    write DATA as a blocked dataset (--blocks B --output DIR)\n"
          "  plan DATA       predict and rank every 3D grid and 1D scheme on P ranks\n"
          "  report M.jsonl  draw --metrics files as one HTML page (curves, time, traffic)\n"
          "  bench stream    measure the memory bandwidth (STREAM triad)\n"
          "  bench --calibrate  fit the performance model's coefficients on this machine\n\n"
          "'fullgraph <command> --help' describes a command's options.\n"
          "'fullgraph --version' prints the version, the commit it was built from, the\n"
          "OpenBLAS kernels, the build's options, its default bf16 GEMM path and its fp32\n"
          "GEMM library (FULLGRAPH_GEMM=auto|openblas|onednn forces one).\n");
}

int cli_argc;
char **cli_argv;

/* Whether a launcher (mpirun / mpiexec of Open MPI, MPICH, a PMIx or PMI one) started us. */
static int launched_by_mpi(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
  for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
    if (getenv(vars[k])) return 1;
  return 0;
}

int main(int argc, char **argv) {
  int provided = 0, rank = 0, rc = CLI_USAGE;
  /* `report` only reads and writes files: started alone it skips MPI's start-up (Open MPI's
   * singleton initialization takes more than a second); under a launcher rank 0 does the work */
  if (argc >= 2 && strcmp(argv[1], "report") == 0 && !launched_by_mpi()) {
    rc = cmd_report(argc - 2, argv + 2, 0);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "fullgraph: error: writing the standard output failed\n");
      if (rc == CLI_OK) rc = CLI_FAILED;
    }
    return rc;
  }
  /* train stops on SIGTERM / SIGUSR1: no thread MPI or OpenMP starts may take them */
  if (argc >= 2 && strcmp(argv[1], "train") == 0) cli_stop_signals_block();
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "fullgraph: error: MPI_Init_thread failed\n");
    return CLI_FAILED;
  }
  cli_argc = argc;
  cli_argv = argv;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 2) {
    if (rank == 0) usage(stderr);
  } else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
             strcmp(argv[1], "help") == 0) {
    if (rank == 0) usage(stdout);
    rc = CLI_OK;
  } else if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    if (rank == 0) {
      const int dirty = fg_build_dirty();
      printf("fullgraph %s\ncommit %s%s\nOpenBLAS kernels: %s\nbuild: %s\nbf16 path: %s\n"
             "fp32 GEMM: %s\n",
             fg_version_string(), fg_build_commit(), dirty > 0 ? " (dirty)" : "",
             fg_blas_corename(), fg_build_options(), fg_bf16_info(), fg_gemm_info());
    }
    rc = CLI_OK;
  } else if (strcmp(argv[1], "man") == 0) { /* hidden: the build's manual pages */
    rc = cli_man(argc - 2, argv + 2, rank, commands, NCOMMANDS);
  } else {
    const cli_entry *e = NULL;
    for (int i = 0; i < NCOMMANDS && !e; i++)
      if (strcmp(argv[1], commands[i].name) == 0) e = &commands[i];
    if (e)
      rc = e->run(argc - 2, argv + 2, rank);
    else if (rank == 0)
      fprintf(stderr, "fullgraph: unknown command '%s' (see 'fullgraph --help')\n", argv[1]);
  }
  /* the last of stdout (a full disk, a closed pipe) is checked like every other write */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    if (rank == 0) fprintf(stderr, "fullgraph: error: writing the standard output failed\n");
    if (rc == CLI_OK) rc = CLI_FAILED;
  }
  MPI_Finalize();
  return rc;
}
