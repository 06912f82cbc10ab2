/* cmd_plan.c -- `fullgraph plan DATA --ranks P`: the performance model's ranking of every 3D grid
 * and the 1D schemes. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const plan_agg_choices[] = {"auto", "first", "last", NULL};

/* "64,32" -> widths; returns count or -1. */
static int plan_parse_widths(const char *s, int *out, int max) {
  int n = 0;
  while (*s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || v > (1 << 24) || n >= max) return -1;
    out[n++] = (int)v;
    s = end;
    if (*s == ',') s++;
    else if (*s) return -1;
  }
  return n;
}

static void print_table(const char *data, const fg_plan_config *pc, const char *cal_path,
                        const fg_plan_entry *e, int n, const fg_dataset *ds) {
  printf("performance model: %s on %d rank(s)", data, pc->ranks);
  if (pc->ranks_per_node > 0) printf(", %d per node", pc->ranks_per_node);
  printf("; %s %lld", pc->model ? pc->model : "GCN", (long long)fg_dataset_num_features(ds));
  for (int l = 1; l < pc->layers; l++) printf(" -> %d", pc->widths ? pc->widths[l - 1] : pc->hidden);
  printf(" -> %lld; 3d: %s%s%s\n", (long long)fg_dataset_num_classes(ds),
         pc->double_perm ? "double permutation"
         : (pc->order && strcmp(pc->order, "random") == 0) ? "single permutation"
         : fg_dataset_prepared_blocks(ds) > 0               ? "the prepared order"
                                                            : "natural order",
         pc->learn_features ? ", learned features" : "",
         pc->agg_blocks > 1 ? ", blocked aggregation" : "");
  printf("coefficients: %s\n", cal_path ? cal_path : "built-in defaults (no --calibration)");
  if (fg_dataset_prepared_blocks(ds) > 0)
    printf("prepared: %lld x %lld blocks; ranked only the layouts they form (1d, 1d-sa, halo: P divides "
           "%lld; 1.5d: P / c divides it; 3d: each grid dimension divides it, its permutation "
           "the prepared order)\n",
           (long long)fg_dataset_prepared_blocks(ds), (long long)fg_dataset_prepared_blocks(ds),
           (long long)fg_dataset_prepared_blocks(ds));
  printf("%4s  %-6s %-9s %10s %10s %10s %10s %10s %11s %12s %8s %4s\n", "#", "scheme", "grid",
         "epoch s", "spmm s", "gemm s", "comm s", "other s", "memory MB", "nnz/rank",
         "max/mean", "fits");
  for (int i = 0; i < n; i++) {
    char grid[32] = "-";
    if (e[i].grid[0] > 0)
      snprintf(grid, sizeof grid, "%dx%dx%d", e[i].grid[0], e[i].grid[1], e[i].grid[2]);
    else if (e[i].replicate > 0)
      snprintf(grid, sizeof grid, "c=%d", e[i].replicate);
    printf("%4d  %-6s %-9s %10.4f %10.4f %10.4f %10.4f %10.4f %11.1f %12.0f %8.3f %4s\n", i + 1,
           e[i].scheme, grid, e[i].seconds, e[i].spmm_seconds, e[i].gemm_seconds,
           e[i].comm_seconds, e[i].other_seconds, e[i].mem_bytes / 1e6, e[i].max_nnz,
           e[i].mean_nnz > 0 ? e[i].max_nnz / e[i].mean_nnz : 1.0, e[i].fits ? "yes" : "no");
  }
  for (int i = 0; i < n; i++) {
    if (!e[i].fits) continue;
    if (e[i].grid[0] > 0)
      printf("best: --scheme %s --grid %dx%dx%d (predicted %.4f s per epoch)\n", e[i].scheme,
             e[i].grid[0], e[i].grid[1], e[i].grid[2], e[i].seconds);
    else if (e[i].replicate > 0)
      printf("best: --scheme %s --replicate %d (predicted %.4f s per epoch)\n", e[i].scheme,
             e[i].replicate, e[i].seconds);
    else
      printf("best: --scheme %s (predicted %.4f s per epoch)\n", e[i].scheme, e[i].seconds);
    return;
  }
  if (n == 0)
    printf("no layout of %d ranks can be formed from the %lld prepared blocks: prepare again "
           "with --blocks a multiple of %d, or use other rank counts\n",
           pc->ranks, (long long)fg_dataset_prepared_blocks(ds), pc->ranks);
  else
    printf("nothing fits in the memory limit\n");
}

int cmd_plan(int argc, char **argv, int rank) {
  fg_load_config lc = fg_load_config_default();
  fg_plan_config pc = fg_plan_config_default();
  fg_calibration cal = fg_calibration_default();
  fg_plan_entry *e = NULL;
  fg_dataset *ds = NULL;
  fg_status st = FG_OK;
  int directed = 0, keepdup = 0, noloops = 0, npos = 0, rc, agg = 0, n = 0;
  double mem_mb = 0.0;
  const char *widths_arg = NULL, *cal_path = NULL;
  int widths[64];
  const char *pos[1];
  const cli_opt opts[] = {
      {"--ranks", OPT_INT, &pc.ranks, "P", "processes of the job (default 1)", NULL},
      {"--ranks-per-node", OPT_INT, &pc.ranks_per_node, "R", "processes per node, for intra/inter-node bandwidths (default: all on one)", NULL},
      {"--calibration", OPT_STRING, &cal_path, "FILE", "coefficients from 'fullgraph bench --calibrate' (default: built-in)", NULL},
      {"--layers", OPT_INT, &pc.layers, "N", "layers (default 2)", NULL},
      {"--model", OPT_STRING, &pc.model, "NAME", "gcn (default), sage, gin", NULL},
      {"--residual", OPT_FLAG, &pc.residual, NULL, "residual connections (train's --residual)", NULL},
      {"--norm", OPT_STRING, &pc.norm, "KIND", "none (default), layer, batch", NULL},
      {"--adj-norm", OPT_STRING, &pc.adj_norm, "HOW", "sym, mean, sum (default: the model's)", NULL},
      {"--gin-eps", OPT_STRING, &pc.gin_eps, "X|learn", "gin: as train (a learned epsilon keeps more in fp32 under bf16)", NULL},
      {"--hidden", OPT_INT, &pc.hidden, "N", "width of every hidden layer (default 16)", NULL},
      {"--widths", OPT_STRING, &widths_arg, "W1,W2,..", "hidden widths one by one", NULL},
      {"--agg-order", OPT_CHOICE, &agg, "ORDER", "1D schemes: as train (default auto)", plan_agg_choices},
      {"--order", OPT_STRING, &pc.order, "NAME", "natural (default), random; metis, hypergraph, volume (1D only)", NULL},
      {"--double-perm", OPT_FLAG, &pc.double_perm, NULL, "3d: double permutation", NULL},
      {"--learn-features", OPT_FLAG, &pc.learn_features, NULL, "3d: learned input features", NULL},
      {"--agg-blocks", OPT_INT, &pc.agg_blocks, "N", "3d: blocked aggregation (default 1)", NULL},
      {"--aggregation", OPT_STRING, &pc.aggregation, "RULE", "halo: pre, post, hybrid (default)", NULL},
      {"--quantize", OPT_STRING, &pc.quantize, "BITS", "halo: none (default), int8, int4, int2", NULL},
      {"--label-prop", OPT_DOUBLE, &pc.label_prop, "RATE", "label propagation, as train", NULL},
      {"--precision", OPT_STRING, &pc.precision, "P", "fp32 (default) or bf16, as train: the rows bf16 sends at 2 bytes an element and its operand scratch (its GEMMs timed as fp32's)", NULL},
      {"--replicate", OPT_INT, &pc.replicate, "C", "1.5d: this replication alone (default: every valid C)", NULL},
      {"--mem-per-rank", OPT_DOUBLE, &mem_mb, "MB", "memory a rank may use (default: available memory / ranks per node; -1: no limit)", NULL},
      {"--schemes", OPT_STRING, &pc.schemes, "LIST", "rank only these schemes, e.g. 3d or 1d,1d-sa (default: every one the options allow)", NULL},
      {"--seed", OPT_U64, &lc.seed, "N", "seed (generated data, permutations)", NULL},
      CLI_LOAD_OPTS(lc, directed, keepdup, noloops),
  };
  const cli_command cmd = {"plan", "plan DATA --ranks P [options]",
                           "Predict the epoch time and the memory per rank of every 3D grid\n"
                           "X x Y x Z = P and of the 1D schemes on P ranks (Plexus' performance\n"
                           "model: SpMM time from the busiest shard's nonzeros and shape, GEMM\n"
                           "rate, ring collectives with measured latency and bandwidth), and\n"
                           "rank them: those that fit in memory first, fastest first. Training\n"
                           "with --grid auto or --scheme auto takes the first.",
                           opts, (int)(sizeof opts / sizeof opts[0]), 1, 1};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  if (widths_arg) {
    int k = plan_parse_widths(widths_arg, widths, 64);
    if (k < 0) {
      if (rank == 0)
        fprintf(stderr, "fullgraph plan: --widths expects positive integers like 64,32, got '%s'\n",
                widths_arg);
      return CLI_USAGE;
    }
    pc.layers = k + 1;
    pc.widths = widths;
  }
  pc.seed = lc.seed;
  pc.agg_order = agg == 1 ? FG_AGG_FIRST : agg == 2 ? FG_AGG_LAST : FG_AGG_AUTO;
  pc.mem_per_rank = mem_mb < 0 ? -1.0 : mem_mb * 1e6;
  cli_apply_load_flags(&lc, directed, keepdup, noloops);
  if (rank == 0 && cal_path) st = fg_calibration_read(cal_path, &cal);
  st = fg_agree(MPI_COMM_WORLD, st);
  if (st == FG_OK) st = cli_load(MPI_COMM_WORLD, pos[0], &lc, &ds);
  if (st == FG_OK && rank == 0) {
    st = fg_plan(ds, &pc, &cal, &e, &n);
    if (st == FG_OK) print_table(pos[0], &pc, cal_path, e, n, ds);
  }
  st = fg_agree(MPI_COMM_WORLD, st);
  cli_report(rank, "plan", st);
  free(e);
  fg_dataset_destroy(&ds);
  return st == FG_OK ? CLI_OK : CLI_FAILED;
}
