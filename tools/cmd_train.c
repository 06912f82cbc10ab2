/* cmd_train.c -- `fullgraph train DATA`. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char *const wd_choices[] = {"first", "all", NULL};
static const char *const agg_choices[] = {"auto", "first", "last", NULL};

/* "4G", "512MiB", "1.5e9", "none" -> bytes (-1 = no limit); returns 0, or -1 if malformed.
 * k M G T are powers of 1000, KiB MiB GiB TiB of 1024; a trailing B is optional. */
static int parse_bytes(const char *s, double *out) {
  static const char *const suffix[] = {"", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"};
  static const double mult[] = {1.0, 1e3, 1e6, 1e9, 1e12, 1024.0, 1048576.0, 1073741824.0,
                                1099511627776.0};
  char *end;
  double v;
  if (strcmp(s, "none") == 0) {
    *out = -1.0;
    return 0;
  }
  v = strtod(s, &end);
  if (end == s || !(v >= 0) || v > 1e18) return -1;
  for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++) {
    const size_t k = strlen(suffix[i]);
    if (strncmp(end, suffix[i], k) == 0 && (end[k] == '\0' || strcmp(end + k, "B") == 0)) {
      *out = v * mult[i];
      return 0;
    }
  }
  return -1;
}

/* The sidecar NAME.json that fg_write_sidecar writes beside an output NAME, into buf; NULL for
 * no output, or one written to a device (which gets none). */
static const char *sidecar_of(const char *path, char *buf, size_t cap) {
  struct stat sb;
  if (!path || !path[0] || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))) return NULL;
  snprintf(buf, cap, "%s.json", path);
  return buf;
}

int cmd_train(int argc, char **argv, int rank) {
  fg_load_config lc = fg_load_config_default();
  fg_train_config tc = fg_train_config_default();
  fg_train_result res;
  fg_dataset *ds = NULL;
  fg_status st;
  int directed = 0, keepdup = 0, noloops = 0, quiet = 0, no_progress = 0, threads = INT_MIN;
  int wd_layers = 0, agg = 0, npos = 0, rc, reorder = 0, threads_set;
  const char *widths_arg = NULL, *mem_limit_arg = NULL, *ids_path = NULL, *split_path = NULL;
  const char *metric_name = "accuracy"; /* rank 0: the effective --metric (the final line) */
  int widths[64];
  const char *pos[1];
  const cli_opt opts[] = {
      {"--epochs", OPT_INT, &tc.epochs, "N", "total training epochs (default 200)", NULL},
      {"--lr", OPT_DOUBLE, &tc.lr, "X", "Adam learning rate (default 0.01)", NULL},
      {"--hidden", OPT_INT, &tc.hidden, "N", "width of every hidden layer (default 16)", NULL},
      {"--widths", OPT_STRING, &widths_arg, "W1,W2,..", "hidden widths one by one (layers-1 values)", NULL},
      {"--layers", OPT_INT, &tc.layers, "N", "layers (default 2)", NULL},
      {"--model", OPT_STRING, &tc.model, "NAME", "gcn (default), sage (mean aggregator, self and neighbour weights), gin (sum, then a two-Linear MLP)", NULL},
      {"--gin-eps", OPT_STRING, &tc.gin_eps, "X|learn", "gin: the weight 1 + X of a node's own row (default 0), or learn X from 0", NULL},
      {"--residual", OPT_FLAG, &tc.residual, NULL, "every layer but the last adds its input after its ReLU (a learned projection where the widths differ)", NULL},
      {"--norm", OPT_STRING, &tc.norm, "KIND", "every hidden layer's output before its ReLU: none (default), layer (LayerNorm over each row's features), batch (BatchNorm over each feature's nodes, the whole graph as the batch; running statistics for evaluation)", NULL},
      {"--adj-norm", OPT_STRING, &tc.adj_norm, "HOW", "aggregation weights: sym (D^-1/2 A D^-1/2), mean (D^-1 A), sum (A); default: the model's (gcn sym, sage mean, gin sum)", NULL},
      {"--dropout", OPT_DOUBLE, &tc.dropout, "P", "dropout on every layer's input (default 0.5)", NULL},
      {"--weight-decay", OPT_DOUBLE, &tc.weight_decay, "X", "L2 weight decay (default 5e-4)", NULL},
      {"--weight-decay-layers", OPT_CHOICE, &wd_layers, "WHICH", "layers whose weights decay (default first, as Kipf & Welling)", wd_choices},
      {"--seed", OPT_U64, &tc.seed, "N", "seed of every random draw (default 0)", NULL},
      {"--normalize-features", OPT_FLAG, &tc.normalize_features, NULL, "row-normalize input features (Kipf's preprocessing)", NULL},
      {"--agg-order", OPT_CHOICE, &agg, "ORDER", "aggregate before or after the weight product (default auto: by widths)", agg_choices},
      {"--scheme", OPT_STRING, &tc.scheme, "NAME", "serial, 1d, 1d-sa, 1.5d, halo, 3d, auto (default serial on one rank, 1d-sa else)", NULL},
      {"--order", OPT_STRING, &tc.order, "NAME", "vertex order: natural (default), random, metis, hypergraph, volume", NULL},
      {"--overlap", OPT_FLAG, &tc.overlap, NULL, "overlap communication with computation (1d)", NULL},
      {"--replicate", OPT_INT, &tc.replicate, "C", "1.5d: each of the P/C block rows on C processes (C divides P, C <= P/C; default: the performance model's choice)", NULL},
      {"--grid", OPT_STRING, &tc.grid, "XxYxZ", "3d: process grid, X*Y*Z = ranks, or auto (default auto)", NULL},
      {"--agg-blocks", OPT_INT, &tc.agg_blocks, "N", "3d: all-reduce each of N row blocks of an aggregation as soon as it is computed (default 1)", NULL},
      {"--double-perm", OPT_FLAG, &tc.double_perm, NULL, "3d: different random row and column permutations (load balance)", NULL},
      {"--learn-features", OPT_FLAG, &tc.learn_features, NULL, "3d: train the input features too", NULL},
      {"--aggregation", OPT_STRING, &tc.aggregation, "RULE", "halo: what crosses a cut: pre (the sender's partial sums), post (the source rows), hybrid (default: a minimum vertex cover of each cut)", NULL},
      {"--task", OPT_STRING, &tc.task, "KIND", "multiclass (one class per node, softmax cross-entropy) or multilabel (0/1 targets per task, sigmoid binary cross-entropy); default: multilabel exactly when DATA's labels have several columns", NULL},
      {"--metric", OPT_STRING, &tc.metric, "NAME", "what picks the best epoch and is reported as train/valid/test: accuracy, rocauc (multiclass: 2 classes only), f1-micro; default accuracy for multiclass, rocauc for multilabel", NULL},
      {"--label-prop", OPT_DOUBLE, &tc.label_prop, "RATE", "label propagation: a fraction RATE of the training nodes adds a learned embedding of its label to its input and leaves the loss (default 0: off)", NULL},
      {"--quantize", OPT_STRING, &tc.quantize, "BITS", "halo: exchanged rows as int8, int4 or int2 codes with stochastic rounding; none (default) float32", NULL},
      {"--precision", OPT_STRING, &tc.precision, "P", "fp32 (default) or bf16: every GEMM and SpMM reads its operands rounded to bfloat16 and sums in fp32, and rows cross ranks as bfloat16; weights, Adam, loss and reductions stay fp32", NULL},
      {"--bf16-path", OPT_STRING, &tc.bf16_path, "PATH", "bf16's GEMMs: native (oneDNN on AVX512_BF16) or convert (widen to fp32); default native where available", NULL},
      {"--calibration", OPT_STRING, &tc.calibration_path, "FILE", "auto choices: machine coefficients from 'fullgraph bench --calibrate'", NULL},
      {"--ranks-per-node", OPT_INT, &tc.ranks_per_node, "N", "auto choices: ranks sharing a node (default: all)", NULL},
      {"--reorder", OPT_CHOICE, &reorder, "HOW", "serial: vertex order for SpMM locality, invisible in outputs: auto (default: the best of the others in a cache simulation), none, degree, rcm", cli_reorder_choices},
      {"--mem-limit", OPT_STRING, &mem_limit_arg, "BYTES", "refuse a run needing more (e.g. 8G, 512MiB, none; default: available memory)", NULL},
      {"--threads", OPT_INT, &threads, "N", "OpenMP threads per rank, at least 1 (default: OMP_NUM_THREADS or all cores)", NULL},
      {"--metrics", OPT_STRING, &tc.metrics_path, "FILE", "write one JSON object per epoch, then a final one", NULL},
      {"--checkpoint", OPT_STRING, &tc.checkpoint_path, "FILE|DIR/", "save weights and optimizer state here (DIR/: sharded, each rank writes its own)", NULL},
      {"--checkpoint-every", OPT_INT, &tc.checkpoint_every, "N", "checkpoint every N epochs (default: only at the end)", NULL},
      {"--resume", OPT_STRING, &tc.resume_path, "FILE|DIR", "continue from a checkpoint (file, or sharded directory) up to --epochs in total", NULL},
      {"--save-predictions", OPT_STRING, &tc.predictions_path, "FILE.npy", "write the final logits (N x classes, float32)", NULL},
      {"--save-embeddings", OPT_STRING, &tc.embeddings_path, "FILE.npy", "write the last hidden layer (N x hidden, float32)", NULL},
      {"--save-ids", OPT_STRING, &ids_path, "FILE.npy", "write each node's id in DATA (int64), the row order of the two above", NULL},
      {"--save-split", OPT_STRING, &split_path, "FILE.npy", "write each node's split (int64: 0 train, 1 valid, 2 test, -1 none), the one this run trains on", NULL},
      {"--quiet", OPT_FLAG, &quiet, NULL, "print only the final result", NULL},
      {"--no-progress", OPT_FLAG, &no_progress, NULL, "no progress line on a terminal", NULL},
      CLI_LOAD_OPTS(lc, directed, keepdup, noloops),
  };
  const cli_command cmd = {"train", "train DATA [options]",
                           "Train a GCN (or --model) on every node and edge of DATA (an OGB directory, .npz, .npy,\n"
                           ".mtx or SNAP edge list) and report the test accuracy at the epoch of best\n"
                           "validation accuracy. Defaults are Kipf & Welling's Cora configuration.",
                           opts, (int)(sizeof opts / sizeof opts[0]), 1, 1};

  rc = cli_parse(&cmd, argc, argv, pos, &npos, rank == 0);
  if (rc == -1) return CLI_OK;
  if (rc != CLI_OK) return rc;
  /* every option is checked before the dataset is read: a usage error costs no load */
  threads_set = threads != INT_MIN;
  if (widths_arg && cli_parse_widths("train", widths_arg, widths, 64, &tc.layers, rank == 0) != CLI_OK)
    return CLI_USAGE;
  if (widths_arg) tc.widths = widths;
  if (threads_set && cli_check_threads("train", threads, rank == 0) != CLI_OK) return CLI_USAGE;
  if (mem_limit_arg && (parse_bytes(mem_limit_arg, &tc.mem_limit) != 0 || tc.mem_limit == 0)) {
    if (rank == 0)
      fprintf(stderr, "fullgraph train: --mem-limit expects a positive size like 8G or 512MiB, "
              "or none, got '%s'\n", mem_limit_arg);
    return CLI_USAGE;
  }
  tc.reorder = cli_reorder_choices[reorder];
  tc.weight_decay_layers = wd_layers == 1 ? FG_WD_ALL : FG_WD_FIRST;
  tc.agg_order = agg == 1 ? FG_AGG_FIRST : agg == 2 ? FG_AGG_LAST : FG_AGG_AUTO;
  tc.verbose = quiet ? 0 : 1;
  tc.progress = !no_progress && !quiet;
  cli_apply_load_flags(&lc, directed, keepdup, noloops);
  tc.dataset_path = pos[0];
  tc.argc = cli_argc;
  tc.argv = (const char *const *)cli_argv;
  lc.seed = tc.seed;
  lc.mem_limit = tc.mem_limit; /* --mem-limit bounds the load too */
  {
    /* a prepared directory under a 1D scheme, halo (its vertex partition is 1D's block
     * rows), 3d, or auto (the performance model ranks the layouts the blocks form from the
     * manifest) on several ranks: every rank reads its own block rows or shards (rank 0 only
     * the manifest here); other schemes read it whole on rank 0 */
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *sc = tc.scheme;
    lc.prepared_per_rank = size > 1 && !ids_path && !split_path && fg_dataset_is_prepared(pos[0]) &&
                           (!sc || strcmp(sc, "1d") == 0 || strcmp(sc, "1d-sa") == 0 ||
                            strcmp(sc, "1.5d") == 0 || strcmp(sc, "halo") == 0 ||
                            strcmp(sc, "3d") == 0 || strcmp(sc, "auto") == 0);
  }
  {
    /* the sidecars (NAME.npy.json) too: no other output may be one of them */
    char side[4][4096];
    const fg_path_use extra[] = {{"DATA", pos[0], FG_PATH_INPUT},
                                 {"--save-ids", ids_path, FG_PATH_OUTPUT},
                                 {"--save-split", split_path, FG_PATH_OUTPUT},
                                 {"--metrics", tc.metrics_path, FG_PATH_OUTPUT},
                                 {"--checkpoint", tc.checkpoint_path, FG_PATH_CHECKPOINT},
                                 {"--resume", tc.resume_path, FG_PATH_RESUME},
                                 {"--save-predictions", tc.predictions_path, FG_PATH_OUTPUT},
                                 {"--save-embeddings", tc.embeddings_path, FG_PATH_OUTPUT},
                                 {"--calibration", tc.calibration_path, FG_PATH_INPUT_FILE},
                                 {"--save-ids's sidecar",
                                  sidecar_of(ids_path, side[0], sizeof side[0]), FG_PATH_OUTPUT},
                                 {"--save-split's sidecar",
                                  sidecar_of(split_path, side[1], sizeof side[1]), FG_PATH_OUTPUT},
                                 {"--save-predictions's sidecar",
                                  sidecar_of(tc.predictions_path, side[2], sizeof side[2]),
                                  FG_PATH_OUTPUT},
                                 {"--save-embeddings's sidecar",
                                  sidecar_of(tc.embeddings_path, side[3], sizeof side[3]),
                                  FG_PATH_OUTPUT}};
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    st = FG_OK;
    if (rank == 0) { /* rank 0 reads and writes every file */
      st = fg_train_config_check(&tc, size);
      if (st == FG_OK) st = fg_check_paths(extra, (int)(sizeof extra / sizeof extra[0]));
      /* a prepared directory read per rank: its blocks must fit this layout (exit 2 now) */
      if (st == FG_OK && lc.prepared_per_rank && tc.scheme && strcmp(tc.scheme, "auto") == 0)
        st = fg_dataset_prepared_check_auto(pos[0], &tc, size);
      else if (st == FG_OK && lc.prepared_per_rank && tc.scheme && strcmp(tc.scheme, "3d") == 0)
        st = fg_dataset_prepared_check_3d(pos[0], size, tc.grid, tc.double_perm, tc.order);
      else if (st == FG_OK && lc.prepared_per_rank &&
               (!tc.scheme || strcmp(tc.scheme, "1.5d") != 0 || tc.replicate > 0))
        st = fg_dataset_prepared_check(pos[0], size, tc.scheme && tc.replicate > 0 ? tc.replicate : 1,
                                       tc.scheme ? tc.scheme : "1d-sa", tc.order);
    }
    st = fg_agree(MPI_COMM_WORLD, st);
    if (st != FG_OK) {
      cli_report(rank, "train", st);
      return cli_check_exit_code(st);
    }
  }
  if (threads_set) fg_set_threads(threads);
  cli_catch_stop_signals();

  {
    const double t0 = MPI_Wtime(); /* the run record's setup.load_seconds */
    st = cli_load(MPI_COMM_WORLD, pos[0], &lc, &ds);
    tc.load_seconds = MPI_Wtime() - t0;
  }
  if (st == FG_OK && ids_path) /* before training: a bad path fails now, not after it */
    st = fg_agree(MPI_COMM_WORLD, rank == 0 ? fg_dataset_save_ids(ds, ids_path) : FG_OK);
  if (st == FG_OK && split_path)
    st = fg_agree(MPI_COMM_WORLD, rank == 0 ? fg_dataset_save_split(ds, split_path) : FG_OK);
  if (st == FG_OK) {
    /* --task and --metric against what the data holds: a usage error (exit 2), before any
     * training */
    st = fg_agree(MPI_COMM_WORLD,
                  rank == 0 ? fg_train_task_check(ds, &tc, NULL, &metric_name) : FG_OK);
    if (st != FG_OK) {
      cli_report(rank, "train", st);
      fg_dataset_destroy(&ds);
      return cli_check_exit_code(st);
    }
  }
  if (st == FG_OK) {
    if (rank == 0 && tc.verbose)
      printf("%s: %lld nodes, %lld adjacency entries, %lld features, %lld %s\n", pos[0],
             (long long)fg_dataset_num_nodes(ds), (long long)fg_dataset_num_edges(ds),
             (long long)fg_dataset_num_features(ds), (long long)fg_dataset_num_classes(ds),
             fg_dataset_num_tasks(ds) > 0 ? "tasks (multi-label)" : "classes");
    st = fg_train(MPI_COMM_WORLD, ds, &tc, &res);
  }
  /* the ids and the split, written before training, get their sidecars once the run record is
   * made (also when the run stopped early) */
  if ((st == FG_OK || st == FG_STOPPED) && (ids_path || split_path)) {
    fg_status st2 = FG_OK;
    if (rank == 0 && ids_path) st2 = fg_write_sidecar(ids_path, fg_last_run_record());
    if (rank == 0 && st2 == FG_OK && split_path)
      st2 = fg_write_sidecar(split_path, fg_last_run_record());
    st2 = fg_agree(MPI_COMM_WORLD, st2);
    if (st2 != FG_OK) st = st2;
  }
  if (st == FG_OK && rank == 0 && !tc.verbose)
    printf("test %s %.4f at best epoch %d (valid %.4f)\n", metric_name, res.test_acc,
           res.best_epoch, res.best_valid_acc);
  if (st != FG_STOPPED) cli_report(rank, "train", st);
  fg_dataset_destroy(&ds);
  return st == FG_OK ? CLI_OK : st == FG_STOPPED ? CLI_STOPPED : CLI_FAILED;
}
