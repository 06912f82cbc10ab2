/* graph_prepared.c -- a dataset as a prepared (blocked) directory: `fullgraph prepare` writes
 * it (fg_dataset_prepare) and fg_dataset_load reads it back whole (fg_dataset_load_prepared).
 * The files are io/io_prepared.c's; the format is in the README ("Prepared datasets").
 *
 * The pattern is stored, not the normalized operator: every run builds its operator from the
 * pattern (and the degrees) as it does for any dataset, so one prepared directory serves every
 * model and --norm. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/fg_graph.h"
#include "graph/fg_order.h"
#include "io/fg_prepared.h"

fg_prepare_config fg_prepare_config_default(void) {
  fg_prepare_config c;
  memset(&c, 0, sizeof c);
  c.blocks = 1;
  c.order = "natural";
  return c;
}

/* Each node's in-degree (its row's entries), out-degree (its column's) and self loops. */
static fg_status node_degrees(const fg_csr *A, int64_t *indeg, int64_t *outdeg, int32_t *loops) {
  const int64_t n = A->nrows;
  for (int64_t v = 0; v < n; v++) {
    indeg[v] = A->rowptr[v + 1] - A->rowptr[v];
    outdeg[v] = 0;
    loops[v] = 0;
  }
  for (int64_t v = 0; v < n; v++)
    for (int64_t k = A->rowptr[v]; k < A->rowptr[v + 1]; k++) {
      outdeg[A->col[k]]++;
      if (A->col[k] == v) loops[v]++;
    }
  return FG_OK;
}

/* Make dir (one level) unless it is a directory already; an old manifest in it is removed first,
 * so that no reader takes the old manifest with new blocks while they are written. */
static fg_status make_dir(const char *dir) {
  fg_status st = FG_OK;
  struct stat sb;
  char path[4200];
  FG_REQUIRE(dir && dir[0], FG_ERR_INVALID_ARG, "prepare: an empty output directory name");
  FG_REQUIRE(strlen(dir) < 4000, FG_ERR_INVALID_ARG, "prepare: the output path is too long");
  if (stat(dir, &sb) == 0) {
    FG_REQUIRE(S_ISDIR(sb.st_mode), FG_ERR_IO, "%s: exists and is not a directory", dir);
  } else {
    FG_REQUIRE(errno == ENOENT && mkdir(dir, 0777) == 0, FG_ERR_IO, "%s: cannot create: %s", dir,
               strerror(errno));
  }
  snprintf(path, sizeof path, "%s/%s", dir, FG_PREP_MANIFEST);
  if (unlink(path) != 0)
    FG_REQUIRE(errno == ENOENT, FG_ERR_IO, "%s: cannot replace: %s", path, strerror(errno));
cleanup:
  return st;
}

fg_status fg_prep_make_dir(const char *dir) { return make_dir(dir); }

fg_status fg_prep_write_row_block(const char *dir, const fg_prep_manifest *m, int64_t i,
                                  const fg_prep_rows *r, fg_prep_file *node_file,
                                  fg_prep_file *deg_file, fg_prep_file *blocks,
                                  int64_t *block_nnz) {
  fg_status st = FG_OK;
  const int64_t B = m->B, F = m->F, T = m->T, nr = r->rows;
  unsigned char *node = NULL; /* the node file's bytes, then the degree file's */
  int64_t *cur = NULL;        /* (nr) each row's next entry */
  int64_t *brow = NULL;       /* (nr + 1) one block's row offsets */
  int32_t *bcol = NULL;       /* (the row block's entries) its columns */
  const int64_t nnz = r->rowptr[nr] - r->rowptr[0];
  {
    int64_t sec[6];
    fg_prep_node_sections(m, nr, sec);
    FG_ALLOC(node, FG_MAX(FG_MAX(sec[FG_PREP_SEC_END], FG_PREP_DEG_ROW_BYTES * nr), 1));
    for (int64_t k = 0; k < nr; k++) {
      const int64_t v = r->at ? r->at[k] : k; /* where row k's node data lies */
      const int64_t id = r->ids ? r->ids[v] : 0;
      const int32_t lab = r->labels ? r->labels[v] : -1;
      const int8_t sp = r->split ? r->split[v] : (int8_t)FG_SPLIT_NONE;
      if (F > 0)
        memcpy(node + sec[FG_PREP_SEC_FEAT] + 4 * k * F, r->features + v * F, (size_t)(4 * F));
      memcpy(node + sec[FG_PREP_SEC_INDEX] + 8 * k, &r->index[k], 8);
      if (r->ids) memcpy(node + sec[FG_PREP_SEC_IDS] + 8 * k, &id, 8);
      if (T > 0)
        memcpy(node + sec[FG_PREP_SEC_LABELS] + k * T, r->targets + v * T, (size_t)T);
      else
        memcpy(node + sec[FG_PREP_SEC_LABELS] + 4 * k, &lab, 4);
      memcpy(node + sec[FG_PREP_SEC_SPLIT] + k, &sp, 1);
    }
    const void *parts[1] = {node};
    const size_t lens[1] = {(size_t)sec[FG_PREP_SEC_END]};
    fg_prep_node_name(i, node_file->name);
    FG_CHECK(fg_prep_file_write(dir, node_file->name, parts, lens, 1, &node_file->size,
                                &node_file->crc));
  }
  {
    for (int64_t k = 0; k < nr; k++) {
      const int64_t v = r->at ? r->at[k] : k;
      memcpy(node + 8 * k, &r->indeg[v], 8);
      memcpy(node + 8 * nr + 8 * k, &r->outdeg[v], 8);
      memcpy(node + 16 * nr + 4 * k, &r->loops[v], 4);
    }
    const void *parts[1] = {node};
    const size_t lens[1] = {(size_t)(FG_PREP_DEG_ROW_BYTES * nr)};
    fg_prep_deg_name(i, deg_file->name);
    FG_CHECK(fg_prep_file_write(dir, deg_file->name, parts, lens, 1, &deg_file->size,
                                &deg_file->crc));
  }
  /* the blocks (i, j), j = 0 .. B-1: each row's columns contiguous because they are sorted */
  FG_ALLOC(cur, FG_MAX(nr, 1));
  FG_ALLOC(brow, nr + 1);
  FG_ALLOC(bcol, FG_MAX(nnz, 1));
  for (int64_t u = 0; u < nr; u++) cur[u] = r->rowptr[u];
  for (int64_t j = 0; j < B; j++) {
    const int64_t c0 = m->offs[j], c1 = m->offs[j + 1];
    int64_t e = 0;
    memset(&blocks[j], 0, sizeof blocks[j]);
    brow[0] = 0;
    for (int64_t u = 0; u < nr; u++) {
      const int64_t end = r->rowptr[u + 1];
      while (cur[u] < end && r->col[cur[u]] < c1) bcol[e++] = (int32_t)(r->col[cur[u]++] - c0);
      brow[u + 1] = e;
    }
    block_nnz[j] = e;
    if (e == 0) continue;
    const void *parts[2] = {brow, bcol};
    const size_t lens[2] = {(size_t)(8 * (nr + 1)), (size_t)(4 * e)};
    fg_prep_block_name(i, j, blocks[j].name);
    FG_CHECK(fg_prep_file_write(dir, blocks[j].name, parts, lens, 2, &blocks[j].size,
                                &blocks[j].crc));
  }
  for (int64_t u = 0; u < nr; u++)
    FG_REQUIRE(cur[u] == r->rowptr[u + 1], FG_ERR_INTERNAL,
               "prepare: row %lld of block %lld has a column outside [0, %lld) or unsorted",
               (long long)u, (long long)i, (long long)m->offs[B]);
cleanup:
  free(node);
  free(cur);
  free(brow);
  free(bcol);
  return st;
}

fg_status fg_prep_assemble_files(fg_prep_manifest *m, const fg_prep_file *nodes,
                                 const fg_prep_file *degs, const fg_prep_file *blocks) {
  fg_status st = FG_OK;
  const int64_t B = m->B;
  int64_t k = 0;
  m->nfiles = 2 * B;
  for (int64_t b = 0; b < B * B; b++) m->nfiles += m->block_nnz[b] > 0;
  FG_CALLOC(m->files, m->nfiles);
  for (int64_t i = 0; i < B; i++) m->files[k++] = nodes[i];
  for (int64_t i = 0; i < B; i++) m->files[k++] = degs[i];
  for (int64_t b = 0; b < B * B; b++)
    if (m->block_nnz[b] > 0) m->files[k++] = blocks[b];
cleanup:
  return st;
}

fg_status fg_dataset_prepare(const fg_dataset *ds, const fg_prepare_config *cfg,
                             const char *dir) {
  fg_status st = FG_OK;
  fg_prepare_config defaults = fg_prepare_config_default();
  fg_order_kind kind = FG_ORDER_NATURAL;
  fg_prep_manifest m;
  fg_ds_fingerprint fp;
  fg_csr P;                           /* the pattern in the prepared order */
  int64_t *perm = NULL, *inv = NULL;  /* (n) position -> node, node -> position */
  int64_t *indeg = NULL, *outdeg = NULL;
  int32_t *loops = NULL;
  fg_prep_file *nodes = NULL, *degs = NULL, *blocks = NULL; /* (B), (B), (B x B) */
  memset(&m, 0, sizeof m);
  memset(&P, 0, sizeof P);
  FG_REQUIRE(ds != NULL, FG_ERR_INVALID_ARG, "fg_dataset_prepare: no dataset");
  if (!cfg) cfg = &defaults;
  const int64_t n = ds->num_nodes, B = cfg->blocks, F = ds->num_features;
  FG_CHECK(fg_order_parse(cfg->order, &kind));
  FG_REQUIRE(fg_order_available(kind), FG_ERR_UNSUPPORTED,
             "prepare: --order %s is not in this build", fg_order_name(kind));
  FG_REQUIRE(B >= 1 && B <= FG_PREP_MAX_BLOCKS && B <= (n > 0 ? n : 1), FG_ERR_INVALID_ARG,
             "prepare: --blocks %lld: must be 1 to %lld (the nodes, at most %d)", (long long)B,
             (long long)FG_MIN(FG_MAX(n, 1), FG_PREP_MAX_BLOCKS), FG_PREP_MAX_BLOCKS);
  FG_CHECK(make_dir(dir));

  FG_CHECK(fg_prep_manifest_init(&m,
                                 (ds->symmetric ? FG_PREP_SYMMETRIC : 0) |
                                     (ds->features_generated ? FG_PREP_FEATURES_GENERATED : 0) |
                                     (ds->labels_generated ? FG_PREP_LABELS_GENERATED : 0) |
                                     (ds->split_generated ? FG_PREP_SPLIT_GENERATED : 0) |
                                     (ds->ids ? FG_PREP_HAS_IDS : 0),
                                 n, ds->adj.nnz, F, ds->num_classes, ds->num_tasks, B, cfg->seed,
                                 fg_order_name(kind), ds->ids ? ds->id_span : 0));
  fg_dataset_fingerprint(ds, &fp);
  m.fp_nodes = fp.nodes;
  m.fp_entries = fp.entries;
  m.fp_features = fp.features;
  m.fp_classes = fp.classes;
  m.fp_graph = fp.graph;
  m.fp_feature_hash = fp.feature_hash;
  m.fp_labels = fp.labels;
  m.fp_split = fp.split;

  /* the order at B parts: its permutation and row-block boundaries */
  FG_ALLOC(perm, FG_MAX(n, 1));
  FG_ALLOC(inv, FG_MAX(n, 1));
  FG_CHECK(fg_order_compute(&ds->adj, (int)B, kind, cfg->seed, perm, m.offs));
  fg_order_invert(perm, n, inv);
  FG_CHECK(fg_csr_permute(&ds->adj, perm, inv, &P));
  FG_ALLOC(indeg, FG_MAX(n, 1));
  FG_ALLOC(outdeg, FG_MAX(n, 1));
  FG_ALLOC(loops, FG_MAX(n, 1));
  FG_CHECK(node_degrees(&ds->adj, indeg, outdeg, loops));

  /* each row block's files: its rows are the nodes perm[offs[i] ..], whose data the dataset
   * holds at their source index */
  FG_CALLOC(nodes, B);
  FG_CALLOC(degs, B);
  FG_CALLOC(blocks, B * B);
  for (int64_t i = 0; i < B; i++) {
    const int64_t r0 = m.offs[i];
    const fg_prep_rows rows = {.rows = m.offs[i + 1] - r0,
                               .at = perm + r0,
                               .index = perm + r0,
                               .features = ds->features,
                               .ids = ds->ids,
                               .labels = ds->labels,
                               .targets = ds->targets,
                               .split = ds->split,
                               .indeg = indeg,
                               .outdeg = outdeg,
                               .loops = loops,
                               .rowptr = P.rowptr + r0,
                               .col = P.col};
    FG_CHECK(fg_prep_write_row_block(dir, &m, i, &rows, &nodes[i], &degs[i], blocks + i * B,
                                     m.block_nnz + i * B));
  }
  FG_CHECK(fg_prep_assemble_files(&m, nodes, degs, blocks));
  /* last: the manifest, which makes the directory a dataset */
  FG_CHECK(fg_prep_manifest_write(dir, &m));
cleanup:
  fg_prep_manifest_free(&m);
  fg_csr_free(&P);
  free(perm);
  free(inv);
  free(indeg);
  free(outdeg);
  free(loops);
  free(nodes);
  free(degs);
  free(blocks);
  return st;
}

int fg_dataset_is_prepared(const char *path) { return path && fg_prep_is_dir(path); }

fg_status fg_dataset_prepared_check(const char *dir, int ranks, int replicate, const char *scheme,
                                    const char *order) {
  fg_status st = FG_OK;
  fg_prep_manifest m;
  memset(&m, 0, sizeof m);
  FG_CHECK(fg_prep_manifest_read(dir, &m));
  FG_CHECK(fg_prep_check_layout(&m, dir, ranks, replicate, scheme));
  if (order) {
    fg_order_kind want = FG_ORDER_NATURAL, have = FG_ORDER_NATURAL;
    FG_CHECK(fg_order_parse(order, &want));
    FG_REQUIRE(fg_order_parse(m.order, &have) == FG_OK && have == want, FG_ERR_INVALID_ARG,
               "%s was prepared in order %s; --order %s needs it prepared again (or drop "
               "--order: the prepared order is the layout)",
               dir, m.order, order);
  }
cleanup:
  fg_prep_manifest_free(&m);
  return st;
}

int64_t fg_dataset_prepared_blocks(const fg_dataset *ds) { return ds ? ds->prep_blocks : 0; }

/* ---- opening it for per-rank reads -------------------------------------------------------- */

/* A dataset with m's sizes, flags and order, read from dir (its source): what opening it per
 * rank and reading it whole share. */
static fg_status dataset_from_manifest(const fg_prep_manifest *m, const char *dir,
                                       fg_dataset **out) {
  fg_status st = FG_OK;
  fg_dataset *ds = calloc(1, sizeof *ds);
  *out = NULL;
  FG_REQUIRE(ds != NULL, FG_ERR_NOMEM, "out of memory allocating a dataset");
  ds->num_nodes = m->n;
  ds->num_features = m->F;
  ds->num_classes = m->C;
  ds->num_tasks = m->T;
  ds->features_generated = (m->flags & FG_PREP_FEATURES_GENERATED) != 0;
  ds->labels_generated = (m->flags & FG_PREP_LABELS_GENERATED) != 0;
  ds->split_generated = (m->flags & FG_PREP_SPLIT_GENERATED) != 0;
  ds->edge_lines = m->nnz;
  ds->prep_blocks = m->B;
  ds->prep_seed = m->seed;
  snprintf(ds->prep_order, sizeof ds->prep_order, "%s", m->order);
  ds->source = strdup(dir);
  FG_REQUIRE(ds->source != NULL, FG_ERR_NOMEM, "out of memory copying a path");
  *out = ds;
  ds = NULL;
cleanup:
  fg_dataset_destroy(&ds);
  return st;
}

fg_status fg_dataset_open_prepared(const char *dir, fg_dataset **out) {
  fg_status st = FG_OK;
  fg_prep_manifest m;
  fg_dataset *ds = NULL;
  memset(&m, 0, sizeof m);
  *out = NULL;
  FG_CHECK(fg_prep_manifest_read(dir, &m));
  FG_CHECK(dataset_from_manifest(&m, dir, &ds));
  ds->adj.nrows = ds->adj.ncols = m.n;
  ds->adj.nnz = m.nnz; /* sizes only: no arrays */
  ds->symmetric = (m.flags & FG_PREP_SYMMETRIC) != 0;
  ds->prep_fp = (fg_ds_fingerprint){.nodes = m.fp_nodes,
                                    .entries = m.fp_entries,
                                    .features = m.fp_features,
                                    .classes = m.fp_classes,
                                    .graph = m.fp_graph,
                                    .feature_hash = m.fp_feature_hash,
                                    .labels = m.fp_labels,
                                    .split = m.fp_split};
  ds->prep_dir = strdup(dir);
  FG_REQUIRE(ds->prep_dir, FG_ERR_NOMEM, "out of memory copying a path");
  *out = ds;
  ds = NULL;
cleanup:
  fg_dataset_destroy(&ds);
  fg_prep_manifest_free(&m);
  return st;
}

/* ---- reading it back whole ----------------------------------------------------------------- */

fg_status fg_dataset_load_prepared(const char *dir, fg_dataset **out) {
  fg_status st = FG_OK;
  fg_prep_manifest m;
  fg_dataset *ds = NULL;
  fg_csr P;                          /* the pattern in the prepared order */
  int64_t *perm = NULL, *inv = NULL; /* (n) */
  int64_t *indeg = NULL, *outdeg = NULL, *deg = NULL;
  int32_t *loops = NULL;
  unsigned char *buf = NULL;
  unsigned char **blk = NULL;        /* (B) one row block's block files */
  int64_t k = 0;                     /* next file of the table */
  int64_t nblk = 0;                  /* entries of blk */
  memset(&m, 0, sizeof m);
  memset(&P, 0, sizeof P);
  *out = NULL;
  FG_CHECK(fg_prep_manifest_read(dir, &m));
  const int64_t n = m.n, B = m.B, F = m.F, T = m.T;
  {
    /* the whole dataset, as a load would weigh it: pattern, features, targets, split, ids,
     * the permuted copy of the pattern and the node maps */
    const double bytes = 2.0 * (12.0 * (double)m.nnz + 8.0 * (double)n) + 4.0 * (double)n * F +
                         (double)n * (T > 0 ? T : 4) + (double)n + 56.0 * (double)n;
    FG_CHECK(fg_prep_check_fits(dir, bytes));
  }
  FG_CHECK(dataset_from_manifest(&m, dir, &ds));
  ds->features = fg_malloc_huge((size_t)FG_MAX(n * F, 1) * sizeof *ds->features);
  FG_REQUIRE(ds->features, FG_ERR_NOMEM, "out of memory for %lld x %lld features",
             (long long)n, (long long)F);
  if (T > 0) FG_ALLOC(ds->targets, FG_MAX(n * T, 1));
  else FG_ALLOC(ds->labels, FG_MAX(n, 1));
  FG_ALLOC(ds->split, FG_MAX(n, 1));
  if (m.flags & FG_PREP_HAS_IDS) {
    FG_ALLOC(ds->ids, FG_MAX(n, 1));
    ds->id_span = m.id_span;
  }
  FG_ALLOC(perm, FG_MAX(n, 1));
  FG_ALLOC(inv, FG_MAX(n, 1));
  FG_ALLOC(indeg, FG_MAX(n, 1));
  FG_ALLOC(outdeg, FG_MAX(n, 1));
  FG_ALLOC(loops, FG_MAX(n, 1));
  for (int64_t v = 0; v < n; v++) inv[v] = -1;

  /* the node files: each row's node, put back where it came from */
  for (int64_t i = 0; i < B; i++, k++) {
    const int64_t r0 = m.offs[i], nr = m.offs[i + 1] - r0;
    const char *name = m.files[k].name;
    int64_t sec[6];
    fg_prep_node_sections(&m, nr, sec);
    FG_CHECK(fg_prep_file_read(dir, &m, k, &buf));
    for (int64_t r = 0; r < nr; r++) {
      int64_t v, id = 0;
      int32_t lab;
      int8_t sp;
      memcpy(&v, buf + sec[FG_PREP_SEC_INDEX] + 8 * r, 8);
      FG_REQUIRE(v >= 0 && v < n && inv[v] < 0, FG_ERR_FORMAT,
                 "%s/%s: row %lld names node %lld, %s", dir, name, (long long)r, (long long)v,
                 v >= 0 && v < n ? "which an earlier row named" : "out of range");
      inv[v] = r0 + r;
      perm[r0 + r] = v;
      if (F > 0)
        memcpy(ds->features + v * F, buf + sec[FG_PREP_SEC_FEAT] + 4 * r * F, (size_t)(4 * F));
      if (ds->ids) {
        memcpy(&id, buf + sec[FG_PREP_SEC_IDS] + 8 * r, 8);
        FG_REQUIRE(id >= 0 && id < m.id_span, FG_ERR_FORMAT,
                   "%s/%s: row %lld has file id %lld, outside [0, %lld)", dir, name,
                   (long long)r, (long long)id, (long long)m.id_span);
        ds->ids[v] = id;
      }
      if (T > 0) {
        const int8_t *t = (const int8_t *)(buf + sec[FG_PREP_SEC_LABELS] + r * T);
        for (int64_t c = 0; c < T; c++)
          FG_REQUIRE(t[c] >= -1 && t[c] <= 1, FG_ERR_FORMAT,
                     "%s/%s: row %lld task %lld is %d (1, 0 or -1 missing)", dir, name,
                     (long long)r, (long long)c, t[c]);
        memcpy(ds->targets + v * T, t, (size_t)T);
      } else {
        memcpy(&lab, buf + sec[FG_PREP_SEC_LABELS] + 4 * r, 4);
        FG_REQUIRE(lab >= -1 && lab < m.C, FG_ERR_FORMAT,
                   "%s/%s: row %lld has label %d, outside [-1, %lld)", dir, name, (long long)r,
                   lab, (long long)m.C);
        ds->labels[v] = lab;
      }
      memcpy(&sp, buf + sec[FG_PREP_SEC_SPLIT] + r, 1);
      FG_REQUIRE(sp >= FG_SPLIT_NONE && sp <= FG_SPLIT_TEST, FG_ERR_FORMAT,
                 "%s/%s: row %lld has split %d (-1 none, 0 train, 1 valid, 2 test)", dir, name,
                 (long long)r, sp);
      ds->split[v] = sp;
    }
    free(buf);
    buf = NULL;
  }

  /* the degree files */
  for (int64_t i = 0; i < B; i++, k++) {
    const int64_t r0 = m.offs[i], nr = m.offs[i + 1] - r0;
    FG_CHECK(fg_prep_file_read(dir, &m, k, &buf));
    for (int64_t r = 0; r < nr; r++) {
      const int64_t v = perm[r0 + r];
      memcpy(&indeg[v], buf + 8 * r, 8);
      memcpy(&outdeg[v], buf + 8 * nr + 8 * r, 8);
      memcpy(&loops[v], buf + 16 * nr + 4 * r, 4);
    }
    free(buf);
    buf = NULL;
  }

  /* the blocks: row block i's nonempty blocks side by side make its rows */
  P.nrows = P.ncols = n;
  P.nnz = m.nnz;
  FG_ALLOC(P.rowptr, n + 1);
  FG_ALLOC(P.col, FG_MAX(m.nnz, 1));
  FG_CALLOC(blk, B);
  nblk = B;
  P.rowptr[0] = 0;
  for (int64_t i = 0; i < B; i++) {
    const int64_t r0 = m.offs[i], nr = m.offs[i + 1] - r0;
    for (int64_t j = 0; j < B; j++) {
      const int64_t e = m.block_nnz[i * B + j], w = m.offs[j + 1] - m.offs[j];
      const char *name = m.files[k].name;
      if (e == 0) continue;
      FG_CHECK(fg_prep_file_read(dir, &m, k, &blk[j]));
      const int64_t *rp = (const int64_t *)(void *)blk[j];
      const int32_t *cl = (const int32_t *)(void *)(blk[j] + 8 * (nr + 1));
      FG_REQUIRE(rp[0] == 0 && rp[nr] == e, FG_ERR_FORMAT,
                 "%s/%s: row offsets run from %lld to %lld, not 0 to %lld", dir, name,
                 (long long)rp[0], (long long)rp[nr], (long long)e);
      for (int64_t u = 0; u < nr; u++) {
        FG_REQUIRE(rp[u] <= rp[u + 1], FG_ERR_FORMAT, "%s/%s: row %lld ends before it starts",
                   dir, name, (long long)u);
        for (int64_t q = rp[u]; q < rp[u + 1]; q++)
          FG_REQUIRE(cl[q] >= 0 && cl[q] < w && (q == rp[u] || cl[q] >= cl[q - 1]),
                     FG_ERR_FORMAT,
                     "%s/%s: row %lld entry %lld: column %d %s", dir, name, (long long)u,
                     (long long)(q - rp[u]), cl[q],
                     cl[q] >= 0 && cl[q] < w ? "is below the one before (rows are sorted)"
                                             : "is outside the block");
      }
      k++;
    }
    for (int64_t u = 0; u < nr; u++) {
      int64_t at = P.rowptr[r0 + u];
      for (int64_t j = 0; j < B; j++) {
        if (!blk[j]) continue;
        const int64_t *rp = (const int64_t *)(void *)blk[j];
        const int32_t *cl = (const int32_t *)(void *)(blk[j] + 8 * (nr + 1));
        for (int64_t q = rp[u]; q < rp[u + 1]; q++) P.col[at++] = (int32_t)(cl[q] + m.offs[j]);
      }
      P.rowptr[r0 + u + 1] = at;
    }
    for (int64_t j = 0; j < B; j++) {
      free(blk[j]);
      blk[j] = NULL;
    }
  }

  /* the degrees the node files record must be the pattern's */
  {
    FG_CALLOC(deg, FG_MAX(n, 1));
    for (int64_t q = 0; q < m.nnz; q++) deg[perm[P.col[q]]]++;
    for (int64_t u = 0; u < n; u++) {
      const int64_t v = perm[u];
      int32_t lp = 0;
      for (int64_t q = P.rowptr[u]; q < P.rowptr[u + 1]; q++) lp += P.col[q] == u;
      char name[FG_PREP_NAME_BYTES];
      fg_prep_deg_name(fg_block_owner(m.offs, (int)B, u), name);
      FG_REQUIRE(indeg[v] == P.rowptr[u + 1] - P.rowptr[u] && outdeg[v] == deg[v] &&
                     loops[v] == lp,
                 FG_ERR_FORMAT,
                 "%s/%s: node %lld records degrees %lld in, %lld out, %d self loops; its blocks "
                 "hold %lld, %lld, %d",
                 dir, name, (long long)v, (long long)indeg[v], (long long)outdeg[v], loops[v],
                 (long long)(P.rowptr[u + 1] - P.rowptr[u]), (long long)deg[v], lp);
    }
  }
  /* back to the source's numbering: row v of the result is row inv[v] of P, column c -> perm[c] */
  FG_CHECK(fg_csr_permute(&P, inv, perm, &ds->adj));
  fg_csr_free(&P);
  ds->symmetric = fg_csr_is_symmetric(&ds->adj);
  FG_REQUIRE(ds->symmetric == ((m.flags & FG_PREP_SYMMETRIC) != 0), FG_ERR_FORMAT,
             "%s: the manifest says the graph is %ssymmetric, its blocks are %s", dir,
             (m.flags & FG_PREP_SYMMETRIC) ? "" : "not ", ds->symmetric ? "symmetric" : "not");
  {
    /* what was read is what was prepared: the source's fingerprint, recomputed */
    fg_ds_fingerprint fp;
    fg_dataset_fingerprint(ds, &fp);
    FG_REQUIRE(fp.nodes == m.fp_nodes && fp.entries == m.fp_entries &&
                   fp.features == m.fp_features && fp.classes == m.fp_classes &&
                   fp.graph == m.fp_graph && fp.feature_hash == m.fp_feature_hash &&
                   fp.labels == m.fp_labels && fp.split == m.fp_split,
               FG_ERR_FORMAT,
               "%s/%s: the dataset read does not match the source's fingerprint the manifest "
               "records (graph %016" PRIx64 " vs %016" PRIx64 ", features %016" PRIx64
               " vs %016" PRIx64 ")",
               dir, FG_PREP_MANIFEST, fp.graph, m.fp_graph, fp.feature_hash,
               m.fp_feature_hash);
  }
  *out = ds;
  ds = NULL;
cleanup:
  for (int64_t j = 0; j < nblk; j++) free(blk[j]);
  free(blk);
  free(buf);
  fg_csr_free(&P);
  fg_prep_manifest_free(&m);
  fg_dataset_destroy(&ds);
  free(perm);
  free(inv);
  free(indeg);
  free(outdeg);
  free(deg);
  free(loops);
  return st;
}
