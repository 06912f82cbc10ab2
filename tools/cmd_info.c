/* cmd_info.c -- `fullgraph info DATA`. */
#include "cli.h"

int cmd_info(int argc, char **argv, int rank) {
  fg_load_config lc = fg_load_config_default();
  fg_dataset *ds = NULL;
  fg_status st;
  int directed = 0, keepdup = 0, noloops = 0, npos = 0, rc;
  const char *pos[1];
  const cli_opt opts[] = {
      {"--seed", OPT_U64, &lc.seed, "N", "seed for generated features, labels, split", NULL},
      CLI_LOAD_OPTS(lc, directed, keepdup, noloops),
  };
  const cli_command cmd = {"info", "info DATA [options]",
                           "Read DATA as train would and print its sizes, degree statistics,\n"
                           "label counts and split sizes.",
                           opts, (int)(sizeof opts / sizeof opts[0]), 1, 1};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  cli_apply_load_flags(&lc, directed, keepdup, noloops);
  st = cli_load(MPI_COMM_WORLD, pos[0], &lc, &ds);
  if (st == FG_OK && rank == 0) st = fg_dataset_print_info(ds, stdout);
  st = fg_agree(MPI_COMM_WORLD, st);
  cli_report(rank, "info", st);
  fg_dataset_destroy(&ds);
  return st == FG_OK ? CLI_OK : CLI_FAILED;
}
