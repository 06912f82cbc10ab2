/* cmd_generate.c -- `fullgraph generate rmat --scale S --edge-factor E -o FILE`. */
#include <string.h>

#include "cli.h"

int cmd_generate(int argc, char **argv, int rank) {
  int scale = 0, ef = 16, npos = 0, rc;
  uint64_t seed = 0;
  const char *output = NULL;
  const char *pos[1];
  fg_status st = FG_OK;
  const cli_opt opts[] = {
      {"--scale", OPT_INT, &scale, "S", "2^S nodes (required, 1..30)", NULL},
      {"--edge-factor", OPT_INT, &ef, "E", "E * 2^S edges (default 16)", NULL},
      {"--seed", OPT_U64, &seed, "N", "seed (default 0)", NULL},
      {"--output", OPT_STRING, &output, "FILE", "edge list to write (.gz compresses; required)", NULL},
  };
  const cli_command cmd = {"generate", "generate rmat --scale S [--edge-factor E] --output FILE",
                           "Write a Graph500 R-MAT graph (a=0.57, b=c=0.19) as a SNAP edge list that\n"
                           "'fullgraph train' and 'fullgraph info' read.",
                           opts, (int)(sizeof opts / sizeof opts[0]), 1, 1};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  if (strcmp(pos[0], "rmat") != 0) {
    if (rank == 0)
      fprintf(stderr, "fullgraph generate: unknown generator '%s' (available: rmat)\n", pos[0]);
    return CLI_USAGE;
  }
  if (scale < 1 || scale > 30 || ef < 1 || !output) {
    if (rank == 0)
      fprintf(stderr, "fullgraph generate: %s\n",
              !output ? "--output FILE is required"
                      : (scale < 1 || scale > 30) ? "--scale must be in 1..30"
                                                   : "--edge-factor must be >= 1");
    return CLI_USAGE;
  }
  if (rank == 0) st = fg_generate_rmat(scale, ef, seed, output);
  st = fg_agree(MPI_COMM_WORLD, st);
  cli_report(rank, "generate", st);
  if (st == FG_OK && rank == 0)
    printf("wrote R-MAT scale %d, edge factor %d to %s\n", scale, ef, output);
  return st == FG_OK ? CLI_OK : CLI_FAILED;
}
