/* graph_dataset.c -- the public dataset and generator API: pick a reader by what the path holds,
 * prepare the adjacency, fill in generated features, labels and split where the file has none;
 * write R-MAT graphs. (Kept apart from the graph builders so those link without io/.) */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/fg_graph.h"
#include "io/fg_prepared.h"

fg_load_config fg_load_config_default(void) {
  return (fg_load_config){.undirected = 1,
                          .dedup = 1,
                          .self_loops = 1,
                          .gen_features = 128,
                          .gen_classes = 32,
                          .train_frac = 0.6,
                          .valid_frac = 0.2,
                          .mem_limit = 0.0};
}

static fg_status check_config(const fg_load_config *c) {
  fg_status st = FG_OK;
  const int flag[4] = {c->undirected, c->dedup, c->self_loops, c->keep_ids};
  static const char *const flag_name[4] = {"undirected", "dedup", "self_loops", "keep_ids"};
  for (int i = 0; i < 4; i++)
    FG_REQUIRE(flag[i] == 0 || flag[i] == 1, FG_ERR_INVALID_ARG,
               "load option %s must be 0 or 1, got %d", flag_name[i], flag[i]);
  FG_REQUIRE(c->split_index >= 0, FG_ERR_INVALID_ARG, "split index must be non-negative, got %d",
             c->split_index);
  FG_REQUIRE(c->gen_features > 0, FG_ERR_INVALID_ARG,
             "width of generated features must be positive, got %d", c->gen_features);
  FG_REQUIRE(c->gen_classes > 0, FG_ERR_INVALID_ARG,
             "number of generated classes must be positive, got %d", c->gen_classes);
  FG_REQUIRE(c->train_frac >= 0.0 && c->train_frac <= 1.0, FG_ERR_INVALID_ARG,
             "train fraction must be in [0, 1], got %g", c->train_frac);
  FG_REQUIRE(c->valid_frac >= 0.0 && c->valid_frac <= 1.0, FG_ERR_INVALID_ARG,
             "validation fraction must be in [0, 1], got %g", c->valid_frac);
  FG_REQUIRE(c->train_frac + c->valid_frac <= 1.0 + 1e-9, FG_ERR_INVALID_ARG,
             "train + validation fractions must not exceed 1, got %g + %g", c->train_frac,
             c->valid_frac);
  FG_REQUIRE(c->mem_limit == c->mem_limit, FG_ERR_INVALID_ARG,
             "load option mem_limit must be a number of bytes (0: the available memory, < 0: "
             "none), got NaN");
cleanup:
  return st;
}

static int ends_with(const char *s, const char *suffix) {
  const size_t ls = strlen(s), lx = strlen(suffix);
  if (lx > ls) return 0;
  for (size_t i = 0; i < lx; i++) {
    char a = s[ls - lx + i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (a != suffix[i]) return 0;
  }
  return 1;
}

typedef enum {
  KIND_OGB,
  KIND_NPZ,
  KIND_NPY,
  KIND_MTX,
  KIND_SNAP,
  KIND_ARRAYS,
  KIND_SAINT
} reader_kind;

/* A path naming one file of a PyG/DGL Reddit pair: reddit_data.npz (which needs its graph), or
 * reddit_graph.npz with reddit_data.npz beside it (alone, it is a scipy.sparse graph). Its
 * folder goes to dir. */
static int reddit_file(const char *path, char *dir, size_t cap) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  char other[4096 + 32];
  struct stat sb;
  if (!slash) snprintf(dir, cap, ".");
  else if (slash == path) snprintf(dir, cap, "/");
  else snprintf(dir, cap, "%.*s", (int)(slash - path), path);
  if (strcmp(base, "reddit_data.npz") == 0) return 1;
  if (strcmp(base, "reddit_graph.npz") != 0) return 0;
  snprintf(other, sizeof other, "%s/reddit_data.npz", dir);
  return stat(other, &sb) == 0;
}

/* A path naming GraphSAINT's adj_full.npz with role.json beside it: the folder is the dataset
 * (alone, adj_full.npz is a scipy.sparse graph). Its folder goes to dir. */
static int saint_file(const char *path, char *dir, size_t cap) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  char other[4096 + 32];
  struct stat sb;
  if (strcmp(base, "adj_full.npz") != 0) return 0;
  if (!slash) snprintf(dir, cap, ".");
  else if (slash == path) snprintf(dir, cap, "/");
  else snprintf(dir, cap, "%.*s", (int)(slash - path), path);
  snprintf(other, sizeof other, "%s/role.json", dir);
  return stat(other, &sb) == 0;
}

/* Read path into raw with the reader its content calls for (*kind: which). */
static fg_status read_any(const char *path, const fg_load_config *cfg, fg_raw *raw,
                          reader_kind *kind) {
  fg_status st = FG_OK;
  char *rawdir = NULL;
  struct stat sb;
  if (stat(path, &sb) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      FG_FAIL(FG_ERR_IO, "%s: no such file or directory", path);
    FG_FAIL(FG_ERR_IO, "%s: %s", path, strerror(errno));
  }
  char dir[4096];
  if (S_ISDIR(sb.st_mode) && fg_is_reddit_dir(path)) {
    *kind = KIND_NPZ;
    FG_CHECK(fg_read_reddit(path, raw));
  } else if (!S_ISDIR(sb.st_mode) && reddit_file(path, dir, sizeof dir)) {
    *kind = KIND_NPZ;
    FG_CHECK(fg_read_reddit(dir, raw));
  } else if (S_ISDIR(sb.st_mode)) {
    const size_t len = strlen(path);
    FG_ALLOC(rawdir, len + 14);
    memcpy(rawdir, path, len);
    memcpy(rawdir + len, "/raw", 5);
    struct stat rb;
    if (stat(rawdir, &rb) == 0 && S_ISDIR(rb.st_mode)) {
      *kind = KIND_OGB;
      FG_CHECK(fg_read_ogb(path, cfg->split_name, raw));
    } else {
      /* GraphSAINT's layout: its adjacency names it (the other files are checked by the
       * reader, which names any that is missing) */
      memcpy(rawdir + len, "/adj_full.npz", 14);
      FG_REQUIRE(stat(rawdir, &rb) == 0 && !S_ISDIR(rb.st_mode), FG_ERR_FORMAT,
                 "%s: a directory with neither raw/ nor adj_full.npz (expected the OGB "
                 "node-property layout: raw/edge.csv.gz, raw/num-node-list.csv.gz, ... or "
                 "raw/data.npz; GraphSAINT's: adj_full.npz, feats.npy, class_map.json, "
                 "role.json; or a PyG/DGL Reddit pair: reddit_data.npz, reddit_graph.npz)",
                 path);
      *kind = KIND_SAINT;
      FG_CHECK(fg_read_saint(path, raw));
    }
  } else if (saint_file(path, dir, sizeof dir)) {
    *kind = KIND_SAINT;
    FG_CHECK(fg_read_saint(dir, raw));
  } else if (ends_with(path, ".npz")) {
    *kind = KIND_NPZ;
    FG_CHECK(fg_read_npz(path, cfg->split_index, raw));
  } else if (ends_with(path, ".npy")) {
    *kind = KIND_NPY;
    FG_CHECK(fg_read_npy_edges(path, raw));
  } else if (ends_with(path, ".mtx") || ends_with(path, ".mtx.gz")) {
    *kind = KIND_MTX;
    FG_CHECK(fg_read_mtx(path, raw));
  } else {
    *kind = KIND_SNAP;
    FG_CHECK(fg_read_snap(path, raw));
  }
cleanup:
  free(rawdir);
  return st;
}

/* ---- the memory a load may use ----------------------------------------------------------- */

/* The readers' budget for cfg: its limit (--mem-limit, else MemAvailable, else the physical
 * memory; none for a negative mem_limit), as messages name it, and what an edge costs the load
 * at its peak: the reader's src and dst (16 bytes) and the build's key and column (12 bytes) per
 * CSR entry, two entries an edge when reverse edges are added. */
static void load_budget(const fg_load_config *cfg, fg_io_budget *b) {
  char lim[32], avail[32];
  memset(b, 0, sizeof *b);
  b->edge_bytes = 16.0 + 12.0 * (cfg->undirected ? 2.0 : 1.0);
  if (cfg->mem_limit < 0) return;
  if (cfg->mem_limit > 0) {
    b->limit = cfg->mem_limit;
    snprintf(b->what, sizeof b->what, "--mem-limit is %s",
             fg_format_bytes(b->limit, lim, sizeof lim));
    return;
  }
  const int64_t av = fg_available_memory();
  if (av > 0) {
    b->limit = (double)av;
    snprintf(b->what, sizeof b->what,
             "%s is available (MemAvailable; --mem-limit sets another limit)",
             fg_format_bytes(b->limit, avail, sizeof avail));
    return;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && psize > 0) {
    b->limit = (double)pages * (double)psize;
    snprintf(b->what, sizeof b->what,
             "the machine has %s (MemAvailable unknown; --mem-limit sets another limit)",
             fg_format_bytes(b->limit, avail, sizeof avail));
  }
}

/* The bytes fg_dataset_load holds at its peak for what the reader returned (after renumbering):
 * the larger of the CSR build (the edge list, a 12-byte key and column per entry before
 * duplicates go, the row pointers, and what came from the file) and the finished dataset (the
 * pattern with at most that many entries, features, labels, split, ids, and the transient of
 * generated labels). */
typedef struct load_bytes {
  double graph, build, features, per_node, total;
} load_bytes;

static void estimate_load(const fg_raw *raw, const fg_load_config *cfg, load_bytes *e) {
  const double n = (double)raw->num_nodes, m = (double)raw->num_edges;
  const double f = raw->features && raw->num_features > 0 ? (double)raw->num_features
                                                         : (double)cfg->gen_features;
  const double entries = m * (cfg->undirected ? 2.0 : 1.0) + (cfg->self_loops ? n : 0.0);
  const double rowptr = 8.0 * (n + 1.0), ids = raw->ids ? 8.0 * n : 0.0;
  memset(e, 0, sizeof *e);
  e->graph = rowptr + 4.0 * entries;
  e->build = 16.0 * m + 12.0 * entries + 8.0 * 16384.0 * (fg_max_threads() + 1.0);
  e->features = 4.0 * n * f;
  /* multi-label targets: T bytes a node, and a transient labelled mark (4 bytes a node) when
   * the split is generated from them */
  const double targets = raw->targets ? n * (double)raw->num_tasks : 0.0;
  e->per_node = (raw->targets ? targets : 4.0 * n) + n + ids; /* labels or targets, split, ids */
  const double from_file = (raw->features ? e->features : 0.0) + (raw->labels ? 4.0 * n : 0.0) +
                           targets + (raw->split ? n : 0.0) + ids;
  const double during_build = from_file + rowptr + e->build;
  const double transient = raw->labels ? 0.0 : raw->targets ? (raw->split ? 0.0 : 4.0 * n)
                                                            : 32.0 * n;
  const double finished = e->graph + e->features + e->per_node + transient;
  e->total = FG_MAX(during_build, finished);
}

static const char *const kind_name[] = {"OGB directory", ".npz", ".npy", "Matrix Market",
                                        "SNAP edge list", "arrays", "GraphSAINT directory"};

/* FG_ERR_MEMLIMIT before building anything when the load would not fit in the budget, with a
 * message naming where the node count came from. */
static fg_status check_load(const char *path, const fg_raw *raw, const fg_load_config *cfg,
                            reader_kind kind, const fg_io_budget *b) {
  fg_status st = FG_OK;
  load_bytes e;
  char head[160], t[5][32];
  if (b->limit <= 0) return FG_OK;
  estimate_load(raw, cfg, &e);
  if (e.total <= b->limit) return FG_OK;
  const long long n = (long long)raw->num_nodes, m = (long long)raw->num_edges;
  if (kind == KIND_SNAP && !raw->ids_inferred && raw->declared_nodes > 0)
    snprintf(head, sizeof head, "the header declares %lld nodes%s, for %lld edges", n,
             raw->declared_nodes > 2 * raw->num_edges ? " (kept by --keep-ids)" : "", m);
  else if ((kind == KIND_SNAP && raw->ids_inferred && !raw->ids && cfg->keep_ids) ||
           kind == KIND_NPY)
    snprintf(head, sizeof head, "node ids up to %lld make %lld nodes%s, for %lld edges", n - 1,
             n, kind == KIND_SNAP ? " (--keep-ids: node = id)" : "", m);
  else if (kind == KIND_MTX || kind == KIND_OGB)
    snprintf(head, sizeof head, "the %s declares %lld nodes, for %lld edges",
             kind == KIND_MTX ? "size line" : "num-node-list file", n, m);
  else
    snprintf(head, sizeof head, "%lld nodes and %lld edges (%s)", n, m, kind_name[kind]);
  FG_FAIL(FG_ERR_MEMLIMIT,
          "%s: %s: loading needs about %s (the graph %s, its build's edge list and sort %s, "
          "%s features %s, labels, split and ids %s) but %s",
          path, head, fg_format_bytes(e.total, t[0], sizeof t[0]),
          fg_format_bytes(e.graph, t[1], sizeof t[1]), fg_format_bytes(e.build, t[2], sizeof t[2]),
          raw->features ? "the file's" : "generated",
          fg_format_bytes(e.features, t[3], sizeof t[3]),
          fg_format_bytes(e.per_node, t[4], sizeof t[4]), b->what);
cleanup:
  return st;
}

/* What every load does once its input is in raw (renumbered): weigh the whole load against the
 * budget, build the adjacency under cfg, take or generate features, labels and split. name is
 * how messages and the dataset name the input (a path, or "arrays"). raw's arrays are taken. */
static fg_status build_dataset(const char *name, fg_raw *raw, const fg_load_config *cfg,
                               reader_kind kind, const fg_io_budget *budget, int64_t set_aside,
                               fg_dataset **out) {
  fg_status st = FG_OK;
  fg_dataset *ds = NULL;
  int32_t *labelled = NULL; /* multi-label: 0 where a node has a target, else -1 (the split's) */
  FG_REQUIRE(raw->num_nodes >= 0 && raw->num_edges >= 0, FG_ERR_INTERNAL,
             "%s: reader returned %lld nodes and %lld edges", name, (long long)raw->num_nodes,
             (long long)raw->num_edges);
  /* the whole load against the budget, before the graph, features or labels are allocated */
  FG_CHECK(check_load(name, raw, cfg, kind, budget));

  ds = calloc(1, sizeof *ds);
  FG_REQUIRE(ds != NULL, FG_ERR_NOMEM, "out of memory allocating a dataset");
  const int64_t n = raw->num_nodes;
  ds->num_nodes = n;
  ds->source = strdup(name);
  FG_REQUIRE(ds->source != NULL, FG_ERR_NOMEM, "out of memory copying a path");
  ds->ids = raw->ids;
  ds->id_span = raw->id_span;
  ds->nodes_set_aside = set_aside;
  ds->edge_lines = raw->num_edges;
  raw->ids = NULL;

  st = fg_csr_from_edges(n, raw->src, raw->dst, raw->num_edges, cfg->undirected, cfg->dedup,
                         cfg->self_loops, &ds->adj);
  if (st != FG_OK) {
    /* name the input: the builder's message only knows edge indices */
    char msg[1536];
    snprintf(msg, sizeof msg, "%s: %s", name, fg_last_error());
    fg_error_adopt(st, msg);
    fg_error_trace(__FILE__, __LINE__);
    goto cleanup;
  }
  free(raw->src);
  free(raw->dst);
  raw->src = raw->dst = NULL; /* the edge list is not needed any more: lower the peak */
  ds->symmetric = fg_csr_is_symmetric(&ds->adj);

  if (raw->features && raw->num_features > 0) {
    ds->num_features = raw->num_features;
    ds->features = raw->features;
    raw->features = NULL;
  } else {
    ds->num_features = cfg->gen_features;
    FG_CHECK(fg_generate_features(n, cfg->gen_features, cfg->seed, &ds->features));
    ds->features_generated = 1;
  }

  if (raw->targets) {
    /* the logits per node are the tasks; a node with every target missing is unlabelled */
    FG_REQUIRE(raw->num_tasks >= 1 && !raw->labels, FG_ERR_INTERNAL,
               "%s: reader returned targets with %lld tasks%s", name, (long long)raw->num_tasks,
               raw->labels ? " and labels" : "");
    ds->num_tasks = raw->num_tasks;
    ds->num_classes = raw->num_tasks;
    ds->targets = raw->targets;
    raw->targets = NULL;
    if (!raw->split) {
      FG_ALLOC(labelled, FG_MAX(n, 1));
      const int64_t T = ds->num_tasks;
      for (int64_t v = 0; v < n; v++) {
        labelled[v] = -1;
        for (int64_t t = 0; t < T; t++)
          if (ds->targets[v * T + t] >= 0) {
            labelled[v] = 0;
            break;
          }
      }
    }
  } else if (raw->labels) {
    ds->num_classes = raw->num_classes;
    ds->labels = raw->labels;
    raw->labels = NULL;
  } else {
    ds->num_classes = cfg->gen_classes;
    FG_CHECK(fg_generate_labels(&ds->adj, cfg->gen_classes, cfg->seed, &ds->labels));
    ds->labels_generated = 1;
  }

  if (raw->split) {
    ds->split = raw->split;
    raw->split = NULL;
  } else {
    FG_CHECK(fg_generate_split(n, ds->targets ? labelled : ds->labels, cfg->train_frac,
                               cfg->valid_frac, cfg->seed, &ds->split));
    ds->split_generated = 1;
  }

  *out = ds;
  ds = NULL;
cleanup:
  free(labelled);
  fg_dataset_destroy(&ds);
  return st;
}

fg_status fg_dataset_load(const char *path, const fg_load_config *cfg, fg_dataset **out) {
  fg_status st = FG_OK;
  fg_raw raw = {0};
  fg_load_config defaults = fg_load_config_default();
  fg_io_budget budget, outer;
  reader_kind kind = KIND_SNAP;
  int64_t set_aside = 0;

  fg_io_get_budget(&outer);
  FG_REQUIRE(out != NULL, FG_ERR_INVALID_ARG, "fg_dataset_load: output handle is NULL");
  *out = NULL;
  FG_REQUIRE(path != NULL && path[0] != '\0', FG_ERR_INVALID_ARG, "fg_dataset_load: no path given");
  if (!cfg) cfg = &defaults;
  FG_CHECK(check_config(cfg));

  /* every reader checks what it holds against the budget as it reads */
  load_budget(cfg, &budget);
  fg_io_set_budget(&budget);
  if (fg_prep_is_dir(path)) {
    /* the graph was built when the directory was prepared: options that would build another
     * are refused, not ignored */
    FG_REQUIRE(cfg->undirected && cfg->dedup && cfg->self_loops, FG_ERR_INVALID_ARG,
               "%s is a prepared dataset, whose graph was built by `fullgraph prepare`: give "
               "%s to prepare, not here",
               path, !cfg->undirected ? "--directed" : !cfg->dedup ? "--keep-duplicates"
                                                                   : "--no-self-loops");
    if (cfg->prepared_per_rank)
      FG_CHECK(fg_dataset_open_prepared(path, out));
    else
      FG_CHECK(fg_dataset_load_prepared(path, out));
    goto cleanup;
  }
  FG_CHECK(read_any(path, cfg, &raw, &kind));
  /* A SNAP header "# Nodes: N" names isolated nodes too, but N beyond what the edge lines can
   * name (two nodes a line) is no count of the graph they hold: renumbering the ids present
   * sets it aside; --keep-ids keeps it (and the check below weighs it). */
  if (kind == KIND_SNAP && !cfg->keep_ids && !raw.ids_inferred &&
      raw.declared_nodes > 2 * raw.num_edges) {
    set_aside = raw.declared_nodes;
    raw.num_nodes = raw.id_span;
    raw.ids_inferred = 1;
  }
  if (!cfg->keep_ids) {
    st = fg_raw_renumber(&raw);
    if (st != FG_OK) { /* name the file: the renumbering's message knows only the ids */
      char msg[1536];
      snprintf(msg, sizeof msg, "%s: %s", path, fg_last_error());
      fg_error_adopt(st, msg);
      fg_error_trace(__FILE__, __LINE__);
      goto cleanup;
    }
  }
  FG_CHECK(build_dataset(path, &raw, cfg, kind, &budget, set_aside, out));
cleanup:
  fg_io_set_budget(&outer);
  fg_raw_free(&raw);
  return st;
}

fg_status fg_dataset_from_arrays(const fg_arrays *a, const fg_load_config *cfg,
                                 fg_dataset **out) {
  fg_status st = FG_OK;
  fg_raw raw = {0};
  fg_load_config defaults = fg_load_config_default();
  fg_io_budget budget, outer;

  fg_io_get_budget(&outer);
  FG_REQUIRE(out != NULL, FG_ERR_INVALID_ARG, "fg_dataset_from_arrays: output handle is NULL");
  *out = NULL;
  FG_REQUIRE(a != NULL, FG_ERR_INVALID_ARG, "fg_dataset_from_arrays: no arrays given");
  if (!cfg) cfg = &defaults;
  FG_CHECK(check_config(cfg));
  load_budget(cfg, &budget);
  fg_io_set_budget(&budget);
  /* the node count is given, so ids are never renumbered: node i is id i */
  FG_CHECK(fg_read_arrays(a, &raw));
  FG_CHECK(build_dataset("arrays", &raw, cfg, KIND_ARRAYS, &budget, 0, out));
cleanup:
  fg_io_set_budget(&outer);
  fg_raw_free(&raw);
  return st;
}

fg_status fg_dataset_copy_arrays(const fg_dataset *ds, const fg_dataset_buffers *out) {
  fg_status st = FG_OK;
  FG_REQUIRE(ds != NULL && out != NULL, FG_ERR_INVALID_ARG,
             "fg_dataset_copy_arrays: NULL argument");
  FG_REQUIRE(!ds->prep_dir, FG_ERR_INVALID_ARG,
             "%s was opened for per-rank reading: load it whole to copy its arrays",
             ds->prep_dir);
  const int64_t n = ds->num_nodes, nnz = ds->adj.nnz;
  if (out->indptr) memcpy(out->indptr, ds->adj.rowptr, (size_t)(n + 1) * sizeof *out->indptr);
  if (out->indices && nnz > 0) memcpy(out->indices, ds->adj.col, (size_t)nnz * sizeof *out->indices);
  if (out->features && n * ds->num_features > 0)
    memcpy(out->features, ds->features, (size_t)(n * ds->num_features) * sizeof *out->features);
  for (int64_t i = 0; out->labels && i < n; i++) out->labels[i] = ds->labels ? ds->labels[i] : -1;
  for (int64_t i = 0; out->split && i < n; i++)
    out->split[i] = ds->split ? ds->split[i] : (int8_t)FG_SPLIT_NONE;
  for (int64_t i = 0; out->node_ids && i < n; i++) out->node_ids[i] = ds->ids ? ds->ids[i] : i;
  if (out->targets && ds->targets && n * ds->num_tasks > 0)
    memcpy(out->targets, ds->targets, (size_t)(n * ds->num_tasks));
cleanup:
  return st;
}

void fg_dataset_destroy(fg_dataset **ds) {
  if (!ds || !*ds) return;
  fg_dataset *d = *ds;
  fg_csr_free(&d->adj);
  free(d->features);
  free(d->labels);
  free(d->targets);
  free(d->split);
  free(d->source);
  free(d->ids);
  free(d->prep_dir);
  free(d);
  *ds = NULL;
}

const int64_t *fg_dataset_node_ids(const fg_dataset *ds) {
  return ds ? ds->ids : NULL;
}

fg_status fg_dataset_save_ids(const fg_dataset *ds, const char *path) {
  fg_status st = FG_OK;
  int64_t *seq = NULL;
  FG_REQUIRE(ds && path, FG_ERR_INVALID_ARG, "fg_dataset_save_ids: NULL argument");
  FG_REQUIRE(!ds->prep_dir, FG_ERR_INVALID_ARG,
             "%s was opened for per-rank reading: its node ids are in its files", ds->prep_dir);
  if (!ds->ids) {
    FG_ALLOC(seq, FG_MAX(ds->num_nodes, 1));
    for (int64_t i = 0; i < ds->num_nodes; i++) seq[i] = i;
  }
  FG_CHECK(fg_npy_write_i64(path, ds->ids ? ds->ids : seq, ds->num_nodes));
cleanup:
  free(seq);
  return st;
}

fg_status fg_dataset_save_split(const fg_dataset *ds, const char *path) {
  fg_status st = FG_OK;
  int64_t *v = NULL;
  FG_REQUIRE(ds && path, FG_ERR_INVALID_ARG, "fg_dataset_save_split: NULL argument");
  FG_REQUIRE(!ds->prep_dir, FG_ERR_INVALID_ARG,
             "%s was opened for per-rank reading: its split is in its files", ds->prep_dir);
  FG_ALLOC(v, FG_MAX(ds->num_nodes, 1));
  for (int64_t i = 0; i < ds->num_nodes; i++) v[i] = ds->split ? ds->split[i] : FG_SPLIT_NONE;
  FG_CHECK(fg_npy_write_i64(path, v, ds->num_nodes));
cleanup:
  free(v);
  return st;
}

int64_t fg_dataset_num_nodes(const fg_dataset *ds) {
  return ds ? ds->num_nodes : 0;
}
int64_t fg_dataset_num_edges(const fg_dataset *ds) {
  return ds ? ds->adj.nnz : 0;
}
int64_t fg_dataset_num_features(const fg_dataset *ds) {
  return ds ? ds->num_features : 0;
}
int64_t fg_dataset_num_classes(const fg_dataset *ds) {
  return ds ? ds->num_classes : 0;
}

int64_t fg_dataset_num_tasks(const fg_dataset *ds) {
  return ds ? ds->num_tasks : 0;
}

int64_t fg_dataset_split_size(const fg_dataset *ds, int k) {
  if (!ds || !ds->split || k < FG_SPLIT_TRAIN || k > FG_SPLIT_TEST) return 0;
  int64_t c = 0;
  for (int64_t v = 0; v < ds->num_nodes; v++) c += ds->split[v] == k;
  return c;
}

/* ---- info -------------------------------------------------------------------------------- */

#define FG_INFO_MAX_LISTED_CLASSES 64

/* Multi-label targets: the nodes with a target, and each task's positive rate (positives over
 * the nodes with that task's target): the extremes and mean, and every task when few. */
static void print_target_rates(const fg_dataset *ds, FILE *out) {
  const int64_t T = ds->num_tasks, n = ds->num_nodes;
  int64_t *pos = fg_calloc_array((size_t)T, sizeof *pos), *have = fg_calloc_array((size_t)T, 8);
  int64_t labelled = 0, missing = 0;
  if (!pos || !have) {
    fprintf(out, "  %-12s (not enough memory to count)\n", "targets");
    free(pos);
    free(have);
    return;
  }
  for (int64_t v = 0; v < n; v++) {
    int any = 0;
    for (int64_t t = 0; t < T; t++) {
      const int8_t y = ds->targets[v * T + t];
      pos[t] += y == 1;
      have[t] += y >= 0;
      missing += y < 0;
      any |= y >= 0;
    }
    labelled += any;
  }
  int64_t lo = 0, hi = 0;
  double mean = 0.0;
  const double rate0 = have[0] ? (double)pos[0] / (double)have[0] : 0.0;
  double rlo = rate0, rhi = rate0;
  for (int64_t t = 0; t < T; t++) {
    const double r = have[t] ? (double)pos[t] / (double)have[t] : 0.0;
    mean += r / (double)T;
    if (r < rlo) rlo = r, lo = t;
    if (r > rhi) rhi = r, hi = t;
  }
  fprintf(out,
          "  %-12s %lld labelled (a target present), %lld unlabelled; %lld of %lld targets "
          "missing\n",
          "targets", (long long)labelled, (long long)(n - labelled), (long long)missing,
          (long long)(n * T));
  fprintf(out, "  %-12s positive rate per task min %.4f (task %lld), mean %.4f, max %.4f (task "
          "%lld)\n", "", rlo, (long long)lo, mean, rhi, (long long)hi);
  if (T <= FG_INFO_MAX_LISTED_CLASSES) {
    /* "task:rate" items, 8 a line */
    for (int64_t t = 0; t < T; t++) {
      if (t % 8 == 0) fprintf(out, "  %-12s", "");
      fprintf(out, " %3lld:%.3f", (long long)t,
              have[t] ? (double)pos[t] / (double)have[t] : 0.0);
      if (t % 8 == 7 || t == T - 1) fputc('\n', out);
    }
  }
  free(pos);
  free(have);
}

static void print_label_counts(const fg_dataset *ds, FILE *out) {
  const int64_t C = ds->num_classes;
  if (ds->targets) {
    print_target_rates(ds, out);
    return;
  }
  int64_t unlabelled = 0;
  if (C <= 0 || !ds->labels) {
    fprintf(out, "  %-12s none\n", "labels");
    return;
  }
  int64_t *count = fg_calloc_array((size_t)C, sizeof *count);
  if (!count) {
    fprintf(out, "  %-12s (not enough memory to count)\n", "labels");
    return;
  }
  for (int64_t v = 0; v < ds->num_nodes; v++) {
    const int32_t y = ds->labels[v];
    if (y >= 0 && y < C)
      count[y]++;
    else
      unlabelled++;
  }
  int64_t lo = 0, hi = 0;
  for (int64_t c = 1; c < C; c++) {
    if (count[c] < count[lo]) lo = c;
    if (count[c] > count[hi]) hi = c;
  }
  fprintf(out,
          "  %-12s %lld labelled, %lld unlabelled; per class min %lld (class %lld), "
          "max %lld (class %lld)\n",
          "labels", (long long)(ds->num_nodes - unlabelled), (long long)unlabelled,
          (long long)count[lo], (long long)lo, (long long)count[hi], (long long)hi);
  if (C <= FG_INFO_MAX_LISTED_CLASSES) {
    /* "class:count" items, 8 a line, in columns */
    for (int64_t c = 0; c < C; c++) {
      char item[48];
      const int len = snprintf(item, sizeof item, "%lld:%lld", (long long)c, (long long)count[c]);
      const int last = c % 8 == 7 || c == C - 1;
      if (c % 8 == 0) fprintf(out, "  %-12s", "");
      fprintf(out, "%*s%s", c % 8 == 0 ? 1 : 0, "", item);
      if (last)
        fputc('\n', out);
      else
        fprintf(out, "%*s", len < 11 ? 11 - len : 1, "");
    }
  }
  free(count);
}

fg_status fg_dataset_print_info(const fg_dataset *ds, FILE *out) {
  fg_status st = FG_OK;
  FG_REQUIRE(ds != NULL && out != NULL, FG_ERR_INVALID_ARG,
             "fg_dataset_print_info: dataset or stream is NULL");
  FG_REQUIRE(!ds->prep_dir, FG_ERR_INVALID_ARG,
             "%s was opened for per-rank reading: load it whole to describe it", ds->prep_dir);
  const fg_csr *A = &ds->adj;
  int64_t loops = 0;
  for (int64_t i = 0; i < A->nrows; i++)
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) loops += A->col[k] == i;
  fg_degree_stats s;
  fg_degree_stats_compute(A, &s);
  const int64_t split[3] = {fg_dataset_split_size(ds, FG_SPLIT_TRAIN),
                            fg_dataset_split_size(ds, FG_SPLIT_VALID),
                            fg_dataset_split_size(ds, FG_SPLIT_TEST)};
  const int64_t in_none = ds->num_nodes - split[0] - split[1] - split[2];

  fprintf(out, "dataset %s\n", ds->source ? ds->source : "(in memory)");
  fprintf(out, "  %-12s %lld\n", "nodes", (long long)ds->num_nodes);
  if (ds->prep_blocks > 0)
    fprintf(out, "  %-12s %lld x %lld blocks in order %s (seed %llu), read whole\n", "prepared",
            (long long)ds->prep_blocks, (long long)ds->prep_blocks, ds->prep_order,
            (unsigned long long)ds->prep_seed);
  if (ds->ids)
    fprintf(out,
            "  %-12s %lld of the ids in [0, %lld) occur in an edge: node i is the i-th smallest "
            "of them (--keep-ids: node = id)\n",
            "node ids", (long long)ds->num_nodes, (long long)ds->id_span);
  if (ds->nodes_set_aside > 0)
    fprintf(out,
            "  %-12s the header's '# Nodes: %lld' was set aside: %lld edge lines name at most "
            "%lld nodes (--keep-ids keeps it)\n",
            "header", (long long)ds->nodes_set_aside, (long long)ds->edge_lines,
            2 * (long long)ds->edge_lines);
  fprintf(out, "  %-12s %lld stored entries, %s, %lld self loops\n", "adjacency", (long long)A->nnz,
          ds->symmetric ? "symmetric" : "not symmetric", (long long)loops);
  fprintf(out, "  %-12s min %lld  max %lld  mean %.2f  stddev %.2f  (self loops not counted)\n",
          "degree", (long long)s.min, (long long)s.max, s.mean, s.stddev);
  fprintf(out, "  %-12s p50 %lld  p90 %lld  p99 %lld  isolated %lld\n", "", (long long)s.p50,
          (long long)s.p90, (long long)s.p99, (long long)s.isolated);
  fprintf(out, "  %-12s %lld%s\n", "features", (long long)ds->num_features,
          ds->features_generated ? " (generated: uniform in [-1, 1))" : "");
  if (ds->targets)
    fprintf(out, "  %-12s %lld binary tasks (multi-label targets: --task multilabel)\n", "tasks",
            (long long)ds->num_tasks);
  else
    fprintf(out, "  %-12s %lld%s\n", "classes", (long long)ds->num_classes,
            ds->labels_generated ? " (generated from degree quantiles)" : "");
  print_label_counts(ds, out);
  fprintf(out, "  %-12s train %lld  valid %lld  test %lld  none %lld%s\n", "split",
          (long long)split[0], (long long)split[1], (long long)split[2], (long long)in_none,
          ds->split_generated ? "  (generated at random)" : "");
  if (ds->features_generated || ds->labels_generated || ds->split_generated)
    fprintf(out, "  %-12s%s%s%s\n", "generated", ds->features_generated ? " features" : "",
            ds->labels_generated ? " labels" : "", ds->split_generated ? " split" : "");
  else
    fprintf(out, "  %-12s nothing (all parts from the file)\n", "generated");
  FG_REQUIRE(!ferror(out), FG_ERR_IO, "writing dataset information failed");
cleanup:
  return st;
}

/* ---- generators --------------------------------------------------------------------------- */

fg_status fg_generate_rmat(int scale, int edge_factor, uint64_t seed, const char *path) {
  fg_status st = FG_OK;
  int64_t *src = NULL, *dst = NULL, m = 0;
  char comment[256];
  FG_REQUIRE(path != NULL && path[0] != '\0', FG_ERR_INVALID_ARG,
             "fg_generate_rmat: no output path");
  FG_CHECK(fg_rmat_edges(scale, edge_factor, seed, &src, &dst, &m));
  snprintf(comment, sizeof comment,
           "R-MAT (Graph500 a=0.57 b=0.19 c=0.19 d=0.05) scale %d edge factor %d seed %llu, "
           "ids scrambled; duplicates and self loops kept\nNodes: %lld Edges: %lld",
           scale, edge_factor, (unsigned long long)seed, (long long)1 << scale, (long long)m);
  FG_CHECK(fg_write_snap(path, src, dst, m, comment));
cleanup:
  free(src);
  free(dst);
  return st;
}
