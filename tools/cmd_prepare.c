/* cmd_prepare.c -- `fullgraph prepare DATA --blocks B [--order O] [--seed S] --output DIR`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_prepare(int argc, char **argv, int rank) {
  fg_load_config lc = fg_load_config_default();
  fg_prepare_config pc = fg_prepare_config_default();
  fg_dataset *ds = NULL;
  fg_status st = FG_OK;
  int directed = 0, keepdup = 0, noloops = 0, npos = 0, rc, blocks = 0, parallel = 0, size = 1;
  fg_prepare_report rep;
  double t0 = 0.0;
  const char *pos[1], *output = NULL, *order = NULL;
  const cli_opt opts[] = {
      {"--blocks", OPT_INT, &blocks, "B", "row blocks (and column blocks) of the layout (required; 1 .. min(nodes, 1024)); mpirun -n P train on it needs P to divide B", NULL},
      {"--order", OPT_STRING, &order, "NAME", "vertex order at B parts: natural (default), random, metis, hypergraph, volume", NULL},
      {"--seed", OPT_U64, &lc.seed, "N", "seed of the order, and of generated features, labels and split (default 0)", NULL},
      {"--output", OPT_STRING, &output, "DIR", "directory to write (created if missing; required)", NULL},
      {"--parallel", OPT_FLAG, &parallel, NULL, "build it on every rank (the default under mpirun -n P > 1; here also on one): a plain SNAP edge list or OGB csv tables parsed in P byte ranges, --order metis by PT-Scotch's SCOTCH_dgraphPart", NULL},
      CLI_LOAD_OPTS(lc, directed, keepdup, noloops),
  };
  const cli_command cmd = {"prepare", "prepare DATA --blocks B [--order O] [--seed S] --output DIR",
                           "Read DATA as train would and write it as a prepared dataset: the\n"
                           "graph's pattern in the vertex order O at B parts, cut into B x B\n"
                           "blocks, the features, labels, split, node ids and degrees in B row\n"
                           "blocks, and a manifest with sizes, CRC-32s and the dataset's\n"
                           "fingerprint, written last. 'train DIR' and 'info DIR' read it; the\n"
                           "format is in the README (Prepared datasets). Under mpirun -n P\n"
                           "every rank builds a piece and writes its row blocks (--parallel).",
                           opts, (int)(sizeof opts / sizeof opts[0]), 1, 1};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  if (!output || blocks < 1) {
    if (rank == 0)
      fprintf(stderr, "fullgraph prepare: %s\n",
              !output ? "--output DIR is required" : "--blocks B is required (B >= 1)");
    return CLI_USAGE;
  }
  if (order && !fg_order_is_available(order)) { /* a usage error, before loading */
    if (rank == 0)
      fprintf(stderr,
              "fullgraph prepare: --order %s: not an order this build computes (natural, "
              "random; metis and volume with METIS, hypergraph with Zoltan)\n", order);
    return CLI_USAGE;
  }
  cli_apply_load_flags(&lc, directed, keepdup, noloops);
  pc.blocks = blocks;
  pc.order = order ? order : "natural";
  pc.seed = lc.seed;
  memset(&rep, 0, sizeof rep);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  t0 = MPI_Wtime();
  if (size > 1 || parallel) {
    st = fg_dataset_prepare_parallel(MPI_COMM_WORLD, pos[0], &lc, &pc, output, &rep);
  } else {
    st = cli_load(MPI_COMM_WORLD, pos[0], &lc, &ds);
    if (st == FG_OK && rank == 0) {
      const int64_t n = fg_dataset_num_nodes(ds);
      if (blocks > 1024 || blocks > (n > 0 ? n : 1)) {
        fprintf(stderr, "fullgraph prepare: --blocks %d: must be 1 to %lld (the nodes, at most 1024)\n",
                blocks, (long long)(n < 1 ? 1 : n < 1024 ? n : 1024));
        rc = CLI_USAGE;
      } else {
        st = fg_dataset_prepare(ds, &pc, output);
        if (st == FG_OK) st = fg_prepared_report(output, &rep);
      }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    st = fg_agree(MPI_COMM_WORLD, st);
    fg_dataset_destroy(&ds);
    if (rc == CLI_USAGE) return CLI_USAGE;
  }
  cli_report(rank, "prepare", st);
  if (st == FG_OK && rank == 0) {
    printf("prepared %s: %d x %d blocks in order %s (seed %llu) in %s\n", pos[0], blocks, blocks,
           pc.order, (unsigned long long)pc.seed, output);
    /* the partition's quality, the same line for the serial and the parallel path */
    printf("prepare report: %d rank%s (%s), partitioner %s: %lld entries, edge cut %lld "
           "(%.2f%%), largest row block %lld rows, %lld entries; %.3f s\n",
           size, size == 1 ? "" : "s",
           rep.parallel_read ? "input parsed in parallel"
           : size > 1 || parallel ? "input read by rank 0" : "serial",
           rep.partitioner, (long long)rep.entries, (long long)rep.edge_cut,
           rep.entries > 0 ? 100.0 * (double)rep.edge_cut / (double)rep.entries : 0.0,
           (long long)rep.max_rows, (long long)rep.max_entries, MPI_Wtime() - t0);
  }
  return st == FG_OK ? CLI_OK : cli_check_exit_code(st) == CLI_USAGE ? CLI_USAGE : CLI_FAILED;
}
