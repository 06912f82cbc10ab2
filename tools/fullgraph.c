/* fullgraph.c -- the command-line tool: dispatch to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: fullgraph <command> [options]\n"
          "       mpirun -n P fullgraph <command> [options]\n\n"
          "Full-graph GNN training: every node, every edge, every epoch.\n\n"
          "commands:\n"
          "  train DATA      train a GCN or GraphSAGE on a dataset, report accuracy\n"
          "  info DATA       sizes, degree statistics, labels and splits of a dataset\n"
          "  generate rmat   write a Graph500 R-MAT graph as an edge list\n"
          "  plan DATA       predict and rank every 3D grid and 1D scheme on P ranks\n"
          "  bench stream    measure the memory bandwidth (STREAM triad)\n"
          "  bench --calibrate  fit the performance model's coefficients on this machine\n\n"
          "'fullgraph <command> --help' describes a command's options.\n"
          "'fullgraph --version' prints the version, the commit it was built from, the\n"
          "OpenBLAS kernels and the build's options.\n");
}

int cli_argc;
char **cli_argv;

int main(int argc, char **argv) {
  int provided = 0, rank = 0, rc = CLI_USAGE;
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
      printf("fullgraph %s\ncommit %s%s\nOpenBLAS kernels: %s\nbuild: %s\n", fg_version_string(),
             fg_build_commit(), dirty > 0 ? " (dirty)" : "", fg_blas_corename(),
             fg_build_options());
    }
    rc = CLI_OK;
  } else if (strcmp(argv[1], "train") == 0) {
    rc = cmd_train(argc - 2, argv + 2, rank);
  } else if (strcmp(argv[1], "info") == 0) {
    rc = cmd_info(argc - 2, argv + 2, rank);
  } else if (strcmp(argv[1], "bench") == 0) {
    rc = cmd_bench(argc - 2, argv + 2, rank);
  } else if (strcmp(argv[1], "plan") == 0) {
    rc = cmd_plan(argc - 2, argv + 2, rank);
  } else if (strcmp(argv[1], "generate") == 0) {
    rc = cmd_generate(argc - 2, argv + 2, rank);
  } else {
    if (rank == 0)
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
