/* cmd_info.c -- `fullgraph info DATA [--ranks P --scheme S --order O]`. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const info_agg_choices[] = {"auto", "first", "last", NULL};
static const char *const info_precision_choices[] = {"fp32", "bf16", NULL};

/* The order whose partition block follows the plan: the one laid out, for the 1D row layouts
 * (NULL: none, the grid's or the serial scheme's). */
static const char *partition_order(const fg_comm_plan_config *pc) {
  fg_comm_plan_layout lay;
  if (fg_comm_plan_describe(pc, &lay) != FG_OK || strcmp(lay.scheme, "serial") == 0 ||
      strcmp(lay.scheme, "3d") == 0)
    return NULL;
  return lay.order ? lay.order : "natural";
}

/* The per-rank volumes of a layout, as training would count them (rank 0 only). */
static void print_partition_block(const char *order, const fg_partition_stats *ps);

static fg_status print_plan(const fg_dataset *ds, const fg_comm_plan_config *pcfg) {
  fg_status st;
  fg_partition_stats ps;
  fg_comm_plan_config own = *pcfg;
  const fg_comm_plan_config *pc = &own;
  const char *porder = partition_order(pcfg); /* the block after the plan, same layout */
  fg_comm_rank_plan *pr = calloc((size_t)pc->ranks, sizeof *pr);
  int64_t cut = 0, nnz = 0, tot_sent = 0, max_sent = 0;
  const char *order = pc->order;
  int print_rules = 0;
  if (!pr) {
    fprintf(stderr, "fullgraph info: out of memory for %d ranks\n", pc->ranks);
    return FG_ERR_NOMEM;
  }
  memset(&ps, 0, sizeof ps);
  own.partition = porder ? &ps : NULL;
  st = fg_comm_plan(ds, pc, pr, &cut);
  if (st != FG_OK) {
    free(pr);
    return st;
  }
  for (int r = 0; r < pc->ranks; r++) nnz += pr[r].nnz;
  {
    fg_comm_plan_layout lay;
    if (fg_comm_plan_describe(pc, &lay) == FG_OK) {
      order = lay.order;
      print_rules = lay.halo;
    }
  }
  printf("\ncommunication plan: scheme %s%s%s%s%s, order %s, %d rank(s), %s %lld",
         pc->scheme ? pc->scheme : (pc->ranks == 1 ? "serial" : "1d-sa"),
         print_rules ? ", " : "", print_rules ? (pc->aggregation ? pc->aggregation : "hybrid") : "",
         print_rules ? " aggregation, " : "",
         print_rules ? (pc->quantize ? pc->quantize : "float32") : "",
         order ? order : "natural", pc->ranks, pc->model ? pc->model : "gcn",
         (long long)fg_dataset_num_features(ds));
  for (int l = 1; l < pc->layers; l++)
    printf(" -> %d", pc->widths ? pc->widths[l - 1] : pc->hidden);
  printf(" -> %lld\n", (long long)fg_dataset_num_classes(ds));
  printf("  %lld of %lld nonzeros in off-diagonal blocks (%.1f%%)\n", (long long)cut,
         (long long)nnz, nnz > 0 ? 100.0 * (double)cut / (double)nnz : 0.0);
  printf("  feature rows per aggregation (forward A.H / backward A^T.G) and bytes per epoch\n"
         "  (training forward + backward + evaluation forward; reductions not included):\n");
  printf("  %4s %10s %11s %9s %9s %9s %9s %14s %14s %8s\n", "rank", "rows", "nnz", "fwd recv",
         "fwd sent", "bwd recv", "bwd sent", "bytes sent", "bytes recv", "msgs");
  for (int r = 0; r < pc->ranks; r++) {
    const fg_comm_rank_plan *p = &pr[r];
    const int64_t sent = p->bytes_sent[0] + p->bytes_sent[1];
    const int64_t recv = p->bytes_recv[0] + p->bytes_recv[1];
    printf("  %4d %10lld %11lld %9lld %9lld %9lld %9lld %14lld %14lld %8lld\n", r,
           (long long)p->rows, (long long)p->nnz, (long long)p->agg_rows_recv,
           (long long)p->agg_rows_sent, (long long)p->aggt_rows_recv,
           (long long)p->aggt_rows_sent, (long long)sent, (long long)recv,
           (long long)(p->msgs_sent[0] + p->msgs_sent[1]));
    tot_sent += sent;
    if (sent > max_sent) max_sent = sent;
  }
  printf("  per epoch: %lld bytes sent in all, max %lld and mean %.1f per rank\n",
         (long long)tot_sent, (long long)max_sent, (double)tot_sent / pc->ranks);
  if (pr[0].replicas > 1) {
    int64_t rb = 0;
    for (int r = 0; r < pc->ranks; r++) rb += pr[r].replica_bytes[0] + pr[r].replica_bytes[1];
    printf("  1.5d: %d block rows, each on %d replicas (ranks i*%d .. i*%d+%d); of the bytes, "
           "%lld are the all-reduces of the replicas' partial sums\n", pc->ranks / pr[0].replicas,
           pr[0].replicas, pr[0].replicas, pr[0].replicas, pr[0].replicas - 1, (long long)rb);
  }
  if (pc->quantize && strcmp(pc->quantize, "none") != 0) {
    int64_t par = 0;
    for (int r = 0; r < pc->ranks; r++) par += pr[r].param_bytes_sent[0] + pr[r].param_bytes_sent[1];
    printf("  of which %lld data (%s codes) and %lld parameters (each row's scale and zero "
           "point)\n", (long long)(tot_sent - par), pc->quantize, (long long)par);
  }
  if (print_rules) {
    /* the three rules side by side: rows per forward aggregation (backward: the same rows the
     * other way) */
    int64_t tot[3] = {0, 0, 0}, mx[3] = {0, 0, 0};
    static const char *const rule[3] = {"hybrid", "pre", "post"};
    printf("  halo exchange, rows per aggregation under each --aggregation rule:\n");
    printf("  %4s %10s %10s %10s %10s %10s %10s\n", "rank", "pre sent", "pre recv",
           "post sent", "post recv", "hyb sent", "hyb recv");
    for (int r = 0; r < pc->ranks; r++) {
      const fg_comm_rank_plan *p = &pr[r];
      printf("  %4d %10lld %10lld %10lld %10lld %10lld %10lld\n", r,
             (long long)p->rule_rows_sent[1], (long long)p->rule_rows_recv[1],
             (long long)p->rule_rows_sent[2], (long long)p->rule_rows_recv[2],
             (long long)p->rule_rows_sent[0], (long long)p->rule_rows_recv[0]);
      for (int k = 0; k < 3; k++) {
        tot[k] += p->rule_rows_sent[k];
        if (p->rule_rows_sent[k] > mx[k]) mx[k] = p->rule_rows_sent[k];
      }
    }
    for (int k = 0; k < 3; k++)
      printf("  %-6s %lld rows in all, max %lld per rank\n", rule[k], (long long)tot[k],
             (long long)mx[k]);
    printf("  hybrid / pre %.3f, hybrid / post %.3f (total rows)\n",
           tot[1] ? (double)tot[0] / (double)tot[1] : 1.0,
           tot[2] ? (double)tot[0] / (double)tot[2] : 1.0);
  }
  if (porder) print_partition_block(porder, &ps);
  free(pr);
  return FG_OK;
}

/* One order's partition block (fg_comm_plan_config.partition of the plan just printed). */
static void print_partition_block(const char *order, const fg_partition_stats *ps) {
  printf("  partition (order %s, %d blocks): rows of H per aggregation A.H as 1d-sa sends them\n"
         "    total %lld, max send %lld (%.3f x mean), max recv %lld (%.3f x mean)\n"
         "    rows max/mean %.3f, nonzeros max/mean %.3f; order computed in %.3f s\n",
         order ? order : "natural", ps->parts, (long long)ps->total, (long long)ps->max_send,
         ps->send_imbalance, (long long)ps->max_recv, ps->recv_imbalance, ps->row_balance,
         ps->nnz_balance, ps->order_seconds);
}

/* --order all: one table line per order this build has, the SA paper's table 2 -- total and
 * maximum rows of H sent per aggregation by 1d-sa. */
static fg_status print_partitions(const fg_dataset *ds, int ranks, uint64_t seed) {
  static const char *const all[] = {"natural", "random", "metis", "hypergraph", "volume"};
  fg_partition_stats ps;
  fg_status st;
  printf("\npartitions on %d parts: rows of H per aggregation A.H as 1d-sa sends them "
         "(seed %llu)\n", ranks, (unsigned long long)seed);
  printf("  %-10s %10s %10s %10s %9s %9s %9s %9s %9s\n", "order", "total", "max send",
         "max recv", "send m/m", "recv m/m", "rows m/m", "nnz m/m", "seconds");
  for (int k = 0; k < (int)(sizeof all / sizeof all[0]); k++) {
    if (!fg_order_is_available(all[k])) {
      printf("  %-10s (not in this build: no %s)\n", all[k],
             strcmp(all[k], "hypergraph") == 0 ? "Zoltan" : "METIS");
      continue;
    }
    st = fg_partition_summarize(ds, ranks, all[k], seed, &ps);
    if (st != FG_OK) return st;
    printf("  %-10s %10lld %10lld %10lld %9.3f %9.3f %9.3f %9.3f %9.3f\n", all[k],
           (long long)ps.total, (long long)ps.max_send, (long long)ps.max_recv,
           ps.send_imbalance, ps.recv_imbalance, ps.row_balance, ps.nnz_balance,
           ps.order_seconds);
    fflush(stdout);
  }
  return FG_OK;
}

/* "8x8" or "8" -> rows, cols; 0 on a bad value. */
static int parse_shards(const char *s, int out[2]) {
  char *end;
  long r = strtol(s, &end, 10), c;
  if (end == s || r < 1 || r > 65536) return 0;
  if (*end == '\0') {
    c = r;
  } else {
    const char *p = end + 1;
    if (*end != 'x') return 0;
    c = strtol(p, &end, 10);
    if (end == p || *end != '\0' || c < 1 || c > 65536) return 0;
  }
  out[0] = (int)r;
  out[1] = (int)c;
  return 1;
}

/* The 3d scheme's shard balance (rank 0 only). */
static fg_status print_shards(const fg_dataset *ds, const int shards[2], uint64_t seed) {
  double r[3];
  fg_status st = fg_shard_balance(ds, shards[0], shards[1], seed, r);
  if (st != FG_OK) return st;
  printf("\nadjacency shards %d x %d: max / mean nonzeros per shard\n"
         "  original order        %.3f\n"
         "  single permutation    %.3f   (--order random)\n"
         "  double permutation    %.3f   (--double-perm)\n",
         shards[0], shards[1], r[0], r[1], r[2]);
  return FG_OK;
}

/* The bytes a one-process training run with these widths needs (fg_train_memory), rank 0. */
static fg_status print_memory(const fg_dataset *ds, const fg_comm_plan_config *pc,
                              const char *model, const char *reorder, int normalize_features) {
  fg_train_config tc = fg_train_config_default();
  fg_memory_estimate e;
  fg_status st;
  tc.layers = pc->layers;
  tc.hidden = pc->hidden;
  tc.widths = pc->widths;
  tc.model = model;
  tc.agg_order = pc->agg_order;
  tc.reorder = reorder;
  tc.normalize_features = normalize_features;
  tc.precision = pc->precision; /* bf16: the operands' bf16 scratch among the activations */
  st = fg_train_memory(ds, &tc, &e);
  if (st != FG_OK) return st;
  printf("  memory       %lld bytes (%.1f MB) to train on one process%s, %s %lld",
         (long long)e.total, (double)e.total / 1e6,
         pc->precision && strcmp(pc->precision, "bf16") == 0 ? " in bf16" : "",
         model ? model : "GCN",
         (long long)fg_dataset_num_features(ds));
  for (int l = 1; l < tc.layers; l++) printf(" -> %d", tc.widths ? tc.widths[l - 1] : tc.hidden);
  printf(" -> %lld:\n               dataset %.1f MB, graph %.1f MB, features and labels %.1f MB,"
         "\n               activations %.1f MB (%.2f x %lld nodes x %lld floats), parameters and"
         " Adam %.2f MB,\n               loss %.1f MB, program %.1f MB (--mem-limit of train checks"
         " this)\n",
         (long long)fg_dataset_num_classes(ds), (double)e.dataset / 1e6, (double)e.graph / 1e6,
         (double)e.inputs / 1e6, (double)e.activations / 1e6, e.activation_buffers,
         (long long)fg_dataset_num_nodes(ds), (long long)e.hidden_width, (double)e.params / 1e6,
         (double)e.loss / 1e6,
         (double)(e.total - e.dataset - e.graph - e.inputs -
                  (e.activations + e.params + e.loss > e.setup ? e.activations + e.params + e.loss
                                                                : e.setup)) / 1e6);
  return FG_OK;
}

int cmd_info(int argc, char **argv, int rank) {
  fg_load_config lc = fg_load_config_default();
  fg_comm_plan_config pc = fg_comm_plan_config_default();
  fg_dataset *ds = NULL;
  fg_status st;
  int directed = 0, keepdup = 0, noloops = 0, npos = 0, rc, ranks = 0, agg = 0, reorder = 0;
  int normalize_features = 0, order_all = 0, precision = 0;
  const char *widths_arg = NULL, *shards_arg = NULL;
  int widths[64], shards[2] = {0, 0};
  const char *pos[1], *model = NULL;
  const cli_opt opts[] = {
      {"--seed", OPT_U64, &lc.seed, "N", "seed for generated features, labels, split and the random order", NULL},
      {"--ranks", OPT_INT, &ranks, "P", "also print the layout and communication volumes on P ranks", NULL},
      {"--scheme", OPT_STRING, &pc.scheme, "NAME", "with --ranks: serial, 1d, 1d-sa, 1.5d or halo (default as train)", NULL},
      {"--replicate", OPT_INT, &pc.replicate, "C", "with --ranks --scheme 1.5d: the replication (default 1)", NULL},
      {"--order", OPT_STRING, &pc.order, "NAME", "with --ranks: natural (default; halo: metis), random, metis, hypergraph, volume; all: a table of every order's volumes", NULL},
      {"--aggregation", OPT_STRING, &pc.aggregation, "RULE", "with --ranks --scheme halo: pre, post or hybrid (default); the rows of all three are printed", NULL},
      {"--quantize", OPT_STRING, &pc.quantize, "BITS", "with --ranks --scheme halo: none (default), int8, int4, int2", NULL},
      {"--precision", OPT_CHOICE, &precision, "P", "as train (default fp32); bf16: the memory line adds its operand scratch, and with --ranks 1d, 1d-sa, 1.5d and halo rows count 2 bytes an element", info_precision_choices},
      {"--label-prop", OPT_DOUBLE, &pc.label_prop, "RATE", "with --ranks: as train (layer 0's input gradient is aggregated too)", NULL},
      {"--hidden", OPT_INT, &pc.hidden, "N", "with --ranks: width of every hidden layer (default 16)", NULL},
      {"--widths", OPT_STRING, &widths_arg, "W1,W2,..", "with --ranks: hidden widths one by one", NULL},
      {"--layers", OPT_INT, &pc.layers, "N", "layers (default 2)", NULL},
      {"--model", OPT_STRING, &model, "NAME", "gcn (default), sage, gin: the memory line and the volumes", NULL},
      {"--agg-order", OPT_CHOICE, &agg, "ORDER", "with --ranks: as train (default auto)", info_agg_choices},
      {"--reorder", OPT_CHOICE, &reorder, "HOW", "for the memory line: as train (default auto)", cli_reorder_choices},
      {"--normalize-features", OPT_FLAG, &normalize_features, NULL, "for the memory line: as train (the features are then copied)", NULL},
      {"--shards", OPT_STRING, &shards_arg, "RxC", "also print max/mean nonzeros over R x C adjacency shards: original, permuted, double-permuted", NULL},
      CLI_LOAD_OPTS(lc, directed, keepdup, noloops),
  };
  const cli_command cmd = {"info", "info DATA [options]",
                           "Read DATA as train would and print its sizes, degree statistics,\n"
                           "label counts and split sizes. With --ranks P, also lay it out as\n"
                           "train would on P processes (--scheme, --order, --seed, widths) and\n"
                           "print every rank's rows, nonzeros and aggregation traffic per epoch:\n"
                           "the bytes that training counts. It also prints the memory a\n"
                           "one-process training run needs (--layers, --hidden, --widths,\n"
                           "--agg-order, --reorder and --normalize-features as train;\n"
                           "defaults as train).",
                           opts, (int)(sizeof opts / sizeof opts[0]), 1, 1};
  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  if (widths_arg && cli_parse_widths("info", widths_arg, widths, 64, &pc.layers, rank == 0) != CLI_OK)
    return CLI_USAGE;
  if (widths_arg) pc.widths = widths;
  if (ranks < 0 || (ranks == 0 && (pc.scheme || pc.order))) {
    if (rank == 0)
      fprintf(stderr, "fullgraph info: %s\n",
                      ranks < 0 ? "--ranks must be >= 1" : "--scheme and --order need --ranks P");
    return CLI_USAGE;
  }
  if (shards_arg && !parse_shards(shards_arg, shards)) {
    if (rank == 0)
      fprintf(stderr, "fullgraph info: --shards expects RxC (or G for G x G) with counts in "
                      "[1, 65536], got '%s'\n", shards_arg);
    return CLI_USAGE;
  }
  order_all = pc.order && strcmp(pc.order, "all") == 0;
  if (order_all && pc.scheme) {
    if (rank == 0)
      fprintf(stderr, "fullgraph info: --order all prints the orders' volumes under 1d-sa; "
                      "drop --scheme\n");
    return CLI_USAGE;
  }
  pc.ranks = ranks;
  pc.seed = lc.seed;
  pc.model = model;
  pc.agg_order = agg == 1 ? FG_AGG_FIRST : agg == 2 ? FG_AGG_LAST : FG_AGG_AUTO;
  pc.precision = info_precision_choices[precision];
  cli_apply_load_flags(&lc, directed, keepdup, noloops);
  if (ranks > 0 && !order_all) { /* a bad scheme is a usage error, found before loading */
    fg_comm_plan_layout lay;
    st = fg_comm_plan_describe(&pc, &lay);
    if (st != FG_OK) {
      cli_report(rank, "info", st);
      return cli_check_exit_code(st);
    }
  }
  st = cli_load(MPI_COMM_WORLD, pos[0], &lc, &ds);
  if (st == FG_OK && rank == 0) st = fg_dataset_print_info(ds, stdout);
  if (st == FG_OK && rank == 0) st = print_memory(ds, &pc, model, cli_reorder_choices[reorder], normalize_features);
  if (st == FG_OK && rank == 0 && ranks > 0 && !order_all) st = print_plan(ds, &pc);
  if (st == FG_OK && rank == 0 && ranks > 0 && order_all) st = print_partitions(ds, ranks, lc.seed);
  if (st == FG_OK && rank == 0 && shards[0] > 0) st = print_shards(ds, shards, lc.seed);
  st = fg_agree(MPI_COMM_WORLD, st);
  cli_report(rank, "info", st);
  fg_dataset_destroy(&ds);
  return st == FG_OK ? CLI_OK : CLI_FAILED;
}
